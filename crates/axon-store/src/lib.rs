//! # axon-store
//!
//! Durable stores: call history ([`HistoryStore`](axon_core::HistoryStore)),
//! plan runs with their step checkpoints ([`RunStore`](axon_plan::RunStore)),
//! and what a server keeps beside them, in SQLite ([`SqliteStore`], the
//! embedded default) or PostgreSQL ([`PgStore`], replicas sharing a
//! database). History and checkpoints survive restarts, so `axon history`
//! can explain yesterday's run and a killed run resumes where it stopped.
//!
//! There is no one store trait: each store implements the roles its
//! consumers ask for (`axon_store_roles`: history, runs, idempotency keys,
//! approvals, pins, the act cache, the run queue, the runs listing, figures,
//! health, upkeep), and `axon_store_roles::Stores::of` hands them out.
//!
//! The rooms: `sqlite.rs` and `postgres.rs` (opening and migrating, nothing
//! else), `writer.rs` (the group-commit history writer both use) with its
//! two dialects (`batches.rs`), `pruning.rs` (the retention rules), one file
//! per role with both dialects side by side, one statement where SQL allows
//! (`history.rs`, `runs.rs`, `run_listing.rs`, `queue.rs`, `idempotency.rs`,
//! `approval_rows.rs`, `pin_rows.rs`, `act_cache.rs`, `figures.rs`,
//! `health.rs`, `upkeep.rs`), `settings.rs` (durability, retention), and this file: the helpers both
//! dialects share (run claims, rows read back, figures). Each row keeps the
//! whole record as JSON beside the few columns that queries filter on, so the
//! same tables and statements serve both.

#![warn(missing_docs)]

mod act_cache;
mod approval_rows;
mod batches;
mod figures;
mod health;
mod history;
mod idempotency;
mod pin_rows;
mod postgres;
mod pruning;
mod queue;
mod run_listing;
mod runs;
mod settings;
mod sqlite;
mod upkeep;
mod writer;

pub use postgres::PgStore;
pub use settings::{Durability, IDEMPOTENCY_STALE_MS, IDEMPOTENCY_TTL_MS, Retention};
pub use sqlite::SqliteStore;
pub(crate) use writer::{Batches, Row, Writer, ids_to_trim};

use std::path::Path;
use std::time::Duration;

use axon_core::{HistoryStats, StoreError, Timestamp};
use axon_plan::{Claim, Plan, PlanResult, RunRecord, StepOutcome};
use axon_store_roles::{RunHold, RunSummary, ToolStats};

/// This process, as a holder of run claims.
#[derive(Clone)]
pub(crate) struct Owner {
    pub(crate) host: String,
    pub(crate) pid: u32,
}

impl Owner {
    /// This process on this host.
    pub(crate) fn this_process() -> Owner {
        Owner {
            host: std::fs::read_to_string("/proc/sys/kernel/hostname")
                .map(|h| h.trim().to_string())
                .unwrap_or_else(|_| "localhost".into()),
            pid: std::process::id(),
        }
    }

    /// Whether the claim of `pid` on `host` (beaten last at `heartbeat_ms`) is
    /// void: its process is gone from this host (killed, crashed: taken over at
    /// once), or it has not beaten for [`CLAIM_STALE_MS`] (a holder elsewhere).
    pub(crate) fn may_take_over(&self, host: &str, pid: i64, heartbeat_ms: i64) -> bool {
        let gone = host == self.host
            && pid != i64::from(self.pid)
            && !Path::new(&format!("/proc/{pid}")).exists();
        gone || heartbeat_ms < now_ms() - CLAIM_STALE_MS
    }
}

/// An unfinished run and who holds it, if anyone (a row of a pending-runs scan).
pub(crate) struct Holder {
    pub(crate) run_id: String,
    /// (host, pid, heartbeat ms) of its claim.
    pub(crate) claim: Option<(String, i64, i64)>,
}

impl Holder {
    /// Whether its claim holds (beats, and its process is not gone).
    pub(crate) fn is_live(&self, owner: &Owner) -> bool {
        self.claim
            .as_ref()
            .is_some_and(|(host, pid, beat)| !owner.may_take_over(host, *pid, *beat))
    }
}

/// Who has a run whose claim row (if any) is `holder`; `waiting`: it is
/// unfinished and handed off.
pub(crate) fn hold_of(owner: &Owner, holder: &Holder, waiting: bool) -> RunHold {
    if holder.is_live(owner) {
        RunHold::Held
    } else if waiting {
        RunHold::Pending
    } else {
        RunHold::Free
    }
}

/// Unfinished handed-off runs a pending scan reads at most.
pub(crate) const PENDING_SCAN: i64 = 1_000;

/// The first `limit` runs nobody holds.
pub(crate) fn pending(
    owner: &Owner,
    holders: impl Iterator<Item = Holder>,
    limit: u32,
) -> Vec<String> {
    holders
        .filter(|h| !h.is_live(owner))
        .take(limit as usize)
        .map(|h| h.run_id)
        .collect()
}

/// A row of the runs listing (`run_id`, `name`, `status`, `total`,
/// `succeeded`, `failed`, `skipped`, `duration_ms`, `updated_at_ms`), on
/// either backend.
pub(crate) fn run_summary_of<R>(row: &R) -> RunSummary
where
    R: sqlx::Row,
    for<'a> &'a str: sqlx::ColumnIndex<R>,
    for<'a> String: sqlx::Decode<'a, R::Database> + sqlx::Type<R::Database>,
    for<'a> Option<String>: sqlx::Decode<'a, R::Database> + sqlx::Type<R::Database>,
    for<'a> i64: sqlx::Decode<'a, R::Database> + sqlx::Type<R::Database>,
    for<'a> Option<i64>: sqlx::Decode<'a, R::Database> + sqlx::Type<R::Database>,
{
    let count = |column: &str| row.get::<i64, _>(column).max(0) as u64;
    RunSummary {
        run_id: row.get("run_id"),
        plan: row.get("name"),
        status: row.get("status"),
        steps_total: row.get::<Option<i64>, _>("total").unwrap_or(0).max(0) as u64,
        succeeded: count("succeeded"),
        failed: count("failed"),
        skipped: count("skipped"),
        duration_ms: row
            .get::<Option<i64>, _>("duration_ms")
            .map(|d| d.max(0) as u64),
        updated_at_ms: row.get("updated_at_ms"),
    }
}

/// Queuing `run_id` failed: an id already used is said so.
pub(crate) fn enqueue_failed(run_id: &str, e: sqlx::Error) -> StoreError {
    match e.as_database_error() {
        Some(d) if d.is_unique_violation() => StoreError::conflict(format!("run {run_id} exists")),
        _ => err(e),
    }
}

/// A scan row (`run_id`, and the claim's `host`, `pid`, `heartbeat_ms` or nulls).
pub(crate) fn holder_of<R>(row: &R) -> Holder
where
    R: sqlx::Row,
    for<'a> &'a str: sqlx::ColumnIndex<R>,
    for<'a> String: sqlx::Decode<'a, R::Database> + sqlx::Type<R::Database>,
    for<'a> Option<String>: sqlx::Decode<'a, R::Database> + sqlx::Type<R::Database>,
    for<'a> Option<i64>: sqlx::Decode<'a, R::Database> + sqlx::Type<R::Database>,
{
    let host: Option<String> = row.get("host");
    let pid: Option<i64> = row.get("pid");
    let beat: Option<i64> = row.get("heartbeat_ms");
    Holder {
        run_id: row.get("run_id"),
        claim: host.map(|host| (host, pid.unwrap_or(0), beat.unwrap_or(0))),
    }
}

/// A statement run in the background (a lease's beat or release).
pub(crate) type Statement = std::pin::Pin<Box<dyn std::future::Future<Output = ()> + Send>>;

/// Refusing a run's lease: who holds it.
pub(crate) fn taken_by(run_id: &str, host: &str, pid: i64) -> StoreError {
    StoreError::conflict(format!(
        "run {run_id} is being run by another process (pid {pid} on {host}); wait for it to finish, or cancel it"
    ))
}

/// A lease taken: `beat` runs every [`CLAIM_BEAT`] while it is held, `release`
/// once when it is let go (or dropped).
pub(crate) fn held_claim(
    beat: impl Fn() -> Statement + Send + 'static,
    release: Statement,
) -> Claim {
    let beating = tokio::spawn(async move {
        loop {
            tokio::time::sleep(CLAIM_BEAT).await;
            beat().await;
        }
    });
    Claim::new(move || async move {
        beating.abort();
        release.await;
    })
}

/// A run claim whose holder has not beaten for this long (ms) is void: another
/// process (another replica) takes the run over and resumes it.
pub const CLAIM_STALE_MS: i64 = 15_000;

/// How often a held claim beats.
pub(crate) const CLAIM_BEAT: Duration = Duration::from_secs(5);

pub(crate) fn err(e: impl std::error::Error + Send + Sync + 'static) -> StoreError {
    StoreError::from_driver(e)
}

pub(crate) fn now_ms() -> i64 {
    Timestamp::now().unix_ms() as i64
}

/// Per-correlation figures from the sums both backends compute.
pub(crate) fn history_stats(total: i64, ok: i64, retried: i64, duration: i64) -> HistoryStats {
    let mut s = HistoryStats {
        total: total as u64,
        succeeded: ok as u64,
        failed: (total - ok) as u64,
        retried: retried as u64,
        total_duration_ms: duration as u64,
        ..HistoryStats::default()
    };
    if total > 0 {
        s.average_duration_ms = duration as f64 / total as f64;
        s.success_rate = ok as f64 / total as f64;
    }
    s
}

/// Figures per tool from (tool, success, retried, duration ms) rows sorted by
/// tool, then duration.
pub(crate) fn tool_stats_of(
    rows: impl Iterator<Item = (String, bool, bool, i64)>,
) -> Vec<ToolStats> {
    let mut out: Vec<ToolStats> = Vec::new();
    let mut durations: Vec<Vec<u64>> = Vec::new();
    for (tool, success, retried, duration) in rows {
        if out.last().is_none_or(|s| s.tool != tool) {
            out.push(ToolStats {
                tool,
                calls: 0,
                succeeded: 0,
                success_rate: 0.0,
                p50_ms: 0,
                p95_ms: 0,
                retried: 0,
            });
            durations.push(Vec::new());
        }
        if let (Some(s), Some(d)) = (out.last_mut(), durations.last_mut()) {
            s.calls += 1;
            s.succeeded += u64::from(success);
            s.retried += u64::from(retried);
            d.push(duration.max(0) as u64);
        }
    }
    for (s, d) in out.iter_mut().zip(&durations) {
        // Nearest rank over the sorted durations.
        let rank = |p: f64| d[((p * d.len() as f64).ceil() as usize).clamp(1, d.len()) - 1];
        s.success_rate = s.succeeded as f64 / s.calls as f64;
        s.p50_ms = rank(0.50);
        s.p95_ms = rank(0.95);
    }
    out
}

/// Durations per tool from (tool, duration ms) rows sorted by tool.
pub(crate) fn latencies_of(rows: impl Iterator<Item = (String, i64)>) -> Vec<(String, Vec<u64>)> {
    let mut out: Vec<(String, Vec<u64>)> = Vec::new();
    for (tool, ms) in rows {
        let ms = ms.max(0) as u64;
        match out.last_mut() {
            Some((t, d)) if *t == tool => d.push(ms),
            _ => out.push((tool, vec![ms])),
        }
    }
    out
}

/// A run as stored: its plan, its result (completed with the checkpoints) and
/// its checkpoints, from their JSON.
pub(crate) fn run_record<'a>(
    run_id: &str,
    plan: &str,
    result: Option<&str>,
    tenant: Option<&str>,
    outcomes: impl Iterator<Item = &'a str>,
) -> Result<RunRecord, StoreError> {
    let plan: Plan = decode(plan)?;
    let result: Option<PlanResult> = result.map(decode).transpose()?;
    let mut steps = std::collections::BTreeMap::new();
    for outcome in outcomes {
        let outcome: StepOutcome = decode(outcome)?;
        steps.insert(outcome.index, outcome);
    }
    Ok(RunRecord {
        run_id: run_id.to_string(),
        plan,
        result: result.map(|result| axon_plan::complete_result(result, &steps)),
        steps,
        owner: axon_core::Owner::of(tenant),
    })
}

pub(crate) fn decode<T: serde::de::DeserializeOwned>(text: &str) -> Result<T, StoreError> {
    serde_json::from_str(text).map_err(|e| StoreError::corrupt(format!("corrupt record: {e}"), e))
}

pub(crate) fn encode<T: serde::Serialize>(value: &T) -> Result<String, StoreError> {
    serde_json::to_string(value).map_err(err)
}
