//! A real `axon serve` on a random loopback port, driven over HTTP: every endpoint,
//! SSE order, auth, bad bodies, health and metrics, and graceful shutdown.

mod common;
use common::repo_root;
use common::served::{Served, client, is_problem};

use std::time::Duration;

use reqwest::StatusCode;
use serde_json::{Value, json};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn tools_breakers_and_stats() {
    let s = Served::start("[tools.flaky.breaker]\nfailure_threshold = 2\n");
    let (_, tools) = s.get("/v1/tools").await;
    let names: Vec<&str> = tools["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["name"].as_str().unwrap())
        .collect();
    assert_eq!(names, common::BUILT_IN_TOOLS);
    let (_, openai) = s.get("/v1/tools?format=openai").await;
    assert_eq!(openai[0]["type"], "function");
    // Browser tools come first; echo follows them.
    let echo_at = names.iter().position(|n| *n == "echo").unwrap();
    assert_eq!(openai[echo_at]["function"]["name"], "echo");
    let (_, mcp) = s.get("/v1/tools?format=mcp").await;
    assert_eq!(mcp["tools"][echo_at]["annotations"]["readOnlyHint"], true);
    let (status, p) = s.get("/v1/tools?format=xml").await;
    assert_eq!(status, StatusCode::BAD_REQUEST);
    assert!(p["detail"].as_str().unwrap().contains("xml"));

    // A caller may not reconfigure the breaker every caller shares.
    let (status, body) = s
        .post(
            "/v1/tools/flaky/call",
            json!({"args": {"key": "brk", "fail_times": 99},
                   "policy": {"breaker": {"failure_threshold": 1, "open_ms": 18446744073709551615u64}}}),
        )
        .await;
    assert_eq!(status, StatusCode::BAD_REQUEST, "{body}");
    assert_eq!(body["pointer"], "/policy/breaker", "{body}");
    assert_eq!(body["result"]["error"]["code"], "invalid_policy", "{body}");
    // Open flaky's breaker (threshold 2 in the config) with failures, see it, reset it.
    for _ in 0..3 {
        s.post(
            "/v1/tools/flaky/call",
            json!({"args": {"key": "brk", "fail_times": 99},
                   "policy": {"retry": {"max_attempts": 1}}}),
        )
        .await;
    }
    let (_, breakers) = s.get("/v1/breakers").await;
    let flaky = breakers["breakers"]
        .as_array()
        .unwrap()
        .iter()
        .find(|b| b["tool"] == "flaky")
        .unwrap()
        .clone();
    assert_eq!(flaky["state"], "open");
    let (status, body) = s.post("/v1/breakers/flaky/reset", json!({})).await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(body["state"], "closed");
    let (status, _) = s.post("/v1/breakers/nope/reset", json!({})).await;
    assert_eq!(status, StatusCode::NOT_FOUND);

    let (_, stats) = s.get("/v1/stats").await;
    let flaky = &stats["tools"][0];
    assert_eq!(flaky["tool"], "flaky");
    assert_eq!(flaky["calls"], 4, "the refused policy is recorded too");
    assert_eq!(flaky["succeeded"], 0);
    assert_eq!(flaky["breaker"], "closed");
    // The timeout in force; flaky answered no call, so nothing was observed.
    assert_eq!(flaky["adaptive"]["timeout_ms"], 30_000);
    assert_eq!(flaky["adaptive"]["timeout_auto"], false);
    assert_eq!(flaky["adaptive"]["latency"], Value::Null);

    // Unknown routes and methods are problems too.
    let r = client().get(s.url("/v2/nothing")).send().await.unwrap();
    assert_eq!(r.status(), StatusCode::NOT_FOUND);
    assert!(is_problem(&r));
    let r = client().put(s.url("/v1/stats")).send().await.unwrap();
    assert_eq!(r.status(), StatusCode::METHOD_NOT_ALLOWED);
    assert!(is_problem(&r));
    // Taken out of service by hand: refused until reset.
    let (status, body) = s.post("/v1/breakers/flaky/isolate", json!({})).await;
    assert_eq!(status, StatusCode::OK, "{body}");
    assert_eq!(body["state"], "isolated");
    let (status, refused) = s
        .post(
            "/v1/tools/flaky/call",
            json!({"args": {"key": "brk", "fail_times": 0}}),
        )
        .await;
    assert_eq!(status, StatusCode::SERVICE_UNAVAILABLE, "{refused}");
    assert_eq!(refused["error"]["kind"], "circuit_open", "{refused}");
    let (status, body) = s.post("/v1/breakers/flaky/reset", json!({})).await;
    assert_eq!((status, &body["state"]), (StatusCode::OK, &json!("closed")));
    let (status, _) = s.post("/v1/breakers/nope/isolate", json!({})).await;
    assert_eq!(status, StatusCode::NOT_FOUND);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_streamed_call_is_cancelled_when_its_client_goes_away() {
    let s = Served::start("");
    let mut r = client()
        .post(s.url("/v1/tools/sleep/call"))
        .header("accept", "text/event-stream")
        .json(&json!({"args": {"ms": 30000}, "correlation_id": "sse-gone"}))
        .send()
        .await
        .unwrap();
    let first = r.chunk().await.unwrap().unwrap();
    assert!(String::from_utf8_lossy(&first).contains("attempt_started"));
    drop(r);
    // The call ends cancelled long before its 30 s, and history says so.
    let mut kind = Value::Null;
    for _ in 0..200 {
        let (status, h) = s.get("/v1/history/sse-gone").await;
        if status == StatusCode::OK {
            kind = h["calls"][0]["error"]["kind"].clone();
            break;
        }
        tokio::time::sleep(Duration::from_millis(25)).await;
    }
    assert_eq!(kind, "cancelled");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn metrics_and_health() {
    let s = Served::start("");
    s.post("/v1/tools/echo/call", json!({"args": {}})).await;
    let text = client()
        .get(s.url("/metrics"))
        .send()
        .await
        .unwrap()
        .text()
        .await
        .unwrap();
    assert!(
        text.contains(r#"tool_latency_ms_bucket{tool="echo",outcome="success",le="10"} 1"#),
        "{text}"
    );
    assert!(text.contains(r#"tool_inflight{tool="echo"}"#), "{text}");

    let (status, health) = s.get("/healthz").await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(health["status"], "ok");
    assert_eq!(health["components"]["store"]["status"], "ok");

    // The SQLite file made read-only: degraded, 503, the store named.
    let db = s.db();
    let mut perms = std::fs::metadata(&db).unwrap().permissions();
    perms.set_readonly(true);
    std::fs::set_permissions(&db, perms.clone()).unwrap();
    let (status, health) = s.get("/healthz").await;
    #[allow(clippy::permissions_set_readonly_false)]
    perms.set_readonly(false);
    std::fs::set_permissions(&db, perms).unwrap();
    assert_eq!(status, StatusCode::SERVICE_UNAVAILABLE);
    assert_eq!(health["status"], "degraded");
    assert_eq!(health["components"]["store"]["status"], "failing");
    assert!(
        health["components"]["store"]["error"]
            .as_str()
            .unwrap()
            .contains("read-only")
    );
    let (status, _) = s.get("/healthz").await;
    assert_eq!(status, StatusCode::OK, "healthy again once writable");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn bearer_auth_and_the_body_limit() {
    let s = Served::start("[server]\nauth_tokens = [\"t0ken-1\"]\nbody_limit_bytes = 1024\n");
    let r = client().get(s.url("/v1/tools")).send().await.unwrap();
    assert_eq!(r.status(), StatusCode::UNAUTHORIZED);
    assert!(is_problem(&r));
    assert_eq!(r.headers()["www-authenticate"], "Bearer");
    let r = client()
        .get(s.url("/v1/tools"))
        .bearer_auth("wrong")
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), StatusCode::UNAUTHORIZED);
    let r = client().get(s.url("/metrics")).send().await.unwrap();
    assert_eq!(
        r.status(),
        StatusCode::UNAUTHORIZED,
        "metrics are protected too"
    );
    let r = client()
        .get(s.url("/v1/tools"))
        .bearer_auth("t0ken-1")
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), StatusCode::OK);
    let (status, _) = s.get("/healthz").await;
    assert_eq!(status, StatusCode::OK, "health stays open for probes");

    // Oversized: 413 problem+json; the server keeps serving.
    let big = json!({"args": {"blob": "x".repeat(4096)}});
    let r = client()
        .post(s.url("/v1/tools/echo/call"))
        .bearer_auth("t0ken-1")
        .json(&big)
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), StatusCode::PAYLOAD_TOO_LARGE);
    assert!(is_problem(&r));
    let r = client()
        .post(s.url("/v1/tools/echo/call"))
        .bearer_auth("t0ken-1")
        .json(&json!({"args": {"small": true}}))
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), StatusCode::OK);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn scoped_tokens_see_and_call_only_their_tools() {
    let s = Served::start_with(
        "[server]\nauth_tokens = [\"full-t0ken\"]\n\
         [[server.tokens]]\nenv = \"AXON_TEST_ECHO_TOKEN\"\ntools = [\"echo\", \"sleep\"]\n\
         [[server.tokens]]\nenv = \"AXON_TEST_OPS_TOKEN\"\ntools = [\"flaky\"]\nadmin = true\n",
        &[
            ("AXON_TEST_ECHO_TOKEN", "echo-t0ken"),
            ("AXON_TEST_OPS_TOKEN", "ops-t0ken"),
        ],
    );
    let as_token = |method: reqwest::Method, path: &str, token: &str| {
        client().request(method, s.url(path)).bearer_auth(token)
    };
    // Listing: only its tools.
    let listed: Value = as_token(reqwest::Method::GET, "/v1/tools", "echo-t0ken")
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    let names: Vec<&str> = listed["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["name"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["echo", "sleep"]);
    // Calling: its tools yes, others 403 problem+json naming the tool.
    let ok = as_token(reqwest::Method::POST, "/v1/tools/echo/call", "echo-t0ken")
        .json(&json!({"args": {"x": 1}}))
        .send()
        .await
        .unwrap();
    assert_eq!(ok.status(), StatusCode::OK);
    let denied = as_token(reqwest::Method::POST, "/v1/tools/flaky/call", "echo-t0ken")
        .json(&json!({"args": {"key": "k"}}))
        .send()
        .await
        .unwrap();
    assert_eq!(denied.status(), StatusCode::FORBIDDEN);
    assert!(is_problem(&denied));
    let body: Value = denied.json().await.unwrap();
    assert!(body["detail"].as_str().unwrap().contains("flaky"), "{body}");
    let batch = as_token(reqwest::Method::POST, "/v1/calls", "echo-t0ken")
        .json(&json!({"calls": [{"tool": "echo"}, {"tool": "browser_navigate", "args": {"url": "about:blank"}}]}))
        .send()
        .await
        .unwrap();
    assert_eq!(batch.status(), StatusCode::FORBIDDEN);
    assert_eq!(
        batch.json::<Value>().await.unwrap()["pointer"],
        "/calls/1/tool"
    );
    // A plan may use only its tools, fallbacks included.
    let plan = json!({"steps": [{"tool": "echo", "fallbacks": [{"tool": "flaky", "params": {"key": "k"}}]}]});
    let run = as_token(reqwest::Method::POST, "/v1/runs?wait=true", "echo-t0ken")
        .json(&plan)
        .send()
        .await
        .unwrap();
    assert_eq!(run.status(), StatusCode::FORBIDDEN);
    assert_eq!(
        run.json::<Value>().await.unwrap()["pointer"],
        "/steps/0/fallbacks/0/tool"
    );
    // Admin actions: not for a non-admin token; yes for an admin one.
    let reset = as_token(
        reqwest::Method::POST,
        "/v1/breakers/echo/reset",
        "echo-t0ken",
    )
    .send()
    .await
    .unwrap();
    assert_eq!(reset.status(), StatusCode::FORBIDDEN);
    let reset = as_token(
        reqwest::Method::POST,
        "/v1/breakers/flaky/reset",
        "ops-t0ken",
    )
    .send()
    .await
    .unwrap();
    assert_eq!(reset.status(), StatusCode::OK);
    let cancel = as_token(reqwest::Method::DELETE, "/v1/runs/none", "echo-t0ken")
        .send()
        .await
        .unwrap();
    assert_eq!(cancel.status(), StatusCode::FORBIDDEN);
    // The same on /mcp: tools/list shows only its tools; others cannot be called.
    let mcp = |token: &'static str| {
        let s = &s;
        async move {
            let session = s.mcp_session(Some(token)).await;
            let list = s
                .mcp_send(
                    Some(token),
                    &session,
                    json!({"jsonrpc": "2.0", "id": 1, "method": "tools/list"}),
                )
                .await;
            let call = s
                .mcp_send(
                    Some(token),
                    &session,
                    json!({"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {"name": "flaky", "arguments": {"key": "mcp-scope"}}}),
                )
                .await;
            (list, call)
        }
    };
    let (listed, called) = mcp("echo-t0ken").await;
    assert!(
        listed.contains("\"echo\"") && !listed.contains("\"flaky\""),
        "{listed}"
    );
    assert!(
        !listed.contains("run_plan"),
        "run_plan is not among its tools: {listed}"
    );
    assert!(
        !called.contains("\"attempt\""),
        "flaky must not run: {called}"
    );
    let (full, called) = mcp("full-t0ken").await;
    assert!(
        full.contains("\"flaky\"") && full.contains("run_plan"),
        "{full}"
    );
    assert!(
        called.contains("\"attempt\""),
        "an unscoped token calls it: {called}"
    );
    // Lower-case scheme counts.
    let lower = client()
        .get(s.url("/v1/tools"))
        .header("authorization", "bearer full-t0ken")
        .send()
        .await
        .unwrap();
    assert_eq!(lower.status(), StatusCode::OK);
}

#[test]
fn a_public_bind_without_tokens_is_refused() {
    let o = axon_testkit::command(env!("CARGO_BIN_EXE_axon"))
        .args(["serve", "--bind", "0.0.0.0:0"])
        .env(
            "AXON_STORE_PATH",
            std::env::temp_dir().join("axon-never.db"),
        )
        .env_remove("AXON_CONFIG")
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&o.stderr).contains("auth_tokens"));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn shutdown_lets_a_run_in_flight_finish() {
    let mut s = Served::start("");
    let (status, _) = s
        .post(
            "/v1/runs?run_id=drain-1",
            json!({"steps": [{"tool": "sleep", "params": {"ms": 400}}, {"tool": "echo", "depends_on": [0]}]}),
        )
        .await;
    assert_eq!(status, StatusCode::ACCEPTED);
    let exit = s.terminate();
    assert!(exit.success(), "{exit:?}");
    // The store says the run finished, both steps.
    let o = axon_testkit::command(env!("CARGO_BIN_EXE_axon"))
        .args(["history", "drain-1", "--json"])
        .env("AXON_STORE_PATH", s.db())
        .env_remove("AXON_CONFIG")
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(0));
    let run: Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(run["result"]["status"], "succeeded", "{run}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn mcp_over_streamable_http_lists_and_calls() {
    use rmcp::ServiceExt;
    use rmcp::model::CallToolRequestParams;
    use rmcp::transport::StreamableHttpClientTransport;
    // rmcp's client builds a reqwest client, which needs a TLS provider in
    // the process (under `cargo test` another test of this binary happened to
    // install it first; in a process of its own this test must).
    axon_http_tool::install_crypto_provider();
    let s = Served::start("");
    let client = ().serve(StreamableHttpClientTransport::from_uri(s.url("/mcp"))).await.unwrap();
    let tools = client.list_all_tools().await.unwrap();
    assert!(tools.iter().any(|t| t.name == "echo"));
    assert!(tools.iter().any(|t| t.name == "run_plan"));
    let r = client
        .call_tool(
            CallToolRequestParams::new("echo")
                .with_arguments(json!({"via": "mcp"}).as_object().unwrap().clone()),
        )
        .await
        .unwrap();
    let r = serde_json::to_value(&r).unwrap();
    assert_eq!(r["structuredContent"], json!({"via": "mcp"}));
    let r = client
        .call_tool(
            CallToolRequestParams::new("run_plan").with_arguments(
                json!({"plan": {"steps": [{"tool": "echo", "params": {"n": 1}}]}})
                    .as_object()
                    .unwrap()
                    .clone(),
            ),
        )
        .await
        .unwrap();
    let r = serde_json::to_value(&r).unwrap();
    assert_eq!(r["structuredContent"]["status"], "succeeded", "{r}");
    client.cancel().await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn mcp_over_http_wants_the_token_too() {
    let s = Served::start("[server]\nauth_tokens = [\"t0ken-2\"]\n");
    let r = client()
        .post(s.url("/mcp"))
        .json(&json!({"jsonrpc": "2.0", "id": 1, "method": "tools/list"}))
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), StatusCode::UNAUTHORIZED);
}

/// Hostile inputs by hand: each a clear 4xx naming what is wrong, in bounded
/// time, the server answering health checks meanwhile.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn hostile_inputs_get_clear_errors_quickly() {
    // Bodies up to 16 MiB, so the 100 000-step plan reaches the parser.
    let s = Served::start("[server]\nbody_limit_bytes = 16777216\n");
    let started = std::time::Instant::now();
    // 100k-deep nesting, YAML and JSON, two at once, and health stays quick.
    let deep_yaml = "[".repeat(100_000);
    let deep_json = format!("{{\"steps\": {}", "[".repeat(100_000));
    let (a, b, health) = tokio::join!(
        s.post_text("/v1/runs", &deep_yaml),
        s.post_text("/v1/plans/validate", &deep_json),
        async {
            tokio::time::sleep(Duration::from_millis(20)).await;
            let t = std::time::Instant::now();
            let r = client().get(s.url("/healthz")).send().await.unwrap();
            (r.status(), t.elapsed())
        }
    );
    for r in [a, b] {
        assert_eq!(r.status(), StatusCode::BAD_REQUEST);
        assert!(is_problem(&r));
    }
    assert_eq!(health.0, StatusCode::OK);
    assert!(
        health.1 < Duration::from_secs(2),
        "healthz took {:?}",
        health.1
    );
    // A YAML alias bomb.
    let mut laughs = String::from("a: &a [x, x, x, x, x, x, x, x, x, x]\n");
    for (prev, name) in ["a", "b", "c", "d", "e", "f", "g", "h"]
        .iter()
        .zip(["b", "c", "d", "e", "f", "g", "h", "i"])
    {
        laughs.push_str(&format!(
            "{name}: &{name} [{}]\n",
            vec![format!("*{prev}"); 10].join(", ")
        ));
    }
    laughs.push_str("steps: *i\n");
    let r = s.post_text("/v1/plans/validate", &laughs).await;
    assert_eq!(r.status(), StatusCode::BAD_REQUEST);
    // NUL and invalid UTF-8.
    let r = client()
        .post(s.url("/v1/runs"))
        .header("content-type", "application/yaml")
        .body(vec![b's', b't', 0xff, 0xfe, 0, b':'])
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), StatusCode::BAD_REQUEST);
    assert!(is_problem(&r));
    let r = client().get(s.url("/v1/runs/%FF%FE")).send().await.unwrap();
    assert!(r.status().is_client_error(), "{}", r.status());
    assert!(is_problem(&r), "every error is problem+json");
    let r = client()
        .post(s.url("/v1/runs?wait=maybe"))
        .header("content-type", "application/yaml")
        .body("steps: []")
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), StatusCode::BAD_REQUEST);
    assert!(is_problem(&r), "a bad query string is problem+json");
    // Huge numbers: named, not obeyed.
    let (status, body) = s
        .post(
            "/v1/tools/echo/call",
            json!({"args": {}, "policy": {"timeout_ms": 18446744073709551615u64, "retry": {"max_attempts": 4294967295u32}}}),
        )
        .await;
    assert_eq!(status, StatusCode::BAD_REQUEST, "{body}");
    assert!(
        body["pointer"].as_str().unwrap().starts_with("/policy/"),
        "{body}"
    );
    let (status, body) = s
        .post(
            "/v1/plans/validate",
            json!({"max_parallel": 18446744073709551615u64, "defaults": {"deadline_ms": 1e300}, "steps": [{"tool": "echo"}]}),
        )
        .await;
    assert!(status.is_client_error(), "{status} {body}");
    // 100 000 steps validate in bounded time.
    let steps: Vec<Value> = (0..100_000)
        .map(|i| json!({"id": format!("s{i}"), "tool": "echo", "params": {"i": i}}))
        .collect();
    let t = std::time::Instant::now();
    let (status, body) = s.post("/v1/plans/validate", json!({"steps": steps})).await;
    assert_eq!(status, StatusCode::OK, "{body}");
    assert_eq!(body["steps"], 100_000);
    assert!(t.elapsed() < Duration::from_secs(20), "{:?}", t.elapsed());
    let (status, _) = s.get("/healthz").await;
    assert_eq!(status, StatusCode::OK, "alive at the end");
    assert!(started.elapsed() < Duration::from_secs(60));
}

/// The password check over HTTP and MCP: a plan's literal password and token
/// and a `${secret.…}` value are nowhere in the run record, the event stream,
/// history, /metrics, the debug logs or the SQLite file, while the tool got them.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_plans_secrets_are_nowhere_at_rest_over_http_and_mcp() {
    let s = Served::start_with(
        "[secrets]\nAPI_KEY = { env = \"AXON_TEST_API_KEY\" }\n",
        &[
            ("AXON_TEST_API_KEY", "sk-from-env-9876"),
            ("AXON_LOG_FORMAT", "json"),
            ("AXON_LOG_LEVEL", "debug"),
        ],
    );
    let plan = json!({"steps": [
        {"id": "login", "tool": "echo", "params": {"user": "ada", "password": "hunter2-http", "api_token": "tok-http-1"}},
        {"id": "use", "tool": "echo", "params": {"header": "Key ${secret.API_KEY}", "t": "${steps.login.data.api_token}"}}
    ]});
    let (status, done) = s
        .post("/v1/runs?wait=true&run_id=sec-1", plan.clone())
        .await;
    assert_eq!(status, StatusCode::OK, "{done}");
    // The caller of the run gets what the tools returned.
    assert_eq!(
        done["steps"][1]["result"]["data"]["header"], "Key sk-from-env-9876",
        "{done}"
    );
    let events = client()
        .post(s.url("/v1/runs?run_id=sec-2"))
        .header("accept", "text/event-stream")
        .json(&plan)
        .send()
        .await
        .unwrap()
        .text()
        .await
        .unwrap();
    let (_, record) = s.get("/v1/runs/sec-1").await;
    let (_, history) = s.get("/v1/history/sec-1").await;
    let metrics = client()
        .get(s.url("/metrics"))
        .send()
        .await
        .unwrap()
        .text()
        .await
        .unwrap();
    // And over MCP: run_plan.
    let session = s.mcp_session(None).await;
    let mcp_result = s
        .mcp_send(
            None,
            &session,
            json!({"jsonrpc": "2.0", "id": 2, "method": "tools/call",
                   "params": {"name": "run_plan", "arguments": {"plan": plan, "run_id": "sec-3"}}}),
        )
        .await;
    assert!(
        mcp_result.contains("sk-from-env-9876"),
        "the MCP caller gets the result: {mcp_result}"
    );
    let (_, mcp_record) = s.get("/v1/runs/sec-3").await;
    // A call with an Idempotency-Key: its kept answer is masked like history.
    let idempotent = || {
        client()
            .post(s.url("/v1/tools/echo/call"))
            .header("Idempotency-Key", "sec-idem")
            .json(&json!({"args": {"access_token": "tok-idem-1"}}))
            .send()
    };
    let first: Value = idempotent().await.unwrap().json().await.unwrap();
    assert_eq!(first["data"]["access_token"], "tok-idem-1", "{first}");
    let replayed: Value = idempotent().await.unwrap().json().await.unwrap();
    assert_eq!(replayed["data"]["access_token"], "***", "{replayed}");
    tokio::time::sleep(Duration::from_millis(200)).await;
    let logs = std::fs::read_to_string(s.dir.join("stderr.log")).unwrap_or_default();
    let mut db = Vec::new();
    for name in ["axon.db", "axon.db-wal"] {
        db.extend(std::fs::read(s.dir.join(name)).unwrap_or_default());
    }
    let stored = [
        ("the run record", record.to_string()),
        ("the MCP run's record", mcp_record.to_string()),
        ("history", history.to_string()),
        ("the event stream", events),
        ("/metrics", metrics),
        ("the logs", logs.clone()),
    ];
    for secret in [
        "hunter2-http",
        "tok-http-1",
        "sk-from-env-9876",
        "tok-idem-1",
    ] {
        for (what, text) in &stored {
            assert!(!text.contains(secret), "{secret} in {what}: {text}");
        }
        assert!(
            !db.windows(secret.len()).any(|w| w == secret.as_bytes()),
            "{secret} in the SQLite file"
        );
    }
    assert!(logs.len() > 100, "debug logs were written: {logs}");
    assert_eq!(
        done["steps"][1]["result"]["data"]["t"], "tok-http-1",
        "a masked field's value passed on by a template reaches the caller"
    );
    assert_eq!(
        record["steps"][1]["result"]["data"]["t"], "***",
        "and is masked when stored"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_api_is_described_by_its_openapi_document_and_answers_by_it() {
    // docs/openapi.json is what the server serves and `axon openapi` prints.
    let file = std::fs::read_to_string(repo_root().join("docs/openapi.json")).unwrap();
    let doc: Value = serde_json::from_str(&file).unwrap();
    let printed = axon_testkit::command(env!("CARGO_BIN_EXE_axon"))
        .arg("openapi")
        .output()
        .unwrap();
    let printed: Value = serde_json::from_slice(&printed.stdout).unwrap();
    assert!(
        printed == doc,
        "docs/openapi.json is stale: cargo run -q -p axon-cli -- openapi > docs/openapi.json"
    );
    assert_eq!(doc["openapi"], "3.1.0");
    // Every route the router has is described.
    let router =
        std::fs::read_to_string(repo_root().join("crates/axon-server/src/lib.rs")).unwrap();
    let routes: Vec<&str> = router
        .split(".route(")
        .skip(1)
        .filter_map(|rest| rest.trim_start().strip_prefix('"')?.split('"').next())
        .collect();
    assert!(routes.len() >= 15, "{routes:?}");
    for route in routes {
        assert!(
            doc["paths"][route].is_object(),
            "{route} is not in docs/openapi.json"
        );
    }

    let s = Served::start("");
    let (status, served) = s.get("/openapi.json").await;
    assert_eq!((status, &served), (StatusCode::OK, &doc));
    let conforms = |name: &str, value: &Value| {
        let schema = axon_core::schema::Schema::compile(&json!({
            "$ref": format!("#/components/schemas/{name}"),
            "components": doc["components"],
        }))
        .unwrap();
        if let Err(e) = schema.check(value, axon_core::ErrorKind::InvalidOutput, name) {
            panic!("{name}: {}\n{value:#}", e.message);
        }
    };
    let (_, ok) = s
        .post("/v1/tools/echo/call", json!({"args": {"a": 1}}))
        .await;
    conforms("CallResult", &ok);
    let (status, failed) = s
        .post(
            "/v1/tools/flaky/call",
            json!({"args": {"key": "openapi", "fail_times": 9, "kind": "failed"}}),
        )
        .await;
    assert_eq!(status, StatusCode::UNPROCESSABLE_ENTITY);
    conforms("CallResult", &failed);
    let (status, problem) = s
        .post("/v1/tools/sleep/call", json!({"args": {"ms": "x"}}))
        .await;
    assert_eq!(status, StatusCode::BAD_REQUEST);
    conforms("Problem", &problem);
    assert_eq!(problem["pointer"], "/args/ms");
    let plan = json!({"steps": [{"id": "a", "tool": "echo", "params": {"x": 1}}]});
    let (_, result) = s.post("/v1/runs?wait=true", plan).await;
    conforms("PlanResult", &result);
    let run_id = result["run_id"].as_str().unwrap();
    let (_, run) = s.get(&format!("/v1/runs/{run_id}")).await;
    conforms("RunState", &run);
    let (_, history) = s.get(&format!("/v1/history/{run_id}")).await;
    conforms("HistoryEntry", &history["calls"][0]);
    conforms("HistoryStats", &history["stats"]);
    let (_, health) = s.get("/healthz").await;
    conforms("Health", &health);
    let (_, breakers) = s.get("/v1/breakers").await;
    conforms("Breaker", &breakers["breakers"][0]);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_client_generated_from_the_document_calls_a_tool_and_runs_a_plan() {
    // openapi-python-client (PyPI, pinned in peers/requirements-api.txt) writes
    // a Python package from docs/openapi.json; a script uses it against a real
    // server (peers/openapi_client_check.py).
    let venv = repo_root().join("peers/venv-api/bin");
    let out = std::env::temp_dir().join(format!("axon-client-{}", ulid::Ulid::new()));
    let generated = axon_testkit::command(venv.join("openapi-python-client"))
        .args(["generate", "--meta", "none", "--path"])
        .arg(repo_root().join("docs/openapi.json"))
        .arg("--output-path")
        .arg(out.join("axon_client"))
        .output()
        .expect("peers/venv-api has openapi-python-client (scripts/peers installs it)");
    assert!(
        generated.status.success(),
        "{}",
        String::from_utf8_lossy(&generated.stderr)
    );
    let s = Served::start("");
    let base = s.base.clone();
    let script = repo_root().join("peers/openapi_client_check.py");
    let python = venv.join("python");
    let ran = tokio::task::spawn_blocking(move || {
        axon_testkit::command(python)
            .arg(script)
            .arg(base)
            .env("PYTHONPATH", &out)
            .output()
            .unwrap()
    })
    .await
    .unwrap();
    assert!(
        ran.status.success(),
        "{}",
        String::from_utf8_lossy(&ran.stderr)
    );
    let seen: Value = serde_json::from_slice(&ran.stdout).unwrap();
    assert_eq!(seen["call"]["data"], json!({"hello": "world"}));
    assert_eq!(seen["call"]["success"], true);
    assert_eq!(seen["run"]["status"], "succeeded");
    assert_eq!(seen["run"]["steps"][1]["result"]["data"], json!({"m": 1}));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_running_run_can_be_followed_by_someone_who_did_not_start_it() {
    let s = Served::start("");
    // The first step waits on a gate this test opens once it follows the run.
    let (open_gate, gate_url) = common::gate().await;
    let (status, _) = s
        .post(
            "/v1/runs?run_id=follow-1",
            json!({"steps": [
                {"id": "hold", "tool": "http_request", "params": {"url": gate_url}},
                {"id": "after", "tool": "echo", "depends_on": ["hold"]},
            ]}),
        )
        .await;
    assert_eq!(status, StatusCode::ACCEPTED);

    let stream = client()
        .get(s.url("/v1/runs/follow-1/events"))
        .send()
        .await
        .unwrap();
    assert_eq!(stream.status(), StatusCode::OK);
    assert!(
        stream.headers()["content-type"]
            .to_str()
            .unwrap()
            .starts_with("text/event-stream")
    );
    open_gate.send(true).unwrap();
    // The stream ends with the run.
    let text = tokio::time::timeout(Duration::from_secs(30), stream.text())
        .await
        .expect("the stream ends when the run does")
        .unwrap();
    let names: Vec<&str> = text
        .lines()
        .filter_map(|l| l.strip_prefix("event: "))
        .collect();
    // (The run may not have begun when the follower came: then it sees the
    // start too.)
    let end = [
        "step_finished",
        "step_started",
        "step_finished",
        "run_finished",
    ];
    assert!(names.ends_with(&end), "{text}");
    assert!(
        names[..names.len() - end.len()]
            .iter()
            .all(|n| ["run_started", "step_started"].contains(n)),
        "{text}"
    );
    assert!(text.contains("\"id\":\"after\""), "{text}");

    let (status, p) = s.get("/v1/runs/follow-1/events").await;
    assert_eq!(status, StatusCode::NOT_FOUND, "not running any more");
    assert!(p["detail"].as_str().unwrap().contains("not running"));
    let (status, _) = s.get("/v1/runs/nobody/events").await;
    assert_eq!(status, StatusCode::NOT_FOUND);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_tool_shows_the_policy_in_force_and_its_breaker() {
    let s =
        Served::start("[defaults]\ntimeout_ms = 7000\n\n[tools.flaky.retry]\nmax_attempts = 5\n");
    let (status, tool) = s.get("/v1/tools/flaky").await;
    assert_eq!(status, StatusCode::OK, "{tool}");
    assert_eq!(tool["tool"]["name"], "flaky");
    assert_eq!(tool["policy"]["timeout_ms"], 7000, "the defaults apply");
    assert_eq!(
        tool["policy"]["retry"]["max_attempts"], 5,
        "and the tool's own keys"
    );
    assert_eq!(tool["breaker"]["state"], "closed");
    let (_, echo) = s.get("/v1/tools/echo").await;
    assert_eq!(echo["policy"]["retry"]["max_attempts"], 3);
    let (status, p) = s.get("/v1/tools/nothing").await;
    assert_eq!(status, StatusCode::NOT_FOUND, "{p}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_cancelled_run_resumes_with_its_plan_and_keeps_its_finished_steps() {
    let s = Served::start("");
    let (open_gate, gate_url) = common::gate().await;
    let key = format!("resume-{}", ulid::Ulid::new());
    let (status, _) = s
        .post(
            "/v1/runs?run_id=res-1",
            json!({"steps": [
                {"id": "first", "tool": "flaky", "params": {"key": key, "data": "once"}},
                {"id": "hold", "tool": "http_request", "depends_on": ["first"], "params": {"url": gate_url}},
            ]}),
        )
        .await;
    assert_eq!(status, StatusCode::ACCEPTED);
    // Cancel once `first` is checkpointed and `hold` waits on the gate.
    let mut run = Value::Null;
    for _ in 0..800 {
        (_, run) = s.get("/v1/runs/res-1").await;
        if run["steps_finished"] == 1 {
            break;
        }
        tokio::time::sleep(Duration::from_millis(25)).await;
    }
    assert_eq!(run["steps_finished"], 1, "{run}");
    let r = client()
        .delete(s.url("/v1/runs/res-1"))
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), StatusCode::ACCEPTED);
    for _ in 0..800 {
        (_, run) = s.get("/v1/runs/res-1").await;
        if run["status"] != "running" {
            break;
        }
        tokio::time::sleep(Duration::from_millis(25)).await;
    }
    assert_eq!(run["status"], "cancelled", "{run}");

    open_gate.send(true).unwrap();
    let r = client()
        .post(s.url("/v1/runs/res-1/resume"))
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), StatusCode::ACCEPTED);
    assert_eq!(r.headers()["location"], "/v1/runs/res-1");
    for _ in 0..800 {
        (_, run) = s.get("/v1/runs/res-1").await;
        if run["status"] != "running" {
            break;
        }
        tokio::time::sleep(Duration::from_millis(25)).await;
    }
    assert_eq!(run["status"], "succeeded", "{run}");
    // `first` ran once: the resume reused its checkpoint.
    let (_, history) = s.get("/v1/history/res-1").await;
    let firsts = history["calls"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|c| c["tool"] == "flaky")
        .count();
    assert_eq!(firsts, 1, "{history}");

    let (status, _) = s.post("/v1/runs/nothing/resume", Value::Null).await;
    assert_eq!(status, StatusCode::NOT_FOUND);
}

/// `Idempotency-Key` on a call: a repeat gets the first result and does not
/// run the tool again; a repeat while the first runs is 409; the key with a
/// different request is 422; a bad key is 400.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_idempotency_key_runs_a_call_once() {
    let s = Served::start("");
    let call = |key: &str, body: Value| {
        client()
            .post(s.url("/v1/tools/flaky/call"))
            .header("Idempotency-Key", key)
            .json(&body)
    };
    // flaky fails its first attempt per `key`, so a second execution would
    // show as a new call id with one attempt.
    let body = json!({"args": {"key": "idem-1", "fail_times": 1}, "correlation_id": "idem"});
    let first = call("k-1", body.clone()).send().await.unwrap();
    assert_eq!(first.status(), StatusCode::OK);
    assert!(first.headers().get("idempotent-replayed").is_none());
    let first: Value = first.json().await.unwrap();
    assert_eq!(first["attempts"], 2, "{first:#}");
    let again = call("k-1", body.clone()).send().await.unwrap();
    assert_eq!(again.status(), StatusCode::OK);
    assert_eq!(again.headers()["idempotent-replayed"], "true");
    let again: Value = again.json().await.unwrap();
    assert_eq!(again, first, "the same result, not a second execution");
    let (_, history) = s.get("/v1/history/idem").await;
    assert_eq!(history["calls"].as_array().unwrap().len(), 1, "{history:#}");

    // The same key with other arguments.
    let other = json!({"args": {"key": "idem-2", "fail_times": 0}, "correlation_id": "idem"});
    let r = call("k-1", other).send().await.unwrap();
    assert_eq!(r.status(), StatusCode::UNPROCESSABLE_ENTITY);
    assert!(is_problem(&r));
    // A key that is too long.
    let r = call(&"x".repeat(256), body.clone()).send().await.unwrap();
    assert_eq!(r.status(), StatusCode::BAD_REQUEST);
    // The key in the body is the same key; one that differs from the header is
    // a 400 naming it.
    let mut in_body = body.clone();
    in_body["idempotency_key"] = json!("k-1");
    let (status, replayed) = s.post("/v1/tools/flaky/call", in_body.clone()).await;
    assert_eq!(
        (status, replayed["call_id"].clone()),
        (StatusCode::OK, first["call_id"].clone())
    );
    let r = call("k-other", in_body).send().await.unwrap();
    assert_eq!(r.status(), StatusCode::BAD_REQUEST);
    let problem: Value = r.json().await.unwrap();
    assert_eq!(problem["pointer"], "/idempotency_key");

    // A repeat while the first is still running: 409, then the answer.
    let slow = client()
        .post(s.url("/v1/tools/sleep/call"))
        .header("Idempotency-Key", "k-slow")
        .json(&json!({"args": {"ms": 1500}}));
    let running = tokio::spawn(slow.try_clone().unwrap().send());
    // The key is claimed before the call starts: wait until it runs.
    loop {
        let text = client().get(s.url("/metrics")).send().await.unwrap();
        let text = text.text().await.unwrap();
        if text.contains(r#"tool_inflight{tool="sleep"} 1"#) {
            break;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    let busy = slow.try_clone().unwrap().send().await.unwrap();
    assert_eq!(busy.status(), StatusCode::CONFLICT);
    assert_eq!(busy.headers()["retry-after"], "1");
    let done = running.await.unwrap().unwrap();
    assert_eq!(done.status(), StatusCode::OK);
    let done: Value = done.json().await.unwrap();
    let replayed: Value = slow.send().await.unwrap().json().await.unwrap();
    assert_eq!(replayed["call_id"], done["call_id"]);
}
