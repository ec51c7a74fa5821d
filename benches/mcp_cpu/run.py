"""CPU time `axon mcp` spends per tool call, from the official MCP Python SDK.

The throughput figures of `crates/axon-cli/benches/mcp_proxy.rs` move by a
third between runs on this shared 2-core VM (even the direct baseline, which
Axon is not part of). The CPU time the `axon mcp` process itself uses per call
(user + system, all its threads, read from /proc) moves far less, so two builds
can be compared a change at a time:

    peers/venv/bin/python benches/mcp_cpu/run.py [AXON ...] [--calls N]

Each binary (default target/release/axon) serves stdio twice: with the default
SQLite history in a fresh temporary store, then with history in memory (the
baseline: same protocol and pipeline, no disk). Each time the client calls
Axon's own `echo` 300 times to warm up, then N times (default 5000) one after
another; the script prints calls/s, the server's CPU microseconds per call, and
SQLite's CPU as a ratio of memory's, with each thread's share (by thread
name) beside the total. Figures in docs/benchmarks.md ("MCP").
"""

import argparse
import asyncio
import os
import tempfile
import time

from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client

TICK = os.sysconf("SC_CLK_TCK")


def cpu_seconds(pid: int) -> float:
    """User + system time of a process and all its threads so far."""
    with open(f"/proc/{pid}/stat") as f:
        # The fields after the command name (which may hold spaces).
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / TICK


def per_thread(pid: int) -> dict[str, float]:
    """User + system time so far of each of a process's threads, by thread name."""
    seconds: dict[str, float] = {}
    for task in os.listdir(f"/proc/{pid}/task"):
        try:
            with open(f"/proc/{pid}/task/{task}/comm") as f:
                name = f.read().strip()
            with open(f"/proc/{pid}/task/{task}/stat") as f:
                fields = f.read().rsplit(")", 1)[1].split()
        except OSError:
            continue
        seconds[name] = seconds.get(name, 0.0) + (int(fields[11]) + int(fields[12])) / TICK
    return seconds


def children() -> set[int]:
    me = os.getpid()
    found = set()
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                with open(f"/proc/{entry}/stat") as f:
                    if int(f.read().rsplit(")", 1)[1].split()[1]) == me:
                        found.add(int(entry))
            except OSError:
                pass
    return found


async def measure(binary: str, history: str, calls: int) -> float:
    """The server's CPU seconds per call with `history` ("sqlite" or "memory")."""
    with tempfile.TemporaryDirectory(prefix="axon-mcp-cpu-") as store:
        before = children()
        config = os.path.join(store, "axon.toml")
        with open(config, "w") as f:
            f.write(f'[history]\nbackend = "{history}"\n')
        params = StdioServerParameters(
            command=binary,
            args=["--config", config, "mcp"],
            env={"AXON_STORE_PATH": os.path.join(store, "axon.db"), "PATH": os.environ["PATH"]},
        )
        with open(os.devnull, "w") as quiet:
            async with stdio_client(params, errlog=quiet) as (read, write):
                async with ClientSession(read, write) as session:
                    await session.initialize()
                    (server,) = children() - before
                    for _ in range(300):
                        await session.call_tool("echo", {"message": "hello"})
                    cpu = cpu_seconds(server)
                    threads = per_thread(server)
                    start = time.perf_counter()
                    for _ in range(calls):
                        result = await session.call_tool("echo", {"message": "hello"})
                        assert not result.is_error, result
                    wall = time.perf_counter() - start
                    cpu = cpu_seconds(server) - cpu
                    threads = {
                        name: spent - threads.get(name, 0.0)
                        for name, spent in per_thread(server).items()
                    }
        print(
            f"{binary}, {history} history: {calls / wall:,.0f} calls/s, "
            f"axon CPU {cpu / calls * 1e6:,.0f} us per call ("
            + ", ".join(
                f"{name} {spent / calls * 1e6:,.0f}"
                for name, spent in sorted(threads.items())
                if spent > 0
            )
            + ")"
        )
        return cpu / calls


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("binaries", nargs="*", default=["target/release/axon"])
    parser.add_argument("--calls", type=int, default=5000)
    args = parser.parse_args()
    for binary in args.binaries:
        if not os.access(binary, os.X_OK):
            raise SystemExit(f"mcp_cpu: {binary} is not an executable (cargo build --release -p axon-cli)")
        sqlite = asyncio.run(measure(binary, "sqlite", args.calls))
        memory = asyncio.run(measure(binary, "memory", args.calls))
        print(f"{binary}: SQLite history costs {sqlite / memory:.2f}x memory's CPU per call")


if __name__ == "__main__":
    main()
