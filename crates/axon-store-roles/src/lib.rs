//! # axon-store-roles
//!
//! What each consumer asks of Axon's durable store, one trait per role, and
//! the records the roles answer with. No database driver: `axon-store`
//! implements every role for SQLite and PostgreSQL, and the crates that only
//! *use* a store (the HTTP server) link this one, not sqlx.
//!
//! A role's trait lives with its first consumer where that crate sits below
//! the store: call history ([`HistoryStore`]) and approvals
//! ([`ApprovalStore`]) in `axon-core`, runs ([`RunStore`]) and idempotency
//! keys ([`Idempotency`]) in `axon-plan`. The roles whose consumers sit above
//! the store (the server, the CLI) live here, in this one file, each under its
//! heading: the run queue, the runs listing, figures, health, the opener's
//! upkeep, MCP pins and browser_act's cache. (`axon-store` implements them
//! one file per role.)
//!
//! [`Stores`] is one store seen through its roles: what `axon` opens, and
//! hands each consumer the role it needs.

#![warn(missing_docs)]

use std::sync::Arc;

use async_trait::async_trait;
use axon_core::{Owner, StoreError};
use axon_plan::Plan;

pub use axon_core::HistoryStore;
pub use axon_core::approval::ApprovalStore;
pub use axon_plan::{Idempotency, IdempotencyBegin, RunStore};

/// One store seen through its roles, each an `Arc` of the same store: the
/// opener (the CLI) holds this, and gives each consumer only the roles it
/// uses (the executor its history, the plan runner its runs and keys, the
/// server its queue, listing, figures, health and pins).
#[derive(Clone)]
pub struct Stores {
    /// Call history.
    pub history: Arc<dyn HistoryStore>,
    /// Plan runs and their checkpoints.
    pub runs: Arc<dyn RunStore>,
    /// Idempotency keys (plan steps, HTTP calls).
    pub keys: Arc<dyn Idempotency>,
    /// Calls parked for approval.
    pub approvals: Arc<dyn ApprovalStore>,
    /// Imported MCP tools' pins.
    pub pins: Arc<dyn PinRows>,
    /// browser_act's translated steps.
    pub act_cache: Arc<dyn ActRows>,
    /// Runs waiting for a server replica.
    pub queue: Arc<dyn RunQueue>,
    /// Runs listed a page at a time.
    pub listing: Arc<dyn RunListing>,
    /// Per-tool figures.
    pub figures: Arc<dyn ToolFigures>,
    /// Recent durations, to seed latency sketches.
    pub latencies: Arc<dyn RecentLatencies>,
    /// Whether it works, and where it is.
    pub health: Arc<dyn Health>,
    /// Pruning, flushing, closing.
    pub upkeep: Arc<dyn Upkeep>,
}

impl Stores {
    /// Every role of `store`.
    pub fn of<S>(store: Arc<S>) -> Stores
    where
        S: HistoryStore
            + RunStore
            + Idempotency
            + ApprovalStore
            + PinRows
            + ActRows
            + RunQueue
            + RunListing
            + ToolFigures
            + RecentLatencies
            + Health
            + Upkeep,
    {
        Stores {
            history: store.clone(),
            runs: store.clone(),
            keys: store.clone(),
            approvals: store.clone(),
            pins: store.clone(),
            act_cache: store.clone(),
            queue: store.clone(),
            listing: store.clone(),
            figures: store.clone(),
            latencies: store.clone(),
            health: store.clone(),
            upkeep: store,
        }
    }
}

// ---- The run queue ----
// The run queue shared by server replicas: `POST /v1/runs?queue=true` puts a
// run in, a replica with room takes it up (`axon-server`'s `takeover.rs`), and
// any replica tells who has a run now.

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

// ---- The runs listing ----
// Runs listed a page at a time: the dashboard's runs page and `GET /v1/runs`.

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

// ---- Figures ----
// Figures read back from the call history: per-tool figures for `axon stats`
// and `GET /v1/stats` ([`ToolFigures`]), and the recent durations a new
// process seeds its latency sketches with ([`RecentLatencies`]). Two roles,
// because their consumers differ: the server shows figures, the CLI's wiring
// seeds the executor.

/// The newest history rows [`RecentLatencies::recent_latencies`] reads at most.
pub const RECENT_LATENCY_ROWS: i64 = 50_000;

/// Figures per tool over the history kept.
#[async_trait]
pub trait ToolFigures: Send + Sync + 'static {
    /// Figures per tool over the history kept, sorted by tool.
    async fn tool_stats(&self) -> Result<Vec<ToolStats>, StoreError>;
}

/// Durations of recent calls, so that `"auto"` timeouts and hedges start from
/// what earlier processes saw.
#[async_trait]
pub trait RecentLatencies: Send + Sync + 'static {
    /// The durations (ms) of each tool's last `per_tool` calls that succeeded at
    /// the first attempt since `since_ms` (ms since the epoch), among the newest
    /// [`RECENT_LATENCY_ROWS`] rows, oldest first.
    async fn recent_latencies(
        &self,
        per_tool: u32,
        since_ms: i64,
    ) -> Result<Vec<(String, Vec<u64>)>, StoreError>;
}

/// Figures of one tool over the history kept (`axon stats`).
#[derive(Clone, Debug, PartialEq, serde::Serialize)]
pub struct ToolStats {
    /// The tool.
    pub tool: String,
    /// Calls recorded.
    pub calls: u64,
    /// Calls that succeeded.
    pub succeeded: u64,
    /// `succeeded / calls`.
    pub success_rate: f64,
    /// Median duration, ms.
    pub p50_ms: u64,
    /// 95th percentile duration, ms.
    pub p95_ms: u64,
    /// Calls that needed retries.
    pub retried: u64,
}

// ---- Health ----
// The store's part of `/healthz` and of messages that name where data lives.

/// Whether the store works, and where it is.
#[async_trait]
pub trait Health: Send + Sync + 'static {
    /// Whether the store takes a write now.
    async fn check_writable(&self) -> Result<(), StoreError>;

    /// Where the data lives, for health reports and messages (`sqlite:/path`).
    fn describe(&self) -> String;
}

// ---- Upkeep ----
// What the process that opened a store does to it: drop what retention no
// longer keeps, wait for queued history, close it on the way out.

/// The opener's hold on a store's lifetime.
#[async_trait]
pub trait Upkeep: Send + Sync + 'static {
    /// Drop history and runs beyond the retention rules.
    async fn prune(&self) -> Result<(), StoreError>;

    /// Wait until the history queued so far is committed (reads do this first).
    async fn flush(&self) -> Result<(), StoreError>;

    /// Commit the history queued so far, then close the connections. Records
    /// after this fail.
    async fn close(&self);
}

// ---- Pins ----
// Imported MCP tools' pins (`axon_mcp_client::pin`) as rows: the pin is JSON whose
// shape is axon-mcp-client's, so the store keeps it whole and this crate need not
// link axon-mcp-client (`axon_server::StorePins` reads them as pins).

/// The pins in the store. They live there so that every replica holds a
/// changed tool and an acceptance on one reaches all.
#[async_trait]
pub trait PinRows: Send + Sync + 'static {
    /// The pin (JSON: `axon_mcp_client::pin::Pin`) of the imported tool `tool`, if
    /// one was made.
    async fn pin_get(&self, tool: &str) -> Result<Option<String>, StoreError>;

    /// Write the pin `entry` (JSON) of `tool`.
    async fn pin_put(&self, tool: &str, entry: &str) -> Result<(), StoreError>;

    /// Every pin (JSON), by tool name.
    async fn pin_list(&self) -> Result<Vec<String>, StoreError>;
}

// ---- The act cache ----
// browser_act's translated steps (`axon_browser_act::step_cache`) as rows: the
// entry is JSON whose shape is axon-browser's, so the store keeps it whole and
// this crate need not link the browser (the CLI's wiring adapts it).

/// Act cache entries a store keeps at most (the most recently stored).
pub const ACT_CACHE_ENTRIES: usize = 10_000;

/// The act cache in the store, shared by every process on it.
#[async_trait]
pub trait ActRows: Send + Sync + 'static {
    /// The entry (JSON) under `key`, if any.
    async fn act_get(&self, key: &str) -> Result<Option<String>, StoreError>;

    /// Store the entry `entry` (JSON) under `key`, keeping the
    /// [`ACT_CACHE_ENTRIES`] most recently stored.
    async fn act_put(&self, key: &str, entry: &str) -> Result<(), StoreError>;

    /// Drop the entry under `key`.
    async fn act_remove(&self, key: &str) -> Result<(), StoreError>;
}
