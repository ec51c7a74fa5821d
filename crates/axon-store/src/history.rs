//! The call history read back ([`HistoryStore`]) from either store: every
//! read first waits for the rows queued before it (reads see their own
//! writes); writes go through the writer (`writer.rs`, `batches.rs`).

use async_trait::async_trait;
use axon_core::{HistoryEntry, HistoryStats, HistoryStore, StoreError};
use sqlx::Row as _;

use crate::{PgStore, SqliteStore, decode, err, history_stats};

#[async_trait]
impl HistoryStore for SqliteStore {
    async fn record(&self, entry: &HistoryEntry) -> Result<(), StoreError> {
        self.writer.record(entry).await
    }

    async fn by_correlation(&self, correlation_id: &str) -> Result<Vec<HistoryEntry>, StoreError> {
        self.writer.flush().await?;
        let rows = sqlx::query("SELECT entry FROM calls WHERE correlation_id = ? ORDER BY rowid")
            .bind(correlation_id)
            .fetch_all(&self.pool)
            .await
            .map_err(err)?;
        rows.iter()
            .map(|row| decode(row.get::<&str, _>("entry")))
            .collect()
    }

    async fn by_call_id(&self, call_id: &str) -> Result<Option<HistoryEntry>, StoreError> {
        self.writer.flush().await?;
        let row = sqlx::query("SELECT entry FROM calls WHERE call_id = ?")
            .bind(call_id)
            .fetch_optional(&self.pool)
            .await
            .map_err(err)?;
        row.map(|row| decode(row.get::<&str, _>("entry")))
            .transpose()
    }

    async fn stats(&self, correlation_id: &str) -> Result<HistoryStats, StoreError> {
        self.writer.flush().await?;
        let row = sqlx::query(
            "SELECT count(*) AS total, coalesce(sum(success), 0) AS ok, coalesce(sum(retried), 0) AS retried, \
             coalesce(sum(duration_ms), 0) AS duration FROM calls WHERE correlation_id = ?",
        )
        .bind(correlation_id)
        .fetch_one(&self.pool)
        .await
        .map_err(err)?;
        let (total, ok, retried, duration): (i64, i64, i64, i64) = (
            row.get("total"),
            row.get("ok"),
            row.get("retried"),
            row.get("duration"),
        );
        Ok(history_stats(total, ok, retried, duration))
    }
}

#[async_trait]
impl HistoryStore for PgStore {
    async fn record(&self, entry: &HistoryEntry) -> Result<(), StoreError> {
        self.writer.record(entry).await
    }

    async fn by_correlation(&self, correlation_id: &str) -> Result<Vec<HistoryEntry>, StoreError> {
        self.writer.flush().await?;
        let rows = sqlx::query("SELECT entry FROM calls WHERE correlation_id = $1 ORDER BY seq")
            .bind(correlation_id)
            .fetch_all(&self.pool)
            .await
            .map_err(err)?;
        rows.iter()
            .map(|row| decode(row.get::<&str, _>("entry")))
            .collect()
    }

    async fn by_call_id(&self, call_id: &str) -> Result<Option<HistoryEntry>, StoreError> {
        self.writer.flush().await?;
        let row = sqlx::query("SELECT entry FROM calls WHERE call_id = $1")
            .bind(call_id)
            .fetch_optional(&self.pool)
            .await
            .map_err(err)?;
        row.map(|row| decode(row.get::<&str, _>("entry")))
            .transpose()
    }

    async fn stats(&self, correlation_id: &str) -> Result<HistoryStats, StoreError> {
        self.writer.flush().await?;
        let row = sqlx::query(
            "SELECT count(*) AS total, coalesce(sum(success::int), 0)::bigint AS ok, \
             coalesce(sum(retried::int), 0)::bigint AS retried, \
             coalesce(sum(duration_ms), 0)::bigint AS duration FROM calls WHERE correlation_id = $1",
        )
        .bind(correlation_id)
        .fetch_one(&self.pool)
        .await
        .map_err(err)?;
        let (total, ok, retried, duration): (i64, i64, i64, i64) = (
            row.get("total"),
            row.get("ok"),
            row.get("retried"),
            row.get("duration"),
        );
        Ok(crate::history_stats(total, ok, retried, duration))
    }
}
