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
//! decides where a trace starts, builds the first span of every trace (an
//! unsampled one marked) and no span inside an unsampled trace.
//!
//! A call that starts a trace of its own (a library's `Executor::call` with no
//! request or run around it) does better still: its span is opened through
//! [`open_call`], and when its trace is not sampled the span is not built at
//! all; the call then runs [`unsampled`], a task-local mark that the spans
//! opened inside it (its attempts', its tool's) read instead of a parent.

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

    /// The layer that keeps this sampler's unsampled traces from being
    /// built at all, to put outermost beside the filtered OpenTelemetry layer.
    pub fn gate(&self) -> TraceGate {
        TraceGate { sampler: *self }
    }

    fn roll(&self) -> bool {
        self.ratio >= 1.0 || (self.ratio > 0.0 && fastrand::f64() < self.ratio)
    }

    /// Whether a new span of Axon's is sampled: by the span of Axon's it is
    /// opened in, or, where it starts a trace, as [`TraceGate`] decided (it
    /// is asked first) or by the ratio where there is no gate.
    fn sampled<S>(&self, cx: &Context<'_, S>) -> bool
    where
        S: tracing::Subscriber + for<'a> LookupSpan<'a>,
    {
        if root_decision().is_none() {
            let current = cx.current_span();
            // Inside a trace of Axon's: sampled when the span it is in is
            // (`cx.span` sees only the spans this filter let through).
            if current
                .metadata()
                .is_some_and(|parent| is_axon(parent.target()))
            {
                return current.id().and_then(|id| cx.span(id)).is_some();
            }
        }
        ROOT_SAMPLED.get().unwrap_or_else(|| self.roll())
    }

    /// Whether a span that starts a trace is sampled: as its remote parent
    /// says, or by the ratio.
    fn decide(&self, root: RootDecision) -> bool {
        match root {
            RootDecision::Remote(sampled) => sampled,
            RootDecision::New => self.roll(),
        }
    }
}

thread_local! {
    /// The gate's decision for the first span of a trace being built on this
    /// thread, between its verdict and the span's creation (the OpenTelemetry
    /// layer's filter follows it; `on_new_span` marks the span by it).
    static ROOT_SAMPLED: Cell<Option<bool>> = const { Cell::new(None) };
    /// Set by [`open_call`] while it builds its span: a trace that would start
    /// unsampled there is not built at all, and the call knows it.
    static REFUSABLE: Cell<bool> = const { Cell::new(false) };
    /// Set by the gate when it refused the span [`open_call`] is building.
    static REFUSED: Cell<bool> = const { Cell::new(false) };
}

tokio::task_local! {
    /// Present while a call runs whose trace was not sampled and whose first
    /// span was therefore never built ([`CallSpan::Unsampled`]): no span of
    /// Axon's inside it is built either.
    static UNSAMPLED: ();
}

/// What opening the span of a call that may start a trace gave.
#[derive(Debug)]
pub enum CallSpan {
    /// The span exists: the call runs in it.
    Built(tracing::Span),
    /// Nobody wants it: telemetry is off, or the call is inside a trace that
    /// is not sampled (whose first span says so to the spans opened in it).
    Disabled,
    /// The call starts a trace that is not sampled: its span was not built,
    /// and the call must run under [`unsampled`] so that no span opened
    /// inside it (its attempts', its tool's) starts a trace of its own.
    Unsampled,
}

/// Open a call's span (`open` builds it) where the trace it may start is
/// decided before anything is built: an unsampled one costs the call no
/// registry slot, no span enter and exit, no records (docs/benchmarks.md,
/// "Tracing").
pub fn open_call(open: impl FnOnce() -> tracing::Span) -> CallSpan {
    REFUSABLE.set(true);
    let span = open();
    REFUSABLE.set(false);
    if REFUSED.take() {
        CallSpan::Unsampled
    } else if span.is_disabled() {
        CallSpan::Disabled
    } else {
        CallSpan::Built(span)
    }
}

/// Run one poll of a call whose trace is not sampled ([`CallSpan::Unsampled`]):
/// spans of Axon's opened during it are not built.
pub fn unsampled<R>(poll: impl FnOnce() -> R) -> R {
    UNSAMPLED.sync_scope((), poll)
}

fn in_unsampled_call() -> bool {
    UNSAMPLED.try_with(|_| ()).is_ok()
}

/// Marks the first span of a trace that is not sampled.
struct Unsampled;

/// A layer of the whole subscriber that decides, where each trace starts,
/// whether it is sampled, and keeps spans inside unsampled traces from being
/// built at all (`Span::none()`: no registry slot, no enter and exit, no
/// record calls). A per-layer filter cannot: the registry builds a span
/// unless every per-layer filter says no. The first span of every trace is
/// built, sampled or not, and an unsampled one is marked, so that the spans
/// opened inside it know where they are; except a call's, opened through
/// [`open_call`], which is not built at all.
///
/// Put it outermost (`registry().with(…).with(otel).with(sampler.gate())`),
/// beside an OpenTelemetry layer filtered by the same [`HeadSampler`]. Other
/// layers (the log lines') then see no span of an unsampled trace either.
#[derive(Clone, Copy, Debug)]
pub struct TraceGate {
    sampler: HeadSampler,
}

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
        if !meta.is_span() || !is_axon(meta.target()) {
            return true;
        }
        ROOT_SAMPLED.set(None);
        if let Some(root) = root_decision() {
            return self.root(root);
        }
        if in_unsampled_call() {
            return false;
        }
        let current = cx.current_span();
        match (current.metadata(), current.id()) {
            // Inside a trace of Axon's: built unless it is an unsampled one
            // (inside one, only its marked first span exists).
            (Some(parent), Some(id)) if is_axon(parent.target()) => cx
                .span(id)
                .is_none_or(|span| span.extensions().get::<Unsampled>().is_none()),
            _ => self.root(RootDecision::New),
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

impl TraceGate {
    /// Whether the first span of a trace is built: a sampled one is; an
    /// unsampled one is built and marked, unless [`open_call`] is building
    /// it, which runs the call [`unsampled`] instead.
    fn root(&self, root: RootDecision) -> bool {
        let sampled = self.sampler.decide(root);
        if !sampled && REFUSABLE.get() {
            REFUSED.set(true);
            return false;
        }
        ROOT_SAMPLED.set(Some(sampled));
        true
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
