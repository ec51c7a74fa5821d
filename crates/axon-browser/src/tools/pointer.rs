//! The pointer: `browser_hover` (menus that open while the pointer is over
//! them), `browser_drag` (a list item dragged onto another, a card onto a
//! column) and `browser_mouse_click_xy` (a point of a canvas).
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

/// Which mouse button.
#[derive(Clone, Copy, Debug, Default, Deserialize, JsonSchema, PartialEq, Eq)]
#[serde(rename_all = "lowercase")]
pub enum Button {
    /// The primary button (default).
    #[default]
    Left,
    /// The context-menu button.
    Right,
    /// The wheel.
    Middle,
}

/// `browser_mouse_click_xy` arguments.
#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ClickXyArgs {
    /// CSS pixels from the viewport's left edge.
    pub x: f64,
    /// CSS pixels from the viewport's top edge.
    pub y: f64,
    /// left (default), right or middle.
    #[serde(default)]
    pub button: Button,
    /// A double click.
    #[serde(default)]
    pub double: bool,
}

/// The viewport's size and what is drawn at a point: `(x, y)`.
const AT_POINT_JS: &str = "(x, y) => { const e = document.elementFromPoint(x, y); \
  const name = e ? e.tagName.toLowerCase() + (e.id ? '#' + e.id : '') : null; \
  return {width: innerWidth, height: innerHeight, element: name}; }";

/// Click at a point of the viewport, for pages drawn on a canvas or an
/// element no snapshot names (MCP capability `vision`, as Playwright MCP's
/// `browser_mouse_click_xy`). A point outside the viewport is refused, not
/// clicked at the edge; the answer names the element that was there.
pub(crate) async fn click_xy(
    b: &Browsers,
    args: ClickXyArgs,
    ctx: &ToolContext,
) -> Result<Value, ToolError> {
    let page = b.page_for(ctx).await?;
    let (x, y) = (args.x, args.y);
    let js = format!("({AT_POINT_JS})({}, {})", json!(x), json!(y));
    let at = super::page::eval(&page, &js).await?;
    let (width, height) = (
        at["width"].as_f64().unwrap_or(0.0),
        at["height"].as_f64().unwrap_or(0.0),
    );
    for (pointer, v, edge) in [("/x", x, width), ("/y", y, height)] {
        if !v.is_finite() || v < 0.0 || v >= edge {
            return Err(ToolError::invalid_arguments(format!(
                "{pointer}: {v} is outside the viewport ({width}×{height})"
            )));
        }
    }
    let button = match args.button {
        Button::Left => "left",
        Button::Right => "right",
        Button::Middle => "middle",
    };
    let clicks = if args.double { 2 } else { 1 };
    cdp::send(
        &page,
        "Input.dispatchMouseEvent",
        json!({"type": "mouseMoved", "x": x, "y": y}),
    )
    .await?;
    for count in 1..=clicks {
        for kind in ["mousePressed", "mouseReleased"] {
            let event =
                json!({"type": kind, "x": x, "y": y, "button": button, "clickCount": count});
            cdp::send(&page, "Input.dispatchMouseEvent", event).await?;
        }
    }
    Ok(json!({"x": x, "y": y, "element": at["element"]}))
}

pub(super) fn register(
    registry: &mut ToolRegistry,
    browsers: &Arc<Browsers>,
) -> Result<(), RegistryError> {
    browser_tool!(
        registry,
        browsers,
        "browser_mouse_click_xy",
        acting(),
        "Clicks at a point of the viewport (x, y in CSS pixels; button, double), for canvas apps; answers the element there.",
        click_xy
    );
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
