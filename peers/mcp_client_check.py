"""A third-party MCP client (the official Python SDK) against Axon's MCP server.

    python mcp_client_check.py [--mode auto|legacy] [--calls FILE] stdio AXON_BINARY [ARGS...]
    python mcp_client_check.py [--mode auto|legacy] [--calls FILE] http URL

`--mode auto` (the SDK's default) speaks protocol 2026-07-28 (no initialize, no
sessions); `legacy` does the initialize handshake of 2025-11-25 (sessions). The
SDK validates every result's structuredContent against the tool's outputSchema
and raises when it does not conform: such a call is reported as `rejected`.

The calls file is a JSON list of {"tool", "args", "save": {"var": "field"}}:
"${var}" in a string argument is replaced by a value an earlier call saved from
its structuredContent. Without --calls: echo, then a two-step run_plan.

Prints one JSON document: the protocol version, the tools listed and, per call,
the result as the SDK parsed it (or why it rejected it). Exits non-zero only when
the client cannot connect or list tools.
"""

import argparse
import asyncio
import json
import sys

from mcp import Client, StdioServerParameters

PLAN = """
steps:
  - id: a
    tool: echo
    params: {n: 21}
  - tool: echo
    params: {again: '${steps.a.data.n}'}
"""

DEFAULT_CALLS = [
    {"tool": "echo", "args": {"from": "python"}},
    {"tool": "run_plan", "args": {"plan": PLAN}},
]


def substitute(value, saved):
    if isinstance(value, str) and value.startswith("${") and value.endswith("}"):
        return saved.get(value[2:-1], value)
    if isinstance(value, dict):
        return {k: substitute(v, saved) for k, v in value.items()}
    if isinstance(value, list):
        return [substitute(v, saved) for v in value]
    return value


async def check(target, mode: str, calls: list) -> dict:
    progress = []

    async def on_progress(p, total, message):
        progress.append({"progress": p, "total": total, "message": message})

    async with Client(target, mode=mode, read_timeout_seconds=60) as client:
        tools = await client.list_tools()
        saved, report = {}, []
        for call in calls:
            args = substitute(call.get("args", {}), saved)
            entry = {"tool": call["tool"]}
            try:
                result = await client.call_tool(call["tool"], args, progress_callback=on_progress)
                entry["result"] = result.model_dump(mode="json", by_alias=True, exclude_none=True)
                structured = result.structured_content or {}
                for var, field in call.get("save", {}).items():
                    saved[var] = structured.get(field)
            except Exception as e:  # the client refused the result
                entry["rejected"] = f"{type(e).__name__}: {e}"
            report.append(entry)
        return {
            "protocol": getattr(getattr(client, "session", None), "protocol_version", None),
            "tools": [
                {
                    "name": t.name,
                    "has_input_schema": bool(t.input_schema),
                    "has_output_schema": t.output_schema is not None,
                    "read_only": bool(t.annotations and t.annotations.read_only_hint),
                }
                for t in tools.tools
            ],
            "calls": report,
            "progress": progress,
        }


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--mode", default="auto")
    parser.add_argument("--calls")
    parser.add_argument("transport", choices=["stdio", "http"])
    parser.add_argument("rest", nargs=argparse.REMAINDER)
    opts = parser.parse_args()
    if opts.transport == "stdio":
        target = StdioServerParameters(command=opts.rest[0], args=[*opts.rest[1:], "mcp"])
    else:
        target = opts.rest[0]
    calls = DEFAULT_CALLS
    if opts.calls:
        with open(opts.calls) as f:
            calls = json.load(f)
    print(json.dumps(asyncio.run(check(target, opts.mode, calls))))


if __name__ == "__main__":
    sys.exit(main())
