//! The plan runs' rows (`axon_plan::RunStore`): one body per statement for
//! both stores. The statements use `$n` placeholders, which SQLite numbers in
//! order of first appearance as PostgreSQL does (so each statement names them
//! in increasing order). Only the run's upsert is written once per dialect
//! (below); the claim of a run is one body: a holder whose process is gone
//! from this host, or that stopped beating, is taken over in one statement.

use axon_core::StoreError;
use axon_plan::{Claim, Plan};

use crate::{CLAIM_STALE_MS, PgStore, SqliteStore, encode, err, holder_of, now_ms, taken_by};

/// `impl RunStore for $store`: every method one body for both dialects,
/// given the dialect's upsert of a run (`begin`: its `handoff` is kept once
/// set, which each dialect writes for its own boolean). The store has a
/// `pool` of its database.
macro_rules! run_store {
    ($store:ty, begin: $begin:expr) => {
        #[async_trait::async_trait]
        impl axon_plan::RunStore for $store {
            async fn claim(&self, run_id: &str) -> Result<Claim, StoreError> {
                let token = ulid::Ulid::new().to_string();
                let holder =
                    sqlx::query("SELECT run_id, host, pid, heartbeat_ms FROM run_claims WHERE run_id = $1")
                        .bind(run_id)
                        .fetch_optional(&self.pool)
                        .await
                        .map_err(err)?
                        .map(|row| holder_of(&row));
                // The lease is taken when free or void (its holder is gone or stopped
                // beating), atomically: of replicas racing for it, one wins. The
                // heartbeat read is compared again in the statement, so a holder that
                // beat in between keeps it.
                let void_since = match holder.as_ref().and_then(|h| h.claim.as_ref()) {
                    Some((host, pid, beat)) if self.owner.may_take_over(host, *pid, *beat) => *beat + 1,
                    _ => now_ms() - CLAIM_STALE_MS,
                };
                let now = now_ms();
                let taken = sqlx::query(
                    "INSERT INTO run_claims (run_id, owner, host, pid, heartbeat_ms) VALUES ($1, $2, $3, $4, $5) \
                     ON CONFLICT (run_id) DO UPDATE SET owner = $2, host = $3, pid = $4, heartbeat_ms = $5 \
                     WHERE run_claims.heartbeat_ms < $6",
                )
                .bind(run_id)
                .bind(&token)
                .bind(&self.owner.host)
                .bind(i64::from(self.owner.pid))
                .bind(now)
                .bind(void_since)
                .execute(&self.pool)
                .await
                .map_err(err)?
                .rows_affected()
                    == 1;
                if !taken {
                    let (host, pid) = holder
                        .and_then(|h| h.claim)
                        .map(|(host, pid, _)| (host, pid))
                        .unwrap_or_default();
                    return Err(taken_by(run_id, &host, pid));
                }
                Ok(claim_held!(self.pool.clone(), run_id, token))
            }

            async fn begin(
                &self,
                run_id: &str,
                plan: &Plan,
                owner: &axon_core::Owner,
            ) -> Result<(), StoreError> {
                sqlx::query($begin)
                    .bind(run_id)
                    .bind(encode(plan)?)
                    .bind(now_ms())
                    .bind(self.handoff)
                    .bind(owner.tenant())
                    .execute(&self.pool)
                    .await
                    .map(|_| ())
                    .map_err(err)
            }

            async fn checkpoint(
                &self,
                run_id: &str,
                step: &axon_plan::StepOutcome,
            ) -> Result<(), axon_core::StoreError> {
                sqlx::query(
                    "INSERT INTO run_steps (run_id, step_index, outcome) VALUES ($1, $2, $3) \
                     ON CONFLICT (run_id, step_index) DO UPDATE SET outcome = excluded.outcome",
                )
                .bind(run_id)
                .bind(step.index as i64)
                .bind($crate::encode(step)?)
                .execute(&self.pool)
                .await
                .map(|_| ())
                .map_err($crate::err)
            }

            async fn load(
                &self,
                run_id: &str,
            ) -> Result<Option<axon_plan::RunRecord>, axon_core::StoreError> {
                use sqlx::Row as _;
                let Some(run) =
                    sqlx::query("SELECT plan, result, tenant FROM runs WHERE run_id = $1")
                        .bind(run_id)
                        .fetch_optional(&self.pool)
                        .await
                        .map_err($crate::err)?
                else {
                    return Ok(None);
                };
                let rows = sqlx::query(
                    "SELECT outcome FROM run_steps WHERE run_id = $1 ORDER BY step_index",
                )
                .bind(run_id)
                .fetch_all(&self.pool)
                .await
                .map_err($crate::err)?;
                $crate::run_record(
                    run_id,
                    run.get::<&str, _>("plan"),
                    run.get::<Option<&str>, _>("result"),
                    run.get::<Option<&str>, _>("tenant"),
                    rows.iter().map(|row| row.get::<&str, _>("outcome")),
                )
                .map(Some)
            }

            async fn finish(
                &self,
                run_id: &str,
                result: &axon_plan::PlanResult,
            ) -> Result<(), axon_core::StoreError> {
                sqlx::query("UPDATE runs SET result = $1, updated_at_ms = $2 WHERE run_id = $3")
                    .bind($crate::encode(result)?)
                    .bind($crate::now_ms())
                    .bind(run_id)
                    .execute(&self.pool)
                    .await
                    .map(|_| ())
                    .map_err($crate::err)
            }
        }
    };
}

/// The [`Claim`](axon_plan::Claim) of `$run_id` held as `$token` in `$pool`:
/// its heartbeat and its release, one statement each for both dialects.
macro_rules! claim_held {
    ($pool:expr, $run_id:expr, $token:expr) => {{
        let (pool, id, token) = ($pool, $run_id.to_string(), $token);
        $crate::held_claim(
            {
                let (pool, id, owner) = (pool.clone(), id.clone(), token.clone());
                move || {
                    let (pool, id, owner) = (pool.clone(), id.clone(), owner.clone());
                    Box::pin(async move {
                        let _ = sqlx::query(
                            "UPDATE run_claims SET heartbeat_ms = $1 WHERE run_id = $2 AND owner = $3",
                        )
                        .bind($crate::now_ms())
                        .bind(&id)
                        .bind(&owner)
                        .execute(&pool)
                        .await;
                    })
                }
            },
            Box::pin(async move {
                let _ = sqlx::query("DELETE FROM run_claims WHERE run_id = $1 AND owner = $2")
                    .bind(&id)
                    .bind(&token)
                    .execute(&pool)
                    .await;
            }),
        )
    }};
}

/// A run begun on SQLite, whose booleans are integers.
const SQLITE_BEGIN: &str = "INSERT INTO runs (run_id, plan, result, updated_at_ms, handoff, tenant) VALUES ($1, $2, NULL, $3, $4, $5) \
     ON CONFLICT (run_id) DO UPDATE SET plan = $2, result = NULL, updated_at_ms = $3, \
     handoff = max(handoff, $4)";

run_store!(SqliteStore, begin: SQLITE_BEGIN);

/// A run begun on PostgreSQL.
const PG_BEGIN: &str = "INSERT INTO runs (run_id, plan, result, updated_at_ms, handoff, tenant) VALUES ($1, $2, NULL, $3, $4, $5) \
     ON CONFLICT (run_id) DO UPDATE SET plan = $2, result = NULL, updated_at_ms = $3, \
     handoff = runs.handoff OR $4";

run_store!(PgStore, begin: PG_BEGIN);
