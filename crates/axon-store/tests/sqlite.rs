//! The SQLite store on real files: history and checkpoints survive a restart,
//! history is trimmed and pruned, and a plan interrupted mid-run resumes from its
//! checkpoints after the process "restarts" (store and runner dropped and reopened).

use std::sync::{Arc, Mutex};
use std::time::Duration;

use axon_core::{
    CancellationToken, Executor, HistoryStore, SharedState, ToolCall, ToolError, ToolRegistry,
    tool_fn,
};
use axon_plan::{Plan, PlanRunner, RunOptions, RunStatus, RunStore, StepStatus};
use axon_store::{Retention, SqliteStore, Store};
use schemars::JsonSchema;
use serde_json::{Value, json};

fn temp_db(name: &str) -> std::path::PathBuf {
    let dir = std::env::temp_dir().join(format!("axon-store-test-{}", ulid::Ulid::new()));
    dir.join(name)
}

fn executor(store: Arc<SqliteStore>) -> Executor {
    Executor::builder(ToolRegistry::with_utilities())
        .shared_state(SharedState::new())
        .history(store)
        .build()
        .unwrap()
}

#[tokio::test]
async fn history_survives_a_restart_redacted() {
    let path = temp_db("axon.db");
    {
        let store = Arc::new(
            SqliteStore::open(&path, Retention::default())
                .await
                .unwrap(),
        );
        let ex = executor(store.clone());
        ex.call(
            ToolCall::new("echo", json!({"user": "ada", "password": "hunter2"}))
                .correlation_id("login"),
        )
        .await;
        ex.call(ToolCall::new("nope", json!({})).correlation_id("login"))
            .await;
        store.close().await;
    }
    let store = SqliteStore::open(&path, Retention::default())
        .await
        .unwrap();
    let entries = store.by_correlation("login").await.unwrap();
    assert_eq!(entries.len(), 2);
    assert_eq!(entries[0].args, json!({"user": "ada", "password": "***"}));
    assert_eq!(
        entries[1].result.error.as_ref().unwrap().kind,
        axon_core::ErrorKind::UnknownTool
    );
    let one = store
        .by_call_id(&entries[0].result.call_id)
        .await
        .unwrap()
        .unwrap();
    assert_eq!(one, entries[0]);
    let stats = store.stats("login").await.unwrap();
    assert_eq!((stats.total, stats.succeeded, stats.failed), (2, 1, 1));
    assert_eq!(stats.success_rate, 0.5);
    assert!(store.by_call_id("missing").await.unwrap().is_none());
    store.check_writable().await.unwrap();
}

#[tokio::test]
async fn history_is_trimmed_fifo_per_correlation_and_in_all() {
    let retention = Retention {
        max_per_correlation: 3,
        max_calls: 5,
        max_age: None,
    };
    let store = Arc::new(
        SqliteStore::open(temp_db("fifo.db"), retention)
            .await
            .unwrap(),
    );
    let ex = executor(store.clone());
    for i in 0..5 {
        ex.call(ToolCall::new("echo", json!({"i": i})).correlation_id("a"))
            .await;
    }
    let kept: Vec<_> = store
        .by_correlation("a")
        .await
        .unwrap()
        .iter()
        .map(|e| e.args["i"].clone())
        .collect();
    assert_eq!(kept, [json!(2), json!(3), json!(4)]);
    for i in 0..4 {
        ex.call(ToolCall::new("echo", json!({"i": i})).correlation_id(format!("b{i}")))
            .await;
    }
    store.prune().await.unwrap();
    assert_eq!(
        store.by_correlation("a").await.unwrap().len(),
        1,
        "5 calls kept in all, newest first"
    );
}

#[tokio::test]
async fn history_older_than_max_age_is_pruned_on_open() {
    let path = temp_db("age.db");
    {
        let store = Arc::new(
            SqliteStore::open(&path, Retention::default())
                .await
                .unwrap(),
        );
        let ex = executor(store.clone());
        let fresh = ex
            .call(ToolCall::new("echo", json!({})).correlation_id("new"))
            .await;
        // An entry that started an hour ago (retention reads wall-clock start times).
        let mut old = store.by_call_id(&fresh.call_id).await.unwrap().unwrap();
        old.result.call_id = "old-call".into();
        old.result.correlation_id = "old".into();
        old.result.started_at =
            axon_core::Timestamp::from_unix_ms(fresh.started_at.unix_ms() - 3_600_000);
        store.record(old).await.unwrap();
        assert_eq!(store.by_correlation("old").await.unwrap().len(), 1);
        store.close().await;
    }
    let retention = Retention {
        max_age: Some(Duration::from_secs(60)),
        ..Retention::default()
    };
    let store = SqliteStore::open(&path, retention).await.unwrap();
    assert!(store.by_correlation("old").await.unwrap().is_empty());
    assert_eq!(store.by_correlation("new").await.unwrap().len(), 1);
}

#[derive(serde::Deserialize, JsonSchema)]
struct Mark {
    name: String,
    #[serde(default)]
    ms: u64,
}

fn marking_runner(store: Arc<SqliteStore>, log: Arc<Mutex<Vec<String>>>) -> PlanRunner {
    let mut r = ToolRegistry::with_utilities();
    r.register(tool_fn("mark", "logs its start", move |a: Mark, _ctx| {
        let log = log.clone();
        async move {
            log.lock().unwrap().push(a.name.clone());
            tokio::time::sleep(Duration::from_millis(a.ms)).await;
            Ok::<_, ToolError>(json!({"name": a.name}))
        }
    }))
    .unwrap();
    let ex = Executor::builder(r)
        .shared_state(SharedState::new())
        .history(store.clone())
        .build()
        .unwrap();
    PlanRunner::with_store(ex, store)
}

#[tokio::test]
async fn an_interrupted_run_resumes_after_a_restart_without_repeating_finished_steps() {
    let path = temp_db("runs.db");
    let log = Arc::new(Mutex::new(Vec::new()));
    let plan = Plan::parse(
        "steps:\n- {id: first, tool: mark, params: {name: first}}\n- {id: slow, tool: mark, params: {name: slow, ms: 60000}, depends_on: [first]}\n- {id: last, tool: echo, params: {from: '${steps.first.data.name}'}, depends_on: [slow]}\n",
    )
    .unwrap();
    {
        let store = Arc::new(
            SqliteStore::open(&path, Retention::default())
                .await
                .unwrap(),
        );
        let token = CancellationToken::new();
        let canceller = token.clone();
        tokio::spawn(async move {
            tokio::time::sleep(Duration::from_millis(200)).await;
            canceller.cancel();
        });
        let runner = marking_runner(store.clone(), log.clone());
        let r = runner
            .run(
                &plan,
                RunOptions {
                    run_id: Some("r1".into()),
                    cancel: Some(token),
                    ..Default::default()
                },
            )
            .await
            .unwrap();
        assert_eq!(r.status, RunStatus::Cancelled);
        store.close().await;
    }
    // "Restart": a new store on the same file, a new runner; `slow` is quick now.
    let store = Arc::new(
        SqliteStore::open(&path, Retention::default())
            .await
            .unwrap(),
    );
    let record = store.load("r1").await.unwrap().unwrap();
    assert_eq!(
        record.steps.len(),
        1,
        "only the finished step was checkpointed"
    );
    let fast: Plan = serde_json::from_value({
        let mut v: Value = serde_json::to_value(&plan).unwrap();
        v["steps"][1]["params"]["ms"] = json!(0);
        v
    })
    .unwrap();
    let r = marking_runner(store.clone(), log.clone())
        .run(
            &fast,
            RunOptions {
                run_id: Some("r1".into()),
                ..Default::default()
            },
        )
        .await
        .unwrap();
    assert!(r.success(), "{r:#?}");
    assert!(r.steps.iter().all(|s| s.status == StepStatus::Succeeded));
    assert_eq!(
        r.steps[2].result.as_ref().unwrap().data,
        json!({"from": "first"})
    );
    assert_eq!(
        *log.lock().unwrap(),
        ["first", "slow", "slow"],
        "first ran once; slow ran again"
    );
    let finished = store.load("r1").await.unwrap().unwrap();
    assert_eq!(finished.result.unwrap().status, RunStatus::Succeeded);
}

#[tokio::test]
async fn opening_twice_applies_migrations_once() {
    let path = temp_db("twice.db");
    SqliteStore::open(&path, Retention::default())
        .await
        .unwrap()
        .close()
        .await;
    SqliteStore::open(&path, Retention::default())
        .await
        .unwrap()
        .close()
        .await;
}

#[tokio::test]
async fn an_unopenable_path_is_a_clear_error() {
    let err = SqliteStore::open("/proc/axon/history.db", Retention::default())
        .await
        .err()
        .unwrap();
    assert!(err.to_string().contains("/proc/axon"), "{err}");
}

#[tokio::test]
async fn tool_stats_give_counts_success_rates_and_percentiles() {
    let store = Arc::new(
        SqliteStore::open(temp_db("stats.db"), Retention::default())
            .await
            .unwrap(),
    );
    let ex = executor(store.clone());
    for i in 0..20 {
        ex.call(ToolCall::new("sleep", json!({"ms": i}))).await;
    }
    ex.call(ToolCall::new(
        "flaky",
        json!({"key": format!("s-{}", ulid::Ulid::new()), "fail_times": 1}),
    ))
    .await;
    ex.call(ToolCall::new(
        "flaky",
        json!({"key": "never", "fail_times": 99, "kind": "failed"}),
    ))
    .await;
    let stats = store.tool_stats().await.unwrap();
    let names: Vec<_> = stats.iter().map(|s| s.tool.as_str()).collect();
    assert_eq!(names, ["flaky", "sleep"]);
    assert_eq!(
        (stats[0].calls, stats[0].succeeded, stats[0].retried),
        (2, 1, 1)
    );
    assert_eq!(stats[0].success_rate, 0.5);
    assert_eq!(stats[1].calls, 20);
    assert!(
        stats[1].p50_ms >= 9 && stats[1].p95_ms >= 18 && stats[1].p95_ms >= stats[1].p50_ms,
        "{:?}",
        stats[1]
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn concurrent_calls_are_committed_together_and_fifo_holds_within_a_batch() {
    let path = temp_db("axon.db");
    let retention = Retention {
        max_per_correlation: 5,
        ..Retention::default()
    };
    let store = Arc::new(SqliteStore::open(&path, retention).await.unwrap());
    let ex = executor(store.clone());
    // 400 calls at once: 300 under their own ids, 100 under one shared id.
    let calls = (0..400).map(|i| {
        let id = if i % 4 == 0 {
            "shared".to_string()
        } else {
            format!("own-{i}")
        };
        ToolCall::new("echo", json!({"i": i})).correlation_id(id)
    });
    let results = ex.call_many(calls.collect(), Some(400)).await;
    assert!(results.iter().all(|r| r.success));
    // Every call returned after its row was committed: all are readable now.
    for r in &results {
        if r.correlation_id != "shared" {
            assert!(store.by_call_id(&r.call_id).await.unwrap().is_some());
        }
    }
    let shared = store.by_correlation("shared").await.unwrap();
    assert_eq!(shared.len(), 5, "FIFO keeps the newest 5 of 100");
    store.close().await;
    // After close, nothing is accepted, and nothing queued was lost.
    let late = store
        .record(axon_core::HistoryEntry {
            result: results[1].clone(),
            args: json!({}),
        })
        .await;
    assert!(late.is_err());
    let reopened = SqliteStore::open(&path, retention).await.unwrap();
    let stats = reopened.tool_stats().await.unwrap();
    assert_eq!(stats[0].calls, 305);
}
