"""An MCP server (the official Python SDK) whose one tool returns a large text:
what an imported tool's output looks like when it floods a model's context.

    python big_result_server.py     # stdio
"""

from mcp.server.mcpserver import MCPServer

server = MCPServer("big-result")


@server.tool()
def report(rows: int = 4000) -> str:
    """A plain-text report of `rows` lines."""
    return "\n".join(
        f"row {i}: order {1000 + i} shipped to customer {i * 7 % 997} on day {i % 28 + 1}, status delivered"
        for i in range(rows)
    )


if __name__ == "__main__":
    server.run("stdio")
