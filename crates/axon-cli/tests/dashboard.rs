//! The dashboard in a real headless Chromium, driven by Axon's own browser tools
//! through an executor, against a real `axon serve`: the runs page lists a run,
//! the run page's DAG goes live from running to the final states (a retried
//! step, a step served by its fallback), a step's panel shows its retry
//! reasons, and the tools page resets an open breaker. Each page's screenshot
//! is written to `target/dashboard/` (two of them are in the README).

mod common;

use axon_core::Executor;
use common::dashboard::{act, browser};
use serde_json::{Value, json};
use std::process::{Child, Stdio};

struct Served {
    child: Child,
    base: String,
}

impl Drop for Served {
    fn drop(&mut self) {
        common::stop(&mut self.child);
    }
}

fn serve(dir: &std::path::Path) -> Served {
    serve_with(dir, "")
}

/// `axon serve` with `extra` at the end of its config.
fn serve_with(dir: &std::path::Path, extra: &str) -> Served {
    let config = dir.join("axon.toml");
    std::fs::write(
        &config,
        format!("[defaults.retry]\ninitial_delay_ms = 10\njitter = \"none\"\n\n[tools.flaky.breaker]\nfailure_threshold = 2\nopen_ms = 600000\n{extra}"),
    )
    .unwrap();
    let mut child = axon_testkit::command(env!("CARGO_BIN_EXE_axon"))
        .arg("--config")
        .arg(&config)
        .args(["serve", "--bind", "127.0.0.1:0"])
        .env("AXON_STORE_PATH", dir.join("axon.db"))
        .env_remove("AXON_CONFIG")
        .stdout(Stdio::piped())
        .stderr(std::fs::File::create(dir.join("serve.log")).unwrap())
        .spawn()
        .unwrap();
    let base = common::listening_url(&mut child);
    Served { child, base }
}

/// flaky's entry in `GET /v1/breakers`.
async fn flaky_breaker(http: &reqwest::Client, base: &str) -> Value {
    let all: Value = http
        .get(format!("{base}/v1/breakers"))
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    all["breakers"]
        .as_array()
        .unwrap()
        .iter()
        .find(|x| x["tool"] == "flaky")
        .unwrap()
        .clone()
}

async fn screenshot(b: &Executor, name: &str) {
    let dir = common::repo_root().join("target/dashboard");
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join(format!("{name}.png"));
    act(
        b,
        "browser_take_screenshot",
        json!({"path": format!("{name}.png"), "full_page": true, "overwrite": true}),
    )
    .await;
    assert!(std::fs::metadata(&path).unwrap().len() > 1000);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_dashboard_shows_a_run_live_its_retries_and_resets_a_breaker() {
    axon_http_tool::install_crypto_provider();
    let dir = std::env::temp_dir().join(format!("axon-dash-{}", ulid::Ulid::new()));
    std::fs::create_dir_all(&dir).unwrap();
    let s = serve(&dir);
    let http = reqwest::Client::new();
    let key = ulid::Ulid::new().to_string();

    // `hold` waits on a gate this test opens once the page has shown the run
    // running: the run is live while the page opens, however slow the machine.
    let (open_gate, gate_url) = common::gate().await;
    let plan = json!({"name": "dashboard demo", "steps": [
        {"id": "hold", "tool": "http_request", "params": {"url": gate_url}},
        {"id": "flaky_fetch", "tool": "flaky", "depends_on": ["hold"],
         "params": {"key": format!("{key}-a"), "fail_times": 1, "data": {"rows": 3}}},
        {"id": "primary", "tool": "flaky", "depends_on": ["hold"],
         "params": {"key": format!("{key}-b"), "fail_times": 99, "kind": "failed"},
         "fallbacks": [{"tool": "echo", "params": {"served_by": "fallback"}}]},
        {"id": "report", "tool": "echo", "depends_on": ["flaky_fetch", "primary"],
         "params": {"fetched": "${steps.flaky_fetch.data}"}},
    ]});
    let r = http
        .post(format!("{}/v1/runs?run_id=dash-1", s.base))
        .json(&plan)
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 202);

    let b = browser();
    // The runs page lists it, linked.
    act(
        &b,
        "browser_navigate",
        json!({"url": format!("{}/", s.base)}),
    )
    .await;
    act(
        &b,
        "browser_wait_for_element",
        json!({"selector": "a[href='/runs/dash-1']", "timeout_ms": 10000}),
    )
    .await;
    screenshot(&b, "runs").await;

    // The run page, opened while the run is running, follows it to the end.
    act(
        &b,
        "browser_click",
        json!({"selector": "a[href='/runs/dash-1']"}),
    )
    .await;
    act(
        &b,
        "browser_wait_for_element",
        json!({"selector": "[data-step='hold']", "timeout_ms": 10000}),
    )
    .await;
    let early = act(&b, "browser_get_text", json!({"selector": "main"})).await;
    assert!(
        early.data["text"]
            .as_str()
            .unwrap_or_default()
            .contains("running"),
        "the page shows the run running: {:?}",
        early.data
    );
    open_gate.send(true).unwrap();
    act(
        &b,
        "browser_wait_for_element",
        json!({"selector": "[data-step='report'][data-state='succeeded']", "timeout_ms": 15000}),
    )
    .await;
    for (step, state) in [
        ("hold", "succeeded"),
        ("flaky_fetch", "succeeded"),
        ("primary", "fallback"),
    ] {
        act(
            &b,
            "browser_verify_element_exists",
            json!({"selector": format!("[data-step='{step}'][data-state='{state}']")}),
        )
        .await;
    }
    // The retried step's panel says why it was retried and how long it waited.
    act(
        &b,
        "browser_click",
        json!({"selector": "[data-step='flaky_fetch']"}),
    )
    .await;
    let panel = act(&b, "browser_get_text", json!({"selector": "#step-detail"})).await;
    let text = panel.data["text"].as_str().unwrap_or_default().to_string();
    assert!(text.contains("2 attempt(s)"), "{text}");
    assert!(text.contains("transient"), "the retry reason: {text}");
    assert!(text.contains("waited 10 ms"), "the delay: {text}");
    screenshot(&b, "run").await;
    // The graph's steps are buttons with names, in the tree an agent reads.
    let snap = act(&b, "browser_snapshot", json!({}))
        .await
        .data
        .to_string();
    for name in [
        "Step flaky_fetch, flaky: succeeded",
        "Step primary, flaky: fallback",
        "Step report, echo: succeeded",
    ] {
        assert!(snap.contains(name), "{name} in {snap}");
    }
    act(
        &b,
        "browser_click",
        json!({"selector": "[data-step='primary']"}),
    )
    .await;
    let panel = act(&b, "browser_get_text", json!({"selector": "#step-detail"})).await;
    assert!(
        panel.data["text"]
            .as_str()
            .unwrap_or_default()
            .contains("Served by fallback #0"),
        "{:?}",
        panel.data
    );

    // On a phone-sized window the page does not scroll sideways: the graph and
    // the tables scroll inside their own boxes.
    let phone = act(
        &b,
        "browser_session_new",
        json!({"viewport": {"width": 390, "height": 844}}),
    )
    .await;
    let session = phone.data["session"].as_str().unwrap().to_string();
    act(
        &b,
        "browser_navigate",
        json!({"url": format!("{}/runs/dash-1?step=flaky_fetch", s.base), "session": session}),
    )
    .await;
    act(
        &b,
        "browser_wait_for_element",
        json!({"selector": "#step-detail", "session": session, "timeout_ms": 10000}),
    )
    .await;
    act(
        &b,
        "browser_scroll",
        json!({"direction": "right", "pixels": 400, "session": session}),
    )
    .await;
    let state = act(&b, "browser_get_page_state", json!({"session": session})).await;
    assert_eq!(state.data["viewport"]["width"], 390.0);
    assert_eq!(
        state.data["scroll"]["x"], 0.0,
        "no sideways scroll: {:?}",
        state.data
    );
    act(
        &b,
        "browser_take_screenshot",
        json!({"session": session, "path": "run-narrow.png", "overwrite": true}),
    )
    .await;

    // Open flaky's breaker (two failures), then reset it from the tools page.
    for _ in 0..2 {
        http.post(format!("{}/v1/tools/flaky/call", s.base))
            .json(
                &json!({"args": {"key": format!("{key}-c"), "fail_times": 99},
                          "policy": {"retry": {"max_attempts": 1}}}),
            )
            .send()
            .await
            .unwrap();
    }
    let breaker = flaky_breaker(&http, &s.base).await;
    assert_eq!(breaker["state"], "open");
    let wait = breaker["next_probe_ms"]
        .as_u64()
        .expect("an open breaker says when it probes next");
    assert!(wait > 500_000 && wait <= 600_000, "{wait}");
    act(
        &b,
        "browser_click",
        json!({"role": "link", "name": "Tools"}),
    )
    .await;
    act(
        &b,
        "browser_wait_for_element",
        json!({"role": "button", "name": "Reset the breaker of flaky", "timeout_ms": 10000}),
    )
    .await;
    // Controls have accessible names: the snapshot an agent reads finds them.
    let snap = act(&b, "browser_snapshot", json!({})).await;
    let tree = snap.data.to_string();
    assert!(tree.contains("Reset the breaker of flaky"), "{tree}");
    let row = act(
        &b,
        "browser_get_text",
        json!({"selector": "tr[data-tool='flaky']"}),
    )
    .await;
    assert!(
        row.data["text"]
            .as_str()
            .unwrap_or_default()
            .contains("next probe in"),
        "{:?}",
        row.data
    );
    screenshot(&b, "tools").await;
    // A tool's row opens on its schema and the policy in force (the config's
    // failure_threshold of 2 for flaky).
    act(
        &b,
        "browser_click",
        json!({"selector": "tr[data-tool='flaky'] summary"}),
    )
    .await;
    act(
        &b,
        "browser_wait_for_element",
        json!({"selector": "tr[data-tool='flaky'] .policy[data-loaded]", "timeout_ms": 10000}),
    )
    .await;
    let policy = act(
        &b,
        "browser_get_text",
        json!({"selector": "tr[data-tool='flaky'] .policy"}),
    )
    .await;
    let text = policy.data["text"].as_str().unwrap_or_default();
    assert!(text.contains("\"failure_threshold\": 2"), "{text}");
    act(
        &b,
        "browser_click",
        json!({"role": "button", "name": "Reset the breaker of flaky"}),
    )
    .await;
    act(
        &b,
        "browser_wait_for_element",
        json!({"selector": "tr[data-tool='flaky'] .s-closed", "timeout_ms": 10000}),
    )
    .await;
    assert_eq!(flaky_breaker(&http, &s.base).await["state"], "closed");

    // History: searched by the run id.
    act(
        &b,
        "browser_navigate",
        json!({"url": format!("{}/history", s.base)}),
    )
    .await;
    act(
        &b,
        "browser_type",
        json!({"selector": "#history-id", "text": "dash-1"}),
    )
    .await;
    act(&b, "browser_press_key", json!({"key": "Enter"})).await;
    act(
        &b,
        "browser_wait_for_element",
        json!({"has_text": "call(s)", "timeout_ms": 10000}),
    )
    .await;
    let page = act(&b, "browser_get_text", json!({"selector": "main"})).await;
    let text = page.data["text"].as_str().unwrap_or_default();
    assert!(text.contains("flaky") && text.contains("echo"), "{text}");
    screenshot(&b, "history").await;
    let _ = std::fs::remove_dir_all(&dir);
}

/// A shop page for the recorded run: Add works, Pay is disabled, and the page
/// logs a console error.
const SHOP: &str = "<!doctype html><title>Shop</title>\
<style>body{font:32px sans-serif;margin:48px}button{font-size:32px;padding:12px 32px;margin-right:16px}</style>\
<h1>Shop</h1>\
<p id=cart>Cart: empty</p>\
<button id=add onclick=\"document.getElementById('cart').textContent='Cart: 1 book'\">Add</button>\
<button id=pay disabled>Pay</button><script>console.error('payment widget failed to load')</script>";

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_failed_browser_step_shows_the_page_before_and_after_it() {
    axon_http_tool::install_crypto_provider();
    let dir = std::env::temp_dir().join(format!("axon-dash-{}", ulid::Ulid::new()));
    std::fs::create_dir_all(&dir).unwrap();
    let files = dir.join("files");
    let s = serve_with(
        &dir,
        &format!(
            "[browser]\nrecord = \"always\"\n[files]\ndir = {:?}\n",
            files.display().to_string()
        ),
    );
    let shop = common::served::spawn_app(axum::Router::new().route(
        "/",
        axum::routing::get(|| async { axum::response::Html(SHOP) }),
    ))
    .await;
    let plan = json!({"name": "checkout", "steps": [
        {"id": "open", "tool": "browser_navigate", "params": {"url": format!("http://{shop}/")}},
        {"id": "add", "tool": "browser_click", "depends_on": ["open"], "params": {"selector": "#add"}},
        {"id": "pay", "tool": "browser_click", "depends_on": ["add"],
         "params": {"selector": "#pay", "timeout_ms": 1000}},
    ]});
    let http = reqwest::Client::new();
    let run: Value = http
        .post(format!("{}/v1/runs?run_id=shop-1&wait=true", s.base))
        .json(&plan)
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    assert_eq!(run["status"], "failed", "{run}");
    let steps = run["steps"].as_array().unwrap();
    let pay = steps.iter().find(|x| x["id"] == "pay").unwrap();
    let add = steps.iter().find(|x| x["id"] == "add").unwrap();
    let pay_call = pay["result"]["call_id"].as_str().unwrap();

    // The API: the failed step's frame, with the frame before it, stored in
    // the files folder (the session is gone with the run).
    let frame: Value = http
        .get(format!("{}/v1/calls/{pay_call}/frame", s.base))
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    assert_eq!(frame["ok"], false, "{frame}");
    assert_eq!(frame["error"]["code"], "disabled", "{frame}");
    assert!(frame["image"].as_str().is_some_and(|i| i.len() > 1000));
    assert_eq!(frame["before"]["call_id"], add["result"]["call_id"]);
    assert!(frame["before"]["image"].as_str().is_some());
    assert!(files.join(".frames").is_dir(), "kept in the files folder");
    let missing = http
        .get(format!("{}/v1/calls/01NOSUCHCALL/frame", s.base))
        .send()
        .await
        .unwrap();
    assert_eq!(missing.status(), 404);

    // The run page: the failed step's panel shows both frames.
    let b = browser();
    act(
        &b,
        "browser_navigate",
        json!({"url": format!("{}/runs/shop-1?step=pay", s.base)}),
    )
    .await;
    act(
        &b,
        "browser_wait_for_element",
        json!({"selector": "figure.frame.failed .shot img", "timeout_ms": 10000}),
    )
    .await;
    let panel = act(&b, "browser_get_text", json!({"selector": "#step-detail"})).await;
    let text = panel.data["text"].as_str().unwrap_or_default();
    for wanted in ["Before", "After (failed)", "disabled", "browser_click"] {
        assert!(text.contains(wanted), "{wanted:?} in {text}");
    }
    // Each frame boxes the element its action took.
    for frame in ["figure.frame:not(.failed)", "figure.frame.failed"] {
        act(
            &b,
            "browser_wait_for_element",
            json!({"selector": format!("{frame} .target:not([hidden])"), "timeout_ms": 5000}),
        )
        .await;
    }
    screenshot(&b, "step-frames").await;

    // The history page plays the run's frames as a strip.
    act(
        &b,
        "browser_navigate",
        json!({"url": format!("{}/history/shop-1", s.base)}),
    )
    .await;
    act(
        &b,
        "browser_wait_for_element",
        json!({"selector": ".strip button", "timeout_ms": 10000}),
    )
    .await;
    let tree = act(&b, "browser_snapshot", json!({}))
        .await
        .data
        .to_string();
    for name in [
        "Frame 1: browser_navigate",
        "Frame 2: browser_click",
        "Frame 3: browser_click (failed)",
    ] {
        assert!(tree.contains(name), "{name:?} in {tree}");
    }
    // The failed frame is open first; the first frame holds the page's
    // console error.
    screenshot(&b, "history-frames").await;
    act(
        &b,
        "browser_click",
        json!({"role": "button", "name": "Frame 1: browser_navigate"}),
    )
    .await;
    let page = act(&b, "browser_get_text", json!({"selector": "main"})).await;
    let text = page.data["text"].as_str().unwrap_or_default();
    assert!(
        text.contains("Frame 1 of 3") && text.contains("payment widget failed to load"),
        "{text}"
    );
    let _ = std::fs::remove_dir_all(&dir);
}
