//! What `browser_snapshot` reaches beyond the accessibility tree's roles, on
//! a real Chromium: controls without a role, fields named by nearby text,
//! same- and cross-origin iframes, an open shadow root; and that every ref it
//! gives works with the element tools.

mod support;

use axon_browser::BrowserConfig;
use serde_json::{Value, json};
use support::fixture;

/// The node of `role` named `name` (panics with the snapshot when absent).
fn node<'a>(snap: &'a Value, role: &str, name: &str) -> &'a Value {
    snap["nodes"]
        .as_array()
        .and_then(|nodes| {
            nodes
                .iter()
                .find(|n| n["role"] == role && n["name"] == name)
        })
        .unwrap_or_else(|| panic!("no {role} {name:?} in\n{}", snap["text"]))
}

fn reference(snap: &Value, role: &str, name: &str) -> String {
    node(snap, role, name)["ref"]
        .as_str()
        .unwrap_or_else(|| panic!("{role} {name:?} has no ref"))
        .to_string()
}

fn has_state(n: &Value, state: &str) -> bool {
    n["states"]
        .as_array()
        .is_some_and(|s| s.contains(&json!(state)))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_snapshot_reaches_roleless_controls_nearby_labels_frames_and_shadow_roots() {
    let f = fixture(BrowserConfig::default()).await;
    f.open("s", "reach.html").await;
    // The cross-origin frame loads after the page: wait for its button.
    let wait = f
        .call(
            "s",
            "browser_verify_element_exists",
            json!({"selector": "#cross", "timeout_ms": 5000}),
        )
        .await;
    assert!(wait.success, "{wait:?}");
    let mut snap = Value::Null;
    for _ in 0..100 {
        let r = f
            .call("s", "browser_snapshot", json!({"nodes": true}))
            .await;
        assert!(r.success, "{r:?}");
        snap = r.data;
        if snap["text"]
            .as_str()
            .unwrap_or_default()
            .contains("Send code")
        {
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
    }
    let text = snap["text"].as_str().unwrap_or_default().to_string();

    // Controls without a role: a listener, a pointer cursor, a tabindex.
    for (role, name) in [
        ("generic", "About us"),
        ("generic", "Contact"),
        ("generic", "Pricing card"),
        ("listitem", "Apples"),
    ] {
        assert!(
            has_state(node(&snap, role, name), "clickable"),
            "{name}\n{text}"
        );
    }
    // A list item without a handler is text in a list, not a control; nor
    // is a field's <label>.
    assert!(text.contains("  - listitem [ref="), "{text}");
    assert!(text.contains("    - text \"Not a control\"\n"), "{text}");
    assert!(!text.contains("generic \"Code\""), "{text}");
    // A clickable wrapper around a button is not itself listed: its button is.
    node(&snap, "button", "Inner button");
    assert!(!text.contains("Inner button\" [clickable]"), "{text}");

    // Fields named by the text before them (a checkbox, after), and saying so.
    for (role, name) in [
        ("textbox", "User name"),
        ("textbox", "Password"),
        ("checkbox", "I agree"),
    ] {
        assert_eq!(
            node(&snap, role, name)["name_from"],
            "nearby text",
            "{text}"
        );
    }
    assert!(
        text.contains("textbox \"Password\" (by nearby text)"),
        "{text}"
    );

    // Frames: their documents under their iframe node; the shadow root inline.
    let same = node(&snap, "iframe", "Same origin");
    let framed = node(&snap, "button", "Framed button");
    assert_eq!(framed["depth"], same["depth"].as_u64().unwrap() + 1);
    assert!(has_state(node(&snap, "generic", "Framed div"), "clickable"));
    node(&snap, "iframe", "Cross origin");
    node(&snap, "textbox", "Code");
    node(&snap, "button", "Shadow button");

    // Every ref works with the element tools, in frames and shadow roots too.
    let click = |r: String| {
        let f = &f;
        async move {
            let c = f.call("s", "browser_click", json!({"ref": r})).await;
            assert!(c.success, "{c:?}");
            f.text("s", "#out").await
        }
    };
    assert_eq!(
        click(reference(&snap, "generic", "About us")).await,
        "about"
    );
    assert_eq!(
        click(reference(&snap, "generic", "Pricing card")).await,
        "card"
    );
    assert_eq!(
        click(reference(&snap, "listitem", "Apples")).await,
        "apples"
    );
    assert_eq!(
        click(reference(&snap, "button", "Framed button")).await,
        "same"
    );
    assert_eq!(
        click(reference(&snap, "generic", "Framed div")).await,
        "framed-div"
    );
    assert_eq!(
        click(reference(&snap, "button", "Shadow button")).await,
        "shadow"
    );
    let typed = f
        .call(
            "s",
            "browser_type",
            json!({"ref": reference(&snap, "textbox", "Code"), "text": "42"}),
        )
        .await;
    assert!(typed.success, "{typed:?}");
    // The frame answers by postMessage, delivered after the click returns.
    let sent = click(reference(&snap, "button", "Send code")).await;
    let mut out = sent;
    for _ in 0..100 {
        if out == "cross:42" {
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(20)).await;
        out = f.text("s", "#out").await;
    }
    assert_eq!(out, "cross:42");

    // A name found by nearby text is an address too (label), as is a
    // clickable element's text (has_text): what browser_act's replayable
    // call uses.
    let by_label = f
        .call(
            "s",
            "browser_type",
            json!({"label": "Password", "exact": true, "text": "hunter2"}),
        )
        .await;
    assert!(by_label.success, "{by_label:?}");
    let by_label = f
        .call(
            "s",
            "browser_type",
            json!({"label": "User name", "exact": true, "text": "ada"}),
        )
        .await;
    assert!(by_label.success, "{by_label:?}");
    let value = f
        .call("s", "browser_get_text", json!({"selector": "#user"}))
        .await;
    assert_eq!(value.data["value"], "ada");
    let agree = f
        .call(
            "s",
            "browser_click",
            json!({"label": "I agree", "exact": true}),
        )
        .await;
    assert!(agree.success, "{agree:?}");
    let checked = f
        .call("s", "browser_snapshot", json!({"nodes": true}))
        .await;
    assert!(
        has_state(node(&checked.data, "checkbox", "I agree"), "checked"),
        "{}",
        checked.data["text"]
    );

    // Refs are stable: the same elements keep theirs in a later snapshot.
    for (role, name) in [
        ("generic", "About us"),
        ("button", "Framed button"),
        ("textbox", "Code"),
        ("button", "Shadow button"),
    ] {
        assert_eq!(
            reference(&checked.data, role, name),
            reference(&snap, role, name),
            "{name}"
        );
    }
}

/// A button whose middle lies under another (MiniWoB++'s click-test-2 places
/// its two buttons so): a person clicks the part of it in view, and so does
/// the click; one that is covered everywhere still fails with what covers it.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_partly_covered_control_is_clicked_where_it_shows() {
    let f = fixture(BrowserConfig::default()).await;
    f.open("s", "overlap.html").await;
    for name in ["ONE", "TWO"] {
        let clicked = f
            .once(
                "s",
                "browser_click",
                json!({"role": "button", "name": name, "timeout_ms": 500}),
            )
            .await;
        assert!(clicked.success, "{name}: {clicked:?}");
    }
    assert_eq!(f.text("s", "#status").await, "one;two;");

    f.open("s", "delayed.html").await;
    let covered = f
        .once(
            "s",
            "browser_click",
            json!({"selector": "#covered", "timeout_ms": 300}),
        )
        .await;
    let message = covered.error.map(|e| e.message).unwrap_or_default();
    assert!(message.contains("covered by div#veil"), "{message}");
    f.browsers.shutdown().await;
}
