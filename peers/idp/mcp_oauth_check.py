"""The official Python MCP SDK's OAuth client against Axon's `/mcp`.

    python mcp_oauth_check.py --mode auto|legacy URL ISSUER CLIENT_ID CLIENT_SECRET SCOPE

The client starts with no token. Its first request is answered 401; the SDK's
ClientCredentialsOAuthProvider reads `WWW-Authenticate`, fetches the Protected
Resource Metadata, discovers the authorization server, asks it for a token for
this resource (RFC 8707) and retries. `--mode auto` speaks protocol 2026-07-28,
`legacy` the initialize handshake of 2025-11-25.

Prints one JSON document: the protocol, the tools listed, the echo call's
result, and the OAuth requests the SDK made (method and path, no secrets).
"""

import argparse
import asyncio
import json
import sys
import warnings

import httpx2
from mcp import Client
from mcp.client.auth.extensions.client_credentials import ClientCredentialsOAuthProvider
from mcp.client.streamable_http import streamable_http_client


class Memory:
    """Tokens kept for this run only."""

    def __init__(self):
        self.tokens = None
        self.client_info = None

    async def get_tokens(self):
        return self.tokens

    async def set_tokens(self, tokens):
        self.tokens = tokens

    async def get_client_info(self):
        return self.client_info

    async def set_client_info(self, client_info):
        self.client_info = client_info


async def check(opts) -> dict:
    seen = []

    async def log(request):
        seen.append(f"{request.method} {request.url.path} {request.url.port}")

    async def log_response(response):
        seen.append(f"-> {response.status_code}")

    storage = Memory()
    auth = ClientCredentialsOAuthProvider(
        server_url=opts.url,
        storage=storage,
        client_id=opts.client_id,
        client_secret=opts.client_secret,
        scope=opts.scope,
        issuer=opts.issuer,
    )
    http = httpx2.AsyncClient(auth=auth, event_hooks={"request": [log], "response": [log_response]})
    async with http:
        transport = streamable_http_client(opts.url, http_client=http)
        async with Client(transport, mode=opts.mode, read_timeout_seconds=30) as client:
            tools = await client.list_tools()
            result = await client.call_tool("echo", {"from": "python-oauth"})
            return {
                "protocol": getattr(getattr(client, "session", None), "protocol_version", None),
                "tools": [t.name for t in tools.tools],
                "echo": result.model_dump(mode="json", by_alias=True, exclude_none=True),
                "requests": seen,
                "has_token": storage.tokens is not None,
            }


def main() -> None:
    warnings.simplefilter("ignore")
    parser = argparse.ArgumentParser()
    parser.add_argument("--mode", default="auto")
    parser.add_argument("url")
    parser.add_argument("issuer")
    parser.add_argument("client_id")
    parser.add_argument("client_secret")
    parser.add_argument("scope")
    print(json.dumps(asyncio.run(check(parser.parse_args()))))


if __name__ == "__main__":
    sys.exit(main())
