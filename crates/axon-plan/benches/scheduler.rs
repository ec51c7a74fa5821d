//! The scheduler, measured two ways.
//!
//! 1. Overhead per step on a 10,000-step random DAG of no-op `echo` steps: the
//!    whole run (validation, critical path, scheduling, templates, checkpoints,
//!    the call pipeline) against the same 10,000 calls made one after another
//!    through `Executor::call`. The difference is what plans add per step.
//! 2. Makespan of Axon's dependency-driven, critical-path-first scheduler against
//!    waves (the first `max_parallel` ready steps, awaited together) on
//!    the same random DAGs with random durations, on tokio's paused clock.
//!
//! Run: `cargo bench -p axon-plan --bench scheduler`. Figures go to docs/benchmarks.md.

use std::hint::black_box;
use std::time::Duration;

use axon_core::{Executor, PolicyState, ToolCall, ToolRegistry};
use axon_plan::{Plan, PlanRunner, RunOptions, Step, StepRef};
use criterion::Criterion;
use serde_json::json;

/// A random DAG: each step depends on up to `fan_in` of the `window` steps before it.
fn random_dag(n: usize, fan_in: usize, window: usize, rng: &mut fastrand::Rng) -> Vec<Vec<usize>> {
    (0..n)
        .map(|j| {
            // Draw the count first, even for step 0, so the DAGs (and the figures in
            // docs/benchmarks.md) stay the same for a given seed.
            let count = rng.usize(0..=fan_in);
            if j == 0 {
                return Vec::new();
            }
            let mut deps: Vec<usize> = (0..count)
                .map(|_| j - 1 - rng.usize(0..j.min(window)))
                .collect();
            deps.sort_unstable();
            deps.dedup();
            deps
        })
        .collect()
}

fn plan(
    tool: &str,
    params: impl Fn(usize) -> serde_json::Value,
    deps: &[Vec<usize>],
    max_parallel: usize,
) -> Plan {
    Plan {
        name: None,
        max_parallel,
        fail_fast: false,
        defaults: None,
        steps: deps
            .iter()
            .enumerate()
            .map(|(i, d)| Step {
                id: None,
                tool: tool.into(),
                params: params(i),
                depends_on: d.iter().map(|&x| StepRef::Index(x)).collect(),
                policy: None,
                fallbacks: Vec::new(),
                expected_ms: None,
                idempotency_key: None,
            })
            .collect(),
    }
}

fn executor() -> Executor {
    Executor::builder(ToolRegistry::with_utilities())
        .policy_state(PolicyState::new())
        .build()
        .expect("executor")
}

fn overhead(c: &mut Criterion) {
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_time()
        .build()
        .expect("runtime");
    let mut rng = fastrand::Rng::with_seed(1);
    let n = 10_000;
    let deps = random_dag(n, 3, 100, &mut rng);
    let big = plan("echo", |i| json!({"i": i}), &deps, 64);
    let ex = executor();
    let mut group = c.benchmark_group("scheduler");
    group
        .sample_size(10)
        .measurement_time(Duration::from_secs(10));
    group.bench_function("calls_10k_sequential", |b| {
        b.to_async(&rt).iter(|| async {
            for i in 0..n {
                black_box(
                    ex.call(ToolCall::new("echo", json!({"i": i})).correlation_id("calls"))
                        .await,
                );
            }
        })
    });
    group.bench_function("plan_10k_steps", |b| {
        b.to_async(&rt).iter(|| async {
            // A fresh run store per run, so runs do not pile up across iterations.
            let runner = PlanRunner::new(ex.clone());
            let r = runner
                .run(&big, RunOptions::default())
                .await
                .expect("valid plan");
            assert!(r.success());
            black_box(r);
        })
    });
    group.finish();
}

/// The waves schedule: repeatedly take the first `k` ready steps (index order)
/// and wait for all of them.
fn wave_makespan(durations: &[u64], deps: &[Vec<usize>], k: usize) -> u64 {
    let mut done = vec![false; durations.len()];
    let mut total = 0;
    while done.iter().any(|d| !d) {
        let wave: Vec<usize> = (0..durations.len())
            .filter(|&i| !done[i] && deps[i].iter().all(|&d| done[d]))
            .take(k)
            .collect();
        total += wave.iter().map(|&i| durations[i]).max().unwrap_or(0);
        for i in wave {
            done[i] = true;
        }
    }
    total
}

fn axon_makespan(durations: &[u64], deps: &[Vec<usize>], k: usize) -> u64 {
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_time()
        .start_paused(true)
        .build()
        .expect("runtime");
    let p = plan("sleep", |i| json!({"ms": durations[i]}), deps, k);
    rt.block_on(async {
        let start = tokio::time::Instant::now();
        let r = PlanRunner::new(executor())
            .run(&p, RunOptions::default())
            .await
            .expect("valid plan");
        assert!(r.success());
        start.elapsed().as_millis() as u64
    })
}

fn makespan_report() {
    println!("makespan: Axon vs waves (ratio = Axon / waves; lower is better)");
    println!(
        "{:>6} {:>12} {:>8} {:>8} {:>8} {:>10}",
        "steps", "max_parallel", "min", "mean", "max", "worse_in"
    );
    let mut rng = fastrand::Rng::with_seed(42);
    for (n, k) in [(20, 5), (50, 5), (50, 2), (100, 5), (100, 100)] {
        let trials = 100;
        let mut ratios = Vec::with_capacity(trials);
        let mut worse = 0;
        for _ in 0..trials {
            let deps = random_dag(n, 3, 10, &mut rng);
            let durations: Vec<u64> = (0..n).map(|_| rng.u64(10..=200)).collect();
            let (axon, waves) = (
                axon_makespan(&durations, &deps, k),
                wave_makespan(&durations, &deps, k),
            );
            if axon > waves {
                worse += 1;
            }
            ratios.push(axon as f64 / waves as f64);
        }
        let min = ratios.iter().cloned().fold(f64::INFINITY, f64::min);
        let max = ratios.iter().cloned().fold(0.0, f64::max);
        let mean = ratios.iter().sum::<f64>() / ratios.len() as f64;
        println!("{n:>6} {k:>12} {min:>8.3} {mean:>8.3} {max:>8.3} {worse:>7}/{trials}");
    }
}

fn main() {
    makespan_report();
    let mut c = Criterion::default().configure_from_args();
    overhead(&mut c);
    c.final_summary();
}
