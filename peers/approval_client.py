"""The official Python SDK client as the person at an MCP client: it calls
`echo`, which Axon's config makes wait for approval, and answers Axon's
question as told. `legacy` speaks 2025-11-25 (sessions: Axon sends
`elicitation/create`); `auto` speaks 2026-07-28 (Axon answers
`input_required` and the SDK sends the call again with the answer).
`replay` speaks 2026-07-28 and drives the loop itself: it approves once, then
sends the same answer and `requestState` three times, as an attacker who
wants one decision to run the call again (issue 59).

    python approval_client.py legacy|auto|replay approve|deny AXON_BINARY [ARGS...]

Prints one JSON document: what the client was asked (message and schema) and
the call's result as the SDK parsed it.
"""

import asyncio
import json
import sys

import mcp.types as types
from mcp import Client, StdioServerParameters


async def check(mode: str, answer: str, command: str, args: list) -> dict:
    asked = []

    async def on_elicit(context, params):
        asked.append(params.model_dump(mode="json", by_alias=True, exclude_none=True))
        if answer == "approve":
            return types.ElicitResult(action="accept", content={"approve": True, "comment": "ok by me"})
        return types.ElicitResult(action="decline")

    target = StdioServerParameters(command=command, args=[*args, "mcp"])
    if mode == "replay":
        return await replay(target)
    async with Client(target, mode=mode, read_timeout_seconds=60, elicitation_callback=on_elicit) as client:
        result = await client.call_tool("echo", {"message": "refund order 40"})
        return {
            "protocol": getattr(getattr(client, "session", None), "protocol_version", None),
            "asked": asked,
            "result": result.model_dump(mode="json", by_alias=True, exclude_none=True),
        }


async def replay(target) -> dict:
    async def on_elicit(context, params):
        return types.ElicitResult(action="accept", content={"approve": True})

    arguments = {"message": "refund order 41"}
    async with Client(target, mode="auto", read_timeout_seconds=60, elicitation_callback=on_elicit) as client:
        first = await client.session.call_tool("echo", arguments, allow_input_required=True)
        state = first.request_state
        answers = {key: types.ElicitResult(action="accept", content={"approve": True}) for key in first.input_requests}
        sent = []
        for _ in range(3):
            result = await client.session.call_tool(
                "echo", arguments, input_responses=answers, request_state=state, allow_input_required=True
            )
            sent.append(result.model_dump(mode="json", by_alias=True, exclude_none=True))
        return {"state": state, "results": sent}


def main() -> None:
    mode, answer, command, *args = sys.argv[1:]
    print(json.dumps(asyncio.run(check(mode, answer, command, args))))


if __name__ == "__main__":
    sys.exit(main())
