//! What a navigation costs through Axon: `browser_navigate` (until `load`) to a
//! local page that pulls a stylesheet, a script, two images and an iframe, so
//! that every request the page makes passes the browser's network guard
//! (`src/egress.rs`). Run it on two builds to see what the guard costs a
//! navigation; the per-action figures of `actions.rs` beside it make no request.
//!
//! Run: `cargo bench -p axon-browser --bench navigate` (needs Chromium).
//! Figures go to docs/benchmarks.md.

mod common;

use std::sync::Arc;
use std::time::{Duration, Instant};

use axon_browser::{BrowserConfig, Browsers};
use axon_core::{Executor, PolicyState, ToolCall, ToolRegistry};
use serde_json::json;

const PAGE: &str = r#"<!doctype html><html><head><title>Nav</title>
<link rel="stylesheet" href="/s.css"><script src="/a.js"></script></head>
<body><h1>Page</h1><img src="/i1.svg"><img src="/i2.svg"><iframe src="/frame"></iframe></body></html>"#;

const ROUNDS: usize = 60;

fn main() {
    common::run_as_bench(run);
}

async fn run() {
    use axum::routing::get;
    let svg = || async {
        (
            [
                ("content-type", "image/svg+xml"),
                ("cache-control", "no-store"),
            ],
            "<svg xmlns='http://www.w3.org/2000/svg' width='10' height='10'/>",
        )
    };
    let app = axum::Router::new()
        .route(
            "/",
            get(|| async { ([("cache-control", "no-store")], axum::response::Html(PAGE)) }),
        )
        .route(
            "/s.css",
            get(|| async {
                (
                    [("content-type", "text/css"), ("cache-control", "no-store")],
                    "h1{color:red}",
                )
            }),
        )
        .route(
            "/a.js",
            get(|| async {
                (
                    [
                        ("content-type", "text/javascript"),
                        ("cache-control", "no-store"),
                    ],
                    "window.x=1",
                )
            }),
        )
        .route("/i1.svg", get(svg))
        .route("/i2.svg", get(svg))
        .route(
            "/frame",
            get(|| async {
                (
                    [("cache-control", "no-store")],
                    axum::response::Html("<p>frame</p>"),
                )
            }),
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
    let mut took = Vec::with_capacity(ROUNDS);
    for round in 0..ROUNDS + 5 {
        let start = Instant::now();
        let r = executor
            .call(
                ToolCall::new(
                    "browser_navigate",
                    json!({"url": url, "wait_until": "load"}),
                )
                .correlation_id("nav"),
            )
            .await;
        let elapsed = start.elapsed();
        assert!(r.success, "{r:?}");
        if round >= 5 {
            took.push(elapsed);
        }
    }
    browsers.shutdown().await;
    took.sort();
    let at = |q: f64| took[((took.len() as f64 - 1.0) * q) as usize];
    let ms = |d: Duration| d.as_secs_f64() * 1e3;
    println!(
        "browser_navigate to a page of 6 requests, {ROUNDS} rounds: p50 {:.2} ms, p90 {:.2} ms, min {:.2} ms",
        ms(at(0.5)),
        ms(at(0.9)),
        ms(took[0])
    );
}
