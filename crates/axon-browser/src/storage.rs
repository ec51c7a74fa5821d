//! A session's storage state (Playwright's format: cookies and
//! `localStorage` per origin) in and out of a page: seeded into a new
//! session's page, read back for `browser_session_save`.

use chromiumoxide::page::Page;
use serde_json::{Value, json};

use axon_core::ToolError;

use crate::config::SessionOptions;

/// Apply a new session's options to its page (viewport, cookies, a script
/// that seeds `localStorage` once per origin). Returns the seeded origins.
pub(crate) async fn prepare(
    page: &Page,
    options: &SessionOptions,
) -> Result<Vec<Value>, ToolError> {
    if let Some((width, height)) = options.viewport {
        crate::cdp::send(
            page,
            "Emulation.setDeviceMetricsOverride",
            json!({"width": width, "height": height, "deviceScaleFactor": 1, "mobile": false}),
        )
        .await?;
    }
    let Some(state) = &options.storage_state else {
        return Ok(Vec::new());
    };
    let cookies: Vec<Value> = state["cookies"]
        .as_array()
        .map(|list| list.iter().map(cdp_cookie).collect())
        .unwrap_or_default();
    if !cookies.is_empty() {
        crate::cdp::send(page, "Network.setCookies", json!({ "cookies": cookies }))
            .await
            .map_err(|e| {
                ToolError::invalid_arguments(format!("/storage_state/cookies: {}", e.message))
            })?;
    }
    let origins: Vec<Value> = state["origins"].as_array().cloned().unwrap_or_default();
    if !origins.is_empty() {
        // Seeded before the page's own scripts run, once per tab and origin (a
        // sessionStorage mark), so the page's later writes are not overwritten.
        let source = format!(
            "(() => {{ const all = {}; const o = all.find(x => x.origin === location.origin); \
             if (!o) return; try {{ if (sessionStorage.getItem('__axon_seeded')) return; \
             for (const e of (o.localStorage || [])) localStorage.setItem(e.name, e.value); \
             sessionStorage.setItem('__axon_seeded', '1'); }} catch (e) {{}} }})()",
            Value::Array(origins.clone())
        );
        crate::cdp::send(
            page,
            "Page.addScriptToEvaluateOnNewDocument",
            json!({ "source": source }),
        )
        .await?;
    }
    Ok(origins)
}

/// A storage-state cookie (Playwright's fields) as DevTools' `CookieParam`.
fn cdp_cookie(c: &Value) -> Value {
    let mut out = json!({});
    for key in [
        "name", "value", "domain", "path", "url", "secure", "httpOnly", "sameSite",
    ] {
        if let Some(v) = c.get(key) {
            out[key] = v.clone();
        }
    }
    // -1 is a session cookie in Playwright's format; DevTools wants it absent.
    if let Some(expires) = c.get("expires").and_then(Value::as_f64)
        && expires > 0.0
    {
        out["expires"] = json!(expires);
    }
    if out.get("domain").is_none() && out.get("url").is_none() {
        out["url"] = json!("http://localhost/");
    }
    out
}

/// A DevTools cookie as a storage-state cookie (Playwright's fields).
pub(crate) fn playwright_cookie(c: &Value) -> Value {
    let session = c["session"].as_bool().unwrap_or(false);
    json!({
        "name": c["name"], "value": c["value"], "domain": c["domain"], "path": c["path"],
        "expires": if session { json!(-1) } else { c["expires"].clone() },
        "httpOnly": c["httpOnly"], "secure": c["secure"],
        "sameSite": c.get("sameSite").cloned().unwrap_or(json!("Lax")),
    })
}
