//! What the opener does to either store beside the calls ([`Upkeep`]):
//! prune by the retention rules (`pruning.rs`), wait for the queued history,
//! and close (the writer first, then the pool).

use async_trait::async_trait;
use axon_core::StoreError;
use axon_store_roles::Upkeep;

use crate::{PgStore, SqliteStore, err};

#[async_trait]
impl Upkeep for SqliteStore {
    /// Drop history older than `max_age` and beyond `max_calls`.
    async fn prune(&self) -> Result<(), StoreError> {
        self.writer.flush().await?;
        let mut connection = self.pool.acquire().await.map_err(err)?;
        crate::pruning::sqlite(&mut connection, &self.retention).await
    }

    async fn flush(&self) -> Result<(), StoreError> {
        self.writer.flush().await
    }

    /// Commit the history queued so far, then close the pool (flushing the WAL). Records after
    /// this fail.
    async fn close(&self) {
        self.writer.close().await;
        self.pool.close().await;
    }
}

#[async_trait]
impl Upkeep for PgStore {
    async fn prune(&self) -> Result<(), StoreError> {
        self.writer.flush().await?;
        crate::pruning::postgres(&self.pool, &self.retention).await
    }

    async fn flush(&self) -> Result<(), StoreError> {
        self.writer.flush().await
    }

    /// Commit the history queued so far, then close the pool. Records after
    /// this fail.
    async fn close(&self) {
        self.writer.close().await;
        self.pool.close().await;
    }
}
