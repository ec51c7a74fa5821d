//! The cluster's circuit breaker and rate limit in Redis: two Lua scripts,
//! admit (the breaker's leave and the attempt's place in the rate limit, in
//! one round trip) and record (an outcome). One breaker hash and one failure
//! set per dependency key (`breaker:{<tool> <key>}`), in one hash slot.

use std::sync::atomic::Ordering;
use std::time::Duration;

use async_trait::async_trait;
use axon_core::policy::breaker::{
    BreakerPolicy, BreakerState, SharedAdmit, SharedBreakers, SharedOutcome, SharedUnavailable,
};

use crate::RedisShared;

/// Admission: `{verdict, value, wait}`. verdict 0 = pass (value 1 when a
/// probe; `wait` ms until the attempt's place in the rate limit), 1 = open
/// (value = ms until probes, or -1), 2 = isolated. ARGV: now, half_open_max,
/// open_ms, breaker on (0|1), the rate limit's interval ms (0 = none), its
/// burst. The rate limit is GCRA over one key per tool (`KEYS[2]`: the
/// theoretical arrival time): an attempt is placed at the earliest time the
/// rate allows and told how long to wait for it, so waiting callers queue, as
/// with the local limiter. An attempt the breaker refuses takes no place.
pub(crate) const ADMIT: &str = r#"
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
pub(crate) const RECORD: &str = r#"
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

impl RedisShared {
    pub(crate) fn keys(&self, tool: &str) -> (String, String) {
        let base = format!("{}breaker:{{{tool}}}", self.prefix);
        let failures = format!("{base}:f");
        (base, failures)
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

    async fn isolate(&self, tool: &str) -> Result<(), SharedUnavailable> {
        let (key, _) = self.keys(tool);
        let mut conn = self.conn.clone();
        let mut cmd = redis::cmd("HSET");
        cmd.arg(&key).arg("state").arg("isolated");
        let _: i64 = self.run(cmd.query_async(&mut conn)).await?;
        Ok(())
    }
}
