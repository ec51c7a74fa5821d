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
//!   ([`open_root`]);
//! - out: `http_request` sends the headers, and calls to imported MCP servers put
//!   them in `_meta` ([`inject_current`]).
//!
//! Where a trace starts, its sampling is decided before any span is built
//! (the subscriber's filter, [`sampling::HeadSampler`], reads
//! [`root_decision`]): a span that opens a trace is made through
//! [`open_root`], which says whether the caller's context asked for it to be
//! sampled.

pub mod sampling;

use std::cell::Cell;
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

/// Whether a trace that starts with the span being opened must be sampled.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RootDecision {
    /// A remote parent decided (its `traceparent`'s sampled flag).
    Remote(bool),
    /// No remote parent: the trace starts here, the local ratio decides.
    New,
}

thread_local! {
    static OPENING_ROOT: Cell<Option<RootDecision>> = const { Cell::new(None) };
}

/// Open a span that starts a trace in this process: `open` builds it (it must
/// have no local parent), the carrier's `traceparent` (`get`), when there is
/// one, becomes its parent and decides whether it is sampled. While `open`
/// runs, [`root_decision`] says so to the subscriber's filter.
pub fn open_root(
    get: &dyn Fn(&str) -> Option<String>,
    open: impl FnOnce() -> tracing::Span,
) -> tracing::Span {
    let Some(p) = PROPAGATOR.get() else {
        return open();
    };
    let decision = match get(TRACEPARENT).as_deref().and_then(sampled_flag) {
        Some(sampled) => RootDecision::Remote(sampled),
        None => RootDecision::New,
    };
    let before = OPENING_ROOT.replace(Some(decision));
    let span = open();
    OPENING_ROOT.set(before);
    p.adopt(&span, get);
    span
}

/// Whether the span being built on this thread starts a trace, and who
/// decides its sampling; `None` for every other span (its parent decides).
pub fn root_decision() -> Option<RootDecision> {
    OPENING_ROOT.get()
}

/// The sampled flag of a W3C `traceparent` (`00-{32 hex}-{16 hex}-{2 hex}`);
/// `None` when it is malformed (the trace starts here, as if it were absent).
fn sampled_flag(traceparent: &str) -> Option<bool> {
    let mut parts = traceparent.trim().split('-');
    let (Some(version), Some(trace), Some(span), Some(flags), None) = (
        parts.next(),
        parts.next(),
        parts.next(),
        parts.next(),
        parts.next(),
    ) else {
        return None;
    };
    let hex = |s: &str, n: usize| s.len() == n && s.bytes().all(|b| b.is_ascii_hexdigit());
    if !hex(version, 2) || version == "ff" || !hex(trace, 32) || !hex(span, 16) || !hex(flags, 2) {
        return None;
    }
    if trace.bytes().all(|b| b == b'0') || span.bytes().all(|b| b == b'0') {
        return None;
    }
    u8::from_str_radix(flags, 16).ok().map(|f| f & 1 == 1)
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_sampled_flag_is_read_from_a_well_formed_traceparent_only() {
        let id = "4bf92f3577b34da6a3ce929d0e0e4736";
        assert_eq!(
            sampled_flag(&format!("00-{id}-00f067aa0ba902b7-01")),
            Some(true)
        );
        assert_eq!(
            sampled_flag(&format!("00-{id}-00f067aa0ba902b7-00")),
            Some(false)
        );
        assert_eq!(
            sampled_flag(&format!("00-{id}-00f067aa0ba902b7-03")),
            Some(true)
        );
        for bad in [
            "",
            "garbage",
            "00-4bf92f35-00f067aa0ba902b7-01",
            "ff-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01",
            "00-00000000000000000000000000000000-00f067aa0ba902b7-01",
            "00-4bf92f3577b34da6a3ce929d0e0e4736-0000000000000000-01",
            "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-zz",
        ] {
            assert_eq!(sampled_flag(bad), None, "{bad}");
        }
    }
}
