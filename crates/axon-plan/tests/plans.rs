//! Running plans: the executor-agent test cases (sequential, parallel, mixed), the
//! fail-fast sequence, failure semantics, cancellation, fallbacks, progress events,
//! checkpoints and resume.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use axon_core::{
    CancellationToken, ErrorKind, Executor, PolicyState, ToolContext, ToolError, ToolRegistry,
    tool_fn,
};
use axon_plan::{Plan, PlanEvent, PlanRunner, RunOptions, RunStatus, StepStatus};
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::{Value, json};
use tokio::time::Instant;

#[derive(Deserialize, JsonSchema)]
struct Ids {
    shipment_ids: Vec<String>,
}

#[derive(Deserialize, JsonSchema)]
struct Mark {
    name: String,
    #[serde(default)]
    ms: u64,
}

/// Tools of the executor-agent examples (shipments, contaminants), plus `mark`, which logs
/// when each step starts and ends.
fn runner(log: Arc<Mutex<Vec<String>>>) -> PlanRunner {
    let mut r = ToolRegistry::with_utilities();
    r.register(tool_fn(
        "shipments",
        "Shipments with contaminants",
        |_: Value, _ctx| async move {
            Ok::<_, ToolError>(
                json!([{"id": "S1", "facility": "F1"}, {"id": "S2", "facility": "F2"}]),
            )
        },
    ))
    .unwrap();
    r.register(tool_fn(
        "contaminants_detected",
        "Contaminants per shipment",
        |a: Ids, _ctx| async move { Ok::<_, ToolError>(json!({"checked": a.shipment_ids})) },
    ))
    .unwrap();
    r.register(tool_fn(
        "report",
        "Reports progress 1/2 and 2/2",
        |_: Value, ctx: ToolContext| async move {
            ctx.progress(1.0, Some(2.0), Some("half".into()));
            ctx.progress(2.0, Some(2.0), None);
            Ok::<_, ToolError>(json!("done"))
        },
    ))
    .unwrap();
    r.register(tool_fn(
        "mark",
        "Logs start and end",
        move |a: Mark, _ctx: ToolContext| {
            let log = log.clone();
            async move {
                log.lock().unwrap().push(format!("start {}", a.name));
                tokio::time::sleep(Duration::from_millis(a.ms)).await;
                log.lock().unwrap().push(format!("end {}", a.name));
                Ok::<_, ToolError>(json!({"name": a.name}))
            }
        },
    ))
    .unwrap();
    let executor = Executor::builder(r)
        .policy_state(PolicyState::new())
        .defaults(json!({"retry": {"jitter": "none", "initial_delay_ms": 10}}))
        .tool_policy("sleep", json!({"limits": {"max_concurrent": 0}}))
        .build()
        .unwrap();
    PlanRunner::new(executor)
}

fn plan(yaml: &str) -> Plan {
    Plan::parse(yaml).unwrap()
}

/// A token that cancels itself after `ms` (on the test's clock).
fn cancel_after(ms: u64) -> CancellationToken {
    let token = CancellationToken::new();
    let canceller = token.clone();
    tokio::spawn(async move {
        tokio::time::sleep(Duration::from_millis(ms)).await;
        canceller.cancel();
    });
    token
}

fn log() -> Arc<Mutex<Vec<String>>> {
    Arc::new(Mutex::new(Vec::new()))
}

#[tokio::test(start_paused = true)]
async fn a_simple_plan_runs() {
    let r = runner(log())
        .run(
            &plan("steps:\n- {tool: echo, params: {hello: world}}\n"),
            RunOptions::default(),
        )
        .await
        .unwrap();
    assert!(r.success());
    assert_eq!(r.steps[0].status, StepStatus::Succeeded);
    assert_eq!(
        r.steps[0].result.as_ref().unwrap().data,
        json!({"hello": "world"})
    );
}

#[tokio::test(start_paused = true)]
async fn dependencies_run_in_order() {
    let l = log();
    let p = plan(
        "steps:\n- {tool: mark, params: {name: second, ms: 10}, depends_on: [1]}\n- {tool: mark, params: {name: first, ms: 50}}\n",
    );
    assert!(
        runner(l.clone())
            .run(&p, RunOptions::default())
            .await
            .unwrap()
            .success()
    );
    assert_eq!(
        *l.lock().unwrap(),
        ["start first", "end first", "start second", "end second"]
    );
}

#[tokio::test(start_paused = true)]
async fn seed_002_template_resolves_to_the_shipment_ids() {
    let p = plan(
        "steps:\n- {tool: shipments, params: {has_contaminants: true}}\n- {tool: contaminants_detected, params: {shipment_ids: '${step[0].data.*.id}'}, depends_on: [0]}\n",
    );
    let r = runner(log()).run(&p, RunOptions::default()).await.unwrap();
    assert!(r.success(), "{r:#?}");
    assert_eq!(
        r.steps[1].result.as_ref().unwrap().data,
        json!({"checked": ["S1", "S2"]})
    );
}

#[tokio::test(start_paused = true)]
async fn a_failing_step_makes_the_run_unsuccessful_without_an_error() {
    let p =
        plan("steps:\n- {tool: flaky, params: {key: seed2-fail, fail_times: 9, kind: failed}}\n");
    let r = runner(log()).run(&p, RunOptions::default()).await.unwrap();
    assert!(!r.success());
    assert_eq!(r.status, RunStatus::Failed);
    assert_eq!(r.steps[0].status, StepStatus::Failed);
    assert!(
        r.steps[0]
            .reason
            .as_deref()
            .unwrap()
            .starts_with("failed: flaky failure")
    );
}

#[tokio::test(start_paused = true)]
async fn a_circular_dependency_is_rejected_before_anything_runs() {
    let l = log();
    let p = plan(
        "steps:\n- {id: a, tool: mark, params: {name: a}, depends_on: [b]}\n- {id: b, tool: mark, params: {name: b}, depends_on: [a]}\n",
    );
    let err = runner(l.clone())
        .run(&p, RunOptions::default())
        .await
        .unwrap_err();
    assert!(err.to_string().contains("cycle: a → b → a"), "{err}");
    assert!(l.lock().unwrap().is_empty());
}

#[tokio::test(start_paused = true)]
async fn three_independent_100_ms_steps_take_100_ms_not_300() {
    let p = plan(
        "steps:\n- {tool: sleep, params: {ms: 100}}\n- {tool: sleep, params: {ms: 100}}\n- {tool: sleep, params: {ms: 100}}\n",
    );
    let start = Instant::now();
    let r = runner(log()).run(&p, RunOptions::default()).await.unwrap();
    assert!(r.success());
    assert_eq!(start.elapsed(), Duration::from_millis(100));
    assert_eq!(r.duration_ms, 100);
}

#[tokio::test(start_paused = true)]
async fn a_step_starts_as_soon_as_its_own_dependencies_finish_not_in_waves() {
    // a (10 ms) → c; b takes 100 ms. In waves c would wait for b; here it does not.
    let l = log();
    let p = plan(
        "steps:\n- {id: a, tool: mark, params: {name: a, ms: 10}}\n- {id: b, tool: mark, params: {name: b, ms: 100}}\n- {id: c, tool: mark, params: {name: c, ms: 10}, depends_on: [a]}\n",
    );
    let start = Instant::now();
    runner(l.clone())
        .run(&p, RunOptions::default())
        .await
        .unwrap();
    assert_eq!(start.elapsed(), Duration::from_millis(100));
    let events = l.lock().unwrap().clone();
    let pos = |e: &str| events.iter().position(|x| x == e).unwrap();
    assert!(pos("end c") < pos("end b"), "{events:?}");
}

#[tokio::test(start_paused = true)]
async fn seed_000_sequence_stops_after_the_first_failure() {
    let l = log();
    let p = plan(
        "max_parallel: 1\nfail_fast: true\nsteps:\n- {tool: mark, params: {name: navigate}}\n- {tool: flaky, params: {key: seed0-seq, fail_times: 9, kind: failed}}\n- {tool: mark, params: {name: click}}\n",
    );
    let r = runner(l.clone())
        .run(&p, RunOptions::default())
        .await
        .unwrap();
    let statuses: Vec<_> = r.steps.iter().map(|s| s.status).collect();
    assert_eq!(
        statuses,
        [
            StepStatus::Succeeded,
            StepStatus::Failed,
            StepStatus::Skipped
        ]
    );
    assert_eq!(
        r.steps[2].reason.as_deref(),
        Some("fail_fast: step[1] failed")
    );
    assert_eq!(*l.lock().unwrap(), ["start navigate", "end navigate"]);
}

#[tokio::test(start_paused = true)]
async fn fail_fast_cancels_running_steps() {
    let p = plan(
        "fail_fast: true\nsteps:\n- {tool: sleep, params: {ms: 10000}}\n- {tool: flaky, params: {key: ff-cancel, fail_times: 9, kind: failed}}\n",
    );
    let start = Instant::now();
    let r = runner(log()).run(&p, RunOptions::default()).await.unwrap();
    assert_eq!(r.status, RunStatus::Failed);
    assert_eq!(r.steps[0].status, StepStatus::Cancelled);
    assert!(start.elapsed() < Duration::from_millis(100));
}

#[tokio::test(start_paused = true)]
async fn a_failed_step_skips_its_dependents_and_independent_branches_go_on() {
    let p = plan(
        "steps:\n- {id: broken, tool: flaky, params: {key: skip-deps, fail_times: 9, kind: failed}}\n- {id: child, tool: echo, depends_on: [broken]}\n- {id: grandchild, tool: echo, params: {x: '${steps.child.data}'}}\n- {id: other, tool: echo}\n",
    );
    let r = runner(log()).run(&p, RunOptions::default()).await.unwrap();
    let s: Vec<_> = r
        .steps
        .iter()
        .map(|s| (s.status, s.reason.clone()))
        .collect();
    assert_eq!(
        s[1],
        (StepStatus::Skipped, Some("dependency broken failed".into()))
    );
    assert_eq!(
        s[2],
        (
            StepStatus::Skipped,
            Some("dependency child was skipped".into())
        )
    );
    assert_eq!(s[3].0, StepStatus::Succeeded);
    assert!(r.steps[1].result.is_none());
}

#[tokio::test(start_paused = true)]
async fn a_missing_template_path_fails_the_step_naming_template_and_segment() {
    let p = plan(
        "steps:\n- {tool: echo, params: {a: 1}}\n- {tool: echo, params: {b: '${step[0].data.nope}'}}\n",
    );
    let r = runner(log()).run(&p, RunOptions::default()).await.unwrap();
    let e = r.steps[1].result.as_ref().unwrap().error.clone().unwrap();
    assert_eq!(e.kind, ErrorKind::InvalidArguments);
    assert_eq!(
        e.message,
        "template ${step[0].data.nope}: segment .nope not found in data"
    );
}

/// Issue 59: a template of 200 KB that fails is not echoed whole into the
/// step's error (and so history and the run's record).
#[tokio::test(start_paused = true)]
async fn a_huge_failing_template_is_not_echoed_whole() {
    let segment = "x".repeat(200_000);
    let p = plan(&format!(
        "steps:\n- {{tool: echo, params: {{a: 1}}}}\n- {{tool: echo, params: {{b: '${{step[0].data.{segment}}}'}}}}\n"
    ));
    let r = runner(log()).run(&p, RunOptions::default()).await.unwrap();
    let e = r.steps[1].result.as_ref().unwrap().error.clone().unwrap();
    assert_eq!(e.kind, ErrorKind::InvalidArguments);
    assert!(e.message.len() <= 4200, "{} bytes", e.message.len());
    assert!(
        e.message.starts_with("template ${step[0].data.xxx"),
        "{}",
        &e.message[..80]
    );
}

#[tokio::test(start_paused = true)]
async fn resolved_params_are_checked_against_the_tool_schema() {
    let p = plan(
        "steps:\n- {tool: echo, params: {ms: fast}}\n- {tool: sleep, params: {ms: '${step[0].data.ms}'}}\n",
    );
    let r = runner(log()).run(&p, RunOptions::default()).await.unwrap();
    let e = r.steps[1].result.as_ref().unwrap().error.clone().unwrap();
    assert_eq!(e.kind, ErrorKind::InvalidArguments);
    assert!(e.message.contains("/ms"), "{}", e.message);
}

#[tokio::test(start_paused = true)]
async fn the_longest_remaining_path_starts_first() {
    let l = log();
    let p = plan(
        "max_parallel: 1\nsteps:\n- {id: lone, tool: mark, params: {name: lone}}\n- {id: a, tool: mark, params: {name: a}}\n- {id: b, tool: mark, params: {name: b}, depends_on: [a]}\n- {id: c, tool: mark, params: {name: c}, depends_on: [b]}\n",
    );
    runner(l.clone())
        .run(&p, RunOptions::default())
        .await
        .unwrap();
    let starts: Vec<_> = l
        .lock()
        .unwrap()
        .iter()
        .filter(|e| e.starts_with("start"))
        .cloned()
        .collect();
    assert_eq!(starts[0], "start a", "{starts:?}");
}

#[tokio::test(start_paused = true)]
async fn observed_latency_orders_steps_that_declare_no_expected_ms() {
    let l = log();
    let mut r = ToolRegistry::with_utilities();
    for (name, ms) in [("slow", 100), ("fast", 1)] {
        let log = l.clone();
        r.register(tool_fn(name, name, move |_: Value, _ctx| {
            let log = log.clone();
            async move {
                log.lock().unwrap().push(format!("start {name}"));
                tokio::time::sleep(Duration::from_millis(ms)).await;
                Ok::<_, ToolError>(json!(1))
            }
        }))
        .unwrap();
    }
    let ex = Executor::builder(r)
        .policy_state(PolicyState::new())
        .build()
        .unwrap();
    // By step count the two-step chain goes first.
    let p = plan(
        "max_parallel: 1\nsteps:\n- {id: f1, tool: fast}\n- {id: f2, tool: fast, depends_on: [f1]}\n- {id: s, tool: slow}\n",
    );
    let runner = PlanRunner::new(ex.clone());
    runner.run(&p, RunOptions::default()).await.unwrap();
    assert_eq!(l.lock().unwrap()[0], "start fast");
    // Once both tools have been seen, the 100 ms step outweighs the 2 ms chain.
    l.lock().unwrap().clear();
    runner.run(&p, RunOptions::default()).await.unwrap();
    assert_eq!(l.lock().unwrap()[0], "start slow");
    assert!((ex.observed_p50_ms("slow").unwrap() - 100.0).abs() < 1.0);
}

#[tokio::test(start_paused = true)]
async fn a_tools_max_concurrent_bounds_its_steps() {
    let mut r = ToolRegistry::with_utilities();
    r.register(tool_fn("slow", "slow", |_: Value, _ctx| async move {
        tokio::time::sleep(Duration::from_millis(100)).await;
        Ok::<_, ToolError>(json!(1))
    }))
    .unwrap();
    let ex = Executor::builder(r)
        .policy_state(PolicyState::new())
        .tool_policy("slow", json!({"limits": {"max_concurrent": 2}}))
        .build()
        .unwrap();
    let p = plan(
        "steps:\n- {tool: slow}\n- {tool: slow}\n- {tool: slow}\n- {tool: slow}\n- {tool: echo}\n",
    );
    let start = Instant::now();
    assert!(
        PlanRunner::new(ex)
            .run(&p, RunOptions::default())
            .await
            .unwrap()
            .success()
    );
    assert_eq!(start.elapsed(), Duration::from_millis(200));
}

#[tokio::test(start_paused = true)]
async fn a_step_fallback_serves_with_templates_resolved() {
    let p = plan(
        "steps:\n- {id: src, tool: echo, params: {ids: [1, 2]}}\n- tool: flaky\n  params: {key: fb-step, fail_times: 9, kind: unavailable}\n  policy: {retry: {max_attempts: 1}}\n  fallbacks: [{tool: echo, params: {cached: '${steps.src.data.ids}'}}]\n",
    );
    let r = runner(log()).run(&p, RunOptions::default()).await.unwrap();
    assert!(r.success(), "{r:#?}");
    let res = r.steps[1].result.as_ref().unwrap();
    assert_eq!(res.data, json!({"cached": [1, 2]}));
    assert_eq!(
        res.fallback.as_ref().unwrap().primary_error.kind,
        ErrorKind::Unavailable
    );
}

#[tokio::test(start_paused = true)]
async fn progress_events_arrive_in_order() {
    let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel();
    let p = plan(
        "steps:\n- {id: a, tool: flaky, params: {key: events-1, fail_times: 1}}\n- {id: b, tool: report, depends_on: [a]}\n",
    );
    let r = runner(log())
        .run(
            &p,
            RunOptions {
                events: Some(tx),
                run_id: Some("ev".into()),
                ..Default::default()
            },
        )
        .await
        .unwrap();
    assert!(r.success());
    let mut names = Vec::new();
    while let Ok(e) = rx.try_recv() {
        names.push(match e {
            PlanEvent::RunStarted { .. } => "run_started".to_string(),
            PlanEvent::StepStarted { index, .. } => format!("started {index}"),
            PlanEvent::StepRetrying { index, attempt, .. } => {
                format!("retrying {index} after {attempt}")
            }
            PlanEvent::StepProgress {
                index,
                progress,
                total,
                message,
                ..
            } => format!("progress {index} {progress}/{total:?} {message:?}"),
            PlanEvent::StepFinished { step, .. } => {
                format!("finished {} {:?}", step.index, step.status)
            }
            PlanEvent::RunFinished { status, .. } => format!("run_finished {status:?}"),
        });
    }
    assert_eq!(
        names,
        [
            "run_started",
            "started 0",
            "retrying 0 after 1",
            "finished 0 Succeeded",
            "started 1",
            "progress 1 1/Some(2.0) Some(\"half\")",
            "progress 1 2/Some(2.0) None",
            "finished 1 Succeeded",
            "run_finished Succeeded"
        ]
    );
}

#[tokio::test(start_paused = true)]
async fn a_run_cancelled_from_outside_reports_cancelled() {
    let token = cancel_after(50);
    let p = plan("steps:\n- {tool: sleep, params: {ms: 10000}}\n- {tool: echo, depends_on: [0]}\n");
    let r = runner(log())
        .run(
            &p,
            RunOptions {
                cancel: Some(token),
                ..Default::default()
            },
        )
        .await
        .unwrap();
    assert_eq!(r.status, RunStatus::Cancelled);
    assert_eq!(r.steps[0].status, StepStatus::Cancelled);
    assert_eq!(r.steps[1].status, StepStatus::Skipped);
}

#[tokio::test(start_paused = true)]
async fn rerunning_a_run_id_resumes_without_repeating_finished_steps() {
    let l = log();
    let runner = runner(l.clone());
    let p = plan(
        "steps:\n- {id: first, tool: mark, params: {name: first}}\n- {id: slow, tool: mark, params: {name: slow, ms: 10000}, depends_on: [first]}\n- {id: last, tool: echo, params: {from: '${steps.first.data.name}'}, depends_on: [slow]}\n",
    );
    // Interrupt the run while `slow` is running.
    let token = cancel_after(100);
    let opts = |cancel| RunOptions {
        run_id: Some("resume-me".into()),
        cancel,
        ..Default::default()
    };
    let r = runner.run(&p, opts(Some(token))).await.unwrap();
    assert_eq!(r.status, RunStatus::Cancelled);
    assert_eq!(r.steps[0].status, StepStatus::Succeeded);

    let r = runner.run(&p, opts(None)).await.unwrap();
    assert!(r.success(), "{r:#?}");
    assert_eq!(
        r.steps[2].result.as_ref().unwrap().data,
        json!({"from": "first"})
    );
    let starts_of_first = l
        .lock()
        .unwrap()
        .iter()
        .filter(|e| *e == "start first")
        .count();
    assert_eq!(
        starts_of_first, 1,
        "the finished step was reused, not re-run"
    );
}

#[test]
fn the_plan_result_json_has_the_design_fields() {
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_time()
        .start_paused(true)
        .build()
        .unwrap();
    let r = rt
        .block_on(runner(log()).run(
            &plan("steps:\n- {id: a, tool: echo}\n"),
            RunOptions {
                run_id: Some("r1".into()),
                ..Default::default()
            },
        ))
        .unwrap();
    let v = serde_json::to_value(&r).unwrap();
    let mut keys: Vec<_> = v.as_object().unwrap().keys().cloned().collect();
    keys.sort();
    assert_eq!(
        keys,
        ["correlation_id", "duration_ms", "run_id", "status", "steps"]
    );
    assert_eq!(v["status"], "succeeded");
    let mut step_keys: Vec<_> = v["steps"][0].as_object().unwrap().keys().cloned().collect();
    step_keys.sort();
    assert_eq!(
        step_keys,
        ["id", "index", "reason", "result", "status", "tool"]
    );
    assert_eq!(v["steps"][0]["result"]["correlation_id"], "r1");
}

#[tokio::test]
async fn the_in_memory_run_store_keeps_the_newest_runs() {
    use axon_plan::{InMemoryRunStore, RunStore};
    let store = InMemoryRunStore::with_max_runs(2);
    let p = plan("steps:\n- {tool: echo}\n");
    for id in ["a", "b", "c"] {
        store
            .begin(id, &p, &axon_core::Owner::Process)
            .await
            .unwrap();
    }
    assert_eq!(store.len(), 2);
    assert!(store.load("a").await.unwrap().is_none());
    assert!(store.load("c").await.unwrap().is_some());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn runs_can_be_spawned_on_a_multi_threaded_runtime() {
    let runner = runner(log());
    let p = plan(
        "steps:\n- {tool: sleep, params: {ms: 20}}\n- {tool: echo, params: {x: '${step[0].data.slept_ms}'}}\n",
    );
    let handles: Vec<_> = (0..8)
        .map(|_| {
            let (runner, p) = (runner.clone(), p.clone());
            tokio::spawn(async move { runner.run(&p, RunOptions::default()).await })
        })
        .collect();
    for h in handles {
        let r = h.await.unwrap().unwrap();
        assert_eq!(r.steps[1].result.as_ref().unwrap().data, json!({"x": 20}));
    }
}

#[tokio::test(start_paused = true)]
async fn streamed_results_leave_the_run_once_no_step_reads_them() {
    let runner = runner(log());
    // `a` is read by `c`, which starts only after the slow `b`: its data must
    // stay until then, and go after.
    let p = plan(
        "steps:\n- {id: a, tool: echo, params: {v: A}}\n- {id: b, tool: mark, params: {name: b, ms: 100}, depends_on: [a]}\n- {id: c, tool: echo, params: {x: '${steps.a.data.v}'}, depends_on: [b]}\n- {id: d, tool: echo, params: {y: '${steps.c.data.x}'}}\n",
    );
    let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel();
    let streamed = runner
        .run(
            &p,
            RunOptions {
                run_id: Some("streamed".into()),
                events: Some(tx),
                stream_results: true,
                ..Default::default()
            },
        )
        .await
        .unwrap();
    assert_eq!(streamed.status, RunStatus::Succeeded);
    // Every step's data went out in its event (d got a's value through c) ...
    let mut seen = Vec::new();
    while let Ok(event) = rx.try_recv() {
        if let PlanEvent::StepFinished { step, .. } = event {
            seen.push((step.index, step.result.unwrap().data));
        }
    }
    seen.sort_by_key(|(i, _)| *i);
    assert_eq!(seen[3].1, json!({"y": "A"}));
    // ... and none is held in the result, whose other fields stay.
    for step in &streamed.steps {
        let result = step.result.as_ref().unwrap();
        assert_eq!(result.data, Value::Null, "step {}", step.index);
        assert_eq!(result.attempts, 1);
        assert!(result.provenance.response_digest.is_some());
    }
    // The stored run has it all.
    let stored = runner.store().load("streamed").await.unwrap().unwrap();
    assert_eq!(
        stored.result.unwrap().steps[3]
            .result
            .as_ref()
            .unwrap()
            .data,
        json!({"y": "A"})
    );

    // Without streaming, the caller gets every step's data.
    let whole = runner.run(&p, RunOptions::default()).await.unwrap();
    assert_eq!(
        whole.steps[0].result.as_ref().unwrap().data,
        json!({"v": "A"})
    );
    assert_eq!(
        whole.steps[3].result.as_ref().unwrap().data,
        json!({"y": "A"})
    );
}
