//! Pinned imports over HTTP (axon_mcp_client::pin): a tool's pin in
//! `GET /v1/tools/{name}`, every pin not in force in `GET /v1/pins`, and
//! `POST /v1/tools/{name}/accept`, which an admin sends after reading the
//! diff. The pins live in the store, so an acceptance here reaches every
//! replica.

use std::sync::Arc;

use async_trait::async_trait;
use axon_core::StoreError;
use axon_mcp_client::pin::{self, Pin, PinError, PinStatus, PinStore};
use axon_store_roles::PinRows;
use axum::Json;
use axum::extract::{Extension, Path, Query, State};
use serde::Deserialize;
use serde_json::{Value, json};

use crate::AppState;
use crate::access::Access;
use crate::problem::Problem;
use crate::problem::store_failed;

/// The store's pins as a [`PinStore`]: what `axon serve`, `axon mcp` and the
/// CLI import through, so that all of them see one pin per tool.
pub struct StorePins(pub Arc<dyn PinRows>);

#[async_trait]
impl PinStore for StorePins {
    async fn get(&self, tool: &str) -> Result<Option<Pin>, StoreError> {
        self.0
            .pin_get(tool)
            .await?
            .map(|json| parse(&json))
            .transpose()
    }

    async fn put(&self, pin: &Pin) -> Result<(), StoreError> {
        let json = serde_json::to_string(pin)
            .map_err(|e| StoreError::corrupt("a tool pin as a record", e))?;
        self.0.pin_put(&pin.tool, &json).await
    }

    async fn list(&self) -> Result<Vec<Pin>, StoreError> {
        self.0
            .pin_list()
            .await?
            .iter()
            .map(|json| parse(json))
            .collect()
    }
}

fn parse(json: &str) -> Result<Pin, StoreError> {
    serde_json::from_str(json)
        .map_err(|e| StoreError::corrupt(format!("a tool pin does not read: {e}"), e))
}

/// The pin of `tool` as `GET /v1/tools/{name}` shows it (`null` for a tool
/// that is not imported, or imported with `pin = "off"`).
pub(crate) async fn view(store: &Arc<dyn PinRows>, tool: &str) -> Result<Value, Problem> {
    let pin = StorePins(store.clone())
        .get(tool)
        .await
        .map_err(store_failed)?;
    Ok(pin.map_or(Value::Null, |pin| pin.view()))
}

/// `?status=` of `GET /v1/pins`.
#[derive(Deserialize)]
pub(crate) struct PinsQuery {
    status: Option<String>,
}

/// `GET /v1/pins[?status=changed|flagged|new|pinned|held]`: the pins of
/// the tools this caller may call, by name; `held` (changed, flagged or new)
/// when no status is given.
pub(crate) async fn list(
    State(state): State<Arc<AppState>>,
    Extension(access): Extension<Access>,
    Query(query): Query<PinsQuery>,
) -> Result<Json<Value>, Problem> {
    let wanted = query.status.as_deref().unwrap_or("held");
    let keep = |status: PinStatus| match wanted {
        "held" => status != PinStatus::Pinned,
        "all" => true,
        other => status.as_str() == other,
    };
    if !["held", "all", "changed", "flagged", "new", "pinned"].contains(&wanted) {
        return Err(Problem::bad_request(
            format!("status {wanted:?} is not held, all, changed, flagged, new or pinned"),
            "status",
        ));
    }
    let pins = StorePins(state.store.pins.clone())
        .list()
        .await
        .map_err(store_failed)?;
    let pins: Vec<Value> = pins
        .iter()
        .filter(|pin| access.allows(&pin.tool) && keep(pin.status()))
        .map(Pin::view)
        .collect();
    Ok(Json(json!({ "pins": pins })))
}

/// `?fingerprint=` of the accept request: the definition the person read.
#[derive(Deserialize)]
pub(crate) struct AcceptQuery {
    fingerprint: Option<String>,
}

/// `POST /v1/tools/{name}/accept[?fingerprint=]`: accept the tool's listed
/// definition (an admin's call). With `fingerprint`, only if the definition
/// is still that one (409 otherwise).
pub(crate) async fn accept(
    State(state): State<Arc<AppState>>,
    Extension(access): Extension<Access>,
    Path(tool): Path<String>,
    Query(query): Query<AcceptQuery>,
) -> Result<Json<Value>, Problem> {
    access.check_admin("accepting a tool's definition")?;
    let by = match access.owner().tenant() {
        Some(tenant) => format!("api ({tenant})"),
        None => "api".to_string(),
    };
    let store = StorePins(state.store.pins.clone());
    match pin::accept(&store, &tool, query.fingerprint.as_deref(), &by).await {
        Ok(pin) => Ok(Json(pin.view())),
        Err(e @ PinError::NotFound(_)) => Err(Problem::not_found(e.to_string())),
        Err(e @ PinError::Moved { .. }) => Err(Problem::new(
            axum::http::StatusCode::CONFLICT,
            "definition changed",
            e.to_string(),
        )),
        Err(PinError::Store(e)) => Err(store_failed(e)),
    }
}
