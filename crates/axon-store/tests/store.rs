//! The store on both backends, on real engines: SQLite files and the local
//! PostgreSQL (`AXON_TEST_POSTGRES_URL`, default `postgres://postgres@127.0.0.1:5432/test`,
//! each test in a schema of its own). History and checkpoints survive a
//! restart, history is trimmed and pruned, and a plan interrupted mid-run
//! resumes from its checkpoints after the process "restarts" (store and runner
//! dropped and reopened). Every behaviour test runs against both
//! (`both!`); what only a file has (its bytes, its path) is tested on SQLite.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use axon_core::{
    CancellationToken, Executor, PolicyState, ToolCall, ToolError, ToolRegistry, tool_fn,
};
use axon_plan::{Plan, PlanRunner, RunOptions, RunStatus, StepStatus};
use axon_store::{PgStore, Retention, SqliteStore};
use axon_store_roles::{
    ActRows, ApprovalStore, Health, HistoryStore, Idempotency, PinRows, RecentLatencies, RunHold,
    RunListing, RunQueue, RunStore, ToolFigures, Upkeep,
};
use axon_testkit::postgres_url;
use schemars::JsonSchema;
use serde_json::{Value, json};
use sqlx::Connection;

/// Every role of one store: these tests drive a store through all of them
/// (the product hands them out one by one, `axon_store_roles::Stores`).
trait Store:
    HistoryStore
    + RunStore
    + Idempotency
    + ApprovalStore
    + PinRows
    + ActRows
    + RunQueue
    + RunListing
    + ToolFigures
    + RecentLatencies
    + Health
    + Upkeep
{
}

impl<T> Store for T where
    T: HistoryStore
        + RunStore
        + Idempotency
        + ApprovalStore
        + PinRows
        + ActRows
        + RunQueue
        + RunListing
        + ToolFigures
        + RecentLatencies
        + Health
        + Upkeep
{
}

fn temp_db(name: &str) -> std::path::PathBuf {
    let dir = std::env::temp_dir().join(format!("axon-store-test-{}", ulid::Ulid::new()));
    dir.join(name)
}

/// Where a test's store lives: a file, or a schema of its own in the test database.
#[derive(Clone)]
enum Backend {
    Sqlite(std::path::PathBuf),
    Postgres(String),
}

impl Backend {
    fn sqlite() -> Backend {
        Backend::Sqlite(temp_db("axon.db"))
    }

    fn postgres() -> Backend {
        Backend::Postgres(format!(
            "axon_test_{}",
            ulid::Ulid::new().to_string().to_lowercase()
        ))
    }

    /// Open (or, the second time, reopen: a "restart") the store.
    async fn open(&self, retention: Retention) -> Arc<dyn Store> {
        match self {
            Backend::Sqlite(path) => Arc::new(SqliteStore::open(path, retention).await.unwrap()),
            Backend::Postgres(schema) => Arc::new(
                PgStore::open(&postgres_url(), Some(schema), retention)
                    .await
                    .unwrap(),
            ),
        }
    }

    async fn open_default(&self) -> Arc<dyn Store> {
        self.open(Retention::default()).await
    }

    /// Run `sql` (SQLite's `?` placeholders, rewritten to `$n` for
    /// PostgreSQL) with text binds on a connection of its own, as another
    /// process would; the first column of each row, as text.
    async fn query(&self, sql: &str, binds: &[&str]) -> Vec<String> {
        match self {
            Backend::Sqlite(path) => {
                let mut db = sqlx::SqliteConnection::connect(&format!("sqlite:{}", path.display()))
                    .await
                    .unwrap();
                let mut q = sqlx::query_scalar::<_, String>(sqlx::AssertSqlSafe(sql.to_string()));
                for b in binds {
                    q = q.bind(b.to_string());
                }
                q.fetch_all(&mut db).await.unwrap()
            }
            Backend::Postgres(schema) => {
                let mut n = 0;
                let sql: String = sql
                    .chars()
                    .map(|c| {
                        if c == '?' {
                            n += 1;
                            format!("${n}")
                        } else {
                            c.to_string()
                        }
                    })
                    .collect();
                let mut db = sqlx::PgConnection::connect(&format!(
                    "{}?options[search_path]={schema}",
                    postgres_url()
                ))
                .await
                .unwrap();
                let mut q = sqlx::query_scalar::<_, String>(sqlx::AssertSqlSafe(sql));
                for b in binds {
                    q = q.bind(b.to_string());
                }
                q.fetch_all(&mut db).await.unwrap()
            }
        }
    }

    /// Everything the store holds, as bytes: the SQLite file and its WAL, or
    /// every text column of the PostgreSQL tables.
    async fn everything(&self) -> Vec<u8> {
        match self {
            Backend::Sqlite(path) => file_bytes(path),
            Backend::Postgres(_) => self
                .query(
                    "SELECT entry FROM calls UNION ALL SELECT plan FROM runs \
                     UNION ALL SELECT coalesce(result, '') FROM runs UNION ALL SELECT outcome FROM run_steps",
                    &[],
                )
                .await
                .join("\n")
                .into_bytes(),
        }
    }

    /// Drop the test's schema (its file is left in the temp dir).
    async fn clean_up(&self) {
        if let Backend::Postgres(schema) = self {
            let mut db = sqlx::PgConnection::connect(&postgres_url()).await.unwrap();
            sqlx::query(sqlx::AssertSqlSafe(format!("DROP SCHEMA {schema} CASCADE")))
                .execute(&mut db)
                .await
                .unwrap();
        }
    }
}

/// One test body, run on SQLite and on PostgreSQL.
macro_rules! both {
    ($name:ident) => {
        mod $name {
            #[tokio::test]
            async fn sqlite() {
                let backend = super::Backend::sqlite();
                super::$name(backend.clone()).await;
                backend.clean_up().await;
            }
            #[tokio::test]
            async fn postgres() {
                let backend = super::Backend::postgres();
                super::$name(backend.clone()).await;
                backend.clean_up().await;
            }
        }
    };
    ($name:ident, multi_thread) => {
        mod $name {
            #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
            async fn sqlite() {
                let backend = super::Backend::sqlite();
                super::$name(backend.clone()).await;
                backend.clean_up().await;
            }
            #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
            async fn postgres() {
                let backend = super::Backend::postgres();
                super::$name(backend.clone()).await;
                backend.clean_up().await;
            }
        }
    };
}

fn executor(store: Arc<dyn Store>) -> Executor {
    Executor::builder(ToolRegistry::with_utilities())
        .policy_state(PolicyState::new())
        .history(store)
        .build()
        .unwrap()
}

both!(history_survives_a_restart_redacted);
async fn history_survives_a_restart_redacted(backend: Backend) {
    {
        let store = backend.open_default().await;
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
    let store = backend.open_default().await;
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

both!(history_is_trimmed_fifo_per_correlation_and_in_all);
async fn history_is_trimmed_fifo_per_correlation_and_in_all(backend: Backend) {
    let retention = Retention {
        max_per_correlation: 3,
        max_calls: 5,
        max_age: None,
        max_runs: 0,
    };
    let store = backend.open(retention).await;
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

both!(a_call_named_as_a_correlation_id_is_trimmed_with_its_group);
/// A call made without a correlation id is its own group (its batch skips the
/// FIFO trim); calls that later name it as their correlation id join that
/// group, and the trim holds it to `max_per_correlation`.
async fn a_call_named_as_a_correlation_id_is_trimmed_with_its_group(backend: Backend) {
    let retention = Retention {
        max_per_correlation: 2,
        ..Retention::default()
    };
    let store = backend.open(retention).await;
    let ex = executor(store.clone());
    let mut alone = Vec::new();
    for i in 0..3 {
        alone.push(ex.call(ToolCall::new("echo", json!({"i": i}))).await);
    }
    for first in &alone {
        let kept = store.by_correlation(&first.correlation_id).await.unwrap();
        assert_eq!(
            kept.len(),
            1,
            "a call without a correlation id is its own group"
        );
        assert_eq!(kept[0].result.call_id, first.call_id);
    }
    let group = alone[0].call_id.clone();
    for i in 10..13 {
        ex.call(ToolCall::new("echo", json!({"i": i})).correlation_id(group.clone()))
            .await;
    }
    let kept: Vec<_> = store
        .by_correlation(&group)
        .await
        .unwrap()
        .iter()
        .map(|e| e.args["i"].clone())
        .collect();
    assert_eq!(
        kept,
        [json!(11), json!(12)],
        "the first call went with the FIFO"
    );
    assert_eq!(
        store.by_correlation(&alone[1].call_id).await.unwrap().len(),
        1
    );
}

both!(a_batch_that_fails_part_way_leaves_nothing_and_the_next_commits);
/// A batch is its rows, the FIFO trim of its named groups and its
/// checkpoints, all or nothing. Here the trim is refused (a trigger another
/// process put on the table): the row inserted before it must not stay, the
/// call still answers, and once the trigger is gone the store takes batches
/// again (no transaction left open on the writer's connection).
async fn a_batch_that_fails_part_way_leaves_nothing_and_the_next_commits(backend: Backend) {
    let retention = Retention {
        max_per_correlation: 1,
        ..Retention::default()
    };
    let store = backend.open(retention).await;
    let ex = executor(store.clone());
    let first = ex
        .call(ToolCall::new("echo", json!({"i": 1})).correlation_id("g"))
        .await;
    match &backend {
        Backend::Sqlite(_) => {
            backend
                .query(
                    "CREATE TRIGGER refuse_trim BEFORE DELETE ON calls \
                     BEGIN SELECT RAISE(ABORT, 'refused'); END",
                    &[],
                )
                .await;
        }
        Backend::Postgres(_) => {
            backend
                .query(
                    "CREATE FUNCTION refuse() RETURNS trigger LANGUAGE plpgsql AS \
                     $$ BEGIN RAISE EXCEPTION 'refused'; END $$",
                    &[],
                )
                .await;
            backend
                .query(
                    "CREATE TRIGGER refuse_trim BEFORE DELETE ON calls \
                     FOR EACH ROW EXECUTE FUNCTION refuse()",
                    &[],
                )
                .await;
        }
    }
    // The trim of "g" would delete the first call: refused, so this batch
    // (its row included) is rolled back.
    let refused = ex
        .call(ToolCall::new("echo", json!({"i": 2})).correlation_id("g"))
        .await;
    assert!(refused.success, "the call itself still answers");
    assert!(store.by_call_id(&refused.call_id).await.unwrap().is_none());
    let kept = store.by_correlation("g").await.unwrap();
    assert_eq!(kept.len(), 1);
    assert_eq!(kept[0].result.call_id, first.call_id);

    let drop = match &backend {
        Backend::Sqlite(_) => "DROP TRIGGER refuse_trim",
        Backend::Postgres(_) => "DROP TRIGGER refuse_trim ON calls",
    };
    backend.query(drop, &[]).await;
    let third = ex
        .call(ToolCall::new("echo", json!({"i": 3})).correlation_id("g"))
        .await;
    let kept = store.by_correlation("g").await.unwrap();
    assert_eq!(kept.len(), 1, "the trim runs again");
    assert_eq!(kept[0].result.call_id, third.call_id);
    let alone = ex.call(ToolCall::new("echo", json!({"i": 4}))).await;
    assert!(store.by_call_id(&alone.call_id).await.unwrap().is_some());
}

both!(history_older_than_max_age_is_pruned_on_open);
async fn history_older_than_max_age_is_pruned_on_open(backend: Backend) {
    {
        let store = backend.open_default().await;
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
        store.record(&old).await.unwrap();
        assert_eq!(store.by_correlation("old").await.unwrap().len(), 1);
        store.close().await;
    }
    let retention = Retention {
        max_age: Some(Duration::from_secs(60)),
        ..Retention::default()
    };
    let store = backend.open(retention).await;
    assert!(store.by_correlation("old").await.unwrap().is_empty());
    assert_eq!(store.by_correlation("new").await.unwrap().len(), 1);
}

#[derive(serde::Deserialize, JsonSchema)]
struct Mark {
    name: String,
    #[serde(default)]
    ms: u64,
}

fn marking_runner(store: Arc<dyn Store>, log: Arc<Mutex<Vec<String>>>) -> PlanRunner {
    let mut r = ToolRegistry::with_utilities();
    r.register(tool_fn("mark", "logs its start", move |a: Mark, _ctx| {
        let log = log.clone();
        async move {
            // Slow the first time only: a resumed run finds it quick.
            let again = {
                let mut log = log.lock().unwrap();
                let again = log.contains(&a.name);
                log.push(a.name.clone());
                again
            };
            if !again {
                tokio::time::sleep(Duration::from_millis(a.ms)).await;
            }
            Ok::<_, ToolError>(json!({"name": a.name}))
        }
    }))
    .unwrap();
    let ex = Executor::builder(r)
        .policy_state(PolicyState::new())
        .history(store.clone())
        .build()
        .unwrap();
    PlanRunner::with_stores(ex, store.clone(), store)
}

both!(an_interrupted_run_resumes_after_a_restart_without_repeating_finished_steps);
async fn an_interrupted_run_resumes_after_a_restart_without_repeating_finished_steps(
    backend: Backend,
) {
    let log = Arc::new(Mutex::new(Vec::new()));
    let plan = Plan::parse(
        "steps:\n- {id: first, tool: mark, params: {name: first}}\n- {id: slow, tool: mark, params: {name: slow, ms: 60000}, depends_on: [first]}\n- {id: last, tool: echo, params: {from: '${steps.first.data.name}'}, depends_on: [slow]}\n",
    )
    .unwrap();
    {
        let store = backend.open_default().await;
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
    let store = backend.open_default().await;
    let record = store.load("r1").await.unwrap().unwrap();
    assert_eq!(
        record.steps.len(),
        1,
        "only the finished step was checkpointed"
    );
    // A different plan under the same run id is refused: its finished steps'
    // results would be another plan's.
    let other: Plan = serde_json::from_value({
        let mut v: Value = serde_json::to_value(&plan).unwrap();
        v["steps"][0]["params"]["name"] = json!("mallory");
        v
    })
    .unwrap();
    let refused = marking_runner(store.clone(), log.clone())
        .run(
            &other,
            RunOptions {
                run_id: Some("r1".into()),
                ..Default::default()
            },
        )
        .await
        .unwrap_err();
    assert!(refused.to_string().contains("different plan"), "{refused}");
    let r = marking_runner(store.clone(), log.clone())
        .run(
            &plan,
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

both!(opening_twice_applies_migrations_once);
async fn opening_twice_applies_migrations_once(backend: Backend) {
    backend.open_default().await.close().await;
    backend.open_default().await.close().await;
}

#[tokio::test]
async fn an_unopenable_path_is_a_clear_error() {
    let err = SqliteStore::open("/proc/axon/history.db", Retention::default())
        .await
        .err()
        .unwrap();
    assert!(err.to_string().contains("/proc/axon"), "{err}");
}

both!(tool_stats_give_counts_success_rates_and_percentiles);
async fn tool_stats_give_counts_success_rates_and_percentiles(backend: Backend) {
    let store = backend.open(Retention::default()).await;
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

    // What a new process seeds its latency sketches with: the last calls that
    // succeeded at the first attempt, oldest first, per tool.
    let recent = store.recent_latencies(5, 0).await.unwrap();
    assert_eq!(
        recent.len(),
        1,
        "flaky's calls were retried or failed: {recent:?}"
    );
    let (tool, durations) = &recent[0];
    assert_eq!(tool, "sleep");
    assert_eq!(durations.len(), 5);
    // The last five (sleeps of 15 to 19 ms), oldest first: each lasted at
    // least what it slept (how much longer depends on the machine's load).
    assert!(
        durations
            .iter()
            .enumerate()
            .all(|(i, d)| *d >= 15 + i as u64),
        "{durations:?}"
    );
    let later = axon_core::Timestamp::now().unix_ms() as i64 + 1;
    assert!(store.recent_latencies(5, later).await.unwrap().is_empty());
}

both!(
    concurrent_calls_are_committed_together_and_fifo_holds_within_a_batch,
    multi_thread
);
async fn concurrent_calls_are_committed_together_and_fifo_holds_within_a_batch(backend: Backend) {
    let retention = Retention {
        max_per_correlation: 5,
        ..Retention::default()
    };
    let store = backend.open(retention).await;
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
        .record(&axon_core::HistoryEntry {
            result: results[1].clone(),
            args: json!({}),
            step: None,
            owner: axon_core::Owner::Process,
        })
        .await;
    assert!(late.is_err());
    let reopened = backend.open(retention).await;
    let stats = reopened.tool_stats().await.unwrap();
    assert_eq!(stats[0].calls, 305);
}

/// Every byte of the store's files (the database, its WAL), for looking for a
/// value that must not be there.
fn file_bytes(path: &std::path::Path) -> Vec<u8> {
    let mut all = Vec::new();
    for suffix in ["", "-wal", "-shm", "-journal"] {
        let mut p = path.as_os_str().to_owned();
        p.push(suffix);
        if let Ok(bytes) = std::fs::read(&p) {
            all.extend(bytes);
        }
    }
    all
}

fn contains(haystack: &[u8], needle: &str) -> bool {
    haystack
        .windows(needle.len())
        .any(|w| w == needle.as_bytes())
}

both!(a_runs_secrets_are_never_stored_but_reach_the_caller_and_the_tools);
async fn a_runs_secrets_are_never_stored_but_reach_the_caller_and_the_tools(backend: Backend) {
    let store = backend.open_default().await;
    let secrets = axon_plan::Secrets::new().with(
        "API_KEY",
        axon_plan::SecretSource::Value("sk-live-0123456789".into()),
    );
    let runner = PlanRunner::with_stores(executor(store.clone()), store.clone(), store.clone())
        .with_secrets(secrets);
    let plan = Plan::parse(
        "steps:\n\
         - {id: login, tool: echo, params: {user: ada, password: hunter2-literal, access_token: tok-issued-42}}\n\
         - {id: use, tool: echo, params: {header: 'Key ${secret.API_KEY}', token: '${steps.login.data.access_token}'}}\n\
         - {id: copy, tool: echo, params: {relayed: '${steps.use.data.header}'}}\n",
    )
    .unwrap();
    let (tx, mut events) = tokio::sync::mpsc::unbounded_channel();
    let r = runner
        .run(
            &plan,
            RunOptions {
                run_id: Some("s1".into()),
                events: Some(tx),
                ..Default::default()
            },
        )
        .await
        .unwrap();
    assert!(r.success(), "{r:#?}");
    // The caller and the tools get the real values.
    let used = &r.steps[1].result.as_ref().unwrap().data;
    assert_eq!(used["header"], "Key sk-live-0123456789");
    assert_eq!(used["token"], "tok-issued-42");
    // What watchers see is masked.
    let mut streamed = String::new();
    while let Ok(e) = events.try_recv() {
        streamed.push_str(&serde_json::to_string(&e).unwrap());
    }
    // What is stored is masked: run record, plan document, checkpoints, history.
    let record = store.load("s1").await.unwrap().unwrap();
    let stored = serde_json::to_string(&record).unwrap();
    let history = serde_json::to_string(&store.by_correlation("s1").await.unwrap()).unwrap();
    store.close().await;
    let bytes = backend.everything().await;
    for secret in ["hunter2-literal", "tok-issued-42", "sk-live-0123456789"] {
        assert!(!streamed.contains(secret), "{secret} in events: {streamed}");
        assert!(
            !stored.contains(secret),
            "{secret} in the run record: {stored}"
        );
        assert!(!history.contains(secret), "{secret} in history: {history}");
        assert!(!contains(&bytes, secret), "{secret} in the store");
    }
    assert!(
        stored.contains("${secret.API_KEY}"),
        "the reference is kept"
    );
    assert_eq!(record.plan.steps[0].params["password"], "***");

    // Resuming a run whose next step reads a masked value fails clearly.
    let store = backend.open_default().await;
    // Forget one checkpoint, as if the run had been killed before that step.
    backend
        .query(
            "DELETE FROM run_steps WHERE run_id = ? AND step_index = CAST(? AS INTEGER)",
            &["s1", "1"],
        )
        .await;
    let runner = PlanRunner::with_stores(executor(store.clone()), store.clone(), store.clone())
        .with_secrets(
            axon_plan::Secrets::new().with("API_KEY", axon_plan::SecretSource::Value("k".into())),
        );
    let r = runner
        .run(
            &plan,
            RunOptions {
                run_id: Some("s1".into()),
                ..Default::default()
            },
        )
        .await
        .unwrap();
    let reason = r.steps[1].reason.clone().unwrap();
    assert!(
        reason.contains("holds a secret") && reason.contains("${secret.NAME}"),
        "{reason}"
    );
    store.close().await;
}

both!(a_step_is_checkpointed_with_its_history_row);
async fn a_step_is_checkpointed_with_its_history_row(backend: Backend) {
    let store = backend.open_default().await;
    let plan = Plan::parse("steps:\n- {id: a, tool: echo, params: {x: 1}}\n").unwrap();
    store
        .begin("t1", &plan, &axon_core::Owner::Process)
        .await
        .unwrap();
    // The call as the runner sends it, but no runner checkpoint after: the
    // history row alone must carry it.
    let ex = executor(store.clone());
    let mut call = ToolCall::new("echo", json!({"x": 1})).correlation_id("t1");
    call.step = Some(Box::new(axon_core::StepMark {
        run_id: "t1".into(),
        index: 0,
        id: Some("a".into()),
    }));
    let r = ex.call(call).await;
    // Durable by default: committed before the call returned, readable by
    // another connection without a flush.
    let counts = backend
        .query(
            "SELECT CAST((SELECT count(*) FROM calls WHERE call_id = ?) AS TEXT) \
             UNION ALL SELECT CAST((SELECT count(*) FROM run_steps WHERE run_id = 't1') AS TEXT)",
            &[&r.call_id],
        )
        .await;
    let (calls, steps) = (counts[0].as_str(), counts[1].as_str());
    assert_eq!((calls, steps), ("1", "1"));
    let record = store.load("t1").await.unwrap().unwrap();
    assert_eq!(record.steps[&0].status, StepStatus::Succeeded);
    assert_eq!(record.steps[&0].id.as_deref(), Some("a"));
    // A call for a run the store does not know checkpoints nothing, and is
    // recorded all the same.
    let mut stray = ToolCall::new("echo", json!({})).correlation_id("t2");
    stray.step = Some(Box::new(axon_core::StepMark {
        run_id: "unknown".into(),
        index: 0,
        id: None,
    }));
    assert!(ex.call(stray).await.success);
    assert_eq!(store.by_correlation("t2").await.unwrap().len(), 1);
    store.close().await;
}

both!(a_run_id_is_held_by_one_execution_at_a_time);
async fn a_run_id_is_held_by_one_execution_at_a_time(backend: Backend) {
    let store = backend.open_default().await;
    let held = store.claim("c1").await.unwrap();
    let refused = store.claim("c1").await.err().unwrap();
    assert!(
        refused.message().contains("another process"),
        "{}",
        refused.message()
    );
    assert!(
        matches!(refused, axon_core::StoreError::Conflict { .. }),
        "{refused:?}"
    );
    held.release().await;
    let again = store.claim("c1").await.unwrap();
    drop(again);
    // A holder on this host whose process is gone is taken over at once.
    let host = std::fs::read_to_string("/proc/sys/kernel/hostname").unwrap();
    backend
        .query(
            "INSERT INTO run_claims (run_id, owner, host, pid, heartbeat_ms) VALUES ('c2', 'dead', ?, 999999999, 9999999999999)",
            &[host.trim()],
        )
        .await;
    store.claim("c2").await.unwrap().release().await;
    // Two runs of one id started together: one runs, the other is refused.
    let plan = Plan::parse("steps:\n- {tool: sleep, params: {ms: 200}}\n").unwrap();
    let runner = PlanRunner::with_stores(executor(store.clone()), store.clone(), store.clone());
    let options = || RunOptions {
        run_id: Some("c3".into()),
        ..Default::default()
    };
    let (a, b) = tokio::join!(runner.run(&plan, options()), runner.run(&plan, options()));
    assert_eq!(
        (a.is_ok() as u8) + (b.is_ok() as u8),
        1,
        "exactly one of two concurrent executions runs"
    );
    store.close().await;
}

both!(old_runs_are_pruned_beyond_max_runs);
async fn old_runs_are_pruned_beyond_max_runs(backend: Backend) {
    let retention = Retention {
        max_runs: 3,
        ..Retention::default()
    };
    let store = backend.open(retention).await;
    let runner = PlanRunner::with_stores(executor(store.clone()), store.clone(), store.clone());
    let plan = Plan::parse("steps:\n- {tool: echo, params: {}}\n").unwrap();
    for i in 0..6 {
        let options = RunOptions {
            run_id: Some(format!("run-{i}")),
            ..Default::default()
        };
        runner.run(&plan, options).await.unwrap();
        tokio::time::sleep(Duration::from_millis(2)).await;
    }
    store.prune().await.unwrap();
    let mut kept = Vec::new();
    for i in 0..6 {
        if store.load(&format!("run-{i}")).await.unwrap().is_some() {
            kept.push(i);
        }
    }
    assert_eq!(kept, [3, 4, 5], "the newest three");
    store.close().await;
}

both!(
    a_new_file_opened_by_several_at_once_is_migrated_once,
    multi_thread
);
async fn a_new_file_opened_by_several_at_once_is_migrated_once(backend: Backend) {
    let opens = (0..4).map(|_| {
        let backend = backend.clone();
        tokio::spawn(async move { backend.open_default().await })
    });
    for open in opens {
        open.await.unwrap().close().await;
    }
}

both!(a_runs_step_results_are_stored_once_and_read_back_whole);
async fn a_runs_step_results_are_stored_once_and_read_back_whole(backend: Backend) {
    let store = backend.open_default().await;
    let runner = PlanRunner::with_stores(executor(store.clone()), store.clone(), store.clone());
    // 200 steps that succeed, one that fails, and one skipped behind it.
    let mut yaml = String::from("steps:\n");
    for i in 0..200 {
        yaml +=
            &format!("- {{id: s{i}, tool: echo, params: {{payload: \"unique-{i:04}-value\"}}}}\n");
    }
    yaml += "- {id: bad, tool: flaky, params: {key: once-bad, fail_times: 9, kind: failed}}\n";
    yaml += "- {id: after, tool: echo, params: {x: \"${steps.bad.data}\"}}\n";
    let plan = Plan::parse(&yaml).unwrap();
    let options = RunOptions {
        run_id: Some("big".into()),
        ..Default::default()
    };
    let live = runner.run(&plan, options).await.unwrap();
    assert_eq!(live.status, RunStatus::Failed);
    store.flush().await.unwrap();

    // What the runs table holds as the result: only the steps without a
    // checkpoint (the skipped one; the failed call is checkpointed); each
    // echoed payload is in run_steps, not again in the result.
    let result = backend
        .query("SELECT result FROM runs WHERE run_id = 'big'", &[])
        .await
        .remove(0);
    assert!(!result.contains("unique-0007-value"), "{result}");
    let stored: Value = serde_json::from_str(&result).unwrap();
    let indexes: Vec<u64> = stored["steps"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["index"].as_u64().unwrap())
        .collect();
    assert_eq!(indexes, [201], "only the skipped step is not checkpointed");

    // Read back, the result is whole and in plan order, as the caller got it.
    let record = store.load("big").await.unwrap().unwrap();
    let whole = record.result.unwrap();
    assert_eq!(whole.steps.len(), 202);
    assert!(whole.steps.iter().enumerate().all(|(i, s)| s.index == i));
    assert_eq!(whole.steps, live.steps);
    assert_eq!(whole.steps[201].status, StepStatus::Skipped);
    store.close().await;
}

both!(an_idempotency_key_is_claimed_once_answered_then_replayed_and_survives_a_restart);
async fn an_idempotency_key_is_claimed_once_answered_then_replayed_and_survives_a_restart(
    backend: Backend,
) {
    use axon_plan::IdempotencyBegin::*;
    let store = backend.open_default().await;
    assert_eq!(store.idempotency_begin("k", "fp-1").await.unwrap(), New);
    assert_eq!(
        store.idempotency_begin("k", "fp-1").await.unwrap(),
        InFlight
    );
    assert_eq!(
        store.idempotency_begin("k", "fp-2").await.unwrap(),
        Mismatch
    );
    store.idempotency_finish("k", r#"{"ok":1}"#).await.unwrap();
    assert_eq!(
        store.idempotency_begin("k", "fp-1").await.unwrap(),
        Replay(r#"{"ok":1}"#.into())
    );
    // A request that went away gives its key up; an answered key stays.
    assert_eq!(store.idempotency_begin("gone", "fp").await.unwrap(), New);
    store.idempotency_abandon("gone").await.unwrap();
    store.idempotency_abandon("k").await.unwrap();
    assert_eq!(store.idempotency_begin("gone", "fp").await.unwrap(), New);
    store.close().await;
    let reopened = backend.open_default().await;
    assert_eq!(
        reopened.idempotency_begin("k", "fp-1").await.unwrap(),
        Replay(r#"{"ok":1}"#.into())
    );
}

both!(a_tools_pin_written_by_one_replica_is_read_and_replaced_by_another);
async fn a_tools_pin_written_by_one_replica_is_read_and_replaced_by_another(backend: Backend) {
    let a = backend.open_default().await;
    let b = backend.open_default().await;
    assert_eq!(a.pin_get("shop__refund").await.unwrap(), None);
    a.pin_put("shop__refund", r#"{"v":1}"#).await.unwrap();
    a.pin_put("shop__list", r#"{"v":0}"#).await.unwrap();
    assert_eq!(
        b.pin_get("shop__refund").await.unwrap().as_deref(),
        Some(r#"{"v":1}"#)
    );
    b.pin_put("shop__refund", r#"{"v":2}"#).await.unwrap();
    assert_eq!(
        a.pin_list().await.unwrap(),
        [r#"{"v":0}"#.to_string(), r#"{"v":2}"#.to_string()],
        "one row per tool, by name"
    );
    a.close().await;
    b.close().await;
}

both!(an_approval_is_decided_once_by_whichever_replica_comes_first);
async fn an_approval_is_decided_once_by_whichever_replica_comes_first(backend: Backend) {
    use axon_core::approval::{ApprovalError, ApprovalRecord, ApprovalStatus, Decision};
    let a = backend.open_default().await;
    let b = backend.open_default().await;
    let parked = |id: &str, at: u64| ApprovalRecord {
        id: id.into(),
        tool: "pay".into(),
        args: serde_json::json!({"cents": 3}),
        owner: axon_core::Owner::of(Some("token-1")),
        correlation_id: "run-1".into(),
        reason: "required".into(),
        requested_at_ms: at,
        expires_at_ms: at + 60_000,
        status: ApprovalStatus::Pending,
        decided_by: None,
        decided_at_ms: None,
        comment: None,
        edited_args: None,
        args_digest: None,
        spent_at_ms: None,
    };
    a.open(&parked("c1", 1)).await.unwrap();
    a.open(&parked("c2", 2)).await.unwrap();
    let pending: Vec<String> = b
        .list(true, 10)
        .await
        .unwrap()
        .into_iter()
        .map(|r| r.id)
        .collect();
    assert_eq!(pending, ["c2", "c1"], "newest first");
    let decision = |approve| Decision {
        approve,
        by: "ana".into(),
        comment: None,
        args: None,
    };
    let decided = b.decide("c1", &decision(true)).await.unwrap();
    assert_eq!(decided.status, ApprovalStatus::Approved);
    assert!(matches!(
        a.decide("c1", &decision(false)).await,
        Err(ApprovalError::Decided {
            status: ApprovalStatus::Approved,
            ..
        })
    ));
    assert_eq!(
        a.get("c1").await.unwrap().unwrap().decided_by.as_deref(),
        Some("ana")
    );
    assert!(
        !a.expire("c1").await.unwrap(),
        "a decided approval does not expire"
    );
    assert!(a.expire("c2").await.unwrap());
    // Issue 59: an approval runs one call, whichever replica lets it run.
    assert!(
        !a.spend("c2").await.unwrap(),
        "an expired approval is not spent"
    );
    let (first, second) = tokio::join!(a.spend("c1"), b.spend("c1"));
    assert_eq!(
        [first.unwrap(), second.unwrap()]
            .iter()
            .filter(|s| **s)
            .count(),
        1,
        "one of two replicas spends it"
    );
    assert!(!a.spend("c1").await.unwrap());
    let spent = b.get("c1").await.unwrap().unwrap();
    assert_eq!(spent.status, ApprovalStatus::Approved);
    assert!(spent.spent_at_ms.is_some());
    assert!(b.list(true, 10).await.unwrap().is_empty());
    assert_eq!(b.list(false, 10).await.unwrap().len(), 2);
    assert!(matches!(
        b.decide("nope", &decision(true)).await,
        Err(ApprovalError::NotFound(_))
    ));
    a.close().await;
    b.close().await;
}

both!(a_queue_as_long_as_the_default_cap_is_counted_whole);
/// Issue 59: the store read at most 1 000 rows for the runs waiting, so a
/// queue capped at the default 1 024 (`[server] max_queued_runs`) never
/// looked full.
async fn a_queue_as_long_as_the_default_cap_is_counted_whole(backend: Backend) {
    let store = backend.open_default().await;
    let plan = Plan::parse("steps:\n- {id: a, tool: echo, params: {x: 1}}\n").unwrap();
    for i in 0..1_030 {
        store
            .enqueue(&format!("q{i:04}"), &plan, &axon_core::Owner::Process)
            .await
            .unwrap();
    }
    assert_eq!(store.pending_runs(1_024).await.unwrap().len(), 1_024);
    store.close().await;
}

both!(runs_handed_off_are_pending_until_taken_and_a_dead_holders_run_is_taken_over);
async fn runs_handed_off_are_pending_until_taken_and_a_dead_holders_run_is_taken_over(
    backend: Backend,
) {
    let store = backend.open_default().await;
    let plan = Plan::parse("steps:\n- {id: a, tool: echo, params: {x: 1}}\n").unwrap();
    // A queued run waits for a replica; queuing an id twice is refused.
    store
        .enqueue("q1", &plan, &axon_core::Owner::Process)
        .await
        .unwrap();
    let twice = store
        .enqueue("q1", &plan, &axon_core::Owner::Process)
        .await
        .unwrap_err();
    assert!(twice.message().contains("q1"), "{}", twice.message());
    assert_eq!(store.pending_runs(10).await.unwrap(), ["q1"]);
    assert_eq!(store.run_hold("q1").await.unwrap(), RunHold::Pending);
    // Taken: held, and no longer pending.
    let claim = store.claim("q1").await.unwrap();
    assert_eq!(store.run_hold("q1").await.unwrap(), RunHold::Held);
    assert!(store.pending_runs(10).await.unwrap().is_empty());
    claim.release().await;
    // A run begun without handoff (a CLI run) that lost its holder waits for
    // its user: never pending.
    store
        .begin("cli", &plan, &axon_core::Owner::Process)
        .await
        .unwrap();
    assert_eq!(store.run_hold("cli").await.unwrap(), RunHold::Free);
    assert_eq!(store.pending_runs(10).await.unwrap(), ["q1"]);
    // A handed-off run whose holder died on this host (its pid is gone) is
    // pending at once; whose holder elsewhere stopped beating, too.
    let host = std::fs::read_to_string("/proc/sys/kernel/hostname").unwrap();
    store
        .enqueue("dead-here", &plan, &axon_core::Owner::Process)
        .await
        .unwrap();
    store
        .enqueue("stale-there", &plan, &axon_core::Owner::Process)
        .await
        .unwrap();
    store
        .enqueue("live-there", &plan, &axon_core::Owner::Process)
        .await
        .unwrap();
    let now = axon_core::Timestamp::now().unix_ms().to_string();
    let old = (axon_core::Timestamp::now().unix_ms() - 60_000).to_string();
    for (run, host, beat) in [
        ("dead-here", host.trim(), now.as_str()),
        ("stale-there", "elsewhere", old.as_str()),
        ("live-there", "elsewhere", now.as_str()),
    ] {
        backend
            .query(
                "INSERT INTO run_claims (run_id, owner, host, pid, heartbeat_ms) \
                 VALUES (?, 'other', ?, 999999999, CAST(? AS BIGINT))",
                &[run, host, beat],
            )
            .await;
    }
    let mut pending = store.pending_runs(10).await.unwrap();
    pending.sort();
    assert_eq!(pending, ["dead-here", "q1", "stale-there"]);
    assert_eq!(store.pending_runs(1).await.unwrap().len(), 1);
    assert_eq!(store.run_hold("live-there").await.unwrap(), RunHold::Held);
    assert_eq!(
        store.run_hold("stale-there").await.unwrap(),
        RunHold::Pending
    );
    // Of two takers racing for a void lease, one wins; the live one is refused.
    let (a, b) = tokio::join!(store.claim("stale-there"), store.claim("stale-there"));
    assert_eq!(a.is_ok() as u8 + b.is_ok() as u8, 1);
    assert!(store.claim("live-there").await.is_err());
    assert!(store.claim("dead-here").await.is_ok());
    // Finished runs are not pending.
    let runner = PlanRunner::with_stores(executor(store.clone()), store.clone(), store.clone());
    let options = RunOptions {
        run_id: Some("q1".into()),
        ..Default::default()
    };
    assert!(runner.run(&plan, options).await.unwrap().success());
    assert_eq!(store.run_hold("q1").await.unwrap(), RunHold::Free);
    assert!(!store.pending_runs(10).await.unwrap().contains(&"q1".into()));
    store.close().await;
}

#[tokio::test]
async fn an_unreachable_database_is_a_clear_error_naming_it_without_its_password() {
    let err = PgStore::open(
        "postgres://axon:s3cret-pw@127.0.0.1:1/test",
        None,
        Retention::default(),
    )
    .await
    .err()
    .unwrap();
    assert!(
        err.message().contains("postgres://127.0.0.1:1/test"),
        "{}",
        err.message()
    );
    assert!(!err.message().contains("s3cret-pw"), "{}", err.message());
    let bad = PgStore::open(&postgres_url(), Some("x; DROP"), Retention::default())
        .await
        .err()
        .unwrap();
    assert!(bad.message().contains("schema"), "{}", bad.message());
}

both!(a_step_with_an_idempotency_key_is_called_once_across_runs_and_replicas);
async fn a_step_with_an_idempotency_key_is_called_once_across_runs_and_replicas(backend: Backend) {
    let store = backend.open_default().await;
    let plan = |amount: u32| {
        Plan::parse(&format!(
            "steps:\n- {{id: charge, tool: echo, params: {{amount: {amount}}}, idempotency_key: order-42}}\n"
        ))
        .unwrap()
    };
    let run = |runner: &PlanRunner, plan: Plan, id: &str| {
        let (runner, id) = (runner.clone(), id.to_string());
        async move {
            let options = RunOptions {
                run_id: Some(id),
                ..Default::default()
            };
            runner.run(&plan, options).await.unwrap()
        }
    };
    let a = PlanRunner::with_stores(executor(store.clone()), store.clone(), store.clone());
    let first = run(&a, plan(5), "k1").await;
    assert!(first.success(), "{first:#?}");
    assert_eq!(store.by_correlation("k1").await.unwrap().len(), 1);
    // Another replica on the same store, another run: the answer, no call.
    let other = backend.open_default().await;
    let b = PlanRunner::with_stores(executor(other.clone()), other.clone(), other.clone());
    let second = run(&b, plan(5), "k2").await;
    assert!(second.success(), "{second:#?}");
    assert_eq!(
        second.steps[0].result.as_ref().unwrap().data,
        first.steps[0].result.as_ref().unwrap().data
    );
    assert!(
        other.by_correlation("k2").await.unwrap().is_empty(),
        "not called"
    );
    // The key with other arguments: refused without a call.
    let third = run(&b, plan(6), "k3").await;
    assert_eq!(third.steps[0].status, StepStatus::Failed);
    let error = third.steps[0]
        .result
        .as_ref()
        .unwrap()
        .error
        .clone()
        .unwrap();
    assert_eq!(
        error.code.as_deref(),
        Some("idempotency_mismatch"),
        "{error:?}"
    );
    assert!(other.by_correlation("k3").await.unwrap().is_empty());
    // A failed call gives its key up: the next run calls again.
    // (flaky counts per key in the process: a key of this test's own)
    let flaky = Plan::parse(&format!(
        "steps:\n- {{tool: flaky, params: {{key: kf-{}, fail_times: 1, kind: failed}}, idempotency_key: once-more, policy: {{retry: {{max_attempts: 1}}}}}}\n",
        ulid::Ulid::new()
    ))
    .unwrap();
    assert!(!run(&b, flaky.clone(), "f1").await.success());
    assert!(run(&b, flaky, "f2").await.success());
    store.close().await;
    other.close().await;
}

both!(a_run_keeps_the_tenant_it_was_begun_or_queued_as);
async fn a_run_keeps_the_tenant_it_was_begun_or_queued_as(backend: Backend) {
    let store = backend.open_default().await;
    let plan = Plan::parse("steps:\n- {id: a, tool: echo, params: {x: 1}}\n").unwrap();
    store
        .begin("mine", &plan, &axon_core::Owner::of(Some("token-1")))
        .await
        .unwrap();
    store
        .enqueue("queued", &plan, &axon_core::Owner::of(Some("token-1")))
        .await
        .unwrap();
    store
        .begin("owners", &plan, &axon_core::Owner::Process)
        .await
        .unwrap();
    // Resumed (begun again) by anyone, a run stays its first tenant's.
    store
        .begin("mine", &plan, &axon_core::Owner::Process)
        .await
        .unwrap();
    let tenant = |id: &'static str| {
        let store = store.clone();
        async move {
            store
                .load(id)
                .await
                .unwrap()
                .unwrap()
                .owner
                .tenant()
                .map(str::to_string)
        }
    };
    assert_eq!(tenant("mine").await.as_deref(), Some("token-1"));
    assert_eq!(tenant("queued").await.as_deref(), Some("token-1"));
    assert_eq!(tenant("owners").await, None);
    let listed = |tenant: Option<&str>| {
        let store = store.clone();
        let query = axon_store_roles::RunQuery {
            status: None,
            before_ms: None,
            limit: 10,
            tenant: tenant.map(str::to_string),
        };
        async move {
            let mut ids: Vec<String> = store
                .list_runs(&query)
                .await
                .unwrap()
                .into_iter()
                .map(|r| r.run_id)
                .collect();
            ids.sort();
            ids
        }
    };
    assert_eq!(listed(Some("token-1")).await, ["mine", "queued"]);
    assert!(listed(Some("token-2")).await.is_empty());
    assert_eq!(listed(None).await, ["mine", "owners", "queued"]);
}

/// `axon run` creating the file while `axon history` polls it (a CI failure):
/// turning a new file to WAL takes a lock SQLite's busy timeout does not wait
/// on, so an open that lost that race failed with "database is locked".
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn many_opening_a_new_file_at_once_all_open_it() {
    for _ in 0..25 {
        let path = temp_db("axon.db");
        let opens: Vec<_> = (0..8)
            .map(|_| {
                let path = path.clone();
                tokio::spawn(async move { SqliteStore::open(&path, Retention::default()).await })
            })
            .collect();
        for open in opens {
            match open.await.unwrap() {
                Ok(store) => store.close().await,
                Err(e) => panic!("an open lost the race: {e}"),
            }
        }
    }
}

/// Another process holds the file's write lock (a long `axon history prune`,
/// say): a call's commit waits for it, as it must in `sync` mode, but the
/// runtime the call came from keeps running everything else. Run on one
/// thread, a writer that waited on the lock in the runtime's own thread would
/// stall the timer below until SQLite's 30 s busy timeout gave up.
#[tokio::test(flavor = "current_thread")]
async fn a_commit_waiting_on_another_process_lock_holds_up_nothing_else() {
    let path = temp_db("axon.db");
    let store: Arc<dyn Store> = Arc::new(
        SqliteStore::open(&path, Retention::default())
            .await
            .unwrap(),
    );
    let mut other = sqlx::SqliteConnection::connect(&format!("sqlite://{}", path.display()))
        .await
        .unwrap();
    sqlx::query("BEGIN IMMEDIATE")
        .execute(&mut other)
        .await
        .unwrap();

    let ex = executor(store.clone());
    let call = tokio::spawn(async move { ex.call(ToolCall::new("echo", json!({"i": 1}))).await });
    let started = std::time::Instant::now();
    tokio::time::sleep(Duration::from_millis(200)).await;
    assert!(
        started.elapsed() < Duration::from_secs(5),
        "the runtime stalled for {:?} behind the writer",
        started.elapsed()
    );
    assert!(!call.is_finished(), "the call waits for its commit");

    sqlx::query("COMMIT").execute(&mut other).await.unwrap();
    let result = call.await.unwrap();
    assert!(result.success);
    assert!(store.by_call_id(&result.call_id).await.unwrap().is_some());
}
