//! What Axon adds to a browser action, per action, in one run on one page.
//!
//! A 10-action script (type, type, click a checkbox, select, click a button,
//! read text, press Tab, scroll down, scroll to the top, read the page state)
//! runs on a local page in real headless Chromium:
//!
//! - `axon`: each action is a tool call through `Executor::call` (validation,
//!   breaker, retry loop, timeout, in-memory history, auto-wait checks);
//! - `direct`: the very same DevTools commands, recorded from the Axon round
//!   just before and sent straight to the page, one after another.
//!
//! Rounds alternate (Axon, direct, Axon, …) so drift hits both. Reported: the
//! median latency of each action both ways, their ratio, and the median of all
//! per-action ratios. Target: ≤ 1.1×.
//!
//! Run: `cargo bench -p axon-browser --bench actions` (needs Chromium:
//! /usr/bin/chromium or AXON_CHROME). Figures go to docs/benchmarks.md.

mod common;

use std::sync::Arc;
use std::time::{Duration, Instant};

use axon_browser::{BrowserConfig, Browsers, cdp};
use axon_core::{Executor, PolicyState, ToolCall, ToolRegistry};
use serde_json::{Value, json};

const PAGE: &str = r#"<!doctype html>
<html><head><title>Bench</title></head><body>
<form onsubmit="return false">
  <label for="name">Name</label> <input id="name">
  <label for="email">Email</label> <input id="email" type="email">
  <label><input id="agree" type="checkbox"> I agree</label>
  <select id="plan"><option value="free">Free</option><option value="pro">Pro</option></select>
  <button id="go" type="button" onclick="document.getElementById('out').textContent = 'sent ' + Date.now()">Send</button>
</form>
<p id="out">idle</p>
<div style="height: 4000px"></div>
</body></html>"#;

const ROUNDS: usize = 200;

fn script() -> Vec<(&'static str, Value)> {
    vec![
        (
            "browser_type",
            json!({"selector": "#name", "text": "Ada", "clear": true}),
        ),
        (
            "browser_type",
            json!({"selector": "#email", "text": "ada@example.com", "clear": true}),
        ),
        ("browser_click", json!({"selector": "#agree"})),
        (
            "browser_select_option",
            json!({"selector": "#plan", "values": "pro"}),
        ),
        ("browser_click", json!({"selector": "#go"})),
        ("browser_get_text", json!({"selector": "#out"})),
        ("browser_press_key", json!({"key": "Tab"})),
        ("browser_scroll", json!({"direction": "down"})),
        ("browser_scroll", json!({"to": "top"})),
        ("browser_get_page_state", json!({})),
    ]
}

fn median(v: &mut [Duration]) -> Duration {
    v.sort();
    v[v.len() / 2]
}

fn main() {
    common::run_as_bench(run);
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

    let browsers = Arc::new(Browsers::new(BrowserConfig::default()));
    let mut registry = ToolRegistry::new();
    axon_browser::register(&mut registry, browsers.clone()).expect("the browser tools");
    let executor = Executor::builder(registry)
        .policy_state(PolicyState::new())
        .build()
        .expect("an executor");
    let session = "bench";
    let opened = executor
        .call(ToolCall::new("browser_navigate", json!({"url": url})).correlation_id(session))
        .await;
    assert!(opened.success, "{opened:?}");
    let page = browsers.page(session).await.expect("the page");

    let script = script();
    let mut axon: Vec<Vec<Duration>> = vec![Vec::new(); script.len()];
    let mut direct: Vec<Vec<Duration>> = vec![Vec::new(); script.len()];
    let mut commands = 0;
    for round in 0..ROUNDS + 10 {
        // Axon, recording what it sends.
        let mut recorded = Vec::new();
        for (i, (tool, args)) in script.iter().enumerate() {
            cdp::record_commands(true);
            let start = Instant::now();
            let r = executor
                .call(ToolCall::new(*tool, args.clone()).correlation_id(session))
                .await;
            let took = start.elapsed();
            cdp::record_commands(false);
            assert!(r.success, "{tool}: {r:?}");
            recorded.push(cdp::take_recorded());
            if round >= 10 {
                axon[i].push(took);
            }
        }
        // The same commands, straight to the page.
        for (i, list) in recorded.into_iter().enumerate() {
            commands += list.len();
            let start = Instant::now();
            for (method, params) in list {
                cdp::replay(&page, method, params)
                    .await
                    .expect("replayed command");
            }
            if round >= 10 {
                direct[i].push(start.elapsed());
            }
        }
    }
    browsers.shutdown().await;

    println!("browser actions, median of {ROUNDS} rounds, same page, same run");
    println!(
        "{:<24} {:>10} {:>10} {:>7}",
        "action", "direct", "axon", "ratio"
    );
    let mut ratios = Vec::new();
    for (i, (tool, _)) in script.iter().enumerate() {
        let d = median(&mut direct[i]);
        let a = median(&mut axon[i]);
        let ratio = a.as_secs_f64() / d.as_secs_f64();
        ratios.push(ratio);
        println!(
            "{:<24} {:>8.0}µs {:>8.0}µs {:>6.2}×",
            format!("{}. {}", i + 1, tool.trim_start_matches("browser_")),
            d.as_secs_f64() * 1e6,
            a.as_secs_f64() * 1e6,
            ratio
        );
    }
    ratios.sort_by(f64::total_cmp);
    let all_direct: Duration = direct.iter_mut().map(|v| median(v)).sum();
    let all_axon: Duration = axon.iter_mut().map(|v| median(v)).sum();
    println!(
        "median per-action ratio {:.2}×; script {:.2} ms direct, {:.2} ms axon ({:.2}×); {:.1} CDP commands per action",
        ratios[ratios.len() / 2],
        all_direct.as_secs_f64() * 1e3,
        all_axon.as_secs_f64() * 1e3,
        all_axon.as_secs_f64() / all_direct.as_secs_f64(),
        commands as f64 / ((ROUNDS + 10) * script.len()) as f64
    );
}
