"""A third-party MCP client (the official Python SDK) against Axon's MCP server.

    python mcp_client_check.py stdio AXON_BINARY [ARGS...]   # spawns `AXON_BINARY ARGS... mcp`
    python mcp_client_check.py http URL                       # Streamable HTTP, e.g. http://127.0.0.1:7878/mcp

Lists the tools, calls `echo` and `run_plan`, and prints one JSON document with
what came back, for Axon's tests to check. Exits non-zero on any failure.
"""

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


async def check(target) -> dict:
    async with Client(target) as client:
        tools = await client.list_tools()
        echo = await client.call_tool("echo", {"from": "python"})
        plan = await client.call_tool("run_plan", {"plan": PLAN})
        return {
            "tools": [
                {
                    "name": t.name,
                    "has_input_schema": bool(t.input_schema),
                    "read_only": bool(t.annotations and t.annotations.read_only_hint),
                }
                for t in tools.tools
            ],
            "echo": echo.model_dump(mode="json", by_alias=True, exclude_none=True),
            "run_plan": plan.model_dump(mode="json", by_alias=True, exclude_none=True),
        }


def main() -> None:
    mode, rest = sys.argv[1], sys.argv[2:]
    if mode == "stdio":
        target = StdioServerParameters(command=rest[0], args=[*rest[1:], "mcp"])
    elif mode == "http":
        target = rest[0]
    else:
        raise SystemExit(f"unknown mode {mode!r}: stdio or http")
    print(json.dumps(asyncio.run(check(target))))


if __name__ == "__main__":
    main()
