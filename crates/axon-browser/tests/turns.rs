//! Fewer turns for an agent (issue 60), in real Chromium: an action answers
//! with what it changed (after waiting for the work it started), `browser_type
//! {submit}`, `browser_wait` for a text, and `browser_select_option` on custom
//! drop-downs (an ARIA combobox whose popup is drawn again under the click, an
//! autocomplete, one whose options never take).

mod support;

use axon_browser::BrowserConfig;
use serde_json::json;
use support::{failure, fixture};

fn code(c: &str) -> (axon_core::ErrorKind, Option<String>) {
    (axon_core::ErrorKind::Failed, Some(c.to_string()))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_action_answers_with_what_it_changed() {
    let f = fixture(BrowserConfig::default()).await;
    let url = format!("{}/turns.html", f.base);
    let arrived = f.call("s", "browser_navigate", json!({"url": url})).await;
    assert!(arrived.success, "{arrived:?}");
    let page = &arrived.data["changes"];
    assert_eq!(page["page"], "new", "{page}");
    assert_eq!(page["title"], "Turns");
    assert!(
        page["text"].as_str().unwrap().contains("button \"Add\""),
        "{page}"
    );

    // The click asks the server (300 ms) and then draws a button: the
    // answer waited for that, and names the new button with its ref.
    let added = f
        .call(
            "s",
            "browser_click",
            json!({"role": "button", "name": "Add"}),
        )
        .await;
    assert!(added.success, "{added:?}");
    let changes = &added.data["changes"];
    assert_eq!(changes["page"], "changed", "{changes}");
    assert_eq!(changes["waited"]["until"], "quiet", "{changes}");
    assert!(changes["waited"]["requests"].as_u64().unwrap() >= 1);
    let text = changes["text"].as_str().unwrap();
    let line = text
        .lines()
        .find(|l| l.contains("button \"Remove 1\""))
        .unwrap_or_else(|| panic!("no new button in {text}"));
    assert!(line.contains("[new]") && line.contains("[ref=e"), "{line}");
    assert!(
        !text.contains("\"Add\""),
        "what did not change is left out: {text}"
    );
    let removed_ref = line.split("[ref=").nth(1).unwrap().trim_end_matches(']');

    // The agent acts on the new ref at once; the button goes, and says so.
    let gone = f
        .call("s", "browser_click", json!({"ref": removed_ref}))
        .await;
    assert!(gone.success, "{gone:?}");
    let removed = gone.data["changes"]["removed"].as_array().unwrap();
    assert_eq!(
        removed[0],
        json!(format!("button \"Remove 1\" [ref={removed_ref}]"))
    );

    // A click that starts nothing answers at once: no change.
    let dead = f
        .call("s", "browser_click", json!({"selector": "#dead"}))
        .await;
    assert_eq!(dead.data["changes"]["page"], "same", "{dead:?}");
    assert_eq!(dead.data["changes"]["waited"]["until"], "nothing_started");

    // The view was kept: a snapshot of the changes since has nothing new.
    let since = f
        .call("s", "browser_snapshot", json!({"changes_since": true}))
        .await;
    assert!(
        !since.data["text"].as_str().unwrap().contains("[new]"),
        "{since:?}"
    );

    // The call chooses: nothing, or all of it; a wrong choice names the field.
    let none = f
        .call(
            "s",
            "browser_click",
            json!({"selector": "#dead", "snapshot": "none"}),
        )
        .await;
    assert!(
        none.success && none.data.get("changes").is_none(),
        "{none:?}"
    );
    let full = f
        .call(
            "s",
            "browser_click",
            json!({"selector": "#dead", "snapshot": "full"}),
        )
        .await;
    assert_eq!(full.data["changes"]["page"], "full");
    assert!(
        full.data["changes"]["text"]
            .as_str()
            .unwrap()
            .contains("\"Add\"")
    );
    let bad = f
        .call(
            "s",
            "browser_click",
            json!({"selector": "#dead", "snapshot": "some"}),
        )
        .await;
    assert_eq!(failure(&bad).0, axon_core::ErrorKind::InvalidArguments);
    assert!(bad.error.unwrap().message.contains("/snapshot"));

    // A click that leads to another page (its server answers in 300 ms)
    // answers with that page, drawn.
    let away = f
        .call(
            "s",
            "browser_click",
            json!({"role": "link", "name": "Go on"}),
        )
        .await;
    assert!(away.success, "{away:?}");
    let page = &away.data["changes"];
    assert_eq!(page["page"], "new", "{page}");
    assert_eq!(page["title"], "Welcome", "{page}");
    assert!(
        page["text"].as_str().unwrap().contains("Welcome back."),
        "{page}"
    );
    f.browsers.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn type_submits_and_wait_waits_for_a_text() {
    let f = fixture(BrowserConfig::default()).await;
    f.open("s", "turns.html").await;
    let typed = f
        .call(
            "s",
            "browser_type",
            json!({"label": "Query", "text": "cats", "submit": true}),
        )
        .await;
    assert!(typed.success, "{typed:?}");
    let text = typed.data["changes"]["text"].as_str().unwrap();
    assert!(text.contains("Searched: cats"), "{text}");

    let later = f
        .call(
            "s",
            "browser_click",
            json!({"selector": "#later", "snapshot": "none"}),
        )
        .await;
    assert!(later.success, "{later:?}");
    let ready = f
        .call("s", "browser_wait", json!({"text": "ready NOW"}))
        .await;
    assert!(ready.success, "{ready:?}");
    assert!(ready.data["waited_ms"].as_u64().unwrap() > 0);
    let never = f
        .call(
            "s",
            "browser_wait",
            json!({"text": "Never", "seconds": 0.2}),
        )
        .await;
    assert_eq!(failure(&never), code("element_not_found"));
    let stays = f
        .call(
            "s",
            "browser_wait",
            json!({"text_gone": "Turns", "seconds": 0.2}),
        )
        .await;
    assert_eq!(failure(&stays), code("text_still_shown"));
    let both = f
        .call("s", "browser_wait", json!({"text": "a", "text_gone": "b"}))
        .await;
    assert_eq!(failure(&both).0, axon_core::ErrorKind::InvalidArguments);
    let plain = f.call("s", "browser_wait", json!({"seconds": 0.05})).await;
    assert!(plain.success, "{plain:?}");
    f.browsers.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn custom_drop_downs_select_like_a_select() {
    let f = fixture(BrowserConfig::default()).await;
    f.open("s", "turns.html").await;
    // The popup is drawn again under the click; the value takes 100 ms.
    let fruit = f
        .call(
            "s",
            "browser_select_option",
            json!({"role": "combobox", "name": "Fruit", "values": "banana"}),
        )
        .await;
    assert!(fruit.success, "{fruit:?}");
    assert_eq!(fruit.data["selected"], json!(["Banana"]));
    assert_eq!(fruit.data["widget"], "combobox");
    assert_eq!(f.text("s", "#fruit-value").await, "Banana");

    let missing = f
        .call(
            "s",
            "browser_select_option",
            json!({"selector": "#fruit", "values": "Durian", "timeout_ms": 500}),
        )
        .await;
    assert_eq!(failure(&missing), code("element_not_found"));
    let message = missing.error.unwrap().message;
    assert!(
        message.contains("Apple") && message.contains("Cherry"),
        "{message}"
    );

    // Options that never take: not reported as selected.
    let stuck = f
        .call(
            "s",
            "browser_select_option",
            json!({"selector": "#stuck", "values": "Green"}),
        )
        .await;
    assert_eq!(failure(&stuck), code("value_not_shown"), "{stuck:?}");

    // An autocomplete lists its options once typed into.
    let city = f
        .call(
            "s",
            "browser_select_option",
            json!({"label": "City", "values": "Parma"}),
        )
        .await;
    assert!(city.success, "{city:?}");
    assert_eq!(city.data["typed"], true);
    let value = f
        .call("s", "browser_get_text", json!({"selector": "#city"}))
        .await;
    assert_eq!(value.data["value"], "Parma");

    let button = f
        .call(
            "s",
            "browser_select_option",
            json!({"selector": "#dead", "values": "x"}),
        )
        .await;
    assert_eq!(failure(&button), code("not_a_select"));
    f.browsers.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sliders_count_as_set_only_when_the_page_shows_it() {
    let f = fixture(BrowserConfig::default()).await;
    f.open("s", "turns.html").await;
    let tip = |text: &str| json!({"role": "slider", "name": "Tip", "text": text});
    let twenty = f.call("s", "browser_type", tip("20")).await;
    assert!(twenty.success, "{twenty:?}");
    assert_eq!(twenty.data["value"], 20.0);
    assert_eq!(f.text("s", "#tip").await, "20");
    let top = f.call("s", "browser_type", tip("30")).await;
    assert_eq!(top.data["value"], 30.0, "{top:?}");
    // Steps of 2 never show 15: refused, not reported set.
    let odd = f.call("s", "browser_type", tip("15")).await;
    assert_eq!(failure(&odd), code("value_not_shown"), "{odd:?}");
    let past = f.call("s", "browser_type", tip("40")).await;
    assert_eq!(failure(&past).0, axon_core::ErrorKind::InvalidArguments);

    // The framework hears the value set on a range it tracks.
    let amount = f
        .call(
            "s",
            "browser_type",
            json!({"label": "Amount", "text": "30"}),
        )
        .await;
    assert!(amount.success, "{amount:?}");
    assert_eq!(f.text("s", "#heard").await, "heard 30");
    // A value between its steps is refused, not rounded silently.
    let between = f
        .call(
            "s",
            "browser_type",
            json!({"label": "Amount", "text": "33"}),
        )
        .await;
    assert_eq!(failure(&between).0, axon_core::ErrorKind::InvalidArguments);
    assert!(between.error.unwrap().message.contains("would show 35"));
    f.browsers.shutdown().await;
}

/// `browser_fill_form` takes the fields as the snapshot names them, and as
/// Playwright MCP's `browser_fill_form` sends them (`name`, `type`, `ref`,
/// a box's value as text), custom drop-downs and sliders included.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn fill_form_takes_the_snapshots_field_names() {
    let f = fixture(BrowserConfig::default()).await;
    f.open("s", "turns.html").await;
    let snap = f
        .call("s", "browser_snapshot", json!({"find": "Query"}))
        .await;
    let text = snap.data["text"].as_str().unwrap();
    let query_ref = text
        .split("[ref=")
        .nth(1)
        .and_then(|r| r.split(']').next())
        .unwrap_or_else(|| panic!("no ref in {text}"));
    let filled = f
        .call(
            "s",
            "browser_fill_form",
            json!({"fields": [
                {"name": "Search query", "type": "textbox", "ref": query_ref, "value": "dogs"},
                {"name": "City", "value": "Porto"},
                {"name": "Fruit", "type": "combobox", "value": "Apple"},
                {"name": "Tip", "type": "slider", "value": "12"}
            ]}),
        )
        .await;
    assert!(filled.success, "{filled:?}");
    let value = async |sel: &str| {
        f.call("s", "browser_get_text", json!({"selector": sel}))
            .await
            .data["value"]
            .clone()
    };
    assert_eq!(value("#q").await, "dogs");
    assert_eq!(value("#city").await, "Porto");
    assert_eq!(f.text("s", "#fruit-value").await, "Apple");
    assert_eq!(f.text("s", "#tip").await, "12");
    let nameless = f
        .call(
            "s",
            "browser_fill_form",
            json!({"fields": [{"name": "No such field", "value": "x"}], "timeout_ms": 200}),
        )
        .await;
    assert!(!nameless.success);
    f.browsers.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_navigation_answers_with_the_page_its_scripts_drew_after_the_load() {
    let f = fixture(BrowserConfig::default()).await;
    // idle.html fetches its data 50 ms after its load (the server answers in
    // 300 ms) and only then shows it: an app that draws itself after loading.
    let url = format!("{}/idle.html", f.base);
    let arrived = f.call("s", "browser_navigate", json!({"url": url})).await;
    assert!(arrived.success, "{arrived:?}");
    let changes = &arrived.data["changes"];
    assert_eq!(changes["page"], "new", "{changes}");
    assert_eq!(changes["waited"]["until"], "quiet", "{changes}");
    assert!(
        changes["text"].as_str().unwrap().contains("slow data"),
        "the answer shows what the page drew after its load: {changes}"
    );
    assert_eq!(f.text("s", "#data").await, "slow data");
    f.browsers.shutdown().await;
}

/// The focused control's own decoration is not the page's answer: typing
/// into a field whose label floats up over 600 ms as it takes the focus
/// answers without waiting for the label (a Quasar form paid 400 ms a
/// field); a dialog that fades in after a click is still waited for.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_fields_own_focus_animation_is_not_waited_for_a_dialogs_is() {
    let f = fixture(BrowserConfig::default()).await;
    f.open("s", "focus_decor.html").await;
    let typed = f
        .call(
            "s",
            "browser_type",
            json!({"selector": "#name", "text": "Ada"}),
        )
        .await;
    assert!(typed.success, "{typed:?}");
    let waited = &typed.data["changes"]["waited"];
    assert_eq!(
        waited["until"], "quiet",
        "the focus changed the field: {waited}"
    );
    assert!(
        waited["ms"].as_u64().unwrap() < 450,
        "not held by the label's 600 ms float: {waited}"
    );
    let opened = f
        .call("s", "browser_click", json!({"selector": "#open"}))
        .await;
    assert!(opened.success, "{opened:?}");
    let waited = &opened.data["changes"]["waited"];
    assert!(
        waited["ms"].as_u64().unwrap() >= 350,
        "the dialog's 400 ms fade is the page's answer: {waited}"
    );
    f.browsers.shutdown().await;
}
