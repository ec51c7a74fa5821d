//! # axon-core
//!
//! Axon's engine: it calls tools — Rust functions, browser actions, MCP server tools,
//! HTTP APIs — through one policy pipeline (validation, cache, circuit breaker, rate
//! limit and bulkhead, retries with backoff and jitter around a per-attempt timeout,
//! hedging, fallback) and records every call with provenance, metrics and a trace.
//!
//! It knows nothing of HTTP servers, SQL or browsers; those live in the crates that
//! need them and plug in through [`Tool`] and [`HistoryStore`].
//!
//! ```
//! use axon_core::{Executor, ToolCall, ToolRegistry};
//! use serde_json::json;
//!
//! # tokio::runtime::Builder::new_current_thread().enable_time().build().unwrap().block_on(async {
//! let executor = Executor::builder(ToolRegistry::with_utilities()).build().unwrap();
//! let result = executor.call(ToolCall::new("echo", json!({"hello": "world"}))).await;
//! assert!(result.success);
//! assert_eq!(result.data, json!({"hello": "world"}));
//! # });
//! ```

#![warn(missing_docs)]

pub mod approval;
pub mod call;
pub mod caller;
pub mod canonical;
pub mod error;
pub mod events;
pub mod executor;
pub mod files;
pub mod frames;
pub mod glob;
pub mod history;
pub mod hosts;
pub mod network;
mod outcome;
pub mod owner;
pub mod policy;
pub mod redact;
pub mod registry;
pub mod result;
pub mod schema;
pub mod state;
pub mod tokens;
pub mod tool;
pub mod trace;
pub mod utilities;

pub use call::{RecordSink, ToolCall};
pub use caller::{CAPABILITIES, Caller, ToolFilter, Whose};
pub use error::{CallError, Candidate, ErrorKind, ToolError, UnknownName};
pub use events::{CallEvent, EventSink};
pub use executor::{AdaptiveView, BuildError, DEFAULT_MAX_PARALLEL, Executor, ExecutorBuilder};
pub use history::{
    HistoryEntry, HistoryLimits, HistoryStats, HistoryStore, InMemoryHistory, StepMark, StoreError,
};
pub use owner::Owner;
pub use policy::breaker::KeyBreaker;
pub use policy::fallback::FallbackCall;
pub use policy::{Policy, PolicyError};
pub use registry::{RegistryError, ToolRegistry};
pub use result::{
    BadDigest, CallResult, FallbackInfo, Provenance, ResponseDigest, Source, Timestamp,
};
pub use smol_str::SmolStr;
pub use state::PolicyState;
pub use tokio_util::sync::CancellationToken;
pub use tool::{Annotations, Dependency, FnTool, Tool, ToolContext, ToolSpec, tool_fn};

/// The README's examples, compiled and run as doc-tests so it never lies.
#[doc = include_str!("../../../README.md")]
#[cfg(doctest)]
pub struct ReadmeDoctests;
