//! Properties of the scheduler over random DAGs with random step durations, on
//! tokio's paused clock: with unlimited parallelism the makespan equals the
//! critical path; with `max_parallel = k` at most k steps run at once; every step
//! runs exactly once; no step starts before its dependencies have finished.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use axon_core::{Executor, PolicyState, ToolError, ToolRegistry, tool_fn};
use axon_plan::{Plan, PlanRunner, RunOptions, Step, StepRef};
use proptest::prelude::*;
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::json;
use tokio::time::Instant;

#[derive(Deserialize, JsonSchema)]
struct Probe {
    step: usize,
    ms: u64,
}

#[derive(Default)]
struct Trace {
    running: usize,
    max_running: usize,
    /// (step, start ms, end ms)
    spans: Vec<(usize, u64, u64)>,
}

fn runner(trace: Arc<Mutex<Trace>>, origin: Instant) -> PlanRunner {
    let mut r = ToolRegistry::new();
    r.register(tool_fn(
        "probe",
        "records when it runs",
        move |a: Probe, _ctx| {
            let trace = trace.clone();
            async move {
                let start = origin.elapsed().as_millis() as u64;
                {
                    let mut t = trace.lock().unwrap();
                    t.running += 1;
                    t.max_running = t.max_running.max(t.running);
                }
                tokio::time::sleep(Duration::from_millis(a.ms)).await;
                let end = origin.elapsed().as_millis() as u64;
                let mut t = trace.lock().unwrap();
                t.running -= 1;
                t.spans.push((a.step, start, end));
                Ok::<_, ToolError>(json!({"step": a.step}))
            }
        },
    ))
    .unwrap();
    let ex = Executor::builder(r)
        .policy_state(PolicyState::new())
        .build()
        .unwrap();
    PlanRunner::new(ex)
}

/// A random DAG: step j may depend on any i < j.
fn dags() -> impl Strategy<Value = (Vec<u64>, Vec<Vec<usize>>)> {
    (1usize..14).prop_flat_map(|n| {
        let durations = proptest::collection::vec(1u64..60, n);
        let edges = proptest::collection::vec(proptest::collection::vec(any::<bool>(), n), n);
        (durations, edges).prop_map(move |(d, e)| {
            let deps = (0..n)
                .map(|j| (0..j).filter(|&i| e[j][i] && (i + j) % 3 != 0).collect())
                .collect();
            (d, deps)
        })
    })
}

fn plan(durations: &[u64], deps: &[Vec<usize>], max_parallel: usize) -> Plan {
    Plan {
        name: None,
        max_parallel,
        fail_fast: false,
        defaults: None,
        steps: durations
            .iter()
            .enumerate()
            .map(|(i, ms)| Step {
                id: None,
                tool: "probe".into(),
                params: json!({"step": i, "ms": ms}),
                depends_on: deps[i].iter().map(|&d| StepRef::Index(d)).collect(),
                policy: None,
                fallbacks: Vec::new(),
                expected_ms: None,
                idempotency_key: None,
            })
            .collect(),
    }
}

fn critical_path(durations: &[u64], deps: &[Vec<usize>]) -> u64 {
    let mut finish = vec![0u64; durations.len()];
    for j in 0..durations.len() {
        let ready = deps[j].iter().map(|&i| finish[i]).max().unwrap_or(0);
        finish[j] = ready + durations[j];
    }
    finish.into_iter().max().unwrap_or(0)
}

fn run(durations: &[u64], deps: &[Vec<usize>], max_parallel: usize) -> (Trace, u64) {
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_time()
        .start_paused(true)
        .build()
        .unwrap();
    rt.block_on(async {
        let trace = Arc::new(Mutex::new(Trace::default()));
        let origin = Instant::now();
        let r = runner(trace.clone(), origin)
            .run(&plan(durations, deps, max_parallel), RunOptions::default())
            .await
            .unwrap();
        assert!(r.success());
        let makespan = origin.elapsed().as_millis() as u64;
        let t = std::mem::take(&mut *trace.lock().unwrap());
        (t, makespan)
    })
}

fn check_common(
    trace: &Trace,
    durations: &[u64],
    deps: &[Vec<usize>],
) -> Result<(), TestCaseError> {
    let mut runs = vec![0; durations.len()];
    let mut span = vec![(0, 0); durations.len()];
    for &(step, start, end) in &trace.spans {
        runs[step] += 1;
        span[step] = (start, end);
    }
    prop_assert!(
        runs.iter().all(|&r| r == 1),
        "every step runs exactly once: {runs:?}"
    );
    for (j, ds) in deps.iter().enumerate() {
        for &i in ds {
            prop_assert!(
                span[j].0 >= span[i].1,
                "step {j} started at {} before dependency {i} ended at {}",
                span[j].0,
                span[i].1
            );
        }
    }
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 64, ..ProptestConfig::default() })]

    #[test]
    fn with_unlimited_parallelism_the_makespan_is_the_critical_path((durations, deps) in dags()) {
        let (trace, makespan) = run(&durations, &deps, durations.len());
        check_common(&trace, &durations, &deps)?;
        prop_assert_eq!(makespan, critical_path(&durations, &deps));
    }

    #[test]
    fn with_max_parallel_k_no_more_than_k_steps_run_at_once((durations, deps) in dags(), k in 1usize..4) {
        let (trace, makespan) = run(&durations, &deps, k);
        check_common(&trace, &durations, &deps)?;
        prop_assert!(trace.max_running <= k, "{} running with max_parallel {k}", trace.max_running);
        prop_assert!(makespan >= critical_path(&durations, &deps));
    }
}
