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
//! A second set (tests/corpus/kits.jsonl, issue 39) covers the widget kinds of
//! the common UI kits (jQuery UI, Bootstrap, MUI) on `kit_*.html` pages:
//! icon-only controls, controls named by their kind, labels placed by layout,
//! ordinals over paged results, accordions, tabs, dates and times, several
//! choices in one step, sliders, spinners, autocompletes, menu bars, tables,
//! feeds, modals, and steps that need reading rather than matching (their
//! expected outcome is `error:ambiguous_step`). It was written before the
//! heuristic was changed for it, split the same way (the first byte of the
//! step's SHA-256, even: `dev`), and is reported per kind and split.
//!
//! Run: `cargo test -p axon-browser-act --test act_corpus -- --nocapture`.

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

/// The UI-kit set's floors, less about three cases each: dev 99.1 %,
/// held-out 83.6 % on 2026-11-26 with 232 cases (the first 187: baseline
/// 53.3 % and 51.5 %, then 98.9 % and 91.8 %; the 45 accordion, feed and
/// icon cases added after it took held-out to 82.8 % before any change, and
/// the dev fixes for them moved it by one case: docs/browser-act.md).
const KITS_DEV_FLOOR: f64 = 96.0;
const KITS_HELD_OUT_FLOOR: f64 = 81.0;

fn read_cases(jsonl: &str) -> Vec<Case> {
    jsonl
        .lines()
        .filter(|l| !l.trim().is_empty())
        .map(|l| serde_json::from_str(l).expect("a corpus line is a case"))
        .collect()
}

/// Passed and total cases.
type Count = (u32, u32);

/// What one set of cases scored.
#[derive(Default)]
struct Report {
    /// By split.
    splits: BTreeMap<String, Count>,
    /// By category and split.
    categories: BTreeMap<String, BTreeMap<String, Count>>,
    /// Whole steps, and snapshot + decide + dispatch, of successful steps.
    step_ms: Vec<u64>,
    acting_ms: Vec<u64>,
    /// The translator's decide time, successful steps.
    decide_ms: Vec<u64>,
    /// The development split's misses (the held-out split is not looked at
    /// while tuning).
    dev_misses: Vec<String>,
    /// Wrong actions by split: a step that reported success and did not
    /// bring the page to the state the case names (another element, another
    /// value, or an action where a refusal was right). Issue 61: none.
    wrong: BTreeMap<String, u32>,
    /// The wrong actions, both splits: each is a defect to fix at once
    /// (a refusal is the floor's business; a wrong action never is).
    wrong_cases: Vec<String>,
}

impl Report {
    fn rate(&self, split: &str) -> f64 {
        rate(self.splits.get(split).copied().unwrap_or_default())
    }

    fn print(&self, title: &str) {
        let total: u32 = self.splits.values().map(|c| c.1).sum();
        println!("{title}: {total} cases");
        for (name, counts) in &self.splits {
            println!(
                "  {name}: {}/{} = {:.1} %",
                counts.0,
                counts.1,
                rate(*counts)
            );
        }
        println!(
            "  successful steps, p50: {} ms whole step, {} ms snapshot + decide + dispatch (the rest is settle); decide p50 {} ms, p95 {} ms",
            percentile(&self.step_ms, 50),
            percentile(&self.acting_ms, 50),
            percentile(&self.decide_ms, 50),
            percentile(&self.decide_ms, 95),
        );
        println!("  by category: dev, held-out");
        for (name, splits) in &self.categories {
            let show = |split: &str| {
                let (passed, total) = splits.get(split).copied().unwrap_or_default();
                format!("{passed}/{total}")
            };
            println!("    {name:<18} {:>6} {:>6}", show("dev"), show("held_out"));
        }
        println!("  dev misses:");
        for miss in &self.dev_misses {
            println!("  {miss}");
        }
        println!(
            "  wrong actions (success reported, the page says otherwise): {:?}",
            self.wrong
        );
        for wrong in &self.wrong_cases {
            println!("  {wrong}");
        }
    }

    fn wrong_total(&self) -> u32 {
        self.wrong.values().sum()
    }
}

fn rate((passed, total): Count) -> f64 {
    100.0 * f64::from(passed) / f64::from(total.max(1))
}

fn percentile(values: &[u64], p: usize) -> u64 {
    let mut v = values.to_vec();
    v.sort_unstable();
    v.get((v.len() * p / 100).min(v.len().saturating_sub(1)))
        .copied()
        .unwrap_or(0)
}

/// The browser the corpora run on, set up as they need it.
async fn corpus_fixture() -> support::Fixture {
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
    f
}

// The two corpora are two tests, so that a test runner runs them side by side
// (each is about a minute of one browser's time).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_corpus_of_plan_steps() {
    let cases = read_cases(include_str!("corpus/cases.jsonl"));
    assert!(cases.len() >= 200, "{} cases", cases.len());
    let f = corpus_fixture().await;
    let report = run(&f, &cases, "corpus").await;
    f.browsers.shutdown().await;

    report.print("browser_act corpus");
    assert_eq!(report.wrong_total(), 0, "wrong actions reported as success");
    let (dev, held_out) = (report.rate("dev"), report.rate("held_out"));
    assert!(dev >= DEV_FLOOR, "dev {dev:.1} % < floor {DEV_FLOOR} %");
    assert!(
        held_out >= HELD_OUT_FLOOR,
        "held-out {held_out:.1} % < floor {HELD_OUT_FLOOR} %"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_ui_kit_corpus() {
    let kits = read_cases(include_str!("corpus/kits.jsonl"));
    assert!(kits.len() >= 160, "{} kit cases", kits.len());
    let f = corpus_fixture().await;
    let report = run(&f, &kits, "kits").await;
    f.browsers.shutdown().await;

    report.print("browser_act UI-kit corpus");
    assert_eq!(report.wrong_total(), 0, "wrong actions reported as success");
    let (dev, held_out) = (report.rate("dev"), report.rate("held_out"));
    assert!(
        dev >= KITS_DEV_FLOOR,
        "kits dev {dev:.1} % < floor {KITS_DEV_FLOOR} %"
    );
    assert!(
        held_out >= KITS_HELD_OUT_FLOOR,
        "kits held-out {held_out:.1} % < floor {KITS_HELD_OUT_FLOOR} %"
    );
}

/// Run `cases` one by one, each on a freshly opened page, in the session
/// `name` (a case with setup calls gets a session of its own).
async fn run(f: &support::Fixture, cases: &[Case], name: &str) -> Report {
    let (executor, base) = (&f.executor, &f.base);
    let mut report = Report::default();
    let mut session = name.to_string();
    for (n, case) in cases.iter().enumerate() {
        if !case.setup.is_empty() {
            session = format!("{name}-{n}");
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
        let code = acted.error.as_ref().and_then(|e| e.code.clone());
        let passed = match case.expect.strip_prefix("error:") {
            Some(expected) => code.as_deref() == Some(expected) && seen.is_empty(),
            None => acted.success && seen == case.expect,
        };
        let ms = |k: &str| acted.data[k].as_u64().unwrap_or(0);
        if acted.success {
            report.step_ms.push(ms("execution_time_ms"));
            report
                .acting_ms
                .push(ms("snapshot_ms") + ms("decide_ms") + ms("dispatch_ms"));
            report.decide_ms.push(ms("decide_ms"));
        }
        let split = report.splits.entry(case.split.clone()).or_default();
        split.1 += 1;
        let category = report
            .categories
            .entry(case.category.clone())
            .or_default()
            .entry(case.split.clone())
            .or_default();
        category.1 += 1;
        if acted.success && !passed {
            *report.wrong.entry(case.split.clone()).or_default() += 1;
            report.wrong_cases.push(format!(
                "  [{}] {:?} on {}: {} {} → log {seen:?}, wanted {}",
                case.category,
                case.step,
                case.page,
                acted.data["action"],
                acted.data["args"],
                case.expect
            ));
        }
        if passed {
            split.0 += 1;
            category.0 += 1;
        } else if case.split == "dev" {
            let why = match &acted.error {
                Some(e) => format!("{}: {}", e.code.as_deref().unwrap_or("error"), e.message),
                None => format!(
                    "{} {} → log {seen:?}",
                    acted.data["action"], acted.data["args"]
                ),
            };
            report.dev_misses.push(format!(
                "  [{}] {:?} on {}: {why}",
                case.category, case.step, case.page
            ));
        }
    }
    report
}
