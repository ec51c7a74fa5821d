//! `axon_result_more`: the rest of a result cut to its token budget.
//!
//! Over MCP every result is bounded (`max_result_tokens`, by default
//! [`DEFAULT_MAX_RESULT_TOKENS`]: a policy sets another, 0 none). A cut
//! result ends with a notice naming its handle; this tool takes the handle
//! and a page, or a text to find, and answers that part of the whole result,
//! cut the same way and shown the same way (a snapshot's page reads as a
//! snapshot). The whole result is read from history, so a handle lasts as
//! long as history keeps the call, and only its caller's tenant reads it.

use axon_core::policy::result_budget;
use axon_core::{CallResult, Executor};
use rmcp::model::ContentBlock as Content;
use serde_json::{Value, json};

/// The tool's name.
pub(crate) const RESULT_MORE: &str = "axon_result_more";

/// What `max_result_tokens` is over MCP when no policy sets it: what Claude
/// Code allows an MCP tool's output by default, and roughly a fifth of a
/// small model's context.
pub const DEFAULT_MAX_RESULT_TOKENS: u32 = 25_000;

/// The tool as `tools/list` shows it.
pub(crate) fn tool() -> Value {
    json!({
        "name": RESULT_MORE,
        "description": "The rest of a result that was cut to fit the token budget: give the handle from its notice and a page, or a text to find.",
        "inputSchema": {
            "type": "object",
            "required": ["handle"],
            "properties": {
                "handle": {"type": "string", "description": "The handle in the cut result's notice."},
                "page": {"type": "integer", "minimum": 1, "description": "Which page (1 is what the call returned)."},
                "query": {"type": "string", "minLength": 1, "description": "Return the lines or items containing this text instead (case folded)."}
            },
            "additionalProperties": false
        },
        "annotations": {"readOnlyHint": true, "openWorldHint": false}
    })
}

/// Answer one `axon_result_more` call made by `owner`.
pub(crate) async fn serve(
    executor: &Executor,
    args: &Value,
    owner: &axon_core::Owner,
) -> Result<CallResult, (&'static str, String)> {
    let invalid = |message: String| ("invalid_arguments", message);
    let handle = args["handle"]
        .as_str()
        .ok_or_else(|| invalid("handle: a string is required".into()))?;
    let (call_id, budget) = result_budget::parse_handle(handle).ok_or_else(|| {
        invalid(format!(
            "handle: {handle:?} is not a handle (<call id>.<tokens>, from a cut result's notice)"
        ))
    })?;
    let page = match &args["page"] {
        Value::Null => None,
        v => Some(
            v.as_u64()
                .filter(|n| *n >= 1)
                .ok_or_else(|| invalid("page: an integer from 1 is required".into()))?
                as usize,
        ),
    };
    let query = match &args["query"] {
        Value::Null => None,
        Value::String(q) if !q.is_empty() => Some(q.as_str()),
        _ => return Err(invalid("query: a non-empty string is required".into())),
    };
    let gone = || {
        (
            "not_found",
            format!(
                "no result under handle {handle:?}: history no longer keeps the call, or it is not yours"
            ),
        )
    };
    let entry = executor
        .history()
        .by_call_id(call_id)
        .await
        .map_err(|e| ("unavailable", format!("history cannot be read: {e}")))?
        .ok_or_else(gone)?;
    if !owner.sees(&entry.owner) {
        return Err(gone());
    }
    let mut result = entry.result;
    if !result.success {
        return Err(gone());
    }
    let (data, cut) = match (page, query) {
        (Some(_), Some(_)) => return Err(invalid("give page or query, not both".into())),
        (None, Some(query)) => match result_budget::search(&result.data, budget, query, handle) {
            Some((data, cut)) => (data, Some(cut)),
            None => (result.data, None),
        },
        (page, None) => result_budget::page(&result.data, budget, page.unwrap_or(1), handle)
            .map_err(|e| invalid(format!("page: {e}")))?,
    };
    result.data = data;
    result.cut = cut.map(Box::new);
    Ok(result)
}

/// The notice a cut result ends with, as its own text block.
pub(crate) fn notice(result: &CallResult) -> Option<Content> {
    result.cut.as_ref().map(|cut| Content::text(cut.notice()))
}
