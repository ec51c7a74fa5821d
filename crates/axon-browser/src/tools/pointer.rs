//! The pointer without a click: `browser_hover` (menus that open while the
//! pointer is over them) and `browser_drag` (a list item dragged onto
//! another, a card onto a column).
//!
//! A drag is what a person's mouse does: press on the source, move, release
//! on the target. Pages that drag on pointer events see exactly that. Pages
//! that use HTML5 drag and drop (`draggable`, `dragstart`/`drop`) need more:
//! Chromium starts no native drag for synthetic input, so the drag it would
//! start is intercepted (`Input.setInterceptDrags`) and its data dropped on
//! the target with `Input.dispatchDragEvent` — what Playwright does.

use std::sync::Arc;
use std::time::Duration;

use axon_core::{RegistryError, ToolContext, ToolError, ToolRegistry};
use chromiumoxide::cdp::browser_protocol::input::EventDragIntercepted;
use chromiumoxide::page::Page;
use futures::StreamExt;
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::{Value, json};

use super::{Acted, ElementArgs, acting, element, idempotent};
use crate::cdp;
use crate::locate::{Address, Found, Want};
use crate::session::Browsers;

/// How long a drag the page starts may take to show up.
const DRAG_START: Duration = Duration::from_millis(150);

pub(crate) async fn hover(
    b: &Browsers,
    args: ElementArgs,
    ctx: &ToolContext,
) -> Result<Acted, ToolError> {
    let (page, timeout) = b.start(ctx, args.timeout_ms, |t| t.click_ms).await?;
    let found = element(&page, &args.address, Want::Point, timeout).await?;
    let (x, y) = point(&found);
    mouse(&page, "mouseMoved", x, y, false).await?;
    Ok(Acted {
        element: found.element(),
        matched_by: None,
    })
}

/// `browser_drag` arguments.
#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct DragArgs {
    /// The element to drag (selector, ref, role+name, label or has_text).
    pub source: Address,
    /// The element to drop it on.
    pub target: Address,
    /// Max wait for each, ms.
    pub timeout_ms: Option<u64>,
}

pub(crate) async fn drag(
    b: &Browsers,
    args: DragArgs,
    ctx: &ToolContext,
) -> Result<Value, ToolError> {
    let (page, timeout) = b.start(ctx, args.timeout_ms, |t| t.click_ms).await?;
    // The pointer goes to the source first and both are measured after: a
    // menu the pointer was hovering closes as it leaves, and the page moves
    // under it (the drag after "hover over Products" pressed on empty space).
    let first = element(&page, &args.source, Want::Point, timeout)
        .await
        .map_err(|e| super::under("/source", e))?;
    let (x, y) = point(&first);
    mouse(&page, "mouseMoved", x, y, false).await?;
    let to = element(&page, &args.target, Want::Point, timeout)
        .await
        .map_err(|e| super::under("/target", e))?;
    let from = element(&page, &args.source, Want::Point, timeout)
        .await
        .map_err(|e| super::under("/source", e))?;
    let (x1, y1) = point(&from);
    let (x2, y2) = point(&to);
    cdp::send(&page, "Input.setInterceptDrags", json!({"enabled": true})).await?;
    let dragged = pointer_drag(&page, (x1, y1), (x2, y2)).await;
    let _ = cdp::send(&page, "Input.setInterceptDrags", json!({"enabled": false})).await;
    Ok(json!({
        "source": from.element(),
        "target": to.element(),
        "html5": dragged?,
    }))
}

/// Press at `from`, move to `to` and release there; whether the page started
/// an HTML5 drag (then dropped through `Input.dispatchDragEvent`).
async fn pointer_drag(page: &Page, from: (f64, f64), to: (f64, f64)) -> Result<bool, ToolError> {
    let mut intercepted = page
        .event_listener::<EventDragIntercepted>()
        .await
        .map_err(|e| ToolError::transient(format!("listening for drags: {e}")))?;
    mouse(page, "mouseMoved", from.0, from.1, false).await?;
    mouse(page, "mousePressed", from.0, from.1, true).await?;
    // A drag starts once the pointer has moved a few pixels.
    mouse(page, "mouseMoved", from.0 + 6.0, from.1 + 6.0, true).await?;
    let data = tokio::time::timeout(DRAG_START, intercepted.next())
        .await
        .ok()
        .flatten();
    for step in 1..=5 {
        let f = f64::from(step) / 5.0;
        let (x, y) = (from.0 + (to.0 - from.0) * f, from.1 + (to.1 - from.1) * f);
        if data.is_none() {
            mouse(page, "mouseMoved", x, y, true).await?;
        }
    }
    if let Some(event) = &data {
        let data = serde_json::to_value(&event.data).unwrap_or_default();
        for kind in ["dragEnter", "dragOver", "drop"] {
            let event = json!({"type": kind, "x": to.0, "y": to.1, "data": data});
            cdp::send(page, "Input.dispatchDragEvent", event).await?;
        }
    }
    mouse(page, "mouseReleased", to.0, to.1, false).await?;
    Ok(data.is_some())
}

/// One mouse event at (`x`, `y`); `held`: the left button is down during
/// it (a move while dragging, the press itself).
async fn mouse(page: &Page, kind: &str, x: f64, y: f64, held: bool) -> Result<(), ToolError> {
    let mut event = json!({"type": kind, "x": x, "y": y, "buttons": u8::from(held)});
    if kind != "mouseMoved" || held {
        event["button"] = json!("left");
    }
    if kind != "mouseMoved" {
        event["clickCount"] = json!(1);
    }
    cdp::send(page, "Input.dispatchMouseEvent", event)
        .await
        .map(|_| ())
}

fn point(found: &Found) -> (f64, f64) {
    (
        found.info["x"].as_f64().unwrap_or(0.0),
        found.info["y"].as_f64().unwrap_or(0.0),
    )
}

pub(super) fn register(
    registry: &mut ToolRegistry,
    browsers: &Arc<Browsers>,
) -> Result<(), RegistryError> {
    browser_tool!(
        registry,
        browsers,
        "browser_hover",
        idempotent(),
        "Moves the pointer over an element (menus that open on hover).",
        hover
    );
    browser_tool!(
        registry,
        browsers,
        "browser_drag",
        acting(),
        "Drags the source element onto the target (pointer or HTML5 drag and drop).",
        drag
    );
    Ok(())
}
