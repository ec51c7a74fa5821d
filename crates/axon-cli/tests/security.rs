//! Attacks on a real `axon serve` (issue 36), each seen to succeed before its
//! fix: a web page that drives the local server cross-site (a `no-cors`
//! fetch with `text/plain`, a form post), a rebound Host, `/mcp` from a
//! foreign Origin, a client that names a file outside the files directory, a
//! page behind `[browser] allow_hosts` that redirects, frames or scripts its
//! way to a denied host. The cross-site page runs in a real Chromium.

mod common;

use common::served::{Served, call_as, client, spawn_app};

use std::path::PathBuf;
use std::process::Stdio;
use std::sync::Arc;

use axon_browser::{BrowserConfig, Browsers};
use axon_core::{Executor, PolicyState, ToolCall, ToolRegistry};
use reqwest::StatusCode;
use serde_json::{Value, json};

/// An MCP `initialize` request from a client named `name`.
fn initialize_message(id: u32, name: &str) -> Value {
    json!({"jsonrpc": "2.0", "id": id, "method": "initialize", "params": {
        "protocolVersion": "2025-06-18", "capabilities": {},
        "clientInfo": {"name": name, "version": "1"}}})
}

/// The calls recorded under `correlation_id`.
async fn recorded(s: &Served, correlation_id: &str) -> usize {
    let r = client()
        .get(s.url(&format!("/v1/history/{correlation_id}")))
        .send()
        .await
        .unwrap();
    if r.status() == StatusCode::NOT_FOUND {
        return 0;
    }
    let body: Value = r.json().await.unwrap();
    body["calls"].as_array().map_or(0, Vec::len)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_simple_cross_site_request_cannot_call_a_tool() {
    let s = Served::start("");
    let http = client();
    let call = |origin: Option<&str>, kind: &str, id: &str| {
        let mut r = http
            .post(s.url("/v1/tools/echo/call"))
            .header("content-type", kind)
            .body(json!({"args": {"pwned": true}, "correlation_id": id}).to_string());
        if let Some(origin) = origin {
            r = r.header("origin", origin);
        }
        r.send()
    };
    // What a page's fetch(…, {mode: "no-cors"}) sends.
    let r = call(Some("http://evil.example"), "text/plain", "csrf-1")
        .await
        .unwrap();
    assert_eq!(r.status(), StatusCode::FORBIDDEN);
    let problem: Value = r.json().await.unwrap();
    assert_eq!(problem["title"], "origin not allowed", "{problem}");
    // Even with JSON, a foreign origin is refused; `null` too.
    for origin in ["http://evil.example", "null", "http://127.0.0.1:1"] {
        let r = call(Some(origin), "application/json", "csrf-2")
            .await
            .unwrap();
        assert_eq!(r.status(), StatusCode::FORBIDDEN, "{origin}");
    }
    // Without an Origin, a body a form could send is still no JSON.
    let r = call(None, "text/plain", "csrf-3").await.unwrap();
    assert_eq!(r.status(), StatusCode::UNSUPPORTED_MEDIA_TYPE);
    for id in ["csrf-1", "csrf-2", "csrf-3"] {
        assert_eq!(recorded(&s, id).await, 0, "{id} ran");
    }
    // The server's own origin (the dashboard) still works.
    let r = call(Some(&s.base), "application/json", "own")
        .await
        .unwrap();
    assert_eq!(r.status(), StatusCode::OK);
    assert_eq!(recorded(&s, "own").await, 1);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_rebound_host_and_a_foreign_origin_cannot_reach_the_api_or_mcp() {
    let s = Served::start("");
    let http = client();
    let initialize = initialize_message(1, "evil");
    let port = s.base.rsplit(':').next().unwrap().to_string();
    for path in ["/v1/tools", "/", "/healthz"] {
        let r = http
            .get(s.url(path))
            .header("host", format!("evil.example:{port}"))
            .send()
            .await
            .unwrap();
        assert_eq!(r.status(), StatusCode::FORBIDDEN, "{path}");
    }
    let mcp = |origin: &str| {
        http.post(s.url("/mcp"))
            .header("content-type", "application/json")
            .header("accept", "application/json, text/event-stream")
            .header("origin", origin)
            .body(initialize.to_string())
            .send()
    };
    assert_eq!(
        mcp("http://evil.example").await.unwrap().status(),
        StatusCode::FORBIDDEN
    );
    assert_eq!(mcp(&s.base).await.unwrap().status(), StatusCode::OK);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_client_cannot_make_the_server_write_a_file_outside_its_directory() {
    let s = Served::start("");
    let http = client();
    let target = std::env::temp_dir().join(format!("axon-written-{}", ulid::Ulid::new()));
    for path in [target.display().to_string(), "../../x.json".into()] {
        let r = http
            .post(s.url("/v1/tools/browser_session_save/call"))
            .json(&json!({"args": {"path": path}}))
            .send()
            .await
            .unwrap();
        assert_eq!(r.status(), StatusCode::BAD_REQUEST);
        let body: Value = r.json().await.unwrap();
        assert_eq!(
            body["result"]["error"]["code"], "invalid_file_name",
            "{body}"
        );
        assert_eq!(body["pointer"], "/args/path", "{body}");
    }
    assert!(!target.exists());
    let r = http
        .post(s.url("/v1/tools/browser_navigate/call"))
        .json(&json!({"args": {"url": "about:blank"}, "correlation_id": "saver"}))
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), StatusCode::OK);
    let r = http
        .post(s.url("/v1/tools/browser_session_save/call"))
        .json(&json!({"args": {"path": "mine.json"}, "correlation_id": "saver"}))
        .send()
        .await
        .unwrap();
    let body: Value = r.json().await.unwrap();
    assert_eq!(body["success"], true, "{body}");
    assert!(s.dir.join("files/mine.json").is_file());
}

/// Two sites on loopback: `evil` (its pages and where they point) and the
/// `axon serve` under attack.
async fn evil_site(target: String) -> String {
    use axum::response::Html;
    let page = format!(
        r#"<!doctype html><title>evil</title><p id=out>…</p>
<form id=f method=POST action="{target}/v1/tools/echo/call" enctype="text/plain">
<input name='{{"args":{{"form":1}},"correlation_id":"page-form","x":"' value='"}}'></form>
<script>
fetch("{target}/v1/tools/echo/call", {{method: "POST", mode: "no-cors",
  headers: {{"Content-Type": "text/plain"}},
  body: JSON.stringify({{args: {{pwned: true}}, correlation_id: "page-fetch"}})}})
  .finally(() => {{ document.getElementById("out").textContent = "sent";
                    document.getElementById("f").submit(); }});
</script>"#
    );
    let app = axum::Router::new().route("/", axum::routing::get(move || async move { Html(page) }));
    let addr = spawn_app(app).await;
    // `localhost` is another site than `127.0.0.1`.
    format!("http://localhost:{}", addr.port())
}

/// The browser tools on a real Chromium under `config`, one attempt a call.
fn browser(config: BrowserConfig) -> (Executor, Arc<Browsers>) {
    let browsers = Arc::new(Browsers::new(config));
    let mut registry = ToolRegistry::new();
    axon_browser::register(&mut registry, browsers.clone()).unwrap();
    let executor = Executor::builder(registry)
        .policy_state(PolicyState::new())
        .defaults(json!({"timeout_ms": 20000, "retry": {"max_attempts": 1}}))
        .build()
        .unwrap();
    (executor, browsers)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_page_in_a_real_browser_cannot_drive_the_local_server() {
    let s = Served::start("");
    let evil = evil_site(s.base.clone()).await;
    let (b, browsers) = browser(BrowserConfig::default());
    let r = b
        .call(ToolCall::new("browser_navigate", json!({"url": evil})).correlation_id("victim"))
        .await;
    assert!(r.success, "{r:?}");
    // The fetch has been answered and the form submitted (the page moves on).
    let r = b
        .call(
            ToolCall::new(
                "browser_wait_for_url_change",
                json!({"to": "/v1/tools/echo/call", "timeout_ms": 10000}),
            )
            .correlation_id("victim"),
        )
        .await;
    assert!(r.success, "the form never posted: {r:?}");
    let text = b
        .call(
            ToolCall::new("browser_get_text", json!({"selector": "body"})).correlation_id("victim"),
        )
        .await;
    assert!(
        text.data["text"]
            .as_str()
            .unwrap_or_default()
            .contains("origin not allowed"),
        "{text:?}"
    );
    assert_eq!(
        recorded(&s, "page-fetch").await,
        0,
        "the page's fetch ran a tool"
    );
    assert_eq!(
        recorded(&s, "page-form").await,
        0,
        "the page's form ran a tool"
    );
    browsers.shutdown().await;
}

/// A site whose pages lead elsewhere: a redirect, a frame, a script's
/// navigation, a popup and an image, each to `denied`.
async fn leaky_site(denied: String) -> String {
    use axum::response::{Html, Redirect};
    let frame = format!("<!doctype html><iframe id=f src='{denied}/secret'></iframe>");
    let script = format!("<!doctype html><script>location = '{denied}/secret'</script>");
    let popup = format!(
        "<!doctype html><a id=open target=_blank href='{denied}/secret'>open</a>\
         <img src='{denied}/secret?img'>"
    );
    let app = axum::Router::new()
        .route(
            "/redirect",
            axum::routing::get({
                let to = format!("{denied}/secret");
                move || async move { Redirect::temporary(&to) }
            }),
        )
        .route(
            "/frame",
            axum::routing::get(move || async move { Html(frame) }),
        )
        .route(
            "/script",
            axum::routing::get(move || async move { Html(script) }),
        )
        .route(
            "/popup",
            axum::routing::get(move || async move { Html(popup) }),
        );
    let addr = spawn_app(app).await;
    format!("http://127.0.0.1:{}", addr.port())
}

/// The denied host: its secret, and how often it was asked for it.
async fn secret_site() -> (String, Arc<std::sync::atomic::AtomicUsize>) {
    let hits = Arc::new(std::sync::atomic::AtomicUsize::new(0));
    let counted = hits.clone();
    let app = axum::Router::new().route(
        "/secret",
        axum::routing::get(move || {
            counted.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
            async { axum::response::Html("<p id=s>TOP SECRET</p>") }
        }),
    );
    let addr = spawn_app(app).await;
    // `localhost` is the denied name; 127.0.0.1 the allowed one.
    (format!("http://localhost:{}", addr.port()), hits)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_host_rules_hold_for_redirects_frames_and_scripts() {
    let (denied, hits) = secret_site().await;
    let site = leaky_site(denied).await;
    let (b, browsers) = browser(BrowserConfig {
        allow_hosts: vec!["127.0.0.1".into()],
        ..BrowserConfig::default()
    });
    let call = |tool: &str, args: Value| b.call(ToolCall::new(tool, args).correlation_id("leak"));
    let r = call(
        "browser_navigate",
        json!({"url": format!("{site}/redirect")}),
    )
    .await;
    let e = r
        .error
        .as_ref()
        .expect("a redirect to a denied host succeeded");
    assert_eq!(e.code.as_deref(), Some("navigation_blocked"), "{r:?}");
    for page in ["frame", "script"] {
        let r = call("browser_navigate", json!({"url": format!("{site}/{page}")})).await;
        let _ = r; // the script's own navigation may or may not have begun
        tokio::time::sleep(std::time::Duration::from_millis(500)).await;
        let snap = call("browser_snapshot", json!({})).await;
        assert!(
            !snap.data.to_string().contains("TOP SECRET"),
            "{page}: {snap:?}"
        );
    }
    // A new tab (a popup) and a subresource of an allowed page.
    let r = call("browser_navigate", json!({"url": format!("{site}/popup")})).await;
    assert!(r.success, "{r:?}");
    let r = call("browser_click", json!({"selector": "#open"})).await;
    assert!(r.success, "{r:?}");
    tokio::time::sleep(std::time::Duration::from_millis(1000)).await;
    assert_eq!(
        hits.load(std::sync::atomic::Ordering::SeqCst),
        0,
        "the denied host was reached"
    );
    browsers.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn http_request_cannot_step_around_the_servers_own_rules() {
    // `[mcp] tools` would hide the screenshot tool; a call to the server's own
    // API from inside must not reach it either.
    let s = Served::start("[mcp]\ntools = [\"http_request\", \"echo\"]\n");
    let port = s.base.rsplit(':').next().unwrap().to_string();
    for url in [
        s.url("/v1/tools/browser_take_screenshot/call"),
        format!("http://localhost:{port}/v1/tools"),
        "http://169.254.169.254/latest/meta-data/".to_string(),
    ] {
        let r = client()
            .post(s.url("/v1/tools/http_request/call"))
            .json(&json!({"args": {"method": "POST", "url": url, "json": {"args": {}}}}))
            .send()
            .await
            .unwrap();
        let body: Value = r.json().await.unwrap();
        let result = if body.get("result").is_some() {
            &body["result"]
        } else {
            &body
        };
        assert_eq!(result["success"], false, "{url}: {body}");
        assert!(
            result["error"]["message"]
                .as_str()
                .unwrap_or_default()
                .contains("never reached"),
            "{url}: {body}"
        );
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn secrets_under_other_names_and_in_urls_stay_out_of_history() {
    let s = Served::start("");
    let http = client();
    let secrets = [
        "pw-0001",
        "auth-0002",
        "bearer-0003",
        "sess-0004",
        "jwt-0005",
        "otp-0006",
        "qtok-0007",
        "qkey-0008",
        "upw-0009",
    ];
    let args = json!({
        "pwd": "pw-0001", "auth": "auth-0002", "bearer": "bearer-0003",
        "sessionid": "sess-0004", "id_jwt": "jwt-0005", "otp": "otp-0006",
        "link": "https://api.example/x?token=qtok-0007&key=qkey-0008&page=2",
        "proxy": "http://ada:upw-0009@proxy.example:3128/",
    });
    let r = http
        .post(s.url("/v1/tools/echo/call"))
        .json(&json!({"args": args, "correlation_id": "leaky"}))
        .send()
        .await
        .unwrap();
    let body: Value = r.json().await.unwrap();
    // The caller gets the real values back.
    assert_eq!(body["data"]["pwd"], "pw-0001", "{body}");
    let stored = http
        .get(s.url("/v1/history/leaky"))
        .send()
        .await
        .unwrap()
        .text()
        .await
        .unwrap();
    for secret in secrets {
        assert!(!stored.contains(secret), "{secret} in history: {stored}");
    }
    assert!(stored.contains("page=2"), "{stored}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn one_client_cannot_see_use_save_or_close_anothers_browser_session() {
    let config = "[server]\nauth_tokens = [\"admin-0000\"]\n\
        [[server.tokens]]\nenv = \"AXON_TEST_TOKEN_A\"\ntools = [\"browser_*\"]\n\
        [[server.tokens]]\nenv = \"AXON_TEST_TOKEN_B\"\ntools = [\"browser_*\"]\n";
    let s = Served::start_with(
        config,
        &[
            ("AXON_TEST_TOKEN_A", "tok-a-1111"),
            ("AXON_TEST_TOKEN_B", "tok-b-2222"),
        ],
    );
    let (a, b, admin) = ("tok-a-1111", "tok-b-2222", "admin-0000");
    let opened = call_as(&s, a, "browser_session_new", json!({"args": {}})).await;
    let handle = opened["data"]["session"].as_str().unwrap().to_string();
    let r = call_as(
        &s,
        a,
        "browser_navigate",
        json!({"args": {"session": handle, "url": "about:blank"}, "correlation_id": "run-of-a"}),
    )
    .await;
    assert_eq!(r["success"], true, "{r}");
    // A's default session too (its correlation id).
    let r = call_as(
        &s,
        a,
        "browser_navigate",
        json!({"args": {"url": "about:blank"}, "correlation_id": "run-of-a"}),
    )
    .await;
    assert_eq!(r["success"], true, "{r}");

    // B sees none of them, and cannot use, save or close them.
    let listed = call_as(&s, b, "browser_session_list", json!({"args": {}})).await;
    assert_eq!(listed["data"]["sessions"], json!([]), "{listed}");
    for (tool, args) in [
        ("browser_get_page_state", json!({"session": handle})),
        ("browser_session_save", json!({"session": handle})),
        (
            "browser_session_save",
            json!({"session": "run-of-a@token-1"}),
        ),
    ] {
        let r = call_as(&s, b, tool, json!({"args": args})).await;
        assert_eq!(r["error"]["code"], "unknown_session", "{tool}: {r}");
    }
    let r = call_as(
        &s,
        b,
        "browser_session_close",
        json!({"args": {"session": handle}}),
    )
    .await;
    assert_eq!(r["data"]["closed"], false, "{r}");
    // B's calls under A's correlation id get a default session of B's own
    // (issue 59: before, B was refused, and so could block A's id).
    let r = call_as(
        &s,
        b,
        "browser_get_page_state",
        json!({"args": {}, "correlation_id": "run-of-a"}),
    )
    .await;
    assert_eq!(r["success"], true, "{r}");
    let listed = call_as(&s, b, "browser_session_list", json!({"args": {}})).await;
    let names: Vec<&str> = listed["data"]["sessions"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|s| s["session"].as_str())
        .collect();
    assert_eq!(names, ["run-of-a@token-2"], "{listed}");

    // A still has them; the admin sees every one.
    let r = call_as(
        &s,
        a,
        "browser_get_page_state",
        json!({"args": {"session": handle}}),
    )
    .await;
    assert_eq!(r["success"], true, "{r}");
    let listed = call_as(&s, admin, "browser_session_list", json!({"args": {}})).await;
    // A's handle and default session, and B's default session.
    assert_eq!(
        listed["data"]["sessions"].as_array().map(Vec::len),
        Some(3),
        "{listed}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_scoped_token_reads_no_history_of_tools_it_may_not_call() {
    let config = "[server]\nauth_tokens = [\"admin-0000\"]\n\
        [[server.tokens]]\nenv = \"AXON_TEST_TOKEN_E\"\ntools = [\"echo\"]\n";
    let s = Served::start_with(config, &[("AXON_TEST_TOKEN_E", "tok-e-3333")]);
    let r = call_as(
        &s,
        "admin-0000",
        "sleep",
        json!({"args": {"ms": 1}, "correlation_id": "admins"}),
    )
    .await;
    assert_eq!(r["success"], true, "{r}");
    let read = |token: &'static str| {
        client()
            .get(s.url("/v1/history/admins"))
            .bearer_auth(token)
            .send()
    };
    assert_eq!(read("admin-0000").await.unwrap().status(), StatusCode::OK);
    assert_eq!(
        read("tok-e-3333").await.unwrap().status(),
        StatusCode::NOT_FOUND
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn runs_and_mcp_sessions_past_their_caps_are_refused_with_retry_after() {
    let s = Served::start("[server]\nmax_runs = 1\n[mcp]\nmax_sessions = 2\n");
    let http = client();
    let (open, gate) = common::gate().await;
    let held = json!({"steps": [{"tool": "http_request", "params": {"url": gate}}]});
    let r = http
        .post(s.url("/v1/runs"))
        .json(&held)
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), StatusCode::ACCEPTED);
    let r = http
        .post(s.url("/v1/runs"))
        .json(&held)
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), StatusCode::SERVICE_UNAVAILABLE);
    assert_eq!(r.headers()["retry-after"], "1");
    let problem: Value = r.json().await.unwrap();
    assert_eq!(problem["retry_after_ms"], 1000, "{problem}");
    assert!(
        problem["detail"]
            .as_str()
            .unwrap()
            .contains("server.max_runs")
    );
    open.send(true).unwrap();

    let initialize = |n: u32| {
        http.post(s.url("/mcp"))
            .header("content-type", "application/json")
            .header("accept", "application/json, text/event-stream")
            .body(initialize_message(n, "many").to_string())
            .send()
    };
    for n in 0..2 {
        assert_eq!(initialize(n).await.unwrap().status(), StatusCode::OK);
    }
    let r = initialize(3).await.unwrap();
    assert_eq!(r.status(), StatusCode::SERVICE_UNAVAILABLE);
    assert!(r.headers().contains_key("retry-after"));
}

/// Issue 36: `axon serve` stopped by SIGTERM leaves no Chromium profile in
/// TMPDIR (39 were left after a morning's use).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sigterm_leaves_no_browser_profile_behind() {
    let tmp = std::env::temp_dir().join(format!("axon-serve-tmp-{}", ulid::Ulid::new()));
    std::fs::create_dir_all(&tmp).unwrap();
    let mut s = Served::start_with("", &[("TMPDIR", tmp.to_str().unwrap())]);
    let r = client()
        .post(s.url("/v1/tools/browser_navigate/call"))
        .json(&json!({"args": {"url": "about:blank"}}))
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), StatusCode::OK);
    let profiles = || common::browser_profiles(&tmp).len();
    assert_eq!(profiles(), 1);
    // SAFETY: kill(2) on our own child's pid.
    unsafe {
        libc::kill(s.child.id() as i32, libc::SIGTERM);
    }
    let status = s.child.wait().unwrap();
    assert!(status.success(), "{status:?}");
    assert_eq!(
        profiles(),
        0,
        "a Chromium profile was left in {}",
        tmp.display()
    );
}

/// A server killed with SIGKILL cannot clean up: its Chromium lives on and its
/// profile stays. The next browser launched sweeps both.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_next_launch_sweeps_what_a_killed_server_left() {
    let tmp = std::env::temp_dir().join(format!("axon-kill-tmp-{}", ulid::Ulid::new()));
    std::fs::create_dir_all(&tmp).unwrap();
    let env = [("TMPDIR", tmp.to_str().unwrap())];
    let navigate = |s: &Served| {
        client()
            .post(s.url("/v1/tools/browser_navigate/call"))
            .json(&json!({"args": {"url": "about:blank"}}))
            .send()
    };
    let profiles = || common::browser_profiles(&tmp);
    let mut first = Served::start_with("", &env);
    assert_eq!(navigate(&first).await.unwrap().status(), StatusCode::OK);
    let left = profiles();
    assert_eq!(left.len(), 1);
    first.child.kill().unwrap(); // SIGKILL: no cleanup
    first.child.wait().unwrap();
    let orphans = |profile: &PathBuf| {
        let needle = format!("--user-data-dir={}", profile.display());
        std::fs::read_dir("/proc")
            .unwrap()
            .filter_map(Result::ok)
            .filter(|e| {
                std::fs::read(e.path().join("cmdline"))
                    .map(|c| String::from_utf8_lossy(&c).contains(&needle))
                    .unwrap_or(false)
            })
            .count()
    };
    assert!(left[0].exists());
    let second = Served::start_with("", &env);
    assert_eq!(navigate(&second).await.unwrap().status(), StatusCode::OK);
    assert!(
        !left[0].exists(),
        "the dead server's profile is still there"
    );
    // SIGKILL is delivered at once; the kernel reaps a moment later.
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(5);
    while orphans(&left[0]) > 0 && std::time::Instant::now() < deadline {
        tokio::time::sleep(std::time::Duration::from_millis(100)).await;
    }
    assert_eq!(orphans(&left[0]), 0, "the dead server's Chromium lives on");
    assert_eq!(profiles().len(), 1);
}

/// DELETE of an MCP session: 204 for one that was open, 404 for one that is
/// not (rmcp's 202 for both made the Python SDK log a failure on every close).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn ending_an_mcp_session_says_whether_it_was_open() {
    let s = Served::start("");
    let http = client();
    let r = http
        .post(s.url("/mcp"))
        .header("content-type", "application/json")
        .header("accept", "application/json, text/event-stream")
        .body(initialize_message(1, "closer").to_string())
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), StatusCode::OK);
    let id = r.headers()["mcp-session-id"].to_str().unwrap().to_string();
    let delete = |id: String| {
        http.delete(s.url("/mcp"))
            .header("mcp-session-id", id)
            .header("mcp-protocol-version", "2025-06-18")
            .send()
    };
    assert_eq!(
        delete(id.clone()).await.unwrap().status(),
        StatusCode::NO_CONTENT
    );
    assert_eq!(delete(id).await.unwrap().status(), StatusCode::NOT_FOUND);
    assert_eq!(
        delete("never-was".into()).await.unwrap().status(),
        StatusCode::NOT_FOUND
    );
}

/// A server that serves others (here: with scoped tokens) reaches no loopback
/// or private address for them, through `http_request` or the browser,
/// unless `[network] allow_private` says so.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_shared_server_reaches_no_private_address_unless_allowed() {
    let (inside, hits) = secret_site().await;
    let inside = inside.replace("localhost", "127.0.0.1");
    let tokens = "[server]\nauth_tokens = [\"admin-0000\"]\n\
        [[server.tokens]]\nenv = \"AXON_TEST_TOKEN_P\"\ntools = [\"*\"]\n";
    let env = [("AXON_TEST_TOKEN_P", "tok-p-4444")];
    let shared = Served::start_with(tokens, &env);
    for (tool, args) in [
        ("http_request", json!({"url": format!("{inside}/secret")})),
        (
            "browser_navigate",
            json!({"url": format!("{inside}/secret")}),
        ),
        ("http_request", json!({"url": "http://10.255.255.1/"})),
    ] {
        let r = call_as(&shared, "tok-p-4444", tool, json!({"args": args})).await;
        assert_eq!(r["success"], false, "{tool}: {r}");
        let message = r["error"]["message"].as_str().unwrap_or_default();
        assert!(
            message.contains("never reached") || message.contains("Blocked"),
            "{tool}: {r}"
        );
    }
    assert_eq!(hits.load(std::sync::atomic::Ordering::SeqCst), 0);
    drop(shared);
    let opened = Served::start_with(&format!("{tokens}[network]\nallow_private = true\n"), &env);
    let r = call_as(
        &opened,
        "tok-p-4444",
        "http_request",
        json!({"args": {"url": format!("{inside}/secret")}}),
    )
    .await;
    assert_eq!(r["success"], true, "{r}");
}

/// An MCP session belongs to the token scope that opened it: another token
/// presenting its id is not served by it.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_mcp_session_id_is_not_served_to_another_token() {
    let config = "[server]\nauth_tokens = [\"admin-0000\"]\n\
        [[server.tokens]]\nenv = \"AXON_TEST_TOKEN_M1\"\ntools = [\"echo\"]\n\
        [[server.tokens]]\nenv = \"AXON_TEST_TOKEN_M2\"\ntools = [\"echo\", \"sleep\"]\n";
    let s = Served::start_with(
        config,
        &[
            ("AXON_TEST_TOKEN_M1", "tok-m1-5555"),
            ("AXON_TEST_TOKEN_M2", "tok-m2-6666"),
        ],
    );
    let http = client();
    let post = |token: &'static str, session: Option<String>, body: Value| {
        let mut r = http
            .post(s.url("/mcp"))
            .bearer_auth(token)
            .header("content-type", "application/json")
            .header("accept", "application/json, text/event-stream")
            .header("mcp-protocol-version", "2025-06-18");
        if let Some(id) = session {
            r = r.header("mcp-session-id", id);
        }
        r.body(body.to_string()).send()
    };
    let r = post("tok-m1-5555", None, initialize_message(1, "m1"))
        .await
        .unwrap();
    assert_eq!(r.status(), StatusCode::OK);
    let id = r.headers()["mcp-session-id"].to_str().unwrap().to_string();
    let list = json!({"jsonrpc": "2.0", "id": 2, "method": "tools/list"});
    let r = post("tok-m2-6666", Some(id.clone()), list.clone())
        .await
        .unwrap();
    assert!(r.status().is_client_error(), "{}", r.status());
    let r = post("tok-m1-5555", Some(id), list).await.unwrap();
    assert!(r.status().is_success(), "{}", r.status());
}

/// Over stdio, a message rmcp cannot read — broken JSON, nested past 128
/// levels, over 16 MiB — and a call whose tool name is not a string are each
/// answered with the request's id (the client used to wait forever), and the
/// next message is served as usual.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_broken_stdio_message_is_answered_not_dropped() {
    use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};
    let dir = std::env::temp_dir().join(format!("axon-stdio-{}", ulid::Ulid::new()));
    std::fs::create_dir_all(&dir).unwrap();
    let mut child =
        tokio::process::Command::from(axon_testkit::command(env!("CARGO_BIN_EXE_axon")))
            .arg("mcp")
            .env("AXON_STORE_PATH", dir.join("axon.db"))
            .env_remove("AXON_CONFIG")
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .kill_on_drop(true)
            .spawn()
            .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    let mut lines = BufReader::new(child.stdout.take().unwrap()).lines();
    let deep = format!(
        r#"{{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{{"name":"echo","arguments":{{"x":{}1{}}}}}}}"#,
        "[".repeat(200),
        "]".repeat(200)
    );
    let mut big = r#"{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":"echo","arguments":{"x":""#.to_string();
    big.push_str(&"a".repeat(17 << 20));
    big.push_str(r#""}}}"#);
    let messages = [
        initialize_message(1, "broken").to_string(),
        json!({"jsonrpc": "2.0", "method": "notifications/initialized"}).to_string(),
        r#"{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"#.to_string(),
        deep,
        big,
        json!({"jsonrpc": "2.0", "id": 6, "method": "tools/call", "params": {"name": 42}})
            .to_string(),
        json!({"jsonrpc": "2.0", "id": 7, "method": "tools/call", "params": {
            "name": "echo", "arguments": {"ok": true}}})
        .to_string(),
        // rmcp answered these "Invalid request" without an id (issue 59).
        json!({"jsonrpc": "2.0", "id": 8, "method": "tools/list", "params": 5}).to_string(),
        json!({"jsonrpc": "1.0", "id": 9, "method": "ping"}).to_string(),
    ];
    for message in messages {
        stdin.write_all(message.as_bytes()).await.unwrap();
        stdin.write_all(b"\n").await.unwrap();
    }
    let mut answers = std::collections::BTreeMap::new();
    while answers.len() < 8 {
        let line = tokio::time::timeout(std::time::Duration::from_secs(30), lines.next_line())
            .await
            .expect("every message is answered")
            .unwrap()
            .expect("a line");
        let answer: Value = serde_json::from_str(&line).unwrap();
        if let Some(id) = answer["id"].as_i64() {
            answers.insert(id, answer);
        }
    }
    let code = |id: i64| answers[&id]["error"]["code"].as_i64();
    assert_eq!(code(3), Some(-32700), "{:?}", answers[&3]);
    assert_eq!(code(4), Some(-32700), "{:?}", answers[&4]);
    assert_eq!(code(5), Some(-32600), "{:?}", answers[&5]);
    assert_eq!(code(6), Some(-32602), "{:?}", answers[&6]);
    assert_eq!(answers[&7]["result"]["isError"], false, "{:?}", answers[&7]);
    assert_eq!(code(8), Some(-32602), "{:?}", answers[&8]);
    assert_eq!(code(9), Some(-32600), "{:?}", answers[&9]);
}

/// The run queue is bounded too: past `[server] max_queued_runs` runs
/// waiting for a replica, one more is refused with 503 naming the key.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn queued_runs_past_their_cap_are_refused_with_retry_after() {
    let s =
        Served::start("[server]\nmax_runs = 1\nmax_queued_runs = 2\n[store]\ntakeover = true\n");
    let http = client();
    let (open, gate) = common::gate().await;
    let held = json!({"steps": [{"tool": "http_request", "params": {"url": gate}}]});
    let post = |path: &'static str| http.post(s.url(path)).json(&held).send();
    // The one run this server may run holds it, so what is queued waits.
    assert_eq!(
        post("/v1/runs").await.unwrap().status(),
        StatusCode::ACCEPTED
    );
    for _ in 0..2 {
        let r = post("/v1/runs?queue=true").await.unwrap();
        assert_eq!(r.status(), StatusCode::ACCEPTED);
    }
    let r = post("/v1/runs?queue=true").await.unwrap();
    assert_eq!(r.status(), StatusCode::SERVICE_UNAVAILABLE);
    assert_eq!(r.headers()["retry-after"], "5");
    let problem: Value = r.json().await.unwrap();
    assert!(
        problem["detail"]
            .as_str()
            .unwrap()
            .contains("server.max_queued_runs"),
        "{problem}"
    );
    open.send(true).unwrap();
}

/// Issue 59: the queue's cap held only for requests one after another;
/// requests at once all saw room (the count and the insert were two steps).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn queued_runs_sent_at_once_stop_at_their_cap() {
    let s =
        Served::start("[server]\nmax_runs = 1\nmax_queued_runs = 3\n[store]\ntakeover = true\n");
    let http = client();
    let (open, gate) = common::gate().await;
    let held = json!({"steps": [{"tool": "http_request", "params": {"url": gate}}]});
    let r = http
        .post(s.url("/v1/runs"))
        .json(&held)
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), StatusCode::ACCEPTED);
    let sent = (0..12).map(|_| {
        let request = http.post(s.url("/v1/runs?queue=true")).json(&held);
        async move { request.send().await.unwrap().status() }
    });
    let statuses = futures::future::join_all(sent).await;
    let accepted = statuses
        .iter()
        .filter(|s| **s == StatusCode::ACCEPTED)
        .count();
    assert_eq!(accepted, 3, "{statuses:?}");
    open.send(true).unwrap();
}

/// Issue 59: one scoped client could fill the queue for everyone; it holds
/// its share (`tenant_share_percent`, half by default) and the others still
/// queue theirs.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn one_token_fills_only_its_share_of_the_queue() {
    let s = Served::start_with(
        "[server]\nauth_tokens = [\"admin-0000\"]\nmax_runs = 1\nmax_queued_runs = 4\n\
         [[server.tokens]]\nenv = \"AXON_TEST_TOKEN_A\"\ntools = [\"http_request\"]\n\
         [[server.tokens]]\nenv = \"AXON_TEST_TOKEN_B\"\ntools = [\"http_request\"]\n\
         [store]\ntakeover = true\n",
        &[
            ("AXON_TEST_TOKEN_A", "tok-a-1111"),
            ("AXON_TEST_TOKEN_B", "tok-b-2222"),
        ],
    );
    let http = client();
    let (open, gate) = common::gate().await;
    let held = json!({"steps": [{"tool": "http_request", "params": {"url": gate}}]});
    let send =
        |token: &str, path: &str| http.post(s.url(path)).bearer_auth(token).json(&held).send();
    // The one run slot is taken, so what is queued stays queued.
    let r = send("admin-0000", "/v1/runs").await.unwrap();
    assert_eq!(r.status(), StatusCode::ACCEPTED);
    let mut b = Vec::new();
    for _ in 0..4 {
        b.push(
            send("tok-b-2222", "/v1/runs?queue=true")
                .await
                .unwrap()
                .status(),
        );
    }
    assert_eq!(
        b,
        [
            StatusCode::ACCEPTED,
            StatusCode::ACCEPTED,
            StatusCode::SERVICE_UNAVAILABLE,
            StatusCode::SERVICE_UNAVAILABLE
        ],
        "B queues its share, two of four"
    );
    let r = send("tok-a-1111", "/v1/runs?queue=true").await.unwrap();
    assert_eq!(r.status(), StatusCode::ACCEPTED, "A still has room");
    open.send(true).unwrap();
}

/// Issue 59: a client that sends a request's head a byte at a time (or
/// nothing at all) held its connection forever; past `[server]
/// header_timeout_ms` the server closes it. A request that arrives whole is
/// served as before.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_slow_client_does_not_hold_a_connection() {
    use std::time::Duration;
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let s = Served::start("[server]\nheader_timeout_ms = 300\n");
    let addr = s.base.trim_start_matches("http://").to_string();
    for head in ["GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\n", ""] {
        let mut conn = tokio::net::TcpStream::connect(&addr).await.unwrap();
        conn.write_all(head.as_bytes()).await.unwrap();
        let mut buf = [0u8; 256];
        let closed = tokio::time::timeout(Duration::from_secs(5), conn.read(&mut buf)).await;
        assert!(
            matches!(closed, Ok(Ok(_)) | Ok(Err(_))),
            "a connection with the head {head:?} is still open after 5 s"
        );
    }
    let (status, _) = s.get("/healthz").await;
    assert_eq!(status, StatusCode::OK);
}
