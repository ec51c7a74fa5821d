//! Downloads (issue 38): a file the page downloads lands in the files folder
//! (`[files] dir`) under a name of ours, never the page's path, and the call
//! that started it says so. Before this, Chromium cancelled every download
//! in a session's browser context and the click reported success with no
//! word of it. Hostile pages first: a name that climbs out of the folder, a
//! name that is already taken, a file larger than allowed, a page that
//! downloads forty files at once, and a server that keeps no files. Real
//! Chromium, loopback pages.

mod support;

use std::path::Path;
use std::sync::Arc;

use axon_browser::{BrowserConfig, Browsers};
use axon_core::{Executor, PolicyState, ToolCall, ToolRegistry};
use serde_json::{Value, json};
use support::fixture;

/// The files in `dir`, by name (the staging folder, hidden, left out).
fn names(dir: &Path) -> Vec<String> {
    let mut v: Vec<String> = std::fs::read_dir(dir)
        .map(|d| {
            d.filter_map(|e| e.ok())
                .map(|e| e.file_name().to_string_lossy().into_owned())
                .filter(|n| !n.starts_with('.'))
                .collect()
        })
        .unwrap_or_default();
    v.sort();
    v
}

/// What a call's data says of downloads.
fn downloads(data: &Value) -> Vec<Value> {
    data["downloads"].as_array().cloned().unwrap_or_default()
}

/// The downloads that ended, as the call `first` and the session's next calls
/// report them: a download that begins after its click returned is reported
/// by the call during which it began or ended. Waits for `want` of them (a
/// few seconds at most).
async fn ended(f: &support::Fixture, first: &Value, want: usize) -> Vec<Value> {
    let done = |d: &Value| d["state"] != "in_progress";
    let mut seen: Vec<Value> = downloads(first).into_iter().filter(done).collect();
    for _ in 0..50 {
        if seen.len() >= want {
            break;
        }
        let r = f.once("s", "browser_get_page_state", json!({})).await;
        seen.extend(downloads(&r.data).into_iter().filter(done));
        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
    }
    seen
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_download_lands_in_the_files_folder_under_a_safe_name_and_is_reported() {
    let f = fixture(BrowserConfig::default()).await;
    std::fs::create_dir_all(&f.files).unwrap();
    // A file of the operator's that a download of the same name must not replace.
    std::fs::write(f.files.join("report.pdf"), b"the operator's").unwrap();
    f.open("s", "downloads.html").await;

    let click = f
        .once("s", "browser_click", json!({"selector": "#climb"}))
        .await;
    assert!(click.success, "{click:?}");
    let got = ended(&f, &click.data, 1).await;
    assert_eq!(got.len(), 1, "the download is reported: {got:?}");
    assert_eq!(got[0]["state"], "completed", "{}", click.data);
    assert_eq!(got[0]["bytes"], 5);
    let file = got[0]["file"].as_str().unwrap().to_string();
    assert!(
        !file.starts_with('.') && !file.contains('/') && file.ends_with("evil_name.sh"),
        "a plain name in the files folder: {file}"
    );
    assert_eq!(std::fs::read(f.files.join(&file)).unwrap(), b"hello");
    // Nothing climbed out: the folder's parent has no such file.
    let parent = f.files.parent().unwrap();
    assert!(!parent.join(".evil name.sh").exists());
    assert!(!parent.join("evil name.sh").exists());

    // The same name again, and a name the operator's file holds: new names,
    // nothing replaced.
    for selector in ["#climb", "#report"] {
        let r = f
            .once("s", "browser_click", json!({"selector": selector}))
            .await;
        assert!(r.success, "{r:?}");
        assert_eq!(ended(&f, &r.data, 1).await.len(), 1, "{}", r.data);
    }
    assert_eq!(
        std::fs::read(f.files.join("report.pdf")).unwrap(),
        b"the operator's"
    );
    let listed = names(&f.files);
    assert_eq!(listed.len(), 4, "{listed:?}");
    assert!(
        listed
            .iter()
            .any(|n| n.starts_with("report-") && n.ends_with(".pdf")),
        "{listed:?}"
    );
    // What was downloaded can be uploaded again by that name.
    f.browsers.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_download_larger_than_allowed_is_cancelled_and_leaves_nothing() {
    held_to_the_cap("#big").await;
}

/// Issue 59: a download sent without a length is known to be too large only
/// as it grows (and may finish between two progress events): held to the
/// cap too, nothing kept. (Not seen failing before its fix here: Chromium
/// reported it over the cap while it was still in progress each time.)
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_download_without_a_length_is_held_to_the_cap_too() {
    held_to_the_cap("#streamed").await;
}

/// The download `selector`'s click starts (3 MiB) is cancelled under a cap
/// of 1 MiB, said so, and leaves nothing behind.
async fn held_to_the_cap(selector: &str) {
    let config = BrowserConfig {
        max_download_bytes: 1024 * 1024,
        ..BrowserConfig::default()
    };
    let f = fixture(config).await;
    f.open("s", "downloads.html").await;
    let click = f
        .once("s", "browser_click", json!({"selector": selector}))
        .await;
    assert!(click.success, "{click:?}");
    let got = ended(&f, &click.data, 1).await;
    assert_eq!(got.len(), 1, "{got:?}");
    assert_eq!(got[0]["state"], "canceled", "{}", click.data);
    assert!(
        got[0]["reason"]
            .as_str()
            .unwrap_or_default()
            .contains("max_download_bytes"),
        "{got:?}"
    );
    assert!(names(&f.files).is_empty(), "{:?}", names(&f.files));
    // Nor is a partial file left in the staging folder once Chromium has
    // handled the cancel: its download thread may create the file after the
    // cancel was sent and delete it after the call reported (seen 5 times in
    // 120 runs with both cores busy, gone within 110 ms each time).
    let staging = f.files.join(".downloads");
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(5);
    let mut staged = names_all(&staging);
    while !staged.is_empty() && std::time::Instant::now() < deadline {
        tokio::time::sleep(std::time::Duration::from_millis(20)).await;
        staged = names_all(&staging);
    }
    assert!(staged.is_empty(), "{staged:?}");
    f.browsers.shutdown().await;
}

fn names_all(dir: &Path) -> Vec<String> {
    std::fs::read_dir(dir)
        .map(|d| {
            d.filter_map(|e| e.ok())
                .map(|e| e.file_name().to_string_lossy().into_owned())
                .collect()
        })
        .unwrap_or_default()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_page_that_downloads_forty_files_at_once_is_held_to_the_cap() {
    let f = fixture(BrowserConfig::default()).await;
    f.open("s", "downloads.html").await;
    let click = f
        .once("s", "browser_click", json!({"selector": "#flood"}))
        .await;
    assert!(click.success, "{click:?}");
    // Whatever the timing, at most the cap lands; the report is bounded too.
    let mut seen = downloads(&click.data).len();
    for _ in 0..20 {
        let r = f.once("s", "browser_get_page_state", json!({})).await;
        seen += downloads(&r.data).len();
        if names(&f.files).len() >= 20 {
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(100)).await;
    }
    let landed = names(&f.files).len();
    assert!(landed <= 20, "{landed} files landed");
    assert!(landed > 0, "none landed");
    assert!(seen <= 40, "{seen}");
    f.browsers.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn without_a_files_folder_a_download_is_refused_and_says_why() {
    let browsers = Arc::new(Browsers::new(BrowserConfig::default()));
    let mut registry = ToolRegistry::new();
    axon_browser::register(&mut registry, browsers.clone()).unwrap();
    let executor = Executor::builder(registry)
        .policy_state(PolicyState::new())
        .defaults(json!({"retry": {"max_attempts": 1}, "breaker": {"failure_threshold": 0}}))
        .build()
        .unwrap();
    let base = support::serve_fixtures().await;
    let call =
        |tool: &str, args: Value| executor.call(ToolCall::new(tool, args).correlation_id("s"));
    let opened = call(
        "browser_navigate",
        json!({"url": format!("{base}/downloads.html")}),
    )
    .await;
    assert!(opened.success, "{opened:?}");
    let click = call("browser_click", json!({"selector": "#report"})).await;
    assert!(click.success, "{click:?}");
    let mut got = downloads(&click.data);
    for _ in 0..50 {
        if !got.is_empty() {
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
        got = downloads(&call("browser_get_page_state", json!({})).await.data);
    }
    assert_eq!(got.len(), 1, "{got:?}");
    assert_eq!(got[0]["state"], "canceled");
    assert!(
        got[0]["reason"]
            .as_str()
            .unwrap_or_default()
            .contains("[files] dir"),
        "{got:?}"
    );
    browsers.shutdown().await;
}

/// Every tab of a session hears of every download of its context: one
/// download from the second tab is saved once and reported once.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_download_in_a_second_tab_is_saved_and_reported_once() {
    let f = fixture(BrowserConfig::default()).await;
    f.open("s", "downloads.html").await;
    let tab = f
        .once(
            "s",
            "browser_tabs",
            json!({"action": "new", "url": format!("{}/downloads.html", f.base)}),
        )
        .await;
    assert!(tab.success, "{tab:?}");
    let click = f
        .once("s", "browser_click", json!({"selector": "#report"}))
        .await;
    assert!(click.success, "{click:?}");
    let got = ended(&f, &click.data, 1).await;
    // Whatever else the next calls report, no second copy lands.
    for _ in 0..5 {
        let r = f.once("s", "browser_get_page_state", json!({})).await;
        assert!(downloads(&r.data).is_empty(), "{}", r.data);
    }
    assert_eq!(got.len(), 1, "{got:?}");
    assert_eq!(got[0]["state"], "completed", "{got:?}");
    assert_eq!(names(&f.files), vec!["report.pdf".to_string()]);
    f.browsers.shutdown().await;
}

/// Issue 59: the click that asked for a download did not say so — Chromium
/// tells of a download some milliseconds after the click — and the next call
/// reported it instead (seen for all three links here before the fix). A
/// link with `download` on the page, one a script makes and clicks without
/// adding it to the page, and one over the cap: each is reported, ended, by
/// its own click, and by no later call.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_click_that_asks_for_a_download_reports_it() {
    let config = BrowserConfig {
        max_download_bytes: 1024 * 1024,
        ..BrowserConfig::default()
    };
    let f = fixture(config).await;
    f.open("s", "downloads.html").await;
    for (selector, state) in [
        ("#climb", "completed"),
        ("#report", "completed"),
        ("#big", "canceled"),
        ("#climb", "completed"),
    ] {
        let click = f
            .once("s", "browser_click", json!({"selector": selector}))
            .await;
        assert!(click.success, "{click:?}");
        let got = downloads(&click.data);
        assert_eq!(got.len(), 1, "{selector}: {}", click.data);
        assert_eq!(got[0]["state"], state, "{selector}: {}", click.data);
        let next = f.once("s", "browser_get_page_state", json!({})).await;
        assert!(
            downloads(&next.data).is_empty(),
            "{selector}: {}",
            next.data
        );
    }
    f.browsers.shutdown().await;
}
