//! The response cache: hits, provenance, the breaker, single-flight, stale-if-error.

mod support;

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use axon_core::policy::BreakerState;
use axon_core::{ErrorKind, Source, ToolCall};
use serde_json::json;
use support::*;

fn cached() -> serde_json::Value {
    json!({
        "cache": {"ttl_ms": 60_000},
        "retry": {"max_attempts": 1},
        "breaker": {"failure_threshold": 2, "open_ms": 600_000}
    })
}

#[tokio::test(start_paused = true)]
async fn a_cache_hit_keeps_the_original_fetched_at_and_is_served_while_the_breaker_is_open() {
    let down = Arc::new(AtomicBool::new(false));
    let flag = down.clone();
    let (tool, n) = Scripted::new("weather", move |i, _| {
        if flag.load(Ordering::SeqCst) {
            err(ErrorKind::Unavailable)
        } else {
            ok(json!({"temp": 72, "call": i}))
        }
    });
    let ex = builder(vec![tool]).defaults(cached()).build().unwrap();
    let sf = json!({"city": "San Francisco"});

    let first = ex.call(ToolCall::new("weather", sf.clone())).await;
    assert!(first.success);
    assert_eq!(first.provenance.source, Source::Tool);
    assert!(!first.provenance.cache_hit);
    let fetched_at = first.provenance.fetched_at.unwrap();

    // The tool goes down; other arguments fail until the breaker opens.
    down.store(true, Ordering::SeqCst);
    for city in ["Oslo", "Lima"] {
        ex.call(ToolCall::new("weather", json!({"city": city})))
            .await;
    }
    assert_eq!(ex.breaker_state("weather"), Some(BreakerState::Open));

    tokio::time::advance(Duration::from_millis(1_000)).await;
    let hit = ex.call(ToolCall::new("weather", sf.clone())).await;
    assert!(hit.success, "{hit:?}");
    assert_eq!(hit.data, first.data);
    assert!(hit.provenance.cache_hit);
    assert_eq!(hit.provenance.source, Source::Cache);
    assert_eq!(
        hit.provenance.fetched_at,
        Some(fetched_at),
        "the original fetch time"
    );
    assert_eq!(
        hit.provenance.response_digest,
        first.provenance.response_digest
    );
    assert_eq!(hit.attempts, 0);
    assert_eq!(calls(&n), 3, "the hit did not call the tool");
}

#[tokio::test(start_paused = true)]
async fn argument_order_does_not_defeat_the_cache_and_entries_expire() {
    let (tool, n) = Scripted::new("t", |i, _| ok(json!(i)));
    let ex = builder(vec![tool]).defaults(cached()).build().unwrap();
    ex.call(ToolCall::new("t", json!({"a": 1, "b": 2}))).await;
    let r = ex
        .call(ToolCall::new(
            "t",
            serde_json::from_str(r#"{"b":2,"a":1}"#).unwrap(),
        ))
        .await;
    assert!(r.provenance.cache_hit);
    tokio::time::advance(Duration::from_millis(60_000)).await;
    let r = ex.call(ToolCall::new("t", json!({"a": 1, "b": 2}))).await;
    assert!(!r.provenance.cache_hit);
    assert_eq!(calls(&n), 2);
}

#[tokio::test(start_paused = true)]
async fn fifty_identical_concurrent_calls_run_the_tool_once() {
    let (tool, n) = Scripted::new("slow", |i, _| after(100, json!({"run": i})));
    let ex = builder(vec![tool]).defaults(cached()).build().unwrap();
    let results = ex
        .call_many(
            (0..50)
                .map(|_| ToolCall::new("slow", json!({"q": "same"})))
                .collect(),
            Some(50),
        )
        .await;
    assert_eq!(calls(&n), 1);
    assert!(
        results
            .iter()
            .all(|r| r.success && r.data == json!({"run": 1}))
    );
    let ids: std::collections::HashSet<_> = results.iter().map(|r| r.call_id.clone()).collect();
    assert_eq!(ids.len(), 50, "each call keeps its own id");
}

#[tokio::test(start_paused = true)]
async fn a_stale_entry_is_served_when_the_tool_fails_within_stale_if_error() {
    let down = Arc::new(AtomicBool::new(false));
    let flag = down.clone();
    let (tool, _) = Scripted::new("t", move |_, _| {
        if flag.load(Ordering::SeqCst) {
            err(ErrorKind::Unavailable)
        } else {
            ok(json!("fresh"))
        }
    });
    let ex = builder(vec![tool])
        .defaults(json!({"cache": {"ttl_ms": 1_000, "stale_if_error_ms": 5_000}, "retry": {"max_attempts": 1}}))
        .build()
        .unwrap();
    ex.call(ToolCall::new("t", json!({}))).await;
    down.store(true, Ordering::SeqCst);
    tokio::time::advance(Duration::from_millis(2_000)).await;
    let r = ex.call(ToolCall::new("t", json!({}))).await;
    assert!(r.success);
    assert!(r.provenance.stale && r.provenance.cache_hit);
    assert_eq!(r.attempts, 1, "the tool was tried first");
    tokio::time::advance(Duration::from_millis(5_000)).await;
    let r = ex.call(ToolCall::new("t", json!({}))).await;
    assert_eq!(
        r.error.unwrap().kind,
        ErrorKind::Unavailable,
        "past the stale window"
    );
}

#[tokio::test(start_paused = true)]
async fn failures_are_not_cached() {
    let (tool, n) = Scripted::new("t", |i, _| {
        if i == 1 {
            err(ErrorKind::Failed)
        } else {
            ok(json!(i))
        }
    });
    let ex = builder(vec![tool]).defaults(cached()).build().unwrap();
    assert!(!ex.call(ToolCall::new("t", json!({}))).await.success);
    assert!(ex.call(ToolCall::new("t", json!({}))).await.success);
    assert_eq!(calls(&n), 2);
}

#[tokio::test(start_paused = true)]
async fn a_cancelled_call_is_not_served_stale() {
    let (tool, _) = Scripted::new("t", |i, _| {
        if i == 1 {
            ok(json!("fresh"))
        } else {
            after(10_000, json!("late"))
        }
    });
    let ex = builder(vec![tool])
        .defaults(json!({"cache": {"ttl_ms": 1_000, "stale_if_error_ms": 60_000}}))
        .build()
        .unwrap();
    ex.call(ToolCall::new("t", json!({}))).await;
    tokio::time::advance(Duration::from_millis(2_000)).await;
    let r = ex
        .call(ToolCall::new("t", json!({})).cancel_token(cancel_after(100)))
        .await;
    assert_eq!(r.error.unwrap().kind, ErrorKind::Cancelled);
}
