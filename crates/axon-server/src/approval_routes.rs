//! Calls waiting for a person (axon_core::approval) over HTTP:
//! `GET /v1/approvals` lists them, `GET /v1/approvals/{id}` shows one, and
//! `POST /v1/approvals/{id}` approves (optionally with edited arguments) or
//! denies one. The approvals live in the store, so a decision sent to any
//! replica reaches the call wherever it is parked. Deciding takes an admin
//! token: a client does not approve its own calls.

use std::sync::Arc;

use axon_core::approval::{ApprovalError, ApprovalRecord, Decision};
use axum::Json;
use axum::extract::{Extension, Path, Query, State};
use axum::http::StatusCode;
use serde::Deserialize;
use serde_json::{Value, json};

use crate::AppState;
use crate::access::Access;
use crate::problem::store_failed;
use crate::problem::{JsonBody, Problem};

/// `?status=&limit=` of `GET /v1/approvals`.
#[derive(Deserialize)]
pub(crate) struct ListQuery {
    status: Option<String>,
    limit: Option<u32>,
}

/// Whether this caller may see `record`: its own calls (a scoped token), of
/// tools it may call; an admin sees all.
fn visible(access: &Access, record: &ApprovalRecord) -> bool {
    access.reads(&record.owner) && access.allows(&record.tool)
}

/// `GET /v1/approvals[?status=pending|all][&limit=]`: newest first; pending
/// ones unless `status=all`.
pub(crate) async fn list(
    State(state): State<Arc<AppState>>,
    Extension(access): Extension<Access>,
    Query(query): Query<ListQuery>,
) -> Result<Json<Value>, Problem> {
    let pending_only = match query.status.as_deref().unwrap_or("pending") {
        "pending" => true,
        "all" => false,
        other => {
            return Err(Problem::bad_request(
                format!("status {other:?} is not pending or all"),
                "status",
            ));
        }
    };
    let limit = query.limit.unwrap_or(100);
    if !(1..=1000).contains(&limit) {
        return Err(Problem::bad_request(
            format!("limit: {limit} is not between 1 and 1000"),
            "/limit",
        ));
    }
    let records = state
        .executor()
        .approvals()
        .list(pending_only, limit)
        .await
        .map_err(store_failed)?;
    let shown: Vec<ApprovalRecord> = records
        .into_iter()
        .filter(|r| visible(&access, r))
        .map(ApprovalRecord::shown)
        .collect();
    Ok(Json(json!({ "approvals": shown })))
}

/// `GET /v1/approvals/{id}`.
pub(crate) async fn get(
    State(state): State<Arc<AppState>>,
    Extension(access): Extension<Access>,
    Path(id): Path<String>,
) -> Result<Json<ApprovalRecord>, Problem> {
    let record = state
        .executor()
        .approvals()
        .get(&id)
        .await
        .map_err(store_failed)?
        .filter(|r| visible(&access, r))
        .ok_or_else(|| Problem::not_found(format!("no approval {id:?}")))?;
    Ok(Json(record.shown()))
}

/// The body of `POST /v1/approvals/{id}`.
#[derive(Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct DecisionBody {
    /// `approve` or `deny`.
    decision: Verdict,
    /// Run the call with these arguments instead (with `approve`; checked
    /// against the tool's input schema before it runs).
    #[serde(default)]
    args: Option<serde_json::Map<String, Value>>,
    /// A comment for history; with `deny`, the reason the caller is told.
    #[serde(default)]
    comment: Option<String>,
}

/// A decision.
#[derive(Deserialize, schemars::JsonSchema, PartialEq)]
#[serde(rename_all = "lowercase")]
pub(crate) enum Verdict {
    /// Let the call run.
    Approve,
    /// Fail it `approval_denied`.
    Deny,
}

/// `POST /v1/approvals/{id}`: decide (an admin's call).
pub(crate) async fn decide(
    State(state): State<Arc<AppState>>,
    Extension(access): Extension<Access>,
    Path(id): Path<String>,
    JsonBody(body): JsonBody<DecisionBody>,
) -> Result<Json<ApprovalRecord>, Problem> {
    access.check_admin("deciding an approval")?;
    let decision = Decision {
        approve: body.decision == Verdict::Approve,
        by: match access.owner().tenant() {
            Some(tenant) => format!("api ({tenant})"),
            None => "api".to_string(),
        },
        comment: body.comment,
        args: body.args.map(Value::Object),
    };
    match state.executor().approvals().decide(&id, &decision).await {
        Ok(record) => Ok(Json(record.shown())),
        Err(e @ ApprovalError::NotFound(_)) => Err(Problem::not_found(e.to_string())),
        Err(e @ ApprovalError::Decided { .. }) => Err(Problem::new(
            StatusCode::CONFLICT,
            "already decided",
            e.to_string(),
        )),
        Err(ApprovalError::Invalid(message)) => Err(Problem::bad_request(message, "/args")),
        Err(ApprovalError::Store(e)) => Err(store_failed(e)),
    }
}
