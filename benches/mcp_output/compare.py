"""What an agent reads: Axon's MCP server against Playwright MCP on one script.

    peers/venv/bin/python benches/mcp_output/compare.py PLAYWRIGHT_MCP_CLI_JS AXON_BINARY

Serves crates/axon-browser/tests/fixtures on a local port, runs the same
10-action login script through both servers with the official Python SDK (its
output-schema validation on), and prints a Markdown table: bytes of
`tools/list`, bytes on the wire (each result's JSON), bytes a model reads (text
blocks) and image bytes (base64 in image blocks); then a second table: how long
each step took, as the client waited for it (the first navigation includes
starting Chromium, so the totals are also given without it), in a new client
process and again in the same process once the SDK's one-time imports are
done. Both drive Debian's Chromium headless. benches/mcp_output/run.sh
installs Playwright MCP and calls this.
"""

import asyncio
import functools
import http.server
import json
import pathlib
import re
import sys
import threading
import time

from mcp import Client, StdioServerParameters

ROOT = pathlib.Path(__file__).resolve().parents[2]
FIXTURES = ROOT / "crates/axon-browser/tests/fixtures"


def serve_fixtures() -> str:
    class Quiet(http.server.SimpleHTTPRequestHandler):
        def log_message(self, *args):
            pass

    handler = functools.partial(Quiet, directory=str(FIXTURES))
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return f"http://127.0.0.1:{server.server_address[1]}"


def ref(snapshot_text: str, role: str, name: str) -> str:
    m = re.search(rf'{role} "{re.escape(name)}"[^\n]*\[ref=(e\d+)\]', snapshot_text)
    if not m:
        raise SystemExit(f"no {role} {name!r} in the snapshot:\n{snapshot_text}")
    return m.group(1)


def text_of(result) -> str:
    return "".join(b.text for b in result.content if b.type == "text")


async def run(target, steps_for) -> dict:
    async with Client(target, read_timeout_seconds=60) as client:
        tools = await client.list_tools()
        listing = tools.model_dump(mode="json", by_alias=True, exclude_none=True)
        rows, state = [], {}
        for name, tool, args in steps_for(state):
            arguments = args(state) if callable(args) else args
            start = time.perf_counter()
            result = await client.call_tool(tool, arguments)
            ms = (time.perf_counter() - start) * 1000
            if result.is_error:
                raise SystemExit(f"{tool} failed: {text_of(result)}")
            wire = result.model_dump(mode="json", by_alias=True, exclude_none=True)
            state["last"] = text_of(result)
            rows.append({
                "step": name,
                "wire": len(json.dumps(wire, separators=(",", ":"))),
                "text": sum(len(b.text) for b in result.content if b.type == "text"),
                "image": sum(len(b.data) for b in result.content if b.type == "image"),
                "ms": ms,
            })
        return {"tools": len(listing["tools"]), "list_bytes": len(json.dumps(listing, separators=(",", ":"))), "rows": rows}


def playwright_steps(site):
    def steps(state):
        def snap_ref(role, name):
            return lambda s: {"target": ref(s["snap"], role, name), "element": f"{name} {role}"}
        yield "navigate", "browser_navigate", {"url": f"{site}/login.html"}
        yield "snapshot", "browser_snapshot", {}
        state["snap"] = state["last"]
        yield "type user", "browser_type", lambda s: {**snap_ref("textbox", "Username")(s), "text": "ada"}
        yield "type password", "browser_type", lambda s: {**snap_ref("textbox", "Password")(s), "text": "s3cret"}
        yield "check remember", "browser_click", snap_ref("checkbox", "Remember me")
        yield "click log in", "browser_click", snap_ref("button", "Log in")
        yield "wait for text", "browser_wait_for", {"text": "Welcome back"}
        yield "snapshot", "browser_snapshot", {}
        yield "press Tab", "browser_press_key", {"key": "Tab"}
        yield "screenshot", "browser_take_screenshot", {"type": "png", "scale": "css"}
    return steps


def axon_steps(site):
    def steps(state):
        yield "navigate", "browser_navigate", {"url": f"{site}/login.html"}
        yield "snapshot", "browser_snapshot", {}
        yield "type user", "browser_type", {"label": "Username", "text": "ada"}
        yield "type password", "browser_type", {"label": "Password", "text": "s3cret"}
        yield "check remember", "browser_click", {"role": "checkbox", "name": "Remember me"}
        yield "click log in", "browser_click", {"role": "button", "name": "Log in"}
        yield "wait for text", "browser_wait_for_element", {"has_text": "Welcome back"}
        yield "snapshot", "browser_snapshot", {}
        yield "press Tab", "browser_press_key", {"key": "Tab"}
        yield "screenshot", "browser_take_screenshot", {}
    return steps


async def main(playwright_js: str, axon: str) -> None:
    site = serve_fixtures()
    pw = StdioServerParameters(
        command="node",
        args=[playwright_js, "--headless", "--isolated", "--no-sandbox", "--executable-path", "/usr/bin/chromium"],
    )
    ax = StdioServerParameters(command=axon, args=["mcp"], env={"AXON_STORE_PATH": "/tmp/axon-mcp-output-bench.db", "PATH": "/usr/bin:/bin"})
    results = {"Playwright MCP 0.0.83": await run(pw, playwright_steps(site)), "Axon": await run(ax, axon_steps(site))}
    # The same script again in this same client process: the SDK's one-time
    # costs (importing `jsonschema` for the first result that has an output
    # schema to check) are paid by now, as in an agent host that has run a
    # while. Each server is a fresh process, with a fresh Chromium.
    again = {"Playwright MCP 0.0.83": await run(pw, playwright_steps(site)), "Axon": await run(ax, axon_steps(site))}
    names = list(results)
    print(f"| step | {' | '.join(f'{n} wire / text / image' for n in names)} |")
    print("| --- | " + " | ".join("---" for _ in names) + " |")
    for i, row in enumerate(results[names[0]]["rows"]):
        cells = [f"{r['rows'][i]['wire']} / {r['rows'][i]['text']} / {r['rows'][i]['image']}" for r in results.values()]
        print(f"| {row['step']} | {' | '.join(cells)} |")
    totals = []
    for r in results.values():
        w = sum(x["wire"] for x in r["rows"]); t = sum(x["text"] for x in r["rows"]); im = sum(x["image"] for x in r["rows"])
        totals.append((w, t, im))
    print("| **total** | " + " | ".join(f"**{w} / {t} / {im}**" for w, t, im in totals) + " |")
    print()
    for n, r in results.items():
        print(f"- {n}: tools/list {r['list_bytes']} bytes for {r['tools']} tools ({r['list_bytes'] // r['tools']} per tool)")
    (pw_t, ax_t) = (totals[0][1], totals[1][1])
    print(f"- text a model reads (screenshots aside): Axon / Playwright MCP = {ax_t / pw_t:.2f}")
    print()
    print("Time per step as the client waited for it, ms: a new client process (it imports")
    print("`jsonschema` at the first result with an output schema), then the same script again")
    print("in that process with fresh servers.")
    print()
    rounds = [("new client", results), ("client warmed", again)]
    heads = [f"{n}, {label}" for label, r in rounds for n in r]
    columns = [r[n]["rows"] for _, r in rounds for n in r]
    print(f"| step | {' | '.join(heads)} |")
    print("| --- | " + " | ".join("---" for _ in heads) + " |")
    for i, row in enumerate(columns[0]):
        print(f"| {row['step']} | " + " | ".join(f"{c[i]['ms']:.0f}" for c in columns) + " |")
    whole = [sum(x["ms"] for x in c) for c in columns]
    warm = [sum(x["ms"] for x in c[1:]) for c in columns]
    print("| **total** | " + " | ".join(f"**{t:.0f}**" for t in whole) + " |")
    print("| total after the first navigation | " + " | ".join(f"{t:.0f}" for t in warm) + " |")
    for k, (label, _) in enumerate(rounds):
        pw_ms, ax_ms = warm[2 * k], warm[2 * k + 1]
        print(f"- {label}, after the first navigation: Axon / Playwright MCP = {ax_ms / pw_ms:.2f} ({pw_ms / ax_ms:.1f}x less)")

if __name__ == "__main__":
    asyncio.run(main(sys.argv[1], sys.argv[2]))
