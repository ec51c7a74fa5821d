//! The cluster's retry budget in Redis: one script, a withdrawal that also
//! adds the calls this replica made since it last asked (no round trip on
//! the happy path).

use async_trait::async_trait;
use axon_core::policy::breaker::SharedUnavailable;
use axon_core::policy::retry::budget::SharedBudget;

use crate::RedisShared;

/// A retry from the cluster's budget (`axon_core::policy::retry_budget`'s rules).
/// ARGV: now, calls made since the replica last asked, ratio, min per second.
/// Ten one-second buckets (`s<i>` second, `c<i>` calls, `r<i>` retries) and a
/// token bucket (`tokens`, `refilled`) in one hash per tool. Returns 1 when
/// granted.
pub(crate) const WITHDRAW: &str = r#"
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

#[async_trait]
impl SharedBudget for RedisShared {
    async fn withdraw_retry(
        &self,
        key: &str,
        calls: u64,
        ratio: f64,
        min_per_sec: f64,
    ) -> Result<bool, SharedUnavailable> {
        let budget = format!("{}budget:{{{key}}}", self.prefix);
        let mut conn = self.conn.clone();
        let mut call = self.withdraw.key(&budget);
        call.arg((self.clock)())
            .arg(calls)
            .arg(ratio)
            .arg(min_per_sec);
        let granted: i64 = self.run(call.invoke_async(&mut conn)).await?;
        Ok(granted == 1)
    }
}
