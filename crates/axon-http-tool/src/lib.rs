//! # axon-http-tool
//!
//! The `http_request` tool (docs/design.md, "Tools"): an agent calls an
//! HTTP API and the call goes through Axon's pipeline like any other, so a 503 is
//! retried, a 429 waits for its `Retry-After`, and a dead host opens a breaker
//! instead of hanging the agent.
//!
//! Responses map onto the core's error kinds: status ≥ 500 → `transient`, 429 →
//! `rate_limited` (with `Retry-After` in seconds), other 4xx → `failed` with code
//! `http_<status>`; a refused connection → `unavailable`; the request's own
//! `timeout_ms` → `timeout`. Only hosts on the allowlist are reached, redirects
//! included. Whether a failed call may be repeated depends on the method: `GET`,
//! `HEAD`, `OPTIONS`, `PUT` and `DELETE` are idempotent (RFC 9110), `POST` and
//! `PATCH` are not, so a `POST` that may have reached the server is not retried.

#![warn(missing_docs)]

use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::Duration;

use async_trait::async_trait;
use axon_core::{Annotations, ErrorKind, Tool, ToolContext, ToolError, ToolSpec, network};
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::{Value, json};
use tracing::Instrument;

/// The tool's name in the registry.
pub const NAME: &str = "http_request";

/// What the tool may reach and how much it reads: the `[http]` section of
/// `axon.toml`.
#[derive(Clone, Debug, serde::Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct HttpConfig {
    /// Hosts that may be called: `example.com`, or `*.example.com` for its
    /// subdomains. Empty allows every host.
    pub allow_hosts: Vec<String>,
    /// Response bodies larger than this fail the call (code `body_too_large`).
    pub max_body_bytes: usize,
}

impl Default for HttpConfig {
    fn default() -> Self {
        HttpConfig {
            allow_hosts: Vec::new(),
            max_body_bytes: 10 << 20,
        }
    }
}

impl HttpConfig {
    /// Whether `host` is on the allowlist.
    pub fn allows(&self, host: &str) -> bool {
        self.allow_hosts.is_empty() || axon_core::hosts::matches_any(&self.allow_hosts, host)
    }
}

/// Install rustls' ring provider for the process. reqwest is built without a
/// default one (ring builds faster than aws-lc on small machines), so anything
/// building a `reqwest::Client` calls this first; calling it again is harmless.
pub fn install_crypto_provider() {
    let _ = rustls::crypto::ring::default_provider().install_default();
}

/// An HTTP method.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Deserialize, JsonSchema)]
#[serde(rename_all = "UPPERCASE")]
enum Method {
    #[default]
    Get,
    Head,
    Post,
    Put,
    Patch,
    Delete,
    Options,
}

impl Method {
    fn as_reqwest(self) -> reqwest::Method {
        match self {
            Method::Get => reqwest::Method::GET,
            Method::Head => reqwest::Method::HEAD,
            Method::Post => reqwest::Method::POST,
            Method::Put => reqwest::Method::PUT,
            Method::Patch => reqwest::Method::PATCH,
            Method::Delete => reqwest::Method::DELETE,
            Method::Options => reqwest::Method::OPTIONS,
        }
    }

    /// RFC 9110's idempotent methods.
    fn idempotent(self) -> bool {
        !matches!(self, Method::Post | Method::Patch)
    }
}

/// The tool's arguments.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct Args {
    /// GET (default), HEAD, POST, PUT, PATCH, DELETE or OPTIONS.
    #[serde(default)]
    method: Method,
    /// An http or https URL.
    url: String,
    /// Request headers.
    #[serde(default)]
    headers: BTreeMap<String, String>,
    /// Added to the URL's query.
    #[serde(default)]
    query: BTreeMap<String, Scalar>,
    /// A JSON body (sets `Content-Type: application/json`).
    #[serde(default)]
    json: Option<Value>,
    /// A text body, when the body is not JSON.
    #[serde(default)]
    body: Option<String>,
    /// This request's own timeout, ms (within the pipeline's per-attempt one).
    #[serde(default)]
    timeout_ms: Option<u64>,
}

/// A query value: a string, number or boolean.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(untagged)]
enum Scalar {
    Text(String),
    Number(serde_json::Number),
    Bool(bool),
}

impl Scalar {
    fn text(&self) -> String {
        match self {
            Scalar::Text(s) => s.clone(),
            Scalar::Number(n) => n.to_string(),
            Scalar::Bool(b) => b.to_string(),
        }
    }
}

/// The `http_request` tool.
pub struct HttpRequest {
    spec: ToolSpec,
    client: reqwest::Client,
    config: Arc<HttpConfig>,
}

/// The HTTP client could not be built (its TLS backend, most likely).
#[derive(Debug, thiserror::Error)]
#[error("cannot build the HTTP client: {source}")]
pub struct ClientError {
    source: reqwest::Error,
}

impl HttpRequest {
    /// The tool, reaching the hosts `config` allows.
    pub fn new(config: HttpConfig) -> Result<HttpRequest, ClientError> {
        install_crypto_provider();
        let config = Arc::new(config);
        let client = reqwest::Client::builder()
            .user_agent(concat!("axon/", env!("CARGO_PKG_VERSION")))
            // Redirects are followed by `send`, each hop checked like the
            // first URL (its name resolved, its port known).
            .redirect(reqwest::redirect::Policy::none())
            // Every name is resolved here, so that no lookup (a redirect's,
            // a name that re-resolves) lands on a never-reached address.
            .dns_resolver(Arc::new(Resolver))
            // A proxy named in the environment (`HTTP_PROXY`, `ALL_PROXY`)
            // would carry requests past the address rules above: ignored.
            .no_proxy()
            .build()
            .map_err(|source| ClientError { source })?;
        let spec = ToolSpec::new(
            NAME,
            "Sends an HTTP request and returns {status, headers, json | text}. 5xx and 429 are retried; other 4xx fail with code http_<status>.",
        )
        .input_schema(serde_json::to_value(schemars::schema_for!(Args)).unwrap_or(Value::Null))
        .output_schema(json!({
            "type": "object",
            "required": ["status", "headers", "url"],
            "properties": {
                "status": {"type": "integer"},
                "url": {"type": "string"},
                "headers": {"type": "object", "additionalProperties": {"type": "string"}},
                "json": {},
                "text": {"type": "string"}
            }
        }))
        // One breaker, rate limit and retry budget per origin: a dead host
        // does not shut the others (policy/dependency.rs in axon-core).
        .dependency(axon_core::Dependency::Origin)
        .annotations(Annotations {
            title: Some("HTTP request".into()),
            idempotent: false,
            open_world: true,
            ..Annotations::default()
        });
        Ok(HttpRequest {
            spec,
            client,
            config,
        })
    }
}

/// Redirects followed at most.
const MAX_REDIRECTS: usize = 10;

/// Headers that carry credentials: not sent on to another origin.
fn is_credential(header: &str) -> bool {
    ["authorization", "cookie", "proxy-authorization"]
        .iter()
        .any(|h| header.eq_ignore_ascii_case(h))
}

/// The system resolver, less the addresses no call reaches: a name that
/// resolves only to them fails to resolve.
struct Resolver;

impl reqwest::dns::Resolve for Resolver {
    fn resolve(&self, name: reqwest::dns::Name) -> reqwest::dns::Resolving {
        Box::pin(async move {
            let host = name.as_str().to_string();
            let found: Vec<std::net::SocketAddr> = tokio::net::lookup_host((host.as_str(), 0))
                .await?
                .filter(|addr| !network::refused_address(&host, addr.ip()))
                .collect();
            if found.is_empty() {
                return Err(format!(
                    "{host} resolves to no address a call may reach (link-local and metadata addresses, private ones on a shared server and those [network] refuses are never reached)"
                )
                .into());
            }
            Ok(Box::new(found.into_iter()) as reqwest::dns::Addrs)
        })
    }
}

/// The URL without its query and credentials, safe for messages and logs (a query
/// often carries an API key).
fn shown(url: &reqwest::Url) -> String {
    let port = url.port().map(|p| format!(":{p}")).unwrap_or_default();
    format!(
        "{}://{}{port}{}",
        url.scheme(),
        url.host_str().unwrap_or_default(),
        url.path()
    )
}

fn transport_error(e: &reqwest::Error, url: &str) -> ToolError {
    // reqwest's Display names the URL with its query; say it ourselves.
    let mut cause = String::new();
    let mut source = std::error::Error::source(e);
    while let Some(s) = source {
        cause = s.to_string();
        source = s.source();
    }
    let what = if cause.is_empty() {
        "request failed".to_string()
    } else {
        cause
    };
    if e.is_timeout() {
        ToolError::new(ErrorKind::Timeout, format!("{url}: timed out"))
    } else if e.is_connect() {
        ToolError::unavailable(format!("{url}: cannot connect: {what}"))
    } else if e.is_redirect() {
        ToolError::failed(format!("{url}: {what}")).with_code("redirect_blocked")
    } else {
        ToolError::transient(format!("{url}: {what}"))
    }
}

fn retry_after(headers: &reqwest::header::HeaderMap) -> Option<Duration> {
    headers
        .get(reqwest::header::RETRY_AFTER)?
        .to_str()
        .ok()?
        .trim()
        .parse::<u64>()
        .ok()
        .map(Duration::from_secs)
}

#[async_trait]
impl Tool for HttpRequest {
    fn spec(&self) -> &ToolSpec {
        &self.spec
    }

    fn safe_to_repeat(&self, args: &Value) -> bool {
        let method = args.get("method").and_then(Value::as_str).unwrap_or("GET");
        serde_json::from_value::<Method>(Value::String(method.to_string()))
            .map(Method::idempotent)
            .unwrap_or(false)
    }

    async fn call(&self, args: &Value, _ctx: ToolContext) -> Result<Value, ToolError> {
        let args: Args = serde_json::from_value(args.clone())
            .map_err(|e| ToolError::invalid_arguments(e.to_string()))?;
        let mut url = reqwest::Url::parse(&args.url)
            .map_err(|e| ToolError::invalid_arguments(format!("/url: {e}")))?;
        if !matches!(url.scheme(), "http" | "https") {
            return Err(ToolError::invalid_arguments(format!(
                "/url: scheme {:?} is not http or https",
                url.scheme()
            )));
        }
        let host = url.host_str().unwrap_or_default().to_string();
        if let Some(why) = self.refused(&url).await {
            return Err(ToolError::failed(why).with_code("host_not_allowed"));
        }
        if !args.query.is_empty() {
            let mut pairs = url.query_pairs_mut();
            for (k, v) in &args.query {
                pairs.append_pair(k, &v.text());
            }
        }
        let label = format!("{} {}", args.method.as_reqwest(), shown(&url));
        // The HTTP semantic conventions' client span. Not the URL's path or
        // query: they may carry tokens.
        let span = tracing::debug_span!(
            "http_client",
            otel.name = %args.method.as_reqwest(),
            otel.kind = "client",
            http.request.method = %args.method.as_reqwest(),
            server.address = %host,
            server.port = url.port_or_known_default().map(i64::from),
            url.scheme = url.scheme(),
            http.response.status_code = tracing::field::Empty,
            error.type = tracing::field::Empty,
            otel.status_code = tracing::field::Empty,
            otel.status_description = tracing::field::Empty,
        );
        let out = self
            .exchange(args, url, label)
            .instrument(span.clone())
            .await;
        if let Err(e) = &out {
            axon_core::trace::record_error(&span, e.kind.as_str(), e.code.as_deref());
        }
        out
    }
}

impl HttpRequest {
    /// Why `url` is not reached, if it is not: a host off the allowlist, or
    /// an address the network rules refuse (the name resolved when that
    /// takes its addresses, with its port).
    async fn refused(&self, url: &reqwest::Url) -> Option<String> {
        let host = url.host_str().unwrap_or_default();
        if !self.config.allows(host) {
            return Some(format!("host {host} is not in http.allow_hosts"));
        }
        let port = url.port_or_known_default().unwrap_or(0);
        network::refused_destination(host, port).await
    }

    /// Send the request, following up to [`MAX_REDIRECTS`] redirects, each
    /// hop checked as the first URL was ([`HttpRequest::refused`]): a
    /// redirect by name to an address or port no call reaches is refused
    /// before it is connected to (reqwest's own policy sees only the URL).
    /// As browsers do, 303 (and 301/302 after a POST) go on as a GET without
    /// the body, and credentials are not sent to another origin.
    /// `timeout_ms` bounds all the hops together.
    async fn send(
        &self,
        args: &Args,
        mut url: reqwest::Url,
        label: &str,
    ) -> Result<reqwest::Response, ToolError> {
        let started = std::time::Instant::now();
        let first_origin = url.origin();
        let mut method = args.method.as_reqwest();
        let mut with_body = true;
        let mut hops = 0;
        loop {
            let mut request = self.client.request(method.clone(), url.clone());
            let same_origin = url.origin() == first_origin;
            for (k, v) in &args.headers {
                if same_origin || !is_credential(k) {
                    request = request.header(k, v);
                }
            }
            for (k, v) in axon_core::trace::inject_current() {
                if !args.headers.keys().any(|h| h.eq_ignore_ascii_case(k)) {
                    request = request.header(k, v);
                }
            }
            match (&args.json, &args.body) {
                (Some(json), _) if with_body => request = request.json(json),
                (None, Some(body)) if with_body => request = request.body(body.clone()),
                _ => {}
            }
            if let Some(ms) = args.timeout_ms {
                let left = Duration::from_millis(ms).saturating_sub(started.elapsed());
                request = request.timeout(left.max(Duration::from_millis(1)));
            }
            let response = request
                .send()
                .await
                .map_err(|e| transport_error(&e, label))?;
            let status = response.status().as_u16();
            let location = response
                .headers()
                .get(reqwest::header::LOCATION)
                .and_then(|v| v.to_str().ok());
            let (true, Some(location)) = (matches!(status, 301 | 302 | 303 | 307 | 308), location)
            else {
                return Ok(response);
            };
            let refuse = |why: String| {
                ToolError::failed(format!("{label}: {why}")).with_code("redirect_blocked")
            };
            hops += 1;
            if hops > MAX_REDIRECTS {
                return Err(refuse(format!("more than {MAX_REDIRECTS} redirects")));
            }
            let next = url
                .join(location)
                .map_err(|e| refuse(format!("redirect to a bad URL: {e}")))?;
            if !matches!(next.scheme(), "http" | "https") {
                return Err(refuse(format!("redirect to a {} URL", next.scheme())));
            }
            if let Some(why) = self.refused(&next).await {
                return Err(refuse(format!("redirect refused: {why}")));
            }
            if status == 303 || (matches!(status, 301 | 302) && method == reqwest::Method::POST) {
                method = reqwest::Method::GET;
                with_body = false;
            }
            url = next;
        }
    }

    /// Send the request and read the answer, in the call's `http_client` span
    /// (whose context goes out as `traceparent` unless the caller set one).
    async fn exchange(
        &self,
        args: Args,
        url: reqwest::Url,
        label: String,
    ) -> Result<Value, ToolError> {
        let mut response = self.send(&args, url, &label).await?;

        let status = response.status();
        tracing::Span::current().record("http.response.status_code", i64::from(status.as_u16()));
        let final_url = shown(response.url());
        // Every response header, `Set-Cookie` and the like included: the
        // caller may need them (a login's session cookie feeds the next step).
        // History stores headers named like secrets as "***" (the executor
        // masks secret-named fields of every stored result). Repeated headers
        // are joined with ", ".
        let mut headers = serde_json::Map::new();
        for (k, v) in response.headers() {
            let Ok(v) = v.to_str() else { continue };
            match headers.get_mut(k.as_str()) {
                Some(Value::String(seen)) => {
                    seen.push_str(", ");
                    seen.push_str(v);
                }
                _ => {
                    headers.insert(k.as_str().to_string(), Value::String(v.to_string()));
                }
            }
        }
        let wait = retry_after(response.headers());
        let is_json = response
            .headers()
            .get(reqwest::header::CONTENT_TYPE)
            .and_then(|v| v.to_str().ok())
            .is_some_and(|ct| ct.contains("json"));

        let mut body = Vec::new();
        while let Some(chunk) = response
            .chunk()
            .await
            .map_err(|e| transport_error(&e, &label))?
        {
            if body.len() + chunk.len() > self.config.max_body_bytes {
                return Err(ToolError::failed(format!(
                    "{label}: response body over {} bytes",
                    self.config.max_body_bytes
                ))
                .with_code("body_too_large"));
            }
            body.extend_from_slice(&chunk);
        }
        let text = String::from_utf8_lossy(&body);

        if !status.is_success() && !status.is_redirection() {
            let code = status.as_u16();
            let excerpt: String = text.chars().take(200).collect();
            let message = format!("{label} → {status}: {excerpt}");
            return Err(match code {
                429 => ToolError::rate_limited(message, wait),
                500.. => ToolError::transient(message),
                _ => ToolError::failed(message),
            }
            .with_code(format!("http_{code}")));
        }

        let mut out = json!({"status": status.as_u16(), "url": final_url, "headers": headers});
        match serde_json::from_slice::<Value>(&body) {
            Ok(parsed) if is_json => out["json"] = parsed,
            _ => out["text"] = Value::String(text.into_owned()),
        }
        Ok(out)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn allowlist_matches_hosts_and_subdomains() {
        let c = HttpConfig {
            allow_hosts: vec!["api.example.com".into(), "*.internal".into()],
            ..HttpConfig::default()
        };
        assert!(c.allows("api.example.com"));
        assert!(c.allows("API.example.com"));
        assert!(c.allows("db.internal"));
        assert!(!c.allows("internal"));
        assert!(!c.allows("evilinternal"));
        assert!(!c.allows("example.com"));
        assert!(HttpConfig::default().allows("anything"));
    }

    #[test]
    fn only_idempotent_methods_are_safe_to_repeat() {
        let tool = HttpRequest::new(HttpConfig::default()).unwrap();
        assert!(tool.safe_to_repeat(&json!({"url": "http://x"})));
        assert!(tool.safe_to_repeat(&json!({"url": "http://x", "method": "PUT"})));
        assert!(!tool.safe_to_repeat(&json!({"url": "http://x", "method": "POST"})));
        assert!(!tool.safe_to_repeat(&json!({"url": "http://x", "method": "PATCH"})));
    }

    #[test]
    fn a_shown_url_keeps_its_port_and_drops_its_secrets() {
        let url = reqwest::Url::parse("http://u:pw@127.0.0.2:18080/x?token=t").unwrap();
        assert_eq!(shown(&url), "http://127.0.0.2:18080/x");
        let url = reqwest::Url::parse("https://api.example/v1").unwrap();
        assert_eq!(shown(&url), "https://api.example/v1");
    }
}
