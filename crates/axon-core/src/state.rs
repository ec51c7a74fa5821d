//! State that outlives one call and is shared by every executor of the process:
//! each tool's circuit breaker and retry budget (a breaker opened by one
//! request is seen by the next, whichever executor serves it), and the response
//! cache. `SharedState::global()` is the process-wide default; tests that need
//! isolation make their own with `SharedState::new()`. Scale-out replaces this with
//! a Redis-backed implementation of the same operations.

use std::collections::HashMap;
use std::sync::{Arc, LazyLock, Mutex};

use crate::policy::adaptive::LatencySketch;
use crate::policy::breaker::{Breaker, BreakerState};
use crate::policy::budget::RetryBudget;
use crate::policy::cache::ResponseCache;

/// The per-tool part of the shared state.
#[derive(Debug)]
pub struct ToolState {
    /// The tool's circuit breaker.
    pub breaker: Breaker,
    /// The tool's retry budget.
    pub budget: RetryBudget,
    /// The tool's recent latency, which `"auto"` timeouts and hedges are chosen
    /// from.
    pub latency: LatencySketch,
}

/// Breakers, budgets and the response cache.
pub struct SharedState {
    tools: Mutex<HashMap<String, Arc<ToolState>>>,
    pub(crate) cache: ResponseCache<crate::outcome::Outcome>,
}

impl std::fmt::Debug for SharedState {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SharedState")
            .field("cache", &self.cache)
            .finish_non_exhaustive()
    }
}

/// Responses kept in the cache at most, over all tools.
pub const DEFAULT_CACHE_ENTRIES: u64 = 10_000;

static GLOBAL: LazyLock<Arc<SharedState>> = LazyLock::new(SharedState::new);

impl SharedState {
    /// A fresh, private state.
    pub fn new() -> Arc<SharedState> {
        Self::with_cache_capacity(DEFAULT_CACHE_ENTRIES)
    }

    /// A fresh state whose cache holds at most `entries` responses.
    pub fn with_cache_capacity(entries: u64) -> Arc<SharedState> {
        Arc::new(SharedState {
            tools: Mutex::new(HashMap::new()),
            cache: ResponseCache::new(entries),
        })
    }

    /// The process-wide state every executor uses unless told otherwise.
    pub fn global() -> Arc<SharedState> {
        GLOBAL.clone()
    }

    /// The state of one tool, created on first use.
    pub fn tool(&self, name: &str) -> Arc<ToolState> {
        let mut tools = self.tools.lock().unwrap_or_else(|p| p.into_inner());
        tools
            .entry(name.to_string())
            .or_insert_with(|| {
                Arc::new(ToolState {
                    breaker: Breaker::new(name),
                    budget: RetryBudget::default(),
                    latency: LatencySketch::new(),
                })
            })
            .clone()
    }

    /// Every breaker and its state, sorted by tool.
    pub fn breakers(&self) -> Vec<(String, BreakerState)> {
        let tools = self.tools.lock().unwrap_or_else(|p| p.into_inner());
        let mut out: Vec<_> = tools
            .iter()
            .map(|(n, t)| (n.clone(), t.breaker.state()))
            .collect();
        out.sort_by(|a, b| a.0.cmp(&b.0));
        out
    }

    /// Forget every cached response.
    pub fn clear_cache(&self) {
        self.cache.clear();
    }
}
