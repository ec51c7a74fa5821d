//! The real `axon` binary, end to end, each test on its own SQLite file.

mod common;
use common::local::stdout_json;
use common::repo_root;

use std::path::PathBuf;
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

use serde_json::{Value, json};

struct Axon {
    dir: PathBuf,
}

impl Axon {
    fn new() -> Self {
        let dir = std::env::temp_dir().join(format!("axon-cli-test-{}", ulid::Ulid::new()));
        std::fs::create_dir_all(&dir).unwrap();
        Axon { dir }
    }

    fn cmd(&self, args: &[&str]) -> Command {
        let mut c = axon_testkit::command(env!("CARGO_BIN_EXE_axon"));
        c.args(args)
            .env("AXON_STORE_PATH", self.dir.join("axon.db"))
            .env_remove("AXON_CONFIG")
            .current_dir(repo_root());
        c
    }

    fn run(&self, args: &[&str]) -> Output {
        self.cmd(args).output().unwrap()
    }

    fn file(&self, name: &str, text: &str) -> String {
        let path = self.dir.join(name);
        std::fs::write(&path, text).unwrap();
        path.to_string_lossy().into_owned()
    }
}

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

#[test]
fn call_with_valid_arguments_prints_the_data() {
    let axon = Axon::new();
    let o = axon.run(&[
        "call",
        "echo",
        "greeting=hi",
        "n=3",
        "--args",
        r#"{"list": [1]}"#,
    ]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert_eq!(
        stdout_json(&o),
        json!({"greeting": "hi", "n": 3, "list": [1]})
    );
}

#[test]
fn call_with_invalid_arguments_exits_2_naming_the_field() {
    let o = Axon::new().run(&["call", "sleep", "ms=-5"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains("/ms"), "{}", stderr(&o));
    let o = Axon::new().run(&["call", "no_such_tool"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains("no_such_tool"));
}

#[test]
fn a_failing_call_exits_1_and_json_mode_prints_one_result() {
    let o = Axon::new().run(&[
        "call",
        "flaky",
        "key=k",
        "fail_times=9",
        "kind=failed",
        "--json",
    ]);
    assert_eq!(o.status.code(), Some(1));
    let r = stdout_json(&o);
    assert_eq!(r["success"], false);
    assert_eq!(r["error"]["kind"], "failed");
    assert_eq!(r["attempts"], 1);
}

#[test]
fn run_json_prints_the_plan_result_field_by_field() {
    let axon = Axon::new();
    let o = axon.run(&[
        "run",
        "examples/plans/retries.yaml",
        "--json",
        "--run-id",
        "r-json",
    ]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let r = stdout_json(&o);
    assert_eq!(r["run_id"], "r-json");
    assert_eq!(r["correlation_id"], "r-json");
    assert_eq!(r["status"], "succeeded");
    assert!(r["duration_ms"].as_u64().unwrap() >= 150);
    let flaky = &r["steps"][0];
    assert_eq!(
        (
            flaky["index"].clone(),
            flaky["id"].clone(),
            flaky["tool"].clone()
        ),
        (json!(0), json!("flaky"), json!("flaky"))
    );
    assert_eq!(flaky["status"], "succeeded");
    assert_eq!(flaky["reason"], Value::Null);
    assert_eq!(flaky["result"]["attempts"], 3);
    assert_eq!(flaky["result"]["retry_delays_ms"], json!([50, 100]));
    assert_eq!(r["steps"][1]["result"]["data"], json!({"attempt": 3}));
}

#[test]
fn every_example_plan_runs() {
    let axon = Axon::new();
    for plan in ["sequential", "parallel", "mixed", "fallbacks", "retries"] {
        let o = axon.run(&["run", &format!("examples/plans/{plan}.yaml"), "--json"]);
        assert_eq!(o.status.code(), Some(0), "{plan}: {}", stderr(&o));
        assert_eq!(stdout_json(&o)["status"], "succeeded", "{plan}");
    }
}

#[test]
fn the_quickstart_shows_parallelism_retries_a_template_a_cache_hit_and_a_fallback() {
    let o = Axon::new().run(&["run", "examples/quickstart.yaml", "--json"]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let r = stdout_json(&o);
    let step = |id: &str| {
        r["steps"]
            .as_array()
            .unwrap()
            .iter()
            .find(|s| s["id"] == id)
            .unwrap()["result"]
            .clone()
    };
    // The two 300 ms steps ran together: each started before the other ended.
    // (Read off the steps' own clocks, so that a slow machine cannot fail it.)
    let span = |id: &str| {
        let r = step(id);
        let at: axon_core::Timestamp = serde_json::from_value(r["started_at"].clone()).unwrap();
        let start = at.unix_ms();
        (start, start + r["duration_ms"].as_u64().unwrap())
    };
    let (weather, flights) = (span("weather"), span("flights"));
    assert!(
        weather.0 < flights.1 && flights.0 < weather.1,
        "the two 300 ms steps ran one after the other: {weather:?} {flights:?}"
    );
    assert_eq!(step("rates")["attempts"], 3);
    assert_eq!(
        step("quote")["data"],
        json!({"eur_rate": 1.08, "waited_ms": 300})
    );
    assert_eq!(step("quote_again")["provenance"]["cache_hit"], true);
    assert_eq!(step("hotels")["fallback"]["index"], 0);
    assert_eq!(step("hotels")["data"]["source"], "fallback");
}

#[test]
fn validate_names_the_cycle_and_exits_2() {
    let axon = Axon::new();
    let plan = axon.file(
        "cycle.yaml",
        "steps:\n- {id: a, tool: echo, depends_on: [b]}\n- {id: b, tool: echo, depends_on: [a]}\n",
    );
    let o = axon.run(&["validate", &plan]);
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains("cycle: a → b → a"), "{}", stderr(&o));
    let o = axon.run(&["validate", "examples/plans/mixed.yaml"]);
    assert_eq!(o.status.code(), Some(0));
}

#[test]
fn run_graph_prints_the_dag_and_runs_nothing() {
    let axon = Axon::new();
    let plan = axon.file(
        "graph.yaml",
        "name: g\nsteps:\n- {id: a, tool: echo}\n- {id: b, tool: echo, depends_on: [a]}\n- {id: c, tool: echo, params: {x: '${steps.b.data}'}}\n",
    );
    let o = axon.run(&["run", &plan, "--graph", "dot"]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let dot = String::from_utf8_lossy(&o.stdout);
    assert!(dot.starts_with("digraph \"g\" {"), "{dot}");
    assert!(
        dot.contains("s0 -> s1;") && dot.contains("s1 -> s2 [style=dashed];"),
        "{dot}"
    );
    let o = axon.run(&["run", &plan, "--graph", "mermaid"]);
    let mermaid = String::from_utf8_lossy(&o.stdout);
    assert!(
        mermaid.contains("flowchart LR") && mermaid.contains("s1 -.-> s2"),
        "{mermaid}"
    );
    // Nothing ran: no history for any call.
    let o = axon.run(&["stats", "--json"]);
    assert!(
        !String::from_utf8_lossy(&o.stdout).contains("echo"),
        "{}",
        String::from_utf8_lossy(&o.stdout)
    );
    // A bad plan is still exit 2, naming the problem.
    let cyclic = axon.file(
        "cycle.yaml",
        "steps:\n- {id: a, tool: echo, depends_on: [a]}\n",
    );
    let o = axon.run(&["run", &cyclic, "--graph", "dot"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains("depends_on"), "{}", stderr(&o));
}

#[test]
fn history_and_stats_after_runs_persist_across_processes() {
    let axon = Axon::new();
    assert_eq!(
        axon.run(&["run", "examples/plans/fallbacks.yaml", "--run-id", "fb-run"])
            .status
            .code(),
        Some(0)
    );
    axon.run(&["call", "sleep", "ms=5", "--correlation-id", "c-1"]);
    // Each command is a new process: history comes back from the SQLite file.
    let o = axon.run(&["history", "fb-run"]);
    assert_eq!(o.status.code(), Some(0));
    let text = String::from_utf8_lossy(&o.stdout);
    assert!(text.contains("run fb-run — succeeded"), "{text}");
    assert!(
        text.contains("retried after"),
        "the timeline shows retry delays: {text}"
    );
    assert!(text.contains("fallback #0 served"), "{text}");
    let o = axon.run(&["history", "c-1", "--json"]);
    let entries = stdout_json(&o);
    assert_eq!(entries[0]["tool"], "sleep");
    let call_id = entries[0]["call_id"].as_str().unwrap().to_string();
    assert_eq!(
        stdout_json(&axon.run(&["history", &call_id, "--json"]))[0]["call_id"],
        call_id
    );
    let stats = stdout_json(&axon.run(&["stats", "--json"]));
    let tools: Vec<_> = stats
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["tool"].as_str().unwrap().to_string())
        .collect();
    assert!(
        tools.contains(&"flaky".to_string()) && tools.contains(&"sleep".to_string()),
        "{tools:?}"
    );
    // `axon stats` is a new process: its latency figures come from history.
    let sleep = stats
        .as_array()
        .unwrap()
        .iter()
        .find(|s| s["tool"] == "sleep")
        .unwrap();
    assert!(
        sleep["adaptive"]["latency"]["p50_ms"].as_f64().unwrap() >= 4.9,
        "seeded from history: {sleep}"
    );
    assert_eq!(sleep["adaptive"]["timeout_auto"], false);
    let o = axon.run(&["history", "nothing-here"]);
    assert_eq!(o.status.code(), Some(2));
}

#[test]
fn a_run_killed_mid_way_resumes_without_re_running_finished_steps() {
    let axon = Axon::new();
    let slow = "steps:\n- {id: first, tool: echo, params: {n: 1}}\n- {id: wait, tool: sleep, params: {ms: 3000}, depends_on: [first]}\n- {id: last, tool: echo, params: {from: '${steps.first.data.n}'}, depends_on: [wait]}\n";
    let plan = axon.file("resume.yaml", slow);
    let log = std::path::PathBuf::from(axon.file("killed.stderr", ""));
    let mut child = axon
        .cmd(&["run", &plan, "--run-id", "killed", "-q"])
        .stdout(Stdio::null())
        .stderr(std::fs::File::create(&log).unwrap())
        .spawn()
        .unwrap();
    // Wait until the first step is checkpointed, then kill -9.
    let deadline = Instant::now() + Duration::from_secs(90);
    loop {
        let o = axon.run(&["history", "killed", "--json"]);
        if o.status.success() && stdout_json(&o)["checkpoints"]["0"]["status"] == "succeeded" {
            break;
        }
        // A run that stopped on its own will never checkpoint: say why now.
        if let Some(status) = child.try_wait().unwrap() {
            panic!(
                "axon run exited ({status}) before its first checkpoint: {}",
                std::fs::read_to_string(&log).unwrap_or_default()
            );
        }
        assert!(
            Instant::now() < deadline,
            "the first step was never checkpointed; history says {}; the run's stderr: {}",
            String::from_utf8_lossy(&o.stdout),
            std::fs::read_to_string(&log).unwrap_or_default()
        );
        std::thread::sleep(Duration::from_millis(50));
    }
    child.kill().unwrap();
    child.wait().unwrap();
    // Resume: the same plan, the same run id (a different plan is refused).
    axon.file("changed.yaml", &slow.replace("3000", "10"));
    let changed = axon.run(&[
        "run",
        &axon.dir.join("changed.yaml").to_string_lossy(),
        "--run-id",
        "killed",
    ]);
    assert_eq!(changed.status.code(), Some(2), "{}", stderr(&changed));
    assert!(
        stderr(&changed).contains("different plan"),
        "{}",
        stderr(&changed)
    );
    let o = axon.run(&["run", &plan, "--run-id", "killed", "--json"]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let r = stdout_json(&o);
    assert_eq!(r["steps"][2]["result"]["data"], json!({"from": 1}));
    let calls = stdout_json(&axon.run(&["history", "killed", "--json"]));
    assert_eq!(calls["result"]["status"], "succeeded");
    // The call log of the run: `first` ran once, before the kill.
    let log = stdout_json(&axon.run(&[
        "history",
        r["steps"][0]["result"]["call_id"].as_str().unwrap(),
        "--json",
    ]));
    assert_eq!(log[0]["tool"], "echo");
    let entries = {
        let o = axon.run(&["stats", "--json"]);
        stdout_json(&o)
    };
    let echo_calls = entries
        .as_array()
        .unwrap()
        .iter()
        .find(|s| s["tool"] == "echo")
        .unwrap()["calls"]
        .clone();
    assert_eq!(
        echo_calls, 2,
        "first once before the kill, last once after; first was not re-run"
    );
}

#[test]
fn a_second_run_of_browser_act_steps_translates_nothing() {
    let axon = Axon::new();
    let page = repo_root().join("crates/axon-browser/tests/fixtures/roles.html");
    let plan = axon.file(
        "act.yaml",
        &format!(
            "steps:\n\
             - {{id: open, tool: browser_navigate, params: {{url: 'file://{}'}}}}\n\
             - {{id: tick, tool: browser_act, params: {{plan_step: \"Tick 'Send me news'\"}}, depends_on: [open]}}\n\
             - {{id: save, tool: browser_act, params: {{plan_step: \"Press the 'Save all' button\"}}, depends_on: [tick]}}\n\
             - {{id: out, tool: browser_get_text, params: {{selector: '#out'}}, depends_on: [save]}}\n",
            page.display()
        ),
    );
    let config = axon.file("axon.toml", "[browser]\nallow_file_urls = true\n");
    // Each run is its own process: the second finds the translations in the
    // store file.
    for (run, cache) in [("first", "miss"), ("second", "hit")] {
        let o = axon.run(&["--config", &config, "run", &plan, "--json"]);
        assert_eq!(o.status.code(), Some(0), "{run}: {}", stderr(&o));
        let r = stdout_json(&o);
        for step in [1, 2] {
            let data = &r["steps"][step]["result"]["data"];
            assert_eq!(data["cache"], cache, "{run} run, step {step}: {data:#}");
        }
        assert_eq!(r["steps"][3]["result"]["data"]["text"], "save all");
    }
}

#[test]
fn config_check_names_the_unknown_key_and_line() {
    let axon = Axon::new();
    let cfg = axon.file(
        "axon.toml",
        "[defaults]\ntimeout_ms = 1000\n\n[server]\nbindd = \"x\"\n",
    );
    let o = axon.run(&["config", "check", &cfg]);
    assert_eq!(o.status.code(), Some(2));
    let e = stderr(&o);
    assert!(e.contains("bindd") && e.contains("line 5"), "{e}");
    let good = axon.file(
        "good.toml",
        "[server]\nauth_tokens = [\"s3cret\"]\n[tools.echo]\ntimeout_ms = 5\n",
    );
    assert_eq!(axon.run(&["config", "check", &good]).status.code(), Some(0));
    let shown = axon.run(&["--config", &good, "config", "show"]);
    let text = String::from_utf8_lossy(&shown.stdout);
    assert!(text.contains("***") && !text.contains("s3cret"), "{text}");
}

#[test]
fn tools_in_openai_and_mcp_formats() {
    let axon = Axon::new();
    let openai = stdout_json(&axon.run(&["tools", "--format", "openai"]));
    let names: Vec<_> = openai
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["function"]["name"].as_str().unwrap())
        .collect();
    assert_eq!(names, common::BUILT_IN_TOOLS);
    assert_eq!(openai[0]["type"], "function");
    let mcp = stdout_json(&axon.run(&["tools", "--format", "mcp"]));
    let tool = |name: &str| {
        mcp["tools"]
            .as_array()
            .unwrap()
            .iter()
            .find(|t| t["name"] == name)
            .unwrap()
            .clone()
    };
    assert_eq!(tool("echo")["annotations"]["readOnlyHint"], true);
    let http = &tool("http_request");
    // Hints are listed only where they differ from MCP's defaults (open world,
    // not idempotent, destructive): http_request is only "not destructive".
    assert_eq!(http["annotations"]["destructiveHint"], false);
    assert!(http["annotations"].get("openWorldHint").is_none(), "{http}");
    assert!(
        http["annotations"].get("idempotentHint").is_none(),
        "{http}"
    );
    assert!(http["inputSchema"]["properties"]["url"].is_object());
    // A click may have happened: not idempotent, so not repeated after a timeout.
    let click = tool("browser_click");
    assert!(
        click["annotations"].get("idempotentHint").is_none(),
        "{click}"
    );
    assert_eq!(tool("browser_type")["annotations"]["idempotentHint"], true);
    assert!(tool("sleep")["inputSchema"]["properties"]["ms"].is_object());
}

/// The password check of a browser plan, from outside: a password typed into a
/// real page's password field, and a secret-named parameter, are nowhere in what
/// `axon` keeps or prints about the run (the SQLite file and its WAL, `axon
/// history`, JSON logs at -vv) while the page got the real text.
#[test]
fn a_browser_plans_password_is_nowhere_at_rest() {
    let axon = Axon::new();
    let fixtures = repo_root().join("crates/axon-browser/tests/fixtures/login.html");
    let plan = axon.file(
        "login.yaml",
        &format!(
            "steps:\n\
             - {{id: open, tool: browser_navigate, params: {{url: 'file://{}'}}}}\n\
             - {{id: pw, tool: browser_type, params: {{selector: '#pass', text: 'Pa55-w0rd-typed'}}, depends_on: [open]}}\n\
             - {{id: len, tool: browser_get_text, params: {{selector: '#pass_len'}}, depends_on: [pw]}}\n\
             - {{id: api, tool: echo, params: {{password: 'Pa55-w0rd-param', token: 'Tok3n-param'}}}}\n",
            fixtures.display()
        ),
    );
    let config = axon.file("axon.toml", "[browser]\nallow_file_urls = true\n");
    let o = axon
        .cmd(&[
            "--config", &config, "-vv", "run", &plan, "--run-id", "pw-check", "--json",
        ])
        .env("AXON_LOG_FORMAT", "json")
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let logs = stderr(&o);
    let result = String::from_utf8_lossy(&o.stdout).into_owned();
    // The page got the real text (its length, 15, was written by the page).
    let r: Value = serde_json::from_str(&result).unwrap();
    assert_eq!(
        r["steps"][2]["result"]["data"]["value"], "15",
        "{}",
        r["steps"][2]
    );
    let history = axon.run(&["history", "pw-check", "--json"]);
    let history = String::from_utf8_lossy(&history.stdout).into_owned();
    let calls: Value = serde_json::from_str(&history).unwrap();
    let typed = calls["calls"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["tool"] == "browser_type")
        .unwrap();
    assert_eq!(
        typed["data"]["password"], true,
        "browser_type saw a password field"
    );
    assert_eq!(typed["args"]["text"], "***");
    assert_eq!(
        calls["plan"]["steps"][1]["params"]["text"], "***",
        "the stored plan"
    );
    let mut db = Vec::new();
    for suffix in ["axon.db", "axon.db-wal"] {
        db.extend(std::fs::read(axon.dir.join(suffix)).unwrap_or_default());
    }
    for secret in ["Pa55-w0rd-typed", "Pa55-w0rd-param", "Tok3n-param"] {
        assert!(
            !history.contains(secret),
            "{secret} in axon history: {history}"
        );
        assert!(!logs.contains(secret), "{secret} in the logs");
        assert!(
            !db.windows(secret.len()).any(|w| w == secret.as_bytes()),
            "{secret} in the SQLite file"
        );
    }
}
