//! Browser sessions as handles, in plans: one run opens a session, logs in (a
//! cookie and a localStorage item) and saves its state to a file; the next run
//! starts a session from that file and finds both, while its default session
//! (the run's own) has neither. Sessions are browser contexts of their own.

mod support;

use axon_browser::BrowserConfig;
use axon_plan::{Plan, PlanRunner, RunOptions};
use serde_json::json;
use support::{failure, fixture};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_state_saved_by_one_run_is_reused_by_the_next() {
    let f = fixture(BrowserConfig::default()).await;
    let state = "login-state.json";
    let runner = PlanRunner::new(f.executor.clone());
    let first = Plan::parse(&format!(
        r##"
steps:
  - {{ id: s, tool: browser_session_new, params: {{ viewport: {{ width: 800, height: 600 }} }} }}
  - {{ id: login, tool: browser_navigate, params: {{ session: "${{steps.s.data.session}}", url: "{base}/cookie.html?set=alpha" }} }}
  - {{ id: size, tool: browser_get_page_state, params: {{ session: "${{steps.s.data.session}}" }}, depends_on: [login] }}
  - {{ id: save, tool: browser_session_save, params: {{ session: "${{steps.s.data.session}}", path: "{state}" }}, depends_on: [login] }}
  - {{ id: close, tool: browser_session_close, params: {{ session: "${{steps.s.data.session}}" }}, depends_on: [save, size] }}
"##,
        base = f.base,
    ))
    .unwrap();
    let result = runner.run(&first, RunOptions::default()).await.unwrap();
    assert!(result.success(), "{result:#?}");
    let size = &result.steps[2].result.as_ref().unwrap().data["viewport"];
    assert_eq!(size, &json!({"width": 800.0, "height": 600.0}));
    let saved: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(f.files.join(state)).unwrap()).unwrap();
    assert!(
        saved["cookies"]
            .as_array()
            .unwrap()
            .iter()
            .any(|c| c["name"] == "axon_sid" && c["value"] == "alpha"),
        "{saved}"
    );

    let second = Plan::parse(&format!(
        r##"
steps:
  - {{ id: s, tool: browser_session_new, params: {{ storage_state_path: "{state}" }} }}
  - {{ id: open, tool: browser_navigate, params: {{ session: "${{steps.s.data.session}}", url: "{base}/cookie.html" }} }}
  - {{ id: read, tool: browser_get_text, params: {{ session: "${{steps.s.data.session}}", selector: "#c" }}, depends_on: [open] }}
  - {{ id: mine, tool: browser_navigate, params: {{ url: "{base}/cookie.html" }}, depends_on: [read] }}
  - {{ id: own, tool: browser_get_text, params: {{ selector: "#c" }}, depends_on: [mine] }}
"##,
        base = f.base,
    ))
    .unwrap();
    let result = runner.run(&second, RunOptions::default()).await.unwrap();
    assert!(result.success(), "{result:#?}");
    let text = |i: usize| {
        result.steps[i].result.as_ref().unwrap().data["text"]
            .as_str()
            .unwrap()
            .to_string()
    };
    let restored = text(2);
    assert!(
        restored.contains("axon_sid=alpha") && restored.contains("ls=alpha"),
        "{restored}"
    );
    let own = text(4);
    assert!(
        !own.contains("alpha"),
        "the run's default session saw it: {own}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn handles_must_be_open_and_their_state_stays_out_of_history() {
    let f = fixture(BrowserConfig::default()).await;
    // A handle nobody opened (or one closed) is a clear failure, not a new page.
    let r = f
        .once(
            "run",
            "browser_get_page_state",
            json!({"session": "bs-nope"}),
        )
        .await;
    let (kind, code) = failure(&r);
    assert_eq!(kind, axon_core::ErrorKind::Failed);
    assert_eq!(code.as_deref(), Some("unknown_session"));

    let opened = f
        .call(
            "run",
            "browser_session_new",
            json!({"storage_state": {"cookies": [{"name": "tok", "value": "s3cret", "domain": "127.0.0.1", "path": "/"}]}}),
        )
        .await;
    assert!(opened.success, "{opened:?}");
    let session = opened.data["session"].as_str().unwrap().to_string();
    let listed = f.call("run", "browser_session_list", json!({})).await;
    assert!(
        listed.data["sessions"]
            .as_array()
            .unwrap()
            .iter()
            .any(|s| s["session"] == session.as_str() && s["handle"] == true),
        "{listed:?}"
    );
    let saved = f
        .call("run", "browser_session_save", json!({"session": session}))
        .await;
    assert!(saved.success, "{saved:?}");
    // The caller gets the cookie …
    assert!(saved.data["storage_state"].to_string().contains("s3cret"));
    // … history does not, neither from the arguments nor from the result.
    let history = f.executor.history().by_correlation("run").await.unwrap();
    let stored = serde_json::to_string(&history).unwrap();
    assert!(!stored.contains("s3cret"), "{stored}");

    let closed = f
        .call("run", "browser_session_close", json!({"session": session}))
        .await;
    assert_eq!(closed.data["closed"], true);
    let again = f
        .once(
            "run",
            "browser_click",
            json!({"session": session, "selector": "p"}),
        )
        .await;
    assert_eq!(failure(&again).1.as_deref(), Some("unknown_session"));
}
