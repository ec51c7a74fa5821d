"""The real-app suite: four open-source web applications, the same scripted
agent driving Axon's MCP server and Playwright MCP on the same Chromium.

    peers/venv/bin/python benches/real_apps/suite.py --axon target/release/axon \
        [--playwright node_modules/@playwright/mcp/cli.js] [--runs 3]

The apps (installed by scripts/peers): Django's admin over a one-model site
(server-rendered forms), a NiceGUI booking form (Quasar widgets over a
websocket), a Dash tip calculator (React components, callbacks to the
server) and TodoMVC's React app (a single page drawn in the browser). Each
task runs in a fresh server process (a fresh browser, started by a
navigation to about:blank outside the count: a session starts its browser
once); the suite counts the agent's calls, the wall time of its script and the
bytes of text it read, and a referee outside the count reads the page to say
whether the task is done.
Prints a Markdown table; exits 1 when an Axon task failed, with its tools or
with browser_act (CI's short run:
`--runs 1 --act` without `--playwright`). benches/real_apps/run.sh installs
Playwright MCP and calls this.
"""

import argparse
import asyncio
import contextlib
import functools
import http.server
import os
import pathlib
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import urllib.request

from mcp import Client, StdioServerParameters

sys.path.insert(0, str(pathlib.Path(__file__).parent))
from agent import run_task  # noqa: E402
from tasks import TASKS  # noqa: E402

ROOT = pathlib.Path(__file__).resolve().parents[2]
ACT = "Axon browser_act"
APPS = pathlib.Path(__file__).parent / "apps"
PEERS = ROOT / "peers"


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def wait_up(url: str, proc=None, seconds: float = 60) -> None:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if proc is not None and proc.poll() is not None:
            raise SystemExit(f"real apps: {url} exited with {proc.returncode}")
        try:
            with urllib.request.urlopen(url, timeout=2):
                return
        except OSError:
            time.sleep(0.2)
    raise SystemExit(f"real apps: {url} did not answer within {seconds:.0f} s")


class Apps:
    """Starts the four apps on free local ports; stops them on exit."""

    def __init__(self, python: str, todomvc: pathlib.Path, data: pathlib.Path):
        self.python, self.todomvc, self.data = python, todomvc, data
        self.procs: list[subprocess.Popen] = []
        self.base: dict[str, str] = {}
        self.reset: dict[str, str] = {}

    def spawn(self, args, cwd, env=None) -> subprocess.Popen:
        log = open(self.data / f"{pathlib.Path(args[1]).stem}.log", "ab")
        proc = subprocess.Popen(args, cwd=cwd, env={**os.environ, **(env or {})}, stdout=log, stderr=log)
        self.procs.append(proc)
        return proc

    def __enter__(self):
        library = APPS / "library"
        env = {"LIBRARY_DIR": str(self.data)}
        subprocess.run([self.python, "manage.py", "migrate", "--run-syncdb", "-v0"], cwd=library,
                       env={**os.environ, **env}, check=True)
        port = free_port()
        proc = self.spawn([self.python, "manage.py", "runserver", f"127.0.0.1:{port}", "--insecure", "--noreload"],
                          library, env)
        self.base["library (Django admin)"] = f"http://127.0.0.1:{port}"
        self.reset["library (Django admin)"] = f"http://127.0.0.1:{port}/reset/"
        wait_up(f"http://127.0.0.1:{port}/reset/", proc)
        for app, script in (("booking (NiceGUI)", "booking.py"), ("tips (Dash)", "tips.py")):
            port = free_port()
            proc = self.spawn([self.python, str(APPS / script), str(port)], APPS)
            self.base[app] = f"http://127.0.0.1:{port}"
            wait_up(self.base[app], proc)
        handler = functools.partial(Quiet, directory=str(self.todomvc))
        server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
        threading.Thread(target=server.serve_forever, daemon=True).start()
        self.base["todos (TodoMVC, React)"] = f"http://127.0.0.1:{server.server_address[1]}"
        return self

    def __exit__(self, *_):
        for proc in self.procs:
            proc.terminate()
        for proc in self.procs:
            with contextlib.suppress(subprocess.TimeoutExpired):
                proc.wait(5)


class Quiet(http.server.SimpleHTTPRequestHandler):
    def log_message(self, *args):
        pass


async def run_server(name, params, axon, apps, runs, only, act=False) -> dict:
    out: dict[tuple, list] = {}
    for app, tasks in TASKS.items():
        for task, (intents, outcome) in tasks.items():
            if only and only not in f"{app} {task}":
                continue
            for _ in range(runs):
                if app in apps.reset:
                    urllib.request.urlopen(apps.reset[app], timeout=10).read()
                async with Client(params, read_timeout_seconds=90) as client:
                    r = await run_task(client, axon, apps.base[app], intents, outcome, act)
                out.setdefault((app, task), []).append(r)
                mark = "ok" if r["done"] else f"FAILED: {r['error']}"
                print(f"  {name} | {app} | {task}: {r['calls']} calls, {r['ms']:.0f} ms, {r['read']} B — {mark}",
                      file=sys.stderr, flush=True)
    return out


def summary(rows: list) -> tuple:
    return (
        sum(r["done"] for r in rows),
        len(rows),
        statistics.median(r["calls"] for r in rows),
        statistics.median(r["ms"] for r in rows) / 1000,
        statistics.median(r["read"] for r in rows) / 1024,
    )


def report(results: dict) -> bool:
    names = list(results)
    print(f"| app | task | {' | '.join(f'{n}: done, calls, s, KiB' for n in names)} |")
    print("| --- | --- | " + " | ".join("---" for _ in names) + " |")
    keys = list(next(iter(results.values())))
    for key in keys:
        cells = []
        for n in names:
            done, total, calls, s, kib = summary(results[n][key])
            cells.append(f"{done}/{total}, {calls:g}, {s:.2f}, {kib:.1f}")
        print(f"| {key[0]} | {key[1]} | {' | '.join(cells)} |")
    print()
    print("| server | tasks done | median calls / task | median s / task | median KiB read / task |")
    print("| --- | --- | --- | --- | --- |")
    for n in names:
        per_task = [summary(results[n][k]) for k in keys]
        done = sum(t[0] for t in per_task)
        total = sum(t[1] for t in per_task)
        calls = statistics.median(t[2] for t in per_task)
        s = statistics.median(t[3] for t in per_task)
        kib = statistics.median(t[4] for t in per_task)
        print(f"| {n} | {done}/{total} | {calls:g} | {s:.2f} | {kib:.1f} |")
    if ACT in results:
        wrong = sum(r["wrong"] for rows in results[ACT].values() for r in rows)
        print(f"\n{ACT}: {wrong} task(s) failed without a refusal (a wrong action reported as success)")
    for n in names:
        for key, rows in results[n].items():
            for r in rows:
                if r["error"]:
                    print(f"- {n}, {key[0]}, {key[1]}: {r['error']}")
    return all(r["done"] for name in ("Axon", ACT) for rows in results.get(name, {}).values() for r in rows)


async def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--axon", required=True)
    parser.add_argument("--playwright", help="Playwright MCP's cli.js; without it only Axon runs")
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--act", action="store_true",
                        help="also give the tasks to Axon's browser_act, one plain step at a time")
    parser.add_argument("--only", help="run the tasks whose 'app task' contains this")
    parser.add_argument("--apps-python", default=str(PEERS / "venv-apps/bin/python"))
    parser.add_argument("--todomvc", default=str(PEERS / "node_modules/todomvc/examples/react"))
    args = parser.parse_args()
    for path in (args.apps_python, args.todomvc, args.axon):
        if not pathlib.Path(path).exists():
            raise SystemExit(f"real apps: {path} is missing (scripts/peers installs the apps; cargo builds axon)")
    (ROOT / "target").mkdir(exist_ok=True)
    data = pathlib.Path(tempfile.mkdtemp(prefix="real-apps-", dir=ROOT / "target"))
    config = data / "axon.toml"
    config.write_text(f'[files]\ndir = "{data / "files"}"\n[store]\npath = "{data / "axon.db"}"\n')
    servers = {}
    if args.playwright:
        servers["Playwright MCP 0.0.83"] = (StdioServerParameters(
            command="node",
            args=[args.playwright, "--headless", "--isolated", "--no-sandbox", "--executable-path",
                  "/usr/bin/chromium", "--output-dir", str(data / "playwright"), "--file-paths", "absolute"],
        ), False)
    servers["Axon"] = (StdioServerParameters(
        command=str(pathlib.Path(args.axon).resolve()), args=["--config", str(config), "mcp"],
        env={"PATH": "/usr/bin:/bin"}), True)
    with Apps(args.apps_python, pathlib.Path(args.todomvc), data) as apps:
        results = {}
        for name, (params, axon) in servers.items():
            results[name] = await run_server(name, params, axon, apps, args.runs, args.only)
        if args.act:
            results[ACT] = await run_server(ACT, servers["Axon"][0], True, apps, args.runs, args.only, act=True)
    if not report(results):
        sys.exit(1)


if __name__ == "__main__":
    asyncio.run(main())
