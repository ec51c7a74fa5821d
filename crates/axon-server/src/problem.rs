//! `application/problem+json` (RFC 9457) for every error the API returns, with the
//! JSON pointer of the offending field when there is one, and the body extractors
//! that turn malformed or oversized bodies into such problems instead of axum's
//! plain-text rejections.

use axon_core::{CallResult, ErrorKind};
use axum::Json;
use axum::body::Bytes;
use axum::extract::{FromRequest, Request};
use axum::http::{HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use serde::de::DeserializeOwned;
use serde_json::{Map, Value, json};

/// An error response.
#[derive(Debug)]
pub struct Problem {
    status: StatusCode,
    title: &'static str,
    detail: String,
    pointer: Option<String>,
    extra: Map<String, Value>,
    /// `WWW-Authenticate` of a 401 or 403 (`idp/metadata.rs`); boxed, as
    /// most problems have none and every handler returns this type.
    challenge: Option<Box<HeaderValue>>,
}

impl Problem {
    /// The HTTP status it answers with.
    pub fn status(&self) -> StatusCode {
        self.status
    }

    /// A problem with a status, a short title and a detail for humans.
    pub fn new(status: StatusCode, title: &'static str, detail: impl Into<String>) -> Self {
        Problem {
            status,
            title,
            detail: detail.into(),
            pointer: None,
            extra: Map::new(),
            challenge: None,
        }
    }

    /// 400: the request body is wrong at `pointer`.
    pub fn bad_request(detail: impl Into<String>, pointer: impl Into<String>) -> Self {
        Self::new(StatusCode::BAD_REQUEST, "bad request", detail).at(pointer)
    }

    /// 404.
    pub fn not_found(detail: impl Into<String>) -> Self {
        Self::new(StatusCode::NOT_FOUND, "not found", detail)
    }

    /// 503: `what` is at its cap (`key`, the config key that sets it); try
    /// again after `retry_after_secs` (the `Retry-After` header and
    /// `retry_after_ms`). Counted in `capacity_refusals_total{what}`.
    pub fn full(what: &'static str, key: &str, cap: usize, retry_after_secs: u64) -> Self {
        metrics::counter!("capacity_refusals_total", "what" => what).increment(1);
        Self::new(
            StatusCode::SERVICE_UNAVAILABLE,
            "at capacity",
            format!("{cap} {what} at once is this server's limit ({key}); try again later"),
        )
        .with("retry_after_ms", json!(retry_after_secs * 1000))
    }

    /// 503 for a scoped client holding its share of a cap
    /// ([`crate::ServerOptions::tenant_share`]) while the server has room for
    /// others.
    pub fn share_full(what: &'static str, key: &str, share: usize, retry_after_secs: u64) -> Self {
        metrics::counter!("capacity_refusals_total", "what" => what).increment(1);
        Self::new(
            StatusCode::SERVICE_UNAVAILABLE,
            "at capacity",
            format!(
                "{share} {what} at once is one token's share of this server's limit ({key}, server.tenant_share_percent); try again when one of yours ends"
            ),
        )
        .with("retry_after_ms", json!(retry_after_secs * 1000))
    }

    /// The JSON pointer of the offending field in the request body.
    pub fn at(mut self, pointer: impl Into<String>) -> Self {
        self.pointer = Some(pointer.into());
        self
    }

    /// The `WWW-Authenticate` header it answers with.
    pub fn with_challenge(mut self, challenge: HeaderValue) -> Self {
        self.challenge = Some(Box::new(challenge));
        self
    }

    /// An extension member (RFC 9457 §3.2).
    pub fn with(mut self, key: &str, value: Value) -> Self {
        self.extra.insert(key.to_string(), value);
        self
    }
}

impl IntoResponse for Problem {
    fn into_response(self) -> Response {
        let mut body = json!({
            "type": "about:blank",
            "title": self.title,
            "status": self.status.as_u16(),
            "detail": self.detail,
        });
        if let Some(p) = self.pointer {
            body["pointer"] = Value::String(p);
        }
        if let Value::Object(map) = &mut body {
            map.extend(self.extra);
        }
        let mut response = (self.status, body.to_string()).into_response();
        response.headers_mut().insert(
            header::CONTENT_TYPE,
            HeaderValue::from_static("application/problem+json"),
        );
        if let Some(ms) = body.get("retry_after_ms").and_then(Value::as_u64)
            && let Ok(value) = HeaderValue::from_str(&ms.div_ceil(1000).to_string())
        {
            response.headers_mut().insert(header::RETRY_AFTER, value);
        }
        if let Some(challenge) = self.challenge {
            response
                .headers_mut()
                .insert(header::WWW_AUTHENTICATE, *challenge);
        }
        response
    }
}

/// A JSON body of type `T`; a body that is too large, not JSON, or not a `T` is a
/// problem naming the JSON pointer where parsing stopped.
pub struct JsonBody<T>(pub T);

impl<S: Send + Sync, T: DeserializeOwned> FromRequest<S> for JsonBody<T> {
    type Rejection = Problem;

    async fn from_request(req: Request, state: &S) -> Result<Self, Problem> {
        let bytes = RawBody::from_request(req, state).await?.0;
        let mut de = serde_json::Deserializer::from_slice(&bytes);
        match serde_path_to_error::deserialize(&mut de) {
            Ok(value) => Ok(JsonBody(value)),
            Err(e) => {
                let pointer = pointer_of(e.path());
                Err(Problem::bad_request(
                    format!("{pointer}: {}", e.inner()),
                    pointer,
                ))
            }
        }
    }
}

/// The raw body, within the configured size limit.
pub struct RawBody(pub Bytes);

impl<S: Send + Sync> FromRequest<S> for RawBody {
    type Rejection = Problem;

    async fn from_request(req: Request, state: &S) -> Result<Self, Problem> {
        Bytes::from_request(req, state)
            .await
            .map(RawBody)
            .map_err(|rejection| {
                let status = rejection.status();
                let title = if status == StatusCode::PAYLOAD_TOO_LARGE {
                    "body too large"
                } else {
                    "unreadable body"
                };
                Problem::new(status, title, rejection.body_text())
            })
    }
}

/// serde_path_to_error's path as a JSON pointer (`calls[0].tool` → `/calls/0/tool`).
fn pointer_of(path: &serde_path_to_error::Path) -> String {
    use serde_path_to_error::Segment;
    let mut out = String::new();
    for segment in path.iter() {
        out.push('/');
        match segment {
            Segment::Seq { index } => out.push_str(&index.to_string()),
            Segment::Map { key } | Segment::Enum { variant: key } => {
                out.push_str(&key.replace('~', "~0").replace('/', "~1"))
            }
            Segment::Unknown => out.push('?'),
        }
    }
    if out.is_empty() { "/".to_string() } else { out }
}

/// A plan validation field (`steps[2].params`) as a JSON pointer (`/steps/2/params`).
pub fn field_pointer(field: &str) -> String {
    let mut out = String::new();
    for part in field.split('.').filter(|p| !p.is_empty()) {
        let mut rest = part;
        if let Some(i) = rest.find('[') {
            out.push('/');
            out.push_str(&rest[..i]);
            rest = &rest[i..];
            while let Some(end) = rest.find(']') {
                out.push('/');
                out.push_str(&rest[1..end]);
                rest = &rest[end + 1..];
                if !rest.starts_with('[') {
                    break;
                }
            }
        } else {
            out.push('/');
            out.push_str(rest);
        }
    }
    out
}

/// A call result as a response: 200 on success; bad arguments and unknown tools
/// as problems (400 naming `/args/…`, 404); other failures with the status of their
/// kind and the call result as the body, so nothing the pipeline learnt is lost.
pub(crate) fn call_response(result: CallResult) -> Response {
    let Some(error) = &result.error else {
        return Json(result).into_response();
    };
    match error.kind {
        ErrorKind::InvalidArguments => {
            // A bad per-call policy key points at the key, not the arguments.
            let document = match error.code.as_deref() {
                Some("invalid_policy") => "/policy",
                _ => "/args",
            };
            let pointer = format!("{document}{}", error.pointer.as_deref().unwrap_or(""));
            Problem::bad_request(error.message.clone(), pointer)
                .with("result", json!(result))
                .into_response()
        }
        ErrorKind::UnknownTool => Problem::not_found(error.message.clone())
            .with("result", json!(result))
            .into_response(),
        kind => {
            let status =
                StatusCode::from_u16(kind.http_status()).unwrap_or(StatusCode::BAD_GATEWAY);
            (status, Json(result)).into_response()
        }
    }
}

/// The store failed: 503 Service Unavailable, which a client may retry.
pub(crate) fn store_failed(e: impl std::fmt::Display) -> Problem {
    Problem::new(
        StatusCode::SERVICE_UNAVAILABLE,
        "store unavailable",
        e.to_string(),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn plan_fields_become_pointers() {
        assert_eq!(field_pointer("steps[2].params"), "/steps/2/params");
        assert_eq!(field_pointer("max_parallel"), "/max_parallel");
        assert_eq!(
            field_pointer("steps[0].depends_on[1]"),
            "/steps/0/depends_on/1"
        );
    }

    #[test]
    fn serde_paths_become_pointers() {
        #[derive(serde::Deserialize, Debug)]
        #[allow(dead_code)]
        struct Call {
            tool: String,
        }
        #[derive(serde::Deserialize, Debug)]
        #[allow(dead_code)]
        struct Calls {
            calls: Vec<Call>,
        }
        let text = r#"{"calls": [{"tool": "echo"}, {"tool": 3}]}"#;
        let mut de = serde_json::Deserializer::from_str(text);
        let err = serde_path_to_error::deserialize::<_, Calls>(&mut de).unwrap_err();
        assert_eq!(pointer_of(err.path()), "/calls/1/tool");
    }
}
