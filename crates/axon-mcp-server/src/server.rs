//! Axon as an MCP server: the registry and `run_plan`, through the pipeline.

use std::sync::Arc;

use axon_core::{CallResult, Caller, Owner, ToolCall, ToolFilter};
use axon_plan::{Plan, PlanEvent, PlanRunner, RunOptions};
use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, CancelTaskParams,
    ContentBlock as Content, CreateTaskResult, GetTaskParams, GetTaskResult, Implementation,
    ListToolsResult, MetaObject, PaginatedRequestParams, ProgressNotificationParam, ResultType,
    ServerCapabilities, ServerConfig, Tool, UpdateTaskParams,
};
use rmcp::service::RequestContext;
use rmcp::{ErrorData, RoleServer, ServerHandler, ServiceExt};
use serde_json::{Value, json};
use tracing::Instrument;

use crate::listing::mcp_tool;
use crate::more;

fn new_session_id() -> String {
    format!("mcp-{}", ulid::Ulid::new())
}

/// The name of the plan tool.
pub const RUN_PLAN: &str = "run_plan";

/// The correlation id of every call that arrives over Streamable HTTP without an
/// MCP session (protocol 2026-07-28 has none): one server-wide default, so that
/// such a client's `browser_navigate` and `browser_get_page_state` see one page.
/// Clients that want their own state open a browser session
/// (`browser_session_new`) and pass its handle.
pub const SESSIONLESS: &str = "mcp-http";

/// The `_meta` key of the call result's envelope (everything but `data`).
pub const META_KEY: &str = "axon/call";

/// What a session lists and how each listed tool's data is shaped.
struct Listing {
    /// `tools/list`, in order: the registry's tools by name, then `run_plan`.
    tools: Vec<Tool>,
    /// The names listed: the only tools callable over MCP.
    served: std::collections::HashSet<String>,
}

impl Listing {
    /// A tool whose listing does not parse as MCP's `Tool` (a registry bug) is
    /// left out with an error in the log rather than taking the server down.
    fn new(runner: &PlanRunner, caller: &Caller) -> Self {
        let mut values: Vec<Value> = runner
            .executor()
            .registry()
            .specs()
            .iter()
            .filter(|s| caller.serves(&s.name))
            .map(mcp_tool)
            .collect();
        if caller.allows(RUN_PLAN) {
            values.push(run_plan_tool());
        }
        if caller.allows(more::RESULT_MORE) {
            values.push(more::tool());
        }
        let served = values
            .iter()
            .filter_map(|t| Some(t["name"].as_str()?.to_string()))
            .collect();
        let tools = values
            .into_iter()
            .filter_map(|value| match serde_json::from_value::<Tool>(value.clone()) {
                Ok(tool) => Some(tool),
                Err(e) => {
                    tracing::error!(tool = %value["name"], error = %e, "not listed over MCP: its listing does not parse");
                    None
                }
            })
            .collect();
        Listing { tools, served }
    }
}

fn run_plan_tool() -> Value {
    json!({
        "name": RUN_PLAN,
        "description": "Runs a plan of tool calls: steps [{id, tool, params, depends_on}]; params may use ${steps.<id>.data.<field>}. The same run_id resumes.",
        "inputSchema": {
            "type": "object",
            "required": ["plan"],
            "properties": {
                "plan": {"description": "The plan, as an object or JSON/YAML text.", "type": ["object", "string"]},
                "run_id": {"type": "string", "description": "Run (or resume) under this id."}
            },
            "additionalProperties": false
        },
        "annotations": {"readOnlyHint": false, "destructiveHint": false, "idempotentHint": false, "openWorldHint": true}
    })
}

/// The MCP face of a [`PlanRunner`] (and its executor's registry). One value
/// serves one MCP session.
#[derive(Clone)]
pub struct AxonMcp {
    runner: Arc<PlanRunner>,
    listing: Arc<Listing>,
    /// `run_plan` calls running as tasks (MCP's tasks extension), shared by
    /// every session: a stateless client polls from a fresh handler each time.
    tasks: rmcp::task_manager::TaskManager,
    /// The correlation id of this session's tool calls: one MCP session is one
    /// browser session (its browser tools share one page) and one group in
    /// history. Calls over HTTP without an MCP session use [`SESSIONLESS`].
    session: String,
    /// Who is calling (decided at the door: `axon_core::caller`): whose
    /// this handler's calls are (the process's owner over stdio; a scoped
    /// token's tenant, or, without tokens over HTTP, the MCP session itself,
    /// so that one client's browser sessions are not another's).
    caller: Arc<Caller>,
}

impl AxonMcp {
    /// Serve every tool of `runner`'s executor, and plans on `runner`, as one
    /// session.
    pub fn new(runner: PlanRunner) -> Self {
        Self::for_caller(runner, &Caller::process(ToolFilter::default()))
    }

    /// Serve `caller` the tools it is shown, its calls made as it.
    pub fn for_caller(runner: PlanRunner, caller: &Caller) -> Self {
        let listing = Listing::new(&runner, caller);
        AxonMcp {
            runner: Arc::new(runner),
            listing: Arc::new(listing),
            tasks: rmcp::task_manager::TaskManager::new(),
            session: new_session_id(),
            caller: Arc::new(caller.clone()),
        }
    }

    /// A handler for another session over the same runner and listing.
    pub fn new_session(&self) -> Self {
        AxonMcp {
            runner: self.runner.clone(),
            listing: self.listing.clone(),
            tasks: self.tasks.clone(),
            session: new_session_id(),
            caller: self.caller.clone(),
        }
    }

    /// The owner of this handler's calls (see [`AxonMcp::caller`]).
    fn owner(&self, correlation: &str) -> Owner {
        self.caller.owner(correlation)
    }

    /// This session's correlation id.
    pub fn session(&self) -> &str {
        &self.session
    }

    /// `tools/list`: the registry's tools by name, then `run_plan`, as JSON.
    pub fn tools(&self) -> Vec<Value> {
        self.listing
            .tools
            .iter()
            .filter_map(|t| serde_json::to_value(t).ok())
            .collect()
    }

    /// The correlation id of a request: this session's, or over HTTP without an
    /// `Mcp-Session-Id` (a stateless request), the server-wide [`SESSIONLESS`]
    /// one (each stateless request gets a fresh handler, so `self.session` would
    /// be a new page every call).
    fn correlation(&self, context: &RequestContext<RoleServer>) -> String {
        match context.extensions.get::<http::request::Parts>() {
            Some(parts) if !parts.headers.contains_key("mcp-session-id") => SESSIONLESS.into(),
            _ => self.session.clone(),
        }
    }

    /// `tools/call`: an Axon tool through the executor, or `run_plan`.
    async fn serve_call(
        &self,
        request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        let args = Value::Object(request.arguments.unwrap_or_default());
        let correlation = self.correlation(&context);
        let name = request.name.to_string();
        if !self.listing.served.contains(&name) {
            return Ok(complete(error_result(
                "unknown_tool",
                None,
                &format!("{name:?} is not a tool of this server (see tools/list)"),
                None,
            )));
        }
        if name == RUN_PLAN {
            return Ok(self.run_plan(args, &context, correlation).await);
        }
        if name == more::RESULT_MORE {
            let owner = self.owner(&correlation);
            let more = more::serve(self.runner.executor(), &args, &owner).await;
            return Ok(complete(match more {
                Ok(result) => call_result(result),
                Err((kind, message)) => error_result(kind, None, &message, None),
            }));
        }
        let approvals = self.runner.executor().approvals().clone();
        let mut call = ToolCall::new(name.clone(), args)
            .correlation_id(correlation.clone())
            .cancel_token(context.ct.clone());
        call.owner = self.owner(&correlation);
        call.default_max_result_tokens = Some(more::DEFAULT_MAX_RESULT_TOKENS);
        // 2026-07-28: the call sent again with its user's answer to Axon's
        // approval question (elicit.rs).
        if let Some(state) = &request.request_state {
            let responses = request.input_responses.as_ref();
            match crate::elicit::approval_answered(&approvals, &call, state, responses, &context)
                .await
            {
                Ok(id) => call.approval_id = Some(id),
                Err((kind, message)) => {
                    return Ok(complete(error_result(kind, None, &message, None)));
                }
            }
        }
        // The owner's client that can show a form is asked to approve a call
        // that waits for a person: in-band (2025-11-25), or by answering
        // `input_required` (2026-07-28) (elicit.rs).
        let owner = call.owner.is_process() && call.approval_id.is_none();
        let asks = owner && crate::elicit::can_ask(&context.peer);
        let inline = owner && !asks && crate::elicit::can_ask_inline(&context);
        let (call, parked) = crate::elicit::with_events(call, &context, &approvals, asks, inline);
        let running = self.runner.executor().call(call);
        if !inline {
            return Ok(complete(call_result(running.await)));
        }
        tokio::pin!(running);
        let parked = tokio::select! {
            result = &mut running => return Ok(complete(call_result(result))),
            Ok(id) = parked => id,
        };
        // A 2026-07-28 call parked for approval: the client asks its user
        // instead (`input_required`). The call's future is dropped on return,
        // before any attempt and unrecorded, and its approval stays pending
        // for the call to come back with the answer.
        let question = approvals
            .get(&parked)
            .await
            .ok()
            .flatten()
            .filter(|r| r.status == axon_core::approval::ApprovalStatus::Pending)
            .and_then(|r| crate::elicit::input_required(&r));
        match question {
            Some(question) => Ok(CallToolResponse::InputRequired(question)),
            None => Ok(complete(call_result(running.await))),
        }
    }

    /// `run_plan`: the plan result as structured content, a progress
    /// notification per finished step when the client asked for progress, or,
    /// for a client that declared MCP's tasks extension, a task it polls with
    /// `tasks/get` instead of holding the call open.
    async fn run_plan(
        &self,
        args: Value,
        context: &RequestContext<RoleServer>,
        correlation: String,
    ) -> CallToolResponse {
        let plan = match &args["plan"] {
            Value::String(text) => {
                // Off the async workers: a large document takes a while.
                let text = text.clone();
                tokio::task::spawn_blocking(move || Plan::parse(&text).map_err(|e| e.to_string()))
                    .await
                    .unwrap_or_else(|e| Err(format!("parsing the plan failed: {e}")))
            }
            Value::Object(_) => serde_json::from_value::<Plan>(args["plan"].clone())
                .map_err(|e| format!("/plan: {e}")),
            Value::Null => Err("/plan: required".to_string()),
            _ => Err("/plan: must be an object or JSON/YAML text".to_string()),
        };
        let plan = match plan {
            Ok(plan) => plan,
            Err(message) => {
                return complete(error_result("invalid_arguments", None, &message, None));
            }
        };
        // A plan calls only what this server (or this token) lists.
        let unlisted = plan
            .steps
            .iter()
            .flat_map(|s| std::iter::once(&s.tool).chain(s.fallbacks.iter().map(|f| &f.tool)))
            .find(|tool| !self.listing.served.contains(tool.as_str()));
        if let Some(tool) = unlisted {
            let message = format!("/plan: the tool {tool:?} is not served here");
            return complete(error_result(
                "invalid_arguments",
                Some("forbidden"),
                &message,
                None,
            ));
        }
        let options = RunOptions {
            run_id: args["run_id"].as_str().map(str::to_string),
            // A run's browser steps share the caller's browser session.
            owner: self.owner(&correlation),
            correlation_id: Some(correlation),
            ..RunOptions::default()
        };
        let wants_task = context
            .client_capabilities()
            .is_some_and(|caps| caps.supports_tasks());
        if wants_task {
            let runner = self.runner.clone();
            // The task outlives this request; its run stays in the caller's trace.
            let span = tracing::Span::current();
            let task = self.tasks.spawn(
                rmcp::task_manager::TaskOptions::new().with_poll_interval_ms(200),
                move |ctx| {
                    Box::pin(
                        async move {
                            let cancel = axon_core::CancellationToken::new();
                            let options = RunOptions {
                                cancel: Some(cancel.clone()),
                                ..options
                            };
                            let stop = async move {
                                ctx.cancelled().await;
                                cancel.cancel();
                                std::future::pending::<()>().await;
                            };
                            tokio::select! {
                                out = execute_plan(&runner, &plan, options) => Ok(out),
                                _ = stop => Err(rmcp::task_manager::TaskExit::Cancelled),
                            }
                        }
                        .instrument(span),
                    )
                },
            );
            return CallToolResponse::Task(CreateTaskResult::new(task));
        }
        let (events, progress) = match context.meta.get_progress_token() {
            Some(token) => {
                let (tx, rx) = tokio::sync::mpsc::unbounded_channel();
                let peer = context.peer.clone();
                (Some(tx), Some(tokio::spawn(plan_progress(rx, peer, token))))
            }
            None => (None, None),
        };
        let options = RunOptions {
            cancel: Some(context.ct.clone()),
            events,
            ..options
        };
        let out = execute_plan(&self.runner, &plan, options).await;
        if let Some(progress) = progress {
            // The sender went with the run: the task ends after the last event.
            let _ = progress.await;
        }
        complete(out)
    }
}

/// A finished result, with the `resultType` protocol 2026-07-28 requires (the
/// Python SDK rejects a result without it; rmcp strips it for older peers).
fn complete(mut result: CallToolResult) -> CallToolResponse {
    result.result_type = Some(ResultType::COMPLETE);
    result.into()
}

/// Run `plan`: the plan result as structured content (`isError` when it did not
/// succeed), or the plan's errors.
async fn execute_plan(runner: &PlanRunner, plan: &Plan, options: RunOptions) -> CallToolResult {
    match runner.run(plan, options).await {
        Ok(result) => {
            let mut out = CallToolResult::structured(json!(result));
            out.is_error = Some(!result.success());
            out
        }
        Err(errors) => error_result("invalid_arguments", None, &errors.to_string(), None),
    }
}

/// Forward a run's progress as MCP progress notifications: one per finished
/// step (`progress` of `total` steps), with the step's id and status.
async fn plan_progress(
    mut events: tokio::sync::mpsc::UnboundedReceiver<PlanEvent>,
    peer: rmcp::Peer<RoleServer>,
    token: rmcp::model::ProgressToken,
) {
    let mut total = 0usize;
    let mut done = 0usize;
    while let Some(event) = events.recv().await {
        let message = match event {
            PlanEvent::RunStarted { steps, .. } => {
                total = steps;
                continue;
            }
            PlanEvent::StepFinished { step, .. } => {
                done += 1;
                let name = step.id.clone().unwrap_or_else(|| step.index.to_string());
                let status = json!(step.status);
                format!(
                    "step {name} ({}): {}",
                    step.tool,
                    status.as_str().unwrap_or("done")
                )
            }
            _ => continue,
        };
        let note = ProgressNotificationParam::new(token.clone(), done as f64)
            .with_total(total as f64)
            .with_message(message);
        if peer.notify_progress(note).await.is_err() {
            return;
        }
    }
}

/// A failed call as MCP's `isError` result: `kind (code): message` in the text.
fn error_result(
    kind: &str,
    code: Option<&str>,
    message: &str,
    meta: Option<Value>,
) -> CallToolResult {
    let text = match code {
        Some(code) => format!("{kind} ({code}): {message}"),
        None => format!("{kind}: {message}"),
    };
    let mut out = CallToolResult::error(vec![Content::text(text)]);
    out.meta = meta.and_then(as_meta);
    out
}

fn as_meta(envelope: Value) -> Option<MetaObject> {
    let mut map = serde_json::Map::new();
    map.insert(META_KEY.into(), envelope);
    Some(MetaObject(map))
}

/// A call result as an MCP tool result (docs/design.md, "MCP server"): the data as
/// `structuredContent` (wrapped as `{"result": …}` when it is not an object),
/// a text block (the data as compact JSON, or, for tools whose data is text
/// for a reader, that text: text.rs), an image as an image block, and the rest
/// of the call result under `_meta["axon/call"]`.
pub fn call_result(result: CallResult) -> CallToolResult {
    let CallResult { data, error, .. } = &result;
    let mut envelope = json!(&result);
    if let Some(map) = envelope.as_object_mut() {
        // The data is the structured content; what is null or empty says
        // nothing (no error, no fallback, no retries).
        map.remove("data");
        map.retain(|_, v| !(v.is_null() || v.as_array().is_some_and(Vec::is_empty)));
    }
    if let Some(e) = error {
        return error_result(
            e.kind.as_str(),
            e.code.as_deref(),
            &e.message,
            Some(envelope),
        );
    }
    // An imported MCP tool's content blocks (text, images, resource links)
    // are relayed as content, as its server sent them: an image stays an image
    // block, not base64 inside a JSON text. Such a tool has no output schema.
    if let Some(mut blocks) = content_blocks(data) {
        blocks.extend(more::notice(&result));
        let mut out = CallToolResult::success(blocks);
        out.meta = as_meta(envelope);
        return out;
    }
    let mut data = match data {
        Value::Object(_) => data.clone(),
        other => json!({ "result": other }),
    };
    let mut content = Vec::with_capacity(2);
    let image = take_image(&mut data);
    // Text for a reader reads as text (text.rs); the rest as compact JSON.
    let text = crate::text::for_reader(&result.tool, &data).unwrap_or_else(|| data.to_string());
    content.push(Content::text(text));
    content.extend(more::notice(&result));
    content.extend(image);
    let mut out = CallToolResult::success(content);
    out.structured_content = Some(data);
    out.meta = as_meta(envelope);
    out
}

/// `data` as MCP content blocks, when it is a list of them (what an imported
/// tool returns when its server sent more than one text).
fn content_blocks(data: &Value) -> Option<Vec<Content>> {
    const KINDS: [&str; 5] = ["text", "image", "audio", "resource", "resource_link"];
    let items = data.as_array().filter(|items| !items.is_empty())?;
    if !items
        .iter()
        .all(|i| i["type"].as_str().is_some_and(|t| KINDS.contains(&t)))
    {
        return None;
    }
    serde_json::from_value(data.clone()).ok()
}

/// An image in the data (`{"mime_type": "image/…", "base64": …}`, as
/// `browser_take_screenshot` returns it) moves into an image block: base64
/// never travels as text, nor twice.
fn take_image(data: &mut Value) -> Option<Content> {
    let map = data.as_object_mut()?;
    let mime = map.get("mime_type")?.as_str()?.to_string();
    if !mime.starts_with("image/") || !map.get("base64").is_some_and(Value::is_string) {
        return None;
    }
    let Some(Value::String(base64)) = map.remove("base64") else {
        return None;
    };
    Some(Content::image(base64, mime))
}

impl ServerHandler for AxonMcp {
    fn get_info(&self) -> ServerConfig {
        ServerConfig::new(ServerCapabilities::builder().enable_tools().enable_tasks().build())
            .with_server_info(Implementation::new("axon", env!("CARGO_PKG_VERSION")))
            .with_instructions(
                "Axon runs each tool call through retries, timeouts, circuit breakers and a cache, and records it. Use run_plan for several dependent calls; browser_session_new for a browser state of your own.",
            )
    }

    async fn list_tools(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, ErrorData> {
        Ok(ListToolsResult::with_all_items(self.listing.tools.clone()))
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        // The MCP semantic conventions' server span, child of the caller's trace
        // when `_meta` carries one (SEP-414), else a root: a malformed one is
        // ignored, and whatever span rmcp's session loop started in (over HTTP,
        // the request that opened the session) is not this call's parent.
        let get = |key: &str| {
            [Some(&context.meta), request.meta.as_ref()]
                .into_iter()
                .flatten()
                .find_map(|meta| meta.get(key))
                .and_then(|v| v.as_str().map(str::to_string))
        };
        let span = axon_core::trace::open_root(&get, || {
            tracing::debug_span!(
                parent: None,
                "mcp_server",
                otel.name = %format_args!("tools/call {}", request.name),
                otel.kind = "server",
                mcp.method.name = "tools/call",
                gen_ai.tool.name = %request.name,
                jsonrpc.request.id = %context.id,
            )
        });
        self.serve_call(request, context).instrument(span).await
    }

    async fn get_task(
        &self,
        request: GetTaskParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<GetTaskResult, ErrorData> {
        Ok(GetTaskResult::new(self.tasks.get_task(&request.task_id)?))
    }

    async fn update_task(
        &self,
        request: UpdateTaskParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<(), ErrorData> {
        self.tasks
            .update_task(&request.task_id, request.input_responses)
    }

    async fn cancel_task(
        &self,
        request: CancelTaskParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<(), ErrorData> {
        self.tasks.cancel_task(&request.task_id)
    }
}

/// Why serving MCP on a connection ended other than by the client closing it.
#[derive(Debug, thiserror::Error)]
pub enum ServeError {
    /// The client's `initialize` never completed (it sent something else, or
    /// the connection closed first).
    #[error("MCP handshake failed: {0}")]
    Handshake(#[source] Box<dyn std::error::Error + Send + Sync>),
    /// The session's task ended abnormally.
    #[error("MCP server stopped: {0}")]
    Stopped(#[source] Box<dyn std::error::Error + Send + Sync>),
}

/// Serve `handler` on `transport` until the client closes it.
pub(crate) async fn serve_on<T, E, A>(handler: AxonMcp, transport: T) -> Result<(), ServeError>
where
    T: rmcp::transport::IntoTransport<RoleServer, E, A>,
    E: std::error::Error + Send + Sync + 'static,
{
    let service = handler
        .serve(transport)
        .await
        .map_err(|e| ServeError::Handshake(Box::new(e)))?;
    service
        .waiting()
        .await
        .map(|_| ())
        .map_err(|e| ServeError::Stopped(Box::new(e)))
}

/// What [`http_service`] returns: a tower service answering MCP's Streamable HTTP.
pub type HttpService = rmcp::transport::streamable_http_server::StreamableHttpService<
    AxonMcp,
    rmcp::transport::streamable_http_server::session::local::LocalSessionManager,
>;

/// The MCP service over Streamable HTTP, for mounting in an axum router. One MCP
/// session gets one handler over the shared runner. `check_host` keeps rmcp's
/// DNS-rebinding protection (loopback `Host` headers only); a server that is
/// reachable from elsewhere turns it off and relies on its bearer tokens.
///
/// `caller`: who is calling, as the door decided (the tools it is shown,
/// and whose its calls are: a scoped token's tenant, each MCP session its own
/// when no tokens keep clients apart, or the process's owner).
///
/// `sessions`: the session manager, shared with the caller so that it can
/// count the sessions open ([`McpSessions::open`]) and cap them; idle sessions
/// close after its keep-alive ([`McpSessions::new`]).
pub fn http_service(
    runner: PlanRunner,
    caller: &Caller,
    check_host: bool,
    sessions: &McpSessions,
) -> HttpService {
    use rmcp::transport::streamable_http_server::{
        StreamableHttpServerConfig, StreamableHttpService,
    };
    let handler = AxonMcp::for_caller(runner, caller);
    let mut config = StreamableHttpServerConfig::default();
    if !check_host {
        config = config.with_allowed_hosts(Vec::<String>::new());
    }
    StreamableHttpService::new(
        move || Ok(handler.new_session()),
        sessions.0.clone(),
        config,
    )
}

/// The MCP sessions of one `/mcp` service: shared with the service, counted by
/// the server that caps them.
#[derive(Clone, Default)]
pub struct McpSessions(
    Arc<rmcp::transport::streamable_http_server::session::local::LocalSessionManager>,
);

impl McpSessions {
    /// Sessions idle for `idle` are closed (their state freed).
    pub fn new(idle: std::time::Duration) -> Self {
        let mut manager =
            rmcp::transport::streamable_http_server::session::local::LocalSessionManager::default();
        manager.session_config.keep_alive = Some(idle);
        McpSessions(Arc::new(manager))
    }

    /// How many sessions are open now.
    pub async fn open(&self) -> usize {
        self.0.sessions.read().await.len()
    }

    /// Whether the session `id` is open.
    pub async fn contains(&self, id: &str) -> bool {
        self.0.sessions.read().await.contains_key(id)
    }
}
