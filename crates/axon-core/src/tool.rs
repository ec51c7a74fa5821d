//! What a tool is. A tool has a spec (name, description, schemas, annotations) and
//! one async method that turns JSON arguments into JSON data or a [`ToolError`].
//! Everything about reliability lives in the pipeline, not here; a tool only says
//! what happened.
//!
//! Library users rarely implement [`Tool`] by hand: [`tool_fn`] turns an async fn
//! over a serde + schemars struct into a tool whose input schema is derived from
//! the struct.

use std::future::Future;
use std::marker::PhantomData;
use std::sync::{Arc, Mutex, OnceLock};

use async_trait::async_trait;
use schemars::JsonSchema;
use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};

use serde_json::Value;
use smol_str::SmolStr;
use tokio_util::sync::CancellationToken;

use crate::error::ToolError;
use crate::events::{CallEvent, EventSink};

/// Behaviour hints, as MCP's tool annotations. The executor reads `idempotent`,
/// `destructive` and `read_only` to decide whether an attempt that may have had side
/// effects can be retried (docs/design.md, "Error kinds").
///
/// The default describes a plain function tool: idempotent, not destructive. Tools
/// imported from MCP servers use MCP's own defaults instead.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default)]
pub struct Annotations {
    /// A human-friendly title.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    /// The tool does not change anything.
    pub read_only: bool,
    /// The tool may destroy or overwrite data.
    pub destructive: bool,
    /// Calling it twice with the same arguments has the effect of calling it once.
    pub idempotent: bool,
    /// The tool talks to the outside world.
    pub open_world: bool,
}

impl Default for Annotations {
    fn default() -> Self {
        Annotations {
            title: None,
            read_only: false,
            destructive: false,
            idempotent: true,
            open_world: false,
        }
    }
}

impl Annotations {
    /// Whether repeating a call that may already have run is safe.
    pub fn safe_to_repeat(&self) -> bool {
        self.read_only || (self.idempotent && !self.destructive)
    }
}

/// What a tool reaches by default, so what its breaker, rate limit and retry
/// budget are kept for (`policy::dependency`): part of its spec, never sent to clients.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub enum Dependency {
    /// The tool itself.
    #[default]
    Tool,
    /// The origin of the call's `url` argument.
    Origin,
    /// An imported MCP server, by its configured name: all its tools share it.
    Server(String),
}

/// Everything the outside world needs to know about a tool: what to call it, what
/// it does, which arguments it takes and what it returns.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ToolSpec {
    /// Matches `^[a-zA-Z0-9_-]{1,64}$` (checked at registration).
    pub name: String,
    /// What the tool does, for humans and LLMs.
    pub description: String,
    /// JSON Schema of the arguments.
    pub input_schema: Value,
    /// JSON Schema of `data` on success, when the tool promises one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub output_schema: Option<Value>,
    /// Behaviour hints.
    #[serde(default)]
    pub annotations: Annotations,
    /// What a call reaches by default, which its breaker, limits, retry
    /// budget and latency are kept for (policy/dependency.rs). Axon's own: not sent.
    #[serde(skip)]
    pub dependency: Dependency,
}

impl ToolSpec {
    /// A spec that accepts any JSON object.
    pub fn new(name: impl Into<String>, description: impl Into<String>) -> Self {
        ToolSpec {
            name: name.into(),
            description: description.into(),
            input_schema: serde_json::json!({"type": "object"}),
            output_schema: None,
            annotations: Annotations::default(),
            dependency: Dependency::Tool,
        }
    }

    /// Set what a call reaches by default (see [`Dependency`]).
    pub fn dependency(mut self, dependency: Dependency) -> Self {
        self.dependency = dependency;
        self
    }

    /// Set the input schema.
    pub fn input_schema(mut self, schema: Value) -> Self {
        self.input_schema = schema;
        self
    }

    /// Set the output schema.
    pub fn output_schema(mut self, schema: Value) -> Self {
        self.output_schema = Some(schema);
        self
    }

    /// Set the annotations.
    pub fn annotations(mut self, annotations: Annotations) -> Self {
        self.annotations = annotations;
        self
    }

    /// The tool as an OpenAI function-calling definition, so an LLM can be handed
    /// Axon's tools as they are (`axon tools --format openai`, `GET /v1/tools?format=openai`).
    pub fn openai_function(&self) -> Value {
        serde_json::json!({
            "type": "function",
            "function": {"name": self.name, "description": self.description, "parameters": self.input_schema},
        })
    }
}

/// What a tool learns about the call it serves: who it is for, which attempt this
/// is, and a token that fires when the caller gives up (the attempt future is also
/// dropped then; the token lets a tool clean up or stop early).
#[derive(Clone, Debug)]
pub struct ToolContext {
    shared: Arc<CallScope>,
    attempt: u32,
    /// When the attempt's timeout ends it (none outside an executor).
    ends: Option<tokio::time::Instant>,
}

/// Per-call data shared by every attempt of one call.
pub(crate) struct CallScope {
    /// Shared with the result, its history entry and every event: one
    /// allocation per call, however often the id is handed on.
    pub(crate) call_id: SmolStr,
    /// The caller's, else the call id itself (shared, not copied).
    pub(crate) correlation_id: SmolStr,
    /// The caller's token; empty when it gave none, so that a call nobody can
    /// cancel does not allocate one (a tool that asks for it gets one made then).
    pub(crate) cancel: OnceLock<CancellationToken>,
    /// JSON pointers into the arguments that must be stored as `"***"`.
    pub(crate) secret_pointers: Mutex<Vec<String>>,
    /// JSON pointers into the result's data that must be stored as `"***"`.
    pub(crate) output_secrets: Mutex<Vec<String>>,
    /// The secret values the call carries (a plan's `${secret.*}`), masked
    /// wherever they appear in what a tool keeps of the call.
    pub(crate) secrets: Vec<String>,
    /// What chaos injected into the call, for its provenance.
    pub(crate) chaos: Mutex<Vec<String>>,
    /// The tool's name, for progress events and the result (the executor's
    /// entry's, shared).
    pub(crate) tool: SmolStr,
    /// The caller's listener, for progress events.
    pub(crate) events: Option<EventSink>,
    /// Who makes the call ([`crate::ToolCall::owner`]).
    pub(crate) owner: crate::Owner,
    /// The person's decision, when the call waited for one.
    pub(crate) approval: Mutex<Option<crate::result::ApprovalNote>>,
}

/// The id of a call started at `at`: a ULID (its time part is `at`'s),
/// written once and shared by every holder of the id.
pub(crate) fn new_call_id(at: std::time::SystemTime) -> SmolStr {
    let mut buf = [0u8; ulid::ULID_LEN];
    SmolStr::new(ulid::Ulid::from_datetime(at).array_to_str(&mut buf))
}

impl CallScope {
    /// The caller's cancellation token, if it gave one.
    pub(crate) fn cancel(&self) -> Option<&CancellationToken> {
        self.cancel.get()
    }
}

/// Resolves when `token` is cancelled; never when there is none.
pub(crate) async fn cancelled(token: Option<&CancellationToken>) {
    match token {
        Some(t) => t.cancelled().await,
        None => std::future::pending().await,
    }
}

/// Whether `token` is there and cancelled.
pub(crate) fn is_cancelled(token: Option<&CancellationToken>) -> bool {
    token.is_some_and(CancellationToken::is_cancelled)
}

impl std::fmt::Debug for CallScope {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("CallScope")
            .field("call_id", &self.call_id)
            .field("correlation_id", &self.correlation_id)
            .field("tool", &self.tool)
            .field("listener", &self.events.is_some())
            .finish_non_exhaustive()
    }
}

impl ToolContext {
    pub(crate) fn new(
        shared: Arc<CallScope>,
        attempt: u32,
        ends: Option<tokio::time::Instant>,
    ) -> Self {
        ToolContext {
            shared,
            attempt,
            ends,
        }
    }

    /// A context for calling a tool outside an executor (tests, benchmarks).
    pub fn detached(call_id: impl Into<String>) -> Self {
        let call_id = SmolStr::from(call_id.into());
        ToolContext {
            shared: Arc::new(CallScope {
                correlation_id: call_id.clone(),
                call_id,
                cancel: OnceLock::new(),
                secret_pointers: Mutex::new(Vec::new()),
                output_secrets: Mutex::new(Vec::new()),
                secrets: Vec::new(),
                chaos: Mutex::new(Vec::new()),
                approval: Mutex::new(None),
                tool: SmolStr::default(),
                events: None,
                owner: crate::Owner::Process,
            }),
            attempt: 1,
            ends: None,
        }
    }

    /// Who makes the call: `None` for the process's owner, who may see the
    /// state of every caller; else a name that keeps this caller's state
    /// (browser sessions) apart from the others'.
    pub fn tenant(&self) -> Option<&str> {
        self.shared.owner.tenant()
    }

    /// Who owns what this call leaves behind (files, browser sessions,
    /// history).
    pub fn owner(&self) -> &crate::Owner {
        &self.shared.owner
    }

    /// This call's id (the same for every attempt).
    pub fn call_id(&self) -> &str {
        &self.shared.call_id
    }

    /// The correlation id: a plan run, a conversation, a session. Browser tools use
    /// it to pick the page that belongs to this caller.
    pub fn correlation_id(&self) -> &str {
        &self.shared.correlation_id
    }

    /// 1 for the first attempt, 2 for the first retry, and so on.
    pub fn attempt(&self) -> u32 {
        self.attempt
    }

    /// How long this attempt has before its timeout ends it (`None` outside
    /// an executor: no bound). A tool that is about to start work it cannot
    /// finish in time (a model completion) can decline at once instead, with
    /// an answer the caller can act on, rather than be cut off mid-way.
    pub fn remaining(&self) -> Option<std::time::Duration> {
        self.ends
            .map(|ends| ends.saturating_duration_since(tokio::time::Instant::now()))
    }

    /// Fires when the caller cancels the call.
    pub fn cancellation(&self) -> &CancellationToken {
        self.shared.cancel.get_or_init(CancellationToken::new)
    }

    /// Report how far a long-running attempt has got (an MCP server's
    /// `notifications/progress`, a browser waiting for a page). The caller's
    /// listener gets a [`CallEvent::Progress`]: a plan shows it on the step's line,
    /// the HTTP API streams it. `total` is `None` when the end is unknown.
    pub fn progress(&self, progress: f64, total: Option<f64>, message: Option<String>) {
        if let Some(sink) = &self.shared.events {
            sink(CallEvent::Progress {
                call_id: self.shared.call_id.to_string(),
                tool: self.shared.tool.to_string(),
                attempt: self.attempt,
                progress,
                total,
                message,
            });
        }
    }

    /// Ask for an argument to be stored as `"***"` in history, for secrets only the
    /// tool can recognise (text typed into a password field). `pointer` is a JSON
    /// pointer into the arguments, such as `/text`.
    pub fn mark_secret(&self, pointer: impl Into<String>) {
        if let Ok(mut list) = self.shared.secret_pointers.lock() {
            list.push(pointer.into());
        }
    }

    /// `args` as history keeps them: the fields the tool marked secret
    /// ([`ToolContext::mark_secret`]) and secret-looking names as `"***"`,
    /// and the call's secret values masked wherever they appear. For what a
    /// tool keeps of a call itself (a browser recording's frames).
    pub fn masked(&self, args: &Value) -> Value {
        let pointers = self
            .shared
            .secret_pointers
            .lock()
            .map(|list| list.clone())
            .unwrap_or_default();
        let mut shown = crate::redact::redact(args, &pointers);
        if !self.shared.secrets.is_empty() {
            let secrets = crate::redact::with_encoded_forms(self.shared.secrets.clone());
            crate::redact::scrub_values(&mut shown, &secrets);
        }
        shown
    }

    /// Ask for part of the result's `data` to be stored as `"***"` in history
    /// (a saved browser state holds cookie values). The caller still gets the
    /// real value; only what is stored is masked. `pointer` is a JSON pointer
    /// into `data`, such as `/storage_state`.
    pub fn mark_secret_output(&self, pointer: impl Into<String>) {
        if let Ok(mut list) = self.shared.output_secrets.lock() {
            list.push(pointer.into());
        }
    }
}

/// A tool: a spec and an async call. Implement it for tools whose schema is only
/// known at run time (MCP imports, browser tools); use [`tool_fn`] otherwise.
#[async_trait]
pub trait Tool: Send + Sync + 'static {
    /// The tool's name, description, schemas and annotations.
    fn spec(&self) -> &ToolSpec;

    /// Run once. Arguments have already been validated against the input schema.
    /// They are borrowed: retries and hedges reuse them.
    async fn call(&self, args: &Value, ctx: ToolContext) -> Result<Value, ToolError>;

    /// Whether repeating this call after an attempt that may have had effects is
    /// safe. The annotations answer for most tools; a tool whose idempotency depends
    /// on its arguments (an HTTP `GET` versus a `POST`) answers per call.
    fn safe_to_repeat(&self, _args: &Value) -> bool {
        self.spec().annotations.safe_to_repeat()
    }
}

/// A tool made from an async fn over typed arguments. The input schema comes from
/// `A`'s [`JsonSchema`], the output schema from `O`'s.
pub struct FnTool<A, O, F> {
    spec: ToolSpec,
    f: F,
    _types: PhantomData<fn(A) -> O>,
}

/// Make a tool from an async fn: arguments are deserialised into `A`, the result is
/// serialised from `O`.
///
/// ```
/// use axon_core::{tool_fn, ToolError};
/// use schemars::JsonSchema;
/// use serde::{Deserialize, Serialize};
///
/// #[derive(Deserialize, JsonSchema)]
/// struct Add { a: i64, b: i64 }
/// #[derive(Serialize, JsonSchema)]
/// struct Sum { sum: i64 }
///
/// let add = tool_fn("add", "Adds two integers", |args: Add, _ctx| async move {
///     Ok::<_, ToolError>(Sum { sum: args.a + args.b })
/// });
/// ```
pub fn tool_fn<A, O, F, Fut>(
    name: impl Into<String>,
    description: impl Into<String>,
    f: F,
) -> FnTool<A, O, F>
where
    A: DeserializeOwned + JsonSchema + Send + 'static,
    O: Serialize + JsonSchema + Send + 'static,
    F: Fn(A, ToolContext) -> Fut + Send + Sync + 'static,
    Fut: Future<Output = Result<O, ToolError>> + Send + 'static,
{
    let input_schema = schemars::schema_for!(A).to_value();
    let output_schema = schemars::schema_for!(O).to_value();
    // A schema of `true` (serde_json::Value outputs) promises nothing: don't check it.
    let output_schema = (output_schema != Value::Bool(true)).then_some(output_schema);
    FnTool {
        spec: ToolSpec {
            name: name.into(),
            description: description.into(),
            input_schema,
            output_schema,
            annotations: Annotations::default(),
            dependency: Dependency::Tool,
        },
        f,
        _types: PhantomData,
    }
}

impl<A, O, F> FnTool<A, O, F> {
    /// Say what a call reaches by default (see [`Dependency`]): `Origin` for a
    /// tool that fetches its `url` argument.
    pub fn dependency(mut self, dependency: Dependency) -> Self {
        self.spec.dependency = dependency;
        self
    }

    /// Replace the annotations (for instance to mark a tool destructive).
    pub fn annotations(mut self, annotations: Annotations) -> Self {
        self.spec.annotations = annotations;
        self
    }

    /// Mark the tool as not idempotent: it will not be retried after an attempt that
    /// may have had side effects.
    pub fn not_idempotent(mut self) -> Self {
        self.spec.annotations.idempotent = false;
        self
    }

    /// Mark the tool read-only (and therefore safe to retry and to hedge).
    pub fn read_only(mut self) -> Self {
        self.spec.annotations.read_only = true;
        self
    }

    /// Do not check `data` against the output schema derived from `O`.
    pub fn without_output_schema(mut self) -> Self {
        self.spec.output_schema = None;
        self
    }
}

#[async_trait]
impl<A, O, F, Fut> Tool for FnTool<A, O, F>
where
    A: DeserializeOwned + Send + 'static,
    O: Serialize + Send + 'static,
    F: Fn(A, ToolContext) -> Fut + Send + Sync + 'static,
    Fut: Future<Output = Result<O, ToolError>> + Send + 'static,
{
    fn spec(&self) -> &ToolSpec {
        &self.spec
    }

    async fn call(&self, args: &Value, ctx: ToolContext) -> Result<Value, ToolError> {
        let args = A::deserialize(args)
            .map_err(|e| ToolError::invalid_arguments(format!("arguments: {e}")))?;
        let out = (self.f)(args, ctx).await?;
        serde_json::to_value(out)
            .map_err(|e| ToolError::internal(format!("could not serialise the result: {e}")))
    }
}
