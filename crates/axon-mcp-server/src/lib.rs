//! # axon-mcp-server
//!
//! Axon's face to MCP clients: the registry and `run_plan` served over the
//! Model Context Protocol. (The other side, MCP servers' tools imported as
//! Axon tools, is `axon-mcp-client`, a tool source beside `axon-http-tool`.)
//!
//! [`AxonMcp`]: Claude Desktop, Cursor or any MCP client lists
//! the registry's tools (all, or those `[mcp] tools`/`exclude` allow:
//! [`ToolFilter`](axon_core::ToolFilter)), in name order, plus `run_plan`, with input schemas in plain
//! JSON Schema, output schemas for tools whose data is an object, and
//! annotations. Every `tools/call` goes through
//! [`Executor::call`](axon_core::Executor::call) — validation, retries, breakers,
//! cache and history apply exactly as they do for the CLI and the HTTP API. The
//! result is shaped for the official SDK clients, which validate it
//! ([`call_result`]): `structuredContent` is the call's `data` (conforming to the
//! advertised `outputSchema`; non-object data is wrapped as `{"result": …}`), the
//! text block is the same data as compact JSON, an image is an image block, a
//! failure is `isError: true` with `kind (code): message`, and the rest of the
//! call result (attempts, retry reasons, provenance, …) is in
//! `_meta["axon/call"]`. `run_plan` takes `{"plan": <plan as JSON or YAML text>,
//! "run_id"?}`, returns the plan result and reports a progress notification per
//! finished step. A client's `notifications/cancelled` cancels the call (or the
//! run). Both protocol generations are served: 2025-11-25 with sessions (one
//! MCP session is one correlation id, so one browser session) and 2026-07-28
//! without (calls over HTTP without a session share [`SESSIONLESS`]; browser
//! session handles give a client state of its own). Every result is bounded
//! to a token budget (`max_result_tokens`, [`DEFAULT_MAX_RESULT_TOKENS`] unless
//! a policy says otherwise): a result over it is cut at a structural boundary
//! and ends with a notice whose handle `axon_result_more` pages through. `axon mcp` serves this over
//! stdio ([`serve_stdio`]); `axon serve` mounts [`http_service`] at `/mcp`.

#![warn(missing_docs)]

mod elicit;
mod listing;
mod more;
mod server;
mod stdio;
mod text;

pub use listing::mcp_tool;
pub use more::DEFAULT_MAX_RESULT_TOKENS;
pub use server::{
    AxonMcp, HttpService, META_KEY, McpSessions, RUN_PLAN, SESSIONLESS, ServeError, call_result,
    http_service,
};
pub use stdio::{serve_stdio, unreadable};
