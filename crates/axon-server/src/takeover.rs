//! Runs that survive a replica (`[store] takeover`, on with a PostgreSQL
//! store): every [`EVERY`], a replica with room asks the store for runs nobody
//! holds that a replica should take up (queued runs, and runs whose replica
//! died: its lease went unbeaten, or its process is gone from this host) and
//! starts each under its id. Starting takes the run's lease, so of replicas
//! that race for one run exactly one runs it; it resumes from the run's
//! checkpoints, so steps that finished on the dead replica are not run again.

use std::collections::HashSet;
use std::sync::Arc;
use std::time::Duration;

use axon_core::CancellationToken;

use crate::AppState;

/// How often a replica looks for runs to take up.
pub(crate) const EVERY: Duration = Duration::from_secs(1);

/// Runs a replica has in flight at most before it stops taking runs up (runs
/// started by requests are not limited by it).
pub(crate) const ROOM: usize = 32;

/// Look for runs to take up until `stop`.
pub(crate) async fn take_over(state: Arc<AppState>, stop: CancellationToken) {
    // Runs this replica cannot start (their plan does not validate here: a
    // tool it lacks): tried once, then left to another replica.
    let mut refused: HashSet<String> = HashSet::new();
    loop {
        tokio::select! {
            _ = stop.cancelled() => return,
            _ = tokio::time::sleep(EVERY) => {}
        }
        // Bounded: forgetting them only costs one more try each.
        if refused.len() > 10_000 {
            refused.clear();
        }
        let in_flight = state.runs.lock().unwrap_or_else(|e| e.into_inner()).len();
        let room = ROOM.saturating_sub(in_flight);
        if room == 0 {
            continue;
        }
        let pending = match state.store.queue.pending_runs(room as u32).await {
            Ok(pending) => pending,
            Err(e) => {
                tracing::warn!(error = %e, "could not look for runs to take over");
                continue;
            }
        };
        for run_id in pending {
            if stop.is_cancelled() {
                return;
            }
            let here = state
                .runs
                .lock()
                .unwrap_or_else(|e| e.into_inner())
                .contains_key(&run_id);
            if here || refused.contains(&run_id) {
                continue;
            }
            let record = match state.runner.store().load(&run_id).await {
                Ok(Some(record)) => record,
                Ok(None) => continue,
                Err(e) => {
                    tracing::warn!(run_id, error = %e, "could not load a run to take over");
                    continue;
                }
            };
            // A literal secret is stored masked: taken over, an unfinished step
            // would send "***" on. Such a run is left to its user.
            let masked = record.plan.steps.iter().enumerate().any(|(i, step)| {
                !record.steps.contains_key(&i)
                    && !axon_plan::secrets::redacted_pointers(&step.params).is_empty()
            });
            if masked {
                tracing::warn!(
                    run_id,
                    "cannot take this run over: a step it has still to run holds a masked secret (resume it with its plan: POST /v1/runs?run_id=…)"
                );
                refused.insert(run_id);
                continue;
            }
            if let Err(e) = state.runner.validate_as(&record.plan, &record.owner) {
                tracing::warn!(run_id, error = %e, "cannot take this run over: its plan does not validate here");
                refused.insert(run_id);
                continue;
            }
            match crate::runs::launch(
                &state,
                record.plan,
                run_id.clone(),
                None,
                None,
                false,
                record.owner,
            ) {
                Ok(_) => tracing::info!(
                    run_id,
                    resumed_steps = record.steps.len(),
                    "taking a run over"
                ),
                Err(e) => tracing::debug!(run_id, error = ?e, "run not taken"),
            }
        }
    }
}
