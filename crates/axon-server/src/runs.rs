//! Plans and runs: `POST /v1/plans/validate`, `POST /v1/runs` (background,
//! `?wait=true`, or Server-Sent Events), `GET /v1/runs/{id}` (and `/graph`),
//! `DELETE /v1/runs/{id}`.

use std::convert::Infallible;
use std::sync::Arc;

use axon_core::{CancellationToken, StoreError};
use axon_plan::{Plan, PlanErrors, PlanEvent, PlanResult, RunOptions};
use axum::Json;
use axum::extract::{Extension, Path, Query, State};
use axum::http::{HeaderMap, HeaderValue, StatusCode, header};
use axum::response::sse::{Event, KeepAlive, Sse};
use axum::response::{IntoResponse, Response};
use futures::Stream;
use serde::Deserialize;
use serde_json::{Value, json};
use tokio::sync::{mpsc, oneshot};
use tracing::Instrument;

use crate::access::Access;
use crate::problem::store_failed;
use crate::problem::{Problem, RawBody, field_pointer};
use crate::{AppState, Running};

/// A plan body, JSON or YAML, parsed on the blocking pool: a large document
/// must not hold an async worker (and with it `/healthz`).
async fn parse_plan(body: axum::body::Bytes) -> Result<Plan, Problem> {
    tokio::task::spawn_blocking(move || {
        let text = std::str::from_utf8(&body)
            .map_err(|e| Problem::bad_request(format!("the plan is not UTF-8: {e}"), "/"))?;
        Plan::parse(text).map_err(|e| Problem::bad_request(format!("not a plan: {e}"), "/"))
    })
    .await
    .unwrap_or_else(|e| {
        Err(Problem::new(
            axum::http::StatusCode::INTERNAL_SERVER_ERROR,
            "internal error",
            format!("parsing the plan failed: {e}"),
        ))
    })
}

/// A plan that does not validate: 422 with every problem and its pointer.
fn invalid_plan(errors: PlanErrors) -> Problem {
    let problems: Vec<Value> = errors
        .0
        .iter()
        .map(|p| json!({"pointer": field_pointer(&p.field), "step": p.step, "field": p.field, "detail": p.message}))
        .collect();
    let first = errors
        .0
        .first()
        .map(|p| field_pointer(&p.field))
        .unwrap_or_else(|| "/".into());
    Problem::new(
        StatusCode::UNPROCESSABLE_ENTITY,
        "invalid plan",
        errors.to_string(),
    )
    .at(first)
    .with("errors", Value::Array(problems))
}

/// `POST /v1/plans/validate`.
pub(crate) async fn validate(
    State(state): State<Arc<AppState>>,
    Extension(access): Extension<Access>,
    RawBody(body): RawBody,
) -> Result<Json<Value>, Problem> {
    let plan = parse_plan(body).await?;
    access.check_plan(&plan)?;
    state
        .runner
        .validate_as(&plan, &access.owner())
        .map_err(invalid_plan)?;
    Ok(Json(json!({"valid": true, "steps": plan.steps.len()})))
}

/// Query of `POST /v1/runs`.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct StartQuery {
    /// Block until the run ends and return its result.
    #[serde(default)]
    wait: bool,
    /// Run (or resume) under this id.
    run_id: Option<String>,
    /// Correlation id of the run's calls.
    correlation_id: Option<String>,
    /// Keep the run for whichever replica has room (`[store] takeover`): 202
    /// with status `queued`.
    #[serde(default)]
    queue: bool,
}

/// Start `plan` in the background; the receiver gets its result. Unless the
/// caller waits for it (`wait`), the result is read back from the store, so
/// the run streams its steps' data out as they finish instead of holding it
/// ([`RunOptions::stream_results`]).
pub(crate) fn launch(
    state: &Arc<AppState>,
    plan: Plan,
    run_id: String,
    correlation_id: Option<String>,
    events: Option<mpsc::UnboundedSender<PlanEvent>>,
    wait: bool,
    owner: axon_core::Owner,
) -> Result<oneshot::Receiver<PlanResult>, Problem> {
    let cancel = CancellationToken::new();
    {
        let mut runs = state.runs.lock().unwrap_or_else(|e| e.into_inner());
        if runs.contains_key(&run_id) {
            return Err(Problem::new(
                StatusCode::CONFLICT,
                "run in progress",
                format!("run {run_id} is already running"),
            ));
        }
        let cap = state.options.max_runs.max(1);
        if runs.len() >= cap {
            return Err(Problem::full("runs", "server.max_runs", cap, 1));
        }
        if !owner.is_process() {
            let share = state.options.tenant_share(cap);
            let held = runs.values().filter(|run| run.owner == owner);
            if held.count() >= share {
                return Err(Problem::share_full("runs", "server.max_runs", share, 1));
            }
        }
        runs.insert(
            run_id.clone(),
            Running {
                cancel: cancel.clone(),
                owner: owner.clone(),
            },
        );
    }
    let events = Some(relay(state, &run_id, events));
    let (tx, rx) = oneshot::channel();
    let task_state = state.clone();
    state.tasks.spawn(
        async move {
            let options = RunOptions {
                run_id: Some(run_id.clone()),
                correlation_id,
                cancel: Some(cancel),
                events,
                stream_results: !wait,
                owner,
            };
            let outcome = task_state.runner.run(&plan, options).await;
            task_state
                .runs
                .lock()
                .unwrap_or_else(|e| e.into_inner())
                .remove(&run_id);
            match outcome {
                Ok(result) => {
                    let _ = tx.send(result);
                }
                // Its lease is held: another replica took the run first (the
                // store's claim refusal names the holder).
                Err(e)
                    if e.0.iter().all(|p| {
                        p.field == "run_id" && p.message.contains("being run by another process")
                    }) =>
                {
                    tracing::debug!(run_id, error = %e, "the run is taken")
                }
                Err(e) => tracing::error!(run_id, error = %e, "the run could not start"),
            }
        }
        .in_current_span(),
    );
    Ok(rx)
}

/// The sender a run reports to: each event goes to the caller's stream, if it
/// asked for one, and to whoever follows the run (`GET /v1/runs/{id}/events`),
/// until the run ends and drops its sender.
fn relay(
    state: &Arc<AppState>,
    run_id: &str,
    caller: Option<mpsc::UnboundedSender<PlanEvent>>,
) -> mpsc::UnboundedSender<PlanEvent> {
    let (tx, mut rx) = mpsc::unbounded_channel::<PlanEvent>();
    let (watchers, _) = tokio::sync::broadcast::channel(256);
    state
        .watchers
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .insert(run_id.to_string(), watchers.clone());
    let state = state.clone();
    let run_id = run_id.to_string();
    tokio::spawn(async move {
        while let Some(event) = rx.recv().await {
            if let Some(caller) = &caller {
                let _ = caller.send(event.clone());
            }
            // No followers is not an error.
            let _ = watchers.send(event);
        }
        // Unless the run id already runs again (a resume), with its own.
        let mut all = state.watchers.lock().unwrap_or_else(|e| e.into_inner());
        if all.get(&run_id).is_some_and(|w| w.same_channel(&watchers)) {
            all.remove(&run_id);
        }
    });
    tx
}

/// `GET /v1/runs/{id}/events`: a running run's progress events as SSE, from now
/// until `run_finished`; 404 when the run is not running here (its state is at
/// `GET /v1/runs/{id}`). A follower too slow to keep up misses events, never
/// the end.
pub(crate) async fn follow(
    State(state): State<Arc<AppState>>,
    Extension(access): Extension<Access>,
    Path(id): Path<String>,
) -> Result<Response, Problem> {
    if !running_as(&state, &access, &id) {
        return Err(Problem::not_found(format!(
            "run {id:?} is not running here"
        )));
    }
    let receiver = state
        .watchers
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .get(&id)
        .map(|w| w.subscribe())
        .ok_or_else(|| Problem::not_found(format!("run {id:?} is not running here")))?;
    let stream = futures::stream::unfold(receiver, |mut receiver| async move {
        loop {
            match receiver.recv().await {
                Ok(event) => {
                    let value = serde_json::to_value(&event).unwrap_or(Value::Null);
                    let name = value["event"].as_str().unwrap_or("event").to_string();
                    let sse = Event::default().event(name).data(value.to_string());
                    return Some((Ok::<_, Infallible>(sse), receiver));
                }
                Err(tokio::sync::broadcast::error::RecvError::Lagged(_)) => continue,
                Err(tokio::sync::broadcast::error::RecvError::Closed) => return None,
            }
        }
    });
    Ok(Sse::new(stream)
        .keep_alive(KeepAlive::default())
        .into_response())
}

/// `POST /v1/runs`: 202 with the run id; `?wait=true` → 200 with the plan result;
/// `Accept: text/event-stream` → the run's progress events, then `result`.
pub(crate) async fn start(
    State(state): State<Arc<AppState>>,
    Extension(access): Extension<Access>,
    Query(query): Query<StartQuery>,
    headers: HeaderMap,
    RawBody(body): RawBody,
) -> Result<Response, Problem> {
    let plan = parse_plan(body).await?;
    access.check_plan(&plan)?;
    state
        .runner
        .validate_as(&plan, &access.owner())
        .map_err(invalid_plan)?;
    let run_id = match query.run_id {
        Some(id) => {
            // A run id seen before resumes that run: only its own tenant's.
            let taken = in_flight(&state, &id).is_some_and(|owner| !access.reads(&owner))
                || load_run(&state, &id)
                    .await?
                    .is_some_and(|record| !access.reads(&record.owner));
            if taken {
                return Err(Problem::new(
                    StatusCode::CONFLICT,
                    "run exists",
                    format!("run_id: {id:?} is another client's run; choose another id"),
                ));
            }
            id
        }
        None => ulid::Ulid::new().to_string(),
    };
    let wants_events = crate::api::wants_events(&headers);
    if query.queue {
        return enqueue(
            &state,
            &plan,
            &run_id,
            query.wait || wants_events,
            access.owner(),
        )
        .await;
    }

    if wants_events {
        let (tx, rx) = mpsc::unbounded_channel();
        let done = launch(
            &state,
            plan,
            run_id.clone(),
            query.correlation_id,
            Some(tx),
            false,
            access.owner(),
        )?;
        let store = state.runner.store().clone();
        return Ok(Sse::new(event_stream(rx, done, store, run_id))
            .keep_alive(KeepAlive::default())
            .into_response());
    }
    let done = launch(
        &state,
        plan,
        run_id.clone(),
        query.correlation_id,
        None,
        query.wait,
        access.owner(),
    )?;
    if query.wait {
        let result = done.await.map_err(|_| {
            Problem::new(
                StatusCode::INTERNAL_SERVER_ERROR,
                "run lost",
                format!("run {run_id} ended without a result"),
            )
        })?;
        return Ok(Json(result).into_response());
    }
    Ok(accepted(&run_id, "running"))
}

/// `POST /v1/runs?queue=true`: keep the run for whichever replica takes it up
/// first (the takeover loop, `takeover.rs`); 202 with status `queued`.
async fn enqueue(
    state: &Arc<AppState>,
    plan: &Plan,
    run_id: &str,
    waits: bool,
    owner: axon_core::Owner,
) -> Result<Response, Problem> {
    if !state.takeover {
        return Err(Problem::bad_request(
            "queue: no replica takes queued runs up here; set [store] takeover = true (the default with [store] url)".to_string(),
            "/queue",
        ));
    }
    if waits {
        return Err(Problem::bad_request(
            "queue: a queued run cannot be waited for or streamed; follow it at GET /v1/runs/{id}"
                .to_string(),
            "/queue",
        ));
    }
    // What is queued is kept in the store, where a literal secret is masked: the
    // replica that takes the run up would send "***" on.
    if let Some(step) = axon_plan::secrets::masked_plan(plan).and_then(|masked| {
        plan.steps
            .iter()
            .zip(&masked.steps)
            .position(|(given, stored)| given != stored)
    }) {
        return Err(Problem::new(
            StatusCode::UNPROCESSABLE_ENTITY,
            "secret in a queued plan",
            format!(
                "queue: step {step} holds a literal secret (a password or token field); a queued run is kept in the store, where secrets are masked: pass it as ${{secret.NAME}}"
            ),
        ));
    }
    // The queue is shared by every replica: its length is the store's. The
    // count and the insert are one step here (concurrent requests to this
    // replica cannot all see room for one more); replicas racing each other
    // may each add one past the cap.
    let cap = state.options.max_queued_runs.max(1);
    let _one_at_a_time = state.enqueueing.lock().await;
    let waiting = state
        .store
        .queue
        .pending_runs(cap as u32)
        .await
        .map_err(store_failed)?;
    if waiting.len() >= cap {
        return Err(Problem::full(
            "queued runs",
            "server.max_queued_runs",
            cap,
            5,
        ));
    }
    if !owner.is_process() {
        queued_share(state, &owner, &waiting, cap).await?;
    }
    let stored = state.store.queue.enqueue(run_id, plan, &owner);
    stored.await.map_err(|e| match e {
        StoreError::Conflict { message } => {
            Problem::new(StatusCode::CONFLICT, "run exists", message)
        }
        other => store_failed(other),
    })?;
    Ok(accepted(run_id, "queued"))
}

/// 503 when `owner` (a tenant) holds its share of the queue's cap already. Only a
/// queue longer than the share can hold that many of one tenant's runs, so
/// the records are read only then.
async fn queued_share(
    state: &AppState,
    owner: &axon_core::Owner,
    waiting: &[String],
    cap: usize,
) -> Result<(), Problem> {
    let share = state.options.tenant_share(cap);
    if waiting.len() < share {
        return Ok(());
    }
    let mut held = 0;
    for id in waiting {
        let record = load_run(state, id).await?;
        if record.is_some_and(|r| r.owner == *owner) {
            held += 1;
        }
    }
    if held >= share {
        return Err(Problem::share_full(
            "queued runs",
            "server.max_queued_runs",
            share,
            5,
        ));
    }
    Ok(())
}

/// The run's events as SSE (`event:` is the event's name, `data:` its JSON), then
/// one `result` event with the plan result as stored: a stream is watched and
/// relayed, so it carries the masked forms, as the step events do.
fn event_stream(
    events: mpsc::UnboundedReceiver<PlanEvent>,
    done: oneshot::Receiver<PlanResult>,
    store: Arc<dyn axon_plan::RunStore>,
    run_id: String,
) -> impl Stream<Item = Result<Event, Infallible>> {
    futures::stream::unfold((events, Some(done)), move |(mut events, done)| {
        let (store, run_id) = (store.clone(), run_id.clone());
        async move {
            if let Some(event) = events.recv().await {
                let value = serde_json::to_value(&event).unwrap_or(Value::Null);
                let name = value["event"].as_str().unwrap_or("event").to_string();
                let sse = Event::default().event(name).data(value.to_string());
                return Some((Ok(sse), (events, done)));
            }
            // The run dropped its sender: it has ended.
            let live = done?.await.ok()?;
            let stored = match store.load(&run_id).await {
                Ok(Some(record)) => record.result,
                _ => None,
            };
            let data = match stored {
            Some(result) => serde_json::to_string(&result).unwrap_or_default(),
            // Not stored (the store failed): the outcome without any data.
            None => json!({"run_id": live.run_id, "status": live.status, "duration_ms": live.duration_ms,
                           "error": "the run's result could not be read back from the store"})
                .to_string(),
        };
            Some((
                Ok(Event::default().event("result").data(data)),
                (events, None),
            ))
        }
    })
}

/// `GET /v1/runs/{id}`: `running`, or how it ended, with the steps finished so far.
pub(crate) async fn get(
    State(state): State<Arc<AppState>>,
    Extension(access): Extension<Access>,
    Path(id): Path<String>,
) -> Result<Json<Value>, Problem> {
    let running = running_as(&state, &access, &id);
    let record = load_run_as(&state, &access, &id).await?;
    let Some(record) = record else {
        return if running {
            Ok(Json(
                json!({"run_id": id, "status": "running", "steps_total": null, "steps_finished": 0, "steps": [], "result": null}),
            ))
        } else {
            Err(Problem::not_found(format!("no run {id:?}")))
        };
    };
    let status = match (&record.result, running) {
        (_, true) => "running",
        (Some(result), false) => result.status.as_str(),
        // Not running here: another replica runs it, or one will take it up,
        // or its server stopped mid-run (POST /v1/runs?run_id=… resumes it).
        (None, false) => unfinished_status(&state, &id).await?,
    };
    // A running run one of whose steps waits for a person says so.
    let status = if status == "running" && waits_for_approval(&state, &id).await? {
        "waiting_approval"
    } else {
        status
    };
    Ok(Json(json!({
        "run_id": id,
        "status": status,
        "steps_total": record.plan.steps.len(),
        "steps_finished": record.steps.len(),
        "steps": record.steps.values().collect::<Vec<_>>(),
        "result": record.result,
    })))
}

/// Whether a step of run `id` is parked for approval (its approval's
/// correlation id is the run's), wherever it runs.
async fn waits_for_approval(state: &AppState, id: &str) -> Result<bool, Problem> {
    let pending = state
        .executor()
        .approvals()
        .list(true, 1000)
        .await
        .map_err(store_failed)?;
    Ok(pending.iter().any(|a| a.correlation_id == id))
}

/// The state of a run without a result that this server does not run, from
/// its lease: `running` (another replica), `queued` (a replica will take it up)
/// or `interrupted`.
async fn unfinished_status(state: &AppState, id: &str) -> Result<&'static str, Problem> {
    let hold = state.store.queue.run_hold(id).await.map_err(store_failed)?;
    Ok(match hold {
        axon_store_roles::RunHold::Held => "running",
        axon_store_roles::RunHold::Pending => "queued",
        axon_store_roles::RunHold::Free => "interrupted",
    })
}

/// `GET /v1/runs` query.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct ListQuery {
    status: Option<String>,
    before: Option<i64>,
    limit: Option<u32>,
}

/// `GET /v1/runs`: a page of runs, newest first. A run without a result is
/// `running` when a server runs it, `queued` when one will take it up, else
/// `interrupted`.
pub(crate) async fn list(
    State(state): State<Arc<AppState>>,
    Extension(access): Extension<Access>,
    Query(query): Query<ListQuery>,
) -> Result<Json<Value>, Problem> {
    let limit = query.limit.unwrap_or(50);
    if !(1..=500).contains(&limit) {
        return Err(Problem::bad_request(
            format!("limit: {limit} is not between 1 and 500"),
            "/limit",
        ));
    }
    let wanted = query.status.as_deref();
    let filter = match wanted {
        None => None,
        Some("running" | "queued" | "interrupted") => Some(axon_store_roles::RunFilter::Unfinished),
        Some(ended @ ("succeeded" | "failed" | "cancelled")) => {
            Some(axon_store_roles::RunFilter::Ended(ended.to_string()))
        }
        Some(other) => {
            return Err(Problem::bad_request(
                format!(
                    "status: {other:?} is not running, queued, interrupted, succeeded, failed or cancelled"
                ),
                "/status",
            ));
        }
    };
    let rows = state
        .store
        .listing
        .list_runs(&axon_store_roles::RunQuery {
            status: filter,
            before_ms: query.before,
            limit,
            tenant: access.owner().tenant().map(str::to_string),
        })
        .await
        .map_err(|e| store_failed(format!("cannot list runs: {e}")))?;
    let next_before = (rows.len() == limit as usize)
        .then(|| rows.last().map(|r| r.updated_at_ms))
        .flatten();
    let running: std::collections::HashSet<String> = state
        .runs
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .keys()
        .cloned()
        .collect();
    let mut runs: Vec<axon_store_roles::RunSummary> = Vec::with_capacity(rows.len());
    for mut run in rows {
        if running.contains(&run.run_id) {
            run.status = Some("running".into());
        } else if run.status.is_none() {
            run.status = Some(unfinished_status(&state, &run.run_id).await?.into());
        }
        if wanted.is_none() || run.status.as_deref() == wanted {
            runs.push(run);
        }
    }
    Ok(Json(json!({"runs": runs, "next_before": next_before})))
}

/// The owner of run `id` if it is in flight here.
fn in_flight(state: &AppState, id: &str) -> Option<axon_core::Owner> {
    state
        .runs
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .get(id)
        .map(|run| run.owner.clone())
}

/// Whether run `id` is in flight here and `access` may see it.
fn running_as(state: &AppState, access: &Access, id: &str) -> bool {
    in_flight(state, id).is_some_and(|owner| access.reads(&owner))
}

/// A run as the store keeps it, if `access` may see it (another tenant's run
/// is as absent as one that never was); 503 when the store cannot be read.
async fn load_run_as(
    state: &AppState,
    access: &Access,
    id: &str,
) -> Result<Option<axon_plan::RunRecord>, Problem> {
    Ok(load_run(state, id)
        .await?
        .filter(|record| access.reads(&record.owner)))
}

/// A run as the store keeps it; 503 when the store cannot be read.
async fn load_run(state: &AppState, id: &str) -> Result<Option<axon_plan::RunRecord>, Problem> {
    state.runner.store().load(id).await.map_err(store_failed)
}

/// `DELETE /v1/runs/{id}`: cancel a run in flight (202); 409 when it has ended.
pub(crate) async fn cancel(
    State(state): State<Arc<AppState>>,
    Extension(access): Extension<Access>,
    Path(id): Path<String>,
) -> Result<Response, Problem> {
    access.check_admin("cancelling a run")?;
    let token = state
        .runs
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .get(&id)
        .map(|run| run.cancel.clone());
    if let Some(token) = token {
        token.cancel();
        return Ok((
            StatusCode::ACCEPTED,
            Json(json!({"run_id": id, "status": "cancelling"})),
        )
            .into_response());
    }
    match load_run(&state, &id).await? {
        Some(_) => Err(Problem::new(
            StatusCode::CONFLICT,
            "run not in progress",
            format!("run {id} is not running"),
        )),
        None => Err(Problem::not_found(format!("no run {id:?}"))),
    }
}

/// `POST /v1/runs/{id}/resume`: run a stored run again under its id, with the
/// plan it began with: finished steps are reused from their checkpoints, the
/// rest run (an interrupted or cancelled run finishes). 202 like `POST /v1/runs`;
/// 409 while it runs.
pub(crate) async fn resume(
    State(state): State<Arc<AppState>>,
    Extension(access): Extension<Access>,
    Path(id): Path<String>,
) -> Result<Response, Problem> {
    let Some(record) = load_run_as(&state, &access, &id).await? else {
        return Err(Problem::not_found(format!("no run {id:?}")));
    };
    access.check_plan(&record.plan)?;
    state
        .runner
        .validate_as(&record.plan, &access.owner())
        .map_err(invalid_plan)?;
    launch(
        &state,
        record.plan,
        id.clone(),
        None,
        None,
        false,
        access.owner(),
    )?;
    Ok(accepted(&id, "running"))
}

/// 202 for a run started in the background (`running`) or queued
/// (`queued`), `Location` its state.
fn accepted(run_id: &str, status: &str) -> Response {
    let location = format!("/v1/runs/{run_id}");
    let mut response = (
        StatusCode::ACCEPTED,
        Json(json!({"run_id": run_id, "status": status, "href": location})),
    )
        .into_response();
    if let Ok(value) = HeaderValue::from_str(&location) {
        response.headers_mut().insert(header::LOCATION, value);
    }
    response
}

#[derive(Deserialize)]
pub(crate) struct GraphQuery {
    /// `dot`, `mermaid` (the default) or `json`.
    format: Option<String>,
}

/// `GET /v1/runs/{id}/graph?format=dot|mermaid`: the run's plan as a graph
/// (steps as nodes, dependencies as edges, template-only ones dashed), for
/// docs, CI logs and the dashboard.
pub(crate) async fn graph(
    State(state): State<Arc<AppState>>,
    Extension(access): Extension<Access>,
    Path(id): Path<String>,
    Query(query): Query<GraphQuery>,
) -> Result<Response, Problem> {
    let format: axon_plan::GraphFormat = query
        .format
        .as_deref()
        .unwrap_or("mermaid")
        .parse()
        .map_err(|e: axon_core::UnknownName| Problem::bad_request(e.to_string(), "/format"))?;
    let record = load_run_as(&state, &access, &id).await?;
    let Some(record) = record else {
        return Err(Problem::not_found(format!("no run {id:?}")));
    };
    let graph = axon_plan::validate(&record.plan, state.runner.executor().registry())
        .map_err(invalid_plan)?;
    let content_type = match format {
        axon_plan::GraphFormat::Dot => "text/vnd.graphviz; charset=utf-8",
        axon_plan::GraphFormat::Mermaid => "text/plain; charset=utf-8",
        axon_plan::GraphFormat::Json => "application/json",
    };
    Ok((
        [(header::CONTENT_TYPE, HeaderValue::from_static(content_type))],
        axon_plan::render_graph(&record.plan, &graph, format),
    )
        .into_response())
}

#[derive(Deserialize)]
pub(crate) struct PlanQuery {
    /// `true`: the plan compiled for replay (axon-plan's `replay.rs`).
    #[serde(default)]
    replay: bool,
}

/// `GET /v1/runs/{id}/plan?replay=true`: the plan a run ran, or, with
/// `replay`, compiled to replay it without a translator: each `browser_act`
/// step that succeeded replaced by the browser call it made, with the step
/// itself as its fallback; which steps were replaced and why others were not.
pub(crate) async fn plan(
    State(state): State<Arc<AppState>>,
    Extension(access): Extension<Access>,
    Path(id): Path<String>,
    Query(query): Query<PlanQuery>,
) -> Result<Response, Problem> {
    let Some(record) = load_run_as(&state, &access, &id).await? else {
        return Err(Problem::not_found(format!("no run {id:?}")));
    };
    if !query.replay {
        return Ok(Json(serde_json::json!({ "plan": record.plan })).into_response());
    }
    let compiled = axon_plan::compile_replay(&record);
    Ok(Json(serde_json::json!({
        "plan": compiled.plan,
        "replay": {"replaced": compiled.replaced, "kept": compiled.kept},
    }))
    .into_response())
}
