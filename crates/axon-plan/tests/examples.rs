//! Every plan in examples/plans runs and does what its comment says (examples are
//! documentation that runs).

use std::path::PathBuf;

use axon_core::{Executor, PolicyState, ToolRegistry};
use axon_plan::{Plan, PlanResult, PlanRunner, RunOptions, StepStatus};
use serde_json::json;

fn examples() -> PathBuf {
    axon_testkit::repo_root().join("examples/plans")
}

async fn run(name: &str) -> PlanResult {
    let text = std::fs::read_to_string(examples().join(name)).unwrap();
    let plan = Plan::parse(&text).unwrap();
    let ex = Executor::builder(ToolRegistry::with_utilities())
        .policy_state(PolicyState::new())
        .build()
        .unwrap();
    let result = PlanRunner::new(ex)
        .run(&plan, RunOptions::default())
        .await
        .unwrap();
    assert!(
        result
            .steps
            .iter()
            .all(|s| s.status == StepStatus::Succeeded),
        "{name}: {result:#?}"
    );
    result
}

#[test]
fn every_example_is_covered_here() {
    let mut names: Vec<_> = std::fs::read_dir(examples())
        .unwrap()
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .collect();
    names.sort();
    assert_eq!(
        names,
        [
            "fallbacks.yaml",
            "mixed.yaml",
            "parallel.yaml",
            "retries.yaml",
            "sequential.yaml"
        ]
    );
}

#[tokio::test(start_paused = true)]
async fn sequential_maps_ids_through_a_template() {
    let r = run("sequential.yaml").await;
    let data = &r.steps[1].result.as_ref().unwrap().data;
    assert_eq!(data["shipment_ids"], json!(["S1", "S2"]));
    assert_eq!(data["note"], "checking S1 first");
}

#[tokio::test(start_paused = true)]
async fn parallel_steps_take_the_time_of_one() {
    assert_eq!(run("parallel.yaml").await.duration_ms, 100);
}

#[tokio::test(start_paused = true)]
async fn mixed_joins_both_branches() {
    let r = run("mixed.yaml").await;
    assert_eq!(
        r.steps[4].result.as_ref().unwrap().data,
        json!({"facility": "F1", "shipments": ["S1", "S2", "S3"]})
    );
}

#[tokio::test(start_paused = true)]
async fn fallbacks_serve_from_the_second_tool() {
    let r = run("fallbacks.yaml").await;
    let live = r.steps[1].result.as_ref().unwrap();
    assert_eq!(live.data, json!({"source": "cache", "ids": [7, 8]}));
    assert_eq!(live.attempts, 2);
    assert_eq!(live.fallback.as_ref().unwrap().index, 0);
}

#[tokio::test(start_paused = true)]
async fn retries_succeed_on_the_third_attempt() {
    let r = run("retries.yaml").await;
    let flaky = r.steps[0].result.as_ref().unwrap();
    assert_eq!(flaky.attempts, 3);
    assert_eq!(flaky.retry_delays_ms, [50, 100]);
    assert_eq!(
        r.steps[1].result.as_ref().unwrap().data,
        json!({"attempt": 3})
    );
}
