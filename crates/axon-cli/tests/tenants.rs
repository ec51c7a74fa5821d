//! Clients of one `axon serve` are tenants (issue 36): a scoped token reads
//! the history of its own calls only, by correlation id or call id, even
//! when another token used the same correlation id, and sees, lists,
//! resumes and reuses the id of its own runs only; an admin sees all.

mod common;

use common::served::{Served, call_as, client};
use reqwest::StatusCode;
use serde_json::{Value, json};

const CONFIG: &str = "[server]\nauth_tokens = [\"admin-0000\"]\n\
    [[server.tokens]]\nenv = \"AXON_TEST_TOKEN_A\"\ntools = [\"echo\"]\n\
    [[server.tokens]]\nenv = \"AXON_TEST_TOKEN_B\"\ntools = [\"echo\"]\n";
const ENV: [(&str, &str); 2] = [
    ("AXON_TEST_TOKEN_A", "tok-a-1111"),
    ("AXON_TEST_TOKEN_B", "tok-b-2222"),
];

/// `GET /v1/history/{id}` as `token`: the status and the calls' messages.
async fn read(s: &Served, token: &str, id: &str) -> (StatusCode, Vec<String>) {
    let r = client()
        .get(s.url(&format!("/v1/history/{id}")))
        .bearer_auth(token)
        .send()
        .await
        .unwrap();
    let status = r.status();
    let body: Value = r.json().await.unwrap_or_default();
    let messages = body["calls"]
        .as_array()
        .map(|calls| {
            calls
                .iter()
                .map(|c| {
                    c["data"]["message"]
                        .as_str()
                        .unwrap_or_default()
                        .to_string()
                })
                .collect()
        })
        .unwrap_or_default();
    (status, messages)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_token_reads_only_its_own_history() {
    let s = Served::start_with(CONFIG, &ENV);
    let echo = |token: &'static str, message: &'static str| {
        call_as(
            &s,
            token,
            "echo",
            json!({"args": {"message": message}, "correlation_id": "same-id"}),
        )
    };
    let a = echo("tok-a-1111", "a's words").await;
    assert_eq!(a["success"], true, "{a}");
    let call_id = a["call_id"].as_str().unwrap().to_string();

    let (status, seen) = read(&s, "tok-b-2222", "same-id").await;
    assert_eq!(status, StatusCode::NOT_FOUND, "b read a's calls: {seen:?}");
    let (status, _) = read(&s, "tok-b-2222", &call_id).await;
    assert_eq!(status, StatusCode::NOT_FOUND, "b read a's call by its id");

    let b = echo("tok-b-2222", "b's words").await;
    assert_eq!(b["success"], true, "{b}");
    assert_eq!(
        read(&s, "tok-b-2222", "same-id").await,
        (StatusCode::OK, vec!["b's words".to_string()])
    );
    assert_eq!(
        read(&s, "tok-a-1111", "same-id").await,
        (StatusCode::OK, vec!["a's words".to_string()])
    );
    let (status, all) = read(&s, "admin-0000", "same-id").await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(all.len(), 2, "{all:?}");
}

/// `method path` as `token`, with a plan body for POSTs: the status and body.
async fn request(s: &Served, token: &str, method: &str, path: &str) -> (StatusCode, Value) {
    let plan = json!({"steps": [{"id": "say", "tool": "echo", "params": {"message": "a's plan"}}]});
    let r = match method {
        "GET" => client().get(s.url(path)),
        _ => client().post(s.url(path)).json(&plan),
    };
    let r = r.bearer_auth(token).send().await.unwrap();
    let status = r.status();
    (status, r.json().await.unwrap_or_default())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_token_sees_only_its_own_runs() {
    let s = Served::start_with(CONFIG, &ENV);
    let (status, run) = request(&s, "tok-a-1111", "POST", "/v1/runs?wait=true").await;
    assert_eq!(status, StatusCode::OK, "{run}");
    let id = run["run_id"].as_str().unwrap().to_string();
    let listed = |body: &Value| {
        body["runs"]
            .as_array()
            .unwrap()
            .iter()
            .any(|r| r["run_id"] == id.as_str())
    };

    for path in [
        format!("/v1/runs/{id}"),
        format!("/v1/runs/{id}/graph"),
        format!("/v1/runs/{id}/events"),
        format!("/v1/runs/{id}/plan?replay=true"),
    ] {
        let (status, body) = request(&s, "tok-b-2222", "GET", &path).await;
        assert_eq!(status, StatusCode::NOT_FOUND, "b read {path}: {body}");
    }
    let (status, body) = request(&s, "tok-b-2222", "POST", &format!("/v1/runs/{id}/resume")).await;
    assert_eq!(status, StatusCode::NOT_FOUND, "b resumed a's run: {body}");
    let (status, body) = request(&s, "tok-b-2222", "POST", &format!("/v1/runs?run_id={id}")).await;
    assert_eq!(status, StatusCode::CONFLICT, "b took a's run id: {body}");
    let (status, body) = request(&s, "tok-b-2222", "GET", "/v1/runs").await;
    assert_eq!(status, StatusCode::OK);
    assert!(!listed(&body), "b lists a's run: {body}");

    let (status, body) = request(&s, "tok-a-1111", "GET", &format!("/v1/runs/{id}")).await;
    assert_eq!(
        (status, body["status"].clone()),
        (StatusCode::OK, json!("succeeded")),
        "{body}"
    );
    let (_, body) = request(&s, "tok-a-1111", "GET", "/v1/runs").await;
    assert!(listed(&body), "a does not list its run: {body}");
    let (_, body) = request(&s, "admin-0000", "GET", "/v1/runs").await;
    assert!(listed(&body), "the admin does not list a's run: {body}");
}

/// A queued run is taken up as the tenant that queued it: its calls are that
/// tenant's (another reads none of them), as are the browser sessions it
/// would reach.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_queued_run_is_taken_up_as_its_tenant() {
    let config = format!("{CONFIG}[store]\ntakeover = true\n");
    let s = Served::start_with(&config, &ENV);
    let (status, queued) = request(&s, "tok-a-1111", "POST", "/v1/runs?queue=true").await;
    assert_eq!(status, StatusCode::ACCEPTED, "{queued}");
    let id = queued["run_id"].as_str().unwrap().to_string();
    let mut finished = Value::Null;
    for _ in 0..100 {
        let (_, run) = request(&s, "tok-a-1111", "GET", &format!("/v1/runs/{id}")).await;
        if run["status"] == "succeeded" {
            finished = run;
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(100)).await;
    }
    assert_eq!(
        finished["status"], "succeeded",
        "the queued run did not finish"
    );
    assert_eq!(
        read(&s, "tok-a-1111", &id).await,
        (StatusCode::OK, vec!["a's plan".to_string()])
    );
    let (status, _) = read(&s, "tok-b-2222", &id).await;
    assert_eq!(
        status,
        StatusCode::NOT_FOUND,
        "b read the calls of a's queued run"
    );
}
