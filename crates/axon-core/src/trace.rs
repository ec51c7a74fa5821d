//! Trace context across process boundaries (W3C Trace Context), without tying the
//! libraries to an OpenTelemetry SDK.
//!
//! Axon's crates describe their work as `tracing` spans named and attributed after
//! OpenTelemetry's semantic conventions (GenAI `execute_tool`, MCP, HTTP). Whether
//! those spans leave the process, and how a `traceparent` becomes a span's parent,
//! is the binary's choice: `axon` installs a [`Propagator`] backed by
//! `tracing-opentelemetry` when `[telemetry]` is on (`crates/axon-cli/src/telemetry.rs`). With
//! none installed, nothing is read or sent and the calls below cost an atomic load.
//!
//! Where context crosses a boundary:
//! - in: the HTTP server's `traceparent`/`tracestate` headers, and an MCP
//!   request's `_meta` (SEP-414), become the request span's parent
//!   ([`adopt_remote_parent`]);
//! - out: `http_request` sends the headers, and calls to imported MCP servers put
//!   them in `_meta` ([`inject_current`]).

use std::sync::OnceLock;

/// The header and `_meta` key of the W3C parent ("00-{trace id}-{span id}-{flags}").
pub const TRACEPARENT: &str = "traceparent";
/// The header and `_meta` key of vendor trace state.
pub const TRACESTATE: &str = "tracestate";

/// Moves trace context between spans and carriers (headers, MCP `_meta`).
pub trait Propagator: Send + Sync + 'static {
    /// Write `span`'s context into a carrier: `put(key, value)` for each field.
    fn inject(&self, span: &tracing::Span, put: &mut dyn FnMut(&'static str, String));
    /// Make the context read from a carrier (`get(key)`) the parent of `span`,
    /// which must not have been entered yet. A missing or malformed
    /// `traceparent` leaves `span` a root.
    fn adopt(&self, span: &tracing::Span, get: &dyn Fn(&str) -> Option<String>);
}

static PROPAGATOR: OnceLock<Box<dyn Propagator>> = OnceLock::new();

/// Install the process's propagator; false if one was installed before (the first
/// one stays).
pub fn install(propagator: Box<dyn Propagator>) -> bool {
    PROPAGATOR.set(propagator).is_ok()
}

/// Whether a propagator is installed, i.e. trace context crosses boundaries.
pub fn enabled() -> bool {
    PROPAGATOR.get().is_some()
}

/// The current span's context as carrier fields (empty without a propagator or
/// outside any span): what an outgoing request carries.
pub fn inject_current() -> Vec<(&'static str, String)> {
    let mut fields = Vec::new();
    if let Some(p) = PROPAGATOR.get() {
        p.inject(&tracing::Span::current(), &mut |k, v| fields.push((k, v)));
    }
    fields
}

/// Give `span` the remote parent found in a carrier (no-op without a propagator).
pub fn adopt_remote_parent(span: &tracing::Span, get: &dyn Fn(&str) -> Option<String>) {
    if let Some(p) = PROPAGATOR.get() {
        p.adopt(span, get);
    }
}

/// Record that a span's work failed, under the semantic conventions' names:
/// `error.type` (Axon's error kind, e.g. `timeout`) and an error status whose
/// description is the error's code. Never the message: a tool's message may quote
/// what it was sent, secrets included.
pub fn record_error(span: &tracing::Span, kind: &str, code: Option<&str>) {
    span.record("error.type", kind);
    span.record("otel.status_code", "ERROR");
    span.record("otel.status_description", code.unwrap_or(kind));
}
