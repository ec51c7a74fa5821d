//! What the axon-mcp tests share.

use axon_core::{Executor, SharedState, ToolRegistry};

/// Axon's own MCP server over Streamable HTTP, serving `registry`, as `axon
/// serve` mounts it without tokens (each MCP session a tenant of its own).
pub async fn serve_axon(registry: ToolRegistry) -> std::net::SocketAddr {
    let server_executor = Executor::builder(registry)
        .shared_state(SharedState::new())
        .build()
        .unwrap();
    let service = axon_mcp::http_service(
        axon_plan::PlanRunner::new(server_executor),
        &axon_mcp::ToolFilter::default(),
        true,
        None,
        &axon_mcp::McpSessions::default(),
    );
    let router = axum::Router::new().nest_service("/mcp", service);
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    tokio::spawn(async move { axum::serve(listener, router).await });
    addr
}
