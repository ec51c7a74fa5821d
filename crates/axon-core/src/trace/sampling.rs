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
//! A span the filter turns away would still exist in the registry, as an
//! empty slot: `tracing-subscriber` disables a span for the whole subscriber
//! only when every per-layer filter of its 64 says no, so a filter of one
//! layer never does. [`TraceGate`], a layer of the whole subscriber, does: it
//! builds the first span of every trace (an unsampled one marked) and no span
//! inside an unsampled trace.

use std::cell::Cell;

use tracing::subscriber::Interest;
use tracing::{Metadata, span};
use tracing_subscriber::Layer;
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
        let decided = match root_decision() {
            Some(RootDecision::Remote(sampled)) => sampled,
            Some(RootDecision::New) => self.roll(),
            None => {
                let current = cx.current_span();
                match current.metadata() {
                    // Inside a trace of Axon's: sampled when the span it is in
                    // is (`cx.span` sees only the spans this filter let through).
                    Some(parent) if is_axon(parent.target()) => {
                        return current.id().and_then(|id| cx.span(id)).is_some();
                    }
                    // Inside nothing of Axon's: the trace starts here.
                    _ => self.roll(),
                }
            }
        };
        // For `TraceGate::on_new_span`, which marks the span being built.
        ROOT_SAMPLED.set(Some(decided));
        decided
    }
}

thread_local! {
    /// The sampling of the trace whose first span is being built on this
    /// thread, between the filters' verdict and the span's creation.
    static ROOT_SAMPLED: Cell<Option<bool>> = const { Cell::new(None) };
}

/// Marks the first span of a trace that is not sampled.
struct Unsampled;

/// A layer of the whole subscriber that keeps spans inside unsampled traces
/// from being built at all (`Span::none()`: no registry slot, no
/// `Instrumented` wrapper, no record calls). A per-layer filter cannot: the
/// registry builds a span unless every per-layer filter says no. The first
/// span of every trace is built, sampled or not, and an unsampled one is
/// marked, so that the spans opened inside it know where they are.
///
/// Put it outermost (`registry().with(…).with(otel).with(TraceGate)`), beside
/// an OpenTelemetry layer filtered by [`HeadSampler`]. Other layers (the log
/// lines') then see no span of an unsampled trace either.
#[derive(Clone, Copy, Debug, Default)]
pub struct TraceGate;

impl<S> Layer<S> for TraceGate
where
    S: tracing::Subscriber + for<'a> LookupSpan<'a>,
{
    fn register_callsite(&self, meta: &'static Metadata<'static>) -> Interest {
        if meta.is_span() && is_axon(meta.target()) {
            Interest::sometimes()
        } else {
            Interest::always()
        }
    }

    fn enabled(&self, meta: &Metadata<'_>, cx: Context<'_, S>) -> bool {
        if !meta.is_span() || !is_axon(meta.target()) || root_decision().is_some() {
            return true;
        }
        let current = cx.current_span();
        match (current.metadata(), current.id()) {
            // Inside a trace of Axon's: built unless it is an unsampled one
            // (inside one, only its marked first span exists).
            (Some(parent), Some(id)) if is_axon(parent.target()) => cx
                .span(id)
                .is_none_or(|span| span.extensions().get::<Unsampled>().is_none()),
            _ => true,
        }
    }

    fn on_new_span(&self, _: &span::Attributes<'_>, id: &span::Id, cx: Context<'_, S>) {
        if ROOT_SAMPLED.take() == Some(false)
            && let Some(span) = cx.span(id)
        {
            span.extensions_mut().insert(Unsampled);
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
