// Axon's dashboard: pages rendered in the browser from the JSON API, no
// dependencies. Each page has its own URL (/runs, /runs/{id}, /tools,
// /history/{id}); links are followed with the History API, so reloading or
// sharing a URL opens the same page. A bearer token, when the server wants one,
// is asked for once (or got by signing in through the identity provider,
// signin.js) and kept in this tab's session storage.
"use strict";

const main = document.getElementById("main");
const tokenForm = document.getElementById("token-form");
let timer = null;
// The run whose event stream this page follows: { id, stop: AbortController }.
let following = null;

function el(tag, attrs, ...children) {
  const node = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs || {})) {
    if (v === null || v === undefined || v === false) continue;
    if (k.startsWith("on")) node.addEventListener(k.slice(2), v);
    else node.setAttribute(k, v === true ? "" : v);
  }
  for (const c of children.flat()) {
    if (c === null || c === undefined) continue;
    node.append(c instanceof Node ? c : document.createTextNode(String(c)));
  }
  return node;
}

function svg(tag, attrs, ...children) {
  const node = document.createElementNS("http://www.w3.org/2000/svg", tag);
  for (const [k, v] of Object.entries(attrs || {})) {
    if (k.startsWith("on")) node.addEventListener(k.slice(2), v);
    else node.setAttribute(k, v);
  }
  for (const c of children) node.append(c instanceof Node ? c : document.createTextNode(String(c)));
  return node;
}

async function api(path, options) {
  const headers = { Accept: "application/json", ...((options && options.headers) || {}) };
  const token = sessionStorage.getItem("axon-token");
  if (token) headers.Authorization = "Bearer " + token;
  const response = await fetch(path, { ...(options || {}), headers });
  if (response.status === 401) {
    tokenForm.hidden = false;
    window.axonSignIn.offer(tokenForm);
    throw new Error("This server wants a bearer token: sign in, or enter one above.");
  }
  const type = response.headers.get("content-type") || "";
  const body = type.includes("json") ? await response.json() : await response.text();
  if (!response.ok && response.status !== 502 && response.status !== 504) {
    throw new Error((body && body.detail) || response.statusText);
  }
  return body;
}

tokenForm.addEventListener("submit", (event) => {
  event.preventDefault();
  sessionStorage.setItem("axon-token", document.getElementById("token").value);
  tokenForm.hidden = true;
  route();
});

const badge = (status) => el("span", { class: "badge s-" + status }, status || "—");
const ms = (n) => (n === null || n === undefined ? "—" : n < 1000 ? n + " ms" : (n / 1000).toFixed(2) + " s");
const when = (epochMs) => new Date(epochMs).toLocaleString();
const link = (href, text, attrs) => el("a", { href, ...(attrs || {}) }, text);

function show(title, ...content) {
  document.title = title + " · Axon";
  main.replaceChildren(el("h1", {}, title), ...content.filter((c) => c !== null && c !== undefined));
  for (const a of document.querySelectorAll("header nav a")) {
    const current = location.pathname.startsWith(a.getAttribute("href"));
    if (current) a.setAttribute("aria-current", "page");
    else a.removeAttribute("aria-current");
  }
}

function failed(error) {
  main.replaceChildren(el("p", { class: "error", role: "alert" }, String(error.message || error)));
}

// ---- Runs ------------------------------------------------------------------

async function runsPage() {
  const params = new URLSearchParams(location.search);
  const status = params.get("status") || "";
  const query = new URLSearchParams({ limit: "50" });
  if (status) query.set("status", status);
  if (params.get("before")) query.set("before", params.get("before"));
  const page = await api("/v1/runs?" + query);
  const filter = el("select", { id: "status-filter", onchange: (e) => {
    const next = new URLSearchParams();
    if (e.target.value) next.set("status", e.target.value);
    go("/runs" + (next.toString() ? "?" + next : ""));
  } }, ["", "running", "succeeded", "failed", "cancelled", "interrupted"].map((s) =>
    el("option", { value: s, selected: s === status }, s || "all")));
  const rows = page.runs.map((r) => el("tr", {},
    el("td", {}, link("/runs/" + encodeURIComponent(r.run_id), r.run_id)),
    el("td", {}, r.plan || "—"),
    el("td", {}, badge(r.status)),
    el("td", {}, `${r.succeeded} ok · ${r.failed} failed · ${r.skipped} skipped / ${r.steps_total}`),
    el("td", {}, ms(r.duration_ms)),
    el("td", {}, when(r.updated_at_ms))));
  const next = page.next_before
    ? link("/runs?" + new URLSearchParams({ ...(status ? { status } : {}), before: page.next_before }), "Older runs")
    : null;
  show("Runs",
    el("div", { class: "controls" }, el("label", { for: "status-filter" }, "Status"), filter),
    el("div", { class: "scroll" }, el("table", { "aria-label": "Runs" },
      el("thead", {}, el("tr", {}, ["Run", "Plan", "Status", "Steps", "Duration", "Updated"].map((h) => el("th", { scope: "col" }, h)))),
      el("tbody", {}, rows.length ? rows : el("tr", {}, el("td", { colspan: 6 }, "No runs yet."))))),
    next);
  if (page.runs.some((r) => r.status === "running")) timer = setTimeout(route, 2000);
}

// ---- One run ---------------------------------------------------------------

function stepState(step) {
  if (!step) return "pending";
  const r = step.result;
  if (step.status === "succeeded" && r && r.fallback) return "fallback";
  if (step.status === "succeeded" && r && r.provenance && r.provenance.cache_hit) return "cache hit";
  return step.status;
}

const fill = { succeeded: "#dafbe1", fallback: "#fff8c5", "cache hit": "#ddf4ff", failed: "#ffebe9", skipped: "#eaeef2", cancelled: "#fff1e5", pending: "#ffffff", running: "#ddf4ff" };

// Layers by longest path from the roots; nodes in a layer stacked.
function layout(graph) {
  const layer = graph.nodes.map(() => 0);
  for (let pass = 0; pass < graph.nodes.length; pass++) {
    let moved = false;
    for (const e of graph.edges) {
      if (layer[e.to] < layer[e.from] + 1) { layer[e.to] = layer[e.from] + 1; moved = true; }
    }
    if (!moved) break;
  }
  const rows = {};
  return graph.nodes.map((n) => {
    const l = layer[n.index];
    rows[l] = (rows[l] || 0) + 1;
    return { x: 20 + l * 190, y: 20 + (rows[l] - 1) * 64 };
  });
}

// The critical path: the chain of dependencies whose durations add up longest.
function criticalPath(graph, steps) {
  const cost = (i) => (steps[i] && steps[i].result ? steps[i].result.duration_ms : 0);
  const best = graph.nodes.map(() => null);
  const total = (i) => {
    if (best[i]) return best[i];
    let top = { len: 0, path: [] };
    for (const e of graph.edges.filter((e) => e.to === i)) {
      const t = total(e.from);
      if (t.len > top.len) top = t;
    }
    best[i] = { len: top.len + cost(i), path: [...top.path, i] };
    return best[i];
  };
  let longest = { len: -1, path: [] };
  // Ties go to the longer chain: a last step that took 0 ms is still on the path.
  for (const n of graph.nodes) {
    const t = total(n.index);
    if (t.len > longest.len || (t.len === longest.len && t.path.length > longest.path.length)) longest = t;
  }
  return new Set(longest.path);
}

function dag(graph, steps, onPick) {
  const at = layout(graph);
  const width = Math.max(...at.map((p) => p.x), 0) + 190;
  const height = Math.max(...at.map((p) => p.y), 0) + 64;
  const picture = svg("svg", { width, height, role: "group", "aria-label": "Plan graph" },
    svg("defs", {}, svg("marker", { id: "arrow", viewBox: "0 0 10 10", refX: "10", refY: "5", markerWidth: "6", markerHeight: "6", orient: "auto" },
      svg("path", { d: "M0,0 L10,5 L0,10 z", fill: "#8c959f" }))));
  for (const e of graph.edges) {
    const a = at[e.from], b = at[e.to];
    picture.append(svg("path", { class: "edge" + (e.declared ? "" : " implicit"),
      d: `M${a.x + 160},${a.y + 22} C${a.x + 175},${a.y + 22} ${b.x - 15},${b.y + 22} ${b.x},${b.y + 22}` }));
  }
  for (const n of graph.nodes) {
    const p = at[n.index];
    const state = stepState(steps[n.index]);
    const node = svg("g", { class: "node", tabindex: "0", role: "button", "data-step": n.label, "data-state": state,
      "aria-label": `Step ${n.label}, ${n.tool}: ${state}`, transform: `translate(${p.x},${p.y})`,
      onclick: () => onPick(n.index), onkeydown: (e) => { if (e.key === "Enter" || e.key === " ") { e.preventDefault(); onPick(n.index); } } },
      svg("rect", { width: 160, height: 44, fill: fill[state] || "#fff" }),
      svg("text", { x: 8, y: 18 }, n.label),
      svg("text", { x: 8, y: 35, fill: "#57606a" }, `${n.tool} · ${state}`));
    picture.append(node);
  }
  return el("div", { class: "dag" }, picture);
}

function gantt(graph, steps, critical) {
  const ran = graph.nodes.filter((n) => steps[n.index] && steps[n.index].result);
  if (!ran.length) return el("p", {}, "No step has run yet.");
  const start = (i) => Date.parse(steps[i].result.started_at);
  const t0 = Math.min(...ran.map((n) => start(n.index)));
  const t1 = Math.max(...ran.map((n) => start(n.index) + steps[n.index].result.duration_ms), t0 + 1);
  return el("div", { class: "gantt", role: "list", "aria-label": "Step timings" }, ran.map((n) => {
    const r = steps[n.index].result;
    const left = ((start(n.index) - t0) / (t1 - t0)) * 100;
    const width = Math.max((r.duration_ms / (t1 - t0)) * 100, 0.5);
    return el("div", { class: "bar-row", role: "listitem" },
      el("span", {}, `${n.label} (${ms(r.duration_ms)})${critical.has(n.index) ? " ★" : ""}`),
      el("div", { class: "bar-track" }, el("div", {
        class: "bar" + (r.success ? "" : " failed") + (critical.has(n.index) ? " critical" : ""),
        style: `left:${left}%;width:${width}%`, title: `${n.label}: ${ms(r.duration_ms)}` })));
  }));
}

function stepDetail(node, step, args) {
  if (!step) return el("div", { class: "panel", id: "step-detail" }, el("h2", {}, `Step ${node.label}`), el("p", {}, "Not run yet."));
  const r = step.result;
  const retries = r ? r.retry_reasons.map((reason, i) => el("li", {}, `${reason} — waited ${ms(r.retry_delays_ms[i])}`)) : [];
  return el("div", { class: "panel", id: "step-detail", "aria-live": "polite" },
    el("h2", {}, `Step ${node.label} (${node.tool})`),
    el("p", {}, badge(step.status), step.reason ? " " + step.reason : ""),
    r ? el("p", {}, `${r.attempts} attempt(s) in ${ms(r.duration_ms)}`) : null,
    retries.length ? el("div", {}, el("h3", {}, "Retries"), el("ol", { class: "retries" }, retries)) : null,
    r && r.fallback ? el("p", {}, `Served by fallback #${r.fallback.index} after ${r.fallback.primary_tool} failed: ${r.fallback.primary_error.message}`) : null,
    r && r.error ? el("p", { class: "error" }, `${r.error.kind}${r.error.code ? " (" + r.error.code + ")" : ""}: ${r.error.message}`) : null,
    args !== undefined ? el("div", {}, el("h3", {}, "Arguments, as stored"), el("pre", {}, JSON.stringify(args, null, 2))) : null,
    r ? el("div", {}, el("h3", {}, "Provenance"), el("pre", {}, JSON.stringify(r.provenance, null, 2))) : null,
    r ? el("div", {}, el("h3", {}, "Data"), el("pre", {}, JSON.stringify(r.data, null, 2))) : null);
}

async function runPage(id, picked) {
  const [run, graph, calls] = await Promise.all([
    api("/v1/runs/" + encodeURIComponent(id)),
    api("/v1/runs/" + encodeURIComponent(id) + "/graph?format=json"),
    api("/v1/history/" + encodeURIComponent(id)).catch(() => ({ calls: [] })),
  ]);
  const steps = {};
  for (const s of (run.result ? run.result.steps : run.steps)) steps[s.index] = s;
  if (run.status === "running") {
    // The next steps to start are those whose dependencies all succeeded.
    for (const n of graph.nodes) {
      if (!steps[n.index] && graph.edges.filter((e) => e.to === n.index).every((e) => steps[e.from] && steps[e.from].status === "succeeded")) {
        steps[n.index] = { status: "running" };
      }
    }
  }
  const argsOf = {};
  for (const c of calls.calls || []) argsOf[c.call_id] = c.args;
  const critical = criticalPath(graph, steps);
  const detail = el("div", {});
  const pick = (i) => {
    const s = steps[i] && steps[i].result ? steps[i] : steps[i] && steps[i].status !== "running" ? steps[i] : null;
    const panel = stepDetail(graph.nodes[i], s, s && s.result ? argsOf[s.result.call_id] : undefined);
    detail.replaceChildren(panel);
    if (s && s.result && String(graph.nodes[i].tool).startsWith("browser_")) {
      stepFrames(s.result.call_id).then((frames) => frames && panel.append(frames));
    }
    history.replaceState({ picked: i }, "", location.pathname + "?step=" + encodeURIComponent(graph.nodes[i].label));
  };
  const actions = el("div", { class: "controls" },
    badge(run.status), el("span", {}, `${run.steps_finished} of ${run.steps_total ?? "?"} steps finished`),
    run.status === "running" ? el("button", { type: "button", onclick: async () => {
      await api("/v1/runs/" + encodeURIComponent(id), { method: "DELETE" }); route();
    } }, "Cancel run") : null,
    run.status === "interrupted" || run.status === "cancelled" ? el("button", { type: "button", onclick: async () => {
      await api("/v1/runs/" + encodeURIComponent(id) + "/resume", { method: "POST" }); route();
    } }, "Resume run") : null,
    link("/history/" + encodeURIComponent(id), "Calls of this run"));
  show(`Run ${id}` + (graph.name ? ` — ${graph.name}` : ""), actions,
    el("h2", {}, "Graph"), dag(graph, steps, pick),
    el("h2", {}, "Timings (★ critical path)"), gantt(graph, steps, critical),
    detail);
  const wanted = picked ?? new URLSearchParams(location.search).get("step");
  const index = graph.nodes.findIndex((n) => n.label === wanted);
  if (index >= 0) pick(index);
  if (run.status === "running") follow(id);
}

// Follow a running run's events (GET /v1/runs/{id}/events, server-sent events
// read with fetch so that the bearer token goes along): each event redraws the
// page, and the stream's end draws the final state. If the stream cannot be
// had, poll once a second instead.
function follow(id) {
  if (following && following.id === id) return;
  stopFollowing();
  const stop = new AbortController();
  following = { id, stop };
  const headers = { Accept: "text/event-stream" };
  const token = sessionStorage.getItem("axon-token");
  if (token) headers.Authorization = "Bearer " + token;
  let redraw = null;
  const soon = () => { clearTimeout(redraw); redraw = setTimeout(() => route(), 100); };
  (async () => {
    try {
      const response = await fetch("/v1/runs/" + encodeURIComponent(id) + "/events", { headers, signal: stop.signal });
      if (!response.ok || !response.body) throw new Error("no stream");
      const reader = response.body.pipeThrough(new TextDecoderStream()).getReader();
      let buffer = "";
      for (;;) {
        const { value, done } = await reader.read();
        if (done) break;
        buffer += value;
        const events = buffer.split("\n\n");
        buffer = events.pop();
        if (events.some((e) => e.includes("event:"))) soon();
      }
      if (following && following.id === id) { following = null; soon(); }
    } catch (error) {
      if (stop.signal.aborted) return;
      following = null;
      timer = setTimeout(route, 1000);
    }
  })();
}

function stopFollowing() {
  if (following) following.stop.abort();
  following = null;
}

// ---- Tools -----------------------------------------------------------------

async function toolsPage() {
  const [tools, stats] = await Promise.all([api("/v1/tools"), api("/v1/stats")]);
  const byTool = {};
  for (const s of stats.tools || []) byTool[s.tool] = s;
  const breakers = await api("/v1/breakers");
  const state = {}, probe = {}, keys = {};
  for (const b of breakers.breakers) { state[b.tool] = b.state; probe[b.tool] = b.next_probe_ms; keys[b.tool] = b.keys || []; }
  // Dependency keys (origins, an MCP server) whose breaker is not closed,
  // each with its own reset.
  const keyList = (tool) => keys[tool].length === 0 ? null : el("ul", { class: "keys" }, keys[tool].map((k) =>
    el("li", {}, `${k.key} `, badge(k.state), " ", el("button", { type: "button", "aria-label": `Reset the breaker of ${k.key} for ${tool}`, onclick: async () => {
      await api("/v1/breakers/" + encodeURIComponent(tool) + "/reset?key=" + encodeURIComponent(k.key), { method: "POST" }); route();
    } }, "Reset"))));
  const rows = tools.tools.map((t) => {
    const s = byTool[t.name];
    const b = state[t.name];
    const reset = b && b !== "closed"
      ? el("button", { type: "button", "aria-label": `Reset the breaker of ${t.name}`, onclick: async () => {
        await api("/v1/breakers/" + encodeURIComponent(t.name) + "/reset", { method: "POST" }); route();
      } }, "Reset")
      : null;
    return el("tr", { "data-tool": t.name },
      el("td", {}, el("details", { ontoggle: (e) => showPolicy(e.target, t.name) },
        el("summary", {}, t.name), el("p", {}, t.description || ""),
        el("h3", {}, "Arguments"), el("pre", {}, JSON.stringify(t.input_schema || {}, null, 2)),
        el("h3", {}, "Policy in force"), el("pre", { class: "policy" }, "…"))),
      el("td", {}, badge(b || "—"), probe[t.name] !== undefined ? ` next probe in ${ms(probe[t.name])} ` : " ", reset, keyList(t.name)),
      el("td", {}, s ? String(s.calls) : "0"),
      el("td", {}, s ? (s.success_rate * 100).toFixed(1) + " %" : "—"),
      el("td", {}, s ? ms(s.p50_ms) : "—"),
      el("td", {}, s ? ms(s.p95_ms) : "—"));
  });
  const held = await api("/v1/pins").catch(() => ({ pins: [] }));
  show("Tools", heldPanel(held.pins), el("div", { class: "scroll" }, el("table", { "aria-label": "Tools" },
    el("thead", {}, el("tr", {}, ["Tool", "Breaker", "Calls", "Success", "p50", "p95"].map((h) => el("th", { scope: "col" }, h)))),
    el("tbody", {}, rows))));
}

// Imported tools held because their definition is not the accepted one
// (docs/design.md, "Pinned imports"): what the rules flagged, the diff, and
// an Accept button that accepts exactly the definition shown.
function heldPanel(pins) {
  if (!pins || pins.length === 0) return null;
  return el("section", { class: "panel held", "aria-label": "Held tools" },
    el("h2", {}, "Held tools: their definition changed or was flagged, and calls fail until accepted"),
    pins.map((pin) => el("article", { "data-pin": pin.tool },
      el("h3", {}, pin.tool, " ", badge(pin.status)),
      pin.flags.length === 0 ? null : el("ul", { class: "flags" }, pin.flags.map((f) =>
        el("li", {}, el("strong", {}, f.rule), ` in ${f.field}: `, el("code", {}, f.excerpt)))),
      el("pre", { class: "diff" }, (pin.diff || "").split("\n").map((line) =>
        el("span", { class: line.startsWith("+") ? "add" : line.startsWith("-") ? "del" : "" }, line + "\n"))),
      el("button", { type: "button", "aria-label": `Accept the definition of ${pin.tool}`, onclick: async () => {
        await api("/v1/tools/" + encodeURIComponent(pin.tool) + "/accept?fingerprint=" + encodeURIComponent(pin.fingerprint), { method: "POST" });
        route();
      } }, "Accept this definition"))));
}

// The policy a tool is called with, read when its row is opened.
async function showPolicy(details, name) {
  const pre = details.querySelector(".policy");
  if (!details.open || pre.dataset.loaded) return;
  try {
    const tool = await api("/v1/tools/" + encodeURIComponent(name));
    pre.textContent = JSON.stringify(tool.policy, null, 2);
    pre.dataset.loaded = "yes";
  } catch (error) {
    pre.textContent = String(error.message || error);
  }
}

// ---- History ---------------------------------------------------------------

async function historyPage(id) {
  const form = el("form", { class: "controls", onsubmit: (e) => {
    e.preventDefault();
    const value = document.getElementById("history-id").value.trim();
    if (value) go("/history/" + encodeURIComponent(value));
  } }, el("label", { for: "history-id" }, "Correlation or run id"),
  el("input", { id: "history-id", value: id || "", required: true }), el("button", { type: "submit" }, "Search"));
  if (!id) return show("History", form);
  const [found, recorded] = await Promise.all([
    api("/v1/history/" + encodeURIComponent(id)),
    api("/v1/history/" + encodeURIComponent(id) + "/frames").catch(() => ({ frames: [] })),
  ]);
  // A history entry is a call result with the stored arguments beside it.
  const rows = found.calls.map((c) => el("tr", {},
    el("td", {}, c.call_id), el("td", {}, c.tool), el("td", {}, badge(c.success ? "succeeded" : "failed")),
    el("td", {}, String(c.attempts)), el("td", {}, c.retry_reasons.join("; ") || "—"),
    el("td", {}, ms(c.duration_ms))));
  show(`History of ${id}`, form,
    el("p", {}, `${found.calls.length} call(s)`),
    recorded.frames.length ? filmstrip(recorded.frames) : null,
    el("div", { class: "scroll" }, el("table", { "aria-label": "Calls" },
      el("thead", {}, el("tr", {}, ["Call", "Tool", "Outcome", "Attempts", "Retry reasons", "Duration"].map((h) => el("th", { scope: "col" }, h)))),
      el("tbody", {}, rows.length ? rows : el("tr", {}, el("td", { colspan: 6 }, "No calls with that id."))))));
}

// ---- Browser frames (issue 63) -----------------------------------------------

// A recorded browser action's frame (GET /v1/calls/{id}/frame): the page right
// after it, the element it took boxed (placed once the image's size is known),
// the URL, the error and the console errors and failed requests of that step.
function shot(frame, caption) {
  const box = el("div", { class: "target", hidden: true });
  const image = frame.image ? el("img", {
    src: "data:image/jpeg;base64," + frame.image, alt: `${caption}: the page after ${frame.tool}`,
    onload: (e) => {
      const t = frame.target, img = e.target;
      if (!t || !img.naturalWidth) return;
      const x = (v) => (100 * v * frame.scale / img.naturalWidth) + "%";
      const y = (v) => (100 * v * frame.scale / img.naturalHeight) + "%";
      box.setAttribute("style", `left:${x(t.x)};top:${y(t.y)};width:${x(t.width)};height:${y(t.height)}`);
      box.hidden = false;
    },
  }) : el("p", {}, "(no screenshot)");
  const notes = [...(frame.console_errors || []).map((n) => "console: " + n), ...(frame.failed_requests || []).map((n) => "request: " + n)];
  return el("figure", { class: "frame" + (frame.ok ? "" : " failed") },
    el("figcaption", {}, el("strong", {}, caption), ` — #${frame.seq} ${frame.tool} `, badge(frame.ok ? "succeeded" : "failed")),
    el("div", { class: "shot" }, image, box),
    el("p", { class: "url" }, frame.url),
    frame.error ? el("p", { class: "error" }, `${frame.error.code}: ${frame.error.message}`) : null,
    notes.length ? el("ul", {}, notes.map((n) => el("li", {}, n))) : null);
}

// A step's frame: the page after it; for a failed step, the frame before too.
async function stepFrames(callId) {
  const frame = await api("/v1/calls/" + encodeURIComponent(callId) + "/frame").catch(() => null);
  if (!frame) return null;
  const shots = frame.ok ? [shot(frame, "After this step")]
    : [frame.before ? shot(frame.before, "Before") : el("p", {}, "No frame before this step."), shot(frame, "After (failed)")];
  return el("div", { class: "frames" }, el("h3", {}, "The page"), el("div", { class: "pair" }, shots));
}

// A session's frames as a strip of thumbnails, one shown large; Play steps
// through them.
function filmstrip(frames) {
  const large = el("div", {});
  let playing = null;
  const open = (i) => {
    large.replaceChildren(shot(frames[i], `Frame ${i + 1} of ${frames.length}`));
    strip.querySelectorAll("button").forEach((b, j) => b.setAttribute("aria-pressed", String(i === j)));
  };
  const strip = el("div", { class: "strip", role: "group", "aria-label": "Frames" }, frames.map((f, i) =>
    el("button", { type: "button", class: f.ok ? "" : "failed", "aria-label": `Frame ${i + 1}: ${f.tool}${f.ok ? "" : " (failed)"}`, onclick: () => open(i) },
      f.image ? el("img", { src: "data:image/jpeg;base64," + f.image, alt: "" }) : `#${f.seq}`)));
  const play = el("button", { type: "button", onclick: () => {
    if (playing) { clearInterval(playing); playing = null; play.textContent = "Play"; return; }
    let i = 0;
    open(i);
    play.textContent = "Stop";
    playing = setInterval(() => {
      i += 1;
      if (i >= frames.length || !play.isConnected) { clearInterval(playing); playing = null; play.textContent = "Play"; return; }
      open(i);
    }, 800);
  } }, "Play");
  open(frames.findIndex((f) => !f.ok) >= 0 ? frames.findIndex((f) => !f.ok) : 0);
  return el("div", { class: "panel" }, el("h2", {}, "Browser frames"), el("div", { class: "controls" }, play), strip, large);
}

// ---- Approvals -------------------------------------------------------------

// Calls waiting for a person (docs/design.md, "Approval"), refreshed every
// second while the page is open: each with what it would run, why it waits,
// and Approve / Deny (optionally with edited arguments).
async function approvalsPage() {
  const listed = await api("/v1/approvals");
  const cards = listed.approvals.map((a) => {
    const edit = el("textarea", { rows: 4, "aria-label": `Arguments for ${a.id}` }, JSON.stringify(a.args, null, 2));
    const original = edit.value;
    const comment = el("input", { type: "text", "aria-label": `Comment on ${a.id}`, placeholder: "comment (a denial's reason)" });
    const decide = (decision) => async () => {
      const body = { decision, comment: comment.value || null };
      if (decision === "approve" && edit.value !== original) body.args = JSON.parse(edit.value);
      await api("/v1/approvals/" + encodeURIComponent(a.id), { method: "POST", body: JSON.stringify(body), headers: { "content-type": "application/json" } });
      route();
    };
    return el("article", { class: "panel", "data-approval": a.id },
      el("h2", {}, a.tool, " ", badge(a.status)),
      el("p", {}, a.reason, " · ", link("/history/" + encodeURIComponent(a.correlation_id), a.correlation_id),
        a.tenant ? ` · ${a.tenant}` : "", ` · expires ${when(a.expires_at_ms)}`),
      el("details", {}, el("summary", {}, "Arguments"), edit),
      el("div", { class: "controls" }, comment,
        el("button", { type: "button", "aria-label": `Approve ${a.id}`, onclick: decide("approve") }, "Approve"),
        el("button", { type: "button", "aria-label": `Deny ${a.id}`, onclick: decide("deny") }, "Deny")));
  });
  // Not while a person is typing in one of them.
  if (main.contains(document.activeElement) && document.activeElement.matches("textarea, input")) {
    timer = setTimeout(route, 1000);
    return;
  }
  show("Approvals", cards.length ? el("div", {}, cards) : el("p", {}, "No call is waiting for approval."));
  timer = setTimeout(route, 1000);
}

// ---- Routing ---------------------------------------------------------------

function go(path) {
  history.pushState({}, "", path);
  route();
}

async function route() {
  clearTimeout(timer);
  const path = decodeURIComponent(location.pathname);
  if (following && path !== "/runs/" + following.id) stopFollowing();
  try {
    if (path === "/" || path === "/runs") await runsPage();
    else if (path.startsWith("/runs/")) await runPage(path.slice(6));
    else if (path === "/tools") await toolsPage();
    else if (path === "/approvals") await approvalsPage();
    else if (path === "/history" || path.startsWith("/history/")) await historyPage(path.slice(9));
    else show("Not found", el("p", {}, "No such page."));
  } catch (error) {
    failed(error);
  }
}

document.addEventListener("click", (event) => {
  const a = event.target.closest && event.target.closest("a");
  if (!a || a.origin !== location.origin || event.ctrlKey || event.metaKey || a.target) return;
  event.preventDefault();
  go(a.pathname + a.search);
});
window.addEventListener("popstate", route);
// Back from the identity provider (signin.js): the code for a token first.
(location.pathname === "/auth/callback" ? window.axonSignIn.finish() : Promise.resolve()).then(route, failed);
