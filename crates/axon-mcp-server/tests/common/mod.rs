//! What the axon-mcp-server tests share.

use axon_core::{Executor, PolicyState, ToolRegistry};

/// Axon's own MCP server over Streamable HTTP, serving `registry`, as `axon
/// serve` mounts it without tokens (each MCP session a tenant of its own).
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
