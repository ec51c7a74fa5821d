//! The element and input tools: click, type, clear, read text, wait for an
//! element, verify it exists, pick options, submit a form, extract a table,
//! search, scroll, press a key, wait for the URL, wait.
//!
//! Each runs on the page of the call's session, finds its element through
//! [`crate::locate`] (auto-waiting up to the action's timeout) and acts with
//! one or two DevTools commands.

use std::time::Duration;

use axon_core::{ToolContext, ToolError};
use chromiumoxide::page::Page;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};
use tokio::time::Instant;

use crate::cdp::{self, Evaluated};
use crate::input;
use crate::locate::{self, Address, Found, HELPERS, Target, Want};
use crate::session::Browsers;

/// `browser_click` arguments.
#[derive(Deserialize, JsonSchema)]
#[schemars(deny_unknown_fields)]
pub struct ClickArgs {
    #[serde(flatten)]
    /// The element (exactly one of selector, ref, role, label, has_text).
    pub address: Address,
    /// With role+name: if none appears, click the first of that role, else
    /// the element with name as its text.
    #[serde(default)]
    pub fallback: bool,
    /// Max wait, ms.
    pub timeout_ms: Option<u64>,
}

/// `browser_type` arguments.
#[derive(Deserialize, JsonSchema)]
#[schemars(deny_unknown_fields)]
pub struct TypeArgs {
    /// The text to type.
    pub text: String,
    #[serde(flatten)]
    /// The element (exactly one of selector, ref, role, label, has_text).
    pub address: Address,
    /// Empty the field first.
    #[serde(default)]
    pub clear: bool,
    /// Max wait, ms.
    pub timeout_ms: Option<u64>,
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

/// What `browser_wait_for_element` waits for.
#[derive(Clone, Copy, Debug, Default, Deserialize, JsonSchema, PartialEq)]
#[serde(rename_all = "lowercase")]
pub enum ElementState {
    /// In the document.
    Attached,
    /// In the document and visible.
    #[default]
    Visible,
    /// Not visible (or not there).
    Hidden,
    /// Not in the document.
    Detached,
}

/// `browser_wait_for_element` arguments.
#[derive(Deserialize, JsonSchema)]
#[schemars(deny_unknown_fields)]
pub struct WaitForElementArgs {
    #[serde(flatten)]
    /// The element (exactly one of selector, ref, role, label, has_text).
    pub address: Address,
    /// The state to wait for.
    #[serde(default)]
    pub state: ElementState,
    /// Max wait, ms.
    pub timeout_ms: Option<u64>,
}

/// `browser_verify_element_exists` arguments.
#[derive(Deserialize, JsonSchema)]
#[schemars(deny_unknown_fields)]
pub struct VerifyArgs {
    #[serde(flatten)]
    /// The element (exactly one of selector, ref, role, label, has_text).
    pub address: Address,
    /// Keep looking this long before answering `false` (default 0: look once).
    #[serde(default)]
    pub timeout_ms: u64,
}

/// One value or several.
#[derive(Clone, Debug, Deserialize, JsonSchema)]
#[serde(untagged)]
pub enum OneOrMany {
    /// One.
    One(String),
    /// Several (a multi-select).
    Many(Vec<String>),
}

/// `browser_select_option` arguments.
#[derive(Deserialize, JsonSchema)]
#[schemars(deny_unknown_fields)]
pub struct SelectArgs {
    #[serde(flatten)]
    /// The element (exactly one of selector, ref, role, label, has_text).
    pub address: Address,
    /// Option values or labels.
    pub values: Option<OneOrMany>,
    /// Or the option at this position (from 0).
    pub index: Option<usize>,
    /// Max wait, ms.
    pub timeout_ms: Option<u64>,
}

/// `browser_submit_form` arguments.
#[derive(Deserialize, JsonSchema)]
#[schemars(deny_unknown_fields)]
pub struct SubmitArgs {
    #[serde(flatten)]
    /// The element (exactly one of selector, ref, role, label, has_text).
    pub address: Address,
    /// Wait for the page the form leads to (default true).
    #[serde(default = "yes")]
    pub wait_for_navigation: bool,
    /// Max wait, ms.
    pub timeout_ms: Option<u64>,
}

fn yes() -> bool {
    true
}

/// How `browser_extract_table` returns the table.
#[derive(Clone, Copy, Debug, Default, Deserialize, JsonSchema, PartialEq)]
#[serde(rename_all = "lowercase")]
pub enum TableFormat {
    /// `rows`: one object per row, keyed by header.
    #[default]
    Json,
    /// `rows` and a `csv` string (RFC 4180), header first.
    Csv,
}

/// `browser_extract_table` arguments.
#[derive(Deserialize, JsonSchema)]
#[schemars(deny_unknown_fields)]
pub struct TableArgs {
    #[serde(flatten)]
    /// The element (exactly one of selector, ref, role, label, has_text).
    pub address: Address,
    /// `json` (default) or `csv`.
    #[serde(default)]
    pub format: TableFormat,
    /// Max wait, ms.
    pub timeout_ms: Option<u64>,
}

/// `browser_wait_for_url_change` arguments.
#[derive(Deserialize, JsonSchema)]
#[schemars(deny_unknown_fields)]
pub struct UrlChangeArgs {
    /// Wait until the URL differs from this (default: the URL now).
    pub from: Option<String>,
    /// Or until the URL fits this pattern: `*` matches any characters; a
    /// pattern without `*` matches any URL that contains it.
    pub to: Option<String>,
    /// Max wait, ms.
    pub timeout_ms: Option<u64>,
}

/// `browser_search` arguments.
#[derive(Deserialize, JsonSchema)]
#[schemars(deny_unknown_fields)]
pub struct SearchArgs {
    /// What to search for.
    pub query: String,
    #[serde(flatten)]
    /// The element (exactly one of selector, ref, role, label, has_text).
    pub address: Address,
    /// Max wait, ms.
    pub timeout_ms: Option<u64>,
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

/// `browser_press_key` arguments.
#[derive(Deserialize, JsonSchema)]
#[schemars(deny_unknown_fields)]
pub struct PressKeyArgs {
    /// A key (`Enter`, `Tab`, `Escape`, `ArrowDown`, `a`) with optional
    /// modifiers (`Control+a`, `Shift+Tab`).
    pub key: String,
    #[serde(flatten)]
    /// The element (exactly one of selector, ref, role, label, has_text).
    pub address: Address,
    /// Max wait, ms.
    pub timeout_ms: Option<u64>,
}

/// `browser_wait` arguments.
#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct WaitArgs {
    /// How long, in seconds (at most `browser.timeouts.wait_max_ms`).
    pub seconds: f64,
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

/// Ask `probe` every `every` until it answers `Some`, for up to `timeout`
/// (it is asked at least once, and once more at the deadline's edge);
/// `Ok(None)` when time ran out. A probe's error ends the wait.
async fn poll<T, F, Fut>(
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
        if start.elapsed() >= timeout {
            return Ok(None);
        }
        tokio::time::sleep(every).await;
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

pub(crate) async fn click(
    b: &Browsers,
    args: ClickArgs,
    ctx: &ToolContext,
) -> Result<Acted, ToolError> {
    let (page, timeout) = b.start(ctx, args.timeout_ms, |t| t.click_ms).await?;
    let target = args.address.target()?;
    let (found, matched_by) = match locate::wait_for(&page, &target, Want::Click, timeout).await {
        Ok(found) => (found, None),
        Err(e) if args.fallback && e.code.as_deref() == Some("element_not_found") => {
            let Target::Role {
                role,
                name: Some(name),
                exact,
            } = &target
            else {
                return Err(e);
            };
            // The page has had the whole timeout to settle: look once each.
            let by_role = Target::Role {
                role: role.clone(),
                name: None,
                exact: *exact,
            };
            let by_text = Target::Text {
                text: name.clone(),
                exact: *exact,
            };
            match locate::wait_for(&page, &by_role, Want::Click, Duration::ZERO).await {
                Ok(found) => (found, Some("role".to_string())),
                Err(_) => {
                    match locate::wait_for(&page, &by_text, Want::Click, Duration::ZERO).await {
                        Ok(found) => (found, Some("text".to_string())),
                        Err(_) => return Err(e),
                    }
                }
            }
        }
        Err(e) => return Err(e),
    };
    let (x, y) = (
        found.info["x"].as_f64().unwrap_or(0.0),
        found.info["y"].as_f64().unwrap_or(0.0),
    );
    input::click_at(&page, x, y).await?;
    Ok(Acted {
        element: found.element(),
        matched_by,
    })
}

/// What `browser_type` did; the text itself is not echoed back.
#[derive(Debug, Serialize, JsonSchema)]
pub struct Typed {
    /// The element typed into.
    pub element: String,
    /// How many characters were typed.
    pub chars: usize,
    /// Whether it was a password field (its text is `***` in history).
    pub password: bool,
}

pub(crate) async fn type_text(
    b: &Browsers,
    args: TypeArgs,
    ctx: &ToolContext,
) -> Result<Typed, ToolError> {
    let (page, timeout) = b.start(ctx, args.timeout_ms, |t| t.type_ms).await?;
    let (element, password, found) = if args.address.is_empty() {
        let js = format!(
            "(() => {{ const e = document.activeElement; if (!e || e === document.body) return null; \
             return {{element: {h}.describe(e), password: e.type === 'password'}}; }})()",
            h = *HELPERS
        );
        match cdp::evaluate(&page, &js, true).await? {
            Evaluated::Value(v) if v.is_object() => (
                v["element"].as_str().unwrap_or_default().to_string(),
                v["password"] == json!(true),
                None,
            ),
            _ => {
                return Err(ToolError::failed(
                    "nothing has focus: give an element (selector, ref, role, label, has_text)",
                )
                .with_code("element_not_found"));
            }
        }
    } else {
        let found = element(&page, &args.address, Want::Type, timeout).await?;
        (
            found.element(),
            found.info["password"] == json!(true),
            Some(found),
        )
    };
    if password {
        ctx.mark_secret("/text");
    }
    if args.clear {
        match &found {
            Some(found) => {
                locate::helper(&page, found, "clearField", &[]).await?;
            }
            None => {
                let js = format!("{}.clearField(document.activeElement)", *HELPERS);
                cdp::evaluate(&page, &js, true).await?;
            }
        }
    }
    input::insert_text(&page, &args.text).await?;
    Ok(Typed {
        element,
        chars: args.text.chars().count(),
        password,
    })
}

pub(crate) async fn clear_input(
    b: &Browsers,
    args: ElementArgs,
    ctx: &ToolContext,
) -> Result<Acted, ToolError> {
    let (page, timeout) = b.start(ctx, args.timeout_ms, |t| t.type_ms).await?;
    let found = element(&page, &args.address, Want::Type, timeout).await?;
    locate::helper(&page, &found, "clearField", &[]).await?;
    Ok(Acted {
        element: found.element(),
        matched_by: None,
    })
}

pub(crate) async fn get_text(
    b: &Browsers,
    args: ElementArgs,
    ctx: &ToolContext,
) -> Result<Value, ToolError> {
    let (page, timeout) = b.start(ctx, args.timeout_ms, |t| t.element_ms).await?;
    let found = element(&page, &args.address, Want::Attached, timeout).await?;
    let mut text = locate::helper(&page, &found, "text", &[]).await?;
    text["element"] = json!(found.element());
    Ok(text)
}

pub(crate) async fn wait_for_element(
    b: &Browsers,
    args: WaitForElementArgs,
    ctx: &ToolContext,
) -> Result<Value, ToolError> {
    let (page, timeout) = b.start(ctx, args.timeout_ms, |t| t.element_ms).await?;
    let target = args.address.target()?;
    let start = Instant::now();
    match args.state {
        ElementState::Attached | ElementState::Visible => {
            let want = if args.state == ElementState::Attached {
                Want::Attached
            } else {
                Want::Visible
            };
            let found = locate::wait_for(&page, &target, want, timeout).await?;
            Ok(json!({"element": found.element(), "waited_ms": start.elapsed().as_millis() as u64}))
        }
        ElementState::Hidden | ElementState::Detached => {
            let (page, target, hidden) = (&page, &target, args.state == ElementState::Hidden);
            let gone = poll(timeout, Duration::from_millis(50), || async move {
                Ok(match locate::locate(page, target).await? {
                    None => Some(()),
                    Some(object) => (hidden
                        && locate::check(page, &object, Want::Visible).await.is_err())
                    .then_some(()),
                })
            })
            .await?;
            if gone.is_some() {
                return Ok(json!({"waited_ms": start.elapsed().as_millis() as u64}));
            }
            let state = if args.state == ElementState::Hidden {
                "visible"
            } else {
                "attached"
            };
            Err(ToolError::failed(format!(
                "{target} is still {state} after {} ms",
                timeout.as_millis()
            ))
            .with_code("element_still_present"))
        }
    }
}

pub(crate) async fn verify_exists(
    b: &Browsers,
    args: VerifyArgs,
    ctx: &ToolContext,
) -> Result<Value, ToolError> {
    let page = b.page_for(ctx).await?;
    let timeout = b.config().timeout(Some(args.timeout_ms), 0);
    let target = args.address.target()?;
    match locate::wait_for(&page, &target, Want::Attached, timeout).await {
        Ok(found) => {
            let visible = locate::check(&page, &found.object, Want::Visible)
                .await
                .is_ok();
            Ok(json!({"exists": true, "visible": visible, "element": found.element()}))
        }
        Err(e)
            if matches!(
                e.code.as_deref(),
                Some("element_not_found" | "element_detached" | "stale_ref")
            ) =>
        {
            Ok(json!({"exists": false, "visible": false}))
        }
        Err(e) => Err(e),
    }
}

pub(crate) async fn select_option(
    b: &Browsers,
    args: SelectArgs,
    ctx: &ToolContext,
) -> Result<Value, ToolError> {
    let values = match (&args.values, args.index) {
        (Some(OneOrMany::One(v)), None) => vec![v.clone()],
        (Some(OneOrMany::Many(v)), None) if !v.is_empty() => v.clone(),
        (None, Some(_)) => Vec::new(),
        _ => {
            return Err(ToolError::invalid_arguments(
                "give either values (a string or a non-empty list) or index",
            ));
        }
    };
    let (page, timeout) = b.start(ctx, args.timeout_ms, |t| t.type_ms).await?;
    let found = element(&page, &args.address, Want::Enabled, timeout).await?;
    let out = locate::helper(
        &page,
        &found,
        "selectOption",
        &[json!(values), json!(args.index)],
    )
    .await?;
    if let Some(error) = out["error"].as_str() {
        return Err(ToolError::failed(error.to_string()).with_code("element_not_interactable"));
    }
    if let Some(missing) = out["missing"].as_str() {
        return Err(ToolError::failed(format!(
            "{} has no option {missing} (options: {})",
            found.element(),
            out["options"]
        ))
        .with_code("element_not_found"));
    }
    Ok(json!({"element": found.element(), "selected": out["selected"], "labels": out["labels"]}))
}

pub(crate) async fn submit_form(
    b: &Browsers,
    args: SubmitArgs,
    ctx: &ToolContext,
) -> Result<Value, ToolError> {
    let (page, timeout) = b.start(ctx, args.timeout_ms, |t| t.navigate_ms).await?;
    let marker = input::mark_document(&page).await?;
    let out = if args.address.is_empty() {
        let js = format!("{}.submit(document.activeElement)", *HELPERS);
        match cdp::evaluate(&page, &js, true).await? {
            Evaluated::Value(v) => v,
            Evaluated::Thrown(text) => {
                return Err(ToolError::transient(format!("submitting: {text}")));
            }
            Evaluated::Object(_) => Value::Null,
        }
    } else {
        let found = element(&page, &args.address, Want::Attached, timeout).await?;
        locate::helper(&page, &found, "submit", &[]).await?
    };
    if let Some(error) = out["error"].as_str() {
        return Err(ToolError::failed(error.to_string()).with_code("element_not_found"));
    }
    if let Some(invalid) = out["invalid"].as_array() {
        let list: Vec<&str> = invalid.iter().filter_map(Value::as_str).collect();
        return Err(
            ToolError::failed(format!("the form was not submitted: {}", list.join("; ")))
                .with_code("invalid_form"),
        );
    }
    let quiet = if args.wait_for_navigation {
        timeout
    } else {
        Duration::ZERO
    };
    let settled = input::settle(&page, &marker, quiet, timeout).await?;
    if args.wait_for_navigation && !settled.navigated {
        return Err(ToolError::failed(format!(
            "the form was submitted but no page followed within {} ms (a script may handle it; pass wait_for_navigation: false)",
            timeout.as_millis()
        ))
        .with_code("no_navigation"));
    }
    Ok(json!({
        "form": out["form"], "navigated": settled.navigated,
        "url": settled.url, "title": settled.title,
    }))
}

pub(crate) async fn extract_table(
    b: &Browsers,
    args: TableArgs,
    ctx: &ToolContext,
) -> Result<Value, ToolError> {
    let (page, timeout) = b.start(ctx, args.timeout_ms, |t| t.element_ms).await?;
    let address = if args.address.is_empty() {
        Address {
            selector: Some("table".into()),
            ..Address::default()
        }
    } else {
        args.address
    };
    let found = element(&page, &address, Want::Attached, timeout).await?;
    let mut out = locate::helper(&page, &found, "table", &[]).await?;
    if let Some(error) = out["error"].as_str() {
        return Err(ToolError::failed(format!("{}: {error}", found.element()))
            .with_code("element_not_found"));
    }
    out["element"] = json!(found.element());
    if args.format == TableFormat::Csv {
        out["csv"] = json!(to_csv(&out));
    }
    Ok(out)
}

/// The table as CSV: the header row, then one line per row (RFC 4180 quoting).
fn to_csv(table: &Value) -> String {
    let quote = |s: &str| {
        if s.contains([',', '"', '\n', '\r']) {
            format!("\"{}\"", s.replace('"', "\"\""))
        } else {
            s.to_string()
        }
    };
    let headers: Vec<&str> = table["headers"]
        .as_array()
        .map(|h| h.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default();
    let mut out = headers
        .iter()
        .map(|h| quote(h))
        .collect::<Vec<_>>()
        .join(",");
    out.push_str("\r\n");
    for row in table["rows"].as_array().into_iter().flatten() {
        let cells: Vec<String> = headers
            .iter()
            .map(|h| quote(row[*h].as_str().unwrap_or_default()))
            .collect();
        out.push_str(&cells.join(","));
        out.push_str("\r\n");
    }
    out
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
    let reached = poll(timeout, Duration::from_millis(25), || async move {
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

pub(crate) async fn search(
    b: &Browsers,
    args: SearchArgs,
    ctx: &ToolContext,
) -> Result<Value, ToolError> {
    let (page, timeout) = b.start(ctx, args.timeout_ms, |t| t.search_ms).await?;
    let start = Instant::now();
    let found = if args.address.is_empty() {
        find_search_box(&page, timeout).await?
    } else {
        element(&page, &args.address, Want::Type, timeout).await?
    };
    let marker = input::mark_document(&page).await?;
    locate::helper(&page, &found, "clearField", &[]).await?;
    input::insert_text(&page, &args.query).await?;
    let enter = input::parse_chord("Enter")?;
    input::press(&page, &enter).await?;
    let left = timeout
        .saturating_sub(start.elapsed())
        .max(Duration::from_millis(500));
    let settled = input::settle(&page, &marker, Duration::from_millis(300), left).await?;
    Ok(json!({
        "box": found.element(), "query": args.query, "navigated": settled.navigated,
        "url": settled.url, "title": settled.title,
    }))
}

/// The search box: role searchbox or combobox, `input[type=search]`, or
/// a field named or labelled for search; waited for up to `timeout`.
async fn find_search_box(page: &Page, timeout: Duration) -> Result<Found, ToolError> {
    let js = format!("{}.searchBox()", *HELPERS);
    let js = &js;
    let found = poll(timeout, Duration::from_millis(50), || async move {
        // Between documents the lookup fails; that is "not yet", not an error.
        if let Ok(Evaluated::Object(object)) = cdp::evaluate(page, js, false).await
            && let Ok(info) = locate::check(page, &object, Want::Type).await
        {
            return Ok(Some(Found { object, info }));
        }
        Ok(None)
    })
    .await?;
    found.ok_or_else(|| {
        ToolError::failed(format!(
            "no search box on the page (role searchbox or combobox, input[type=search], or a field named search/query/q) after {} ms",
            timeout.as_millis()
        ))
        .with_code("element_not_found")
    })
}

pub(crate) async fn scroll(
    b: &Browsers,
    args: ScrollArgs,
    ctx: &ToolContext,
) -> Result<Value, ToolError> {
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
            _ => Err(ToolError::transient(format!(
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

pub(crate) async fn press_key(
    b: &Browsers,
    args: PressKeyArgs,
    ctx: &ToolContext,
) -> Result<Value, ToolError> {
    let chord = input::parse_chord(&args.key)?;
    let page = b.page_for(ctx).await?;
    let mut focused = None;
    if !args.address.is_empty() {
        let timeout = b
            .config()
            .timeout(args.timeout_ms, b.config().timeouts.press_key_ms);
        let found = element(&page, &args.address, Want::Enabled, timeout).await?;
        cdp::call_on(&page, &found.object, "function() { this.focus(); }", &[]).await?;
        focused = Some(found.element());
    }
    input::press(&page, &chord).await?;
    Ok(json!({"key": args.key, "element": focused}))
}

pub(crate) async fn wait(b: &Browsers, args: WaitArgs) -> Result<Value, ToolError> {
    let max = b.config().timeouts.wait_max_ms as f64 / 1000.0;
    if !args.seconds.is_finite() || args.seconds < 0.0 || args.seconds > max {
        return Err(ToolError::invalid_arguments(format!(
            "/seconds: {} is outside 0..={max} (browser.timeouts.wait_max_ms)",
            args.seconds
        )));
    }
    let d = Duration::from_secs_f64(args.seconds);
    tokio::time::sleep(d).await;
    Ok(json!({"waited_ms": d.as_millis() as u64}))
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

    #[test]
    fn csv_quotes_what_needs_it() {
        let table = json!({
            "headers": ["Name", "Note"],
            "rows": [{"Name": "Ada", "Note": "says \"hi\", twice"}, {"Name": "Bob", "Note": ""}]
        });
        assert_eq!(
            to_csv(&table),
            "Name,Note\r\nAda,\"says \"\"hi\"\", twice\"\r\nBob,\r\n"
        );
    }
}
