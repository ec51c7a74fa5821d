//! The order of the policies, written once: [`Executor::pipeline`] and the
//! functions it calls, top to bottom (validate arguments → approval → cache →
//! retry loop → [breaker → limits → the tool under its timeouts → result
//! validation] → fallback chain → history, metrics, trace → result budget).
//! Each policy's own work is in its folder or file under `policy/`; this file
//! only says when it runs.

use std::panic::AssertUnwindSafe;
use std::sync::Arc;
use std::time::Duration;

use futures::FutureExt;
use serde_json::Value;
use smol_str::SmolStr;
use tokio::time::Instant;

use super::{Call, Executor, ends};
use crate::approval;
use crate::call::ToolCall;
use crate::error::{ErrorKind, ToolError};
use crate::events::Observer;
use crate::outcome::Outcome;
use crate::policy::breaker::{self, Breakers};
use crate::policy::cache;
use crate::policy::chaos;
use crate::policy::retry::{Attempt, RetryLoop};
use crate::policy::timeout::{self, Deadline};
use crate::policy::{Policy, PolicyError, fallback, hedge, result_budget, result_validation};
use crate::registry::RegisteredTool;
use crate::result::{CallResult, Provenance, ResponseDigest, Source, Timestamp};
use crate::tool::{CallScope, ToolContext, cancelled};

impl Executor {
    /// The pipeline of one call.
    pub(super) async fn pipeline(
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
        let mut result = ends::assemble(outcome, &scope, started_at);
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
    let (admission, reserved) =
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
        drop(admission);
    } else {
        admission.record(breakers, &result, &policy.breaker).await;
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
    use std::sync::{Mutex, OnceLock};

    use crate::registry::ToolRegistry;

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
