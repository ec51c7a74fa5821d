//! Clients of one `axon serve` are tenants (issue 36): a scoped token reads
//! the history of its own calls only, by correlation id or call id, even
//! when another token used the same correlation id; an admin reads all.

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
