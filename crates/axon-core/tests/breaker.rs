//! The circuit breaker through the whole pipeline.

mod support;

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use axon_core::policy::BreakerState;
use axon_core::{ErrorKind, Executor, PolicyState, ToolCall};
use serde_json::json;
use support::*;

fn breaker_policy() -> serde_json::Value {
    json!({
        "retry": {"max_attempts": 1},
        "breaker": {"failure_threshold": 5, "window_ms": 10_000, "open_ms": 30_000, "half_open_max_calls": 2}
    })
}

#[tokio::test(start_paused = true)]
async fn breaker_opens_on_fifth_failure_within_window_and_rejects_without_calling() {
    let (tool, n) = Scripted::new("t", |_, _| err(ErrorKind::Transient));
    let ex = builder(vec![tool])
        .defaults(breaker_policy())
        .build()
        .unwrap();
    for i in 1..=4 {
        let r = ex.call(ToolCall::new("t", json!({}))).await;
        assert_eq!(r.error.unwrap().kind, ErrorKind::Transient);
        assert_eq!(
            ex.breaker_state("t"),
            Some(BreakerState::Closed),
            "after failure {i}"
        );
    }
    ex.call(ToolCall::new("t", json!({}))).await;
    assert_eq!(ex.breaker_state("t"), Some(BreakerState::Open));
    assert_eq!(calls(&n), 5);

    let r = ex.call(ToolCall::new("t", json!({}))).await;
    let e = r.error.unwrap();
    assert_eq!(e.kind, ErrorKind::CircuitOpen);
    assert_eq!(r.attempts, 0, "nothing was attempted");
    assert_eq!(calls(&n), 5, "the tool was not called");
}

#[tokio::test(start_paused = true)]
async fn failures_spread_wider_than_the_window_do_not_open_it() {
    let (tool, _) = Scripted::new("t", |_, _| err(ErrorKind::Transient));
    let ex = builder(vec![tool])
        .defaults(breaker_policy())
        .build()
        .unwrap();
    for _ in 0..10 {
        ex.call(ToolCall::new("t", json!({}))).await;
        tokio::time::advance(Duration::from_millis(2_600)).await;
    }
    assert_eq!(ex.breaker_state("t"), Some(BreakerState::Closed));
}

#[tokio::test(start_paused = true)]
async fn domain_failures_and_rate_limits_do_not_count() {
    let (tool, _) = Scripted::new("t", |i, _| {
        if i % 2 == 0 {
            err(ErrorKind::Failed)
        } else {
            err(ErrorKind::RateLimited)
        }
    });
    let ex = builder(vec![tool])
        .defaults(breaker_policy())
        .build()
        .unwrap();
    for _ in 0..20 {
        ex.call(ToolCall::new("t", json!({}))).await;
    }
    assert_eq!(ex.breaker_state("t"), Some(BreakerState::Closed));
}

/// Open the breaker of a tool that fails while `failing` is set.
async fn opened(failing: Arc<AtomicBool>) -> (Executor, Arc<std::sync::atomic::AtomicU32>) {
    let (tool, n) = Scripted::new("t", move |_, _| {
        if failing.load(Ordering::SeqCst) {
            err(ErrorKind::Unavailable)
        } else {
            after(1_000, json!("up"))
        }
    });
    let ex = builder(vec![tool])
        .defaults(breaker_policy())
        .build()
        .unwrap();
    for _ in 0..5 {
        ex.call(ToolCall::new("t", json!({}))).await;
    }
    assert_eq!(ex.breaker_state("t"), Some(BreakerState::Open));
    (ex, n)
}

#[tokio::test(start_paused = true)]
async fn after_open_ms_exactly_half_open_max_calls_probes_go_through_and_success_closes() {
    let failing = Arc::new(AtomicBool::new(true));
    let (ex, n) = opened(failing.clone()).await;
    tokio::time::advance(Duration::from_millis(29_999)).await;
    assert_eq!(
        ex.call(ToolCall::new("t", json!({})))
            .await
            .error
            .unwrap()
            .kind,
        ErrorKind::CircuitOpen
    );
    tokio::time::advance(Duration::from_millis(1)).await;
    assert_eq!(ex.breaker_state("t"), Some(BreakerState::HalfOpen));

    failing.store(false, Ordering::SeqCst);
    let before = calls(&n);
    // Three calls at once: two probes (each takes 1 s), the third is rejected.
    let results = ex
        .call_many(
            (0..3).map(|_| ToolCall::new("t", json!({}))).collect(),
            Some(3),
        )
        .await;
    let kinds: Vec<_> = results
        .iter()
        .map(|r| r.error.as_ref().map(|e| e.kind))
        .collect();
    assert_eq!(kinds.iter().filter(|k| k.is_none()).count(), 2, "{kinds:?}");
    assert_eq!(
        kinds
            .iter()
            .filter(|k| **k == Some(ErrorKind::CircuitOpen))
            .count(),
        1
    );
    assert_eq!(calls(&n) - before, 2);
    assert_eq!(ex.breaker_state("t"), Some(BreakerState::Closed));
}

#[tokio::test(start_paused = true)]
async fn a_failed_probe_opens_it_again() {
    let failing = Arc::new(AtomicBool::new(true));
    let (ex, _) = opened(failing).await;
    tokio::time::advance(Duration::from_millis(30_000)).await;
    let r = ex.call(ToolCall::new("t", json!({}))).await;
    assert_eq!(r.error.unwrap().kind, ErrorKind::Unavailable);
    assert_eq!(ex.breaker_state("t"), Some(BreakerState::Open));
    tokio::time::advance(Duration::from_millis(29_000)).await;
    assert_eq!(
        ex.breaker_state("t"),
        Some(BreakerState::Open),
        "the open period restarted"
    );
}

#[tokio::test(start_paused = true)]
async fn cancellations_do_not_count() {
    let (tool, _) = Scripted::new("t", |_, _| after(10_000, json!(0)));
    let ex = builder(vec![tool])
        .defaults(breaker_policy())
        .build()
        .unwrap();
    for _ in 0..10 {
        let token = cancel_after(50);
        let r = ex
            .call(ToolCall::new("t", json!({})).cancel_token(token))
            .await;
        assert_eq!(r.error.unwrap().kind, ErrorKind::Cancelled);
    }
    assert_eq!(ex.breaker_state("t"), Some(BreakerState::Closed));
}

#[tokio::test(start_paused = true)]
async fn executors_sharing_state_share_the_breaker() {
    let state = PolicyState::new();
    let build = || {
        let (tool, _) = Scripted::new("t", |_, _| err(ErrorKind::Transient));
        Executor::builder(registry(vec![tool]))
            .policy_state(state.clone())
            .defaults(breaker_policy())
            .build()
            .unwrap()
    };
    let (first, second) = (build(), build());
    for _ in 0..5 {
        first.call(ToolCall::new("t", json!({}))).await;
    }
    let r = second.call(ToolCall::new("t", json!({}))).await;
    assert_eq!(r.error.unwrap().kind, ErrorKind::CircuitOpen);
}

/// No process-wide state: two executors built without a shared state (two
/// servers, two tests in one binary) keep their own breakers, so one's
/// failures never open the other's.
#[tokio::test(start_paused = true)]
async fn by_default_executors_keep_their_own_breakers() {
    let build = || {
        let (tool, _) = Scripted::new("t", |_, _| err(ErrorKind::Transient));
        Executor::builder(registry(vec![tool]))
            .defaults(breaker_policy())
            .build()
            .unwrap()
    };
    let (first, second) = (build(), build());
    for _ in 0..5 {
        first.call(ToolCall::new("t", json!({}))).await;
    }
    let r = first.call(ToolCall::new("t", json!({}))).await;
    assert_eq!(r.error.unwrap().kind, ErrorKind::CircuitOpen);
    let r = second.call(ToolCall::new("t", json!({}))).await;
    assert_eq!(
        r.error.as_ref().unwrap().kind,
        ErrorKind::Transient,
        "{r:?}"
    );
}

#[tokio::test(start_paused = true)]
async fn manual_isolate_and_reset() {
    let (tool, n) = Scripted::new("t", |_, _| ok(json!(1)));
    let ex = executor(vec![tool]);
    assert!(ex.isolate_breaker("t").await);
    assert_eq!(
        ex.call(ToolCall::new("t", json!({})))
            .await
            .error
            .unwrap()
            .kind,
        ErrorKind::CircuitOpen
    );
    assert!(ex.reset_breaker("t").await);
    assert!(ex.call(ToolCall::new("t", json!({}))).await.success);
    assert_eq!(calls(&n), 1);
    assert!(!ex.reset_breaker("nope").await);
}

/// Issue 59: a breaker is the dependency's, shared by every caller. A caller
/// that sets its own tight `timeout_ms` provokes its timeouts itself; they
/// say nothing about the dependency and do not open the breaker for the
/// others (seen before the fix: five such calls opened it).
#[tokio::test(start_paused = true)]
async fn timeouts_a_caller_asked_for_do_not_open_the_shared_breaker() {
    let (tool, _) = Scripted::new("t", |_, _| after(50, json!({"ok": true})));
    let ex = builder(vec![tool])
        .defaults(breaker_policy())
        .build()
        .unwrap();
    for _ in 0..6 {
        let tight = ToolCall::new("t", json!({})).policy(json!({"timeout_ms": 5}));
        let r = ex.call(tight).await;
        assert_eq!(r.error.unwrap().kind, ErrorKind::Timeout);
    }
    assert_eq!(ex.breaker_state("t"), Some(BreakerState::Closed));
    let r = ex.call(ToolCall::new("t", json!({}))).await;
    assert!(r.success, "{:?}", r.error);
}
