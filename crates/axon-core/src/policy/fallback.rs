//! The fallback chain: when a call has failed for good (after retries, after
//! stale-if-error), try other tools in order — a cached source, a second provider —
//! and report which one served (`fallback: {used, index, primary_tool,
//! primary_error}`). Each fallback is a full call of its own through the pipeline,
//! with its own breaker and history entry. A cancelled call is not rescued.

use std::future::Future;

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::error::ErrorKind;
use crate::result::{CallResult, FallbackInfo};

/// One link of a fallback chain.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct FallbackCall {
    /// The tool to call instead.
    pub tool: String,
    /// Its arguments.
    #[serde(default = "empty_object", alias = "params")]
    pub args: Value,
}

fn empty_object() -> Value {
    Value::Object(Default::default())
}

impl FallbackCall {
    /// A fallback to `tool` with `args`.
    pub fn new(tool: impl Into<String>, args: Value) -> Self {
        FallbackCall {
            tool: tool.into(),
            args,
        }
    }
}

/// Whether a failed primary should go down the chain.
pub fn applies(primary: &CallResult) -> bool {
    primary
        .error
        .as_ref()
        .is_some_and(|e| e.kind != ErrorKind::Cancelled)
}

/// The chain for a finished primary: when it failed (and was not cancelled), try
/// each fallback in order; the first success serves the call. When none does, or
/// the primary succeeded, the primary's result stands.
pub async fn run_chain<F, Fut>(
    primary: CallResult,
    chain: &[FallbackCall],
    mut call: F,
) -> CallResult
where
    F: FnMut(&FallbackCall) -> Fut,
    Fut: Future<Output = CallResult>,
{
    if !applies(&primary) {
        return primary;
    }
    for (index, link) in chain.iter().enumerate() {
        let served = call(link).await;
        if served.success {
            let Some(primary_error) = primary.error.clone() else {
                return primary;
            };
            return CallResult {
                success: true,
                data: served.data,
                error: None,
                fallback: Some(Box::new(FallbackInfo {
                    used: true,
                    index,
                    primary_tool: primary.tool.to_string(),
                    primary_error,
                })),
                provenance: served.provenance,
                ..primary
            };
        }
        if served
            .error
            .as_ref()
            .is_some_and(|e| e.kind == ErrorKind::Cancelled)
        {
            break;
        }
    }
    primary
}
