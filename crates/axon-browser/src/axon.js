// The page side of Axon's browser tools. Evaluated as an expression that
// yields one object of helpers; every tool call reaches it through
// `window.__axon` (installed on first use in each document), so locating and
// checking an element is one CDP round trip each.
(() => {
  const norm = (s) => String(s == null ? "" : s).replace(/\s+/g, " ").trim();
  // Playwright's text matching: case-insensitive substring, or (exact) the
  // whole normalised string, case-sensitive.
  const textMatches = (text, want, exact) => {
    const t = norm(text);
    const w = norm(want);
    return exact ? t === w : t.toLowerCase().includes(w.toLowerCase());
  };
  const elementOf = (node) => (node && node.nodeType === Node.TEXT_NODE ? node.parentElement : node);
  const visible = (el) => {
    if (!el || !el.isConnected) return false;
    const style = getComputedStyle(el);
    if (style.visibility !== "visible") return false;
    const r = el.getBoundingClientRect();
    return r.width > 0 && r.height > 0;
  };
  const describe = (el) => {
    if (!el || el.nodeType !== Node.ELEMENT_NODE) return String(el);
    let d = el.tagName.toLowerCase();
    if (el.id) d += "#" + el.id;
    else if (typeof el.className === "string" && el.className.trim())
      d += "." + el.className.trim().split(/\s+/).join(".");
    return d;
  };
  // Prefer a visible match, in document order; else the first match.
  const pick = (list) => list.find(visible) || list[0] || null;

  // Downloads the page asks for: a click on a link with a `download`
  // attribute — on the page, or detached (`a.click()` from a script) — that
  // nothing prevented. A call that acted reads and resets the count
  // (downloads.rs, ASKED) and waits for that many downloads to begin, so it
  // reports them itself instead of the next call. Installed once per
  // document, with the helpers (before any element is acted on).
  if (!window.__axon_downloads) {
    const asked = { count: 0 };
    window.__axon_downloads = asked;
    const note = (e) => {
      const t = e.target instanceof Element ? e.target.closest("a[href][download]") : null;
      if (t && !e.defaultPrevented) asked.count += 1;
    };
    window.addEventListener("click", note);
    const click = HTMLAnchorElement.prototype.click;
    HTMLAnchorElement.prototype.click = function () {
      if (!this.isConnected && this.hasAttribute("download")) {
        this.addEventListener("click", note, { once: true });
      }
      return click.call(this);
    };
  }

  const byLabel = (want, exact) => {
    const found = [];
    const add = (el) => el && !found.includes(el) && found.push(el);
    for (const label of document.querySelectorAll("label")) {
      if (textMatches(label.textContent, want, exact)) add(label.control);
    }
    for (const el of document.querySelectorAll("[aria-labelledby]")) {
      const text = el
        .getAttribute("aria-labelledby")
        .split(/\s+/)
        .map((id) => document.getElementById(id))
        .filter(Boolean)
        .map((n) => n.textContent)
        .join(" ");
      if (textMatches(text, want, exact)) add(el);
    }
    for (const el of document.querySelectorAll("[aria-label]")) {
      if (textMatches(el.getAttribute("aria-label"), want, exact)) add(el);
    }
    if (!found.length) {
      for (const el of document.querySelectorAll("[placeholder]")) {
        if (textMatches(el.getAttribute("placeholder"), want, exact)) add(el);
      }
    }
    if (!found.length) for (const el of byNearbyText(want, exact)) add(el);
    return pick(found);
  };

  const CONTROL = new Set(["INPUT", "TEXTAREA", "SELECT"]);
  const unlabelled = (el) =>
    !(el.labels && el.labels.length) && !el.getAttribute("aria-label") && !el.getAttribute("aria-labelledby");
  // Fields named by the text just before them (a table cell, a <span>, a
  // <label> without `for`), as browser_snapshot names them "(by nearby
  // text)": the first unlabelled control after a text that matches, with no
  // other text between them.
  const byNearbyText = (want, exact) => {
    const out = [];
    if (!document.body) return out;
    const walker = document.createTreeWalker(document.body, NodeFilter.SHOW_TEXT);
    for (let t = walker.nextNode(); t; t = walker.nextNode()) {
      if (!norm(t.data) || !textMatches(t.data.replace(/[:*\s]+$/, ""), want, exact)) continue;
      const after = document.createTreeWalker(document.body, NodeFilter.SHOW_ELEMENT | NodeFilter.SHOW_TEXT);
      after.currentNode = t;
      for (let n = after.nextNode(), seen = 0; n && seen < 40; n = after.nextNode(), seen++) {
        if (n.nodeType === Node.TEXT_NODE) {
          if (norm(n.data) && !(n.parentElement && CONTROL.has(n.parentElement.tagName))) break;
          continue;
        }
        if (CONTROL.has(n.tagName) && n.type !== "hidden") {
          if (unlabelled(n)) out.push(n);
          break;
        }
      }
      // A checkbox or radio takes the text just after it.
      const back = document.createTreeWalker(document.body, NodeFilter.SHOW_ELEMENT | NodeFilter.SHOW_TEXT);
      back.currentNode = t;
      for (let n = back.previousNode(), seen = 0; n && seen < 10; n = back.previousNode(), seen++) {
        if (n.nodeType === Node.TEXT_NODE) {
          if (norm(n.data)) break;
          continue;
        }
        if (n.tagName === "INPUT" && (n.type === "checkbox" || n.type === "radio")) {
          if (unlabelled(n)) out.push(n);
          break;
        }
      }
    }
    return out;
  };

  const SKIP = new Set(["SCRIPT", "STYLE", "NOSCRIPT", "TEMPLATE", "HEAD", "TITLE"]);
  // The deepest elements whose text contains `want` (none of their children
  // does), as Playwright's getByText.
  const byText = (want, exact) => {
    const found = [];
    const walk = (el) => {
      if (SKIP.has(el.tagName)) return false;
      const own = el.tagName === "INPUT" && ["button", "submit", "reset"].includes(el.type) ? el.value : el.textContent;
      if (!textMatches(own, want, false)) return false;
      let child = false;
      for (const c of el.children) child = walk(c) || child;
      if (!child && textMatches(own, want, exact)) found.push(el);
      return true;
    };
    if (document.body) walk(document.body);
    return pick(found);
  };

  const find = (spec) => {
    if (spec.selector != null) return pick(Array.from(document.querySelectorAll(spec.selector)));
    if (spec.label != null) return byLabel(spec.label, !!spec.exact);
    if (spec.has_text != null) return byText(spec.has_text, !!spec.exact);
    return null;
  };

  // Whether something on the page is animating this element (a CSS animation
  // or transition on it or an ancestor): such an element is not stable yet.
  const animating = (el) =>
    document.getAnimations().some((a) => {
      const target = a.effect && a.effect.target;
      return a.playState === "running" && target && target.contains && target.contains(el);
    });

  const editable = (el) => {
    if (el.isContentEditable) return true;
    if (el.tagName === "TEXTAREA") return !el.readOnly;
    if (el.tagName !== "INPUT") return false;
    const bad = ["button", "checkbox", "radio", "submit", "reset", "image", "file", "hidden"];
    return !bad.includes(el.type) && !el.readOnly;
  };
  const disabled = (el) => {
    if (el.disabled) return true;
    if (el.closest && el.closest("fieldset:disabled")) return !el.closest("legend");
    const aria = el.closest && el.closest("[aria-disabled]");
    return !!aria && aria.getAttribute("aria-disabled") === "true";
  };

  // Checks before an action. `want`: attached | visible | click | point
  // (click, disabled or not) | type | enabled. Returns {ok} or {ok: false, reason}; for click, the point to press.
  const check = (node, want) => {
    const el = elementOf(node);
    if (!el || !el.isConnected) return { ok: false, reason: "detached" };
    const out = { ok: true, element: describe(el), tag: el.tagName.toLowerCase() };
    if (want === "attached") return out;
    if (!visible(el)) return { ok: false, reason: "not visible" };
    if (want === "visible") return out;
    if (want !== "point" && disabled(el)) return { ok: false, reason: "disabled" };
    if (want === "type" && !editable(el)) return { ok: false, reason: "not editable", fatal: true };
    if (animating(el)) return { ok: false, reason: "not stable (animating)" };
    if (want === "type") {
      el.focus();
      out.password = el.tagName === "INPUT" && el.type === "password";
      // Fields whose value is not typed character by character (a date
      // picker's segments, a colour, a range): set as Playwright's fill does.
      out.set_value = el.tagName === "INPUT" && VALUE_INPUTS.includes(el.type);
      return out;
    }
    if (want !== "click" && want !== "point") return out;
    let r = el.getBoundingClientRect();
    if (r.top < 0 || r.left < 0 || r.bottom > innerHeight || r.right > innerWidth) {
      el.scrollIntoView({ block: "center", inline: "center", behavior: "instant" });
      r = el.getBoundingClientRect();
    }
    // Hit-test in the element's own tree: a shadow root answers with its own
    // nodes where the document would answer with the host.
    const root = el.getRootNode();
    const at = (x, y) => (root.elementFromPoint ? root : el.ownerDocument).elementFromPoint(x, y);
    const ours = (n) => n && (el.contains(n) || (el.labels && Array.from(el.labels).some((l) => l.contains(n))));
    // The middle first; when something lies over it, the point of the
    // element in view nearest the middle (a person clicks the part they
    // see). Covered everywhere: the reason names what covers the middle.
    const points = [];
    for (const fy of [0.5, 0.25, 0.75, 0.1, 0.9]) {
      for (const fx of [0.5, 0.35, 0.65, 0.2, 0.8, 0.05, 0.95]) {
        const x = Math.min(Math.max(r.left + r.width * fx, 0), innerWidth - 1);
        const y = Math.min(Math.max(r.top + r.height * fy, 0), innerHeight - 1);
        points.push({ x, y, d: Math.abs(fx - 0.5) + Math.abs(fy - 0.5) });
      }
    }
    points.sort((a, b) => a.d - b.d);
    const seen = points.find((p) => ours(at(p.x, p.y)));
    if (!seen) return { ok: false, reason: "covered by " + describe(at(points[0].x, points[0].y)) };
    out.x = seen.x;
    out.y = seen.y;
    // In an iframe, x and y are the frame's: the caller maps them to the page.
    if (el.ownerDocument.defaultView !== el.ownerDocument.defaultView.top) out.framed = true;
    return out;
  };

  const VALUE_INPUTS = ["date", "time", "datetime-local", "month", "week", "color", "range"];
  // Set such a field's value as a person's input would leave it (input and
  // change events); an error when the field refuses the text.
  const setValue = (node, value) => {
    const el = elementOf(node);
    el.focus();
    // A range or colour field never reads empty: it falls back to its
    // default instead of refusing, so the text is checked first.
    const refused = (el.type === "range" && !Number.isFinite(Number(value)))
      || (el.type === "color" && !/^#[0-9a-f]{6}$/i.test(value));
    const old = el.value;
    // The prototype's setter, not the element's own: a framework that
    // tracks the value on the element (React) then sees it change and hears
    // the events below.
    const setter = Object.getOwnPropertyDescriptor(Object.getPrototypeOf(el), "value");
    const put = (v) => (setter && setter.set ? setter.set.call(el, v) : (el.value = v));
    if (!refused) put(value);
    // A range clamps or rounds to its step what it cannot take.
    if (!refused && el.type === "range" && Number(el.value) !== Number(value)) {
      const took = el.value;
      put(old);
      return { error: JSON.stringify(value) + " is not a value this range takes (it would show " + took +
        "; min " + (el.min || 0) + ", max " + (el.max || 100) + ", step " + (el.step || 1) + ")" };
    }
    if (refused || (value && el.value === "")) return { error: JSON.stringify(value) + " is not a valid " + el.type + " value" + (el.type === "date" ? " (yyyy-mm-dd)" : el.type === "color" ? " (#rrggbb)" : "") };
    el.dispatchEvent(new Event("input", { bubbles: true }));
    el.dispatchEvent(new Event("change", { bubbles: true }));
    return { value: el.value };
  };

  const clearField = (node) => {
    const el = elementOf(node);
    el.focus();
    if (typeof el.select === "function") el.select();
    else document.execCommand("selectAll");
    document.execCommand("delete");
    return el.value != null ? el.value : el.textContent;
  };

  const text = (node) => {
    const el = elementOf(node);
    const out = { text: norm(el.innerText != null ? el.innerText : el.textContent) };
    if (el.tagName === "INPUT" || el.tagName === "TEXTAREA" || el.tagName === "SELECT")
      out.value = el.type === "password" ? null : el.value;
    return out;
  };

  const selectOption = (node, values, index) => {
    const el = elementOf(node);
    if (el.tagName !== "SELECT") return { custom: true };
    const options = Array.from(el.options);
    let chosen;
    if (index != null) {
      if (index < 0 || index >= options.length)
        return { missing: "index " + index + " (the list has " + options.length + " options)" };
      chosen = [options[index]];
    } else {
      chosen = [];
      for (const v of values) {
        const o =
          options.find((o) => o.value === v) ||
          options.find((o) => norm(o.label) === norm(v)) ||
          options.find((o) => norm(o.label).toLowerCase() === norm(v).toLowerCase());
        if (!o) return { missing: JSON.stringify(v), options: options.map((o) => norm(o.label)) };
        chosen.push(o);
      }
    }
    if (chosen.length > 1 && !el.multiple) return { error: describe(el) + " takes one option, not " + chosen.length };
    for (const o of options) o.selected = chosen.includes(o);
    el.dispatchEvent(new Event("input", { bubbles: true }));
    el.dispatchEvent(new Event("change", { bubbles: true }));
    return { selected: chosen.map((o) => o.value), labels: chosen.map((o) => norm(o.label)) };
  };

  // Custom drop-downs (an ARIA combobox with a listbox popup, a listbox):
  // what the widget is, its options, and whether it shows a value. The
  // clicks are real ones, made by the caller at the points given here.
  const widget = (node) => {
    const el = elementOf(node);
    const role = (el.getAttribute("role") || "").toLowerCase();
    const inner = el.querySelector && el.querySelector("[role=combobox], input");
    const combo =
      role === "combobox" || el.getAttribute("aria-haspopup") === "listbox" ||
      (inner && inner.getAttribute("role") === "combobox") || (el.tagName === "INPUT" && el.list);
    if (role === "slider") {
      const num = (a) => (el.hasAttribute(a) ? Number(el.getAttribute(a)) : null);
      return { kind: "slider", now: num("aria-valuenow"), min: num("aria-valuemin"), max: num("aria-valuemax"),
        text: el.getAttribute("aria-valuetext"), element: describe(el) };
    }
    const kind = combo ? "combobox" : role === "listbox" ? "listbox" : "none";
    const field = el.tagName === "INPUT" ? el : inner && inner.tagName === "INPUT" ? inner : null;
    const expanded = [el, inner].some((e) => e && e.getAttribute("aria-expanded") === "true");
    return { kind, expanded, editable: !!field && !field.readOnly && !field.disabled, element: describe(el) };
  };
  const optionName = (o) => norm(o.getAttribute("aria-label") || o.innerText || o.textContent);
  const optionsOf = (el) => {
    const doc = el.ownerDocument;
    const ids = [el, el.querySelector && el.querySelector("[role=combobox], input")]
      .filter(Boolean)
      .flatMap((e) => ((e.getAttribute("aria-controls") || "") + " " + (e.getAttribute("aria-owns") || "")).split(/\s+/))
      .filter(Boolean);
    let scopes = ids.map((id) => doc.getElementById(id)).filter(Boolean);
    if ((el.getAttribute("role") || "") === "listbox") scopes = [el];
    const within = (s) => (s.getAttribute("role") === "option" ? [s] : Array.from(s.querySelectorAll("[role=option]")));
    let options = scopes.flatMap(within);
    if (el.tagName === "INPUT" && el.list) options = Array.from(el.list.options);
    // A popup drawn elsewhere in the document (a portal) that nothing names.
    if (!options.length) options = Array.from(doc.querySelectorAll("[role=option]"));
    return options.filter((o) => o.tagName === "OPTION" || visible(o));
  };
  const pickOption = (node, value, index) => {
    const el = elementOf(node);
    const options = optionsOf(el);
    const names = options.map(optionName);
    let chosen;
    if (index != null) chosen = options[index] ? [options[index]] : [];
    else {
      const want = norm(value).toLowerCase();
      chosen = options.filter((o, i) => names[i].toLowerCase() === want || (o.getAttribute("data-value") || o.value) === value);
    }
    if (chosen.length !== 1) return { found: chosen.length, options: names.slice(0, 30) };
    const o = chosen[0];
    const label = optionName(o);
    if (o.tagName === "OPTION") return { found: 1, label, datalist: true, value: o.value };
    o.scrollIntoView({ block: "nearest", behavior: "instant" });
    const r = o.getBoundingClientRect();
    const x = r.left + r.width / 2, y = r.top + r.height / 2;
    const hit = o.ownerDocument.elementFromPoint(x, y);
    // The same node as the last look: a popup drawn again under the click
    // would take the press on one node and the release on another.
    const w = o.ownerDocument.defaultView;
    const same = w.__axon_pick === o;
    w.__axon_pick = o;
    return { found: 1, label, x, y, same, clear: !!hit && (o.contains(hit) || hit.contains(o)) };
  };
  // Whether the widget shows `label` as its value: its field's value, its
  // own text, its ARIA value, or its selected option.
  const shows = (node, label) => {
    const el = elementOf(node);
    const want = norm(label).toLowerCase();
    const has = (s) => norm(s).toLowerCase() === want || norm(s).toLowerCase().split(/\s*[,;]\s*/).includes(want);
    const field = el.tagName === "INPUT" ? el : el.querySelector && el.querySelector("input");
    if (field && field.type !== "hidden" && has(field.value)) return true;
    // The widget's own text, its popup's options left out.
    const own = (e) => {
      const parts = [];
      const walk = e.ownerDocument.createTreeWalker(e, NodeFilter.SHOW_TEXT);
      while (walk.nextNode()) {
        const p = walk.currentNode.parentElement;
        if (p && !p.closest("[role=listbox], [role=option]") && visible(p)) parts.push(walk.currentNode.data);
      }
      return parts.join(" ");
    };
    const inner = el.querySelector && el.querySelector("[role=combobox]");
    if ([el, inner].some((e) => e && (has(own(e)) || has(e.getAttribute("aria-valuetext"))))) return true;
    return optionsOf(el).some((o) => o.getAttribute("aria-selected") === "true" && optionName(o).toLowerCase() === want);
  };

  // A table as rows keyed by header; colspan and rowspan fill every grid cell
  // they cover. A header spanning n columns names them h, h_2, … h_n.
  const table = (node) => {
    let el = elementOf(node);
    if (el.tagName !== "TABLE") el = el.closest("table") || el.querySelector("table");
    if (!el) return { error: "no <table> there" };
    const grid = [];
    Array.from(el.rows).forEach((row, y) => {
      grid[y] = grid[y] || [];
      let x = 0;
      for (const cell of row.cells) {
        while (grid[y][x] !== undefined) x++;
        const value = norm(cell.innerText);
        const rs = Math.max(1, cell.rowSpan || 1);
        const cs = Math.max(1, cell.colSpan || 1);
        for (let dy = 0; dy < rs; dy++) {
          grid[y + dy] = grid[y + dy] || [];
          for (let dx = 0; dx < cs; dx++) grid[y + dy][x + dx] = value;
        }
        x += cs;
      }
    });
    // The header: rows in <thead>, else a first row made only of <th>.
    const rows = Array.from(el.rows);
    let headCount = el.tHead ? el.tHead.rows.length : 0;
    if (!headCount && rows.length && Array.from(rows[0].cells).every((c) => c.tagName === "TH")) headCount = 1;
    const width = Math.max(0, ...grid.map((r) => r.length));
    const headers = [];
    const seen = {};
    for (let x = 0; x < width; x++) {
      let name = headCount ? norm(grid[headCount - 1][x]) : "column_" + (x + 1);
      if (!name) name = "column_" + (x + 1);
      seen[name] = (seen[name] || 0) + 1;
      headers.push(seen[name] > 1 ? name + "_" + seen[name] : name);
    }
    const body = grid.slice(headCount).map((r) => {
      const o = {};
      headers.forEach((h, x) => (o[h] = r[x] === undefined ? "" : String(r[x])));
      return o;
    });
    return { headers, rows: body };
  };

  // The search box of the page: role searchbox, then a combobox, then
  // input[type=search], then a text field whose name, label or placeholder
  // says search.
  const searchBox = () => {
    const all = (s) => Array.from(document.querySelectorAll(s)).filter(visible);
    const candidates = [
      ...all("[role=searchbox]"),
      ...all("input[type=search]"),
      ...all("[role=combobox], input[list]"),
      ...all("input, textarea").filter((el) =>
        /search|query|^q$/i.test(
          [el.name, el.id, el.getAttribute("aria-label"), el.placeholder, el.labels && el.labels[0] && el.labels[0].textContent].join(" ")
        )
      ),
    ];
    return candidates.find((el) => editable(el) && !disabled(el)) || null;
  };

  const formOf = (node) => {
    const el = elementOf(node) || document.activeElement;
    if (el && el.tagName === "FORM") return el;
    return (el && (el.form || el.closest("form"))) || document.forms[0] || null;
  };
  const submit = (node) => {
    const form = formOf(node);
    if (!form) return { error: "no form to submit" };
    if (!form.checkValidity()) {
      const bad = Array.from(form.elements).filter((e) => e.willValidate && !e.checkValidity());
      return { invalid: bad.map((e) => describe(e) + ": " + e.validationMessage) };
    }
    const submitter = node && node.type === "submit" ? node : undefined;
    form.requestSubmit(submitter);
    return { form: describe(form), action: form.action, method: form.method };
  };

  return { find, check, clearField, setValue, text, selectOption, widget, pickOption, shows, table, searchBox, submit, describe, visible, elementOf };
})()
