//! Idempotency keys ([`Idempotency`]) in either store: a key's row holds the
//! fingerprint of the request that claimed it and, once it answered, the
//! answer. One body per statement for both dialects (`$n` placeholders,
//! numbered in order of first appearance, as PostgreSQL does).

use async_trait::async_trait;
use axon_core::StoreError;
use axon_plan::{Idempotency, IdempotencyBegin};
use sqlx::Row as _;

use crate::{IDEMPOTENCY_STALE_MS, IDEMPOTENCY_TTL_MS, err, now_ms};

macro_rules! keys_in {
    ($store:ty) => {
        #[async_trait]
        impl Idempotency for $store {
            async fn idempotency_begin(
                &self,
                key: &str,
                fingerprint: &str,
            ) -> Result<IdempotencyBegin, StoreError> {
                let now = now_ms();
                // Expired answers and stale claims go; then the key is claimed,
                // or what holds it is read. Each statement is atomic; between
                // them another process may claim first, which the read then sees.
                sqlx::query(
                    "DELETE FROM idempotency WHERE key = $1 AND \
                     (created_at_ms < $2 OR (result IS NULL AND created_at_ms < $3))",
                )
                .bind(key)
                .bind(now - IDEMPOTENCY_TTL_MS)
                .bind(now - IDEMPOTENCY_STALE_MS)
                .execute(&self.pool)
                .await
                .map_err(err)?;
                let claimed = sqlx::query(
                    "INSERT INTO idempotency (key, fingerprint, result, created_at_ms) \
                     VALUES ($1, $2, NULL, $3) ON CONFLICT (key) DO NOTHING",
                )
                .bind(key)
                .bind(fingerprint)
                .bind(now)
                .execute(&self.pool)
                .await
                .map_err(err)?;
                if claimed.rows_affected() == 1 {
                    return Ok(IdempotencyBegin::New);
                }
                let row = sqlx::query("SELECT fingerprint, result FROM idempotency WHERE key = $1")
                    .bind(key)
                    .fetch_optional(&self.pool)
                    .await
                    .map_err(err)?;
                Ok(found(
                    row.as_ref()
                        .map(|row| (row.get::<&str, _>("fingerprint"), row.get("result"))),
                    fingerprint,
                ))
            }

            async fn idempotency_finish(&self, key: &str, result: &str) -> Result<(), StoreError> {
                sqlx::query("UPDATE idempotency SET result = $1 WHERE key = $2")
                    .bind(result)
                    .bind(key)
                    .execute(&self.pool)
                    .await
                    .map(|_| ())
                    .map_err(err)
            }

            async fn idempotency_abandon(&self, key: &str) -> Result<(), StoreError> {
                sqlx::query("DELETE FROM idempotency WHERE key = $1 AND result IS NULL")
                    .bind(key)
                    .execute(&self.pool)
                    .await
                    .map(|_| ())
                    .map_err(err)
            }
        }
    };
}

keys_in!(crate::SqliteStore);
keys_in!(crate::PgStore);

/// What holds an idempotency key that could not be claimed: `found` is its
/// (fingerprint, result), if the row is still there.
fn found(found: Option<(&str, Option<String>)>, fingerprint: &str) -> IdempotencyBegin {
    match found {
        // Abandoned between the two statements: claim it next time.
        None => IdempotencyBegin::InFlight,
        Some((theirs, _)) if theirs != fingerprint => IdempotencyBegin::Mismatch,
        Some((_, Some(result))) => IdempotencyBegin::Replay(result),
        Some((_, None)) => IdempotencyBegin::InFlight,
    }
}
