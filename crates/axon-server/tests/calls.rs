//! Calling tools over the HTTP API, in process: a call's result and the
//! problems that name the bad field, and many calls answered in order.
//! (Moved from axon-cli's `tests/serve.rs`, which spawned the binary for them.)

mod common;

use axon_server::ServerOptions;
use axum::http::StatusCode;
use common::Api;
use serde_json::json;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_call_returns_the_call_result_and_problems_name_the_field() {
    let s = Api::start(ServerOptions::default()).await;
    let (status, body) = s
        .post(
            "/v1/tools/echo/call",
            json!({"args": {"a": 1}, "correlation_id": "c1"}),
        )
        .await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(body["success"], true);
    assert_eq!(body["data"], json!({"a": 1}));
    assert_eq!(body["correlation_id"], "c1");
    assert_eq!(body["provenance"]["source"], "tool");

    // Invalid arguments: 400 problem+json naming /args/<field>.
    let r = s
        .post_with("/v1/tools/sleep/call", &[], &json!({"args": {"ms": -5}}))
        .await;
    assert_eq!(r.status, StatusCode::BAD_REQUEST);
    assert!(r.is_problem());
    assert_eq!(r.body["pointer"], "/args/ms");
    assert_eq!(r.body["result"]["error"]["kind"], "invalid_arguments");

    // An unknown tool: 404.
    let (status, p) = s.post("/v1/tools/nope/call", json!({})).await;
    assert_eq!(status, StatusCode::NOT_FOUND);
    assert_eq!(p["result"]["error"]["kind"], "unknown_tool");

    // A failing tool: the status of its kind, the call result as the body.
    let (status, body) = s
        .post(
            "/v1/tools/flaky/call",
            json!({"args": {"key": "srv-fail", "fail_times": 9, "kind": "failed"}}),
        )
        .await;
    assert_eq!(status, StatusCode::UNPROCESSABLE_ENTITY);
    assert_eq!(body["error"]["kind"], "failed");
    assert_eq!(body["attempts"], 1);

    // A retried tool: succeeds on the third attempt, reasons recorded.
    let (status, body) = s
        .post(
            "/v1/tools/flaky/call",
            json!({"args": {"key": "srv-retry", "fail_times": 2},
                   "policy": {"retry": {"initial_delay_ms": 1, "jitter": "none"}}}),
        )
        .await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(body["attempts"], 3);
    assert_eq!(body["retry_reasons"].as_array().unwrap().len(), 2);

    // A body that is not a call: the pointer of the unknown field.
    let r = s.post_text("/v1/tools/echo/call", r#"{"argz": {}}"#).await;
    assert_eq!(r.status, StatusCode::BAD_REQUEST);
    assert!(r.is_problem());
    assert_eq!(r.body["pointer"], "/argz");
    assert!(r.body["detail"].as_str().unwrap().contains("unknown field"));

    // Malformed JSON: 400, and the server keeps serving.
    let r = s.post_text("/v1/tools/echo/call", r#"{"args": "#).await;
    assert_eq!(r.status, StatusCode::BAD_REQUEST);
    assert!(r.is_problem());
    let (status, _) = s.post("/v1/tools/echo/call", json!({})).await;
    assert_eq!(status, StatusCode::OK);

    // History of the correlation id.
    let (status, h) = s.get("/v1/history/c1").await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(h["calls"].as_array().unwrap().len(), 1);
    assert_eq!(h["calls"][0]["args"], json!({"a": 1}));
    assert_eq!(h["stats"]["total"], 1);
    // A call id works too, as docs/design.md says.
    let call_id = h["calls"][0]["call_id"].as_str().unwrap().to_string();
    let (status, one) = s.get(&format!("/v1/history/{call_id}")).await;
    assert_eq!(status, StatusCode::OK, "{one}");
    assert_eq!(one["calls"][0]["args"], json!({"a": 1}));
    let (status, _) = s.get("/v1/history/never-seen").await;
    assert_eq!(status, StatusCode::NOT_FOUND);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn many_calls_come_back_in_order() {
    let s = Api::start(ServerOptions::default()).await;
    let (status, body) = s
        .post(
            "/v1/calls",
            json!({"calls": [
                {"tool": "sleep", "args": {"ms": 80}},
                {"tool": "echo", "args": {"i": 1}},
                {"tool": "sleep", "args": {"ms": "x"}},
            ], "max_parallel": 3}),
        )
        .await;
    assert_eq!(status, StatusCode::OK);
    let results = body["results"].as_array().unwrap();
    assert_eq!(results.len(), 3);
    assert_eq!(results[0]["data"], json!({"slept_ms": 80}));
    assert_eq!(results[1]["data"], json!({"i": 1}));
    assert_eq!(results[2]["error"]["kind"], "invalid_arguments");

    let r = s
        .post_text("/v1/calls", r#"{"calls": [{"tool": 5}]}"#)
        .await;
    assert_eq!(r.status, StatusCode::BAD_REQUEST);
    assert_eq!(r.body["pointer"], "/calls/0/tool");

    let (status, p) = s
        .post("/v1/calls", json!({"calls": [], "max_parallel": 0}))
        .await;
    assert_eq!(status, StatusCode::BAD_REQUEST);
    assert_eq!(p["pointer"], "/max_parallel");
}
