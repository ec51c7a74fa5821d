//! Going places: `browser_navigate` (open a URL, wait for it to load, answer
//! with the page state; `[browser]` host and scheme rules are checked first) and
//! `browser_wait_for_url_change` (a redirect, a client-side route).

use std::sync::Arc;
use std::time::Duration;

use axon_core::{ErrorKind, RegistryError, ToolContext, ToolError, ToolRegistry};
use chromiumoxide::cdp::browser_protocol::page::NavigateParams;
use chromiumoxide::page::Page;
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::{Value, json};
use tokio::time::Instant;

mod arrival;

use arrival::{Arrival, Left, Watch};

use super::page::page_state;
use super::{idempotent, poll, read_only};
use crate::cdp::{self, Evaluated};
use crate::session::Browsers;

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

/// `browser_navigate`: go to a URL (checked against `[browser]`'s rules) and
/// wait for the load.
pub async fn navigate(
    browsers: &Browsers,
    args: NavigateArgs,
    ctx: &ToolContext,
) -> Result<Value, ToolError> {
    browsers.config().check_url(&args.url)?;
    if let Some(why) = crate::egress::refused_after_lookup(&args.url).await {
        return Err(ToolError::failed(why).with_code("navigation_blocked"));
    }
    let timeout = browsers
        .config()
        .timeout(args.timeout_ms, browsers.config().timeouts.navigate_ms);
    let page = browsers.page_for(ctx).await?;
    let deadline = tokio::time::Instant::now() + timeout;
    // Every step is held to the deadline, not only the wait for the page:
    // Chromium can hold `Page.navigate`'s answer itself (a page framing a
    // `file:` URL held it for a minute, past the caller's `timeout_ms`).
    let url = args.url.clone();
    let wanted = args.wait_until.event();
    match tokio::time::timeout_at(deadline, go(browsers, &page, args)).await {
        Ok(done) => done,
        Err(_) => Err(navigation_timeout(&url, wanted, timeout)),
    }
}

/// The call's navigation, sent and waited for (the caller holds it to
/// its deadline).
async fn go(browsers: &Browsers, page: &Page, args: NavigateArgs) -> Result<Value, ToolError> {
    // The document ours replaces: what it asks for names it (arrival.rs).
    let current = page.url().await.ok().flatten();
    let left = Left::of(current.as_deref(), &args.url);
    // Listen before navigating, so that no event can be missed.
    let mut watch = Watch::new(page).await?;
    let wanted = args.wait_until.event();
    // A navigation the page ours leaves started (a form a click submitted a
    // moment ago) can replace ours; then ours is sent again, up to three
    // times (arrival.rs).
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
            return page_state(page).await.map(|s| json!(s));
        };
        // The caller's deadline bounds this wait (`navigate`).
        match watch.arrival(&frame, &loader, wanted, left.as_ref()).await {
            Arrival::Yes => return landed(browsers, page).await,
            Arrival::Replaced => {
                tracing::debug!(url = %args.url, "another navigation replaced ours; sending it again");
            }
            Arrival::Closed => {
                return Err(ToolError::transient(format!(
                    "the page closed while loading {}",
                    args.url
                )));
            }
        }
    }
    Err(ToolError::transient(format!(
        "the navigation to {} was replaced by the page's own three times",
        args.url
    )))
}

fn navigation_timeout(url: &str, wanted: &str, timeout: Duration) -> ToolError {
    ToolError::new(
        ErrorKind::Timeout,
        format!(
            "{url} did not reach {wanted} within {} ms",
            timeout.as_millis()
        ),
    )
    .with_code("navigation_timeout")
}

/// The page state after a navigation, unless it ended on a URL the rules
/// refuse (a redirect to a denied host: the proxy kept its content out, and
/// the call says so rather than returning the refusal as a page).
async fn landed(browsers: &Browsers, page: &Page) -> Result<Value, ToolError> {
    let state = page_state(page).await?;
    let refused = match browsers.config().check_url(&state.url) {
        Err(e) => Some(e),
        Ok(()) => crate::egress::refused_after_lookup(&state.url)
            .await
            .map(|why| ToolError::failed(why).with_code("navigation_blocked")),
    };
    if let Some(e) = refused {
        return Err(ToolError {
            message: format!("the navigation ended on {}: {}", state.url, e.message),
            ..e
        });
    }
    Ok(json!(state))
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
    // A tunnel the proxy refused (crate::egress): a rule, not the network.
    if !text.contains("TUNNEL") && unreachable.iter().any(|k| text.contains(k)) {
        ToolError::unavailable(format!("{url}: {text}")).with_code("navigation_failed")
    } else {
        ToolError::failed(format!("{url}: {text}")).with_code("navigation_blocked")
    }
}

/// `browser_wait_for_url_change` arguments.
#[derive(Deserialize, JsonSchema)]
#[schemars(deny_unknown_fields)]
pub struct UrlChangeArgs {
    /// Wait until the URL differs from this (default: the URL now).
    pub from: Option<String>,
    /// Or until the URL fits this pattern (`*`: any characters; without `*`:
    /// contains).
    pub to: Option<String>,
    /// Max wait, ms.
    pub timeout_ms: Option<u64>,
}

/// Whether `url` fits `pattern`: a glob with `*`, else a substring.
pub(crate) fn url_matches(url: &str, pattern: &str) -> bool {
    if !pattern.contains('*') {
        return url.contains(pattern);
    }
    let parts: Vec<&str> = pattern.split('*').collect();
    let (first, last) = (parts[0], parts[parts.len() - 1]);
    if !url.starts_with(first) || url.len() < first.len() + last.len() || !url.ends_with(last) {
        return false;
    }
    let mut rest = &url[first.len()..url.len() - last.len()];
    for part in &parts[1..parts.len() - 1] {
        match rest.find(part) {
            Some(at) => rest = &rest[at + part.len()..],
            None => return false,
        }
    }
    true
}

pub(crate) async fn wait_for_url_change(
    b: &Browsers,
    args: UrlChangeArgs,
    ctx: &ToolContext,
) -> Result<Value, ToolError> {
    let (page, timeout) = b.start(ctx, args.timeout_ms, |t| t.navigate_ms).await?;
    let start = Instant::now();
    let current = || async {
        match cdp::evaluate(&page, "location.href", true).await {
            Ok(Evaluated::Value(Value::String(url))) => Some(url),
            _ => None,
        }
    };
    let from = match args.from {
        Some(from) => from,
        None => current().await.unwrap_or_default(),
    };
    let (current, to, from_url) = (&current, &args.to, &from);
    // A URL changes without a mutation (history.pushState): asked every 25 ms.
    let reached = poll(None, timeout, Duration::from_millis(25), || async move {
        Ok(current().await.filter(|url| match to {
            Some(pattern) => url_matches(url, pattern),
            None => url != from_url,
        }))
    })
    .await?;
    if let Some(url) = reached {
        return Ok(
            json!({"url": url, "from": from, "waited_ms": start.elapsed().as_millis() as u64}),
        );
    }
    let wanted = match &args.to {
        Some(pattern) => format!("to match {pattern:?}"),
        None => format!("to change from {from}"),
    };
    Err(ToolError::failed(format!(
        "the URL did not {wanted} within {} ms",
        timeout.as_millis()
    ))
    .with_code("url_unchanged"))
}

/// Register this file's tools, all sharing `browsers`.
pub(super) fn register(
    registry: &mut ToolRegistry,
    browsers: &Arc<Browsers>,
) -> Result<(), RegistryError> {
    // Navigation failures are the site's, not the browser's: its breaker and
    // limits are kept per origin (policy/dependency.rs in axon-core).
    registry.register(crate::tools::with_session::WithSession::new(
        browser_fn!(
            browsers,
            "browser_navigate",
            "Opens a URL and returns the page state. Blocked hosts fail with code navigation_blocked.",
            navigate
        )
        .annotations(idempotent())
        .dependency(axon_core::Dependency::Origin),
        browsers.clone(),
    ))?;
    browser_tool!(
        registry,
        browsers,
        "browser_wait_for_url_change",
        read_only(),
        "Waits until the page URL differs from `from` (default: the URL now) or fits the pattern `to` (* matches anything; no * means contains).",
        wait_for_url_change
    );
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn url_patterns() {
        assert!(url_matches(
            "http://h/welcome.html?user=ada",
            "/welcome.html"
        ));
        assert!(url_matches("http://h/a/b/done", "http://h/*/done"));
        assert!(url_matches("http://h/a/b/done", "*done"));
        assert!(!url_matches("http://h/a/b/donex", "*done"));
        assert!(url_matches("http://h/x", "*"));
        assert!(!url_matches("http://h/x", "https://*"));
        assert!(url_matches("http://h/a1b2c", "*a*b*c"));
        assert!(!url_matches("ab", "a*b*b"));
    }
}
