//! The statements behind [`Store::pin_get`](crate::Store::pin_get) and its
//! siblings: imported MCP tools' pins (`axon_mcp::pin`), one row per tool,
//! the pin as JSON. Each text serves SQLite and PostgreSQL alike: SQLite
//! reads `$n` as a parameter numbered in order of first appearance, which is
//! PostgreSQL's numbering here.

/// The pin of one tool.
pub(crate) const GET: &str = "SELECT entry FROM tool_pins WHERE tool = $1";

/// Write one tool's pin.
pub(crate) const PUT: &str = "INSERT INTO tool_pins (tool, entry, updated_at_ms) VALUES ($1, $2, $3) \
     ON CONFLICT (tool) DO UPDATE SET entry = $2, updated_at_ms = $3";

/// Every pin, by tool.
pub(crate) const LIST: &str = "SELECT entry FROM tool_pins ORDER BY tool";
