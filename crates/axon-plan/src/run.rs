//! Running a plan. A step starts the moment its dependencies have succeeded — not
//! in waves (a batch of ready steps, awaited together) — within `max_parallel` and each tool's
//! `max_concurrent`; when more steps are ready than there are slots, the one with
//! the longest remaining path goes first: by time when every step has a duration
//! (its `expected_ms`, else its tool's median latency as the executor observed
//! it), by step count otherwise. A failed step skips its dependents and independent
//! branches go on; with `fail_fast` the run cancels what is running and skips the
//! rest. Every finished step is checkpointed; a run id that was seen before
//! resumes, reusing its finished steps.

use std::cmp::Reverse;
use std::collections::{BinaryHeap, HashMap, VecDeque};
use std::sync::Arc;

use axon_core::redact::REDACTED;
use axon_core::{
    CallError, CallEvent, CallResult, CancellationToken, ErrorKind, Executor, FallbackCall,
    HistoryEntry, Provenance, SmolStr, StepMark, Timestamp, ToolCall,
};
use futures::future::BoxFuture;
use futures::stream::{FuturesUnordered, StreamExt};
use serde::{Deserialize, Serialize};
use serde_json::Value;
use tokio::sync::mpsc::UnboundedSender;
use tokio::time::Instant;
use tracing::Instrument;

use crate::plan::Plan;
use crate::secrets::{self, Secrets};
use crate::store::{IdempotencyBegin, InMemoryRunStore, RunStore};
use crate::template::{Source, resolve, templates_in};
use crate::validate::{Graph, PlanErrors, Problem, validate};

/// How a step ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum StepStatus {
    /// Its call succeeded (perhaps through a fallback).
    Succeeded,
    /// Its call failed.
    Failed,
    /// It never ran: a dependency did not succeed, or fail_fast stopped the run.
    Skipped,
    /// It was running, or about to, when the run was cancelled.
    Cancelled,
}

/// How a run ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum RunStatus {
    /// Every step succeeded.
    Succeeded,
    /// At least one step did not succeed.
    Failed,
    /// The run was cancelled from outside.
    Cancelled,
}

impl RunStatus {
    /// The snake_case name (metric label, JSON).
    pub fn as_str(self) -> &'static str {
        match self {
            RunStatus::Succeeded => "succeeded",
            RunStatus::Failed => "failed",
            RunStatus::Cancelled => "cancelled",
        }
    }
}

/// One step in a plan result.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct StepOutcome {
    /// Position in the plan.
    pub index: usize,
    /// Its id, if it has one.
    pub id: Option<String>,
    /// Its tool.
    pub tool: String,
    /// How it ended.
    pub status: StepStatus,
    /// Its call result; null when it never ran.
    pub result: Option<CallResult>,
    /// Why it was skipped, cancelled or failed.
    pub reason: Option<String>,
}

impl StepOutcome {
    /// The outcome of a step whose call ended with `result`: succeeded, failed,
    /// or cancelled (which is not checkpointed: the step runs again on resume).
    pub fn of_call(index: usize, id: Option<String>, tool: String, result: CallResult) -> Self {
        let (status, reason) = match &result.error {
            None => (StepStatus::Succeeded, None),
            Some(e) if e.kind == ErrorKind::Cancelled => {
                (StepStatus::Cancelled, Some(e.message.clone()))
            }
            Some(e) => (
                StepStatus::Failed,
                Some(format!("{}: {}", e.kind, e.message)),
            ),
        };
        StepOutcome {
            index,
            id,
            tool,
            status,
            result: Some(result),
            reason,
        }
    }

    /// The checkpoint of a step, from its call's history entry as stored (secrets
    /// masked). A store that keeps history and runs together writes it in the same
    /// transaction as the entry; `None` for calls that are not a plan step's.
    pub fn checkpoint_of(entry: &HistoryEntry) -> Option<(String, StepOutcome)> {
        let mark = entry.step.as_ref()?;
        let outcome = StepOutcome::of_call(
            mark.index,
            mark.id.clone(),
            entry.result.tool.to_string(),
            entry.result.clone(),
        );
        (outcome.status != StepStatus::Cancelled).then(|| (mark.run_id.clone(), outcome))
    }
}

/// The result of a run (the plan result JSON of docs/design.md, "Plans").
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct PlanResult {
    /// The run.
    pub run_id: String,
    /// The correlation id of every call of the run.
    pub correlation_id: String,
    /// How it ended.
    pub status: RunStatus,
    /// Wall time of this execution of the run, ms.
    pub duration_ms: u64,
    /// Every step, in plan order.
    pub steps: Vec<StepOutcome>,
}

impl PlanResult {
    /// Whether every step succeeded (the `success` of a plan result).
    pub fn success(&self) -> bool {
        self.status == RunStatus::Succeeded
    }
}

/// Progress of a run, for any front end (terminal, SSE, MCP progress).
#[derive(Clone, Debug, PartialEq, Serialize)]
#[serde(tag = "event", rename_all = "snake_case")]
pub enum PlanEvent {
    /// The run started; `resumed` steps were reused from checkpoints.
    RunStarted {
        /// The run.
        run_id: String,
        /// Steps in the plan.
        steps: usize,
        /// Steps reused from an earlier execution.
        resumed: usize,
    },
    /// A step's call started.
    StepStarted {
        /// The run.
        run_id: String,
        /// The step.
        index: usize,
        /// Its id.
        id: Option<String>,
        /// Its tool.
        tool: String,
    },
    /// An attempt of a step failed and will be retried.
    StepRetrying {
        /// The run.
        run_id: String,
        /// The step.
        index: usize,
        /// The attempt that failed.
        attempt: u32,
        /// Why.
        error: CallError,
        /// Backoff before the next attempt, ms.
        delay_ms: u64,
    },
    /// A step's tool reported progress (an MCP server's progress notifications).
    StepProgress {
        /// The run.
        run_id: String,
        /// The step.
        index: usize,
        /// How far it has got, in the tool's units.
        progress: f64,
        /// The end, when known.
        #[serde(skip_serializing_if = "Option::is_none")]
        total: Option<f64>,
        /// What it is doing.
        #[serde(skip_serializing_if = "Option::is_none")]
        message: Option<String>,
    },
    /// A step ended (including skipped and resumed ones).
    StepFinished {
        /// The run.
        run_id: String,
        /// The outcome.
        step: Box<StepOutcome>,
    },
    /// The run ended.
    RunFinished {
        /// The run.
        run_id: String,
        /// How.
        status: RunStatus,
        /// How long, ms.
        duration_ms: u64,
    },
}

/// How to run: under which id (an id seen before resumes), a cancellation token,
/// and where to send progress events.
#[derive(Clone, Default)]
pub struct RunOptions {
    /// The run id; a new ULID when absent.
    pub run_id: Option<String>,
    /// The correlation id of the calls; the run id when absent.
    pub correlation_id: Option<String>,
    /// Cancels the run from outside.
    pub cancel: Option<CancellationToken>,
    /// Receives progress events.
    pub events: Option<UnboundedSender<PlanEvent>>,
    /// Stream each step's data out instead of holding it to the end: once a
    /// step is checkpointed and no step still to run reads it, its `data`
    /// leaves the run (it went out in its `step_finished` event and is in its
    /// checkpoint). The returned result keeps every step's status, attempts,
    /// timings, errors and provenance (`response_digest` names the data), with
    /// `data: null`. For callers that watch events or read the stored run, so
    /// that a run of many large results holds only those in flight and still read.
    pub stream_results: bool,
    /// Who runs it: every step's call is made as this tenant
    /// (`ToolCall::tenant`), so a run sees only its caller's browser sessions.
    pub tenant: Option<SmolStr>,
}

/// Runs plans on an executor, checkpointing to a run store.
#[derive(Clone)]
pub struct PlanRunner {
    executor: Executor,
    store: Arc<dyn RunStore>,
    secrets: Arc<Secrets>,
}

impl PlanRunner {
    /// A runner that keeps runs in memory.
    pub fn new(executor: Executor) -> Self {
        Self::with_store(executor, Arc::new(InMemoryRunStore::new()))
    }

    /// A runner that keeps runs in `store`.
    pub fn with_store(executor: Executor, store: Arc<dyn RunStore>) -> Self {
        PlanRunner {
            executor,
            store,
            secrets: Arc::new(Secrets::new()),
        }
    }

    /// The secrets plans may reference as `${secret.NAME}`.
    pub fn with_secrets(mut self, secrets: Secrets) -> Self {
        self.secrets = Arc::new(secrets);
        self
    }

    /// The executor it calls through.
    pub fn executor(&self) -> &Executor {
        &self.executor
    }

    /// The run store.
    pub fn store(&self) -> &Arc<dyn RunStore> {
        &self.store
    }

    /// Validate without running: the plan against the tools, and every
    /// `${secret.NAME}` against the configured secrets.
    pub fn validate(&self, plan: &Plan) -> Result<Graph, PlanErrors> {
        let graph = validate(plan, self.executor.registry());
        let mut problems = match &graph {
            Ok(_) => Vec::new(),
            Err(e) => e.0.clone(),
        };
        for (i, step) in plan.steps.iter().enumerate() {
            let fields = std::iter::once((format!("steps[{i}].params"), &step.params)).chain(
                step.fallbacks
                    .iter()
                    .enumerate()
                    .map(|(k, f)| (format!("steps[{i}].fallbacks[{k}].params"), &f.params)),
            );
            for (field, params) in fields {
                for name in secret_names(params) {
                    if !self.secrets.contains(&name) {
                        problems.push(Problem {
                            step: Some(i),
                            field: field.clone(),
                            message: format!(
                                "template ${{secret.{name}}}: no secret named {name:?} is configured ([secrets] {name} = {{ env = \"VAR\" }})"
                            ),
                        });
                    }
                }
            }
        }
        match graph {
            Ok(graph) if problems.is_empty() => Ok(graph),
            _ => Err(PlanErrors(problems)),
        }
    }

    /// Validate, then run. Only validation fails the call (and a run id that
    /// cannot be taken: another process runs it, or it ran another plan);
    /// everything that happens while running is in the result.
    pub async fn run(&self, plan: &Plan, options: RunOptions) -> Result<PlanResult, PlanErrors> {
        let graph = self.validate(plan)?;
        let run_id = options
            .run_id
            .clone()
            .unwrap_or_else(|| ulid::Ulid::new().to_string());
        let refuse = |message: String| {
            PlanErrors(vec![Problem {
                step: None,
                field: "run_id".into(),
                message,
            }])
        };
        let claim = match self.store.claim(&run_id).await {
            Ok(claim) => claim,
            Err(e) => return Err(refuse(e.message().to_string())),
        };
        let name = plan.name.as_deref().unwrap_or("");
        let span = tracing::info_span!(
            "plan_run",
            otel.name = %format_args!("run_plan {name}"),
            run_id = %run_id,
            plan = name,
            axon.run.status = tracing::field::Empty,
            otel.status_code = tracing::field::Empty,
            otel.status_description = tracing::field::Empty,
        );
        let run = Run::new(self, plan, &graph, run_id, options);
        let result = async {
            let mut run = run;
            run.resume().await.map_err(refuse)?;
            Ok(run.execute().await)
        }
        .instrument(span.clone())
        .await;
        if let Ok(done) = &result {
            span.record("axon.run.status", done.status.as_str());
            if done.status != RunStatus::Succeeded {
                span.record("otel.status_code", "ERROR");
                span.record("otel.status_description", done.status.as_str());
            }
        }
        claim.release().await;
        result
    }
}

/// The failed result of a step whose tool was not called (a template that
/// does not resolve, an idempotency key that refuses it).
fn uncalled(
    tool: &str,
    correlation_id: SmolStr,
    kind: ErrorKind,
    code: &str,
    message: String,
) -> CallResult {
    CallResult {
        call_id: ulid::Ulid::new().to_string().into(),
        correlation_id,
        tool: tool.into(),
        success: false,
        data: Value::Null,
        error: Some(CallError {
            kind,
            code: Some(code.into()),
            message,
            retryable: false,
            retry_after_ms: None,
            pointer: None,
        }),
        attempts: 0,
        retry_reasons: Vec::new(),
        retry_delays_ms: Vec::new(),
        started_at: Timestamp::now(),
        duration_ms: 0,
        fallback: None,
        provenance: Provenance::none(),
        cut: None,
        approval: None,
    }
}

/// A step's call under its `idempotency_key`: the first call with the key
/// runs, and its answer as history stores it (secrets masked) is kept; a later
/// one with the same tool and arguments gets that answer without calling (no
/// history row: nothing was called). A key still held by a call in flight
/// (here, or on a replica that died: for ten minutes) or used for another call
/// fails the step without calling; so does a store that cannot be asked. A
/// failed call gives the key up, so that a resumed run calls again.
async fn keyed_call(
    executor: &Executor,
    store: &dyn RunStore,
    key: &str,
    call: ToolCall,
    recorded: &Recorded,
) -> CallResult {
    let fingerprint = axon_core::canonical::sha256_hex(
        &serde_json::json!({"tool": call.tool, "args": call.args}),
    );
    let refuse = |code: &str, message: String| {
        uncalled(
            &call.tool,
            call.correlation_id.clone().unwrap_or_default(),
            ErrorKind::Failed,
            code,
            message,
        )
    };
    let shown = key.strip_prefix("step:").unwrap_or(key);
    match store.idempotency_begin(key, &fingerprint).await {
        Err(e) => refuse(
            "store",
            format!("idempotency_key {shown:?}: the store cannot be asked: {e}"),
        ),
        Ok(IdempotencyBegin::InFlight) => refuse(
            "idempotency_in_flight",
            format!(
                "idempotency_key {shown:?} is held by a call still running (or one whose process died less than ten minutes ago)"
            ),
        ),
        Ok(IdempotencyBegin::Mismatch) => refuse(
            "idempotency_mismatch",
            format!("idempotency_key {shown:?} was used for another tool or other arguments"),
        ),
        Ok(IdempotencyBegin::Replay(json)) => match serde_json::from_str::<CallResult>(&json) {
            Ok(first) => first,
            Err(e) => refuse(
                "store",
                format!("idempotency_key {shown:?}: its answer cannot be read: {e}"),
            ),
        },
        Ok(IdempotencyBegin::New) => {
            let result = executor.call(call).await;
            let stored = recorded
                .lock()
                .ok()
                .and_then(|e| e.as_ref().map(|e| e.result.clone()));
            let kept = match (result.success, stored) {
                (true, Some(stored)) => match serde_json::to_string(&stored) {
                    Ok(json) => store.idempotency_finish(key, &json).await,
                    Err(e) => Err(axon_core::StoreError::corrupt("a result as a record", e)),
                },
                _ => store.idempotency_abandon(key).await,
            };
            if let Err(e) = kept {
                tracing::warn!(error = %e, key = shown, "could not keep the step's idempotency key");
            }
            result
        }
    }
}

/// The names of the `${secret.…}` templates in some parameters.
fn secret_names(params: &Value) -> Vec<String> {
    templates_in(params)
        .into_iter()
        .flatten()
        .flat_map(|t| {
            t.references()
                .filter_map(|r| match &r.source {
                    Source::Secret(name) => Some(name.clone()),
                    _ => None,
                })
                .collect::<Vec<_>>()
        })
        .collect()
}

/// The state of one execution of a run.
struct Run<'a> {
    runner: &'a PlanRunner,
    plan: &'a Plan,
    graph: &'a Graph,
    run_id: String,
    /// Shared by every step's call (and its result, and history entry).
    correlation_id: SmolStr,
    /// Who runs it ([`RunOptions::tenant`]).
    tenant: Option<SmolStr>,
    cancel: CancellationToken,
    stop: CancellationToken,
    events: Option<UnboundedSender<PlanEvent>>,
    outcomes: Vec<Option<StepOutcome>>,
    /// What is stored of a finished step (secrets masked: checkpoints, events,
    /// the stored run result) where it differs from `outcomes`: only those
    /// steps are here, so a large run holds each result once.
    stored: HashMap<usize, StepOutcome>,
    /// Steps whose checkpoint the store took: the stored run result leaves them
    /// out, and the store fills them in from their checkpoints.
    checkpointed: Vec<bool>,
    /// With `stream_results`: for each step, how many of the steps that wait
    /// for it have yet to settle; at 0 (and checkpointed) its data is let go.
    readers: Option<Vec<usize>>,
    /// Steps reused from checkpoints: their data is the stored, masked form.
    resumed: Vec<bool>,
    /// The plan document as stored (literal secrets masked) where it differs
    /// from `plan`; `None` while the two are the same, so a large plan is not
    /// held twice.
    stored_plan: Option<Plan>,
    /// Step ids to indices, for `${steps.<id>…}` templates.
    ids: HashMap<&'a str, usize>,
    /// Every secret value this run has resolved so far: a later step may copy
    /// one inside a longer text (`"Bearer ${secret.KEY}"` read back from an
    /// earlier step's data), so every call of the run is scrubbed of all of
    /// them, not only of those its own templates name.
    secrets_seen: std::sync::Mutex<Vec<String>>,
}

impl<'a> Run<'a> {
    fn new(
        runner: &'a PlanRunner,
        plan: &'a Plan,
        graph: &'a Graph,
        run_id: String,
        options: RunOptions,
    ) -> Self {
        let cancel = options.cancel.unwrap_or_default();
        Run {
            runner,
            plan,
            graph,
            correlation_id: options
                .correlation_id
                .map_or_else(|| SmolStr::from(run_id.as_str()), SmolStr::from),
            run_id,
            tenant: options.tenant,
            stop: cancel.child_token(),
            cancel,
            events: options.events,
            outcomes: vec![None; plan.steps.len()],
            stored: HashMap::new(),
            checkpointed: vec![false; plan.steps.len()],
            readers: options
                .stream_results
                .then(|| graph.dependents.iter().map(Vec::len).collect()),
            resumed: vec![false; plan.steps.len()],
            stored_plan: secrets::masked_plan(plan),
            ids: plan
                .steps
                .iter()
                .enumerate()
                .filter_map(|(i, s)| s.id.as_deref().map(|id| (id, i)))
                .collect(),
            secrets_seen: std::sync::Mutex::new(Vec::new()),
        }
    }

    fn emit(&self, event: PlanEvent) {
        if let Some(tx) = &self.events {
            let _ = tx.send(event);
        }
    }

    async fn execute(mut self) -> PlanResult {
        let clock = Instant::now();
        self.begin().await;
        let fail_fast_reason = self.run_steps().await;
        self.mark_never_ran(fail_fast_reason);
        self.finish(clock).await
    }

    /// Record the run's start and say so.
    async fn begin(&mut self) {
        let resumed = self.resumed.iter().filter(|r| **r).count();
        if let Err(e) = self
            .runner
            .store
            .begin(&self.run_id, self.stored_plan(), self.tenant.as_deref())
            .await
        {
            tracing::warn!(error = %e, "could not record the run start");
        }
        self.emit(PlanEvent::RunStarted {
            run_id: self.run_id.clone(),
            steps: self.plan.steps.len(),
            resumed,
        });
    }

    /// Start each step as soon as its dependencies have succeeded, until nothing
    /// runs and nothing more may start. Returns why the rest was skipped when
    /// `fail_fast` stopped the run.
    async fn run_steps(&mut self) -> Option<String> {
        let mut schedule =
            Schedule::new(self.plan, self.graph, &self.outcomes, &self.runner.executor);
        let mut fail_fast_reason = None;
        loop {
            // Propagate what finished: dependents become ready, or are skipped.
            while let Some(i) = schedule.settled.pop_front() {
                self.settle(i, &mut schedule);
            }
            if !self.stop.is_cancelled() {
                self.start_ready(&mut schedule).await;
                if !schedule.settled.is_empty() {
                    continue;
                }
            }
            if schedule.running.is_empty() {
                break;
            }
            let (i, result, entry) = tokio::select! {
                biased;
                Some(done) = schedule.running.next() => done,
                _ = self.cancel.cancelled(), if !self.stop.is_cancelled() => {
                    self.stop.cancel();
                    continue;
                }
            };
            if let Some(busy) = schedule.per_tool.get_mut(self.plan.steps[i].tool.as_str()) {
                *busy = busy.saturating_sub(1);
            }
            let failed = !result.success;
            self.finish_step(i, result, entry).await;
            schedule.settled.push_back(i);
            if failed && self.plan.fail_fast && !self.stop.is_cancelled() {
                fail_fast_reason = Some(format!("fail_fast: {} failed", self.plan.label(i)));
                self.stop.cancel();
            }
        }
        fail_fast_reason
    }

    /// Start what may start, longest remaining path first, within `max_parallel`
    /// and each tool's `max_concurrent`. A step whose templates do not resolve
    /// fails here without a call.
    async fn start_ready(&mut self, schedule: &mut Schedule<'a>) {
        let executor = &self.runner.executor;
        let mut deferred = Vec::new();
        while schedule.running.len() < self.plan.max_parallel {
            let Some((p, Reverse(i))) = schedule.ready.pop() else {
                break;
            };
            let tool = self.plan.steps[i].tool.as_str();
            let cap = executor.policy(tool).map_or(0, |p| p.limits.max_concurrent);
            let busy = schedule.per_tool.entry(tool).or_insert(0);
            if cap > 0 && *busy >= cap {
                deferred.push((p, Reverse(i)));
                continue;
            }
            let recorded: Recorded = Arc::default();
            match self.prepare(i, &recorded) {
                Ok(call) => {
                    *busy += 1;
                    self.emit(PlanEvent::StepStarted {
                        run_id: self.run_id.clone(),
                        index: i,
                        id: self.plan.steps[i].id.clone(),
                        tool: tool.to_string(),
                    });
                    let step = &self.plan.steps[i];
                    let keyed = step
                        .idempotency_key
                        .as_ref()
                        .map(|key| (format!("step:{key}"), self.runner.store.clone()));
                    let span = tracing::debug_span!(
                        "step",
                        otel.name = %format_args!("step {}", self.plan.label(i)),
                        axon.step.id = step.id.as_deref(),
                        axon.step.index = i as i64,
                        gen_ai.tool.name = tool,
                        error.type = tracing::field::Empty,
                        otel.status_code = tracing::field::Empty,
                        otel.status_description = tracing::field::Empty,
                    );
                    schedule.running.push(Box::pin(
                        async move {
                            let result = match keyed {
                                None => executor.call(call).await,
                                Some((key, store)) => {
                                    keyed_call(executor, &*store, &key, call, &recorded).await
                                }
                            };
                            if let Some(e) = &result.error {
                                axon_core::trace::record_error(
                                    &tracing::Span::current(),
                                    e.kind.as_str(),
                                    e.code.as_deref(),
                                );
                            }
                            let entry = recorded.lock().ok().and_then(|mut e| e.take());
                            (i, result, entry)
                        }
                        .instrument(span),
                    ));
                }
                Err(result) => {
                    self.finish_step(i, *result, None).await;
                    schedule.settled.push_back(i);
                }
            }
        }
        schedule.ready.extend(deferred);
    }

    /// Whatever never ran: cancelled with the run, else skipped (by fail-fast).
    fn mark_never_ran(&mut self, fail_fast_reason: Option<String>) {
        for i in 0..self.plan.steps.len() {
            if self.outcomes[i].is_some() {
                continue;
            }
            let (status, reason) = if self.cancel.is_cancelled() {
                (StepStatus::Cancelled, "the run was cancelled".to_string())
            } else {
                (
                    StepStatus::Skipped,
                    fail_fast_reason.clone().unwrap_or_else(|| "not run".into()),
                )
            };
            let outcome = self.outcome(i, status, None, Some(reason));
            self.emit_finished(&outcome);
            self.outcomes[i] = Some(outcome);
        }
    }

    /// The run's result: stored, counted, announced and returned.
    async fn finish(mut self, clock: Instant) -> PlanResult {
        // The stored result holds only the steps without a checkpoint (skipped,
        // cancelled, or whose checkpoint could not be written): the store fills
        // in the rest from the checkpoints, so a large run's results are not
        // copied, serialised and stored a second time at its end.
        let unsaved: Vec<StepOutcome> = (0..self.plan.steps.len())
            .filter(|&i| !self.checkpointed[i])
            .filter_map(|i| self.stored_form(i).cloned())
            .collect();
        self.stored.clear();
        let steps: Vec<StepOutcome> = std::mem::take(&mut self.outcomes)
            .into_iter()
            .flatten()
            .collect();
        let status = if self.cancel.is_cancelled() {
            RunStatus::Cancelled
        } else if steps.iter().all(|s| s.status == StepStatus::Succeeded) {
            RunStatus::Succeeded
        } else {
            RunStatus::Failed
        };
        let result = PlanResult {
            run_id: self.run_id.clone(),
            correlation_id: self.correlation_id.to_string(),
            status,
            duration_ms: clock.elapsed().as_millis() as u64,
            steps,
        };
        metrics::counter!("plan_runs_total", "status" => status.as_str()).increment(1);
        let stored = PlanResult {
            run_id: result.run_id.clone(),
            correlation_id: result.correlation_id.clone(),
            status,
            duration_ms: result.duration_ms,
            steps: unsaved,
        };
        if let Err(e) = self.runner.store.finish(&self.run_id, &stored).await {
            tracing::warn!(error = %e, "could not record the run result");
        }
        if let Some(tx) = &self.events {
            let _ = tx.send(PlanEvent::RunFinished {
                run_id: self.run_id.clone(),
                status,
                duration_ms: result.duration_ms,
            });
        }
        result
    }

    /// Reuse the finished steps of an earlier execution of this run id, which
    /// must have run the same plan: a run id never resumes a different one.
    async fn resume(&mut self) -> Result<(), String> {
        let record = match self.runner.store.load(&self.run_id).await {
            Ok(Some(record)) => record,
            Ok(None) => return Ok(()),
            Err(e) => {
                tracing::warn!(error = %e, "could not load the run's checkpoints; starting afresh");
                return Ok(());
            }
        };
        if !same_plan(self.stored_plan(), &record.plan) {
            return Err(format!(
                "run {} was started with a different plan; a run id resumes only the plan it began with (use a new run id)",
                self.run_id
            ));
        }
        // The stored plan keeps what earlier executions masked (a password
        // typed into a field), so the document never regains it.
        self.stored_plan = Some(record.plan).filter(|stored| stored != self.plan);
        for (i, outcome) in record.steps {
            let same_step = self
                .plan
                .steps
                .get(i)
                .is_some_and(|s| s.tool == outcome.tool);
            let finished = matches!(outcome.status, StepStatus::Succeeded | StepStatus::Failed);
            if same_step && finished {
                self.outcomes[i] = Some(outcome);
                self.checkpointed[i] = true;
                self.resumed[i] = true;
            }
        }
        Ok(())
    }

    /// Step `i` settled: its dependents lose a pending dependency, or are skipped
    /// when it did not succeed.
    fn settle(&mut self, i: usize, schedule: &mut Schedule<'a>) {
        let Some(status) = self.outcomes[i].as_ref().map(|o| o.status) else {
            return;
        };
        self.release_read(i);
        for &d in &self.graph.dependents[i] {
            if self.outcomes[d].is_some() {
                continue;
            }
            if status == StepStatus::Succeeded {
                schedule.pending[d] -= 1;
                if schedule.pending[d] == 0 {
                    schedule.ready.push((schedule.priority[d], Reverse(d)));
                }
            } else {
                let word = match status {
                    StepStatus::Failed => "failed",
                    StepStatus::Cancelled => "was cancelled",
                    _ => "was skipped",
                };
                let reason = format!("dependency {} {word}", self.plan.label(i));
                let outcome = self.outcome(d, StepStatus::Skipped, None, Some(reason));
                self.emit_finished(&outcome);
                self.outcomes[d] = Some(outcome);
                schedule.settled.push_back(d);
            }
        }
    }

    /// The secret values a call of this run is scrubbed of: those its own
    /// templates resolved (remembered for later steps), those it inherited
    /// from masked fields, and every one an earlier step resolved.
    fn all_secrets(
        &self,
        resolved: impl Iterator<Item = Value>,
        inherited: Vec<String>,
    ) -> Vec<String> {
        let mut seen = self.secrets_seen.lock().unwrap_or_else(|e| e.into_inner());
        for value in resolved {
            if let Value::String(s) = value
                && !seen.contains(&s)
            {
                seen.push(s);
            }
        }
        seen.iter().cloned().chain(inherited).collect()
    }

    /// The call of step `i` with its templates resolved, or the failure to resolve
    /// them. `record` receives the call's history entry as stored.
    fn prepare(&self, i: usize, record: &Recorded) -> Result<ToolCall, Box<CallResult>> {
        let step = &self.plan.steps[i];
        let fail = |message: String| Box::new(self.template_failure(i, message));
        // Secrets are read now, as the step runs, and go nowhere but the call.
        let mut secret_values: HashMap<String, Value> = HashMap::new();
        // Values read from fields an earlier step's stored form masked (its
        // `access_token`) are secrets of this call too, whatever they are called here.
        let mut inherited: Vec<String> = Vec::new();
        let params = std::iter::once(&step.params).chain(step.fallbacks.iter().map(|f| &f.params));
        for template in params.flat_map(templates_in).flatten() {
            for r in template.references() {
                match &r.source {
                    Source::Secret(name) => {
                        if !secret_values.contains_key(name) {
                            let value = self
                                .runner
                                .secrets
                                .resolve(name)
                                .map_err(|e| fail(e.to_string()))?;
                            secret_values.insert(name.clone(), Value::String(value));
                        }
                    }
                    source => {
                        self.check_not_masked(source, r).map_err(&fail)?;
                        self.masked_values(source, r, &mut inherited);
                    }
                }
            }
        }
        let data = |source: &Source| -> Option<&Value> {
            let j = match source {
                Source::Index(n) => *n,
                Source::Id(id) => *self.ids.get(id.as_str())?,
                Source::Secret(name) => return secret_values.get(name),
            };
            self.outcomes
                .get(j)?
                .as_ref()?
                .result
                .as_ref()
                .map(|r| &r.data)
        };
        let args = resolve(&step.params, &data).map_err(|e| fail(e.to_string()))?;
        let fallbacks = step
            .fallbacks
            .iter()
            .map(|f| resolve(&f.params, &data).map(|args| FallbackCall::new(f.tool.clone(), args)))
            .collect::<Result<Vec<_>, _>>()
            .map_err(|e| fail(e.to_string()))?;
        let policy = merge_policies(self.plan.defaults.as_ref(), step.policy.as_ref());
        let events = self.events.clone().map(|tx| {
            let run_id = self.run_id.clone();
            Arc::new(move |e: CallEvent| {
                let event = match e {
                    CallEvent::Retrying {
                        attempt,
                        error,
                        delay_ms,
                        ..
                    } => PlanEvent::StepRetrying {
                        run_id: run_id.clone(),
                        index: i,
                        attempt,
                        error,
                        delay_ms,
                    },
                    CallEvent::Progress {
                        progress,
                        total,
                        message,
                        ..
                    } => PlanEvent::StepProgress {
                        run_id: run_id.clone(),
                        index: i,
                        progress,
                        total,
                        message,
                    },
                    _ => return,
                };
                let _ = tx.send(event);
            }) as axon_core::EventSink
        });
        let slot = record.clone();
        Ok(ToolCall {
            tool: step.tool.clone(),
            args,
            correlation_id: Some(self.correlation_id.clone()),
            policy,
            fallbacks,
            cancel: Some(self.stop.clone()),
            events,
            secrets: self.all_secrets(secret_values.into_values(), inherited),
            tenant: self.tenant.clone(),
            step: Some(Box::new(StepMark {
                run_id: self.run_id.clone(),
                index: i,
                id: step.id.clone(),
            })),
            on_record: Some(Arc::new(move |entry: &HistoryEntry| {
                if let Ok(mut slot) = slot.lock() {
                    *slot = Some(entry.clone());
                }
            })),
            // A step's data feeds later steps whole unless a policy bounds it.
            default_max_result_tokens: None,
            approval_id: None,
        })
    }

    /// The real values behind what step `source`'s stored form masked, where
    /// template `r` reads them.
    fn masked_values(
        &self,
        source: &Source,
        r: &crate::template::Reference,
        out: &mut Vec<String>,
    ) {
        let j = match source {
            Source::Index(n) => *n,
            Source::Id(id) => match self.ids.get(id.as_str()) {
                Some(j) => *j,
                None => return,
            },
            Source::Secret(_) => return,
        };
        let (Some(stored), Some(live), Some(read)) = (
            self.stored_form(j).and_then(|o| o.result.as_ref()),
            self.outcomes
                .get(j)
                .and_then(|o| o.as_ref()?.result.as_ref()),
            secrets::reference_pointer(r),
        ) else {
            return;
        };
        for masked in secrets::redacted_pointers(&stored.data) {
            if secrets::overlaps(&read, &masked)
                && let Some(value) = live.data.pointer(&masked)
            {
                collect_strings(value, out);
            }
        }
    }

    /// A template of a step that still has to run may not read what a resumed
    /// step's checkpoint masked: the real value was never stored.
    fn check_not_masked(
        &self,
        source: &Source,
        r: &crate::template::Reference,
    ) -> Result<(), String> {
        let j = match source {
            Source::Index(n) => *n,
            Source::Id(id) => match self.ids.get(id.as_str()) {
                Some(j) => *j,
                None => return Ok(()),
            },
            Source::Secret(_) => return Ok(()),
        };
        if !self.resumed.get(j).copied().unwrap_or(false) {
            return Ok(());
        }
        let Some(data) = self
            .stored_form(j)
            .and_then(|o| o.result.as_ref())
            .map(|r| &r.data)
        else {
            return Ok(());
        };
        let Some(read) = secrets::reference_pointer(r) else {
            return Ok(());
        };
        match secrets::redacted_pointers(data)
            .into_iter()
            .find(|masked| secrets::overlaps(&read, masked))
        {
            None => Ok(()),
            Some(masked) => Err(format!(
                "template {}: {}'s data{masked} holds a secret, which is never stored, and {} finished before this run resumed; \
                 a step that reads a secret cannot resume: read it with ${{secret.NAME}}, or run the plan again under a new run id",
                r.text,
                self.plan.label(j),
                self.plan.label(j),
            )),
        }
    }

    /// A call result for a step whose templates could not be resolved.
    fn template_failure(&self, i: usize, message: String) -> CallResult {
        uncalled(
            &self.plan.steps[i].tool,
            self.correlation_id.clone(),
            ErrorKind::InvalidArguments,
            "template",
            message,
        )
    }

    /// Step `i`'s call ended: keep the real outcome for later steps and the
    /// caller, and store (checkpoint, stream) the masked one built from its
    /// history entry.
    async fn finish_step(&mut self, i: usize, result: CallResult, entry: Option<HistoryEntry>) {
        let step = &self.plan.steps[i];
        if let Some(entry) = &entry {
            // Arguments history masked (a password field's text) are masked in
            // the stored plan document too.
            let masked = secrets::redacted_pointers(&entry.args);
            if !masked.is_empty() {
                let stored_plan = self.stored_plan.get_or_insert_with(|| self.plan.clone());
                let before = stored_plan.steps[i].params.clone();
                secrets::mask_params(&mut stored_plan.steps[i].params, &masked);
                if stored_plan.steps[i].params != before
                    && let Err(e) = self
                        .runner
                        .store
                        .begin(&self.run_id, stored_plan, self.tenant.as_deref())
                        .await
                {
                    tracing::warn!(error = %e, "could not store the masked plan");
                }
            }
        }
        let stored = match entry {
            Some(entry) => {
                StepOutcome::of_call(i, step.id.clone(), step.tool.clone(), entry.result)
            }
            None => StepOutcome::of_call(i, step.id.clone(), step.tool.clone(), result.clone()),
        };
        let outcome = StepOutcome::of_call(i, step.id.clone(), step.tool.clone(), result);
        if stored.status != StepStatus::Cancelled {
            match self.runner.store.checkpoint(&self.run_id, &stored).await {
                Ok(()) => self.checkpointed[i] = true,
                Err(e) => tracing::warn!(error = %e, step = i, "could not checkpoint the step"),
            }
        }
        self.emit_finished(&stored);
        if stored != outcome {
            self.stored.insert(i, stored);
        }
        self.outcomes[i] = Some(outcome);
    }

    /// With `stream_results`: step `i` settled, so the steps it reads from have
    /// one reader less, and it may itself be read by no one. Data that no step
    /// still to run reads, and that the store holds, is let go.
    fn release_read(&mut self, i: usize) {
        let Some(readers) = self.readers.as_mut() else {
            return;
        };
        let mut done = Vec::new();
        for &j in &self.graph.deps[i] {
            readers[j] = readers[j].saturating_sub(1);
            if readers[j] == 0 {
                done.push(j);
            }
        }
        if readers[i] == 0 {
            done.push(i);
        }
        for j in done {
            if !self.checkpointed[j] {
                continue;
            }
            self.stored.remove(&j);
            if let Some(result) = self.outcomes[j].as_mut().and_then(|o| o.result.as_mut()) {
                result.data = Value::Null;
            }
        }
    }

    /// The plan document as stored: literal secrets masked.
    fn stored_plan(&self) -> &Plan {
        self.stored_plan.as_ref().unwrap_or(self.plan)
    }

    /// What is stored of step `i` (secrets masked), once it has finished.
    fn stored_form(&self, i: usize) -> Option<&StepOutcome> {
        match self.stored.get(&i) {
            Some(stored) => Some(stored),
            None => self.outcomes.get(i)?.as_ref(),
        }
    }

    fn outcome(
        &self,
        i: usize,
        status: StepStatus,
        result: Option<CallResult>,
        reason: Option<String>,
    ) -> StepOutcome {
        let step = &self.plan.steps[i];
        StepOutcome {
            index: i,
            id: step.id.clone(),
            tool: step.tool.clone(),
            status,
            result,
            reason,
        }
    }

    fn emit_finished(&self, outcome: &StepOutcome) {
        if self.events.is_some() {
            self.emit(PlanEvent::StepFinished {
                run_id: self.run_id.clone(),
                step: Box::new(outcome.clone()),
            });
        }
    }
}

fn collect_strings(value: &Value, out: &mut Vec<String>) {
    match value {
        Value::String(s) if s != REDACTED => out.push(s.clone()),
        Value::Array(items) => items.iter().for_each(|v| collect_strings(v, out)),
        Value::Object(map) => map.values().for_each(|v| collect_strings(v, out)),
        _ => {}
    }
}

/// Where a step's call leaves its history entry as stored.
type Recorded = Arc<std::sync::Mutex<Option<HistoryEntry>>>;

/// A running step's call: its index, its result and its history entry as stored.
type StepCall<'a> = BoxFuture<'a, (usize, CallResult, Option<HistoryEntry>)>;

/// Where every step of a run stands while it is scheduled.
struct Schedule<'a> {
    /// Each step's longest remaining path: the larger goes first.
    priority: Vec<u64>,
    /// Dependencies each step still waits for.
    pending: Vec<usize>,
    /// Steps that may start, by priority, then index.
    ready: BinaryHeap<(u64, Reverse<usize>)>,
    /// Steps finished (or skipped) whose dependents are yet to hear of it.
    settled: VecDeque<usize>,
    /// The calls in flight.
    running: FuturesUnordered<StepCall<'a>>,
    /// Calls in flight per tool, against its `max_concurrent`.
    per_tool: HashMap<&'a str, u32>,
}

impl<'a> Schedule<'a> {
    /// Steps already finished (resumed from checkpoints) are settled; steps with
    /// no dependencies are ready.
    fn new(
        plan: &'a Plan,
        graph: &Graph,
        outcomes: &[Option<StepOutcome>],
        executor: &Executor,
    ) -> Self {
        let priority = critical_path(plan, graph, |tool| executor.observed_p50_ms(tool));
        let pending: Vec<usize> = graph.deps.iter().map(Vec::len).collect();
        let mut ready = BinaryHeap::new();
        let mut settled = VecDeque::new();
        for i in 0..plan.steps.len() {
            if outcomes[i].is_some() {
                settled.push_back(i);
            } else if pending[i] == 0 {
                ready.push((priority[i], Reverse(i)));
            }
        }
        Schedule {
            priority,
            pending,
            ready,
            settled,
            running: FuturesUnordered::new(),
            per_tool: HashMap::new(),
        }
    }
}

/// Whether a plan submitted now is the one a run began with: equal, except
/// where the stored document masked a secret (`"***"` there matches any value,
/// so a changed password does not count as a changed plan).
fn same_plan(now: &Plan, stored: &Plan) -> bool {
    fn same(now: &Value, stored: &Value) -> bool {
        match (now, stored) {
            (_, Value::String(s)) if s == REDACTED => true,
            (Value::Object(a), Value::Object(b)) => {
                a.len() == b.len() && a.iter().all(|(k, v)| b.get(k).is_some_and(|w| same(v, w)))
            }
            (Value::Array(a), Value::Array(b)) => {
                a.len() == b.len() && a.iter().zip(b).all(|(v, w)| same(v, w))
            }
            (a, b) => a == b,
        }
    }
    match (serde_json::to_value(now), serde_json::to_value(stored)) {
        (Ok(a), Ok(b)) => same(&a, &b),
        _ => false,
    }
}

/// Longest remaining path from each step to the end of the plan, itself included:
/// in time when every step has a duration — its `expected_ms`, else the median
/// `observed_ms` gives for its tool (what the executor has seen of it) — and in
/// steps otherwise.
pub fn critical_path(
    plan: &Plan,
    graph: &Graph,
    observed_ms: impl Fn(&str) -> Option<f64>,
) -> Vec<u64> {
    // Weights in µs, so that sub-millisecond tools still order among themselves.
    let durations: Option<Vec<u64>> = plan
        .steps
        .iter()
        .map(|s| {
            s.expected_ms
                .map(|ms| ms.saturating_mul(1000))
                .or_else(|| observed_ms(&s.tool).map(|ms| (ms * 1000.0).round() as u64))
                .map(|us| us.max(1))
        })
        .collect();
    let weight = |i: usize| durations.as_ref().map_or(1, |d| d[i]);
    // Kahn's order from the sinks back (the graph is acyclic after validation).
    let n = plan.steps.len();
    let mut remaining: Vec<usize> = graph.dependents.iter().map(Vec::len).collect();
    let mut queue: VecDeque<usize> = (0..n).filter(|&i| remaining[i] == 0).collect();
    let mut longest = vec![0u64; n];
    while let Some(i) = queue.pop_front() {
        let below = graph.dependents[i]
            .iter()
            .map(|&d| longest[d])
            .max()
            .unwrap_or(0);
        longest[i] = weight(i) + below;
        for &d in &graph.deps[i] {
            remaining[d] -= 1;
            if remaining[d] == 0 {
                queue.push_back(d);
            }
        }
    }
    longest
}

/// Deep-merge a plan's defaults and a step's policy into one call-level layer.
fn merge_policies(defaults: Option<&Value>, step: Option<&Value>) -> Option<Value> {
    match (defaults, step) {
        (None, None) => None,
        (Some(v), None) | (None, Some(v)) => Some(v.clone()),
        (Some(base), Some(over)) => {
            let mut merged = base.clone();
            axon_core::policy::merge_layer(&mut merged, over);
            Some(merged)
        }
    }
}
