//! The browser's breakers under the product's own policy (retries, a breaker
//! opening on five failures): a page with a control that never becomes
//! clickable must not take the browser down for the pages after it (issue
//! 37: a covered option made each `browser_act` step wait 3 s three times,
//! and five such attempts failed every `browser_act` on every later page
//! with `circuit_open` for 30 s). Real Chromium, loopback pages.

mod support;

use std::sync::Arc;
use std::time::{Duration, Instant};

use axon_browser::BrowserConfig;
use axon_browser_act::{self as act, Heuristic};
use axon_core::{CallResult, ErrorKind, ToolCall};
use axon_testkit::kill_9;
use serde_json::{Value, json};
use support::serve_fixtures;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_covered_control_fails_once_within_its_timeout_and_blocks_nothing_after_it() {
    let (executor, browsers) = support::act_executor_with(
        BrowserConfig::default(),
        Arc::new(Heuristic),
        Arc::new(act::MemoryActStore::default()),
        json!({}),
    );
    let base = serve_fixtures().await;
    let call = |session: &'static str, tool: &'static str, args: Value| {
        let executor = executor.clone();
        async move {
            executor
                .call(ToolCall::new(tool, args).correlation_id(session))
                .await
        }
    };
    let open = |session: &'static str, page: &str| {
        call(
            session,
            "browser_navigate",
            json!({ "url": format!("{base}/{page}") }),
        )
    };
    let mut circuit_open = 0;
    let mut count = |r: &CallResult| {
        if r.error
            .as_ref()
            .is_some_and(|e| e.kind == ErrorKind::CircuitOpen)
        {
            circuit_open += 1;
        }
    };

    // Session A: a button under an overlay, asked for six times (by the
    // translator and directly): each a failure of its own.
    assert!(open("a", "delayed.html").await.success);
    for _ in 0..3 {
        let started = Instant::now();
        let r = call(
            "a",
            "browser_act",
            json!({"plan_step": "Click the Under a veil button", "main_goal": "buy"}),
        )
        .await;
        count(&r);
        assert!(!r.success, "{r:?}");
        assert_eq!(r.attempts, 1, "the wait was the retry: {r:?}");
        assert!(
            started.elapsed() < Duration::from_secs(8),
            "one auto-wait, not three: {:?}",
            started.elapsed()
        );
        let r = call(
            "a",
            "browser_click",
            json!({"selector": "#covered", "timeout_ms": 300}),
        )
        .await;
        count(&r);
        assert_eq!(
            r.error.unwrap().code.as_deref(),
            Some("element_not_interactable")
        );
    }

    // Then ten ordinary steps on other pages, in session B and in A.
    let steps: [(&str, &str, &str); 10] = [
        ("b", "login.html", "Type 'ada' into the Username field"),
        ("b", "login.html", "Check the Remember me box"),
        ("b", "roles.html", "Tick 'Send me news'"),
        ("b", "roles.html", "Press the 'Save all' button"),
        (
            "b",
            "select.html",
            "Select 'Green' from the Colour dropdown",
        ),
        ("a", "roles.html", "Click Details"),
        ("a", "roles.html", "Fill in nickname with zed"),
        ("a", "select.html", "Choose Blue as the colour"),
        ("a", "login.html", "Enter 'hunter2' as the password"),
        ("b", "search.html", "Search for 'rust lang'"),
    ];
    for (session, page, step) in steps {
        let r = open(session, page).await;
        count(&r);
        assert!(r.success, "{page}: {r:?}");
        let r = call(
            session,
            "browser_act",
            json!({"plan_step": step, "main_goal": "test the pages"}),
        )
        .await;
        count(&r);
        assert!(r.success, "{step}: {r:?}");
        let r = call(session, "browser_click", json!({"selector": "body"})).await;
        count(&r);
    }
    assert_eq!(circuit_open, 0);
    browsers.shutdown().await;
}

/// What does count: a browser that keeps dying opens the breaker, and says
/// which.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_browser_that_keeps_crashing_opens_the_breaker() {
    let (executor, browsers) = support::act_executor_with(
        BrowserConfig::default(),
        Arc::new(Heuristic),
        Arc::new(act::MemoryActStore::default()),
        json!({"retry": {"max_attempts": 1}, "breaker": {"failure_threshold": 2}}),
    );
    let base = serve_fixtures().await;
    let call = |tool: &'static str, args: Value| {
        let executor = executor.clone();
        async move {
            executor
                .call(ToolCall::new(tool, args).correlation_id("s"))
                .await
        }
    };
    let navigate = call(
        "browser_navigate",
        json!({ "url": format!("{base}/login.html") }),
    )
    .await;
    assert!(navigate.success, "{navigate:?}");
    // A killed browser fails the calls that meet it (`transient`: the next
    // one relaunches it); two such failures open the breaker. A call that
    // comes after the kill was seen (the process reaped) relaunches at once
    // and succeeds, and is killed under again: the order is failure,
    // success, failure, open — or success, failure, success, failure, open,
    // when the first call already finds the browser gone.
    kill_9(browsers.pid().await.expect("a browser runs"));
    let mut kinds = Vec::new();
    let mut open = None;
    for _ in 0..5 {
        let r = call("browser_get_page_state", json!({})).await;
        match r.error {
            Some(e) if e.kind == ErrorKind::CircuitOpen => {
                open = Some(e);
                break;
            }
            Some(e) => kinds.push(e.kind),
            None => {
                kill_9(browsers.pid().await.expect("relaunched"));
            }
        }
    }
    assert_eq!(kinds, vec![ErrorKind::Transient; 2]);
    let e = open.expect("the breaker opened");
    assert!(
        e.message
            .starts_with("circuit open for browser_get_page_state"),
        "{}",
        e.message
    );
    browsers.shutdown().await;
}

/// Issue 59: a page whose script throws under Axon's lookup (it replaced a
/// DOM method) failed a lookup that does not wait (`browser_wait_for_element`
/// for `hidden`) `transient`: retried, and heard by the breaker that every
/// caller of the tool shares, which two such calls opened. The page's doing
/// is `failed` now (`locate_failed`), tried once.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_page_that_throws_under_the_lookup_does_not_open_the_shared_breaker() {
    let (executor, browsers) = support::act_executor_with(
        BrowserConfig::default(),
        Arc::new(Heuristic),
        Arc::new(act::MemoryActStore::default()),
        json!({"breaker": {"failure_threshold": 2}}),
    );
    let base = serve_fixtures().await;
    let call = |session: &'static str, tool: &'static str, args: Value| {
        let executor = executor.clone();
        async move {
            executor
                .call(ToolCall::new(tool, args).correlation_id(session))
                .await
        }
    };
    let hidden = json!({"selector": "#b", "state": "hidden", "timeout_ms": 300});
    let url = format!("{base}/throwing.html");
    assert!(
        call("hostile", "browser_navigate", json!({"url": url}))
            .await
            .success
    );
    for _ in 0..4 {
        let r = call("hostile", "browser_wait_for_element", hidden.clone()).await;
        let e = r.error.as_ref().expect("the lookup threw");
        assert_eq!(
            (e.kind, e.code.as_deref(), r.attempts),
            (ErrorKind::Failed, Some("locate_failed"), 1),
            "{r:?}"
        );
    }
    // The click waits for its element, looking again while the page throws,
    // and says the element never became ready.
    let r = call(
        "hostile",
        "browser_click",
        json!({"selector": "#b", "timeout_ms": 300}),
    )
    .await;
    assert_eq!(
        r.error.as_ref().and_then(|e| e.code.as_deref()),
        Some("element_not_interactable"),
        "{r:?}"
    );
    let url = format!("{base}/login.html");
    assert!(
        call("other", "browser_navigate", json!({"url": url}))
            .await
            .success
    );
    let gone = json!({"selector": "#nothing-here", "state": "hidden", "timeout_ms": 300});
    let r = call("other", "browser_wait_for_element", gone).await;
    assert!(r.success, "another caller's wait: {r:?}");
    browsers.shutdown().await;
}
