//! `browser_act` speaks the actions real pages need (issue 38): a step that
//! asks to hover, drag, upload, go back, answer a held dialog or switch tabs
//! is carried out with that action by the heuristic, and its replayable call
//! is the browser tool that does it. Real Chromium, the pages of the web
//! scenarios (web.html, dialogs.html, tabs.html).

mod support;

use axon_browser::BrowserConfig;
use serde_json::{Value, json};
use support::{act_fixture, failure};

/// One step in `session`: its action and its replay call's tool.
async fn step(f: &support::Fixture, session: &str, text: &str) -> (String, Value) {
    let r = f
        .call(session, "browser_act", json!({"plan_step": text}))
        .await;
    assert!(r.success, "{text:?}: {r:?}");
    (
        r.data["action"].as_str().unwrap_or_default().to_string(),
        r.data["call"].clone(),
    )
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn hover_drag_upload_and_back_are_steps() {
    let f = act_fixture(BrowserConfig::default()).await;
    std::fs::create_dir_all(&f.files).unwrap();
    std::fs::write(f.files.join("report.pdf"), b"%PDF-1.4 twelve").unwrap();
    f.open("s", "web.html").await;

    let (action, call) = step(&f, "s", "Hover over the Products menu").await;
    assert_eq!(action, "hover");
    assert_eq!(call["tool"], "browser_hover");
    let (action, _) = step(&f, "s", "Click Laptops").await;
    assert_eq!(action, "click");
    assert_eq!(f.text("s", "#status").await, "laptops chosen");

    let (action, call) = step(&f, "s", "Drag Item 3 above Item 1").await;
    assert_eq!(action, "drag");
    assert_eq!(call["tool"], "browser_drag", "{call}");
    assert_eq!(f.text("s", "#status").await, "order: item3,item1,item2");

    let (action, call) = step(&f, "s", "Upload report.pdf").await;
    assert_eq!(action, "upload");
    assert_eq!(call["tool"], "browser_upload_file");
    assert_eq!(call["args"]["paths"], json!(["report.pdf"]));
    assert_eq!(
        f.text("s", "#status").await,
        "uploaded report.pdf (15 bytes)"
    );
    // A file that is not in the files folder is not uploaded.
    let outside = f
        .call(
            "s",
            "browser_act",
            json!({"plan_step": "Upload ../secret.txt"}),
        )
        .await;
    assert!(!outside.success, "{outside:?}");

    step(&f, "s", "Click Next page").await;
    assert_eq!(f.text("s", "#status").await, "page 2");
    let (action, call) = step(&f, "s", "Go back").await;
    assert_eq!(action, "go_back");
    assert_eq!(call["tool"], "browser_navigate_back");
    assert_eq!(f.text("s", "#status").await, "back at the start");
    let (action, _) = step(&f, "s", "Go forward again").await;
    assert_eq!(action, "go_forward");
    f.browsers.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_held_dialog_is_answered_by_a_step_and_blocks_other_steps() {
    let f = act_fixture(BrowserConfig {
        hold_dialogs: true,
        ..BrowserConfig::default()
    })
    .await;
    f.open("s", "dialogs.html").await;
    let click = f
        .call("s", "browser_act", json!({"plan_step": "Click Delete"}))
        .await;
    assert_eq!(
        failure(&click).1.as_deref(),
        Some("dialog_open"),
        "{click:?}"
    );
    // A step that does not answer it says what is open, at once.
    let other = f
        .call("s", "browser_act", json!({"plan_step": "Click Alert"}))
        .await;
    let (_, code) = failure(&other);
    assert_eq!(code.as_deref(), Some("dialog_open"), "{other:?}");
    assert!(other.error.unwrap().message.contains("Delete it?"));
    let (action, call) = step(&f, "s", "Accept the dialog").await;
    assert_eq!(action, "handle_dialog");
    assert_eq!(call["tool"], "browser_handle_dialog");
    assert_eq!(call["args"]["accept"], true);
    assert_eq!(f.text("s", "#status").await, "deleted");

    let click = f
        .call("s", "browser_act", json!({"plan_step": "Click Delete"}))
        .await;
    assert_eq!(failure(&click).1.as_deref(), Some("dialog_open"));
    step(&f, "s", "Cancel it").await;
    assert_eq!(f.text("s", "#status").await, "kept");

    let click = f
        .call("s", "browser_act", json!({"plan_step": "Click Name"}))
        .await;
    assert_eq!(failure(&click).1.as_deref(), Some("dialog_open"));
    let (_, call) = step(&f, "s", "Answer the prompt with 'grace'").await;
    assert_eq!(call["args"]["prompt_text"], "grace");
    assert_eq!(f.text("s", "#status").await, "name: grace");
    f.browsers.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn tabs_are_switched_and_closed_by_steps() {
    let f = act_fixture(BrowserConfig::default()).await;
    f.open("s", "tabs.html").await;
    // One tab: nothing to switch to.
    let lonely = f
        .call(
            "s",
            "browser_act",
            json!({"plan_step": "Switch to the new tab"}),
        )
        .await;
    assert_eq!(
        failure(&lonely).1.as_deref(),
        Some("element_not_found"),
        "{lonely:?}"
    );

    step(&f, "s", "Click Open the welcome page in a new tab").await;
    // The session followed the new tab; back to the first, then the new one.
    let (action, call) = step(&f, "s", "Switch back to the original tab").await;
    assert_eq!(action, "select_tab");
    assert_eq!(call["args"], json!({"action": "select", "index": 0}));
    let state = f.call("s", "browser_get_page_state", json!({})).await;
    assert!(
        state.data["url"].as_str().unwrap().ends_with("tabs.html"),
        "{state:?}"
    );
    let (_, call) = step(&f, "s", "Switch to the new tab").await;
    assert_eq!(call["args"]["index"], 1);
    let state = f.call("s", "browser_get_page_state", json!({})).await;
    assert!(
        state.data["url"].as_str().unwrap().contains("welcome.html"),
        "{state:?}"
    );
    let (action, _) = step(&f, "s", "Close this tab").await;
    assert_eq!(action, "close_tab");
    let state = f.call("s", "browser_get_page_state", json!({})).await;
    assert!(
        state.data["url"].as_str().unwrap().ends_with("tabs.html"),
        "{state:?}"
    );
    f.browsers.shutdown().await;
}
