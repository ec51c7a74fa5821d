//! What a command builds before it can work: the tool registry (the utilities,
//! `http_request`, the browser tools, the tools of the MCP servers it needs), the
//! history store, the executor over both, and the plan runner that checkpoints
//! into the store. `main.rs` only says which command needs which.

use std::sync::Arc;

use axon_browser_act::{ActStore, CachedStep};
use axon_cli::config::{self, Config, HistoryBackend};
use axon_core::{Executor, HistoryStore, ToolRegistry};
use axon_plan::{Plan, PlanRunner};
use axon_redis::{RedisShared, SharedConfig};
use axon_store::{PgStore, Retention, SqliteStore};
use axon_store_roles::{ActRows, RecentLatencies, Stores};

use crate::output::Ui;
use crate::{Fail, infra, usage};

/// Which configured MCP servers a command starts. Each is a child process or a
/// session, so a command starts only those whose tools it may call: `axon call
/// echo` starts none.
#[derive(Clone, Copy)]
pub(crate) enum Imports<'a> {
    /// Every server (commands that list or serve the tools).
    All,
    /// None (commands that call no tool).
    None,
    /// The servers whose tools these names are (`<prefix>__<tool>`).
    For(&'a [String]),
}

impl Imports<'_> {
    fn wants(&self, server: &axon_mcp_client::McpServerConfig) -> bool {
        match self {
            Imports::All => true,
            Imports::None => false,
            Imports::For(tools) => tools.iter().any(|tool| server.provides(tool)),
        }
    }
}

/// The tools a plan may call: its steps' and their fallbacks'.
pub(crate) fn plan_tools(plan: &Plan) -> Vec<String> {
    plan.steps
        .iter()
        .flat_map(|step| {
            std::iter::once(step.tool.clone()).chain(step.fallbacks.iter().map(|f| f.tool.clone()))
        })
        .collect()
}

/// Every tool the command may use: the utilities, `http_request`, the browser
/// tools, and the tools of the `[[mcp.servers]]` entries `imports` names (started
/// side by side). A server that fails to start stops the command (exit 3) unless
/// it is `optional`, which is a warning.
async fn registry(
    config: &Config,
    ui: Ui,
    imports: Imports<'_>,
    history: Option<Arc<dyn HistoryStore>>,
    store: Option<Stores>,
) -> Result<ToolRegistry, Fail> {
    let mut registry = ToolRegistry::with_utilities();
    let http =
        axon_http_tool::HttpRequest::new(config.http.clone()).map_err(|e| infra(e.to_string()))?;
    registry.register(http).map_err(|e| infra(e.to_string()))?;
    // Chromium starts on the first browser call, not here.
    let browsers = Arc::new(
        axon_browser::Browsers::new(config.browser.clone())
            .with_files(axon_core::files::FileDir::new(config.files_dir()))
            .with_frames(frame_store(config)),
    );
    axon_browser::register(&mut registry, browsers.clone()).map_err(|e| infra(e.to_string()))?;
    // browser_act decides with the model in [llm], else offline.
    let translator: Arc<dyn axon_browser_act::ActionTranslator> = match &config.llm {
        Some(llm) => {
            let model = axon_browser_act::LlmTranslator::new(llm.clone(), history)
                .map_err(|e| usage(e.to_string()))?;
            match llm.translator {
                axon_browser_act::Translator::Llm => Arc::new(model),
                axon_browser_act::Translator::Auto => Arc::new(
                    axon_browser_act::AutoTranslator::new(model, llm.auto_threshold),
                ),
            }
        }
        None => Arc::new(axon_browser_act::Heuristic),
    };
    // Translated steps are kept in the store, so that a second run of a plan
    // (another process) translates nothing.
    let act_cache: Arc<dyn ActStore> = match &store {
        _ if !config.browser.act_cache => Arc::new(axon_browser_act::NoActStore),
        Some(store) => Arc::new(StoreActCache(store.act_cache.clone())),
        None => Arc::new(axon_browser_act::MemoryActStore::default()),
    };
    axon_browser_act::register_with_cache(&mut registry, browsers, translator, act_cache)
        .map_err(|e| infra(e.to_string()))?;
    let servers: Vec<_> = config
        .mcp
        .servers
        .iter()
        .filter(|server| imports.wants(server))
        .collect();
    // With a store, each tool's definition is checked against its pin
    // (axon_mcp_client::pin): a changed one is registered held.
    let pins: Option<Arc<dyn axon_mcp_client::pin::PinStore>> =
        store.map(|store| Arc::new(axon_server::StorePins(store.pins)) as _);
    let imported = futures::future::join_all(servers.iter().map(|server| {
        let server = (*server).clone();
        async {
            match &pins {
                Some(pins) => axon_mcp_client::import_pinned(server, pins).await,
                None => axon_mcp_client::import(server).await,
            }
        }
    }))
    .await;
    for (server, imported) in servers.into_iter().zip(imported) {
        match imported {
            Ok(tools) => {
                for tool in tools {
                    registry
                        .register(tool)
                        .map_err(|e| infra(format!("mcp.servers {:?}: {e}", server.name)))?;
                }
            }
            Err(message) if server.optional => {
                ui.warn(&format!("{message} (optional: its tools are absent)"));
            }
            Err(e) => return Err(infra(e.to_string())),
        }
    }
    Ok(registry)
}

/// browser_act's cache in the store. Reading or writing it never fails a
/// step: a failure is logged and the step is translated.
struct StoreActCache(Arc<dyn ActRows>);

#[async_trait::async_trait]
impl ActStore for StoreActCache {
    async fn get(&self, key: &str) -> Option<CachedStep> {
        match self.0.act_get(key).await {
            Ok(entry) => entry.and_then(|json| serde_json::from_str(&json).ok()),
            Err(e) => {
                tracing::warn!(error = %e, "could not read the act cache");
                None
            }
        }
    }
    async fn put(&self, key: &str, step: &CachedStep) {
        let Ok(json) = serde_json::to_string(step) else {
            return;
        };
        if let Err(e) = self.0.act_put(key, &json).await {
            tracing::warn!(error = %e, "could not write the act cache");
        }
    }
    async fn remove(&self, key: &str) {
        if let Err(e) = self.0.act_remove(key).await {
            tracing::warn!(error = %e, "could not write the act cache");
        }
    }
}

/// How long history keeps a call (`[history] max_age_days`; 0: for ever).
fn history_age(config: &Config) -> Option<std::time::Duration> {
    (config.history.max_age_days > 0).then(|| {
        std::time::Duration::from_secs(config.history.max_age_days.saturating_mul(24 * 3600))
    })
}

/// Where recorded browser frames are kept: each owner's files folder, for
/// as long as history keeps calls (`axon_core::frames`). The browser tools
/// write there and `axon serve`'s dashboard reads.
pub(crate) fn frame_store(config: &Config) -> axon_core::frames::FrameStore {
    axon_core::frames::FrameStore::new(
        axon_core::files::FileDir::new(config.files_dir()),
        history_age(config),
    )
}

/// The store: the PostgreSQL database of `[store] url`, else the SQLite file
/// (`[store] path`), with `[history]`'s retention and durability, seen
/// through its roles (each consumer is given the ones it uses). A server
/// that takes runs over (`[store] takeover`) hands its own runs to the other
/// replicas. A store that cannot be opened is exit 3, naming it.
pub(crate) async fn open_store(config: &Config) -> Result<Stores, Fail> {
    let retention = Retention {
        max_per_correlation: config.history.max_per_correlation,
        max_calls: config.history.max_calls,
        max_age: history_age(config),
        max_runs: config.history.max_runs,
    };
    let durability = config
        .history
        .durability
        .parse()
        .map_err(|e: axon_core::UnknownName| usage(e.to_string()))?;
    let failed = |e: axon_core::StoreError| infra(format!("store: {e}"));
    Ok(match &config.store.url {
        Some(url) => Stores::of(Arc::new(
            PgStore::open(url, config.store.schema.as_deref(), retention)
                .await
                .map_err(failed)?
                .with_durability(durability)
                .with_handoff(config.takeover()),
        )),
        None => Stores::of(Arc::new(
            SqliteStore::open(config.store_path(), retention)
                .await
                .map_err(failed)?
                .with_durability(durability)
                .with_handoff(config.takeover()),
        )),
    })
}

/// The executor with the config's policies, recording into `store` (or into
/// memory with `history.backend = "memory"`); without a store, nothing is
/// recorded (commands that only list or check).
pub(crate) async fn executor(
    config: &Config,
    ui: Ui,
    store: Option<Stores>,
    imports: Imports<'_>,
) -> Result<Executor, Fail> {
    let history: Option<Arc<dyn HistoryStore>> = match (&store, config.history.backend) {
        (Some(_), HistoryBackend::Memory) => Some(Arc::new(axon_core::InMemoryHistory::new())),
        (Some(store), HistoryBackend::Sqlite) => Some(store.history.clone()),
        (None, _) => None,
    };
    let tools = registry(config, ui, imports, history.clone(), store.clone()).await?;
    let mut builder = Executor::builder(tools).defaults(config.defaults_json());
    for (tool, table) in &config.tools {
        builder = builder.tool_policy(tool, config::table_json(table));
    }
    for (origin, table) in &config.origins {
        builder = builder.origin_policy(origin, config::table_json(table));
    }
    for server in config.mcp.servers.iter().filter(|s| !s.policy.is_empty()) {
        builder = builder.server_policy(
            &server.name,
            serde_json::Value::Object(server.policy.clone()),
        );
    }
    if let Some(history) = history {
        builder = builder.history(history);
    }
    // Calls that wait for a person are parked in the store, where any
    // process on it (`axon approvals`, another replica) can decide them.
    if let Some(store) = &store {
        builder = builder.approvals(store.approvals.clone());
    }
    // Only commands that make calls share the cluster's breakers.
    if store.is_some()
        && let Some(shared) = shared(config).await?
    {
        builder = builder.shared_store(shared);
    }
    let executor = builder.build().map_err(|e| usage(format!("config: {e}")))?;
    if let Some(store) = store {
        seed_latencies(&executor, store.latencies.as_ref()).await;
    }
    Ok(executor)
}

/// The process's connection to `[shared] redis_url`, made once: a Redis that
/// cannot be reached at start-up stops the command (exit 3, naming it);
/// later outages only degrade (docs/scaling.md).
pub(crate) async fn shared(config: &Config) -> Result<Option<Arc<RedisShared>>, Fail> {
    let Some(url) = &config.shared.redis_url else {
        return Ok(None);
    };
    if let Some(shared) = SHARED.get() {
        return Ok(Some(shared.clone()));
    }
    let mut settings = SharedConfig::new(url.clone());
    if let Some(prefix) = &config.shared.key_prefix {
        settings.key_prefix = prefix.clone();
    }
    if let Some(ms) = config.shared.timeout_ms {
        settings.timeout = std::time::Duration::from_millis(ms);
    }
    let shared = RedisShared::connect(&settings)
        .await
        .map_err(|e| infra(format!("shared: {e}")))?;
    Ok(Some(SHARED.get_or_init(|| Arc::new(shared)).clone()))
}

/// The shared Redis connection of this process, once made.
static SHARED: std::sync::OnceLock<Arc<RedisShared>> = std::sync::OnceLock::new();

/// `/healthz`'s `shared` component: Redis answering or not.
pub(crate) fn shared_health() -> Option<axon_server::HealthCheck> {
    let shared = SHARED.get()?.clone();
    Some(Arc::new(move || match shared.health() {
        None => Ok(shared.target().to_string()),
        Some(why) => Err((shared.target().to_string(), why)),
    }))
}

/// Each tool's latency sketch starts from the last day of its history (the
/// last window's worth of calls answered at the first attempt), so that
/// `"auto"` timeouts and hedges in a new process start from what the earlier
/// ones saw. A store that cannot be read leaves them empty: that only costs the
/// ceiling timeout until the tool has answered a few times.
pub(crate) async fn seed_latencies(executor: &Executor, store: &dyn RecentLatencies) {
    let since = axon_core::Timestamp::now().unix_ms() as i64 - 24 * 3600 * 1000;
    let window = axon_core::policy::adaptive::WINDOW_SAMPLES as u32;
    match store.recent_latencies(window, since).await {
        Ok(tools) => {
            for (tool, durations) in tools {
                executor.seed_latency(
                    &tool,
                    durations.into_iter().map(std::time::Duration::from_millis),
                );
            }
        }
        Err(e) => tracing::warn!(error = %e, "could not read recent latencies from history"),
    }
}

/// A plan runner over the store, with the config's secrets: what `run`, `serve`
/// and `mcp` work with. The store comes back too, to be closed at the end.
pub(crate) async fn runner(
    config: &Config,
    ui: Ui,
    imports: Imports<'_>,
) -> Result<(PlanRunner, Stores), Fail> {
    let store = open_store(config).await?;
    let executor = executor(config, ui, Some(store.clone()), imports).await?;
    let runner = PlanRunner::with_stores(executor, store.runs.clone(), store.keys.clone())
        .with_secrets(config.secrets());
    Ok((runner, store))
}
