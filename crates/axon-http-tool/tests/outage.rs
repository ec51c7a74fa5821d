//! Outage amplification: an upstream that is 100 % down (answering 503, or
//! refusing connections) behind `http_request`, offered calls at a steady rate.
//! With the default policy the breaker opens on the threshold-th failure; with
//! the breaker off, the retry budget keeps the attempts that reach the upstream
//! within 1.1× the calls (naive retries would make it 3×).
//!
//! The offered load is `AXON_OUTAGE_CALLS_PER_SEC` (default 100) for
//! `AXON_OUTAGE_SECS` (CI: 10, one budget window; the figures in
//! docs/reliability.md ran 30). Real time, real sockets.

use std::sync::Arc;
use std::sync::atomic::{AtomicU32, Ordering};
use std::time::Duration;

use axon_core::{CallResult, ErrorKind, Executor, PolicyState, ToolCall, ToolRegistry};
use axon_http_tool::{HttpConfig, HttpRequest};
use axum::Router;
use axum::extract::State;
use axum::http::StatusCode;
use axum::routing::get;
use serde_json::{Value, json};

fn env(name: &str, default: u64) -> u64 {
    std::env::var(name)
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

/// An upstream that is down: every request is a 503, counted.
async fn down() -> (String, Arc<AtomicU32>) {
    let hits = Arc::new(AtomicU32::new(0));
    let app = Router::new()
        .route(
            "/",
            get(|State(h): State<Arc<AtomicU32>>| async move {
                h.fetch_add(1, Ordering::SeqCst);
                (StatusCode::SERVICE_UNAVAILABLE, "down")
            }),
        )
        .with_state(hits.clone());
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    tokio::spawn(async move { axum::serve(listener, app).await });
    (format!("http://{addr}/"), hits)
}

/// A loopback address nothing listens on.
async fn refusing() -> String {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = listener.local_addr().unwrap();
    drop(listener);
    format!("http://{addr}/")
}

fn executor(defaults: Value) -> Executor {
    let mut registry = ToolRegistry::new();
    registry
        .register(HttpRequest::new(HttpConfig::default()).unwrap())
        .unwrap();
    Executor::builder(registry)
        .policy_state(PolicyState::new())
        .defaults(defaults)
        .build()
        .unwrap()
}

/// Offer calls to `url` at the configured rate; every result.
async fn offer(ex: &Executor, url: &str) -> Vec<CallResult> {
    let rate = env("AXON_OUTAGE_CALLS_PER_SEC", 100);
    let secs = env("AXON_OUTAGE_SECS", 10);
    let mut tick = tokio::time::interval(Duration::from_secs(1) / rate as u32);
    let mut calls = Vec::new();
    for _ in 0..rate * secs {
        tick.tick().await;
        let (ex, url) = (ex.clone(), url.to_string());
        calls.push(tokio::spawn(async move {
            ex.call(ToolCall::new("http_request", json!({"url": url})))
                .await
        }));
    }
    let mut results = Vec::new();
    for c in calls {
        results.push(c.await.unwrap());
    }
    results
}

fn attempts(results: &[CallResult]) -> u32 {
    results.iter().map(|r| r.attempts).sum()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn with_the_breaker_off_the_budget_keeps_attempts_within_a_tenth() {
    let (url, hits) = down().await;
    let no_breaker = json!({"breaker": {"failure_threshold": 0}});
    let ex = executor(no_breaker.clone());
    let results = offer(&ex, &url).await;
    assert!(results.iter().all(|r| !r.success));
    let ratio = f64::from(hits.load(Ordering::SeqCst)) / results.len() as f64;
    eprintln!(
        "503 upstream, breaker off: {} calls, {} attempts reached it: {ratio:.3}×",
        results.len(),
        hits.load(Ordering::SeqCst)
    );
    assert!(ratio <= 1.11, "attempts / calls = {ratio:.3}");
    assert!(ratio > 1.0, "retries happen within the budget: {ratio:.3}");
    assert_eq!(
        u32::try_from(results.len()).unwrap()
            + results
                .iter()
                .map(|r| r.retry_reasons.len() as u32)
                .sum::<u32>(),
        hits.load(Ordering::SeqCst),
        "every attempt the results report reached the upstream, and no other"
    );

    // Refusing connections: the same bound, counted from the results.
    let ex = executor(no_breaker);
    let results = offer(&ex, &refusing().await).await;
    assert!(
        results
            .iter()
            .all(|r| r.error.as_ref().unwrap().kind != ErrorKind::Failed)
    );
    let ratio = f64::from(attempts(&results)) / results.len() as f64;
    eprintln!("refusing upstream, breaker off: {ratio:.3}×");
    assert!(ratio <= 1.11, "attempts / calls = {ratio:.3}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn with_the_default_policy_the_breaker_opens_on_the_threshold_th_failure() {
    let (url, hits) = down().await;
    let ex = executor(json!({}));
    let results = offer(&ex, &url).await;
    let reached = hits.load(Ordering::SeqCst);
    let refused = results
        .iter()
        .filter(|r| {
            r.error
                .as_ref()
                .is_some_and(|e| e.kind == ErrorKind::CircuitOpen)
        })
        .count();
    eprintln!(
        "503 upstream, default policy: {} calls, {reached} reached it ({:.3}×), {refused} refused by the open breaker",
        results.len(),
        f64::from(reached) / results.len() as f64
    );
    // Threshold 5: the 5th failure opens it; an attempt already past the
    // breaker when it opened may still land.
    assert!(
        (5..=7).contains(&reached),
        "{reached} attempts reached the upstream"
    );
    assert!(
        refused >= results.len() - 10,
        "{refused} of {} refused",
        results.len()
    );
}

/// An upstream that answers.
async fn healthy() -> String {
    let app = Router::new().route("/", get(|| async { "up" }));
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    tokio::spawn(async move { axum::serve(listener, app).await });
    format!("http://{addr}/")
}

/// The attack of issue 37: five calls to a dead port opened `http_request`'s
/// one breaker, and a healthy server was then refused for 30 s. The breaker
/// is the origin's now.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_dead_port_does_not_shut_a_healthy_server() {
    let ex = executor(json!({"retry": {"max_attempts": 1}}));
    let (dead, ok) = (refusing().await, healthy().await);
    let call = |url: &str| ex.call(ToolCall::new("http_request", json!({ "url": url })));
    for _ in 0..5 {
        let r = call(&dead).await;
        assert_eq!(r.error.unwrap().kind, ErrorKind::Unavailable);
    }
    let r = call(&dead).await;
    let e = r.error.unwrap();
    assert_eq!(e.kind, ErrorKind::CircuitOpen);
    let origin = dead.trim_end_matches('/');
    assert!(
        e.message
            .starts_with(&format!("circuit open for {origin} (http_request)")),
        "{}",
        e.message
    );
    let r = call(&ok).await;
    assert!(r.success, "the healthy server is reached: {r:?}");
    assert_eq!(
        r.provenance.dependency.as_deref(),
        Some(ok.trim_end_matches('/'))
    );
}
