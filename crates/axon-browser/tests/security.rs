//! Attacks on the browser tools, on a real Chromium (issue 36): a client that
//! names files outside the files directory, reads through a symlink or asks
//! whether a file exists; a pool filled by other sessions that evicts a page
//! while its run goes on; a page that answers the settle's questions with
//! numbers that are no duration. Each was seen to succeed before the fix.

mod support;

use std::sync::Arc;
use std::time::Duration;

use axon_browser::BrowserConfig;
use axon_core::ErrorKind;
use serde_json::json;
use support::{failure, fixture};

const ESCAPES: [&str; 6] = [
    "/tmp/axon-escape.png",
    "../escape.png",
    "sub/../../escape.png",
    ".bashrc",
    "..",
    "a/b.png",
];

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_client_cannot_write_outside_the_files_directory() {
    let f = fixture(BrowserConfig::default()).await;
    f.open("s", "welcome.html").await;
    for name in ESCAPES {
        for (tool, args) in [
            ("browser_take_screenshot", json!({"path": name})),
            ("browser_session_save", json!({"path": name})),
        ] {
            let r = f.once("s", tool, args).await;
            assert_eq!(
                failure(&r),
                (
                    ErrorKind::InvalidArguments,
                    Some("invalid_file_name".into())
                ),
                "{tool} {name}: {r:?}"
            );
            assert_eq!(r.error.as_ref().unwrap().pointer.as_deref(), Some("/path"));
        }
    }
    assert!(!std::path::Path::new("/tmp/axon-escape.png").exists());
    f.browsers.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_symlink_planted_in_the_files_directory_is_not_followed() {
    let f = fixture(BrowserConfig::default()).await;
    f.open("s", "welcome.html").await;
    std::fs::create_dir_all(&f.files).unwrap();
    let victim = std::env::temp_dir().join(format!("axon-victim-{}", ulid::Ulid::new()));
    std::fs::write(&victim, "precious").unwrap();
    std::os::unix::fs::symlink(&victim, f.files.join("profile.json")).unwrap();
    // Without overwrite: the name is taken.
    let r = f
        .once("s", "browser_session_save", json!({"path": "profile.json"}))
        .await;
    assert_eq!(failure(&r).1.as_deref(), Some("file_exists"), "{r:?}");
    // With overwrite: the link is replaced, its target untouched.
    let r = f
        .once(
            "s",
            "browser_session_save",
            json!({"path": "profile.json", "overwrite": true}),
        )
        .await;
    assert!(r.success, "{r:?}");
    assert_eq!(r.data["path"], "profile.json");
    assert_eq!(std::fs::read_to_string(&victim).unwrap(), "precious");
    assert!(!f.files.join("profile.json").is_symlink());
    let _ = std::fs::remove_file(victim);
    f.browsers.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn storage_state_paths_are_no_file_existence_oracle() {
    let f = fixture(BrowserConfig::default()).await;
    let existing = f
        .once(
            "s",
            "browser_session_new",
            json!({"storage_state_path": "/etc/passwd"}),
        )
        .await;
    let missing = f
        .once(
            "s",
            "browser_session_new",
            json!({"storage_state_path": "/etc/no-such-file"}),
        )
        .await;
    assert_eq!(failure(&existing), failure(&missing));
    assert_eq!(failure(&existing).1.as_deref(), Some("invalid_file_name"));
    // A symlink inside the directory reads as missing, wherever it points.
    std::fs::create_dir_all(&f.files).unwrap();
    std::os::unix::fs::symlink("/etc/passwd", f.files.join("state.json")).unwrap();
    let r = f
        .once(
            "s",
            "browser_session_new",
            json!({"storage_state_path": "state.json"}),
        )
        .await;
    assert_eq!(failure(&r).1.as_deref(), Some("file_not_found"), "{r:?}");
    f.browsers.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_full_pool_refuses_a_new_page_instead_of_evicting_one_in_use() {
    let f = Arc::new(
        fixture(BrowserConfig {
            max_pages: 1,
            ..BrowserConfig::default()
        })
        .await,
    );
    f.open("a", "welcome.html").await;
    // a's run is in the middle of a call.
    let busy = {
        let f = f.clone();
        tokio::spawn(async move { f.once("a", "browser_wait", json!({"seconds": 1.5})).await })
    };
    tokio::time::sleep(Duration::from_millis(300)).await;
    let url = format!("{}/welcome.html", f.base);
    let r = f.once("b", "browser_navigate", json!({"url": url})).await;
    assert_eq!(
        failure(&r),
        (ErrorKind::RateLimited, Some("capacity_exhausted".into())),
        "{r:?}"
    );
    assert!(busy.await.unwrap().success);
    // Between a's calls, b may take its page; a's next call says so rather
    // than reading a blank page as if it were its own.
    let r = f.once("b", "browser_navigate", json!({"url": url})).await;
    assert!(r.success, "{r:?}");
    let r = f
        .once("a", "browser_get_text", json!({"selector": "h1"}))
        .await;
    assert_eq!(
        failure(&r),
        (ErrorKind::Failed, Some("session_lost".into())),
        "{r:?}"
    );
    f.browsers.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_handle_session_is_not_evicted_by_default_sessions() {
    let f = fixture(BrowserConfig {
        max_pages: 1,
        ..BrowserConfig::default()
    })
    .await;
    let opened = f.once("owner", "browser_session_new", json!({})).await;
    let handle = opened.data["session"].as_str().unwrap().to_string();
    let url = format!("{}/welcome.html", f.base);
    let r = f
        .once("other", "browser_navigate", json!({"url": url}))
        .await;
    assert_eq!(
        failure(&r).1.as_deref(),
        Some("capacity_exhausted"),
        "{r:?}"
    );
    let r = f
        .once(
            "owner",
            "browser_navigate",
            json!({"session": handle, "url": url}),
        )
        .await;
    assert!(r.success, "the handle's page was taken: {r:?}");
    f.browsers.shutdown().await;
}

/// One client cannot take the whole pool: past `max_pages_per_client` its
/// next new page is refused, while another client and the process's owner
/// still open theirs.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn one_client_cannot_take_the_whole_page_pool() {
    let f = fixture(BrowserConfig {
        max_pages_per_client: 2,
        ..BrowserConfig::default()
    })
    .await;
    let url = format!("{}/welcome.html", f.base);
    let navigate = |session: &'static str, tenant: Option<&'static str>| {
        let mut call = axon_core::ToolCall::new("browser_navigate", json!({"url": url}))
            .correlation_id(session)
            .policy(json!({"retry": {"max_attempts": 1}}));
        if let Some(tenant) = tenant {
            call = call.tenant(tenant);
        }
        f.executor.call(call)
    };
    for session in ["a1", "a2"] {
        let r = navigate(session, Some("client-a")).await;
        assert!(r.success, "{session}: {r:?}");
    }
    let r = navigate("a3", Some("client-a")).await;
    assert_eq!(
        failure(&r),
        (ErrorKind::RateLimited, Some("capacity_exhausted".into())),
        "{r:?}"
    );
    assert!(
        r.error
            .as_ref()
            .unwrap()
            .message
            .contains("max_pages_per_client")
    );
    // Its open pages still answer; others still open theirs.
    assert!(navigate("a1", Some("client-a")).await.success);
    assert!(navigate("b1", Some("client-b")).await.success);
    assert!(navigate("owner", None).await.success);
    f.browsers.shutdown().await;
}

/// Chromium's sandbox is a setting (`[browser] sandbox`): unset, it is on
/// unless Axon runs as root, where Chromium refuses it. Asked for as root,
/// the launch fails saying which setting to change; as another user, the
/// page opens sandboxed.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_sandbox_is_on_unless_root_and_asking_for_it_as_root_says_what_to_change() {
    use std::os::unix::fs::MetadataExt;
    let root = std::fs::metadata("/proc/self").unwrap().uid() == 0;
    assert_eq!(BrowserConfig::default().sandboxed(), !root);
    let f = fixture(BrowserConfig {
        sandbox: Some(true),
        launch_timeout_ms: 10_000,
        ..BrowserConfig::default()
    })
    .await;
    let r = f
        .once(
            "s",
            "browser_navigate",
            json!({"url": format!("{}/welcome.html", f.base)}),
        )
        .await;
    if root {
        assert_eq!(
            failure(&r),
            (ErrorKind::Unavailable, Some("browser_launch_failed".into()))
        );
        let message = r.error.unwrap().message;
        assert!(message.contains("[browser] sandbox = false"), "{message}");
    } else {
        assert!(r.success, "{r:?}");
    }
    f.browsers.shutdown().await;
}

/// A page that leaves for another the moment it has loaded replaces its
/// document while `browser_navigate` reads the page's state: the navigation
/// still succeeds, reporting where the page is (CI, under load, failed it
/// with "Inspected target navigated or closed").
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_page_that_moves_on_as_it_loads_is_still_reached() {
    let f = fixture(BrowserConfig::default()).await;
    for _ in 0..10 {
        let r = f
            .once(
                "s",
                "browser_navigate",
                json!({"url": format!("{}/moves_on.html", f.base)}),
            )
            .await;
        assert!(r.success, "{r:?}");
    }
    f.browsers.shutdown().await;
}

/// A click submits a form whose server is slow to answer, and the agent goes
/// elsewhere at once: the form's navigation, still on its way, must not land
/// after ours and change the page under the agent, whose navigation was
/// reported a success on the other page.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_form_still_on_its_way_does_not_overtake_a_navigation() {
    let f = fixture(BrowserConfig::default()).await;
    for _ in 0..3 {
        let went = f.submit_then_leave("s", "slow_form.html").await;
        assert_eq!(went.data["title"], "Roles", "{went:?}");
        // Past the form's answer (300 ms): the page is still the one reported.
        tokio::time::sleep(Duration::from_millis(700)).await;
        let now = f.call("s", "browser_get_page_state", json!({})).await;
        assert_eq!(now.data["title"], "Roles", "{now:?}");
    }
    f.browsers.shutdown().await;
}

/// Issue 59: WebRTC speaks UDP, which an HTTP proxy does not carry, so a page
/// could ask a STUN server on a host the rules refuse for this machine's
/// address, past the egress proxy. Chromium is told to send no UDP that does
/// not go through the proxy: the refused host hears nothing.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn webrtc_sends_no_udp_around_the_proxy() {
    // A STUN "server" on a loopback address the rules refuse (the fixture
    // pages are on 127.0.0.1, which stays allowed).
    let stun = tokio::net::UdpSocket::bind("127.0.0.2:0").await.unwrap();
    let port = stun.local_addr().unwrap().port();
    let f = fixture(BrowserConfig {
        deny_hosts: vec!["127.0.0.2".into()],
        ..BrowserConfig::default()
    })
    .await;
    f.open("s", &format!("webrtc.html?stun=127.0.0.2:{port}"))
        .await;
    let mut buf = [0u8; 1500];
    let heard = tokio::time::timeout(Duration::from_secs(3), stun.recv_from(&mut buf)).await;
    assert!(
        heard.is_err(),
        "a refused host got a STUN packet from the page: {heard:?}"
    );
    // The page did try (and was not stopped by an error of its own).
    let mut state = String::new();
    for _ in 0..50 {
        state = f.text("s", "#state").await;
        if state != "starting" {
            break;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    assert_eq!(state, "done");
}

/// Issue 59: a page that frames a `file:` URL held `browser_navigate` for
/// about a minute, past the caller's `timeout_ms`. Every step of the
/// navigation is held to the deadline now.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_page_framing_a_file_url_does_not_outlast_the_navigation_timeout() {
    let f = fixture(BrowserConfig::default()).await;
    f.open("s", "welcome.html").await;
    let started = std::time::Instant::now();
    let r = f
        .once(
            "s",
            "browser_navigate",
            json!({"url": format!("{}/file_frame.html", f.base), "timeout_ms": 2000}),
        )
        .await;
    let took = started.elapsed();
    assert!(took < Duration::from_secs(5), "took {took:?}: {r:?}");
    if let Some(e) = &r.error {
        assert_eq!(e.code.as_deref(), Some("navigation_timeout"), "{r:?}");
    }
    f.browsers.shutdown().await;
}

/// The settle reads the page's own state (its mutation clock, its animation
/// list), which the page can replace: "the last change was 10^305 seconds
/// ago" made a duration too large to hold, a panic in the tool call. The
/// click answers, its change seen, within the settle's bound.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_page_that_reports_an_endless_quiet_does_not_break_the_settle() {
    let f = fixture(BrowserConfig::default()).await;
    f.open("s", "hostile_settle.html").await;
    let began = std::time::Instant::now();
    let grown = f
        .call("s", "browser_click", json!({"selector": "#grow"}))
        .await;
    assert!(grown.success, "{grown:?}");
    assert!(began.elapsed() < Duration::from_secs(10), "bounded");
    assert_eq!(f.text("s", "#list").await, "grown");
    let again = f
        .call("s", "browser_click", json!({"selector": "#grow"}))
        .await;
    assert!(again.success, "the session goes on: {again:?}");
    f.browsers.shutdown().await;
}
