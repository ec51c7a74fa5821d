//! The run queue ([`RunQueue`]) in either store: queued runs are rows of
//! `runs` without a result and handed off; who holds one is its
//! `run_claims` row. One body per statement for both dialects (`$n`
//! placeholders, which SQLite numbers in order of first appearance as
//! PostgreSQL does), except the scan for pending runs, which each dialect
//! writes as its partial index is written (`SQLITE_PENDING_RUNS`,
//! `PG_PENDING_RUNS`), or the index is
//! not used.

use async_trait::async_trait;
use axon_core::{Owner, StoreError};
use axon_plan::Plan;
use axon_store_roles::{RunHold, RunQueue};
use sqlx::Row as _;

use crate::{PENDING_SCAN, encode, enqueue_failed, err, hold_of, holder_of, now_ms, pending};

/// Queue a run: its plan, no result, handed off, kept as `owner`'s.
const ENQUEUE: &str = "INSERT INTO runs (run_id, plan, result, updated_at_ms, handoff, tenant) \
     VALUES ($1, $2, NULL, $3, $4, $5)";
/// A run and its claim, if any.
const HOLD: &str = "SELECT r.run_id, r.handoff AND r.result IS NULL AS waiting, \
     c.host, c.pid, c.heartbeat_ms \
     FROM runs r LEFT JOIN run_claims c ON c.run_id = r.run_id WHERE r.run_id = $1";

macro_rules! queue_in {
    ($store:ty, pending_runs: $pending_runs:expr) => {
        #[async_trait]
        impl RunQueue for $store {
            async fn enqueue(
                &self,
                run_id: &str,
                plan: &Plan,
                owner: &Owner,
            ) -> Result<(), StoreError> {
                sqlx::query(ENQUEUE)
                    .bind(run_id)
                    .bind(encode(plan)?)
                    .bind(now_ms())
                    .bind(true)
                    .bind(owner.tenant())
                    .execute(&self.pool)
                    .await
                    .map(|_| ())
                    .map_err(|e| enqueue_failed(run_id, e))
            }

            async fn pending_runs(&self, limit: u32) -> Result<Vec<String>, StoreError> {
                // Past `limit` pending runs, the live ones are skipped too:
                // a scan shorter than the limit would keep a cap on the queue
                // from ever being reached (issue 59).
                let rows = sqlx::query($pending_runs)
                    .bind(PENDING_SCAN + i64::from(limit))
                    .fetch_all(&self.pool)
                    .await
                    .map_err(err)?;
                Ok(pending(&self.owner, rows.iter().map(holder_of), limit))
            }

            async fn run_hold(&self, run_id: &str) -> Result<RunHold, StoreError> {
                let row = sqlx::query(HOLD)
                    .bind(run_id)
                    .fetch_optional(&self.pool)
                    .await
                    .map_err(err)?;
                Ok(row.map_or(RunHold::Free, |row| {
                    hold_of(&self.owner, &holder_of(&row), row.get::<bool, _>("waiting"))
                }))
            }
        }
    };
}

queue_in!(crate::SqliteStore, pending_runs: SQLITE_PENDING_RUNS);
queue_in!(crate::PgStore, pending_runs: PG_PENDING_RUNS);

/// The runs waiting for a replica, oldest first: its condition is the
/// partial index `runs_unfinished_handoff`'s, word for word, so that the
/// index is read instead of every run.
const SQLITE_PENDING_RUNS: &str = "SELECT r.run_id, c.host, c.pid, c.heartbeat_ms FROM runs r \
     LEFT JOIN run_claims c ON c.run_id = r.run_id \
     WHERE r.result IS NULL AND r.handoff = 1 ORDER BY r.updated_at_ms LIMIT $1";

/// The runs waiting for a replica, oldest first: its condition is the
/// partial index `runs_unfinished_handoff`'s, word for word, so that the
/// index is read instead of every run.
const PG_PENDING_RUNS: &str = "SELECT r.run_id, c.host, c.pid, c.heartbeat_ms FROM runs r \
     LEFT JOIN run_claims c ON c.run_id = r.run_id \
     WHERE r.result IS NULL AND r.handoff ORDER BY r.updated_at_ms LIMIT $1";

#[cfg(test)]
mod tests {
    use axon_store_roles::Upkeep;

    use super::*;
    use crate::{Retention, SqliteStore};

    /// A replica polls for pending runs every few seconds over every run the
    /// file keeps: the statement must read the partial index of pending runs,
    /// not scan the runs (`r.handoff` alone, which PostgreSQL's index takes,
    /// is not `handoff = 1` to SQLite's planner).
    #[tokio::test]
    async fn pending_runs_are_read_from_their_partial_index() {
        let path = std::env::temp_dir()
            .join(format!("axon-store-unit-{}", ulid::Ulid::new()))
            .join("axon.db");
        let store = SqliteStore::open(&path, Retention::default())
            .await
            .unwrap();
        let plan: Vec<String> = sqlx::query(sqlx::AssertSqlSafe(format!(
            "EXPLAIN QUERY PLAN {SQLITE_PENDING_RUNS}"
        )))
        .bind(crate::PENDING_SCAN)
        .fetch_all(&store.pool)
        .await
        .unwrap()
        .iter()
        .map(|row| row.get::<String, _>("detail"))
        .collect();
        assert!(
            plan.iter()
                .any(|step| step.contains("runs_unfinished_handoff")),
            "{plan:?}"
        );
        store.close().await;
    }
}
