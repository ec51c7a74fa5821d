//! Back and forward through the tab's pages: `browser_navigate_back` and
//! `browser_navigate_forward`, across documents and across the route
//! changes of a single-page app (`history.pushState`), as the browser's own
//! buttons go.

use std::sync::Arc;
use std::time::Duration;

use axon_core::{RegistryError, ToolContext, ToolError, ToolRegistry};
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::{Value, json};

use super::acting;
use crate::cdp;
use crate::input;
use crate::session::Browsers;

/// `browser_navigate_back` / `_forward` arguments.
#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct HistoryArgs {
    /// Max wait for the page to load, ms.
    pub timeout_ms: Option<u64>,
}

/// A route change shows at once; a document's load may take the timeout.
const QUIET: Duration = Duration::from_millis(1_000);

async fn go(
    b: &Browsers,
    args: HistoryArgs,
    ctx: &ToolContext,
    step: i64,
) -> Result<Value, ToolError> {
    let timeout = b
        .config()
        .timeout(args.timeout_ms, b.config().timeouts.navigate_ms);
    let page = b.page_for(ctx).await?;
    let history = cdp::send(&page, "Page.getNavigationHistory", json!({})).await?;
    let at = history["currentIndex"].as_i64().unwrap_or(0) + step;
    let entries = history["entries"]
        .as_array()
        .map(Vec::as_slice)
        .unwrap_or_default();
    let Some(entry) = usize::try_from(at).ok().and_then(|i| entries.get(i)) else {
        let way = if step < 0 { "back" } else { "forward" };
        return Err(
            ToolError::failed(format!("there is no page to go {way} to")).with_code("no_history"),
        );
    };
    // The page it leads to is checked as a navigation to it would be.
    if let Some(url) = entry["url"].as_str() {
        b.config().check_url(url)?;
    }
    let marker = input::mark_document(&page).await?;
    cdp::send(
        &page,
        "Page.navigateToHistoryEntry",
        json!({"entryId": entry["id"]}),
    )
    .await?;
    input::settle(&page, &marker, QUIET.min(timeout), timeout).await?;
    let state = super::page::page_state(&page).await?;
    Ok(json!(state))
}

/// `browser_go_back`: the tab's previous page, waited for.
pub async fn back(b: &Browsers, args: HistoryArgs, ctx: &ToolContext) -> Result<Value, ToolError> {
    go(b, args, ctx, -1).await
}

/// `browser_go_forward`: the tab's next page, waited for.
pub async fn forward(
    b: &Browsers,
    args: HistoryArgs,
    ctx: &ToolContext,
) -> Result<Value, ToolError> {
    go(b, args, ctx, 1).await
}

pub(super) fn register(
    registry: &mut ToolRegistry,
    browsers: &Arc<Browsers>,
) -> Result<(), RegistryError> {
    browser_tool!(
        registry,
        browsers,
        "browser_navigate_back",
        acting(),
        "Goes back one page in the session's history; returns the page state.",
        back
    );
    browser_tool!(
        registry,
        browsers,
        "browser_navigate_forward",
        acting(),
        "Goes forward one page in the session's history; returns the page state.",
        forward
    );
    Ok(())
}
