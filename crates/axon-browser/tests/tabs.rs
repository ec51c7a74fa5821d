//! Tabs and popups (issue 38's second attack): a `target="_blank"` link or a
//! `window.open` popup opened a tab no tool could see or reach, and the
//! session went on reading the old page. A session is a set of tabs with one
//! current tab; by default it follows a tab its page opens, a tab that closes
//! hands the session back to the one before, and `browser_tabs` lists,
//! selects, opens and closes them. Real Chromium, loopback pages.

mod support;

use std::time::Duration;

use axon_browser::BrowserConfig;
use serde_json::{Value, json};
use support::fixture;

fn urls(tabs: &Value) -> Vec<String> {
    tabs.as_array()
        .unwrap_or_else(|| panic!("no tab list: {tabs}"))
        .iter()
        .map(|t| {
            let url = t["url"].as_str().unwrap_or_default();
            url.rsplit('/').next().unwrap_or_default().to_string()
        })
        .collect()
}

fn current(tabs: &Value) -> usize {
    let list = tabs.as_array().unwrap();
    let marked: Vec<usize> = (0..list.len())
        .filter(|&i| list[i]["current"] == true)
        .collect();
    assert_eq!(marked.len(), 1, "one current tab: {tabs}");
    marked[0]
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_link_to_a_new_tab_is_followed_and_every_tab_can_be_reached() {
    let f = fixture(BrowserConfig::default()).await;
    f.open("s", "tabs.html").await;
    let click = f
        .once("s", "browser_click", json!({"selector": "#blank"}))
        .await;
    assert!(click.success, "{click:?}");
    // The click says a tab opened, and that the session is on it now.
    assert_eq!(
        urls(&click.data["tabs"]),
        ["tabs.html", "welcome.html?from=link"],
        "{click:?}"
    );
    assert_eq!(current(&click.data["tabs"]), 1);
    assert_eq!(f.text("s", "#greeting").await, "Welcome back.");
    let state = f.once("s", "browser_get_page_state", json!({})).await;
    assert!(
        state.data["url"].as_str().unwrap().ends_with("from=link"),
        "{state:?}"
    );

    let list = f.once("s", "browser_tabs", json!({"action": "list"})).await;
    assert_eq!(urls(&list.data["tabs"]).len(), 2, "{list:?}");
    let back = f
        .once("s", "browser_tabs", json!({"action": "select", "index": 0}))
        .await;
    assert!(back.success, "{back:?}");
    assert_eq!(current(&back.data["tabs"]), 0);
    assert_eq!(f.text("s", "#status").await, "nothing yet");

    let closed = f
        .once("s", "browser_tabs", json!({"action": "close", "index": 1}))
        .await;
    assert_eq!(urls(&closed.data["tabs"]), ["tabs.html"], "{closed:?}");
    let opened = f
        .once(
            "s",
            "browser_tabs",
            json!({"action": "new", "url": format!("{}/welcome.html?from=new", f.base)}),
        )
        .await;
    assert!(opened.success, "{opened:?}");
    assert_eq!(current(&opened.data["tabs"]), 1);
    assert_eq!(f.text("s", "#query").await, "?from=new");

    // A tab that is not there is named in the refusal.
    let missing = f
        .once("s", "browser_tabs", json!({"action": "select", "index": 7}))
        .await;
    let e = missing.error.as_ref().expect("index 7 is refused");
    assert!(e.message.contains("index"), "{e:?}");
    f.browsers.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_popup_that_closes_itself_hands_the_session_back() {
    let f = fixture(BrowserConfig::default()).await;
    f.open("s", "tabs.html").await;
    let click = f
        .once("s", "browser_click", json!({"selector": "#popup"}))
        .await;
    assert!(click.success, "{click:?}");
    // The popup signs in and closes itself 100 ms later.
    tokio::time::sleep(Duration::from_millis(600)).await;
    assert_eq!(f.text("s", "#status").await, "popup said: signed in");
    let list = f.once("s", "browser_tabs", json!({"action": "list"})).await;
    assert_eq!(urls(&list.data["tabs"]), ["tabs.html"], "{list:?}");
    f.browsers.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_tab_opened_after_the_call_is_found_by_the_next_one() {
    let f = fixture(BrowserConfig::default()).await;
    f.open("s", "tabs.html").await;
    let click = f
        .once("s", "browser_click", json!({"selector": "#later"}))
        .await;
    assert!(click.success, "{click:?}");
    tokio::time::sleep(Duration::from_millis(800)).await;
    let state = f.once("s", "browser_get_page_state", json!({})).await;
    assert!(
        state.data["url"].as_str().unwrap().ends_with("from=later"),
        "{state:?}"
    );
    assert_eq!(urls(&state.data["tabs"]).len(), 2, "{state:?}");
    f.browsers.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_session_can_stay_where_it_is() {
    let f = fixture(BrowserConfig::default()).await;
    let new = f
        .once("", "browser_session_new", json!({"follow_new_tabs": false}))
        .await;
    assert!(new.success, "{new:?}");
    let session = new.data["session"].as_str().unwrap().to_string();
    let nav = f
        .once(
            "",
            "browser_navigate",
            json!({"session": session, "url": format!("{}/tabs.html", f.base)}),
        )
        .await;
    assert!(nav.success, "{nav:?}");
    let click = f
        .once(
            "",
            "browser_click",
            json!({"session": session, "selector": "#blank"}),
        )
        .await;
    assert!(click.success, "{click:?}");
    assert_eq!(urls(&click.data["tabs"]).len(), 2, "{click:?}");
    assert_eq!(current(&click.data["tabs"]), 0);
    let text = f
        .once(
            "",
            "browser_get_text",
            json!({"session": session, "selector": "#status"}),
        )
        .await;
    assert_eq!(text.data["text"], "nothing yet", "{text:?}");
    f.browsers.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_page_that_opens_tabs_in_a_loop_is_held_to_twenty() {
    let f = fixture(BrowserConfig::default()).await;
    f.open("s", "tabs_flood.html").await;
    let click = f
        .once("s", "browser_click", json!({"selector": "#flood"}))
        .await;
    assert!(click.success, "{click:?}");
    tokio::time::sleep(Duration::from_millis(1500)).await;
    let list = f.once("s", "browser_tabs", json!({"action": "list"})).await;
    assert!(list.success, "{list:?}");
    let open = urls(&list.data["tabs"]).len();
    assert!((2..=20).contains(&open), "{open} tabs: {list:?}");
    // The session still answers, on whichever tab is current.
    let state = f.once("s", "browser_get_page_state", json!({})).await;
    assert!(state.success, "{state:?}");
    let back = f
        .once("s", "browser_tabs", json!({"action": "select", "index": 0}))
        .await;
    assert!(back.success, "{back:?}");
    assert_eq!(f.text("s", "#status").await, "flooded");
    f.browsers.shutdown().await;
}
