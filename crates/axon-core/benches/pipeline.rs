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
//! A floor beside them, `bare_plus_record`: the bare call plus the record
//! every Axon call leaves (id, timestamps, digest, in-memory history entry)
//! and no policy at all: what no pipeline keeping that record can go under.
//!
//! A second group, `tracing`, prices OpenTelemetry: the happy path with no
//! subscriber (telemetry off) and with the exporter pipeline `axon` installs,
//! every call sampled and one in a hundred (`sampling_ratio = 0.01`), and two
//! bounds on any layer of our own: `tracing`'s spans with no OpenTelemetry
//! layer, and the SDK's spans built directly with no `tracing` span.
//!
//! A third group, `stages`, turns the pipeline's stages off one at a time
//! (argument validation, breaker, rate limit, history) down to the like-for-like
//! case of tower's stack: timeout + retry + concurrency limit only.
//!
//! Before the timings, each case's heap allocations per call are counted by a
//! counting global allocator (this thread's only) and printed as
//! `allocations per call: <case>: <n>`.
//!
//! Run: `cargo bench -p axon-core --bench pipeline`. Ratios go to docs/benchmarks.md.
//!
//! With `PIPELINE_CALLS="<case> <calls>"` it makes that many calls of one case
//! (`bare`, `tower`, `bare_plus_record`, `axon_pipeline`, `axon_cache_hit`,
//! `like_for_like`, `otel_on` / `otel_0.01` under the tracing group's
//! subscriber, and its two bounds `spans_only` / `sdk_spans`) and exits,
//! without criterion: `scripts/instructions` runs it under callgrind, whose
//! instruction counts repeat on a busy machine where timings do not.

use std::alloc::{GlobalAlloc, Layout, System};
use std::cell::Cell;
use std::future::Future;
use std::hint::black_box;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use async_trait::async_trait;
use axon_core::{
    CallResult, Executor, HistoryEntry, HistoryStore, InMemoryHistory, PolicyState, Provenance,
    ResponseDigest, SmolStr, Source, Timestamp, Tool, ToolCall, ToolContext, ToolError,
    ToolRegistry, ToolSpec, tool_fn,
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
        .policy_state(PolicyState::new())
        .defaults(policy)
        .build()
        .expect("executor builds")
}

/// The same addition without schemas: the input is checked against
/// `{"type": "object"}` only and the output not at all (validation "off").
struct RawAdd(ToolSpec);

#[async_trait]
impl Tool for RawAdd {
    fn spec(&self) -> &ToolSpec {
        &self.0
    }
    async fn call(&self, args: &Value, _ctx: ToolContext) -> Result<Value, ToolError> {
        let n = |k: &str| args.get(k).and_then(Value::as_i64).unwrap_or(0);
        Ok(json!({"sum": n("a") + n("b")}))
    }
}

/// History that keeps nothing (history "off").
struct NoHistory;

#[async_trait]
impl HistoryStore for NoHistory {
    async fn record(&self, entry: &HistoryEntry) -> Result<(), axon_core::StoreError> {
        black_box(entry);
        Ok(())
    }
    async fn by_correlation(&self, _: &str) -> Result<Vec<HistoryEntry>, axon_core::StoreError> {
        Ok(Vec::new())
    }
    async fn by_call_id(&self, _: &str) -> Result<Option<HistoryEntry>, axon_core::StoreError> {
        Ok(None)
    }
}

/// One configuration of the `stages` group.
struct Stages {
    validation: bool,
    breaker: bool,
    rate_limit: bool,
    history: bool,
}

/// tower's stack, like for like: timeout, retry and a concurrency limit.
const LIKE_FOR_LIKE: Stages = Stages {
    validation: false,
    breaker: false,
    rate_limit: false,
    history: false,
};

fn stage_executor(on: &Stages) -> Executor {
    let mut registry = ToolRegistry::new();
    if on.validation {
        registry.register(add_tool()).expect("add registers");
    } else {
        registry
            .register(RawAdd(ToolSpec::new("add", "Adds two integers")))
            .expect("add registers");
    }
    let mut limits = json!({"max_concurrent": 1024});
    if on.rate_limit {
        limits["rate_per_sec"] = json!(1.0e9);
    }
    let mut policy = json!({"limits": limits});
    if !on.breaker {
        policy["breaker"] = json!({"failure_threshold": 0});
    }
    let mut builder = Executor::builder(registry)
        .policy_state(PolicyState::new())
        .defaults(policy);
    if !on.history {
        builder = builder.history(Arc::new(NoHistory));
    }
    builder.build().expect("executor builds")
}

/// Counts this thread's heap allocations (other threads, such as the cache's
/// housekeeping or an exporter's, are not the call's).
struct Counting;

thread_local! {
    static ALLOCATIONS: Cell<u64> = const { Cell::new(0) };
}

fn count_one() {
    // `try_with`: the slot may be gone while the thread exits.
    let _ = ALLOCATIONS.try_with(|n| n.set(n.get() + 1));
}

// SAFETY: every method forwards to the system allocator unchanged; counting
// touches only a const-initialised thread-local cell, which never allocates.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        count_one();
        // SAFETY: the caller's contract is passed on as it is.
        unsafe { System.alloc(layout) }
    }
    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        count_one();
        // SAFETY: as above.
        unsafe { System.alloc_zeroed(layout) }
    }
    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        count_one();
        // SAFETY: as above.
        unsafe { System.realloc(ptr, layout, new_size) }
    }
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        // SAFETY: as above.
        unsafe { System.dealloc(ptr, layout) }
    }
}

#[global_allocator]
static GLOBAL: Counting = Counting;

/// Heap allocations per call of `call`, averaged over 1000 calls after 100
/// warm-up calls (first calls fill caches and metric handles), printed.
fn count_allocations<F, Fut>(rt: &tokio::runtime::Runtime, case: &str, call: F)
where
    F: Fn() -> Fut,
    Fut: Future<Output = ()>,
{
    const CALLS: u64 = 1000;
    rt.block_on(async {
        for _ in 0..100 {
            call().await;
        }
    });
    let before = ALLOCATIONS.with(Cell::get);
    rt.block_on(async {
        for _ in 0..CALLS {
            call().await;
        }
    });
    let after = ALLOCATIONS.with(Cell::get);
    println!(
        "allocations per call: {case}: {:.1}",
        (after - before) as f64 / CALLS as f64
    );
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

/// The floor under any Axon call: the bare call, then only the record that
/// docs/design.md asks of every call and tower's stack does not make (a ULID and
/// the wall-clock start, the duration from two clock reads, the result with
/// its `response_digest`, and history's entry in the default in-memory
/// store). No policy runs. Whatever the pipeline does, it cannot cost less
/// than this while every call leaves that record.
async fn bare_plus_record(
    tool: &Arc<dyn Tool>,
    args: &Value,
    ctx: &ToolContext,
    history: &InMemoryHistory,
) -> CallResult {
    let wall = std::time::SystemTime::now();
    let clock = std::time::Instant::now();
    let mut id = [0u8; ulid::ULID_LEN];
    let call_id = SmolStr::new(ulid::Ulid::from_datetime(wall).array_to_str(&mut id));
    let data = tool.call(args, ctx.clone()).await.expect("adds");
    let duration_ms = clock.elapsed().as_millis() as u64;
    let result = CallResult {
        correlation_id: SmolStr::new_static("bench"),
        call_id,
        tool: SmolStr::new_static("add"),
        success: true,
        provenance: Provenance {
            source: Source::Tool,
            fetched_at: None,
            cache_hit: false,
            response_digest: Some(ResponseDigest::of(&data)),
            stale: false,
            chaos: Vec::new(),
            dependency: None,
        },
        data,
        error: None,
        attempts: 1,
        retry_reasons: Vec::new(),
        retry_delays_ms: Vec::new(),
        started_at: Timestamp(wall),
        duration_ms,
        fallback: None,
        cut: None,
        approval: None,
    };
    let entry = HistoryEntry {
        result: result.clone(),
        args: args.clone(),
        step: None,
        owner: axon_core::Owner::Process,
    };
    history.record_at_once(entry).expect("kept");
    result
}

/// What every group measures with: one current-thread runtime, the call's
/// arguments, the tool, and Axon's executors over it.
struct Setup {
    rt: tokio::runtime::Runtime,
    args: Value,
    tool: Arc<dyn Tool>,
    ctx: ToolContext,
    /// Every policy on that costs something when nothing fails.
    full: Executor,
    /// The same with the cache on (warmed with `args`).
    cached: Executor,
    /// The same with the state kept per dependency key (as http_request's
    /// per origin): a template over the arguments, looked up on every call.
    keyed: Executor,
    /// The history `bare_plus_record` writes to.
    floor_history: InMemoryHistory,
}

impl Setup {
    fn new() -> Setup {
        let rt = tokio::runtime::Builder::new_current_thread()
            .enable_time()
            .build()
            .expect("runtime");
        let limits = json!({"rate_per_sec": 1.0e9, "max_concurrent": 1024});
        let setup = Setup {
            args: json!({"a": 2, "b": 3}),
            tool: Arc::new(add_tool()),
            ctx: ToolContext::detached("bench"),
            full: executor(json!({"limits": limits, "soft_timeout_ms": 0})),
            cached: executor(json!({"limits": limits, "cache": {"ttl_ms": 60_000}})),
            keyed: executor(json!({"limits": limits, "key": "${args.a}"})),
            floor_history: InMemoryHistory::new(),
            rt,
        };
        setup.rt.block_on(setup.cached.call(setup.call()));
        setup
    }

    /// The call every Axon case makes.
    fn call(&self) -> ToolCall {
        ToolCall::new("add", self.args.clone()).correlation_id("bench")
    }

    /// The tool called directly through the same `dyn Tool` + JSON path, no
    /// policies.
    async fn bare(&self) {
        black_box(
            self.tool
                .call(&self.args, self.ctx.clone())
                .await
                .expect("adds"),
        );
    }

    /// The bare call and the record every Axon call leaves (the floor).
    async fn floor(&self) {
        black_box(bare_plus_record(&self.tool, &self.args, &self.ctx, &self.floor_history).await);
    }

    /// The peer: tower's timeout + retry + concurrency limit around the same
    /// call.
    fn tower(
        &self,
    ) -> impl Service<Value, Response = Value, Error = tower::BoxError> + Clone + use<> {
        let (tool, ctx) = (self.tool.clone(), self.ctx.clone());
        ServiceBuilder::new()
            .concurrency_limit(1024)
            .retry(Attempts(3))
            .timeout(Duration::from_secs(30))
            .service_fn(move |req: Value| {
                let (tool, ctx) = (tool.clone(), ctx.clone());
                async move { tool.call(&req, ctx).await }
            })
    }

    /// `PIPELINE_CALLS="<case> <calls>"`: that many calls of one case, for
    /// callgrind (`scripts/instructions`).
    fn make_calls(&self, spec: &str) {
        let (case, n) = spec.split_once(' ').unwrap_or((spec, "0"));
        let n: u64 = n.parse().expect("PIPELINE_CALLS is \"<case> <calls>\"");
        let axon = |ex: &Executor| {
            self.rt.block_on(async {
                for _ in 0..n {
                    black_box(ex.call(self.call()).await);
                }
            })
        };
        match case {
            "bare" => self.rt.block_on(async {
                for _ in 0..n {
                    self.bare().await;
                }
            }),
            "tower" => self.rt.block_on(async {
                let svc = self.tower();
                for _ in 0..n {
                    through_tower(&svc, &self.args).await;
                }
            }),
            "bare_plus_record" => self.rt.block_on(async {
                for _ in 0..n {
                    self.floor().await;
                }
            }),
            "axon_pipeline" => axon(&self.full),
            "axon_cache_hit" => axon(&self.cached),
            "like_for_like" => axon(&stage_executor(&LIKE_FOR_LIKE)),
            "otel_on" | "otel_0.01" => {
                let provider = discarding_provider();
                let ratio = if case == "otel_on" { 1.0 } else { 0.01 };
                let _guard = tracing::subscriber::set_default(otel_subscriber(&provider, ratio));
                axon(&self.full);
            }
            "spans_only" => {
                let _guard = tracing::subscriber::set_default(spans_only_subscriber());
                axon(&self.full);
            }
            "sdk_spans" => {
                let provider = discarding_provider();
                let tracer = opentelemetry::trace::TracerProvider::tracer(&provider, "axon");
                self.rt.block_on(async {
                    for _ in 0..n {
                        with_sdk_spans(&tracer, self.full.call(self.call())).await;
                    }
                });
            }
            other => panic!("PIPELINE_CALLS: no case {other:?}"),
        }
    }
}

fn bench(c: &mut Criterion) {
    let setup = Setup::new();
    if let Ok(spec) = std::env::var("PIPELINE_CALLS") {
        setup.make_calls(&spec);
        std::process::exit(0);
    }
    pipeline(c, &setup);
    pipeline_allocations(&setup);
    stages(c, &setup);
    tracing_cost(c, &setup);
}

/// The `pipeline` group: the baselines, the floor, and Axon's cases.
fn pipeline(c: &mut Criterion, s: &Setup) {
    let mut group = c.benchmark_group("pipeline");
    // Baseline: the tool through the same dyn Tool + JSON path, no policies.
    group.bench_function("bare", |b| b.to_async(&s.rt).iter(|| s.bare()));
    let svc = s.tower();
    group.bench_function("tower", |b| {
        b.to_async(&s.rt).iter(|| through_tower(&svc, &s.args))
    });
    // The floor: the bare call and the record every Axon call leaves, no policy.
    group.bench_function("bare_plus_record", |b| b.to_async(&s.rt).iter(|| s.floor()));
    for (name, ex) in [
        // Axon, happy path: every policy on that costs something when nothing fails.
        ("axon_pipeline", &s.full),
        // Axon, happy path, keyed: the key rendered and its state looked up.
        ("axon_pipeline_keyed", &s.keyed),
        // Axon, cache hit: same arguments every time.
        ("axon_cache_hit", &s.cached),
    ] {
        group.bench_function(name, |b| {
            b.to_async(&s.rt).iter(|| async {
                black_box(ex.call(s.call()).await);
            })
        });
    }
    // Axon with the cache on and every call a miss (distinct arguments).
    let counter = AtomicU64::new(0);
    group.bench_function("axon_pipeline_cache_miss", |b| {
        b.to_async(&s.rt).iter(|| async {
            let n = counter.fetch_add(1, Ordering::Relaxed) as i64;
            let call = ToolCall::new("add", json!({"a": n, "b": 3})).correlation_id("bench");
            black_box(s.cached.call(call).await);
        })
    });
    group.finish();
}

/// One call through tower's stack (`Setup::tower`).
fn through_tower<S>(svc: &S, args: &Value) -> impl Future<Output = ()> + use<S>
where
    S: Service<Value, Response = Value, Error = tower::BoxError> + Clone,
{
    let mut svc = svc.clone();
    let req = args.clone();
    async move {
        let ready = svc.ready().await.expect("ready");
        black_box(ready.call(req).await.expect("adds"));
    }
}

/// Each `pipeline` case's heap allocations per call, and what building its
/// input (the call and its arguments) costs before the pipeline sees it.
fn pipeline_allocations(s: &Setup) {
    let rt = &s.rt;
    count_allocations(rt, "input (ToolCall::new + args clone)", || async {
        black_box(s.call());
    });
    count_allocations(rt, "pipeline/bare", || s.bare());
    let svc = s.tower();
    count_allocations(rt, "pipeline/tower", || through_tower(&svc, &s.args));
    count_allocations(rt, "pipeline/bare_plus_record", || s.floor());
    count_allocations(rt, "pipeline/axon_pipeline", || async {
        black_box(s.full.call(s.call()).await);
    });
    count_allocations(rt, "pipeline/axon_cache_hit", || async {
        black_box(s.cached.call(s.call()).await);
    });
}

/// The `stages` group: each policy's cost, turned off one at a time, down to
/// the like-for-like case of tower's stack.
fn stages(c: &mut Criterion, s: &Setup) {
    const ALL_ON: Stages = Stages {
        validation: true,
        breaker: true,
        rate_limit: true,
        history: true,
    };
    let cases = [
        ("all_on", ALL_ON),
        (
            "no_validation",
            Stages {
                validation: false,
                ..ALL_ON
            },
        ),
        (
            "no_breaker",
            Stages {
                breaker: false,
                ..ALL_ON
            },
        ),
        (
            "no_rate_limit",
            Stages {
                rate_limit: false,
                ..ALL_ON
            },
        ),
        (
            "no_history",
            Stages {
                history: false,
                ..ALL_ON
            },
        ),
        ("like_for_like", LIKE_FOR_LIKE),
    ];
    let mut group = c.benchmark_group("stages");
    for (name, on) in &cases {
        let ex = stage_executor(on);
        let one = || async {
            black_box(ex.call(s.call()).await);
        };
        count_allocations(&s.rt, &format!("stages/{name}"), one);
        group.bench_function(*name, |b| b.to_async(&s.rt).iter(one));
    }
    group.finish();
}

/// The `tracing` group: the same happy path with an OpenTelemetry subscriber
/// installed as `axon` installs it (docs/telemetry.md), every trace sampled
/// and one in a hundred, spans batched to an exporter that drops them.
/// Against the same calls where no subscriber wants the spans (telemetry off).
fn tracing_cost(c: &mut Criterion, s: &Setup) {
    let mut group = c.benchmark_group("tracing");
    let one = || async {
        black_box(s.full.call(s.call()).await);
    };
    count_allocations(&s.rt, "tracing/axon_pipeline_otel_off", one);
    group.bench_function("axon_pipeline_otel_off", |b| b.to_async(&s.rt).iter(one));
    let provider = discarding_provider();
    // The runtime is current-thread: the calls run on this thread, under this
    // thread's default subscriber.
    for (name, ratio) in [
        ("axon_pipeline_otel_on", 1.0),
        ("axon_pipeline_otel_0.01", 0.01),
    ] {
        let guard = tracing::subscriber::set_default(otel_subscriber(&provider, ratio));
        count_allocations(&s.rt, &format!("tracing/{name}"), one);
        group.bench_function(name, |b| b.to_async(&s.rt).iter(one));
        drop(guard);
    }
    // Two bounds on a layer of our own in place of `tracing-opentelemetry`
    // (docs/benchmarks.md, "Tracing"): `tracing`'s own spans with no
    // OpenTelemetry layer behind them, and the SDK's two spans built
    // directly, with no `tracing` span. Such a layer pays at least both.
    let guard = tracing::subscriber::set_default(spans_only_subscriber());
    count_allocations(&s.rt, "tracing/axon_pipeline_spans_only", one);
    group.bench_function("axon_pipeline_spans_only", |b| b.to_async(&s.rt).iter(one));
    drop(guard);
    let tracer = opentelemetry::trace::TracerProvider::tracer(&provider, "axon");
    let sdk = || with_sdk_spans(&tracer, s.full.call(s.call()));
    count_allocations(&s.rt, "tracing/axon_pipeline_sdk_spans", sdk);
    group.bench_function("axon_pipeline_sdk_spans", |b| b.to_async(&s.rt).iter(sdk));
    group.finish();
    let _ = provider.shutdown();
}

/// `tracing`'s spans as `axon` builds them when every call is sampled (the
/// registry, the sampler's filter and gate), with no OpenTelemetry layer: a
/// layer that does nothing stands in its place.
fn spans_only_subscriber() -> impl tracing::Subscriber + Send + Sync {
    use axon_core::trace::sampling::HeadSampler;
    use tracing_subscriber::Layer;
    use tracing_subscriber::layer::SubscriberExt;
    let sampler = HeadSampler::new(1.0);
    tracing_subscriber::registry()
        .with(tracing_subscriber::layer::Identity::new().with_filter(sampler))
        .with(sampler.gate())
}

/// A call run with telemetry off inside the two SDK spans a sampled call
/// exports (`execute_tool` with its attributes, `attempt` in it), built with
/// OpenTelemetry's API directly: what handing the SDK its spans costs with
/// no `tracing` span and no conversion from one.
async fn with_sdk_spans(
    tracer: &opentelemetry_sdk::trace::SdkTracer,
    call: impl Future<Output = CallResult>,
) {
    use opentelemetry::trace::{Span as _, TraceContextExt, Tracer as _};
    use opentelemetry::{Context, KeyValue};
    let tool = "add";
    let call_span = tracer
        .span_builder(format!("execute_tool {tool}"))
        .with_attributes([
            KeyValue::new("gen_ai.operation.name", "execute_tool"),
            KeyValue::new("gen_ai.tool.name", tool.to_string()),
            KeyValue::new(
                "gen_ai.tool.call.id",
                "01KBENCHCALL000000000000000".to_string(),
            ),
            KeyValue::new("axon.correlation_id", "bench".to_string()),
        ])
        .start(tracer);
    let cx = Context::current_with_span(call_span);
    let mut attempt = tracer
        .span_builder("attempt")
        .with_attributes([KeyValue::new("axon.attempt", 1)])
        .start_with_context(tracer, &cx);
    let result = call.await;
    attempt.end();
    let span = cx.span();
    span.set_attribute(KeyValue::new("axon.attempts", i64::from(result.attempts)));
    span.set_attribute(KeyValue::new("axon.cache_hit", result.provenance.cache_hit));
    span.end();
    black_box(result);
}

/// Spans batched to an exporter that drops them.
fn discarding_provider() -> opentelemetry_sdk::trace::SdkTracerProvider {
    opentelemetry_sdk::trace::SdkTracerProvider::builder()
        .with_batch_exporter(Discard)
        .build()
}

/// The subscriber `axon` installs when `[telemetry]` is on
/// (crates/axon-cli/src/telemetry.rs): the ratio decided where a trace
/// starts, before its spans are built.
fn otel_subscriber(
    provider: &opentelemetry_sdk::trace::SdkTracerProvider,
    ratio: f64,
) -> impl tracing::Subscriber + Send + Sync {
    use axon_core::trace::sampling::HeadSampler;
    use opentelemetry::trace::TracerProvider as _;
    use tracing_subscriber::Layer;
    use tracing_subscriber::layer::SubscriberExt;
    let sampler = HeadSampler::new(ratio);
    tracing_subscriber::registry()
        .with(
            tracing_opentelemetry::layer()
                .with_tracer(provider.tracer("axon"))
                .with_threads(false)
                .with_location(false)
                .with_tracked_inactivity(false)
                .with_filter(sampler),
        )
        .with(sampler.gate())
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
