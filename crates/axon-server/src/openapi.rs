//! The API description: an OpenAPI 3.1 document served at `GET /openapi.json` and
//! kept in `docs/openapi.json` (`axon openapi` prints it; a test fails when the
//! two differ). The bodies that carry the contracts (the call result, the plan,
//! the plan result, history entries, the request bodies) are generated from the
//! server's own Rust types with schemars, so they follow the code; the small
//! envelopes around them are written here, and a test checks real responses
//! against every schema.

mod paths;

use std::sync::LazyLock;

use schemars::generate::SchemaSettings;
use serde_json::{Map, Value, json};

use crate::api::{CallBody, ManyBody};

/// A response that is a problem (`application/problem+json`).
fn problem(description: &str) -> Value {
    json!({
        "description": description,
        "content": {"application/problem+json": {"schema": {"$ref": "#/components/schemas/Problem"}}},
    })
}

/// 202 for a run now running in the background (`runs::accepted`).
fn running(description: &str) -> Value {
    json!({
        "description": description,
        "headers": {"Location": {"schema": {"type": "string"}}},
        "content": {"application/json": {"schema": {
            "type": "object", "required": ["run_id", "status", "href"],
            "properties": {"run_id": {"type": "string"}, "status": {"enum": ["running", "queued"]}, "href": {"type": "string"}},
        }}},
    })
}

/// A JSON response of `schema`.
/// RFC 9728 metadata of `what` (`[server.auth]`).
fn protected_resource(id: &str, what: &str) -> Value {
    let metadata = json!({"type": "object", "required": ["resource", "authorization_servers"], "properties": {
        "resource": {"type": "string"}, "authorization_servers": {"type": "array", "items": {"type": "string"}},
        "scopes_supported": {"type": "array", "items": {"type": "string"}}}});
    json!({"get": {
        "operationId": id,
        "summary": format!("Protected Resource Metadata of {what}: the issuers whose tokens it accepts."),
        "responses": {"200": json_response("The metadata.", metadata), "404": problem("No issuer is trusted ([server.auth]).")},
    }})
}

fn json_response(description: &str, schema: Value) -> Value {
    json!({"description": description, "content": {"application/json": {"schema": schema}}})
}

fn reference(name: &str) -> Value {
    json!({"$ref": format!("#/components/schemas/{name}")})
}

/// The problems every authenticated endpoint may answer with.
/// A call's 422 is also the problem of an `Idempotency-Key` reused for a
/// different request.
fn idempotent(mut map: Map<String, Value>) -> Map<String, Value> {
    if let Some(Value::Object(content)) = map.get_mut("422").and_then(|r| r.get_mut("content")) {
        content.insert(
            "application/problem+json".into(),
            json!({"schema": {"$ref": "#/components/schemas/Problem"}}),
        );
    }
    if let Some(Value::String(description)) =
        map.get_mut("422").and_then(|r| r.get_mut("description"))
    {
        description
            .push_str(" Or (a problem) the `Idempotency-Key` was used for a different request.");
    }
    map
}

fn guarded(mut responses: Map<String, Value>) -> Value {
    responses.insert(
        "401".into(),
        problem("A bearer token is required (`server.auth_tokens`) and was missing or wrong."),
    );
    responses.insert(
        "403".into(),
        problem("The token may not do this (a scoped token's tools, or an admin action), or the request came from a Host or an Origin this server does not answer (docs/security.md)."),
    );
    Value::Object(responses)
}

/// What every route may answer before it is reached (`edge.rs`): 403 for a
/// foreign Host or Origin, and 415 for a body that is not JSON or YAML.
fn edge_responses(paths: &mut Value) {
    let Some(paths) = paths.as_object_mut() else {
        return;
    };
    for operation in paths.values_mut().filter_map(Value::as_object_mut) {
        for op in operation.values_mut() {
            let has_body = op.get("requestBody").is_some();
            let Some(responses) = op.get_mut("responses").and_then(Value::as_object_mut) else {
                continue;
            };
            responses.entry("403").or_insert_with(|| {
                problem("The request came from a Host or an Origin this server does not answer (docs/security.md).")
            });
            if has_body {
                responses.entry("415").or_insert_with(|| {
                    problem("The body is not `application/json` (or YAML, for plans).")
                });
            }
        }
    }
}

fn responses(pairs: Vec<(&str, Value)>) -> Map<String, Value> {
    pairs
        .into_iter()
        .map(|(status, v)| (status.to_string(), v))
        .collect()
}

fn path_param(name: &str, description: &str) -> Value {
    json!({"name": name, "in": "path", "required": true, "description": description, "schema": {"type": "string"}})
}

fn query_param(name: &str, description: &str, schema: Value) -> Value {
    json!({"name": name, "in": "query", "required": false, "description": description, "schema": schema})
}

/// The statuses a failed call answers with (`ErrorKind::http_status`), its call
/// result as the body.
fn call_failures(mut map: Map<String, Value>) -> Map<String, Value> {
    for (status, kinds) in [
        ("422", "`failed` or `invalid_output`"),
        ("429", "`rate_limited`"),
        ("499", "`cancelled`"),
        ("500", "`internal`: a tool panicked"),
        ("502", "`transient`"),
        ("503", "`unavailable` or `circuit_open`"),
        ("504", "`timeout` or `budget_exhausted`"),
        ("408", "`approval_timeout`: nobody approved it in time"),
    ] {
        map.insert(
            status.into(),
            json_response(
                &format!("The call failed with {kinds}; the body is its call result."),
                reference("CallResult"),
            ),
        );
    }
    map
}

/// A call's 403: a token that may not call the tool (a problem), or a call a
/// person denied (`approval_denied`, its call result).
fn denied_or_forbidden(mut responses: Value) -> Value {
    responses["403"] = json!({
        "description": "The token may not call this tool, or the request came from a Host or an Origin this server does not answer (a problem); or a person denied the call (`approval_denied`; the body is its call result).",
        "content": {
            "application/problem+json": {"schema": reference("Problem")},
            "application/json": {"schema": reference("CallResult")},
        },
    });
    responses
}

/// A plan body: JSON, or the same document in YAML.
fn plan_body() -> Value {
    json!({
        "required": true,
        "content": {
            "application/json": {"schema": reference("Plan")},
            "application/yaml": {"schema": {"type": "string"}},
        },
    })
}

/// The whole document, built once (it depends only on the code).
pub fn document() -> &'static Value {
    static DOCUMENT: LazyLock<Value> = LazyLock::new(build);
    &DOCUMENT
}

fn build() -> Value {
    let mut generator = SchemaSettings::draft2020_12()
        .with(|s| s.definitions_path = "/components/schemas/".into())
        .into_generator();
    let call_body = generator.subschema_for::<CallBody>().to_value();
    let many_body = generator.subschema_for::<ManyBody>().to_value();
    let call_result = generator
        .subschema_for::<axon_core::CallResult>()
        .to_value();
    let plan_result = generator
        .subschema_for::<axon_plan::PlanResult>()
        .to_value();
    let history_entry = generator
        .subschema_for::<axon_core::HistoryEntry>()
        .to_value();
    let history_stats = generator
        .subschema_for::<axon_core::HistoryStats>()
        .to_value();
    let step_outcome = generator
        .subschema_for::<axon_plan::StepOutcome>()
        .to_value();
    let breaker = generator
        .subschema_for::<Option<axon_core::policy::BreakerState>>()
        .to_value();
    // A stored run's DAG as JSON (`/v1/runs/{id}/graph?format=json`).
    let graph_json = json!({
        "type": "object", "required": ["name", "nodes", "edges"],
        "properties": {
            "name": {"type": ["string", "null"]},
            "nodes": {"type": "array", "items": {
                "type": "object", "required": ["index", "label", "tool"],
                "properties": {"index": {"type": "integer", "minimum": 0}, "label": {"type": "string"}, "tool": {"type": "string"}},
            }},
            "edges": {"type": "array", "items": {
                "type": "object", "required": ["from", "to", "declared"],
                "properties": {"from": {"type": "integer", "minimum": 0}, "to": {"type": "integer", "minimum": 0}, "declared": {"type": "boolean"}},
            }},
        },
    });
    let run_summary = generator
        .subschema_for::<axon_store_roles::RunSummary>()
        .to_value();
    generator.subschema_for::<axon_plan::Plan>();
    let key_breaker = generator
        .subschema_for::<axon_core::KeyBreaker>()
        .to_value();
    let mut schemas = generator.take_definitions(true);
    // null for a tool the executor does not know (history of a tool since removed).
    let breaker_state = breaker;
    let adaptive_view = generator
        .subschema_for::<Option<axon_core::AdaptiveView>>()
        .to_value();
    schemas.insert(
        "Problem".into(),
        json!({
            "description": "RFC 9457 problem details; `pointer` names the offending field of the request.",
            "type": "object",
            "required": ["type", "title", "status", "detail"],
            "properties": {
                "type": {"type": "string"},
                "title": {"type": "string"},
                "status": {"type": "integer"},
                "detail": {"type": "string"},
                "pointer": {"type": "string"},
                "result": call_result,
                "errors": {"type": "array", "items": {"type": "object"}},
            },
        }),
    );
    schemas.insert(
        "Breaker".into(),
        json!({
            "type": "object",
            "required": ["tool", "state"],
            "properties": {
                "tool": {"type": "string"},
                "state": breaker_state,
                "next_probe_ms": {"type": "integer", "minimum": 0, "description": "While open: how long until a probe is let through."},
                "keys": {
                    "type": "array",
                    "description": "Dependency keys of the tool (origins, its MCP server, template values) whose breaker is not closed, as this replica sees them.",
                    "items": key_breaker,
                },
            },
        }),
    );
    schemas.insert(
        "Approval".into(),
        json!({
            "description": "A call parked for a person's decision (docs/design.md, \"Approval\"): what it would run, why it waits, and once decided who decided and how.",
            "type": "object",
            "required": ["id", "tool", "args", "correlation_id", "reason", "requested_at_ms", "expires_at_ms", "status"],
            "properties": {
                "id": {"type": "string"},
                "tool": {"type": "string"},
                "args": {"type": "object", "description": "The call's arguments, secrets masked."},
                "tenant": {"type": "string"},
                "correlation_id": {"type": "string"},
                "reason": {"type": "string"},
                "requested_at_ms": {"type": "integer"},
                "expires_at_ms": {"type": "integer"},
                "status": {"type": "string", "enum": ["pending", "approved", "denied", "expired"]},
                "decided_by": {"type": "string"},
                "decided_at_ms": {"type": "integer"},
                "comment": {"type": "string"},
                "edited_args": {"type": "object"},
                "spent_at_ms": {"type": "integer", "description": "When the approved call was let run: an approval runs one call."},
            },
        }),
    );
    schemas.insert(
        "Pin".into(),
        json!({
            "description": "An imported MCP tool's pin (docs/design.md, \"Pinned imports\"): whether the server lists the accepted definition, what the poisoning rules found, and while held the diff from the accepted definition.",
            "type": "object",
            "required": ["tool", "server", "status", "fingerprint", "seen_at_ms", "flags"],
            "properties": {
                "tool": {"type": "string"},
                "server": {"type": "string"},
                "status": {"type": "string", "enum": ["pinned", "changed", "flagged", "new"]},
                "fingerprint": {"type": "string", "description": "SHA-256 of the definition listed now."},
                "seen_at_ms": {"type": "integer"},
                "flags": {"type": "array", "items": {
                    "type": "object", "required": ["rule", "field", "excerpt"],
                    "properties": {"rule": {"type": "string"}, "field": {"type": "string"}, "excerpt": {"type": "string"}},
                }},
                "accepted": {"type": "object", "required": ["fingerprint", "at_ms", "by"], "properties": {
                    "fingerprint": {"type": "string"}, "at_ms": {"type": "integer"}, "by": {"type": "string"},
                }},
                "diff": {"type": "string", "description": "While held: a unified diff, one section per field that differs."},
            },
        }),
    );
    schemas.insert(
        "RunState".into(),
        json!({
            "description": "A run as stored: `running` (on some replica), `waiting_approval` (running, with a step parked for a person's approval), `queued` (a replica will take it up), `interrupted` (begun, never finished: POST /v1/runs?run_id= resumes it) or its final status.",
            "type": "object",
            "required": ["run_id", "status", "steps_total", "steps_finished", "steps", "result"],
            "properties": {
                "run_id": {"type": "string"},
                "status": {"type": "string", "enum": ["running", "waiting_approval", "queued", "interrupted", "succeeded", "failed", "cancelled"]},
                "steps_total": {"type": ["integer", "null"]},
                "steps_finished": {"type": "integer"},
                "steps": {"type": "array", "items": step_outcome},
                "result": {"oneOf": [plan_result.clone(), {"type": "null"}]},
            },
        }),
    );
    schemas.insert(
        "Health".into(),
        json!({
            "type": "object",
            "required": ["status", "version", "components", "runs_in_flight"],
            "properties": {
                "status": {"type": "string", "enum": ["ok", "degraded"]},
                "version": {"type": "string"},
                "components": {"type": "object", "additionalProperties": {
                    "type": "object",
                    "required": ["status"],
                    "properties": {"status": {"type": "string", "enum": ["ok", "failing"]}, "target": {"type": "string"}, "error": {"type": "string"}},
                }},
                "runs_in_flight": {"type": "integer"},
            },
        }),
    );
    let event_stream = |what: &str| json!({"schema": {"type": "string", "description": format!("Server-sent events: {what}")}});
    let call_events = event_stream(
        "`attempt_started`, `retrying` (reason, delay), `slow`, `hedged`, `progress`, then one `result` event with the call result. Closing the stream cancels the call.",
    );
    let run_events = event_stream(
        "`run_started`, `step_started`, `step_progress`, `step_finished`, `run_finished`, then one `result` event with the plan result as stored.",
    );

    let mut call_ok = json_response("The call succeeded: its call result.", call_result.clone());
    call_ok["content"]["text/event-stream"] = call_events;
    let mut start_ok = json_response("With `wait=true`: the run's result.", plan_result.clone());
    start_ok["content"]["text/event-stream"] = run_events;

    let mut paths = json!({
        "/healthz": {"get": {
            "operationId": "health",
            "summary": "Whether the server and each component it needs work.",
            "responses": {
                "200": json_response("Every component works.", reference("Health")),
                "503": json_response("A component fails; it is named.", reference("Health")),
            },
        }},
        "/openapi.json": {"get": {
            "operationId": "openapi",
            "summary": "This document.",
            "responses": {"200": json_response("The OpenAPI 3.1 document.", json!({"type": "object"}))},
        }},
        "/metrics": {"get": {
            "operationId": "metrics",
            "summary": "Prometheus metrics (tool_latency_ms, tool_errors_total, …).",
            "responses": guarded(responses(vec![("200", json!({
                "description": "The Prometheus text format.",
                "content": {"text/plain": {"schema": {"type": "string"}}},
            }))])),
        }},
        "/v1/tools": {"get": {
            "operationId": "listTools",
            "summary": "The tools this token may call.",
            "parameters": [query_param("format", "`json` (specs), `openai` (function-calling schemas) or `mcp` (tools/list).", json!({"type": "string", "enum": ["json", "openai", "mcp"]}))],
            "responses": guarded(responses(vec![
                ("200", json_response("The tools: `{\"tools\": [...]}`, or for `openai` an array of function schemas.", json!({
                    "oneOf": [{"type": "object"}, {"type": "array", "items": {"type": "object"}}],
                }))),
                ("400", problem("An unknown format.")),
            ])),
        }},
        "/v1/tools/{name}": {"get": {
            "operationId": "getTool",
            "summary": "One tool: its spec, the policy in force for it (every key, the defaults and `[tools.<name>]` layered), its breaker, and an imported tool's pin.",
            "parameters": [path_param("name", "The tool's name.")],
            "responses": guarded(responses(vec![
                ("200", json_response("The tool.", json!({
                    "type": "object", "required": ["tool", "policy", "breaker"],
                    "properties": {
                        "tool": {"type": "object", "required": ["name", "description", "input_schema"]},
                        "policy": {"type": "object", "description": "Every policy key (docs/design.md, \"Policy configuration\")."},
                        "breaker": reference("Breaker"),
                        "pin": {"oneOf": [reference("Pin"), {"type": "null"}], "description": "An imported tool's pin (docs/design.md, \"Pinned imports\"); null for other tools."},
                    },
                }))),
                ("404", problem("No such tool.")),
            ])),
        }},
        "/v1/tools/{name}/call": {"post": {
            "operationId": "callTool",
            "summary": "Call one tool through the policy pipeline.",
            "parameters": [
                path_param("name", "The tool's name."),
                {"name": "Idempotency-Key", "in": "header", "required": false,
                 "description": "Run the call once: a repeat with the same key (within a day) gets the first result, with `Idempotent-Replayed: true`, and does not call the tool again. 1 to 255 characters; not with `Accept: text/event-stream`.",
                 "schema": {"type": "string", "minLength": 1, "maxLength": 255}},
            ],
            "requestBody": {"required": true, "content": {"application/json": {"schema": call_body}}},
            "responses": denied_or_forbidden(guarded(idempotent(call_failures(responses(vec![
                ("200", call_ok),
                ("400", problem("Bad arguments (`invalid_arguments`, pointer under `/args`), a bad per-call policy (`/policy/…`), a malformed body or a bad `Idempotency-Key`.")),
                ("404", problem("No such tool.")),
                ("409", json!({
                    "description": "A request with this `Idempotency-Key` is still running (`Retry-After: 1`; a problem), or the tool is held because its definition is not the accepted one (`tool_changed`; the body is its call result).",
                    "content": {
                        "application/problem+json": {"schema": reference("Problem")},
                        "application/json": {"schema": reference("CallResult")},
                    },
                })),
                ("413", problem("The body is larger than `server.body_limit_bytes`.")),
                ("415", problem("The body is not JSON.")),
            ]))))),
        }},
        "/v1/calls": {"post": {
            "operationId": "callMany",
            "summary": "Several calls at once; the results in the order of the calls.",
            "requestBody": {"required": true, "content": {"application/json": {"schema": many_body}}},
            "responses": guarded(responses(vec![
                ("200", json_response("One call result per call, in order.", json!({
                    "type": "object", "required": ["results"],
                    "properties": {"results": {"type": "array", "items": call_result}},
                }))),
                ("400", problem("A malformed body, or `max_parallel` of 0.")),
                ("413", problem("The body is too large.")),
                ("415", problem("The body is not JSON.")),
            ])),
        }},
        "/v1/plans/validate": {"post": {
            "operationId": "validatePlan",
            "summary": "Check a plan without running it.",
            "requestBody": plan_body(),
            "responses": guarded(responses(vec![
                ("200", json_response("The plan is valid.", json!({
                    "type": "object", "required": ["valid", "steps"],
                    "properties": {"valid": {"const": true}, "steps": {"type": "integer"}},
                }))),
                ("400", problem("Not a plan document.")),
                ("413", problem("The body is too large.")),
                ("422", problem("The plan is invalid: `errors` lists every problem with its pointer.")),
            ])),
        }},
        "/v1/runs": {"get": {
            "operationId": "listRuns",
            "summary": "Runs, most recently updated first, a page at a time.",
            "parameters": [
                query_param("status", "Only runs in this state.", json!({"type": "string", "enum": ["running", "queued", "interrupted", "succeeded", "failed", "cancelled"]})),
                query_param("before", "Only runs updated before this time (ms since the epoch): the previous page's `next_before`.", json!({"type": "integer"})),
                query_param("limit", "At most this many (default 50).", json!({"type": "integer", "minimum": 1, "maximum": 500})),
            ],
            "responses": guarded(responses(vec![
                ("200", json_response("A page of runs; `status` is always set (`running` or `interrupted` before a result).", json!({
                    "type": "object", "required": ["runs", "next_before"],
                    "properties": {
                        "runs": {"type": "array", "items": run_summary},
                        "next_before": {"type": ["integer", "null"], "description": "Pass as `before` for the next page; null on the last."},
                    },
                }))),
                ("400", problem("A bad status, limit or cursor.")),
                ("503", problem("The store cannot be read.")),
            ])),
        }, "post": {
            "operationId": "startRun",
            "summary": "Start a plan (or resume a run id). `Accept: text/event-stream` streams its progress.",
            "parameters": [
                query_param("wait", "Block until the run ends and return its result.", json!({"type": "boolean"})),
                query_param("run_id", "Run (or resume) under this id.", json!({"type": "string"})),
                query_param("correlation_id", "Correlation id of the run's calls.", json!({"type": "string"})),
                query_param("queue", "Queue the run for whichever replica has room (`[store] takeover`): 202 `queued`.", json!({"type": "boolean"})),
            ],
            "requestBody": plan_body(),
            "responses": guarded(responses(vec![
                ("200", start_ok),
                ("202", running("Started (or queued); `Location` is the run.")),
                ("400", problem("Not a plan document, or a bad query.")),
                ("409", problem("That run id is running, began with another plan, or is another client's run.")),
                ("413", problem("The body is too large.")),
                ("422", problem("The plan is invalid.")),
                ("503", problem("`server.max_runs` runs are running, or `server.max_queued_runs` runs wait in the queue, or this token holds its share of either (`server.tenant_share_percent`) (`Retry-After`, `retry_after_ms`).")),
            ])),
        }},
        "/v1/runs/{id}": {
            "get": {
                "operationId": "getRun",
                "summary": "A run's state and, once it has ended, its result.",
                "parameters": [path_param("id", "The run id.")],
                "responses": guarded(responses(vec![
                    ("200", json_response("The run.", reference("RunState"))),
                    ("404", problem("No such run (or another client's).")),
                    ("503", problem("The store cannot be read.")),
                ])),
            },
            "delete": {
                "operationId": "cancelRun",
                "summary": "Cancel a running run (its finished steps stay checkpointed).",
                "parameters": [path_param("id", "The run id.")],
                "responses": guarded(responses(vec![
                    ("202", json_response("Cancelling.", json!({
                        "type": "object", "required": ["run_id", "status"],
                        "properties": {"run_id": {"type": "string"}, "status": {"const": "cancelling"}},
                    }))),
                    ("404", problem("No such run.")),
                    ("409", problem("The run is not running here.")),
                    ("503", problem("The store cannot be read.")),
                ])),
            },
        },
        "/v1/runs/{id}/events": {"get": {
            "operationId": "followRun",
            "summary": "A running run's progress events as server-sent events, from now until `run_finished`, whoever started it (a non-admin scoped token: its own runs only).",
            "parameters": [path_param("id", "The run id.")],
            "responses": guarded(responses(vec![
                ("200", json!({
                    "description": "`event:` is the event's name (`step_started`, `step_retrying`, `step_progress`, `step_finished`, `run_finished`), `data:` its JSON.",
                    "content": {"text/event-stream": {"schema": {"type": "string"}}},
                })),
                ("404", problem("The run is not running here (`GET /v1/runs/{id}` has its state).")),
            ])),
        }},
        "/v1/runs/{id}/resume": {"post": {
            "operationId": "resumeRun",
            "summary": "Run a stored run again under its id with the plan it began with: finished steps come from their checkpoints, the rest run.",
            "parameters": [path_param("id", "The run id.")],
            "responses": guarded(responses(vec![
                ("202", running("Resumed; `Location` is the run.")),
                ("404", problem("No such run.")),
                ("409", problem("The run is running.")),
                ("422", problem("The stored plan no longer validates (a tool is gone).")),
                ("503", problem("The store cannot be read, or `server.max_runs` runs are running, or this token holds its share of them (`server.tenant_share_percent`) (`Retry-After`).")),
            ])),
        }},
        "/v1/runs/{id}/graph": {"get": {
            "operationId": "getRunGraph",
            "summary": "A stored run's DAG: Graphviz dot, Mermaid, or JSON nodes and edges.",
            "parameters": [
                path_param("id", "The run id."),
                query_param("format", "`mermaid` (default), `dot` or `json`.", json!({"type": "string", "enum": ["dot", "mermaid", "json"]})),
            ],
            "responses": guarded(responses(vec![
                ("200", json!({
                    "description": "The graph.",
                    "content": {
                        "text/plain": {"schema": {"type": "string"}},
                        "text/vnd.graphviz": {"schema": {"type": "string"}},
                        "application/json": {"schema": graph_json},
                    },
                })),
                ("400", problem("An unknown format.")),
                ("404", problem("No such run.")),
                ("422", problem("The stored plan no longer validates (a tool is gone).")),
                ("503", problem("The store cannot be read.")),
            ])),
        }},
        "/v1/runs/{id}/plan": {"get": {
            "operationId": "getRunPlan",
            "summary": "The plan a run ran; with `replay=true`, compiled to replay it without a translator (each `browser_act` step that succeeded replaced by the browser call it made, the step as its fallback).",
            "parameters": [
                path_param("id", "The run id."),
                query_param("replay", "Compile the plan for replay.", json!({"type": "boolean"})),
            ],
            "responses": guarded(responses(vec![
                ("200", json_response("The plan.", json!({
                    "type": "object", "required": ["plan"],
                    "properties": {
                        "plan": reference("Plan"),
                        "replay": {
                            "type": "object", "required": ["replaced", "kept"],
                            "properties": {
                                "replaced": {"type": "array", "items": {"type": "integer", "minimum": 0}},
                                "kept": {"type": "array", "items": {
                                    "type": "object", "required": ["step", "reason"],
                                    "properties": {"step": {"type": "integer", "minimum": 0}, "reason": {"type": "string"}},
                                }},
                            },
                        },
                    },
                }))),
                ("400", problem("A `replay` that is not `true` or `false`.")),
                ("404", problem("No such run.")),
                ("503", problem("The store cannot be read.")),
            ])),
        }},
        "/v1/history/{correlation_id}": {"get": {
            "operationId": "getHistory",
            "summary": "The calls of a correlation id (a run's id is its calls' correlation id), oldest first, with their figures; or the one call of a call id.",
            "parameters": [path_param("correlation_id", "The correlation id, run id or call id.")],
            "responses": guarded(responses(vec![
                ("200", json_response("The calls.", json!({
                    "type": "object", "required": ["correlation_id", "calls", "stats"],
                    "properties": {
                        "correlation_id": {"type": "string"},
                        "calls": {"type": "array", "items": history_entry},
                        "stats": history_stats,
                    },
                }))),
                ("404", problem("No calls with that correlation id.")),
                ("503", problem("The store cannot be read.")),
            ])),
        }},
        "/v1/stats": {"get": {
            "operationId": "getStats",
            "summary": "Per-tool figures from history, with each breaker's state and the timeout and hedge delay in force (chosen from observed latency where the policy says \"auto\").",
            "responses": guarded(responses(vec![
                ("200", json_response("Per tool.", json!({
                    "type": "object", "required": ["tools"],
                    "properties": {"tools": {"type": "array", "items": {
                        "type": "object", "required": ["tool", "breaker"],
                        "properties": {
                            "tool": {"type": "string"},
                            "breaker": breaker_state,
                            "adaptive": adaptive_view,
                        },
                    }}},
                }))),
                ("503", problem("The store cannot be read.")),
            ])),
        }},
        "/v1/breakers": {"get": {
            "operationId": "listBreakers",
            "summary": "Every tool's circuit breaker.",
            "responses": guarded(responses(vec![
                ("200", json_response("The breakers.", json!({
                    "type": "object", "required": ["breakers"],
                    "properties": {"breakers": {"type": "array", "items": reference("Breaker")}},
                }))),
            ])),
        }},
        "/v1/breakers/{tool}/reset": {"post": {
            "operationId": "resetBreaker",
            "summary": "Close a tool's breaker, or one of its dependency keys' (`?key=`), by hand (an admin action).",
            "parameters": [
                path_param("tool", "The tool's name."),
                query_param("key", "A dependency key of the tool (an origin such as `https://api.example.com`, `server:<name>`); absent: the tool's own breaker.", json!({"type": "string"})),
            ],
            "responses": guarded(responses(vec![
                ("200", json_response("The breaker, closed.", reference("Breaker"))),
                ("404", problem("No such tool, or no breaker kept for that key.")),
            ])),
        }},
        "/v1/breakers/{tool}/isolate": {"post": {
            "operationId": "isolateBreaker",
            "summary": "Open a tool's breaker until it is reset, in every replica: take a dependency out of service by hand (an admin action).",
            "parameters": [path_param("tool", "The tool's name.")],
            "responses": guarded(responses(vec![
                ("200", json_response("The breaker, isolated.", reference("Breaker"))),
                ("404", problem("No such tool.")),
            ])),
        }},
        "/mcp": {"post": {
            "operationId": "mcp",
            "summary": "MCP over Streamable HTTP (JSON-RPC 2.0): every tool and `run_plan`. Use an MCP client.",
            "requestBody": {"required": true, "content": {"application/json": {"schema": {"type": "object"}}}},
            "responses": guarded(responses(vec![
                ("200", json!({"description": "A JSON-RPC response, or a stream of them.", "content": {
                    "application/json": {"schema": {"type": "object"}},
                    "text/event-stream": {"schema": {"type": "string"}},
                }})),
                ("202", json!({"description": "A notification or response accepted."})),
            ])),
        }},
    });
    if let Some(all) = paths.as_object_mut() {
        let metadata = json!({
            "/.well-known/oauth-protected-resource": protected_resource("protectedResource", "this server"),
            "/.well-known/oauth-protected-resource/mcp": protected_resource("protectedResourceMcp", "`/mcp`"),
        });
        for more in [paths::pins(), paths::approvals(), paths::frames(), metadata] {
            if let Value::Object(more) = more {
                all.extend(more);
            }
        }
    }
    edge_responses(&mut paths);
    json!({
        "openapi": "3.1.0",
        "info": {
            "title": "Axon",
            "version": env!("CARGO_PKG_VERSION"),
            "description": "Execute AI agents' tool calls reliably: every call through one policy pipeline (validation, cache, circuit breaker, rate limit, retries, hedging, fallback), plans as DAGs, history with provenance. The contracts are in docs/design.md.",
        },
        "servers": [{"url": "http://127.0.0.1:7878"}],
        "security": [{}, {"bearer": []}],
        "paths": paths,
        "components": {
            "schemas": schemas,
            "securitySchemes": {"bearer": {"type": "http", "scheme": "bearer", "description": "One of `server.auth_tokens`, a scoped `[[server.tokens]]` token, or a JWT access token of an issuer `[server.auth]` trusts (401s carry `WWW-Authenticate` with `resource_metadata`); required when the server binds a non-loopback address."}},
        },
    })
}
