//! Axon's MCP server as the official clients see it, with their output-schema
//! validation on: the Python SDK (peers/venv) on protocol 2026-07-28 (no
//! sessions) and on 2025-11-25 (sessions), and the TypeScript SDK's `Client`
//! (peers/node_modules), over stdio (`axon mcp`) and Streamable HTTP (`/mcp` of
//! `axon serve`). Each lists the tools and calls **every** listed tool at least
//! once — browser tools against a local fixture page, `http_request` against a
//! local upstream, server-everything's tools through an import — and no result
//! may be rejected by the client. Browser sessions as handles: navigate-then-read
//! without a session, two sessions apart, a saved state restored.

mod common;
use common::repo_root;

use std::collections::BTreeSet;

use std::path::{Path, PathBuf};
use std::process::{Child, Stdio};

use serde_json::{Value, json};

const FORM: &str = r#"<!doctype html>
<html><head><title>MCP fixture</title></head><body>
<h1>Order</h1>
<form id="f" action="/next.html" method="get">
  <label for="name">Name</label> <input id="name" name="name">
  <label for="color">Color</label>
  <select id="color" name="color"><option value="red">Red</option><option value="green">Green</option></select>
  <input type="search" name="q" aria-label="Search">
  <button id="go" type="button" onclick="document.getElementById('out').textContent = 'Went ' + document.getElementById('color').value; console.error('went')">Go</button>
  <input id="file" type="file" aria-label="Attachment">
  <a id="blank" href="/next.html" target="_blank">Terms</a>
  <button id="ask" type="button" onclick="document.getElementById('out').textContent = confirm('Sure?') ? 'sure' : 'unsure'">Ask</button>
</form>
<p id="out"></p>
<table><tr><th>Name</th><th>Role</th></tr><tr><td>Ada</td><td>admin</td></tr></table>
<div style="height: 2000px"></div>
</body></html>"#;

/// A local site: the form, a next page, a cookie setter and reader, a JSON API.
async fn fixture_site() -> String {
    use axum::http::header;
    use axum::response::{Html, IntoResponse};
    use axum::routing::get;
    let app = axum::Router::new()
        .route("/form.html", get(|| async { Html(FORM) }))
        .route(
            "/next.html",
            get(|| async { Html("<!doctype html><title>Next</title><p>Thanks</p>") }),
        )
        .route(
            "/set-cookie",
            get(
                |axum::extract::Query(q): axum::extract::Query<std::collections::HashMap<String, String>>| async move {
                    let v = q.get("v").cloned().unwrap_or_default();
                    (
                        [(header::SET_COOKIE, format!("axon_sid={v}; Path=/; Max-Age=3600"))],
                        Html("<!doctype html><title>Set</title><p>set</p>"),
                    )
                        .into_response()
                },
            ),
        )
        .route(
            "/show-cookie",
            get(|| async {
                Html("<!doctype html><title>Show</title><p id=c></p><script>document.getElementById('c').textContent = 'cookies: ' + document.cookie</script>")
            }),
        )
        .route("/api", get(|| async { axum::Json(json!({"ok": true})) }));
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    tokio::spawn(async move { axum::serve(listener, app).await.unwrap() });
    format!("http://{addr}")
}

/// A temp dir with `axon.toml`: a store of its own and server-everything imported.
fn config_dir() -> PathBuf {
    let js = repo_root()
        .join("peers/node_modules/@modelcontextprotocol/server-everything/dist/index.js");
    assert!(
        js.exists(),
        "server-everything is not installed: run scripts/peers"
    );
    let dir = std::env::temp_dir().join(format!("axon-mcp-clients-{}", ulid::Ulid::new()));
    std::fs::create_dir_all(&dir).unwrap();
    let text = format!(
        "[store]\npath = {:?}\n[files]\ndir = {:?}\n[browser]\nallow_evaluate = true\n[mcp]\ncaps = [\"pdf\", \"testing\", \"storage\", \"vision\", \"emulation\", \"network\", \"recording\"]\n[[mcp.servers]]\nname = \"everything\"\ncommand = \"node\"\nargs = [{:?}, \"stdio\"]\n",
        dir.join("axon.db").display().to_string(),
        dir.join("files").display().to_string(),
        js.display().to_string()
    );
    std::fs::write(dir.join("axon.toml"), text).unwrap();
    dir
}

/// `tools/list` as Axon serves it, from `axon tools --format mcp`.
fn listed(dir: &Path) -> Vec<Value> {
    let out = axon_testkit::command(env!("CARGO_BIN_EXE_axon"))
        .arg("--config")
        .arg(dir.join("axon.toml"))
        .args(["tools", "--format", "mcp"])
        .env_remove("AXON_CONFIG")
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    let mut tools = v["tools"].as_array().unwrap().clone();
    // MCP listings add the plan tool and the result pager after the registry's.
    tools.push(json!({"name": "run_plan"}));
    tools.push(json!({"name": "axon_result_more"}));
    tools
}

/// Arguments for a tool nobody scripted (an imported one): each required
/// property gets a plain value of its type; durations are kept short.
fn arguments_for(tool: &Value) -> Value {
    let schema = &tool["inputSchema"];
    let mut args = json!({});
    for (name, prop) in schema["properties"].as_object().into_iter().flatten() {
        let required = schema["required"]
            .as_array()
            .is_some_and(|r| r.iter().any(|n| n == name));
        let short = ["duration", "steps", "delay"]
            .iter()
            .any(|k| name.contains(k));
        if !required && !short {
            continue;
        }
        let ty = prop["type"].as_str().unwrap_or("string");
        args[name] = match (prop.get("enum"), ty) {
            (Some(Value::Array(values)), _) if !values.is_empty() => values[0].clone(),
            (_, "integer" | "number") if short => json!(1),
            (_, "integer" | "number") => {
                json!(prop["minimum"].as_f64().unwrap_or(1.0).max(1.0) as i64)
            }
            (_, "boolean") => json!(false),
            (_, "array") => json!([]),
            (_, "object") => json!({}),
            _ => json!("axon"),
        };
    }
    args
}

/// The script every client runs: one call (at least) per listed tool.
fn script(site: &str, tools: &[Value]) -> Vec<Value> {
    let form = format!("{site}/form.html");
    // A name in the files directory ([files] dir); every client writes it.
    let state = "state.json";
    let mut calls = vec![
        json!({"tool": "browser_session_list", "args": {}}),
        json!({"tool": "browser_navigate", "args": {"url": form}}),
        json!({"tool": "browser_get_page_state", "args": {}}),
        json!({"tool": "browser_snapshot", "args": {}}),
        json!({"tool": "browser_type", "args": {"selector": "#name", "text": "Bob"}}),
        json!({"tool": "browser_clear_input", "args": {"selector": "#name"}}),
        json!({"tool": "browser_type", "args": {"label": "Name", "text": "Ada"}}),
        json!({"tool": "browser_get_text", "args": {"selector": "#name"}}),
        json!({"tool": "browser_select_option", "args": {"selector": "#color", "values": ["green"]}}),
        json!({"tool": "browser_click", "args": {"selector": "#go"}}),
        json!({"tool": "browser_wait_for_element", "args": {"selector": "#out", "state": "visible"}}),
        json!({"tool": "browser_verify_element_exists", "args": {"selector": "#nope"}}),
        json!({"tool": "browser_extract_table", "args": {}}),
        json!({"tool": "browser_get_page_html", "args": {"selector": "#out"}}),
        json!({"tool": "browser_take_screenshot", "args": {"format": "jpeg", "quality": 50, "scale": 0.5}}),
        json!({"tool": "browser_scroll", "args": {"to": "bottom"}}),
        json!({"tool": "browser_press_key", "args": {"key": "Tab"}}),
        json!({"tool": "browser_wait", "args": {"seconds": 0.05}}),
        json!({"tool": "browser_act", "args": {"plan_step": "Click the Go button"}}),
        json!({"tool": "browser_click", "args": {"selector": "#missing", "timeout_ms": 200}}),
        json!({"tool": "browser_search", "args": {"query": "rust"}}),
        json!({"tool": "browser_wait_for_url_change", "args": {"from": form}}),
        json!({"tool": "browser_navigate_back", "args": {}}),
        json!({"tool": "browser_navigate_forward", "args": {}}),
        json!({"tool": "browser_navigate", "args": {"url": form}}),
        // The web as it is (issue 38): one call per new action.
        json!({"tool": "browser_hover", "args": {"selector": "#go"}}),
        json!({"tool": "browser_fill_form", "args": {"fields": [{"label": "Name", "value": "Ada"}, {"selector": "#color", "value": "green"}]}}),
        json!({"tool": "browser_click", "args": {"selector": "#go"}}),
        json!({"tool": "browser_console_messages", "args": {"level": "error"}}),
        json!({"tool": "browser_network_requests", "args": {}}),
        json!({"tool": "browser_evaluate", "args": {"function": "() => document.title"}}),
        json!({"tool": "browser_drag", "args": {"source": {"selector": "#name"}, "target": {"selector": "#go"}}}),
        json!({"tool": "browser_resize", "args": {"width": 800, "height": 600}}),
        json!({"tool": "browser_pdf_save", "args": {"path": "page.pdf", "overwrite": true}}),
        // The capabilities of issue 63, all asked for in this config.
        json!({"tool": "browser_verify_text_visible", "args": {"text": "Name"}}),
        json!({"tool": "browser_verify_value", "args": {"selector": "#name", "value": "Ada"}}),
        json!({"tool": "browser_cookies", "args": {"action": "set", "name": "k", "value": "v"}}),
        json!({"tool": "browser_cookies", "args": {}}),
        json!({"tool": "browser_storage", "args": {"action": "set", "key": "k", "value": "v"}}),
        json!({"tool": "browser_storage", "args": {}}),
        json!({"tool": "browser_mouse_click_xy", "args": {"x": 5, "y": 5}}),
        json!({"tool": "browser_mouse_move_xy", "args": {"x": 6, "y": 6}}),
        json!({"tool": "browser_mouse_drag_xy", "args": {"start_x": 5, "start_y": 5, "end_x": 20, "end_y": 8}}),
        json!({"tool": "browser_mouse_wheel", "args": {"x": 5, "y": 5, "delta_y": 40}}),
        json!({"tool": "browser_emulate", "args": {"color_scheme": "dark"}}),
        json!({"tool": "browser_emulate", "args": {}}),
        json!({"tool": "browser_route", "args": {"pattern": "*/never-fetched", "body": "x"}}),
        json!({"tool": "browser_unroute", "args": {}}),
        json!({"tool": "browser_recording", "args": {}}),
        json!({"tool": "browser_click", "args": {"selector": "#blank"}}),
        json!({"tool": "browser_tabs", "args": {"action": "list"}}),
        json!({"tool": "browser_tabs", "args": {"action": "close"}}),
        json!({"tool": "browser_submit_form", "args": {"selector": "#f"}}),
        // Sessions as handles: a and b apart, a's state saved and restored as c.
        json!({"tool": "browser_session_new", "args": {}, "save": {"a": "session"}}),
        json!({"tool": "browser_session_new", "args": {"viewport": {"width": 800, "height": 600}}, "save": {"b": "session"}}),
        json!({"tool": "browser_navigate", "args": {"session": "${a}", "url": format!("{site}/set-cookie?v=alpha")}}),
        json!({"tool": "browser_navigate", "args": {"session": "${b}", "url": format!("{site}/show-cookie")}}),
        json!({"tool": "browser_get_text", "args": {"session": "${b}", "selector": "#c"}}),
        json!({"tool": "browser_session_save", "args": {"session": "${a}", "path": state, "overwrite": true}}),
        json!({"tool": "browser_session_save", "args": {"session": "${a}"}}),
        json!({"tool": "browser_session_new", "args": {"storage_state_path": state}, "save": {"c": "session"}}),
        json!({"tool": "browser_navigate", "args": {"url": form}}),
        json!({"tool": "browser_upload_file", "args": {"label": "Attachment", "paths": [state]}}),
        json!({"tool": "browser_navigate", "args": {"session": "${c}", "url": format!("{site}/show-cookie")}}),
        json!({"tool": "browser_get_text", "args": {"session": "${c}", "selector": "#c"}}),
        // A session that holds dialogs: the click says one is open, the agent answers it.
        json!({"tool": "browser_session_new", "args": {"hold_dialogs": true}, "save": {"d": "session"}}),
        json!({"tool": "browser_navigate", "args": {"session": "${d}", "url": form}}),
        json!({"tool": "browser_click", "args": {"session": "${d}", "selector": "#ask"}}),
        json!({"tool": "browser_handle_dialog", "args": {"session": "${d}", "accept": true}}),
        json!({"tool": "browser_session_close", "args": {"session": "${d}"}}),
        json!({"tool": "browser_session_close", "args": {"session": "${a}"}}),
        json!({"tool": "browser_session_close", "args": {"session": "${b}"}}),
        json!({"tool": "browser_session_close", "args": {"session": "${c}"}}),
        json!({"tool": "http_request", "args": {"method": "GET", "url": format!("{site}/api")}}),
        json!({"tool": "echo", "args": {"from": "a client"}}),
        json!({"tool": "sleep", "args": {"ms": 1}}),
        json!({"tool": "sleep", "args": {"ms": -1}}),
        json!({"tool": "flaky", "args": {"key": ulid::Ulid::new().to_string(), "fail_times": 1}}),
        // A handle nobody was given: a clear error, which the client accepts.
        json!({"tool": "axon_result_more", "args": {"handle": "01NOSUCHCALL.25000", "page": 2}}),
        json!({"tool": "run_plan", "args": {"plan": "steps:\n  - id: a\n    tool: echo\n    params: {n: 21}\n  - tool: echo\n    params: {again: '${steps.a.data.n}'}\n"}}),
    ];
    let scripted: BTreeSet<String> = calls
        .iter()
        .filter_map(|c| c["tool"].as_str().map(str::to_string))
        .collect();
    for tool in tools {
        let name = tool["name"].as_str().unwrap();
        if !scripted.contains(name) {
            calls.push(json!({"tool": name, "args": arguments_for(tool)}));
        }
    }
    calls
}

/// One `axon serve` with `dir`'s config, killed on drop.
struct Served {
    child: Child,
    mcp: String,
}

impl Served {
    fn start(dir: &Path) -> Served {
        let mut child = axon_testkit::command(env!("CARGO_BIN_EXE_axon"))
            .arg("--config")
            .arg(dir.join("axon.toml"))
            .args(["serve", "--bind", "127.0.0.1:0"])
            .env_remove("AXON_CONFIG")
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        let base = common::listening_url(&mut child);
        Served {
            child,
            mcp: format!("{base}/mcp"),
        }
    }
}

impl Drop for Served {
    fn drop(&mut self) {
        common::stop(&mut self.child);
    }
}

enum Sdk {
    Python(&'static str),
    TypeScript,
}

enum Transport<'a> {
    Stdio,
    Http(&'a str),
}

/// Run a client over the script; its JSON report.
async fn run_client(sdk: Sdk, transport: Transport<'_>, dir: &Path, calls: &[Value]) -> Value {
    let calls_file = dir.join(format!("calls-{}.json", ulid::Ulid::new()));
    std::fs::write(&calls_file, serde_json::to_vec(calls).unwrap()).unwrap();
    let mut cmd = match sdk {
        Sdk::Python(mode) => {
            let python = repo_root().join("peers/venv/bin/python");
            assert!(
                python.exists(),
                "the Python MCP SDK is not installed: run scripts/peers"
            );
            let mut cmd = tokio::process::Command::from(axon_testkit::command(python));
            cmd.arg(repo_root().join("peers/mcp_client_check.py"))
                .args(["--mode", mode]);
            cmd
        }
        Sdk::TypeScript => {
            let script = repo_root().join("peers/mcp_client_check.mjs");
            assert!(
                repo_root()
                    .join("peers/node_modules/@modelcontextprotocol/sdk")
                    .exists(),
                "the TypeScript MCP SDK is not installed: run scripts/peers"
            );
            let mut cmd = tokio::process::Command::from(axon_testkit::command("node"));
            cmd.arg(script);
            cmd
        }
    };
    cmd.arg("--calls").arg(&calls_file);
    match transport {
        Transport::Stdio => {
            cmd.args(["stdio", env!("CARGO_BIN_EXE_axon"), "--config"])
                .arg(dir.join("axon.toml"));
        }
        Transport::Http(url) => {
            cmd.args(["http", url]);
        }
    }
    let out = cmd.env_remove("AXON_CONFIG").output().await.unwrap();
    assert!(
        out.status.success(),
        "the client failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).unwrap_or_else(|e| {
        panic!(
            "not a report ({e}): {}\n{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        )
    })
}

/// The results of every call to `tool`, in order.
fn results<'a>(report: &'a Value, tool: &str) -> Vec<&'a Value> {
    report["calls"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|c| c["tool"] == tool)
        .map(|c| &c["result"])
        .collect()
}

/// JSON with every number as a float (JavaScript writes `0.0` as `0`).
fn numbers_as_f64(v: Value) -> Value {
    match v {
        Value::Number(n) => json!(n.as_f64()),
        Value::Array(items) => Value::Array(items.into_iter().map(numbers_as_f64).collect()),
        Value::Object(map) => Value::Object(
            map.into_iter()
                .map(|(k, v)| (k, numbers_as_f64(v)))
                .collect(),
        ),
        other => other,
    }
}

/// What every client run must show.
fn check(report: &Value, tools: &[Value], site: &str, who: &str) {
    // Listed: every tool Axon serves, in the same (deterministic) order.
    let names: Vec<&str> = report["tools"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|t| t["name"].as_str())
        .collect();
    let expected: Vec<&str> = tools.iter().filter_map(|t| t["name"].as_str()).collect();
    assert_eq!(names, expected, "{who}: tools/list");
    for builtin in common::mcp_tools() {
        assert!(names.contains(&builtin), "{who}: {builtin} is not listed");
    }
    // Called: every listed tool, and the client accepted every result.
    let called: BTreeSet<&str> = report["calls"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|c| c["tool"].as_str())
        .collect();
    for name in &names {
        assert!(called.contains(name), "{who}: {name} was never called");
    }
    let rejected: Vec<String> = report["calls"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|c| c.get("rejected").is_some())
        .map(|c| format!("{}: {}", c["tool"], c["rejected"]))
        .collect();
    assert!(
        rejected.is_empty(),
        "{who}: the client rejected {rejected:#?}"
    );
    if let Some(warnings) = report.get("warnings") {
        assert_eq!(warnings, &json!([]), "{who}: the client warned");
    }

    // The simplest check: page state, with the envelope in _meta.
    let state = results(report, "browser_get_page_state")[0];
    assert_eq!(state["isError"], false, "{who}: {state}");
    assert_eq!(
        state["structuredContent"]["url"],
        format!("{site}/form.html"),
        "{who}: navigate-then-read must find the page: {state}"
    );
    let envelope = &state["_meta"]["axon/call"];
    assert!(envelope["attempts"].as_u64() >= Some(1), "{who}: {state}");
    assert_eq!(envelope["tool"], "browser_get_page_state");
    assert!(
        envelope.get("data").is_none(),
        "{who}: data is not repeated in _meta"
    );
    // The text block is the data as compact JSON, nothing else.
    assert_eq!(
        numbers_as_f64(
            serde_json::from_str::<Value>(state["content"][0]["text"].as_str().unwrap()).unwrap()
        ),
        numbers_as_f64(state["structuredContent"].clone()),
        "{who}"
    );

    // Object data is the structured content as it is; other data is wrapped.
    let echo = results(report, "echo")[0];
    assert_eq!(
        echo["structuredContent"],
        json!({"from": "a client"}),
        "{who}"
    );
    let imported = results(report, "everything__echo")[0];
    assert_eq!(
        imported["structuredContent"],
        json!({"result": "Echo: axon"}),
        "{who}: {imported}"
    );

    // Failures: isError with `kind (code): message`, no structured content.
    let missing = results(report, "browser_click")[1];
    assert_eq!(missing["isError"], true, "{who}: {missing}");
    assert!(
        missing.get("structuredContent").is_none(),
        "{who}: {missing}"
    );
    let text = missing["content"][0]["text"].as_str().unwrap();
    assert!(
        text.starts_with("failed (element_not_found): "),
        "{who}: {text}"
    );
    let bad = results(report, "sleep")[1];
    assert_eq!(bad["isError"], true, "{who}: {bad}");
    let text = bad["content"][0]["text"].as_str().unwrap();
    assert!(
        text.starts_with("invalid_arguments") && text.contains("/ms"),
        "{who}: {text}"
    );

    // A screenshot is an image block; base64 never in the text or structured content.
    let shot = results(report, "browser_take_screenshot")[0];
    let blocks = shot["content"].as_array().unwrap();
    let image = blocks
        .iter()
        .find(|b| b["type"] == "image")
        .expect("an image block");
    assert_eq!(image["mimeType"], "image/jpeg", "{who}");
    assert!(image["data"].as_str().unwrap().len() > 100);
    assert!(shot["structuredContent"].get("base64").is_none(), "{who}");
    assert!(
        !blocks[0]["text"]
            .as_str()
            .unwrap()
            .contains(image["data"].as_str().unwrap())
    );

    // The snapshot is lean text: one line per node with refs.
    let snap = &results(report, "browser_snapshot")[0]["structuredContent"];
    let text = snap["text"].as_str().unwrap();
    assert!(text.contains("- button \"Go\" [ref=e"), "{who}: {text}");
    assert!(snap.get("nodes").is_none(), "{who}: nodes are opt-in");
    // What the model reads is those lines, unescaped, under the page's URL.
    let block = results(report, "browser_snapshot")[0]["content"][0]["text"]
        .as_str()
        .unwrap();
    assert!(block.starts_with("- Page URL: http"), "{who}: {block}");
    assert!(block.contains("- button \"Go\" [ref=e"), "{who}: {block}");
    let console = results(report, "browser_console_messages")[0]["content"][0]["text"]
        .as_str()
        .unwrap();
    assert_eq!(console, "[error] went", "{who}");
    // A held dialog: the click says so (not retried), the answer is taken.
    let held = results(report, "browser_click").into_iter().find(|r| {
        r["isError"] == true
            && r["content"][0]["text"]
                .as_str()
                .is_some_and(|t| t.contains("dialog_open"))
    });
    assert!(held.is_some(), "{who}: no click reported the open dialog");
    let answered = results(report, "browser_handle_dialog")[0];
    assert_eq!(answered["isError"], false, "{who}: {answered}");
    assert_eq!(
        answered["structuredContent"]["answered"], "accepted",
        "{who}: {answered}"
    );

    // Two sessions apart; a saved state restored in a third.
    let texts = results(report, "browser_get_text");
    let in_b = texts[1]["structuredContent"]["text"]
        .as_str()
        .unwrap_or_default();
    assert!(
        !in_b.contains("alpha"),
        "{who}: session b saw a's cookie: {in_b}"
    );
    let in_c = texts[2]["structuredContent"]["text"]
        .as_str()
        .unwrap_or_default();
    assert!(
        in_c.contains("axon_sid=alpha"),
        "{who}: the restored session lacks the cookie: {}",
        texts[2]
    );
    let inline = results(report, "browser_session_save")[1];
    let cookies = &inline["structuredContent"]["storage_state"]["cookies"];
    assert!(
        cookies
            .as_array()
            .is_some_and(|c| c.iter().any(|c| c["name"] == "axon_sid")),
        "{who}: {inline}"
    );
    let closed = results(report, "browser_session_close");
    assert!(
        closed
            .iter()
            .all(|c| c["structuredContent"]["closed"] == true),
        "{who}: {closed:?}"
    );

    // run_plan: the plan result as structured content.
    let plan = results(report, "run_plan")[0];
    assert_eq!(
        plan["structuredContent"]["status"], "succeeded",
        "{who}: {plan}"
    );
    assert_eq!(
        plan["structuredContent"]["steps"][1]["result"]["data"],
        json!({"again": 21})
    );
}

/// One client run at a time: each drives a Chromium, a server-everything and
/// an Axon, and five at once on two cores would test the machine's patience.
static ONE_AT_A_TIME: tokio::sync::Mutex<()> = tokio::sync::Mutex::const_new(());

/// The whole check for one client: a fixture site, a config importing
/// server-everything, the script over every listed tool, over stdio (`axon
/// mcp`) or HTTP (`/mcp` of `axon serve`).
async fn every_tool_is_accepted(sdk: Sdk, http: bool, who: &str) {
    let _turn = ONE_AT_A_TIME.lock().await;
    let site = fixture_site().await;
    let dir = config_dir();
    let tools = listed(&dir);
    let calls = script(&site, &tools);
    let served = http.then(|| Served::start(&dir));
    let transport = match &served {
        Some(served) => Transport::Http(&served.mcp),
        None => Transport::Stdio,
    };
    let report = run_client(sdk, transport, &dir, &calls).await;
    check(&report, &tools, &site, who);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_python_sdk_on_2026_07_28_accepts_every_tool_over_stdio() {
    every_tool_is_accepted(Sdk::Python("auto"), false, "python stdio").await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_python_sdk_on_2026_07_28_accepts_every_tool_over_sessionless_http() {
    every_tool_is_accepted(Sdk::Python("auto"), true, "python http 2026-07-28").await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_python_sdk_on_2025_11_25_accepts_every_tool_over_http_sessions() {
    every_tool_is_accepted(Sdk::Python("legacy"), true, "python http 2025-11-25").await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_typescript_sdk_accepts_every_tool_over_stdio() {
    every_tool_is_accepted(Sdk::TypeScript, false, "typescript stdio").await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_typescript_sdk_accepts_every_tool_over_http() {
    every_tool_is_accepted(Sdk::TypeScript, true, "typescript http").await;
}
