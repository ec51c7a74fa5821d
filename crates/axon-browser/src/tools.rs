//! The page-level browser tools: open a page, read its state and HTML, take a
//! screenshot. Each call works on the page of its correlation id (a plan run
//! shares one page across its steps).

use std::sync::Arc;
use std::time::Duration;

use axon_core::{Annotations, RegistryError, ToolContext, ToolError, ToolRegistry, tool_fn};
use chromiumoxide::cdp::browser_protocol::page::{
    CaptureScreenshotFormat, CaptureScreenshotParams, NavigateParams,
};
use chromiumoxide::page::Page;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

use crate::session::{Browsers, cdp_error};

/// When `browser_navigate` returns.
#[derive(Clone, Copy, Debug, Default, Deserialize, JsonSchema, PartialEq)]
#[serde(rename_all = "lowercase")]
pub enum WaitUntil {
    /// The `load` event: the page and its subresources.
    #[default]
    Load,
    /// The HTML is parsed (`document.readyState` is no longer `loading`).
    Domcontentloaded,
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
#[serde(deny_unknown_fields)]
pub struct HtmlArgs {
    /// A CSS selector: that element's outer HTML instead of the whole page.
    pub selector: Option<String>,
}

/// `browser_take_screenshot` arguments.
#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ScreenshotArgs {
    /// The whole page, not only the viewport.
    #[serde(default)]
    pub full_page: bool,
    /// Write the PNG here instead of returning it as base64.
    pub path: Option<String>,
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
    // `null` and `undefined` come back without a value.
    Ok(page
        .evaluate(expression)
        .await
        .map_err(|e| cdp_error("evaluating on the page", &e))?
        .value()
        .cloned()
        .unwrap_or(Value::Null))
}

async fn navigate(
    browsers: &Browsers,
    args: NavigateArgs,
    ctx: &ToolContext,
) -> Result<Value, ToolError> {
    browsers.config().check_url(&args.url)?;
    let page = browsers.page(ctx.correlation_id()).await?;
    let outcome = match args.wait_until {
        WaitUntil::Load => page
            .goto(NavigateParams::new(args.url.clone()))
            .await
            .map(|_| ()),
        WaitUntil::Domcontentloaded => {
            let sent = page
                .execute(NavigateParams::new(args.url.clone()))
                .await
                .map(|r| r.result.error_text.clone());
            match sent {
                Ok(Some(error)) => Err(chromiumoxide::error::CdpError::ChromeMessage(error)),
                Ok(None) => Ok(()),
                Err(e) => Err(e),
            }
        }
    };
    if let Err(e) = outcome {
        if browsers.browser_died().await {
            return Err(ToolError::transient(format!(
                "the browser died during navigation: {e}"
            )));
        }
        let text = e.to_string();
        // net::ERR_CONNECTION_REFUSED, ERR_NAME_NOT_RESOLVED, …: the site is not
        // there (yet). Anything else Chromium refuses is a blocked navigation.
        let unreachable = [
            "CONNECTION",
            "NAME_NOT_RESOLVED",
            "ADDRESS_UNREACHABLE",
            "TIMED_OUT",
            "INTERNET_DISCONNECTED",
        ];
        return Err(if unreachable.iter().any(|k| text.contains(k)) {
            ToolError::unavailable(format!("{}: {text}", args.url)).with_code("navigation_failed")
        } else {
            ToolError::failed(format!("{}: {text}", args.url)).with_code("navigation_blocked")
        });
    }
    if args.wait_until == WaitUntil::Domcontentloaded {
        for _ in 0..200 {
            if eval(&page, "document.readyState").await? != json!("loading") {
                break;
            }
            tokio::time::sleep(Duration::from_millis(25)).await;
        }
    }
    page_state(&page).await.map(|s| json!(s))
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

async fn html(page: &Page, selector: Option<&str>) -> Result<String, ToolError> {
    match selector {
        None => page
            .content()
            .await
            .map_err(|e| cdp_error("reading the page", &e)),
        Some(selector) => {
            let quoted = serde_json::to_string(selector).unwrap_or_default();
            let js = format!(
                "(() => {{ const e = document.querySelector({quoted}); return e ? e.outerHTML : null; }})()"
            );
            match eval(page, &js).await? {
                Value::String(html) => Ok(html),
                _ => Err(
                    ToolError::failed(format!("no element matches {selector:?}"))
                        .with_code("element_not_found"),
                ),
            }
        }
    }
}

async fn screenshot(page: &Page, args: &ScreenshotArgs) -> Result<Value, ToolError> {
    let params = CaptureScreenshotParams::builder()
        .format(CaptureScreenshotFormat::Png)
        .capture_beyond_viewport(args.full_page)
        .build();
    let shot = page
        .execute(params)
        .await
        .map_err(|e| cdp_error("taking a screenshot", &e))?;
    let base64: &str = shot.result.data.as_ref();
    match &args.path {
        None => Ok(json!({"format": "png", "base64": base64})),
        Some(path) => {
            let bytes = decode_base64(base64)
                .ok_or_else(|| ToolError::internal("the browser sent invalid base64"))?;
            tokio::fs::write(path, &bytes).await.map_err(|e| {
                ToolError::failed(format!("cannot write {path}: {e}")).with_code("io")
            })?;
            Ok(json!({"format": "png", "path": path, "bytes": bytes.len()}))
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

/// Register the page-level browser tools, all sharing `browsers`.
pub fn register(registry: &mut ToolRegistry, browsers: Arc<Browsers>) -> Result<(), RegistryError> {
    let b = browsers.clone();
    registry.register(
        tool_fn(
            "browser_navigate",
            "Opens a URL in this session's page and returns the page state (url, title, ready state, viewport, scroll, focus). Blocked hosts and schemes fail with code navigation_blocked; an unreachable site is unavailable.",
            move |args: NavigateArgs, ctx: ToolContext| {
                let b = b.clone();
                async move { navigate(&b, args, &ctx).await }
            },
        )
        .annotations(Annotations { open_world: true, ..Annotations::default() }),
    )?;
    let b = browsers.clone();
    registry.register(
        tool_fn(
            "browser_get_page_state",
            "The page's url, title, ready state, viewport size, scroll position and focused element.",
            move |_: NoArgs, ctx: ToolContext| {
                let b = b.clone();
                async move {
                    let page = b.page(ctx.correlation_id()).await?;
                    page_state(&page).await
                }
            },
        )
        .annotations(read_only()),
    )?;
    let b = browsers.clone();
    registry.register(
        tool_fn(
            "browser_get_page_html",
            "The page's HTML, or one element's outer HTML by CSS selector.",
            move |args: HtmlArgs, ctx: ToolContext| {
                let b = b.clone();
                async move {
                    let page = b.page(ctx.correlation_id()).await?;
                    html(&page, args.selector.as_deref())
                        .await
                        .map(|h| json!({"html": h}))
                }
            },
        )
        .annotations(read_only()),
    )?;
    let b = browsers;
    registry.register(
        tool_fn(
            "browser_take_screenshot",
            "A PNG of the viewport or the full page, as base64 or written to `path`.",
            move |args: ScreenshotArgs, ctx: ToolContext| {
                let b = b.clone();
                async move {
                    let page = b.page(ctx.correlation_id()).await?;
                    screenshot(&page, &args).await
                }
            },
        )
        .annotations(read_only()),
    )?;
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
