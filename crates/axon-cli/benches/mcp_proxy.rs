//! What Axon adds to an MCP tool call, measured from one client in one run:
//!
//! - `direct`: an rmcp client calls `echo` on server-everything (a node child on
//!   stdio) — the baseline;
//! - `via_axon`: the same client calls `everything__echo` on `axon mcp` (a child on
//!   stdio, with the default SQLite history), which imports server-everything
//!   and calls it through the pipeline: two process hops instead of one;
//! - `axon_local_echo`: Axon's own `echo` on the same `axon mcp`, no upstream —
//!   what the client→Axon hop and the pipeline cost by themselves.
//!
//! Each is measured as the round-trip latency of one call, and as throughput with
//! 16 calls in flight. Needs server-everything in peers/ (`scripts/peers`).
//!
//! Run: `cargo bench -p axon-cli --bench mcp_proxy`. Ratios go to docs/benchmarks.md.

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use rmcp::ServiceExt;
use rmcp::model::CallToolRequestParams;
use rmcp::service::RunningService;
use rmcp::transport::TokioChildProcess;
use serde_json::json;

type Client = RunningService<rmcp::RoleClient, ()>;

const IN_FLIGHT: usize = 16;

fn everything_js() -> PathBuf {
    let js = axon_testkit::repo_root()
        .join("peers/node_modules/@modelcontextprotocol/server-everything/dist/index.js");
    assert!(
        js.exists(),
        "run scripts/peers first: {} is missing",
        js.display()
    );
    js
}

async fn direct() -> Client {
    let mut cmd = tokio::process::Command::new("node");
    cmd.arg(everything_js()).arg("stdio");
    let (transport, _) = TokioChildProcess::builder(cmd)
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    ().serve(transport).await.unwrap()
}

async fn via_axon(dir: &Path) -> Client {
    std::fs::create_dir_all(dir).unwrap();
    let config = dir.join("axon.toml");
    std::fs::write(
        &config,
        format!(
            "[[mcp.servers]]\nname = \"everything\"\ncommand = \"node\"\nargs = [{:?}, \"stdio\"]\n",
            everything_js().display().to_string()
        ),
    )
    .unwrap();
    let mut cmd = tokio::process::Command::new(env!("CARGO_BIN_EXE_axon"));
    cmd.arg("--config")
        .arg(config)
        .arg("mcp")
        .env("AXON_STORE_PATH", dir.join("axon.db"))
        .env_remove("AXON_CONFIG");
    let (transport, _) = TokioChildProcess::builder(cmd)
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    ().serve(transport).await.unwrap()
}

async fn echo(client: &Client, tool: &str) {
    let args = json!({"message": "hello"}).as_object().cloned().unwrap();
    let r = client
        .call_tool(CallToolRequestParams::new(tool.to_string()).with_arguments(args))
        .await
        .unwrap();
    assert_ne!(r.is_error, Some(true), "{r:?}");
}

async fn batch(client: &Client, tool: &str) {
    futures::future::join_all((0..IN_FLIGHT).map(|_| echo(client, tool))).await;
}

fn bench(c: &mut Criterion) {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    let dir = std::env::temp_dir().join(format!("axon-bench-mcp-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let clients = runtime.block_on(async {
        [
            ("direct", "echo", direct().await),
            ("via_axon", "everything__echo", via_axon(&dir).await),
            (
                "axon_local_echo",
                "echo",
                via_axon(&dir.join("local")).await,
            ),
        ]
    });

    let mut latency = c.benchmark_group("mcp_echo_latency");
    latency.measurement_time(Duration::from_secs(8));
    for (name, tool, client) in &clients {
        latency.bench_function(*name, |b| {
            b.iter_custom(|iters| {
                runtime.block_on(async {
                    let start = Instant::now();
                    for _ in 0..iters {
                        echo(client, tool).await;
                    }
                    start.elapsed()
                })
            })
        });
    }
    latency.finish();

    let mut throughput = c.benchmark_group("mcp_echo_throughput");
    throughput.measurement_time(Duration::from_secs(8));
    throughput.throughput(Throughput::Elements(IN_FLIGHT as u64));
    for (name, tool, client) in &clients {
        throughput.bench_function(*name, |b| {
            b.iter_custom(|iters| {
                runtime.block_on(async {
                    let start = Instant::now();
                    for _ in 0..iters {
                        batch(client, tool).await;
                    }
                    start.elapsed()
                })
            })
        });
    }
    throughput.finish();

    runtime.block_on(async {
        for (_, _, client) in clients {
            let _ = client.cancel().await;
        }
    });
    let _ = std::fs::remove_dir_all(&dir);
}

criterion_group!(benches, bench);
criterion_main!(benches);
