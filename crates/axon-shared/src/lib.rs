//! Policy state shared by every replica through Redis: one circuit breaker
//! per tool for the whole cluster, so that failures seen by replica A open
//! the breaker on B and C, and exactly `half_open_max_calls` probes go out
//! across the cluster; one rate limit per tool (GCRA), so that a limit of
//! 10/s holds for the cluster, not 10/s per replica; and one retry budget per
//! tool, so that when a dependency is down the cluster's retries stay a tenth
//! of its calls instead of every replica adding its own floor.
//!
//! The executor asks [`RedisShared`] through `axon_core`'s
//! [`SharedBreakers`] trait; everything Redis-specific lives here, so the
//! core keeps no Redis dependency. Each operation is one Lua script (atomic
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

use async_trait::async_trait;
use axon_core::policy::breaker::{
    BreakerPolicy, BreakerState, SharedAdmit, SharedBreakers, SharedOutcome, SharedUnavailable,
};
use axon_core::policy::cache::{SharedCache, SharedResponse};
use redis::aio::{ConnectionManager, ConnectionManagerConfig};

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

/// Admission: `{verdict, value, wait}`. verdict 0 = pass (value 1 when a
/// probe; `wait` ms until the attempt's place in the rate limit), 1 = open
/// (value = ms until probes, or -1), 2 = isolated. ARGV: now, half_open_max,
/// open_ms, breaker on (0|1), the rate limit's interval ms (0 = none), its
/// burst. The rate limit is GCRA over one key per tool (`KEYS[2]`: the
/// theoretical arrival time): an attempt is placed at the earliest time the
/// rate allows and told how long to wait for it, so waiting callers queue, as
/// with the local limiter. An attempt the breaker refuses takes no place.
const ADMIT: &str = r#"
local now = tonumber(ARGV[1])
local max = tonumber(ARGV[2])
local open_ms = tonumber(ARGV[3])
local breaker = ARGV[4] == '1'
local interval = tonumber(ARGV[5])
local burst = tonumber(ARGV[6])
local probe = 0
if breaker then
  local s = redis.call('HMGET', KEYS[1], 'state', 'until', 'probes', 'since')
  local state = s[1] or 'closed'
  if state == 'isolated' then return {2, -1, 0} end
  if state == 'open' then
    local untl = tonumber(s[2]) or 0
    if now < untl then return {1, untl - now, 0} end
    redis.call('HSET', KEYS[1], 'state', 'half', 'probes', 1, 'since', now)
    probe = 1
  elseif state == 'half' then
    local probes = tonumber(s[3]) or 0
    local since = tonumber(s[4]) or now
    -- A probe whose replica died never reports: its slot frees after open_ms.
    if now - since >= open_ms then
      probes = 0
      redis.call('HSET', KEYS[1], 'since', now)
    end
    if probes >= max then return {1, -1, 0} end
    redis.call('HSET', KEYS[1], 'probes', probes + 1)
    probe = 1
  end
end
local wait = 0
if interval > 0 then
  local tat = tonumber(redis.call('GET', KEYS[2]) or '0')
  if tat < now then tat = now end
  wait = tat - now - interval * (burst - 1)
  if wait < 0 then wait = 0 end
  local next_tat = tat + interval
  redis.call('SET', KEYS[2], string.format('%.3f', next_tat), 'PX', math.ceil(next_tat - now) + 1000)
end
return {0, probe, math.ceil(wait)}
"#;

/// An attempt's outcome. ARGV: now, kind (fail|ok|neutral), probe (0|1),
/// threshold, window_ms, open_ms, a unique id, failure_ratio,
/// minimum_throughput. Returns the state after it. The ratio rule keeps its
/// window as ten buckets in the breaker's hash (`r<i>n` bucket number,
/// `r<i>c` calls, `r<i>f` failures). The hash expires ten minutes after its
/// open time when nothing is recorded (dependency keys come and go).
const RECORD: &str = r#"
local function record()
local now = tonumber(ARGV[1])
local kind = ARGV[2]
local probe = ARGV[3] == '1'
local threshold = tonumber(ARGV[4])
local window = tonumber(ARGV[5])
local open_ms = tonumber(ARGV[6])
local ratio = tonumber(ARGV[8])
local minimum = tonumber(ARGV[9])
local state = redis.call('HGET', KEYS[1], 'state') or 'closed'
local function clear_ratio()
  for i = 0, 9 do redis.call('HDEL', KEYS[1], 'r'..i..'n', 'r'..i..'c', 'r'..i..'f') end
end
if probe and state == 'half' then
  if kind == 'ok' then
    redis.call('HSET', KEYS[1], 'state', 'closed', 'probes', 0)
    redis.call('DEL', KEYS[2])
    clear_ratio()
    return 'closed'
  end
  if kind == 'fail' then
    redis.call('HSET', KEYS[1], 'state', 'open', 'until', now + open_ms, 'probes', 0)
    return 'open'
  end
  local p = tonumber(redis.call('HGET', KEYS[1], 'probes') or '0')
  if p > 0 then redis.call('HSET', KEYS[1], 'probes', p - 1) end
  return state
end
if probe or state ~= 'closed' or kind == 'neutral' then return state end
local opened = false
if kind == 'fail' and threshold > 0 then
  redis.call('ZADD', KEYS[2], now, now .. ':' .. ARGV[7])
  redis.call('ZREMRANGEBYSCORE', KEYS[2], '-inf', now - window)
  redis.call('PEXPIRE', KEYS[2], window)
  if redis.call('ZCARD', KEYS[2]) >= threshold then opened = true end
end
if ratio > 0 then
  local width = math.max(1, math.floor(window / 10))
  local n = math.floor(now / width)
  local slot = n % 10
  if tonumber(redis.call('HGET', KEYS[1], 'r'..slot..'n') or '-1') ~= n then
    redis.call('HSET', KEYS[1], 'r'..slot..'n', n, 'r'..slot..'c', 0, 'r'..slot..'f', 0)
  end
  redis.call('HINCRBY', KEYS[1], 'r'..slot..'c', 1)
  if kind == 'fail' then redis.call('HINCRBY', KEYS[1], 'r'..slot..'f', 1) end
  local calls, failed = 0, 0
  for i = 0, 9 do
    local b = redis.call('HMGET', KEYS[1], 'r'..i..'n', 'r'..i..'c', 'r'..i..'f')
    local bn = tonumber(b[1])
    if bn and bn <= n and bn > n - 10 then
      calls = calls + tonumber(b[2])
      failed = failed + tonumber(b[3])
    end
  end
  if kind == 'fail' and calls >= minimum and failed >= ratio * calls then opened = true end
end
if opened then
  redis.call('HSET', KEYS[1], 'state', 'open', 'until', now + open_ms, 'probes', 0)
  redis.call('DEL', KEYS[2])
  clear_ratio()
  return 'open'
end
return state
end
local state = record()
-- A breaker nobody records for ten minutes past its open time is forgotten
-- (a key per origin would otherwise pile up); one isolated by hand is kept.
if state ~= 'isolated' then
  redis.call('PEXPIRE', KEYS[1], tonumber(ARGV[6]) + 600000)
end
return state
"#;

/// A retry from the cluster's budget (`axon_core::policy::budget`'s rules).
/// ARGV: now, calls made since the replica last asked, ratio, min per second.
/// Ten one-second buckets (`s<i>` second, `c<i>` calls, `r<i>` retries) and a
/// token bucket (`tokens`, `refilled`) in one hash per tool. Returns 1 when
/// granted.
const WITHDRAW: &str = r#"
local now = tonumber(ARGV[1])
local calls_new = tonumber(ARGV[2])
local ratio = tonumber(ARGV[3])
local min_per_sec = tonumber(ARGV[4])
local sec = math.floor(now / 1000)
local slot = sec % 10
if tonumber(redis.call('HGET', KEYS[1], 's'..slot) or '-1') ~= sec then
  redis.call('HSET', KEYS[1], 's'..slot, sec, 'c'..slot, 0, 'r'..slot, 0)
end
if calls_new > 0 then redis.call('HINCRBY', KEYS[1], 'c'..slot, calls_new) end
local calls, retries = 0, 0
for i = 0, 9 do
  local b = redis.call('HMGET', KEYS[1], 's'..i, 'c'..i, 'r'..i)
  local bs = tonumber(b[1])
  if bs and bs <= sec and sec - bs < 10 then
    calls = calls + tonumber(b[2])
    retries = retries + tonumber(b[3])
  end
end
local allowed = math.max(ratio * calls, min_per_sec * 10)
local rate = allowed / 10
local cap = math.max(rate, 1)
local t = redis.call('HMGET', KEYS[1], 'tokens', 'refilled')
local tokens = tonumber(t[1])
local refilled = tonumber(t[2]) or now
if tokens == nil then tokens = cap end
tokens = math.min(tokens + rate * math.max(0, now - refilled) / 1000, cap)
local granted = 0
if retries < math.floor(allowed) and tokens >= 1 then
  tokens = tokens - 1
  redis.call('HINCRBY', KEYS[1], 'r'..slot, 1)
  granted = 1
end
redis.call('HSET', KEYS[1], 'tokens', tostring(tokens), 'refilled', now)
redis.call('PEXPIRE', KEYS[1], 20000)
return granted
"#;

/// Let go of a flight only if this client still holds it (its lease may have
/// run out and another replica taken it).
const END_FLIGHT: &str = r#"
if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('DEL', KEYS[1]) end
return 0
"#;

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

impl RedisShared {
    /// Connect to `config.redis_url` (and check it answers). An error names
    /// the target: a Redis that cannot be reached at start-up is a
    /// configuration error, not something to degrade from.
    pub async fn connect(config: &SharedConfig) -> Result<Self, String> {
        Self::connect_with_clock(config, wall_clock()).await
    }

    /// [`RedisShared::connect`] with the clock the breaker's windows use
    /// (tests turn it by hand).
    pub async fn connect_with_clock(config: &SharedConfig, clock: Clock) -> Result<Self, String> {
        let target = redacted(&config.redis_url);
        let client = redis::Client::open(config.redis_url.as_str())
            .map_err(|e| format!("shared.redis_url {target}: {e}"))?;
        let settings = ConnectionManagerConfig::new()
            .set_connection_timeout(Some(Duration::from_millis(500)))
            .set_response_timeout(Some(config.timeout))
            .set_number_of_retries(1);
        let connect = client.get_connection_manager_with_config(settings);
        let mut conn = tokio::time::timeout(Duration::from_secs(2), connect)
            .await
            .map_err(|_| format!("Redis at {target} did not answer in 2 s"))?
            .map_err(|e| format!("Redis at {target}: {e}"))?;
        let _: String = redis::cmd("PING")
            .query_async(&mut conn)
            .await
            .map_err(|e| format!("Redis at {target}: {e}"))?;
        Ok(RedisShared {
            conn,
            prefix: config.key_prefix.clone(),
            target,
            timeout: config.timeout,
            admit: redis::Script::new(ADMIT),
            record: redis::Script::new(RECORD),
            withdraw: redis::Script::new(WITHDRAW),
            end_flight: redis::Script::new(END_FLIGHT),
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

    fn keys(&self, tool: &str) -> (String, String) {
        let base = format!("{}breaker:{{{tool}}}", self.prefix);
        let failures = format!("{base}:f");
        (base, failures)
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

#[async_trait]
impl SharedBreakers for RedisShared {
    async fn admit(
        &self,
        tool: &str,
        policy: &BreakerPolicy,
        rate_per_sec: f64,
    ) -> Result<SharedAdmit, SharedUnavailable> {
        let (key, _) = self.keys(tool);
        let rate_key = format!("{}rate:{{{tool}}}", self.prefix);
        // As the local limiter: one attempt every 1/rate, a burst of one
        // second's worth.
        let (interval_ms, burst) = if rate_per_sec > 0.0 {
            (1000.0 / rate_per_sec, rate_per_sec.floor().max(1.0))
        } else {
            (0.0, 1.0)
        };
        let mut conn = self.conn.clone();
        let mut call = self.admit.key(&key);
        call.key(&rate_key)
            .arg((self.clock)())
            .arg(policy.half_open_max_calls.max(1))
            .arg(policy.open_ms)
            .arg(u8::from(policy.enabled()))
            .arg(interval_ms)
            .arg(burst);
        let (verdict, value, wait): (i64, i64, i64) =
            self.run(call.invoke_async(&mut conn)).await?;
        Ok(match verdict {
            0 => SharedAdmit::Pass {
                probe: value == 1,
                wait: Duration::from_millis(wait.max(0) as u64),
            },
            2 => SharedAdmit::Isolated,
            _ => SharedAdmit::Open {
                retry_after: u64::try_from(value).ok().map(Duration::from_millis),
            },
        })
    }

    async fn record(
        &self,
        tool: &str,
        probe: bool,
        outcome: SharedOutcome,
        policy: &BreakerPolicy,
    ) -> Result<(), SharedUnavailable> {
        let (key, failures) = self.keys(tool);
        let kind = match outcome {
            SharedOutcome::Success => "ok",
            SharedOutcome::Failure => "fail",
            SharedOutcome::Neutral => "neutral",
        };
        let id = self.ids.fetch_add(1, Ordering::Relaxed);
        let unique = format!("{}-{id}", self.nonce);
        let mut conn = self.conn.clone();
        let mut call = self.record.key(&key);
        call.key(&failures)
            .arg((self.clock)())
            .arg(kind)
            .arg(u8::from(probe))
            .arg(policy.failure_threshold)
            .arg(policy.window_ms)
            .arg(policy.open_ms)
            .arg(unique)
            .arg(policy.failure_ratio)
            .arg(policy.minimum_throughput);
        let _: String = self.run(call.invoke_async(&mut conn)).await?;
        Ok(())
    }

    async fn state(&self, tool: &str) -> Result<BreakerState, SharedUnavailable> {
        let (key, _) = self.keys(tool);
        let mut conn = self.conn.clone();
        let now = (self.clock)();
        let mut cmd = redis::cmd("HMGET");
        cmd.arg(&key).arg("state").arg("until");
        let (state, until): (Option<String>, Option<u64>) =
            self.run(cmd.query_async(&mut conn)).await?;
        Ok(match state.as_deref() {
            Some("open") if until.is_some_and(|u| now < u) => BreakerState::Open,
            Some("open") | Some("half") => BreakerState::HalfOpen,
            Some("isolated") => BreakerState::Isolated,
            _ => BreakerState::Closed,
        })
    }

    async fn reset(&self, tool: &str) -> Result<(), SharedUnavailable> {
        let (key, failures) = self.keys(tool);
        let mut conn = self.conn.clone();
        let mut cmd = redis::cmd("DEL");
        cmd.arg(&key).arg(&failures);
        let _: i64 = self.run(cmd.query_async(&mut conn)).await?;
        Ok(())
    }

    async fn withdraw_retry(
        &self,
        tool: &str,
        calls: u64,
        ratio: f64,
        min_per_sec: f64,
    ) -> Result<bool, SharedUnavailable> {
        let key = format!("{}budget:{{{tool}}}", self.prefix);
        let mut conn = self.conn.clone();
        let mut call = self.withdraw.key(&key);
        call.arg((self.clock)())
            .arg(calls)
            .arg(ratio)
            .arg(min_per_sec);
        let granted: i64 = self.run(call.invoke_async(&mut conn)).await?;
        Ok(granted == 1)
    }

    async fn isolate(&self, tool: &str) -> Result<(), SharedUnavailable> {
        let (key, _) = self.keys(tool);
        let mut conn = self.conn.clone();
        let mut cmd = redis::cmd("HSET");
        cmd.arg(&key).arg("state").arg("isolated");
        let _: i64 = self.run(cmd.query_async(&mut conn)).await?;
        Ok(())
    }
}

/// The cluster's response cache: one string key per entry
/// (`<prefix>cache:<tool>:<digest>`, the entry as JSON, expiring when its
/// stale window ends) and one per call in flight (`<prefix>flight:…`, this
/// client's nonce, expiring after the lease). A cached response lives in Redis
/// as the tool returned it: cache only tools whose answers may be kept there.
#[async_trait]
impl SharedCache for RedisShared {
    fn now_ms(&self) -> u64 {
        (self.clock)()
    }

    async fn get(&self, key: &str) -> Result<Option<SharedResponse>, SharedUnavailable> {
        let mut conn = self.conn.clone();
        let mut cmd = redis::cmd("GET");
        cmd.arg(format!("{}cache:{key}", self.prefix));
        let found: Option<String> = self.run(cmd.query_async(&mut conn)).await?;
        // An entry this version cannot read is a miss.
        Ok(found.and_then(|json| serde_json::from_str(&json).ok()))
    }

    async fn put(&self, key: &str, response: &SharedResponse) -> Result<(), SharedUnavailable> {
        let keep = response.stale_until_ms.saturating_sub((self.clock)());
        let Ok(json) = serde_json::to_string(response) else {
            return Ok(());
        };
        if keep == 0 {
            return Ok(());
        }
        let mut conn = self.conn.clone();
        let mut cmd = redis::cmd("SET");
        cmd.arg(format!("{}cache:{key}", self.prefix))
            .arg(json)
            .arg("PX")
            .arg(keep);
        let _: () = self.run(cmd.query_async(&mut conn)).await?;
        Ok(())
    }

    async fn take_flight(&self, key: &str, lease: Duration) -> Result<bool, SharedUnavailable> {
        let mut conn = self.conn.clone();
        let mut cmd = redis::cmd("SET");
        cmd.arg(format!("{}flight:{key}", self.prefix))
            .arg(&self.nonce)
            .arg("NX")
            .arg("PX")
            .arg(lease.as_millis().max(1) as u64);
        let taken: Option<String> = self.run(cmd.query_async(&mut conn)).await?;
        Ok(taken.is_some())
    }

    async fn end_flight(&self, key: &str) -> Result<(), SharedUnavailable> {
        let mut conn = self.conn.clone();
        let mut call = self.end_flight.key(format!("{}flight:{key}", self.prefix));
        call.arg(&self.nonce);
        let _: i64 = self.run(call.invoke_async(&mut conn)).await?;
        Ok(())
    }
}
