//! Axon as an MCP client: tools imported from MCP servers, called through the
//! pipeline like any other tool.
//!
//! One [`McpConnection`] per configured server owns the live session (a child
//! process on stdio, or a Streamable HTTP session). A call that finds the session
//! gone (the child exited, the connection dropped) fails as `unavailable` and
//! drops it; the next attempt — the retry loop's, or the next call's — starts a
//! fresh one. So a server that stays down shows up in the breaker, never as a hang.

use std::collections::HashMap;
use std::process::Stdio;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use async_trait::async_trait;
use axon_core::registry::is_valid_tool_name;
use axon_core::{
    Annotations, Dependency, ErrorKind, StoreError, Tool, ToolContext, ToolError, ToolSpec,
};
use rmcp::model::{
    CallToolRequest, CallToolRequestParams, CallToolResult, CancelledNotification,
    CancelledNotificationParam, ClientCapabilities, ClientConfig, ClientRequest, ErrorCode,
    Implementation, JsonRpcMessage, ProgressNotificationParam, ProgressToken, RequestId,
    RequestMetaObject, ServerNotification, ServerResult,
};
use rmcp::service::{
    NotificationContext, Peer, PeerRequestOptions, RunningService, RxJsonRpcMessage, ServiceError,
    TxJsonRpcMessage,
};
use rmcp::transport::Transport;
use rmcp::transport::streamable_http_client::StreamableHttpClientTransportConfig;
use rmcp::transport::{StreamableHttpClientTransport, TokioChildProcess};
use rmcp::{ClientHandler, RoleClient, ServiceExt};
use serde_json::Value;
use tokio::io::AsyncBufReadExt;
use tracing::Instrument;

use crate::config::{McpConfigError, McpServerConfig};
use crate::pin::{self, Hold, PinMode, PinStore};

/// Routes a server's progress notifications to the call that asked for them.
///
/// rmcp hands each notification to this handler in a task of its own but
/// gives a response straight to the waiting call, so a server's last
/// progress notification, sent just before its result, could reach the
/// handler after the call had returned (and be lost with its route). The
/// transport therefore counts each progress notification as it reads it
/// ([`Counted`]), in the order the server sent it, and a call waits for the
/// ones read before its result ([`Handler::drain`]).
#[derive(Clone, Default)]
struct Handler {
    progress: Arc<Mutex<HashMap<ProgressToken, Route>>>,
    delivered: Arc<tokio::sync::Notify>,
}

/// Where one call's progress goes, and how many of its notifications the
/// transport has read that the handler has not delivered yet.
struct Route {
    ctx: ToolContext,
    unread: usize,
}

/// How long a call waits at most for progress read before its result: the
/// handler's tasks are already spawned by then, so this only bounds a wait
/// that something unforeseen kept from ending.
const DRAIN_LIMIT: Duration = Duration::from_secs(2);

impl Handler {
    /// The transport read a progress notification for `token`.
    fn read(&self, token: &ProgressToken) {
        if let Ok(mut map) = self.progress.lock()
            && let Some(route) = map.get_mut(token)
        {
            route.unread += 1;
        }
    }

    /// Wait until every progress notification read for `token` so far has
    /// been delivered.
    async fn drain(&self, token: &ProgressToken) {
        let settled = async {
            loop {
                let delivered = self.delivered.notified();
                let unread = self
                    .progress
                    .lock()
                    .ok()
                    .and_then(|map| map.get(token).map(|r| r.unread))
                    .unwrap_or(0);
                if unread == 0 {
                    return;
                }
                delivered.await;
            }
        };
        let _ = tokio::time::timeout(DRAIN_LIMIT, settled).await;
    }
}

impl ClientHandler for Handler {
    async fn on_progress(
        &self,
        params: ProgressNotificationParam,
        _context: NotificationContext<RoleClient>,
    ) {
        let token = &params.progress_token;
        let ctx = self
            .progress
            .lock()
            .ok()
            .and_then(|map| map.get(token).map(|r| r.ctx.clone()));
        let Some(ctx) = ctx else {
            return;
        };
        ctx.progress(params.progress, params.total, params.message);
        if let Ok(mut map) = self.progress.lock()
            && let Some(route) = map.get_mut(token)
        {
            route.unread = route.unread.saturating_sub(1);
        }
        self.delivered.notify_waiters();
    }

    fn get_info(&self) -> ClientConfig {
        ClientConfig::new(
            ClientCapabilities::default(),
            Implementation::new("axon", env!("CARGO_PKG_VERSION")),
        )
    }
}

/// A session's transport that tells the [`Handler`] of each progress
/// notification as it is read, before rmcp hands it to a task of its own.
struct Counted<T> {
    inner: T,
    handler: Handler,
}

impl<T: Transport<RoleClient>> Transport<RoleClient> for Counted<T> {
    type Error = T::Error;

    fn send(
        &mut self,
        item: TxJsonRpcMessage<RoleClient>,
    ) -> impl Future<Output = Result<(), Self::Error>> + Send + 'static {
        self.inner.send(item)
    }

    async fn receive(&mut self) -> Option<RxJsonRpcMessage<RoleClient>> {
        let message = self.inner.receive().await?;
        if let JsonRpcMessage::Notification(note) = &message
            && let ServerNotification::ProgressNotification(progress) = &note.notification
        {
            self.handler.read(&progress.params.progress_token);
        }
        Some(message)
    }

    fn close(&mut self) -> impl Future<Output = Result<(), Self::Error>> + Send {
        self.inner.close()
    }
}

/// Unregisters a call's progress token when the call ends, however it ends.
struct ProgressRoute<'a> {
    handler: &'a Handler,
    token: ProgressToken,
}

impl Drop for ProgressRoute<'_> {
    fn drop(&mut self) {
        if let Ok(mut map) = self.handler.progress.lock() {
            map.remove(&self.token);
        }
    }
}

/// Sends `notifications/cancelled` for a request whose caller stopped waiting
/// (the attempt timed out or the call was cancelled, and the future was dropped),
/// so the server can stop the work.
struct AbandonGuard {
    peer: Peer<RoleClient>,
    id: Option<RequestId>,
}

impl Drop for AbandonGuard {
    fn drop(&mut self) {
        let Some(id) = self.id.take() else { return };
        let Ok(runtime) = tokio::runtime::Handle::try_current() else {
            return;
        };
        let peer = self.peer.clone();
        runtime.spawn(async move {
            let notification = CancelledNotification::new(CancelledNotificationParam::new(
                Some(id),
                Some("abandoned by the caller (timeout or cancel)".into()),
            ));
            let _ = peer.send_notification(notification.into()).await;
        });
    }
}

type Session = RunningService<RoleClient, Handler>;

/// A live session and, for a child process, its pid.
struct Live {
    session: Session,
    pid: Option<u32>,
}

/// One configured MCP server and its current session, shared by all the tools
/// imported from it. The session is started lazily again after it was lost.
pub struct McpConnection {
    config: McpServerConfig,
    handler: Handler,
    live: tokio::sync::Mutex<Option<Arc<Live>>>,
}

impl std::fmt::Debug for McpConnection {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("McpConnection")
            .field("server", &self.config.name)
            .finish_non_exhaustive()
    }
}

impl McpConnection {
    /// A connection to `config`'s server; nothing is started until it is used.
    pub fn new(config: McpServerConfig) -> Self {
        McpConnection {
            handler: Handler::default(),
            config,
            live: tokio::sync::Mutex::new(None),
        }
    }

    /// The server's config entry.
    pub fn config(&self) -> &McpServerConfig {
        &self.config
    }

    /// The pid of the child process serving the current session, if one is up
    /// (for diagnostics and for tests that kill it).
    pub async fn child_pid(&self) -> Option<u32> {
        self.live.lock().await.as_ref().and_then(|live| live.pid)
    }

    /// The live session, started (or restarted) if there is none.
    async fn session(&self) -> Result<Arc<Live>, String> {
        let mut slot = self.live.lock().await;
        if let Some(live) = slot.as_ref()
            && !live.session.is_closed()
            && !live.session.peer().is_transport_closed()
        {
            return Ok(live.clone());
        }
        *slot = None;
        let live = Arc::new(self.start().await?);
        *slot = Some(live.clone());
        Ok(live)
    }

    /// Forget `live` if it is still the current session (it failed).
    async fn drop_session(&self, live: &Arc<Live>) {
        let mut slot = self.live.lock().await;
        if slot
            .as_ref()
            .is_some_and(|current| Arc::ptr_eq(current, live))
        {
            *slot = None;
        }
    }

    async fn start(&self) -> Result<Live, String> {
        let timeout = Duration::from_millis(self.config.startup_timeout_ms);
        let name = &self.config.name;
        match tokio::time::timeout(timeout, self.start_untimed()).await {
            Ok(result) => result.map_err(|e| format!("MCP server {name:?}: {e}")),
            Err(_) => Err(format!(
                "MCP server {name:?}: no answer to initialize within {} ms",
                self.config.startup_timeout_ms
            )),
        }
    }

    /// The span a session starts in: a root of its own. rmcp's serve loop keeps
    /// the span current at its start for the session's whole life; were it the
    /// first caller's (an `attempt` of some run), that trace would stay open
    /// until the session ends.
    fn session_span(&self) -> tracing::Span {
        axon_core::trace::open_root(&|_| None, || {
            tracing::debug_span!(
                parent: None,
                "mcp_session",
                otel.name = %format_args!("mcp session {}", self.config.name),
                axon.mcp.server = %self.config.name,
            )
        })
    }

    /// A session's transport that counts progress as it is read ([`Counted`]).
    fn counted<T: Transport<RoleClient>>(&self, inner: T) -> Counted<T> {
        Counted {
            inner,
            handler: self.handler.clone(),
        }
    }

    async fn start_untimed(&self) -> Result<Live, String> {
        if let Some(command) = &self.config.command {
            let mut cmd = tokio::process::Command::new(command);
            cmd.args(&self.config.args)
                .envs(&self.config.env)
                .kill_on_drop(true);
            if let Some(cwd) = &self.config.cwd {
                cmd.current_dir(cwd);
            }
            let (transport, stderr) = TokioChildProcess::builder(cmd)
                .stderr(Stdio::piped())
                .spawn()
                .map_err(|e| format!("cannot start `{command}`: {e}"))?;
            let pid = transport.id();
            if let Some(stderr) = stderr {
                // Drained so a chatty server never blocks on a full pipe; kept for `-v`.
                let server = self.config.name.clone();
                tokio::spawn(async move {
                    let mut lines = tokio::io::BufReader::new(stderr).lines();
                    while let Ok(Some(line)) = lines.next_line().await {
                        tracing::debug!(server, "stderr: {line}");
                    }
                });
            }
            let session = self
                .handler
                .clone()
                .serve(self.counted(transport))
                .instrument(self.session_span())
                .await
                .map_err(|e| format!("`{command}` started but the MCP handshake failed: {e}"))?;
            tracing::info!(server = %self.config.name, pid, "MCP server started");
            Ok(Live { session, pid })
        } else if let Some(url) = &self.config.url {
            // reqwest is built without a TLS provider: install rustls' ring one.
            let _ = rustls::crypto::ring::default_provider().install_default();
            let mut headers = HashMap::new();
            for (key, value) in &self.config.headers {
                let key = reqwest::header::HeaderName::try_from(key.as_str())
                    .map_err(|e| format!("header {key:?}: {e}"))?;
                let value = reqwest::header::HeaderValue::try_from(value.as_str())
                    .map_err(|e| format!("header {key}: {e}"))?;
                headers.insert(key, value);
            }
            // Proxy variables in the environment are not followed: the
            // server is reached at the address configured, nowhere else.
            let client = reqwest::Client::builder()
                .no_proxy()
                .build()
                .map_err(|e| format!("HTTP client: {e}"))?;
            let transport = StreamableHttpClientTransport::with_client(
                client,
                StreamableHttpClientTransportConfig::with_uri(url.as_str()).custom_headers(headers),
            );
            let session = self
                .handler
                .clone()
                .serve(self.counted(transport))
                .instrument(self.session_span())
                .await
                .map_err(|e| {
                    // The transport's message quotes the URL, query string and all.
                    let mut message = e.to_string();
                    let parsed = reqwest::Url::parse(url).map(|u| u.to_string());
                    for raw in [Some(url.clone()), parsed.ok()].into_iter().flatten() {
                        message = message.replace(&raw, &redact_url(url));
                    }
                    format!("cannot connect to {}: {message}", redact_url(url))
                })?;
            Ok(Live { session, pid: None })
        } else {
            Err("needs command or url".into())
        }
    }

    /// `tools/list`, every page.
    async fn list_tools(&self) -> Result<Vec<rmcp::model::Tool>, String> {
        let live = self.session().await?;
        let timeout = Duration::from_millis(self.config.startup_timeout_ms);
        match tokio::time::timeout(timeout, live.session.peer().list_all_tools()).await {
            Ok(Ok(tools)) => Ok(tools),
            Ok(Err(e)) => Err(format!(
                "MCP server {:?}: tools/list failed: {e}",
                self.config.name
            )),
            Err(_) => Err(format!(
                "MCP server {:?}: no answer to tools/list within {} ms",
                self.config.name, self.config.startup_timeout_ms
            )),
        }
    }

    /// One `tools/call` on the current session.
    async fn call(&self, tool: &str, args: &Value, ctx: &ToolContext) -> Result<Value, ToolError> {
        let live = self
            .session()
            .await
            .map_err(|e| ToolError::unavailable(e).with_code("mcp_unreachable"))?;
        let mut params = CallToolRequestParams::new(tool.to_string());
        if let Value::Object(map) = args {
            params = params.with_arguments(map.clone());
        }
        let trace = axon_core::trace::inject_current();
        if !trace.is_empty() {
            let mut meta = RequestMetaObject::new();
            for (key, value) in trace {
                meta.insert(key.to_string(), Value::String(value));
            }
            params.meta = Some(meta);
        }
        let request = ClientRequest::CallToolRequest(CallToolRequest::new(params));
        let peer = live.session.peer();
        let handle = match peer
            .send_request_with_option(request, PeerRequestOptions::no_options())
            .await
        {
            Ok(handle) => handle,
            Err(e) => return Err(self.service_error(&live, e).await),
        };
        if let Ok(mut map) = self.handler.progress.lock() {
            map.insert(
                handle.progress_token.clone(),
                Route {
                    ctx: ctx.clone(),
                    unread: 0,
                },
            );
        }
        let route = ProgressRoute {
            handler: &self.handler,
            token: handle.progress_token.clone(),
        };
        let mut abandon = AbandonGuard {
            peer: peer.clone(),
            id: Some(handle.id.clone()),
        };
        let response = handle.await_response().await;
        abandon.id = None;
        // Progress the server sent before its result reaches the caller first.
        self.handler.drain(&route.token).await;
        match response {
            Ok(ServerResult::CallToolResult(result)) => call_data(result),
            Ok(_) => Err(ToolError::failed(format!(
                "MCP server {:?} answered tools/call with something other than a tool result",
                self.config.name
            ))
            .with_code("mcp_unexpected_response")),
            Err(e) => Err(self.service_error(&live, e).await),
        }
    }

    /// An rmcp error as Axon's error kinds; a dead session is dropped so that the
    /// next attempt starts a new one.
    async fn service_error(&self, live: &Arc<Live>, e: ServiceError) -> ToolError {
        let name = &self.config.name;
        match e {
            ServiceError::TransportClosed | ServiceError::TransportSend(_) => {
                self.drop_session(live).await;
                ToolError::unavailable(format!("MCP server {name:?}: connection lost ({e})"))
                    .with_code("mcp_disconnected")
            }
            ServiceError::McpError(data) => {
                let kind = if data.code == ErrorCode::INVALID_PARAMS {
                    ErrorKind::InvalidArguments
                } else {
                    ErrorKind::Failed
                };
                ToolError::new(kind, format!("MCP server {name:?}: {}", data.message))
                    .with_code(format!("mcp_{}", data.code.0))
            }
            ServiceError::Timeout { .. } => {
                ToolError::new(ErrorKind::Timeout, format!("MCP server {name:?}: {e}"))
            }
            ServiceError::Cancelled { .. } => {
                ToolError::new(ErrorKind::Cancelled, format!("MCP server {name:?}: {e}"))
            }
            other => {
                ToolError::failed(format!("MCP server {name:?}: {other}")).with_code("mcp_protocol")
            }
        }
    }
}

/// A call result's data: `structuredContent` when there is one, else the content
/// (one text block as JSON when it parses, else as a string; several blocks as
/// the array of blocks). `isError` is a `failed` with the text as message.
fn call_data(result: CallToolResult) -> Result<Value, ToolError> {
    let content = serde_json::to_value(&result.content).unwrap_or(Value::Null);
    if result.is_error == Some(true) {
        let message = texts(&content);
        let message = if message.is_empty() {
            "the tool reported an error without a message".to_string()
        } else {
            message
        };
        return Err(ToolError::failed(message).with_code("mcp_tool_error"));
    }
    if let Some(structured) = result.structured_content {
        return Ok(structured);
    }
    match content.as_array().map(Vec::as_slice) {
        Some([only]) if only["type"] == "text" => {
            let text = only["text"].as_str().unwrap_or_default();
            Ok(serde_json::from_str(text).unwrap_or_else(|_| Value::String(text.to_string())))
        }
        Some([]) | None => Ok(Value::Null),
        Some(_) => Ok(content),
    }
}

/// The text blocks of a content array, one per line.
fn texts(content: &Value) -> String {
    content
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|block| block["text"].as_str())
        .collect::<Vec<_>>()
        .join("\n")
}

/// A URL without its query string and credentials, for messages.
fn redact_url(url: &str) -> String {
    match reqwest::Url::parse(url) {
        Ok(mut parsed) => {
            parsed.set_query(None);
            let _ = parsed.set_password(None);
            let _ = parsed.set_username("");
            parsed.to_string()
        }
        Err(_) => "the configured url".to_string(),
    }
}

/// A tool of an MCP server, as an Axon tool.
#[derive(Debug)]
pub struct McpTool {
    spec: ToolSpec,
    remote: String,
    connection: Arc<McpConnection>,
    /// The definition as the server listed it (what a pin fingerprints).
    listed: Value,
    /// While its definition waits for a person: the gate, and what the tool
    /// shows meanwhile (crate::pin).
    hold: Option<(Arc<Hold>, ToolSpec)>,
}

impl McpTool {
    /// The tool's name in Axon: `<prefix>__<remote name>`.
    pub fn name(&self) -> &str {
        &self.spec.name
    }

    /// The tool's name on its server.
    pub fn remote_name(&self) -> &str {
        &self.remote
    }

    /// The connection it calls through.
    pub fn connection(&self) -> &Arc<McpConnection> {
        &self.connection
    }

    /// Whether calls wait for a person to accept the tool's definition.
    pub fn is_held(&self) -> bool {
        self.hold.as_ref().is_some_and(|(hold, _)| !hold.released())
    }

    /// An Axon tool for one entry of `tools/list`; `None` when its name cannot be
    /// made a valid Axon tool name.
    fn from_listing(connection: &Arc<McpConnection>, tool: &rmcp::model::Tool) -> Option<Self> {
        let listing = serde_json::to_value(tool).ok()?;
        let remote = listing["name"].as_str()?.to_string();
        let local: String = remote
            .chars()
            .map(|c| {
                if c.is_ascii_alphanumeric() || c == '_' || c == '-' {
                    c
                } else {
                    '_'
                }
            })
            .collect();
        let name = format!("{}__{local}", connection.config.tool_prefix());
        if !is_valid_tool_name(&name) {
            tracing::warn!(server = %connection.config.name, tool = remote, "tool skipped: {name:?} is longer than 64 characters");
            return None;
        }
        // MCP's defaults for absent hints are the cautious ones: may write, may
        // destroy, not idempotent, talks to the world.
        let hints = &listing["annotations"];
        let hint = |key: &str, default: bool| hints[key].as_bool().unwrap_or(default);
        let annotations = Annotations {
            title: listing["title"]
                .as_str()
                .or_else(|| hints["title"].as_str())
                .map(str::to_string),
            read_only: hint("readOnlyHint", false),
            destructive: hint("destructiveHint", true),
            idempotent: hint("idempotentHint", false),
            open_world: hint("openWorldHint", true),
        };
        // One breaker for the server's transport failures, shared by its
        // tools (policy/dependency.rs in axon-core).
        let mut spec = ToolSpec::new(name, listing["description"].as_str().unwrap_or_default())
            .input_schema(listing["inputSchema"].clone())
            .annotations(annotations)
            .dependency(Dependency::Server(connection.config.name.clone()));
        if let Some(output) = listing.get("outputSchema").filter(|v| v.is_object()) {
            spec = spec.output_schema(output.clone());
        }
        Some(McpTool {
            spec,
            remote,
            connection: connection.clone(),
            listed: pin::definition(&listing),
            hold: None,
        })
    }
}

#[async_trait]
impl Tool for McpTool {
    fn spec(&self) -> &ToolSpec {
        match &self.hold {
            Some((hold, notice)) if !hold.released() => notice,
            _ => &self.spec,
        }
    }

    async fn call(&self, args: &Value, ctx: ToolContext) -> Result<Value, ToolError> {
        if let Some((hold, _)) = &self.hold {
            hold.admit().await?;
        }
        // The MCP semantic conventions' client span; its context goes to the
        // server in `_meta` (SEP-414), so the upstream's work joins the trace.
        let config = &self.connection.config;
        let span = tracing::debug_span!(
            "mcp_client",
            otel.name = %format_args!("tools/call {}", self.remote),
            otel.kind = "client",
            mcp.method.name = "tools/call",
            gen_ai.operation.name = "execute_tool",
            gen_ai.tool.name = %self.remote,
            axon.mcp.server = %config.name,
            network.transport = if config.url.is_some() { "tcp" } else { "pipe" },
            error.type = tracing::field::Empty,
            otel.status_code = tracing::field::Empty,
            otel.status_description = tracing::field::Empty,
        );
        let out = self
            .connection
            .call(&self.remote, args, &ctx)
            .instrument(span.clone())
            .await;
        if let Err(e) = &out {
            axon_core::trace::record_error(&span, e.kind.as_str(), e.code.as_deref());
        }
        out
    }
}

/// Why a server's tools could not be imported; each names the server.
#[derive(Debug, thiserror::Error)]
pub enum ImportError {
    /// Its `[[mcp.servers]]` entry is wrong.
    #[error(transparent)]
    Config(#[from] McpConfigError),
    /// It did not start, answer the handshake or list its tools in time.
    #[error("{message}")]
    Unreachable {
        /// The server's name.
        server: String,
        /// What failed (the command that would not start, the handshake,
        /// the listing).
        message: String,
    },
    /// The store of accepted definitions could not be read.
    #[error("mcp.servers {server:?}: pins: {message}")]
    Pins {
        /// The server's name.
        server: String,
        /// The store's error.
        message: String,
    },
}

/// Connect to `config`'s server and list its tools, as Axon tools that share
/// one connection. The error names the server and says what failed (the
/// command that would not start, the handshake, the listing).
pub async fn import(config: McpServerConfig) -> Result<Vec<McpTool>, ImportError> {
    config.check()?;
    let server = config.name.clone();
    let connection = Arc::new(McpConnection::new(config));
    let listing = connection
        .list_tools()
        .await
        .map_err(|message| ImportError::Unreachable { server, message })?;
    Ok(listing
        .iter()
        .filter_map(|tool| McpTool::from_listing(&connection, tool))
        .collect())
}

/// [`import`], with each tool's definition checked against its pin in `pins`
/// under the server's `pin` mode (crate::pin): a tool whose definition is
/// not the accepted one comes back held. A store that cannot be read fails
/// the import, naming the server.
pub async fn import_pinned(
    config: McpServerConfig,
    pins: &Arc<dyn PinStore>,
) -> Result<Vec<McpTool>, ImportError> {
    let (server, mode) = (config.name.clone(), config.pin);
    let mut tools = import(config).await?;
    let unreadable = |e: StoreError| ImportError::Pins {
        server: server.clone(),
        message: e.to_string(),
    };
    // Whether this server's tools were pinned before: then a tool it lists
    // for the first time (added, renamed) is held until accepted.
    let reviewed = mode != PinMode::Off
        && pins
            .list()
            .await
            .map_err(unreadable)?
            .iter()
            .any(|p| p.server == server);
    for tool in &mut tools {
        let listed = tool.listed.clone();
        let hold = pin::check(pins, mode, &tool.spec.name, &server, listed, reviewed)
            .await
            .map_err(|e| ImportError::Pins {
                server: server.clone(),
                message: e.to_string(),
            })?;
        tool.hold = hold.map(|hold| {
            let notice = hold.notice_spec(&tool.spec);
            (hold, notice)
        });
    }
    Ok(tools)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn result(value: Value) -> CallToolResult {
        serde_json::from_value(value).unwrap()
    }

    #[test]
    fn structured_content_wins_over_text() {
        let r = result(
            json!({"content": [{"type": "text", "text": "ignored"}], "structuredContent": {"a": 1}}),
        );
        assert_eq!(call_data(r).unwrap(), json!({"a": 1}));
    }

    #[test]
    fn one_text_block_is_parsed_as_json_when_it_is_json() {
        let r = result(json!({"content": [{"type": "text", "text": "{\"n\": 2}"}]}));
        assert_eq!(call_data(r).unwrap(), json!({"n": 2}));
        let r = result(json!({"content": [{"type": "text", "text": "Echo: hi"}]}));
        assert_eq!(call_data(r).unwrap(), json!("Echo: hi"));
    }

    #[test]
    fn several_blocks_are_kept_as_blocks() {
        let r = result(
            json!({"content": [{"type": "text", "text": "a"}, {"type": "text", "text": "b"}]}),
        );
        assert_eq!(call_data(r).unwrap().as_array().map(Vec::len), Some(2));
    }

    #[test]
    fn is_error_is_failed_with_the_text() {
        let r =
            result(json!({"content": [{"type": "text", "text": "no such city"}], "isError": true}));
        let e = call_data(r).unwrap_err();
        assert_eq!(e.kind, ErrorKind::Failed);
        assert_eq!(e.message, "no such city");
    }

    #[test]
    fn missing_hints_take_mcp_defaults_and_names_are_prefixed() {
        let connection = Arc::new(McpConnection::new(McpServerConfig::stdio(
            "srv",
            "x",
            ["y"],
        )));
        let tool: rmcp::model::Tool =
            serde_json::from_value(json!({"name": "do.it", "inputSchema": {"type": "object"}}))
                .unwrap();
        let imported = McpTool::from_listing(&connection, &tool).unwrap();
        assert_eq!(imported.spec.name, "srv__do_it");
        assert_eq!(imported.remote_name(), "do.it");
        assert!(!imported.spec.annotations.safe_to_repeat());
        assert!(imported.spec.annotations.destructive);
    }

    #[test]
    fn urls_in_messages_lose_query_and_credentials() {
        assert_eq!(
            redact_url("https://u:p@h.example/mcp?token=abc"),
            "https://h.example/mcp"
        );
    }
}
