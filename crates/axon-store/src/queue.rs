//! The run queue ([`RunQueue`]) in either store: queued runs are rows of
//! `runs` without a result and handed off; who holds one is its
//! `run_claims` row. One body per statement for both dialects (`$n`
//! placeholders, which SQLite numbers in order of first appearance as
//! PostgreSQL does), except the scan for pending runs, which each dialect
//! writes as its partial index is written (`PENDING_RUNS`), or the index is
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

queue_in!(crate::SqliteStore, pending_runs: crate::sqlite::PENDING_RUNS);
queue_in!(crate::PgStore, pending_runs: crate::postgres::PENDING_RUNS);
