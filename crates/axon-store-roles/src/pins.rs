//! Imported MCP tools' pins (`axon_mcp::pin`) as rows: the pin is JSON whose
//! shape is axon-mcp's, so the store keeps it whole and this crate need not
//! link axon-mcp (`axon_server::StorePins` reads them as pins).

use async_trait::async_trait;
use axon_core::StoreError;

/// The pins in the store. They live there so that every replica holds a
/// changed tool and an acceptance on one reaches all.
#[async_trait]
pub trait PinRows: Send + Sync + 'static {
    /// The pin (JSON: `axon_mcp::pin::Pin`) of the imported tool `tool`, if
    /// one was made.
    async fn pin_get(&self, tool: &str) -> Result<Option<String>, StoreError>;

    /// Write the pin `entry` (JSON) of `tool`.
    async fn pin_put(&self, tool: &str, entry: &str) -> Result<(), StoreError>;

    /// Every pin (JSON), by tool name.
    async fn pin_list(&self) -> Result<Vec<String>, StoreError>;
}
