//! The routes of the features beside the core API (pins, approvals, browser
//! frames), kept apart so that `openapi.rs` stays readable.

use serde_json::{Value, json};

use super::{guarded, json_response, path_param, problem, query_param, reference, responses};

/// The approval routes (docs/design.md, "Approval").
pub(super) fn approvals() -> Value {
    let id = path_param("id", "The approval's id (the parked call's id).");
    json!({
        "/v1/approvals": {"get": {
            "operationId": "listApprovals",
            "summary": "Calls waiting for a person, newest first (a scoped token: its own calls only).",
            "parameters": [
                query_param("status", "pending (default) or all.", json!({"type": "string", "enum": ["pending", "all"]})),
                query_param("limit", "At most this many (1 to 1000, default 100).", json!({"type": "integer", "minimum": 1, "maximum": 1000})),
            ],
            "responses": guarded(responses(vec![
                ("200", json_response("The approvals.", json!({
                    "type": "object", "required": ["approvals"],
                    "properties": {"approvals": {"type": "array", "items": reference("Approval")}},
                }))),
                ("400", problem("An unknown status, or a limit out of range.")),
                ("503", problem("The store cannot be read.")),
            ])),
        }},
        "/v1/approvals/{id}": {
            "get": {
                "operationId": "getApproval",
                "summary": "One approval.",
                "parameters": [id.clone()],
                "responses": guarded(responses(vec![
                    ("200", json_response("The approval.", reference("Approval"))),
                    ("404", problem("No such approval (or another client's).")),
                    ("503", problem("The store cannot be read.")),
                ])),
            },
            "post": {
                "operationId": "decideApproval",
                "summary": "Approve (optionally with edited arguments) or deny a parked call (an admin action). The first decision stands.",
                "parameters": [id],
                "requestBody": {"required": true, "content": {"application/json": {"schema": {
                    "type": "object", "required": ["decision"], "additionalProperties": false,
                    "properties": {
                        "decision": {"type": "string", "enum": ["approve", "deny"]},
                        "args": {"type": "object", "description": "Run the call with these arguments instead (approve only; checked against the tool's input schema)."},
                        "comment": {"type": ["string", "null"], "description": "For history; with deny, the reason the caller is told."},
                    },
                }}}},
                "responses": guarded(responses(vec![
                    ("200", json_response("The approval, decided.", reference("Approval"))),
                    ("400", problem("A malformed decision.")),
                    ("404", problem("No such approval.")),
                    ("409", problem("It was decided already, or expired.")),
                    ("503", problem("The store cannot be read.")),
                ])),
            },
        },
    })
}

/// The pinned-imports routes (docs/design.md, "Pinned imports").
pub(super) fn pins() -> Value {
    json!({
    "/v1/tools/{name}/accept": {"post": {
        "operationId": "acceptTool",
        "summary": "Accept a held imported tool's definition as it is listed now (an admin action), after reading its diff.",
        "parameters": [
            path_param("name", "The tool's name."),
            query_param("fingerprint", "Accept only if the listed definition is still this one (the `fingerprint` the diff was read with).", json!({"type": "string"})),
        ],
        "responses": guarded(responses(vec![
            ("200", json_response("The pin, now accepted.", reference("Pin"))),
            ("404", problem("No pinned tool of that name.")),
            ("409", problem("The definition changed again since that fingerprint.")),
            ("503", problem("The store cannot be read.")),
        ])),
    }},
    "/v1/pins": {"get": {
        "operationId": "listPins",
        "summary": "Imported tools' pins, of the tools the caller may call: by default those held (changed, flagged or new).",
        "parameters": [query_param("status", "held (default), changed, flagged, new, pinned or all.", json!({"type": "string", "enum": ["held", "changed", "flagged", "new", "pinned", "all"]}))],
        "responses": guarded(responses(vec![
            ("200", json_response("The pins, by tool name.", json!({
                "type": "object", "required": ["pins"],
                "properties": {"pins": {"type": "array", "items": reference("Pin")}},
            }))),
            ("400", problem("An unknown status.")),
            ("503", problem("The store cannot be read.")),
        ])),
    }}
    })
}

/// The browser-frame routes (docs/dashboard.md, issue 63).
pub(super) fn frames() -> Value {
    let frame = json!({
        "type": "object", "required": ["seq", "call_id", "tool", "ok", "url", "scale"],
        "properties": {
            "seq": {"type": "integer", "minimum": 1},
            "call_id": {"type": "string"},
            "previous": {"type": "string", "description": "The call of the frame before this one in its session."},
            "at_ms": {"type": "integer", "minimum": 0},
            "tool": {"type": "string"},
            "args": {"description": "The arguments, masked as history masks them."},
            "ok": {"type": "boolean"},
            "error": {"type": "object", "properties": {"code": {"type": "string"}, "message": {"type": "string"}}},
            "url": {"type": "string"},
            "target": {"type": "object", "description": "The element the action took, in the viewport's CSS pixels.",
                "properties": {"x": {"type": "number"}, "y": {"type": "number"}, "width": {"type": "number"}, "height": {"type": "number"}}},
            "scale": {"type": "number", "description": "The image's size against the viewport's CSS pixels."},
            "console_errors": {"type": "array", "items": {"type": "string"}},
            "failed_requests": {"type": "array", "items": {"type": "string"}},
            "image": {"type": "string", "contentEncoding": "base64", "contentMediaType": "image/jpeg"},
        },
    });
    let mut with_before = frame.clone();
    with_before["properties"]["before"] = frame.clone();
    json!({
        "/v1/calls/{call_id}/frame": {"get": {
            "operationId": "getCallFrame",
            "summary": "A recorded browser call's frame (`[browser] record`): the page right after it, and the frame before it in its session (`before`).",
            "parameters": [path_param("call_id", "The call's id.")],
            "responses": guarded(responses(vec![
                ("200", json_response("The frame.", with_before)),
                ("404", problem("No such call, not the caller's, or no frame kept for it.")),
                ("503", problem("The store cannot be read.")),
            ])),
        }},
        "/v1/history/{correlation_id}/frames": {"get": {
            "operationId": "getHistoryFrames",
            "summary": "The frames of a correlation id's (or run's) recorded browser calls, oldest first (at most the newest 100).",
            "parameters": [path_param("correlation_id", "The correlation id or run id.")],
            "responses": guarded(responses(vec![
                ("200", json_response("The frames.", json!({
                    "type": "object", "required": ["frames"],
                    "properties": {"frames": {"type": "array", "items": frame}},
                }))),
                ("503", problem("The store cannot be read.")),
            ])),
        }},
    })
}
