//! A request to call a tool: which tool, which arguments, and optionally a
//! correlation id, policy overrides, a fallback chain, a cancellation token and an
//! event listener.

use std::sync::Arc;

use serde::{Deserialize, Serialize};
use serde_json::Value;
use smol_str::SmolStr;
use tokio_util::sync::CancellationToken;

use crate::Owner;
use crate::events::{CallEvent, EventSink};
use crate::history::{HistoryEntry, StepMark};
use crate::policy::fallback::FallbackCall;

/// One call. The serialisable part is what HTTP and MCP callers send; the token and
/// listener are for in-process callers.
#[derive(Clone, Default, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ToolCall {
    /// The tool's registered name.
    pub tool: String,
    /// Its arguments (checked against its input schema).
    #[serde(default = "empty_object")]
    pub args: Value,
    /// Groups this call with others; defaults to the call id. Shared, not
    /// copied, by the result and its history entry (a plan's steps share one).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub correlation_id: Option<SmolStr>,
    /// Policy keys overriding the tool's configured policy for this call.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub policy: Option<Value>,
    /// Tools to try, in order, if this one fails for good.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub fallbacks: Vec<FallbackCall>,
    /// Cancels the call: no new attempt starts and the running one is aborted.
    #[serde(skip)]
    pub cancel: Option<CancellationToken>,
    /// Receives the call's progress events.
    #[serde(skip)]
    pub events: Option<EventSink>,
    /// Secret values the arguments were built from (a plan's `${secret.NAME}`):
    /// wherever one appears in what is stored (arguments, data, error message) it
    /// becomes `"***"`, whatever the field is called.
    #[serde(skip)]
    pub secrets: Vec<String>,
    /// The plan step this call runs, stored with its history entry. Boxed:
    /// every call's future holds its `ToolCall`, and most calls are not
    /// plan steps.
    #[serde(skip)]
    pub step: Option<Box<StepMark>>,
    /// The approval this call runs under, when its caller already asked a
    /// person (an MCP client answering Axon's question: crate::approval); a
    /// call whose policy wants approval finds it decided instead of asking.
    #[serde(skip)]
    pub approval_id: Option<String>,
    /// Who makes the call, and so owns what it leaves behind (history, files,
    /// browser sessions, approvals): a tenant when the caller is one of
    /// several that must not see each other's state (a scoped token, an MCP
    /// session), which keys everything it keeps apart. Set by the front end,
    /// never read from a request body. [`Owner::Process`] (the default): the
    /// process's owner (the CLI, a library caller, an admin token), who sees
    /// everything.
    #[serde(skip)]
    pub owner: Owner,
    /// Hears the history entry as stored (secrets masked), for callers that keep
    /// their own record of the call (a plan's checkpoints and events).
    #[serde(skip)]
    pub on_record: Option<RecordSink>,
    /// What `max_result_tokens` is when no policy layer sets it: a front end
    /// that hands results to a model sets it (the MCP server), so a library
    /// caller or a plan gets whole results unless configured otherwise.
    #[serde(skip)]
    pub default_max_result_tokens: Option<u32>,
}

/// Receives a call's history entry as it is stored ([`ToolCall::on_record`]).
pub type RecordSink = Arc<dyn Fn(&HistoryEntry) + Send + Sync>;

fn empty_object() -> Value {
    Value::Object(Default::default())
}

impl std::fmt::Debug for ToolCall {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ToolCall")
            .field("tool", &self.tool)
            .field("correlation_id", &self.correlation_id)
            .field("policy", &self.policy)
            .field("fallbacks", &self.fallbacks)
            .finish_non_exhaustive()
    }
}

impl ToolCall {
    /// Call `tool` with `args`.
    pub fn new(tool: impl Into<String>, args: Value) -> Self {
        ToolCall {
            tool: tool.into(),
            args,
            ..Default::default()
        }
    }

    /// Group the call under `id`.
    pub fn correlation_id(mut self, id: impl Into<SmolStr>) -> Self {
        self.correlation_id = Some(id.into());
        self
    }

    /// Make the call as `tenant` (see [`ToolCall::owner`]).
    pub fn tenant(mut self, tenant: impl Into<SmolStr>) -> Self {
        self.owner = Owner::Tenant(tenant.into());
        self
    }

    /// Override policy keys for this call (`{"timeout_ms": 500, "retry": {...}}`).
    pub fn policy(mut self, policy: Value) -> Self {
        self.policy = Some(policy);
        self
    }

    /// Add a fallback to the chain.
    pub fn fallback(mut self, tool: impl Into<String>, args: Value) -> Self {
        self.fallbacks.push(FallbackCall::new(tool, args));
        self
    }

    /// Cancel through `token`.
    pub fn cancel_token(mut self, token: CancellationToken) -> Self {
        self.cancel = Some(token);
        self
    }

    /// Send progress events to `listener`.
    pub fn on_event(mut self, listener: impl Fn(CallEvent) + Send + Sync + 'static) -> Self {
        self.events = Some(Arc::new(listener));
        self
    }
}
