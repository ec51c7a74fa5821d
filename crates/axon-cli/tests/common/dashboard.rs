//! A browser for the tests that open the dashboard: Axon's own browser tools
//! on a real headless Chromium, through an executor.

use std::sync::Arc;

use axon_browser::{BrowserConfig, Browsers};
use axon_core::{CallResult, Executor, PolicyState, ToolCall, ToolRegistry};
use serde_json::{Value, json};

/// An executor with the browser tools on Chromium; screenshots land in
/// `target/dashboard` (its files directory).
pub fn browser() -> Executor {
    let config = BrowserConfig::default();
    assert!(
        config.executable_path().exists(),
        "Chromium is not installed at {} (apt-get install chromium; .ci/run does)",
        config.executable_path().display()
    );
    let mut registry = ToolRegistry::new();
    let shots = axon_core::files::FileDir::new(super::repo_root().join("target/dashboard"));
    axon_browser::register(
        &mut registry,
        Arc::new(Browsers::new(config).with_files(shots)),
    )
    .unwrap();
    Executor::builder(registry)
        .policy_state(PolicyState::new())
        .defaults(json!({"timeout_ms": 20000, "retry": {"max_attempts": 1}}))
        .build()
        .unwrap()
}

/// One browser call that must succeed.
pub async fn act(b: &Executor, tool: &str, args: Value) -> CallResult {
    let r = b
        .call(ToolCall::new(tool, args).correlation_id("dashboard"))
        .await;
    assert!(r.success, "{tool}: {:?}", r.error);
    r
}
