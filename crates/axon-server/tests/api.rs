//! The HTTP API driven in process (`Router::oneshot`): who may do what, and
//! what a request that names nothing real gets. The binary-spawning tests
//! in axon-cli keep what needs a process (signals, ports, the CLI).

mod common;

use axon_server::{ScopedToken, ServerOptions};
use axum::http::StatusCode;
use common::Api;
use serde_json::Value;

/// Send `method path` with `token` (if any) to `api`; the status and the
/// body as JSON (`Null` when it is not JSON).
async fn send(api: &Api, method: &str, path: &str, token: Option<&str>) -> (StatusCode, Value) {
    let bearer = token.map(|t| format!("Bearer {t}"));
    let headers: Vec<(&str, &str)> = bearer
        .as_deref()
        .map(|b| ("authorization", b))
        .into_iter()
        .collect();
    let r = api.send(method, path, &headers, None).await;
    (r.status, r.body)
}

fn guarded() -> ServerOptions {
    ServerOptions {
        auth_tokens: vec!["admin-token".into()],
        tokens: vec![ScopedToken {
            token: "echo-only".into(),
            tools: vec!["echo".into()],
            admin: false,
            secrets: Vec::new(),
        }],
        ..ServerOptions::default()
    }
}

#[tokio::test]
async fn breakers_are_an_admins_to_isolate_and_reset() {
    let api = Api::start(guarded()).await;
    let (status, _) = send(&api, "POST", "/v1/breakers/echo/isolate", None).await;
    assert_eq!(status, StatusCode::UNAUTHORIZED);
    let (status, body) = send(&api, "POST", "/v1/breakers/echo/isolate", Some("echo-only")).await;
    assert_eq!(status, StatusCode::FORBIDDEN, "{body}");
    assert!(
        body["detail"]
            .as_str()
            .unwrap_or_default()
            .contains("admin"),
        "{body}"
    );

    let (status, body) = send(
        &api,
        "POST",
        "/v1/breakers/echo/isolate",
        Some("admin-token"),
    )
    .await;
    assert_eq!(
        (status, &body["state"]),
        (StatusCode::OK, &Value::from("isolated")),
        "{body}"
    );
    let (_, listed) = send(&api, "GET", "/v1/breakers", Some("admin-token")).await;
    let echo = listed["breakers"]
        .as_array()
        .and_then(|b| b.iter().find(|b| b["tool"] == "echo"))
        .cloned()
        .unwrap_or_default();
    assert_eq!(echo["state"], "isolated", "{listed}");
    let (status, body) = send(&api, "POST", "/v1/breakers/echo/reset", Some("admin-token")).await;
    assert_eq!(
        (status, &body["state"]),
        (StatusCode::OK, &Value::from("closed")),
        "{body}"
    );

    for path in ["/v1/breakers/nope/isolate", "/v1/breakers/nope/reset"] {
        let (status, _) = send(&api, "POST", path, Some("admin-token")).await;
        assert_eq!(status, StatusCode::NOT_FOUND, "{path}");
    }
}

#[tokio::test]
async fn a_scoped_token_sees_only_its_tools() {
    let api = Api::start(guarded()).await;
    let (status, body) = send(&api, "GET", "/v1/tools", Some("echo-only")).await;
    assert_eq!(status, StatusCode::OK, "{body}");
    let names: Vec<&str> = body["tools"]
        .as_array()
        .map(|tools| tools.iter().filter_map(|t| t["name"].as_str()).collect())
        .unwrap_or_default();
    assert_eq!(names, ["echo"], "{body}");
    let (_, all) = send(&api, "GET", "/v1/tools", Some("admin-token")).await;
    assert!(
        all["tools"].as_array().is_some_and(|t| t.len() > 1),
        "{all}"
    );
}
