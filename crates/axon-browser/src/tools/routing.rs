//! `browser_route` and `browser_unroute` (MCP capability `network`): answer
//! a session's requests by URL pattern from the browser — a stubbed
//! backend, a failing one, a blocked tracker — for trying an agent against
//! it (routes.rs holds the routes and answers the requests).

use std::sync::Arc;

use axon_core::{RegistryError, ToolContext, ToolError, ToolRegistry};
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::{Value, json};

use super::idempotent;
use crate::routes::Route;
use crate::session::Browsers;

/// Add a route (one of the same pattern is replaced); the session's routes
/// after, newest first.
async fn route(b: &Browsers, args: Route, ctx: &ToolContext) -> Result<Value, ToolError> {
    let routes = b.routes(ctx, |routes| routes.add(args)).await?;
    Ok(json!({ "routes": routes }))
}

/// `browser_unroute` arguments.
#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct UnrouteArgs {
    /// The route's pattern, as given to browser_route; left out: every route.
    pub pattern: Option<String>,
}

/// Remove one route, or all; how many went and the routes left.
async fn unroute(b: &Browsers, args: UnrouteArgs, ctx: &ToolContext) -> Result<Value, ToolError> {
    let mut removed = 0;
    let routes = b
        .routes(ctx, |routes| {
            removed = routes.remove(args.pattern.as_deref());
            Ok(())
        })
        .await?;
    Ok(json!({ "removed": removed, "routes": routes }))
}

/// Register this file's tools, all sharing `browsers`.
pub(super) fn register(
    registry: &mut ToolRegistry,
    browsers: &Arc<Browsers>,
) -> Result<(), RegistryError> {
    browser_tool!(
        registry,
        browsers,
        "browser_route",
        idempotent(),
        "Answers the session's requests whose URL fits pattern (* any run) from the browser: action fulfill (status, body, content_type, headers) or block. Lists the routes.",
        route
    );
    browser_tool!(
        registry,
        browsers,
        "browser_unroute",
        idempotent(),
        "Removes the route of pattern (left out: every route); lists the routes left.",
        unroute
    );
    Ok(())
}
