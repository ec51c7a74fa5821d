//! Run a plan file on the utility tools and print each step as it finishes, then
//! the plan result as JSON. (The `axon run` CLI will do this with live progress.)
//!
//! Run: `cargo run -p axon-plan --example run_plan -- examples/plans/mixed.yaml`

use axon_core::{Executor, ToolRegistry};
use axon_plan::{Plan, PlanEvent, PlanRunner, RunOptions};

#[tokio::main(flavor = "current_thread")]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let Some(path) = std::env::args().nth(1) else {
        eprintln!("usage: run_plan PLAN.yaml");
        std::process::exit(2);
    };
    let plan = Plan::parse(&std::fs::read_to_string(&path)?)?;
    let runner = PlanRunner::new(Executor::builder(ToolRegistry::with_utilities()).build()?);
    let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel();
    let printer = tokio::spawn(async move {
        while let Some(event) = rx.recv().await {
            match event {
                PlanEvent::StepStarted { index, tool, .. } => eprintln!("▶ step {index} ({tool})"),
                PlanEvent::StepRetrying {
                    index,
                    attempt,
                    error,
                    delay_ms,
                    ..
                } => {
                    eprintln!(
                        "↻ step {index}: attempt {attempt} failed ({}: {}); retrying in {delay_ms} ms",
                        error.kind, error.message
                    )
                }
                PlanEvent::StepFinished { step, .. } => eprintln!(
                    "■ step {} {:?}{}",
                    step.index,
                    step.status,
                    step.reason.map(|r| format!(": {r}")).unwrap_or_default()
                ),
                _ => {}
            }
        }
    });
    let result = match runner
        .run(
            &plan,
            RunOptions {
                events: Some(tx),
                ..Default::default()
            },
        )
        .await
    {
        Ok(result) => result,
        Err(errors) => {
            eprintln!("{errors}");
            std::process::exit(2);
        }
    };
    let _ = printer.await;
    println!("{}", serde_json::to_string_pretty(&result)?);
    std::process::exit(if result.success() { 0 } else { 1 });
}
