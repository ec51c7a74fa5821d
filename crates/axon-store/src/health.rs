//! Whether the store can be written now ([`Health`], `/healthz`), in
//! either store: a row written to `health`, and on SQLite the file's own
//! permission bits first.

use async_trait::async_trait;
use axon_core::StoreError;
use axon_store_roles::Health;

use crate::{PgStore, SqliteStore, err, now_ms};

/// The health row written: one statement for both dialects (SQLite has
/// PostgreSQL's upsert).
const BEAT: &str =
    "INSERT INTO health (id, at_ms) VALUES (1, $1) ON CONFLICT (id) DO UPDATE SET at_ms = $1";

#[async_trait]
impl Health for SqliteStore {
    async fn check_writable(&self) -> Result<(), StoreError> {
        // Root writes through permission bits, and an open handle writes on after a
        // chmod: so a file made read-only counts as unwritable whoever runs us.
        let meta = std::fs::metadata(&self.path).map_err(|e| {
            StoreError::unavailable_with(format!("{}: {e}", self.path.display()), e)
        })?;
        if meta.permissions().readonly() {
            return Err(StoreError::unavailable(format!(
                "{} is read-only",
                self.path.display()
            )));
        }
        sqlx::query(BEAT)
            .bind(now_ms())
            .execute(&self.pool)
            .await
            .map(|_| ())
            .map_err(err)
    }

    fn describe(&self) -> String {
        format!("sqlite:{}", self.path.display())
    }
}

#[async_trait]
impl Health for PgStore {
    async fn check_writable(&self) -> Result<(), StoreError> {
        sqlx::query(BEAT)
            .bind(now_ms())
            .execute(&self.pool)
            .await
            .map(|_| ())
            .map_err(err)
    }

    fn describe(&self) -> String {
        self.target.clone()
    }
}
