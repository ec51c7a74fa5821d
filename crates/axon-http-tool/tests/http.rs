//! `http_request` through the real pipeline against a real HTTP server on loopback.

use std::sync::Arc;
use std::sync::atomic::{AtomicU32, Ordering};

use axon_core::{Executor, PolicyState, ToolCall, ToolRegistry};
use axon_http_tool::{HttpConfig, HttpRequest};
use axum::Router;
use axum::extract::State;
use axum::http::{HeaderMap, StatusCode};
use axum::response::{IntoResponse, Redirect};
use axum::routing::{any, get};
use serde_json::{Value, json};

#[derive(Default)]
struct Hits {
    flaky: AtomicU32,
    post503: AtomicU32,
    limited: AtomicU32,
    text: AtomicU32,
}

async fn upstream() -> (String, Arc<Hits>) {
    let hits = Arc::new(Hits::default());
    let app = Router::new()
        .route(
            "/json",
            get(
                |headers: HeaderMap, q: axum::extract::RawQuery| async move {
                    axum::Json(json!({
                        "query": q.0,
                        "auth": headers.get("authorization").and_then(|v| v.to_str().ok()),
                    }))
                },
            ),
        )
        .route(
            "/text",
            get(|State(h): State<Arc<Hits>>| async move {
                h.text.fetch_add(1, Ordering::SeqCst);
                "plain words"
            }),
        )
        .route(
            "/token",
            get(|| async {
                (
                    [("set-cookie", "sid=c00kie; Path=/")],
                    axum::Json(json!({"access_token": "t0ken", "expires_in": 3600})),
                )
            }),
        )
        .route(
            "/echo",
            any(|body: String| async move { ([("content-type", "application/json")], body) }),
        )
        .route(
            "/flaky",
            get(|State(h): State<Arc<Hits>>| async move {
                if h.flaky.fetch_add(1, Ordering::SeqCst) < 2 {
                    (StatusCode::SERVICE_UNAVAILABLE, "down").into_response()
                } else {
                    axum::Json(json!({"ok": true})).into_response()
                }
            }),
        )
        .route(
            "/post503",
            any(|State(h): State<Arc<Hits>>| async move {
                h.post503.fetch_add(1, Ordering::SeqCst);
                (StatusCode::SERVICE_UNAVAILABLE, "down")
            }),
        )
        .route(
            "/limited",
            get(|State(h): State<Arc<Hits>>| async move {
                h.limited.fetch_add(1, Ordering::SeqCst);
                (
                    StatusCode::TOO_MANY_REQUESTS,
                    [("retry-after", "7")],
                    "slow down",
                )
            }),
        )
        .route("/missing", get(|| async { (StatusCode::NOT_FOUND, "no") }))
        .route(
            "/away",
            get(|| async { Redirect::temporary("http://elsewhere.invalid/") }),
        )
        .with_state(hits.clone());
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    tokio::spawn(async move { axum::serve(listener, app).await });
    (format!("http://{addr}"), hits)
}

fn executor(config: HttpConfig) -> Executor {
    let mut registry = ToolRegistry::new();
    registry
        .register(HttpRequest::new(config).unwrap())
        .unwrap();
    // Each test its own breakers: they would otherwise open on each other's failures.
    Executor::builder(registry)
        .policy_state(PolicyState::new())
        .defaults(json!({"retry": {"max_attempts": 3, "initial_delay_ms": 1, "jitter": "none", "respect_retry_after": false}}))
        .build()
        .unwrap()
}

async fn call(executor: &Executor, args: Value) -> axon_core::CallResult {
    executor.call(ToolCall::new("http_request", args)).await
}

#[tokio::test]
async fn json_text_query_headers_and_bodies() {
    let (base, _) = upstream().await;
    let ex = executor(HttpConfig::default());
    let r = call(
        &ex,
        json!({"url": format!("{base}/json?a=1"), "query": {"b": 2, "c": true}, "headers": {"Authorization": "Bearer s3cret"}}),
    )
    .await;
    assert!(r.success, "{r:?}");
    assert_eq!(r.data["status"], 200);
    assert_eq!(r.data["json"]["query"], "a=1&b=2&c=true");
    assert_eq!(r.data["json"]["auth"], "Bearer s3cret");
    // The token never reaches history.
    let entry = ex.history().by_call_id(&r.call_id).await.unwrap().unwrap();
    assert_eq!(entry.args["headers"]["Authorization"], "***");

    // A token endpoint: the caller gets the token and the cookie (the next
    // step needs them); history keeps neither.
    let r = call(&ex, json!({"url": format!("{base}/token")})).await;
    assert_eq!(r.data["json"]["access_token"], "t0ken");
    assert_eq!(r.data["headers"]["set-cookie"], "sid=c00kie; Path=/");
    let entry = ex.history().by_call_id(&r.call_id).await.unwrap().unwrap();
    assert_eq!(entry.result.data["json"]["access_token"], "***");
    assert_eq!(entry.result.data["json"]["expires_in"], 3600);
    assert_eq!(entry.result.data["headers"]["set-cookie"], "***");

    let r = call(&ex, json!({"url": format!("{base}/text")})).await;
    assert_eq!(r.data["text"], "plain words");
    assert!(r.data.get("json").is_none());

    let r = call(
        &ex,
        json!({"method": "POST", "url": format!("{base}/echo"), "json": {"n": [1, 2]}}),
    )
    .await;
    assert_eq!(r.data["json"], json!({"n": [1, 2]}));
}

#[tokio::test]
async fn five_hundreds_are_retried_for_get_but_not_for_post() {
    let (base, hits) = upstream().await;
    let ex = executor(HttpConfig::default());
    let r = call(&ex, json!({"url": format!("{base}/flaky")})).await;
    assert!(r.success, "{r:?}");
    assert_eq!(r.attempts, 3);
    assert!(
        r.retry_reasons[0].starts_with("transient: GET"),
        "{:?}",
        r.retry_reasons
    );
    assert!(
        r.retry_reasons[0].contains("/flaky"),
        "{:?}",
        r.retry_reasons
    );
    assert_eq!(hits.flaky.load(Ordering::SeqCst), 3);

    let r = call(
        &ex,
        json!({"method": "POST", "url": format!("{base}/post503")}),
    )
    .await;
    let e = r.error.unwrap();
    assert_eq!(e.kind, axon_core::ErrorKind::Transient);
    assert_eq!(e.code.as_deref(), Some("http_503"));
    assert_eq!(
        hits.post503.load(Ordering::SeqCst),
        1,
        "a POST that reached the server is not repeated"
    );
}

#[tokio::test]
async fn four_twenty_nine_is_rate_limited_with_retry_after_and_4xx_fails() {
    let (base, hits) = upstream().await;
    let ex = executor(HttpConfig::default());
    let r = call(&ex, json!({"url": format!("{base}/limited")})).await;
    let e = r.error.unwrap();
    assert_eq!(e.kind, axon_core::ErrorKind::RateLimited);
    assert_eq!(e.retry_after_ms, Some(7000));
    assert_eq!(hits.limited.load(Ordering::SeqCst), 3);

    let r = call(&ex, json!({"url": format!("{base}/missing")})).await;
    let e = r.error.unwrap();
    assert_eq!(e.kind, axon_core::ErrorKind::Failed);
    assert_eq!(e.code.as_deref(), Some("http_404"));
    assert_eq!(r.attempts, 1);
}

#[tokio::test]
async fn refused_connections_are_unavailable_and_bad_urls_are_invalid() {
    let ex = executor(HttpConfig::default());
    // A port nothing listens on.
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    drop(listener);
    let r = call(
        &ex,
        json!({"url": format!("http://127.0.0.1:{port}/?api_key=abc")}),
    )
    .await;
    let e = r.error.unwrap();
    assert_eq!(e.kind, axon_core::ErrorKind::Unavailable);
    assert!(
        !e.message.contains("abc"),
        "queries stay out of messages: {}",
        e.message
    );

    let r = call(&ex, json!({"url": "not a url"})).await;
    assert_eq!(
        r.error.unwrap().kind,
        axon_core::ErrorKind::InvalidArguments
    );
    let r = call(&ex, json!({"url": "file:///etc/passwd"})).await;
    assert!(r.error.unwrap().message.contains("scheme"));
    let r = call(&ex, json!({"url": "http://x", "method": "BREW"})).await;
    assert_eq!(
        r.error.unwrap().kind,
        axon_core::ErrorKind::InvalidArguments
    );
}

#[tokio::test]
async fn the_allowlist_holds_for_requests_and_redirects() {
    let (base, _) = upstream().await;
    let ex = executor(HttpConfig {
        allow_hosts: vec!["127.0.0.1".into()],
        ..HttpConfig::default()
    });
    let r = call(&ex, json!({"url": "http://example.com/"})).await;
    let e = r.error.unwrap();
    assert_eq!(e.code.as_deref(), Some("host_not_allowed"));
    let r = call(&ex, json!({"url": format!("{base}/away")})).await;
    let e = r.error.unwrap();
    assert_eq!(e.code.as_deref(), Some("redirect_blocked"), "{e:?}");

    let small = executor(HttpConfig {
        max_body_bytes: 4,
        ..HttpConfig::default()
    });
    let r = call(&small, json!({"url": format!("{base}/text")})).await;
    assert_eq!(r.error.unwrap().code.as_deref(), Some("body_too_large"));
}

/// Issue 36: the cloud metadata address and Axon's own listeners (here a
/// server this process registers, as `axon serve` does) are never reached,
/// directly, by a name, or by a redirect.
#[tokio::test]
async fn no_call_reaches_metadata_addresses_or_axons_own_endpoints() {
    let (own, own_hits) = upstream().await;
    let port: u16 = own.rsplit(':').next().unwrap().parse().unwrap();
    let ex = executor(HttpConfig::default());
    // Before it is Axon's own, it answers.
    let r = call(&ex, json!({"url": format!("{own}/text")})).await;
    assert!(r.success, "{r:?}");
    axon_core::network::register_own_port(port);
    for url in [
        "http://169.254.169.254/latest/meta-data/".to_string(),
        "http://[fe80::1]/".to_string(),
        format!("{own}/text"),
        format!("http://localhost:{port}/text"),
        format!("http://[::ffff:127.0.0.1]:{port}/text"),
    ] {
        let r = call(&ex, json!({"url": url})).await;
        let e = r
            .error
            .as_ref()
            .unwrap_or_else(|| panic!("{url} was reached"));
        assert_eq!(e.code.as_deref(), Some("host_not_allowed"), "{url}: {e:?}");
        assert!(e.message.contains("never reached"), "{url}: {e:?}");
    }
    // A redirect from an ordinary server to the own one.
    let app = Router::new().route(
        "/hop",
        get(move || async move { Redirect::temporary(&format!("http://127.0.0.1:{port}/text")) }),
    );
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let hop = listener.local_addr().unwrap();
    tokio::spawn(async move { axum::serve(listener, app).await });
    let r = call(&ex, json!({"url": format!("http://{hop}/hop")})).await;
    let e = r.error.unwrap();
    assert_eq!(e.code.as_deref(), Some("redirect_blocked"), "{e:?}");
    // Issue 59: a redirect to the own port by a name that is not a loopback
    // name (the machine's own, which /etc/hosts maps to loopback) was
    // connected to: reqwest's redirect policy saw only the URL.
    let name = loopback_hostname().await;
    let app = Router::new().route(
        "/hop",
        get(move || async move { Redirect::temporary(&format!("http://{name}:{port}/text")) }),
    );
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let hop = listener.local_addr().unwrap();
    tokio::spawn(async move { axum::serve(listener, app).await });
    let before = own_hits.text.load(Ordering::SeqCst);
    let r = call(&ex, json!({"url": format!("http://{hop}/hop")})).await;
    assert_eq!(
        own_hits.text.load(Ordering::SeqCst),
        before,
        "the own endpoint was reached by name: {r:?}"
    );
    let e = r.error.unwrap();
    assert_eq!(e.code.as_deref(), Some("redirect_blocked"), "{e:?}");
}

/// The machine's host name, which must resolve to a loopback address (as
/// Debian's /etc/hosts has it) for the redirect-by-name test.
async fn loopback_hostname() -> String {
    let name = std::fs::read_to_string("/proc/sys/kernel/hostname")
        .expect("the host name")
        .trim()
        .to_string();
    let addrs: Vec<_> = tokio::net::lookup_host((name.as_str(), 80))
        .await
        .map(Iterator::collect)
        .unwrap_or_default();
    assert!(
        !addrs.is_empty()
            && addrs
                .iter()
                .all(|a: &std::net::SocketAddr| a.ip().is_loopback()),
        "this test needs the host name {name:?} to resolve to loopback only (/etc/hosts), not {addrs:?}"
    );
    name
}
