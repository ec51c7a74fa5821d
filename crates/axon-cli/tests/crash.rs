//! Crashes as loops, not single cases: the real `axon` binary killed with
//! SIGKILL at random moments, again and again.
//!
//! (a) `axon run` of a 20-step plan, killed at a random moment and resumed under
//! the same run id until it finishes: no step that finished (its history row is
//! committed) runs again, and none is lost from history.
//! (b) `axon serve` killed under a burst of calls: every call that got a 2xx
//! answer is in history afterwards.
//!
//! The number of kills is `AXON_CRASH_KILLS` (CI runs the default; the long
//! run is `AXON_CRASH_KILLS=100 cargo test -p axon-cli --test crash`, figures
//! in docs/reliability.md).

mod common;

use std::collections::HashMap;

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use axum::Router;
use axum::extract::{Path as UrlPath, State};
use axum::routing::get;
use serde_json::{Value, json};

fn kills() -> usize {
    std::env::var("AXON_CRASH_KILLS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(40)
}

fn temp_dir(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("axon-crash-{name}-{}", ulid::Ulid::new()));
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

fn axon(dir: &Path) -> Command {
    let mut c = axon_testkit::command(env!("CARGO_BIN_EXE_axon"));
    c.env("AXON_STORE_PATH", dir.join("axon.db"))
        .env_remove("AXON_CONFIG")
        .env("AXON_LOG_LEVEL", "off")
        .stdin(Stdio::null());
    c
}

/// An upstream that counts how often each step ran and answers after 30 ms.
async fn counting_upstream() -> (String, Arc<Mutex<HashMap<u32, u32>>>) {
    let counts: Arc<Mutex<HashMap<u32, u32>>> = Arc::default();
    let app =
        Router::new()
            .route(
                "/step/{i}",
                get(
                    |State(counts): State<Arc<Mutex<HashMap<u32, u32>>>>,
                     UrlPath(i): UrlPath<u32>| async move {
                        *counts.lock().unwrap().entry(i).or_default() += 1;
                        tokio::time::sleep(Duration::from_millis(30)).await;
                        axum::Json(json!({"step": i}))
                    },
                ),
            )
            .with_state(counts.clone());
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let base = format!("http://{}", listener.local_addr().unwrap());
    tokio::spawn(async move { axum::serve(listener, app).await });
    (base, counts)
}

/// 20 steps in 4 chains of 5; each reads its predecessor's data.
fn plan(base: &str) -> String {
    let mut steps = Vec::new();
    for i in 0..20 {
        let mut step = json!({
            "id": format!("s{i}"),
            "tool": "http_request",
            "params": {"url": format!("{base}/step/{i}")},
            "policy": {"retry": {"max_attempts": 1}},
        });
        if i >= 4 {
            step["params"]["query"] =
                json!({"after": format!("${{steps.s{}.data.json.step}}", i - 4)});
        }
        steps.push(step);
    }
    json!({"name": "crash-loop", "max_parallel": 4, "steps": steps}).to_string()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn killed_runs_resume_without_running_a_finished_step_again() {
    let (base, counts) = counting_upstream().await;
    let dir = temp_dir("run");
    let plan_path = dir.join("plan.json");
    std::fs::write(&plan_path, plan(&base)).unwrap();
    let wanted = kills();
    let mut rng = fastrand::Rng::with_seed(
        std::env::var("AXON_CRASH_SEED")
            .ok()
            .and_then(|s| s.parse().ok())
            .unwrap_or(42),
    );
    let (mut killed, mut runs, mut reruns) = (0usize, 0usize, 0u32);
    while killed < wanted {
        let run_id = format!("crash-{runs}");
        runs += 1;
        counts.lock().unwrap().clear();
        let mut kills_here = 0u32;
        loop {
            let mut child = axon(&dir)
                .args([
                    "run",
                    plan_path.to_str().unwrap(),
                    "--run-id",
                    &run_id,
                    "--json",
                ])
                .stdout(Stdio::null())
                .stderr(Stdio::null())
                .spawn()
                .unwrap();
            // A run takes ~250 ms of steps after start-up: kill anywhere in it,
            // or let it finish once enough kills have landed in this run.
            let at = Duration::from_millis(rng.u64(20..350));
            let finished = tokio::time::timeout(at, async {
                loop {
                    if let Ok(Some(status)) = child.try_wait() {
                        return status;
                    }
                    tokio::time::sleep(Duration::from_millis(5)).await;
                }
            })
            .await;
            match finished {
                Ok(status) => {
                    assert!(status.success(), "run {run_id} ended with {status}");
                    break;
                }
                Err(_) => {
                    child.kill().unwrap();
                    child.wait().unwrap();
                    killed += 1;
                    kills_here += 1;
                }
            }
        }
        // History: each step recorded exactly once as succeeded: never run again
        // once recorded, never lost.
        let out = axon(&dir)
            .args(["history", "--json", &run_id])
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        let history: Value = serde_json::from_slice(&out.stdout).unwrap();
        let mut recorded: HashMap<u64, u32> = HashMap::new();
        for entry in history["calls"].as_array().expect("a run's calls") {
            if entry["success"] == json!(true) {
                let step = entry["step"]["index"]
                    .as_u64()
                    .expect("a step's call carries its step");
                *recorded.entry(step).or_default() += 1;
            }
        }
        let counts = counts.lock().unwrap().clone();
        for i in 0..20u64 {
            assert_eq!(
                recorded.get(&i).copied().unwrap_or(0),
                1,
                "run {run_id}, step {i}: recorded {recorded:?}"
            );
            let ran = counts.get(&(i as u32)).copied().unwrap_or(0);
            // More executions than records only for calls cut off by a kill
            // before their row was committed (at-least-once).
            assert!(
                ran >= 1 && ran - 1 <= kills_here,
                "step {i} ran {ran} times over {kills_here} kills"
            );
            reruns += ran - 1;
        }
    }
    eprintln!(
        "crash loop: {killed} kills over {runs} runs of 20 steps; 0 finished steps re-run; \
         {reruns} executions cut off before their commit and run again"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_killed_server_keeps_every_call_it_answered() {
    let dir = temp_dir("serve");
    let config = dir.join("axon.toml");
    std::fs::write(&config, "[history]\nmax_per_correlation = 100000\n").unwrap();
    axon_http_tool::install_crypto_provider();
    let client = reqwest::Client::new();
    let rounds = (kills() / 10).max(2);
    let (mut answered_total, mut lost) = (0usize, 0usize);
    for round in 0..rounds {
        let mut child = axon(&dir)
            .args([
                "--config",
                config.to_str().unwrap(),
                "serve",
                "--bind",
                "127.0.0.1:0",
            ])
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        let base = common::listening_url(&mut child);
        let correlation = format!("burst-{round}");
        // Up to 20 000 calls, 32 at a time; the server is killed part-way through.
        let answered: Arc<Mutex<Vec<String>>> = Arc::default();
        let burst = {
            let (client, base, answered, correlation) = (
                client.clone(),
                base.clone(),
                answered.clone(),
                correlation.clone(),
            );
            tokio::spawn(async move {
                use futures::StreamExt;
                futures::stream::iter(0..20_000)
                    .for_each_concurrent(32, |i| {
                        let (client, base, answered, correlation) = (
                            client.clone(),
                            base.clone(),
                            answered.clone(),
                            correlation.clone(),
                        );
                        async move {
                            let sent = client
                                .post(format!("{base}/v1/tools/echo/call"))
                                .json(&json!({"args": {"i": i}, "correlation_id": correlation}))
                                .send()
                                .await;
                            if let Ok(r) = sent
                                && r.status().is_success()
                                && let Ok(body) = r.json::<Value>().await
                                && let Some(id) = body["call_id"].as_str()
                            {
                                answered.lock().unwrap().push(id.to_string());
                            }
                        }
                    })
                    .await;
            })
        };
        tokio::time::sleep(Duration::from_millis(150 + 50 * round as u64)).await;
        child.kill().unwrap();
        child.wait().unwrap();
        let _ = burst.await;
        let answered = answered.lock().unwrap().clone();
        let out = axon(&dir)
            .args([
                "--config",
                config.to_str().unwrap(),
                "history",
                "--json",
                &correlation,
            ])
            .output()
            .unwrap();
        let history: Value = serde_json::from_slice(&out.stdout).unwrap_or(Value::Null);
        let stored: std::collections::HashSet<String> = history
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(|c| c["call_id"].as_str().map(str::to_string))
            .collect();
        lost += answered.iter().filter(|id| !stored.contains(*id)).count();
        answered_total += answered.len();
    }
    eprintln!(
        "serve kills: {rounds} kills, {answered_total} calls answered 2xx, {lost} missing from history"
    );
    assert!(
        answered_total > 0,
        "the server answered nothing before it was killed"
    );
    assert!(
        answered_total < rounds * 20_000,
        "every burst finished before the kill: the kill proved nothing"
    );
    assert_eq!(lost, 0, "calls answered 2xx but not in history");
}
