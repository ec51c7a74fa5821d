//! One breaker per tool for a cluster, on the real Redis of this machine
//! (127.0.0.1:6379; each test under its own key prefix): two executors with
//! nothing in common but Redis stand for two replicas. The breaker's clock
//! is turned by hand; Redis outages are a `redis-server` of the test's own.

use std::process::Stdio;
use std::sync::Arc;
use std::sync::atomic::{AtomicU32, AtomicU64, Ordering};
use std::time::Duration;

use async_trait::async_trait;
use axon_core::policy::BreakerState;
use axon_core::policy::breaker::{BreakerPolicy, SharedAdmit, SharedBreakers};
use axon_core::{
    ErrorKind, Executor, PolicyState, Tool, ToolCall, ToolContext, ToolError, ToolRegistry,
    ToolSpec,
};
use axon_redis::{Clock, RedisShared, SharedConfig};
use axon_testkit::free_port;
use serde_json::{Value, json};
use tokio::sync::Semaphore;

const REDIS: &str = "redis://127.0.0.1:6379/0";

/// What the test tool does: 0 answer, 1 fail (transient), 2 wait for the gate.
struct Upstream {
    spec: ToolSpec,
    mode: Arc<AtomicU32>,
    calls: Arc<AtomicU32>,
    gate: Arc<Semaphore>,
}

#[async_trait]
impl Tool for Upstream {
    fn spec(&self) -> &ToolSpec {
        &self.spec
    }
    async fn call(&self, _: &Value, _: ToolContext) -> Result<Value, ToolError> {
        self.calls.fetch_add(1, Ordering::SeqCst);
        match self.mode.load(Ordering::SeqCst) {
            0 => Ok(json!({"ok": true})),
            1 => Err(ToolError::new(ErrorKind::Transient, "upstream is down")),
            _ => {
                let _permit = self.gate.acquire().await;
                Ok(json!({"ok": true}))
            }
        }
    }
}

/// The upstream every replica calls: one behaviour, one call count.
#[derive(Clone)]
struct World {
    mode: Arc<AtomicU32>,
    calls: Arc<AtomicU32>,
    gate: Arc<Semaphore>,
    now: Arc<AtomicU64>,
    prefix: String,
}

impl World {
    fn new() -> Self {
        let unique = format!(
            "axon-test:{}:{}:",
            std::process::id(),
            std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .map(|d| d.as_nanos())
                .unwrap_or(0)
        );
        World {
            mode: Arc::new(AtomicU32::new(0)),
            calls: Arc::new(AtomicU32::new(0)),
            gate: Arc::new(Semaphore::new(0)),
            now: Arc::new(AtomicU64::new(1_000_000)),
            prefix: unique,
        }
    }

    fn clock(&self) -> Clock {
        let now = self.now.clone();
        Arc::new(move || now.load(Ordering::SeqCst))
    }

    fn advance(&self, ms: u64) {
        self.now.fetch_add(ms, Ordering::SeqCst);
    }

    async fn shared(&self, url: &str) -> Arc<RedisShared> {
        let config = SharedConfig {
            key_prefix: self.prefix.clone(),
            ..SharedConfig::new(url)
        };
        Arc::new(
            RedisShared::connect_with_clock(&config, self.clock())
                .await
                .unwrap_or_else(|e| panic!("Redis must run for these tests (.ci/run checks): {e}")),
        )
    }

    /// A replica: its own process-local state, the cluster's Redis.
    async fn replica(&self, url: &str) -> (Executor, Arc<RedisShared>) {
        self.replica_with(url, json!({})).await
    }

    /// A replica with `policy` over the tests' defaults.
    async fn replica_with(&self, url: &str, policy: Value) -> (Executor, Arc<RedisShared>) {
        let mut registry = ToolRegistry::new();
        registry
            .register(Upstream {
                spec: ToolSpec::new("upstream", "the shared dependency"),
                mode: self.mode.clone(),
                calls: self.calls.clone(),
                gate: self.gate.clone(),
            })
            .unwrap();
        let shared = self.shared(url).await;
        let executor = Executor::builder(registry)
            .policy_state(PolicyState::new())
            .shared_store(shared.clone())
            .defaults(json!({
                "retry": {"max_attempts": 1},
                "breaker": {"failure_threshold": 3, "window_ms": 10_000, "open_ms": 30_000, "half_open_max_calls": 2},
            }))
            .tool_policy("upstream", policy)
            .build()
            .unwrap();
        (executor, shared)
    }
}

async fn call(ex: &Executor) -> Result<Value, (ErrorKind, Option<String>)> {
    let r = ex.call(ToolCall::new("upstream", json!({}))).await;
    match r.error {
        None => Ok(r.data),
        Some(e) => Err((e.kind, e.code)),
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn failures_seen_by_one_replica_open_the_breaker_on_the_others() {
    let world = World::new();
    let (a, _) = world.replica(REDIS).await;
    let (b, _) = world.replica(REDIS).await;
    let (c, _) = world.replica(REDIS).await;
    world.mode.store(1, Ordering::SeqCst);
    for _ in 0..2 {
        assert_eq!(call(&a).await.unwrap_err().0, ErrorKind::Transient);
    }
    assert_eq!(
        b.cluster_breaker_state("upstream").await,
        Some(BreakerState::Closed)
    );
    // The third failure in the window, seen on B, opens it for all three.
    assert_eq!(call(&b).await.unwrap_err().0, ErrorKind::Transient);
    for replica in [&a, &b, &c] {
        assert_eq!(
            replica.cluster_breaker_state("upstream").await,
            Some(BreakerState::Open)
        );
    }
    let calls = world.calls.load(Ordering::SeqCst);
    assert_eq!(call(&c).await.unwrap_err().0, ErrorKind::CircuitOpen);
    assert_eq!(call(&a).await.unwrap_err().0, ErrorKind::CircuitOpen);
    assert_eq!(
        world.calls.load(Ordering::SeqCst),
        calls,
        "the upstream was spared"
    );
    // C never saw a failure itself: its own breaker is closed.
    assert_eq!(c.breaker_state("upstream"), Some(BreakerState::Closed));

    // Failures spread wider than the window do not add up across replicas.
    let world = World::new();
    let (a, _) = world.replica(REDIS).await;
    let (b, _) = world.replica(REDIS).await;
    world.mode.store(1, Ordering::SeqCst);
    for replica in [&a, &b, &a, &b] {
        call(replica).await.unwrap_err();
        world.advance(5_000);
    }
    assert_eq!(
        a.cluster_breaker_state("upstream").await,
        Some(BreakerState::Closed)
    );

    // A reset on one replica closes it for all.
    let world = World::new();
    let (a, _) = world.replica(REDIS).await;
    let (b, _) = world.replica(REDIS).await;
    assert!(a.isolate_breaker("upstream").await);
    assert_eq!(
        call(&b).await.unwrap_err(),
        (ErrorKind::CircuitOpen, Some("isolated".into()))
    );
    assert!(b.reset_breaker("upstream").await);
    assert!(call(&a).await.is_ok());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn exactly_half_open_max_calls_probes_go_out_across_the_cluster() {
    let world = World::new();
    let (a, _) = world.replica(REDIS).await;
    let (b, _) = world.replica(REDIS).await;
    world.mode.store(1, Ordering::SeqCst);
    for replica in [&a, &b, &a] {
        call(replica).await.unwrap_err();
    }
    assert_eq!(call(&b).await.unwrap_err().0, ErrorKind::CircuitOpen);
    // open_ms later: half-open. The upstream now holds every call until the
    // gate opens, so probes stay in flight while the others ask.
    world.advance(30_000);
    world.mode.store(2, Ordering::SeqCst);
    let before = world.calls.load(Ordering::SeqCst);
    let a = Arc::new(a);
    let b = Arc::new(b);
    let mut tasks = Vec::new();
    for i in 0..6 {
        let ex = if i % 2 == 0 { a.clone() } else { b.clone() };
        tasks.push(tokio::spawn(async move { call(&ex).await }));
    }
    // Wait until the four that are not probes have been refused (the two
    // probes are held in the upstream by the gate).
    for _ in 0..500 {
        if tasks.iter().filter(|t| t.is_finished()).count() == 4 {
            break;
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    assert_eq!(
        world.calls.load(Ordering::SeqCst) - before,
        2,
        "two probes, cluster-wide"
    );
    world.gate.add_permits(10);
    let (mut passed, mut refused) = (0, 0);
    for t in tasks {
        match t.await.unwrap() {
            Ok(_) => passed += 1,
            Err((kind, _)) => {
                assert_eq!(kind, ErrorKind::CircuitOpen);
                refused += 1;
            }
        }
    }
    assert_eq!((passed, refused), (2, 4));
    // A probe succeeded: closed everywhere.
    assert_eq!(
        a.cluster_breaker_state("upstream").await,
        Some(BreakerState::Closed)
    );
    world.mode.store(0, Ordering::SeqCst);
    assert!(call(&b).await.is_ok());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_probe_lost_with_its_replica_frees_its_slot_after_open_ms() {
    let world = World::new();
    let shared = world.shared(REDIS).await;
    let policy = BreakerPolicy {
        failure_threshold: 1,
        window_ms: 10_000,
        open_ms: 5_000,
        half_open_max_calls: 1,
        ..BreakerPolicy::default()
    };
    use axon_core::policy::breaker::SharedOutcome;
    shared
        .record("t", false, SharedOutcome::Failure, &policy)
        .await
        .unwrap();
    assert!(matches!(
        shared.admit("t", &policy, 0.0).await.unwrap(),
        SharedAdmit::Open { retry_after: Some(d) } if d == Duration::from_millis(5_000)
    ));
    world.advance(5_000);
    // A probe goes out, and its replica dies: it never reports.
    assert_eq!(
        shared.admit("t", &policy, 0.0).await.unwrap(),
        SharedAdmit::Pass {
            probe: true,
            wait: Duration::ZERO
        }
    );
    assert!(matches!(
        shared.admit("t", &policy, 0.0).await.unwrap(),
        SharedAdmit::Open { .. }
    ));
    world.advance(5_000);
    assert_eq!(
        shared.admit("t", &policy, 0.0).await.unwrap(),
        SharedAdmit::Pass {
            probe: true,
            wait: Duration::ZERO
        }
    );
}

/// A `redis-server` of the test's own on a free port, to stop and start.
struct OwnRedis {
    port: u16,
    child: Option<tokio::process::Child>,
}

impl OwnRedis {
    async fn start(port: u16) -> Self {
        let child = tokio::process::Command::new("redis-server")
            .args([
                "--port",
                &port.to_string(),
                "--save",
                "",
                "--appendonly",
                "no",
            ])
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .kill_on_drop(true)
            .spawn()
            .expect("redis-server must be installed (.ci/run installs it)");
        for _ in 0..200 {
            if tokio::net::TcpStream::connect(("127.0.0.1", port))
                .await
                .is_ok()
            {
                break;
            }
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
        OwnRedis {
            port,
            child: Some(child),
        }
    }

    fn url(&self) -> String {
        format!("redis://127.0.0.1:{}/0", self.port)
    }

    async fn stop(&mut self) {
        if let Some(mut child) = self.child.take() {
            let _ = child.kill().await;
            let _ = child.wait().await;
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn with_redis_down_calls_go_on_on_local_state_and_recover_when_it_returns() {
    let mut redis = OwnRedis::start(free_port()).await;
    let world = World::new();
    let (a, shared) = world.replica(&redis.url()).await;
    assert!(call(&a).await.is_ok());
    assert_eq!(shared.health(), None);

    redis.stop().await;
    // Redis is gone: not one call fails for it.
    for _ in 0..20 {
        assert!(call(&a).await.is_ok());
    }
    let why = shared.health().expect("degraded while Redis is down");
    assert!(!why.is_empty());
    // The local breaker decides meanwhile (it was kept fed).
    world.mode.store(1, Ordering::SeqCst);
    for _ in 0..3 {
        call(&a).await.unwrap_err();
    }
    assert_eq!(call(&a).await.unwrap_err().0, ErrorKind::CircuitOpen);
    assert!(a.reset_breaker("upstream").await);
    world.mode.store(0, Ordering::SeqCst);

    // Back on the same port: after the client's backoff, shared again.
    let port = redis.port;
    let _back = OwnRedis::start(port).await;
    let mut healthy = false;
    for _ in 0..400 {
        assert!(call(&a).await.is_ok());
        if shared.health().is_none() {
            healthy = true;
            break;
        }
        tokio::time::sleep(Duration::from_millis(25)).await;
    }
    assert!(
        healthy,
        "Redis answered again but the client did not come back"
    );
    // And the cluster state is Redis's again: an isolation there rejects here.
    let (b, _) = world.replica(&format!("redis://127.0.0.1:{port}/0")).await;
    assert!(b.isolate_breaker("upstream").await);
    assert_eq!(call(&a).await.unwrap_err().0, ErrorKind::CircuitOpen);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_redis_that_cannot_be_reached_at_start_up_is_named() {
    let port = free_port();
    let config = SharedConfig::new(format!("redis://:secret@127.0.0.1:{port}/0"));
    let e = RedisShared::connect(&config).await.unwrap_err().to_string();
    assert!(e.contains(&format!("127.0.0.1:{port}")), "{e}");
    assert!(!e.contains("secret"), "the password is not shown: {e}");
}

/// The commands a breaker client sends (scripts, their loading, PING) that a
/// Redis has run (`INFO commandstats`; the commands a script runs inside are
/// counted under their own names, so they are left out): round trips.
async fn round_trips(url: &str) -> u64 {
    let client = redis::Client::open(url).unwrap();
    let mut conn = client.get_multiplexed_async_connection().await.unwrap();
    let info: String = redis::cmd("INFO")
        .arg("commandstats")
        .query_async(&mut conn)
        .await
        .unwrap();
    let calls = |name: &str| {
        info.lines()
            .find_map(|l| l.strip_prefix(&format!("cmdstat_{name}:calls=")))
            .and_then(|v| v.split(',').next())
            .and_then(|v| v.parse::<u64>().ok())
            .unwrap_or(0)
    };
    ["evalsha", "eval", "script|load", "ping"]
        .iter()
        .map(|c| calls(c))
        .sum()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_call_on_the_happy_path_is_one_redis_round_trip() {
    // A Redis of the test's own: no other test's commands in its counter.
    let redis = OwnRedis::start(free_port()).await;
    let world = World::new();
    let (a, _) = world.replica(&redis.url()).await;
    // The first call loads the scripts (EVALSHA, NOSCRIPT, EVAL).
    assert!(call(&a).await.is_ok());
    let before = round_trips(&redis.url()).await;
    for _ in 0..20 {
        assert!(call(&a).await.is_ok());
    }
    // 20 calls, 20 admissions.
    assert_eq!(round_trips(&redis.url()).await - before, 20);
    // With a rate limit the admission takes the call's place in it: still one.
    let (limited, _) = world
        .replica_with(&redis.url(), json!({"limits": {"rate_per_sec": 10_000}}))
        .await;
    let before = round_trips(&redis.url()).await;
    for _ in 0..20 {
        assert!(call(&limited).await.is_ok());
    }
    assert_eq!(round_trips(&redis.url()).await - before, 20);
    // A failure adds its record: two round trips (once the record script is
    // loaded by a first failure; the threshold is 3).
    world.mode.store(1, Ordering::SeqCst);
    call(&a).await.unwrap_err();
    let before = round_trips(&redis.url()).await;
    call(&a).await.unwrap_err();
    assert_eq!(round_trips(&redis.url()).await - before, 2);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_ratio_rule_counts_every_replicas_calls() {
    let world = World::new();
    let a = world.shared(REDIS).await;
    let b = world.shared(REDIS).await;
    let policy = BreakerPolicy {
        failure_threshold: 0,
        window_ms: 10_000,
        open_ms: 5_000,
        half_open_max_calls: 1,
        failure_ratio: 0.5,
        minimum_throughput: 10,
    };
    use axon_core::policy::breaker::SharedOutcome::{Failure, Success};
    // A: 4 failures; B: 6 successes (4 of 10 failed); then one failure each
    // side: 5 of 11, then 6 of 12, which opens it.
    for _ in 0..4 {
        a.record("t", false, Failure, &policy).await.unwrap();
    }
    for _ in 0..6 {
        b.record("t", false, Success, &policy).await.unwrap();
    }
    a.record("t", false, Failure, &policy).await.unwrap();
    assert_eq!(b.state("t").await.unwrap(), BreakerState::Closed);
    b.record("t", false, Failure, &policy).await.unwrap();
    assert_eq!(a.state("t").await.unwrap(), BreakerState::Open);
    // Older than the window: not counted.
    let world = World::new();
    let a = world.shared(REDIS).await;
    for _ in 0..9 {
        a.record("u", false, Failure, &policy).await.unwrap();
    }
    world.advance(10_000);
    for _ in 0..9 {
        a.record("u", false, Success, &policy).await.unwrap();
    }
    a.record("u", false, Failure, &policy).await.unwrap();
    assert_eq!(a.state("u").await.unwrap(), BreakerState::Closed);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_rate_limit_holds_for_the_cluster_not_per_replica() {
    let world = World::new();
    let a = world.shared(REDIS).await;
    let b = world.shared(REDIS).await;
    let c = world.shared(REDIS).await;
    let off = BreakerPolicy {
        failure_threshold: 0,
        ..BreakerPolicy::default()
    };
    // 10/s for the cluster, a burst of 10: thirty attempts asked for at one
    // instant, in turn from three replicas, are placed 100 ms apart after the
    // burst, whichever replica asks: the last waits 2 s, not 0.
    let mut waits = Vec::new();
    for i in 0..30 {
        let replica = [&a, &b, &c][i % 3];
        match replica.admit("limited", &off, 10.0).await.unwrap() {
            SharedAdmit::Pass { probe: false, wait } => waits.push(wait.as_millis() as u64),
            other => panic!("{other:?}"),
        }
    }
    let expected: Vec<u64> = (0..30u64).map(|i| i.saturating_sub(9) * 100).collect();
    assert_eq!(waits, expected);
    // Time passes: the places taken are spent, the burst refills.
    world.advance(3_000);
    let SharedAdmit::Pass { wait, .. } = a.admit("limited", &off, 10.0).await.unwrap() else {
        panic!("refused");
    };
    assert_eq!(wait, Duration::ZERO);
    // An open breaker refuses before a place is taken.
    let breaker = BreakerPolicy {
        failure_threshold: 1,
        ..BreakerPolicy::default()
    };
    a.isolate("limited").await.unwrap();
    assert_eq!(
        b.admit("limited", &breaker, 10.0).await.unwrap(),
        SharedAdmit::Isolated
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn replicas_calls_wait_for_the_clusters_rate_limit() {
    let world = World::new();
    let policy = json!({"limits": {"rate_per_sec": 5}, "timeout_ms": 60_000});
    let (a, _) = world.replica_with(REDIS, policy.clone()).await;
    let (b, _) = world.replica_with(REDIS, policy).await;
    // 5/s with a burst of 5 for the cluster: 15 calls, split over two
    // replicas, take at least 2 s (each replica alone would let 5/s through:
    // 15 calls in about 1 s). Load only makes it slower.
    let start = std::time::Instant::now();
    let mut calls = tokio::task::JoinSet::new();
    for i in 0..15 {
        let ex = if i % 2 == 0 { a.clone() } else { b.clone() };
        calls.spawn(async move { call(&ex).await });
    }
    while let Some(result) = calls.join_next().await {
        assert!(result.unwrap().is_ok());
    }
    assert!(
        start.elapsed() >= Duration::from_millis(1_900),
        "{:?}",
        start.elapsed()
    );
    assert_eq!(world.calls.load(Ordering::SeqCst), 15);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn with_the_upstream_down_the_clusters_retries_stay_a_tenth_of_its_calls() {
    // Three replicas, the upstream 100 % down, every call wanting two retries,
    // the breaker off (the budget alone holds the load back), the budget's
    // defaults (a tenth of the calls, a floor of 10/s). 100 calls/s for the
    // cluster for 10 s of the shared clock: the cluster's budget allows
    // max(0.1 × 1000, 10 × 10) = 100 retries. Each replica on its own would
    // allow itself its floor of 100 (300 in all: 1.3 attempts a call).
    let world = World::new();
    world.mode.store(1, Ordering::SeqCst);
    let policy = json!({
        "retry": {"max_attempts": 3, "initial_delay_ms": 1, "max_delay_ms": 1, "jitter": "none"},
        "breaker": {"failure_threshold": 0},
    });
    let mut replicas = Vec::new();
    for _ in 0..3 {
        replicas.push(world.replica_with(REDIS, policy.clone()).await.0);
    }
    let calls = 1_000;
    for i in 0..calls {
        let (kind, _) = call(&replicas[i % 3]).await.unwrap_err();
        assert!(
            matches!(kind, ErrorKind::Transient | ErrorKind::BudgetExhausted),
            "{kind:?}"
        );
        world.advance(10);
    }
    let attempts = world.calls.load(Ordering::SeqCst);
    let amplification = f64::from(attempts) / calls as f64;
    eprintln!("attempts / calls with the shared budget: {attempts} / {calls} = {amplification:.3}");
    assert!(
        amplification <= 1.1,
        "{attempts} attempts for {calls} calls"
    );
    assert!(amplification >= 1.05, "the budget is used: {attempts}");
}

/// A call's whole result on `ex` (cache provenance included).
async fn call_result(ex: &Executor) -> axon_core::CallResult {
    ex.call(ToolCall::new("upstream", json!({"q": 1}))).await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_call_cached_on_one_replica_is_a_hit_on_another_and_serves_stale_on_errors() {
    let world = World::new();
    let policy = json!({"cache": {"ttl_ms": 60_000, "stale_if_error_ms": 600_000}});
    let (a, _) = world.replica_with(REDIS, policy.clone()).await;
    let (b, _) = world.replica_with(REDIS, policy).await;
    let first = call_result(&a).await;
    assert!(first.success && !first.provenance.cache_hit);
    let hit = call_result(&b).await;
    assert!(hit.success && hit.provenance.cache_hit, "{hit:?}");
    assert_eq!(
        hit.provenance.response_digest,
        first.provenance.response_digest
    );
    assert_eq!(
        world.calls.load(Ordering::SeqCst),
        1,
        "B did not call the tool"
    );
    // Expired on the cluster's clock, the tool down: a third replica, with
    // nothing of its own, answers from the cluster's stale entry.
    world.advance(120_000);
    world.mode.store(1, Ordering::SeqCst);
    let (c, _) = world
        .replica_with(
            REDIS,
            json!({"cache": {"ttl_ms": 60_000, "stale_if_error_ms": 600_000}}),
        )
        .await;
    let stale = call_result(&c).await;
    assert!(stale.success && stale.provenance.stale, "{stale:?}");
    assert_eq!(
        world.calls.load(Ordering::SeqCst),
        2,
        "one failed attempt on C"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn identical_calls_on_two_replicas_share_one_execution() {
    let world = World::new();
    world.mode.store(2, Ordering::SeqCst);
    let policy = json!({"cache": {"ttl_ms": 60_000}, "timeout_ms": 60_000});
    let (a, _) = world.replica_with(REDIS, policy.clone()).await;
    let (b, _) = world.replica_with(REDIS, policy).await;
    // A takes the key's flight and is held in the tool.
    let on_a = tokio::spawn(async move { call_result(&a).await });
    while world.calls.load(Ordering::SeqCst) == 0 {
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
    // B asks for the same call: it waits for A's answer instead of calling.
    let on_b = tokio::spawn(async move { call_result(&b).await });
    tokio::time::sleep(Duration::from_millis(100)).await;
    assert_eq!(world.calls.load(Ordering::SeqCst), 1, "B waits for A");
    world.gate.add_permits(1);
    let (a, b) = (on_a.await.unwrap(), on_b.await.unwrap());
    assert!(a.success && !a.provenance.cache_hit, "{a:?}");
    assert!(b.success && b.provenance.cache_hit, "{b:?}");
    assert_eq!(
        world.calls.load(Ordering::SeqCst),
        1,
        "one execution for both"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_flight_whose_replica_died_is_taken_over_after_its_lease() {
    use axon_core::policy::cache::SharedCache;
    let world = World::new();
    let dead = world.shared(REDIS).await;
    let alive = world.shared(REDIS).await;
    // A replica takes a flight and dies: nobody ends it.
    assert!(
        dead.take_flight("t:k", Duration::from_millis(200))
            .await
            .unwrap()
    );
    assert!(
        !alive
            .take_flight("t:k", Duration::from_millis(200))
            .await
            .unwrap()
    );
    // Its lease runs out (Redis's own expiry): the next replica takes it.
    let mut taken = false;
    for _ in 0..100 {
        if alive
            .take_flight("t:k", Duration::from_secs(5))
            .await
            .unwrap()
        {
            taken = true;
            break;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    assert!(taken, "the lease expired");
    // Only the holder ends a flight.
    dead.end_flight("t:k").await.unwrap();
    assert!(
        !dead
            .take_flight("t:k", Duration::from_secs(5))
            .await
            .unwrap()
    );
    alive.end_flight("t:k").await.unwrap();
    assert!(
        dead.take_flight("t:k", Duration::from_secs(5))
            .await
            .unwrap()
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn per_origin_rate_limits_hold_across_three_replicas() {
    let world = World::new();
    // Kept per value of `host` (as http_request keeps them per origin): 5/s
    // for each host, for the whole cluster.
    let policy =
        json!({"key": "${args.host}", "limits": {"rate_per_sec": 5}, "timeout_ms": 60_000});
    let mut replicas = Vec::new();
    for _ in 0..3 {
        replicas.push(world.replica_with(REDIS, policy.clone()).await.0);
    }
    let host_call = |ex: &Executor, host: &'static str| {
        let ex = ex.clone();
        async move {
            let started = std::time::Instant::now();
            let r = ex
                .call(ToolCall::new("upstream", json!({ "host": host })))
                .await;
            assert!(r.success, "{r:?}");
            assert_eq!(r.provenance.dependency.as_deref(), Some(host));
            started.elapsed()
        }
    };
    let start = std::time::Instant::now();
    let mut busy = tokio::task::JoinSet::new();
    for i in 0..15 {
        busy.spawn(host_call(&replicas[i % 3], "busy.example"));
    }
    // Another host is not queued behind the busy one: 5 calls, one burst.
    let mut other = tokio::task::JoinSet::new();
    for i in 0..5 {
        other.spawn(host_call(&replicas[i % 3], "quiet.example"));
    }
    while let Some(took) = other.join_next().await {
        assert!(took.unwrap() < Duration::from_millis(900));
    }
    while let Some(took) = busy.join_next().await {
        took.unwrap();
    }
    assert!(
        start.elapsed() >= Duration::from_millis(1_900),
        "15 calls at 5/s for the cluster: {:?}",
        start.elapsed()
    );
}
