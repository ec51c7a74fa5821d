//! The `browser_act` corpus (tests/corpus/cases.jsonl): plan steps as an
//! orchestrating model phrases them, over fixture pages built from widget
//! patterns real sites use (span and div links, tabs, unlabelled inputs,
//! ordinals, drop-downs and multi-selects, dialogs and disclosures, ARIA
//! widgets, Bootstrap markup, a long list, an iframe and shadow DOM). Each
//! case names the page state it must reach: every fixture writes the outcome
//! of a click, an input or a change to `#log` (tests/fixtures/corpus.js).
//!
//! The cases were written before any tuning against them and split by a hash
//! of the step text into `dev` and `held_out`; tune on `dev` only. The test
//! prints the success rate of both splits and of each category, and the
//! per-step latency, and fails if either split falls below its floor (the
//! figures measured when the floor was set, docs/browser-act.md).
//!
//! Run: `cargo test -p axon-browser --test act_corpus -- --nocapture`.

mod support;

use std::collections::BTreeMap;

use axon_browser::BrowserConfig;
use axon_core::ToolCall;
use serde::Deserialize;
use serde_json::json;

#[derive(Deserialize)]
struct Case {
    page: String,
    category: String,
    step: String,
    expect: String,
    split: String,
    /// Calls that bring the page to the state the step starts from (a dialog
    /// held open, a second tab); a failing one is fine (a click that opens a
    /// held dialog fails `dialog_open`). Such a case runs in a session of its
    /// own.
    #[serde(default)]
    setup: Vec<Setup>,
}

#[derive(Deserialize)]
struct Setup {
    tool: String,
    args: serde_json::Value,
}

/// The floors: the success rates when they were last raised (dev 98.9 %,
/// held-out 90.8 %, 2026-11-24, after the snapshot's reach and the
/// translator's categories; the baseline was 21.5 % and 28.4 %), less about
/// three cases each, so that they only stop a slide.
const DEV_FLOOR: f64 = 95.0;
const HELD_OUT_FLOOR: f64 = 88.0;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_corpus_of_plan_steps() {
    let cases: Vec<Case> = include_str!("corpus/cases.jsonl")
        .lines()
        .filter(|l| !l.trim().is_empty())
        .map(|l| serde_json::from_str(l).expect("a corpus line is a case"))
        .collect();
    assert!(cases.len() >= 200, "{} cases", cases.len());
    let mut config = BrowserConfig::default();
    // A step whose target is missing fails at the auto-wait: keep that short.
    config.timeouts.click_ms = 600;
    config.timeouts.type_ms = 600;
    config.timeouts.press_key_ms = 600;
    // The dialog cases answer a dialog the session holds open.
    config.hold_dialogs = true;
    // Every step translated: the corpus measures the translator, not the cache.
    let f = support::act_fixture(config).await;
    std::fs::create_dir_all(&f.files).expect("the files folder");
    std::fs::write(f.files.join("cv.pdf"), b"%PDF-1.4 cv").expect("a file to upload");
    let (executor, browsers, base) = (&f.executor, &f.browsers, &f.base);
    let mut session = "corpus".to_string();

    // split -> (passed, total); category -> (passed, total); decide and step times.
    let mut splits: BTreeMap<&str, (u32, u32)> = BTreeMap::new();
    let mut categories: BTreeMap<&str, (u32, u32)> = BTreeMap::new();
    let mut step_ms: Vec<u64> = Vec::new();
    let mut acting_ms: Vec<u64> = Vec::new();
    let mut failures: Vec<String> = Vec::new();
    for (n, case) in cases.iter().enumerate() {
        if !case.setup.is_empty() {
            session = format!("corpus-{n}");
        }
        let call = |tool: &str, args: serde_json::Value| {
            executor.call(ToolCall::new(tool, args).correlation_id(&session))
        };
        let opened = call(
            "browser_navigate",
            json!({"url": format!("{base}/{}", case.page)}),
        )
        .await;
        assert!(opened.success, "{}: {opened:?}", case.page);
        for s in &case.setup {
            call(&s.tool, s.args.clone()).await;
        }
        let acted = call("browser_act", json!({"plan_step": case.step})).await;
        let log = call("browser_get_text", json!({"selector": "#log"})).await;
        let seen = log.data["text"].as_str().unwrap_or_default().to_string();
        let passed = acted.success && seen == case.expect;
        if acted.success {
            let ms = |k: &str| acted.data[k].as_u64().unwrap_or(0);
            step_ms.push(ms("execution_time_ms"));
            acting_ms.push(ms("snapshot_ms") + ms("decide_ms") + ms("dispatch_ms"));
        }
        let split = splits.entry(case.split.as_str()).or_default();
        let category = categories.entry(case.category.as_str()).or_default();
        split.1 += 1;
        category.1 += 1;
        if passed {
            split.0 += 1;
            category.0 += 1;
        } else if case.split == "dev" {
            // Only the development set's misses are shown: the held-out set is
            // not looked at while tuning.
            let why = match &acted.error {
                Some(e) => format!("{}: {}", e.code.as_deref().unwrap_or("error"), e.message),
                None => format!(
                    "{} {} → log {seen:?}",
                    acted.data["action"], acted.data["args"]
                ),
            };
            failures.push(format!(
                "  [{}] {:?} on {}: {why}",
                case.category, case.step, case.page
            ));
        }
    }
    browsers.shutdown().await;

    let rate = |(passed, total): (u32, u32)| 100.0 * f64::from(passed) / f64::from(total.max(1));
    let p50 = |mut v: Vec<u64>| {
        v.sort_unstable();
        v.get(v.len() / 2).copied().unwrap_or(0)
    };
    println!("browser_act corpus: {} cases", cases.len());
    for (name, counts) in &splits {
        println!(
            "  {name}: {}/{} = {:.1} %",
            counts.0,
            counts.1,
            rate(*counts)
        );
    }
    println!(
        "  successful steps, p50: {} ms whole step, {} ms snapshot + decide + dispatch (the rest is settle)",
        p50(step_ms),
        p50(acting_ms)
    );
    println!("by category (both splits):");
    for (name, counts) in &categories {
        println!("  {name:<18} {}/{}", counts.0, counts.1);
    }
    println!("dev misses:");
    for f in &failures {
        println!("{f}");
    }
    let dev = rate(splits.get("dev").copied().unwrap_or_default());
    let held_out = rate(splits.get("held_out").copied().unwrap_or_default());
    assert!(dev >= DEV_FLOOR, "dev {dev:.1} % < floor {DEV_FLOOR} %");
    assert!(
        held_out >= HELD_OUT_FLOOR,
        "held-out {held_out:.1} % < floor {HELD_OUT_FLOOR} %"
    );
}
