//! Approval end to end (docs/design.md, "Approval"): a call parked by one
//! process is decided from another terminal on the same SQLite store; two
//! `axon serve` replicas on one PostgreSQL schema, where a call parked on one
//! is denied or approved through the other; a client cannot approve its own
//! call or waive the approval; nobody deciding times the call out.

mod common;

use std::process::Stdio;
use std::time::{Duration, Instant};

use common::local::{Local, stdout_json};
use common::pg::{drop_schema, postgres_url, schema};
use common::served::{Served, client};
use serde_json::{Value, json};

/// The first pending approval `local`'s store lists, once there is one.
fn pending(local: &Local) -> Value {
    let start = Instant::now();
    loop {
        let listed = local.json(&["approvals", "--json"]);
        if let Some(first) = listed["approvals"].as_array().and_then(|a| a.first()) {
            return first.clone();
        }
        assert!(
            start.elapsed() < Duration::from_secs(30),
            "nothing was parked"
        );
        std::thread::sleep(Duration::from_millis(100));
    }
}

#[test]
fn a_call_parked_by_one_process_is_approved_from_another_terminal() {
    let local = Local::new("[tools.echo]\napproval = \"required\"\n");
    let waiting = local
        .cmd(&["call", "echo", "message=pay bob", "--json"])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let parked = pending(&local);
    assert_eq!(parked["tool"], "echo");
    assert_eq!(parked["args"]["message"], "pay bob");
    assert_eq!(parked["status"], "pending");
    let id = parked["id"].as_str().unwrap();

    let bad = local
        .cmd(&["approvals", "approve", id, "--args", "[1]"])
        .output()
        .unwrap();
    assert_eq!(bad.status.code(), Some(2), "arguments must be an object");
    let approved = local
        .cmd(&[
            "approvals",
            "approve",
            id,
            "--args",
            r#"{"message": "pay bob 5"}"#,
        ])
        .output()
        .unwrap();
    assert!(approved.status.success(), "{approved:?}");

    let done = waiting.wait_with_output().unwrap();
    let result = stdout_json(&done);
    assert_eq!(result["success"], true, "{result}");
    assert_eq!(
        result["data"]["message"], "pay bob 5",
        "the approver's edit ran"
    );
    assert_eq!(result["approval"]["status"], "approved");
    assert_eq!(result["approval"]["args_edited"], true);
    assert!(
        result["approval"]["by"]
            .as_str()
            .unwrap()
            .starts_with("cli")
    );
    let said = String::from_utf8_lossy(&done.stderr);
    assert!(
        said.contains(&format!("axon approvals approve {id}")),
        "{said}"
    );

    // The decision is in history with the call.
    let history = local.json(&["history", id, "--json"]);
    assert_eq!(history[0]["approval"]["status"], "approved", "{history}");
    assert_eq!(history[0]["approval"]["args_edited"], true);
    // Deciding again is refused: the first decision stands.
    let again = local.cmd(&["approvals", "deny", id]).output().unwrap();
    assert_eq!(again.status.code(), Some(2));
}

#[test]
fn nobody_deciding_in_time_fails_the_call_approval_timeout() {
    let local = Local::new("[tools.echo]\napproval = \"required\"\napproval_timeout_ms = 300\n");
    let o = local
        .cmd(&["call", "echo", "message=hi", "--json"])
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(1));
    let result = stdout_json(&o);
    assert_eq!(result["error"]["kind"], "approval_timeout", "{result}");
    let all = local.json(&["approvals", "--all", "--json"]);
    assert_eq!(all["approvals"][0]["status"], "expired");
}

/// Two replicas on one PostgreSQL schema, with an admin token and a scoped
/// client's token; `echo` needs approval.
fn replicas(schema: &str) -> (Served, Served) {
    let config = format!(
        "[server]\nauth_tokens = [\"admin-0000\"]\n\
         [[server.tokens]]\nenv = \"AXON_TEST_TOKEN_A\"\ntools = [\"echo\"]\n\
         [store]\nurl = \"{}\"\nschema = \"{schema}\"\n\
         [tools.echo]\napproval = \"required\"\n",
        postgres_url()
    );
    let env = [("AXON_TEST_TOKEN_A", "tok-a-1111")];
    (
        Served::start_with(&config, &env),
        Served::start_with(&config, &env),
    )
}

/// `POST /v1/tools/echo/call` as `token`, started now, answered later.
fn call_echo(s: &Served, token: &str, message: &str) -> tokio::task::JoinHandle<(u16, Value)> {
    let mut request = client()
        .post(s.url("/v1/tools/echo/call"))
        .json(&json!({"args": {"message": message}}));
    if !token.is_empty() {
        request = request.bearer_auth(token);
    }
    tokio::spawn(async move {
        let r = request.send().await.unwrap();
        (r.status().as_u16(), r.json().await.unwrap_or_default())
    })
}

async fn get(s: &Served, token: &str, path: &str) -> (u16, Value) {
    let r = client()
        .get(s.url(path))
        .bearer_auth(token)
        .send()
        .await
        .unwrap();
    (r.status().as_u16(), r.json().await.unwrap_or_default())
}

async fn decide(s: &Served, token: &str, id: &str, body: Value) -> u16 {
    client()
        .post(s.url(&format!("/v1/approvals/{id}")))
        .bearer_auth(token)
        .json(&body)
        .send()
        .await
        .unwrap()
        .status()
        .as_u16()
}

/// The one pending approval `s` lists to the admin.
async fn pending_on(s: &Served) -> String {
    let start = Instant::now();
    loop {
        let (_, listed) = get(s, "admin-0000", "/v1/approvals").await;
        if let Some(id) = listed["approvals"][0]["id"].as_str() {
            return id.to_string();
        }
        assert!(
            start.elapsed() < Duration::from_secs(30),
            "nothing was parked: {listed}"
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_call_parked_on_one_replica_is_decided_on_another_and_not_by_its_caller() {
    let schema = schema("axon_approval_test");
    let (a, b) = replicas(&schema);

    // The attack: the client waives the approval its tool requires.
    let waived = client()
        .post(b.url("/v1/tools/echo/call"))
        .bearer_auth("tok-a-1111")
        .json(&json!({"args": {"message": "x"}, "policy": {"approval": "never"}}))
        .send()
        .await
        .unwrap();
    assert_eq!(waived.status(), 400);

    let denied = call_echo(&b, "tok-a-1111", "refund all");
    let id = pending_on(&a).await;
    // The client sees its own call waiting, but may not decide it.
    let (status, mine) = get(&a, "tok-a-1111", &format!("/v1/approvals/{id}")).await;
    assert_eq!(status, 200, "{mine}");
    assert_eq!(mine["args"]["message"], "refund all");
    assert_eq!(
        decide(&a, "tok-a-1111", &id, json!({"decision": "approve"})).await,
        403
    );
    assert_eq!(
        decide(
            &a,
            "admin-0000",
            &id,
            json!({"decision": "deny", "comment": "no refunds today"})
        )
        .await,
        200
    );
    let (status, result) = denied.await.unwrap();
    assert_eq!(status, 403, "{result}");
    assert_eq!(result["error"]["kind"], "approval_denied");
    assert!(
        result["error"]["message"]
            .as_str()
            .unwrap()
            .contains("no refunds today")
    );

    let approved = call_echo(&b, "tok-a-1111", "refund one");
    let id = pending_on(&a).await;
    assert_eq!(
        decide(&a, "admin-0000", &id, json!({"decision": "approve"})).await,
        200
    );
    let (status, result) = approved.await.unwrap();
    assert_eq!(status, 200, "{result}");
    assert_eq!(result["data"]["message"], "refund one");
    assert_eq!(
        decide(&a, "admin-0000", &id, json!({"decision": "deny"})).await,
        409
    );

    drop((a, b));
    drop_schema(&schema);
}

/// The plan's step waits for a person; its replica is killed (-9) while it
/// waits; the other replica takes the run over, finds the step's approval
/// where it was left, and once a person approves there, finishes the run
/// without running the earlier step again.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_plan_parked_for_approval_survives_its_replica_killed_and_finishes_on_another() {
    let schema = schema("axon_approval_test");
    let (mut a, b) = replicas(&schema);
    let plan = json!({"name": "refund", "steps": [
        {"id": "look", "tool": "sleep", "params": {"ms": 1}},
        {"id": "pay", "tool": "sleep", "params": {"ms": 2}, "depends_on": ["look"],
         "policy": {"approval": "required"}},
        {"id": "tell", "tool": "sleep", "params": {"ms": 3}, "depends_on": ["pay"]}
    ]});
    let started: Value = client()
        .post(a.url("/v1/runs"))
        .bearer_auth("admin-0000")
        .json(&plan)
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    let run = started["run_id"].as_str().expect("a run id").to_string();
    let id = pending_on(&b).await;
    assert_eq!(id, format!("{run}.pay"), "a step's approval is the step's");
    let (_, state) = get(&b, "admin-0000", &format!("/v1/runs/{run}")).await;
    assert_eq!(state["status"], "waiting_approval", "{state}");
    assert_eq!(state["steps_finished"], 1);

    a.child.kill().unwrap();
    a.child.wait().unwrap();
    assert_eq!(
        decide(&b, "admin-0000", &id, json!({"decision": "approve"})).await,
        200
    );
    let start = Instant::now();
    let done = loop {
        let (_, state) = get(&b, "admin-0000", &format!("/v1/runs/{run}")).await;
        if state["status"] == "succeeded" {
            break state;
        }
        assert!(
            start.elapsed() < Duration::from_secs(60),
            "not finished: {state}"
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    };
    assert_eq!(done["steps_finished"], 3, "{done}");
    // `look` ran once in the cluster's history: on A, before the kill.
    let (_, history) = get(&b, "admin-0000", &format!("/v1/history/{run}")).await;
    let slept: Vec<u64> = history["calls"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|c| c["args"]["ms"].as_u64())
        .collect();
    assert_eq!(slept, [1, 2, 3], "{history}");
    let pay = &history["calls"][1];
    assert_eq!(pay["approval"]["status"], "approved", "{pay}");

    drop(b);
    drop_schema(&schema);
}

/// The dashboard's Approvals page, in real Chromium: the parked call appears
/// (live), and its Approve button lets it run.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_dashboard_approves_a_parked_call() {
    use common::dashboard::{act, browser};
    let s = Served::start("[tools.echo]\napproval = \"required\"\n");
    let b = browser();
    act(&b, "browser_navigate", json!({"url": s.url("/approvals")})).await;
    let waiting = call_echo(&s, "", "ship order 7");
    let start = Instant::now();
    let id = loop {
        let listed = s.get_json("/v1/approvals").await;
        if let Some(id) = listed["approvals"][0]["id"].as_str() {
            break id.to_string();
        }
        assert!(start.elapsed() < Duration::from_secs(30), "nothing parked");
        tokio::time::sleep(Duration::from_millis(50)).await;
    };
    // The open page shows it without a reload.
    let approve = format!("Approve {id}");
    act(
        &b,
        "browser_wait_for_element",
        json!({"role": "button", "name": approve, "timeout_ms": 10000}),
    )
    .await;
    let card = act(
        &b,
        "browser_get_text",
        json!({"selector": "[data-approval]"}),
    )
    .await;
    let text = card.data["text"].as_str().unwrap_or_default().to_string();
    assert!(
        text.contains("echo") && text.contains("requires approval"),
        "{text}"
    );
    act(
        &b,
        "browser_click",
        json!({"role": "button", "name": approve}),
    )
    .await;
    let (status, result) = waiting.await.unwrap();
    assert_eq!(status, 200, "{result}");
    assert_eq!(result["data"]["message"], "ship order 7");
    assert_eq!(result["approval"]["by"], "api");
    act(
        &b,
        "browser_wait_for_element",
        json!({"has_text": "No call is waiting for approval.", "timeout_ms": 10000}),
    )
    .await;
}

/// `axon mcp` with the official Python SDK as the client: the client's user
/// is asked in-band and their answer decides, over 2025-11-25 (elicitation)
/// and over 2026-07-28 (`input_required`, the call sent again).
#[test]
fn an_mcp_client_that_can_show_a_form_is_asked_and_its_answer_decides() {
    for mode in ["legacy", "auto"] {
        asked_over(mode);
    }
}

fn asked_over(mode: &str) {
    let root = common::repo_root();
    let local = Local::new("[tools.echo]\napproval = \"required\"\napproval_timeout_ms = 60000\n");
    let client = |answer: &str| {
        let o = axon_testkit::command(root.join("peers/venv/bin/python"))
            .arg(root.join("peers/approval_client.py"))
            .arg(mode)
            .arg(answer)
            .arg(env!("CARGO_BIN_EXE_axon"))
            .arg("--config")
            .arg(local.dir.join("axon.toml"))
            .env("AXON_STORE_PATH", local.dir.join("axon.db"))
            .env_remove("AXON_CONFIG")
            .output()
            .unwrap();
        stdout_json(&o)
    };

    let approved = client("approve");
    let protocol = if mode == "auto" {
        "2026-07-28"
    } else {
        "2025-11-25"
    };
    assert_eq!(approved["protocol"], protocol, "{approved}");
    assert_eq!(
        approved["asked"].as_array().map(Vec::len),
        Some(1),
        "{approved}"
    );
    let asked = &approved["asked"][0];
    let message = asked["message"].as_str().unwrap();
    assert!(
        message.contains("echo") && message.contains("refund order 40"),
        "{message}"
    );
    assert_eq!(
        asked["requestedSchema"]["properties"]["approve"]["type"],
        "boolean"
    );
    let result = &approved["result"];
    assert_eq!(result["isError"], false, "{result}");
    let call = &result["_meta"]["axon/call"];
    assert_eq!(call["approval"]["status"], "approved", "{result}");
    assert!(
        call["approval"]["by"]
            .as_str()
            .unwrap()
            .starts_with("mcp (")
    );

    let denied = client("deny");
    let result = &denied["result"];
    assert_eq!(result["isError"], true, "{result}");
    let text = result["content"][0]["text"].as_str().unwrap();
    assert!(text.starts_with("approval_denied"), "{text}");
}

/// Issue 59: over 2026-07-28 a client sends the same answer and
/// `requestState` again after its call ran. One decision runs one call: the
/// first sending runs it, the later ones are refused (`approval_denied`).
/// Seen before the fix: three sendings, three runs.
#[test]
fn one_approval_answer_sent_three_times_runs_the_call_once() {
    let root = common::repo_root();
    let local = Local::new("[tools.echo]\napproval = \"required\"\napproval_timeout_ms = 60000\n");
    let o = axon_testkit::command(root.join("peers/venv/bin/python"))
        .arg(root.join("peers/approval_client.py"))
        .args(["replay", "approve"])
        .arg(env!("CARGO_BIN_EXE_axon"))
        .arg("--config")
        .arg(local.dir.join("axon.toml"))
        .env("AXON_STORE_PATH", local.dir.join("axon.db"))
        .env_remove("AXON_CONFIG")
        .output()
        .unwrap();
    let sent = stdout_json(&o);
    let results = sent["results"].as_array().expect("three results");
    let ran: Vec<bool> = results.iter().map(|r| r["isError"] == false).collect();
    assert_eq!(ran, [true, false, false], "{sent}");
    for refused in &results[1..] {
        let text = refused["content"][0]["text"].as_str().unwrap_or_default();
        assert!(text.starts_with("approval_denied"), "{text}");
    }
}
