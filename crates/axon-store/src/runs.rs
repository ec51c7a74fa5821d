//! The plan runs' rows (`axon_plan::RunStore`): one body per statement for
//! both stores. The statements use `$n` placeholders, which SQLite numbers in
//! order of first appearance as PostgreSQL does (so each statement names them
//! in increasing order). What the dialects write differently — the run's
//! upsert and the claim of a run — each store passes in.

/// `impl RunStore for $store`, with the methods the two dialects share and
/// the store's own (`{ … }`: `begin`, `claim`). The store has a
/// `pool` of its database.
macro_rules! run_store {
    ($store:ty, { $($own:tt)* }) => {
        #[async_trait::async_trait]
        impl axon_plan::RunStore for $store {
            $($own)*

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

pub(crate) use run_store;

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

pub(crate) use claim_held;
