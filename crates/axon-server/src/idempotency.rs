//! Idempotency keys on `POST /v1/tools/{name}/call`: a client that sends an
//! `Idempotency-Key` header (or `idempotency_key` in the body, for clients
//! that cannot set headers) and repeats the request (its connection dropped,
//! its own retry fired) gets the first request's result again, and the tool is
//! not called again — in this process, or in another sharing the store, within
//! a day. Semantics as in the IETF draft "The Idempotency-Key HTTP Header
//! Field" (and Stripe's API):
//!
//! - the first request with a key runs and its result (success or failure) is
//!   kept as history keeps it (fields named like secrets, and the values a
//!   tool marked secret, as `"***"`); a repeat gets it with
//!   `Idempotent-Replayed: true`;
//! - a repeat while the first is still running is `409 Conflict` (with
//!   `Retry-After: 1`);
//! - the key sent with a different request (another tool, arguments, policy or
//!   correlation id) is `422 Unprocessable Content`;
//! - a request that goes away before it answers gives its key up.
//!
//! Keys are scoped by the caller's token scope and the tool, so one client's
//! key never replays another's result.

use std::sync::Arc;

use axon_core::{CallResult, ToolCall};
use axon_plan::{Idempotency, IdempotencyBegin};
use axum::http::{HeaderMap, HeaderValue, StatusCode};
use axum::response::{IntoResponse, Response};
use serde_json::json;

use crate::access::Access;
use crate::problem::Problem;

/// The request header.
pub(crate) const HEADER: &str = "idempotency-key";

/// The response header on a replayed result.
pub(crate) const REPLAYED: &str = "idempotent-replayed";

/// The longest key accepted (the draft leaves it to the server; UUIDs and
/// ULIDs are far shorter).
pub(crate) const MAX_KEY_LEN: usize = 255;

/// A key this request holds: it runs the call, then [`KeyClaim::finish`] keeps
/// the result. Dropped unfinished (the client went away, the handler was
/// cancelled), it gives the key up.
pub(crate) struct KeyClaim {
    store: Arc<dyn Idempotency>,
    key: String,
    finished: bool,
    /// The result as history keeps it (secrets masked), heard from the call.
    as_recorded: Arc<std::sync::Mutex<Option<CallResult>>>,
}

impl KeyClaim {
    /// Make `call` tell this claim its result as history keeps it: the key's
    /// answer is kept masked like history (a token the tool returned is not
    /// kept at rest for a day; a replay shows it as `"***"`).
    pub(crate) fn listen(&self, call: &mut ToolCall) {
        let slot = self.as_recorded.clone();
        call.on_record = Some(Arc::new(move |entry: &axon_core::HistoryEntry| {
            if let Ok(mut slot) = slot.lock() {
                *slot = Some(entry.result.clone());
            }
        }));
    }

    /// Keep `result` as the key's answer, masked as history masks it.
    pub(crate) async fn finish(mut self, result: &CallResult) {
        self.finished = true;
        let heard = self
            .as_recorded
            .lock()
            .ok()
            .and_then(|mut slot| slot.take());
        let kept = heard.unwrap_or_else(|| {
            let mut kept = result.clone();
            kept.data = axon_core::redact::redact_owned(kept.data, &[]);
            kept
        });
        let stored = match serde_json::to_string(&kept) {
            Ok(json) => self.store.idempotency_finish(&self.key, &json).await,
            Err(e) => Err(axon_core::StoreError::corrupt("a result as a record", e)),
        };
        if let Err(e) = stored {
            // The caller still gets its result; a repeat would run again.
            tracing::warn!(error = %e, "could not keep the answer of an idempotency key");
            let _ = self.store.idempotency_abandon(&self.key).await;
        }
    }
}

impl Drop for KeyClaim {
    fn drop(&mut self) {
        if self.finished {
            return;
        }
        let (store, key) = (self.store.clone(), std::mem::take(&mut self.key));
        if let Ok(runtime) = tokio::runtime::Handle::try_current() {
            runtime.spawn(async move {
                let _ = store.idempotency_abandon(&key).await;
            });
        }
    }
}

fn bad(detail: &str, pointer: Option<&str>) -> Problem {
    let problem = Problem::new(StatusCode::BAD_REQUEST, "bad request", detail.to_string());
    match pointer {
        Some(p) => problem.at(p),
        None => problem,
    }
}

/// The request's key: the `Idempotency-Key` header, else the body's
/// `idempotency_key`; a bad one, or two that differ, is a 400 naming it.
pub(crate) fn key<'a>(
    headers: &'a HeaderMap,
    in_body: Option<&'a str>,
) -> Result<Option<&'a str>, Problem> {
    let valid = |k: &str| !k.trim().is_empty() && k.len() <= MAX_KEY_LEN;
    let header = match headers.get(HEADER).map(|v| v.to_str()) {
        None => None,
        Some(Ok(k)) if valid(k) => Some(k.trim()),
        Some(_) => {
            return Err(bad(
                &format!("Idempotency-Key: must be 1 to {MAX_KEY_LEN} visible ASCII characters"),
                None,
            ));
        }
    };
    let body = match in_body {
        None => None,
        Some(k) if valid(k) => Some(k.trim()),
        Some(_) => {
            return Err(bad(
                &format!("idempotency_key: must be 1 to {MAX_KEY_LEN} characters"),
                Some("/idempotency_key"),
            ));
        }
    };
    match (header, body) {
        (Some(h), Some(b)) if h != b => Err(bad(
            "idempotency_key: differs from the Idempotency-Key header; send one",
            Some("/idempotency_key"),
        )),
        (h, b) => Ok(h.or(b)),
    }
}

/// Claim the request's idempotency `key`: `Ok(None)` without one,
/// `Ok(Some(claim))` when this request is the key's first and runs, and
/// `Err(response)` when it must not run (the replayed result, or a problem).
pub(crate) async fn begin(
    store: &Arc<dyn Idempotency>,
    access: &Access,
    key: Option<&str>,
    call: &ToolCall,
    streamed: bool,
) -> Result<Option<KeyClaim>, Response> {
    let Some(key) = key else {
        return Ok(None);
    };
    if streamed {
        return Err(bad(
            "Idempotency-Key: not supported with Accept: text/event-stream (a replay has no events to send); ask for JSON",
            None,
        )
        .into_response());
    }
    let scoped = format!("{}\u{1f}{}\u{1f}{key}", access.mcp, call.tool);
    let fingerprint = axon_core::canonical::sha256_hex(&json!({
        "tool": call.tool,
        "args": call.args,
        "policy": call.policy,
        "correlation_id": call.correlation_id,
    }));
    match store.idempotency_begin(&scoped, &fingerprint).await {
        Ok(IdempotencyBegin::New) => Ok(Some(KeyClaim {
            store: store.clone(),
            key: scoped,
            finished: false,
            as_recorded: Arc::default(),
        })),
        Ok(IdempotencyBegin::Replay(json)) => match serde_json::from_str::<CallResult>(&json) {
            Ok(result) => {
                let mut response = crate::problem::call_response(result);
                response
                    .headers_mut()
                    .insert(REPLAYED, HeaderValue::from_static("true"));
                Err(response)
            }
            Err(e) => Err(Problem::new(
                StatusCode::SERVICE_UNAVAILABLE,
                "store unavailable",
                format!("the kept answer of this Idempotency-Key cannot be read: {e}"),
            )
            .into_response()),
        },
        Ok(IdempotencyBegin::InFlight) => {
            let mut response = Problem::new(
                StatusCode::CONFLICT,
                "conflict",
                "Idempotency-Key: a request with this key is still running; retry after it answers",
            )
            .into_response();
            response
                .headers_mut()
                .insert("retry-after", HeaderValue::from_static("1"));
            Err(response)
        }
        Ok(IdempotencyBegin::Mismatch) => Err(Problem::new(
            StatusCode::UNPROCESSABLE_ENTITY,
            "unprocessable content",
            "Idempotency-Key: this key was used for a different request (tool, arguments, policy or correlation id); use a new key",
        )
        .into_response()),
        Err(e) => Err(Problem::new(
            StatusCode::SERVICE_UNAVAILABLE,
            "store unavailable",
            format!("Idempotency-Key: the store cannot be read: {e}"),
        )
        .into_response()),
    }
}
