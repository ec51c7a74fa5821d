//! `axon mcp` driven by a real MCP client (rmcp's, over the child's stdio): the
//! tool list with schemas and annotations, calls through the pipeline, failures
//! as `isError`, and `run_plan`.

use rmcp::ServiceExt;
use rmcp::model::CallToolRequestParams;
use rmcp::transport::TokioChildProcess;
use serde_json::{Value, json};

async fn client() -> rmcp::service::RunningService<rmcp::RoleClient, ()> {
    let dir = std::env::temp_dir().join(format!("axon-mcp-test-{}", std::process::id()));
    let mut cmd = tokio::process::Command::new(env!("CARGO_BIN_EXE_axon"));
    cmd.arg("mcp")
        .env(
            "AXON_STORE_PATH",
            dir.join(format!("{}.db", ulid::Ulid::new())),
        )
        .env_remove("AXON_CONFIG");
    ().serve(TokioChildProcess::new(cmd).unwrap())
        .await
        .unwrap()
}

fn args(v: Value) -> serde_json::Map<String, Value> {
    v.as_object().unwrap().clone()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn lists_every_tool_and_run_plan_with_schemas_and_annotations() {
    let client = client().await;
    let tools = client.list_all_tools().await.unwrap();
    let names: Vec<&str> = tools.iter().map(|t| t.name.as_ref()).collect();
    assert_eq!(
        names,
        ["echo", "flaky", "http_request", "sleep", "run_plan"]
    );
    let sleep = &tools[3];
    assert!(sleep.input_schema["properties"]["ms"].is_object());
    assert!(sleep.output_schema.is_some());
    let echo = serde_json::to_value(&tools[0]).unwrap();
    assert_eq!(echo["annotations"]["readOnlyHint"], true);
    client.cancel().await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn calls_go_through_the_pipeline() {
    let client = client().await;
    let r = client
        .call_tool(CallToolRequestParams::new("echo").with_arguments(args(json!({"hi": 1}))))
        .await
        .unwrap();
    let r = serde_json::to_value(&r).unwrap();
    assert_eq!(r["isError"], false);
    assert_eq!(r["structuredContent"]["data"], json!({"hi": 1}));
    assert_eq!(r["content"][0]["text"], r#"{"hi":1}"#);

    // Retried by the pipeline: the client sees one successful result.
    let r = client
        .call_tool(
            CallToolRequestParams::new("flaky")
                .with_arguments(args(json!({"key": "mcp", "fail_times": 1}))),
        )
        .await
        .unwrap();
    let r = serde_json::to_value(&r).unwrap();
    assert_eq!(r["isError"], false, "{r}");
    assert_eq!(r["structuredContent"]["attempts"], 2);

    // Bad arguments: isError with the kind and the field.
    let r = client
        .call_tool(CallToolRequestParams::new("sleep").with_arguments(args(json!({"ms": -1}))))
        .await
        .unwrap();
    let r = serde_json::to_value(&r).unwrap();
    assert_eq!(r["isError"], true);
    let text = r["content"][0]["text"].as_str().unwrap();
    assert!(
        text.starts_with("invalid_arguments") && text.contains("/ms"),
        "{text}"
    );
    assert_eq!(r["structuredContent"]["error"]["kind"], "invalid_arguments");
    client.cancel().await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn run_plan_returns_the_plan_result() {
    let client = client().await;
    let plan = "steps:\n  - id: a\n    tool: echo\n    params: {v: 2}\n  - tool: echo\n    params: {twice: '${steps.a.data.v}'}\n    depends_on: [a]\n";
    let r = client
        .call_tool(
            CallToolRequestParams::new("run_plan")
                .with_arguments(args(json!({"plan": plan, "run_id": "mcp-run"}))),
        )
        .await
        .unwrap();
    let r = serde_json::to_value(&r).unwrap();
    assert_eq!(r["isError"], false, "{r}");
    let result = &r["structuredContent"];
    assert_eq!(result["run_id"], "mcp-run");
    assert_eq!(result["status"], "succeeded");
    assert_eq!(result["steps"][1]["result"]["data"], json!({"twice": 2}));

    let r = client
        .call_tool(CallToolRequestParams::new("run_plan").with_arguments(args(
            json!({"plan": {"steps": [{"tool": "echo", "depends_on": [1]}, {"tool": "echo", "depends_on": [0]}]}}),
        )))
        .await
        .unwrap();
    let r = serde_json::to_value(&r).unwrap();
    assert_eq!(r["isError"], true);
    assert!(
        r["content"][0]["text"].as_str().unwrap().contains("cycle"),
        "{r}"
    );
    client.cancel().await.unwrap();
}
