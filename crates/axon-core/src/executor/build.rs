//! Building an executor: each tool's policy resolved from its layers
//! (defaults → its MCP server's → its own → each origin's), and the state of
//! the dependencies it reaches.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use serde_json::Value;
use smol_str::SmolStr;

use super::{DEFAULT_MAX_PARALLEL, Executor, Inner, ToolEntry};
use crate::approval::{ApprovalStore, InMemoryApprovals};
use crate::events::ToolMetrics;
use crate::history::{HistoryStore, InMemoryHistory};
use crate::policy::breaker::SharedBreakers;
use crate::policy::cache::SharedCache;
use crate::policy::chaos::ChaosDice;
use crate::policy::dependency::{self, Dependency};
use crate::policy::limit::Limits;
use crate::policy::retry::budget::SharedBudget;
use crate::policy::{KeyPolicy, Policy, PolicyError};
use crate::registry::{RegisteredTool, ToolRegistry};
use crate::state::{KeyState, KeyedStates, PolicyState};

/// Why an executor could not be built.
#[derive(Debug, Clone, thiserror::Error)]
pub enum BuildError {
    /// A policy layer is invalid.
    #[error("{scope}: {source}")]
    Policy {
        /// `defaults` or `tools.<name>`.
        scope: String,
        /// The bad key.
        source: PolicyError,
    },
    /// A per-tool policy names a tool that is not registered.
    #[error("tools.{0}: no tool of that name is registered")]
    UnknownTool(String),
}

/// Configures an [`Executor`].
pub struct ExecutorBuilder {
    registry: ToolRegistry,
    defaults: Vec<Value>,
    tool_policies: HashMap<String, Value>,
    server_policies: HashMap<String, Value>,
    origin_policies: Vec<(String, Value)>,
    state: Option<Arc<PolicyState>>,
    history: Option<Arc<dyn HistoryStore>>,
    seed: Option<u64>,
    max_parallel: usize,
    shared_breakers: Option<Arc<dyn SharedBreakers>>,
    shared_budget: Option<Arc<dyn SharedBudget>>,
    shared_cache: Option<Arc<dyn SharedCache>>,
    approvals: Option<Arc<dyn ApprovalStore>>,
}

impl ExecutorBuilder {
    /// The response cache shared by every replica (Redis, `axon-redis`): a
    /// success cached on one replica answers the others, and identical calls
    /// on several replicas share one execution. The process's own cache stays
    /// in front of it.
    pub fn shared_cache(mut self, shared: Arc<dyn SharedCache>) -> Self {
        self.shared_cache = Some(shared);
        self
    }

    /// Breakers shared by every replica (Redis, `axon-redis`): they decide
    /// while they answer; the process's own breakers decide when they do not.
    pub fn shared_breakers(mut self, shared: Arc<dyn SharedBreakers>) -> Self {
        self.shared_breakers = Some(shared);
        self
    }

    /// The cluster's retry budget (Redis, `axon-redis`): the retries of
    /// every replica together stay within it.
    pub fn shared_budget(mut self, shared: Arc<dyn SharedBudget>) -> Self {
        self.shared_budget = Some(shared);
        self
    }

    /// The cluster's breakers, retry budget and response cache, from one
    /// store (`axon_redis::RedisShared`).
    pub fn shared_store<S>(self, store: Arc<S>) -> Self
    where
        S: SharedBreakers + SharedBudget + SharedCache,
    {
        self.shared_breakers(store.clone())
            .shared_budget(store.clone())
            .shared_cache(store)
    }

    /// Policy keys for every tool (`[defaults]`); may be called several times, later
    /// layers win.
    pub fn defaults(mut self, policy: Value) -> Self {
        self.defaults.push(policy);
        self
    }

    /// Policy keys for one tool (`[tools.<name>]`), over the defaults.
    pub fn tool_policy(mut self, tool: impl Into<String>, policy: Value) -> Self {
        self.tool_policies.insert(tool.into(), policy);
        self
    }

    /// Policy keys for every tool of an MCP server (`[[mcp.servers]]
    /// policy`): over the defaults, under each tool's own table.
    pub fn server_policy(mut self, server: impl Into<String>, policy: Value) -> Self {
        self.server_policies.insert(server.into(), policy);
        self
    }

    /// Policy keys for one origin (`[origins."https://api.github.com"]`),
    /// over the tool's, for the calls of tools keyed by origin
    /// (`http_request`, `browser_navigate`) that reach it: its own rate
    /// limit, timeout, breaker.
    pub fn origin_policy(mut self, origin: impl Into<String>, policy: Value) -> Self {
        self.origin_policies.push((origin.into(), policy));
        self
    }

    /// Use this policy state instead of a fresh one: executors handed the
    /// same `Arc` see each other's breakers, budgets and cache.
    pub fn policy_state(mut self, state: Arc<PolicyState>) -> Self {
        self.state = Some(state);
        self
    }

    /// Record history here instead of in memory.
    pub fn history(mut self, store: Arc<dyn HistoryStore>) -> Self {
        self.history = Some(store);
        self
    }

    /// Park calls that wait for approval here (the shared store, so that any
    /// process on it can decide) instead of in memory (crate::approval).
    pub fn approvals(mut self, store: Arc<dyn ApprovalStore>) -> Self {
        self.approvals = Some(store);
        self
    }

    /// Seed the jitter RNG (tests and reproducible runs).
    pub fn rng_seed(mut self, seed: u64) -> Self {
        self.seed = Some(seed);
        self
    }

    /// Default concurrency of [`Executor::call_many`].
    pub fn max_parallel(mut self, n: usize) -> Self {
        self.max_parallel = n.max(1);
        self
    }

    /// Resolve every tool's policy and build. Errors name the bad key and where it
    /// came from.
    pub fn build(self) -> Result<Executor, BuildError> {
        if let Some(name) = self
            .tool_policies
            .keys()
            .find(|n| !self.registry.contains(n))
        {
            return Err(BuildError::UnknownTool(name.clone()));
        }
        let defaults = Policy::layered(&self.defaults).map_err(|source| BuildError::Policy {
            scope: "defaults".into(),
            source,
        })?;
        let state = self.state.clone().unwrap_or_else(PolicyState::new);
        ToolMetrics::describe();
        let origins = self.origin_layers()?;
        let mut entries =
            HashMap::with_capacity_and_hasher(self.registry.len(), Default::default());
        // One state per MCP server, shared by its tools.
        let mut servers: HashMap<String, Arc<KeyState>> = HashMap::new();
        for tool in self.registry.iter() {
            let entry = self.entry(tool, &defaults, &state, &origins, &mut servers)?;
            entries.insert(tool.spec().name.clone(), entry);
        }
        let rng = self
            .seed
            .map_or_else(fastrand::Rng::new, fastrand::Rng::with_seed);
        Ok(Executor {
            inner: Arc::new(Inner {
                registry: self.registry,
                entries,
                state,
                history: self
                    .history
                    .unwrap_or_else(|| Arc::new(InMemoryHistory::new())),
                rng: Mutex::new(rng),
                max_parallel: self.max_parallel,
                shared_cache: self.shared_cache,
                approvals: self
                    .approvals
                    .unwrap_or_else(|| Arc::new(InMemoryApprovals::default())),
            }),
        })
    }
}

impl ExecutorBuilder {
    /// The `[origins]` layers, each under its origin as keys name it.
    fn origin_layers(&self) -> Result<Vec<(SmolStr, &Value)>, BuildError> {
        self.origin_policies
            .iter()
            .map(|(origin, layer)| match dependency::origin(origin) {
                Some(o) if o == origin.trim_end_matches('/').to_ascii_lowercase() => {
                    Ok((SmolStr::from(o), layer))
                }
                _ => Err(BuildError::Policy {
                    scope: format!("origins.{origin:?}"),
                    source: PolicyError::new(
                        "",
                        "is not an origin: scheme, host and port only (https://api.example.com)",
                    ),
                }),
            })
            .collect()
    }

    /// One tool's entry: its policy (defaults → its MCP server's layer → its
    /// own table; each origin's layer over that), and its states.
    fn entry(
        &self,
        tool: &RegisteredTool,
        defaults: &Policy,
        state: &Arc<PolicyState>,
        origins: &[(SmolStr, &Value)],
        servers: &mut HashMap<String, Arc<KeyState>>,
    ) -> Result<ToolEntry, BuildError> {
        let name = &tool.spec().name;
        let dependency = &tool.spec().dependency;
        let layer = |base: &Policy, scope: String, layer: Option<&Value>| match layer {
            None => Ok(base.clone()),
            Some(layer) => base
                .with_layers([layer])
                .map_err(|source| BuildError::Policy { scope, source }),
        };
        let server_layer = match dependency {
            Dependency::Server(server) => self.server_policies.get(server).map(|l| (server, l)),
            _ => None,
        };
        let policy = match server_layer {
            Some((server, l)) => layer(defaults, format!("mcp.servers.{server}.policy"), Some(l))?,
            None => defaults.clone(),
        };
        let policy = layer(
            &policy,
            format!("tools.{name}"),
            self.tool_policies.get(name),
        )?;
        let limits = Arc::new(Limits::new(&policy.limits));
        let server = match dependency {
            Dependency::Server(server) => Some(
                servers
                    .entry(server.clone())
                    .or_insert_with(|| {
                        let id = format!("server:{server}");
                        let key = Some(SmolStr::from(&id));
                        Arc::new(KeyState::named(state, &id, key, limits.clone()))
                    })
                    .clone(),
            ),
            _ => None,
        };
        let keyed = match (&policy.key, dependency) {
            (Some(KeyPolicy::Origin | KeyPolicy::Template(_)), _) | (None, Dependency::Origin) => {
                let mut by_origin = HashMap::new();
                for (origin, l) in origins {
                    let scope = format!("origins.{origin:?}");
                    by_origin.insert(origin.clone(), Arc::new(layer(&policy, scope, Some(l))?));
                }
                Some(KeyedStates::new(name, &policy, by_origin))
            }
            _ => None,
        };
        Ok(ToolEntry {
            name: SmolStr::from(name.as_str()),
            tool: tool.clone(),
            own: Arc::new(KeyState::named(state, name, None, limits)),
            server,
            keyed,
            metrics: ToolMetrics::new(name),
            chaos: ChaosDice::new(policy.chaos.seed),
            shared_breakers: self.shared_breakers.clone(),
            shared_budget: self.shared_budget.clone(),
            policy,
        })
    }
}

impl Executor {
    /// Start configuring an executor over `registry`.
    pub fn builder(registry: ToolRegistry) -> ExecutorBuilder {
        ExecutorBuilder {
            registry,
            defaults: Vec::new(),
            tool_policies: HashMap::new(),
            server_policies: HashMap::new(),
            origin_policies: Vec::new(),
            state: None,
            history: None,
            seed: None,
            shared_breakers: None,
            shared_budget: None,
            shared_cache: None,
            approvals: None,
            max_parallel: DEFAULT_MAX_PARALLEL,
        }
    }
}
