//! Head sampling (`axon_core::trace::sampling`): a trace is sampled or not
//! where it starts, and every span in it follows — an unsampled call exports
//! nothing, not even an orphaned `attempt`; a caller's `traceparent` decides
//! for the trace it continues. Spans are exported as they end, through the
//! OpenTelemetry SDK as `axon` installs it, into a list the test reads.

use std::sync::{Arc, Mutex};

use axon_core::trace::sampling::HeadSampler;
use axon_core::{Executor, PolicyState, ToolCall, ToolError, ToolRegistry, tool_fn};
use opentelemetry::trace::TracerProvider as _;
use opentelemetry_sdk::trace::{SdkTracerProvider, SpanData, SpanExporter};
use serde_json::{Value, json};
use tracing_subscriber::Layer;
use tracing_subscriber::layer::SubscriberExt;

#[derive(Debug, Clone, Default)]
struct Collect(Arc<Mutex<Vec<SpanData>>>);

impl SpanExporter for Collect {
    async fn export(&self, batch: Vec<SpanData>) -> opentelemetry_sdk::error::OTelSdkResult {
        self.0.lock().expect("exported spans").extend(batch);
        Ok(())
    }
}

/// A propagator that adopts nothing: these tests are about the decision,
/// which `open_root` makes from the carrier whatever the propagator does.
struct Decides;

impl axon_core::trace::Propagator for Decides {
    fn inject(&self, _: &tracing::Span, _: &mut dyn FnMut(&'static str, String)) {}
    fn adopt(&self, _: &tracing::Span, _: &dyn Fn(&str) -> Option<String>) {}
}

fn executor() -> Executor {
    let mut registry = ToolRegistry::new();
    registry
        .register(tool_fn("echo", "Echoes", |args: Value, _ctx| async move {
            // A tool's own span, as `http_request` or an MCP client opens one:
            // it belongs to the call's trace, never a trace of its own.
            drop(tracing::debug_span!(target: "axon_tool", "tool_inner").entered());
            // Lets the other calls of a `call_many` run in between: each
            // call's sampling must hold across its own polls only.
            tokio::task::yield_now().await;
            drop(tracing::debug_span!(target: "axon_tool", "tool_after").entered());
            Ok::<_, ToolError>(args)
        }))
        .expect("echo registers");
    Executor::builder(registry)
        .policy_state(PolicyState::new())
        .build()
        .expect("executor builds")
}

/// Run `calls` under a subscriber sampling `ratio`, each in a trace that
/// starts at `root` when given; the names of the spans exported.
fn exported(ratio: f64, calls: usize, root: Option<&str>) -> Vec<(String, bool)> {
    exported_as(ratio, calls, root, false)
}

/// As [`exported`], the calls made one at a time or, with `together`, all at
/// once through `call_many` (ten in flight), their polls interleaved.
fn exported_as(
    ratio: f64,
    calls: usize,
    root: Option<&str>,
    together: bool,
) -> Vec<(String, bool)> {
    axon_core::trace::install(Box::new(Decides));
    let spans = Collect::default();
    let provider = SdkTracerProvider::builder()
        .with_simple_exporter(spans.clone())
        .build();
    let subscriber = tracing_subscriber::registry()
        .with(
            tracing_opentelemetry::layer()
                .with_tracer(provider.tracer("test"))
                .with_filter(HeadSampler::new(ratio)),
        )
        .with(HeadSampler::new(ratio).gate());
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_time()
        .build()
        .expect("runtime");
    let ex = executor();
    tracing::subscriber::with_default(subscriber, || {
        rt.block_on(async {
            if together {
                let many = (0..calls).map(|_| ToolCall::new("echo", json!({"n": 1})));
                for result in ex.call_many(many.collect(), Some(10)).await {
                    assert!(result.success, "{result:?}");
                }
                return;
            }
            for _ in 0..calls {
                let call = ex.call(ToolCall::new("echo", json!({"n": 1})));
                let result = match root {
                    None => call.await,
                    Some(parent) => {
                        let get = |key: &str| (key == "traceparent").then(|| parent.to_string());
                        let span = axon_core::trace::open_root(
                            &get,
                            || tracing::debug_span!(target: "axon_test", "http_server"),
                        );
                        tracing::Instrument::instrument(call, span).await
                    }
                };
                assert!(result.success, "{result:?}");
            }
        })
    });
    let _ = provider.shutdown();
    let spans = spans.0.lock().expect("exported spans");
    spans
        .iter()
        .map(|s| {
            (
                s.name.to_string(),
                s.parent_span_id != opentelemetry::trace::SpanId::INVALID,
            )
        })
        .collect()
}

fn count(spans: &[(String, bool)], name: &str) -> usize {
    spans.iter().filter(|(n, _)| n.starts_with(name)).count()
}

#[test]
fn every_call_is_a_whole_trace_at_ratio_one_and_nothing_at_zero() {
    let all = exported(1.0, 5, None);
    assert_eq!(count(&all, "execute_tool"), 5, "{all:?}");
    assert_eq!(count(&all, "attempt"), 5, "{all:?}");
    assert_eq!(count(&all, "tool_inner"), 5, "{all:?}");
    assert!(
        all.iter()
            .filter(|(n, _)| !n.starts_with("execute_tool"))
            .all(|(_, child)| *child),
        "{all:?}"
    );
    assert_eq!(exported(0.0, 5, None), vec![]);
}

#[test]
fn a_trace_not_sampled_exports_none_of_its_spans() {
    let some = exported(0.5, 200, None);
    let calls = count(&some, "execute_tool");
    assert!((50..150).contains(&calls), "{calls} of 200 sampled at 0.5");
    // An attempt, and the tool's own span, are exported exactly when their
    // call is: never an orphan root.
    assert_eq!(count(&some, "attempt"), calls, "{some:?}");
    assert_eq!(count(&some, "tool_inner"), calls, "{some:?}");
    assert!(
        some.iter()
            .filter(|(n, _)| !n.starts_with("execute_tool"))
            .all(|(_, child)| *child)
    );
}

#[test]
fn calls_polled_together_keep_each_its_own_sampling() {
    let some = exported_as(0.5, 200, None, true);
    let calls = count(&some, "execute_tool");
    assert!((50..150).contains(&calls), "{calls} of 200 sampled at 0.5");
    for inside in ["attempt", "tool_inner", "tool_after"] {
        assert_eq!(count(&some, inside), calls, "{inside}: {some:?}");
    }
    assert!(
        some.iter()
            .filter(|(n, _)| !n.starts_with("execute_tool"))
            .all(|(_, child)| *child)
    );
}

#[test]
fn a_callers_traceparent_decides_for_the_trace_it_continues() {
    let id = "4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7";
    // Sampled upstream: recorded here even at ratio 0, the whole trace.
    let kept = exported(0.0, 3, Some(&format!("00-{id}-01")));
    assert_eq!(count(&kept, "http_server"), 3, "{kept:?}");
    assert_eq!(count(&kept, "execute_tool"), 3, "{kept:?}");
    assert_eq!(count(&kept, "attempt"), 3, "{kept:?}");
    // Dropped upstream: not recorded even at ratio 1.
    assert_eq!(exported(1.0, 3, Some(&format!("00-{id}-00"))), vec![]);
    // A malformed one starts a trace here, by the ratio.
    assert_eq!(count(&exported(1.0, 2, Some("garbage")), "execute_tool"), 2);
    assert_eq!(exported(0.0, 2, Some("garbage")), vec![]);
}

#[test]
fn a_span_inside_an_unsampled_trace_is_not_built_at_all() {
    axon_core::trace::install(Box::new(Decides));
    let provider = SdkTracerProvider::builder()
        .with_simple_exporter(Collect::default())
        .build();
    for (flag, built) in [("00", false), ("01", true)] {
        let subscriber = tracing_subscriber::registry()
            .with(
                tracing_opentelemetry::layer()
                    .with_tracer(provider.tracer("test"))
                    .with_filter(HeadSampler::new(0.5)),
            )
            .with(HeadSampler::new(0.5).gate());
        tracing::subscriber::with_default(subscriber, || {
            let carrier = format!("00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-{flag}");
            let get = |key: &str| (key == "traceparent").then(|| carrier.clone());
            let root = axon_core::trace::open_root(
                &get,
                || tracing::debug_span!(target: "axon_test", "http_server"),
            );
            // The first span is built either way: the spans inside it must see
            // where they are.
            assert!(!root.is_disabled());
            let _in_root = root.enter();
            let child = tracing::debug_span!(target: "axon_test", "execute_tool");
            assert_eq!(!child.is_disabled(), built, "traceparent flag {flag}");
            let _in_child = child.enter();
            let grandchild = tracing::debug_span!(target: "axon_test", "attempt");
            assert_eq!(!grandchild.is_disabled(), built, "traceparent flag {flag}");
        });
    }
    let _ = provider.shutdown();
}

/// Counts the spans the registry builds (a slot, whatever layer wants it).
#[derive(Clone, Default)]
struct Built(Arc<Mutex<Vec<String>>>);

impl<S: tracing::Subscriber> tracing_subscriber::Layer<S> for Built {
    fn on_new_span(
        &self,
        attrs: &tracing::span::Attributes<'_>,
        _: &tracing::span::Id,
        _: tracing_subscriber::layer::Context<'_, S>,
    ) {
        self.0
            .lock()
            .expect("built spans")
            .push(attrs.metadata().name().to_string());
    }
}

#[test]
fn a_call_that_starts_an_unsampled_trace_builds_no_span() {
    let provider = SdkTracerProvider::builder()
        .with_simple_exporter(Collect::default())
        .build();
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_time()
        .build()
        .expect("runtime");
    let ex = executor();
    for (ratio, expected) in [(0.0, 0), (1.0, 4 * 4)] {
        let built = Built::default();
        let sampler = HeadSampler::new(ratio);
        let subscriber = tracing_subscriber::registry()
            .with(
                tracing_opentelemetry::layer()
                    .with_tracer(provider.tracer("test"))
                    .with_filter(sampler),
            )
            .with(sampler.gate())
            .with(built.clone());
        tracing::subscriber::with_default(subscriber, || {
            rt.block_on(async {
                for _ in 0..4 {
                    let result = ex.call(ToolCall::new("echo", json!({"n": 1}))).await;
                    assert!(result.success, "{result:?}");
                }
            })
        });
        let built = built.0.lock().expect("built spans");
        // Sampled: `execute_tool`, `attempt` and the tool's two, each call.
        assert_eq!(built.len(), expected, "ratio {ratio}: {built:?}");
    }
    let _ = provider.shutdown();
}
