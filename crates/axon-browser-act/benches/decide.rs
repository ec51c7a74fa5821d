//! What `browser_act` spends deciding a step, a cache hit against a miss.
//!
//! A step's `decide_ms` is the time between reading the page and acting on it.
//! On a miss that is the translator (here the offline heuristic, the cheapest
//! one: an LLM call is milliseconds to seconds); on a hit it is the cache key
//! of the page's shape, the store's lookup and the check that the kept element
//! is still on the page, exactly once (`act::step_cache::revalidate`). Both run on
//! one page's snapshot, without a browser:
//!
//! - `decide/heuristic_miss`: `Heuristic::translate` on the compressed snapshot;
//! - `decide/cached_hit`: `step_cache::key` + `MemoryActStore::get` + `revalidate`.
//!
//! The page is a sign-in form among a navigation bar and a long article
//! (297 nodes, 46 of them controls), so both sides scan a realistic tree. The
//! act test checks what a hit does (no translator call, same action); how fast
//! it does it is this bench's question, not a timed test's.
//!
//! Run: `cargo bench -p axon-browser-act --bench decide`. Figures go to
//! docs/benchmarks.md.

use std::hint::black_box;

use axon_browser::SnapshotNode;
use axon_browser_act::{
    self as act, ActStore, ActionTranslator, Heuristic, MemoryActStore, StepInput, compress,
};
use axon_core::ToolContext;
use criterion::{Criterion, criterion_group, criterion_main};

const URL: &str = "http://127.0.0.1:8080/account/42/login?next=%2F";
const STEP: &str = "Enter 'hunter2' as the password";

/// The page: 40 navigation links, the form (heading, labelled fields, a
/// checkbox, a button) and 250 lines of article text around 2 more links.
fn page() -> Vec<SnapshotNode> {
    let node = |reference: Option<String>, role: &str, name: &str, depth: usize| SnapshotNode {
        reference,
        role: role.into(),
        name: name.into(),
        depth,
        value: None,
        states: Vec::new(),
        name_from: None,
    };
    let mut nodes = Vec::new();
    let mut refs = 0;
    let mut element = |role: &str, name: &str| {
        refs += 1;
        node(Some(format!("e{refs}")), role, name, 1)
    };
    nodes.push(node(None, "navigation", "Site", 0));
    for i in 0..40 {
        nodes.push(element("link", &format!("Section {i}")));
    }
    nodes.push(node(None, "heading", "Sign in", 0));
    nodes.push(node(None, "form", "", 0));
    nodes.push(element("textbox", "Username"));
    nodes.push(element("textbox", "Password"));
    nodes.push(element("checkbox", "Remember me"));
    nodes.push(element("button", "Log in"));
    for i in 0..250 {
        if i == 100 || i == 200 {
            nodes.push(element("link", &format!("Read more {i}")));
        } else {
            let line = format!("Paragraph {i} of the article, a sentence long.");
            nodes.push(node(None, "text", &line, 1));
        }
    }
    nodes
}

fn decide(c: &mut Criterion) {
    let rt = tokio::runtime::Builder::new_current_thread()
        .build()
        .expect("a runtime");
    let nodes = page();
    let ctx = ToolContext::detached("bench");
    let input = StepInput {
        main_goal: String::new(),
        plan_step: STEP.into(),
        url: URL.into(),
        snapshot: compress(&nodes, act::MAX_PROMPT_NODES),
        dialog: None,
        tabs: Vec::new(),
    };
    // The entry a first run leaves: the heuristic's decision, kept by role
    // and name.
    let store = MemoryActStore::default();
    let key = act::step_cache::key(STEP, URL, &nodes);
    let decision = rt
        .block_on(Heuristic.translate(&input, &ctx))
        .expect("the heuristic decides the step");
    let entry = act::step_cache::entry(&decision, &nodes).expect("a decision worth keeping");
    rt.block_on(store.put(&key, &entry));
    let hit = rt.block_on(async {
        let key = act::step_cache::key(STEP, URL, &nodes);
        let kept = store.get(&key).await.expect("kept");
        act::step_cache::revalidate(&kept, &nodes).expect("still on the page")
    });
    assert_eq!(hit.action, decision.action, "a hit replays the same action");

    let mut group = c.benchmark_group("decide");
    group.bench_function("heuristic_miss", |b| {
        b.to_async(&rt).iter(|| async {
            black_box(Heuristic.translate(black_box(&input), &ctx).await.ok());
        })
    });
    group.bench_function("cached_hit", |b| {
        b.to_async(&rt).iter(|| async {
            let key = act::step_cache::key(black_box(STEP), URL, &nodes);
            let kept = store.get(&key).await;
            black_box(kept.and_then(|k| act::step_cache::revalidate(&k, &nodes)));
        })
    });
    group.finish();
}

criterion_group!(benches, decide);
criterion_main!(benches);
