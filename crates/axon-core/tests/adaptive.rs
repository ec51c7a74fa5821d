//! Adaptive policies on the paused clock: `timeout_ms = "auto"` and
//! `hedge.after_ms = "auto"` follow a tool whose latency shifts.

mod support;

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::Duration;

use axon_core::{ErrorKind, ToolCall};
use serde_json::json;
use support::*;
use tokio::time::Instant;

#[tokio::test(start_paused = true)]
async fn an_auto_timeout_follows_the_latency_up_after_a_shift() {
    let latency = Arc::new(AtomicU64::new(10));
    let ms = latency.clone();
    let (tool, _) = Scripted::new("lookup", move |_, _| {
        after(ms.load(Ordering::SeqCst), json!("ok"))
    });
    let ex = builder(vec![tool])
        .tool_policy(
            "lookup",
            json!({
                "timeout_ms": "auto",
                "retry": {"max_attempts": 1},
                "adaptive": {"timeout_floor_ms": 20, "timeout_ceiling_ms": 10_000, "min_samples": 20},
            }),
        )
        .build()
        .unwrap();
    let view = ex.adaptive("lookup").unwrap();
    assert!(view.timeout_auto);
    assert_eq!(view.latency, None);
    assert_eq!(view.timeout_ms, 10_000, "the ceiling until enough is seen");

    for _ in 0..30 {
        assert!(ex.call(ToolCall::new("lookup", json!({}))).await.success);
    }
    let view = ex.adaptive("lookup").unwrap();
    let p99 = view.latency.unwrap().p99_ms;
    assert!((p99 - 10.0).abs() < 0.2, "{view:?}");
    assert!((30..=31).contains(&view.timeout_ms), "{view:?}");

    // The tool slows to 50 ms: past the 30 ms timeout. The timed-out attempts
    // count as "at least 30 ms", the timeout grows, and calls succeed again.
    latency.store(50, Ordering::SeqCst);
    let mut failed = Vec::new();
    for i in 0..40 {
        let r = ex.call(ToolCall::new("lookup", json!({}))).await;
        if !r.success {
            assert_eq!(r.error.unwrap().kind, ErrorKind::Timeout);
            failed.push(i);
        }
    }
    // p99 over ~30 samples moves once two of them are the censored 30 ms.
    assert_eq!(
        failed,
        vec![0, 1],
        "two calls time out, then the timeout has grown"
    );
    let view = ex.adaptive("lookup").unwrap();
    assert!((150..=152).contains(&view.timeout_ms), "{view:?}");

    // And it comes down again once the tool is fast: the old window rotates out.
    latency.store(10, Ordering::SeqCst);
    for _ in 0..600 {
        assert!(ex.call(ToolCall::new("lookup", json!({}))).await.success);
    }
    let view = ex.adaptive("lookup").unwrap();
    assert!((30..=31).contains(&view.timeout_ms), "{view:?}");
}

#[tokio::test(start_paused = true)]
async fn an_auto_hedge_starts_after_the_observed_p95() {
    let slow_next = Arc::new(AtomicBool::new(false));
    let slow = slow_next.clone();
    let (tool, executions) = Scripted::new("search", move |_, _| {
        let ms = if slow.swap(false, Ordering::SeqCst) {
            1_000
        } else {
            10
        };
        after(ms, json!("found"))
    });
    let ex = builder(vec![tool])
        .tool_policy(
            "search",
            json!({"hedge": {"after_ms": "auto"}, "adaptive": {"min_samples": 20}}),
        )
        .build()
        .unwrap();

    // Too little seen: no hedging, a slow execution is waited for.
    slow_next.store(true, Ordering::SeqCst);
    let start = Instant::now();
    assert!(ex.call(ToolCall::new("search", json!({}))).await.success);
    assert_eq!(start.elapsed(), Duration::from_millis(1_000));
    assert_eq!(ex.adaptive("search").unwrap().hedge_after_ms, None);
    for _ in 0..29 {
        ex.call(ToolCall::new("search", json!({}))).await;
    }
    assert_eq!(calls(&executions), 30, "no hedges while the tool is fast");
    let view = ex.adaptive("search").unwrap();
    assert!(view.hedge_auto);
    assert_eq!(view.hedge_after_ms, Some(10), "{view:?}");

    // A slow execution now gets a hedge after the p95 (10 ms) that answers in 10.
    slow_next.store(true, Ordering::SeqCst);
    let start = Instant::now();
    let r = ex.call(ToolCall::new("search", json!({}))).await;
    assert_eq!(r.data, json!("found"));
    // The p95 estimate is within 1 % of 10 ms, and timers tick in whole ms.
    let took = start.elapsed();
    assert!(
        took >= Duration::from_millis(20) && took <= Duration::from_millis(21),
        "{took:?}"
    );
    assert_eq!(calls(&executions), 32);
}

#[tokio::test(start_paused = true)]
async fn auto_values_are_checked_like_numbers() {
    let (tool, _) = Scripted::new("t", |_, _| ok(json!(1)));
    let err = builder(vec![tool])
        .tool_policy("t", json!({"timeout_ms": "soon"}))
        .build()
        .err()
        .unwrap();
    assert!(err.to_string().contains("timeout_ms"), "{err}");
    assert!(err.to_string().contains("\"auto\""), "{err}");
    let (tool, _) = Scripted::new("t", |_, _| ok(json!(1)));
    let ex = executor(vec![tool]);
    let r = ex
        .call(ToolCall::new("t", json!({})).policy(json!({"adaptive": {"timeout_factor": 0}})))
        .await;
    let e = r.error.unwrap();
    assert_eq!(e.kind, ErrorKind::InvalidArguments);
    assert!(
        e.message.contains("adaptive.timeout_factor"),
        "{}",
        e.message
    );
}
