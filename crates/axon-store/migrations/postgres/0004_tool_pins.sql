-- Imported MCP tools' pins (axon_mcp::pin): the accepted and the last listed
-- definition of each tool, as JSON, so that a changed tool is held until a
-- person accepts it, whichever replica imported or accepted it.
CREATE TABLE tool_pins (
    tool          TEXT   NOT NULL PRIMARY KEY,
    entry         TEXT   NOT NULL,
    updated_at_ms BIGINT NOT NULL
);
