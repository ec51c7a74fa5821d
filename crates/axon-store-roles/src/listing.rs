//! Runs listed a page at a time: the dashboard's runs page and `GET /v1/runs`.

use async_trait::async_trait;
use axon_core::StoreError;

/// The runs a store keeps, newest first.
#[async_trait]
pub trait RunListing: Send + Sync + 'static {
    /// Runs, most recently updated first: `limit` of them updated before
    /// `before` (ms since the epoch), with `status` (a finished run's) or
    /// `unfinished`.
    async fn list_runs(&self, query: &RunQuery) -> Result<Vec<RunSummary>, StoreError>;
}

/// Which runs [`RunListing::list_runs`] returns.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct RunQuery {
    /// Only runs that ended so (`succeeded`, `failed`, `cancelled`), or, with
    /// `Unfinished`, those without a result (running, or interrupted).
    pub status: Option<RunFilter>,
    /// Only runs last updated before this time, ms since the epoch (the page
    /// after a listing ends at its last run's `updated_at_ms`).
    pub before_ms: Option<i64>,
    /// At most this many.
    pub limit: u32,
    /// Only the runs of this tenant ([`axon_plan::RunRecord::owner`]);
    /// `None`: every run.
    pub tenant: Option<String>,
}

/// A status filter of [`RunQuery`].
#[derive(Clone, Debug, PartialEq)]
pub enum RunFilter {
    /// Runs whose result has this status.
    Ended(String),
    /// Runs without a result yet.
    Unfinished,
}

/// One run in a listing: enough to show a row, not its steps.
#[derive(Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize, schemars::JsonSchema)]
pub struct RunSummary {
    /// The run.
    pub run_id: String,
    /// The plan's name, if it has one.
    pub plan: Option<String>,
    /// How it ended; null while it has no result (running, or interrupted).
    pub status: Option<String>,
    /// Steps in the plan.
    pub steps_total: u64,
    /// Steps that succeeded so far.
    pub succeeded: u64,
    /// Steps that failed.
    pub failed: u64,
    /// Steps skipped or cancelled.
    pub skipped: u64,
    /// The run's duration once it has ended.
    pub duration_ms: Option<u64>,
    /// When it was begun or last finished, ms since the epoch.
    pub updated_at_ms: i64,
}
