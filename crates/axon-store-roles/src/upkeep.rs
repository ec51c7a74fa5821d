//! What the process that opened a store does to it: drop what retention no
//! longer keeps, wait for queued history, close it on the way out.

use async_trait::async_trait;
use axon_core::StoreError;

/// The opener's hold on a store's lifetime.
#[async_trait]
pub trait Upkeep: Send + Sync + 'static {
    /// Drop history and runs beyond the retention rules.
    async fn prune(&self) -> Result<(), StoreError>;

    /// Wait until the history queued so far is committed (reads do this first).
    async fn flush(&self) -> Result<(), StoreError>;

    /// Commit the history queued so far, then close the connections. Records
    /// after this fail.
    async fn close(&self);
}
