//! Stateful policies kept per dependency (policy/dependency.rs): one dead host, one
//! down server, one bad region never takes down the others.

mod support;

use std::time::Duration;

use axon_core::policy::BreakerState;
use axon_core::{Dependency, ErrorKind, ToolCall};
use serde_json::{Value, json};
use support::*;

fn quick_breaker() -> Value {
    json!({
        "retry": {"max_attempts": 1},
        "breaker": {"failure_threshold": 5, "window_ms": 10_000, "open_ms": 30_000}
    })
}

/// Fails for every URL on `dead.example`, answers for the rest.
fn fetcher(name: &str) -> Scripted {
    let (tool, _) = Scripted::new(name, |_, args| {
        let url = args["url"].as_str().unwrap_or_default().to_string();
        if url.contains("dead.example") {
            err(ErrorKind::Unavailable)
        } else {
            ok(json!({"url": url}))
        }
    });
    tool.dependency(Dependency::Origin)
}

async fn fetch(ex: &axon_core::Executor, tool: &str, url: &str) -> axon_core::CallResult {
    ex.call(ToolCall::new(tool, json!({ "url": url }))).await
}

#[tokio::test(start_paused = true)]
async fn a_dead_host_does_not_open_the_breaker_of_another_host() {
    let ex = builder(vec![fetcher("fetch")])
        .defaults(quick_breaker())
        .build()
        .unwrap();
    for _ in 0..5 {
        let r = fetch(&ex, "fetch", "http://dead.example:8080/a").await;
        assert_eq!(r.error.unwrap().kind, ErrorKind::Unavailable);
    }
    // The dead origin is open, and says so by name.
    let r = fetch(&ex, "fetch", "http://DEAD.example:8080/other?x=1").await;
    let e = r.error.unwrap();
    assert_eq!(e.kind, ErrorKind::CircuitOpen);
    assert!(
        e.message
            .starts_with("circuit open for http://dead.example:8080 (fetch)"),
        "{}",
        e.message
    );
    assert_eq!(
        r.provenance.dependency.as_deref(),
        Some("http://dead.example:8080")
    );
    // Another host, and the same host on another port, are not.
    let r = fetch(&ex, "fetch", "https://alive.example/x").await;
    assert!(r.success, "{:?}", r.error);
    assert_eq!(
        r.provenance.dependency.as_deref(),
        Some("https://alive.example")
    );
    // What stats and plans read of the tool still hears every origin.
    assert!(ex.observed_p50_ms("fetch").is_some());
    let r = fetch(&ex, "fetch", "http://dead.example:8081/").await;
    assert_eq!(r.error.unwrap().kind, ErrorKind::Unavailable, "tried");
    // The tool's own breaker never saw a failure.
    assert_eq!(ex.breaker_state("fetch"), Some(BreakerState::Closed));
    let open = ex.open_keys("fetch");
    assert_eq!(open.len(), 1, "{open:?}");
    assert_eq!(
        (open[0].key.as_str(), open[0].state, open[0].retry_after_ms),
        ("http://dead.example:8080", BreakerState::Open, Some(30_000))
    );
    // Reset by key.
    assert!(ex.reset_key("fetch", "http://dead.example:8080"));
    assert!(ex.open_keys("fetch").is_empty());
    assert!(!ex.reset_key("fetch", "http://never.example"));
}

#[tokio::test(start_paused = true)]
async fn the_tool_key_keeps_one_breaker_as_before() {
    let ex = builder(vec![fetcher("fetch")])
        .defaults(quick_breaker())
        .tool_policy("fetch", json!({"key": "tool"}))
        .build()
        .unwrap();
    for _ in 0..5 {
        fetch(&ex, "fetch", "http://dead.example/").await;
    }
    let r = fetch(&ex, "fetch", "https://alive.example/").await;
    let e = r.error.unwrap();
    assert_eq!(e.kind, ErrorKind::CircuitOpen);
    assert!(
        e.message.starts_with("circuit open for fetch;"),
        "{}",
        e.message
    );
    assert_eq!(r.provenance.dependency, None);
}

#[tokio::test(start_paused = true)]
async fn one_down_server_opens_one_breaker_for_all_its_tools() {
    let down = |name: &str| {
        let (tool, calls) = Scripted::new(name, |_, _| err(ErrorKind::Unavailable));
        (
            tool.dependency(Dependency::Server("everything".into())),
            calls,
        )
    };
    let (a, a_calls) = down("everything__echo");
    let (b, b_calls) = down("everything__add");
    let (other, _) = Scripted::new("other", |_, _| ok(json!(1)));
    let ex = builder(vec![
        a,
        b,
        other.dependency(Dependency::Server("s2".into())),
    ])
    .defaults(quick_breaker())
    .build()
    .unwrap();
    // Failures spread over the server's tools add up.
    for i in 0..5 {
        let tool = if i % 2 == 0 {
            "everything__echo"
        } else {
            "everything__add"
        };
        ex.call(ToolCall::new(tool, json!({}))).await;
    }
    let (a_before, b_before) = (calls(&a_calls), calls(&b_calls));
    for tool in ["everything__echo", "everything__add"] {
        let r = ex.call(ToolCall::new(tool, json!({}))).await;
        let e = r.error.unwrap();
        assert_eq!(e.kind, ErrorKind::CircuitOpen, "{tool}");
        assert!(e.message.contains("server:everything"), "{}", e.message);
        assert_eq!(
            r.provenance.dependency.as_deref(),
            Some("server:everything")
        );
    }
    assert_eq!(
        (calls(&a_calls), calls(&b_calls)),
        (a_before, b_before),
        "failed fast"
    );
    // Another server is untouched.
    assert!(ex.call(ToolCall::new("other", json!({}))).await.success);
}

#[tokio::test(start_paused = true)]
async fn a_template_key_keeps_one_state_per_value() {
    let (tool, _) = Scripted::new("regional", |_, args| {
        if args["region"] == "eu" {
            err(ErrorKind::Timeout)
        } else {
            ok(json!(1))
        }
    });
    let ex = builder(vec![tool])
        .defaults(quick_breaker())
        .tool_policy("regional", json!({"key": "${args.region}"}))
        .build()
        .unwrap();
    for _ in 0..5 {
        ex.call(ToolCall::new("regional", json!({"region": "eu"})))
            .await;
    }
    let eu = ex
        .call(ToolCall::new("regional", json!({"region": "eu"})))
        .await;
    assert_eq!(eu.error.unwrap().kind, ErrorKind::CircuitOpen);
    let us = ex
        .call(ToolCall::new("regional", json!({"region": "us"})))
        .await;
    assert!(us.success);
    assert_eq!(us.provenance.dependency.as_deref(), Some("us"));
}

#[tokio::test(start_paused = true)]
async fn a_key_is_tool_configuration_not_a_callers() {
    let ex = builder(vec![fetcher("fetch")]).build().unwrap();
    let r = ex
        .call(ToolCall {
            policy: Some(json!({"key": "tool"})),
            ..ToolCall::new("fetch", json!({"url": "http://a.example/"}))
        })
        .await;
    let e = r.error.unwrap();
    assert_eq!(e.kind, ErrorKind::InvalidArguments);
    assert!(e.message.contains("key"), "{}", e.message);
    let bad = builder(vec![fetcher("fetch")])
        .tool_policy("fetch", json!({"key": "hostname"}))
        .build()
        .err()
        .unwrap();
    assert!(bad.to_string().contains("key"), "{bad}");
}

#[tokio::test(start_paused = true)]
async fn per_origin_limits_hold_per_origin() {
    let ex = builder(vec![fetcher("fetch")])
        .tool_policy("fetch", json!({"limits": {"rate_per_sec": 1}}))
        .build()
        .unwrap();
    let start = tokio::time::Instant::now();
    // One a second per origin: a second origin does not queue behind the first.
    fetch(&ex, "fetch", "https://a.example/").await;
    fetch(&ex, "fetch", "https://b.example/").await;
    assert!(start.elapsed() < Duration::from_millis(10));
    fetch(&ex, "fetch", "https://a.example/").await;
    assert!(start.elapsed() >= Duration::from_millis(990));
}

#[tokio::test]
async fn the_key_space_is_bounded() {
    let ex = builder(vec![fetcher("fetch")]).build().unwrap();
    let n = axon_core::state::MAX_KEYS_PER_TOOL + 5_000;
    for i in 0..n {
        fetch(&ex, "fetch", &format!("http://h{i}.example/")).await;
    }
    let kept = ex.keys_kept("fetch");
    assert!(
        kept <= axon_core::state::MAX_KEYS_PER_TOOL,
        "{kept} keys kept after {n}"
    );
}

#[tokio::test(start_paused = true)]
async fn an_origin_has_a_policy_layer_of_its_own() {
    let ex = builder(vec![fetcher("fetch")])
        .origin_policy(
            "https://API.slow.example",
            json!({"limits": {"rate_per_sec": 1}, "timeout_ms": 50}),
        )
        .build()
        .unwrap();
    let start = tokio::time::Instant::now();
    for _ in 0..3 {
        fetch(&ex, "fetch", "https://fast.example/").await;
    }
    assert!(
        start.elapsed() < Duration::from_millis(10),
        "no limit there"
    );
    fetch(&ex, "fetch", "https://api.slow.example/a").await;
    fetch(&ex, "fetch", "https://api.slow.example/b").await;
    assert!(
        start.elapsed() >= Duration::from_millis(990),
        "one a second"
    );

    for bad in ["https://a.example/path", "not a url", "file:///etc"] {
        let err = builder(vec![fetcher("fetch")])
            .origin_policy(bad, json!({}))
            .build()
            .err()
            .unwrap();
        assert!(err.to_string().contains("origins."), "{err}");
    }
    let err = builder(vec![fetcher("fetch")])
        .origin_policy("https://a.example", json!({"retry": {"max_attempts": 0}}))
        .build()
        .err()
        .unwrap();
    assert!(
        err.to_string().contains("retry.max_attempts"),
        "names the key: {err}"
    );
}

#[tokio::test(start_paused = true)]
async fn a_server_has_a_policy_layer_for_all_its_tools() {
    let (a, _) = Scripted::new("s__a", |_, _| err(ErrorKind::Unavailable));
    let (b, b_calls) = Scripted::new("s__b", |_, _| err(ErrorKind::Unavailable));
    let server = || Dependency::Server("s".into());
    let ex = builder(vec![a.dependency(server()), b.dependency(server())])
        .server_policy(
            "s",
            json!({"retry": {"max_attempts": 1}, "breaker": {"failure_threshold": 3}}),
        )
        .tool_policy("s__b", json!({"retry": {"max_attempts": 2}}))
        .build()
        .unwrap();
    assert_eq!(ex.policy("s__a").unwrap().breaker.failure_threshold, 3);
    assert_eq!(ex.policy("s__a").unwrap().retry.max_attempts, 1);
    assert_eq!(
        ex.policy("s__b").unwrap().retry.max_attempts,
        2,
        "the tool's table wins"
    );
    ex.call(ToolCall::new("s__a", json!({}))).await;
    let r = ex.call(ToolCall::new("s__b", json!({}))).await;
    assert_eq!(r.attempts, 2);
    assert_eq!(calls(&b_calls), 2);
    let r = ex.call(ToolCall::new("s__a", json!({}))).await;
    assert_eq!(r.error.unwrap().kind, ErrorKind::CircuitOpen);
}

fn rss_kib() -> u64 {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| {
            s.lines()
                .find(|l| l.starts_with("VmRSS:"))
                .and_then(|l| l.split_whitespace().nth(1))
                .and_then(|n| n.parse().ok())
        })
        .unwrap_or(0)
}

/// The figure in docs/benchmarks.md ("Dependency keys"): RSS while one tool
/// is called for 10⁶ distinct hosts. Run with
/// `cargo test --release -p axon-core --test keys -- --ignored --nocapture`.
#[tokio::test]
#[ignore = "a measurement (about a minute); its figure is in docs/benchmarks.md"]
async fn a_scan_of_a_million_hosts_keeps_memory_bounded() {
    let ex = builder(vec![fetcher("fetch")])
        .history(std::sync::Arc::new(NoHistory))
        .build()
        .unwrap();
    let before = rss_kib();
    let mut at = Vec::new();
    for i in 0..1_000_000u64 {
        fetch(&ex, "fetch", &format!("http://h{i}.example/")).await;
        if [10_000, 100_000, 999_999].contains(&i) {
            at.push((i + 1, rss_kib(), ex.keys_kept("fetch")));
        }
    }
    println!("RSS before: {before} KiB");
    for (calls, rss, kept) in &at {
        println!("after {calls} hosts: RSS {rss} KiB, keys kept {kept}");
    }
    let (_, at_100k, _) = at[1];
    let (_, at_1m, kept) = at[2];
    assert!(kept <= axon_core::state::MAX_KEYS_PER_TOOL);
    assert!(
        at_1m < at_100k + 32 * 1024,
        "RSS grew from {at_100k} to {at_1m} KiB between 10^5 and 10^6 hosts"
    );
}

/// History that keeps nothing: the measurement is of the keys, not of
/// history (which has its own retention).
struct NoHistory;

#[async_trait::async_trait]
impl axon_core::HistoryStore for NoHistory {
    async fn record(&self, _: &axon_core::HistoryEntry) -> Result<(), axon_core::StoreError> {
        Ok(())
    }
    async fn by_correlation(
        &self,
        _: &str,
    ) -> Result<Vec<axon_core::HistoryEntry>, axon_core::StoreError> {
        Ok(Vec::new())
    }
    async fn by_call_id(
        &self,
        _: &str,
    ) -> Result<Option<axon_core::HistoryEntry>, axon_core::StoreError> {
        Ok(None)
    }
}
