//! OpenTelemetry end to end, against a real OTLP receiver (OpenTelemetry's own
//! protocol package and gRPC service, `peers/otlp_receiver.py`; `scripts/peers`
//! installs it): a plan run with a retried step, an HTTP upstream and a tool of
//! another Axon imported over MCP is one trace, rooted at the `TRACEPARENT` the
//! caller gave, with the right parents across three processes and both OTLP
//! transports; `axon serve` continues a `traceparent` header and ignores a
//! malformed one.

mod common;
use common::repo_root;

use std::collections::HashMap;
use std::io::BufRead;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::{Arc, Mutex};

use axum::response::IntoResponse;
use serde_json::{Value, json};

/// The OTLP receiver: HTTP and gRPC ports, spans appended to a file.
struct Receiver {
    child: Child,
    http: u16,
    grpc: u16,
    out: PathBuf,
}

impl Receiver {
    fn start(dir: &Path) -> Receiver {
        let python = repo_root().join("peers/venv-otel/bin/python");
        assert!(
            python.exists(),
            "{} is missing: run scripts/peers",
            python.display()
        );
        let out = dir.join("spans.jsonl");
        let mut child = axon_testkit::command(python)
            .arg(repo_root().join("peers/otlp_receiver.py"))
            .arg(&out)
            .stdout(Stdio::piped())
            .spawn()
            .unwrap();
        let mut line = String::new();
        std::io::BufReader::new(child.stdout.take().unwrap())
            .read_line(&mut line)
            .unwrap();
        let ports: HashMap<&str, u16> = line
            .split_whitespace()
            .filter_map(|kv| kv.split_once('='))
            .map(|(k, v)| (k, v.parse().unwrap()))
            .collect();
        Receiver {
            child,
            http: ports["http"],
            grpc: ports["grpc"],
            out,
        }
    }

    fn spans(&self) -> Vec<Value> {
        std::fs::read_to_string(&self.out)
            .unwrap_or_default()
            .lines()
            .map(|l| serde_json::from_str(l).unwrap())
            .collect()
    }
}

impl Drop for Receiver {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// An `axon serve` whose first line is its address; SIGTERM flushes its spans.
struct Served {
    child: Child,
    base: String,
}

impl Served {
    fn start(dir: &Path, env: &[(&str, String)]) -> Served {
        let mut cmd = axon_testkit::command(env!("CARGO_BIN_EXE_axon"));
        cmd.args(["serve", "--bind", "127.0.0.1:0"])
            .env("AXON_STORE_PATH", dir.join("inner.db"))
            .env_remove("AXON_CONFIG")
            .stdout(Stdio::piped())
            .stderr(std::fs::File::create(dir.join("inner.log")).unwrap());
        for (k, v) in env {
            cmd.env(k, v);
        }
        let mut child = cmd.spawn().unwrap();
        let base = common::listening_url(&mut child);
        Served { child, base }
    }

    fn terminate(&mut self) {
        Command::new("kill")
            .args(["-TERM", &self.child.id().to_string()])
            .status()
            .unwrap();
        assert!(self.child.wait().unwrap().success());
    }
}

impl Drop for Served {
    fn drop(&mut self) {
        common::stop(&mut self.child);
    }
}

/// An HTTP upstream that answers 503 to its first request and 200 after, and
/// keeps the `traceparent` of each request.
async fn upstream() -> (u16, Arc<Mutex<Vec<Option<String>>>>) {
    let seen: Arc<Mutex<Vec<Option<String>>>> = Arc::default();
    let log = seen.clone();
    let app = axum::Router::new().route(
        "/data",
        axum::routing::get(move |headers: axum::http::HeaderMap| {
            let log = log.clone();
            async move {
                let mut seen = log.lock().unwrap();
                seen.push(
                    headers
                        .get("traceparent")
                        .map(|v| v.to_str().unwrap().to_string()),
                );
                if seen.len() == 1 {
                    (axum::http::StatusCode::SERVICE_UNAVAILABLE, "busy").into_response()
                } else {
                    axum::Json(json!({"ok": true})).into_response()
                }
            }
        }),
    );
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let port = listener.local_addr().unwrap().port();
    tokio::spawn(async move { axum::serve(listener, app).await.unwrap() });
    (port, seen)
}

/// Spans by name; panics unless exactly `n` have it.
fn named<'a>(spans: &'a [Value], name: &str, n: usize) -> Vec<&'a Value> {
    let found: Vec<&Value> = spans.iter().filter(|s| s["name"] == name).collect();
    assert_eq!(
        found.len(),
        n,
        "{n} span(s) named {name:?} expected; the spans: {:#?}",
        spans
            .iter()
            .map(|s| (s["service"].clone(), s["name"].clone()))
            .collect::<Vec<_>>()
    );
    found
}

fn children<'a>(spans: &'a [Value], parent: &Value) -> Vec<&'a Value> {
    spans
        .iter()
        .filter(|s| s["parent_span_id"] == parent["span_id"] && s["trace_id"] == parent["trace_id"])
        .collect()
}

fn only_child<'a>(spans: &'a [Value], parent: &Value, name: &str) -> &'a Value {
    let found: Vec<&Value> = children(spans, parent)
        .into_iter()
        .filter(|s| s["name"] == name)
        .collect();
    assert_eq!(
        found.len(),
        1,
        "one {name:?} under {}: {spans:#?}",
        parent["name"]
    );
    found[0]
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn one_trace_through_a_plan_an_http_upstream_and_an_imported_axon() {
    axon_http_tool::install_crypto_provider();
    let dir = std::env::temp_dir().join(format!("axon-otel-test-{}", ulid::Ulid::new()));
    std::fs::create_dir_all(&dir).unwrap();
    let receiver = Receiver::start(&dir);
    let (upstream_port, traceparents) = upstream().await;

    // The imported Axon exports over gRPC, configured by the standard variables.
    let mut inner = Served::start(
        &dir,
        &[
            (
                "OTEL_EXPORTER_OTLP_ENDPOINT",
                format!("http://127.0.0.1:{}", receiver.grpc),
            ),
            ("OTEL_EXPORTER_OTLP_PROTOCOL", "grpc".into()),
            ("OTEL_SERVICE_NAME", "axon-inner".into()),
        ],
    );

    // The caller's trace: Axon's run must hang under this span.
    let trace_id = "4bf92f3577b34da6a3ce929d0e0e4736";
    let caller_span = "00f067aa0ba902b7";
    let config = format!(
        r#"
[telemetry]
otlp_endpoint = "http://127.0.0.1:{http}"
service_name = "axon-outer"

[[mcp.servers]]
name = "inner"
url = "{base}/mcp"
"#,
        http = receiver.http,
        base = inner.base,
    );
    let plan = format!(
        r#"
name: traced
steps:
  - id: warm_up
    tool: flaky
    params: {{key: "otel-{key}", fail_times: 1, data: {{n: 1}}}}
    policy: {{retry: {{initial_delay_ms: 20, jitter: none}}}}
  - id: fetch
    tool: http_request
    depends_on: [warm_up]
    params: {{url: "http://127.0.0.1:{upstream_port}/data"}}
    policy: {{retry: {{initial_delay_ms: 20, jitter: none}}}}
  - id: remote
    tool: inner__echo
    depends_on: [fetch]
    params: {{said: "hello"}}
"#,
        key = ulid::Ulid::new(),
    );
    std::fs::write(dir.join("axon.toml"), config).unwrap();
    std::fs::write(dir.join("plan.yaml"), plan).unwrap();
    let out = tokio::process::Command::from(axon_testkit::command(env!("CARGO_BIN_EXE_axon")))
        .arg("--config")
        .arg(dir.join("axon.toml"))
        .args(["run", "--json"])
        .arg(dir.join("plan.yaml"))
        .env("AXON_STORE_PATH", dir.join("outer.db"))
        .env_remove("AXON_CONFIG")
        .env("TRACEPARENT", format!("00-{trace_id}-{caller_span}-01"))
        .output()
        .await
        .unwrap();
    assert!(
        out.status.success(),
        "the run succeeds: {}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );

    // The HTTP API continues a caller's `traceparent`, and ignores a bad one.
    let client = reqwest::Client::new();
    let http_trace = "0af7651916cd43dd8448eb211c80319c";
    for traceparent in [
        format!("00-{http_trace}-b7ad6b7169203331-01"),
        "00-not-a-trace".to_string(),
    ] {
        let r = client
            .post(format!("{}/v1/tools/echo/call", inner.base))
            .header("traceparent", traceparent)
            .json(&json!({"args": {"via": "http"}}))
            .send()
            .await
            .unwrap();
        assert_eq!(r.status(), 200);
    }
    inner.terminate();

    let spans = receiver.spans();
    // (An imported server's session is a root span of its own, exported when
    // the session ends, if ever: not part of the run.)
    let outer: Vec<Value> = spans
        .iter()
        .filter(|s| s["service"] == "axon-outer")
        .filter(|s| !s["name"].as_str().unwrap().starts_with("mcp session"))
        .cloned()
        .collect();
    assert!(
        outer
            .iter()
            .all(|s| s["transport"] == "http" && s["trace_id"] == trace_id),
        "every span of the run is in the caller's trace, over OTLP/HTTP: {outer:#?}"
    );

    // axon run → run_plan → one step per plan step.
    let cli = named(&outer, "axon run", 1)[0];
    assert_eq!(
        cli["parent_span_id"], caller_span,
        "the caller's span is the root"
    );
    let run = only_child(&outer, cli, "run_plan traced");
    assert_eq!(run["attributes"]["axon.run.status"], "succeeded");

    // The retried step: two attempts under its execute_tool span, the first
    // failed with why and how long the engine waited.
    let warm_up = only_child(&outer, run, "step warm_up");
    let call = only_child(&outer, warm_up, "execute_tool flaky");
    assert_eq!(call["attributes"]["gen_ai.operation.name"], "execute_tool");
    assert_eq!(call["attributes"]["gen_ai.tool.name"], "flaky");
    assert_eq!(call["attributes"]["axon.attempts"], 2);
    let mut attempts = children(&outer, call);
    attempts.sort_by_key(|a| a["attributes"]["axon.attempt"].as_i64());
    assert_eq!(attempts.len(), 2, "{attempts:#?}");
    assert_eq!(attempts[0]["attributes"]["error.type"], "transient");
    assert_eq!(attempts[0]["attributes"]["axon.retry.reason"], "transient");
    assert_eq!(attempts[0]["attributes"]["axon.retry.delay_ms"], 20);
    assert_eq!(attempts[0]["status_code"], "STATUS_CODE_ERROR");
    assert_ne!(attempts[1]["status_code"], "STATUS_CODE_ERROR");

    // The HTTP step: a client span per attempt, and the upstream saw each
    // one's context as `traceparent`.
    let fetch = only_child(&outer, run, "step fetch");
    let call = only_child(&outer, fetch, "execute_tool http_request");
    let mut attempts = children(&outer, call);
    attempts.sort_by_key(|a| a["attributes"]["axon.attempt"].as_i64());
    assert_eq!(attempts.len(), 2, "503, then 200: {attempts:#?}");
    let gets: Vec<&Value> = attempts
        .iter()
        .map(|a| only_child(&outer, a, "GET"))
        .collect();
    assert_eq!(gets[0]["kind"], "SPAN_KIND_CLIENT");
    assert_eq!(gets[0]["attributes"]["http.response.status_code"], 503);
    assert_eq!(gets[1]["attributes"]["http.response.status_code"], 200);
    assert_eq!(gets[0]["attributes"]["server.address"], "127.0.0.1");
    let sent = traceparents.lock().unwrap().clone();
    let expected: Vec<Option<String>> = gets
        .iter()
        .map(|g| {
            Some(format!(
                "00-{trace_id}-{}-01",
                g["span_id"].as_str().unwrap()
            ))
        })
        .collect();
    assert_eq!(
        sent, expected,
        "each request carries its client span as parent"
    );

    // The MCP step: the client span's context went in `_meta`; the imported
    // Axon's server span is its child, in the same trace, exported over gRPC.
    let remote = only_child(&outer, run, "step remote");
    let call = only_child(&outer, remote, "execute_tool inner__echo");
    let attempt = only_child(&outer, call, "attempt");
    let client_span = only_child(&outer, attempt, "tools/call echo");
    assert_eq!(client_span["kind"], "SPAN_KIND_CLIENT");
    assert_eq!(client_span["attributes"]["mcp.method.name"], "tools/call");
    let inner_spans: Vec<Value> = spans
        .iter()
        .filter(|s| s["service"] == "axon-inner")
        .cloned()
        .collect();
    assert!(inner_spans.iter().all(|s| s["transport"] == "grpc"));
    let served = inner_spans
        .iter()
        .find(|s| s["name"] == "tools/call echo")
        .unwrap_or_else(|| panic!("the inner server span: {inner_spans:#?}"));
    assert_eq!(served["kind"], "SPAN_KIND_SERVER");
    assert_eq!(served["trace_id"], trace_id);
    assert_eq!(served["parent_span_id"], client_span["span_id"]);
    only_child(&inner_spans, served, "execute_tool echo");

    // The HTTP API: the server span continues the header's trace; the bad
    // header starts a trace of its own.
    let posts = named(&inner_spans, "POST /v1/tools/{name}/call", 2);
    let continued = posts.iter().find(|s| s["trace_id"] == http_trace).unwrap();
    assert_eq!(continued["parent_span_id"], "b7ad6b7169203331");
    assert_eq!(continued["kind"], "SPAN_KIND_SERVER");
    assert_eq!(continued["attributes"]["http.response.status_code"], 200);
    only_child(&inner_spans, continued, "execute_tool echo");
    let fresh = posts.iter().find(|s| s["trace_id"] != http_trace).unwrap();
    assert_eq!(
        fresh["parent_span_id"], "",
        "a malformed traceparent is ignored"
    );

    // No span carries a tool's arguments.
    let text = std::fs::read_to_string(&receiver.out).unwrap();
    assert!(
        !text.contains("hello") && !text.contains("\"via\""),
        "{text}"
    );
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn a_bad_telemetry_setting_is_a_usage_error_naming_it() {
    let dir = std::env::temp_dir().join(format!("axon-otel-bad-{}", ulid::Ulid::new()));
    std::fs::create_dir_all(&dir).unwrap();
    let cases = [
        (
            "[telemetry]\nsampling_ratio = 2.0\n",
            vec![],
            "telemetry.sampling_ratio",
        ),
        (
            "[telemetry]\notlp_endpoint = \"localhost:4317\"\n",
            vec![],
            "telemetry.otlp_endpoint",
        ),
        ("[telemetry]\nenabled = true\n", vec![], "telemetry.enabled"),
        (
            "",
            vec![
                ("OTEL_EXPORTER_OTLP_ENDPOINT", "http://127.0.0.1:1"),
                ("OTEL_EXPORTER_OTLP_PROTOCOL", "http/json"),
            ],
            "OTEL_EXPORTER_OTLP_PROTOCOL",
        ),
    ];
    for (config, env, key) in cases {
        let path = dir.join("axon.toml");
        std::fs::write(&path, config).unwrap();
        let out = axon_testkit::command(env!("CARGO_BIN_EXE_axon"))
            .arg("--config")
            .arg(&path)
            .args(["call", "echo"])
            .env("AXON_STORE_PATH", dir.join("axon.db"))
            .envs(env)
            .output()
            .unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{config}: {stderr}");
        assert!(stderr.contains(key), "{config}: {stderr}");
    }
    let _ = std::fs::remove_dir_all(&dir);
}

/// `sampling_ratio = 0`: a run that starts its own trace exports nothing;
/// one that continues a caller's sampled trace (`TRACEPARENT …-01`) is
/// exported whole, under the caller's trace id (docs/telemetry.md).
#[tokio::test]
async fn a_sampled_callers_trace_is_kept_at_ratio_zero_and_a_new_one_is_not() {
    let dir = std::env::temp_dir().join(format!("axon-otel-ratio-{}", ulid::Ulid::new()));
    std::fs::create_dir_all(&dir).unwrap();
    let receiver = Receiver::start(&dir);
    let config = format!(
        "[telemetry]\notlp_endpoint = \"http://127.0.0.1:{}\"\nsampling_ratio = 0.0\n",
        receiver.http
    );
    std::fs::write(dir.join("axon.toml"), config).unwrap();
    std::fs::write(
        dir.join("plan.yaml"),
        "name: sampled\nsteps:\n  - id: say\n    tool: echo\n    params: {said: hi}\n",
    )
    .unwrap();
    let trace_id = "4bf92f3577b34da6a3ce929d0e0e4736";
    let run = |traceparent: Option<String>| {
        let mut cmd =
            tokio::process::Command::from(axon_testkit::command(env!("CARGO_BIN_EXE_axon")));
        cmd.arg("--config")
            .arg(dir.join("axon.toml"))
            .args(["run", "--json"])
            .arg(dir.join("plan.yaml"))
            .env("AXON_STORE_PATH", dir.join("store.db"))
            .env_remove("AXON_CONFIG")
            .env_remove("TRACEPARENT");
        if let Some(t) = traceparent {
            cmd.env("TRACEPARENT", t);
        }
        async move {
            let out = cmd.output().await.unwrap();
            assert!(out.status.success(), "{out:?}");
        }
    };
    run(None).await;
    assert_eq!(
        receiver.spans(),
        Vec::<Value>::new(),
        "nothing of a new trace at ratio 0"
    );
    run(Some(format!("00-{trace_id}-00f067aa0ba902b7-01"))).await;
    let spans = receiver.spans();
    for name in [
        "axon run",
        "run_plan sampled",
        "execute_tool echo",
        "attempt",
    ] {
        named(&spans, name, 1);
    }
    assert!(
        spans.iter().all(|s| s["trace_id"] == trace_id),
        "{spans:#?}"
    );
    let _ = std::fs::remove_dir_all(&dir);
}
