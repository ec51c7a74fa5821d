//! The browser frames of calls (issue 63), for the dashboard:
//! `GET /v1/calls/{call_id}/frame` (the page right after a recorded browser
//! action, with the frame before it) and `GET /v1/history/{id}/frames` (a
//! session's frames as a strip). Frames are stored by the browser tools
//! (`axon_core::frames`); a reader gets one only through the call's history
//! entry — of a tool it may call, made by an owner whose calls it may read
//! — and from that owner's folder, so another tenant's call id answers 404
//! as an unknown one does.

use std::sync::Arc;
use std::time::Duration;

use axon_core::HistoryEntry;
use axum::Json;
use axum::extract::{Extension, Path, State};
use serde_json::{Value, json};

use crate::AppState;
use crate::access::Access;
use crate::problem::Problem;
use crate::problem::store_failed;

/// The frames one strip shows at most (the newest).
const MAX_STRIP: usize = 100;

/// How long after its call a frame may still be on its way: the screenshot
/// is taken and stored beside the call, which answered already.
const IN_FLIGHT: Duration = Duration::from_secs(3);

/// `GET /v1/calls/{call_id}/frame`: the call's frame, and the frame before
/// it in its session (`before`) when that one is kept.
pub(crate) async fn frame(
    State(state): State<Arc<AppState>>,
    Extension(access): Extension<Access>,
    Path(call_id): Path<String>,
) -> Result<Json<Value>, Problem> {
    let none = || Problem::not_found(format!("no frame of a call {call_id:?}"));
    let store = state.frames.as_ref().ok_or_else(none)?;
    let entry = state
        .executor()
        .history()
        .by_call_id(&call_id)
        .await
        .map_err(store_failed)?
        .filter(|entry| readable(&access, entry))
        .ok_or_else(none)?;
    let mut frame = arriving(store, &entry).await.ok_or_else(none)?;
    let before = match frame["previous"].as_str() {
        Some(previous) => store.read(&entry.owner, previous).await,
        None => None,
    };
    if let (Some(before), Some(map)) = (before, frame.as_object_mut()) {
        map.insert("before".into(), before);
    }
    Ok(Json(frame))
}

/// `GET /v1/history/{id}/frames`: the frames of a correlation id's (or
/// run's) calls, oldest first, at most the newest [`MAX_STRIP`].
pub(crate) async fn strip(
    State(state): State<Arc<AppState>>,
    Extension(access): Extension<Access>,
    Path(correlation_id): Path<String>,
) -> Result<Json<Value>, Problem> {
    let Some(store) = state.frames.as_ref() else {
        return Ok(Json(json!({"frames": []})));
    };
    let entries = state
        .executor()
        .history()
        .by_correlation(&correlation_id)
        .await
        .map_err(store_failed)?;
    let mut calls: Vec<&HistoryEntry> = entries.iter().filter(|e| readable(&access, e)).collect();
    // The newest call's frame may still be on its way.
    if let Some(newest) = calls.last() {
        let _ = arriving(store, newest).await;
    }
    calls.reverse();
    let mut frames = Vec::new();
    for entry in calls {
        if frames.len() == MAX_STRIP {
            break;
        }
        if let Some(frame) = store.read(&entry.owner, &entry.result.call_id).await {
            frames.push(frame);
        }
    }
    frames.reverse();
    Ok(Json(json!({"frames": frames})))
}

/// Whether the reader may see `entry`: a browser call it may call, made by
/// an owner whose calls it reads.
fn readable(access: &Access, entry: &HistoryEntry) -> bool {
    entry.result.tool.starts_with("browser_")
        && access.allows(&entry.result.tool)
        && access.reads(&entry.owner)
}

/// The frame of `entry`'s call, waiting up to [`IN_FLIGHT`] after the call
/// ended for one still being stored.
async fn arriving(store: &axon_core::frames::FrameStore, entry: &HistoryEntry) -> Option<Value> {
    let ended_ms = entry.result.started_at.unix_ms() + entry.result.duration_ms;
    loop {
        if let Some(frame) = store.read(&entry.owner, &entry.result.call_id).await {
            return Some(frame);
        }
        let now_ms = axon_core::result::Timestamp::now().unix_ms();
        if now_ms > ended_ms + IN_FLIGHT.as_millis() as u64 {
            return None;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}
