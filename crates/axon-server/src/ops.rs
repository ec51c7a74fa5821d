//! Operations: `/healthz`, `/metrics`, bearer auth, and the problems for unknown
//! routes and methods.

use std::collections::HashMap;
use std::sync::Arc;

use axum::extract::{Request, State};
use axum::http::{HeaderValue, StatusCode, header};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use metrics_exporter_prometheus::{Matcher, PrometheusBuilder, PrometheusHandle};
use serde_json::json;
use tracing::Instrument;

use crate::AppState;
use crate::access::{Access, McpScopeKey};
use crate::idp::{Refusal, metadata};
use crate::problem::Problem;

/// The latency buckets of `tool_latency_ms`, ms (docs/design.md).
const LATENCY_BUCKETS_MS: [f64; 9] = [
    10.0, 50.0, 100.0, 200.0, 500.0, 1000.0, 2000.0, 4000.0, 8000.0,
];

/// Install the process-wide Prometheus recorder with `tool_latency_ms` as a
/// histogram on the buckets of docs/design.md (10 ms … 8 s). Call it before building the executor.
pub fn install_prometheus() -> Result<PrometheusHandle, MetricsError> {
    PrometheusBuilder::new()
        .set_buckets_for_metric(Matcher::Full("tool_latency_ms".into()), &LATENCY_BUCKETS_MS)
        .map_err(|source| MetricsError { source })?
        .install_recorder()
        .map_err(|source| MetricsError { source })
}

/// The Prometheus recorder could not be installed (another recorder holds
/// the process, or the buckets are refused).
#[derive(Debug, thiserror::Error)]
#[error("cannot install the metrics recorder: {source}")]
pub struct MetricsError {
    source: metrics_exporter_prometheus::BuildError,
}

/// `GET /healthz`: 200 `{"status":"ok"}` when every component works, 503
/// `{"status":"degraded"}` otherwise, each component with its own status.
pub(crate) async fn healthz(State(state): State<Arc<AppState>>) -> Response {
    let store = match state.store.health.check_writable().await {
        Ok(()) => json!({"status": "ok", "target": state.store.health.describe()}),
        Err(e) => {
            json!({"status": "failing", "target": state.store.health.describe(), "error": e.to_string()})
        }
    };
    let healthy = store["status"] == "ok";
    let mut components = serde_json::Map::new();
    components.insert("store".into(), store);
    let mut all_ok = healthy;
    for (name, check) in &state.components {
        let report = match check() {
            Ok(target) => json!({"status": "ok", "target": target}),
            Err((target, error)) => {
                all_ok = false;
                json!({"status": "failing", "target": target, "error": error})
            }
        };
        components.insert(name.clone(), report);
    }
    let body = json!({
        "status": if all_ok { "ok" } else { "degraded" },
        "version": env!("CARGO_PKG_VERSION"),
        "components": components,
        "runs_in_flight": state.runs.lock().map(|r| r.len()).unwrap_or(0),
    });
    let status = if healthy {
        StatusCode::OK
    } else {
        StatusCode::SERVICE_UNAVAILABLE
    };
    (status, axum::Json(body)).into_response()
}

/// `GET /metrics`: the Prometheus text format.
pub(crate) async fn metrics(State(state): State<Arc<AppState>>) -> Response {
    match &state.metrics {
        Some(handle) => {
            let mut response = handle.render().into_response();
            response.headers_mut().insert(
                header::CONTENT_TYPE,
                HeaderValue::from_static("text/plain; version=0.0.4; charset=utf-8"),
            );
            response
        }
        None => Problem::not_found("metrics are not enabled on this server").into_response(),
    }
}

/// Constant-time comparison, so a token cannot be guessed byte by byte from timings.
fn same(a: &[u8], b: &[u8]) -> bool {
    a.len() == b.len() && a.iter().zip(b).fold(0u8, |acc, (x, y)| acc | (x ^ y)) == 0
}

/// Bearer auth when tokens or issuers are configured: the caller's
/// [`Access`] goes with the request for the handlers to check. A static
/// token is looked up; any other bearer is verified as a JWT of a trusted
/// issuer (`idp/`). Refusals carry the challenge that tells an OAuth client
/// where to get a token; no token is ever logged.
pub(crate) async fn require_token(
    State(state): State<Arc<AppState>>,
    mut request: Request,
    next: Next,
) -> Response {
    if !state.auth_required() {
        request.extensions_mut().insert(Access::all());
        return next.run(request).await;
    }
    let presented = request
        .headers()
        .get(header::AUTHORIZATION)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| {
            // The scheme is case-insensitive (RFC 9110 §11.1): `bearer x` counts.
            let (scheme, token) = v.trim().split_once(' ')?;
            scheme.eq_ignore_ascii_case("bearer").then_some(token)
        })
        .map(str::trim)
        .map(str::to_string);
    let path = request.uri().path().to_string();
    let access = match presented.as_deref() {
        None => Err(refuse(&state, &path, None)),
        Some(token) => match static_token(&state, token) {
            Some(access) => Ok(access),
            None => signed_in(&state, token, &path).await,
        },
    };
    match access {
        Ok(access) => {
            request.extensions_mut().insert(access);
            next.run(request).await
        }
        Err(refused) => {
            let mut response = refused.into_response();
            if unread_body(&request) {
                response
                    .headers_mut()
                    .insert(header::CONNECTION, HeaderValue::from_static("close"));
            }
            response
        }
    }
}

/// Whether `request` comes with a body a refusal leaves unread (HTTP/1.x).
/// hyper drains such a body when it has already arrived and otherwise
/// closes the connection after the answer, without saying so: a client
/// that pooled the connection then sends its next request (the same one,
/// with a token) into the close. Saying `Connection: close` makes it open a
/// new one. HTTP/2 streams need no such word (and may not carry it).
fn unread_body(request: &Request) -> bool {
    request.version() <= axum::http::Version::HTTP_11
        && (request.headers().contains_key(header::TRANSFER_ENCODING)
            || request
                .headers()
                .get(header::CONTENT_LENGTH)
                .and_then(|v| v.to_str().ok())
                .is_some_and(|v| v.trim() != "0"))
}

/// The static token `token` is, if any (compared in constant time).
fn static_token(state: &AppState, token: &str) -> Option<Access> {
    if state
        .options
        .auth_tokens
        .iter()
        .any(|t| same(t.as_bytes(), token.as_bytes()))
    {
        return Some(Access::all());
    }
    state
        .options
        .tokens
        .iter()
        .enumerate()
        .find(|(_, t)| same(t.token.as_bytes(), token.as_bytes()))
        .map(|(i, t)| Access::scoped(t, i + 1))
}

/// `token` as an identity provider's access token.
async fn signed_in(state: &AppState, token: &str, path: &str) -> Result<Access, Problem> {
    let Some(idp) = &state.idp else {
        return Err(refuse(state, path, Some("the bearer token is not valid")));
    };
    match idp.verify(token).await {
        Ok(principal) => {
            tracing::debug!(tenant = %principal.tenant, admin = principal.admin, "signed in");
            Ok(Access::signed_in(&principal, idp.clone()))
        }
        Err(Refusal::Invalid(why)) => {
            tracing::info!(%why, path, "bearer refused");
            Err(refuse(state, path, Some(&why)))
        }
        Err(Refusal::Scope(scopes)) => {
            tracing::info!(path, "bearer refused: no scope Axon grants");
            let url = metadata::metadata_url(&idp.resource, path);
            Err(Problem::new(
                StatusCode::FORBIDDEN,
                "forbidden",
                "the token holds no scope this server grants anything for",
            )
            .with("required_scopes", serde_json::json!(scopes))
            .with_challenge(metadata::challenge(
                &url,
                Some("insufficient_scope"),
                None,
                &scopes,
            )))
        }
        Err(Refusal::Unavailable(why)) => {
            tracing::warn!(%why, "a bearer could not be verified");
            Err(Problem::new(
                StatusCode::SERVICE_UNAVAILABLE,
                "identity provider unavailable",
                format!("the token cannot be verified now: {why}"),
            )
            .with("retry_after_ms", serde_json::json!(5000)))
        }
    }
}

/// 401: no token, or `why` it is not one. With issuers, the challenge says
/// where the metadata is (how an MCP client finds the IdP).
fn refuse(state: &AppState, path: &str, why: Option<&str>) -> Problem {
    let detail = why.unwrap_or("an Authorization: Bearer <token> header is required");
    let refused = Problem::new(StatusCode::UNAUTHORIZED, "unauthorized", detail);
    let challenge = match &state.idp {
        None => HeaderValue::from_static("Bearer"),
        Some(idp) => {
            let url = metadata::metadata_url(&idp.resource, path);
            let error = why.map(|_| "invalid_token");
            let scopes = match why {
                None => idp.base_scopes(),
                Some(_) => Vec::new(),
            };
            metadata::challenge(&url, error, why, &scopes)
        }
    };
    refused.with_challenge(challenge)
}

/// `/mcp`: one MCP service per token scope (index 0: full access), each with
/// its own sessions, and the cap on all of them together. A signed-in
/// principal's service is made on its first request and dropped when the
/// table is full and it holds no session.
pub(crate) struct Mcp {
    pub(crate) scopes: Vec<Arc<McpScope>>,
    pub(crate) principals: tokio::sync::Mutex<HashMap<Arc<str>, Arc<McpScope>>>,
    /// Makes the service of a signed-in principal.
    pub(crate) make: Box<dyn Fn(&Access) -> McpScope + Send + Sync>,
    pub(crate) max_sessions: usize,
    /// The largest request body read: `[server] body_limit_bytes`, at
    /// least rmcp's own 4 MiB.
    pub(crate) body_limit: usize,
}

/// One scope's MCP service and the sessions it keeps.
pub(crate) struct McpScope {
    pub(crate) service: axon_mcp_server::HttpService,
    pub(crate) sessions: axon_mcp_server::McpSessions,
    /// A tenant's share of `max_sessions` (`None`: the admin's, or the
    /// callers' without tokens, held to the cap alone).
    pub(crate) share: Option<usize>,
}

impl Mcp {
    async fn open_sessions(&self) -> usize {
        let mut open = 0;
        for scope in &self.scopes {
            open += scope.sessions.open().await;
        }
        for scope in self.principals.lock().await.values() {
            open += scope.sessions.open().await;
        }
        open
    }

    /// The service that answers `access`.
    async fn scope(&self, access: &Access) -> Result<Arc<McpScope>, Problem> {
        let key = match &access.mcp {
            McpScopeKey::Fixed(i) => {
                let i = (*i).min(self.scopes.len().saturating_sub(1));
                return self
                    .scopes
                    .get(i)
                    .cloned()
                    .ok_or_else(|| Problem::not_found("MCP is not served here"));
            }
            McpScopeKey::Principal(key) => key,
        };
        let mut principals = self.principals.lock().await;
        if let Some(scope) = principals.get(key) {
            return Ok(scope.clone());
        }
        if principals.len() >= self.max_sessions {
            let mut idle = Vec::new();
            for (key, scope) in principals.iter() {
                if scope.sessions.open().await == 0 {
                    idle.push(key.clone());
                }
            }
            for key in idle {
                principals.remove(&key);
            }
        }
        if principals.len() >= self.max_sessions {
            return Err(Problem::full(
                "mcp_sessions",
                "mcp.max_sessions",
                self.max_sessions,
                5,
            ));
        }
        let scope = Arc::new((self.make)(access));
        principals.insert(key.clone(), scope.clone());
        Ok(scope)
    }
}

/// `/mcp`: the caller's scope picks the MCP service that answers. A request
/// that would open one more session than `[mcp] max_sessions` (a POST without
/// `Mcp-Session-Id`: an `initialize`) is refused with 503.
pub(crate) async fn mcp(mcp: Arc<Mcp>, request: Request) -> Response {
    use tower::ServiceExt;
    let access = request
        .extensions()
        .get::<Access>()
        .cloned()
        .unwrap_or_else(Access::all);
    let scope = match mcp.scope(&access).await {
        Ok(scope) => scope,
        Err(refused) => return refused.into_response(),
    };
    let opens_session = request.method() == axum::http::Method::POST
        && !request.headers().contains_key("mcp-session-id");
    if opens_session && mcp.open_sessions().await >= mcp.max_sessions {
        return Problem::full("mcp_sessions", "mcp.max_sessions", mcp.max_sessions, 5)
            .into_response();
    }
    if opens_session
        && let Some(share) = scope.share
        && scope.sessions.open().await >= share
    {
        return Problem::share_full("mcp_sessions", "mcp.max_sessions", share, 5).into_response();
    }
    // DELETE ends a session: 404 for one that is not open (in this scope),
    // 204 for one that was (rmcp answers 202 to both, which the SDK clients
    // log as a failure).
    let ends_session = request.method() == axum::http::Method::DELETE;
    if ends_session
        && let Some(id) = request
            .headers()
            .get("mcp-session-id")
            .and_then(|v| v.to_str().ok())
        && !scope.sessions.contains(id).await
    {
        return Problem::not_found("no such MCP session (it ended, or idled out)").into_response();
    }
    let request = match readable(request, mcp.body_limit).await {
        Ok(request) => request,
        Err(refused) => return refused,
    };
    match scope.service.clone().oneshot(request).await {
        Ok(response) if ends_session && response.status() == StatusCode::ACCEPTED => {
            StatusCode::NO_CONTENT.into_response()
        }
        Ok(response) => response.map(axum::body::Body::new),
        Err(never) => match never {},
    }
}

/// A JSON POST whose body rmcp cannot read is answered here, as JSON-RPC
/// says (400 with a parse or invalid-request error naming the request's id),
/// not with rmcp's bare 415, which tells a client its content type was wrong.
async fn readable(request: Request, limit: usize) -> Result<Request, Response> {
    let is_json = request
        .headers()
        .get(header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|v| {
            let essence = v.split(';').next().unwrap_or_default().trim();
            essence.eq_ignore_ascii_case("application/json")
        });
    if request.method() != axum::http::Method::POST || !is_json {
        return Ok(request);
    }
    let (parts, body) = request.into_parts();
    let Ok(bytes) = axum::body::to_bytes(body, limit).await else {
        return Err(Problem::new(
            StatusCode::PAYLOAD_TOO_LARGE,
            "payload too large",
            format!(
                "the body is over {limit} bytes (server.body_limit_bytes, at least 4 MiB for /mcp)"
            ),
        )
        .into_response());
    };
    if let Some(error) = axon_mcp_server::unreadable(&bytes) {
        return Err((StatusCode::BAD_REQUEST, axum::Json(error)).into_response());
    }
    Ok(Request::from_parts(parts, axum::body::Body::from(bytes)))
}

pub(crate) async fn not_found(request: Request) -> Problem {
    Problem::not_found(format!("no endpoint {}", request.uri().path()))
}

pub(crate) async fn method_not_allowed(request: Request) -> Problem {
    Problem::new(
        StatusCode::METHOD_NOT_ALLOWED,
        "method not allowed",
        format!(
            "{} is not allowed on {}",
            request.method(),
            request.uri().path()
        ),
    )
}

/// Each request is an HTTP server span (`POST /v1/tools/{name}/call`), child of
/// the caller's `traceparent` when it sends one: an agent's trace runs on through
/// the calls and runs the request makes.
pub(crate) async fn trace_requests(request: Request, next: Next) -> Response {
    let route = request
        .extensions()
        .get::<axum::extract::MatchedPath>()
        .map(|p| p.as_str().to_string());
    let method = request.method().as_str().to_string();
    let headers = request.headers();
    let get = |key: &str| {
        headers
            .get(key)
            .and_then(|v| v.to_str().ok())
            .map(str::to_string)
    };
    let span = axon_core::trace::open_root(&get, || {
        tracing::debug_span!(
            "http_server",
            otel.name = %match &route {
                Some(route) => format!("{method} {route}"),
                None => method.clone(),
            },
            otel.kind = "server",
            http.request.method = %method,
            http.route = route.as_deref(),
            http.response.status_code = tracing::field::Empty,
            otel.status_code = tracing::field::Empty,
        )
    });
    let response = next.run(request).instrument(span.clone()).await;
    span.record(
        "http.response.status_code",
        i64::from(response.status().as_u16()),
    );
    if response.status().is_server_error() {
        span.record("otel.status_code", "ERROR");
    }
    response
}

/// Every error answer is `application/problem+json`: rejections that axum's
/// extractors (a path that is not UTF-8, a bad query string) or the MCP service
/// (413, 415) write as plain text are rewritten with their text as the detail.
pub(crate) async fn problem_errors(request: Request, next: Next) -> Response {
    let response = next.run(request).await;
    let status = response.status();
    if !(status.is_client_error() || status.is_server_error()) {
        return response;
    }
    let is_json = response
        .headers()
        .get(header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|v| v.contains("json"));
    if is_json {
        return response;
    }
    let (parts, body) = response.into_parts();
    let text = axum::body::to_bytes(body, 64 * 1024)
        .await
        .map(|b| String::from_utf8_lossy(&b).trim().to_string())
        .unwrap_or_default();
    let title = parts.status.canonical_reason().unwrap_or("error");
    let detail = if text.is_empty() {
        title.to_string()
    } else {
        text
    };
    let mut rewritten = Problem::new(parts.status, "error", detail)
        .with("title", serde_json::Value::String(title.to_lowercase()))
        .into_response();
    for (name, value) in &parts.headers {
        if name != header::CONTENT_TYPE && name != header::CONTENT_LENGTH {
            rewritten.headers_mut().insert(name.clone(), value.clone());
        }
    }
    rewritten
}
