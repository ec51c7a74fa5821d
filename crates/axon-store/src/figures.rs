//! Per-tool figures ([`ToolFigures`]) in either store: one statement reads
//! every kept call's tool, outcome and duration, sorted, and the figures are
//! counted here. The recent durations ([`RecentLatencies`](axon_store_roles::RecentLatencies))
//! read only the newest rows, which each dialect finds its own way
//! (below, one body each).

use async_trait::async_trait;
use axon_core::StoreError;
use axon_store_roles::{RECENT_LATENCY_ROWS, RecentLatencies, ToolFigures, ToolStats};
use sqlx::Row as _;

use crate::{PgStore, SqliteStore, err, latencies_of, tool_stats_of};

const CALLS: &str =
    "SELECT tool, success, retried, duration_ms FROM calls ORDER BY tool, duration_ms";

macro_rules! figures_in {
    ($store:ty) => {
        #[async_trait]
        impl ToolFigures for $store {
            async fn tool_stats(&self) -> Result<Vec<ToolStats>, StoreError> {
                self.writer.flush().await?;
                let rows = sqlx::query(CALLS)
                    .fetch_all(&self.pool)
                    .await
                    .map_err(err)?;
                Ok(tool_stats_of(rows.iter().map(|row| {
                    (
                        row.get::<String, _>("tool"),
                        row.get::<bool, _>("success"),
                        row.get::<bool, _>("retried"),
                        row.get::<i64, _>("duration_ms"),
                    )
                })))
            }
        }
    };
}

figures_in!(crate::SqliteStore);
figures_in!(crate::PgStore);

#[async_trait]
impl RecentLatencies for SqliteStore {
    async fn recent_latencies(
        &self,
        per_tool: u32,
        since_ms: i64,
    ) -> Result<Vec<(String, Vec<u64>)>, StoreError> {
        self.writer.flush().await?;
        // Only the newest rows are read (rowids grow with each insert), so that a
        // process starting over a large history does not scan a day of it.
        let rows = sqlx::query(
            "SELECT tool, duration_ms FROM ( \
                 SELECT tool, duration_ms, started_at_ms, ROW_NUMBER() OVER \
                     (PARTITION BY tool ORDER BY started_at_ms DESC) AS n \
                 FROM calls WHERE rowid > (SELECT max(rowid) FROM calls) - ? \
                     AND started_at_ms >= ? AND success = 1 AND retried = 0) \
             WHERE n <= ? ORDER BY tool, started_at_ms",
        )
        .bind(RECENT_LATENCY_ROWS)
        .bind(since_ms)
        .bind(i64::from(per_tool))
        .fetch_all(&self.pool)
        .await
        .map_err(err)?;
        Ok(latencies_of(rows.iter().map(|row| {
            (
                row.get::<String, _>("tool"),
                row.get::<i64, _>("duration_ms"),
            )
        })))
    }
}

#[async_trait]
impl RecentLatencies for PgStore {
    async fn recent_latencies(
        &self,
        per_tool: u32,
        since_ms: i64,
    ) -> Result<Vec<(String, Vec<u64>)>, StoreError> {
        self.writer.flush().await?;
        let rows = sqlx::query(
            "SELECT tool, duration_ms FROM ( \
                 SELECT tool, duration_ms, started_at_ms, ROW_NUMBER() OVER \
                     (PARTITION BY tool ORDER BY started_at_ms DESC) AS n \
                 FROM calls WHERE seq > (SELECT coalesce(max(seq), 0) FROM calls) - $1 \
                     AND started_at_ms >= $2 AND success AND NOT retried) t \
             WHERE n <= $3 ORDER BY tool, started_at_ms",
        )
        .bind(RECENT_LATENCY_ROWS)
        .bind(since_ms)
        .bind(i64::from(per_tool))
        .fetch_all(&self.pool)
        .await
        .map_err(err)?;
        Ok(crate::latencies_of(rows.iter().map(|row| {
            (
                row.get::<String, _>("tool"),
                row.get::<i64, _>("duration_ms"),
            )
        })))
    }
}
