//! A session's site data, read and changed by an agent: `browser_cookies`
//! (the cookies of the session's browser context) and `browser_storage`
//! (`localStorage` or `sessionStorage` of the page's origin). MCP capability
//! `storage`, as Playwright MCP's; there they are fifteen tools, here two
//! with an `action`, so that the listing stays small.
//!
//! Who may touch what: a session's cookies and storage are its browser
//! context's, and a session belongs to one owner (`crate::handles`), so a
//! caller reads and changes only its own sessions' data. Values are secrets
//! as often as not (session cookies, tokens in `localStorage`): history
//! keeps `"***"` for every value read or written, the caller gets the real
//! one.

use std::sync::Arc;

use axon_core::{RegistryError, ToolContext, ToolError, ToolRegistry};
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::{Value, json};

use super::idempotent;
use crate::session::Browsers;
use crate::storage::playwright_cookie;

/// What to do with the data.
#[derive(Clone, Copy, Debug, Default, Deserialize, JsonSchema, PartialEq, Eq)]
#[serde(rename_all = "lowercase")]
pub enum SiteAction {
    /// Every entry (cookies: of the session; storage: of the page's origin),
    /// or those of `name`/`key`.
    #[default]
    List,
    /// One storage entry by `key` (cookies: `list` with `name`).
    Get,
    /// Create or replace an entry.
    Set,
    /// The entries of `name` (cookies) or `key` (storage).
    Delete,
    /// Every entry.
    Clear,
}

/// `browser_cookies` arguments.
#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct CookiesArgs {
    /// list (default), set, delete or clear.
    #[serde(default)]
    pub action: SiteAction,
    /// The cookie (needed by set and delete; list: only these).
    pub name: Option<String>,
    /// set: its value.
    pub value: Option<String>,
    /// set: the URL it belongs to (default: the page's, unless `domain`).
    pub url: Option<String>,
    /// set, delete, list: its domain.
    pub domain: Option<String>,
    /// set, delete: its path (set: default `/`).
    pub path: Option<String>,
    /// set: when it expires, Unix seconds (default: with the session).
    pub expires: Option<f64>,
    /// set: hidden from the page's scripts.
    #[serde(default)]
    pub http_only: bool,
    /// set: HTTPS only.
    #[serde(default)]
    pub secure: bool,
    /// set: Strict, Lax or None.
    pub same_site: Option<String>,
}

async fn cookies(b: &Browsers, args: CookiesArgs, ctx: &ToolContext) -> Result<Value, ToolError> {
    let page = b.page_for(ctx).await?;
    if args.action == SiteAction::Set {
        ctx.mark_secret("/value");
        let name = needed(&args.name, "/name", "set")?;
        let value = args
            .value
            .as_deref()
            .ok_or_else(|| ToolError::invalid_arguments("/value: set needs the cookie's value"))?;
        let mut cookie = json!({
            "name": name, "value": value, "path": args.path.as_deref().unwrap_or("/"),
            "httpOnly": args.http_only, "secure": args.secure,
        });
        match (&args.url, &args.domain) {
            (Some(url), _) => cookie["url"] = json!(url),
            (None, Some(domain)) => cookie["domain"] = json!(domain),
            (None, None) => {
                let here = page.url().await.ok().flatten().unwrap_or_default();
                if !here.starts_with("http") {
                    return Err(ToolError::invalid_arguments(format!(
                        "/url: the page ({here}) has no site to set a cookie for; give url or domain"
                    )));
                }
                cookie["url"] = json!(here);
            }
        }
        if let Some(expires) = args.expires {
            cookie["expires"] = json!(expires);
        }
        if let Some(same_site) = &args.same_site {
            let Some(known) = ["Strict", "Lax", "None"]
                .into_iter()
                .find(|s| s.eq_ignore_ascii_case(same_site))
            else {
                return Err(ToolError::invalid_arguments(format!(
                    "/same_site: {same_site:?} is none of Strict, Lax, None"
                )));
            };
            cookie["sameSite"] = json!(known);
        }
        let set = crate::cdp::send(&page, "Network.setCookie", cookie).await;
        return match set {
            Ok(answer) if answer["success"] != json!(false) => Ok(json!({"set": name})),
            Ok(_) => Err(ToolError::invalid_arguments(format!(
                "the browser refused the cookie {name:?} (check url, domain, secure and same_site)"
            ))),
            Err(e) => Err(ToolError::invalid_arguments(format!(
                "the cookie {name:?}: {}",
                e.message
            ))),
        };
    }
    if args.action == SiteAction::Delete {
        needed(&args.name, "/name", "delete")?;
    }
    if args.action == SiteAction::Get {
        return Err(ToolError::invalid_arguments(
            "/action: cookies are read with list (and name)",
        ));
    }
    let all = crate::cdp::send(&page, "Network.getAllCookies", json!({})).await?;
    let picked: Vec<&Value> = all["cookies"]
        .as_array()
        .map(|list| {
            list.iter()
                .filter(|c| args.name.as_ref().is_none_or(|n| c["name"] == json!(n)))
                .filter(|c| args.domain.as_ref().is_none_or(|d| same_domain(c, d)))
                .filter(|c| args.path.as_ref().is_none_or(|p| c["path"] == json!(p)))
                .collect()
        })
        .unwrap_or_default();
    if args.action == SiteAction::List {
        for i in 0..picked.len() {
            ctx.mark_secret_output(format!("/cookies/{i}/value"));
        }
        let cookies: Vec<Value> = picked.into_iter().map(playwright_cookie).collect();
        return Ok(json!({"cookies": cookies}));
    }
    // Delete and clear: each cookie by its own name, domain and path, so
    // that only this context's are touched.
    for c in &picked {
        let one = json!({"name": c["name"], "domain": c["domain"], "path": c["path"]});
        crate::cdp::send(&page, "Network.deleteCookies", one).await?;
    }
    Ok(json!({"deleted": picked.len()}))
}

/// Whether cookie `c` belongs to `domain` (a leading dot aside).
fn same_domain(c: &Value, domain: &str) -> bool {
    let have = c["domain"].as_str().unwrap_or_default();
    have.trim_start_matches('.')
        .eq_ignore_ascii_case(domain.trim_start_matches('.'))
}

/// `field`, which `action` needs.
fn needed<'a>(
    field: &'a Option<String>,
    pointer: &str,
    action: &str,
) -> Result<&'a str, ToolError> {
    match field.as_deref() {
        Some(v) if !v.is_empty() => Ok(v),
        _ => Err(ToolError::invalid_arguments(format!(
            "{pointer}: {action} needs it"
        ))),
    }
}

/// Which web storage.
#[derive(Clone, Copy, Debug, Default, Deserialize, JsonSchema, PartialEq, Eq)]
#[serde(rename_all = "lowercase")]
pub enum Area {
    /// `localStorage` (default).
    #[default]
    Local,
    /// `sessionStorage`.
    Session,
}

/// `browser_storage` arguments.
#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct StorageArgs {
    /// local (default) or session.
    #[serde(default)]
    pub area: Area,
    /// list (default), get, set, delete or clear.
    #[serde(default)]
    pub action: SiteAction,
    /// The entry (needed by get, set and delete).
    pub key: Option<String>,
    /// set: its value.
    pub value: Option<String>,
}

/// One storage action on the page's origin: `(area, action, key, value)`.
/// The mark Axon seeds a session's storage with is neither listed nor
/// cleared.
const STORAGE_JS: &str = "(area, action, key, value) => { let s; \
  try { s = area === 'session' ? sessionStorage : localStorage; } \
  catch (e) { return {refused: String(e && e.message || e)}; } \
  const origin = location.origin; const mark = '__axon_seeded'; \
  switch (action) { \
  case 'list': return {origin, items: Object.keys(s).filter(k => k !== mark).map(k => ({key: k, value: s.getItem(k)}))}; \
  case 'get': return {origin, key, value: s.getItem(key)}; \
  case 'set': s.setItem(key, value); return {origin, set: key}; \
  case 'delete': { const had = s.getItem(key) !== null; s.removeItem(key); return {origin, deleted: had ? 1 : 0}; } \
  case 'clear': { const keep = s.getItem(mark); const n = Object.keys(s).filter(k => k !== mark).length; \
    s.clear(); if (keep !== null) s.setItem(mark, keep); return {origin, deleted: n}; } } }";

async fn storage(b: &Browsers, args: StorageArgs, ctx: &ToolContext) -> Result<Value, ToolError> {
    let action = match args.action {
        SiteAction::List => "list",
        SiteAction::Get => "get",
        SiteAction::Set => "set",
        SiteAction::Delete => "delete",
        SiteAction::Clear => "clear",
    };
    if matches!(
        args.action,
        SiteAction::Get | SiteAction::Set | SiteAction::Delete
    ) {
        needed(&args.key, "/key", action)?;
    }
    if args.action == SiteAction::Set {
        ctx.mark_secret("/value");
        if args.value.is_none() {
            return Err(ToolError::invalid_arguments("/value: set needs it"));
        }
    }
    let area = match args.area {
        Area::Local => "local",
        Area::Session => "session",
    };
    let page = b.page_for(ctx).await?;
    let js = format!(
        "({STORAGE_JS})({}, {}, {}, {})",
        json!(area),
        json!(action),
        json!(args.key),
        json!(args.value)
    );
    let out = crate::cdp::eval(&page, &js).await?;
    if let Some(why) = out["refused"].as_str() {
        return Err(ToolError::failed(format!(
            "the page has no {area}Storage to use ({why}); open a site first"
        ))
        .with_code("no_storage"));
    }
    match args.action {
        SiteAction::List => {
            let n = out["items"].as_array().map_or(0, Vec::len);
            for i in 0..n {
                ctx.mark_secret_output(format!("/items/{i}/value"));
            }
        }
        SiteAction::Get => ctx.mark_secret_output("/value"),
        _ => {}
    }
    Ok(out)
}

/// Register this file's tools, all sharing `browsers`.
pub(super) fn register(
    registry: &mut ToolRegistry,
    browsers: &Arc<Browsers>,
) -> Result<(), RegistryError> {
    browser_tool!(
        registry,
        browsers,
        "browser_cookies",
        idempotent(),
        "The session's cookies: action list (default; name, domain filter), set (name, value; url or domain default the page's), delete (name) or clear.",
        cookies
    );
    browser_tool!(
        registry,
        browsers,
        "browser_storage",
        idempotent(),
        "The page origin's localStorage (area session: sessionStorage): action list (default), get, set, delete (by key) or clear.",
        storage
    );
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_cookie_domain_matches_with_or_without_its_dot() {
        let c = json!({"domain": ".example.com"});
        assert!(same_domain(&c, "example.com"));
        assert!(same_domain(&c, "EXAMPLE.com"));
        assert!(!same_domain(&c, "other.com"));
    }

    #[test]
    fn an_action_names_the_field_it_needs() {
        let e = needed(&None, "/key", "get").err().map(|e| e.message);
        assert_eq!(e.as_deref(), Some("/key: get needs it"));
        assert_eq!(needed(&Some("k".into()), "/key", "get").ok(), Some("k"));
    }
}
