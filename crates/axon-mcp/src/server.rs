//! Axon as an MCP server: the registry and `run_plan`, through the pipeline.

use std::sync::Arc;

use axon_core::{CallResult, ToolCall};
use axon_plan::{Plan, PlanRunner, RunOptions};
use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, Implementation, ListToolsResult,
    PaginatedRequestParams, ResultType, ServerCapabilities, ServerConfig, Tool,
};
use rmcp::service::RequestContext;
use rmcp::{ErrorData, RoleServer, ServerHandler, ServiceExt};
use serde_json::{Value, json};

fn new_session_id() -> String {
    format!("mcp-{}", ulid::Ulid::new())
}

/// The name of the plan tool.
pub const RUN_PLAN: &str = "run_plan";

/// The MCP face of a [`PlanRunner`] (and its executor's registry). One value
/// serves one MCP session.
#[derive(Clone)]
pub struct AxonMcp {
    runner: Arc<PlanRunner>,
    /// The correlation id of this session's tool calls (DESIGN.md: one MCP
    /// session is one browser session, so its browser tools share one page;
    /// its calls are one group in history).
    session: String,
}

impl AxonMcp {
    /// Serve the tools of `runner`'s executor, and plans on `runner`, as one
    /// session.
    pub fn new(runner: PlanRunner) -> Self {
        AxonMcp {
            runner: Arc::new(runner),
            session: new_session_id(),
        }
    }

    /// A handler for another session over the same runner.
    pub fn new_session(&self) -> Self {
        AxonMcp {
            runner: self.runner.clone(),
            session: new_session_id(),
        }
    }

    /// This session's correlation id.
    pub fn session(&self) -> &str {
        &self.session
    }

    /// `tools/list`: the registry, then `run_plan`.
    pub fn tools(&self) -> Vec<Value> {
        let mut tools: Vec<Value> = self
            .runner
            .executor()
            .registry()
            .specs()
            .iter()
            .map(|s| s.mcp_tool())
            .collect();
        tools.push(json!({
            "name": RUN_PLAN,
            "description": "Runs a plan (DESIGN.md format: steps with tool, params, depends_on, templates) and returns the plan result. Finished steps are checkpointed; the same run_id resumes.",
            "inputSchema": {
                "type": "object",
                "required": ["plan"],
                "properties": {
                    "plan": {"description": "The plan: an object, or JSON/YAML text.", "type": ["object", "string"]},
                    "run_id": {"type": "string", "description": "Run (or resume) under this id."}
                },
                "additionalProperties": false
            },
            "annotations": {"readOnlyHint": false, "destructiveHint": false, "idempotentHint": false, "openWorldHint": true}
        }));
        tools
    }

    async fn run_plan(&self, args: Value, cancel: axon_core::CancellationToken) -> Value {
        let plan = match &args["plan"] {
            Value::String(text) => Plan::parse(text).map_err(|e| e.to_string()),
            Value::Object(_) => serde_json::from_value::<Plan>(args["plan"].clone())
                .map_err(|e| format!("/plan: {e}")),
            Value::Null => Err("/plan: required".to_string()),
            _ => Err("/plan: must be an object or JSON/YAML text".to_string()),
        };
        let plan = match plan {
            Ok(plan) => plan,
            Err(message) => return error_result("invalid_arguments", None, &message),
        };
        let options = RunOptions {
            run_id: args["run_id"].as_str().map(str::to_string),
            cancel: Some(cancel),
            ..RunOptions::default()
        };
        match self.runner.run(&plan, options).await {
            Ok(result) => {
                let structured = json!(result);
                let text = structured.to_string();
                json!({
                    "content": [{"type": "text", "text": text}],
                    "structuredContent": structured,
                    "isError": !result.success(),
                })
            }
            Err(errors) => error_result("invalid_arguments", None, &errors.to_string()),
        }
    }
}

/// A failed call as MCP's `isError` result: kind, code and message in the text.
fn error_result(kind: &str, code: Option<&str>, message: &str) -> Value {
    let text = match code {
        Some(code) => format!("{kind} ({code}): {message}"),
        None => format!("{kind}: {message}"),
    };
    json!({"content": [{"type": "text", "text": text}], "isError": true})
}

/// A call result as an MCP tool result.
fn call_result(result: &CallResult) -> Value {
    let structured = json!(result);
    match &result.error {
        None => json!({
            "content": [{"type": "text", "text": result.data.to_string()}],
            "structuredContent": structured,
            "isError": false,
        }),
        Some(e) => {
            let mut out = error_result(e.kind.as_str(), e.code.as_deref(), &e.message);
            out["structuredContent"] = structured;
            out
        }
    }
}

fn internal(e: impl std::fmt::Display) -> ErrorData {
    ErrorData::internal_error(e.to_string(), None)
}

impl ServerHandler for AxonMcp {
    fn get_info(&self) -> ServerConfig {
        ServerConfig::new(ServerCapabilities::builder().enable_tools().build())
            .with_server_info(Implementation::new("axon", env!("CARGO_PKG_VERSION")))
            .with_instructions(
                "Axon runs each tool call through retries, timeouts, circuit breakers and a cache, and records it. Use run_plan for several dependent calls.",
            )
    }

    async fn list_tools(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, ErrorData> {
        let tools = self
            .tools()
            .into_iter()
            .map(serde_json::from_value::<Tool>)
            .collect::<Result<Vec<_>, _>>()
            .map_err(internal)?;
        Ok(ListToolsResult::with_all_items(tools))
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        let args = Value::Object(request.arguments.unwrap_or_default());
        let out = if request.name == RUN_PLAN {
            self.run_plan(args, context.ct.clone()).await
        } else {
            let call = ToolCall::new(request.name.to_string(), args)
                .correlation_id(self.session.clone())
                .cancel_token(context.ct.clone());
            call_result(&self.runner.executor().call(call).await)
        };
        let mut result: CallToolResult = serde_json::from_value(out).map_err(internal)?;
        // Required by protocol 2026-07-28 (the Python SDK rejects a result without
        // it); rmcp strips it again for peers on older versions.
        result.result_type = Some(ResultType::COMPLETE);
        Ok(result.into())
    }
}

/// Serve over stdin/stdout until the client closes the connection.
///
/// When both are pipes (an MCP client spawned us), they are driven by the
/// reactor directly: tokio's `Stdin`/`Stdout` hand every read and write to a
/// blocking thread, which cost about 150 µs per round trip here
/// (`benches/mcp_proxy.rs`). Anything else (a terminal, a file) uses those.
pub async fn serve_stdio(runner: PlanRunner) -> Result<(), String> {
    let handler = AxonMcp::new(runner);
    #[cfg(unix)]
    if let Some((input, output)) = stdio_pipes() {
        return serve_on(handler, (input, output)).await;
    }
    serve_on(handler, rmcp::transport::stdio()).await
}

/// stdin and stdout as non-blocking pipes, when both are pipes.
#[cfg(unix)]
fn stdio_pipes() -> Option<(
    tokio::net::unix::pipe::Receiver,
    tokio::net::unix::pipe::Sender,
)> {
    use std::os::fd::{AsFd, OwnedFd};
    use std::os::unix::fs::FileTypeExt;
    use tokio::net::unix::pipe;
    let is_pipe = |fd: &OwnedFd| {
        fd.try_clone()
            .map(std::fs::File::from)
            .and_then(|f| f.metadata())
            .is_ok_and(|m| m.file_type().is_fifo())
    };
    let input = std::io::stdin().as_fd().try_clone_to_owned().ok()?;
    let output = std::io::stdout().as_fd().try_clone_to_owned().ok()?;
    // Check both before either is switched to non-blocking mode (which the
    // duplicates share with fds 0 and 1): a fallback to tokio's blocking
    // Stdin/Stdout must find them as they were.
    if !(is_pipe(&input) && is_pipe(&output)) {
        return None;
    }
    let input = pipe::Receiver::from_owned_fd(input).ok()?;
    let output = pipe::Sender::from_owned_fd(output).ok()?;
    Some((input, output))
}

async fn serve_on<T, E, A>(handler: AxonMcp, transport: T) -> Result<(), String>
where
    T: rmcp::transport::IntoTransport<RoleServer, E, A>,
    E: std::error::Error + Send + Sync + 'static,
{
    let service = handler
        .serve(transport)
        .await
        .map_err(|e| format!("MCP handshake failed: {e}"))?;
    service
        .waiting()
        .await
        .map(|_| ())
        .map_err(|e| format!("MCP server stopped: {e}"))
}

/// The MCP service over Streamable HTTP, for mounting in an axum router. One MCP
/// session gets one handler over the shared runner. `check_host` keeps rmcp's
/// DNS-rebinding protection (loopback `Host` headers only); a server that is
/// reachable from elsewhere turns it off and relies on its bearer tokens.
pub fn http_service(
    runner: PlanRunner,
    check_host: bool,
) -> rmcp::transport::streamable_http_server::StreamableHttpService<
    AxonMcp,
    rmcp::transport::streamable_http_server::session::local::LocalSessionManager,
> {
    use rmcp::transport::streamable_http_server::{
        StreamableHttpServerConfig, StreamableHttpService,
    };
    let handler = AxonMcp::new(runner);
    let mut config = StreamableHttpServerConfig::default();
    if !check_host {
        config = config.with_allowed_hosts(Vec::<String>::new());
    }
    StreamableHttpService::new(
        move || Ok(handler.new_session()),
        Default::default(),
        config,
    )
}
