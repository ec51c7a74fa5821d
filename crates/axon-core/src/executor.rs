//! The executor: it takes a [`ToolCall`] and returns a [`CallResult`], running the call
//! through the policy pipeline in the order of docs/design.md, "The policy pipeline".
//! That order is written once, in `executor/pipeline.rs`:
//!
//! validate arguments → cache lookup → [retry loop: circuit breaker → rate limit and
//! bulkhead → attempt under a hard timeout (soft timeout, hedging) → result
//! validation] → stale-if-error → fallback chain → history, metrics, trace.
//!
//! This file holds what the pipeline runs on: the executor, each tool's entry
//! (its resolved policy, the state of the dependencies it reaches, its metric
//! handles) and the one `Call` context every stage reads. Beside it:
//! `executor/build.rs` resolves each tool's policy from its layers,
//! `executor/ends.rs` a call's two ends (its scope, an unknown tool, the end
//! stamp), `executor/record.rs` what history keeps of a call; the breakers as
//! operators see them are in `policy/breaker/controls.rs`.

use std::collections::HashMap;
use std::future::{Future, poll_fn};
use std::pin::{Pin, pin};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use futures::{FutureExt, StreamExt};
use serde_json::Value;
use smol_str::SmolStr;
use tokio::time::Instant;

mod build;
mod ends;
mod pipeline;
mod record;

pub use build::{BuildError, ExecutorBuilder};

use crate::approval::ApprovalStore;
use crate::call::ToolCall;
use crate::events::{Observer, ToolMetrics};
use crate::history::HistoryStore;
use crate::policy::breaker::SharedBreakers;
use crate::policy::cache::SharedCache;
use crate::policy::chaos::ChaosDice;
use crate::policy::dependency::{self, Key};
use crate::policy::retry::budget::SharedBudget;
use crate::policy::{Estimate, Millis, Policy};
use crate::registry::{RegisteredTool, ToolRegistry};
use crate::result::{CallResult, Timestamp};
use crate::state::{KeyState, KeyedStates, PolicyState};
use crate::tool::{CallScope, new_call_id};
use crate::trace::sampling::{self, CallSpan};

/// Calls running at once in [`Executor::call_many`] unless told otherwise.
pub const DEFAULT_MAX_PARALLEL: usize = 10;

/// Runs tool calls through the policy pipeline. Cheap to clone; clones share
/// everything.
#[derive(Clone)]
pub struct Executor {
    inner: Arc<Inner>,
}

struct Inner {
    registry: ToolRegistry,
    /// foldhash: the lookup is on every call, and names are the registry's.
    entries: HashMap<String, ToolEntry, foldhash::fast::RandomState>,
    state: Arc<PolicyState>,
    history: Arc<dyn HistoryStore>,
    rng: Mutex<fastrand::Rng>,
    max_parallel: usize,
    /// The cluster's response cache, when there is a shared store.
    shared_cache: Option<Arc<dyn SharedCache>>,
    /// Where calls that wait for a person are parked (crate::approval).
    approvals: Arc<dyn ApprovalStore>,
}

/// A tool with what the pipeline needs to call it: its resolved policy, the
/// state of the dependencies it reaches (breaker, budget, latency, limits) and
/// its metric handles.
pub(crate) struct ToolEntry {
    /// The tool's name, shared with each call's scope and result.
    name: SmolStr,
    tool: RegisteredTool,
    policy: Policy,
    /// The tool's own state (key `tool`).
    pub(crate) own: Arc<KeyState>,
    /// Its MCP server's, shared with the server's other tools (key `server`).
    pub(crate) server: Option<Arc<KeyState>>,
    /// Its states per origin or template value, when its key can give one.
    pub(crate) keyed: Option<KeyedStates>,
    metrics: ToolMetrics,
    /// The dice of `[tools.<name>.chaos]`, seeded once per tool.
    chaos: ChaosDice,
    /// The cluster's breakers, when there is a shared store.
    pub(crate) shared_breakers: Option<Arc<dyn SharedBreakers>>,
    /// The cluster's retry budget, when there is a shared store.
    shared_budget: Option<Arc<dyn SharedBudget>>,
}

/// One call on its way through the pipeline: what every stage reads. Built once
/// the tool and its policy are known, so that the stages take one argument
/// instead of the same five each.
#[derive(Clone, Copy)]
struct Call<'a> {
    entry: &'a ToolEntry,
    /// The dependency the call reaches: whose breaker, limits, budget and
    /// latency it uses.
    dep: &'a KeyState,
    args: &'a Value,
    policy: &'a Policy,
    scope: &'a Arc<CallScope>,
    observer: &'a Observer<'a>,
    /// When the call started, by tokio's clock.
    started: Instant,
    /// Whether an attempt may be repeated after an outcome that may have had side
    /// effects (the policy's `idempotent`, else the tool's annotations).
    safe_to_repeat: bool,
    /// The call as its caller made it: the `${secret.*}` values to mask where
    /// a person is shown the arguments, the plan step and the approval it
    /// runs under (crate::approval). One reference: `Call` is in every
    /// call's future.
    request: &'a ToolCall,
    /// Whether a person approved it already (crate::approval).
    approved: bool,
}

/// A tool's observed latency and the timeout and hedge delay in force from it
/// (see policy/adaptive.rs).
#[derive(Clone, Copy, Debug, PartialEq, serde::Serialize, schemars::JsonSchema)]
pub struct AdaptiveView {
    /// Recent quantiles; `None` before the tool's first answer.
    pub latency: Option<Estimate>,
    /// The hard timeout an attempt gets now, ms.
    pub timeout_ms: u64,
    /// Whether that timeout is chosen from the latency (`timeout_ms = "auto"`).
    pub timeout_auto: bool,
    /// When a hedge starts now, ms; `None` when hedging is off (or `"auto"`
    /// and too little has been seen).
    pub hedge_after_ms: Option<u64>,
    /// Whether the hedge delay is chosen from the latency.
    pub hedge_auto: bool,
}

type BoxedCall<'a> = Pin<Box<dyn Future<Output = CallResult> + Send + 'a>>;

impl Executor {
    /// Where calls waiting for approval are parked, to list and decide them.
    pub fn approvals(&self) -> &Arc<dyn ApprovalStore> {
        &self.inner.approvals
    }

    /// The registry it calls into.
    pub fn registry(&self) -> &ToolRegistry {
        &self.inner.registry
    }

    /// Where it records history.
    pub fn history(&self) -> &Arc<dyn HistoryStore> {
        &self.inner.history
    }

    /// Its breakers, budgets and cache.
    pub fn policy_state(&self) -> &Arc<PolicyState> {
        &self.inner.state
    }

    /// The resolved policy of a tool.
    pub fn policy(&self, tool: &str) -> Option<&Policy> {
        self.inner.entries.get(tool).map(|e| &e.policy)
    }

    /// A tool's recent latency and the values its `"auto"` keys take now (what
    /// `/v1/stats` and `axon stats` show); `None` if there is no such tool.
    pub fn adaptive(&self, tool: &str) -> Option<AdaptiveView> {
        let entry = self.inner.entries.get(tool)?;
        let seen = &entry.own.state.latency;
        Some(AdaptiveView {
            latency: seen.estimate(),
            timeout_ms: entry.policy.attempt_timeout(seen).as_millis() as u64,
            timeout_auto: entry.policy.timeout_ms == Millis::Auto,
            hedge_after_ms: entry.policy.hedge_after(seen).map(|d| d.as_millis() as u64),
            hedge_auto: entry.policy.hedge.after_ms == Millis::Auto,
        })
    }

    /// Feed a tool's latency sketch with earlier observations, oldest first
    /// (durations from history, when a process starts), so that its `"auto"`
    /// values do not start from nothing. Unknown tools, and tools that have
    /// already been observed in this process, are left as they are.
    pub fn seed_latency(&self, tool: &str, took: impl IntoIterator<Item = Duration>) {
        if let Some(entry) = self.inner.entries.get(tool)
            && entry.own.state.latency.estimate().is_none()
        {
            for d in took {
                entry.own.state.latency.record(d);
            }
        }
    }

    /// The median latency observed for a tool, ms (plans weigh steps by it when
    /// they do not declare `expected_ms`); `None` before its first answer.
    pub fn observed_p50_ms(&self, tool: &str) -> Option<f64> {
        let entry = self.inner.entries.get(tool)?;
        entry.own.state.latency.estimate().map(|e| e.p50_ms)
    }

    /// Call a tool. Never fails: every failure is described in the result.
    pub async fn call(&self, call: ToolCall) -> CallResult {
        let started_at = Timestamp::now();
        let call_id = new_call_id(started_at.0);
        // OpenTelemetry's GenAI `execute_tool` span (docs/telemetry.md); no
        // arguments on it: they may hold secrets.
        let opened = sampling::open_call(|| {
            tracing::debug_span!(
                "execute_tool",
                otel.name = %format_args!("execute_tool {}", call.tool),
                gen_ai.operation.name = "execute_tool",
                gen_ai.tool.name = %call.tool,
                gen_ai.tool.call.id = &*call_id,
                axon.correlation_id = call.correlation_id.as_deref(),
                axon.attempts = tracing::field::Empty,
                axon.cache_hit = tracing::field::Empty,
                axon.fallback.index = tracing::field::Empty,
                error.type = tracing::field::Empty,
                otel.status_code = tracing::field::Empty,
                otel.status_description = tracing::field::Empty,
            )
        });
        let span = match opened {
            // Nobody wants the span (telemetry off): the pipeline's future is
            // awaited as it is, in place.
            CallSpan::Disabled => return self.pipeline(call, call_id, started_at).await,
            CallSpan::Built(span) => span,
            CallSpan::Unsampled => {
                let mut pipeline = pin!(self.pipeline(call, call_id, started_at));
                return poll_fn(|cx| sampling::unsampled(|| pipeline.as_mut().poll(cx))).await;
            }
        };
        // Each poll in the span; the future is polled where it is, not moved
        // into `tracing`'s `Instrumented` first (it is a few KB).
        let mut pipeline = pin!(self.pipeline(call, call_id, started_at));
        let result = poll_fn(|cx| span.in_scope(|| pipeline.as_mut().poll(cx))).await;
        span.record("axon.attempts", i64::from(result.attempts));
        span.record("axon.cache_hit", result.provenance.cache_hit);
        if let Some(fallback) = &result.fallback {
            span.record("axon.fallback.index", fallback.index as i64);
        }
        if let Some(e) = &result.error {
            crate::trace::record_error(&span, e.kind.as_str(), e.code.as_deref());
        }
        result
    }

    /// Run several calls at once, at most `max_parallel` (default 10) together, and
    /// return their results in the order of `calls`.
    pub async fn call_many(
        &self,
        calls: Vec<ToolCall>,
        max_parallel: Option<usize>,
    ) -> Vec<CallResult> {
        let cap = max_parallel.unwrap_or(self.inner.max_parallel).max(1);
        // Unordered so a slow call does not hold a slot once later ones are done.
        let mut done: Vec<(usize, CallResult)> =
            futures::stream::iter(calls.into_iter().enumerate())
                .map(|(i, c)| self.call(c).map(move |r| (i, r)))
                .buffer_unordered(cap)
                .collect()
                .await;
        done.sort_unstable_by_key(|(i, _)| *i);
        done.into_iter().map(|(_, r)| r).collect()
    }

    fn boxed_call(&self, call: ToolCall) -> BoxedCall<'_> {
        Box::pin(self.call(call))
    }
}

impl Call<'_> {
    /// The cluster's breakers and budget for the call's dependency, under
    /// the name the shared store keeps it by.
    fn cluster(&self) -> Option<(&dyn SharedBreakers, &str)> {
        let shared = self.entry.shared_breakers.as_deref()?;
        Some((shared, &*self.dep.name))
    }
}

impl Executor {
    /// A registered tool's entry: what the operators' views of its breakers
    /// (policy/breaker/controls.rs) read.
    pub(crate) fn entry(&self, tool: &str) -> Option<&ToolEntry> {
        self.inner.entries.get(tool)
    }
}

impl ToolEntry {
    /// The state of the dependency a call reaches, when it is not the tool's
    /// own: its server's, or its origin's or template value's (policy/dependency.rs).
    fn dependency(&self, args: &Value) -> Option<Arc<KeyState>> {
        match dependency::resolve(self.policy.key.as_ref(), &self.tool.spec().dependency, args) {
            Key::Tool => None,
            Key::Server => self.server.clone(),
            Key::Keyed(k) => self.keyed.as_ref().map(|keyed| keyed.get(&k)),
        }
    }
}
