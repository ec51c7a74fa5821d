//! What the HTTP API streams as server-sent events, in process: a run's
//! progress and one call's attempts, in order. (Moved from axon-cli's
//! `tests/serve.rs`, which spawned the binary for them.)

mod common;

use axon_server::ServerOptions;
use axum::http::StatusCode;
use common::Api;
use serde_json::{Value, json};

/// The header that asks for a stream.
const STREAM: &[(&str, &str)] = &[("accept", "text/event-stream")];

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn run_progress_streams_as_server_sent_events_in_order() {
    let s = Api::start(ServerOptions::default()).await;
    let plan = json!({"steps": [
        {"id": "a", "tool": "echo", "params": {"v": 1}},
        {"id": "b", "tool": "flaky", "params": {"key": "sse", "fail_times": 1},
         "policy": {"retry": {"initial_delay_ms": 1, "jitter": "none"}}, "depends_on": ["a"]},
    ]});
    let text = s
        .post_with("/v1/runs?run_id=sse-1", STREAM, &plan)
        .await
        .text;
    let events = sse_events(&text);
    let names: Vec<&str> = events.iter().map(|(n, _)| n.as_str()).collect();
    assert_eq!(
        names,
        [
            "run_started",
            "step_started",
            "step_finished",
            "step_started",
            "step_retrying",
            "step_finished",
            "run_finished",
            "result"
        ]
    );
    assert_eq!(events[1].1["index"], 0);
    assert_eq!(events[3].1["index"], 1);
    assert_eq!(events[4].1["attempt"], 1);
    let (_, result) = &events[7];
    assert_eq!(result["run_id"], "sse-1");
    assert_eq!(result["status"], "succeeded");
    assert_eq!(result["steps"][1]["result"]["attempts"], 2);
}

/// SSE blocks as (event name, data).
fn sse_events(text: &str) -> Vec<(String, Value)> {
    text.split("\n\n")
        .filter_map(|block| {
            let name = block.lines().find_map(|l| l.strip_prefix("event: "))?;
            let data = block.lines().find_map(|l| l.strip_prefix("data: "))?;
            Some((name.to_string(), serde_json::from_str(data).unwrap()))
        })
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn one_call_streams_its_attempts_and_retries_then_the_result() {
    let s = Api::start(ServerOptions::default()).await;
    let body = json!({
        "args": {"key": "sse-call", "fail_times": 1},
        "correlation_id": "sse-call",
        "policy": {"retry": {"initial_delay_ms": 5, "jitter": "none"}},
    });
    let r = s.post_with("/v1/tools/flaky/call", STREAM, &body).await;
    assert_eq!(r.status, StatusCode::OK);
    assert!(
        r.headers["content-type"]
            .to_str()
            .unwrap()
            .starts_with("text/event-stream")
    );
    let events = sse_events(&r.text);
    let names: Vec<&str> = events.iter().map(|(n, _)| n.as_str()).collect();
    assert_eq!(
        names,
        ["attempt_started", "retrying", "attempt_started", "result"]
    );
    assert_eq!(events[1].1["error"]["kind"], "transient");
    assert_eq!(events[1].1["delay_ms"], 5);
    assert_eq!(events[2].1["attempt"], 2);
    let result = &events[3].1;
    assert_eq!(
        (result["success"].clone(), result["attempts"].clone()),
        (json!(true), json!(2))
    );

    // Without the header: one JSON result, as before. An unknown tool is a
    // 404 problem either way.
    let (status, whole) = s
        .post("/v1/tools/echo/call", json!({"args": {"x": 1}}))
        .await;
    assert_eq!(
        (status, whole["data"].clone()),
        (StatusCode::OK, json!({"x": 1}))
    );
    let r = s.post_with("/v1/tools/nope/call", STREAM, &json!({})).await;
    assert_eq!(r.status, StatusCode::NOT_FOUND);
    assert!(r.is_problem());
}
