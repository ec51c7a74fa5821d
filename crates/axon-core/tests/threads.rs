//! The executor on a multi-threaded runtime: its futures are `Send` (the server
//! spawns them), and shared state holds up under real parallelism.

mod support;

use std::time::Duration;

use axon_core::policy::BreakerState;
use axon_core::{ErrorKind, ToolCall};
use serde_json::json;
use support::*;

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn spawned_identical_calls_share_one_execution() {
    let (tool, n) = Scripted::new("slow", |i, _| {
        Box::pin(async move {
            tokio::time::sleep(Duration::from_millis(50)).await;
            Ok(json!(i))
        })
    });
    let ex = builder(vec![tool])
        .defaults(json!({"cache": {"ttl_ms": 60_000}}))
        .build()
        .unwrap();
    let handles: Vec<_> = (0..200)
        .map(|_| {
            let ex = ex.clone();
            tokio::spawn(async move { ex.call(ToolCall::new("slow", json!({"same": true}))).await })
        })
        .collect();
    for h in handles {
        assert!(h.await.unwrap().success);
    }
    assert_eq!(calls(&n), 1);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn the_breaker_opens_exactly_once_under_parallel_failures() {
    let (tool, n) = Scripted::new("down", |_, _| err(ErrorKind::Unavailable));
    let ex = builder(vec![tool])
        .defaults(json!({"retry": {"max_attempts": 1}, "breaker": {"failure_threshold": 5, "open_ms": 600_000}}))
        .build()
        .unwrap();
    let handles: Vec<_> = (0..500)
        .map(|_| {
            let ex = ex.clone();
            tokio::spawn(async move { ex.call(ToolCall::new("down", json!({}))).await })
        })
        .collect();
    let mut open = 0;
    for h in handles {
        if h.await.unwrap().error.unwrap().kind == ErrorKind::CircuitOpen {
            open += 1;
        }
    }
    assert_eq!(ex.breaker_state("down"), Some(BreakerState::Open));
    // Calls admitted before the fifth failure was recorded still ran; everything
    // after was rejected without touching the tool.
    assert_eq!(open + calls(&n) as usize, 500);
    assert!(
        calls(&n) >= 5 && open > 0,
        "ran {} rejected {open}",
        calls(&n)
    );
}
