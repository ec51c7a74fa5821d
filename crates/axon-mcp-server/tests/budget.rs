//! The result budget over MCP, in process: a result over the budget is cut
//! with a notice, `axon_result_more` pages through the rest for the session
//! that made the call, and another session holding the handle reads nothing
//! (each MCP session over HTTP is a tenant of its own without tokens).

mod common;

use axon_core::{ToolError, ToolRegistry, tool_fn};
use rmcp::ServiceExt;
use rmcp::model::CallToolRequestParams;
use rmcp::transport::StreamableHttpClientTransport;
use serde_json::{Value, json};

async fn serve() -> String {
    let mut registry = ToolRegistry::new();
    registry
        .register(tool_fn(
            "report",
            "A long report",
            |_: Value, _ctx| async move {
                let text: String = (0..20_000)
                    .map(|i| format!("row {i}: order shipped and delivered on time\n"))
                    .collect();
                Ok::<_, ToolError>(json!({ "text": text }))
            },
        ))
        .unwrap();
    format!("http://{}/mcp", common::serve_axon(registry).await)
}

fn args(v: Value) -> serde_json::Map<String, Value> {
    v.as_object().unwrap().clone()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_cut_result_is_paged_by_its_session_and_by_no_other() {
    // reqwest is built without a crypto provider here (docs/architecture.md).
    let _ = rustls::crypto::ring::default_provider().install_default();
    let url = serve().await;
    let a = ().serve(StreamableHttpClientTransport::from_uri(url.clone())).await.unwrap();
    let b = ().serve(StreamableHttpClientTransport::from_uri(url)).await.unwrap();
    let first = a
        .call_tool(CallToolRequestParams::new("report").with_arguments(args(json!({}))))
        .await
        .unwrap();
    let first = serde_json::to_value(&first).unwrap();
    let cut = &first["_meta"]["axon/call"]["cut"];
    let handle = cut["handle"].as_str().expect("cut to the default budget");
    assert!(handle.ends_with(&format!(".{}", axon_mcp_server::DEFAULT_MAX_RESULT_TOKENS)));
    let notice = first["content"][1]["text"].as_str().unwrap();
    assert!(
        notice.contains("axon_result_more") && notice.contains(handle),
        "{notice}"
    );
    let shown = first["structuredContent"]["text"].as_str().unwrap();
    assert!(shown.starts_with("row 0:") && shown.ends_with('\n'));

    let more = |session: usize, extra: Value| {
        let mut body = json!({"handle": handle});
        body.as_object_mut()
            .unwrap()
            .extend(extra.as_object().unwrap().clone());
        let client = if session == 0 { &a } else { &b };
        async move {
            let r = client
                .call_tool(
                    CallToolRequestParams::new("axon_result_more").with_arguments(args(body)),
                )
                .await
                .unwrap();
            serde_json::to_value(&r).unwrap()
        }
    };
    let second = more(0, json!({"page": 2})).await;
    assert_eq!(second["isError"], false, "{second}");
    let next = second["structuredContent"]["text"].as_str().unwrap();
    let expected_first = format!("row {}:", shown.lines().count());
    assert!(next.starts_with(&expected_first), "{}", &next[..40]);
    let found = more(0, json!({"query": "ROW 19999:"})).await;
    assert_eq!(
        found["structuredContent"]["text"],
        "row 19999: order shipped and delivered on time\n"
    );
    let past = more(0, json!({"page": 999})).await;
    assert_eq!(past["isError"], true);
    assert!(
        past["content"][0]["text"]
            .as_str()
            .unwrap()
            .contains("page"),
        "{past}"
    );

    // Another session has the handle, not the result.
    let stolen = more(1, json!({"page": 2})).await;
    assert_eq!(stolen["isError"], true, "{stolen}");
    assert!(
        stolen["content"][0]["text"]
            .as_str()
            .unwrap()
            .starts_with("not_found"),
        "{stolen}"
    );
    let bad = more(0, json!({"page": 2, "query": "x"})).await;
    assert_eq!(bad["isError"], true);
}
