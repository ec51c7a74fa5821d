//! The element and input tools on a real headless Chromium, against the pages in
//! tests/fixtures served on 127.0.0.1: addressing (selector, ref, role + name, label,
//! text), auto-wait, every failure kind, and the login workflow (navigate, type, type,
//! click, verify) as a plan.

mod support;

use axon_browser::BrowserConfig;
use axon_core::ErrorKind::{Failed, InvalidArguments};
use axon_plan::{Plan, PlanRunner, RunOptions};
use serde_json::{Value, json};
use support::{failure, fixture};

fn code(c: &str) -> Option<String> {
    Some(c.to_string())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn seed_000_login_workflow_as_a_plan_with_the_password_redacted() {
    let f = fixture(BrowserConfig::default()).await;
    let plan = Plan::parse(&format!(
        r##"
name: login
steps:
  - {{ id: open, tool: browser_navigate, params: {{ url: "{base}/login.html" }} }}
  - {{ id: wait, tool: browser_wait_for_element, params: {{ selector: "#user" }}, depends_on: [open] }}
  - {{ id: user, tool: browser_type, params: {{ selector: "#user", text: ada }}, depends_on: [wait] }}
  - {{ id: pass, tool: browser_type, params: {{ label: Password, text: hunter2 }}, depends_on: [user] }}
  - {{ id: snap, tool: browser_snapshot, params: {{}}, depends_on: [pass] }}
  - {{ id: remember, tool: browser_click, params: {{ role: checkbox, name: Remember me }}, depends_on: [snap] }}
  - {{ id: login, tool: browser_click, params: {{ selector: "#login-btn" }}, depends_on: [remember] }}
  - {{ id: landed, tool: browser_wait_for_url_change, params: {{ to: "/welcome.html" }}, depends_on: [login] }}
  - {{ id: query, tool: browser_get_text, params: {{ selector: "#query" }}, depends_on: [landed] }}
"##,
        base = f.base
    ))
    .unwrap();
    let runner = PlanRunner::new(f.executor.clone());
    let result = runner.run(&plan, RunOptions::default()).await.unwrap();
    assert!(result.success(), "{result:#?}");
    let query = result
        .steps
        .iter()
        .find(|s| s.id.as_deref() == Some("query"))
        .unwrap();
    let text = query.result.as_ref().unwrap().data["text"]
        .as_str()
        .unwrap()
        .to_string();
    assert!(
        text.contains("user=ada") && text.contains("remember=on"),
        "{text}"
    );
    // The password reached the page (it shows its length) …
    assert!(text.contains("pass_len=7"), "{text}");

    // … but not the history: the password step's text is ***, and no record
    // anywhere holds it.
    let history = f
        .executor
        .history()
        .by_correlation(&result.run_id)
        .await
        .unwrap();
    assert_eq!(history.len(), 9);
    // The snapshot shows the password field, masked.
    let snap = &result
        .steps
        .iter()
        .find(|s| s.id.as_deref() == Some("snap"))
        .unwrap();
    let text = snap.result.as_ref().unwrap().data["text"]
        .as_str()
        .unwrap()
        .to_string();
    assert!(text.contains("textbox \"Password\""), "{text}");
    let pass = history
        .iter()
        .find(|h| h.args.get("label") == Some(&json!("Password")))
        .unwrap();
    assert_eq!(pass.args["text"], "***");
    assert_eq!(pass.result.data["password"], true);
    let user = history
        .iter()
        .find(|h| {
            h.args.get("selector") == Some(&json!("#user")) && h.result.tool == "browser_type"
        })
        .unwrap();
    assert_eq!(
        user.args["text"], "ada",
        "only password fields are redacted"
    );
    for entry in &history {
        let args = serde_json::to_string(&entry.args).unwrap();
        assert!(!args.contains("hunter2"), "{args}");
        let data = serde_json::to_string(&entry.result.data).unwrap();
        assert!(!data.contains("hunter2"), "{data}");
    }
    f.browsers.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn auto_wait_and_the_failure_kinds() {
    let f = fixture(BrowserConfig::default()).await;
    f.open("s", "delayed.html").await;
    // The button is added 300 ms after load; the click waits for it.
    let late = f
        .call("s", "browser_click", json!({"selector": "#late"}))
        .await;
    assert!(late.success, "{late:?}");
    assert_eq!(late.data["element"], "button#late");
    assert_eq!(f.text("s", "#status").await, "clicked late");
    let soon = f
        .call(
            "s",
            "browser_wait_for_element",
            json!({"has_text": "now you see me"}),
        )
        .await;
    assert!(soon.success, "{soon:?}");

    // Present but never clickable: failed (the wait was the retry), with the reason.
    let disabled = f
        .once(
            "s",
            "browser_click",
            json!({"selector": "#disabled", "timeout_ms": 300}),
        )
        .await;
    assert_eq!(failure(&disabled), (Failed, code("disabled")));
    assert!(disabled.error.unwrap().message.contains("disabled"));
    let covered = f
        .once(
            "s",
            "browser_click",
            json!({"role": "button", "name": "Under a veil", "timeout_ms": 300}),
        )
        .await;
    assert_eq!(
        failure(&covered),
        (Failed, code("element_not_interactable"))
    );
    assert!(
        covered
            .error
            .unwrap()
            .message
            .contains("covered by div#veil")
    );

    // Element-state failures are not retried by the pipeline, whatever the
    // policy: the auto-wait was the retry, and repeating it would multiply
    // the step's timeout (three 3 s waits for one covered option).
    let retried = f
        .executor
        .call(
            axon_core::ToolCall::new(
                "browser_click",
                json!({"selector": "#disabled", "timeout_ms": 100}),
            )
            .correlation_id("s")
            .policy(json!({"retry": {"max_attempts": 3, "initial_delay_ms": 1}})),
        )
        .await;
    assert_eq!(retried.attempts, 1, "{retried:?}");
    assert_eq!(failure(&retried), (Failed, code("disabled")));

    // Never there: failed element_not_found after the wait, not retried.
    let missing = f
        .call(
            "s",
            "browser_click",
            json!({"selector": "#nope", "timeout_ms": 200}),
        )
        .await;
    assert_eq!(failure(&missing), (Failed, code("element_not_found")));
    assert_eq!(missing.attempts, 1);
    assert!(missing.error.unwrap().message.contains("#nope"));

    // Bad addresses are the caller's mistake.
    let bad_selector = f
        .call("s", "browser_click", json!({"selector": "##"}))
        .await;
    assert_eq!(failure(&bad_selector).0, InvalidArguments);
    assert!(bad_selector.error.unwrap().message.starts_with("/selector"));
    let two = f
        .call(
            "s",
            "browser_click",
            json!({"selector": "#late", "has_text": "Appeared"}),
        )
        .await;
    assert_eq!(failure(&two).0, InvalidArguments);
    let unknown_field = f
        .call("s", "browser_click", json!({"selectr": "#late"}))
        .await;
    assert_eq!(failure(&unknown_field).0, InvalidArguments);

    // Waiting for things to go away.
    let hidden = f
        .call(
            "s",
            "browser_wait_for_element",
            json!({"selector": "#veil", "state": "hidden", "timeout_ms": 200}),
        )
        .await;
    assert_eq!(failure(&hidden), (Failed, code("element_still_present")));
    let gone = f
        .call(
            "s",
            "browser_wait_for_element",
            json!({"selector": "#nope", "state": "detached"}),
        )
        .await;
    assert!(gone.success, "{gone:?}");

    // Existence is an answer, never a failure.
    let yes = f
        .call(
            "s",
            "browser_verify_element_exists",
            json!({"selector": "#late"}),
        )
        .await;
    assert_eq!(
        (yes.data["exists"].clone(), yes.data["visible"].clone()),
        (json!(true), json!(true))
    );
    let no = f
        .call(
            "s",
            "browser_verify_element_exists",
            json!({"has_text": "no such text"}),
        )
        .await;
    assert!(no.success);
    assert_eq!(no.data["exists"], false);
    f.browsers.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn not_visible_and_detached_elements_fail_without_a_retry() {
    let f = fixture(BrowserConfig::default()).await;
    f.open("s", "delayed.html").await;
    // #hidden is never displayed (#soon, shown after 300 ms, raced a slow
    // machine: by the time the click ran it could be visible).
    let early = f
        .once(
            "s",
            "browser_click",
            json!({"selector": "#hidden", "timeout_ms": 50}),
        )
        .await;
    assert_eq!(failure(&early), (Failed, code("element_not_interactable")));
    assert!(early.error.unwrap().message.contains("not visible"));

    f.open("s", "detach.html").await;
    let snap = f
        .call("s", "browser_snapshot", json!({"nodes": true}))
        .await;
    let flip = snap.data["nodes"]
        .as_array()
        .unwrap()
        .iter()
        .find(|n| n["name"] == "Flip")
        .unwrap()["ref"]
        .as_str()
        .unwrap()
        .to_string();
    let by_ref = f.call("s", "browser_click", json!({"ref": flip})).await;
    assert!(by_ref.success, "{by_ref:?}");
    assert_eq!(f.text("s", "#status").await, "clicked 1");

    // Pressing "d" takes the button out and renders a new one 300 ms later.
    let detach = f.call("s", "browser_press_key", json!({"key": "d"})).await;
    assert!(detach.success, "{detach:?}");
    let absent = f
        .call(
            "s",
            "browser_verify_element_exists",
            json!({"selector": "#flip"}),
        )
        .await;
    assert_eq!(absent.data["exists"], false);
    // The selector finds the new button once it is back.
    let again = f
        .call("s", "browser_click", json!({"selector": "#flip"}))
        .await;
    assert!(again.success, "{again:?}");
    assert_eq!(f.text("s", "#status").await, "clicked 2");
    // The old ref names the node that was taken out: failed, not retried.
    let stale = f
        .executor
        .call(
            axon_core::ToolCall::new("browser_click", json!({"ref": flip, "timeout_ms": 100}))
                .correlation_id("s")
                .policy(json!({"retry": {"max_attempts": 2, "initial_delay_ms": 1}})),
        )
        .await;
    let (kind, c) = failure(&stale);
    assert_eq!(kind, Failed, "{stale:?}");
    assert!(
        matches!(c.as_deref(), Some("element_detached" | "stale_ref")),
        "{c:?}"
    );
    assert_eq!(stale.attempts, 1);
    f.browsers.shutdown().await;
}

fn find<'a>(nodes: &'a Value, role: &str, name: &str) -> &'a Value {
    nodes
        .as_array()
        .unwrap()
        .iter()
        .find(|n| n["role"] == role && n["name"] == name)
        .unwrap_or_else(|| panic!("no {role} {name:?} in {nodes:#}"))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn role_name_label_text_and_snapshot_refs() {
    let f = fixture(BrowserConfig::default()).await;
    f.open("s", "roles.html").await;
    // Buttons (a real one and a div with role=button), links, checkboxes and
    // text boxes found by the name their label gives them.
    let fancy = f
        .call(
            "s",
            "browser_click",
            json!({"role": "button", "name": "save changes"}),
        )
        .await;
    assert!(fancy.success, "{fancy:?}");
    assert_eq!(f.text("s", "#out").await, "fancy");
    let exact = f
        .call(
            "s",
            "browser_click",
            json!({"role": "button", "name": "Save all", "exact": true}),
        )
        .await;
    assert!(exact.success, "{exact:?}");
    assert_eq!(f.text("s", "#out").await, "save all");
    f.call(
        "s",
        "browser_click",
        json!({"role": "link", "name": "Details"}),
    )
    .await;
    assert_eq!(f.text("s", "#out").await, "details");
    let news = f
        .call(
            "s",
            "browser_click",
            json!({"role": "checkbox", "name": "Send me news"}),
        )
        .await;
    assert!(news.success, "{news:?}");
    let typed = f
        .call(
            "s",
            "browser_type",
            json!({"role": "textbox", "name": "Nickname", "text": "ace"}),
        )
        .await;
    assert!(typed.success, "{typed:?}");
    f.call("s", "browser_click", json!({"has_text": "Cancel"}))
        .await;
    assert_eq!(f.text("s", "#out").await, "cancel");
    let by_label = f
        .call("s", "browser_get_text", json!({"label": "nickname"}))
        .await;
    assert_eq!(by_label.data["value"], "ace");

    // The click fallback (role+name, then role, then text): no button named "Nope", so the
    // first button.
    let strict = f
        .call(
            "s",
            "browser_click",
            json!({"role": "button", "name": "Nope", "timeout_ms": 100}),
        )
        .await;
    assert_eq!(failure(&strict), (Failed, code("element_not_found")));
    let fallback = f
        .call(
            "s",
            "browser_click",
            json!({"role": "button", "name": "Nope", "fallback": true, "timeout_ms": 100}),
        )
        .await;
    assert!(fallback.success, "{fallback:?}");
    assert_eq!(fallback.data["matched_by"], "role");
    assert_eq!(f.text("s", "#out").await, "fancy");

    // The snapshot: roles, names, states, and refs the tools take.
    let snap = f
        .call("s", "browser_snapshot", json!({"nodes": true}))
        .await;
    assert!(snap.success, "{snap:?}");
    let nodes = &snap.data["nodes"];
    let heading = find(nodes, "heading", "Preferences");
    assert!(
        heading["states"]
            .as_array()
            .unwrap()
            .contains(&json!("level=2"))
    );
    let news = find(nodes, "checkbox", "Send me news");
    assert!(
        news["states"]
            .as_array()
            .unwrap()
            .contains(&json!("checked")),
        "{news}"
    );
    assert_eq!(find(nodes, "textbox", "Nickname")["value"], "ace");
    find(nodes, "link", "Details");
    find(nodes, "listitem", "");
    let text = snap.data["text"].as_str().unwrap();
    assert!(text.contains("- button \"Cancel\" [ref=e"), "{text}");
    let cancel = find(nodes, "button", "Cancel")["ref"]
        .as_str()
        .unwrap()
        .to_string();
    let gone = f
        .once("s", "browser_click", json!({"ref": "e999999"}))
        .await;
    assert_eq!(failure(&gone), (Failed, code("stale_ref")));
    let by_ref = f.call("s", "browser_click", json!({"ref": cancel})).await;
    assert!(by_ref.success, "{by_ref:?}");
    let bad_ref = f.call("s", "browser_click", json!({"ref": "button"})).await;
    assert_eq!(failure(&bad_ref).0, InvalidArguments);

    // Clearing, and typing into whatever has focus.
    let cleared = f
        .call("s", "browser_clear_input", json!({"label": "Nickname"}))
        .await;
    assert!(cleared.success, "{cleared:?}");
    assert_eq!(
        f.call("s", "browser_get_text", json!({"selector": "#nick"}))
            .await
            .data["value"],
        ""
    );
    f.call("s", "browser_click", json!({"selector": "#nick"}))
        .await;
    let focused = f.call("s", "browser_type", json!({"text": "zed"})).await;
    assert!(focused.success, "{focused:?}");
    let replaced = f
        .call(
            "s",
            "browser_type",
            json!({"selector": "#nick", "text": "max", "clear": true}),
        )
        .await;
    assert!(replaced.success);
    assert_eq!(
        f.call("s", "browser_get_text", json!({"selector": "#nick"}))
            .await
            .data["value"],
        "max"
    );
    let element_html = f
        .call(
            "s",
            "browser_get_page_html",
            json!({"role": "link", "name": "Details"}),
        )
        .await;
    assert_eq!(
        element_html.data["html"],
        "<a href=\"#details\" onclick=\"document.getElementById('out').textContent = 'details'\">Details</a>"
    );

    f.open("fresh", "roles.html").await;
    let nothing = f.call("fresh", "browser_type", json!({"text": "x"})).await;
    assert_eq!(failure(&nothing), (Failed, code("element_not_found")));
    f.browsers.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn select_options_by_value_label_index_and_many() {
    let f = fixture(BrowserConfig::default()).await;
    f.open("s", "select.html").await;
    let by_label = f
        .call(
            "s",
            "browser_select_option",
            json!({"label": "Colour", "values": "Green"}),
        )
        .await;
    assert!(by_label.success, "{by_label:?}");
    assert_eq!(by_label.data["selected"], json!(["g"]));
    assert_eq!(f.text("s", "#picked").await, "g");
    let by_value = f
        .call(
            "s",
            "browser_select_option",
            json!({"selector": "#color", "values": "b"}),
        )
        .await;
    assert_eq!(by_value.data["labels"], json!(["Blue"]));
    let by_index = f
        .call(
            "s",
            "browser_select_option",
            json!({"selector": "#color", "index": 1}),
        )
        .await;
    assert_eq!(by_index.data["selected"], json!(["r"]));
    let many = f
        .call(
            "s",
            "browser_select_option",
            json!({"selector": "#toppings", "values": ["ch", "Olives"]}),
        )
        .await;
    assert_eq!(many.data["selected"], json!(["ch", "ol"]));

    let two_on_one = f
        .call(
            "s",
            "browser_select_option",
            json!({"selector": "#color", "values": ["r", "g"]}),
        )
        .await;
    assert_eq!(failure(&two_on_one).0, Failed);
    let missing = f
        .call(
            "s",
            "browser_select_option",
            json!({"selector": "#color", "values": "Purple"}),
        )
        .await;
    assert_eq!(failure(&missing), (Failed, code("element_not_found")));
    assert!(missing.error.unwrap().message.contains("Purple"));
    let neither = f
        .call("s", "browser_select_option", json!({"selector": "#color"}))
        .await;
    assert_eq!(failure(&neither).0, InvalidArguments);
    f.browsers.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn tables_with_colspan_and_rowspan_as_rows_and_csv() {
    let f = fixture(BrowserConfig::default()).await;
    f.open("s", "table.html").await;
    let t = f
        .call("s", "browser_extract_table", json!({"format": "csv"}))
        .await;
    assert!(t.success, "{t:?}");
    assert_eq!(
        t.data["headers"],
        json!(["Team", "Score", "Score_2", "Note"])
    );
    assert_eq!(
        t.data["rows"],
        json!([
            {"Team": "Red", "Score": "3", "Score_2": "1", "Note": "group A"},
            {"Team": "Blue", "Score": "forfeit", "Score_2": "forfeit", "Note": "group A"},
            {"Team": "Green, \"the\" best", "Score": "2", "Score_2": "2", "Note": ""},
        ])
    );
    assert_eq!(
        t.data["csv"],
        "Team,Score,Score_2,Note\r\nRed,3,1,group A\r\nBlue,forfeit,forfeit,group A\r\n\"Green, \"\"the\"\" best\",2,2,\r\n"
    );
    let shot = f
        .call(
            "s",
            "browser_take_screenshot",
            json!({"selector": "#scores"}),
        )
        .await;
    assert!(shot.success, "{shot:?}");
    assert!(
        shot.data["base64"]
            .as_str()
            .unwrap()
            .starts_with("iVBORw0KGgo")
    );
    f.open("s", "welcome.html").await;
    let none = f
        .call("s", "browser_extract_table", json!({"timeout_ms": 100}))
        .await;
    assert_eq!(failure(&none), (Failed, code("element_not_found")));
    f.browsers.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn forms_submit_and_wait_for_the_next_page() {
    let f = fixture(BrowserConfig::default()).await;
    f.open("s", "form.html").await;
    let invalid = f
        .call("s", "browser_submit_form", json!({"selector": "#order"}))
        .await;
    assert_eq!(failure(&invalid), (Failed, code("invalid_form")));
    assert!(invalid.error.unwrap().message.contains("input#email"));
    f.call(
        "s",
        "browser_type",
        json!({"label": "Email", "text": "ada@example.com"}),
    )
    .await;
    let sent = f
        .call("s", "browser_submit_form", json!({"selector": "#qty"}))
        .await;
    assert!(sent.success, "{sent:?}");
    assert_eq!(
        (sent.data["navigated"].clone(), sent.data["title"].clone()),
        (json!(true), json!("Welcome"))
    );
    assert!(
        sent.data["url"]
            .as_str()
            .unwrap()
            .contains("email=ada%40example.com&qty=1")
    );

    f.open("s", "form.html").await;
    let local = f
        .call(
            "s",
            "browser_submit_form",
            json!({"selector": "#local", "wait_for_navigation": false}),
        )
        .await;
    assert!(local.success, "{local:?}");
    assert_eq!(local.data["navigated"], false);
    assert_eq!(f.text("s", "#done").await, "handled");
    let waited = f
        .call(
            "s",
            "browser_submit_form",
            json!({"selector": "#local", "timeout_ms": 300}),
        )
        .await;
    assert_eq!(failure(&waited), (Failed, code("no_navigation")));

    // A click that submits a form, then at once a navigation elsewhere: the
    // form's navigation may replace ours, which is then sent again.
    for _ in 0..5 {
        let went = f.submit_then_leave("s", "login.html").await;
        assert_eq!(went.data["title"], "Roles", "{went:?}");
        // Without the resend, the first attempt waits out its whole timeout.
        assert_eq!(went.attempts, 1, "{went:?}");
    }
    f.browsers.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn search_keys_scroll_url_changes_and_waits() {
    let f = fixture(BrowserConfig::default()).await;
    f.open("s", "search.html").await;
    let found = f
        .call("s", "browser_search", json!({"query": "rust lang"}))
        .await;
    assert!(found.success, "{found:?}");
    assert_eq!(
        (found.data["box"].clone(), found.data["title"].clone()),
        (json!("input#site-search"), json!("Results"))
    );
    assert_eq!(f.text("s", "#q").await, "rust lang");
    f.open("s", "welcome.html").await;
    let no_box = f
        .call(
            "s",
            "browser_search",
            json!({"query": "x", "timeout_ms": 200}),
        )
        .await;
    assert_eq!(failure(&no_box), (Failed, code("element_not_found")));

    // Keys: on an element it focuses, with modifiers, and Enter in a form.
    f.open("s", "search.html").await;
    let a = f
        .call(
            "s",
            "browser_press_key",
            json!({"key": "a", "label": "Notes"}),
        )
        .await;
    assert!(a.success, "{a:?}");
    f.call("s", "browser_press_key", json!({"key": "Control+a"}))
        .await;
    let keys = f.text("s", "#keys").await;
    assert!(keys.starts_with("a ") && keys.ends_with("C-a"), "{keys}");
    let unknown = f
        .call("s", "browser_press_key", json!({"key": "Hyper+q"}))
        .await;
    assert_eq!(failure(&unknown).0, InvalidArguments);
    f.call(
        "s",
        "browser_type",
        json!({"selector": "#site-search", "text": "by enter"}),
    )
    .await;
    f.call("s", "browser_press_key", json!({"key": "Enter"}))
        .await;
    let landed = f
        .call(
            "s",
            "browser_wait_for_url_change",
            json!({"to": "*/results.html?q=by+enter"}),
        )
        .await;
    assert!(landed.success, "{landed:?}");

    // Scrolling.
    f.open("s", "long.html").await;
    let y = |r: &axon_core::CallResult| r.data["scroll"]["y"].as_f64().unwrap();
    let down = f
        .call("s", "browser_scroll", json!({"direction": "down"}))
        .await;
    assert_eq!(y(&down), 800.0, "{down:?}");
    let up = f
        .call(
            "s",
            "browser_scroll",
            json!({"direction": "up", "pixels": 300}),
        )
        .await;
    assert_eq!(y(&up), 500.0);
    let bottom = f.call("s", "browser_scroll", json!({"to": "bottom"})).await;
    assert!(y(&bottom) > 2000.0);
    let top = f.call("s", "browser_scroll", json!({"to": "top"})).await;
    assert_eq!(y(&top), 0.0);
    let to_element = f
        .call("s", "browser_scroll", json!({"selector": "#bottom"}))
        .await;
    assert!(y(&to_element) > 2000.0, "{to_element:?}");
    let state = f.call("s", "browser_get_page_state", json!({})).await;
    assert_eq!(
        state.data["scroll"]["y"].as_f64(),
        to_element.data["scroll"]["y"].as_f64()
    );
    let both = f
        .call(
            "s",
            "browser_scroll",
            json!({"direction": "down", "to": "top"}),
        )
        .await;
    assert_eq!(failure(&both).0, InvalidArguments);

    // A URL changed by script: in place, then by navigation. The page
    // changes its URL 200 ms after its load: opened without the page's
    // changes asked for, the navigation answers at the load (a loaded
    // machine once settled past 200 ms, and the first change was missed).
    let url = format!("{}/urlchange.html", f.base);
    let opened = f
        .call(
            "s",
            "browser_navigate",
            json!({"url": url, "snapshot": "none"}),
        )
        .await;
    assert!(opened.success, "{opened:?}");
    let pushed = f.call("s", "browser_wait_for_url_change", json!({})).await;
    assert!(
        pushed.data["url"].as_str().unwrap().ends_with("?step=2"),
        "{pushed:?}"
    );
    let moved = f
        .call(
            "s",
            "browser_wait_for_url_change",
            json!({"to": "*from=script"}),
        )
        .await;
    assert!(moved.success, "{moved:?}");
    let never = f
        .call(
            "s",
            "browser_wait_for_url_change",
            json!({"to": "nowhere", "timeout_ms": 200}),
        )
        .await;
    assert_eq!(failure(&never), (Failed, code("url_unchanged")));

    let waited = f.call("s", "browser_wait", json!({"seconds": 0.05})).await;
    assert_eq!(waited.data["waited_ms"], 50);
    let too_long = f.call("s", "browser_wait", json!({"seconds": 1000})).await;
    assert_eq!(failure(&too_long).0, InvalidArguments);
    f.browsers.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn networkidle_waits_for_requests_after_load() {
    let f = fixture(BrowserConfig::default()).await;
    let url = format!("{}/idle.html", f.base);
    let idle = f
        .call(
            "s",
            "browser_navigate",
            json!({"url": url, "wait_until": "networkidle"}),
        )
        .await;
    assert!(idle.success, "{idle:?}");
    assert_eq!(f.text("s", "#data").await, "slow data");
    // Without the page's changes asked for, nothing settles after the load
    // (with them, the navigation waits for the fetch as an action does:
    // tests/turns.rs).
    let load = f
        .call(
            "t",
            "browser_navigate",
            json!({"url": url, "snapshot": "none"}),
        )
        .await;
    assert!(load.success);
    assert_eq!(
        f.text("t", "#data").await,
        "loading",
        "load returns before the fetch"
    );
    let too_slow = f
        .call(
            "u",
            "browser_navigate",
            json!({"url": url, "wait_until": "networkidle", "timeout_ms": 100}),
        )
        .await;
    assert_eq!(
        failure(&too_slow),
        (axon_core::ErrorKind::Timeout, code("navigation_timeout"))
    );
    f.browsers.shutdown().await;
}

/// The contract says a range or colour field takes `browser_type`'s text as
/// its value (design.md, `browser_type`); both were refused as "not
/// editable" until 2026-11-26.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn range_and_colour_fields_take_typed_text_as_their_value() {
    let f = fixture(BrowserConfig::default()).await;
    f.open("s", "kit_widgets.html").await;
    let slid = f
        .call(
            "s",
            "browser_type",
            json!({"selector": "#volume", "text": "80"}),
        )
        .await;
    assert!(slid.success, "{slid:?}");
    assert_eq!(f.text("s", "#log").await, "value:volume=80");
    let stepped = f
        .call(
            "s",
            "browser_type",
            json!({"label": "Playback speed", "text": "1.25"}),
        )
        .await;
    assert!(stepped.success, "{stepped:?}");
    assert_eq!(f.text("s", "#log").await, "value:speed=1.25");
    let refused = f
        .call(
            "s",
            "browser_type",
            json!({"selector": "#volume", "text": "loud"}),
        )
        .await;
    // A range never reads empty (it falls back to its middle): the text is
    // refused, not silently replaced.
    assert_eq!(failure(&refused).0, InvalidArguments, "{refused:?}");
    assert_eq!(f.text("s", "#log").await, "value:speed=1.25");
    f.open("s", "kit_kinds.html").await;
    let coloured = f
        .call(
            "s",
            "browser_type",
            json!({"selector": "#hue", "text": "#ff8800"}),
        )
        .await;
    assert!(coloured.success, "{coloured:?}");
    assert_eq!(f.text("s", "#log").await, "value:hue=#ff8800");
    f.browsers.shutdown().await;
}
