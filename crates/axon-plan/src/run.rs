//! Running a plan. A step starts the moment its dependencies have succeeded — not
//! in waves (a batch of ready steps, awaited together) — within `max_parallel` and each tool's
//! `max_concurrent`; when more steps are ready than there are slots, the one with
//! the longest remaining path goes first: by time when every step has a duration
//! (its `expected_ms`, else its tool's median latency as the executor observed
//! it), by step count otherwise. A failed step skips its dependents and independent
//! branches go on; with `fail_fast` the run cancels what is running and skips the
//! rest. Every finished step is checkpointed; a run id that was seen before
//! resumes, reusing its finished steps.
//!
//! This file holds what a caller sees (the runner, its options, results and
//! events); one execution of a run is in `run/execution.rs`, a step's call
//! as it will be made (templates, secrets, policies) in `run/prepare.rs`,
//! and the order steps start in in `run/schedule.rs`.

use std::collections::HashMap;
use std::sync::Arc;

use axon_core::{
    CallError, CallResult, CancellationToken, ErrorKind, Executor, HistoryEntry, Provenance,
    SmolStr, Timestamp, ToolCall,
};
use futures::future::BoxFuture;
use serde::Serialize;
use serde_json::Value;
use tokio::sync::mpsc::UnboundedSender;
use tracing::Instrument;

use crate::idempotency::{Idempotency, IdempotencyBegin};
use crate::plan::Plan;
pub use crate::result::{PlanResult, RunStatus, StepOutcome, StepStatus};
use crate::secrets::Secrets;
use crate::store::{InMemoryRunStore, RunStore};
use crate::template::{TemplateSource, templates_in};
use crate::validate::{Graph, PlanErrors, PlanProblem, validate};

mod execution;
mod prepare;
mod schedule;

pub use schedule::critical_path;

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
    /// Who runs it: every step's call is made as this owner
    /// (`ToolCall::owner`), so a run sees only its caller's browser
    /// sessions, files and secrets, and its record is its caller's.
    pub owner: axon_core::Owner,
}

/// Runs plans on an executor, checkpointing to a run store.
#[derive(Clone)]
pub struct PlanRunner {
    executor: Executor,
    store: Arc<dyn RunStore>,
    /// Where steps with an `idempotency_key` claim it.
    keys: Arc<dyn Idempotency>,
    secrets: Arc<Secrets>,
}

impl PlanRunner {
    /// A runner that keeps runs in memory.
    pub fn new(executor: Executor) -> Self {
        Self::with_store(executor, Arc::new(InMemoryRunStore::new()))
    }

    /// A runner that keeps runs, and its steps' idempotency keys, in `store`.
    pub fn with_store<S: RunStore + Idempotency>(executor: Executor, store: Arc<S>) -> Self {
        Self::with_stores(executor, store.clone(), store)
    }

    /// A runner that keeps runs in `runs` and its steps' idempotency keys in
    /// `keys` (the two roles of one store, held apart).
    pub fn with_stores(
        executor: Executor,
        runs: Arc<dyn RunStore>,
        keys: Arc<dyn Idempotency>,
    ) -> Self {
        PlanRunner {
            executor,
            store: runs,
            keys,
            secrets: Arc::new(Secrets::new()),
        }
    }

    /// The secrets plans may reference as `${secret.NAME}`.
    pub fn with_secrets(mut self, secrets: Secrets) -> Self {
        self.secrets = Arc::new(secrets);
        self
    }

    /// The secrets plans may reference, and who may use which.
    pub fn secrets(&self) -> &Secrets {
        &self.secrets
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
        self.validate_as(plan, &axon_core::Owner::Process)
    }

    /// [`PlanRunner::validate`] for a run made as `owner`
    /// ([`RunOptions::owner`]): a `${secret.NAME}` it was not granted
    /// ([`Secrets::granting`]) is a problem too, named, never its value.
    pub fn validate_as(&self, plan: &Plan, owner: &axon_core::Owner) -> Result<Graph, PlanErrors> {
        let tenant = owner.tenant();
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
                    if !self.secrets.allows(tenant, &name) {
                        problems.push(PlanProblem {
                            step: Some(i),
                            field: field.clone(),
                            message: format!(
                                "template ${{secret.{name}}}: {}",
                                crate::SecretError::NotGranted { name: name.clone() }
                            ),
                        });
                    } else if !self.secrets.contains(&name) {
                        problems.push(PlanProblem {
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
        let graph = self.validate_as(plan, &options.owner)?;
        let run_id = options
            .run_id
            .clone()
            .unwrap_or_else(|| ulid::Ulid::new().to_string());
        let refuse = |message: String| {
            PlanErrors(vec![PlanProblem {
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
            message: axon_core::error::bounded_message(message),
            retryable: false,
            retry_after_ms: None,
            pointer: None,
            candidates: Vec::new(),
            steps: Vec::new(),
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
    store: &dyn Idempotency,
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
                    TemplateSource::Secret(name) => Some(name.clone()),
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
    /// Who runs it ([`RunOptions::owner`]).
    owner: axon_core::Owner,
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

/// Where a step's call leaves its history entry as stored.
type Recorded = Arc<std::sync::Mutex<Option<HistoryEntry>>>;

/// A running step's call: its index, its result and its history entry as stored.
type StepCall<'a> = BoxFuture<'a, (usize, CallResult, Option<HistoryEntry>)>;
