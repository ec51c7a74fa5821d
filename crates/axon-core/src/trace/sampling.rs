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
//! the OpenTelemetry layer. [`presence`] keeps the unsampled spans in the
//! registry, without data, so that their children know they are inside an
//! unsampled trace rather than starting one.

use tracing::Metadata;
use tracing::subscriber::Interest;
use tracing_subscriber::Layer;
use tracing_subscriber::filter::filter_fn;
use tracing_subscriber::layer::{Context, Filter, Identity};
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
    /// the nearest span it is opened in.
    fn sampled<S>(&self, cx: &Context<'_, S>) -> bool
    where
        S: tracing::Subscriber + for<'a> LookupSpan<'a>,
    {
        match root_decision() {
            Some(RootDecision::Remote(sampled)) => return sampled,
            Some(RootDecision::New) => return self.roll(),
            None => {}
        }
        // A sampled span of Axon's encloses it: the trace is recorded.
        if cx.lookup_current().is_some() {
            return true;
        }
        match cx.current_span().metadata() {
            // Inside an unsampled trace of Axon's (kept by `presence`).
            Some(parent) if is_axon(parent.target()) => false,
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

/// A layer that does nothing but keep Axon's spans in the registry when no
/// other layer wants them: an unsampled span must exist (a slot, no data) for
/// [`HeadSampler`] to see that its children are inside it. Filtered per
/// layer, so that what it does not want stays wanted by the others (a layer
/// without a filter that says no to an event silences it for every layer).
pub fn presence<S>() -> impl Layer<S>
where
    S: tracing::Subscriber + for<'a> LookupSpan<'a>,
{
    Identity::new().with_filter(filter_fn(|meta| meta.is_span() && is_axon(meta.target())))
}
