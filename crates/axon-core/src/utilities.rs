//! Utility tools for demos, diagnostics and tests (docs/design.md, "Tools"): `echo` returns its
//! arguments, `sleep` waits, `flaky` fails a set number of times per key and then
//! succeeds — the smallest way to watch retries, breakers and fallbacks work.
//! `registry.register_utilities()` adds all three.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

use crate::error::{ErrorKind, ToolError};
use crate::registry::{RegistryError, ToolRegistry};
use crate::tool::{Annotations, ToolContext, ToolSpec, tool_fn};

/// Longest `sleep` accepted, ms (one hour).
pub const MAX_SLEEP_MS: u64 = 3_600_000;

/// Arguments of `sleep`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct SleepArgs {
    /// How long to sleep, ms.
    #[schemars(range(max = 3_600_000))]
    pub ms: u64,
}

/// Result of `sleep`.
#[derive(Debug, Serialize, JsonSchema)]
pub struct Slept {
    /// How long it slept, ms.
    pub slept_ms: u64,
}

/// Arguments of `flaky`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct FlakyArgs {
    /// Calls are counted per key, by the registry the tool is in (one
    /// executor's; never another executor's in the same process).
    pub key: String,
    /// Fail this many calls of the key, then succeed.
    #[serde(default)]
    pub fail_times: u32,
    /// The error kind of the failures.
    #[serde(default = "transient")]
    pub kind: ErrorKind,
    /// With kind `rate_limited`: the `Retry-After` to report, ms.
    #[serde(default)]
    pub retry_after_ms: Option<u64>,
    /// Returned on success.
    #[serde(default)]
    pub data: Value,
}

fn transient() -> ErrorKind {
    ErrorKind::Transient
}

/// Result of `flaky`.
#[derive(Debug, Serialize, JsonSchema)]
pub struct FlakyResult {
    /// Which call of the key this was (1-based).
    pub attempt: u32,
    /// The `data` argument.
    pub data: Value,
}

/// `flaky`'s calls so far, by key: one count per registration, so two
/// executors (two tests, two servers in one process) never share one.
type FlakyCalls = Arc<Mutex<HashMap<String, u32>>>;

async fn flaky(calls: FlakyCalls, args: FlakyArgs) -> Result<FlakyResult, ToolError> {
    let attempt = {
        let mut calls = calls
            .lock()
            .map_err(|_| ToolError::internal("flaky counter poisoned"))?;
        let n = calls.entry(args.key.clone()).or_insert(0);
        *n += 1;
        *n
    };
    if attempt <= args.fail_times {
        let message = format!(
            "flaky failure {attempt} of {} for key {:?}",
            args.fail_times, args.key
        );
        return Err(ToolError {
            retry_after: args.retry_after_ms.map(Duration::from_millis),
            ..ToolError::new(args.kind, message)
        });
    }
    Ok(FlakyResult {
        attempt,
        data: args.data,
    })
}

/// `echo`: its data is its arguments.
struct Echo(ToolSpec);

#[async_trait::async_trait]
impl crate::tool::Tool for Echo {
    fn spec(&self) -> &ToolSpec {
        &self.0
    }
    async fn call(&self, args: &Value, _ctx: ToolContext) -> Result<Value, ToolError> {
        Ok(args.clone())
    }
}

impl ToolRegistry {
    /// Register the utility tools `echo`, `sleep` and `flaky`, for demos,
    /// diagnostics and tests.
    pub fn register_utilities(&mut self) -> Result<(), RegistryError> {
        register(self)
    }

    /// A registry holding only the utility tools.
    pub fn with_utilities() -> Self {
        let mut registry = ToolRegistry::new();
        // The utility tools have valid, fixed names and schemas.
        let _ = registry.register_utilities();
        registry
    }
}

/// Register `echo`, `sleep` and `flaky`.
fn register(registry: &mut ToolRegistry) -> Result<(), RegistryError> {
    let read_only = Annotations {
        read_only: true,
        ..Annotations::default()
    };
    registry.register(Echo(
        ToolSpec::new("echo", "Returns its arguments as its data.")
            .input_schema(json!({"type": "object"}))
            .annotations(read_only.clone()),
    ))?;
    registry.register(
        tool_fn(
            "sleep",
            "Sleeps for `ms` milliseconds, then returns {\"slept_ms\"}.",
            |a: SleepArgs, _ctx| async move {
                tokio::time::sleep(Duration::from_millis(a.ms)).await;
                Ok(Slept { slept_ms: a.ms })
            },
        )
        .annotations(read_only),
    )?;
    let calls = FlakyCalls::default();
    registry.register(tool_fn(
            "flaky",
            "Fails the first `fail_times` calls per `key` with `kind`, then answers {\"attempt\", \"data\"}.",
            move |args: FlakyArgs, _ctx| flaky(calls.clone(), args),
        ))?;
    Ok(())
}
