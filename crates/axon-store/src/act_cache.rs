//! browser_act's cache ([`ActRows`]) in either store: one row per key, the
//! entry as JSON (its shape is axon-browser's). One body serves SQLite and
//! PostgreSQL (`$n` placeholders, numbered in order of first appearance).

use async_trait::async_trait;
use axon_core::StoreError;
use axon_store_roles::{ACT_CACHE_ENTRIES, ActRows};

use crate::{err, now_ms};

const GET: &str = "SELECT entry FROM act_cache WHERE key = $1";
const PUT: &str = "INSERT INTO act_cache (key, entry, updated_at_ms) VALUES ($1, $2, $3) \
     ON CONFLICT (key) DO UPDATE SET entry = $2, updated_at_ms = $3";
/// Keeps the `$1` most recently stored.
const TRIM: &str = "DELETE FROM act_cache WHERE updated_at_ms < \
     (SELECT updated_at_ms FROM act_cache ORDER BY updated_at_ms DESC LIMIT 1 OFFSET $1)";
const REMOVE: &str = "DELETE FROM act_cache WHERE key = $1";

macro_rules! act_cache_in {
    ($store:ty) => {
        #[async_trait]
        impl ActRows for $store {
            async fn act_get(&self, key: &str) -> Result<Option<String>, StoreError> {
                sqlx::query_scalar(GET)
                    .bind(key)
                    .fetch_optional(&self.pool)
                    .await
                    .map_err(err)
            }

            async fn act_put(&self, key: &str, entry: &str) -> Result<(), StoreError> {
                sqlx::query(PUT)
                    .bind(key)
                    .bind(entry)
                    .bind(now_ms())
                    .execute(&self.pool)
                    .await
                    .map_err(err)?;
                sqlx::query(TRIM)
                    .bind(ACT_CACHE_ENTRIES as i64)
                    .execute(&self.pool)
                    .await
                    .map(|_| ())
                    .map_err(err)
            }

            async fn act_remove(&self, key: &str) -> Result<(), StoreError> {
                sqlx::query(REMOVE)
                    .bind(key)
                    .execute(&self.pool)
                    .await
                    .map(|_| ())
                    .map_err(err)
            }
        }
    };
}

act_cache_in!(crate::SqliteStore);
act_cache_in!(crate::PgStore);
