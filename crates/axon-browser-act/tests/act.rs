//! `browser_act` on a real headless Chromium: the heuristic translator on
//! plan steps across the fixture pages (each must reach the page state the
//! step asks for), and the LLM translator against a local server that speaks
//! OpenAI's chat-completions protocol with scripted replies. No network beyond
//! loopback.

mod support;

use std::collections::VecDeque;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use axon_browser::{BrowserConfig, Browsers};
use axon_browser_act::{self as act, ActionTranslator, Heuristic, LlmConfig, LlmTranslator};
use axon_core::{CallResult, ErrorKind, Executor, ToolCall};
use serde_json::{Value, json};
use support::serve_fixtures;

struct Act {
    executor: Executor,
    browsers: Arc<Browsers>,
    base: String,
}

async fn setup(translator: Arc<dyn ActionTranslator>) -> Act {
    setup_with(translator, Arc::new(act::MemoryActStore::default())).await
}

async fn setup_with(translator: Arc<dyn ActionTranslator>, cache: Arc<dyn act::ActStore>) -> Act {
    let (executor, browsers) = support::act_executor(BrowserConfig::default(), translator, cache);
    Act {
        executor,
        browsers,
        base: serve_fixtures().await,
    }
}

impl Act {
    async fn call(&self, tool: &str, args: Value) -> CallResult {
        self.executor
            .call(ToolCall::new(tool, args).correlation_id("s"))
            .await
    }
    async fn open(&self, page: &str) {
        let r = self
            .call(
                "browser_navigate",
                json!({"url": format!("{}/{page}", self.base)}),
            )
            .await;
        assert!(r.success, "{r:?}");
    }
    async fn step(&self, step: &str) -> CallResult {
        self.call(
            "browser_act",
            json!({"plan_step": step, "main_goal": "test the pages"}),
        )
        .await
    }
    async fn value(&self, selector: &str) -> Value {
        self.call("browser_get_text", json!({"selector": selector}))
            .await
            .data
    }
    async fn url(&self) -> String {
        self.call("browser_get_page_state", json!({})).await.data["url"]
            .as_str()
            .unwrap()
            .to_string()
    }
    async fn scroll_y(&self) -> f64 {
        self.call("browser_get_page_state", json!({})).await.data["scroll"]["y"]
            .as_f64()
            .unwrap()
    }
    async fn checked(&self, name: &str) -> bool {
        let snap = self.call("browser_snapshot", json!({"nodes": true})).await;
        let node = snap.data["nodes"]
            .as_array()
            .unwrap()
            .iter()
            .find(|n| n["name"] == name)
            .cloned()
            .unwrap();
        node["states"]
            .as_array()
            .is_some_and(|s| s.contains(&json!("checked")))
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn heuristic_steps_reach_the_state_they_ask_for() {
    let a = setup(Arc::new(Heuristic)).await;
    let ok = |r: &CallResult, action: &str| {
        assert!(r.success, "{r:#?}");
        assert_eq!(r.data["action"], action, "{r:#?}");
        assert_eq!(
            (r.data["status"].clone(), r.data["error_type"].clone()),
            (json!("success"), json!("none"))
        );
        assert_eq!(r.data["translator"], "heuristic");
    };

    // Login: type, type, checkbox, button; a link; a relative URL.
    a.open("login.html").await;
    ok(&a.step("Type 'ada' into the Username field").await, "type");
    assert_eq!(a.value("#user").await["value"], "ada");
    ok(&a.step("Enter 'hunter2' as the password").await, "type");
    assert_eq!(a.value("#pass_len").await["value"], "7");
    ok(&a.step("Check the Remember me box").await, "click");
    assert!(a.checked("Remember me").await);
    let login = a.step("Click the Log in button").await;
    ok(&login, "click");
    assert_eq!(login.data["args"]["name"], "Log in");
    assert!(
        login.data["execution_time_ms"].as_u64().is_some()
            && login.data["snapshot_tokens"].as_u64().unwrap() > 0
    );
    a.call("browser_wait_for_url_change", json!({"to": "welcome.html"}))
        .await;
    assert!(a.url().await.contains("user=ada"), "{}", a.url().await);
    ok(&a.step("Go to /login.html").await, "navigate");
    assert!(a.url().await.ends_with("/login.html"));
    ok(&a.step("Follow the forgot password link").await, "click");
    a.call("browser_wait_for_url_change", json!({"to": "forgot=1"}))
        .await;

    // Roles: a checkbox by its label, a named button, a link, a field by label.
    a.open("roles.html").await;
    ok(&a.step("Tick 'Send me news'").await, "click");
    assert!(a.checked("Send me news").await);
    ok(&a.step("Press the 'Save all' button").await, "click");
    assert_eq!(a.value("#out").await["text"], "save all");
    ok(&a.step("Click Details").await, "click");
    assert_eq!(a.value("#out").await["text"], "details");
    ok(&a.step("Fill in nickname with zed").await, "type");
    assert_eq!(a.value("#nick").await["value"], "zed");

    // Select, with and without quotes.
    a.open("select.html").await;
    ok(
        &a.step("Select 'Green' from the Colour dropdown").await,
        "select",
    );
    assert_eq!(a.value("#picked").await["text"], "g");
    ok(&a.step("Choose Blue as the colour").await, "select");
    assert_eq!(a.value("#picked").await["text"], "b");

    // Search, typing into the search box, and a key press.
    a.open("search.html").await;
    ok(&a.step("Search for 'rust lang'").await, "search");
    assert_eq!(a.value("#q").await["text"], "rust lang");
    a.open("search.html").await;
    ok(&a.step("Type 'by enter' into the search box").await, "type");
    ok(&a.step("Press Enter").await, "press_key");
    a.call("browser_wait_for_url_change", json!({"to": "results.html"}))
        .await;
    assert_eq!(a.value("#q").await["text"], "by enter");

    // Scrolling.
    a.open("long.html").await;
    ok(&a.step("Scroll down").await, "scroll");
    assert_eq!(a.scroll_y().await, 800.0);
    ok(&a.step("Scroll to the bottom of the page").await, "scroll");
    let bottom = a.scroll_y().await;
    assert!(bottom > 2000.0);
    ok(&a.step("Scroll up a bit").await, "scroll");
    assert_eq!(a.scroll_y().await, bottom - 800.0);

    // Waiting for a late button, then clicking it.
    a.open("delayed.html").await;
    ok(&a.step("Wait 0.4 seconds for the page").await, "wait");
    ok(&a.step("Click the 'Appeared' button").await, "click");
    assert_eq!(a.value("#status").await["text"], "clicked late");
    a.browsers.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn act_settles_after_the_work_a_click_starts_and_says_how_to_replay_it() {
    let a = setup(Arc::new(Heuristic)).await;
    a.open("settle.html").await;
    let r = a.step("Click the 'Load data' button").await;
    assert!(r.success, "{r:#?}");
    // The click's request (300 ms) and the DOM update after it are done when
    // the step returns: the next step reads the loaded page, with no wait.
    assert_eq!(a.value("#data").await["text"], "slow data");
    let d = &r.data;
    let ms = |k: &str| d[k].as_u64().unwrap_or_else(|| panic!("{k}: {d:#}"));
    assert!(ms("settle_ms") >= 300, "{d:#}");
    assert!(ms("settle_ms") < 3_000, "bounded: {d:#}");
    assert!(
        ms("execution_time_ms") >= ms("snapshot_ms") + ms("dispatch_ms") + ms("settle_ms"),
        "{d:#}"
    );
    // The call it made, by role and name: replayed on a fresh page, with no
    // translator, it does the same.
    assert_eq!(
        d["call"],
        json!({"tool": "browser_click", "args": {"role": "button", "name": "Load data", "exact": true}})
    );

    // A click that starts nothing returns after the page's next turn, with
    // no quiet window: nothing shows work to wait for.
    let r = a.step("Click the 'Nothing' button").await;
    assert!(r.success, "{r:#?}");
    let settle = r.data["settle_ms"].as_u64().unwrap();
    assert!(settle < 60, "{:#}", r.data);
    // A click whose first turn changes the page is followed until its last
    // change (three more, 60 ms apart, the last 180 ms after the click) has
    // been quiet for a window (counted from the end of the click's dispatch).
    let r = a.step("Click the 'Animate' button").await;
    assert!(r.success, "{r:#?}");
    assert_eq!(a.value("#status").await["text"], "step 3", "{:#}", r.data);
    let settle = r.data["settle_ms"].as_u64().unwrap();
    assert!((200..3_000).contains(&settle), "{:#}", r.data);
    // Actions that start no work do not settle.
    let r = a.step("Wait 0.1 seconds").await;
    assert_eq!(r.data["settle_ms"], 0, "{:#}", r.data);

    a.open("settle.html").await;
    let call = d["call"].clone();
    let replayed = a
        .call(call["tool"].as_str().unwrap(), call["args"].clone())
        .await;
    assert!(replayed.success, "{replayed:#?}");
    assert_eq!(a.value("#status").await["text"], "loading");
    a.browsers.shutdown().await;
}

/// The heuristic, counting how often it is asked.
struct Counting {
    calls: std::sync::atomic::AtomicUsize,
}

#[async_trait::async_trait]
impl ActionTranslator for Counting {
    fn name(&self) -> &'static str {
        "heuristic"
    }
    async fn translate(
        &self,
        input: &act::StepInput,
        ctx: &axon_core::ToolContext,
    ) -> Result<act::Decision, act::TranslateError> {
        self.calls.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
        Heuristic.translate(input, ctx).await
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_second_run_of_the_same_steps_calls_no_translator_and_a_changed_page_heals() {
    let counting = Arc::new(Counting {
        calls: Default::default(),
    });
    let a = setup(counting.clone()).await;
    let calls = || counting.calls.load(std::sync::atomic::Ordering::SeqCst);
    let steps = [
        "Type 'ada' into the Username field",
        "Enter 'hunter2' as the password",
        "Click the Log in button",
    ];
    for run in ["first", "second"] {
        a.open("login.html").await;
        for step in steps {
            let before = calls();
            let r = a.step(step).await;
            assert!(r.success, "{run} run, {step}: {r:#?}");
            let expected = if run == "first" { "miss" } else { "hit" };
            assert_eq!(r.data["cache"], expected, "{run} run, {step}: {:#}", r.data);
            // A replay is decided from the kept entry alone, without a
            // translator call. (How fast a kept decision is read back is a
            // benchmark's question: a wall-clock bound here failed under load.)
            let translated = if run == "first" { 1 } else { 0 };
            assert_eq!(calls() - before, translated, "{run} run, {step}");
            assert!(r.data["decide_ms"].is_u64(), "{step}: {:#}", r.data);
        }
        a.call("browser_wait_for_url_change", json!({"to": "welcome.html"}))
            .await;
        assert!(
            a.url().await.contains("user=ada"),
            "{run}: {}",
            a.url().await
        );
    }
    assert_eq!(calls(), 3, "the second run made no translator call");

    // The same page kind with the button renamed: the cached element is not
    // there, so the step is translated again and the entry replaced.
    let step = "Click the Send button";
    for (v, cache, translations) in [(1, "miss", 4), (1, "hit", 4), (2, "miss", 5), (2, "hit", 5)] {
        a.open(&format!("heal.html?v={v}")).await;
        let r = a.step(step).await;
        assert!(r.success, "v={v}: {r:#?}");
        assert_eq!(r.data["cache"], cache, "v={v}: {:#}", r.data);
        assert_eq!(a.value("#out").await["text"], format!("sent {v}"));
        assert_eq!(calls(), translations, "v={v}");
    }
    a.browsers.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn heuristic_failures_carry_seed_003_error_types() {
    let a = setup(Arc::new(Heuristic)).await;
    a.open("roles.html").await;
    let code = |r: &CallResult| {
        let e = r
            .error
            .as_ref()
            .unwrap_or_else(|| panic!("a failure: {r:?}"));
        (e.kind, e.code.clone().unwrap_or_default())
    };
    let tie = a.step("Click Save").await;
    assert_eq!(code(&tie), (ErrorKind::Failed, "ambiguous_step".into()));
    assert!(tie.error.unwrap().message.contains("Save all"));
    assert_eq!(
        code(&a.step("Click the Delete account button").await).1,
        "element_not_found"
    );
    assert_eq!(
        code(&a.step("Upload a photo of yourself").await).1,
        "tool_limit"
    );
    assert_eq!(
        code(&a.step("Do something useful").await).1,
        "ambiguous_step"
    );
    let blocked = a.step("Go to file:///etc/passwd").await;
    assert_eq!(
        code(&blocked),
        (ErrorKind::Failed, "navigation_blocked".into()),
        "{blocked:?}"
    );
    let empty = a.call("browser_act", json!({"plan_step": " "})).await;
    assert_eq!(code(&empty).0, ErrorKind::InvalidArguments);
    a.browsers.shutdown().await;
}

/// One scripted reply of the fake model server.
enum Reply {
    /// 200 with this assistant content.
    Content(&'static str),
    /// This status, with a `Retry-After` when given.
    Status(u16, Option<&'static str>),
    /// 200 after a delay.
    Slow(Duration, &'static str),
}

struct Model {
    url: String,
    script: Arc<Mutex<VecDeque<Reply>>>,
    requests: Arc<Mutex<Vec<Value>>>,
}

/// A local server speaking OpenAI's chat-completions protocol, answering from
/// a script.
async fn model() -> Model {
    let script: Arc<Mutex<VecDeque<Reply>>> = Arc::default();
    let requests: Arc<Mutex<Vec<Value>>> = Arc::default();
    let (s, r) = (script.clone(), requests.clone());
    let app = axum::Router::new().route(
        "/v1/chat/completions",
        axum::routing::post(move |axum::Json(body): axum::Json<Value>| {
            let (s, r) = (s.clone(), r.clone());
            async move {
                use axum::response::IntoResponse;
                r.lock().unwrap().push(body);
                let next = s.lock().unwrap().pop_front();
                let content = match next {
                    Some(Reply::Content(c)) => c,
                    Some(Reply::Slow(d, c)) => {
                        tokio::time::sleep(d).await;
                        c
                    }
                    Some(Reply::Status(code, after)) => {
                        let mut response = axum::http::StatusCode::from_u16(code)
                            .unwrap()
                            .into_response();
                        if let Some(after) = after {
                            response
                                .headers_mut()
                                .insert("retry-after", after.parse().unwrap());
                        }
                        return response;
                    }
                    None => "{}",
                };
                axum::Json(json!({
                    "id": "chatcmpl-1", "object": "chat.completion", "model": "scripted",
                    "choices": [{"index": 0, "finish_reason": "stop",
                                 "message": {"role": "assistant", "content": content}}],
                }))
                .into_response()
            }
        }),
    );
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}/v1", listener.local_addr().unwrap());
    tokio::spawn(async move { axum::serve(listener, app).await });
    Model {
        url,
        script,
        requests,
    }
}

const CLICK_LOG_IN: &str = r#"{"action": "click", "args": {"url": null, "role": "button", "name": "Log in", "text": null, "direction": null, "key": null, "seconds": null, "ref": null}, "status": "success", "error_type": "none", "message": "Click the Log in button"}"#;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn llm_replies_are_validated_retried_and_timed() {
    let m = model().await;
    let config = LlmConfig {
        base_url: m.url.clone(),
        model: "scripted".into(),
        timeout_ms: 1000,
        max_attempts: 2,
        ..LlmConfig::default()
    };
    let translator = Arc::new(LlmTranslator::new(config, None).unwrap());
    let llm_history = translator.executor().history().clone();
    // The same step is asked again on purpose: no act cache.
    let a = setup_with(translator, Arc::new(act::NoActStore)).await;
    let push = |replies: Vec<Reply>| m.script.lock().unwrap().extend(replies);

    // A valid reply: run as given; the prompt carried the step and the page.
    a.open("login.html").await;
    push(vec![Reply::Content(CLICK_LOG_IN)]);
    let r = a.step("Click the Log in button").await;
    assert!(r.success, "{r:#?}");
    assert_eq!(
        (r.data["translator"].clone(), r.data["action"].clone()),
        (json!("llm"), json!("click"))
    );
    assert_eq!(r.data["confidence"], 0.9);
    a.call("browser_wait_for_url_change", json!({"to": "welcome.html"}))
        .await;
    {
        let requests = m.requests.lock().unwrap();
        let body = &requests[0];
        assert_eq!(body["model"], "scripted");
        assert_eq!(body["temperature"], 0.0);
        assert_eq!(body["response_format"]["type"], "json_schema");
        let user = body["messages"][1]["content"].as_str().unwrap();
        assert!(
            user.contains("PLAN_STEP: Click the Log in button"),
            "{user}"
        );
        assert!(user.contains("- button \"Log in\" [ref=e"), "{user}");
        assert!(
            body["messages"][0]["content"]
                .as_str()
                .unwrap()
                .contains("Execution Agent")
        );
    }

    // Not JSON, then valid: retried once with the reason.
    a.open("login.html").await;
    push(vec![
        Reply::Content("Sure! I will click the button."),
        Reply::Content(CLICK_LOG_IN),
    ]);
    let r = a.step("Log in").await;
    assert!(r.success, "{r:#?}");
    assert_eq!(r.data["confidence"], 0.6);
    {
        let requests = m.requests.lock().unwrap();
        let retry = requests.last().unwrap()["messages"].as_array().unwrap();
        assert_eq!(retry.len(), 4);
        assert!(
            retry[3]["content"]
                .as_str()
                .unwrap()
                .contains("no JSON object"),
            "{retry:?}"
        );
    }

    // A disallowed tool twice: ambiguous_step.
    a.open("login.html").await;
    let upload = r#"{"action": "upload_file", "args": {}, "status": "success", "error_type": "none", "message": "x"}"#;
    push(vec![Reply::Content(upload), Reply::Content(upload)]);
    let r = a.step("Upload my avatar").await;
    let e = r.error.unwrap();
    assert_eq!(
        (e.kind, e.code.as_deref()),
        (ErrorKind::Failed, Some("ambiguous_step"))
    );
    assert!(e.message.contains("not an allowed action"), "{}", e.message);

    // A target the snapshot lacks, then a real one.
    let ghost = r#"{"action": "click", "args": {"role": "button", "name": "Sign up"}, "status": "success", "error_type": "none", "message": "x"}"#;
    push(vec![Reply::Content(ghost), Reply::Content(CLICK_LOG_IN)]);
    let r = a.step("Click the Log in button").await;
    assert!(r.success, "{r:#?}");
    let last = m.requests.lock().unwrap().last().unwrap().clone();
    assert!(
        last["messages"][3]["content"]
            .as_str()
            .unwrap()
            .contains("no button named \"Sign up\" in DOM_SNAPSHOT")
    );

    // The model itself says it cannot.
    a.open("login.html").await;
    push(vec![Reply::Content(
        r#"{"action": "click", "args": {}, "status": "failure", "error_type": "tool_limit", "message": "Captchas are beyond the tools"}"#,
    )]);
    let r = a.step("Solve the captcha").await;
    assert_eq!(r.error.unwrap().code.as_deref(), Some("tool_limit"));

    // Too slow, twice: the model call times out (each attempt 1 s).
    push(vec![
        Reply::Slow(Duration::from_secs(3), CLICK_LOG_IN),
        Reply::Slow(Duration::from_secs(3), CLICK_LOG_IN),
    ]);
    let r = a.step("Click the Log in button").await;
    let e = r.error.unwrap();
    assert_eq!(e.kind, ErrorKind::Timeout, "{e:?}");

    // 429 with Retry-After: the pipeline waits as asked, then the reply works.
    a.open("login.html").await;
    push(vec![
        Reply::Status(429, Some("1")),
        Reply::Content(CLICK_LOG_IN),
    ]);
    let r = a.step("Click the Log in button").await;
    assert!(r.success, "{r:#?}");
    let calls = llm_history.by_correlation("s").await.unwrap();
    let rated = calls.last().unwrap();
    assert_eq!(rated.result.tool, "llm_chat");
    assert_eq!(rated.result.attempts, 2);
    assert_eq!(rated.result.retry_delays_ms, [1000]);
    assert!(rated.result.retry_reasons[0].starts_with("rate_limited"));

    // A server that refuses OpenAI's json_schema form with a 500 (llama.cpp's
    // does): asked again at once in the json_object form, in the same
    // attempt, and in that form from then on.
    a.open("login.html").await;
    push(vec![Reply::Status(500, None), Reply::Content(CLICK_LOG_IN)]);
    let r = a.step("Click the Log in button").await;
    assert!(r.success, "{r:#?}");
    let calls = llm_history.by_correlation("s").await.unwrap();
    let refused = calls.last().unwrap();
    assert_eq!(refused.result.attempts, 1, "{refused:?}");
    assert_eq!(refused.result.data["response_format"], "json_object");
    a.open("login.html").await;
    push(vec![Reply::Content(CLICK_LOG_IN)]);
    assert!(a.step("Click the Log in button").await.success);
    {
        let requests = m.requests.lock().unwrap();
        let formats: Vec<&Value> = requests[requests.len() - 3..]
            .iter()
            .map(|b| &b["response_format"]["type"])
            .collect();
        assert_eq!(
            formats,
            [
                &json!("json_schema"),
                &json!("json_object"),
                &json!("json_object")
            ]
        );
        assert!(requests[requests.len() - 1]["response_format"]["schema"].is_object());
    }
    a.browsers.shutdown().await;
}

/// Phrasings written after the heuristic, without tuning it to them: the
/// decision (action and target) is compared with what a person would mean.
/// The figure goes to docs/browser-act.md; the floor keeps it from sliding.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn heuristic_accuracy_on_held_out_phrasings() {
    let a = setup(Arc::new(Heuristic)).await;
    // (page, step, action, the element's name or the text)
    let cases: [(&str, &str, &str, &str); 18] = [
        ("login.html", "Click on 'Log in'", "click", "Log in"),
        ("login.html", "Hit the login button", "click", "Log in"),
        (
            "login.html",
            "Put 'bob' in the username box",
            "type",
            "Username",
        ),
        ("login.html", "Enter the username 'bob'", "type", "Username"),
        (
            "login.html",
            "Tap Forgot password?",
            "click",
            "Forgot password?",
        ),
        ("login.html", "Sign in", "click", "Log in"),
        ("login.html", "Remember me", "click", "Remember me"),
        (
            "login.html",
            "Select the Remember me checkbox",
            "click",
            "Remember me",
        ),
        ("roles.html", "Click the Cancel button", "click", "Cancel"),
        ("roles.html", "Press Save changes", "click", "Save changes"),
        ("roles.html", "Open the Details link", "click", "Details"),
        (
            "roles.html",
            "Type 'ace' in the Nickname box",
            "type",
            "Nickname",
        ),
        (
            "select.html",
            "Pick Red in the colour list",
            "select",
            "Colour",
        ),
        (
            "select.html",
            "Choose 'Mushrooms' from toppings",
            "select",
            "Toppings",
        ),
        (
            "search.html",
            "Look up 'axon engine'",
            "search",
            "axon engine",
        ),
        ("search.html", "Search the site for rust", "search", "rust"),
        (
            "long.html",
            "Scroll a little further down",
            "scroll",
            "down",
        ),
        (
            "long.html",
            "Go back to the top of the page",
            "scroll",
            "top",
        ),
    ];
    let mut right = 0;
    let mut table = String::new();
    for (page, step, action, target) in cases {
        a.open(page).await;
        let r = a.step(step).await;
        let got_action = r.data["action"].as_str().unwrap_or("-").to_string();
        let args = &r.data["args"];
        let got_target = ["name", "text", "direction", "to"]
            .iter()
            .find_map(|k| args[*k].as_str())
            .unwrap_or("-")
            .to_string();
        let ok = got_action == action && got_target == target;
        right += usize::from(ok);
        let got = match &r.error {
            Some(e) => format!("{} ({})", e.code.clone().unwrap_or_default(), e.message),
            None => format!("{got_action} {got_target:?}"),
        };
        table.push_str(&format!(
            "| {page} | {step} | {action} {target:?} | {got} | {} |\n",
            if ok { "yes" } else { "no" }
        ));
    }
    println!("{table}held-out accuracy: {right}/{}", cases.len());
    assert!(
        right >= 13,
        "held-out accuracy fell to {right}/{}:\n{table}",
        cases.len()
    );
    a.browsers.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn act_counts_actions_and_error_types_and_times_both_sides() {
    let recorder = metrics_util::debugging::DebuggingRecorder::new();
    let snapshotter = recorder.snapshotter();
    // This test binary's other tests record too; only presence is asserted.
    let _ = recorder.install();
    let a = setup(Arc::new(Heuristic)).await;
    a.open("roles.html").await;
    assert!(a.step("Click the Cancel button").await.success);
    assert!(!a.step("Click Save").await.success);
    let snapshot = snapshotter.snapshot().into_vec();
    let has = |name: &str, label: (&str, &str)| {
        snapshot.iter().any(|(key, _, _, _)| {
            key.key().name() == name
                && key
                    .key()
                    .labels()
                    .any(|l| l.key() == label.0 && l.value() == label.1)
        })
    };
    assert!(has("browser_act_actions_total", ("action", "click")));
    assert!(has(
        "browser_act_actions_total",
        ("error_type", "ambiguous_step")
    ));
    assert!(has("browser_act_decide_ms", ("translator", "heuristic")));
    assert!(has("browser_act_browser_ms", ("action", "click")));
    a.browsers.shutdown().await;
}

/// The model's replies may name the actions real pages need (issue 38): the
/// prompt lists them and the session's tabs, the strict schema takes their
/// arguments (`index`, `accept`, `onto`), and the reply is run as given.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn llm_replies_name_history_and_tab_actions() {
    let m = model().await;
    let config = LlmConfig {
        base_url: m.url.clone(),
        model: "scripted".into(),
        timeout_ms: 2000,
        max_attempts: 1,
        ..LlmConfig::default()
    };
    let translator = Arc::new(LlmTranslator::new(config, None).unwrap());
    let a = setup_with(translator, Arc::new(act::NoActStore)).await;
    let push = |replies: Vec<Reply>| m.script.lock().unwrap().extend(replies);

    a.open("web.html").await;
    a.call("browser_click", json!({"selector": "#route"})).await;
    push(vec![Reply::Content(
        r#"{"action": "go_back", "args": {"url": null, "role": null, "name": null, "text": null, "direction": null, "key": null, "seconds": null, "ref": null, "onto": null, "accept": null, "index": null}, "status": "success", "error_type": "none", "message": "Back"}"#,
    )]);
    let r = a.step("Go back to where we were").await;
    assert!(r.success, "{r:#?}");
    assert_eq!(r.data["call"]["tool"], "browser_navigate_back");
    let status = a
        .call("browser_get_text", json!({"selector": "#status"}))
        .await;
    assert_eq!(status.data["text"], "back at the start");
    {
        let requests = m.requests.lock().unwrap();
        let body = requests.last().unwrap();
        let user = body["messages"][1]["content"].as_str().unwrap();
        assert!(
            user.contains("go_back") && user.contains("select_tab"),
            "{user}"
        );
        let args = &body["response_format"]["json_schema"]["schema"]["properties"]["args"];
        assert_eq!(
            args["properties"]["index"]["type"],
            json!(["integer", "null"])
        );
    }

    a.open("tabs.html").await;
    a.call("browser_click", json!({"selector": "#blank"})).await;
    push(vec![Reply::Content(
        r#"{"action": "select_tab", "args": {"url": null, "role": null, "name": null, "text": null, "direction": null, "key": null, "seconds": null, "ref": null, "onto": null, "accept": null, "index": 0}, "status": "success", "error_type": "none", "message": "The first tab"}"#,
    )]);
    let r = a.step("Switch to the first tab").await;
    assert!(r.success, "{r:#?}");
    assert_eq!(
        r.data["call"]["args"],
        json!({"action": "select", "index": 0})
    );
    {
        let requests = m.requests.lock().unwrap();
        let user = requests.last().unwrap()["messages"][1]["content"]
            .as_str()
            .unwrap()
            .to_string();
        assert!(user.contains("TABS:\n- 0 \"Tabs\""), "{user}");
        assert!(user.contains("(current)"), "{user}");
    }
    let state = a.call("browser_get_page_state", json!({})).await;
    assert!(
        state.data["url"].as_str().unwrap().ends_with("tabs.html"),
        "{state:?}"
    );
    a.browsers.shutdown().await;
}

/// A model may navigate only where the step says: a page's text can talk a
/// model into "navigate to https://attacker.example/…" on a step that only
/// asked for a click. Such a reply is invalid (asked again, then
/// `ambiguous_step`) and nothing is navigated; an address the step names is
/// followed.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn llm_navigations_go_only_where_the_step_says() {
    let m = model().await;
    let config = LlmConfig {
        base_url: m.url.clone(),
        model: "scripted".into(),
        timeout_ms: 2000,
        max_attempts: 1,
        ..LlmConfig::default()
    };
    let translator = Arc::new(LlmTranslator::new(config, None).unwrap());
    let a = setup_with(translator, Arc::new(act::NoActStore)).await;
    let push = |replies: Vec<Reply>| m.script.lock().unwrap().extend(replies);
    // The scripted server takes `&'static str` replies.
    let navigate = |url: &str| -> &'static str {
        Box::leak(
            format!(
                r#"{{"action": "navigate", "args": {{"url": "{url}"}}, "status": "success", "error_type": "none", "message": "x"}}"#
            )
            .into_boxed_str(),
        )
    };
    let elsewhere = format!("{}/welcome.html", a.base);

    a.open("login.html").await;
    let stray = navigate(&elsewhere);
    push(vec![Reply::Content(stray), Reply::Content(stray)]);
    let r = a.step("Click the Log in button").await;
    let e = r.error.expect("a navigation nobody asked for is refused");
    assert_eq!(e.code.as_deref(), Some("ambiguous_step"), "{e:?}");
    assert!(e.message.contains("names no address"), "{}", e.message);
    assert!(a.url().await.ends_with("login.html"), "{}", a.url().await);

    push(vec![Reply::Content(navigate(&elsewhere))]);
    let r = a.step(&format!("Go to {elsewhere}")).await;
    assert!(r.success, "{r:#?}");
    assert!(a.url().await.ends_with("welcome.html"));
    a.browsers.shutdown().await;
}

/// The model gets what is left of the step (issue 61): too little for a
/// completion, and none is started — the step is refused at once, naming
/// the candidates; a completion that runs past what was left is cut there,
/// refused the same way, not reported as an unknown failure.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_model_is_asked_only_with_time_to_answer() {
    let m = model().await;
    let config = LlmConfig {
        base_url: m.url.clone(),
        model: "scripted".into(),
        timeout_ms: 10_000,
        max_attempts: 1,
        ..LlmConfig::default()
    };
    let translator = Arc::new(LlmTranslator::new(config, None).unwrap());
    let a = setup_with(translator, Arc::new(act::NoActStore)).await;
    a.open("login.html").await;
    let within = |timeout_ms: u64| {
        a.executor.call(
            ToolCall::new(
                "browser_act",
                json!({"plan_step": "Click the Log in button"}),
            )
            .correlation_id("s")
            .policy(json!({"timeout_ms": timeout_ms, "retry": {"max_attempts": 1}})),
        )
    };
    let started = std::time::Instant::now();
    let r = within(1500).await;
    let e = r.error.as_ref().expect("refused");
    assert_eq!(e.code.as_deref(), Some("ambiguous_step"), "{r:#?}");
    assert!(e.message.contains("not asking the model"), "{}", e.message);
    assert!(
        m.requests.lock().unwrap().is_empty(),
        "a completion was started"
    );
    assert!(
        started.elapsed() < Duration::from_millis(1500),
        "refused at once"
    );

    // 4 s for the step: the completion gets about 3 s, and the model takes 5.
    m.script
        .lock()
        .unwrap()
        .push_back(Reply::Slow(Duration::from_secs(5), CLICK_LOG_IN));
    let r = within(4000).await;
    let e = r.error.as_ref().expect("refused");
    assert_eq!(e.code.as_deref(), Some("ambiguous_step"), "{r:#?}");
    assert!(e.message.contains("ms the step had left"), "{}", e.message);
    assert_eq!(m.requests.lock().unwrap().len(), 1);
    a.browsers.shutdown().await;
}
