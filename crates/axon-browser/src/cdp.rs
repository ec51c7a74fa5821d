//! Raw DevTools commands: a method name and JSON params in, the JSON result
//! out.
//!
//! chromiumoxide's typed commands deserialize whole responses into structs
//! generated from one protocol revision, so a newer Chromium that adds an enum
//! value (an accessibility property, say) could make a response fail to parse
//! (not seen with Chromium 156 on the test pages). The element tools read only
//! a few fields, so they send raw commands and pick those fields out of the
//! JSON; one path for every command also lets the benchmark record and replay
//! exactly what the tools sent.

use std::borrow::Cow;
use std::sync::Mutex;
use std::sync::atomic::{AtomicBool, Ordering};

use axon_core::{ErrorKind, ToolError};
use chromiumoxide::page::Page;
use chromiumoxide::types::{Command, Method, MethodId};
use serde::Serialize;
use serde_json::{Value, json};

use crate::helpers;

/// One DevTools command with untyped params and result.
#[derive(Debug)]
struct Raw {
    method: &'static str,
    params: Value,
}

impl Serialize for Raw {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        self.params.serialize(serializer)
    }
}

impl Method for Raw {
    fn identifier(&self) -> MethodId {
        Cow::Borrowed(self.method)
    }
}

impl Command for Raw {
    type Response = Value;
}

/// Whether [`send`] keeps a copy of each command (the browser benchmark replays
/// them to measure the same commands without Axon).
static RECORDING: AtomicBool = AtomicBool::new(false);
static RECORDED: Mutex<Vec<(&'static str, Value)>> = Mutex::new(Vec::new());

/// Start (or stop) keeping a copy of every raw DevTools command the tools send.
#[doc(hidden)]
pub fn record_commands(on: bool) {
    RECORDING.store(on, Ordering::SeqCst);
}

/// The commands kept since the last call, in order.
#[doc(hidden)]
pub fn take_recorded() -> Vec<(&'static str, Value)> {
    RECORDED
        .lock()
        .map(|mut v| std::mem::take(&mut *v))
        .unwrap_or_default()
}

/// Send one recorded command to `page` (the benchmark's direct baseline).
#[doc(hidden)]
pub async fn replay(page: &Page, method: &'static str, params: Value) -> Result<Value, ToolError> {
    send(page, method, params).await
}

/// Send `method` with `params` to `page`; a protocol error is `transient`
/// (the page navigated, the node went away) with the method named.
pub(crate) async fn send(
    page: &Page,
    method: &'static str,
    params: Value,
) -> Result<Value, ToolError> {
    if RECORDING.load(Ordering::Relaxed)
        && let Ok(mut log) = RECORDED.lock()
    {
        log.push((method, params.clone()));
    }
    page.execute(Raw { method, params })
        .await
        .map(|response| response.result)
        .map_err(|e| cdp_error(method, &e))
}

/// What a `Runtime.evaluate` / `Runtime.callFunctionOn` returned: the value, a
/// remote object id, or the page's exception text.
pub(crate) enum Evaluated {
    /// `returnByValue` results (and `null`/`undefined` as `Value::Null`).
    Value(Value),
    /// A DOM node or other object left in the page.
    Object(String),
    /// The script threw.
    Thrown(String),
}

fn evaluated(result: Value) -> Evaluated {
    if let Some(details) = result.get("exceptionDetails") {
        let text = details["exception"]["description"]
            .as_str()
            .or_else(|| details["text"].as_str())
            .unwrap_or("the page script threw");
        return Evaluated::Thrown(text.to_string());
    }
    let remote = &result["result"];
    if let Some(id) = remote["objectId"].as_str() {
        return Evaluated::Object(id.to_string());
    }
    Evaluated::Value(remote.get("value").cloned().unwrap_or(Value::Null))
}

/// Install the page-side helpers in the current document.
async fn install_helpers(page: &Page) -> Result<(), ToolError> {
    let params = json!({"expression": *helpers::INSTALL, "returnByValue": true});
    match evaluated(send(page, "Runtime.evaluate", params).await?) {
        Evaluated::Thrown(text) => Err(ToolError::internal(format!(
            "installing the page helpers: {text}"
        ))),
        _ => Ok(()),
    }
}

/// Whether a script failed only because this document has no helpers yet.
fn helpers_missing(result: &Evaluated) -> bool {
    matches!(result, Evaluated::Thrown(text) if text.contains(helpers::MISSING))
}

/// Evaluate `expression` in the page's main world (installing the helpers
/// first when it needs them and the document has none).
pub(crate) async fn evaluate(
    page: &Page,
    expression: &str,
    by_value: bool,
) -> Result<Evaluated, ToolError> {
    let params = || {
        json!({
            "expression": expression,
            "returnByValue": by_value,
            "awaitPromise": true,
        })
    };
    run_with_helpers(page, "Runtime.evaluate", params, None).await
}

/// Call `function` with `this` bound to `object` and `args` as its arguments
/// (installing the helpers first when it needs them).
pub(crate) async fn call_on(
    page: &Page,
    object: &str,
    function: &str,
    args: &[Value],
) -> Result<Evaluated, ToolError> {
    let params = || {
        json!({
            "objectId": object,
            "functionDeclaration": function,
            "arguments": args.iter().map(|v| json!({"value": v})).collect::<Vec<_>>(),
            "returnByValue": true,
            "awaitPromise": true,
        })
    };
    run_with_helpers(page, "Runtime.callFunctionOn", params, Some(object)).await
}

/// Send a script command; when it failed only for want of the helpers,
/// install them and send it again (the params are built again then, not
/// copied up front on every call).
///
/// A call on `object` installs them in the object's own document (an
/// iframe's element lives in the frame's window, not the page's).
async fn run_with_helpers(
    page: &Page,
    method: &'static str,
    params: impl Fn() -> Value,
    object: Option<&str>,
) -> Result<Evaluated, ToolError> {
    let result = evaluated(send(page, method, params()).await?);
    if !helpers_missing(&result) {
        return Ok(result);
    }
    match object {
        Some(object) => install_helpers_on(page, object).await?,
        None => install_helpers(page).await?,
    }
    send(page, method, params()).await.map(evaluated)
}

/// Install the page-side helpers in the document `object` belongs to.
async fn install_helpers_on(page: &Page, object: &str) -> Result<(), ToolError> {
    let params = json!({
        "objectId": object,
        "functionDeclaration": *helpers::INSTALL_ON,
        "returnByValue": true,
    });
    match evaluated(send(page, "Runtime.callFunctionOn", params).await?) {
        Evaluated::Thrown(text) => Err(ToolError::internal(format!(
            "installing the page helpers: {text}"
        ))),
        _ => Ok(()),
    }
}

/// Evaluate `expression` on `page` and return its JSON value.
pub(crate) async fn eval(page: &Page, expression: &str) -> Result<Value, ToolError> {
    match evaluate(page, expression, true).await? {
        Evaluated::Value(v) => Ok(v),
        Evaluated::Thrown(text) => Err(ToolError::transient(format!(
            "evaluating on the page: {text}"
        ))),
        Evaluated::Object(_) => Ok(Value::Null),
    }
}

/// A CDP failure while doing `what`: `transient` (the page changed under us, the
/// connection dropped), with the message.
pub(crate) fn cdp_error(what: &str, e: &chromiumoxide::error::CdpError) -> ToolError {
    ToolError::new(ErrorKind::Transient, format!("{what}: {e}"))
}
