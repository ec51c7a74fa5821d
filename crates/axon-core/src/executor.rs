//! The executor: it takes a [`ToolCall`] and returns a [`CallResult`], running the call
//! through the policy pipeline in the order of docs/design.md, "The policy pipeline". That
//! order is written once, in [`Executor::pipeline`] and the three functions it calls, top
//! to bottom:
//!
//! validate arguments → cache lookup → [retry loop: circuit breaker → rate limit and
//! bulkhead → attempt under a hard timeout (soft timeout, hedging) → result
//! validation] → stale-if-error → fallback chain → history, metrics, trace.
//!
//! The breaker and the limits sit inside the retry loop so that every attempt —
//! retries included — is admitted by the breaker and counted by the limits.
//! Each call first finds the dependency it reaches (policy/dependency.rs): the
//! breaker, limits, retry budget and latency it uses are that dependency's.
//!
//! Beside the pipeline: `executor/build.rs` resolves each tool's policy from
//! its layers, `executor/breakers.rs` is the breakers as operators see them,
//! `executor/record.rs` what history keeps of a call.

use std::collections::HashMap;
use std::future::{Future, poll_fn};
use std::panic::AssertUnwindSafe;
use std::pin::{Pin, pin};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use futures::{FutureExt, StreamExt};
use serde_json::Value;
use smol_str::SmolStr;
use tokio::time::Instant;

mod breakers;
mod build;
mod ends;
mod record;

pub use breakers::KeyBreaker;
pub use build::{BuildError, ExecutorBuilder};

use crate::approval::{self, ApprovalStore};
use crate::call::ToolCall;
use crate::error::{CallError, ErrorKind, ToolError};
use crate::events::{Observer, ToolMetrics};
use crate::history::HistoryStore;
use crate::outcome::Outcome;
use crate::policy::breaker::{self, Breakers, SharedBreakers};
use crate::policy::cache::{self, SharedCache};
use crate::policy::chaos::{self, ChaosDice};
use crate::policy::dependency::{self, Key};
use crate::policy::retry::{Attempt, RetryLoop};
use crate::policy::retry_budget::SharedBudget;
use crate::policy::timeout::{self, Deadline};
use crate::policy::{
    Estimate, Millis, Policy, PolicyError, fallback, hedge, result_budget, result_validation,
};
use crate::registry::{RegisteredTool, ToolRegistry};
use crate::result::{CallResult, Provenance, ResponseDigest, Source, Timestamp};
use crate::state::{KeyState, KeyedStates, PolicyState};
use crate::tool::{CallScope, ToolContext, cancelled, new_call_id};
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
struct ToolEntry {
    /// The tool's name, shared with each call's scope and result.
    name: SmolStr,
    tool: RegisteredTool,
    policy: Policy,
    /// The tool's own state (key `tool`).
    own: Arc<KeyState>,
    /// Its MCP server's, shared with the server's other tools (key `server`).
    server: Option<Arc<KeyState>>,
    /// Its states per origin or template value, when its key can give one.
    keyed: Option<KeyedStates>,
    metrics: ToolMetrics,
    /// The dice of `[tools.<name>.chaos]`, seeded once per tool.
    chaos: ChaosDice,
    /// The cluster's breakers, when there is a shared store.
    shared_breakers: Option<Arc<dyn SharedBreakers>>,
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

    /// The pipeline of one call.
    async fn pipeline(
        &self,
        mut call: ToolCall,
        call_id: SmolStr,
        started_at: Timestamp,
    ) -> CallResult {
        let clock = Instant::now();
        let found = self.inner.entries.get(&call.tool);
        let tool_name = found.map_or_else(|| SmolStr::from(call.tool.as_str()), |e| e.name.clone());
        let scope = Arc::new(ends::scope_of(&mut call, call_id, tool_name));
        let Some(entry) = found else {
            return self.unknown_tool(call, &scope, started_at, clock).await;
        };
        let observer = Observer {
            metrics: &entry.metrics,
            call_id: &scope.call_id,
            sink: call.events.as_ref(),
        };
        let _in_flight = entry.metrics.in_flight();

        // The dependency first (a call's own layer may not change the key):
        // an origin's policy layer is the base the call's layer goes over.
        let keyed = entry.dependency(&call.args);
        let dep = keyed.as_deref().unwrap_or(&entry.own);
        let base = dep.policy.as_deref().unwrap_or(&entry.policy);
        let (outcome, slow_warn_ms, max_tokens) = match policy_for(base, call.policy.as_ref()) {
            Err(e) => (
                Outcome::failed(
                    ToolError::invalid_arguments(format!("policy: {}: {}", e.key, e.message))
                        .with_code("invalid_policy")
                        .at(e.pointer()),
                ),
                base.slow_warn_ms,
                None,
            ),
            Ok(policy) => {
                let this = Call {
                    entry,
                    dep,
                    args: &call.args,
                    policy: &policy,
                    scope: &scope,
                    observer: &observer,
                    started: clock,
                    safe_to_repeat: policy
                        .idempotent
                        .unwrap_or_else(|| entry.tool.tool.safe_to_repeat(&call.args)),
                    request: &call,
                    approved: false,
                };
                (
                    self.primary(&this).await,
                    policy.slow_warn_ms,
                    policy.max_result_tokens,
                )
            }
        };
        let max_tokens = max_tokens.or(call.default_max_result_tokens);
        let mut ended = outcome.answered_at;
        let mut result = assemble(outcome, &scope, started_at);
        result.provenance.dependency = dep.key.clone();

        // Fallback chain (the call ends after it, not with the primary).
        if !call.fallbacks.is_empty() {
            ended = None;
            // Boxed, as every path most calls never take.
            result = Box::pin(self.fall_back(result, &call, &scope)).await;
        }

        // History, metrics, trace.
        ends::stamp_end(&mut result, clock, ended, started_at);
        let warnings = match &result.error {
            None => result_validation::warnings(&result.data, result.duration_ms, slow_warn_ms),
            Some(_) => Vec::new(),
        };
        observer.finished(&result, &warnings);
        let result = if self.inner.history.records_at_once() {
            self.record_copy(&result, call, &scope);
            result
        } else {
            self.record_lent(result, call, &scope).await
        };
        // History keeps the whole result; the caller gets what fits its
        // budget, with the handle to the rest (policy/result_budget.rs).
        match max_tokens {
            Some(max_tokens) if result.success => {
                result_budget::bound(result, u64::from(max_tokens))
            }
            _ => result,
        }
    }

    /// The call's fallback chain after a failed `result`: each link a call of
    /// its own, in the same correlation, cancellation, tenant and events.
    async fn fall_back(
        &self,
        result: CallResult,
        call: &ToolCall,
        scope: &CallScope,
    ) -> CallResult {
        fallback::run_chain(result, &call.fallbacks, |link| {
            self.boxed_call(ToolCall {
                tool: link.tool.clone(),
                args: link.args.clone(),
                correlation_id: Some(scope.correlation_id.clone()),
                cancel: scope.cancel().cloned(),
                events: call.events.clone(),
                secrets: call.secrets.clone(),
                owner: scope.owner.clone(),
                ..ToolCall::default()
            })
        })
        .await
    }

    /// Validate arguments → approval, when the policy asks for it → the
    /// cache (lookup, single-flight, store, stale-if-error) around the retry
    /// loop.
    async fn primary(&self, call: &Call<'_>) -> Outcome {
        if let Err(e) =
            call.entry
                .tool
                .input
                .check(call.args, ErrorKind::InvalidArguments, "arguments")
        {
            return Outcome::failed(e);
        }
        if !call.approved
            && let Some(reason) = call
                .policy
                .approval
                .reason(&call.entry.tool.spec().annotations)
        {
            // Boxed: a path most calls never take.
            return Box::pin(self.approved(call, reason)).await;
        }
        if !call.policy.cache.enabled() {
            return self.retry_loop(call).await;
        }
        let key = cache::key(&call.entry.tool.spec().name, call.args);
        // Boxed: the cache's state machine (single-flight, the cluster's cache)
        // would otherwise make every call's future larger, cached or not.
        Box::pin(self.inner.state.cache.through(
            &key,
            &call.policy.cache,
            call.scope.cancel(),
            self.inner.shared_cache.as_deref(),
            || self.retry_loop(call),
        ))
        .await
    }

    /// Park the call until a person decides (crate::approval), then run it
    /// with the arguments approved: the call's own, or the approver's edit
    /// once it passes the tool's schema.
    async fn approved(&self, call: &Call<'_>, reason: &'static str) -> Outcome {
        let mut shown = crate::redact::redact(call.args, &[]);
        crate::redact::scrub_values(&mut shown, &call.request.secrets);
        // A plan step's approval is the step's, not this execution's: a run
        // resumed after a crash (another replica) finds the one it left.
        let id = match (&call.request.approval_id, &call.request.step) {
            (Some(id), _) => id.clone(),
            (None, Some(step)) => approval::step_id(step),
            (None, None) => call.scope.call_id.to_string(),
        };
        let ask = approval::Ask {
            id: &id,
            tool: &call.scope.tool,
            args: shown,
            digest: approval::args_digest(call.args),
            named: call.request.approval_id.is_some(),
            owner: &call.scope.owner,
            correlation_id: &call.scope.correlation_id,
            reason,
            timeout: Duration::from_millis(call.policy.approval_timeout_ms),
            sink: call.observer.sink,
        };
        let decided = approval::wait(self.inner.approvals.as_ref(), ask, call.scope.cancel()).await;
        let record = match decided {
            Ok(record) => record,
            Err(e) => return Outcome::failed(e),
        };
        if let Ok(mut note) = call.scope.approval.lock() {
            *note = Some(record.note());
        }
        // The approver's edit is validated like the call's arguments were;
        // a value it left masked (`"***"`: the approver was shown no more)
        // is the call's real one, never the mask.
        let edited = record
            .edited_args
            .map(|edit| approval::unmask_edit(edit, call.args));
        self.primary(&Call {
            args: edited.as_ref().unwrap_or(call.args),
            approved: true,
            ..*call
        })
        .await
    }

    /// The retry loop around attempts, within the call's deadline.
    async fn retry_loop(&self, call: &Call<'_>) -> Outcome {
        let deadline = Deadline::start(call.policy.deadline_ms);
        let retry = RetryLoop {
            policy: &call.policy.retry,
            hard_timeout: call.policy.attempt_timeout(&call.dep.state.latency),
            safe_to_repeat: call.safe_to_repeat,
            budget: &call.dep.state.budget,
            own_timeout: sets_own_timeout(call.request),
            shared: call
                .entry
                .shared_budget
                .as_deref()
                .map(|budget| (budget, &*call.dep.name)),
            deadline,
            started: call.started,
            cancel: call.scope.cancel(),
            observer: call.observer,
            rng: &self.inner.rng,
        };
        let done = retry
            .run(|n, limit| attempt(call, deadline, n, limit))
            .await;
        let cached = call.policy.cache.enabled();
        let provenance = match &done.result {
            Ok(data) => Provenance {
                source: Source::Tool,
                // The cache keeps the time with the data; otherwise the
                // pipeline sets it from the call's end (one clock read fewer).
                fetched_at: cached.then(Timestamp::now),
                cache_hit: false,
                response_digest: Some(ResponseDigest::of(data)),
                stale: false,
                chaos: Vec::new(),
                dependency: None,
            },
            Err(_) => Provenance::none(),
        };
        Outcome {
            result: done.result,
            attempts: done.attempts,
            reasons: done.reasons,
            delays_ms: done.delays_ms,
            provenance,
            // A cached outcome may be shared by calls that started later:
            // each of those reads its own end.
            answered_at: done.answered_at.filter(|_| !cached),
        }
    }
}

/// One attempt (number `n`, at most `limit` long): circuit breaker → rate limit
/// and bulkhead → the tool under its hard timeout (soft timeout event, hedging) →
/// result validation. The breaker hears how it went.
async fn attempt(call: &Call<'_>, deadline: Deadline, n: u32, limit: Duration) -> Attempt {
    let Call {
        entry,
        dep,
        args,
        policy,
        scope,
        observer,
        safe_to_repeat,
        ..
    } = *call;
    let breakers = Breakers {
        local: &dep.state.breaker,
        shared: call.cluster(),
    };
    let (permit, reserved) =
        match breaker::admit(breakers, &policy.breaker, dep.limits.rate_per_sec()).await {
            Ok(admitted) => admitted,
            Err(e) => return Attempt::Refused(e),
        };
    let slot = match dep.limits.acquire(scope.cancel(), deadline, reserved).await {
        Ok(slot) => slot,
        Err(e) => return Attempt::Refused(e),
    };
    observer.attempt_started(n);
    // A first attempt that nothing held up (no wait for a slot, the rate
    // limit, the cluster or a cached call's leader) starts when the call did:
    // one clock read fewer. Its timeout and latency then include the argument
    // check, which is microseconds.
    let began =
        if n == 1 && !slot.waited() && entry.shared_breakers.is_none() && !policy.cache.enabled() {
            call.started
        } else {
            Instant::now()
        };
    // What the tool is told of its time: the attempt's end.
    let ends = began + limit;
    let answer = async {
        if policy.chaos.enabled() {
            Box::pin(chaos::inject(&policy.chaos, &entry.chaos, n, |note| {
                if let Ok(mut notes) = scope.chaos.lock() {
                    notes.push(note);
                }
            }))
            .await?;
        }
        match policy.hedge_after(&dep.state.latency) {
            Some(after) if safe_to_repeat => {
                Box::pin(hedge::race(
                    after,
                    policy.hedge.max_hedges,
                    |_| run_tool(&entry.tool, args, scope, n, ends),
                    |k| observer.hedged(n, k),
                ))
                .await
            }
            _ => run_tool(&entry.tool, args, scope, n, ends).await,
        }
    };
    let soft = (policy.soft_timeout_ms > 0).then(|| Duration::from_millis(policy.soft_timeout_ms));
    let timed = timeout::within(
        began,
        limit,
        soft,
        |elapsed| observer.slow(n, elapsed),
        answer,
    );
    let result = tokio::select! {
        biased;
        r = timed => r,
        _ = cancelled(scope.cancel()) => Err(ToolError::cancelled()),
    };
    // What `"auto"` timeouts and hedges are chosen from (policy/adaptive.rs): the
    // time to an answer, and a timeout as a lower bound of it.
    let ended = Instant::now();
    if result
        .as_ref()
        .map_or_else(|e| e.kind == ErrorKind::Timeout, |_| true)
    {
        let took = ended.saturating_duration_since(began);
        dep.state.latency.record_at(took, ended);
        if !std::ptr::eq(dep, &*entry.own) {
            // The tool's own sketch hears every key's answers too: `axon
            // stats` and a plan's step weights read the tool's latency.
            entry.own.state.latency.record_at(took, ended);
        }
    }
    let result =
        result.and_then(|data| result_validation::check_output(data, entry.tool.output.as_deref()));
    // A timeout the caller chose itself (`timeout_ms` in its own policy)
    // says nothing about the dependency: the breaker, which every caller
    // of the dependency shares, does not hear it (issue 59).
    if sets_own_timeout(call.request)
        && result.as_ref().is_err_and(|e| e.kind == ErrorKind::Timeout)
    {
        drop(permit);
    } else {
        permit.record(breakers, &result, &policy.breaker).await;
    }
    Attempt::Ran(result, ended)
}

/// Whether the caller set the attempt's timeout itself (`timeout_ms` in the
/// call's own policy): its timeouts say nothing about the dependency.
fn sets_own_timeout(request: &ToolCall) -> bool {
    request
        .policy
        .as_ref()
        .is_some_and(|p| p.get("timeout_ms").is_some())
}

/// Call the tool itself, turning a panic into an `internal` error.
async fn run_tool(
    tool: &RegisteredTool,
    args: &Value,
    scope: &Arc<CallScope>,
    n: u32,
    ends: Instant,
) -> Result<Value, ToolError> {
    let ctx = ToolContext::new(scope.clone(), n, Some(ends));
    match AssertUnwindSafe(tool.tool.call(args, ctx))
        .catch_unwind()
        .await
    {
        Ok(result) => result,
        Err(panic) => {
            let what = panic
                .downcast_ref::<&str>()
                .map(|s| s.to_string())
                .or_else(|| panic.downcast_ref::<String>().cloned())
                .unwrap_or_else(|| "unknown panic".into());
            Err(ToolError::internal(format!("tool panicked: {what}")))
        }
    }
}

fn assemble(outcome: Outcome, scope: &CallScope, started_at: Timestamp) -> CallResult {
    let mut provenance = outcome.provenance;
    if let Ok(mut notes) = scope.chaos.lock() {
        provenance.chaos = std::mem::take(&mut *notes);
    }
    let (success, data, error) = match outcome.result {
        Ok(data) => (true, data, None),
        Err(e) => (false, Value::Null, Some(CallError::from(e))),
    };
    CallResult {
        call_id: scope.call_id.clone(),
        correlation_id: scope.correlation_id.clone(),
        tool: scope.tool.clone(),
        success,
        data,
        error,
        attempts: outcome.attempts,
        retry_reasons: outcome.reasons,
        retry_delays_ms: outcome.delays_ms,
        started_at,
        duration_ms: 0,
        fallback: None,
        provenance,
        cut: None,
        approval: scope
            .approval
            .lock()
            .ok()
            .and_then(|mut note| note.take())
            .map(Box::new),
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

/// A call's policy: `base` (the tool's, or its origin's) with the call's own
/// layer over it.
fn policy_for<'p>(
    base: &'p Policy,
    overrides: Option<&Value>,
) -> Result<std::borrow::Cow<'p, Policy>, PolicyError> {
    match overrides {
        None => Ok(std::borrow::Cow::Borrowed(base)),
        Some(layer) => {
            Policy::check_call_layer(layer)?;
            base.with_layers([layer]).map(std::borrow::Cow::Owned)
        }
    }
}

#[cfg(test)]
mod tests {
    use std::sync::OnceLock;

    use super::*;

    /// Every call's future is built and moved whole, so its size is a cost on
    /// every call (docs/benchmarks.md): cold paths (cache, hedging, soft
    /// timeout, waits for a limit, backoff, fallback) are boxed, and history
    /// entries are built outside the future. This keeps it that way.
    #[test]
    fn a_calls_future_stays_small() {
        let mut registry = ToolRegistry::new();
        registry
            .register(crate::tool_fn(
                "echo",
                "Echoes",
                |a: Value, _ctx| async move { Ok::<_, ToolError>(a) },
            ))
            .unwrap();
        let ex = Executor::builder(registry).build().unwrap();
        let call = ex.call(ToolCall::new("echo", Value::Null));
        assert!(
            std::mem::size_of_val(&call) <= 4096,
            "a call's future is {} bytes",
            std::mem::size_of_val(&call)
        );
        drop(call);
        let entry = &ex.inner.entries["echo"];
        let observer = Observer {
            metrics: &entry.metrics,
            call_id: "c",
            sink: None,
        };
        let scope = Arc::new(CallScope {
            call_id: SmolStr::new_static("c"),
            correlation_id: SmolStr::new_static("c"),
            cancel: OnceLock::new(),
            secret_pointers: Mutex::new(Vec::new()),
            output_secrets: Mutex::new(Vec::new()),
            secrets: Vec::new(),
            chaos: Mutex::new(Vec::new()),
            approval: Mutex::new(None),
            tool: entry.name.clone(),
            events: None,
            owner: crate::Owner::Process,
        });
        let args = Value::Null;
        let request = ToolCall::new("echo", Value::Null);
        let c = Call {
            entry,
            dep: &entry.own,
            args: &args,
            policy: &entry.policy,
            scope: &scope,
            observer: &observer,
            started: Instant::now(),
            safe_to_repeat: true,
            request: &request,
            approved: false,
        };
        let one = attempt(&c, Deadline::start(0), 1, Duration::from_secs(1));
        assert!(
            std::mem::size_of_val(&one) <= 1024,
            "an attempt's future is {} bytes",
            std::mem::size_of_val(&one)
        );
    }
}
