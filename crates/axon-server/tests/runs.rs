//! Plans and runs over the HTTP API, in process: validated, run and waited
//! for, polled, drawn, cancelled; listed newest first, by status, a page at a
//! time. (Moved from axon-cli's `tests/serve.rs`, which spawned
//! the binary for it.)

mod common;

use std::time::Duration;

use axon_server::ServerOptions;
use axum::http::StatusCode;
use common::Api;
use serde_json::{Value, json};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn runs_are_listed_newest_first_by_status_a_page_at_a_time() {
    let s = Api::start(ServerOptions::default()).await;
    let ok = json!({"name": "fine", "steps": [{"id": "a", "tool": "echo"}, {"id": "b", "tool": "echo", "depends_on": ["a"]}]});
    let broken = json!({"name": "broken", "steps": [
        {"id": "a", "tool": "flaky", "params": {"key": format!("list-{}", ulid::Ulid::new()), "fail_times": 9, "kind": "failed"}},
        {"id": "b", "tool": "echo", "depends_on": ["a"]},
        {"id": "c", "tool": "echo"},
    ]});
    for (id, plan) in [("l-1", &ok), ("l-2", &broken), ("l-3", &ok)] {
        let (status, _) = s
            .post(&format!("/v1/runs?wait=true&run_id={id}"), plan.clone())
            .await;
        assert_eq!(status, StatusCode::OK, "{id}");
        // Distinct update times, so that the order is the order of the runs.
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
    let (status, started) = s
        .post(
            "/v1/runs?run_id=l-4",
            json!({"steps": [{"tool": "sleep", "params": {"ms": 5000}}]}),
        )
        .await;
    assert_eq!(status, StatusCode::ACCEPTED, "{started}");

    // The background run is listed once its start is stored.
    let mut page = Value::Null;
    for _ in 0..100 {
        let (status, body) = s.get("/v1/runs").await;
        assert_eq!(status, StatusCode::OK);
        page = body;
        if page["runs"][0]["run_id"] == "l-4" {
            break;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    let ids: Vec<&str> = page["runs"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["run_id"].as_str().unwrap())
        .collect();
    assert_eq!(ids, ["l-4", "l-3", "l-2", "l-1"], "{page}");
    assert_eq!(page["runs"][0]["status"], "running");
    assert_eq!(page["next_before"], Value::Null, "one page holds them all");
    let failed = &page["runs"][2];
    assert_eq!(failed["plan"], "broken");
    assert_eq!(failed["status"], "failed");
    assert_eq!(
        (
            failed["steps_total"].clone(),
            failed["succeeded"].clone(),
            failed["failed"].clone(),
            failed["skipped"].clone()
        ),
        (json!(3), json!(1), json!(1), json!(1)),
        "{failed}"
    );
    assert!(failed["duration_ms"].is_u64());

    let (_, only) = s.get("/v1/runs?status=failed").await;
    assert_eq!(only["runs"].as_array().unwrap().len(), 1);
    assert_eq!(only["runs"][0]["run_id"], "l-2");
    let (_, running) = s.get("/v1/runs?status=running").await;
    assert_eq!(running["runs"][0]["run_id"], "l-4");
    assert_eq!(running["runs"].as_array().unwrap().len(), 1);

    // Two at a time: the cursor leads to the rest, and the last page says so.
    let (_, first) = s.get("/v1/runs?limit=2").await;
    assert_eq!(first["runs"].as_array().unwrap().len(), 2);
    let cursor = first["next_before"].as_i64().expect("a cursor");
    let (_, second) = s.get(&format!("/v1/runs?limit=2&before={cursor}")).await;
    let rest: Vec<&str> = second["runs"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["run_id"].as_str().unwrap())
        .collect();
    assert_eq!(rest, ["l-2", "l-1"]);

    for (query, pointer) in [
        ("status=lost", "/status"),
        ("limit=0", "/limit"),
        ("limit=501", "/limit"),
    ] {
        let (status, p) = s.get(&format!("/v1/runs?{query}")).await;
        assert_eq!(status, StatusCode::BAD_REQUEST, "{query}");
        assert_eq!(p["pointer"], pointer, "{query}: {p}");
    }
    let (status, _) = s.get("/v1/runs?before=soon").await;
    assert_eq!(status, StatusCode::BAD_REQUEST);
    let r = s.send("DELETE", "/v1/runs/l-4", &[], None).await;
    assert_eq!(r.status, StatusCode::ACCEPTED);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn plans_validate_run_wait_poll_and_cancel() {
    let s = Api::start(ServerOptions::default()).await;
    let (status, body) = s
        .post(
            "/v1/plans/validate",
            json!({"steps": [{"tool": "echo", "params": {}}]}),
        )
        .await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(body, json!({"valid": true, "steps": 1}));

    let cyclic = json!({"steps": [
        {"tool": "echo", "depends_on": [1]},
        {"tool": "echo", "depends_on": [0]},
    ]});
    let (status, p) = s.post("/v1/plans/validate", cyclic.clone()).await;
    assert_eq!(status, StatusCode::UNPROCESSABLE_ENTITY);
    assert_eq!(p["pointer"], "/steps/0/depends_on");
    assert!(p["detail"].as_str().unwrap().contains("cycle"));
    let (status, _) = s.post("/v1/runs", cyclic).await;
    assert_eq!(status, StatusCode::UNPROCESSABLE_ENTITY);
    let r = s.post_text("/v1/runs", "steps: [ {tool: ").await;
    assert_eq!(r.status, StatusCode::BAD_REQUEST);
    assert!(r.is_problem());

    // YAML, waited for.
    let yaml =
        std::fs::read_to_string(axon_testkit::repo_root().join("examples/plans/parallel.yaml"))
            .unwrap();
    let r = s.post_text("/v1/runs?wait=true&run_id=par-1", &yaml).await;
    assert_eq!(r.status, StatusCode::OK);
    let result = r.body;
    assert_eq!(result["run_id"], "par-1");
    assert_eq!(result["status"], "succeeded");
    let (_, run) = s.get("/v1/runs/par-1").await;
    assert_eq!(run["status"], "succeeded");
    assert_eq!(run["steps_finished"], run["steps_total"]);
    assert_eq!(run["result"]["status"], "succeeded");
    // The stored result comes back whole, every step in plan order.
    let indexes: Vec<Value> = run["result"]["steps"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["index"].clone())
        .collect();
    assert_eq!(indexes, [json!(0), json!(1), json!(2)]);
    let graph = s
        .send("GET", "/v1/runs/par-1/graph?format=dot", &[], None)
        .await;
    assert_eq!(graph.status, StatusCode::OK);
    assert!(
        graph.headers["content-type"]
            .to_str()
            .unwrap()
            .starts_with("text/vnd.graphviz")
    );
    let dot = graph.text;
    assert!(dot.contains("s2 [label=\"fx_rates\\nsleep\"];"), "{dot}");
    let mermaid = s.send("GET", "/v1/runs/par-1/graph", &[], None).await;
    assert!(mermaid.text.contains("flowchart LR"));
    let (status, p) = s.get("/v1/runs/par-1/graph?format=svg").await;
    assert_eq!(status, StatusCode::BAD_REQUEST);
    assert_eq!(p["pointer"], "/format");
    let (status, _) = s.get("/v1/runs/none/graph").await;
    assert_eq!(status, StatusCode::NOT_FOUND);
    // Its plan, as run and compiled for replay (no browser_act step: nothing
    // to replace); tests/replay.rs replays a browser run.
    let (status, ran) = s.get("/v1/runs/par-1/plan").await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(ran["plan"]["steps"].as_array().unwrap().len(), 3);
    assert!(ran.get("replay").is_none(), "{ran}");
    let (status, replay) = s.get("/v1/runs/par-1/plan?replay=true").await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(replay["plan"], ran["plan"]);
    assert_eq!(replay["replay"], json!({"replaced": [], "kept": []}));
    let (status, _) = s.get("/v1/runs/none/plan?replay=true").await;
    assert_eq!(status, StatusCode::NOT_FOUND);

    // In the background: 202, running, cancelled.
    let (status, started) = s
        .post(
            "/v1/runs?run_id=slow-1",
            json!({"steps": [{"tool": "sleep", "params": {"ms": 5000}}]}),
        )
        .await;
    assert_eq!(status, StatusCode::ACCEPTED);
    assert_eq!(started["run_id"], "slow-1");
    let (_, run) = s.get("/v1/runs/slow-1").await;
    assert_eq!(run["status"], "running");
    let (status, _) = s
        .post(
            "/v1/runs?run_id=slow-1",
            json!({"steps": [{"tool": "echo"}]}),
        )
        .await;
    assert_eq!(
        status,
        StatusCode::CONFLICT,
        "one run id runs once at a time"
    );
    let r = s.send("DELETE", "/v1/runs/slow-1", &[], None).await;
    assert_eq!(r.status, StatusCode::ACCEPTED);
    let mut status = Value::Null;
    for _ in 0..100 {
        status = s.get("/v1/runs/slow-1").await.1["status"].clone();
        if status != "running" {
            break;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    assert_eq!(status, "cancelled");
    let r = s.send("DELETE", "/v1/runs/slow-1", &[], None).await;
    assert_eq!(r.status, StatusCode::CONFLICT);
    let r = s.send("DELETE", "/v1/runs/none", &[], None).await;
    assert_eq!(r.status, StatusCode::NOT_FOUND);
}
