//! JavaScript dialogs never block (issue 38's first attack): a button whose
//! handler calls `confirm()` made `browser_click` time out after 31 s and
//! every later call in the session fail. Each dialog is answered at once:
//! dismissed (`confirm` → false, `prompt` → null), `beforeunload` accepted.
//! Real Chromium, loopback pages.

mod support;

use std::time::{Duration, Instant};

use axon_browser::BrowserConfig;
use serde_json::json;
use support::fixture;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn alert_confirm_and_prompt_are_answered_and_nothing_waits_on_them() {
    let f = fixture(BrowserConfig::default()).await;
    f.open("s", "dialogs.html").await;
    for (button, status) in [
        ("#confirm", "kept"),
        ("#alert", "alerted"),
        ("#prompt", "name: null"),
    ] {
        let started = Instant::now();
        let click = f
            .once("s", "browser_click", json!({ "selector": button }))
            .await;
        assert!(click.success, "{button}: {click:?}");
        assert!(
            started.elapsed() < Duration::from_secs(5),
            "{button} took {:?}",
            started.elapsed()
        );
        assert_eq!(f.text("s", "#status").await, status, "{button}");
        // The click that opened it says what was asked and how it was answered.
        let kind = &button[1..];
        assert_eq!(click.data["dialogs"][0]["type"], kind, "{click:?}");
        assert_eq!(click.data["dialogs"][0]["answered"], "dismissed");
        assert_eq!(click.data["dialogs"].as_array().unwrap().len(), 1);
    }
    let r = f
        .once("s", "browser_click", json!({"selector": "#confirm"}))
        .await;
    assert_eq!(r.data["dialogs"][0]["message"], "Delete it?");
    // Reported once: the next call has nothing to add.
    let next = f.once("s", "browser_get_page_state", json!({})).await;
    assert!(next.data.get("dialogs").is_none(), "{next:?}");
    // The session goes on as if nothing happened.
    let state = f.once("s", "browser_get_page_state", json!({})).await;
    assert!(state.success, "{state:?}");
    f.browsers.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_page_that_alerts_while_loading_still_loads() {
    let f = fixture(BrowserConfig::default()).await;
    let started = Instant::now();
    let r = f
        .once(
            "s",
            "browser_navigate",
            json!({"url": format!("{}/dialog_on_load.html", f.base)}),
        )
        .await;
    assert!(r.success, "{r:?}");
    assert!(
        started.elapsed() < Duration::from_secs(5),
        "{:?}",
        started.elapsed()
    );
    assert_eq!(r.data["dialogs"][0]["message"], "Welcome!", "{r:?}");
    assert_eq!(f.text("s", "#status").await, "greeted");
    f.browsers.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_page_cannot_refuse_to_be_left() {
    let f = fixture(BrowserConfig::default()).await;
    f.open("s", "dialogs.html").await;
    // A click gives the page the user activation `beforeunload` needs.
    let arm = f
        .once("s", "browser_click", json!({"selector": "#arm"}))
        .await;
    assert!(arm.success, "{arm:?}");
    assert_eq!(f.text("s", "#status").await, "armed");
    let started = Instant::now();
    let away = f
        .once(
            "s",
            "browser_navigate",
            json!({"url": format!("{}/dialog_on_load.html", f.base)}),
        )
        .await;
    assert!(away.success, "{away:?}");
    let kinds: Vec<&str> = away.data["dialogs"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|d| d["type"].as_str())
        .collect();
    assert_eq!(kinds, ["beforeunload", "alert"], "{away:?}");
    assert_eq!(away.data["dialogs"][0]["answered"], "accepted");
    assert!(
        started.elapsed() < Duration::from_secs(5),
        "{:?}",
        started.elapsed()
    );
    assert_eq!(f.text("s", "#status").await, "greeted");
    f.browsers.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_session_that_holds_dialogs_lets_the_agent_answer_and_never_waits() {
    let f = fixture(BrowserConfig::default()).await;
    let new = f
        .once("", "browser_session_new", json!({"hold_dialogs": true}))
        .await;
    let s = new.data["session"].as_str().unwrap().to_string();
    let call = |tool: &'static str, args: serde_json::Value| {
        let mut args = args;
        args["session"] = json!(s);
        f.once("", tool, args)
    };
    let nav = call(
        "browser_navigate",
        json!({"url": format!("{}/dialogs.html", f.base)}),
    )
    .await;
    assert!(nav.success, "{nav:?}");
    let none = call("browser_handle_dialog", json!({"accept": true})).await;
    assert_eq!(support::failure(&none).1.as_deref(), Some("no_dialog"));

    // The click returns as soon as the dialog opens, saying what it asks.
    let started = Instant::now();
    let click = call("browser_click", json!({"selector": "#confirm"})).await;
    assert!(
        started.elapsed() < Duration::from_secs(5),
        "{:?}",
        started.elapsed()
    );
    let (kind, code) = support::failure(&click);
    assert_eq!(code.as_deref(), Some("dialog_open"), "{click:?}");
    assert_eq!(
        kind,
        axon_core::ErrorKind::Failed,
        "not retried: the click happened"
    );
    assert!(click.error.as_ref().unwrap().message.contains("Delete it?"));
    // Every other call says so at once, until the dialog is answered.
    let started = Instant::now();
    let read = call("browser_get_text", json!({"selector": "#status"})).await;
    assert_eq!(support::failure(&read).1.as_deref(), Some("dialog_open"));
    assert!(
        started.elapsed() < Duration::from_secs(2),
        "{:?}",
        started.elapsed()
    );
    // An action too (it answers with the page's changes, and does not
    // wait on a page that runs no script to look at it first).
    let started = Instant::now();
    let again = call("browser_click", json!({"selector": "#status"})).await;
    assert_eq!(support::failure(&again).1.as_deref(), Some("dialog_open"));
    assert!(
        started.elapsed() < Duration::from_secs(2),
        "{:?}",
        started.elapsed()
    );
    let ok = call("browser_handle_dialog", json!({"accept": true})).await;
    assert!(ok.success, "{ok:?}");
    assert_eq!(ok.data["type"], "confirm");
    assert_eq!(ok.data["answered"], "accepted");
    let read = call("browser_get_text", json!({"selector": "#status"})).await;
    assert_eq!(read.data["text"], "deleted", "{read:?}");

    // A prompt takes the agent's answer.
    let click = call("browser_click", json!({"selector": "#prompt"})).await;
    assert_eq!(support::failure(&click).1.as_deref(), Some("dialog_open"));
    let ok = call(
        "browser_handle_dialog",
        json!({"accept": true, "prompt_text": "grace"}),
    )
    .await;
    assert!(ok.success, "{ok:?}");
    let read = call("browser_get_text", json!({"selector": "#status"})).await;
    assert_eq!(read.data["text"], "name: grace", "{read:?}");
    f.browsers.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn twenty_steps_with_a_dialog_on_every_click_finish() {
    let f = fixture(BrowserConfig::default()).await;
    f.open("s", "dialogs.html").await;
    let started = Instant::now();
    for step in 0..20 {
        let button = ["#confirm", "#alert", "#prompt"][step % 3];
        let click = f
            .once("s", "browser_click", json!({"selector": button}))
            .await;
        assert!(click.success, "step {step}: {click:?}");
        assert_eq!(
            click.data["dialogs"].as_array().map(Vec::len),
            Some(1),
            "step {step}"
        );
    }
    assert!(
        started.elapsed() < Duration::from_secs(20),
        "{:?}",
        started.elapsed()
    );
    // The last of the twenty, step 19, was an alert.
    assert_eq!(f.text("s", "#status").await, "alerted");
    f.browsers.shutdown().await;
}
