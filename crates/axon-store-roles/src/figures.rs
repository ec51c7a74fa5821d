//! Figures read back from the call history: per-tool figures for
//! `axon stats` and `GET /v1/stats` ([`ToolFigures`]), and the recent
//! durations a new process seeds its latency sketches with
//! ([`RecentLatencies`]). Two roles, because their consumers differ: the
//! server shows figures, the CLI's wiring seeds the executor.

use async_trait::async_trait;
use axon_core::StoreError;

/// The newest history rows [`RecentLatencies::recent_latencies`] reads at most.
pub const RECENT_LATENCY_ROWS: i64 = 50_000;

/// Figures per tool over the history kept.
#[async_trait]
pub trait ToolFigures: Send + Sync + 'static {
    /// Figures per tool over the history kept, sorted by tool.
    async fn tool_stats(&self) -> Result<Vec<ToolStats>, StoreError>;
}

/// Durations of recent calls, so that `"auto"` timeouts and hedges start from
/// what earlier processes saw.
#[async_trait]
pub trait RecentLatencies: Send + Sync + 'static {
    /// The durations (ms) of each tool's last `per_tool` calls that succeeded at
    /// the first attempt since `since_ms` (ms since the epoch), among the newest
    /// [`RECENT_LATENCY_ROWS`] rows, oldest first.
    async fn recent_latencies(
        &self,
        per_tool: u32,
        since_ms: i64,
    ) -> Result<Vec<(String, Vec<u64>)>, StoreError>;
}

/// Figures of one tool over the history kept (`axon stats`).
#[derive(Clone, Debug, PartialEq, serde::Serialize)]
pub struct ToolStats {
    /// The tool.
    pub tool: String,
    /// Calls recorded.
    pub calls: u64,
    /// Calls that succeeded.
    pub succeeded: u64,
    /// `succeeded / calls`.
    pub success_rate: f64,
    /// Median duration, ms.
    pub p50_ms: u64,
    /// 95th percentile duration, ms.
    pub p95_ms: u64,
    /// Calls that needed retries.
    pub retried: u64,
}
