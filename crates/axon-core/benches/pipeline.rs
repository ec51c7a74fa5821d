//! What the pipeline costs, measured in one run against two baselines:
//!
//! - `bare`: the same tool called directly through `Arc<dyn Tool>` with JSON
//!   arguments (what any tool call costs before any policy);
//! - `tower`: a tower stack of timeout + retry + concurrency limit around that same
//!   call (the peer: ≈143 ns a call on this machine when it was measured).
//!
//! Against them: the full Axon pipeline on the happy path (argument validation,
//! breaker, rate limit and bulkhead, retry loop, hard timeout, result validation,
//! digest, metrics, in-memory history), the same with the cache on and every call
//! a miss, and a cache hit.
//!
//! A second group, `tracing`, prices OpenTelemetry: the happy path with no
//! subscriber (telemetry off) and with the exporter pipeline `axon` installs.
//!
//! Run: `cargo bench -p axon-core --bench pipeline`. Ratios go to docs/benchmarks.md.

use std::hint::black_box;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use axon_core::{
    Executor, SharedState, Tool, ToolCall, ToolContext, ToolError, ToolRegistry, tool_fn,
};
use criterion::{Criterion, criterion_group, criterion_main};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};
use tower::{Service, ServiceBuilder, ServiceExt};

#[derive(Deserialize, JsonSchema)]
struct Add {
    a: i64,
    b: i64,
}

#[derive(Serialize, JsonSchema)]
struct Sum {
    sum: i64,
}

fn add_tool() -> impl Tool {
    tool_fn("add", "Adds two integers", |args: Add, _ctx| async move {
        Ok::<_, ToolError>(Sum {
            sum: args.a + args.b,
        })
    })
}

fn executor(policy: Value) -> Executor {
    let mut registry = ToolRegistry::new();
    registry.register(add_tool()).expect("add registers");
    Executor::builder(registry)
        .shared_state(SharedState::new())
        .defaults(policy)
        .build()
        .expect("executor builds")
}

/// tower's retry policy: up to 3 attempts, never retrying a success.
#[derive(Clone)]
struct Attempts(usize);

impl<E> tower::retry::Policy<Value, Value, E> for Attempts {
    type Future = std::future::Ready<()>;
    fn retry(&mut self, _req: &mut Value, result: &mut Result<Value, E>) -> Option<Self::Future> {
        match result {
            Ok(_) => None,
            Err(_) if self.0 > 1 => {
                self.0 -= 1;
                Some(std::future::ready(()))
            }
            Err(_) => None,
        }
    }
    fn clone_request(&mut self, req: &Value) -> Option<Value> {
        Some(req.clone())
    }
}

fn bench(c: &mut Criterion) {
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_time()
        .build()
        .expect("runtime");
    let args = json!({"a": 2, "b": 3});
    let mut group = c.benchmark_group("pipeline");

    // Baseline: the tool through the same dyn Tool + JSON path, no policies.
    let tool: Arc<dyn Tool> = Arc::new(add_tool());
    let ctx = ToolContext::detached("bench");
    group.bench_function("bare", |b| {
        b.to_async(&rt).iter(|| async {
            black_box(
                tool.call(black_box(&args), ctx.clone())
                    .await
                    .expect("adds"),
            );
        })
    });

    // Peer: tower's timeout + retry + concurrency limit around the same call.
    let inner = tool.clone();
    let tower_ctx = ctx.clone();
    let svc = ServiceBuilder::new()
        .concurrency_limit(1024)
        .retry(Attempts(3))
        .timeout(Duration::from_secs(30))
        .service_fn(move |req: Value| {
            let tool = inner.clone();
            let ctx = tower_ctx.clone();
            async move { tool.call(&req, ctx).await }
        });
    group.bench_function("tower", |b| {
        b.to_async(&rt).iter(|| {
            let mut svc = svc.clone();
            let req = args.clone();
            async move {
                let ready = svc.ready().await.expect("ready");
                black_box(ready.call(req).await.expect("adds"));
            }
        })
    });

    // Axon, happy path: every policy on that costs something when nothing fails.
    let full = executor(json!({
        "limits": {"rate_per_sec": 1.0e9, "max_concurrent": 1024},
        "soft_timeout_ms": 0,
    }));
    group.bench_function("axon_pipeline", |b| {
        b.to_async(&rt).iter(|| async {
            let call = ToolCall::new("add", args.clone()).correlation_id("bench");
            black_box(full.call(call).await);
        })
    });

    // Axon with the cache on and every call a miss (distinct arguments).
    let cached = executor(json!({
        "limits": {"rate_per_sec": 1.0e9, "max_concurrent": 1024},
        "cache": {"ttl_ms": 60_000},
    }));
    let counter = AtomicU64::new(0);
    group.bench_function("axon_pipeline_cache_miss", |b| {
        b.to_async(&rt).iter(|| async {
            let n = counter.fetch_add(1, Ordering::Relaxed) as i64;
            let call = ToolCall::new("add", json!({"a": n, "b": 3})).correlation_id("bench");
            black_box(cached.call(call).await);
        })
    });

    // Axon, cache hit: same arguments every time.
    rt.block_on(cached.call(ToolCall::new("add", args.clone())));
    group.bench_function("axon_cache_hit", |b| {
        b.to_async(&rt).iter(|| async {
            let call = ToolCall::new("add", args.clone()).correlation_id("bench");
            black_box(cached.call(call).await);
        })
    });
    group.finish();

    // Tracing: the same happy path with an OpenTelemetry subscriber installed as
    // `axon` installs it (docs/telemetry.md), every trace sampled, spans batched
    // to an exporter that drops them. Against `axon_pipeline` above, where no
    // subscriber wants the spans (telemetry off).
    let mut group = c.benchmark_group("tracing");
    group.bench_function("axon_pipeline_otel_off", |b| {
        b.to_async(&rt).iter(|| async {
            let call = ToolCall::new("add", args.clone()).correlation_id("bench");
            black_box(full.call(call).await);
        })
    });
    let provider = opentelemetry_sdk::trace::SdkTracerProvider::builder()
        .with_batch_exporter(Discard)
        .build();
    let subscriber = {
        use opentelemetry::trace::TracerProvider as _;
        use tracing_subscriber::Layer;
        use tracing_subscriber::layer::SubscriberExt;
        let traced = tracing_subscriber::filter::filter_fn(|meta| {
            meta.target().starts_with("axon_")
                && (meta.is_span() || *meta.level() <= tracing::Level::INFO)
        });
        tracing_subscriber::registry().with(
            tracing_opentelemetry::layer()
                .with_tracer(provider.tracer("axon"))
                .with_threads(false)
                .with_location(false)
                .with_tracked_inactivity(false)
                .with_filter(traced),
        )
    };
    // The runtime is current-thread: the calls run on this thread, under this
    // thread's default subscriber.
    let guard = tracing::subscriber::set_default(subscriber);
    group.bench_function("axon_pipeline_otel_on", |b| {
        b.to_async(&rt).iter(|| async {
            let call = ToolCall::new("add", args.clone()).correlation_id("bench");
            black_box(full.call(call).await);
        })
    });
    drop(guard);
    group.finish();
    let _ = provider.shutdown();
}

/// An exporter that drops every batch: the cost measured is Axon's spans and
/// the SDK's batching, not a network.
#[derive(Debug)]
struct Discard;

impl opentelemetry_sdk::trace::SpanExporter for Discard {
    async fn export(
        &self,
        batch: Vec<opentelemetry_sdk::trace::SpanData>,
    ) -> opentelemetry_sdk::error::OTelSdkResult {
        black_box(batch);
        Ok(())
    }
}

criterion_group! {
    name = benches;
    config = Criterion::default().warm_up_time(Duration::from_secs(1)).measurement_time(Duration::from_secs(4));
    targets = bench
}
criterion_main!(benches);
