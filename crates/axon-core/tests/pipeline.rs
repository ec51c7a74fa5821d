//! The rest of the pipeline: validation, unknown tools, panics, cancellation,
//! hedging, limits, fallback, call_many, result JSON, history and metrics.

mod support;

use std::sync::{Arc, Mutex};
use std::time::Duration;

use axon_core::{
    CallEvent, CancellationToken, ErrorKind, Executor, HistoryLimits, HistoryStats, HistoryStore,
    InMemoryHistory, PolicyState, ToolCall, ToolError, ToolRegistry, tool_fn,
};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::json;
use support::*;
use tokio::time::Instant;

#[derive(Deserialize, JsonSchema)]
struct Person {
    name: String,
    #[schemars(range(min = 0))]
    age: i32,
}

#[derive(Serialize, JsonSchema)]
struct Greeting {
    greeting: String,
}

fn greeter() -> ToolRegistry {
    let mut r = ToolRegistry::with_utilities();
    r.register(tool_fn(
        "greet",
        "Greets a person",
        |p: Person, _ctx| async move {
            Ok::<_, ToolError>(Greeting {
                greeting: format!("hello {} ({})", p.name, p.age),
            })
        },
    ))
    .unwrap();
    r
}

#[tokio::test(start_paused = true)]
async fn typed_tools_get_their_schema_from_the_struct() {
    let ex = Executor::builder(greeter())
        .policy_state(PolicyState::new())
        .build()
        .unwrap();
    let spec = ex.registry().get("greet").unwrap().spec().clone();
    assert_eq!(spec.input_schema["required"], json!(["name", "age"]));
    assert!(spec.output_schema.is_some());
    let r = ex
        .call(ToolCall::new("greet", json!({"name": "Ada", "age": 36})))
        .await;
    assert_eq!(r.data, json!({"greeting": "hello Ada (36)"}));
}

#[tokio::test(start_paused = true)]
async fn invalid_arguments_name_the_json_pointer_and_are_never_attempted() {
    let ex = Executor::builder(greeter())
        .policy_state(PolicyState::new())
        .build()
        .unwrap();
    let r = ex
        .call(ToolCall::new("greet", json!({"name": "Ada", "age": -1})))
        .await;
    let e = r.error.unwrap();
    assert_eq!(e.kind, ErrorKind::InvalidArguments);
    assert!(e.message.contains("/age"), "{}", e.message);
    assert_eq!(r.attempts, 0);
    let r = ex
        .call(ToolCall::new("greet", json!({"name": "Ada"})))
        .await;
    assert!(r.error.unwrap().message.contains("age"));
}

#[tokio::test(start_paused = true)]
async fn an_unknown_tool_is_reported_by_name() {
    let r = executor(vec![])
        .call(ToolCall::new("nope", json!({})))
        .await;
    let e = r.error.unwrap();
    assert_eq!(e.kind, ErrorKind::UnknownTool);
    assert!(e.message.contains("\"nope\""));
}

#[tokio::test(start_paused = true)]
async fn a_bad_per_call_policy_is_an_invalid_argument_naming_the_key() {
    let r = executor(vec![])
        .call(ToolCall::new("echo", json!({})).policy(json!({"retry": {"max_attempts": 0}})))
        .await;
    let e = r.error.unwrap();
    assert_eq!(e.kind, ErrorKind::InvalidArguments);
    assert!(e.message.contains("retry.max_attempts"), "{}", e.message);
}

#[tokio::test(start_paused = true)]
async fn a_bad_configured_policy_fails_the_build_naming_tool_and_key() {
    let err = builder(vec![])
        .tool_policy("echo", json!({"breaker": {"threshold": 3}}))
        .build()
        .err()
        .unwrap();
    assert_eq!(
        err.to_string(),
        "tools.echo: policy: breaker.threshold: unknown policy key"
    );
    let err = builder(vec![])
        .tool_policy("nope", json!({}))
        .build()
        .err()
        .unwrap();
    assert!(err.to_string().contains("tools.nope"));
}

#[tokio::test(start_paused = true)]
async fn a_panicking_tool_is_reported_as_internal_and_the_process_lives_on() {
    let (tool, _) = Scripted::new("boom", |_, _| Box::pin(async { panic!("kaboom") }));
    let ex = executor(vec![tool]);
    let r = ex.call(ToolCall::new("boom", json!({}))).await;
    let e = r.error.unwrap();
    assert_eq!(e.kind, ErrorKind::Internal);
    assert!(e.message.contains("kaboom"));
    assert_eq!(r.attempts, 1, "internal errors are not retried");
    assert!(
        ex.call(ToolCall::new("echo", json!({"still": "alive"})))
            .await
            .success
    );
}

#[tokio::test(start_paused = true)]
async fn cancelling_aborts_the_running_attempt() {
    let dropped = Arc::new(Mutex::new(false));
    struct SetOnDrop(Arc<Mutex<bool>>);
    impl Drop for SetOnDrop {
        fn drop(&mut self) {
            *self.0.lock().unwrap() = true;
        }
    }
    let flag = dropped.clone();
    let (tool, _) = Scripted::new("long", move |_, _| {
        let guard = SetOnDrop(flag.clone());
        Box::pin(async move {
            let _guard = guard;
            tokio::time::sleep(Duration::from_secs(3600)).await;
            Ok(json!(0))
        })
    });
    let ex = executor(vec![tool]);
    let token = cancel_after(100);
    let start = Instant::now();
    let r = ex
        .call(ToolCall::new("long", json!({})).cancel_token(token))
        .await;
    assert_eq!(r.error.unwrap().kind, ErrorKind::Cancelled);
    assert_eq!(start.elapsed(), Duration::from_millis(100));
    assert!(*dropped.lock().unwrap(), "the attempt future was dropped");
}

#[tokio::test(start_paused = true)]
async fn cancelling_during_backoff_stops_before_the_next_attempt() {
    let (tool, n) = Scripted::new("t", |_, _| err(ErrorKind::Transient));
    let ex = builder(vec![tool])
        .defaults(json!({"retry": {"initial_delay_ms": 5_000, "max_delay_ms": 5_000}}))
        .build()
        .unwrap();
    let token = cancel_after(1_000);
    let r = ex
        .call(ToolCall::new("t", json!({})).cancel_token(token))
        .await;
    assert_eq!(r.error.unwrap().kind, ErrorKind::Cancelled);
    assert_eq!(calls(&n), 1);
}

#[tokio::test(start_paused = true)]
async fn a_cancelled_token_stops_the_call_before_the_first_attempt() {
    let (tool, n) = Scripted::new("t", |_, _| ok(json!(1)));
    let token = CancellationToken::new();
    token.cancel();
    let r = executor(vec![tool])
        .call(ToolCall::new("t", json!({})).cancel_token(token))
        .await;
    assert_eq!(r.error.unwrap().kind, ErrorKind::Cancelled);
    assert_eq!(calls(&n), 0);
}

#[tokio::test(start_paused = true)]
async fn a_slow_idempotent_call_is_hedged_and_the_soft_timeout_is_reported() {
    let (tool, n) = Scripted::new("search", |i, _| {
        if i == 1 {
            after(5_000, json!("slow"))
        } else {
            after(50, json!("fast"))
        }
    });
    let ex = builder(vec![tool])
        .defaults(json!({"soft_timeout_ms": 100, "hedge": {"after_ms": 200}}))
        .build()
        .unwrap();
    let events = Arc::new(Mutex::new(Vec::new()));
    let sink = events.clone();
    let start = Instant::now();
    let r = ex
        .call(ToolCall::new("search", json!({})).on_event(move |e| sink.lock().unwrap().push(e)))
        .await;
    assert_eq!(r.data, json!("fast"));
    assert_eq!(start.elapsed(), Duration::from_millis(250));
    assert_eq!(calls(&n), 2);
    let events = events.lock().unwrap();
    assert!(events.iter().any(|e| matches!(
        e,
        CallEvent::Slow {
            elapsed_ms: 100,
            ..
        }
    )));
    assert!(
        events
            .iter()
            .any(|e| matches!(e, CallEvent::Hedged { hedge: 1, .. }))
    );
    assert!(matches!(events.last(), Some(CallEvent::Finished { .. })));
}

#[tokio::test(start_paused = true)]
async fn the_concurrency_limit_queues_attempts() {
    let (tool, _) = Scripted::new("t", |_, _| after(100, json!(1)));
    let ex = builder(vec![tool])
        .tool_policy("t", json!({"limits": {"max_concurrent": 2}}))
        .build()
        .unwrap();
    let start = Instant::now();
    let results = ex
        .call_many(
            (0..6).map(|_| ToolCall::new("t", json!({}))).collect(),
            Some(6),
        )
        .await;
    assert!(results.iter().all(|r| r.success));
    assert_eq!(
        start.elapsed(),
        Duration::from_millis(300),
        "6 calls, 2 at a time, 100 ms each"
    );
}

#[tokio::test(start_paused = true)]
async fn the_rate_limit_spaces_calls() {
    let (tool, _) = Scripted::new("t", |_, _| ok(json!(1)));
    let ex = builder(vec![tool])
        .tool_policy("t", json!({"limits": {"rate_per_sec": 10.0}}))
        .build()
        .unwrap();
    let start = Instant::now();
    ex.call_many(
        (0..15).map(|_| ToolCall::new("t", json!({}))).collect(),
        Some(15),
    )
    .await;
    // A burst of 10, then one every 100 ms.
    assert_eq!(start.elapsed(), Duration::from_millis(500));
}

#[tokio::test(start_paused = true)]
async fn a_fallback_serves_and_reports_its_index_and_the_primary_error() {
    let (primary, _) = Scripted::new("primary", |_, _| err(ErrorKind::Unavailable));
    let (broken, _) = Scripted::new("broken", |_, _| err(ErrorKind::Failed));
    let (backup, _) = Scripted::new("backup", |_, args| {
        ok(json!({"from": "backup", "args": args.clone()}))
    });
    let ex = executor(vec![primary, broken, backup]);
    let r = ex
        .call(
            ToolCall::new("primary", json!({}))
                .correlation_id("fb")
                .fallback("broken", json!({}))
                .fallback("backup", json!({"id": 7})),
        )
        .await;
    assert!(r.success, "{r:?}");
    assert_eq!(r.tool, "primary");
    assert_eq!(r.data["from"], "backup");
    assert_eq!(r.attempts, 3, "the primary was retried first");
    let fb = r.fallback.unwrap();
    assert!(fb.used);
    assert_eq!(fb.index, 1);
    assert_eq!(fb.primary_tool, "primary");
    assert_eq!(fb.primary_error.kind, ErrorKind::Unavailable);
    let tools: Vec<_> = ex
        .history()
        .by_correlation("fb")
        .await
        .unwrap()
        .into_iter()
        .map(|e| e.result.tool)
        .collect();
    assert_eq!(
        tools,
        ["broken", "backup", "primary"],
        "every link is in history"
    );
}

/// A call's duration is read from its answering attempt's end when nothing
/// runs after it; a fallback runs after a failed primary, so its time counts.
#[tokio::test(start_paused = true)]
async fn a_duration_counts_the_retries_and_the_fallback_that_served() {
    let (primary, _) = Scripted::new("primary", |_, _| err(ErrorKind::Unavailable));
    let ex = executor(vec![primary]);
    let start = Instant::now();
    let r = ex
        .call(ToolCall::new("primary", json!({})).fallback("sleep", json!({"ms": 40})))
        .await;
    assert!(r.success, "{r:?}");
    assert_eq!(start.elapsed(), Duration::from_millis(340));
    assert_eq!(
        r.duration_ms, 340,
        "two backoffs (100 + 200 ms) on the primary, then the fallback's 40 ms"
    );
    let start = Instant::now();
    let r = ex.call(ToolCall::new("sleep", json!({"ms": 25}))).await;
    assert_eq!(
        (r.duration_ms, start.elapsed()),
        (25, Duration::from_millis(25))
    );
}

#[tokio::test(start_paused = true)]
async fn when_every_fallback_fails_the_primary_error_stands() {
    let (primary, _) = Scripted::new("primary", |_, _| err(ErrorKind::Unavailable));
    let r = executor(vec![primary])
        .call(ToolCall::new("primary", json!({})).fallback(
            "flaky",
            json!({"key": "never", "fail_times": 99, "kind": "failed"}),
        ))
        .await;
    assert_eq!(r.error.unwrap().kind, ErrorKind::Unavailable);
    assert!(r.fallback.is_none());
}

#[tokio::test(start_paused = true)]
async fn call_many_returns_results_in_input_order_under_the_cap() {
    let ex = executor(vec![]);
    let calls: Vec<_> = [300u64, 100, 200, 50]
        .iter()
        .map(|ms| ToolCall::new("sleep", json!({"ms": ms})))
        .collect();
    let start = Instant::now();
    let results = ex.call_many(calls, Some(2)).await;
    let slept: Vec<_> = results
        .iter()
        .map(|r| r.data["slept_ms"].as_u64().unwrap())
        .collect();
    assert_eq!(slept, [300, 100, 200, 50]);
    // Two lanes: 300 | 100 then 200 then 50 → 350 ms.
    assert_eq!(start.elapsed(), Duration::from_millis(350));
}

#[tokio::test(start_paused = true)]
async fn the_result_json_has_exactly_the_design_fields() {
    let r = executor(vec![])
        .call(ToolCall::new("echo", json!({"x": 1})).correlation_id("c1"))
        .await;
    let v = serde_json::to_value(&r).unwrap();
    let mut keys: Vec<_> = v.as_object().unwrap().keys().cloned().collect();
    keys.sort();
    assert_eq!(
        keys,
        [
            "attempts",
            "call_id",
            "correlation_id",
            "data",
            "duration_ms",
            "error",
            "fallback",
            "provenance",
            "retry_delays_ms",
            "retry_reasons",
            "started_at",
            "success",
            "tool"
        ]
    );
    assert_eq!(v["correlation_id"], "c1");
    assert_eq!(v["error"], json!(null));
    assert_eq!(v["provenance"]["source"], "tool");
    assert!(
        v["provenance"]["response_digest"]
            .as_str()
            .unwrap()
            .starts_with("sha256:")
    );
    assert!(v["started_at"].as_str().unwrap().ends_with('Z'));
    let back: axon_core::CallResult = serde_json::from_value(v).unwrap();
    assert_eq!(back, r);
    let failed = executor(vec![])
        .call(ToolCall::new("nope", json!({})))
        .await;
    let e = serde_json::to_value(failed.error).unwrap();
    assert_eq!(
        e,
        json!({"kind": "unknown_tool", "code": null, "message": "no tool named \"nope\" is registered", "retryable": false})
    );
}

#[tokio::test(start_paused = true)]
async fn history_trims_fifo_and_redacts_secrets() {
    let store = Arc::new(InMemoryHistory::with_limits(HistoryLimits {
        max_per_correlation: 3,
        max_correlations: 100,
    }));
    let ex = builder(vec![]).history(store.clone()).build().unwrap();
    let mut returned = Vec::new();
    for i in 0..5 {
        returned.push(
            ex.call(
                ToolCall::new(
                    "echo",
                    json!({"i": i, "user": "ada", "password": "hunter2"}),
                )
                .correlation_id("login"),
            )
            .await,
        );
    }
    let entries = store.by_correlation("login").await.unwrap();
    let kept: Vec<_> = entries
        .iter()
        .map(|e| e.args["i"].as_i64().unwrap())
        .collect();
    assert_eq!(kept, [2, 3, 4], "oldest dropped first");
    assert!(
        entries
            .iter()
            .all(|e| e.args["password"] == "***" && e.args["user"] == "ada")
    );
    // The caller still gets its own data back; the record is redacted, its
    // result's data (echo returns the arguments) as much as its arguments.
    assert_eq!(returned[4].data["password"], "hunter2");
    let first = &entries[0];
    assert_eq!(first.result.data["password"], "***");
    assert_eq!(first.result.data["user"], "ada");
    // The digest is of what the tool returned, not of the masked copy.
    assert_eq!(
        first.result.provenance.response_digest,
        returned[2].provenance.response_digest
    );
    assert_eq!(store.len(), 3);
    let dropped_id = store.by_call_id(&entries[0].result.call_id).await.unwrap();
    assert!(dropped_id.is_some());
}

#[tokio::test(start_paused = true)]
async fn history_statistics_per_correlation() {
    let store = Arc::new(InMemoryHistory::new());
    let ex = builder(vec![]).history(store.clone()).build().unwrap();
    let key = format!("stats-{}", ulid::Ulid::new());
    for call in [
        ToolCall::new("echo", json!({})),
        ToolCall::new("flaky", json!({"key": key, "fail_times": 1})),
        ToolCall::new(
            "flaky",
            json!({"key": "never-ok-stats", "fail_times": 9, "kind": "failed"}),
        ),
        ToolCall::new("sleep", json!({"ms": 40})),
    ] {
        ex.call(call.correlation_id("wf")).await;
    }
    let s: HistoryStats = store.stats("wf").await.unwrap();
    assert_eq!((s.total, s.succeeded, s.failed, s.retried), (4, 3, 1, 1));
    assert_eq!(s.success_rate, 0.75);
    assert_eq!(
        s.total_duration_ms,
        100 + 40,
        "the retry slept 100 ms, the sleep 40 ms"
    );
    assert_eq!(s.average_duration_ms, 35.0);
}

#[tokio::test(start_paused = true)]
async fn a_tool_can_mark_an_argument_secret() {
    let mut r = ToolRegistry::new();
    #[derive(Deserialize, JsonSchema)]
    struct Type {
        selector: String,
        text: String,
    }
    r.register(tool_fn("type_text", "types", |a: Type, ctx| async move {
        if a.selector == "#password" {
            ctx.mark_secret("/text");
        }
        Ok::<_, ToolError>(json!({"typed": a.text.len()}))
    }))
    .unwrap();
    let store = Arc::new(InMemoryHistory::new());
    let ex = Executor::builder(r)
        .policy_state(PolicyState::new())
        .history(store.clone())
        .build()
        .unwrap();
    ex.call(
        ToolCall::new(
            "type_text",
            json!({"selector": "#password", "text": "s3cret"}),
        )
        .correlation_id("c"),
    )
    .await;
    ex.call(
        ToolCall::new("type_text", json!({"selector": "#user", "text": "ada"})).correlation_id("c"),
    )
    .await;
    let texts: Vec<_> = store
        .by_correlation("c")
        .await
        .unwrap()
        .into_iter()
        .map(|e| e.args["text"].clone())
        .collect();
    assert_eq!(texts, [json!("***"), json!("ada")]);
}

#[tokio::test(start_paused = true)]
async fn an_output_that_breaks_the_schema_is_invalid_output_and_not_retried() {
    let (tool, n) = Scripted::new("t", |_, _| ok(json!({"wrong": true})));
    let tool = tool.output_schema(json!({"type": "object", "required": ["sum"]}));
    let r = executor(vec![tool])
        .call(ToolCall::new("t", json!({})))
        .await;
    assert_eq!(r.error.unwrap().kind, ErrorKind::InvalidOutput);
    assert_eq!(calls(&n), 1);
}

#[tokio::test(start_paused = true)]
async fn flaky_recovers_after_its_failures() {
    let key = format!("flaky-{}", ulid::Ulid::new());
    let r = executor(vec![])
        .call(ToolCall::new(
            "flaky",
            json!({"key": key, "fail_times": 2, "data": {"v": 1}}),
        ))
        .await;
    assert!(r.success);
    assert_eq!(r.data, json!({"attempt": 3, "data": {"v": 1}}));
    assert_eq!(r.attempts, 3);
}

#[test]
fn metrics_use_the_design_names_and_labels() {
    use metrics_util::debugging::{DebugValue, DebuggingRecorder};
    let recorder = DebuggingRecorder::new();
    let snapshotter = recorder.snapshotter();
    metrics::with_local_recorder(&recorder, || {
        let rt = tokio::runtime::Builder::new_current_thread()
            .enable_time()
            .start_paused(true)
            .build()
            .unwrap();
        let (tool, _) = Scripted::new("m", |i, _| {
            if i == 1 {
                err(ErrorKind::Transient)
            } else {
                after(60, json!(1))
            }
        });
        let ex = builder(vec![tool])
            .tool_policy("m", json!({"cache": {"ttl_ms": 1000}}))
            .build()
            .unwrap();
        rt.block_on(async {
            ex.call(ToolCall::new("m", json!({}))).await;
            ex.call(ToolCall::new("m", json!({}))).await;
            ex.call(ToolCall::new("nope", json!({}))).await;
            ex.call(ToolCall::new(
                "flaky",
                json!({"key": "metrics-fail", "fail_times": 9, "kind": "failed"}),
            ))
            .await;
        });
    });
    let snapshot = snapshotter.snapshot().into_hashmap();
    let find = |name: &str, labels: &[(&str, &str)]| {
        snapshot
            .iter()
            .find(|(k, _)| {
                k.key().name() == name
                    && labels.iter().all(|(l, v)| {
                        k.key()
                            .labels()
                            .any(|lab| lab.key() == *l && lab.value() == *v)
                    })
            })
            .map(|(_, (_, _, v))| v)
    };
    match find("tool_latency_ms", &[("tool", "m"), ("outcome", "success")]) {
        Some(DebugValue::Histogram(v)) => assert_eq!(v.len(), 1),
        other => panic!("success latency: {other:?}"),
    }
    match find(
        "tool_latency_ms",
        &[("tool", "m"), ("outcome", "cache_hit")],
    ) {
        Some(DebugValue::Histogram(v)) => assert_eq!(v.len(), 1),
        other => panic!("cache_hit latency: {other:?}"),
    }
    assert_eq!(
        find("tool_retries_total", &[("tool", "m")]),
        Some(&DebugValue::Counter(1))
    );
    assert_eq!(
        find("tool_cache_hits_total", &[("tool", "m")]),
        Some(&DebugValue::Counter(1))
    );
    assert_eq!(
        find(
            "tool_errors_total",
            &[("tool", "flaky"), ("reason", "failed")]
        ),
        Some(&DebugValue::Counter(1))
    );
    assert_eq!(
        find("tool_errors_total", &[("reason", "unknown_tool")]),
        Some(&DebugValue::Counter(1))
    );
    assert!(matches!(
        find("tool_circuit_state", &[("tool", "m")]),
        Some(DebugValue::Gauge(_))
    ));
    assert!(matches!(
        find("tool_inflight", &[("tool", "m")]),
        Some(DebugValue::Gauge(_))
    ));
}

#[tokio::test(start_paused = true)]
async fn chaos_injects_latency_and_faults_and_says_so() {
    let (tool, n) = Scripted::new("api", |_, _| ok(json!({"ok": true})));
    let ex = builder(vec![tool])
        .tool_policy(
            "api",
            json!({"chaos": {"latency_ms": 200, "fault_rate": 1.0, "fault_kind": "unavailable", "seed": 3},
                   "retry": {"max_attempts": 2}, "breaker": {"failure_threshold": 0}}),
        )
        .build()
        .unwrap();
    let start = Instant::now();
    let r = ex.call(ToolCall::new("api", json!({}))).await;
    let e = r.error.clone().unwrap();
    assert_eq!(
        (e.kind, e.code.as_deref()),
        (ErrorKind::Unavailable, Some("chaos"))
    );
    assert_eq!(calls(&n), 0, "the tool itself never ran");
    assert_eq!(r.attempts, 2);
    assert_eq!(
        r.provenance.chaos,
        [
            "attempt 1: 200 ms latency injected",
            "attempt 1: unavailable fault injected",
            "attempt 2: 200 ms latency injected",
            "attempt 2: unavailable fault injected"
        ]
    );
    assert!(start.elapsed() >= Duration::from_millis(400));
    // Not per call: an injected fault would open the tool's shared breaker.
    let r = ex
        .call(ToolCall::new("api", json!({})).policy(json!({"chaos": {"fault_rate": 1.0}})))
        .await;
    assert_eq!(r.error.unwrap().code.as_deref(), Some("invalid_policy"));
    // Without chaos, provenance says nothing of it.
    let (tool, _) = Scripted::new("calm", |_, _| ok(json!(1)));
    let r = executor(vec![tool])
        .call(ToolCall::new("calm", json!({})))
        .await;
    assert!(r.provenance.chaos.is_empty());
    assert!(
        serde_json::to_value(&r).unwrap()["provenance"]
            .get("chaos")
            .is_none()
    );
}

/// `max_result_tokens`: a tool's configuration bounds what its caller gets,
/// history keeps the whole result, a call may lift the bound with 0, and a
/// front end's default applies only where no layer sets one.
#[tokio::test]
async fn a_result_over_its_token_budget_is_cut_and_history_keeps_it_whole() {
    let mut r = ToolRegistry::new();
    r.register(tool_fn(
        "report",
        "A long report",
        |_: serde_json::Value, _ctx| async move {
            let lines: String = (0..5_000)
                .map(|i| format!("row {i}: delivered\n"))
                .collect();
            Ok::<_, ToolError>(json!({ "text": lines }))
        },
    ))
    .unwrap();
    r.register(tool_fn(
        "free",
        "Unbounded",
        |_: serde_json::Value, _ctx| async move {
            Ok::<_, ToolError>(json!({ "text": "row\n".repeat(5_000) }))
        },
    ))
    .unwrap();
    let history = Arc::new(InMemoryHistory::new());
    let ex = Executor::builder(r)
        .tool_policy("report", json!({"max_result_tokens": 1000}))
        .history(history.clone())
        .policy_state(PolicyState::new())
        .build()
        .unwrap();
    let cut = ex.call(ToolCall::new("report", json!({}))).await;
    assert!(cut.success);
    let info = cut.cut.as_deref().expect("cut to the budget");
    assert_eq!((info.at.as_str(), info.page), ("/text", 1));
    assert!(cut.data["text"].as_str().unwrap().len() < 10_000);
    let whole = history.by_call_id(&cut.call_id).await.unwrap().unwrap();
    assert_eq!(
        whole.result.data["text"].as_str().unwrap().lines().count(),
        5_000
    );
    assert!(whole.result.cut.is_none());

    let lifted = ex
        .call(ToolCall::new("report", json!({})).policy(json!({"max_result_tokens": 0})))
        .await;
    assert!(lifted.cut.is_none());
    let mut call = ToolCall::new("report", json!({}));
    call.default_max_result_tokens = Some(50_000);
    assert!(
        ex.call(call).await.cut.is_some(),
        "the tool's own bound wins"
    );
    let mut call = ToolCall::new("free", json!({}));
    call.default_max_result_tokens = Some(500);
    assert!(
        ex.call(call).await.cut.is_some(),
        "the default bounds a tool without one"
    );
    assert!(
        ex.call(ToolCall::new("free", json!({})))
            .await
            .cut
            .is_none()
    );
}

/// Issue 59: in-memory history keeps `max_per_correlation` calls per
/// correlation id *and owner*: another tenant's calls under the same id do
/// not push this one's out (the store's trim is tested on SQLite and
/// PostgreSQL by the tenant matrix).
#[tokio::test]
async fn another_tenants_calls_under_my_correlation_id_keep_mine() {
    let history = Arc::new(InMemoryHistory::with_limits(HistoryLimits {
        max_per_correlation: 2,
        ..HistoryLimits::default()
    }));
    let (tool, _) = Scripted::new("t", |_, _| ok(json!({})));
    let ex = builder(vec![tool])
        .history(history.clone())
        .build()
        .unwrap();
    let call = |tenant: &str| {
        ToolCall::new("t", json!({}))
            .correlation_id("shared")
            .tenant(tenant.to_string())
    };
    ex.call(call("a")).await;
    for _ in 0..5 {
        ex.call(call("b")).await;
    }
    let kept = history.by_correlation("shared").await.unwrap();
    let of = |t: &str| kept.iter().filter(|e| e.owner.tenant() == Some(t)).count();
    assert_eq!((of("a"), of("b")), (1, 2));
    // One owner's group is trimmed from its front, as before.
    for _ in 0..3 {
        ex.call(ToolCall::new("t", json!({})).correlation_id("mine"))
            .await;
    }
    assert_eq!(history.by_correlation("mine").await.unwrap().len(), 2);
}
