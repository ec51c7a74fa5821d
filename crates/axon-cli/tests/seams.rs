//! Issue 59's medium and low findings that live where two features meet,
//! each against a real `axon serve` and watched succeeding before its fix:
//! a secret that an encoder turned into another string, another local
//! Axon's DevTools port, a broken `/mcp` body answered as a wrong content
//! type.

mod common;

use common::served::{Served, call_as, client, spawn_app};

use reqwest::StatusCode;
use serde_json::{Value, json};

/// A plan's `${secret.S}` sent in a query and a path comes back from the
/// upstream URL-encoded (`p%40ss+w%2Frd`); history and the run's record
/// kept that form (the scrub knew only the secret as written).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_secret_an_encoder_changed_is_still_scrubbed() {
    let echo = axum::Router::new().fallback(|uri: axum::http::Uri| async move { uri.to_string() });
    let upstream = spawn_app(echo).await;
    let s = Served::start_with(
        "[secrets]\nS = { env = \"AXON_TEST_S\" }\n",
        &[("AXON_TEST_S", "p@ss w/rd&1\"é")],
    );
    let plan = json!({"steps": [{"tool": "http_request", "params": {
        "url": format!("http://{upstream}/k/${{secret.S}}"),
        "query": {"q": "${secret.S}"},
    }}]});
    let (status, done) = s.post("/v1/runs?wait=true&run_id=enc-1", plan).await;
    assert_eq!(status, StatusCode::OK, "{done}");
    let seen = done["steps"][0]["result"]["data"]["text"]
        .as_str()
        .unwrap_or_default();
    assert!(
        seen.contains("q=p%40ss+w%2Frd%261"),
        "the upstream got it: {done}"
    );
    let (_, record) = s.get("/v1/runs/enc-1").await;
    let (_, history) = s.get("/v1/history/enc-1").await;
    for (what, kept) in [("the run's record", record), ("history", history)] {
        let kept = kept.to_string();
        for form in ["p%40ss", "p@ss", "w%2Frd"] {
            assert!(!kept.contains(form), "{form} in {what}: {kept}");
        }
        assert!(kept.contains("***"), "{what}: {kept}");
    }
}

/// Another Axon's Chromium on this machine listens for DevTools on a
/// loopback port; `http_request` of this one reached it (listing its
/// sessions, opening tabs). Each Axon now writes its DevTools port where
/// every other refuses it.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn another_local_axons_devtools_port_is_not_reached() {
    let browsing = Served::start("");
    let other = Served::start("");
    let opened = call_as(
        &browsing,
        "",
        "browser_navigate",
        json!({"args": {"url": "about:blank"}}),
    )
    .await;
    assert_eq!(opened["success"], true, "{opened}");
    let port = devtools_port_of(browsing.child.id());
    let r = call_as(
        &other,
        "",
        "http_request",
        json!({"args": {"url": format!("http://127.0.0.1:{port}/json/version")}}),
    )
    .await;
    assert_eq!(r["success"], false, "another Axon's DevTools answered: {r}");
    assert!(
        r["error"]["message"]
            .as_str()
            .unwrap_or_default()
            .contains("never reached"),
        "{r}"
    );
    // The browsing Axon's own pages still load.
    let page = axum::Router::new().fallback(|| async { axum::response::Html("<p>fine</p>") });
    let site = spawn_app(page).await;
    let r = call_as(
        &other,
        "",
        "http_request",
        json!({"args": {"url": format!("http://{site}/")}}),
    )
    .await;
    assert_eq!(r["success"], true, "{r}");
}

/// The DevTools port Axon process `pid` announced (network/local.rs).
fn devtools_port_of(pid: u32) -> u16 {
    let dir = std::env::temp_dir().join("axon-ports");
    std::fs::read_dir(&dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .filter_map(Result::ok)
        .find(|entry| {
            std::fs::read_to_string(entry.path()).is_ok_and(|held| held.trim() == pid.to_string())
        })
        .and_then(|entry| entry.file_name().to_str()?.parse().ok())
        .unwrap_or_else(|| {
            panic!(
                "process {pid} announced no DevTools port in {}",
                dir.display()
            )
        })
}

/// A `/mcp` body that is not JSON, or JSON that is no MCP message, was
/// answered `415 Unsupported Media Type` (rmcp's answer to any body it
/// cannot read): a client reads that as its content type being wrong. Now
/// 400 with the JSON-RPC error and the request's id.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_broken_mcp_body_gets_a_json_rpc_error_with_its_id() {
    let s = Served::start("");
    let session = s.mcp_session(None).await;
    for (body, id, code) in [
        (
            r#"{"jsonrpc":"2.0","id":7,"method":"tools/list","params":{"#,
            json!(7),
            -32700,
        ),
        (
            r#"{"jsonrpc":"2.0","id":"q","hello":1}"#,
            json!("q"),
            -32600,
        ),
        (
            r#"{"jsonrpc":"2.0","id":9,"method":"tools/call","params":{"name":5}}"#,
            json!(9),
            -32602,
        ),
    ] {
        let r = client()
            .post(s.url("/mcp"))
            .header("content-type", "application/json")
            .header("accept", "application/json, text/event-stream")
            .header("mcp-session-id", &session)
            .body(body)
            .send()
            .await
            .unwrap();
        assert_eq!(r.status(), StatusCode::BAD_REQUEST, "{body}");
        let answer: Value = r.json().await.unwrap();
        assert_eq!(answer["id"], id, "{body}: {answer}");
        assert_eq!(answer["error"]["code"], code, "{body}: {answer}");
    }
    // A sound message in the same session is still served.
    let listed = s
        .mcp_send(
            None,
            &session,
            json!({"jsonrpc": "2.0", "id": 10, "method": "tools/list"}),
        )
        .await;
    assert!(listed.contains("http_request"), "{listed}");
    // A body that is not JSON at all by its content type stays a 415.
    let r = client()
        .post(s.url("/mcp"))
        .header("content-type", "text/plain")
        .header("accept", "application/json, text/event-stream")
        .body("hello")
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), StatusCode::UNSUPPORTED_MEDIA_TYPE);
}
