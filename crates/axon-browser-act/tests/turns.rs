//! Fewer turns for an agent (issue 60) with `browser_act`, in real Chromium:
//! a step in words on custom drop-downs, a slider and a calendar that slides
//! (the browser tools' own turns tests are `axon-browser`'s tests/turns.rs).

mod support;

use axon_browser::BrowserConfig;
use serde_json::json;
use support::failure;

fn code(c: &str) -> (axon_core::ErrorKind, Option<String>) {
    (axon_core::ErrorKind::Failed, Some(c.to_string()))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn browser_act_selects_in_a_custom_drop_down_and_sets_a_slider() {
    let f = support::act_fixture(BrowserConfig::default()).await;
    f.open("s", "turns.html").await;
    let step = |s: &str| json!({"plan_step": s, "main_goal": "order"});
    let fruit = f
        .call(
            "s",
            "browser_act",
            step("Select Cherry from the Fruit dropdown"),
        )
        .await;
    assert!(fruit.success, "{fruit:?}");
    assert_eq!(f.text("s", "#fruit-value").await, "Cherry");
    let tip = f
        .call("s", "browser_act", step("Set the Tip slider to 20"))
        .await;
    assert!(tip.success, "{tip:?}");
    assert_eq!(f.text("s", "#tip").await, "20");
    f.browsers.shutdown().await;
}

/// A calendar's next month slides in over 300 ms while the old month's days
/// stay until their transition ends: the click answers when the slide is
/// over (the old days gone), and `browser_act` picks the day of the month
/// shown — never the old month's "14", never a wrong date reported picked.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_calendar_answers_after_its_slide_and_browser_act_picks_the_shown_month() {
    let f = support::act_fixture(BrowserConfig::default()).await;
    f.open("s", "kit_calendar.html").await;
    let step = |s: &str| json!({"plan_step": s, "main_goal": "plan a visit"});
    let early = f
        .call("s", "browser_act", step("Pick 14 February 2027"))
        .await;
    assert_eq!(failure(&early), code("element_not_found"), "{early:?}");
    let message = early.error.as_ref().map(|e| e.message.clone());
    assert!(
        message
            .as_deref()
            .is_some_and(|m| m.contains("click \"Next month\" once")),
        "{message:?}"
    );
    let moved = f
        .call(
            "s",
            "browser_click",
            json!({"role": "button", "name": "Next month"}),
        )
        .await;
    assert!(moved.success, "{moved:?}");
    let changes = &moved.data["changes"];
    assert!(
        changes["waited"]["ms"].as_u64().unwrap_or(0) >= 250,
        "{changes}"
    );
    let removed = changes["removed"].as_array().cloned().unwrap_or_default();
    assert!(
        removed
            .last()
            .and_then(|r| r.as_str())
            .is_some_and(|r| r.starts_with("and ")),
        "the old month's days are gone, more than are listed: {changes}"
    );
    let page = f.call("s", "browser_snapshot", json!({})).await;
    let text = page.data["text"].as_str().unwrap_or_default();
    let fourteens = text.lines().filter(|l| l.contains("button \"14\"")).count();
    assert_eq!(fourteens, 1, "one month's days: {text}");
    let picked = f
        .call("s", "browser_act", step("Pick 14 February 2027"))
        .await;
    assert!(picked.success, "{picked:?}");
    assert_eq!(f.text("s", "#log").await, "picked:2027-02-14");
    f.browsers.shutdown().await;
}
