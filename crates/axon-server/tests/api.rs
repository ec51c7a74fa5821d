//! The HTTP API driven in process (`Router::oneshot`): who may do what, and
//! what a request that names nothing real gets. The binary-spawning tests
//! in axon-cli keep what needs a process (signals, ports, the CLI).

mod common;

use axon_server::{ScopedToken, ServerOptions};
use axum::body::Body;
use axum::http::{Request, StatusCode};
use serde_json::Value;
use tower::ServiceExt;

/// Send `method path` with `token` (if any) to `router`; the status and the
/// body as JSON (`Null` when it is not JSON).
async fn send(
    router: &axum::Router,
    method: &str,
    path: &str,
    token: Option<&str>,
) -> (StatusCode, Value) {
    let mut request = Request::builder()
        .method(method)
        .uri(path)
        .header("host", "localhost");
    if let Some(token) = token {
        request = request.header("authorization", format!("Bearer {token}"));
    }
    let response = router
        .clone()
        .oneshot(request.body(Body::empty()).unwrap())
        .await
        .unwrap();
    let status = response.status();
    let bytes = axum::body::to_bytes(response.into_body(), 1 << 20)
        .await
        .unwrap();
    (
        status,
        serde_json::from_slice(&bytes).unwrap_or(Value::Null),
    )
}

fn guarded() -> ServerOptions {
    ServerOptions {
        auth_tokens: vec!["admin-token".into()],
        tokens: vec![ScopedToken {
            token: "echo-only".into(),
            tools: vec!["echo".into()],
            admin: false,
        }],
        ..ServerOptions::default()
    }
}

#[tokio::test]
async fn breakers_are_an_admins_to_isolate_and_reset() {
    let router = common::server(guarded()).await.router();
    let (status, _) = send(&router, "POST", "/v1/breakers/echo/isolate", None).await;
    assert_eq!(status, StatusCode::UNAUTHORIZED);
    let (status, body) = send(
        &router,
        "POST",
        "/v1/breakers/echo/isolate",
        Some("echo-only"),
    )
    .await;
    assert_eq!(status, StatusCode::FORBIDDEN, "{body}");
    assert!(
        body["detail"]
            .as_str()
            .unwrap_or_default()
            .contains("admin"),
        "{body}"
    );

    let (status, body) = send(
        &router,
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
    let (_, listed) = send(&router, "GET", "/v1/breakers", Some("admin-token")).await;
    let echo = listed["breakers"]
        .as_array()
        .and_then(|b| b.iter().find(|b| b["tool"] == "echo"))
        .cloned()
        .unwrap_or_default();
    assert_eq!(echo["state"], "isolated", "{listed}");
    let (status, body) = send(
        &router,
        "POST",
        "/v1/breakers/echo/reset",
        Some("admin-token"),
    )
    .await;
    assert_eq!(
        (status, &body["state"]),
        (StatusCode::OK, &Value::from("closed")),
        "{body}"
    );

    for path in ["/v1/breakers/nope/isolate", "/v1/breakers/nope/reset"] {
        let (status, _) = send(&router, "POST", path, Some("admin-token")).await;
        assert_eq!(status, StatusCode::NOT_FOUND, "{path}");
    }
}

#[tokio::test]
async fn a_scoped_token_sees_only_its_tools() {
    let router = common::server(guarded()).await.router();
    let (status, body) = send(&router, "GET", "/v1/tools", Some("echo-only")).await;
    assert_eq!(status, StatusCode::OK, "{body}");
    let names: Vec<&str> = body["tools"]
        .as_array()
        .map(|tools| tools.iter().filter_map(|t| t["name"].as_str()).collect())
        .unwrap_or_default();
    assert_eq!(names, ["echo"], "{body}");
    let (_, all) = send(&router, "GET", "/v1/tools", Some("admin-token")).await;
    assert!(
        all["tools"].as_array().is_some_and(|t| t.len() > 1),
        "{all}"
    );
}
