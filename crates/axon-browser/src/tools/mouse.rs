//! The mouse: `browser_hover` (menus that open while the pointer is over
//! them), `browser_drag` (a list item dragged onto another, a card onto a
//! column), and for pages drawn on a canvas (MCP capability `vision`),
//! points of the viewport: `browser_mouse_click_xy`, `browser_mouse_move_xy`,
//! `browser_mouse_drag_xy` (press, move, release: a stroke) and
//! `browser_mouse_wheel`.
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

/// `browser_hover`: move the pointer over the element addressed.
pub async fn hover(b: &Browsers, args: ElementArgs, ctx: &ToolContext) -> Result<Acted, ToolError> {
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

/// `browser_drag`: drag one element onto another.
pub async fn drag(b: &Browsers, args: DragArgs, ctx: &ToolContext) -> Result<Value, ToolError> {
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
    let at = inside(&page, [("/x", x), ("/y", y)]).await?;
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

/// What is drawn at the first point, once every point is checked inside
/// the viewport (`invalid_arguments` at the first outside).
async fn inside<const N: usize>(page: &Page, points: [(&str, f64); N]) -> Result<Value, ToolError> {
    let (x, y) = (points[0].1, points.get(1).map_or(0.0, |p| p.1));
    let js = format!("({AT_POINT_JS})({}, {})", json!(x), json!(y));
    let at = crate::cdp::eval(page, &js).await?;
    let (width, height) = (
        at["width"].as_f64().unwrap_or(0.0),
        at["height"].as_f64().unwrap_or(0.0),
    );
    for (i, (pointer, v)) in points.into_iter().enumerate() {
        // x, y, x, y, …
        let edge = if i % 2 == 0 { width } else { height };
        if !v.is_finite() || v < 0.0 || v >= edge {
            return Err(ToolError::invalid_arguments(format!(
                "{pointer}: {v} is outside the viewport ({width}×{height})"
            ))
            .at(pointer));
        }
    }
    Ok(at)
}

/// `browser_mouse_move_xy` arguments.
#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct MoveXyArgs {
    /// CSS pixels from the viewport's left edge.
    pub x: f64,
    /// CSS pixels from the viewport's top edge.
    pub y: f64,
}

/// Move the pointer to a point (a canvas that draws where the pointer is).
pub(crate) async fn move_xy(
    b: &Browsers,
    args: MoveXyArgs,
    ctx: &ToolContext,
) -> Result<Value, ToolError> {
    let page = b.page_for(ctx).await?;
    let at = inside(&page, [("/x", args.x), ("/y", args.y)]).await?;
    mouse(&page, "mouseMoved", args.x, args.y, false).await?;
    Ok(json!({"x": args.x, "y": args.y, "element": at["element"]}))
}

/// `browser_mouse_drag_xy` arguments.
#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct DragXyArgs {
    /// Where the button is pressed (CSS pixels of the viewport).
    pub start_x: f64,
    /// Where the button is pressed.
    pub start_y: f64,
    /// Where it is released.
    pub end_x: f64,
    /// Where it is released.
    pub end_y: f64,
    /// Moves between the two (default 10, 1 to 100): a page that draws
    /// the stroke sees this many points.
    pub steps: Option<u32>,
}

/// Press at one point, move to another in `steps`, release there: a stroke
/// on a canvas, a slider's thumb, a selection box. The button is never
/// left pressed between calls.
pub(crate) async fn drag_xy(
    b: &Browsers,
    args: DragXyArgs,
    ctx: &ToolContext,
) -> Result<Value, ToolError> {
    let steps = args.steps.unwrap_or(10);
    if !(1..=100).contains(&steps) {
        return Err(ToolError::invalid_arguments(format!(
            "/steps: {steps} is not within 1 to 100"
        ))
        .at("/steps"));
    }
    let page = b.page_for(ctx).await?;
    let (x1, y1, x2, y2) = (args.start_x, args.start_y, args.end_x, args.end_y);
    let at = inside(
        &page,
        [
            ("/start_x", x1),
            ("/start_y", y1),
            ("/end_x", x2),
            ("/end_y", y2),
        ],
    )
    .await?;
    mouse(&page, "mouseMoved", x1, y1, false).await?;
    mouse(&page, "mousePressed", x1, y1, true).await?;
    let mut moved = Ok(());
    for i in 1..=steps {
        let t = f64::from(i) / f64::from(steps);
        let (x, y) = (x1 + (x2 - x1) * t, y1 + (y2 - y1) * t);
        moved = mouse(&page, "mouseMoved", x, y, true).await;
        if moved.is_err() {
            break;
        }
    }
    // Released even when a move failed, so no button stays down.
    let released = mouse(&page, "mouseReleased", x2, y2, false).await;
    moved.and(released)?;
    Ok(json!({"from": [x1, y1], "to": [x2, y2], "steps": steps, "element": at["element"]}))
}

/// `browser_mouse_wheel` arguments.
#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct WheelArgs {
    /// Where the pointer is (CSS pixels of the viewport).
    pub x: f64,
    /// Where the pointer is.
    pub y: f64,
    /// Pixels to scroll right (negative: left).
    #[serde(default)]
    pub delta_x: f64,
    /// Pixels to scroll down (negative: up).
    #[serde(default)]
    pub delta_y: f64,
}

/// Turn the wheel over a point: a map that zooms, a canvas that pans, a
/// list that scrolls only under the pointer.
pub(crate) async fn wheel(
    b: &Browsers,
    args: WheelArgs,
    ctx: &ToolContext,
) -> Result<Value, ToolError> {
    for (pointer, v) in [("/delta_x", args.delta_x), ("/delta_y", args.delta_y)] {
        if !v.is_finite() || v.abs() > 100_000.0 {
            return Err(ToolError::invalid_arguments(format!(
                "{pointer}: {v} is not a distance within ±100000"
            ))
            .at(pointer));
        }
    }
    let page = b.page_for(ctx).await?;
    let at = inside(&page, [("/x", args.x), ("/y", args.y)]).await?;
    let event = json!({"type": "mouseWheel", "x": args.x, "y": args.y,
        "deltaX": args.delta_x, "deltaY": args.delta_y});
    cdp::send(&page, "Input.dispatchMouseEvent", event).await?;
    Ok(json!({"x": args.x, "y": args.y, "element": at["element"]}))
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
        "browser_mouse_move_xy",
        idempotent(),
        "Moves the pointer to a point of the viewport (x, y in CSS pixels), for canvas apps; answers the element there.",
        move_xy
    );
    browser_tool!(
        registry,
        browsers,
        "browser_mouse_drag_xy",
        acting(),
        "Presses at (start_x, start_y), moves to (end_x, end_y) in steps and releases: a stroke on a canvas; answers the element at the start.",
        drag_xy
    );
    browser_tool!(
        registry,
        browsers,
        "browser_mouse_wheel",
        acting(),
        "Turns the wheel (delta_x, delta_y pixels) with the pointer at a point of the viewport (x, y).",
        wheel
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
