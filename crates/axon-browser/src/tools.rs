//! The page-level browser tools: open a page, read its state and HTML, take a
//! screenshot. Each call works on the page of its correlation id (a plan run
//! shares one page across its steps).

use std::sync::Arc;

use axon_core::{Annotations, ErrorKind, RegistryError, ToolContext, ToolError, ToolRegistry};
use chromiumoxide::cdp::browser_protocol::page::{EventLifecycleEvent, NavigateParams};
use chromiumoxide::page::Page;
use futures::StreamExt;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

use crate::actions;
use crate::cdp::{self, Evaluated};
use crate::locate::{self, Address, Want};
use crate::session::{Browsers, cdp_error};
use crate::snapshot::{self, Snapshot, SnapshotArgs};

/// When `browser_navigate` returns.
#[derive(Clone, Copy, Debug, Default, Deserialize, JsonSchema, PartialEq)]
#[serde(rename_all = "lowercase")]
pub enum WaitUntil {
    /// The `load` event: the page and its subresources.
    #[default]
    Load,
    /// The HTML is parsed (`DOMContentLoaded`).
    Domcontentloaded,
    /// `load`, then no network connections for 500 ms (Chromium's
    /// `networkIdle` lifecycle event, as Playwright's `networkidle`).
    Networkidle,
}

impl WaitUntil {
    /// The `Page.lifecycleEvent` name that ends the wait.
    fn event(self) -> &'static str {
        match self {
            WaitUntil::Load => "load",
            WaitUntil::Domcontentloaded => "DOMContentLoaded",
            WaitUntil::Networkidle => "networkIdle",
        }
    }
}

/// `browser_navigate` arguments.
#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct NavigateArgs {
    /// An absolute URL (http, https; file only when enabled).
    pub url: String,
    /// When to return.
    #[serde(default)]
    pub wait_until: WaitUntil,
    /// Max wait, ms.
    pub timeout_ms: Option<u64>,
}

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

/// No arguments.
#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct NoArgs {}

/// `browser_get_page_html` arguments.
#[derive(Deserialize, JsonSchema)]
#[schemars(deny_unknown_fields)]
pub struct HtmlArgs {
    /// An element (by selector, ref, role, label or has_text): its outer HTML
    /// instead of the whole page.
    #[serde(flatten)]
    pub address: Address,
    /// Max wait, ms.
    pub timeout_ms: Option<u64>,
}

/// `browser_take_screenshot` arguments.
#[derive(Deserialize, JsonSchema)]
#[schemars(deny_unknown_fields)]
pub struct ScreenshotArgs {
    /// The whole page, not only the viewport.
    #[serde(default)]
    pub full_page: bool,
    /// Write the image here instead of returning it.
    pub path: Option<String>,
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

/// Evaluate `expression` on `page` and return its JSON value.
pub(crate) async fn eval(page: &Page, expression: &str) -> Result<Value, ToolError> {
    match cdp::evaluate(page, expression, true).await? {
        Evaluated::Value(v) => Ok(v),
        Evaluated::Thrown(text) => Err(ToolError::transient(format!(
            "evaluating on the page: {text}"
        ))),
        Evaluated::Object(_) => Ok(Value::Null),
    }
}

pub(crate) async fn navigate(
    browsers: &Browsers,
    args: NavigateArgs,
    ctx: &ToolContext,
) -> Result<Value, ToolError> {
    browsers.config().check_url(&args.url)?;
    let timeout = browsers
        .config()
        .timeout(args.timeout_ms, browsers.config().timeouts.navigate_ms);
    let page = browsers.page_for(ctx).await?;
    // Listen before navigating, so the event cannot be missed.
    let mut events = page
        .event_listener::<EventLifecycleEvent>()
        .await
        .map_err(|e| cdp_error("listening for page events", &e))?;
    let wanted = args.wait_until.event();
    let deadline = tokio::time::Instant::now() + timeout;
    // A navigation the page started itself (a form a click submitted a moment
    // ago) can replace ours; then ours is sent again, up to three times.
    for _ in 0..3 {
        let sent = page
            .execute(NavigateParams::new(args.url.clone()))
            .await
            .map(|r| {
                (
                    r.result.error_text.clone(),
                    r.result.loader_id.clone(),
                    r.result.frame_id.clone(),
                )
            });
        let (loader, frame) = match sent {
            Ok((Some(error), _, _)) if error.contains("ERR_ABORTED") => continue,
            Ok((Some(error), _, _)) => return Err(navigation_error(&args.url, &error)),
            Ok((None, loader, frame)) => (loader, frame),
            Err(e) => {
                if browsers.browser_died().await {
                    return Err(ToolError::transient(format!(
                        "the browser died during navigation: {e}"
                    )));
                }
                return Err(navigation_error(&args.url, &e.to_string()));
            }
        };
        // A same-document navigation (only the fragment changed) has no loader.
        let Some(loader) = loader else {
            return page_state(&page).await.map(|s| json!(s));
        };
        let reached = tokio::time::timeout_at(deadline, async {
            // Another loader's `init` replaces ours only once ours has begun:
            // events from before (the navigation ours replaced) don't count.
            let mut begun = false;
            while let Some(event) = events.next().await {
                if event.frame_id != frame {
                    continue;
                }
                if event.loader_id == loader {
                    begun = true;
                    if event.name == wanted {
                        return Reached::Yes;
                    }
                } else if begun && event.name == "init" {
                    return Reached::Replaced;
                }
            }
            Reached::Closed
        })
        .await;
        match reached {
            Ok(Reached::Yes) => return page_state(&page).await.map(|s| json!(s)),
            Ok(Reached::Replaced) => {
                tracing::debug!(url = %args.url, "another navigation replaced ours; sending it again");
            }
            Ok(Reached::Closed) => {
                return Err(ToolError::transient(format!(
                    "the page closed while loading {}",
                    args.url
                )));
            }
            Err(_) => {
                return Err(ToolError::new(
                    ErrorKind::Timeout,
                    format!(
                        "{} did not reach {wanted} within {} ms",
                        args.url,
                        timeout.as_millis()
                    ),
                )
                .with_code("navigation_timeout"));
            }
        }
    }
    Err(ToolError::transient(format!(
        "the navigation to {} was replaced by the page's own three times",
        args.url
    )))
}

/// How waiting for a navigation's lifecycle event ended.
enum Reached {
    Yes,
    /// Another navigation of the same frame began.
    Replaced,
    /// The page went away.
    Closed,
}

/// Chromium's `errorText` for a failed navigation, as an Axon error:
/// unreachable sites (`net::ERR_CONNECTION_REFUSED`, name not resolved, …) are
/// `unavailable`; anything else Chromium refuses is `navigation_blocked`.
fn navigation_error(url: &str, text: &str) -> ToolError {
    let unreachable = [
        "CONNECTION",
        "NAME_NOT_RESOLVED",
        "ADDRESS_UNREACHABLE",
        "TIMED_OUT",
        "INTERNET_DISCONNECTED",
    ];
    if unreachable.iter().any(|k| text.contains(k)) {
        ToolError::unavailable(format!("{url}: {text}")).with_code("navigation_failed")
    } else {
        ToolError::failed(format!("{url}: {text}")).with_code("navigation_blocked")
    }
}

async fn page_state(page: &Page) -> Result<PageState, ToolError> {
    let value = eval(page, STATE_JS).await?;
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

async fn html(browsers: &Browsers, page: &Page, args: &HtmlArgs) -> Result<String, ToolError> {
    if args.address.is_empty() {
        return page
            .content()
            .await
            .map_err(|e| cdp_error("reading the page", &e));
    }
    let timeout = browsers
        .config()
        .timeout(args.timeout_ms, browsers.config().timeouts.element_ms);
    let target = args.address.target()?;
    let found = locate::wait_for(page, &target, Want::Attached, timeout).await?;
    match cdp::call_on(
        page,
        &found.object,
        "function() { return this.outerHTML; }",
        &[],
    )
    .await
    {
        Ok(Evaluated::Value(Value::String(html))) => Ok(html),
        _ => Err(
            ToolError::transient(format!("{target}: the element was detached"))
                .with_code("element_detached"),
        ),
    }
}

async fn screenshot(
    browsers: &Browsers,
    page: &Page,
    args: &ScreenshotArgs,
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
                ToolError::transient(format!("{} was detached", found.element()))
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
        Some(path) => {
            let bytes = decode_base64(base64)
                .ok_or_else(|| ToolError::internal("the browser sent invalid base64"))?;
            tokio::fs::write(path, &bytes).await.map_err(|e| {
                ToolError::failed(format!("cannot write {path}: {e}")).with_code("io")
            })?;
            Ok(
                json!({"format": format, "mime_type": mime_type, "path": path, "bytes": bytes.len()}),
            )
        }
    }
}

/// Standard base64 (what CDP sends) to bytes.
fn decode_base64(text: &str) -> Option<Vec<u8>> {
    let value = |c: u8| -> Option<u32> {
        Some(match c {
            b'A'..=b'Z' => c - b'A',
            b'a'..=b'z' => c - b'a' + 26,
            b'0'..=b'9' => c - b'0' + 52,
            b'+' => 62,
            b'/' => 63,
            _ => return None,
        } as u32)
    };
    let clean: Vec<u8> = text
        .bytes()
        .filter(|&c| c != b'=' && !c.is_ascii_whitespace())
        .collect();
    let mut out = Vec::with_capacity(clean.len() * 3 / 4);
    for chunk in clean.chunks(4) {
        let mut n = 0u32;
        for (i, &c) in chunk.iter().enumerate() {
            n |= value(c)? << (18 - 6 * i);
        }
        let bytes = n.to_be_bytes();
        out.extend_from_slice(&bytes[1..chunk.len()]);
    }
    Some(out)
}

fn read_only() -> Annotations {
    Annotations {
        read_only: true,
        idempotent: true,
        open_world: true,
        ..Annotations::default()
    }
}

/// Acts on the page; repeating it is harmless (typing into a cleared field,
/// selecting the same option, scrolling to an element).
fn idempotent() -> Annotations {
    Annotations {
        idempotent: true,
        open_world: true,
        ..Annotations::default()
    }
}

/// Acts on the page in a way that may not be safe to repeat (a click, a key
/// press, a submit): not retried after a timeout unless the policy says so.
fn acting() -> Annotations {
    Annotations {
        open_world: true,
        // `Annotations::default()` is idempotent (a plain function tool): a
        // click is not. Its "never happened" failures (element not ready) are
        // still retried: they are `ToolError::before_acting`.
        idempotent: false,
        ..Annotations::default()
    }
}

/// A tool (not yet registered) whose handler is `$f(&Browsers, args, &ToolContext)`:
/// the closure that clones the shared browsers into each call, written once.
macro_rules! browser_fn {
    ($browsers:expr, $name:literal, $description:literal, $f:path) => {{
        let b = $browsers.clone();
        axon_core::tool_fn(
            $name,
            $description,
            move |args, ctx: axon_core::ToolContext| {
                let b = b.clone();
                async move { $f(&b, args, &ctx).await }
            },
        )
    }};
}
pub(crate) use browser_fn;

/// Register one browser tool (see [`browser_fn`]) that also takes `session`.
macro_rules! browser_tool {
    ($registry:expr, $browsers:expr, $name:literal, $annotations:expr, $description:literal, $f:path) => {{
        $registry.register(crate::handles::WithSession::new(
            browser_fn!($browsers, $name, $description, $f).annotations($annotations),
        ))?;
    }};
}

/// Register every browser tool, all sharing `browsers`: the session tools, and
/// the page and element tools, each taking an optional `session` handle.
pub fn register(registry: &mut ToolRegistry, browsers: Arc<Browsers>) -> Result<(), RegistryError> {
    crate::handles::register(registry, browsers.clone())?;
    browser_tool!(
        registry,
        browsers,
        "browser_navigate",
        idempotent(),
        "Opens a URL and returns the page state. Blocked hosts fail with code navigation_blocked.",
        navigate
    );
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
        "browser_get_page_html",
        read_only(),
        "The page's HTML, or one element's outer HTML (address it by selector, ref, role+name, label or has_text).",
        get_page_html
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
        "browser_click",
        acting(),
        "Clicks an element once it is visible, enabled, stable and not covered. Address it by one of selector, ref, role(+name), label, has_text.",
        actions::click
    );
    browser_tool!(
        registry,
        browsers,
        "browser_type",
        idempotent(),
        "Types `text` into an element (or the focused one); `clear` empties it first.",
        actions::type_text
    );
    browser_tool!(
        registry,
        browsers,
        "browser_clear_input",
        idempotent(),
        "Empties a text field.",
        actions::clear_input
    );
    browser_tool!(
        registry,
        browsers,
        "browser_get_text",
        read_only(),
        "An element's visible text (and a field's value, except a password's).",
        actions::get_text
    );
    browser_tool!(
        registry,
        browsers,
        "browser_wait_for_element",
        read_only(),
        "Waits until an element is attached, visible (default), hidden or detached.",
        actions::wait_for_element
    );
    browser_tool!(
        registry,
        browsers,
        "browser_verify_element_exists",
        read_only(),
        "Whether an element exists (and is visible), as a boolean; never fails for absence. timeout_ms keeps looking that long.",
        actions::verify_exists
    );
    browser_tool!(
        registry,
        browsers,
        "browser_extract_table",
        read_only(),
        "A table (default: the first on the page) as rows keyed by header, colspan and rowspan filled in; format csv adds a CSV string.",
        actions::extract_table
    );
    browser_tool!(
        registry,
        browsers,
        "browser_wait_for_url_change",
        read_only(),
        "Waits until the page URL differs from `from` (default: the URL now) or fits the pattern `to` (* matches anything; no * means contains).",
        actions::wait_for_url_change
    );
    browser_tool!(
        registry,
        browsers,
        "browser_select_option",
        idempotent(),
        "Selects options of a <select> by `values` or `index`; several values for a multi-select.",
        actions::select_option
    );
    browser_tool!(
        registry,
        browsers,
        "browser_submit_form",
        acting(),
        "Submits a form (the addressed one, the one around the focused element, else the first) and waits for the next page. Invalid fields fail with code invalid_form.",
        actions::submit_form
    );
    browser_tool!(
        registry,
        browsers,
        "browser_search",
        acting(),
        "Finds the page's search box, types `query` and presses Enter.",
        actions::search
    );
    browser_tool!(
        registry,
        browsers,
        "browser_scroll",
        idempotent(),
        "Scrolls the page by `pixels` (default 800) in a direction, to the top or bottom, or until an element is in view.",
        actions::scroll
    );
    browser_tool!(
        registry,
        browsers,
        "browser_press_key",
        acting(),
        "Presses a key (Enter, Tab, Escape, ArrowDown, a, Control+a) on the focused element, or on an element it focuses first.",
        actions::press_key
    );
    browser_tool!(
        registry,
        browsers,
        "browser_wait",
        read_only(),
        "Waits `seconds` (at most browser.timeouts.wait_max_ms), for pages that settle without a signal to wait for.",
        wait
    );
    browser_tool!(
        registry,
        browsers,
        "browser_snapshot",
        read_only(),
        "The page's accessibility tree as lines (role \"name\" [ref=e12]): controls, headings, text. A ref addresses its element in other tools.",
        take_snapshot
    );
    Ok(())
}

async fn get_page_state(
    b: &Browsers,
    _: NoArgs,
    ctx: &ToolContext,
) -> Result<PageState, ToolError> {
    let page = b.page_for(ctx).await?;
    page_state(&page).await
}

async fn get_page_html(
    b: &Browsers,
    args: HtmlArgs,
    ctx: &ToolContext,
) -> Result<Value, ToolError> {
    let page = b.page_for(ctx).await?;
    html(b, &page, &args).await.map(|h| json!({"html": h}))
}

async fn take_screenshot(
    b: &Browsers,
    args: ScreenshotArgs,
    ctx: &ToolContext,
) -> Result<Value, ToolError> {
    let page = b.page_for(ctx).await?;
    screenshot(b, &page, &args).await
}

async fn wait(b: &Browsers, args: actions::WaitArgs, _: &ToolContext) -> Result<Value, ToolError> {
    actions::wait(b, args).await
}

async fn take_snapshot(
    b: &Browsers,
    args: SnapshotArgs,
    ctx: &ToolContext,
) -> Result<Snapshot, ToolError> {
    let page = b.page_for(ctx).await?;
    let mut snap = snapshot::snapshot(&page, args.max_nodes).await?;
    if !args.nodes {
        snap.nodes.clear();
    }
    Ok(snap)
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
