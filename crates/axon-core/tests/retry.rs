//! Retries through the whole pipeline: what is retried, how long it waits, and
//! what stops it.

mod support;

use std::sync::Arc;
use std::time::Duration;

use axon_core::{Annotations, ErrorKind, ToolCall, ToolError};
use serde_json::json;
use support::*;
use tokio::time::Instant;

#[tokio::test(start_paused = true)]
async fn a_transient_error_is_retried_with_the_documented_delays() {
    let (tool, n) = Scripted::new("t", |i, _| {
        if i < 3 {
            err(ErrorKind::Transient)
        } else {
            ok(json!(i))
        }
    });
    let ex = executor(vec![tool]);
    let start = Instant::now();
    let r = ex.call(ToolCall::new("t", json!({}))).await;
    assert!(r.success, "{r:?}");
    assert_eq!(r.data, json!(3));
    assert_eq!(r.attempts, 3);
    assert_eq!(calls(&n), 3);
    assert_eq!(r.retry_delays_ms, [100, 200]);
    assert_eq!(
        r.retry_reasons,
        ["transient: scripted failure", "transient: scripted failure"]
    );
    assert_eq!(start.elapsed(), Duration::from_millis(300));
}

#[tokio::test(start_paused = true)]
async fn a_terminal_error_is_not_retried() {
    let (tool, n) = Scripted::new("t", |_, _| err(ErrorKind::Failed));
    let r = executor(vec![tool])
        .call(ToolCall::new("t", json!({})))
        .await;
    assert!(!r.success);
    assert_eq!(r.attempts, 1);
    assert_eq!(calls(&n), 1);
    let e = r.error.unwrap();
    assert_eq!((e.kind, e.retryable), (ErrorKind::Failed, false));
}

#[tokio::test(start_paused = true)]
async fn a_timeout_is_retried_and_counted_by_the_breaker() {
    let (tool, n) = Scripted::new("t", |i, _| {
        if i == 1 {
            after(10_000, json!(0))
        } else {
            ok(json!(i))
        }
    });
    let ex = builder(vec![tool])
        .defaults(json!({"timeout_ms": 100, "breaker": {"failure_threshold": 2}}))
        .build()
        .unwrap();
    let r = ex.call(ToolCall::new("t", json!({}))).await;
    assert!(r.success);
    assert_eq!(r.attempts, 2);
    assert_eq!(r.retry_reasons, ["timeout: exceeded 100 ms"]);
    assert_eq!(calls(&n), 2);
    // The timeout counted: one more failure opens a breaker whose threshold is 2.
    let (tool, _) = Scripted::new("u", |_, _| after(10_000, json!(0)));
    let ex = builder(vec![tool])
        .defaults(json!({"timeout_ms": 100, "retry": {"max_attempts": 2}, "breaker": {"failure_threshold": 2}}))
        .build()
        .unwrap();
    let r = ex.call(ToolCall::new("u", json!({}))).await;
    assert_eq!(r.error.unwrap().kind, ErrorKind::Timeout);
    assert_eq!(
        ex.breaker_state("u"),
        Some(axon_core::policy::BreakerState::Open)
    );
}

#[tokio::test(start_paused = true)]
async fn a_non_idempotent_tool_is_not_retried_after_a_timeout() {
    let (tool, n) = Scripted::new("pay", |_, _| after(10_000, json!(0)));
    let tool = tool.annotations(Annotations {
        idempotent: false,
        ..Annotations::default()
    });
    let ex = builder(vec![tool])
        .defaults(json!({"timeout_ms": 100}))
        .build()
        .unwrap();
    let r = ex.call(ToolCall::new("pay", json!({}))).await;
    assert_eq!(r.error.unwrap().kind, ErrorKind::Timeout);
    assert_eq!((r.attempts, calls(&n)), (1, 1));
}

#[tokio::test(start_paused = true)]
async fn a_non_idempotent_tool_is_retried_when_upstream_was_unavailable() {
    let (tool, n) = Scripted::new("pay", |i, _| {
        if i == 1 {
            err(ErrorKind::Unavailable)
        } else {
            ok(json!("paid"))
        }
    });
    let tool = tool.annotations(Annotations {
        destructive: true,
        ..Annotations::default()
    });
    let r = executor(vec![tool])
        .call(ToolCall::new("pay", json!({})))
        .await;
    assert!(r.success);
    assert_eq!(calls(&n), 2);
}

#[tokio::test(start_paused = true)]
async fn a_non_idempotent_tool_that_failed_before_acting_is_retried() {
    // A click whose button never became clickable clicked nothing: safe to retry.
    let (tool, n) = Scripted::new("click", |i, _| {
        if i == 1 {
            Box::pin(async { Err(ToolError::transient("button covered").before_acting()) })
        } else if i == 2 {
            err(ErrorKind::Transient)
        } else {
            ok(json!("clicked"))
        }
    });
    let tool = tool.annotations(Annotations {
        idempotent: false,
        ..Annotations::default()
    });
    let r = executor(vec![tool])
        .call(ToolCall::new("click", json!({})))
        .await;
    // The second failure may have clicked: it stops there.
    assert_eq!(r.error.unwrap().kind, ErrorKind::Transient);
    assert_eq!((r.attempts, calls(&n)), (2, 2));
}

#[tokio::test(start_paused = true)]
async fn retry_non_idempotent_overrides_the_annotation() {
    let (tool, n) = Scripted::new("pay", |i, _| {
        if i == 1 {
            err(ErrorKind::Transient)
        } else {
            ok(json!("paid"))
        }
    });
    let tool = tool.annotations(Annotations {
        idempotent: false,
        ..Annotations::default()
    });
    let ex = executor(vec![tool]);
    let r = ex
        .call(
            ToolCall::new("pay", json!({}))
                .policy(json!({"retry": {"retry_non_idempotent": true}})),
        )
        .await;
    assert!(r.success);
    assert_eq!(calls(&n), 2);
}

#[tokio::test(start_paused = true)]
async fn retry_after_is_honoured() {
    let (tool, _) = Scripted::new("api", |i, _| {
        if i == 1 {
            Box::pin(async {
                Err(ToolError::rate_limited(
                    "429",
                    Some(Duration::from_millis(2_500)),
                ))
            })
        } else {
            ok(json!("ok"))
        }
    });
    let ex = executor(vec![tool]);
    let start = Instant::now();
    let r = ex
        .call(ToolCall::new("api", json!({})).policy(json!({"retry": {"max_delay_ms": 5_000}})))
        .await;
    assert!(r.success, "{r:?}");
    assert_eq!(r.retry_delays_ms, [2_500]);
    assert_eq!(start.elapsed(), Duration::from_millis(2_500));
}

#[tokio::test(start_paused = true)]
async fn a_retry_after_beyond_max_delay_is_answered_at_once() {
    let (tool, n) = Scripted::new("api", |_, _| {
        Box::pin(async {
            Err(ToolError::rate_limited(
                "429",
                Some(Duration::from_secs(86_400)),
            ))
        })
    });
    let ex = executor(vec![tool]);
    let start = Instant::now();
    let r = ex.call(ToolCall::new("api", json!({}))).await;
    let e = r.error.unwrap();
    assert_eq!(e.kind, ErrorKind::RateLimited);
    assert_eq!(
        e.retry_after_ms,
        Some(86_400_000),
        "the caller can schedule it"
    );
    assert!(e.message.contains("retry.max_delay_ms"), "{}", e.message);
    assert_eq!(calls(&n), 1);
    assert_eq!(start.elapsed(), Duration::ZERO, "no waiting a day");
}

#[tokio::test(start_paused = true)]
async fn the_retry_budget_keeps_amplification_near_one_tenth_when_everything_fails() {
    let (tool, n) = Scripted::new("down", |_, _| err(ErrorKind::Unavailable));
    let ex = builder(vec![tool])
        .defaults(json!({
            "retry": {"max_attempts": 3, "budget_ratio": 0.1, "budget_min_per_sec": 0, "initial_delay_ms": 1},
            "breaker": {"failure_threshold": 0}
        }))
        .build()
        .unwrap();
    let total_calls = 2_000;
    let results = ex
        .call_many(
            (0..total_calls)
                .map(|_| ToolCall::new("down", json!({})))
                .collect(),
            Some(50),
        )
        .await;
    assert!(results.iter().all(|r| !r.success));
    let amplification = f64::from(calls(&n)) / f64::from(total_calls);
    assert!(amplification <= 1.1 + 1e-9, "{amplification}");
    // All at once, the burst spends one second of budget (20 retries at a tenth
    // of 200 calls/s), not the whole window's.
    assert!(
        amplification > 1.0 && amplification < 1.02,
        "the budget allows a second's worth of retries: {amplification}"
    );
    let stopped = results
        .iter()
        .filter(|r| r.error.as_ref().unwrap().kind == ErrorKind::BudgetExhausted)
        .count();
    assert!(
        stopped > 1_000,
        "most calls end on the spent budget: {stopped}"
    );
}

#[tokio::test(start_paused = true)]
async fn the_deadline_stops_retries_that_would_overrun_it() {
    let (tool, n) = Scripted::new("t", |_, _| err(ErrorKind::Transient));
    let ex = builder(vec![tool])
        .defaults(json!({"deadline_ms": 250, "retry": {"max_attempts": 10}}))
        .build()
        .unwrap();
    let r = ex.call(ToolCall::new("t", json!({}))).await;
    let e = r.error.unwrap();
    assert_eq!(
        (e.kind, e.code.as_deref()),
        (ErrorKind::BudgetExhausted, Some("deadline"))
    );
    assert!(e.message.contains("last error: transient"), "{}", e.message);
    // Delays 100 then 200: the second would end at 300 ms > 250 ms.
    assert_eq!(calls(&n), 2);
    assert_eq!(r.retry_delays_ms, [100]);
}

#[tokio::test(start_paused = true)]
async fn the_deadline_shortens_the_last_attempt() {
    let (tool, _) = Scripted::new("t", |_, _| after(10_000, json!(0)));
    let ex = builder(vec![tool])
        .defaults(json!({"deadline_ms": 150, "timeout_ms": 1_000, "retry": {"max_attempts": 1}}))
        .build()
        .unwrap();
    let start = Instant::now();
    let r = ex.call(ToolCall::new("t", json!({}))).await;
    assert_eq!(r.error.unwrap().message, "exceeded 150 ms");
    assert_eq!(start.elapsed(), Duration::from_millis(150));
}

/// Issue 59: retries after a timeout the caller chose itself (`timeout_ms`
/// in its own policy) were paid from the retry budget every caller of the
/// dependency shares: one client's tight timeouts left the others no
/// retries. They are the caller's own now (still bounded by its
/// `max_attempts`).
#[tokio::test(start_paused = true)]
async fn retries_after_a_timeout_the_caller_chose_leave_the_shared_budget_alone() {
    let failed_once = Arc::new(std::sync::atomic::AtomicBool::new(false));
    let failed = failed_once.clone();
    let (tool, _) = Scripted::new("api", move |_, args| {
        if args["slow"] == true {
            after(50, json!({}))
        } else if !failed.swap(true, std::sync::atomic::Ordering::SeqCst) {
            err(ErrorKind::Transient)
        } else {
            ok(json!({"ok": true}))
        }
    });
    let ex = builder(vec![tool])
        .defaults(json!({
            "retry": {"max_attempts": 3, "budget_ratio": 0.1, "budget_min_per_sec": 0, "initial_delay_ms": 1},
            "breaker": {"failure_threshold": 0}
        }))
        .build()
        .unwrap();
    for _ in 0..20 {
        let tight = ToolCall::new("api", json!({"slow": true})).policy(json!({"timeout_ms": 5}));
        let r = ex.call(tight).await;
        let e = r.error.unwrap();
        assert_eq!((e.kind, r.attempts), (ErrorKind::Timeout, 3), "{e:?}");
    }
    let r = ex.call(ToolCall::new("api", json!({}))).await;
    assert!(
        r.success,
        "another caller's retry was refused: {:?}",
        r.error
    );
    assert_eq!(r.attempts, 2);
}

/// A tool is told how long its attempt has left (`ToolContext::remaining`):
/// the attempt's timeout, or less when the call's deadline comes first, so
/// that it need not start work it cannot finish.
#[tokio::test(start_paused = true)]
async fn a_tool_is_told_how_long_its_attempt_has_left() {
    let mut registry = axon_core::ToolRegistry::new();
    registry
        .register(axon_core::tool_fn(
            "left",
            "Says how long it has",
            |_: serde_json::Value, ctx: axon_core::ToolContext| async move {
                tokio::time::sleep(Duration::from_millis(100)).await;
                Ok::<_, ToolError>(json!(ctx.remaining().map(|d| d.as_millis() as u64)))
            },
        ))
        .unwrap();
    let ex = axon_core::Executor::builder(registry).build().unwrap();
    let r = ex
        .call(ToolCall::new("left", json!({})).policy(json!({"timeout_ms": 2000})))
        .await;
    assert_eq!(r.data, json!(1900), "{r:?}");
    let r = ex
        .call(
            ToolCall::new("left", json!({}))
                .policy(json!({"timeout_ms": 2000, "deadline_ms": 500})),
        )
        .await;
    assert_eq!(r.data, json!(400), "the call's deadline is nearer: {r:?}");
    let detached = axon_core::ToolContext::detached("c");
    assert_eq!(detached.remaining(), None, "outside an executor: no bound");
}
