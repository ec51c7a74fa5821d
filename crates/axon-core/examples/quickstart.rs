//! Axon in one minute, with nothing installed: a flaky tool that is retried, a call
//! that times out and falls back, a cache hit, a breaker that opens, a typed Rust
//! tool with a schema error, then the history of it all.
//!
//! Run: `cargo run -p axon-core --example quickstart`

use axon_core::{Executor, ToolCall, ToolError, ToolRegistry, tool_fn};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::json;

#[derive(Deserialize, JsonSchema)]
struct Convert {
    /// Amount in euros.
    #[schemars(range(min = 0.0))]
    euros: f64,
}

#[derive(Serialize, JsonSchema)]
struct Converted {
    dollars: f64,
}

#[tokio::main(flavor = "current_thread")]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let mut registry = ToolRegistry::with_utilities();
    registry.register(tool_fn(
        "convert",
        "Converts euros to dollars",
        |a: Convert, _ctx| async move {
            Ok::<_, ToolError>(Converted {
                dollars: a.euros * 1.08,
            })
        },
    ))?;
    let executor = Executor::builder(registry)
        .defaults(json!({"retry": {"initial_delay_ms": 50}}))
        .tool_policy("echo", json!({"cache": {"ttl_ms": 60_000}}))
        .tool_policy(
            "sleep",
            json!({"timeout_ms": 100, "retry": {"max_attempts": 2}}),
        )
        .build()?;
    let run = "quickstart";
    let show = |label: &str, r: &axon_core::CallResult| {
        let outcome = match &r.error {
            None => format!("ok   {}", r.data),
            Some(e) => format!("fail {}: {}", e.kind, e.message),
        };
        println!(
            "{label:<34} {outcome}\n{:<34} attempts={} retries={:?} delays_ms={:?} cache_hit={} fallback={}",
            "",
            r.attempts,
            r.retry_reasons,
            r.retry_delays_ms,
            r.provenance.cache_hit,
            r.fallback.as_ref().map_or("-".to_string(), |f| format!(
                "#{} after {}",
                f.index, f.primary_error.kind
            )),
        );
    };

    let flaky = ToolCall::new(
        "flaky",
        json!({"key": "demo", "fail_times": 2, "data": "finally"}),
    );
    show(
        "flaky fails twice, then succeeds",
        &executor.call(flaky.correlation_id(run)).await,
    );

    let slow = ToolCall::new("sleep", json!({"ms": 1_000}))
        .fallback("echo", json!({"served_by": "fallback"}));
    show(
        "sleep times out, echo falls back",
        &executor.call(slow.correlation_id(run)).await,
    );

    let echo = || ToolCall::new("echo", json!({"hello": "world"})).correlation_id(run);
    show("echo (cached for 60 s)", &executor.call(echo()).await);
    show(
        "echo again: served from cache",
        &executor.call(echo()).await,
    );

    let bad = ToolCall::new("convert", json!({"euros": -5})).correlation_id(run);
    show("convert with a negative amount", &executor.call(bad).await);
    let good = ToolCall::new("convert", json!({"euros": 10})).correlation_id(run);
    show("convert 10 euros", &executor.call(good).await);

    for i in 0..5 {
        let down = ToolCall::new(
            "flaky",
            json!({"key": format!("down-{i}"), "fail_times": 9, "kind": "unavailable"}),
        )
        .policy(json!({"retry": {"max_attempts": 1}}));
        executor.call(down.correlation_id(run)).await;
    }
    let after =
        ToolCall::new("flaky", json!({"key": "after", "fail_times": 0})).correlation_id(run);
    show(
        "flaky after 5 failures: breaker",
        &executor.call(after).await,
    );

    let stats = executor.history().stats(run).await?;
    println!(
        "\nhistory of {run:?}: {}",
        serde_json::to_string_pretty(&stats)?
    );
    Ok(())
}
