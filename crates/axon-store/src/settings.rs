//! How a store is opened: when history reaches the disk ([`Durability`]),
//! how much of it is kept ([`Retention`]), and how long idempotency keys live.
//! What a store does is in its roles (`axon_store_roles`), one file each here.

use std::time::Duration;

use axon_core::UnknownName;

/// When a call's history entry is on disk, relative to its result reaching the
/// caller.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Durability {
    /// The entry is committed before the call returns (the default): a crash
    /// after a caller saw a result never loses its entry. Concurrent calls share
    /// commits (group commit), so the cost is one commit per batch, not per call.
    #[default]
    Sync,
    /// The entry is queued and committed in the next batch: higher throughput,
    /// but a crash loses the calls of the batch being written.
    Async,
}

impl std::str::FromStr for Durability {
    type Err = UnknownName;
    fn from_str(s: &str) -> Result<Self, UnknownName> {
        match s {
            "sync" => Ok(Durability::Sync),
            "async" => Ok(Durability::Async),
            other => Err(UnknownName {
                given: other.to_string(),
                what: "durability",
                expected: "sync or async",
            }),
        }
    }
}

/// How much history to keep.
#[derive(Clone, Copy, Debug)]
pub struct Retention {
    /// Entries kept per correlation id; the oldest go first (FIFO).
    pub max_per_correlation: u64,
    /// Entries kept in all; the oldest go first. 0 = no limit.
    pub max_calls: u64,
    /// Entries older than this are dropped, and runs not updated for as long.
    /// `None` = no limit.
    pub max_age: Option<Duration>,
    /// Runs kept (with their checkpoints); the least recently updated go first.
    /// 0 = no limit.
    pub max_runs: u64,
}

impl Default for Retention {
    fn default() -> Self {
        Retention {
            max_per_correlation: 100,
            max_calls: 1_000_000,
            max_age: Some(Duration::from_secs(30 * 24 * 3600)),
            max_runs: 10_000,
        }
    }
}

/// How long (ms) an idempotency key's answer is kept and replayed: a day.
/// Older ones are pruned when the store opens.
pub const IDEMPOTENCY_TTL_MS: i64 = 24 * 3600 * 1000;

/// A claimed key without an answer this old (ms) is taken over: its request
/// died with its process.
pub const IDEMPOTENCY_STALE_MS: i64 = 10 * 60 * 1000;
