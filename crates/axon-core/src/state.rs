//! State that outlives one call and is shared by the calls an executor serves:
//! each dependency's circuit breaker, retry budget and latency (a breaker
//! opened by one request is seen by the next), and the response cache. A
//! dependency is a tool, an MCP server, or one key of a tool (an origin:
//! policy/dependency.rs); a tool's keys are kept in a bounded map ([`KeyedStates`]).
//! Each executor makes its own unless given one
//! (`ExecutorBuilder::policy_state`): executors that must see each other's
//! breakers are handed the same `Arc<PolicyState>`, and two executors in one
//! process (two servers, two tests) never share one by accident. Scale-out
//! adds a Redis-backed layer of the same operations across processes.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use smol_str::SmolStr;

use crate::policy::Policy;
use crate::policy::adaptive::LatencySketch;
use crate::policy::breaker::{Breaker, BreakerState};
use crate::policy::cache::ResponseCache;
use crate::policy::limit::{LimitPolicy, Limits};
use crate::policy::retry::budget::RetryBudget;

/// The per-tool part of the policy state.
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

impl ToolState {
    fn new(breaker: Breaker) -> Self {
        ToolState {
            breaker,
            budget: RetryBudget::default(),
            latency: LatencySketch::new(),
        }
    }
}

/// Breakers, budgets and the response cache: the policies' memory between
/// calls, in this process (the cluster's counterpart, across processes, is
/// the `axon-redis` crate).
pub struct PolicyState {
    tools: Mutex<HashMap<String, Arc<ToolState>>>,
    pub(crate) cache: ResponseCache<crate::outcome::Outcome>,
}

impl std::fmt::Debug for PolicyState {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PolicyState")
            .field("cache", &self.cache)
            .finish_non_exhaustive()
    }
}

/// Responses kept in the cache at most, over all tools.
pub const DEFAULT_CACHE_ENTRIES: u64 = 10_000;

impl PolicyState {
    /// A fresh, private state.
    pub fn new() -> Arc<PolicyState> {
        Self::with_cache_capacity(DEFAULT_CACHE_ENTRIES)
    }

    /// A fresh state whose cache holds at most `entries` responses.
    pub fn with_cache_capacity(entries: u64) -> Arc<PolicyState> {
        Arc::new(PolicyState {
            tools: Mutex::new(HashMap::new()),
            cache: ResponseCache::new(entries),
        })
    }

    /// The state of one tool, created on first use.
    pub fn tool(&self, name: &str) -> Arc<ToolState> {
        let mut tools = self.tools.lock().unwrap_or_else(|p| p.into_inner());
        tools
            .entry(name.to_string())
            .or_insert_with(|| Arc::new(ToolState::new(Breaker::new(name))))
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

/// One dependency's state as the pipeline uses it: breaker, budget and
/// latency, its limits, and its names.
pub(crate) struct KeyState {
    /// As the cluster's store names it: the tool's name, `server:<name>`, or
    /// `<tool> <key>`.
    pub(crate) name: SmolStr,
    /// The key, for provenance and `/v1/breakers`; `None` for a tool's own
    /// state.
    pub(crate) key: Option<SmolStr>,
    pub(crate) state: Arc<ToolState>,
    pub(crate) limits: Arc<Limits>,
    /// The policy of this key when it has its own layer (`[origins."…"]`).
    pub(crate) policy: Option<Arc<Policy>>,
}

impl KeyState {
    /// A state from the process-wide map (a tool's own, or a server's).
    pub(crate) fn named(
        state: &PolicyState,
        name: &str,
        key: Option<SmolStr>,
        limits: Arc<Limits>,
    ) -> Self {
        KeyState {
            name: SmolStr::from(name),
            key,
            state: state.tool(name),
            limits,
            policy: None,
        }
    }
}

/// Keys a tool keeps state for at most (an origin each, for `http_request`):
/// past it, the least recently used are forgotten, so that a scan of a
/// million hosts costs a bounded amount of memory.
pub const MAX_KEYS_PER_TOOL: u64 = 10_000;

/// A key nobody has called for this long is forgotten (its breaker, if open,
/// would be half-open long before: `breaker.open_ms` defaults to 30 s).
pub const KEY_IDLE: Duration = Duration::from_secs(600);

/// A tool's states by key: bounded in number ([`MAX_KEYS_PER_TOOL`]) and
/// expired when idle ([`KEY_IDLE`]). Each key has its own breaker (without a
/// gauge: a metric label per host would be unbounded), budget, latency and
/// limits.
pub(crate) struct KeyedStates {
    tool: SmolStr,
    limits: LimitPolicy,
    /// The policies of origins with a layer of their own.
    by_origin: HashMap<SmolStr, Arc<Policy>>,
    states: moka::sync::Cache<SmolStr, Arc<KeyState>, foldhash::fast::RandomState>,
}

impl KeyedStates {
    pub(crate) fn new(
        tool: &str,
        policy: &Policy,
        by_origin: HashMap<SmolStr, Arc<Policy>>,
    ) -> Self {
        KeyedStates {
            tool: SmolStr::from(tool),
            limits: policy.limits.clone(),
            by_origin,
            states: moka::sync::Cache::builder()
                .max_capacity(MAX_KEYS_PER_TOOL)
                .time_to_idle(KEY_IDLE)
                .build_with_hasher(Default::default()),
        }
    }

    /// The state of `key`, made on first use.
    pub(crate) fn get(&self, key: &SmolStr) -> Arc<KeyState> {
        self.states.get_with_by_ref(key, || {
            let name = SmolStr::from(format!("{} {key}", self.tool));
            let shown = format!("{key} ({})", self.tool);
            let policy = self.by_origin.get(key).cloned();
            let limits = policy.as_ref().map_or(&self.limits, |p| &p.limits);
            Arc::new(KeyState {
                state: Arc::new(ToolState::new(Breaker::keyed(SmolStr::from(shown)))),
                limits: Arc::new(Limits::new(limits)),
                policy,
                key: Some(key.clone()),
                name,
            })
        })
    }

    /// The state of `key` if it is kept.
    pub(crate) fn find(&self, key: &str) -> Option<Arc<KeyState>> {
        self.states.get(key)
    }

    /// Keys whose breaker is not closed, sorted, with their state and (while
    /// open) the time until a probe.
    pub(crate) fn not_closed(&self) -> Vec<(SmolStr, BreakerState, Option<Duration>)> {
        let mut out: Vec<_> = self
            .states
            .iter()
            .map(|(key, s)| {
                let breaker = &s.state.breaker;
                ((*key).clone(), breaker.state(), breaker.next_probe_in())
            })
            .filter(|(_, state, _)| *state != BreakerState::Closed)
            .collect();
        out.sort_by(|a, b| a.0.cmp(&b.0));
        out
    }

    /// Keys kept now (an estimate while evictions are pending).
    pub(crate) fn len(&self) -> u64 {
        self.states.run_pending_tasks();
        self.states.entry_count()
    }
}
