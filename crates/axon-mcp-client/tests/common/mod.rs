//! What the axon-mcp-client tests share: MCP servers to import from.

use std::path::PathBuf;

use axon_core::{Executor, PolicyState, ToolRegistry};
use axon_mcp_client::McpServerConfig;

/// Axon's own MCP server over Streamable HTTP, serving `registry`, as `axon
/// serve` mounts it without tokens (each MCP session a tenant of its own).
#[allow(dead_code)] // not every test file serves
pub async fn serve_axon(registry: ToolRegistry) -> std::net::SocketAddr {
    let server_executor = Executor::builder(registry)
        .policy_state(PolicyState::new())
        .build()
        .unwrap();
    let service = axon_mcp_server::http_service(
        axon_plan::PlanRunner::new(server_executor),
        &axon_core::Caller {
            whose: axon_core::Whose::EachSession,
            ..axon_core::Caller::process(axon_core::ToolFilter::default())
        },
        true,
        &axon_mcp_server::McpSessions::default(),
    );
    let router = axum::Router::new().nest_service("/mcp", service);
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    tokio::spawn(async move { axum::serve(listener, router).await });
    addr
}

/// server-everything's entry point. Missing is a failure, not a skip: CI installs it.
#[allow(dead_code)] // not every test file starts it
pub fn everything_js() -> PathBuf {
    let path = axon_testkit::repo_root()
        .join("peers/node_modules/@modelcontextprotocol/server-everything/dist/index.js");
    assert!(
        path.exists(),
        "server-everything is not installed at {}: run scripts/peers (scripts/test does)",
        path.display()
    );
    path
}

/// server-everything over stdio, as its own README runs it.
#[allow(dead_code)] // not every test file starts it
pub fn everything() -> McpServerConfig {
    let js = everything_js().to_string_lossy().into_owned();
    McpServerConfig::stdio("everything", "node", [js, "stdio".to_string()])
}
