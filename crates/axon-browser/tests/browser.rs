//! The page-level browser tools on a real headless Chromium (Debian's
//! `chromium`; `.ci/run` installs it), against pages this test serves on
//! 127.0.0.1 from tests/fixtures. Every call goes through a real executor.
//! The element tools are in tests/elements.rs.

mod support;

use axon_browser::BrowserConfig;
use axon_core::{CallResult, ErrorKind, ToolCall};
use serde_json::{Value, json};
use support::{failure, fixture};

fn png_height(bytes: &[u8]) -> u32 {
    assert_eq!(&bytes[..8], b"\x89PNG\r\n\x1a\n");
    u32::from_be_bytes([bytes[20], bytes[21], bytes[22], bytes[23]])
}

fn decode(text: &str) -> Vec<u8> {
    // Test-side decoder, independent of the crate's.
    let table = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    let mut bits = 0u32;
    let mut n = 0;
    let mut out = Vec::new();
    for c in text.bytes().filter(|&c| c != b'=') {
        let v = table.iter().position(|&t| t == c).unwrap() as u32;
        bits = (bits << 6) | v;
        n += 6;
        if n >= 8 {
            n -= 8;
            out.push((bits >> n) as u8);
        }
    }
    out
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn navigate_then_read_state_and_html() {
    let f = fixture(BrowserConfig::default()).await;
    let url = format!("{}/login.html", f.base);
    let r = f.call("s1", "browser_navigate", json!({"url": url})).await;
    assert!(r.success, "{r:?}");
    assert_eq!(r.data["title"], "Sign in");
    assert_eq!(r.data["url"], url);
    assert_eq!(r.data["ready_state"], "complete");
    assert!(r.data["viewport"]["width"].as_f64().unwrap() > 0.0);

    let state = f.call("s1", "browser_get_page_state", json!({})).await;
    assert_eq!(state.data["title"], "Sign in");
    assert_eq!(state.data["scroll"]["y"], 0.0);
    assert_eq!(state.data["focused"], Value::Null);

    let table = f
        .call(
            "s1",
            "browser_get_page_html",
            json!({"selector": "#people"}),
        )
        .await;
    let html = table.data["html"].as_str().unwrap();
    assert!(
        html.starts_with("<table id=\"people\">") && html.contains("<td>Ada</td>"),
        "{html}"
    );
    let page = f.call("s1", "browser_get_page_html", json!({})).await;
    assert!(
        page.data["html"]
            .as_str()
            .unwrap()
            .contains("<h1>Sign in</h1>")
    );

    let missing = f
        .call("s1", "browser_get_page_html", json!({"selector": "#nope"}))
        .await;
    let e = missing.error.unwrap();
    assert_eq!(
        (e.kind, e.code.as_deref()),
        (ErrorKind::Failed, Some("element_not_found"))
    );

    let dom_ready = f
        .call(
            "s1",
            "browser_navigate",
            json!({"url": format!("{}/welcome.html", f.base), "wait_until": "domcontentloaded"}),
        )
        .await;
    assert_eq!(dom_ready.data["title"], "Welcome", "{dom_ready:?}");
    assert_ne!(dom_ready.data["ready_state"], "loading");
    f.browsers.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn each_session_has_its_own_page() {
    let f = fixture(BrowserConfig::default()).await;
    let a = f
        .call(
            "run-a",
            "browser_navigate",
            json!({"url": format!("{}/login.html", f.base)}),
        )
        .await;
    let b = f
        .call(
            "run-b",
            "browser_navigate",
            json!({"url": format!("{}/welcome.html", f.base)}),
        )
        .await;
    assert!(a.success && b.success, "{a:?} {b:?}");
    let a = f.call("run-a", "browser_get_page_state", json!({})).await;
    assert_eq!(a.data["title"], "Sign in");
    f.browsers.close_session("run-a").await;
    let fresh = f.call("run-a", "browser_get_page_state", json!({})).await;
    assert_eq!(fresh.data["url"], "about:blank");
    f.browsers.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_least_recently_used_page_is_closed_past_max_pages() {
    let f = fixture(BrowserConfig {
        max_pages: 2,
        ..BrowserConfig::default()
    })
    .await;
    for session in ["a", "b"] {
        f.open(session, "login.html").await;
    }
    // "a" is used again, so "b" is the least recently used when "c" opens.
    f.call("a", "browser_get_page_state", json!({})).await;
    f.open("c", "welcome.html").await;
    let a = f.call("a", "browser_get_page_state", json!({})).await;
    assert_eq!(a.data["title"], "Sign in");
    // "b" lost its page: its next call says so (never a blank page read as
    // its own), and the one after starts afresh ("c", now the oldest, goes).
    let b = f.call("b", "browser_get_page_state", json!({})).await;
    assert_eq!(failure(&b).1.as_deref(), Some("session_lost"), "{b:?}");
    let b = f.call("b", "browser_get_page_state", json!({})).await;
    assert_eq!(b.data["url"], "about:blank");
    f.browsers.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn screenshots_of_the_viewport_the_full_page_and_to_a_file() {
    let f = fixture(BrowserConfig::default()).await;
    f.call(
        "s",
        "browser_navigate",
        json!({"url": format!("{}/long.html", f.base)}),
    )
    .await;
    let view = f.call("s", "browser_take_screenshot", json!({})).await;
    assert!(view.success, "{view:?}");
    let view_height = png_height(&decode(view.data["base64"].as_str().unwrap()));
    let full = f
        .call("s", "browser_take_screenshot", json!({"full_page": true}))
        .await;
    let full_height = png_height(&decode(full.data["base64"].as_str().unwrap()));
    assert!(
        full_height >= 3000 && full_height > view_height,
        "{full_height} vs {view_height}"
    );

    let saved = f
        .call("s", "browser_take_screenshot", json!({"path": "shot.png"}))
        .await;
    assert!(saved.success, "{saved:?}");
    let bytes = std::fs::read(f.files.join("shot.png")).unwrap();
    assert_eq!(png_height(&bytes), view_height);
    assert_eq!(saved.data["bytes"], bytes.len());
    assert_eq!(saved.data["path"], "shot.png");
    f.browsers.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn navigation_rules_and_failures_have_their_kinds() {
    let f = fixture(BrowserConfig {
        deny_hosts: vec!["blocked.test".into()],
        ..BrowserConfig::default()
    })
    .await;
    let code = |r: &CallResult| {
        let e = r.error.as_ref().expect("a failure");
        (e.kind, e.code.clone())
    };
    let blocked = Some("navigation_blocked".to_string());
    let file = f
        .call(
            "s",
            "browser_navigate",
            json!({"url": "file:///etc/passwd"}),
        )
        .await;
    assert_eq!(code(&file), (ErrorKind::Failed, blocked.clone()));
    let denied = f
        .call(
            "s",
            "browser_navigate",
            json!({"url": "http://blocked.test/"}),
        )
        .await;
    assert_eq!(code(&denied), (ErrorKind::Failed, blocked.clone()));
    let scheme = f
        .call(
            "s",
            "browser_navigate",
            json!({"url": "javascript:alert(1)"}),
        )
        .await;
    assert_eq!(code(&scheme), (ErrorKind::Failed, blocked));
    let relative = f
        .call("s", "browser_navigate", json!({"url": "/login.html"}))
        .await;
    assert_eq!(code(&relative).0, ErrorKind::InvalidArguments);

    // A port nobody listens on (Chromium refuses "unsafe" ones like 9 itself).
    let closed = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap();
    let refused = f
        .executor
        .call(
            ToolCall::new(
                "browser_navigate",
                json!({"url": format!("http://{closed}/")}),
            )
            .correlation_id("s")
            .policy(json!({"retry": {"max_attempts": 1}})),
        )
        .await;
    assert_eq!(code(&refused).0, ErrorKind::Unavailable, "{refused:?}");

    let only = fixture(BrowserConfig {
        allow_hosts: vec!["example.test".into()],
        ..BrowserConfig::default()
    })
    .await;
    let outside = only
        .call(
            "s",
            "browser_navigate",
            json!({"url": format!("{}/login.html", only.base)}),
        )
        .await;
    assert!(
        outside.error.unwrap().message.contains("allow_hosts"),
        "the allowlist names itself"
    );
    f.browsers.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_killed_browser_is_relaunched_by_the_retry() {
    let f = fixture(BrowserConfig::default()).await;
    let first = f
        .call(
            "s",
            "browser_navigate",
            json!({"url": format!("{}/login.html", f.base)}),
        )
        .await;
    assert!(first.success, "{first:?}");
    let pid = f.browsers.pid().await.expect("a browser runs");
    let status = std::process::Command::new("kill")
        .args(["-9", &pid.to_string()])
        .status()
        .unwrap();
    assert!(status.success());

    let after = f.call("s", "browser_get_page_state", json!({})).await;
    assert!(after.success, "{after:?}");
    // A new browser, with a new (blank) page for the session.
    assert_eq!(after.data["url"], "about:blank");
    let new_pid = f.browsers.pid().await.expect("relaunched");
    assert_ne!(pid, new_pid);
    f.browsers.shutdown().await;
}

/// The page's own navigation, begun before `browser_navigate` was called (a
/// form a click submitted on a timer, its server slow to answer), must not
/// land on top of ours after ours was reported: the navigation answers with
/// the page it asked for, and the page stays there.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_navigation_the_page_began_earlier_does_not_land_on_ours() {
    let f = fixture(BrowserConfig::default()).await;
    // (form's timer after the click, ms; the agent's pause before navigating,
    // ms): the form begins before `browser_navigate` is called and its
    // server answers 300 ms after it began, before or after ours began.
    let plan = [
        (0, 50),
        (50, 100),
        (100, 150),
        (60, 330),
        (60, 360),
        (60, 400),
    ];
    for (delay, gap) in plan {
        f.open("s", &format!("submit-later.html#{delay}")).await;
        let click = f
            .call("s", "browser_click", json!({"selector": "#go"}))
            .await;
        assert!(click.success, "{click:?}");
        tokio::time::sleep(std::time::Duration::from_millis(gap)).await;
        let url = format!("{}/roles.html", f.base);
        let went = f.call("s", "browser_navigate", json!({"url": url})).await;
        assert!(went.success, "{went:?}");
        let answered = went.data["title"].clone();
        tokio::time::sleep(std::time::Duration::from_millis(600)).await;
        let now = f.call("s", "browser_get_page_state", json!({})).await;
        assert_eq!(
            (answered, now.data["title"].clone()),
            (json!("Roles"), json!("Roles")),
            "the form after {delay} ms, the navigation after {gap} ms"
        );
    }
    f.browsers.shutdown().await;
}

/// A navigation that never loads a document (a link to a file the server
/// says to save, a 204) begins and never commits: the next navigation is not
/// held up waiting for it to.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_navigation_after_one_that_loads_no_document_is_not_held_up() {
    let f = fixture(BrowserConfig::default()).await;
    for link in ["#save", "#empty"] {
        f.open("s", "nowhere.html").await;
        let click = f
            .call("s", "browser_click", json!({"selector": link}))
            .await;
        assert!(click.success, "{click:?}");
        let url = format!("{}/roles.html", f.base);
        let began = std::time::Instant::now();
        let went = f.call("s", "browser_navigate", json!({"url": url})).await;
        let took = began.elapsed();
        assert_eq!(went.data["title"], "Roles", "{went:?}");
        assert!(
            took < std::time::Duration::from_millis(1500),
            "{link}: {took:?}"
        );
    }
    f.browsers.shutdown().await;
}
