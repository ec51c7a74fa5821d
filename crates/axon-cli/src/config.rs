//! `axon.toml`: where the config comes from (`--config`, `AXON_CONFIG`, or none at
//! all for the defaults), what it may hold, and the `AXON_…` environment overrides.
//! Unknown keys and bad values are errors naming the key and the line.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};
use serde_json::Value;

mod auth;
mod check;

pub use auth::{AuthConfig, GrantConfig, IssuerConfig};

/// The whole configuration.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct Config {
    /// `[server]`.
    pub server: ServerConfig,
    /// `[store]`.
    pub store: StoreConfig,
    /// Policy keys for every tool (docs/design.md, "Policy configuration").
    pub defaults: toml::Table,
    /// Policy keys per tool.
    pub tools: BTreeMap<String, toml::Table>,
    /// Policy keys per origin (`[origins."https://api.github.com"]`), over a
    /// tool's for the calls of tools keyed by origin (`http_request`,
    /// `browser_navigate`) that reach it.
    pub origins: BTreeMap<String, toml::Table>,
    /// `[history]`.
    pub history: History,
    /// The `http_request` tool: `allow_hosts`, `max_body_bytes`.
    pub http: axon_http_tool::HttpConfig,
    /// `[browser]`: Chromium, hosts, timeouts.
    pub browser: axon_browser::BrowserConfig,
    /// `[mcp]`.
    pub mcp: Mcp,
    /// `[llm]`: the model behind `browser_act`'s LLM translator; without it
    /// the heuristic translator decides.
    pub llm: Option<axon_browser_act::LlmConfig>,
    /// `[log]`.
    pub log: Log,
    /// `[secrets] NAME = { env = "VAR" }` or `{ file = "path" }`: what a plan's
    /// `${secret.NAME}` reads when its step runs. Values never live here.
    pub secrets: BTreeMap<String, Secret>,
    /// `[telemetry]`: OpenTelemetry traces over OTLP.
    pub telemetry: TelemetryConfig,
    /// `[shared]`: policy state shared by every replica (Redis).
    pub shared: Shared,
    /// `[files]`: where files that calls name are kept.
    pub files: Files,
    /// `[network]`: what tool calls may reach besides the host lists.
    pub network: Network,
}

/// `[network]`: the addresses every tool call (`http_request`, the browser)
/// may reach, beyond `[http]`'s and `[browser]`'s host lists
/// (docs/security.md). Link-local and metadata addresses and Axon's own
/// endpoints are never reached.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct Network {
    /// Whether loopback and private addresses (10/8, 172.16/12, 192.168/16,
    /// 100.64/10, fc00::/7) may be reached. Default: yes for a process that
    /// serves only its own user (the CLI, `axon mcp`, `axon serve` on
    /// loopback without scoped tokens); no for `axon serve` bound to another
    /// address or with scoped tokens.
    pub allow_private: Option<bool>,
    /// Hosts every call may reach (names, `*.domain`, addresses, CIDR
    /// ranges); empty allows all. A range listed here lifts the built-in
    /// refusal of link-local and private addresses for what it covers.
    pub allow_hosts: Vec<String>,
    /// Hosts no call reaches (the same forms); wins over `allow_hosts`.
    pub deny_hosts: Vec<String>,
    /// Ports every call may reach (`443`, `"8000-8999"`); empty allows all.
    pub allow_ports: Vec<Port>,
    /// Ports no call reaches; wins over `allow_ports`.
    pub deny_ports: Vec<Port>,
}

/// A port or a range of them, as TOML writes either (`443`, `"8000-8999"`).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(untagged)]
pub enum Port {
    /// One port.
    Number(u32),
    /// `"443"` or `"8000-8999"`.
    Text(String),
}

impl Network {
    /// The lists as `axon_core::network::Rules`; the error names the entry.
    pub fn rules(&self) -> Result<axon_core::network::Rules, axon_core::network::RuleError> {
        let ports = |list: &[Port]| -> Vec<String> {
            list.iter()
                .map(|p| match p {
                    Port::Number(n) => n.to_string(),
                    Port::Text(t) => t.clone(),
                })
                .collect()
        };
        axon_core::network::Rules::parse(
            &self.allow_hosts,
            &self.deny_hosts,
            &ports(&self.allow_ports),
            &ports(&self.deny_ports),
        )
    }
}

/// `[files]`: the one directory where tool calls write and read the files
/// they name (screenshots, storage states). A call names a file, never a
/// path (docs/security.md).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct Files {
    /// The directory; default `<data dir>/axon/files`.
    pub dir: Option<PathBuf>,
}

/// `[shared]`: where replicas keep the policy state they share
/// (docs/scaling.md). Unset, every process keeps its own.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct Shared {
    /// `redis://host:port/db`: every replica's circuit breakers live there.
    pub redis_url: Option<String>,
    /// Put before every key, so that several deployments share one Redis.
    /// Default `axon:`.
    pub key_prefix: Option<String>,
    /// Each Redis operation's own timeout, ms (1 to 5 000); past it the
    /// replica decides on its own state. Default 50.
    pub timeout_ms: Option<u64>,
}

/// `[telemetry]`: where Axon's spans go (docs/telemetry.md). Each key left out
/// falls back to OpenTelemetry's standard variable (`OTEL_EXPORTER_OTLP_ENDPOINT`,
/// `OTEL_EXPORTER_OTLP_PROTOCOL`, `OTEL_SERVICE_NAME`, `OTEL_TRACES_SAMPLER_ARG`),
/// so an agent platform that sets those for every process needs no config here.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct TelemetryConfig {
    /// `false` turns export off even when the variables name a collector.
    /// Default: on when an endpoint is known (here or in the variables).
    pub enabled: Option<bool>,
    /// The collector's base URL, `http(s)://host:port`: OTLP/HTTP posts to
    /// `<endpoint>/v1/traces`, gRPC connects to it. Like
    /// `OTEL_EXPORTER_OTLP_ENDPOINT`.
    pub otlp_endpoint: Option<String>,
    /// `http/protobuf` (default; port 4318) or `grpc` (port 4317, plaintext).
    pub protocol: Option<OtlpProtocol>,
    /// `service.name` of the spans. Default `OTEL_SERVICE_NAME`, else `axon`.
    pub service_name: Option<String>,
    /// Share of new traces kept, 0 to 1 (a trace a caller sent in keeps the
    /// caller's decision). Default `OTEL_TRACES_SAMPLER_ARG`, else 1.
    pub sampling_ratio: Option<f64>,
}

/// How spans travel to the collector.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum OtlpProtocol {
    /// Protobuf over HTTP POST (OTLP/HTTP).
    #[serde(rename = "http/protobuf")]
    HttpProtobuf,
    /// OTLP/gRPC.
    #[serde(rename = "grpc")]
    Grpc,
}

/// One scoped bearer token (`[[server.tokens]]`).
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct TokenConfig {
    /// The environment variable holding the token.
    pub env: String,
    /// Tools it may see and call (globs); empty: all.
    pub tools: Vec<String>,
    /// Whether it may reset breakers and cancel runs.
    pub admin: bool,
    /// The `[secrets]` its plans may use (`["*"]`: all); empty: none.
    pub secrets: Vec<String>,
}

impl TokenConfig {
    /// The token, read from its environment variable now.
    pub fn resolve(&self, index: usize) -> Result<axon_server::ScopedToken, ConfigError> {
        let token = std::env::var(&self.env).unwrap_or_default();
        if token.trim().is_empty() || token.chars().any(char::is_whitespace) {
            return Err(ConfigError(format!(
                "server.tokens[{index}].env: the environment variable {} is not set to a token (no spaces)",
                self.env
            )));
        }
        Ok(axon_server::ScopedToken {
            token,
            tools: self.tools.clone(),
            admin: self.admin,
            secrets: self.secrets.clone(),
        })
    }
}

/// Where one secret comes from: exactly one of `env` and `file`.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct Secret {
    /// An environment variable.
    pub env: Option<String>,
    /// A file holding the value (one trailing newline dropped).
    pub file: Option<PathBuf>,
}

/// `[server]`: how `axon serve` listens and whom it answers.
#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct ServerConfig {
    /// Address to listen on (`127.0.0.1:7878`); a non-loopback one needs tokens.
    pub bind: String,
    /// Tokens that may do everything.
    pub auth_tokens: Vec<String>,
    /// `[[server.tokens]] env = "VAR", tools = ["browser_*"], admin = false`:
    /// tokens limited to some tools; the value comes from the environment.
    pub tokens: Vec<TokenConfig>,
    /// `[server.auth]`: identity providers whose access tokens are accepted.
    pub auth: AuthConfig,
    /// Largest request body accepted (1 MiB).
    pub body_limit_bytes: u64,
    /// On shutdown, how long runs in flight may go on before being cancelled.
    pub shutdown_grace_ms: u64,
    /// How long a client may take to send a request's head before its
    /// connection is closed (10 s).
    pub header_timeout_ms: u64,
    /// Runs at once; one more is refused with 503 and `Retry-After`.
    pub max_runs: usize,
    /// Runs waiting in the queue (`POST /v1/runs?queue=true`) for a replica
    /// to take them up; one more is refused with 503 and `Retry-After`.
    pub max_queued_runs: usize,
    /// How much of each cap (`max_runs`, `max_queued_runs`,
    /// `[mcp] max_sessions`) one scoped token may hold, in percent (50), so
    /// that one client cannot leave the others nothing.
    pub tenant_share_percent: u8,
    /// The names clients reach the server by (the Host header, without the
    /// port; `*.example.com` patterns, `*` for any). Default: the loopback
    /// names, plus the bound address when it is a specific one; any host
    /// when bound to every address (tokens are required there).
    pub allowed_hosts: Vec<String>,
    /// Browser origins besides the server's own that may call it
    /// (`https://app.example`). Default none: a cross-site request is refused.
    pub allowed_origins: Vec<String>,
}

impl ServerConfig {
    /// The Host names `axon serve` bound to `local` answers to (see
    /// [`ServerConfig::allowed_hosts`]).
    pub fn host_names(&self, local: &std::net::SocketAddr) -> Vec<String> {
        let mut names: Vec<String> = axon_server::LOOPBACK_HOSTS
            .iter()
            .map(|h| h.to_string())
            .collect();
        if !self.allowed_hosts.is_empty() {
            names.extend(self.allowed_hosts.iter().cloned());
        } else if local.ip().is_unspecified() {
            names.push("*".into());
        } else if !local.ip().is_loopback() {
            names.push(match local.ip() {
                std::net::IpAddr::V6(ip) => format!("[{ip}]"),
                ip => ip.to_string(),
            });
        }
        names
    }
}

impl Default for ServerConfig {
    fn default() -> Self {
        ServerConfig {
            bind: "127.0.0.1:7878".into(),
            auth_tokens: Vec::new(),
            tokens: Vec::new(),
            auth: AuthConfig::default(),
            body_limit_bytes: 1 << 20,
            shutdown_grace_ms: 10_000,
            header_timeout_ms: 10_000,
            max_runs: 256,
            max_queued_runs: 1024,
            tenant_share_percent: 50,
            allowed_hosts: Vec::new(),
            allowed_origins: Vec::new(),
        }
    }
}

/// `[store]`: where history and runs are kept.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct StoreConfig {
    /// The SQLite file; the platform data dir when unset. Ignored with `url`.
    pub path: Option<PathBuf>,
    /// A PostgreSQL database (`postgres://user@host:5432/db`) instead of the
    /// file: what several `axon serve` replicas share (docs/scaling.md).
    pub url: Option<String>,
    /// With `url`: the schema the tables live in (created if missing), so that
    /// several deployments share one database. The URL's default when unset.
    pub schema: Option<String>,
    /// Whether `axon serve` hands its runs to the other replicas: a run whose
    /// replica died (its lease unbeaten for 15 s, or its process gone from
    /// this host) is resumed by another one, and queued runs
    /// (`POST /v1/runs?queue=true`) are taken by whichever has room. Default:
    /// on with `url`, off with the file.
    pub takeover: Option<bool>,
}

/// `[history]`: what is kept of calls and runs, and for how long.
#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct History {
    /// Where calls are recorded (default `sqlite`).
    pub backend: HistoryBackend,
    /// Calls kept per correlation id (the oldest go first).
    pub max_per_correlation: u64,
    /// Calls kept in all.
    pub max_calls: u64,
    /// Days of history (and of runs) kept; 0 = forever.
    pub max_age_days: u64,
    /// Runs kept with their checkpoints; the least recently updated go first.
    /// 0 = no limit.
    pub max_runs: u64,
    /// `sync` (default): a call's history entry is committed before its result
    /// is returned; `async`: it is queued, for throughput, and a crash loses the
    /// batch being written.
    pub durability: String,
}

impl Default for History {
    fn default() -> Self {
        History {
            backend: HistoryBackend::Sqlite,
            max_per_correlation: 100,
            max_calls: 1_000_000,
            max_age_days: 30,
            max_runs: 10_000,
            durability: "sync".into(),
        }
    }
}

/// `history.backend`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum HistoryBackend {
    /// The store file: survives restarts (the default).
    #[default]
    Sqlite,
    /// Bounded and lost on exit, for a server that must not write to disk per
    /// call (`axon stats` and `/v1/stats` read only SQLite history).
    Memory,
}

/// `log.format`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum LogFormat {
    /// Lines for people (the default).
    #[default]
    Text,
    /// One JSON object a line, for log collectors.
    Json,
}

/// `[mcp]`: the MCP servers whose tools are imported (`[[mcp.servers]]`), and
/// which tools `axon mcp` and `/mcp` serve (`tools`, `exclude`: globs).
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct Mcp {
    /// Servers whose tools are imported.
    pub servers: Vec<axon_mcp_client::McpServerConfig>,
    /// Tools served over MCP (empty: all), such as `["browser_*", "http_request"]`.
    pub tools: Vec<String>,
    /// Tools never served over MCP.
    pub exclude: Vec<String>,
    /// Optional tool groups served besides the core ones (`pdf`, `testing`,
    /// `storage`, `vision`: `axon_core::CAPABILITIES`); `axon mcp --caps`
    /// adds to them.
    pub caps: Vec<String>,
    /// MCP sessions `/mcp` keeps open at once; one more `initialize` is
    /// refused with 503 and `Retry-After`. Default 1024.
    pub max_sessions: Option<usize>,
    /// An MCP session idle this long is closed. Default 300 000 (5 minutes).
    pub session_idle_ms: Option<u64>,
}

impl Mcp {
    /// The filter for `axon mcp` and `/mcp`.
    pub fn filter(&self) -> axon_core::ToolFilter {
        axon_core::ToolFilter {
            tools: self.tools.clone(),
            exclude: self.exclude.clone(),
            caps: self.caps.clone(),
            ..Default::default()
        }
    }
}

/// `[log]`: how `axon` logs (to stderr).
#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct Log {
    /// How a log line looks (default `text`).
    pub format: LogFormat,
    /// A tracing filter (`info`, `axon_core=debug`).
    pub level: String,
}

impl Default for Log {
    fn default() -> Self {
        Log {
            format: LogFormat::Text,
            // The CLI shows retries and failures itself; -v brings the logs back.
            level: "error".into(),
        }
    }
}

/// A config that could not be used. The message names the file, the key and the
/// line when the file is at fault.
#[derive(Debug)]
pub struct ConfigError(pub String);

impl std::fmt::Display for ConfigError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for ConfigError {}

impl Config {
    /// Load from `path` (or `AXON_CONFIG`, or nothing), then apply `AXON_…`
    /// overrides and check the policy keys.
    pub fn load(path: Option<&Path>) -> Result<Config, ConfigError> {
        let mut config = match path {
            None => Config::default(),
            Some(path) => {
                let text = std::fs::read_to_string(path).map_err(|e| {
                    ConfigError(format!("cannot read config {}: {e}", path.display()))
                })?;
                Self::parse(&text).map_err(|e| ConfigError(format!("{}: {e}", path.display())))?
            }
        };
        config.apply_env(|k| std::env::var(k).ok())?;
        config.check()?;
        Ok(config)
    }

    /// Parse and check TOML text as [`load`](Config::load) does, without the
    /// environment: what `axon config check` says of a file.
    pub fn from_text(text: &str) -> Result<Config, ConfigError> {
        let config = Self::parse(text)?;
        config.check()?;
        Ok(config)
    }

    /// Parse TOML text. An error starts with the key's path (`history.backend:`)
    /// when there is one, and carries the line.
    pub fn parse(text: &str) -> Result<Config, ConfigError> {
        let document = toml::Deserializer::parse(text)
            .map_err(|e| ConfigError(e.to_string().trim_end().to_string()))?;
        serde_path_to_error::deserialize(document).map_err(|e| {
            let path = e.path().to_string();
            let message = e.into_inner().to_string();
            let message = message.trim_end();
            ConfigError(if path == "." {
                message.to_string()
            } else {
                format!("{path}: {message}")
            })
        })
    }

    fn apply_env(&mut self, var: impl Fn(&str) -> Option<String>) -> Result<(), ConfigError> {
        if let Some(v) = var("AXON_STORE_PATH") {
            self.store.path = Some(PathBuf::from(v));
        }
        if let Some(v) = var("AXON_FILES_DIR") {
            self.files.dir = Some(PathBuf::from(v));
        }
        if let Some(v) = var("AXON_SERVER_BIND") {
            self.server.bind = v;
        }
        if let Some(v) = var("AXON_LOG_FORMAT") {
            self.log.format = match v.as_str() {
                "text" => LogFormat::Text,
                "json" => LogFormat::Json,
                _ => {
                    return Err(ConfigError(format!(
                        "AXON_LOG_FORMAT: {v:?} must be \"text\" or \"json\""
                    )));
                }
            };
        }
        if let Some(v) = var("AXON_STORE_URL") {
            self.store.url = Some(v);
        }
        if let Some(v) = var("AXON_SHARED_REDIS_URL") {
            self.shared.redis_url = Some(v);
        }
        if let Some(v) = var("AXON_LOG_LEVEL") {
            self.log.level = v;
        }
        if let Some(v) = var("AXON_HISTORY_MAX_PER_CORRELATION") {
            self.history.max_per_correlation = v.parse().map_err(|_| {
                ConfigError(format!(
                    "AXON_HISTORY_MAX_PER_CORRELATION: {v:?} is not a number"
                ))
            })?;
        }
        Ok(())
    }

    /// The secrets plans may reference.
    pub fn secrets(&self) -> axon_plan::Secrets {
        self.secrets
            .iter()
            .fold(axon_plan::Secrets::new(), |all, (name, secret)| {
                let source = match (&secret.env, &secret.file) {
                    (Some(var), _) => axon_plan::SecretSource::Env(var.clone()),
                    (None, Some(path)) => axon_plan::SecretSource::File(path.clone()),
                    (None, None) => return all,
                };
                all.with(name.clone(), source)
            })
    }

    /// `[defaults]` as a policy layer.
    pub fn defaults_json(&self) -> Value {
        table_json(&self.defaults)
    }

    /// Whether `axon serve` takes runs over from other replicas
    /// (`[store] takeover`; on with a PostgreSQL store by default).
    pub fn takeover(&self) -> bool {
        self.store.takeover.unwrap_or(self.store.url.is_some())
    }

    /// The SQLite file: configured, or `<data dir>/axon/axon.db`.
    pub fn store_path(&self) -> PathBuf {
        self.store.path.clone().unwrap_or_else(|| {
            dirs::data_dir()
                .unwrap_or_else(std::env::temp_dir)
                .join("axon")
                .join("axon.db")
        })
    }

    /// Whether tool calls may reach loopback and private addresses, for a
    /// process that `serves_others` or not (see [`Network::allow_private`]).
    pub fn allow_private(&self, serves_others: bool) -> bool {
        self.network.allow_private.unwrap_or(!serves_others)
    }

    /// The files directory: configured, or `<data dir>/axon/files`.
    pub fn files_dir(&self) -> PathBuf {
        self.files.dir.clone().unwrap_or_else(|| {
            dirs::data_dir()
                .unwrap_or_else(std::env::temp_dir)
                .join("axon")
                .join("files")
        })
    }

    /// The effective config as TOML, secrets masked.
    pub fn show(&self) -> String {
        let mut masked = self.clone();
        masked.server.auth_tokens = masked
            .server
            .auth_tokens
            .iter()
            .map(|_| "***".to_string())
            .collect();
        for server in &mut masked.mcp.servers {
            for (k, v) in server.env.iter_mut().chain(server.headers.iter_mut()) {
                if axon_core::redact::is_secret_field(k) {
                    *v = "***".into();
                }
            }
        }
        if let Some(url) = &mut masked.store.url {
            *url = axon_redis::redacted(url);
        }
        if let Some(url) = &mut masked.shared.redis_url {
            *url = axon_redis::redacted(url);
        }
        if masked.store.url.is_none() {
            masked.store.path = Some(self.store_path());
        }
        toml::to_string_pretty(&masked).unwrap_or_default()
    }
}

/// A TOML table as a policy layer.
pub fn table_json(table: &toml::Table) -> Value {
    serde_json::to_value(table).unwrap_or(Value::Null)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn unknown_keys_name_the_key_and_the_line() {
        let err = Config::parse("[server]\nbind = \"127.0.0.1:1\"\nbindd = 3\n")
            .unwrap_err()
            .0;
        assert!(err.contains("line 3") && err.contains("bindd"), "{err}");
    }

    #[test]
    fn policy_keys_are_checked_with_their_section() {
        let c = Config::parse("[origins.\"https://a.example/x\"]\ntimeout_ms = 5\n").unwrap();
        assert!(
            c.check()
                .unwrap_err()
                .0
                .starts_with("origins.\"https://a.example/x\": is not an origin")
        );
        let c = Config::parse("[origins.\"https://a.example\"]\nkey = \"host\"\n").unwrap();
        assert!(
            c.check()
                .unwrap_err()
                .0
                .starts_with("origins.\"https://a.example\".key:")
        );
        let c =
            Config::parse("[origins.\"https://a.example\".limits]\nrate_per_sec = 2\n").unwrap();
        c.check().unwrap();
        let mut c = Config::parse("[tools.echo.retry]\nmax_attempts = 0\n").unwrap();
        c.apply_env(|_| None).unwrap();
        let err = c.check().unwrap_err().0;
        assert_eq!(
            err,
            "tools.echo.retry.max_attempts: must be at least 1 (the first attempt counts)"
        );
    }

    #[test]
    fn a_bad_history_backend_is_named() {
        let err = Config::from_text("[history]\nbackend = \"redis\"\n")
            .unwrap_err()
            .0;
        assert!(err.starts_with("history.backend"), "{err}");
    }

    #[test]
    fn the_llm_section_is_checked_and_defaulted() {
        let c = Config::parse("[llm]\nbase_url = \"localhost:11434\"\nmodel = \"m\"\n").unwrap();
        let err = c.check().unwrap_err().0;
        assert!(err.starts_with("llm.base_url"), "{err}");
        let c =
            Config::parse("[llm]\nbase_url = \"http://127.0.0.1:11434/v1\"\nmodel = \"qwen\"\n")
                .unwrap();
        c.check().unwrap();
        let llm = c.llm.unwrap();
        assert_eq!(
            (llm.temperature, llm.max_tokens, llm.timeout_ms),
            (0.0, 500, 30_000)
        );
        assert!(
            Config::parse("[llm]\nbase_url = \"http://x/v1\"\nmodel = \"m\"\napi_key = \"sk-1\"\n")
                .is_err()
        );
    }

    #[test]
    fn env_overrides_apply() {
        let mut c = Config::default();
        c.apply_env(|k| (k == "AXON_STORE_PATH").then(|| "/tmp/x.db".to_string()))
            .unwrap();
        assert_eq!(c.store_path(), PathBuf::from("/tmp/x.db"));
    }

    #[test]
    fn secrets_name_one_source_each() {
        let c =
            Config::parse("[secrets]\nPW = { env = \"APP_PW\" }\nKEY = { file = \"/run/key\" }\n")
                .unwrap();
        c.check().unwrap();
        let secrets = c.secrets();
        assert_eq!(secrets.names().collect::<Vec<_>>(), ["KEY", "PW"]);
        let c = Config::parse("[secrets]\nPW = {}\n").unwrap();
        assert!(c.check().unwrap_err().0.starts_with("secrets.PW"));
        assert!(Config::parse("[secrets]\nPW = { value = \"x\" }\n").is_err());
    }

    #[test]
    fn a_token_is_granted_configured_secrets_only() {
        let c = Config::parse(
            "[secrets]\nPW = { env = \"APP_PW\" }\n[[server.tokens]]\nenv = \"T\"\nsecrets = [\"PW\", \"*\"]\n",
        )
        .unwrap();
        c.check().unwrap();
        let c = Config::parse("[[server.tokens]]\nenv = \"T\"\nsecrets = [\"PWD\"]\n").unwrap();
        let e = c.check().unwrap_err().0;
        assert!(
            e.starts_with("server.tokens[0].secrets[0]: no secret named \"PWD\""),
            "{e}"
        );
    }

    #[test]
    fn show_masks_secrets() {
        let c = Config::parse("[server]\nauth_tokens = [\"s3cret\"]\n[[mcp.servers]]\nname = \"gh\"\ncommand = \"x\"\nenv = { GITHUB_TOKEN = \"t0k\" }\n").unwrap();
        let shown = c.show();
        assert!(
            !shown.contains("s3cret") && !shown.contains("t0k"),
            "{shown}"
        );
    }
}
