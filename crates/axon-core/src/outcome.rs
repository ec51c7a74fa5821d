//! What the policies produce for one call before it becomes a
//! [`CallResult`](crate::result::CallResult): the answer or the error, the
//! attempts with each retry's reason and delay, and where the data came from. The
//! cache shares one between identical concurrent calls (single-flight), hence
//! `Clone`.

use serde_json::Value;
use tokio::time::Instant;

use crate::error::ToolError;
use crate::result::Provenance;

/// The policies' outcome of one call.
#[derive(Clone, Debug)]
pub(crate) struct Outcome {
    pub(crate) result: Result<Value, ToolError>,
    pub(crate) attempts: u32,
    pub(crate) reasons: Vec<String>,
    pub(crate) delays_ms: Vec<u64>,
    pub(crate) provenance: Provenance,
    /// When the tool's answer came (the attempt's end, read once), when the
    /// call ends with it; `None` when the pipeline reads the clock itself.
    pub(crate) answered_at: Option<Instant>,
}

impl Outcome {
    /// A failure before any attempt (bad arguments, a bad policy, cancelled).
    pub(crate) fn failed(error: ToolError) -> Self {
        Outcome {
            result: Err(error),
            attempts: 0,
            reasons: Vec::new(),
            delays_ms: Vec::new(),
            provenance: Provenance::none(),
            answered_at: None,
        }
    }
}
