//! The page as a whole: `browser_get_page_state` (url, title, ready state,
//! viewport, scroll, focus), `browser_take_screenshot`, `browser_scroll` and
//! `browser_wait`.

use std::sync::Arc;
use std::time::Duration;

use axon_core::{RegistryError, ToolContext, ToolError, ToolRegistry};
use chromiumoxide::page::Page;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

use super::{NoArgs, element, idempotent, read_only};
use crate::cdp::{self, Evaluated};
use crate::locate::{self, Address, Want};
use crate::session::Browsers;

/// Where a page is and what it shows.
#[derive(Debug, Serialize, JsonSchema)]
pub struct PageState {
    /// The current URL.
    pub url: String,
    /// The document title.
    pub title: String,
    /// `loading`, `interactive` or `complete`.
    pub ready_state: String,
    /// The viewport size in CSS pixels.
    pub viewport: Viewport,
    /// How far the page is scrolled.
    pub scroll: Scroll,
    /// The focused element (`tag#id.class`), when one has focus.
    pub focused: Option<String>,
}

/// A size in CSS pixels.
#[derive(Debug, Serialize, Deserialize, JsonSchema)]
pub struct Viewport {
    /// Width.
    pub width: f64,
    /// Height.
    pub height: f64,
}

/// A scroll position in CSS pixels.
#[derive(Debug, Serialize, Deserialize, JsonSchema)]
pub struct Scroll {
    /// Horizontal.
    pub x: f64,
    /// Vertical.
    pub y: f64,
}

const STATE_JS: &str = r##"(() => {
  const f = document.activeElement;
  const focused = f && f !== document.body && f !== document.documentElement
    ? f.tagName.toLowerCase() + (f.id ? "#" + f.id : "") + (typeof f.className === "string" && f.className ? "." + f.className.trim().split(/\s+/).join(".") : "")
    : null;
  return {
    url: location.href, title: document.title, ready_state: document.readyState,
    viewport: {width: innerWidth, height: innerHeight},
    scroll: {x: scrollX, y: scrollY}, focused,
  };
})()"##;

pub(crate) async fn page_state(page: &Page) -> Result<PageState, ToolError> {
    // A page that moves on by itself (a form submitted on load, a script's
    // redirect) can replace its document while this is read ("Inspected
    // target navigated or closed"): read the new one, a few times at most.
    let mut tries = 0;
    let value = loop {
        match cdp::eval(page, STATE_JS).await {
            Ok(value) => break value,
            Err(e) if e.kind == axon_core::ErrorKind::Transient && tries < 3 => {
                tries += 1;
                tokio::time::sleep(std::time::Duration::from_millis(50)).await;
            }
            Err(e) => return Err(e),
        }
    };
    Ok(PageState {
        url: value["url"].as_str().unwrap_or_default().to_string(),
        title: value["title"].as_str().unwrap_or_default().to_string(),
        ready_state: value["ready_state"]
            .as_str()
            .unwrap_or_default()
            .to_string(),
        viewport: serde_json::from_value(value["viewport"].clone()).unwrap_or(Viewport {
            width: 0.0,
            height: 0.0,
        }),
        scroll: serde_json::from_value(value["scroll"].clone())
            .unwrap_or(Scroll { x: 0.0, y: 0.0 }),
        focused: value["focused"].as_str().map(str::to_string),
    })
}

async fn get_page_state(
    b: &Browsers,
    _: NoArgs,
    ctx: &ToolContext,
) -> Result<PageState, ToolError> {
    let page = b.page_for(ctx).await?;
    page_state(&page).await
}

/// `browser_take_screenshot` arguments.
#[derive(Deserialize, JsonSchema)]
#[schemars(deny_unknown_fields)]
pub struct ScreenshotArgs {
    /// The whole page, not only the viewport.
    #[serde(default)]
    pub full_page: bool,
    /// Save to this file name (in the files directory) instead of returning it.
    pub path: Option<String>,
    /// Replace an existing file.
    #[serde(default)]
    pub overwrite: bool,
    /// png (default), jpeg or webp.
    #[serde(default)]
    pub format: ImageFormat,
    /// 1-100, for jpeg and webp (smaller is smaller).
    #[schemars(range(min = 1, max = 100))]
    pub quality: Option<u8>,
    /// Shrink by this factor (0.1-1): an agent rarely needs every pixel.
    #[schemars(range(min = 0.1, max = 1.0))]
    pub scale: Option<f64>,
    /// An element (by selector, ref, role, label or has_text): only its box.
    #[serde(flatten)]
    pub address: Address,
    /// Max wait, ms.
    pub timeout_ms: Option<u64>,
}

/// An image format Chromium encodes.
#[derive(Clone, Copy, Debug, Default, Deserialize, JsonSchema, PartialEq)]
#[serde(rename_all = "lowercase")]
pub enum ImageFormat {
    /// Lossless.
    #[default]
    Png,
    /// Lossy, small.
    Jpeg,
    /// Lossy, smaller.
    Webp,
}

impl ImageFormat {
    fn name(self) -> &'static str {
        match self {
            ImageFormat::Png => "png",
            ImageFormat::Jpeg => "jpeg",
            ImageFormat::Webp => "webp",
        }
    }
}

async fn screenshot(
    browsers: &Browsers,
    page: &Page,
    args: &ScreenshotArgs,
    ctx: &ToolContext,
) -> Result<Value, ToolError> {
    let format = args.format.name();
    let mut params = json!({"format": format, "captureBeyondViewport": args.full_page});
    if let Some(quality) = args.quality
        && args.format != ImageFormat::Png
    {
        params["quality"] = json!(quality.clamp(1, 100));
    }
    if !args.address.is_empty() {
        if args.full_page {
            return Err(ToolError::invalid_arguments(
                "/full_page: an element screenshot shows the element only",
            ));
        }
        let timeout = browsers
            .config()
            .timeout(args.timeout_ms, browsers.config().timeouts.element_ms);
        let found = locate::wait_for(page, &args.address.target()?, Want::Visible, timeout).await?;
        let rect = "function() { this.scrollIntoView({block: 'nearest', behavior: 'instant'}); \
                    const r = this.getBoundingClientRect(); \
                    return {x: r.left + scrollX, y: r.top + scrollY, width: r.width, height: r.height, scale: 1}; }";
        let Ok(Evaluated::Value(clip)) = cdp::call_on(page, &found.object, rect, &[]).await else {
            return Err(
                ToolError::failed(format!("{} was detached", found.element()))
                    .with_code("element_detached"),
            );
        };
        params["clip"] = clip;
        params["captureBeyondViewport"] = json!(true);
    } else if args.full_page {
        // The whole document, not only what the viewport shows.
        if let Evaluated::Value(size) = cdp::evaluate(
            page,
            "({x: 0, y: 0, width: document.documentElement.scrollWidth, height: document.documentElement.scrollHeight, scale: 1})",
            true,
        )
        .await?
        {
            params["clip"] = size;
        }
    }
    if let Some(scale) = args.scale {
        let scale = scale.clamp(0.1, 1.0);
        if params.get("clip").is_none()
            && let Evaluated::Value(view) = cdp::evaluate(
                page,
                "({x: scrollX, y: scrollY, width: innerWidth, height: innerHeight})",
                true,
            )
            .await?
        {
            params["clip"] = view;
        }
        params["clip"]["scale"] = json!(scale);
    }
    let shot = cdp::send(page, "Page.captureScreenshot", params).await?;
    let base64 = shot["data"].as_str().unwrap_or_default();
    let mime_type = format!("image/{format}");
    match &args.path {
        // An MCP client gets `base64` as an image block (never as text).
        None => Ok(json!({"format": format, "mime_type": mime_type, "base64": base64})),
        Some(name) => {
            let bytes = decode_base64(base64)
                .ok_or_else(|| ToolError::internal("the browser sent invalid base64"))?;
            let written = browsers
                .files(ctx, "/path")?
                .write("/path", name, bytes, args.overwrite)
                .await?;
            Ok(
                json!({"format": format, "mime_type": mime_type, "path": written.name, "bytes": written.bytes}),
            )
        }
    }
}

/// Standard base64 (what CDP sends) to bytes.
fn decode_base64(text: &str) -> Option<Vec<u8>> {
    use base64::Engine;
    base64::engine::general_purpose::STANDARD.decode(text).ok()
}

async fn take_screenshot(
    b: &Browsers,
    args: ScreenshotArgs,
    ctx: &ToolContext,
) -> Result<Value, ToolError> {
    // A name the files directory refuses is refused before any work.
    if let Some(name) = &args.path {
        b.files(ctx, "/path")?.resolve("/path", name)?;
    }
    let page = b.page_for(ctx).await?;
    screenshot(b, &page, &args, ctx).await
}

/// Which way `browser_scroll` goes.
#[derive(Clone, Copy, Debug, Deserialize, JsonSchema, PartialEq)]
#[serde(rename_all = "lowercase")]
pub enum Direction {
    /// Towards the top.
    Up,
    /// Towards the bottom.
    Down,
    /// Towards the left edge.
    Left,
    /// Towards the right edge.
    Right,
}

/// Where `browser_scroll` goes in one jump.
#[derive(Clone, Copy, Debug, Deserialize, JsonSchema, PartialEq)]
#[serde(rename_all = "lowercase")]
pub enum Edge {
    /// The top of the page.
    Top,
    /// The bottom of the page.
    Bottom,
}

/// `browser_scroll` arguments: a `direction` (by `pixels`), a `to` edge, or an
/// element to bring into view.
#[derive(Deserialize, JsonSchema)]
#[schemars(deny_unknown_fields)]
pub struct ScrollArgs {
    /// Scroll by `pixels` this way.
    pub direction: Option<Direction>,
    /// How far (default 800).
    pub pixels: Option<f64>,
    /// Jump to the top or the bottom.
    pub to: Option<Edge>,
    #[serde(flatten)]
    /// The element (exactly one of selector, ref, role, label, has_text).
    pub address: Address,
    /// Max wait, ms.
    pub timeout_ms: Option<u64>,
}

/// `browser_scroll`: scroll the page (or the element addressed).
pub async fn scroll(b: &Browsers, args: ScrollArgs, ctx: &ToolContext) -> Result<Value, ToolError> {
    let ways = [
        args.direction.is_some(),
        args.to.is_some(),
        !args.address.is_empty(),
    ];
    if ways.iter().filter(|w| **w).count() != 1 {
        return Err(ToolError::invalid_arguments(
            "give exactly one of direction (with optional pixels), to (top|bottom), or an element",
        ));
    }
    if args.pixels.is_some() && args.direction.is_none() {
        return Err(ToolError::invalid_arguments("/pixels: goes with direction"));
    }
    let page = b.page_for(ctx).await?;
    let position = "({x: scrollX, y: scrollY})";
    let js = if let Some(direction) = args.direction {
        let d = args.pixels.unwrap_or(800.0);
        let (dx, dy) = match direction {
            Direction::Up => (0.0, -d),
            Direction::Down => (0.0, d),
            Direction::Left => (-d, 0.0),
            Direction::Right => (d, 0.0),
        };
        format!(
            "(() => {{ window.scrollBy({{left: {dx}, top: {dy}, behavior: 'instant'}}); return {position}; }})()"
        )
    } else if let Some(edge) = args.to {
        let y = if edge == Edge::Top {
            "0"
        } else {
            "document.scrollingElement.scrollHeight"
        };
        format!(
            "(() => {{ window.scrollTo({{left: scrollX, top: {y}, behavior: 'instant'}}); return {position}; }})()"
        )
    } else {
        let timeout = b
            .config()
            .timeout(args.timeout_ms, b.config().timeouts.scroll_ms);
        let found = element(&page, &args.address, Want::Visible, timeout).await?;
        let into_view = format!(
            "function() {{ this.scrollIntoView({{block: 'center', inline: 'center', behavior: 'instant'}}); return {position}; }}"
        );
        return match cdp::call_on(&page, &found.object, &into_view, &[]).await {
            Ok(Evaluated::Value(mut at)) => {
                at["element"] = json!(found.element());
                Ok(json!({"scroll": {"x": at["x"], "y": at["y"]}, "element": at["element"]}))
            }
            _ => Err(ToolError::failed(format!(
                "{} was detached before scrolling",
                found.element()
            ))
            .with_code("element_detached")),
        };
    };
    match cdp::evaluate(&page, &js, true).await? {
        Evaluated::Value(at) => Ok(json!({"scroll": at})),
        Evaluated::Thrown(text) => Err(ToolError::transient(format!("scrolling: {text}"))),
        Evaluated::Object(_) => Err(ToolError::internal("scroll returned an object")),
    }
}

/// `browser_wait` arguments.
#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct WaitArgs {
    /// How long, in seconds (at most `browser.timeouts.wait_max_ms`); with
    /// `text` or `text_gone`, the longest wait (default
    /// `browser.timeouts.element_ms`).
    pub seconds: Option<f64>,
    /// Wait until this text shows on the page (case and spaces aside).
    pub text: Option<String>,
    /// Wait until this text no longer shows on the page.
    pub text_gone: Option<String>,
}

/// Whether the page's visible text holds the text given (case and runs of
/// spaces aside).
pub(crate) const SHOWS_TEXT: &str = "(want) => { const n = (s) => String(s || '').replace(/\\s+/g, ' ').trim().toLowerCase(); \
    return !!document.body && n(document.body.innerText).includes(n(want)); }";

/// `browser_wait`: wait a time, or until a text shows or goes.
pub async fn wait(b: &Browsers, args: WaitArgs, ctx: &ToolContext) -> Result<Value, ToolError> {
    let max = b.config().timeouts.wait_max_ms as f64 / 1000.0;
    if let Some(seconds) = args.seconds
        && (!seconds.is_finite() || seconds < 0.0 || seconds > max)
    {
        return Err(ToolError::invalid_arguments(format!(
            "/seconds: {seconds} is outside 0..={max} (browser.timeouts.wait_max_ms)"
        )));
    }
    let (text, shown) = match (args.text, args.text_gone, args.seconds) {
        (Some(t), None, _) => (t, true),
        (None, Some(t), _) => (t, false),
        (None, None, Some(seconds)) => {
            let d = Duration::from_secs_f64(seconds);
            tokio::time::sleep(d).await;
            return Ok(json!({"waited_ms": d.as_millis() as u64}));
        }
        _ => {
            return Err(ToolError::invalid_arguments(
                "give seconds, text or text_gone (text and text_gone not both)",
            ));
        }
    };
    if text.trim().is_empty() {
        let field = if shown { "/text" } else { "/text_gone" };
        return Err(ToolError::invalid_arguments(format!("{field}: empty")));
    }
    let limit = match args.seconds {
        Some(seconds) => Duration::from_secs_f64(seconds),
        None => Duration::from_millis(b.config().timeouts.element_ms),
    };
    let page = b.page_for(ctx).await?;
    let started = tokio::time::Instant::now();
    let js = format!("({SHOWS_TEXT})({})", json!(text));
    let done = super::poll(Some(&page), limit, Duration::from_millis(100), || async {
        let now = match cdp::evaluate(&page, &js, true).await {
            Ok(Evaluated::Value(v)) => v == json!(true),
            // Between documents: not shown yet (nor gone for sure).
            _ => return Ok(None),
        };
        Ok((now == shown).then_some(()))
    })
    .await?;
    let waited_ms = started.elapsed().as_millis() as u64;
    match done {
        Some(()) => Ok(json!({"waited_ms": waited_ms, "text": text, "shown": shown})),
        None if shown => Err(ToolError::failed(format!(
            "the text {text:?} did not show (waited {waited_ms} ms)"
        ))
        .with_code("element_not_found")),
        None => Err(ToolError::failed(format!(
            "the text {text:?} still shows (waited {waited_ms} ms)"
        ))
        .with_code("text_still_shown")),
    }
}

/// `browser_resize` arguments.
#[derive(Deserialize, JsonSchema)]
#[schemars(deny_unknown_fields)]
pub struct ResizeArgs {
    /// CSS pixels.
    #[schemars(range(min = 100, max = 10000))]
    pub width: u32,
    /// CSS pixels.
    #[schemars(range(min = 100, max = 10000))]
    pub height: u32,
}

/// Resize the current tab's viewport (a page's mobile layout, a menu that
/// collapses below a width).
async fn resize(b: &Browsers, args: ResizeArgs, ctx: &ToolContext) -> Result<Value, ToolError> {
    for (field, value) in [("/width", args.width), ("/height", args.height)] {
        if !(100..=10_000).contains(&value) {
            return Err(ToolError::invalid_arguments(format!(
                "{field}: {value} is outside 100 to 10000 pixels"
            ))
            .at(field));
        }
    }
    let page = b.page_for(ctx).await?;
    cdp::send(
        &page,
        "Emulation.setDeviceMetricsOverride",
        json!({"width": args.width, "height": args.height, "deviceScaleFactor": 0, "mobile": false}),
    )
    .await?;
    page_state(&page).await.map(|s| json!(s))
}

/// `browser_pdf_save` arguments.
#[derive(Deserialize, JsonSchema)]
#[schemars(deny_unknown_fields)]
pub struct PdfArgs {
    /// A file name in the files folder ([files] dir).
    pub path: String,
    /// Replace a file of that name.
    #[serde(default)]
    pub overwrite: bool,
}

/// Print the current tab to a PDF in the files folder.
async fn pdf_save(b: &Browsers, args: PdfArgs, ctx: &ToolContext) -> Result<Value, ToolError> {
    let dir = b.files(ctx, "/path")?;
    dir.resolve("/path", &args.path)?;
    let page = b.page_for(ctx).await?;
    let printed = cdp::send(&page, "Page.printToPDF", json!({"printBackground": true})).await?;
    let bytes = printed["data"]
        .as_str()
        .and_then(decode_base64)
        .ok_or_else(|| ToolError::internal("the browser sent no PDF"))?;
    let written = dir
        .write("/path", &args.path, bytes, args.overwrite)
        .await?;
    Ok(json!({"path": written.name, "bytes": written.bytes}))
}

/// Register this file's tools, all sharing `browsers`.
pub(super) fn register(
    registry: &mut ToolRegistry,
    browsers: &Arc<Browsers>,
) -> Result<(), RegistryError> {
    browser_tool!(
        registry,
        browsers,
        "browser_get_page_state",
        read_only(),
        "The page's url, title, ready state, viewport size, scroll position and focused element.",
        get_page_state
    );
    browser_tool!(
        registry,
        browsers,
        "browser_take_screenshot",
        read_only(),
        "A PNG of the viewport, the full page, or one element, as base64 or written to `path`.",
        take_screenshot
    );
    browser_tool!(
        registry,
        browsers,
        "browser_scroll",
        idempotent(),
        "Scrolls by `pixels` (default 800) up or down, to the top or bottom, or until an element is in view.",
        scroll
    );
    browser_tool!(
        registry,
        browsers,
        "browser_wait",
        read_only(),
        "Waits until `text` shows or `text_gone` no longer shows on the page (at most `seconds`), or `seconds` alone.",
        wait
    );
    browser_tool!(
        registry,
        browsers,
        "browser_resize",
        idempotent(),
        "Resizes the viewport; returns the page state.",
        resize
    );
    browser_tool!(
        registry,
        browsers,
        "browser_pdf_save",
        read_only(),
        "Saves the page as a PDF to `path` in the files folder.",
        pdf_save
    );
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn base64_round_trips_the_png_signature() {
        assert_eq!(
            decode_base64("iVBORw0KGgo=").unwrap(),
            vec![0x89, b'P', b'N', b'G', 0x0d, 0x0a, 0x1a, 0x0a]
        );
        assert!(decode_base64("not base64!").is_none());
    }
}
