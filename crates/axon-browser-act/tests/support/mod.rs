//! What the `browser_act` tests share: the browser tests' own support (the
//! fixture server, the browser tools on a real Chromium) and executors with
//! `browser_act` registered on top.
#![allow(dead_code)]

#[path = "../../../axon-browser/tests/support/mod.rs"]
mod browser;

use std::sync::Arc;

use axon_browser::{BrowserConfig, Browsers};
use axon_browser_act::{ActStore, ActionTranslator, Heuristic, NoActStore};
use axon_core::{Executor, PolicyState};
use serde_json::{Value, json};

pub use browser::*;

/// The browser tools and `browser_act` (deciding with `translator`, keeping
/// translations in `cache`) on a real Chromium; each call one attempt, no
/// breaker: what the act tests and the act corpus drive.
pub fn act_executor(
    config: BrowserConfig,
    translator: Arc<dyn ActionTranslator>,
    cache: Arc<dyn ActStore>,
) -> (Executor, Arc<Browsers>) {
    act_executor_with(
        config,
        translator,
        cache,
        json!({"timeout_ms": 20000, "retry": {"max_attempts": 1}, "breaker": {"failure_threshold": 0}}),
    )
}

/// [`act_executor`] under `defaults` (`{}`: the product's own policy).
pub fn act_executor_with(
    config: BrowserConfig,
    translator: Arc<dyn ActionTranslator>,
    cache: Arc<dyn ActStore>,
    defaults: Value,
) -> (Executor, Arc<Browsers>) {
    let (mut registry, browsers) = browser_tools(config, &files_dir());
    axon_browser_act::register_with_cache(&mut registry, browsers.clone(), translator, cache)
        .unwrap();
    let executor = Executor::builder(registry)
        .policy_state(PolicyState::new())
        .defaults(defaults)
        .build()
        .unwrap();
    (executor, browsers)
}

/// [`fixture`] with `browser_act` too, deciding with the heuristic and
/// keeping nothing in its cache; each call one attempt (an act step is not
/// retried: it may have acted).
pub async fn act_fixture(config: BrowserConfig) -> Fixture {
    let files = files_dir();
    let (mut registry, browsers) = browser_tools(config, &files);
    axon_browser_act::register_with_cache(
        &mut registry,
        browsers.clone(),
        Arc::new(Heuristic),
        Arc::new(NoActStore),
    )
    .unwrap();
    fixture_of(registry, browsers, files, json!({"max_attempts": 1})).await
}
