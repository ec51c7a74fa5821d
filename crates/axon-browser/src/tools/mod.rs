//! The browser tools, grouped by what they do, each file holding its tools'
//! argument types, their names, descriptions and annotations, and their code:
//!
//! - [`navigation`]: `browser_navigate`, `browser_wait_for_url_change`;
//! - [`elements`]: `browser_click`, `browser_type`, `browser_clear_input`,
//!   `browser_press_key`, `browser_wait_for_element`;
//! - [`forms`]: `browser_select_option`, `browser_submit_form`, `browser_search`,
//!   `browser_fill_form`, `browser_upload_file`; [`widgets`]: the select of
//!   custom drop-downs (ARIA comboboxes and listboxes);
//! - [`reading`]: `browser_get_text`, `browser_verify_element_exists`,
//!   `browser_extract_table`, `browser_get_page_html`, `browser_snapshot`;
//! - [`page`]: `browser_get_page_state`, `browser_take_screenshot`,
//!   `browser_scroll`, `browser_wait`, `browser_resize`, `browser_pdf_save`;
//! - [`tabs`](self::tabs): `browser_tabs`;
//! - [`back_forward`]: `browser_navigate_back`, `browser_navigate_forward`;
//! - [`mouse`]: `browser_hover`, `browser_drag`, `browser_mouse_click_xy`;
//! - [`verify`](self::verify): `browser_verify_text_visible`, `browser_verify_value`;
//! - [`site_data`](self::site_data): `browser_cookies`, `browser_storage`;
//! - [`emulation`](self::emulation): `browser_emulate`;
//! - [`routing`](self::routing): `browser_route`, `browser_unroute`;
//! - [`recording`](self::recording): `browser_recording`;
//! - [`dialog`](self::dialog): `browser_handle_dialog`;
//! - [`devtools`]: `browser_console_messages`, `browser_network_requests`,
//!   `browser_evaluate` (only with `[browser] allow_evaluate`).
//!
//! Every call works on the page of its session (the call's correlation id, or a
//! `session` handle: `crate::handles`). This file holds what they share: the
//! registration macros, the annotation kinds, and finding an element.

use std::sync::Arc;
use std::time::Duration;

use axon_core::{Annotations, RegistryError, ToolError, ToolRegistry};
use chromiumoxide::page::Page;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use tokio::time::Instant;

use crate::locate::{self, Address, Found, Want};
use crate::session::Browsers;

/// A tool (not yet registered) whose handler is `$f(&Browsers, args, &ToolContext)`:
/// the closure that clones the shared browsers into each call, written once.
/// Each run is a `browser.<action>` span under the attempt that made it.
macro_rules! browser_fn {
    ($browsers:expr, $name:literal, $description:literal, $f:path) => {{
        let b = $browsers.clone();
        axon_core::tool_fn(
            $name,
            $description,
            move |args, ctx: axon_core::ToolContext| {
                let b = b.clone();
                async move { crate::tools::traced($name, $f(&b, args, &ctx)).await }
            },
        )
    }};
}

/// Run one browser action in its span (`browser_click` → `browser.click`), which
/// records how it failed.
pub async fn traced<T>(
    tool: &'static str,
    work: impl std::future::Future<Output = Result<T, ToolError>>,
) -> Result<T, ToolError> {
    let action = tool.strip_prefix("browser_").unwrap_or(tool);
    let span = tracing::debug_span!(
        "browser_action",
        otel.name = %format_args!("browser.{action}"),
        axon.browser.action = action,
        error.type = tracing::field::Empty,
        otel.status_code = tracing::field::Empty,
        otel.status_description = tracing::field::Empty,
    );
    let out = tracing::Instrument::instrument(work, span.clone()).await;
    if let Err(e) = &out {
        axon_core::trace::record_error(&span, e.kind.as_str(), e.code.as_deref());
    }
    out
}

/// Register one browser tool (see [`browser_fn`]) that also takes `session`.
macro_rules! browser_tool {
    ($registry:expr, $browsers:expr, $name:literal, $annotations:expr, $description:literal, $f:path) => {{
        $registry.register(crate::tools::with_session::WithSession::new(
            browser_fn!($browsers, $name, $description, $f).annotations($annotations),
            $browsers.clone(),
        ))?;
    }};
}

pub(crate) mod back_forward;
pub(crate) mod devtools;
pub(crate) mod dialog;
pub(crate) mod elements;
pub(crate) mod emulation;
pub(crate) mod forms;
pub(crate) mod handles;
pub(crate) mod mouse;
pub(crate) mod navigation;
pub(crate) mod page;
pub(crate) mod reading;
pub(crate) mod recording;
pub(crate) mod routing;
pub(crate) mod site_data;
pub(crate) mod tabs;
pub(crate) mod verify;
pub(crate) mod widgets;
pub(crate) mod with_session;

pub use elements::{ClickArgs, ElementState, PressKeyArgs, TypeArgs, WaitForElementArgs};
pub use forms::{OneOrMany, SearchArgs, SelectArgs, SubmitArgs};
pub use navigation::{NavigateArgs, UrlChangeArgs, WaitUntil};
pub use page::{Direction, Edge, PageState, ScrollArgs, WaitArgs};
pub use reading::{TableArgs, TableFormat, VerifyArgs};
pub use tabs::{TabAction, TabsArgs};

/// Register every browser tool, all sharing `browsers`: the session tools, and
/// the page and element tools, each taking an optional `session` handle.
pub fn register(registry: &mut ToolRegistry, browsers: Arc<Browsers>) -> Result<(), RegistryError> {
    handles::register(registry, browsers.clone())?;
    navigation::register(registry, &browsers)?;
    elements::register(registry, &browsers)?;
    forms::register(registry, &browsers)?;
    reading::register(registry, &browsers)?;
    tabs::register(registry, &browsers)?;
    back_forward::register(registry, &browsers)?;
    mouse::register(registry, &browsers)?;
    devtools::register(registry, &browsers)?;
    dialog::register(registry, &browsers)?;
    verify::register(registry, &browsers)?;
    site_data::register(registry, &browsers)?;
    emulation::register(registry, &browsers)?;
    routing::register(registry, &browsers)?;
    recording::register(registry, &browsers)?;
    page::register(registry, &browsers)
}

/// No arguments.
#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct NoArgs {}

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

/// Arguments of tools that take an element and a timeout.
#[derive(Deserialize, JsonSchema)]
#[schemars(deny_unknown_fields)]
pub struct ElementArgs {
    #[serde(flatten)]
    /// The element (exactly one of selector, ref, role, label, has_text).
    pub address: Address,
    /// Max wait, ms.
    pub timeout_ms: Option<u64>,
}

/// What an element action did.
#[derive(Debug, Serialize, JsonSchema)]
pub struct Acted {
    /// The element acted on (`tag#id.class`).
    pub element: String,
    /// How it was found, when a fallback was used (`role+name`, `role`, `text`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub matched_by: Option<String>,
}

/// An error of one part of a call's arguments (a drag's `/source`, a form's
/// `/fields/2`), its message prefixed with that part.
fn under(field: &str, e: ToolError) -> ToolError {
    ToolError {
        message: format!("{field}: {}", e.message),
        ..e
    }
}

/// Ask `probe` every `every` until it answers `Some`, for up to `timeout`
/// (it is asked at least once, and once more at the deadline's edge);
/// `Ok(None)` when time ran out. A probe's error ends the wait. With a
/// `page`, it is asked again as soon as the page's document changes
/// ([`locate::next_change`]), `every` being the longest gap.
async fn poll<T, F, Fut>(
    page: Option<&Page>,
    timeout: Duration,
    every: Duration,
    mut probe: F,
) -> Result<Option<T>, ToolError>
where
    F: FnMut() -> Fut,
    Fut: std::future::Future<Output = Result<Option<T>, ToolError>>,
{
    let start = Instant::now();
    loop {
        if let Some(found) = probe().await? {
            return Ok(Some(found));
        }
        let elapsed = start.elapsed();
        if elapsed >= timeout {
            return Ok(None);
        }
        let gap = every.min(timeout - elapsed);
        match page {
            Some(page) => locate::next_change(page, gap).await,
            None => tokio::time::sleep(gap).await,
        }
    }
}

/// The element `address` names, waited for until `want` holds.
async fn element(
    page: &Page,
    address: &Address,
    want: Want,
    timeout: Duration,
) -> Result<Found, ToolError> {
    locate::wait_for(page, &address.target()?, want, timeout).await
}
