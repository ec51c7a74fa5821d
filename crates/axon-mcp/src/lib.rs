//! # axon-mcp
//!
//! Axon on both sides of the Model Context Protocol.
//!
//! **As a client** ([`import`]): every server listed under `[[mcp.servers]]` (a
//! stdio child process or a Streamable HTTP URL) is connected at start-up, its
//! tools are listed (all pages) and registered as `<server>__<tool>` with their
//! schemas and annotations, so calls to them get Axon's whole pipeline. MCP
//! outcomes become Axon's error kinds: `isError` is `failed`, a lost connection
//! or a dead child is `unavailable` (the next attempt reconnects or respawns), an
//! abandoned call (timeout, cancel) sends `notifications/cancelled`, and
//! `notifications/progress` become progress events.
//!
//! **As a server** ([`AxonMcp`]): Claude Desktop, Cursor or any MCP client lists
//! every tool of the registry, with its input and output schemas and annotations,
//! plus `run_plan`, and every `tools/call` goes through
//! [`Executor::call`](axon_core::Executor::call) — validation, retries, breakers,
//! cache and history apply exactly as they do for the CLI and the HTTP API. A
//! call result comes back as `structuredContent` (the call result JSON) with its
//! `data` as JSON text in `content`; a failed call is `isError: true` with its
//! error's kind, code and message in the text. `run_plan` takes `{"plan": <plan
//! as JSON or YAML text>, "run_id"?}` and returns the plan result. A client's
//! `notifications/cancelled` cancels the call (or the run). `axon mcp` serves this
//! over stdio ([`serve_stdio`]); `axon serve` mounts [`http_service`] at `/mcp`.

#![warn(missing_docs)]

mod client;
mod server;

pub use client::{McpConnection, McpServerConfig, McpTool, import};
pub use server::{AxonMcp, RUN_PLAN, http_service, serve_stdio};
