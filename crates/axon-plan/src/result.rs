//! The plan result (docs/design.md, "Plans"): how a run and each of its steps
//! ended. The records the runner returns and the run store checkpoints; the
//! running itself is `run.rs`'s.

use axon_core::{CallResult, ErrorKind, HistoryEntry};
use serde::{Deserialize, Serialize};

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
