//! Per-tool figures ([`ToolFigures`]) in either store: one statement reads
//! every kept call's tool, outcome and duration, sorted, and the figures are
//! counted here. The recent durations ([`RecentLatencies`](axon_store_roles::RecentLatencies))
//! read only the newest rows, which each dialect finds its own way
//! (`sqlite.rs`, `postgres.rs`).

use async_trait::async_trait;
use axon_core::StoreError;
use axon_store_roles::{ToolFigures, ToolStats};
use sqlx::Row as _;

use crate::{err, tool_stats_of};

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
