//! Assertions an agent (or a test plan) calls to check the page, answering
//! `{"passed": bool, …}` instead of failing: `browser_verify_text_visible`
//! and `browser_verify_value` (MCP capability `testing`, as Playwright MCP's
//! `--caps=testing`; `browser_verify_element_exists` is the third, and core).
//!
//! A check that does not hold is an answer, not an error: a plan branches on
//! `passed`, and no retry or breaker hears it. Only a broken page or bad
//! arguments fail the call.

use std::sync::Arc;
use std::time::Duration;

use axon_core::{RegistryError, ToolContext, ToolError, ToolRegistry};
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::{Value, json};

use super::read_only;
use crate::cdp::{self, Evaluated};
use crate::locate::{self, Address, Want};
use crate::session::Browsers;

/// `browser_verify_text_visible` arguments.
#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct TextVisibleArgs {
    /// The text (case and runs of spaces aside).
    pub text: String,
    /// Keep looking this long before answering `false` (default 0: look once).
    #[serde(default)]
    pub timeout_ms: u64,
}

/// Whether `text` shows in the page's visible text.
async fn text_visible(
    b: &Browsers,
    args: TextVisibleArgs,
    ctx: &ToolContext,
) -> Result<Value, ToolError> {
    if args.text.trim().is_empty() {
        return Err(ToolError::invalid_arguments("/text: empty"));
    }
    let page = b.page_for(ctx).await?;
    let timeout = b.config().timeout(Some(args.timeout_ms), 0);
    let js = format!("({})({})", super::page::SHOWS_TEXT, json!(args.text));
    let shown = super::poll(Some(&page), timeout, Duration::from_millis(100), || async {
        match cdp::evaluate(&page, &js, true).await {
            Ok(Evaluated::Value(Value::Bool(true))) => Ok(Some(())),
            // Not shown, or between documents: not shown yet.
            _ => Ok(None),
        }
    })
    .await?
    .is_some();
    Ok(json!({"passed": shown, "text": args.text}))
}

/// `browser_verify_value` arguments.
#[derive(Deserialize, JsonSchema)]
#[schemars(deny_unknown_fields)]
pub struct ValueArgs {
    #[serde(flatten)]
    /// The element (exactly one of selector, ref, role, label, has_text).
    pub address: Address,
    /// The value it should show: a field's text, a `<select>`'s chosen
    /// option (its label or value), `true`/`false` for a checkbox or radio,
    /// a widget's `aria-valuetext`/`aria-valuenow`.
    pub value: String,
    /// Keep looking this long for the element (default 0: look once).
    #[serde(default)]
    pub timeout_ms: u64,
}

/// What an element shows as its value, as a list of strings any of which
/// may equal the value asked for (a `<select>`'s label and value), and
/// whether it is a password (its value is never answered).
const VALUE_JS: &str = "function() { const e = this; const t = (e.type || '').toLowerCase(); \
  const secret = t === 'password'; \
  if (t === 'checkbox' || t === 'radio') return {shown: [String(e.checked)], secret}; \
  if (e.tagName === 'SELECT') { const o = Array.from(e.selectedOptions); \
    return {shown: [o.map(x => x.label.trim()).join(', '), o.map(x => x.value).join(', ')], secret}; } \
  if (e.tagName === 'INPUT' || e.tagName === 'TEXTAREA') return {shown: [e.value], secret}; \
  for (const a of ['aria-valuetext', 'aria-valuenow', 'aria-checked']) { \
    const v = e.getAttribute(a); if (v !== null) return {shown: [v], secret}; } \
  if (e.isContentEditable) return {shown: [e.innerText], secret}; \
  return {shown: [(e.innerText || e.textContent || '')], secret}; }";

/// Whether the element shows `value` (runs of spaces aside, case kept).
async fn value(b: &Browsers, args: ValueArgs, ctx: &ToolContext) -> Result<Value, ToolError> {
    let page = b.page_for(ctx).await?;
    let timeout = b.config().timeout(Some(args.timeout_ms), 0);
    let target = args.address.target()?;
    let found = match locate::wait_for(&page, &target, Want::Attached, timeout).await {
        Ok(found) => found,
        Err(e)
            if matches!(
                e.code.as_deref(),
                Some("element_not_found" | "element_detached" | "stale_ref")
            ) =>
        {
            return Ok(json!({"passed": false, "found": false, "expected": args.value}));
        }
        Err(e) => return Err(e),
    };
    let read = match cdp::call_on(&page, &found.object, VALUE_JS, &[]).await {
        Ok(Evaluated::Value(v)) => v,
        _ => return Ok(json!({"passed": false, "found": false, "expected": args.value})),
    };
    let shown: Vec<String> = read["shown"]
        .as_array()
        .map(|list| list.iter().filter_map(Value::as_str).map(spaced).collect())
        .unwrap_or_default();
    let passed = shown.iter().any(|s| *s == spaced(&args.value));
    let mut out = json!({
        "passed": passed,
        "found": true,
        "element": found.element(),
        "expected": args.value,
    });
    // A password's value is not answered, whichever way the check went:
    // history would keep it.
    if read["secret"] == json!(true) {
        ctx.mark_secret("/value");
        ctx.mark_secret_output("/expected");
    } else if let Some(actual) = shown.first() {
        out["actual"] = json!(actual);
    }
    Ok(out)
}

/// `text` trimmed, its runs of white space one space.
fn spaced(text: &str) -> String {
    text.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// Register this file's tools, all sharing `browsers`.
pub(super) fn register(
    registry: &mut ToolRegistry,
    browsers: &Arc<Browsers>,
) -> Result<(), RegistryError> {
    browser_tool!(
        registry,
        browsers,
        "browser_verify_text_visible",
        read_only(),
        "Whether a text shows on the page: {passed}, never an error; timeout_ms keeps looking.",
        text_visible
    );
    browser_tool!(
        registry,
        browsers,
        "browser_verify_value",
        read_only(),
        "Whether an element shows a value (field text, chosen option, true/false for a checkbox): {passed, actual}, never an error.",
        value
    );
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn values_compare_with_their_spaces_evened_out() {
        assert_eq!(spaced("  New\n  York "), "New York");
        assert_ne!(spaced("new york"), spaced("New York"), "case counts");
    }
}
