//! A session's network routes (`browser_route`, MCP capability `network`):
//! requests whose URL fits a pattern are answered by the browser itself — a
//! stubbed response, or a refusal — so that an agent can be tried against a
//! backend that fails, is slow to come up, or does not exist yet.
//!
//! A route only ever narrows what leaves the browser: a fulfilled or
//! blocked request never reaches the network, and every other request goes
//! on through the egress proxy's checks as before (security.md). Routes are
//! the session's (one owner's: `crate::handles`), bounded ([`MAX_ROUTES`],
//! bodies of at most [`MAX_BODY`] bytes), and apply to every tab of the
//! session, those it opens later too. Without routes the browser pauses no
//! request: interception (`Fetch.enable`) is on only while a route is.

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};

use axon_core::ToolError;
use base64::Engine;
use chromiumoxide::cdp::browser_protocol::fetch::EventRequestPaused;
use chromiumoxide::page::Page;
use futures::StreamExt;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

/// Routes one session holds at most.
pub(crate) const MAX_ROUTES: usize = 32;

/// The largest body a route answers with.
pub(crate) const MAX_BODY: usize = 1 << 20;

/// What a route does with a request it fits.
#[derive(Clone, Copy, Debug, Default, Deserialize, Serialize, JsonSchema, PartialEq, Eq)]
#[serde(rename_all = "lowercase")]
pub enum RouteAction {
    /// Answer it with `status`, `body`, `content_type` and `headers`.
    #[default]
    Fulfill,
    /// Fail it, as a blocked request (`net::ERR_BLOCKED_BY_CLIENT`).
    Block,
}

/// One route: the requests whose URL fits `pattern`, and their answer.
#[derive(Clone, Debug, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Route {
    /// The whole URL, `*` matching any run of characters
    /// (`*/api/users*`, `https://cdn.example.com/*`).
    pub pattern: String,
    /// fulfill (default) or block.
    #[serde(default)]
    pub action: RouteAction,
    /// fulfill: the status (default 200).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub status: Option<u16>,
    /// fulfill: the body (default empty).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub body: Option<String>,
    /// fulfill: its type (default `application/json` for a body that is
    /// JSON, else `text/plain; charset=utf-8`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub content_type: Option<String>,
    /// fulfill: more response headers.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub headers: BTreeMap<String, String>,
}

impl Route {
    /// The route's arguments checked, each error naming its field.
    pub(crate) fn check(&self) -> Result<(), ToolError> {
        let pattern = self.pattern.trim();
        if pattern.is_empty() || pattern.len() > 2048 {
            return Err(ToolError::invalid_arguments(
                "/pattern: empty or longer than 2048 bytes",
            ));
        }
        if let Some(status) = self.status
            && !(100..=599).contains(&status)
        {
            return Err(ToolError::invalid_arguments(format!(
                "/status: {status} is no HTTP status (100..=599)"
            )));
        }
        if self.body.as_ref().is_some_and(|b| b.len() > MAX_BODY) {
            return Err(ToolError::invalid_arguments(format!(
                "/body: longer than {MAX_BODY} bytes"
            )));
        }
        for (name, value) in &self.headers {
            let token = !name.is_empty() && name.bytes().all(|b| b.is_ascii_graphic() && b != b':');
            if !token || value.contains(['\r', '\n']) {
                return Err(ToolError::invalid_arguments(format!(
                    "/headers/{name}: not a header name and value"
                )));
            }
        }
        Ok(())
    }

    /// What DevTools answers the request with.
    fn answer(&self, request_id: &str) -> (&'static str, Value) {
        if self.action == RouteAction::Block {
            return (
                "Fetch.failRequest",
                json!({"requestId": request_id, "errorReason": "BlockedByClient"}),
            );
        }
        let body = self.body.as_deref().unwrap_or_default();
        let content_type =
            self.content_type.clone().unwrap_or_else(|| {
                match serde_json::from_str::<Value>(body) {
                    Ok(_) => "application/json".into(),
                    Err(_) => "text/plain; charset=utf-8".into(),
                }
            });
        let mut headers = vec![json!({"name": "Content-Type", "value": content_type})];
        headers.extend(
            self.headers
                .iter()
                .filter(|(n, _)| !n.eq_ignore_ascii_case("content-type"))
                .map(|(n, v)| json!({"name": n, "value": v})),
        );
        let params = json!({
            "requestId": request_id,
            "responseCode": self.status.unwrap_or(200),
            "responseHeaders": headers,
            "body": base64::engine::general_purpose::STANDARD.encode(body),
        });
        ("Fetch.fulfillRequest", params)
    }
}

/// A session's routes, shared by its tabs.
#[derive(Default)]
pub(crate) struct Routes {
    list: Mutex<Vec<Route>>,
}

impl Routes {
    fn lock(&self) -> std::sync::MutexGuard<'_, Vec<Route>> {
        self.list.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// The routes, in the order they are tried.
    pub(crate) fn list(&self) -> Vec<Route> {
        self.lock().clone()
    }

    /// Add `route`, replacing one of the same pattern; the newest is tried
    /// first, as Playwright does.
    pub(crate) fn add(&self, route: Route) -> Result<(), ToolError> {
        route.check()?;
        let mut list = self.lock();
        list.retain(|r| r.pattern != route.pattern);
        if list.len() >= MAX_ROUTES {
            return Err(ToolError::invalid_arguments(format!(
                "/pattern: the session holds {MAX_ROUTES} routes already (browser_unroute some)"
            )));
        }
        list.insert(0, route);
        Ok(())
    }

    /// Remove the route of `pattern`, or every route: how many went.
    pub(crate) fn remove(&self, pattern: Option<&str>) -> usize {
        let mut list = self.lock();
        let before = list.len();
        match pattern {
            Some(p) => list.retain(|r| r.pattern != p),
            None => list.clear(),
        }
        before - list.len()
    }

    /// The first route `url` fits.
    fn matching(&self, url: &str) -> Option<Route> {
        self.lock()
            .iter()
            .find(|r| axon_core::glob::matches(&r.pattern, url))
            .cloned()
    }

    fn is_empty(&self) -> bool {
        self.lock().is_empty()
    }

    /// Answer `page`'s paused requests by these routes, for as long as the
    /// returned listener lives; interception is switched on now if a route
    /// is there already (a tab opened after `browser_route`).
    pub(crate) async fn listen(self: &Arc<Self>, page: &Page) -> Result<Listener, ToolError> {
        let mut paused = page
            .event_listener::<EventRequestPaused>()
            .await
            .map_err(|e| ToolError::transient(format!("listening for routed requests: {e}")))?;
        let routes = self.clone();
        let tab = page.clone();
        let task = tokio::spawn(async move {
            while let Some(request) = paused.next().await {
                let id = request.request_id.inner().clone();
                let (method, params) = match routes.matching(&request.request.url) {
                    Some(route) => route.answer(&id),
                    None => ("Fetch.continueRequest", json!({"requestId": id})),
                };
                // A request the page gave up on (it navigated) has nothing
                // to answer.
                let _ = crate::cdp::send(&tab, method, params).await;
            }
        });
        let listener = Listener {
            task: task.abort_handle(),
        };
        if !self.is_empty() {
            intercept(page, true).await?;
        }
        Ok(listener)
    }

    /// Switch `pages`' interception to what the routes need now.
    pub(crate) async fn apply(&self, pages: &[Page]) -> Result<(), ToolError> {
        let on = !self.is_empty();
        for page in pages {
            intercept(page, on).await?;
        }
        Ok(())
    }
}

/// Pause every request of `page` for the routes, or none.
async fn intercept(page: &Page, on: bool) -> Result<(), ToolError> {
    match on {
        true => {
            let patterns = json!({"patterns": [{"urlPattern": "*", "requestStage": "Request"}]});
            crate::cdp::send(page, "Fetch.enable", patterns).await?;
        }
        false => {
            crate::cdp::send(page, "Fetch.disable", json!({})).await?;
        }
    }
    Ok(())
}

/// Answers one tab's routed requests while it lives.
pub(crate) struct Listener {
    task: tokio::task::AbortHandle,
}

impl Drop for Listener {
    fn drop(&mut self) {
        self.task.abort();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn route(pattern: &str) -> Route {
        Route {
            pattern: pattern.into(),
            action: RouteAction::Fulfill,
            status: None,
            body: None,
            content_type: None,
            headers: BTreeMap::new(),
        }
    }

    #[test]
    fn the_newest_route_of_a_url_wins_and_one_pattern_is_one_route() {
        let routes = Routes::default();
        routes.add(route("*/api/*")).unwrap();
        let mut users = route("*/api/users*");
        users.status = Some(500);
        routes.add(users.clone()).unwrap();
        let hit = routes.matching("http://x/api/users?page=2").unwrap();
        assert_eq!(hit.status, Some(500));
        routes.add(route("*/api/users*")).unwrap();
        assert_eq!(routes.list().len(), 2, "replaced, not added");
        assert!(routes.matching("http://x/other").is_none());
        assert_eq!(routes.remove(Some("*/api/*")), 1);
        assert_eq!(routes.remove(None), 1);
        assert!(routes.is_empty());
    }

    #[test]
    fn a_bad_route_names_its_field() {
        let mut bad = route("*");
        bad.status = Some(42);
        assert!(bad.check().unwrap_err().message.starts_with("/status"));
        let mut header = route("*");
        header
            .headers
            .insert("X-A".into(), "1\r\nSet-Cookie: x".into());
        assert!(
            header
                .check()
                .unwrap_err()
                .message
                .starts_with("/headers/X-A")
        );
        assert!(
            route(" ")
                .check()
                .unwrap_err()
                .message
                .starts_with("/pattern")
        );
        let routes = Routes::default();
        for i in 0..MAX_ROUTES {
            routes.add(route(&format!("*/{i}"))).unwrap();
        }
        assert!(routes.add(route("*/one-more")).is_err(), "bounded");
    }

    #[test]
    fn a_json_body_is_answered_as_json_and_a_block_fails_the_request() {
        let mut stub = route("*");
        stub.body = Some("{\"ok\":true}".into());
        let (method, params) = stub.answer("r1");
        assert_eq!(method, "Fetch.fulfillRequest");
        assert_eq!(params["responseCode"], 200);
        assert_eq!(params["responseHeaders"][0]["value"], "application/json");
        stub.action = RouteAction::Block;
        assert_eq!(stub.answer("r1").0, "Fetch.failRequest");
    }
}
