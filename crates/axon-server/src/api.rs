//! Calls and operations: `/v1/tools…` (a call answered whole, or streamed as
//! Server-Sent Events), `/v1/calls`, `/v1/history`, `/v1/stats`, `/v1/breakers`.

use std::collections::VecDeque;
use std::convert::Infallible;
use std::sync::Arc;

use axon_core::{CallEvent, CallResult, CancellationToken, Executor, ToolCall};
use axum::Json;
use axum::extract::{Extension, Path, Query, State};
use axum::http::{HeaderMap, header};
use axum::response::sse::{Event, KeepAlive, Sse};
use axum::response::{IntoResponse, Response};
use futures::Stream;
use serde::Deserialize;
use serde_json::{Value, json};
use tokio::sync::mpsc;
use tokio::task::JoinHandle;
use tracing::Instrument;

use crate::AppState;
use crate::access::Access;
use crate::problem::{JsonBody, Problem, call_response, store_failed};

/// A JSON object: what arguments and a policy layer are. Typed so that a body
/// whose `args` or `policy` is not one is a 400 naming it, whatever the tool.
type Object = serde_json::Map<String, Value>;

/// The body of `POST /v1/tools/{name}/call`.
#[derive(Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct CallBody {
    /// The tool's arguments (checked against its input schema).
    #[serde(default)]
    args: Object,
    /// Groups the call with others in history (and a browser session).
    correlation_id: Option<String>,
    /// Policy keys for this call only (docs/design.md, "Policy configuration").
    #[serde(default)]
    policy: Option<Object>,
    /// Run the call once: the `Idempotency-Key` header for clients that
    /// cannot set one (the header wins when both are sent and agree).
    #[schemars(length(min = 1, max = 255))]
    idempotency_key: Option<String>,
}

/// One call of `POST /v1/calls`.
#[derive(Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct ManyCall {
    /// The tool's name.
    tool: String,
    /// Its arguments.
    #[serde(default)]
    args: Object,
    /// Groups the call with others in history.
    correlation_id: Option<String>,
    /// Policy keys for this call only.
    #[serde(default)]
    policy: Option<Object>,
}

/// The body of `POST /v1/calls`.
#[derive(Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct ManyBody {
    /// The calls, answered in this order.
    calls: Vec<ManyCall>,
    /// Calls running at once (default 10).
    #[schemars(range(min = 1))]
    max_parallel: Option<usize>,
}

fn tool_call(
    tool: String,
    args: Object,
    correlation_id: Option<String>,
    policy: Option<Object>,
) -> ToolCall {
    let mut call = ToolCall::new(tool, Value::Object(args));
    call.correlation_id = correlation_id.map(Into::into);
    call.policy = policy.map(Value::Object);
    call
}

/// `POST /v1/tools/{name}/call`.
pub(crate) async fn call_tool(
    State(state): State<Arc<AppState>>,
    Extension(access): Extension<Access>,
    Path(name): Path<String>,
    headers: HeaderMap,
    JsonBody(body): JsonBody<CallBody>,
) -> Response {
    if let Err(denied) = access.check_tool(&name, "/") {
        return denied.into_response();
    }
    let streamed = wants_events(&headers) && state.executor().registry().get(&name).is_some();
    let mut call = tool_call(name, body.args, body.correlation_id, body.policy);
    call.owner = access.owner();
    // A repeated request with the same Idempotency-Key gets the first answer.
    let key = match crate::idempotency::key(&headers, body.idempotency_key.as_deref()) {
        Ok(key) => key,
        Err(problem) => return problem.into_response(),
    };
    let claim =
        match crate::idempotency::begin(&state.store.keys, &access, key, &call, streamed).await {
            Ok(claim) => claim,
            Err(response) => return response,
        };
    if let Some(claim) = &claim {
        claim.listen(&mut call);
    }
    if streamed {
        return Sse::new(call_events(state.executor().clone(), call))
            .keep_alive(KeepAlive::default())
            .into_response();
    }
    let result = state.executor().call(call).await;
    if let Some(claim) = claim {
        claim.finish(&result).await;
    }
    call_response(result)
}

/// Whether the client asked for Server-Sent Events (`Accept: text/event-stream`).
pub(crate) fn wants_events(headers: &HeaderMap) -> bool {
    headers
        .get(header::ACCEPT)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|v| v.contains("text/event-stream"))
}

/// One call as SSE: its events as they happen (`attempt_started`, `retrying`
/// with reason and delay, `slow`, `hedged`, `progress`), named by their `event`
/// field, then one `result` event with the call result, and the end. A client
/// that goes away drops the stream, which cancels the call.
fn call_events(
    executor: Executor,
    mut call: ToolCall,
) -> impl Stream<Item = Result<Event, Infallible>> {
    struct Streaming {
        events: mpsc::UnboundedReceiver<CallEvent>,
        call: Option<JoinHandle<CallResult>>,
        ready: VecDeque<Event>,
        /// Cancels the call when the stream is dropped before it ends.
        cancel_on_drop: Option<tokio_util::sync::DropGuard>,
    }
    fn sse(event: CallEvent) -> Option<Event> {
        // The result comes once, from the call itself, as `result`.
        if matches!(event, CallEvent::Finished { .. }) {
            return None;
        }
        let value = serde_json::to_value(&event).ok()?;
        let name = value["event"].as_str().unwrap_or("event").to_string();
        Some(Event::default().event(name).data(value.to_string()))
    }

    let (tx, events) = mpsc::unbounded_channel();
    call.events = Some(Arc::new(move |event| {
        let _ = tx.send(event);
    }));
    let cancel = CancellationToken::new();
    call.cancel = Some(cancel.clone());
    let state = Streaming {
        events,
        call: Some(tokio::spawn(
            async move { executor.call(call).await }.in_current_span(),
        )),
        ready: VecDeque::new(),
        cancel_on_drop: Some(cancel.drop_guard()),
    };
    futures::stream::unfold(state, |mut s| async move {
        loop {
            if let Some(event) = s.ready.pop_front() {
                return Some((Ok(event), s));
            }
            let joined = {
                let call = s.call.as_mut()?;
                tokio::select! {
                    biased;
                    Some(event) = s.events.recv() => {
                        s.ready.extend(sse(event));
                        None
                    }
                    joined = call => Some(joined),
                }
            };
            if let Some(joined) = joined {
                s.call = None;
                if let Some(guard) = s.cancel_on_drop.take() {
                    guard.disarm();
                }
                while let Ok(event) = s.events.try_recv() {
                    s.ready.extend(sse(event));
                }
                if let Ok(result) = joined {
                    let data = serde_json::to_string(&result).unwrap_or_default();
                    s.ready
                        .push_back(Event::default().event("result").data(data));
                }
            }
        }
    })
}

/// `POST /v1/calls`: results in the order of the calls.
pub(crate) async fn call_many(
    State(state): State<Arc<AppState>>,
    Extension(access): Extension<Access>,
    JsonBody(body): JsonBody<ManyBody>,
) -> Result<Json<Value>, Problem> {
    for (i, c) in body.calls.iter().enumerate() {
        access.check_tool(&c.tool, &format!("/calls/{i}/tool"))?;
    }
    if body.max_parallel == Some(0) {
        return Err(Problem::bad_request(
            "max_parallel must be at least 1",
            "/max_parallel",
        ));
    }
    let calls = body
        .calls
        .into_iter()
        .map(|c| ToolCall {
            owner: access.owner(),
            ..tool_call(c.tool, c.args, c.correlation_id, c.policy)
        })
        .collect();
    let results = state.executor().call_many(calls, body.max_parallel).await;
    Ok(Json(json!({ "results": results })))
}

/// `?format=` of `GET /v1/tools`.
#[derive(Deserialize)]
pub(crate) struct ToolsQuery {
    format: Option<String>,
}

/// `GET /v1/tools[?format=openai|mcp]`.
pub(crate) async fn tools(
    State(state): State<Arc<AppState>>,
    Extension(access): Extension<Access>,
    Query(query): Query<ToolsQuery>,
) -> Result<Json<Value>, Problem> {
    // A token sees only the tools it may call.
    let specs: Vec<_> = state
        .executor()
        .registry()
        .specs()
        .into_iter()
        .filter(|s| access.allows(&s.name))
        .collect();
    let body = match query.format.as_deref().unwrap_or("json") {
        "json" => json!({ "tools": specs }),
        "openai" => specs.iter().map(|s| s.openai_function()).collect(),
        "mcp" => {
            json!({ "tools": specs.iter().map(axon_mcp_server::mcp_tool).collect::<Vec<_>>() })
        }
        other => {
            return Err(Problem::bad_request(
                format!("format {other:?} is not json, openai or mcp"),
                "format",
            ));
        }
    };
    Ok(Json(body))
}

/// `GET /v1/tools/{name}`: one tool's spec, the policy in force for it (every
/// key, the defaults and `[tools.<name>]` layered), its breaker, and for an
/// imported tool its pin (status, flags, and the diff while held).
pub(crate) async fn tool(
    State(state): State<Arc<AppState>>,
    Extension(access): Extension<Access>,
    Path(name): Path<String>,
) -> Result<Json<Value>, Problem> {
    let executor = state.executor();
    let (Some(tool), Some(policy)) = (executor.registry().get(&name), executor.policy(&name))
    else {
        return Err(Problem::not_found(format!("no tool {name:?}")));
    };
    access.check_tool(&name, "/name")?;
    let pin = crate::pin_routes::view(&state.store.pins, &name).await?;
    Ok(Json(
        json!({"tool": tool.spec(), "policy": policy, "breaker": breaker_json(executor, &name).await, "pin": pin}),
    ))
}

/// A tool's breaker as the API shows it: its state, while open how long
/// until it lets a probe through, and the dependency keys (origins, its MCP
/// server) whose breaker is not closed. With a shared store the tool's state
/// is the cluster's (docs/scaling.md); keys are as this replica sees them.
async fn breaker_json(executor: &Executor, name: &str) -> Value {
    let state = executor.cluster_breaker_state(name).await;
    let mut breaker = json!({"tool": name, "state": state, "keys": executor.open_keys(name)});
    if let Some(wait) = executor.breaker_next_probe(name) {
        breaker["next_probe_ms"] = json!(wait.as_millis() as u64);
    }
    breaker
}

/// `GET /v1/history/{id}`: the calls of a correlation id (or run id), oldest
/// first, or the one call of a call id, and their figures.
pub(crate) async fn history(
    State(state): State<Arc<AppState>>,
    Extension(access): Extension<Access>,
    Path(correlation_id): Path<String>,
) -> Result<Json<Value>, Problem> {
    // The history the executor records into (the store, or memory when so configured).
    let history = state.executor().history();
    let mut entries = history
        .by_correlation(&correlation_id)
        .await
        .map_err(store_failed)?;
    // A call id works too (docs/design.md), as it does for `axon history`.
    if entries.is_empty()
        && let Some(entry) = history
            .by_call_id(&correlation_id)
            .await
            .map_err(store_failed)?
    {
        entries.push(entry);
    }
    // A scoped token reads only its own calls, of the tools it may call.
    entries.retain(|entry| access.allows(&entry.result.tool) && access.reads(&entry.owner));
    if entries.is_empty() {
        return Err(Problem::not_found(format!(
            "no calls with correlation id {correlation_id:?}"
        )));
    }
    let stats = axon_core::HistoryStats::of(&entries);
    Ok(Json(json!({
        "correlation_id": correlation_id,
        "calls": entries,
        "stats": stats,
    })))
}

/// `GET /v1/stats`: per tool, from history, with each breaker's state and the
/// timeout and hedge delay in force.
pub(crate) async fn stats(State(state): State<Arc<AppState>>) -> Result<Json<Value>, Problem> {
    let stats = state
        .store
        .figures
        .tool_stats()
        .await
        .map_err(store_failed)?;
    let executor = state.executor();
    let mut tools: Vec<Value> = Vec::with_capacity(stats.len());
    for s in stats {
        let breaker = executor.cluster_breaker_state(&s.tool).await;
        let mut v = json!(s);
        v["breaker"] = json!(breaker);
        // The latency this process has seen and the timeout and hedge delay
        // in force from it (`"auto"` policies, policy/adaptive.rs).
        v["adaptive"] = json!(executor.adaptive(&s.tool));
        tools.push(v);
    }
    Ok(Json(json!({ "tools": tools })))
}

/// `GET /v1/breakers`: every tool's breaker.
pub(crate) async fn breakers(State(state): State<Arc<AppState>>) -> Json<Value> {
    let executor = state.executor();
    let mut breakers: Vec<Value> = Vec::new();
    for t in executor.registry().iter() {
        breakers.push(breaker_json(executor, &t.spec().name).await);
    }
    Json(json!({ "breakers": breakers }))
}

/// Which breaker of a tool `POST /v1/breakers/{tool}/reset` closes.
#[derive(serde::Deserialize)]
pub(crate) struct ResetQuery {
    /// A dependency key (`?key=https://api.example.com`); absent: the tool's
    /// own breaker.
    key: Option<String>,
}

/// `POST /v1/breakers/{tool}/reset[?key=…]`: close a breaker by hand, the
/// tool's own or one of its keys'.
pub(crate) async fn reset_breaker(
    State(state): State<Arc<AppState>>,
    Extension(access): Extension<Access>,
    Path(tool): Path<String>,
    Query(query): Query<ResetQuery>,
) -> Result<Json<Value>, Problem> {
    access.check_admin("resetting a breaker")?;
    let executor = state.executor();
    if let Some(key) = &query.key {
        if !executor.reset_cluster_key(&tool, key).await {
            return Err(Problem::not_found(format!(
                "tool {tool:?} keeps no breaker for key {key:?}"
            )));
        }
        return Ok(Json(json!({"tool": tool, "key": key, "state": "closed"})));
    }
    if !executor.reset_breaker(&tool).await {
        return Err(Problem::not_found(format!("no tool {tool:?}")));
    }
    let state = executor.cluster_breaker_state(&tool).await;
    Ok(Json(json!({"tool": tool, "state": state})))
}

/// `POST /v1/breakers/{tool}/isolate`: open a tool's breaker until it is
/// reset (an operator taking a dependency out of service; every replica
/// sees it through the shared store).
pub(crate) async fn isolate_breaker(
    State(state): State<Arc<AppState>>,
    Extension(access): Extension<Access>,
    Path(tool): Path<String>,
) -> Result<Json<Value>, Problem> {
    access.check_admin("isolating a breaker")?;
    let executor = state.executor();
    if !executor.isolate_breaker(&tool).await {
        return Err(Problem::not_found(format!("no tool {tool:?}")));
    }
    let state = executor.cluster_breaker_state(&tool).await;
    Ok(Json(json!({"tool": tool, "state": state})))
}
