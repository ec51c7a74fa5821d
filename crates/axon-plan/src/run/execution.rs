//! One execution of a run: steps started as their dependencies finish,
//! within the run's and each tool's concurrency, checkpointed as they end;
//! a run id seen before resumes.

use std::cmp::Reverse;
use std::collections::HashMap;
use std::sync::Arc;

use axon_core::{CallResult, HistoryEntry, SmolStr};
use futures::stream::StreamExt;
use serde_json::Value;
use tokio::time::Instant;
use tracing::Instrument;

use crate::plan::Plan;
use crate::secrets;
use crate::validate::Graph;

use super::schedule::{Schedule, same_plan};
use super::*;

impl<'a> Run<'a> {
    pub(super) fn new(
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
            owner: options.owner,
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

    pub(super) fn emit(&self, event: PlanEvent) {
        if let Some(tx) = &self.events {
            let _ = tx.send(event);
        }
    }

    pub(super) async fn execute(mut self) -> PlanResult {
        let clock = Instant::now();
        self.begin().await;
        let fail_fast_reason = self.run_steps().await;
        self.mark_never_ran(fail_fast_reason);
        self.finish(clock).await
    }

    /// Record the run's start and say so.
    pub(super) async fn begin(&mut self) {
        let resumed = self.resumed.iter().filter(|r| **r).count();
        if let Err(e) = self
            .runner
            .store
            .begin(&self.run_id, self.stored_plan(), &self.owner)
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
    pub(super) async fn run_steps(&mut self) -> Option<String> {
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
    pub(super) async fn start_ready(&mut self, schedule: &mut Schedule<'a>) {
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
                        .map(|key| (format!("step:{key}"), self.runner.keys.clone()));
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
    pub(super) fn mark_never_ran(&mut self, fail_fast_reason: Option<String>) {
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
    pub(super) async fn finish(mut self, clock: Instant) -> PlanResult {
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
    pub(super) async fn resume(&mut self) -> Result<(), String> {
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
    pub(super) fn settle(&mut self, i: usize, schedule: &mut Schedule<'a>) {
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

    /// Step `i`'s call ended: keep the real outcome for later steps and the
    /// caller, and store (checkpoint, stream) the masked one built from its
    /// history entry.
    pub(super) async fn finish_step(
        &mut self,
        i: usize,
        result: CallResult,
        entry: Option<HistoryEntry>,
    ) {
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
                        .begin(&self.run_id, stored_plan, &self.owner)
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
    pub(super) fn release_read(&mut self, i: usize) {
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
    pub(super) fn stored_plan(&self) -> &Plan {
        self.stored_plan.as_ref().unwrap_or(self.plan)
    }

    /// What is stored of step `i` (secrets masked), once it has finished.
    pub(super) fn stored_form(&self, i: usize) -> Option<&StepOutcome> {
        match self.stored.get(&i) {
            Some(stored) => Some(stored),
            None => self.outcomes.get(i)?.as_ref(),
        }
    }

    pub(super) fn outcome(
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

    pub(super) fn emit_finished(&self, outcome: &StepOutcome) {
        if self.events.is_some() {
            self.emit(PlanEvent::StepFinished {
                run_id: self.run_id.clone(),
                step: Box::new(outcome.clone()),
            });
        }
    }
}
