//! The run queue shared by server replicas: `POST /v1/runs?queue=true` puts a
//! run in, a replica with room takes it up (`axon-server`'s `takeover.rs`), and
//! any replica tells who has a run now.

use async_trait::async_trait;
use axon_core::{Owner, StoreError};
use axon_plan::Plan;

/// Runs waiting for a server replica, and who has a run.
#[async_trait]
pub trait RunQueue: Send + Sync + 'static {
    /// Queue a run: keep its plan, to be taken by whichever server replica has
    /// room ([`RunQueue::pending_runs`]), by `owner` (it is taken up as that
    /// owner). A run id already used is a [`StoreError::Conflict`].
    async fn enqueue(&self, run_id: &str, plan: &Plan, owner: &Owner) -> Result<(), StoreError>;

    /// Runs a server should take up, oldest first, at most `limit`: queued runs
    /// nobody has started, and runs whose holder died mid-run (its claim went
    /// unbeaten too long, or its process is gone from this host). A run
    /// interrupted on purpose (Ctrl-C, cancel) let go of its claim and is not
    /// among them. Several replicas may see the same run; the claim taken when
    /// it starts lets exactly one run it.
    async fn pending_runs(&self, limit: u32) -> Result<Vec<String>, StoreError>;

    /// Who has `run_id` now, so that any replica shows a run another one
    /// executes as `running`, and one waiting for a replica as `queued`.
    async fn run_hold(&self, run_id: &str) -> Result<RunHold, StoreError>;
}

/// Who has a run ([`RunQueue::run_hold`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RunHold {
    /// A process runs it (its claim beats).
    Held,
    /// Nobody does, and a server replica will take it up: queued, or handed off
    /// by a replica that stopped.
    Pending,
    /// Nobody does, and nobody will unless asked (a run stopped by Ctrl-C, a
    /// finished or unknown run).
    Free,
}
