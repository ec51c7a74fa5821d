//! Three `axon serve` replicas on loopback, each with its own SQLite file,
//! sharing the circuit breakers through the real Redis of this machine
//! (127.0.0.1:6379, under a key prefix of the test's own): failures seen by
//! one open the breaker on the others, a reset on one closes it for all,
//! `/healthz` names the shared store, and a Redis that cannot be reached at
//! start-up stops the replica (exit 3) naming it.

mod common;

use std::path::PathBuf;
use std::process::{Child, Command, Stdio};

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
        let _ = self.child.kill();
        let _ = self.child.wait();
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

fn config(prefix: &str, redis: &str) -> String {
    format!(
        "[shared]\nredis_url = \"{redis}\"\nkey_prefix = \"{prefix}\"\n\n\
         [tools.flaky.breaker]\nfailure_threshold = 2\nopen_ms = 600000\n\n\
         [tools.flaky.retry]\nmax_attempts = 1\n"
    )
}

fn command(config: &str) -> (Command, PathBuf) {
    let dir = std::env::temp_dir().join(format!("axon-cluster-test-{}", ulid::Ulid::new()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("axon.toml");
    std::fs::write(&path, config).unwrap();
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_axon"));
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
        axon_http::install_crypto_provider();
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
async fn scripts_cluster_starts_replicas_that_share_redis_and_stops_them() {
    use std::io::BufRead;
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../..");
    let mut child = Command::new(root.join("scripts/cluster"))
        .arg("2")
        .env("AXON_BIN", env!("CARGO_BIN_EXE_axon"))
        .env("CLUSTER_PORT", "0")
        .env("CLUSTER_PREFIX", prefix())
        .env("REDIS_URL", REDIS)
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
    axon_http::install_crypto_provider();
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
}
