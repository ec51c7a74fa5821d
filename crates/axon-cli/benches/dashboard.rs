//! How long the dashboard's pages take to show, from a local `axon serve` whose
//! history holds 1 000 runs, in headless Chromium driven by Axon's own browser
//! tools. Each sample navigates to a page and waits until its content is drawn
//! (the runs table's rows; the run's graph), so it counts the HTML, the script,
//! the API calls it makes and the rendering. Baseline in the same run: the same
//! navigate-and-wait on `/healthz` (a tiny JSON page): what the browser and the
//! tools cost by themselves.
//!
//! Run: `cargo bench -p axon-cli --bench dashboard`. Figures go to docs/benchmarks.md.

use std::process::Stdio;
use std::sync::Arc;
use std::time::Duration;

use axon_browser::{BrowserConfig, Browsers};
use axon_core::{Executor, PolicyState, ToolCall, ToolRegistry};
use criterion::{Criterion, criterion_group, criterion_main};
use serde_json::{Value, json};

const RUNS: usize = 1000;

/// `axon serve` on a free port over a store in `dir`, with [`RUNS`] runs of a
/// three-step plan in its history; the process and its base URL.
async fn serve_with_runs(dir: &std::path::Path) -> (tokio::process::Child, String) {
    let mut child = tokio::process::Command::new(env!("CARGO_BIN_EXE_axon"))
        .args(["serve", "--bind", "127.0.0.1:0"])
        .env("AXON_STORE_PATH", dir.join("axon.db"))
        .env_remove("AXON_CONFIG")
        .stdout(Stdio::piped())
        .kill_on_drop(true)
        .spawn()
        .expect("axon serve starts");
    let stdout = child.stdout.take().expect("piped");
    let mut line = String::new();
    tokio::io::AsyncBufReadExt::read_line(&mut tokio::io::BufReader::new(stdout), &mut line)
        .await
        .expect("its address");
    let base = line
        .trim()
        .strip_prefix("axon: listening on ")
        .expect("the address line")
        .to_string();
    let http = reqwest::Client::new();
    let plan = json!({"name": "bench", "steps": [
        {"id": "a", "tool": "echo", "params": {"n": 1}},
        {"id": "b", "tool": "echo", "depends_on": ["a"]},
        {"id": "c", "tool": "echo", "depends_on": ["a"]},
    ]});
    for i in 0..RUNS {
        let r = http
            .post(format!("{base}/v1/runs?wait=true&run_id=bench-{i}"))
            .json(&plan)
            .send()
            .await
            .expect("a run");
        assert!(r.status().is_success());
    }
    (child, base)
}

/// Axon's browser tools on headless Chromium, one attempt per call.
fn browser() -> Executor {
    let mut registry = ToolRegistry::new();
    axon_browser::register(
        &mut registry,
        Arc::new(Browsers::new(BrowserConfig::default())),
    )
    .expect("browser tools");
    Executor::builder(registry)
        .policy_state(PolicyState::new())
        .defaults(json!({"timeout_ms": 20000, "retry": {"max_attempts": 1}}))
        .build()
        .expect("executor")
}

/// Navigate to `url` and wait for the element `ready` names: one sample.
async fn show(browser: &Executor, url: String, ready: Value) {
    let r = browser
        .call(ToolCall::new("browser_navigate", json!({"url": url})).correlation_id("bench"))
        .await;
    assert!(r.success, "{:?}", r.error);
    let r = browser
        .call(ToolCall::new("browser_wait_for_element", ready).correlation_id("bench"))
        .await;
    assert!(r.success, "{:?}", r.error);
}

fn bench(c: &mut Criterion) {
    axon_http_tool::install_crypto_provider();
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .expect("runtime");
    let dir = std::env::temp_dir().join(format!("axon-dash-bench-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("a temp dir");
    let (mut child, base) = rt.block_on(serve_with_runs(&dir));
    let browser = browser();

    let mut group = c.benchmark_group("dashboard_1000_runs");
    group
        .sample_size(20)
        .measurement_time(Duration::from_secs(10));
    for (name, path, ready) in [
        ("baseline_healthz", "/healthz", json!({"has_text": "ok"})),
        (
            "runs_page",
            "/runs",
            json!({"selector": "a[href='/runs/bench-999']"}),
        ),
        (
            "run_page",
            "/runs/bench-500",
            json!({"selector": "[data-step='c'][data-state='succeeded']"}),
        ),
    ] {
        let mut ready = ready;
        ready["timeout_ms"] = json!(5000);
        group.bench_function(name, |b| {
            b.to_async(&rt)
                .iter(|| show(&browser, format!("{base}{path}"), ready.clone()))
        });
    }
    group.finish();
    let _ = rt.block_on(child.kill());
    let _ = std::fs::remove_dir_all(&dir);
}

criterion_group!(benches, bench);
criterion_main!(benches);
