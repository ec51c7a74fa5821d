//! browser_act's translated steps (`axon_browser::act::cache`) as rows: the
//! entry is JSON whose shape is axon-browser's, so the store keeps it whole
//! and this crate need not link the browser (the CLI's wiring adapts it).

use async_trait::async_trait;
use axon_core::StoreError;

/// Act cache entries a store keeps at most (the most recently stored).
pub const ACT_CACHE_ENTRIES: usize = 10_000;

/// The act cache in the store, shared by every process on it.
#[async_trait]
pub trait ActRows: Send + Sync + 'static {
    /// The entry (JSON) under `key`, if any.
    async fn act_get(&self, key: &str) -> Result<Option<String>, StoreError>;

    /// Store the entry `entry` (JSON) under `key`, keeping the
    /// [`ACT_CACHE_ENTRIES`] most recently stored.
    async fn act_put(&self, key: &str, entry: &str) -> Result<(), StoreError>;

    /// Drop the entry under `key`.
    async fn act_remove(&self, key: &str) -> Result<(), StoreError>;
}
