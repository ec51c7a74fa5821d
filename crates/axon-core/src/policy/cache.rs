//! The response cache: successful results kept for `ttl_ms`, keyed by
//! `tool + sha256(canonical JSON of the arguments)`. Looked up before the breaker, so
//! a cached answer is served even while the tool is down. Expired
//! entries are kept `stale_if_error_ms` longer and served, marked stale, when a
//! fresh call fails. Identical calls that arrive while one is running share its
//! execution (single-flight) instead of each calling the tool.
//!
//! [`ResponseCache::through`] is the whole of it for one call: lookup →
//! single-flight leader or follower → store → stale-if-error.
//!
//! Freshness is judged on tokio's clock (so tests can pause it); moka only bounds
//! memory (entry count, and dropping entries past their stale window).
//!
//! In a cluster ([`SharedCache`], Redis in `axon-redis`) a local miss asks the
//! cluster's cache before calling the tool (a success cached on replica A is a
//! hit on B), identical calls on different replicas share one execution (a
//! flight lock per key that expires if its holder dies: the others wait for
//! its answer in the cluster's cache), and a failure may be answered by the
//! cluster's stale entry. While the shared cache does not answer, each replica
//! has only its own.

use std::collections::HashMap;
use std::future::Future;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant as StdInstant};

use moka::sync::Cache;
use serde::{Deserialize, Serialize};
use serde_json::Value;
use tokio::sync::watch;
use tokio::time::Instant;
use tokio_util::sync::CancellationToken;

use super::breaker::SharedUnavailable;
use crate::error::{ErrorKind, ToolError};
use crate::outcome::Outcome;
use crate::result::{Provenance, ResponseDigest, Source, Timestamp};

/// Cache options (`[defaults.cache]`).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct CachePolicy {
    /// How long a result stays fresh, ms; at most 30 days. 0 = no caching (the
    /// default).
    pub ttl_ms: u64,
    /// How long after expiry it may still be served when the tool fails, ms; at
    /// most 30 days. Default 0 (never).
    pub stale_if_error_ms: u64,
}

impl CachePolicy {
    pub(crate) fn check(&self) -> Result<(), super::PolicyError> {
        const MONTH_MS: u64 = 30 * 24 * 3600 * 1000;
        super::at_most("cache.ttl_ms", self.ttl_ms, MONTH_MS)?;
        super::at_most("cache.stale_if_error_ms", self.stale_if_error_ms, MONTH_MS)
    }

    /// Whether caching is on.
    pub fn enabled(&self) -> bool {
        self.ttl_ms > 0
    }
}

/// A cached success.
#[derive(Debug)]
pub struct CachedResponse {
    /// The tool's data.
    pub data: Value,
    /// When it was fetched from the tool.
    pub fetched_at: Timestamp,
    /// `sha256:…` of the data.
    pub digest: ResponseDigest,
    fresh_until: Instant,
    stale_until: Instant,
    keep: Duration,
}

impl CachedResponse {
    /// The call's answer from this entry, fresh or (after a failure) stale.
    pub(crate) fn answer(&self, stale: bool) -> Outcome {
        Outcome {
            result: Ok(self.data.clone()),
            attempts: 0,
            reasons: Vec::new(),
            delays_ms: Vec::new(),
            provenance: Provenance {
                source: Source::Cache,
                fetched_at: Some(self.fetched_at),
                cache_hit: true,
                response_digest: Some(self.digest),
                stale,
                chaos: Vec::new(),
                dependency: None,
            },
            answered_at: None,
        }
    }
}

struct KeepFor;

impl moka::Expiry<String, Arc<CachedResponse>> for KeepFor {
    fn expire_after_create(
        &self,
        _: &String,
        value: &Arc<CachedResponse>,
        _: StdInstant,
    ) -> Option<Duration> {
        Some(value.keep)
    }
}

/// A response as the cluster's cache keeps it: freshness in ms since the
/// epoch (the replicas' clocks, NTP-synced), as replicas share no other clock.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct SharedResponse {
    /// The tool's data.
    pub data: Value,
    /// When it was fetched from the tool, ms since the epoch.
    pub fetched_at_ms: u64,
    /// `sha256:…` of the data.
    pub digest: ResponseDigest,
    /// Fresh until then, ms since the epoch.
    pub fresh_until_ms: u64,
    /// Served on a failure until then, ms since the epoch.
    pub stale_until_ms: u64,
}

/// How long a replica's flight lock on a key lasts: a replica that dies while
/// calling the tool holds the others back at most this long.
pub const FLIGHT_LEASE: Duration = Duration::from_secs(30);

/// How often a replica waiting for another's flight looks for its answer.
pub const FLIGHT_POLL: Duration = Duration::from_millis(25);

/// The response cache shared by every replica (see the module docs). Each
/// operation answers fast or not at all ([`SharedUnavailable`]): the call then
/// goes on with the replica's own cache.
#[async_trait::async_trait]
pub trait SharedCache: Send + Sync + 'static {
    /// The clock freshness is judged on, ms since the epoch.
    fn now_ms(&self) -> u64;
    /// The entry under `key`, fresh or stale.
    async fn get(&self, key: &str) -> Result<Option<SharedResponse>, SharedUnavailable>;
    /// Keep `response` under `key` until its `stale_until_ms`.
    async fn put(&self, key: &str, response: &SharedResponse) -> Result<(), SharedUnavailable>;
    /// Take `key`'s flight for `lease`: `Ok(true)` when this replica is to call
    /// the tool, `Ok(false)` when another replica is calling it.
    async fn take_flight(&self, key: &str, lease: Duration) -> Result<bool, SharedUnavailable>;
    /// Let go of a flight this replica took.
    async fn end_flight(&self, key: &str) -> Result<(), SharedUnavailable>;
}

/// What a replica does about a local miss, in a cluster.
enum ClusterFlight {
    /// Another replica's answer (a fresh entry in the cluster's cache).
    Hit(Arc<CachedResponse>),
    /// Call the tool; `true` when this replica holds the key's flight.
    Lead(bool),
    /// The call was cancelled while waiting.
    Cancelled,
}

/// The cache key of a call.
pub fn key(tool: &str, args: &Value) -> String {
    let hex = crate::canonical::Hex::of(crate::canonical::sha256(args));
    let mut key = String::with_capacity(tool.len() + 65);
    key.push_str(tool);
    key.push(':');
    key.push_str(hex.as_str());
    key
}

type FlightValue<T> = Option<Arc<T>>;

/// Keys end in a SHA-256 digest, so a keyed DoS-resistant hash (SipHash) buys
/// nothing and costs a quarter of a cache miss; foldhash is enough.
type Hasher = foldhash::fast::RandomState;

/// Responses of every tool, plus the calls in flight for single-flight.
pub struct ResponseCache<T> {
    entries: Cache<String, Arc<CachedResponse>, Hasher>,
    flights: Mutex<HashMap<String, watch::Receiver<FlightValue<T>>, Hasher>>,
}

impl<T> std::fmt::Debug for ResponseCache<T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ResponseCache")
            .field("entries", &self.entries.entry_count())
            .finish()
    }
}

/// Whether this call runs the tool or waits for an identical one that does.
pub enum Flight<'a, T> {
    /// Run it, then [`Leader::finish`].
    Leader(Leader<'a, T>),
    /// Wait for the leader's outcome.
    Follower(watch::Receiver<FlightValue<T>>),
}

/// The call that runs the tool for everyone waiting on the same key. Dropped
/// without finishing (cancelled), it lets the followers try again themselves.
pub struct Leader<'a, T> {
    cache: &'a ResponseCache<T>,
    key: &'a str,
    tx: Option<watch::Sender<FlightValue<T>>>,
}

impl<T> ResponseCache<T> {
    /// A cache holding at most `max_entries` responses.
    pub fn new(max_entries: u64) -> Self {
        ResponseCache {
            entries: Cache::builder()
                .max_capacity(max_entries)
                .expire_after(KeepFor)
                .build_with_hasher(Hasher::default()),
            flights: Mutex::new(HashMap::default()),
        }
    }

    /// A fresh entry, if there is one.
    pub fn fresh(&self, key: &str) -> Option<Arc<CachedResponse>> {
        self.entries
            .get(key)
            .filter(|e| Instant::now() < e.fresh_until)
    }

    /// An expired entry still inside its stale-if-error window.
    pub fn stale(&self, key: &str) -> Option<Arc<CachedResponse>> {
        self.entries
            .get(key)
            .filter(|e| Instant::now() < e.stale_until)
    }

    /// Keep a success.
    pub fn store(
        &self,
        key: &str,
        policy: &CachePolicy,
        data: Value,
        fetched_at: Timestamp,
        digest: ResponseDigest,
    ) {
        let ttl = Duration::from_millis(policy.ttl_ms);
        let keep = ttl + Duration::from_millis(policy.stale_if_error_ms);
        let now = Instant::now();
        let entry = CachedResponse {
            data,
            fetched_at,
            digest,
            fresh_until: now + ttl,
            stale_until: now + keep,
            keep,
        };
        self.entries.insert(key.to_string(), Arc::new(entry));
    }

    /// Keep an entry of the cluster's cache here, with what is left of its
    /// freshness (`now_ms` on the cluster's clock); `None` when it is past even
    /// its stale window.
    fn adopt(&self, key: &str, shared: SharedResponse, now_ms: u64) -> Option<Arc<CachedResponse>> {
        let left = |until: u64| Duration::from_millis(until.saturating_sub(now_ms));
        let keep = left(shared.stale_until_ms);
        if keep.is_zero() {
            return None;
        }
        let now = Instant::now();
        let entry = Arc::new(CachedResponse {
            data: shared.data,
            fetched_at: Timestamp::from_unix_ms(shared.fetched_at_ms),
            digest: shared.digest,
            fresh_until: now + left(shared.fresh_until_ms),
            stale_until: now + keep,
            keep,
        });
        self.entries.insert(key.to_string(), entry.clone());
        Some(entry)
    }

    /// Forget every entry (tests, operators).
    pub fn clear(&self) {
        self.entries.invalidate_all();
    }

    /// Become the leader for `key`, or follow the call already running it.
    pub fn join<'a>(&'a self, key: &'a str) -> Flight<'a, T> {
        let mut flights = self.flights.lock().unwrap_or_else(|p| p.into_inner());
        if let Some(rx) = flights.get(key) {
            return Flight::Follower(rx.clone());
        }
        let (tx, rx) = watch::channel(None);
        flights.insert(key.to_string(), rx);
        Flight::Leader(Leader {
            cache: self,
            key,
            tx: Some(tx),
        })
    }

    fn leave(&self, key: &str) {
        self.flights
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .remove(key);
    }
}

impl<T> Leader<'_, T> {
    /// Hand the outcome to every follower.
    pub fn finish(mut self, outcome: Arc<T>) {
        self.cache.leave(self.key);
        if let Some(tx) = self.tx.take() {
            let _ = tx.send(Some(outcome));
        }
    }
}

impl<T> Drop for Leader<'_, T> {
    fn drop(&mut self) {
        if self.tx.is_some() {
            self.cache.leave(self.key);
        }
    }
}

impl ResponseCache<Outcome> {
    /// One call through the cache. A fresh entry answers at once. Otherwise the
    /// first of identical concurrent calls (the leader) runs `run` and keeps a
    /// success for `ttl_ms`; the others (followers) wait for its outcome, and run
    /// it themselves only if the leader gave up. A failure, unless cancelled, is
    /// answered by an expired entry still inside `stale_if_error_ms`, marked
    /// stale, with the failed attempts kept.
    pub(crate) async fn through<F, Fut>(
        &self,
        key: &str,
        policy: &CachePolicy,
        cancel: Option<&CancellationToken>,
        shared: Option<&dyn SharedCache>,
        mut run: F,
    ) -> Outcome
    where
        F: FnMut() -> Fut,
        Fut: Future<Output = Outcome>,
    {
        if let Some(hit) = self.fresh(key) {
            return hit.answer(false);
        }
        if let Some(hit) = self.cluster_fresh(shared, key).await {
            return hit.answer(false);
        }
        let outcome = loop {
            match self.join(key) {
                Flight::Leader(leader) => {
                    if let Some(hit) = self.fresh(key) {
                        break hit.answer(false);
                    }
                    let held = match self.cluster_flight(shared, key, cancel).await {
                        ClusterFlight::Hit(hit) => {
                            let outcome = hit.answer(false);
                            leader.finish(Arc::new(outcome.clone()));
                            break outcome;
                        }
                        ClusterFlight::Cancelled => {
                            break Outcome::failed(ToolError::cancelled());
                        }
                        ClusterFlight::Lead(held) => held,
                    };
                    let outcome = run().await;
                    if let (Ok(data), Some(fetched_at), Some(digest)) = (
                        &outcome.result,
                        outcome.provenance.fetched_at,
                        &outcome.provenance.response_digest,
                    ) {
                        self.store(key, policy, data.clone(), fetched_at, *digest);
                        if let Some(shared) = shared {
                            let now = shared.now_ms();
                            let response = SharedResponse {
                                data: data.clone(),
                                fetched_at_ms: fetched_at.unix_ms(),
                                digest: *digest,
                                fresh_until_ms: now + policy.ttl_ms,
                                stale_until_ms: now + policy.ttl_ms + policy.stale_if_error_ms,
                            };
                            let _ = shared.put(key, &response).await;
                        }
                    }
                    if let (true, Some(shared)) = (held, shared) {
                        let _ = shared.end_flight(key).await;
                    }
                    let outcome = Arc::new(outcome);
                    leader.finish(outcome.clone());
                    break Arc::unwrap_or_clone(outcome);
                }
                Flight::Follower(rx) => {
                    tokio::select! {
                        biased;
                        _ = crate::tool::cancelled(cancel) => break Outcome::failed(ToolError::cancelled()),
                        shared = follow(rx) => if let Some(shared) = shared {
                            break (*shared).clone();
                        },
                    }
                }
            }
        };
        let cancelled = matches!(&outcome.result, Err(e) if e.kind == ErrorKind::Cancelled);
        if outcome.result.is_err() && !cancelled && policy.stale_if_error_ms > 0 {
            let stale = match self.stale(key) {
                Some(stale) => Some(stale),
                None => self.cluster_entry(shared, key).await,
            }
            .filter(|e| Instant::now() < e.stale_until);
            if let Some(stale) = stale {
                return Outcome {
                    attempts: outcome.attempts,
                    reasons: outcome.reasons,
                    delays_ms: outcome.delays_ms,
                    ..stale.answer(true)
                };
            }
        }
        outcome
    }

    /// The cluster's entry under `key`, kept here too.
    async fn cluster_entry(
        &self,
        shared: Option<&dyn SharedCache>,
        key: &str,
    ) -> Option<Arc<CachedResponse>> {
        let shared = shared?;
        let found = shared.get(key).await.ok()??;
        self.adopt(key, found, shared.now_ms())
    }

    /// The cluster's entry under `key` if it is fresh.
    async fn cluster_fresh(
        &self,
        shared: Option<&dyn SharedCache>,
        key: &str,
    ) -> Option<Arc<CachedResponse>> {
        self.cluster_entry(shared, key)
            .await
            .filter(|e| Instant::now() < e.fresh_until)
    }

    /// Single-flight across replicas: take the key's flight, or wait for the
    /// replica that holds it to put its answer in the cluster's cache. A
    /// flight that ends without a fresh entry (its call failed, its replica
    /// died and the lease ran out) is taken over by one of the waiters.
    async fn cluster_flight(
        &self,
        shared: Option<&dyn SharedCache>,
        key: &str,
        cancel: Option<&CancellationToken>,
    ) -> ClusterFlight {
        let Some(shared) = shared else {
            return ClusterFlight::Lead(false);
        };
        loop {
            match shared.take_flight(key, FLIGHT_LEASE).await {
                Ok(true) => return ClusterFlight::Lead(true),
                Err(SharedUnavailable) => return ClusterFlight::Lead(false),
                Ok(false) => {}
            }
            tokio::select! {
                biased;
                _ = crate::tool::cancelled(cancel) => return ClusterFlight::Cancelled,
                _ = tokio::time::sleep(FLIGHT_POLL) => {}
            }
            if let Some(hit) = self.cluster_fresh(Some(shared), key).await {
                return ClusterFlight::Hit(hit);
            }
        }
    }
}

/// Wait for a leader's outcome; `None` when the leader gave up without one.
pub async fn follow<T>(mut rx: watch::Receiver<FlightValue<T>>) -> Option<Arc<T>> {
    rx.wait_for(Option::is_some)
        .await
        .ok()
        .and_then(|v| v.clone())
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn the_key_is_the_tool_and_the_digest_of_the_canonical_arguments() {
        let a = key("t", &json!({"x": 1, "y": 2}));
        let b = key("t", &serde_json::from_str(r#"{"y":2,"x":1}"#).unwrap());
        assert_eq!(a, b);
        assert!(a.starts_with("t:") && a.len() == 2 + 64);
        assert_ne!(a, key("u", &json!({"x": 1, "y": 2})));
    }

    #[tokio::test(start_paused = true)]
    async fn entries_go_stale_then_vanish() {
        let cache: ResponseCache<()> = ResponseCache::new(10);
        let p = CachePolicy {
            ttl_ms: 100,
            stale_if_error_ms: 50,
        };
        cache.store(
            "k",
            &p,
            json!(1),
            Timestamp::now(),
            ResponseDigest::of(&json!(1)),
        );
        assert!(cache.fresh("k").is_some());
        tokio::time::advance(Duration::from_millis(120)).await;
        assert!(cache.fresh("k").is_none());
        assert!(cache.stale("k").is_some());
        tokio::time::advance(Duration::from_millis(40)).await;
        assert!(cache.stale("k").is_none());
    }

    #[tokio::test]
    async fn a_dropped_leader_releases_its_followers() {
        let cache: ResponseCache<u32> = ResponseCache::new(10);
        let Flight::Leader(leader) = cache.join("k") else {
            panic!("first is leader")
        };
        let Flight::Follower(rx) = cache.join("k") else {
            panic!("second follows")
        };
        drop(leader);
        assert!(follow(rx).await.is_none());
        assert!(matches!(cache.join("k"), Flight::Leader(_)));
    }
}
