//! What a server needs from its store ([`Store`]) and the records it reads
//! back: the trait both stores implement, their settings ([`Durability`],
//! [`Retention`]) and the figures and run summaries they answer with.

use std::time::Duration;

use async_trait::async_trait;
use axon_core::{HistoryStore, StoreError, UnknownName};
use axon_plan::{Plan, RunStore};

use crate::PinRows;

/// When a call's history entry is on disk, relative to its result reaching the
/// caller.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Durability {
    /// The entry is committed before the call returns (the default): a crash
    /// after a caller saw a result never loses its entry. Concurrent calls share
    /// commits (group commit), so the cost is one commit per batch, not per call.
    #[default]
    Sync,
    /// The entry is queued and committed in the next batch: higher throughput,
    /// but a crash loses the calls of the batch being written.
    Async,
}

impl std::str::FromStr for Durability {
    type Err = UnknownName;
    fn from_str(s: &str) -> Result<Self, UnknownName> {
        match s {
            "sync" => Ok(Durability::Sync),
            "async" => Ok(Durability::Async),
            other => Err(UnknownName {
                given: other.to_string(),
                what: "durability",
                expected: "sync or async",
            }),
        }
    }
}

/// How much history to keep.
#[derive(Clone, Copy, Debug)]
pub struct Retention {
    /// Entries kept per correlation id; the oldest go first (FIFO).
    pub max_per_correlation: u64,
    /// Entries kept in all; the oldest go first. 0 = no limit.
    pub max_calls: u64,
    /// Entries older than this are dropped, and runs not updated for as long.
    /// `None` = no limit.
    pub max_age: Option<Duration>,
    /// Runs kept (with their checkpoints); the least recently updated go first.
    /// 0 = no limit.
    pub max_runs: u64,
}

impl Default for Retention {
    fn default() -> Self {
        Retention {
            max_per_correlation: 100,
            max_calls: 1_000_000,
            max_age: Some(Duration::from_secs(30 * 24 * 3600)),
            max_runs: 10_000,
        }
    }
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

/// What an idempotency key's claim found (`RunStore::idempotency_begin`).
pub use axon_plan::IdempotencyBegin;

/// How long (ms) an idempotency key's answer is kept and replayed: a day.
/// Older ones are pruned when the store opens.
pub const IDEMPOTENCY_TTL_MS: i64 = 24 * 3600 * 1000;

/// A claimed key without an answer this old (ms) is taken over: its request
/// died with its process.
pub const IDEMPOTENCY_STALE_MS: i64 = 10 * 60 * 1000;

/// The newest history rows [`Store::recent_latencies`] reads at most.
pub const RECENT_LATENCY_ROWS: i64 = 50_000;

/// Act cache entries the SQLite store keeps at most (the most recently stored).
pub const ACT_CACHE_ENTRIES: usize = 10_000;

/// What a server needs from its store beyond history and runs: figures for
/// `axon stats` / `GET /v1/stats`, and a health probe for `/healthz`. SQLite
/// implements it today; PostgreSQL implements the same trait with the same queries.
#[async_trait]
pub trait Store: HistoryStore + RunStore + axon_core::approval::ApprovalStore + PinRows {
    /// Figures per tool over the history kept, sorted by tool.
    async fn tool_stats(&self) -> Result<Vec<ToolStats>, StoreError>;

    /// Whether the store takes a write now.
    async fn check_writable(&self) -> Result<(), StoreError>;

    /// The durations (ms) of each tool's last `per_tool` calls that succeeded at
    /// the first attempt since `since_ms` (ms since the epoch), among the newest
    /// [`RECENT_LATENCY_ROWS`] rows, oldest first: a new
    /// process seeds its latency sketches with them, so that `"auto"` timeouts
    /// and hedges start from what earlier processes saw.
    async fn recent_latencies(
        &self,
        per_tool: u32,
        since_ms: i64,
    ) -> Result<Vec<(String, Vec<u64>)>, StoreError>;

    /// Where the data lives, for health reports and messages (`sqlite:/path`).
    fn describe(&self) -> String;

    /// Runs, most recently updated first: `limit` of them updated before
    /// `before` (ms since the epoch), with `status` (a finished run's) or
    /// `unfinished`. The dashboard's runs page and `GET /v1/runs`.
    async fn list_runs(&self, query: &RunQuery) -> Result<Vec<RunSummary>, StoreError>;

    /// The act cache entry (JSON) under `key`, if any
    /// (`axon_browser::act::cache`: browser_act's translated steps).
    async fn act_get(&self, key: &str) -> Result<Option<String>, StoreError>;

    /// Store the act cache entry `entry` (JSON) under `key`, keeping the
    /// [`ACT_CACHE_ENTRIES`] most recently stored.
    async fn act_put(&self, key: &str, entry: &str) -> Result<(), StoreError>;

    /// Drop the act cache entry under `key`.
    async fn act_remove(&self, key: &str) -> Result<(), StoreError>;

    /// Drop history and runs beyond the retention rules.
    async fn prune(&self) -> Result<(), StoreError>;

    /// Wait until the history queued so far is committed (reads do this first).
    async fn flush(&self) -> Result<(), StoreError>;

    /// Commit the history queued so far, then close the connections. Records
    /// after this fail.
    async fn close(&self);

    /// Queue a run: keep its plan, to be taken by whichever server replica has
    /// room ([`Store::pending_runs`]), by `owner` (it is taken up as that
    /// owner). `POST /v1/runs?queue=true`.
    async fn enqueue(
        &self,
        run_id: &str,
        plan: &Plan,
        owner: &axon_core::Owner,
    ) -> Result<(), StoreError>;

    /// Runs a server should take up, oldest first, at most `limit`: queued runs
    /// nobody has started, and runs whose holder died mid-run (its claim went
    /// unbeaten for [`CLAIM_STALE_MS`](crate::CLAIM_STALE_MS), or its process is gone from this host).
    /// A run interrupted on purpose (Ctrl-C, cancel) let go of its claim and is
    /// not among them. Several replicas may see the same run; the claim taken
    /// when it starts lets exactly one run it.
    async fn pending_runs(&self, limit: u32) -> Result<Vec<String>, StoreError>;

    /// Who has `run_id` now, so that any replica shows a run another one
    /// executes as `running`, and one waiting for a replica as `queued`.
    async fn run_hold(&self, run_id: &str) -> Result<RunHold, StoreError>;
}

/// Who has a run ([`Store::run_hold`]).
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

/// Which runs [`Store::list_runs`] returns.
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
    /// Only the runs of this tenant ([`axon_plan::RunRecord::tenant`]);
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

/// `impl Store for $store`, with the methods whose statements both dialects
/// share (`$n` placeholders, as in [`run_store`](crate::runs::run_store)) and
/// the store's own (`{ … }`: `prune`, `check_writable`, `list_runs`,
/// `recent_latencies`, `describe`). `pending_runs` is the store's statement
/// for the runs waiting for a replica: each dialect writes its condition as
/// its partial index does, or the index is not used. The store has a `pool`
/// of its database, a history `writer` and the `owner` it claims runs as.
macro_rules! store_impl {
    ($store:ty, pending_runs: $pending_runs:expr, { $($own:tt)* }) => {
        #[async_trait::async_trait]
        impl $crate::Store for $store {
            $($own)*

            async fn pending_runs(&self, limit: u32) -> Result<Vec<String>, axon_core::StoreError> {
                // Past `limit` pending runs, the live ones are skipped too:
                // a scan shorter than the limit would keep a cap on the queue
                // from ever being reached (issue 59).
                let rows = sqlx::query($pending_runs)
                    .bind($crate::PENDING_SCAN + i64::from(limit))
                    .fetch_all(&self.pool)
                    .await
                    .map_err($crate::err)?;
                Ok($crate::pending(
                    &self.owner,
                    rows.iter().map($crate::holder_of),
                    limit,
                ))
            }

            /// The act cache entry (JSON) under `key`, if any
            /// (`axon_browser::act::cache`: browser_act's translated steps).
            async fn act_get(&self, key: &str) -> Result<Option<String>, axon_core::StoreError> {
                sqlx::query_scalar("SELECT entry FROM act_cache WHERE key = $1")
                    .bind(key)
                    .fetch_optional(&self.pool)
                    .await
                    .map_err($crate::err)
            }

            /// Store the act cache entry `entry` (JSON) under `key`, keeping the
            /// [`ACT_CACHE_ENTRIES`](crate::ACT_CACHE_ENTRIES) most recently stored.
            async fn act_put(&self, key: &str, entry: &str) -> Result<(), axon_core::StoreError> {
                sqlx::query(
                    "INSERT INTO act_cache (key, entry, updated_at_ms) VALUES ($1, $2, $3) \
                     ON CONFLICT (key) DO UPDATE SET entry = $2, updated_at_ms = $3",
                )
                .bind(key)
                .bind(entry)
                .bind($crate::now_ms())
                .execute(&self.pool)
                .await
                .map_err($crate::err)?;
                sqlx::query(
                    "DELETE FROM act_cache WHERE updated_at_ms < \
                     (SELECT updated_at_ms FROM act_cache ORDER BY updated_at_ms DESC LIMIT 1 OFFSET $1)",
                )
                .bind($crate::ACT_CACHE_ENTRIES as i64)
                .execute(&self.pool)
                .await
                .map(|_| ())
                .map_err($crate::err)
            }

            /// Drop the act cache entry under `key`.
            async fn act_remove(&self, key: &str) -> Result<(), axon_core::StoreError> {
                sqlx::query("DELETE FROM act_cache WHERE key = $1")
                    .bind(key)
                    .execute(&self.pool)
                    .await
                    .map(|_| ())
                    .map_err($crate::err)
            }

            /// Wait until the history queued so far is committed (reads do this first).
            async fn flush(&self) -> Result<(), axon_core::StoreError> {
                self.writer.flush().await
            }

            /// Commit the history queued so far, then close the pool (on
            /// SQLite, flushing the WAL). Records after this fail.
            async fn close(&self) {
                self.writer.close().await;
                self.pool.close().await;
            }

            async fn enqueue(
                &self,
                run_id: &str,
                plan: &axon_plan::Plan,
                owner: &axon_core::Owner,
            ) -> Result<(), axon_core::StoreError> {
                sqlx::query(
                    "INSERT INTO runs (run_id, plan, result, updated_at_ms, handoff, tenant) \
                     VALUES ($1, $2, NULL, $3, $4, $5)",
                )
                .bind(run_id)
                .bind($crate::encode(plan)?)
                .bind($crate::now_ms())
                .bind(true)
                .bind(owner.tenant())
                .execute(&self.pool)
                .await
                .map(|_| ())
                .map_err(|e| $crate::enqueue_failed(run_id, e))
            }

            async fn run_hold(&self, run_id: &str) -> Result<$crate::RunHold, axon_core::StoreError> {
                use sqlx::Row as _;
                let row = sqlx::query(
                    "SELECT r.run_id, r.handoff AND r.result IS NULL AS waiting, \
                     c.host, c.pid, c.heartbeat_ms \
                     FROM runs r LEFT JOIN run_claims c ON c.run_id = r.run_id WHERE r.run_id = $1",
                )
                .bind(run_id)
                .fetch_optional(&self.pool)
                .await
                .map_err($crate::err)?;
                Ok(row.map_or($crate::RunHold::Free, |row| {
                    $crate::hold_of(&self.owner, &$crate::holder_of(&row), row.get::<bool, _>("waiting"))
                }))
            }

            async fn tool_stats(&self) -> Result<Vec<$crate::ToolStats>, axon_core::StoreError> {
                use sqlx::Row as _;
                self.writer.flush().await?;
                let rows = sqlx::query(
                    "SELECT tool, success, retried, duration_ms FROM calls ORDER BY tool, duration_ms",
                )
                .fetch_all(&self.pool)
                .await
                .map_err($crate::err)?;
                Ok($crate::tool_stats_of(rows.iter().map(|row| {
                    (
                        row.get::<String, _>("tool"),
                        row.get::<bool, _>("success"),
                        row.get::<bool, _>("retried"),
                        row.get::<i64, _>("duration_ms"),
                    )
                })))
            }
        }
    };
}

pub(crate) use store_impl;
