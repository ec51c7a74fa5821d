//! `browser_act` on pages and instructions that someone else wrote: the
//! MiniWoB++ benchmark (Farama Foundation, MIT; PyPI `miniwob` 1.1.0, whose
//! task pages `scripts/peers` puts in peers/miniwob). Each task page draws a
//! random instance from a seed and writes its instruction in `#query`; the
//! page itself scores what was done (`WOB_RAW_REWARD_GLOBAL`, 1 for right,
//! −1 for wrong). These are the phrasings from another hand that issue 39
//! asked for. Their first run, before any change for them, was the held-out
//! figure (67.7 % of the text tasks); the heuristic was then fixed on what it
//! missed, so they are a development set from here on (docs/act-miniwob.md).
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
//! - [`COMPOUND_TASKS`]: the instruction holds several actions, given to
//!   `browser_act` whole; its refusal's `steps` are given one at a time.
//!
//! Run: `cargo nextest run --workspace -E 'binary(act_miniwob)' --no-capture`
//! (it prints every task's instructions and outcomes; `MINIWOB_TASKS=a,b`
//! runs some, `MINIWOB_SNAPSHOT=1` prints the page after each episode).

mod support;

use std::collections::{BTreeMap, VecDeque};

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

/// The tasks whose instruction holds several actions, each named by what a
/// person reads ("Select ONE and click Submit.", "Enter \"x\" into the text
/// field and press Submit."): `browser_act` does one action a call, so it
/// refuses such a step with the steps it holds, and the episode gives those
/// one at a time as an agent would (docs/browser-act.md, "Compound steps").
/// Chosen by reading every task's instruction before an episode ran; the
/// tasks left out, and why, are in docs/act-miniwob.md.
const COMPOUND_TASKS: [&str; 25] = [
    "button-delay",
    "choose-date",
    "choose-list",
    "click-button-sequence",
    "click-checkboxes",
    "click-checkboxes-large",
    "click-checkboxes-transfer",
    "click-collapsible",
    "click-menu-2",
    "click-option",
    "click-pie",
    "click-scroll-list",
    "enter-date",
    "enter-password",
    "enter-text",
    "enter-text-dynamic",
    "enter-time",
    "form-sequence",
    "form-sequence-2",
    "form-sequence-3",
    "login-user",
    "search-engine",
    "sign-agreement",
    "use-slider",
    "use-spinner",
];

/// Compound tasks whose page scores only after a Submit button that the
/// instruction does not mention ("Check the 1st radio button and enter the
/// number \"16\" into the 3rd textbox."): the harness clicks it after the
/// steps, or every right episode would read as unscored.
const SILENT_SUBMIT: [&str; 1] = ["form-sequence-2"];

/// Episodes per task, seeds 1..=EPISODES.
const EPISODES: u32 = 10;

/// The text tasks' floor: 92.3 % right on 2026-11-27 after the fixes the
/// first run called for (the first run, nothing tuned: 67.7 %;
/// docs/act-miniwob.md), less about four episodes, so that it only stops a
/// slide.
const TEXT_FLOOR: f64 = 89.0;

/// The compound tasks' floor: 69.6 % right on 2026-11-29 after the fixes
/// their first run called for (first run: 38.8 %, 45 wrong;
/// docs/act-miniwob.md), less about five episodes.
const COMPOUND_FLOOR: f64 = 67.5;

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
) -> (String, String, Outcome, bool) {
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

    let (acted, did, bare) = act(&call, &instruction).await;
    // A task whose page ends the episode on a Submit its instruction does
    // not ask for: the harness presses it, after a step that succeeded, as
    // MiniWoB++'s own agents must (docs/act-miniwob.md).
    if acted && SILENT_SUBMIT.contains(&task) {
        let submitted = call("browser_click", json!({"role": "button", "name": "Submit"})).await;
        assert!(submitted.success, "{task} {seed}: {submitted:?}");
    }
    if std::env::var_os("MINIWOB_SNAPSHOT").is_some() {
        let seen = call("browser_snapshot", json!({})).await;
        println!("{}", seen.data);
    }
    let score = call(
        "browser_evaluate",
        json!({"function": "() => ({done: WOB_DONE_GLOBAL, reward: WOB_RAW_REWARD_GLOBAL})"}),
    )
    .await;
    assert!(score.success, "{task} {seed}: {score:?}");
    let right = score.data["result"]["done"] == true
        && score.data["result"]["reward"].as_f64().unwrap_or(0.0) > 0.0;
    let outcome = match (acted, right) {
        (_, true) => Outcome::Right,
        (false, false) => Outcome::Declined,
        (true, false) => Outcome::Wrong,
    };
    (instruction, did, outcome, bare)
}

/// Give `instruction` to `browser_act` as an agent would: a step refused
/// with the steps it holds (a compound step, `error.steps`) is given again
/// as those steps, one at a time, in order. Whether every action reported
/// success, what each did, and whether a refusal came bare: without an
/// element to act on next (no candidates).
async fn act<F, Fut>(call: &F, instruction: &str) -> (bool, String, bool)
where
    F: Fn(&'static str, Value) -> Fut,
    Fut: std::future::Future<Output = CallResult>,
{
    let mut steps = VecDeque::from([instruction.to_string()]);
    let mut done = Vec::new();
    // A bound on splitting, so that a refusal that names itself again
    // cannot loop.
    let mut splits = 0;
    while let Some(step) = steps.pop_front() {
        let acted = call("browser_act", json!({"plan_step": step})).await;
        let split = acted
            .error
            .as_ref()
            .map(|e| e.steps.clone())
            .unwrap_or_default();
        if !split.is_empty() && splits < 8 {
            splits += 1;
            done.push(format!("split {split:?}"));
            for s in split.into_iter().rev() {
                steps.push_front(s);
            }
            continue;
        }
        done.push(did(&acted));
        if let Some(e) = acted.error.as_ref().filter(|_| !acted.success) {
            return (false, done.join("; "), e.candidates.is_empty());
        }
    }
    (true, done.join("; "), false)
}

/// What a step did, in a few words: its action and arguments, or its error.
fn did(acted: &CallResult) -> String {
    match &acted.error {
        Some(e) => format!("{}: {}", e.code.as_deref().unwrap_or("error"), e.message),
        None => format!("{} {}", acted.data["action"], acted.data["args"]),
    }
}

/// Each task's outcomes, printed as they come.
async fn run(
    f: &support::Fixture,
    base: &str,
    tasks: &[&str],
) -> BTreeMap<String, (Vec<Outcome>, usize)> {
    let mut outcomes = BTreeMap::new();
    for task in tasks {
        let mut episodes = Vec::new();
        let mut bare = 0;
        for seed in 1..=EPISODES {
            let session = format!("{task}-{seed}");
            let (instruction, did, outcome, unlisted) =
                episode(f, base, &session, task, seed).await;
            bare += usize::from(unlisted);
            println!("  {task} #{seed} {outcome:?}: {instruction:?} → {did}");
            f.executor
                .call(ToolCall::new("browser_session_close", json!({})).correlation_id(&session))
                .await;
            episodes.push(outcome);
        }
        outcomes.insert(task.to_string(), (episodes, bare));
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
    // `MINIWOB_TASKS=a,b` runs only those (while working on them).
    let only = std::env::var("MINIWOB_TASKS").unwrap_or_default();
    let tasks: Vec<&str> = tasks
        .iter()
        .copied()
        .filter(|t| only.is_empty() || only.split(',').any(|o| o == *t))
        .collect();
    let f = support::act_fixture(config).await;
    let base = support::serve_tree(root).await;
    let outcomes = run(&f, &base, &tasks).await;
    f.browsers.shutdown().await;

    // "bare": declined with no element named to act on next.
    println!("task                 right declined (bare) wrong");
    for (task, (episodes, bare)) in &outcomes {
        println!(
            "  {task:<20} {:>5} {:>8} {:>6} {:>5}",
            count(episodes, Outcome::Right),
            count(episodes, Outcome::Declined),
            bare,
            count(episodes, Outcome::Wrong),
        );
    }
    let bare: usize = outcomes.values().map(|(_, bare)| bare).sum();
    println!("declined with no candidates: {bare}");
    outcomes
        .into_values()
        .flat_map(|(episodes, _)| episodes)
        .collect()
}

/// Print how `what` did, and fail on a wrong action reported as success (a
/// step may fail; it may not claim an action the page scores wrong) or a
/// share right below `floor`.
fn never_wrong_and_above(what: &str, all: &[Outcome], floor: f64) {
    let right = 100.0 * count(all, Outcome::Right) as f64 / all.len() as f64;
    println!("{what}: {right:.1} % right of {} episodes", all.len());
    assert_eq!(
        count(all, Outcome::Wrong),
        0,
        "{what}: a wrong action reported as success"
    );
    assert!(right >= floor, "{what} {right:.1} % < floor {floor} %");
}

// The three sets are three tests, so that a test runner runs them side by
// side.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn miniwob_text_tasks_of_one_action() {
    let all = run_tasks(&TEXT_TASKS).await;
    never_wrong_and_above("text tasks", &all, TEXT_FLOOR);
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

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn miniwob_compound_tasks() {
    let all = run_tasks(&COMPOUND_TASKS).await;
    never_wrong_and_above("compound tasks", &all, COMPOUND_FLOOR);
}
