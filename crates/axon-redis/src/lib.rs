//! Policy state shared by every replica through Redis: one circuit breaker
//! per dependency for the whole cluster, so that failures seen by replica A open
//! the breaker on B and C, and exactly `half_open_max_calls` probes go out
//! across the cluster; one rate limit per tool (GCRA), so that a limit of
//! 10/s holds for the cluster, not 10/s per replica; and one retry budget per
//! tool, so that when a dependency is down the cluster's retries stay a tenth
//! of its calls instead of every replica adding its own floor.
//!
//! The executor asks [`RedisShared`] through `axon_core`'s traits, one per
//! policy and one file each here: `SharedBreakers` (breaker.rs, with the rate
//! limit in the same round trip), `SharedBudget` (retry_budget.rs), `SharedCache`
//! (cache.rs); everything Redis-specific lives in this crate, so the core
//! keeps no Redis dependency. State is kept per dependency key (a tool, an
//! origin, an MCP server: `axon_core::policy::dependency`), and expires when the
//! key goes quiet. Each operation is one Lua script (atomic
//! on the server; one key pair per tool, in one hash slot): a call on the
//! happy path makes one round trip (the admission, which also takes the
//! call's place in the rate limit; the calls the budget counts ride along with
//! the next retry's withdrawal), a retry one more (its withdrawal), a failure
//! or a probe one
//! more (its outcome) — and, with the ratio rule on (`failure_ratio`), a
//! success too, since the ratio counts every call.
//!
//! **Redis down or slow.** Every operation has its own short timeout
//! (`[shared] timeout_ms`, 50 ms by default). When one fails, the client stops
//! asking Redis for a backoff (100 ms, doubling to 5 s) and the executor
//! decides on its local, in-memory breaker meanwhile (which it keeps fed with
//! every outcome, so it is warm): a call never fails because Redis is down.
//! The next operation after the backoff is the reconnect attempt; when it
//! succeeds the shared state is authoritative again. [`RedisShared::health`]
//! says which (for `/healthz`).

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use axon_core::policy::breaker::SharedUnavailable;
use redis::aio::{ConnectionManager, ConnectionManagerConfig};

mod breaker;
mod cache;
mod retry_budget;

/// `[shared]` settings.
#[derive(Clone, Debug)]
pub struct SharedConfig {
    /// `redis://host:port/db` (a password in it is never logged).
    pub redis_url: String,
    /// Put before every key, so that several deployments (and tests) share
    /// one Redis. Default `axon:`.
    pub key_prefix: String,
    /// Each Redis operation's own timeout.
    pub timeout: Duration,
}

impl SharedConfig {
    /// The defaults for `url`: prefix `axon:`, 50 ms a Redis operation.
    pub fn new(url: impl Into<String>) -> Self {
        SharedConfig {
            redis_url: url.into(),
            key_prefix: "axon:".into(),
            timeout: Duration::from_millis(50),
        }
    }
}

/// A clock in milliseconds since the epoch: every replica's must agree
/// (NTP), as the breaker's windows are measured in it.
pub type Clock = Arc<dyn Fn() -> u64 + Send + Sync>;

fn wall_clock() -> Clock {
    Arc::new(|| {
        SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map(|d| d.as_millis() as u64)
            .unwrap_or(0)
    })
}

/// Redis-backed shared breakers (see the crate docs).
pub struct RedisShared {
    conn: ConnectionManager,
    prefix: String,
    target: String,
    timeout: Duration,
    admit: redis::Script,
    record: redis::Script,
    withdraw: redis::Script,
    end_flight: redis::Script,
    clock: Clock,
    /// Whether the last operation reached Redis.
    healthy: AtomicBool,
    /// While Redis is failing: not asked again before this (ms since `born`).
    retry_at_ms: AtomicU64,
    backoff_ms: AtomicU64,
    born: Instant,
    last_error: Mutex<Option<String>>,
    ids: AtomicU64,
    /// Tells this client's failure entries from every other replica's.
    nonce: String,
}

impl std::fmt::Debug for RedisShared {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RedisShared")
            .field("target", &self.target)
            .field("prefix", &self.prefix)
            .finish_non_exhaustive()
    }
}

/// Backoff bounds while Redis is failing.
const BACKOFF_MIN_MS: u64 = 100;
const BACKOFF_MAX_MS: u64 = 5_000;

/// `url` without its password, for logs and `/healthz`.
pub fn redacted(url: &str) -> String {
    match url::Url::parse(url) {
        Ok(mut u) => {
            if u.password().is_some() {
                let _ = u.set_password(Some("***"));
            }
            u.to_string()
        }
        Err(_) => "redis (unparsable URL)".into(),
    }
}

/// Why the shared Redis could not be joined at start-up; each names the
/// target without its password.
#[derive(Debug)]
pub enum ConnectError {
    /// `shared.redis_url` does not parse.
    BadUrl {
        /// The URL, redacted.
        target: String,
        /// The client's error.
        source: redis::RedisError,
    },
    /// It did not answer within 2 s.
    Timeout {
        /// The URL, redacted.
        target: String,
    },
    /// It answered with an error (refused, authentication, …).
    Refused {
        /// The URL, redacted.
        target: String,
        /// The client's error.
        source: redis::RedisError,
    },
}

impl std::fmt::Display for ConnectError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            ConnectError::BadUrl { target, source } => {
                write!(f, "shared.redis_url {target}: {source}")
            }
            ConnectError::Timeout { target } => {
                write!(f, "Redis at {target} did not answer in 2 s")
            }
            ConnectError::Refused { target, source } => write!(f, "Redis at {target}: {source}"),
        }
    }
}

impl std::error::Error for ConnectError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            ConnectError::BadUrl { source, .. } | ConnectError::Refused { source, .. } => {
                Some(source)
            }
            ConnectError::Timeout { .. } => None,
        }
    }
}

impl RedisShared {
    /// Connect to `config.redis_url` (and check it answers). An error names
    /// the target: a Redis that cannot be reached at start-up is a
    /// configuration error, not something to degrade from.
    pub async fn connect(config: &SharedConfig) -> Result<Self, ConnectError> {
        Self::connect_with_clock(config, wall_clock()).await
    }

    /// [`RedisShared::connect`] with the clock the breaker's windows use
    /// (tests turn it by hand).
    pub async fn connect_with_clock(
        config: &SharedConfig,
        clock: Clock,
    ) -> Result<Self, ConnectError> {
        let target = redacted(&config.redis_url);
        let client = redis::Client::open(config.redis_url.as_str()).map_err(|source| {
            ConnectError::BadUrl {
                target: target.clone(),
                source,
            }
        })?;
        let refused = |source| ConnectError::Refused {
            target: target.clone(),
            source,
        };
        let settings = ConnectionManagerConfig::new()
            .set_connection_timeout(Some(Duration::from_millis(500)))
            .set_response_timeout(Some(config.timeout))
            .set_number_of_retries(1);
        let connect = client.get_connection_manager_with_config(settings);
        let mut conn = tokio::time::timeout(Duration::from_secs(2), connect)
            .await
            .map_err(|_| ConnectError::Timeout {
                target: target.clone(),
            })?
            .map_err(refused)?;
        let _: String = redis::cmd("PING")
            .query_async(&mut conn)
            .await
            .map_err(refused)?;
        Ok(RedisShared {
            conn,
            prefix: config.key_prefix.clone(),
            target,
            timeout: config.timeout,
            admit: redis::Script::new(breaker::ADMIT),
            record: redis::Script::new(breaker::RECORD),
            withdraw: redis::Script::new(retry_budget::WITHDRAW),
            end_flight: redis::Script::new(cache::END_FLIGHT),
            clock,
            healthy: AtomicBool::new(true),
            retry_at_ms: AtomicU64::new(0),
            backoff_ms: AtomicU64::new(BACKOFF_MIN_MS),
            born: Instant::now(),
            last_error: Mutex::new(None),
            ids: AtomicU64::new(0),
            nonce: format!(
                "{}.{}",
                std::process::id(),
                SystemTime::now()
                    .duration_since(UNIX_EPOCH)
                    .map(|d| d.as_nanos())
                    .unwrap_or(0)
            ),
        })
    }

    /// `None` when Redis answers; else why not (the last error), for
    /// `/healthz`'s `degraded`.
    pub fn health(&self) -> Option<String> {
        if self.healthy.load(Ordering::Relaxed) {
            return None;
        }
        let why = self
            .last_error
            .lock()
            .ok()
            .and_then(|e| e.clone())
            .unwrap_or_else(|| "unreachable".into());
        Some(why)
    }

    /// The Redis URL without its password.
    pub fn target(&self) -> &str {
        &self.target
    }

    fn since_born(&self) -> u64 {
        self.born.elapsed().as_millis() as u64
    }

    /// Run one Redis operation under the timeout; while Redis is failing,
    /// do not even try until the backoff has passed.
    async fn run<T, F>(&self, op: F) -> Result<T, SharedUnavailable>
    where
        F: std::future::Future<Output = redis::RedisResult<T>>,
    {
        if !self.healthy.load(Ordering::Relaxed)
            && self.since_born() < self.retry_at_ms.load(Ordering::Relaxed)
        {
            return Err(SharedUnavailable);
        }
        match tokio::time::timeout(self.timeout, op).await {
            Ok(Ok(v)) => {
                if !self.healthy.swap(true, Ordering::Relaxed) {
                    tracing::info!(target = %self.target, "Redis is back: shared policy state again");
                }
                self.backoff_ms.store(BACKOFF_MIN_MS, Ordering::Relaxed);
                Ok(v)
            }
            outcome => {
                let why = match outcome {
                    Ok(Err(e)) => e.to_string(),
                    _ => format!("no answer in {} ms", self.timeout.as_millis()),
                };
                let backoff = self.backoff_ms.load(Ordering::Relaxed);
                self.retry_at_ms
                    .store(self.since_born() + backoff, Ordering::Relaxed);
                self.backoff_ms
                    .store((backoff * 2).min(BACKOFF_MAX_MS), Ordering::Relaxed);
                if self.healthy.swap(false, Ordering::Relaxed) {
                    tracing::warn!(target = %self.target, error = %why, "Redis failed: policy state is local until it answers");
                }
                if let Ok(mut last) = self.last_error.lock() {
                    *last = Some(why);
                }
                Err(SharedUnavailable)
            }
        }
    }
}
