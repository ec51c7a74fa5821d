//! Importing tools from real MCP servers: `@modelcontextprotocol/server-everything`
//! from npm (pinned in peers/, installed by scripts/peers) over stdio and over
//! Streamable HTTP, and Axon's own server over Streamable HTTP. Every call goes
//! through a real executor, so these tests see what a user sees: retries,
//! timeouts, the breaker, progress events.

mod common;

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use axon_core::{
    CallEvent, CallResult, ErrorKind, Executor, PolicyState, ToolCall, ToolError, ToolRegistry,
    tool_fn,
};
use axon_mcp_client::{McpServerConfig, McpTool, import};
use axon_testkit::{free_port, kill_9 as kill};
use common::{everything, everything_js, serve_axon};
use serde_json::{Value, json};

/// An executor over `tools` with its own breakers, and quick retries.
fn executor(tools: Vec<McpTool>, defaults: Value) -> Executor {
    let mut registry = ToolRegistry::new();
    for tool in tools {
        registry.register(tool).unwrap();
    }
    Executor::builder(registry)
        .policy_state(PolicyState::new())
        .defaults(defaults)
        .build()
        .unwrap()
}

fn quick_retries() -> Value {
    json!({"retry": {"initial_delay_ms": 10, "max_delay_ms": 50}})
}

async fn call(executor: &Executor, tool: &str, args: Value) -> CallResult {
    executor.call(ToolCall::new(tool, args)).await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn lists_every_tool_with_schemas_and_annotations() {
    let tools = import(everything()).await.unwrap();
    let names: Vec<&str> = tools.iter().map(|t| t.name()).collect();
    for expected in [
        "everything__echo",
        "everything__get-sum",
        "everything__trigger-long-running-operation",
        "everything__get-structured-content",
    ] {
        assert!(
            names.contains(&expected),
            "{expected} missing from {names:?}"
        );
    }
    let echo = tools.iter().find(|t| t.remote_name() == "echo").unwrap();
    let spec = axon_core::Tool::spec(echo);
    assert_eq!(spec.input_schema["properties"]["message"]["type"], "string");
    assert!(spec.annotations.read_only && spec.annotations.idempotent);
    assert_eq!(spec.annotations.title.as_deref(), Some("Echo Tool"));
    let structured = tools
        .iter()
        .find(|t| t.remote_name() == "get-structured-content")
        .unwrap();
    assert!(axon_core::Tool::spec(structured).output_schema.is_some());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn calls_echo_add_and_structured_content_through_the_pipeline() {
    let executor = executor(import(everything()).await.unwrap(), quick_retries());
    let echo = call(&executor, "everything__echo", json!({"message": "hi"})).await;
    assert!(echo.success, "{echo:?}");
    assert_eq!(echo.data, json!("Echo: hi"));

    let sum = call(&executor, "everything__get-sum", json!({"a": 2, "b": 3})).await;
    assert_eq!(sum.data, json!("The sum of 2 and 3 is 5."));

    let weather = call(
        &executor,
        "everything__get-structured-content",
        json!({"location": "Chicago"}),
    )
    .await;
    assert!(weather.success, "{weather:?}");
    assert!(weather.data["temperature"].is_number(), "{}", weather.data);

    // The imported input schema is enforced before anything is sent.
    let bad = call(
        &executor,
        "everything__get-sum",
        json!({"a": "two", "b": 3}),
    )
    .await;
    assert_eq!(bad.error.unwrap().kind, ErrorKind::InvalidArguments);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn progress_notifications_become_progress_events() {
    let executor = executor(import(everything()).await.unwrap(), quick_retries());
    let seen = Arc::new(Mutex::new(Vec::new()));
    let sink = seen.clone();
    let result = executor
        .call(
            ToolCall::new(
                "everything__trigger-long-running-operation",
                json!({"duration": 0.3, "steps": 3}),
            )
            .on_event(move |e| {
                if let CallEvent::Progress {
                    progress, total, ..
                } = e
                {
                    sink.lock().unwrap().push((progress, total));
                }
            }),
        )
        .await;
    assert!(result.success, "{result:?}");
    assert_eq!(
        *seen.lock().unwrap(),
        vec![(1.0, Some(3.0)), (2.0, Some(3.0)), (3.0, Some(3.0))]
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn is_error_results_are_failed_and_not_retried() {
    let executor = executor(import(everything()).await.unwrap(), quick_retries());
    let result = call(
        &executor,
        "everything__gzip-file-as-resource",
        json!({"data": "ftp://example.com/file.txt"}),
    )
    .await;
    let error = result.error.unwrap();
    assert_eq!(error.kind, ErrorKind::Failed);
    assert!(
        error.message.contains("Unsupported URL protocol"),
        "{}",
        error.message
    );
    assert_eq!(result.attempts, 1);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_short_timeout_abandons_the_call_and_the_session_goes_on() {
    let executor = executor(import(everything()).await.unwrap(), quick_retries());
    let slow = executor
        .call(
            ToolCall::new(
                "everything__trigger-long-running-operation",
                json!({"duration": 5, "steps": 5}),
            )
            .policy(json!({"timeout_ms": 300, "retry": {"max_attempts": 1}})),
        )
        .await;
    assert_eq!(slow.error.unwrap().kind, ErrorKind::Timeout);
    assert!(slow.duration_ms < 2000, "{} ms", slow.duration_ms);
    let echo = call(
        &executor,
        "everything__echo",
        json!({"message": "still here"}),
    )
    .await;
    assert!(echo.success, "{echo:?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_killed_child_is_respawned_by_the_next_attempt() {
    let tools = import(everything()).await.unwrap();
    let connection = tools[0].connection().clone();
    let executor = executor(tools, quick_retries());
    let first_pid = connection.child_pid().await.unwrap();

    let killer = tokio::spawn(async move {
        tokio::time::sleep(Duration::from_millis(400)).await;
        kill(first_pid);
    });
    let result = call(
        &executor,
        "everything__trigger-long-running-operation",
        json!({"duration": 1, "steps": 2}),
    )
    .await;
    killer.await.unwrap();
    assert!(result.success, "{result:?}");
    assert_eq!(result.attempts, 2, "{result:?}");
    assert!(
        result.retry_reasons[0].contains("unavailable"),
        "{:?}",
        result.retry_reasons
    );
    let second_pid = connection.child_pid().await.unwrap();
    assert_ne!(first_pid, second_pid);

    let echo = call(&executor, "everything__echo", json!({"message": "again"})).await;
    assert!(echo.success, "{echo:?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_server_that_stays_down_opens_the_breaker() {
    // A wrapper that serves normally until the flag file exists, then exits at once.
    let dir = std::env::temp_dir().join(format!("axon-mcp-down-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let flag = dir.join("down");
    let _ = std::fs::remove_file(&flag);
    let script = format!(
        "test -e '{}' && exit 1; exec node '{}' stdio",
        flag.display(),
        everything_js().display()
    );
    let config = McpServerConfig::stdio("flaky", "sh", ["-c".to_string(), script]);
    let tools = import(config).await.unwrap();
    let connection = tools[0].connection().clone();
    let executor = executor(
        tools,
        json!({
            "retry": {"max_attempts": 1},
            "breaker": {"failure_threshold": 2, "window_ms": 60000, "open_ms": 60000}
        }),
    );
    std::fs::write(&flag, b"").unwrap();
    kill(connection.child_pid().await.unwrap());

    // One breaker for the server (key `server`): failures of two of its
    // tools add up, and then every tool of it fails fast, naming the server.
    let mut kinds = Vec::new();
    for (tool, args) in [
        ("flaky__echo", json!({"message": "x"})),
        ("flaky__get-sum", json!({"a": 1, "b": 2})),
        ("flaky__echo", json!({"message": "x"})),
        (
            "flaky__get-structured-content",
            json!({"location": "Chicago"}),
        ),
    ] {
        let r = call(&executor, tool, args).await;
        let e = r.error.unwrap();
        assert_eq!(r.provenance.dependency.as_deref(), Some("server:flaky"));
        if e.kind == ErrorKind::CircuitOpen {
            assert!(
                e.message.starts_with("circuit open for server:flaky"),
                "{}",
                e.message
            );
            assert_eq!(r.attempts, 0, "{tool} failed fast");
        }
        kinds.push(e.kind);
    }
    assert_eq!(
        kinds,
        vec![
            ErrorKind::Unavailable,
            ErrorKind::Unavailable,
            ErrorKind::CircuitOpen,
            ErrorKind::CircuitOpen
        ]
    );
    let open = executor.open_keys("flaky__get-sum");
    assert_eq!(open.len(), 1, "{open:?}");
    assert_eq!(open[0].key, "server:flaky");
    let _ = std::fs::remove_dir_all(&dir);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_server_that_cannot_start_is_a_clear_error() {
    let missing = McpServerConfig::stdio("ghost", "/nonexistent/mcp-server", ["--stdio"]);
    let error = import(missing).await.unwrap_err();
    assert!(
        matches!(&error, axon_mcp_client::ImportError::Unreachable { server, .. } if server == "ghost"),
        "{error:?}"
    );
    let message = error.to_string();
    assert!(message.contains("\"ghost\""), "{message}");
    assert!(
        message.contains("cannot start `/nonexistent/mcp-server`"),
        "{message}"
    );

    let silent = McpServerConfig {
        startup_timeout_ms: 500,
        ..McpServerConfig::stdio("mute", "sleep", ["30"])
    };
    let message = import(silent).await.unwrap_err().to_string();
    assert!(message.contains("\"mute\""), "{message}");
    assert!(message.contains("500 ms"), "{message}");

    let refused = McpServerConfig {
        startup_timeout_ms: 5000,
        ..McpServerConfig::http("nowhere", "http://127.0.0.1:9/mcp?token=s3cret")
    };
    let message = import(refused).await.unwrap_err().to_string();
    assert!(message.contains("\"nowhere\""), "{message}");
    assert!(!message.contains("s3cret"), "{message}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn imports_over_streamable_http() {
    let port = free_port();
    let mut child = tokio::process::Command::from(axon_testkit::command("node"))
        .arg(everything_js())
        .arg("streamableHttp")
        .env("PORT", port.to_string())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .kill_on_drop(true)
        .spawn()
        .unwrap();
    let url = format!("http://127.0.0.1:{port}/mcp");
    let mut tools = None;
    for _ in 0..100 {
        let config = McpServerConfig {
            startup_timeout_ms: 5000,
            prefix: Some("web".into()),
            ..McpServerConfig::http("everything-http", url.clone())
        };
        match import(config).await {
            Ok(found) => {
                tools = Some(found);
                break;
            }
            Err(_) => tokio::time::sleep(Duration::from_millis(100)).await,
        }
    }
    let executor = executor(
        tools.expect("server-everything never answered over HTTP"),
        quick_retries(),
    );
    let echo = call(&executor, "web__echo", json!({"message": "over http"})).await;
    assert_eq!(echo.data, json!("Echo: over http"), "{echo:?}");
    let sum = call(&executor, "web__get-sum", json!({"a": 40, "b": 2})).await;
    assert_eq!(sum.data, json!("The sum of 40 and 2 is 42."));
    child.kill().await.unwrap();
}

/// Sets its flag if dropped before it finished: the call was abandoned.
struct Abandoned(Arc<AtomicBool>, bool);

impl Drop for Abandoned {
    fn drop(&mut self) {
        if !self.1 {
            self.0.store(true, Ordering::SeqCst);
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_timed_out_call_is_cancelled_on_the_server() {
    // Axon's own MCP server, with one tool that notices being abandoned.
    let abandoned = Arc::new(AtomicBool::new(false));
    let flag = abandoned.clone();
    let mut registry = ToolRegistry::new();
    registry
        .register(tool_fn(
            "hold",
            "Waits ten seconds",
            move |_: serde_json::Map<String, Value>, _ctx| {
                let guard = Abandoned(flag.clone(), false);
                async move {
                    let mut guard = guard;
                    tokio::time::sleep(Duration::from_secs(10)).await;
                    guard.1 = true;
                    Ok::<_, ToolError>(json!("held"))
                }
            },
        ))
        .unwrap();
    let addr = serve_axon(registry).await;

    let tools = import(McpServerConfig::http("axon", format!("http://{addr}/mcp")))
        .await
        .unwrap();
    let names: Vec<&str> = tools.iter().map(|t| t.name()).collect();
    assert_eq!(
        names,
        vec!["axon__hold", "axon__run_plan", "axon__axon_result_more"]
    );
    let executor = executor(tools, quick_retries());
    let result = executor
        .call(
            ToolCall::new("axon__hold", json!({}))
                .policy(json!({"timeout_ms": 200, "retry": {"max_attempts": 1}})),
        )
        .await;
    assert_eq!(result.error.unwrap().kind, ErrorKind::Timeout);
    for _ in 0..50 {
        if abandoned.load(Ordering::SeqCst) {
            return;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    panic!("the server never saw notifications/cancelled for the abandoned call");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn each_mcp_session_is_one_correlation_id() {
    // docs/design.md: one MCP session is one browser session. The browser tools key
    // their page on the correlation id, so a session's calls must share one and
    // two sessions must not.
    let mut registry = ToolRegistry::new();
    registry
        .register(tool_fn(
            "whoami",
            "The call's correlation id",
            |_: serde_json::Map<String, Value>, ctx: axon_core::ToolContext| async move {
                Ok::<_, ToolError>(json!(ctx.correlation_id()))
            },
        ))
        .unwrap();
    let addr = serve_axon(registry).await;

    let mut seen = Vec::new();
    for _ in 0..2 {
        // Each import is a new MCP session.
        let tools = import(McpServerConfig::http("axon", format!("http://{addr}/mcp")))
            .await
            .unwrap();
        let executor = executor(tools, quick_retries());
        let first = call(&executor, "axon__whoami", json!({})).await;
        let second = call(&executor, "axon__whoami", json!({})).await;
        // Non-object data comes back wrapped as {"result": …}.
        let id = first.data["result"]
            .as_str()
            .unwrap_or_default()
            .to_string();
        assert!(id.starts_with("mcp-"), "{first:?}");
        assert_eq!(
            second.data["result"], first.data["result"],
            "one session, one id"
        );
        seen.push(id);
    }
    assert_ne!(seen[0], seen[1], "two sessions, two ids");
}
