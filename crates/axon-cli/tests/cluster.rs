//! Three `axon serve` replicas on loopback sharing the circuit breakers
//! through the real Redis of this machine (127.0.0.1:6379, under a key prefix
//! of the test's own): failures seen by one open the breaker on the others, a
//! reset on one closes it for all, `/healthz` names the shared store, and a
//! Redis that cannot be reached at start-up stops the replica (exit 3) naming
//! it. With the real PostgreSQL as their store too (a schema of the test's
//! own): a replica killed (-9) mid-run has its run finished by another without
//! re-running a finished step, queued runs are taken by a replica, history and
//! idempotency keys are one for the cluster.

mod common;

use common::pg::{drop_schema, postgres_url};

use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use reqwest::StatusCode;
use serde_json::{Value, json};

struct Replica {
    child: Child,
    base: String,
    dir: PathBuf,
    client: reqwest::Client,
}

impl Drop for Replica {
    fn drop(&mut self) {
        common::stop(&mut self.child);
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

fn config(prefix: &str, redis: &str) -> String {
    format!(
        "[shared]\nredis_url = \"{redis}\"\nkey_prefix = \"{prefix}\"\n\n\
         [tools.flaky.breaker]\nfailure_threshold = 2\nopen_ms = 600000\n\n\
         [tools.flaky.retry]\nmax_attempts = 1\n\n\
         [tools.echo.cache]\nttl_ms = 60000\n\n\
         [tools.sleep.limits]\nrate_per_sec = 10\n"
    )
}

fn command(config: &str) -> (Command, PathBuf) {
    let dir = std::env::temp_dir().join(format!("axon-cluster-test-{}", ulid::Ulid::new()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("axon.toml");
    std::fs::write(&path, config).unwrap();
    let mut cmd = axon_testkit::command(env!("CARGO_BIN_EXE_axon"));
    cmd.args(["serve", "--bind", "127.0.0.1:0", "--config"])
        .arg(&path)
        .env("AXON_STORE_PATH", dir.join("axon.db"))
        .env_remove("AXON_CONFIG")
        .env_remove("AXON_SHARED_REDIS_URL");
    (cmd, dir)
}

impl Replica {
    fn start(config: &str) -> Replica {
        let (mut cmd, dir) = command(config);
        cmd.stdout(Stdio::piped())
            .stderr(std::fs::File::create(dir.join("stderr.log")).unwrap());
        let mut child = cmd.spawn().unwrap();
        let base = common::listening_url(&mut child);
        axon_http_tool::install_crypto_provider();
        Replica {
            child,
            base,
            dir,
            client: reqwest::Client::new(),
        }
    }

    async fn get(&self, path: &str) -> (StatusCode, Value) {
        let r = self
            .client
            .get(format!("{}{path}", self.base))
            .send()
            .await
            .unwrap();
        (r.status(), r.json().await.unwrap_or(Value::Null))
    }

    async fn post_headers(
        &self,
        path: &str,
        body: Value,
        headers: &[(&str, &str)],
    ) -> (StatusCode, Value) {
        let mut request = self.client.post(format!("{}{path}", self.base)).json(&body);
        for (k, v) in headers {
            request = request.header(*k, *v);
        }
        let r = request.send().await.unwrap();
        (r.status(), r.json().await.unwrap_or(Value::Null))
    }

    /// Poll `GET /v1/runs/{id}` until the run's status is `want` (a minute at most).
    async fn wait_for_run(&self, id: &str, want: &str) -> Value {
        for _ in 0..600 {
            let (_, run) = self.get(&format!("/v1/runs/{id}")).await;
            if run["status"] == want {
                return run;
            }
            tokio::time::sleep(std::time::Duration::from_millis(100)).await;
        }
        let (_, run) = self.get(&format!("/v1/runs/{id}")).await;
        panic!("run {id} is not {want} after a minute: {run}");
    }

    async fn post(&self, path: &str, body: Value) -> (StatusCode, Value) {
        let r = self
            .client
            .post(format!("{}{path}", self.base))
            .json(&body)
            .send()
            .await
            .unwrap();
        (r.status(), r.json().await.unwrap_or(Value::Null))
    }

    /// Call `flaky` so that it fails (`fail`) or answers.
    async fn flaky(&self, fail: bool) -> Value {
        let fail_times = if fail { 99 } else { 0 };
        let key = ulid::Ulid::new().to_string();
        self.post(
            "/v1/tools/flaky/call",
            json!({"args": {"key": key, "fail_times": fail_times}}),
        )
        .await
        .1
    }

    async fn breaker(&self) -> Value {
        self.get("/v1/tools/flaky").await.1["breaker"]["state"].clone()
    }
}

fn prefix() -> String {
    format!("axon-cluster-test:{}:", ulid::Ulid::new())
}

const REDIS: &str = "redis://127.0.0.1:6379/0";

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn three_replicas_share_one_breaker_per_tool() {
    let shared = config(&prefix(), REDIS);
    let a = Replica::start(&shared);
    let b = Replica::start(&shared);
    let c = Replica::start(&shared);

    let (status, health) = a.get("/healthz").await;
    assert_eq!(status, StatusCode::OK, "{health}");
    assert_eq!(health["components"]["shared"]["status"], "ok", "{health}");
    assert!(
        health["components"]["shared"]["target"]
            .as_str()
            .unwrap()
            .contains("127.0.0.1:6379"),
        "{health}"
    );

    // One failure on A, one on B: the threshold (2) is reached cluster-wide.
    assert_eq!(a.flaky(true).await["error"]["kind"], "transient");
    assert_eq!(c.breaker().await, "closed");
    assert_eq!(b.flaky(true).await["error"]["kind"], "transient");
    for replica in [&a, &b, &c] {
        assert_eq!(replica.breaker().await, "open");
    }
    // C never saw a failure, yet refuses without calling.
    let refused = c.flaky(false).await;
    assert_eq!(refused["error"]["kind"], "circuit_open", "{refused}");
    assert_eq!(refused["attempts"], 0, "{refused}");
    let (_, breakers) = b.get("/v1/breakers").await;
    let flaky = breakers["breakers"]
        .as_array()
        .unwrap()
        .iter()
        .find(|x| x["tool"] == "flaky")
        .cloned()
        .unwrap_or_default();
    assert_eq!(flaky["state"], "open", "{breakers}");

    // A reset on C closes it on A.
    let (status, reset) = c.post("/v1/breakers/flaky/reset", json!({})).await;
    assert_eq!(status, StatusCode::OK, "{reset}");
    assert_eq!(reset["state"], "closed");
    assert_eq!(a.flaky(false).await["success"], true);

    // A call cached on A is a hit on B.
    let args = json!({"args": {"cached": ulid::Ulid::new().to_string()}});
    let (_, first) = a.post("/v1/tools/echo/call", args.clone()).await;
    assert_eq!(first["provenance"]["cache_hit"], false, "{first}");
    let (_, second) = b.post("/v1/tools/echo/call", args).await;
    assert_eq!(second["provenance"]["cache_hit"], true, "{second}");

    // 10 calls/s for the cluster (a burst of 10): 30 calls split over the
    // three replicas take at least 2 s; each replica alone would allow 10/s,
    // 30 calls at once. Load only makes it slower.
    let start = std::time::Instant::now();
    let calls = [&a, &b, &c]
        .into_iter()
        .cycle()
        .take(30)
        .map(|replica| replica.post("/v1/tools/sleep/call", json!({"args": {"ms": 0}})));
    for (status, result) in futures::future::join_all(calls).await {
        assert_eq!(status, StatusCode::OK, "{result}");
        assert_eq!(result["success"], true, "{result}");
    }
    assert!(
        start.elapsed() >= std::time::Duration::from_millis(1_900),
        "{:?}",
        start.elapsed()
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_redis_that_cannot_be_reached_at_start_up_stops_the_replica_naming_it() {
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .map(|a| a.port())
        .unwrap();
    let (mut cmd, dir) = command(&config(&prefix(), &format!("redis://127.0.0.1:{port}/0")));
    let out = cmd.output().unwrap();
    let _ = std::fs::remove_dir_all(dir);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(3), "{stderr}");
    assert!(stderr.contains(&format!("127.0.0.1:{port}")), "{stderr}");

    // A URL that is not Redis's is a config error naming the key.
    let (mut cmd, dir) = command("[shared]\nredis_url = \"http://127.0.0.1:6379\"\n");
    let out = cmd.output().unwrap();
    let _ = std::fs::remove_dir_all(dir);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(stderr.contains("shared.redis_url"), "{stderr}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn scripts_cluster_starts_replicas_that_share_a_store_and_redis_and_stops_them() {
    use std::io::BufRead;
    let schema = schema();
    let root = common::repo_root();
    let mut child = axon_testkit::command(root.join("scripts/cluster"))
        .arg("2")
        .env("AXON_BIN", env!("CARGO_BIN_EXE_axon"))
        .env("CLUSTER_PORT", "0")
        .env("CLUSTER_PREFIX", prefix())
        .env("REDIS_URL", REDIS)
        .env("STORE_URL", postgres_url())
        .env("CLUSTER_SCHEMA", &schema)
        .env_remove("AXON_CONFIG")
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        .spawn()
        .expect("scripts/cluster runs");
    let stdout = child.stdout.take().unwrap();
    let mut urls = Vec::new();
    for line in std::io::BufReader::new(stdout).lines() {
        let line = line.unwrap();
        if line == "cluster: ready" {
            break;
        }
        if let Some((_, url)) = line.split_once(": ") {
            urls.push(url.to_string());
        }
    }
    assert_eq!(urls.len(), 2, "{urls:?}");
    axon_http_tool::install_crypto_provider();
    let client = reqwest::Client::new();
    for url in &urls {
        let health: Value = client
            .get(format!("{url}/healthz"))
            .send()
            .await
            .unwrap()
            .json()
            .await
            .unwrap();
        assert_eq!(health["components"]["shared"]["status"], "ok", "{health}");
        assert!(
            health["components"]["store"]["target"]
                .as_str()
                .is_some_and(|t| t.starts_with("postgres://") && t.contains(&schema)),
            "{health}"
        );
    }
    // TERM stops the script and, through its trap, every replica.
    let _ = Command::new("kill")
        .args(["-TERM", &child.id().to_string()])
        .status();
    let status = child.wait().unwrap();
    assert!(status.success(), "{status:?}");
    for url in &urls {
        assert!(
            client.get(format!("{url}/healthz")).send().await.is_err(),
            "{url} still answers after the cluster stopped"
        );
    }
    drop_schema(&schema);
}

/// Replicas sharing Redis and a PostgreSQL schema of the test's own.
fn cluster_config(schema: &str) -> String {
    format!(
        "{}\n[store]\nurl = \"{}\"\nschema = \"{schema}\"\n",
        config(&prefix(), REDIS),
        postgres_url()
    )
}

/// A schema of the test's own.
fn schema() -> String {
    common::pg::schema("axon_cluster_test")
}

/// An HTTP endpoint that holds the first request it gets (never answers it)
/// and answers every later one: a plan step that is in flight until the test
/// says so. `first` is told when the first request has come.
async fn gate() -> (String, tokio::sync::oneshot::Receiver<()>, Arc<AtomicUsize>) {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}/gate", listener.local_addr().unwrap());
    let (tell, first) = tokio::sync::oneshot::channel();
    let count = Arc::new(AtomicUsize::new(0));
    let seen = count.clone();
    tokio::spawn(async move {
        let mut tell = Some(tell);
        let mut held = Vec::new();
        while let Ok((mut socket, _)) = listener.accept().await {
            let mut buf = [0u8; 4096];
            let _ = socket.read(&mut buf).await;
            if seen.fetch_add(1, Ordering::SeqCst) == 0 {
                held.push(socket);
                if let Some(tell) = tell.take() {
                    let _ = tell.send(());
                }
                continue;
            }
            let _ = socket
                .write_all(b"HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: 11\r\nconnection: close\r\n\r\n{\"ok\":true}")
                .await;
        }
    });
    (url, first, count)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_run_whose_replica_is_killed_is_finished_by_another_without_rerunning_finished_steps() {
    let schema = schema();
    let shared = cluster_config(&schema);
    let mut a = Replica::start(&shared);
    let b = Replica::start(&shared);
    let c = Replica::start(&shared);
    let (status, health) = b.get("/healthz").await;
    assert_eq!(status, StatusCode::OK, "{health}");
    assert!(
        health["components"]["store"]["target"]
            .as_str()
            .is_some_and(|t| t.starts_with("postgres://")),
        "{health}"
    );

    let (url, first, gate_calls) = gate().await;
    let plan = json!({"name": "takeover", "steps": [
        {"id": "first", "tool": "echo", "params": {"n": 1}},
        {"id": "held", "tool": "http_request", "params": {"url": url}, "depends_on": ["first"],
         "policy": {"retry": {"max_attempts": 1}, "timeout_ms": 120000}},
        {"id": "last", "tool": "echo", "params": {"status": "${steps.held.data.status}"}, "depends_on": ["held"]}
    ]});
    let (status, started) = a.post("/v1/runs", plan).await;
    assert_eq!(status, StatusCode::ACCEPTED, "{started}");
    let id = started["run_id"].as_str().unwrap().to_string();
    // `first` has finished (its checkpoint is committed before `held` starts)
    // and `held` is in flight on A.
    tokio::time::timeout(std::time::Duration::from_secs(60), first)
        .await
        .expect("the held step starts")
        .unwrap();
    let running = b.wait_for_run(&id, "running").await;
    assert_eq!(running["steps_finished"], 1, "{running}");

    a.child.kill().unwrap();
    a.child.wait().unwrap();
    // B or C takes it over (A's pid is gone from this host: at once).
    let done = c.wait_for_run(&id, "succeeded").await;
    assert_eq!(
        done["result"]["steps"][2]["result"]["data"]["status"], 200,
        "{done}"
    );
    assert_eq!(
        gate_calls.load(Ordering::SeqCst),
        2,
        "held: once on A, once after"
    );
    // History is one for the cluster: `first` ran once (0 finished steps
    // re-run), `held` once answered, `last` once.
    let (_, history) = b.get(&format!("/v1/history/{id}")).await;
    let tools: Vec<&str> = history["calls"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["tool"].as_str().unwrap_or_else(|| panic!("{c}")))
        .collect();
    assert_eq!(tools, ["echo", "http_request", "echo"], "{history}");
    drop((b, c));
    drop_schema(&schema);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn queued_runs_history_and_idempotency_keys_are_the_clusters() {
    let schema = schema();
    let shared = cluster_config(&schema);
    let a = Replica::start(&shared);
    let b = Replica::start(&shared);

    // A queued run is taken up by a replica and seen finished from either.
    let plan = json!({"steps": [{"id": "one", "tool": "echo", "params": {"q": true}}]});
    let (status, queued) = a.post("/v1/runs?queue=true", plan.clone()).await;
    assert_eq!(status, StatusCode::ACCEPTED, "{queued}");
    assert_eq!(queued["status"], "queued");
    let id = queued["run_id"].as_str().unwrap();
    let done = b.wait_for_run(id, "succeeded").await;
    assert_eq!(
        done["result"]["steps"][0]["result"]["data"]["q"], true,
        "{done}"
    );
    let (_, listed) = a.get("/v1/runs?status=succeeded").await;
    assert!(
        listed["runs"]
            .as_array()
            .unwrap()
            .iter()
            .any(|r| r["run_id"] == id),
        "{listed}"
    );
    // Queued runs cannot be waited for.
    let (status, refused) = a.post("/v1/runs?queue=true&wait=true", plan).await;
    assert_eq!(status, StatusCode::BAD_REQUEST, "{refused}");
    // Nor hold a literal secret: it would be stored masked.
    let secret = json!({"steps": [{"tool": "echo", "params": {"password": "hunter2"}}]});
    let (status, refused) = a.post("/v1/runs?queue=true", secret).await;
    assert_eq!(status, StatusCode::UNPROCESSABLE_ENTITY, "{refused}");
    assert!(
        refused["detail"].as_str().unwrap().contains("secret"),
        "{refused}"
    );

    // A call on A is in history read from B; its idempotency key replays on B.
    let key = [("idempotency-key", "cluster-key-1")];
    let body = json!({"args": {"x": 1}, "correlation_id": "idem-cluster"});
    let (status, first) = a
        .post_headers("/v1/tools/echo/call", body.clone(), &key)
        .await;
    assert_eq!(status, StatusCode::OK, "{first}");
    let (status, again) = b.post_headers("/v1/tools/echo/call", body, &key).await;
    assert_eq!(status, StatusCode::OK, "{again}");
    assert_eq!(
        again["call_id"], first["call_id"],
        "replayed, not run again"
    );
    let (_, history) = b.get("/v1/history/idem-cluster").await;
    assert_eq!(history["calls"].as_array().unwrap().len(), 1, "{history}");
    drop((a, b));
    drop_schema(&schema);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_store_that_cannot_be_reached_at_start_up_stops_the_replica_naming_it() {
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .map(|a| a.port())
        .unwrap();
    let (mut cmd, dir) = command(&format!(
        "[store]\nurl = \"postgres://axon:pw-not-shown@127.0.0.1:{port}/test\"\n"
    ));
    let out = cmd.output().unwrap();
    let _ = std::fs::remove_dir_all(dir);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(3), "{stderr}");
    assert!(
        stderr.contains(&format!("postgres://127.0.0.1:{port}/test")),
        "{stderr}"
    );
    assert!(!stderr.contains("pw-not-shown"), "{stderr}");

    // `axon config check` names a URL that is not PostgreSQL's.
    let dir = std::env::temp_dir().join(format!("axon-cluster-test-{}", ulid::Ulid::new()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("axon.toml");
    std::fs::write(&path, "[store]\nurl = \"mysql://127.0.0.1/test\"\n").unwrap();
    let out = axon_testkit::command(env!("CARGO_BIN_EXE_axon"))
        .args(["config", "check"])
        .arg(&path)
        .env_remove("AXON_CONFIG")
        .output()
        .unwrap();
    let _ = std::fs::remove_dir_all(dir);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(stderr.contains("store.url"), "{stderr}");
}

/// A `redis-server` of the test's own on a free port, to stop and start.
struct OwnRedis {
    port: u16,
    child: Option<Child>,
}

impl OwnRedis {
    fn start(port: u16) -> OwnRedis {
        let child = Command::new("redis-server")
            .args(["--port", &port.to_string(), "--bind", "127.0.0.1"])
            .args(["--save", "", "--appendonly", "no"])
            .stdout(Stdio::null())
            .spawn()
            .expect("redis-server runs (.ci/run installs it)");
        for _ in 0..200 {
            if std::net::TcpStream::connect(("127.0.0.1", port)).is_ok() {
                break;
            }
            std::thread::sleep(std::time::Duration::from_millis(25));
        }
        OwnRedis {
            port,
            child: Some(child),
        }
    }

    fn stop(&mut self) {
        if let Some(mut child) = self.child.take() {
            let _ = child.kill();
            let _ = child.wait();
        }
    }
}

impl Drop for OwnRedis {
    fn drop(&mut self) {
        self.stop();
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn with_redis_stopped_mid_load_no_call_fails_and_health_recovers() {
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .map(|a| a.port())
        .unwrap();
    let mut redis = OwnRedis::start(port);
    let shared = config(&prefix(), &format!("redis://127.0.0.1:{}/0", redis.port));
    let replicas = [
        Replica::start(&shared),
        Replica::start(&shared),
        Replica::start(&shared),
    ];
    // Ten calls at a time, spread over the replicas; every one must succeed.
    let load = |round: usize| {
        let replicas = &replicas;
        async move {
            let calls = (0..10).map(|i| replicas[(round + i) % 3].flaky(false));
            for result in futures::future::join_all(calls).await {
                assert_eq!(result["success"], true, "{result}");
            }
        }
    };
    for round in 0..3 {
        load(round).await;
    }
    redis.stop();
    for round in 0..6 {
        load(round).await;
    }
    for replica in &replicas {
        let (_, h) = replica.get("/healthz").await;
        assert_eq!(h["status"], "degraded", "{h}");
        assert_eq!(h["components"]["shared"]["status"], "failing", "{h}");
    }
    // Back on the same port: each replica finds it again within its backoff
    // (5 s at most), the calls going on meanwhile.
    let _redis = OwnRedis::start(port);
    let mut recovered = false;
    for round in 0..300 {
        load(round).await;
        let mut all = true;
        for replica in &replicas {
            all &= replica.get("/healthz").await.1["status"] == "ok";
        }
        if all {
            recovered = true;
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
    }
    assert!(recovered, "every replica reports Redis again");
}
