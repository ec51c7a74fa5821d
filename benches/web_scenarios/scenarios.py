"""The web as it is: Axon's MCP server against Playwright MCP, scenario by scenario.

    peers/venv/bin/python benches/web_scenarios/scenarios.py PLAYWRIGHT_MCP_CLI_JS AXON_BINARY

Serves crates/axon-browser/tests/fixtures on a local port and runs each
scenario (issue 38: dialogs, a dialog on load, beforeunload, a new tab, a popup
that closes itself, a hover menu, drag and drop, a file input, back across an
SPA route, console and a failed fetch, several fields, a button in an iframe
and one in a shadow root, a download, resizing) as an agent's
script of tool calls through both servers with the official Python SDK (its
output-schema validation on), then checks the page's end state with a call
that is not counted. Prints a Markdown table: per scenario, whether each
server reached the end state, the wall time of its script and the bytes a
model reads (text blocks). Both drive Debian's Chromium headless.
benches/web_scenarios/run.sh installs Playwright MCP and calls this.
"""

import asyncio
import pathlib
import re
import sys
import tempfile
import time

from mcp import Client, StdioServerParameters

ROOT = pathlib.Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "benches/mcp_output"))
from compare import serve_fixtures, text_of  # noqa: E402 - the fixture server and text blocks, shared


def el(selector, what="element"):
    """Playwright MCP's element arguments: a selector as `target`."""
    return {"element": what, "target": selector}


def scenarios(site, upload_path):
    """name -> (playwright steps, axon steps, (selector, expected text))."""
    go = lambda page: ("browser_navigate", {"url": f"{site}/{page}"})
    return {
        "confirm() on click": (
            [go("dialogs.html"), ("browser_click", el("#confirm")), ("browser_handle_dialog", {"accept": False})],
            [go("dialogs.html"), ("browser_click", {"selector": "#confirm"})],
            ("#status", "kept"),
        ),
        "prompt() on click": (
            [go("dialogs.html"), ("browser_click", el("#prompt")), ("browser_handle_dialog", {"accept": False})],
            [go("dialogs.html"), ("browser_click", {"selector": "#prompt"})],
            ("#status", "name: null"),
        ),
        "alert() while loading": (
            [go("dialog_on_load.html"), ("browser_handle_dialog", {"accept": True})],
            [go("dialog_on_load.html")],
            ("#status", "greeted"),
        ),
        "beforeunload": (
            [go("dialogs.html"), ("browser_click", el("#arm")), go("welcome.html"), ("browser_handle_dialog", {"accept": True})],
            [go("dialogs.html"), ("browser_click", {"selector": "#arm"}), go("welcome.html")],
            ("#greeting", "Welcome back."),
        ),
        "target=_blank link": (
            [go("tabs.html"), ("browser_click", el("#blank")), ("browser_tabs", {"action": "select", "index": 1})],
            [go("tabs.html"), ("browser_click", {"selector": "#blank"})],
            ("#greeting", "Welcome back."),
        ),
        "popup that closes itself": (
            [go("tabs.html"), ("browser_click", el("#popup")), ("browser_wait_for", {"time": 1}), ("browser_tabs", {"action": "select", "index": 0})],
            [go("tabs.html"), ("browser_click", {"selector": "#popup"}), ("browser_wait", {"seconds": 1})],
            ("#status", "popup said: signed in"),
        ),
        "hover menu": (
            [go("web.html"), ("browser_hover", el("#products")), ("browser_click", el("#laptops"))],
            [go("web.html"), ("browser_hover", {"selector": "#products"}), ("browser_click", {"selector": "#laptops"})],
            ("#status", "laptops chosen"),
        ),
        "drag and drop": (
            [go("web.html"), ("browser_drag", {"startElement": "Item 3", "startTarget": "#item3", "endElement": "Item 1", "endTarget": "#item1"})],
            [go("web.html"), ("browser_drag", {"source": {"selector": "#item3"}, "target": {"selector": "#item1"}})],
            ("#status", "order: item3,item1,item2"),
        ),
        "file input": (
            [go("web.html"), ("browser_click", el("#upload")), ("browser_file_upload", {"paths": [upload_path]})],
            [go("web.html"), ("browser_upload_file", {"selector": "#upload", "paths": ["report.pdf"]})],
            ("#status", "uploaded report.pdf (15 bytes)"),
        ),
        "back across an SPA route": (
            [go("web.html"), ("browser_click", el("#route")), ("browser_navigate_back", {})],
            [go("web.html"), ("browser_click", {"selector": "#route"}), ("browser_navigate_back", {})],
            ("#status", "back at the start"),
        ),
        "console error and failed fetch": (
            [go("web.html"), ("browser_click", el("#log")), ("browser_console_messages", {"level": "error"}), ("browser_network_requests", {"static": False})],
            [go("web.html"), ("browser_click", {"selector": "#log"}), ("browser_console_messages", {"level": "error"}), ("browser_network_requests", {})],
            ("#status", "fetched"),
        ),
        "several fields at once": (
            [go("form.html"), ("browser_fill_form", {"fields": [
                {"name": "Email", "type": "textbox", "target": "#email", "value": "ada@example.com"},
                {"name": "Quantity", "type": "textbox", "target": "#qty", "value": "3"}]}), ("browser_click", el("#local input"))],
            [go("form.html"), ("browser_fill_form", {"fields": [
                {"selector": "#email", "value": "ada@example.com"}, {"selector": "#qty", "value": "3"}]}), ("browser_click", {"selector": "#local input"})],
            ("#qty", None),
        ),
        "button in an iframe": (
            [go("corpus_frames.html"), ("browser_snapshot", {}),
             ("browser_click", lambda last: el(ref_of(last, "Framed button"), "Framed button"))],
            # Role and name do not reach into frames (nor do Playwright's
            # role locators): the snapshot's ref does, for both.
            [go("corpus_frames.html"), ("browser_snapshot", {}),
             ("browser_click", lambda last: {"ref": ref_of(last, "Framed button")})],
            ("#log", "click:framed"),
        ),
        "button in a shadow root": (
            [go("corpus_frames.html"), ("browser_click", el("#shadowed", "Shadow button"))],
            [go("corpus_frames.html"), ("browser_click", {"role": "button", "name": "Shadow button"})],
            ("#log", "click:shadow"),
        ),
        "download": (
            [go("downloads.html"), ("browser_click", el("#report", "Get the report"))],
            [go("downloads.html"), ("browser_click", {"selector": "#report"})],
            (DOWNLOADED, "%PDF-1.4"),
        ),
        "resize": (
            [go("web.html"), ("browser_resize", {"width": 600, "height": 400}), ("browser_click", el("#width"))],
            [go("web.html"), ("browser_resize", {"width": 600, "height": 400}), ("browser_click", {"selector": "#width"})],
            ("#status", "width 600"),
        ),
    }


# The end state of a download: a file named report*.pdf with the page's
# bytes, in Axon's files directory or under Playwright MCP's output directory.
DOWNLOADED = "@download"


def ref_of(snapshot_text: str, name: str) -> str:
    """The ref of the element named `name` in a snapshot (frames' refs too)."""
    m = re.search(rf'"{re.escape(name)}"[^\n]*\[ref=([A-Za-z0-9]+)\]', snapshot_text)
    return m.group(1) if m else "(not in the snapshot)"


def downloaded(dirs, expected) -> bool:
    for d in dirs:
        for f in pathlib.Path(d).rglob("report*.pdf"):
            if f.read_bytes().startswith(expected.encode()):
                return True
    return False


async def check(client, is_axon, selector, expected, dirs) -> bool:
    if selector == DOWNLOADED:
        # Give a download begun as the click returned a moment to land.
        for _ in range(20):
            if downloaded(dirs, expected):
                return True
            await asyncio.sleep(0.1)
        return False
    if is_axon:
        r = await client.call_tool("browser_get_text", {"selector": selector})
    else:
        r = await client.call_tool("browser_evaluate", {"function": f"() => {{ const e = document.querySelector({selector!r}); return e ? (e.value !== undefined && e.tagName === 'INPUT' ? e.value : e.textContent) : null; }}"})
    text = text_of(r)
    if expected is None:  # a field's value: the fill took
        return not r.is_error and "3" in text
    return not r.is_error and expected in text


async def run(target, is_axon, cases, dirs) -> dict:
    out = {}
    for name, (pw, ax, (selector, expected)) in cases.items():
        steps = ax if is_axon else pw
        async with Client(target, read_timeout_seconds=60) as client:
            start = time.perf_counter()
            read = 0
            last = ""
            errors = []
            for tool, args in steps:
                try:
                    # A step may depend on what the last one read (a ref).
                    args = args(last) if callable(args) else args
                    r = await asyncio.wait_for(client.call_tool(tool, args), 45)
                    last = text_of(r)
                    read += sum(len(b.text) for b in r.content if b.type == "text")
                    if r.is_error:
                        errors.append(f"{tool}: {text_of(r)[:120]}")
                except Exception as e:  # noqa: BLE001 - a hang or a protocol error is a result here
                    errors.append(f"{tool}: {type(e).__name__} {e}"[:160])
                    break
            wall = (time.perf_counter() - start) * 1000
            done = await check(client, is_axon, selector, expected, dirs)
        out[name] = {"done": done, "ms": wall, "read": read, "errors": errors}
    return out


async def main(playwright_js: str, axon: str) -> None:
    site = serve_fixtures()
    # Under the working directory: Playwright MCP reads uploads only below
    # its roots (the directory it runs in).
    (ROOT / "target").mkdir(exist_ok=True)
    files = pathlib.Path(tempfile.mkdtemp(prefix="web-scenarios-", dir=ROOT / "target"))
    (files / "report.pdf").write_bytes(b"%PDF-1.4 twelve")
    config = files / "axon.toml"
    config.write_text(f'[files]\ndir = "{files}"\n[store]\npath = "{files / "axon.db"}"\n')
    cases = scenarios(site, str(files / "report.pdf"))
    pw_out = files / "playwright-output"
    pw = StdioServerParameters(
        command="node",
        args=[playwright_js, "--headless", "--isolated", "--no-sandbox", "--executable-path", "/usr/bin/chromium",
              "--output-dir", str(pw_out)],
    )
    ax = StdioServerParameters(command=axon, args=["--config", str(config), "mcp"], env={"PATH": "/usr/bin:/bin"})
    results = {
        "Playwright MCP 0.0.83": await run(pw, False, cases, [pw_out]),
        "Axon": await run(ax, True, cases, [files]),
    }
    names = list(results)
    print(f"| scenario | {' | '.join(f'{n}: done, ms, bytes read' for n in names)} |")
    print("| --- | " + " | ".join("---" for _ in names) + " |")
    for case in cases:
        cells = []
        for n in names:
            r = results[n][case]
            cells.append(f"{'yes' if r['done'] else '**no**'}, {r['ms']:.0f}, {r['read']}")
        print(f"| {case} | {' | '.join(cells)} |")
    print()
    for n in names:
        done = sum(r["done"] for r in results[n].values())
        ms = sum(r["ms"] for r in results[n].values())
        read = sum(r["read"] for r in results[n].values())
        print(f"- {n}: {done}/{len(cases)} done, {ms:.0f} ms, {read} bytes read")
        for case, r in results[n].items():
            for e in r["errors"]:
                print(f"  - {case}: {e}")


if __name__ == "__main__":
    asyncio.run(main(sys.argv[1], sys.argv[2]))
