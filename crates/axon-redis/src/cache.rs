//! The cluster's response cache and single-flight in Redis: entries with
//! their expiry, and a flight lease per key that only its holder lets go of.

use std::time::Duration;

use async_trait::async_trait;
use axon_core::policy::breaker::SharedUnavailable;
use axon_core::policy::cache::{SharedCache, SharedResponse};

use crate::RedisShared;

/// Let go of a flight only if this client still holds it (its lease may have
/// run out and another replica taken it).
pub(crate) const END_FLIGHT: &str = r#"
if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('DEL', KEYS[1]) end
return 0
"#;

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
