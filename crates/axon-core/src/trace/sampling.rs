//! Head sampling: whether a trace is recorded is decided when its first span
//! is opened, before any span of it is built.
//!
//! OpenTelemetry's SDK samples when a span is started, and
//! `tracing-opentelemetry` starts the SDK span only when the `tracing` span
//! closes: with `sampling_ratio = 0.01` every call still built its spans'
//! attributes, only for 99 in 100 to be dropped (docs/benchmarks.md). This
//! filter sits in front of the OpenTelemetry layer instead: a span that
//! starts a trace is sampled with the configured ratio (or as the caller's
//! `traceparent` says, [`super::open_root`]), a span inside a
//! trace follows its parent, and a span that is not sampled is never seen by
//! the OpenTelemetry layer: no attributes, no SDK span, no allocation.
//!
//! A span the filter turns away still exists in the registry, as an empty
//! slot: `tracing-subscriber` disables a span for the whole subscriber only
//! when every per-layer filter of its 64 says no, so a filter of one layer
//! never does. That slot is what tells the spans opened inside an unsampled
//! trace where they are (their current span is Axon's and was turned away);
//! it also costs the call its registry work and `tracing`'s `Instrumented`
//! wrapper (docs/benchmarks.md, "Tracing").

use tracing::Metadata;
use tracing::subscriber::Interest;
use tracing_subscriber::layer::{Context, Filter};
use tracing_subscriber::registry::LookupSpan;

use super::{RootDecision, root_decision};

/// Whether a span or event comes from Axon: its crates (`axon_core`, …) or
/// the binary (`axon`).
pub fn is_axon(target: &str) -> bool {
    target.starts_with("axon_") || target == "axon" || target.starts_with("axon::")
}

/// The OpenTelemetry layer's filter: Axon's spans of sampled traces, and
/// Axon's events at info and above.
#[derive(Clone, Copy, Debug)]
pub struct HeadSampler {
    ratio: f64,
}

impl HeadSampler {
    /// Sample `ratio` of the traces that start here (0 to 1; out of range is
    /// clamped).
    pub fn new(ratio: f64) -> Self {
        Self {
            ratio: if ratio.is_nan() {
                0.0
            } else {
                ratio.clamp(0.0, 1.0)
            },
        }
    }

    fn roll(&self) -> bool {
        self.ratio >= 1.0 || (self.ratio > 0.0 && fastrand::f64() < self.ratio)
    }

    /// Whether a new span of Axon's is sampled: by its trace's start, or by
    /// the span of Axon's it is opened in.
    fn sampled<S>(&self, cx: &Context<'_, S>) -> bool
    where
        S: tracing::Subscriber + for<'a> LookupSpan<'a>,
    {
        match root_decision() {
            Some(RootDecision::Remote(sampled)) => return sampled,
            Some(RootDecision::New) => return self.roll(),
            None => {}
        }
        let current = cx.current_span();
        match current.metadata() {
            // Inside a trace of Axon's: sampled when the span it is in is
            // (`cx.span` sees only the spans this filter let through).
            Some(parent) if is_axon(parent.target()) => {
                current.id().and_then(|id| cx.span(id)).is_some()
            }
            // Inside nothing of Axon's: the trace starts here.
            _ => self.roll(),
        }
    }
}

impl<S> Filter<S> for HeadSampler
where
    S: tracing::Subscriber + for<'a> LookupSpan<'a>,
{
    fn enabled(&self, meta: &Metadata<'_>, cx: &Context<'_, S>) -> bool {
        if !is_axon(meta.target()) {
            return false;
        }
        if meta.is_span() {
            self.sampled(cx)
        } else {
            *meta.level() <= tracing::Level::INFO
        }
    }

    fn callsite_enabled(&self, meta: &'static Metadata<'static>) -> Interest {
        if !is_axon(meta.target()) || (!meta.is_span() && *meta.level() > tracing::Level::INFO) {
            Interest::never()
        } else {
            // Decided span by span (events: by the span they are in).
            Interest::sometimes()
        }
    }
}
