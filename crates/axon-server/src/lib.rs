//! # axon-server
//!
//! `axon serve`: Axon for agents written in any language. Every endpoint of
//! the HTTP API (docs/design.md) goes through the same [`Executor`] and
//! [`PlanRunner`] as the CLI and the library, so retries, breakers, caching and
//! history behave the same whichever face a call comes through.
//!
//! | endpoint | what |
//! | --- | --- |
//! | `GET /v1/tools/{name}` | a tool's spec, the policy in force for it, its breaker |
//! | `POST /v1/tools/{name}/call` | one call: `{"args", "correlation_id"?, "policy"?}` → call result |
//! | `GET /v1/pins`, `POST /v1/tools/{name}/accept` | imported tools held for a changed or flagged definition; accept one (`pin_routes.rs`) |
//! | `GET /v1/approvals`, `GET/POST /v1/approvals/{id}` | calls waiting for a person; approve or deny one (`approval_routes.rs`) |
//! | `POST /v1/calls` | several calls in parallel, results in order |
//! | `POST /v1/plans/validate` | check a plan (JSON or YAML) |
//! | `POST /v1/runs` | start a plan; `?wait=true` blocks, `Accept: text/event-stream` streams progress |
//! | `GET /v1/runs` | runs, newest first, by status, a page at a time |
//! | `GET/DELETE /v1/runs/{id}` | a run's state; cancel it |
//! | `GET /v1/runs/{id}/events` | a running run's progress as SSE, whoever started it |
//! | `GET /v1/runs/{id}/plan` | the plan a run ran; `?replay=true` compiled to replay it without a translator |
//! | `POST /v1/runs/{id}/resume` | run a stored run again with its plan, reusing its checkpoints |
//! | `GET /v1/history/{correlation_id}` | the calls of a correlation id (a run id), or one call by its id |
//! | `GET /v1/stats`, `GET /v1/tools`, `GET /v1/breakers`, `POST /v1/breakers/{tool}/reset` | operations |
//! | `/mcp` | the MCP server (every tool and `run_plan`) over Streamable HTTP |
//! | `GET /healthz`, `GET /metrics` | health (200/503 per component), Prometheus text |
//! | `GET /openapi.json` | the OpenAPI 3.1 description of all of the above (`openapi.rs`) |
//! | `GET /.well-known/oauth-protected-resource[/mcp]` | Protected Resource Metadata when `[server.auth]` trusts an identity provider (`idp/`) |
//! | `GET /`, `/runs`, `/runs/{id}`, `/tools`, `/history/{id}` | the dashboard (`dashboard/`): HTML pages over this API |
//!
//! Errors are `application/problem+json` naming the JSON pointer of the bad field.
//! With tokens set, every endpoint but `/healthz` wants `Authorization: Bearer
//! <token>`; a scoped token ([`ScopedToken`]) sees and calls only its tools and
//! needs `admin` to reset breakers or cancel runs; a JWT access token of a
//! trusted issuer ([`IdpOptions`]) is mapped to a tenant, tools and admin by
//! its claims; [`ServerOptions::check_bind`] refuses a non-loopback address
//! without tokens or issuers.

#![warn(missing_docs)]

mod access;
mod api;
mod approval_routes;
mod connections;
mod dashboard;
mod edge;
mod frames;
mod idempotency;
mod idp;
mod openapi;
mod ops;
mod pin_routes;
pub mod problem;
mod runs;
mod stores;
mod takeover;

use std::collections::HashMap;
use std::future::Future;
use std::net::SocketAddr;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use axon_core::{CancellationToken, Executor};
use axon_plan::PlanRunner;
use axon_store_roles::Stores;
use axum::Router;
use axum::extract::DefaultBodyLimit;
use axum::routing::{get, post};
use metrics_exporter_prometheus::PrometheusHandle;
use tokio::net::TcpListener;
use tokio_util::task::TaskTracker;

pub use access::ScopedToken;
pub use edge::LOOPBACK_HOSTS;
pub use idp::{
    DashboardSignIn, IdpOptions, IssuerOptions, IssuerUnreachable, ScopeGrant, SigningAlgorithm,
    TenantSecrets, UnknownAlgorithm, probe_issuer,
};
pub use openapi::document as openapi_document;
pub use ops::{MetricsError, install_prometheus};
pub use pin_routes::StorePins;

/// How the server behaves at its edges.
#[derive(Clone, Debug)]
pub struct ServerOptions {
    /// Bearer tokens accepted for everything; with `tokens` empty too, no auth
    /// (loopback binds only).
    pub auth_tokens: Vec<String>,
    /// Bearer tokens limited to some tools, admin or not (`[[server.tokens]]`).
    pub tokens: Vec<ScopedToken>,
    /// Identity providers whose JWT access tokens are accepted besides the
    /// static tokens (`[server.auth]`, `idp/`).
    pub idp: IdpOptions,
    /// Request bodies above this size are refused with 413.
    pub body_limit_bytes: usize,
    /// On shutdown, how long in-flight runs may go on before they are cancelled
    /// (their finished steps are checkpointed, so the run resumes later).
    pub shutdown_grace: Duration,
    /// The tools `/mcp` lists (`[mcp] tools` / `exclude`).
    pub mcp_tools: axon_core::ToolFilter,
    /// The Host names requests may carry (patterns as `[http] allow_hosts`,
    /// without the port; `*`: any). Default: the loopback names, so that a
    /// page on another domain re-resolved to 127.0.0.1 is refused
    /// (docs/security.md).
    pub allowed_hosts: Vec<String>,
    /// Browser origins besides the server's own that may call it
    /// (`https://app.example`; `*`: any). Default none.
    pub allowed_origins: Vec<String>,
    /// Runs this server runs at once; one more is refused with 503 and
    /// `Retry-After` (`[server] max_runs`).
    pub max_runs: usize,
    /// Runs waiting in the store's queue for a replica; one more queued run
    /// is refused with 503 and `Retry-After` (`[server] max_queued_runs`).
    pub max_queued_runs: usize,
    /// MCP sessions open at once over `/mcp`; one more `initialize` is
    /// refused with 503 (`[mcp] max_sessions`). Idle sessions close after
    /// `mcp_session_idle` (rmcp's keep-alive).
    pub max_mcp_sessions: usize,
    /// How much of each of those caps one scoped tenant may hold, in
    /// percent (`[server] tenant_share_percent`, 50): one client filling a
    /// cap would leave the others nothing ([`ServerOptions::tenant_share`]).
    pub tenant_share_percent: u8,
    /// How long an MCP session may sit idle before it is closed.
    pub mcp_session_idle: Duration,
    /// How long a client may take to send a request's head (on a new
    /// connection, or a kept-alive one between requests) before the
    /// connection is closed (`[server] header_timeout_ms`): a slow client
    /// holds no connection for longer (crate::connections).
    pub header_timeout: Duration,
}

impl Default for ServerOptions {
    fn default() -> Self {
        ServerOptions {
            auth_tokens: Vec::new(),
            tokens: Vec::new(),
            idp: IdpOptions::default(),
            body_limit_bytes: 1 << 20,
            shutdown_grace: Duration::from_secs(10),
            mcp_tools: axon_core::ToolFilter::default(),
            allowed_hosts: LOOPBACK_HOSTS.iter().map(|h| h.to_string()).collect(),
            allowed_origins: Vec::new(),
            max_runs: 256,
            max_queued_runs: 1024,
            max_mcp_sessions: 1024,
            tenant_share_percent: 50,
            mcp_session_idle: Duration::from_secs(300),
            header_timeout: Duration::from_secs(10),
        }
    }
}

impl ServerOptions {
    /// How many of `cap` one scoped tenant may hold at once: its
    /// `tenant_share_percent`, rounded down, at least one. The admin and the
    /// callers without tokens (the process's owner) are held to `cap` alone.
    pub fn tenant_share(&self, cap: usize) -> usize {
        let percent = usize::from(self.tenant_share_percent.clamp(1, 100));
        (cap.saturating_mul(percent) / 100).max(1)
    }
}

/// What the handlers share.
/// A run in flight: what cancels it, and whose it is.
pub(crate) struct Running {
    cancel: CancellationToken,
    /// Who started it (`Access::owner`): another tenant does not see it.
    owner: axon_core::Owner,
}

pub(crate) struct AppState {
    runner: PlanRunner,
    /// The roles of the store the handlers use (`stores.rs`).
    store: stores::ServerStores,
    metrics: Option<PrometheusHandle>,
    options: ServerOptions,
    /// The trusted issuers and their keys (`None`: static tokens only).
    idp: Option<Arc<idp::Idp>>,
    /// Runs in flight, by run id.
    runs: Mutex<HashMap<String, Running>>,
    /// The progress events of each run in flight, for `GET /v1/runs/{id}/events`
    /// (the dashboard follows a run it did not start).
    watchers: Mutex<HashMap<String, tokio::sync::broadcast::Sender<axon_plan::PlanEvent>>>,
    /// The tasks running plans, awaited on shutdown.
    tasks: TaskTracker,
    /// Components `/healthz` reports besides the store (the shared Redis).
    components: Vec<(String, HealthCheck)>,
    /// Whether this replica takes up queued runs and runs of replicas that
    /// died (`takeover.rs`).
    takeover: bool,
    /// Held while a queued run is counted and stored, so that the queue's
    /// cap holds under concurrent requests (`runs.rs`).
    enqueueing: tokio::sync::Mutex<()>,
    /// Where the browser tools keep recorded frames (`frames.rs`).
    frames: Option<axon_core::frames::FrameStore>,
}

/// A component's health for `/healthz`: `Ok(target)` when it answers,
/// `Err((target, why))` when it does not. A failing component makes the
/// status `degraded` but not 503: calls go on without it (the store is the
/// one component whose failure is a 503).
pub type HealthCheck = Arc<dyn Fn() -> Result<String, (String, String)> + Send + Sync>;

impl AppState {
    fn executor(&self) -> &Executor {
        self.runner.executor()
    }

    /// Whether requests need a bearer token.
    fn auth_required(&self) -> bool {
        self.options.authenticates()
    }

    fn cancel_all_runs(&self) {
        let runs = self.runs.lock().unwrap_or_else(|e| e.into_inner());
        for run in runs.values() {
            run.cancel.cancel();
        }
    }
}

/// The HTTP server: build it, get its [`router`](Server::router) for tests or
/// embedding, or [`serve`](Server::serve) it on a listener.
pub struct Server {
    state: Arc<AppState>,
}

impl Server {
    /// A server over `runner` (whose executor records into the history of
    /// `stores`, and whose runs are kept there): it keeps the roles of the
    /// store its handlers use.
    pub fn new(runner: PlanRunner, stores: &Stores, options: ServerOptions) -> Self {
        // With scoped tokens or an identity provider, a tenant's plans read
        // only the secrets it was granted (issue 59).
        let idp = idp::Idp::new(&options.idp).map(Arc::new);
        let runner = match options.tokens.is_empty() && idp.is_none() {
            true => runner,
            false => {
                let mut secrets = access::Access::grant_secrets(runner.secrets(), &options.tokens);
                for (tenants, names) in idp.iter().flat_map(|idp| idp.secret_grants()) {
                    secrets = secrets.granting(tenants, names.iter().cloned());
                }
                runner.with_secrets(secrets)
            }
        };
        Server {
            state: Arc::new(AppState {
                runner,
                store: stores::ServerStores::of(stores),
                metrics: None,
                options,
                idp,
                runs: Mutex::new(HashMap::new()),
                watchers: Mutex::new(HashMap::new()),
                tasks: TaskTracker::new(),
                components: Vec::new(),
                takeover: false,
                enqueueing: tokio::sync::Mutex::new(()),
                frames: None,
            }),
        }
    }

    /// Serve `/metrics` from this Prometheus recorder (see [`install_prometheus`];
    /// install it before building the executor so the executor's metric handles
    /// land in it).
    pub fn with_metrics(mut self, handle: PrometheusHandle) -> Self {
        if let Some(state) = Arc::get_mut(&mut self.state) {
            state.metrics = Some(handle);
        }
        self
    }

    /// Take up queued runs (`POST /v1/runs?queue=true`) and the runs of
    /// replicas that died, from the shared store (`[store] takeover`). The
    /// store should hand this server's own runs off too
    /// (`SqliteStore::with_handoff`, `PgStore::with_handoff`).
    pub fn taking_over_runs(mut self, takeover: bool) -> Self {
        if let Some(state) = Arc::get_mut(&mut self.state) {
            state.takeover = takeover;
        }
        self
    }

    /// Serve the browser frames kept in `store` (the one the browser tools
    /// write, `axon_browser::Browsers::with_frames`) to the dashboard.
    pub fn with_frames(mut self, store: axon_core::frames::FrameStore) -> Self {
        if let Some(state) = Arc::get_mut(&mut self.state) {
            state.frames = Some(store);
        }
        self
    }

    /// Report `check` as component `name` in `/healthz`.
    pub fn with_component(mut self, name: &str, check: HealthCheck) -> Self {
        if let Some(state) = Arc::get_mut(&mut self.state) {
            state.components.push((name.to_string(), check));
        }
        self
    }

    /// The routes, with auth and the body limit applied.
    pub fn router(&self) -> Router {
        let state = self.state.clone();
        // One MCP service per scope: each lists (and serves) only its tools.
        let open = !state.auth_required();
        // Each scope its own sessions: a session id is never served by
        // another scope's service (its tools, its tenant).
        let idle = state.options.mcp_session_idle;
        let mcp_tools = state.options.mcp_tools.clone();
        let scoped = std::iter::once(access::Access::all().mcp_caller(&mcp_tools, open)).chain(
            state.options.tokens.iter().enumerate().map(|(i, token)| {
                access::Access::scoped(token, i + 1).mcp_caller(&mcp_tools, open)
            }),
        );
        let max_sessions = state.options.max_mcp_sessions.max(1);
        let make_scope = {
            let state = state.clone();
            move |caller: &axon_core::Caller| {
                // A tenant's scope holds at most its share of the sessions.
                let share = matches!(caller.whose, axon_core::Whose::Tenant(_))
                    .then(|| state.options.tenant_share(max_sessions));
                let sessions = axon_mcp_server::McpSessions::new(idle);
                let service =
                    axon_mcp_server::http_service(state.runner.clone(), caller, open, &sessions);
                ops::McpScope {
                    service,
                    sessions,
                    share,
                }
            }
        };
        let scopes = scoped.map(|caller| Arc::new(make_scope(&caller))).collect();
        let mcp = Arc::new(ops::Mcp {
            scopes,
            principals: tokio::sync::Mutex::new(HashMap::new()),
            make: Box::new(move |access: &access::Access| {
                make_scope(&access.mcp_caller(&mcp_tools, open))
            }),
            max_sessions,
            // rmcp's own limit (4 MiB), which `/mcp` has always had, unless
            // the operator allows more.
            body_limit: state.options.body_limit_bytes.max(4 << 20),
        });
        let api = Router::new()
            .route("/v1/tools", get(api::tools))
            .route("/v1/tools/{name}", get(api::tool))
            .route("/v1/tools/{name}/call", post(api::call_tool))
            .route("/v1/tools/{name}/accept", post(pin_routes::accept))
            .route("/v1/pins", get(pin_routes::list))
            .route("/v1/approvals", get(approval_routes::list))
            .route(
                "/v1/approvals/{id}",
                get(approval_routes::get).post(approval_routes::decide),
            )
            .route("/v1/calls", post(api::call_many))
            .route("/v1/plans/validate", post(runs::validate))
            .route("/v1/runs", post(runs::start).get(runs::list))
            .route("/v1/runs/{id}", get(runs::get).delete(runs::cancel))
            .route("/v1/runs/{id}/graph", get(runs::graph))
            .route("/v1/runs/{id}/plan", get(runs::plan))
            .route("/v1/runs/{id}/events", get(runs::follow))
            .route("/v1/runs/{id}/resume", post(runs::resume))
            .route("/v1/calls/{call_id}/frame", get(frames::frame))
            .route("/v1/history/{correlation_id}", get(api::history))
            .route("/v1/history/{correlation_id}/frames", get(frames::strip))
            .route("/v1/stats", get(api::stats))
            .route("/v1/breakers", get(api::breakers))
            .route("/v1/breakers/{tool}/reset", post(api::reset_breaker))
            .route("/v1/breakers/{tool}/isolate", post(api::isolate_breaker))
            .route("/metrics", get(ops::metrics))
            .route(
                "/mcp",
                axum::routing::any(move |request| ops::mcp(mcp.clone(), request)),
            )
            .route_layer(axum::middleware::from_fn_with_state(
                state.clone(),
                ops::require_token,
            ));
        Router::new()
            .route("/healthz", get(ops::healthz))
            .route(
                "/openapi.json",
                get(|| async { axum::Json(openapi::document()) }),
            )
            .merge(api)
            .merge(idp::metadata::routes())
            .merge(dashboard::routes())
            .fallback(ops::not_found)
            .method_not_allowed_fallback(ops::method_not_allowed)
            .layer(DefaultBodyLimit::max(state.options.body_limit_bytes))
            .layer(axum::middleware::from_fn(ops::problem_errors))
            .layer(axum::middleware::from_fn_with_state(
                state.clone(),
                edge::guard,
            ))
            .layer(axum::middleware::from_fn(ops::trace_requests))
            .with_state(state)
    }

    /// Serve until `shutdown` resolves; then stop accepting, let requests and runs
    /// in flight finish for up to `shutdown_grace`, cancel what is left (its steps
    /// are checkpointed) and return once every run has been recorded.
    pub async fn serve(
        self,
        listener: TcpListener,
        shutdown: impl Future<Output = ()> + Send + 'static,
    ) -> std::io::Result<()> {
        let state = self.state.clone();
        state
            .options
            .check_bind(&listener.local_addr()?)
            .map_err(|e| std::io::Error::new(std::io::ErrorKind::PermissionDenied, e))?;
        let grace = state.options.shutdown_grace;
        let on_signal = state.clone();
        let signal = async move {
            shutdown.await;
            tracing::info!("shutting down: no new requests; finishing runs in flight");
            // Requests waiting on a run (`?wait=true`, SSE) end when their run does:
            // bound them by the grace period too.
            tokio::spawn(async move {
                tokio::time::sleep(grace).await;
                on_signal.cancel_all_runs();
            });
        };
        if let Some(handle) = state.metrics.clone() {
            // Histograms drain into their buckets on upkeep; without it samples pile up.
            tokio::spawn(async move {
                loop {
                    tokio::time::sleep(Duration::from_secs(5)).await;
                    handle.run_upkeep();
                }
            });
        }
        let stop_taking = CancellationToken::new();
        if state.takeover {
            tokio::spawn(takeover::take_over(state.clone(), stop_taking.clone()));
        }
        let header_timeout = state.options.header_timeout;
        let served = connections::serve(listener, self.router(), header_timeout, signal).await;
        stop_taking.cancel();
        served?;
        state.tasks.close();
        if tokio::time::timeout(grace, state.tasks.wait())
            .await
            .is_err()
        {
            state.cancel_all_runs();
            state.tasks.wait().await;
        }
        Ok(())
    }
}

/// Why a server refuses an address: it would answer anyone who can reach it.
#[derive(Debug)]
pub struct BindError {
    /// The address refused.
    pub addr: SocketAddr,
}

impl std::fmt::Display for BindError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "refusing to bind {} without server.auth_tokens, [[server.tokens]] or [server.auth] issuers: a non-loopback address needs bearer tokens",
            self.addr
        )
    }
}

impl std::error::Error for BindError {}

impl ServerOptions {
    /// Whether every request but `/healthz` must carry a bearer: a static
    /// token or an issuer is configured.
    pub fn authenticates(&self) -> bool {
        !self.auth_tokens.is_empty() || !self.tokens.is_empty() || !self.idp.issuers.is_empty()
    }

    /// Refuse to expose an unauthenticated server beyond this machine. Full
    /// and scoped tokens count alike: either kind makes every request
    /// authenticate. [`Server::serve`] checks this itself; a caller checks
    /// first only to fail before it builds anything.
    pub fn check_bind(&self, addr: &SocketAddr) -> Result<(), BindError> {
        if addr.ip().is_loopback() || self.authenticates() {
            Ok(())
        } else {
            Err(BindError { addr: *addr })
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn non_loopback_binds_need_tokens_of_either_kind() {
        let public: SocketAddr = "0.0.0.0:7878".parse().unwrap();
        let local: SocketAddr = "127.0.0.1:7878".parse().unwrap();
        let open = ServerOptions::default();
        assert!(open.check_bind(&local).is_ok());
        let refused = open.check_bind(&public).unwrap_err();
        assert!(refused.to_string().contains("auth_tokens"), "{refused}");
        let full = ServerOptions {
            auth_tokens: vec!["t".into()],
            ..ServerOptions::default()
        };
        assert!(full.check_bind(&public).is_ok());
        let scoped = ServerOptions {
            tokens: vec![ScopedToken {
                token: "s".into(),
                tools: vec!["echo".into()],
                admin: false,
                secrets: Vec::new(),
            }],
            ..ServerOptions::default()
        };
        assert!(scoped.check_bind(&public).is_ok());
    }
}
