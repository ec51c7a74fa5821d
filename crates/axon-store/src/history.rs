//! The call history read back ([`HistoryStore`]) from either store: every
//! read first waits for the rows queued before it (reads see their own
//! writes); writes go through the writer (`writer.rs`, `batches.rs`). One
//! statement per read for both dialects, except the order of a group's
//! calls: SQLite's `rowid`, PostgreSQL's `seq`.

use async_trait::async_trait;
use axon_core::{HistoryEntry, HistoryStats, HistoryStore, StoreError};
use sqlx::Row as _;

use crate::{PgStore, SqliteStore, decode, err, history_stats};

/// One call's entry.
const BY_CALL_ID: &str = "SELECT entry FROM calls WHERE call_id = $1";
/// A group's counts. The casts make both dialects answer `BIGINT`s:
/// PostgreSQL sums a boolean only as a number, and sums a `BIGINT` into a
/// `NUMERIC`.
const STATS: &str = "SELECT count(*) AS total, \
     CAST(coalesce(sum(CAST(success AS INTEGER)), 0) AS BIGINT) AS ok, \
     CAST(coalesce(sum(CAST(retried AS INTEGER)), 0) AS BIGINT) AS retried, \
     CAST(coalesce(sum(duration_ms), 0) AS BIGINT) AS duration \
     FROM calls WHERE correlation_id = $1";

/// `impl HistoryStore for $store`, given the statement that reads a group's
/// calls in the order they were recorded.
macro_rules! history_in {
    ($store:ty, by_correlation: $by_correlation:expr) => {
        #[async_trait]
        impl HistoryStore for $store {
            async fn record(&self, entry: &HistoryEntry) -> Result<(), StoreError> {
                self.writer.record(entry).await
            }

            async fn by_correlation(
                &self,
                correlation_id: &str,
            ) -> Result<Vec<HistoryEntry>, StoreError> {
                self.writer.flush().await?;
                let rows = sqlx::query($by_correlation)
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
                let row = sqlx::query(BY_CALL_ID)
                    .bind(call_id)
                    .fetch_optional(&self.pool)
                    .await
                    .map_err(err)?;
                row.map(|row| decode(row.get::<&str, _>("entry")))
                    .transpose()
            }

            async fn stats(&self, correlation_id: &str) -> Result<HistoryStats, StoreError> {
                self.writer.flush().await?;
                let row = sqlx::query(STATS)
                    .bind(correlation_id)
                    .fetch_one(&self.pool)
                    .await
                    .map_err(err)?;
                Ok(history_stats(
                    row.get("total"),
                    row.get("ok"),
                    row.get("retried"),
                    row.get("duration"),
                ))
            }
        }
    };
}

history_in!(SqliteStore, by_correlation:
    "SELECT entry FROM calls WHERE correlation_id = $1 ORDER BY rowid");
history_in!(PgStore, by_correlation:
    "SELECT entry FROM calls WHERE correlation_id = $1 ORDER BY seq");
