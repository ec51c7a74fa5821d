//! What recording a session costs an action (issue 63): the same 5-action
//! script on the same page in two sessions of one browser, one with
//! `record: "off"`, one with `record: "always"`, rounds alternating so that
//! drift hits both, a quarter second between blocks (so one way's
//! screenshots still under way do not land on the other's actions), the
//! actions of a block back to back — and again with 100 ms before each
//! call, as an agent's calls come (a model round trip apart). Reported: each action's median both ways and their
//! ratio, and the median of the per-action ratios. Target: ≤ 1.15× on, and
//! `off` the same as the plain actions (`benches/actions.rs`: its check is
//! one lookup of the session).
//!
//! Run: `cargo bench -p axon-browser --bench recording` (needs Chromium).
//! Figures go to docs/benchmarks.md.

mod common;

use std::sync::Arc;
use std::time::{Duration, Instant};

use axon_browser::{BrowserConfig, Browsers};
use axon_core::{Executor, PolicyState, ToolCall, ToolRegistry};
use serde_json::{Value, json};

const PAGE: &str = r#"<!doctype html>
<html><head><title>Bench</title></head><body>
<form onsubmit="return false">
  <label for="name">Name</label> <input id="name">
  <label><input id="agree" type="checkbox"> I agree</label>
  <select id="plan"><option value="free">Free</option><option value="pro">Pro</option></select>
  <button id="go" type="button" onclick="document.getElementById('out').textContent = 'sent ' + Date.now()">Send</button>
</form>
<p id="out">idle</p>
</body></html>"#;

const ROUNDS: usize = 100;

/// The pause between one way's block of actions and the other's.
const QUIET: Duration = Duration::from_millis(250);

/// The pause before each call in the paced run: far less than a model's
/// round trip, enough for a frame's screenshot to be done.
const PAUSE: Duration = Duration::from_millis(100);

fn script() -> Vec<(&'static str, Value)> {
    vec![
        (
            "browser_type",
            json!({"selector": "#name", "text": "Ada", "clear": true}),
        ),
        ("browser_click", json!({"selector": "#agree"})),
        (
            "browser_select_option",
            json!({"selector": "#plan", "values": "pro"}),
        ),
        ("browser_click", json!({"selector": "#go"})),
        ("browser_press_key", json!({"key": "Tab"})),
    ]
}

fn median(v: &mut [Duration]) -> Duration {
    v.sort();
    v[v.len() / 2]
}

fn main() {
    common::run_as_bench(run);
}

async fn open(executor: &Executor, record: &str, url: &str) -> String {
    let opened = executor
        .call(ToolCall::new(
            "browser_session_new",
            json!({"record": record}),
        ))
        .await;
    assert!(opened.success, "{opened:?}");
    let session = opened.data["session"]
        .as_str()
        .expect("a handle")
        .to_string();
    let arrived = executor
        .call(ToolCall::new(
            "browser_navigate",
            json!({"url": url, "session": session}),
        ))
        .await;
    assert!(arrived.success, "{arrived:?}");
    session
}

async fn run() {
    let app = axum::Router::new().route(
        "/",
        axum::routing::get(|| async { axum::response::Html(PAGE) }),
    );
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .expect("a port");
    let url = format!("http://{}/", listener.local_addr().expect("an address"));
    tokio::spawn(async move { axum::serve(listener, app).await });

    let files = std::env::temp_dir().join(format!("axon-bench-recording-{}", std::process::id()));
    let browsers = Arc::new(
        Browsers::new(BrowserConfig::default()).with_files(axon_core::files::FileDir::new(&files)),
    );
    let mut registry = ToolRegistry::new();
    axon_browser::register(&mut registry, browsers.clone()).expect("the browser tools");
    let executor = Executor::builder(registry)
        .policy_state(PolicyState::new())
        .build()
        .expect("an executor");
    let off = open(&executor, "off", &url).await;
    let on = open(&executor, "always", &url).await;

    // Back to back, as a scripted run calls; then with a pause before each
    // call, as an agent's model round trip (seconds) spaces its calls.
    let tight = measure(&executor, [&off, &on], Duration::ZERO, ROUNDS).await;
    let paced = measure(&executor, [&off, &on], PAUSE, ROUNDS / 2).await;
    let frames = executor
        .call(ToolCall::new(
            "browser_recording",
            json!({"session": on, "path": "bench-recording.html", "overwrite": true}),
        ))
        .await;
    browsers.shutdown().await;

    println!(
        "recording, same page, same run; frames kept: {} (export: {})",
        frames.data["frames"],
        if frames.success { "written" } else { "failed" }
    );
    report("back to back", tight);
    report(&format!("{} ms before each call", PAUSE.as_millis()), paced);
}

/// Each action's times both ways (`[off, on]`), `rounds` rounds after 10 to
/// warm up, with `pause` before each call.
async fn measure(
    executor: &Executor,
    sessions: [&String; 2],
    pause: Duration,
    rounds: usize,
) -> [Vec<Vec<Duration>>; 2] {
    let script = script();
    let mut times: [Vec<Vec<Duration>>; 2] = [
        vec![Vec::new(); script.len()],
        vec![Vec::new(); script.len()],
    ];
    for round in 0..rounds + 10 {
        for (way, session) in sessions.into_iter().enumerate() {
            // The last block's screenshots finish before this block starts,
            // so that one way's work in the background does not land on
            // the other's actions.
            tokio::time::sleep(QUIET).await;
            for (i, (tool, args)) in script.iter().enumerate() {
                let mut args = args.clone();
                args["session"] = json!(session);
                tokio::time::sleep(pause).await;
                let start = Instant::now();
                let r = executor.call(ToolCall::new(*tool, args)).await;
                let took = start.elapsed();
                assert!(r.success, "{tool}: {r:?}");
                if round >= 10 {
                    times[way][i].push(took);
                }
            }
        }
    }
    times
}

/// Print each action's medians and ratio, and the median ratio.
fn report(title: &str, mut times: [Vec<Vec<Duration>>; 2]) {
    println!("{title}: median of {} rounds", times[0][0].len());
    println!(
        "{:<24} {:>10} {:>10} {:>7}",
        "action", "off", "always", "ratio"
    );
    let mut ratios = Vec::new();
    for (i, (tool, _)) in script().iter().enumerate() {
        let off = median(&mut times[0][i]);
        let on = median(&mut times[1][i]);
        let ratio = on.as_secs_f64() / off.as_secs_f64();
        ratios.push(ratio);
        println!(
            "{:<24} {:>8.0}µs {:>8.0}µs {:>6.2}×",
            format!("{}. {}", i + 1, tool.trim_start_matches("browser_")),
            off.as_secs_f64() * 1e6,
            on.as_secs_f64() * 1e6,
            ratio
        );
    }
    ratios.sort_by(f64::total_cmp);
    println!("median per-action ratio {:.2}×", ratios[ratios.len() / 2]);
}
