//! # axon-mcp-client
//!
//! MCP servers' tools imported as Axon tools: a tool source, beside
//! `axon-http-tool`. Every server listed under `[[mcp.servers]]` ([`import`];
//! a stdio child process or a Streamable HTTP URL) is connected at start-up,
//! its tools are listed (all pages) and registered as `<server>__<tool>` with
//! their schemas and annotations, so calls to them get Axon's whole pipeline.
//! MCP outcomes become Axon's error kinds: `isError` is `failed`, a lost
//! connection or a dead child is `unavailable` (the next attempt reconnects or
//! respawns), an abandoned call (timeout, cancel) sends
//! `notifications/cancelled`, and `notifications/progress` become progress
//! events. With a pin store ([`import_pinned`]), each tool's definition is
//! checked against the one a person accepted ([`pin`]): a changed or poisoned
//! definition is registered held.

#![warn(missing_docs)]

mod client;
mod config;
pub mod pin;

pub use client::{ImportError, McpConnection, McpTool, import, import_pinned};
pub use config::{McpConfigError, McpServerConfig};
