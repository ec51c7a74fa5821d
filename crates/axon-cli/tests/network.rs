//! `[network]`'s rules against a real `axon serve` and a real Chromium
//! (issue 36): a denied port or address range is reached neither by
//! `http_request` (its URL, each redirect hop, a name that resolves into the
//! range) nor by any request the browser makes (a redirect, a frame); and
//! Chromium's own DevTools endpoint is reached by neither, whatever the
//! rules.

mod common;

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use common::served::{Served, call_as, spawn_app, spawn_app_on};
use serde_json::{Value, json};

/// The site to keep out: its secret, and how often it was asked for it.
async fn inner_site() -> (u16, Arc<AtomicUsize>) {
    let hits = Arc::new(AtomicUsize::new(0));
    let counted = hits.clone();
    let app = axum::Router::new().route(
        "/secret",
        axum::routing::get(move || {
            counted.fetch_add(1, Ordering::SeqCst);
            async { axum::response::Html("<p>TOP SECRET</p>") }
        }),
    );
    (spawn_app(app).await.port(), hits)
}

/// A site on 127.0.0.2 whose pages lead to `to`: a redirect and a frame.
async fn outer_site(to: String) -> String {
    use axum::response::{Html, Redirect};
    let frame = format!("<!doctype html><p>outer</p><iframe src='{to}'></iframe>");
    let app = axum::Router::new()
        .route(
            "/redirect",
            axum::routing::get(move || async move { Redirect::temporary(&to) }),
        )
        .route(
            "/frame",
            axum::routing::get(move || async move { Html(frame) }),
        );
    let addr = spawn_app_on("127.0.0.2", app).await;
    format!("http://127.0.0.2:{}", addr.port())
}

/// A call with a correlation id of its own; the call result.
async fn call(s: &Served, tool: &str, args: Value) -> Value {
    let body =
        json!({"args": args, "correlation_id": "net", "policy": {"retry": {"max_attempts": 1}}});
    call_as(s, "", tool, body).await
}

/// Every way out of one server, against `denied` (the inner site's URL as
/// the rules must refuse it); `why` is in each refusal.
async fn assert_kept_out(s: &Served, outer: &str, denied: &str, hits: &AtomicUsize, why: &str) {
    for url in [denied.to_string(), format!("{outer}/redirect")] {
        let r = call(s, "http_request", json!({"url": url})).await;
        assert_eq!(r["success"], false, "{url}: {r}");
        let message = r["error"]["message"].as_str().unwrap_or_default();
        assert!(
            message.contains(why) || message.contains("resolves to no address"),
            "{url}: {r}"
        );
    }
    let r = call(s, "browser_navigate", json!({"url": denied})).await;
    assert_eq!(r["error"]["code"], "navigation_blocked", "{r}");
    let r = call(
        s,
        "browser_navigate",
        json!({"url": format!("{outer}/redirect")}),
    )
    .await;
    assert_eq!(r["error"]["code"], "navigation_blocked", "{r}");
    let r = call(
        s,
        "browser_navigate",
        json!({"url": format!("{outer}/frame")}),
    )
    .await;
    assert_eq!(r["success"], true, "the outer site is allowed: {r}");
    tokio::time::sleep(std::time::Duration::from_millis(500)).await;
    let snap = call(s, "browser_snapshot", json!({})).await;
    assert!(
        snap["success"] == true && !snap.to_string().contains("TOP SECRET"),
        "{snap}"
    );
    assert_eq!(hits.load(Ordering::SeqCst), 0, "the inner site was reached");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_denied_port_is_reached_by_no_tool() {
    let (port, hits) = inner_site().await;
    let denied = format!("http://localhost:{port}/secret");
    let outer = outer_site(denied.clone()).await;
    let s = Served::start(&format!("[network]\ndeny_ports = [{port}]\n"));
    assert_kept_out(&s, &outer, &denied, &hits, "deny_ports").await;
    // The same server still reaches the outer site by http_request.
    let r = call(&s, "http_request", json!({"url": format!("{outer}/frame")})).await;
    assert_eq!(r["success"], true, "{r}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_name_that_resolves_into_a_denied_range_is_reached_by_no_tool() {
    let (port, hits) = inner_site().await;
    // `localhost` is not in the list; its addresses are.
    let denied = format!("http://localhost:{port}/secret");
    let outer = outer_site(denied.clone()).await;
    let s = Served::start("[network]\ndeny_hosts = [\"127.0.0.1/32\", \"::1\"]\n");
    assert_kept_out(&s, &outer, &denied, &hits, "deny_hosts").await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_allow_list_lets_through_only_what_it_names() {
    let (port, hits) = inner_site().await;
    let denied = format!("http://localhost:{port}/secret");
    let outer = outer_site(denied.clone()).await;
    let s = Served::start("[network]\nallow_hosts = [\"127.0.0.2\"]\n");
    assert_kept_out(&s, &outer, &denied, &hits, "allow_hosts").await;
}

#[tokio::test]
async fn a_bad_rule_names_its_list_and_entry() {
    let dir = std::env::temp_dir().join(format!("axon-network-{}", ulid::Ulid::new()));
    std::fs::create_dir_all(&dir).unwrap();
    let config = dir.join("axon.toml");
    std::fs::write(&config, "[network]\ndeny_hosts = [\"10.0.0.0/33\"]\n").unwrap();
    let out = axon_testkit::command(env!("CARGO_BIN_EXE_axon"))
        .arg("--config")
        .arg(&config)
        .args(["config", "check"])
        .env_remove("AXON_CONFIG")
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("network.deny_hosts: \"10.0.0.0/33\""),
        "{stderr}"
    );
}

/// Chromium's DevTools endpoint lists every session's URL and opens `file:`
/// tabs (`PUT /json/new?file:///etc/passwd`): it answers whoever connects,
/// so no tool call reaches it, by any loopback name.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn chromiums_devtools_endpoint_is_reached_by_no_tool() {
    let s = Served::start("");
    let r = call(&s, "browser_navigate", json!({"url": "about:blank"})).await;
    assert_eq!(r["success"], true, "{r}");
    let prefix = format!("axon-chromium-{}-", s.child.id());
    let profile = std::fs::read_dir(std::env::temp_dir())
        .unwrap()
        .filter_map(Result::ok)
        .find(|e| e.file_name().to_string_lossy().starts_with(&prefix))
        .expect("the server's Chromium profile")
        .path();
    let active = std::fs::read_to_string(profile.join("DevToolsActivePort")).unwrap();
    let port = active.lines().next().unwrap().to_string();
    // It is there, and answers a direct request.
    let direct = common::served::client()
        .get(format!("http://127.0.0.1:{port}/json/version"))
        .send()
        .await
        .unwrap();
    assert!(direct.status().is_success(), "{direct:?}");
    for (method, url) in [
        ("GET", format!("http://127.0.0.1:{port}/json/list")),
        (
            "PUT",
            format!("http://localhost:{port}/json/new?file:///etc/passwd"),
        ),
    ] {
        let r = call(&s, "http_request", json!({"method": method, "url": url})).await;
        assert_eq!(r["success"], false, "{url}: {r}");
        let message = r["error"]["message"].as_str().unwrap_or_default();
        assert!(message.contains("never reached"), "{url}: {r}");
    }
    let url = format!("http://127.0.0.1:{port}/json/list");
    let r = call(&s, "browser_navigate", json!({"url": url})).await;
    assert_eq!(r["error"]["code"], "navigation_blocked", "{r}");
}

/// Issue 37 against a real server: a dead origin opens its own breaker (with
/// the threshold of its `[origins]` layer), named in the error and listed by
/// `/v1/breakers` and `/v1/tools/http_request`; a healthy server is still
/// reached; `reset?key=` closes it.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_dead_origin_opens_its_own_breaker_listed_and_reset_by_key() {
    let dead_port = {
        let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        l.local_addr().unwrap().port()
    };
    let dead = format!("http://127.0.0.1:{dead_port}");
    let healthy =
        spawn_app(axum::Router::new().route("/", axum::routing::get(|| async { "up" }))).await;
    let s = Served::start(&format!(
        "[origins.\"{dead}\"]\nbreaker = {{ failure_threshold = 2 }}\n"
    ));
    for _ in 0..2 {
        let r = call(&s, "http_request", json!({"url": format!("{dead}/x")})).await;
        assert_eq!(r["error"]["kind"], "unavailable", "{r}");
    }
    let r = call(&s, "http_request", json!({"url": format!("{dead}/y")})).await;
    assert_eq!(r["error"]["kind"], "circuit_open", "{r}");
    let message = r["error"]["message"].as_str().unwrap();
    assert!(
        message.starts_with(&format!("circuit open for {dead} (http_request)")),
        "{message}"
    );
    assert_eq!(r["provenance"]["dependency"], dead.as_str());
    let r = call(
        &s,
        "http_request",
        json!({"url": format!("http://{healthy}/")}),
    )
    .await;
    assert_eq!(r["success"], true, "{r}");

    let http = common::served::client();
    let breakers = s.get_json("/v1/breakers").await;
    let entry = breakers["breakers"]
        .as_array()
        .unwrap()
        .iter()
        .find(|b| b["tool"] == "http_request")
        .unwrap()
        .clone();
    assert_eq!(entry["state"], "closed", "the tool's own: {entry}");
    assert_eq!(entry["keys"][0]["key"], dead.as_str(), "{entry}");
    assert_eq!(entry["keys"][0]["state"], "open", "{entry}");
    let tool = s.get_json("/v1/tools/http_request").await;
    assert_eq!(tool["breaker"]["keys"][0]["key"], dead.as_str());
    assert!(
        tool["breaker"]["keys"][0]["retry_after_ms"]
            .as_u64()
            .unwrap()
            <= 30_000
    );

    let reset = http
        .post(s.url("/v1/breakers/http_request/reset"))
        .query(&[("key", dead.as_str())])
        .send()
        .await
        .unwrap();
    assert_eq!(reset.status(), 200);
    let missing = http
        .post(s.url("/v1/breakers/http_request/reset"))
        .query(&[("key", "http://never.example")])
        .send()
        .await
        .unwrap();
    assert_eq!(missing.status(), 404);
    let r = call(&s, "http_request", json!({"url": format!("{dead}/z")})).await;
    assert_eq!(r["error"]["kind"], "unavailable", "tried again: {r}");
}
