//! Reading the page without changing it: `browser_get_text`,
//! `browser_verify_element_exists`, `browser_extract_table`,
//! `browser_get_page_html` and `browser_snapshot` (the accessibility tree whose
//! refs address elements in the other tools).

use std::sync::Arc;

use axon_core::{RegistryError, ToolContext, ToolError, ToolRegistry};
use chromiumoxide::page::Page;
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::{Value, json};

use super::{ElementArgs, element, read_only};
use crate::cdp::cdp_error;
use crate::cdp::{self, Evaluated};
use crate::locate::{self, Address, Want};
use crate::session::Browsers;
use crate::snapshot::{self, Snapshot, SnapshotArgs};

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

async fn get_page_html(
    b: &Browsers,
    args: HtmlArgs,
    ctx: &ToolContext,
) -> Result<Value, ToolError> {
    let page = b.page_for(ctx).await?;
    html(b, &page, &args).await.map(|h| json!({"html": h}))
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
            ToolError::failed(format!("{target}: the element was detached"))
                .with_code("element_detached"),
        ),
    }
}

async fn take_snapshot(
    b: &Browsers,
    args: SnapshotArgs,
    ctx: &ToolContext,
) -> Result<Snapshot, ToolError> {
    let page = b.page_for(ctx).await?;
    let (url, title, all) = snapshot::read(&page).await?;
    let previous = b.swap_snapshot(ctx, all.clone()).await;
    let view = snapshot::view(all, &args, &previous)?;
    let mut snap = snapshot::assemble(url, title, view.nodes, args.max_nodes);
    // The counts go in the text (the listing stays lean without more fields).
    if let Some(n) = view.matches {
        snap.text.push_str(&format!("({n} matching)\n"));
    }
    if let Some(n) = view.removed {
        snap.text
            .push_str(&format!("({n} removed since the last snapshot)\n"));
    }
    if !args.nodes {
        snap.nodes.clear();
    }
    Ok(snap)
}

/// Register this file's tools, all sharing `browsers`.
pub(super) fn register(
    registry: &mut ToolRegistry,
    browsers: &Arc<Browsers>,
) -> Result<(), RegistryError> {
    browser_tool!(
        registry,
        browsers,
        "browser_get_text",
        read_only(),
        "An element's visible text (and a field's value, except a password's).",
        get_text
    );
    browser_tool!(
        registry,
        browsers,
        "browser_verify_element_exists",
        read_only(),
        "Whether an element exists (and is visible), as a boolean; timeout_ms keeps looking.",
        verify_exists
    );
    browser_tool!(
        registry,
        browsers,
        "browser_extract_table",
        read_only(),
        "A table (default: the first) as rows keyed by header, spans filled in; format csv adds a CSV string.",
        extract_table
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
        "browser_snapshot",
        read_only(),
        "The page's accessibility tree as lines (role \"name\" [ref=e12]): controls, headings, text. A ref addresses its element in other tools.",
        take_snapshot
    );
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

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
