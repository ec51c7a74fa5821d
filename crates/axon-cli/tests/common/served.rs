//! A real `axon serve` for the attack suites: its own store and files
//! directory, its config, and the helpers that call it.

use std::path::PathBuf;
use std::process::{Child, Command, Stdio};

use reqwest::StatusCode;
use serde_json::{Value, json};

/// One `axon serve` with its own store and files directory, killed on drop.
pub struct Served {
    /// The `axon serve` process (tests signal it).
    pub child: Child,
    /// `http://127.0.0.1:PORT`.
    pub base: String,
    /// Its config, store, files and stderr.
    pub dir: PathBuf,
}

impl Served {
    /// `axon serve --bind 127.0.0.1:0` with `config` as its config file.
    pub fn start(config: &str) -> Served {
        Self::start_with(config, &[])
    }

    /// With extra environment variables (the tokens `[[server.tokens]]` name).
    pub fn start_with(config: &str, env: &[(&str, &str)]) -> Served {
        let dir = std::env::temp_dir().join(format!("axon-security-{}", ulid::Ulid::new()));
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(dir.join("axon.toml"), config).unwrap();
        let mut child = axon_testkit::command(env!("CARGO_BIN_EXE_axon"))
            .arg("--config")
            .arg(dir.join("axon.toml"))
            .args(["serve", "--bind", "127.0.0.1:0"])
            .env("AXON_STORE_PATH", dir.join("axon.db"))
            .env("AXON_FILES_DIR", dir.join("files"))
            .env_remove("AXON_CONFIG")
            .envs(env.iter().copied())
            .stdout(Stdio::piped())
            .stderr(std::fs::File::create(dir.join("stderr.log")).unwrap())
            .spawn()
            .unwrap();
        let base = super::listening_url(&mut child);
        Served { child, base, dir }
    }

    /// `path` on this server.
    pub fn url(&self, path: &str) -> String {
        format!("{}{path}", self.base)
    }

    /// `GET path` (no token), its body as JSON.
    pub async fn get_json(&self, path: &str) -> Value {
        client()
            .get(self.url(path))
            .send()
            .await
            .unwrap()
            .json()
            .await
            .unwrap()
    }

    pub async fn post(&self, path: &str, body: Value) -> (StatusCode, Value) {
        let r = client()
            .post(self.url(path))
            .json(&body)
            .send()
            .await
            .unwrap();
        (r.status(), r.json().await.unwrap_or(Value::Null))
    }

    /// A raw body, typed as JSON when it looks like JSON and as YAML
    /// otherwise (a body with no type is refused: docs/security.md).
    pub async fn post_text(&self, path: &str, body: &str) -> reqwest::Response {
        let kind = if body.trim_start().starts_with(['{', '[']) {
            "application/json"
        } else {
            "application/yaml"
        };
        client()
            .post(self.url(path))
            .header("content-type", kind)
            .body(body.to_string())
            .send()
            .await
            .unwrap()
    }

    /// `GET path` (no token): its status and body (`Null` when not JSON).
    pub async fn get(&self, path: &str) -> (StatusCode, Value) {
        let r = client().get(self.url(path)).send().await.unwrap();
        (r.status(), r.json().await.unwrap_or(Value::Null))
    }

    /// One JSON-RPC message to `/mcp` (as `token` when given, in `session`
    /// when given); the answer's body.
    pub async fn mcp_post(
        &self,
        token: Option<&str>,
        session: Option<&str>,
        body: Value,
    ) -> reqwest::Response {
        let mut r = client()
            .post(self.url("/mcp"))
            .header("accept", "application/json, text/event-stream")
            .json(&body);
        if let Some(token) = token {
            r = r.bearer_auth(token);
        }
        if let Some(id) = session {
            r = r.header("mcp-session-id", id);
        }
        r.send().await.unwrap()
    }

    /// An initialized MCP session on `/mcp`; its id.
    pub async fn mcp_session(&self, token: Option<&str>) -> String {
        let init = self
            .mcp_post(
                token,
                None,
                json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
                    "protocolVersion": "2025-06-18", "capabilities": {},
                    "clientInfo": {"name": "test", "version": "0"}}}),
            )
            .await;
        let session = init.headers()["mcp-session-id"]
            .to_str()
            .unwrap()
            .to_string();
        self.mcp_post(
            token,
            Some(&session),
            json!({"jsonrpc": "2.0", "method": "notifications/initialized"}),
        )
        .await;
        session
    }

    /// A request in an MCP session; the answer's body as text.
    pub async fn mcp_send(&self, token: Option<&str>, session: &str, body: Value) -> String {
        self.mcp_post(token, Some(session), body)
            .await
            .text()
            .await
            .unwrap()
    }

    pub fn db(&self) -> PathBuf {
        self.dir.join("axon.db")
    }

    /// SIGTERM, then wait for the process to exit.
    pub fn terminate(&mut self) -> std::process::ExitStatus {
        Command::new("kill")
            .args(["-TERM", &self.child.id().to_string()])
            .status()
            .unwrap();
        self.child.wait().unwrap()
    }
}

impl Drop for Served {
    fn drop(&mut self) {
        super::stop(&mut self.child);
    }
}

/// Serve `app` on a loopback port of its own.
pub async fn spawn_app(app: axum::Router) -> std::net::SocketAddr {
    spawn_app_on("127.0.0.1", app).await
}

/// Serve `app` on a port of its own at `ip` (any of 127.0.0.0/8 on Linux).
pub async fn spawn_app_on(ip: &str, app: axum::Router) -> std::net::SocketAddr {
    let listener = tokio::net::TcpListener::bind((ip, 0)).await.unwrap();
    let addr = listener.local_addr().unwrap();
    tokio::spawn(async move { axum::serve(listener, app).await });
    addr
}

/// Whether `r` is an RFC 9457 problem.
pub fn is_problem(r: &reqwest::Response) -> bool {
    r.headers()
        .get("content-type")
        .is_some_and(|v| v == "application/problem+json")
}

/// The HTTP client the tests call with.
pub fn client() -> reqwest::Client {
    axon_http_tool::install_crypto_provider();
    reqwest::Client::new()
}

/// A call as `token` (none when empty): the call result (a problem's `result` when it has one).
pub async fn call_as(s: &Served, token: &str, tool: &str, body: Value) -> Value {
    let mut r = client().post(s.url(&format!("/v1/tools/{tool}/call")));
    if !token.is_empty() {
        r = r.bearer_auth(token);
    }
    let r = r.json(&body).send().await.unwrap();
    let body: Value = r.json().await.unwrap();
    if body.get("result").is_some() {
        body["result"].clone()
    } else {
        body
    }
}
