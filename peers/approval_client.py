"""The official Python SDK client as the person at an MCP client (protocol
2025-11-25, sessions): it calls `echo`, which Axon's config makes wait for
approval, and answers Axon's elicitation as told.

    python approval_client.py approve|deny AXON_BINARY [ARGS...]

Prints one JSON document: what the client was asked (message and schema) and
the call's result as the SDK parsed it.
"""

import asyncio
import json
import sys

import mcp.types as types
from mcp import Client, StdioServerParameters


async def check(answer: str, command: str, args: list) -> dict:
    asked = []

    async def on_elicit(context, params):
        asked.append(params.model_dump(mode="json", by_alias=True, exclude_none=True))
        if answer == "approve":
            return types.ElicitResult(action="accept", content={"approve": True, "comment": "ok by me"})
        return types.ElicitResult(action="decline")

    target = StdioServerParameters(command=command, args=[*args, "mcp"])
    async with Client(target, mode="legacy", read_timeout_seconds=60, elicitation_callback=on_elicit) as client:
        result = await client.call_tool("echo", {"message": "refund order 40"})
        return {
            "asked": asked,
            "result": result.model_dump(mode="json", by_alias=True, exclude_none=True),
        }


def main() -> None:
    answer, command, *args = sys.argv[1:]
    print(json.dumps(asyncio.run(check(answer, command, args))))


if __name__ == "__main__":
    sys.exit(main())
