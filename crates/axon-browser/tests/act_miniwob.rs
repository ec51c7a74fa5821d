//! `browser_act` on pages and instructions that someone else wrote: the
//! MiniWoB++ benchmark (Farama Foundation, MIT; PyPI `miniwob` 1.1.0, whose
//! task pages `scripts/peers` puts in peers/miniwob). Each task page draws a
//! random instance from a seed and writes its instruction in `#query`; the
//! page itself scores what was done (`WOB_RAW_REWARD_GLOBAL`, 1 for right,
//! −1 for wrong). These are the phrasings from another hand that issue 39
//! asked for. Their first run, before any change for them, was the held-out
//! figure (67.7 % of the text tasks); the heuristic was then fixed on what it
//! missed, so they are a development set from here on (docs/browser-act.md).
//!
//! The tasks are the benchmark's tasks whose instruction asks for **one**
//! action (a `browser_act` step is one action; the others are plans), chosen
//! by reading the instructions before any episode was run:
//!
//! - [`TEXT_TASKS`]: the control is named by what a person reads on the page
//!   (a label, a link text, a kind of widget, a position). Passed when the
//!   page scores the step right.
//! - [`SEEING_TASKS`]: the control is named by what the page draws (a colour,
//!   a shape, a grid point, a count of shapes), which the text of a page does
//!   not say. The heuristic cannot see; it passes when it acts right *or*
//!   declines (the step fails with its code, left to a model), and the one
//!   outcome counted against it is an action the page scores wrong that the
//!   call reported as a success.
//!
//! Run: `cargo test -p axon-browser --test act_miniwob -- --nocapture` (it
//! prints every task's instructions and outcomes).

mod support;

use std::collections::BTreeMap;

use axon_browser::BrowserConfig;
use axon_core::{CallResult, ToolCall};
use serde_json::{Value, json};

const TEXT_TASKS: [&str; 13] = [
    "click-button",
    "click-dialog",
    "click-dialog-2",
    "click-link",
    "click-tab",
    "click-test",
    "click-test-2",
    "click-test-transfer",
    "click-widget",
    "focus-text",
    "focus-text-2",
    "social-media",
    "unicode-test",
];

const SEEING_TASKS: [&str; 6] = [
    "click-color",
    "click-shape",
    "count-shape",
    "count-sides",
    "grid-coordinate",
    "identify-shape",
];

/// Episodes per task, seeds 1..=EPISODES.
const EPISODES: u32 = 10;

/// The text tasks' floor: 92.3 % right on 2026-11-27 after the fixes the
/// first run called for (the first run, nothing tuned: 67.7 %;
/// docs/browser-act.md), less about four episodes, so that it only stops a
/// slide.
const TEXT_FLOOR: f64 = 89.0;

/// What one episode came to.
#[derive(Debug, Clone, Copy, PartialEq)]
enum Outcome {
    /// The page scored the action right.
    Right,
    /// `browser_act` failed the step with a code: nothing claimed.
    Declined,
    /// `browser_act` reported success and the page scored it wrong (or not
    /// at all): a wrong answer reported as success.
    Wrong,
}

/// Run one episode of `task` with `seed` in session `session`: the
/// instruction, what the step did, and the outcome.
async fn episode(
    f: &support::Fixture,
    base: &str,
    session: &str,
    task: &str,
    seed: u32,
) -> (String, String, Outcome) {
    let call = |tool: &str, args: Value| {
        f.executor
            .call(ToolCall::new(tool, args).correlation_id(session))
    };
    let opened = call(
        "browser_navigate",
        json!({"url": format!("{base}/miniwob/{task}.html")}),
    )
    .await;
    assert!(opened.success, "{task}: {opened:?}");
    // As MiniWoB++'s own driver starts an episode (selenium_instance.py):
    // seed, start, wait until the task says it is ready. The episode's own
    // time limit (10 s) is lifted: a loaded machine must not score a miss.
    let start = format!(
        "async () => {{ Math.seedrandom('{seed}'); core.EPISODE_MAX_TIME = 600000; \
         core.startEpisodeReal(); \
         for (let i = 0; i < 40 && !WOB_TASK_READY; i++) await new Promise(r => setTimeout(r, 50)); \
         return core.getUtterance(); }}"
    );
    let started = call("browser_evaluate", json!({"function": start})).await;
    assert!(started.success, "{task} {seed}: {started:?}");
    let instruction = started.data["result"]
        .as_str()
        .unwrap_or_default()
        .to_string();
    assert!(!instruction.is_empty(), "{task} {seed}: no instruction");

    let acted = call("browser_act", json!({"plan_step": instruction})).await;
    let score = call(
        "browser_evaluate",
        json!({"function": "() => ({done: WOB_DONE_GLOBAL, reward: WOB_RAW_REWARD_GLOBAL})"}),
    )
    .await;
    assert!(score.success, "{task} {seed}: {score:?}");
    let right = score.data["result"]["done"] == true
        && score.data["result"]["reward"].as_f64().unwrap_or(0.0) > 0.0;
    let outcome = match (acted.success, right) {
        (_, true) => Outcome::Right,
        (false, false) => Outcome::Declined,
        (true, false) => Outcome::Wrong,
    };
    (instruction, did(&acted), outcome)
}

/// What a step did, in a few words: its action and arguments, or its error.
fn did(acted: &CallResult) -> String {
    match &acted.error {
        Some(e) => format!("{}: {}", e.code.as_deref().unwrap_or("error"), e.message),
        None => format!("{} {}", acted.data["action"], acted.data["args"]),
    }
}

/// Each task's outcomes, printed as they come.
async fn run(f: &support::Fixture, base: &str, tasks: &[&str]) -> BTreeMap<String, Vec<Outcome>> {
    let mut outcomes = BTreeMap::new();
    for task in tasks {
        let mut episodes = Vec::new();
        for seed in 1..=EPISODES {
            let session = format!("{task}-{seed}");
            let (instruction, did, outcome) = episode(f, base, &session, task, seed).await;
            println!("  {task} #{seed} {outcome:?}: {instruction:?} → {did}");
            f.executor
                .call(ToolCall::new("browser_session_close", json!({})).correlation_id(&session))
                .await;
            episodes.push(outcome);
        }
        outcomes.insert(task.to_string(), episodes);
    }
    outcomes
}

fn count(episodes: &[Outcome], outcome: Outcome) -> usize {
    episodes.iter().filter(|o| **o == outcome).count()
}

/// Run `tasks` on a browser of their own and print each task's outcomes.
async fn run_tasks(tasks: &[&str]) -> Vec<Outcome> {
    let root = axon_testkit::repo_root().join("peers/miniwob");
    assert!(
        root.join("miniwob/click-button.html").exists(),
        "MiniWoB++'s pages are not in {} (run scripts/peers)",
        root.display()
    );
    let mut config = BrowserConfig {
        allow_evaluate: true,
        ..BrowserConfig::default()
    };
    // A step whose target is missing fails at the auto-wait: keep that short.
    config.timeouts.click_ms = 600;
    config.timeouts.type_ms = 600;
    config.timeouts.press_key_ms = 600;
    let f = support::act_fixture(config).await;
    let base = support::serve_tree(root).await;
    let outcomes = run(&f, &base, tasks).await;
    f.browsers.shutdown().await;

    println!("task                 right declined wrong");
    for (task, episodes) in &outcomes {
        println!(
            "  {task:<20} {:>5} {:>8} {:>5}",
            count(episodes, Outcome::Right),
            count(episodes, Outcome::Declined),
            count(episodes, Outcome::Wrong),
        );
    }
    outcomes.into_values().flatten().collect()
}

// The text and the seeing tasks are two tests, so that a test runner runs
// them side by side.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn miniwob_text_tasks_of_one_action() {
    let all = run_tasks(&TEXT_TASKS).await;
    let right = 100.0 * count(&all, Outcome::Right) as f64 / all.len() as f64;
    println!("text tasks: {right:.1} % right of {} episodes", all.len());
    // A step may fail; it may not claim an action the page scores wrong.
    assert_eq!(
        count(&all, Outcome::Wrong),
        0,
        "text tasks: a wrong action reported as success"
    );
    assert!(
        right >= TEXT_FLOOR,
        "text tasks {right:.1} % < floor {TEXT_FLOOR} %"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn miniwob_seeing_tasks_of_one_action() {
    let all = run_tasks(&SEEING_TASKS).await;
    println!(
        "seeing tasks: {} right, {} declined, {} wrong of {} episodes",
        count(&all, Outcome::Right),
        count(&all, Outcome::Declined),
        count(&all, Outcome::Wrong),
        all.len()
    );
    assert_eq!(
        count(&all, Outcome::Wrong),
        0,
        "seeing tasks: a wrong action reported as success"
    );
}
