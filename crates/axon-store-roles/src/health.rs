//! The store's part of `/healthz` and of messages that name where data lives.

use async_trait::async_trait;
use axon_core::StoreError;

/// Whether the store works, and where it is.
#[async_trait]
pub trait Health: Send + Sync + 'static {
    /// Whether the store takes a write now.
    async fn check_writable(&self) -> Result<(), StoreError>;

    /// Where the data lives, for health reports and messages (`sqlite:/path`).
    fn describe(&self) -> String;
}
