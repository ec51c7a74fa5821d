//! Raw DevTools commands: a method name and JSON params in, the JSON result
//! out.
//!
//! chromiumoxide's typed commands deserialize whole responses into structs
//! generated from one protocol revision; a newer Chromium that adds an enum
//! value (an accessibility property, say) makes such a response fail to parse.
//! The element tools read only a few fields, so they send raw commands and pick
//! those fields out of the JSON.

use std::borrow::Cow;

use axon_core::ToolError;
use chromiumoxide::page::Page;
use chromiumoxide::types::{Command, Method, MethodId};
use serde::Serialize;
use serde_json::{Value, json};

use crate::session::cdp_error;

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

/// Send `method` with `params` to `page`; a protocol error is `transient`
/// (the page navigated, the node went away) with the method named.
pub(crate) async fn send(
    page: &Page,
    method: &'static str,
    params: Value,
) -> Result<Value, ToolError> {
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

/// Evaluate `expression` in the page's main world.
pub(crate) async fn evaluate(
    page: &Page,
    expression: &str,
    by_value: bool,
) -> Result<Evaluated, ToolError> {
    let params = json!({
        "expression": expression,
        "returnByValue": by_value,
        "awaitPromise": true,
    });
    send(page, "Runtime.evaluate", params).await.map(evaluated)
}

/// Call `function` with `this` bound to `object` and `args` as its arguments.
pub(crate) async fn call_on(
    page: &Page,
    object: &str,
    function: &str,
    args: &[Value],
) -> Result<Evaluated, ToolError> {
    let arguments: Vec<Value> = args.iter().map(|v| json!({"value": v})).collect();
    let params = json!({
        "objectId": object,
        "functionDeclaration": function,
        "arguments": arguments,
        "returnByValue": true,
        "awaitPromise": true,
    });
    send(page, "Runtime.callFunctionOn", params)
        .await
        .map(evaluated)
}
