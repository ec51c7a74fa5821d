//! What a developer's tools show: `browser_console_messages` and
//! `browser_network_requests` (what the current tab logged and fetched since
//! it loaded, crate::journal), and `browser_evaluate`, which runs a script
//! in the page — registered only when `[browser] allow_evaluate` is on,
//! because a script can do anything the page can (read its cookies, post
//! its forms) and an agent that reads hostile pages can be talked into
//! writing one.

use std::sync::Arc;

use axon_core::{RegistryError, ToolContext, ToolError, ToolRegistry};
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::{Value, json};

use super::{acting, read_only};
use crate::cdp::{self, Evaluated};
use crate::journal::Level;
use crate::session::Browsers;

/// The largest result `browser_evaluate` returns, as JSON text.
const MAX_RESULT_BYTES: usize = 1 << 20;

/// `browser_console_messages` arguments.
#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ConsoleArgs {
    /// This level and more severe (default info).
    #[serde(default)]
    pub level: Level,
}

async fn console_messages(
    b: &Browsers,
    args: ConsoleArgs,
    ctx: &ToolContext,
) -> Result<Value, ToolError> {
    let messages = b.journal(ctx, |j| j.messages(args.level)).await?;
    Ok(json!({ "messages": messages }))
}

async fn network_requests(
    b: &Browsers,
    _args: super::NoArgs,
    ctx: &ToolContext,
) -> Result<Value, ToolError> {
    let requests = b.journal(ctx, |j| j.requests()).await?;
    Ok(json!({ "requests": requests }))
}

/// `browser_evaluate` arguments.
#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct EvaluateArgs {
    /// A JavaScript function, such as `() => document.title`; its (awaited)
    /// return value comes back as JSON.
    pub function: String,
}

async fn evaluate(b: &Browsers, args: EvaluateArgs, ctx: &ToolContext) -> Result<Value, ToolError> {
    let page = b.page_for(ctx).await?;
    let expression = format!("({})()", args.function);
    match cdp::evaluate(&page, &expression, true).await? {
        Evaluated::Value(result) => {
            let size = serde_json::to_vec(&result).map(|v| v.len()).unwrap_or(0);
            if size > MAX_RESULT_BYTES {
                return Err(ToolError::failed(format!(
                    "the script's result is {size} bytes of JSON, more than {MAX_RESULT_BYTES}; return less"
                ))
                .with_code("result_too_large"));
            }
            Ok(json!({ "result": result }))
        }
        Evaluated::Object(_) => Ok(json!({
            "result": null,
            "note": "the result is not JSON (a DOM node, a function); return plain data",
        })),
        Evaluated::Thrown(text) => {
            Err(ToolError::failed(format!("the script threw: {text}")).with_code("script_error"))
        }
    }
}

pub(super) fn register(
    registry: &mut ToolRegistry,
    browsers: &Arc<Browsers>,
) -> Result<(), RegistryError> {
    browser_tool!(
        registry,
        browsers,
        "browser_console_messages",
        read_only(),
        "The current tab's console messages since it loaded (uncaught errors included), at `level` or above.",
        console_messages
    );
    browser_tool!(
        registry,
        browsers,
        "browser_network_requests",
        read_only(),
        "The current tab's network requests since it loaded: method, URL, type, status; failed ones first.",
        network_requests
    );
    if browsers.config().allow_evaluate {
        browser_tool!(
            registry,
            browsers,
            "browser_evaluate",
            acting(),
            "Runs a JavaScript function in the page and returns its result as JSON.",
            evaluate
        );
    }
    Ok(())
}
