//! Policies: the options of each resilience strategy, one file or folder each
//! (`retry/` and `breaker/` hold their helpers and shared halves), and the
//! [`Policy`] that gathers them. Options are plain data with serde and documented
//! defaults; the same keys appear in `axon.toml` (`[defaults]`, `[tools.<name>]`), in
//! a plan (`defaults:`, a step's `policy:`) and in an API call (`policy`). Layers are
//! merged key by key, the most specific last ([`Policy::layered`]).
//!
//! The order in which the policies run is written once, in
//! `Executor::pipeline` (`executor/pipeline.rs`).

pub mod adaptive;
pub mod breaker;
pub mod cache;
pub mod chaos;
pub mod dependency;
pub mod fallback;
pub mod hedge;
pub mod limit;
pub mod result_budget;
pub mod result_validation;
pub mod retry;
pub mod timeout;

use std::time::Duration;

use serde::{Deserialize, Serialize};
use serde_json::Value;

pub use crate::approval::Approval;

pub use adaptive::{AdaptivePolicy, Estimate, LatencySketch, Millis};
pub use breaker::{Breaker, BreakerPolicy, BreakerState};
pub use cache::{CachePolicy, ResponseCache};
pub use chaos::ChaosPolicy;
pub use dependency::{Dependency, KeyPolicy};
pub use hedge::HedgePolicy;
pub use limit::{LimitPolicy, Limits};
pub use result_budget::{CutUnit, ResultCut};
pub use retry::RetryPolicy;
pub use retry::backoff::{Backoff, Jitter};
pub use retry::budget::RetryBudget;

/// Every policy key for one call, with the defaults in docs/design.md, "Policy configuration".
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct Policy {
    /// Hard timeout per attempt, ms: 1 ms to a day, or `"auto"` (chosen from the
    /// tool's observed latency, see `adaptive`). Default 30 000.
    pub timeout_ms: Millis,
    /// Soft timeout per attempt, ms: raises a `slow` event. 0 = off (the default).
    pub soft_timeout_ms: u64,
    /// Budget across all attempts and backoff, ms. 0 = off (the default).
    pub deadline_ms: u64,
    /// A call that takes longer than this (ms) logs a slow warning. 0 = off.
    /// Default 5 000.
    pub slow_warn_ms: u64,
    /// Overrides the tool's idempotency annotation (`false` stops retries after
    /// outcomes that may have had side effects, and hedging). Default: unset.
    pub idempotent: Option<bool>,
    /// Retries, backoff, jitter and the retry budget.
    pub retry: RetryPolicy,
    /// The circuit breaker.
    pub breaker: BreakerPolicy,
    /// The response cache.
    pub cache: CachePolicy,
    /// Rate limit and concurrency limit per tool.
    pub limits: LimitPolicy,
    /// Hedged attempts for idempotent tools.
    pub hedge: HedgePolicy,
    /// Latency and faults injected for tests (off by default; tool config only).
    pub chaos: ChaosPolicy,
    /// How `"auto"` values are chosen from observed latency.
    pub adaptive: AdaptivePolicy,
    /// Which dependency the breaker, limits, retry budget and latency are
    /// kept for: `"tool"`, `"origin"`, `"server"` or `"${args.<name>}"`
    /// (see `key`). Default: unset, what the tool reaches by default.
    pub key: Option<KeyPolicy>,
    /// The most tokens a model reads of one result (estimated,
    /// policy/result_budget.rs): a result over it is cut at a structural
    /// boundary and says how to get the rest. 0 = no bound. Default: unset,
    /// which is no bound except where a front end that hands results to a
    /// model sets one (`axon mcp`: 25 000).
    pub max_result_tokens: Option<u32>,
    /// Whether a call waits for a person before its first attempt
    /// (crate::approval): `"never"` (the default), `"auto"` (tools annotated
    /// destructive, or neither read-only nor idempotent) or `"required"`.
    pub approval: Approval,
    /// How long a call waits for its approval before it fails
    /// `approval_timeout`, ms (1 ms to a week). Default 3 600 000 (an hour).
    pub approval_timeout_ms: u64,
}

impl Default for Policy {
    fn default() -> Self {
        Policy {
            timeout_ms: Millis::Fixed(30_000),
            soft_timeout_ms: 0,
            deadline_ms: 0,
            slow_warn_ms: 5_000,
            idempotent: None,
            retry: RetryPolicy::default(),
            breaker: BreakerPolicy::default(),
            cache: CachePolicy::default(),
            limits: LimitPolicy::default(),
            hedge: HedgePolicy::default(),
            chaos: ChaosPolicy::default(),
            adaptive: AdaptivePolicy::default(),
            key: None,
            max_result_tokens: None,
            approval: Approval::Never,
            approval_timeout_ms: 3_600_000,
        }
    }
}

/// A policy key with a bad value or an unknown name. `key` is the dotted path
/// (`retry.max_attempts`).
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("policy: {key}: {message}")]
pub struct PolicyError {
    /// Dotted path of the key.
    pub key: String,
    /// What is wrong with it.
    pub message: String,
}

impl PolicyError {
    pub(crate) fn new(key: &str, message: impl Into<String>) -> Self {
        PolicyError {
            key: key.into(),
            message: message.into(),
        }
    }

    /// The key as a JSON pointer into the policy object (`retry.max_attempts` →
    /// `/retry/max_attempts`; `""` for the policy as a whole).
    pub fn pointer(&self) -> String {
        if self.key.is_empty() {
            String::new()
        } else {
            format!("/{}", self.key.replace('.', "/"))
        }
    }
}

impl Policy {
    /// Merge layers of policy JSON over the defaults, most specific last, and check
    /// the result. A layer is an object with any subset of the keys; nested tables
    /// merge key by key, so `{"retry": {"max_attempts": 5}}` keeps the other retry keys.
    pub fn layered<'a>(layers: impl IntoIterator<Item = &'a Value>) -> Result<Policy, PolicyError> {
        Self::default().with_layers(layers)
    }

    /// Merge layers over this policy (see [`Policy::layered`]).
    pub fn with_layers<'a>(
        &self,
        layers: impl IntoIterator<Item = &'a Value>,
    ) -> Result<Policy, PolicyError> {
        let mut merged =
            serde_json::to_value(self).map_err(|e| PolicyError::new("", e.to_string()))?;
        for layer in layers {
            if !layer.is_object() && !layer.is_null() {
                return Err(PolicyError::new("", "a policy must be an object"));
            }
            merge_layer(&mut merged, layer);
        }
        let policy: Policy = serde_path_to_error::deserialize(merged).map_err(|e| {
            let key = e.path().to_string();
            let key = if key == "." { String::new() } else { key };
            // A path that the full policy does not have is a key nobody knows.
            let error = PolicyError::new(&key, e.into_inner().to_string());
            match serde_json::to_value(Policy::default()) {
                Ok(known) if !key.is_empty() && known.pointer(&error.pointer()).is_none() => {
                    PolicyError::new(&key, "unknown policy key")
                }
                _ => error,
            }
        })?;
        policy.check()?;
        Ok(policy)
    }

    /// Check values that serde cannot: ranges and relations between keys. Every
    /// duration has an upper bound, so no value can park a call (or a tool) for
    /// centuries.
    pub fn check(&self) -> Result<(), PolicyError> {
        if let Some(ms) = self.timeout_ms.fixed() {
            if ms == 0 {
                return Err(PolicyError::new("timeout_ms", "must be at least 1"));
            }
            at_most("timeout_ms", ms, MAX_DURATION_MS)?;
        }
        at_most("soft_timeout_ms", self.soft_timeout_ms, MAX_DURATION_MS)?;
        at_most("deadline_ms", self.deadline_ms, MAX_DURATION_MS)?;
        at_most("slow_warn_ms", self.slow_warn_ms, MAX_DURATION_MS)?;
        if self.approval_timeout_ms == 0 {
            return Err(PolicyError::new(
                "approval_timeout_ms",
                "must be at least 1",
            ));
        }
        at_most(
            "approval_timeout_ms",
            self.approval_timeout_ms,
            MAX_APPROVAL_WAIT_MS,
        )?;
        self.retry.check()?;
        self.breaker.check()?;
        self.cache.check()?;
        self.limits.check()?;
        self.hedge.check()?;
        self.chaos.check()?;
        self.adaptive.check()?;
        let bounds = result_budget::MIN_MAX_RESULT_TOKENS..=result_budget::MAX_MAX_RESULT_TOKENS;
        if let Some(n) = self.max_result_tokens.filter(|n| *n != 0)
            && !bounds.contains(&u64::from(n))
        {
            return Err(PolicyError::new(
                "max_result_tokens",
                format!(
                    "must be 0 (no bound) or from {} to {}",
                    bounds.start(),
                    bounds.end()
                ),
            ));
        }
        Ok(())
    }

    /// The hard timeout of an attempt: the fixed `timeout_ms`, or the one chosen
    /// from what `seen` has observed when it is `"auto"`.
    pub fn attempt_timeout(&self, seen: &LatencySketch) -> Duration {
        match self.timeout_ms {
            Millis::Fixed(ms) => Duration::from_millis(ms),
            Millis::Auto => self.adaptive.timeout(seen.estimate()),
        }
    }

    /// When to start a hedge, if hedging is on (and, for `"auto"`, once enough
    /// has been observed).
    pub fn hedge_after(&self, seen: &LatencySketch) -> Option<Duration> {
        if !self.hedge.enabled() {
            return None;
        }
        match self.hedge.after_ms {
            Millis::Fixed(ms) => Some(Duration::from_millis(ms)),
            Millis::Auto => self.adaptive.hedge_after(seen.estimate()),
        }
    }

    /// A per-call layer (an API call's `policy`, a plan's `defaults:` or a step's
    /// `policy:`) shapes that call only. The breaker, the retry budget and the
    /// limits are state shared by every caller of a tool, so one caller may not
    /// reconfigure them (a `breaker.open_ms` of years would shut the tool for
    /// everyone): they belong to the tool's configuration.
    pub fn check_call_layer(layer: &Value) -> Result<(), PolicyError> {
        let Some(map) = layer.as_object() else {
            return Ok(());
        };
        let shared = |key: &str| {
            PolicyError::new(
                key,
                "is shared by every caller of the tool, so it is set in the tool's configuration ([defaults] or [tools.<name>] in axon.toml), not per call",
            )
        };
        for key in ["breaker", "limits", "chaos", "key"] {
            if map.contains_key(key) {
                return Err(shared(key));
            }
        }
        // A caller may ask for approval on its own calls (a plan step that
        // should wait for a person), never waive what the tool requires.
        if let Some(approval) = map.get("approval")
            && approval != "required"
        {
            return Err(PolicyError::new(
                "approval",
                "a call or plan step may only set \"required\": whether a tool may run unapproved is the tool's configuration",
            ));
        }
        if let Some(retry) = map.get("retry").and_then(Value::as_object) {
            for key in ["budget_ratio", "budget_min_per_sec"] {
                if retry.contains_key(key) {
                    return Err(shared(&format!("retry.{key}")));
                }
            }
        }
        Ok(())
    }
}

/// The longest any duration option may be: a day.
pub const MAX_DURATION_MS: u64 = 24 * 3600 * 1000;

/// The longest a call may wait for a person's approval: a week (a person
/// may be away for a weekend).
pub const MAX_APPROVAL_WAIT_MS: u64 = 7 * MAX_DURATION_MS;

/// `Err` naming `key` when `value` exceeds `max` (ms).
pub(crate) fn at_most(key: &str, value: u64, max: u64) -> Result<(), PolicyError> {
    if value > max {
        return Err(PolicyError::new(
            key,
            format!("must be at most {max} ms ({} h)", max / 3_600_000),
        ));
    }
    Ok(())
}

/// Deep-merge one policy layer into another, the way every layer combines
/// (config defaults, a tool's table, a plan's `defaults:`, a step's `policy:`, a
/// call's `policy`): objects merge key by key, anything else replaces. Keys are
/// not checked here: deserializing the merged [`Policy`] rejects unknown ones,
/// naming their path.
pub fn merge_layer(base: &mut Value, layer: &Value) {
    match (base, layer) {
        (Value::Object(base), Value::Object(layer)) => {
            for (key, value) in layer {
                match base.get_mut(key) {
                    Some(slot) => merge_layer(slot, value),
                    None => {
                        base.insert(key.clone(), value.clone());
                    }
                }
            }
        }
        (slot, value) => *slot = value.clone(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn defaults_follow_design_md() {
        let p = Policy::default();
        assert_eq!(p.timeout_ms, Millis::Fixed(30_000));
        assert_eq!(p.retry.max_attempts, 3);
        assert_eq!(p.retry.initial_delay_ms, 500);
        assert_eq!(p.breaker.failure_threshold, 5);
        assert_eq!(p.breaker.open_ms, 30_000);
        assert_eq!(p.cache.ttl_ms, 0);
    }

    #[test]
    fn layers_merge_key_by_key_most_specific_last() {
        let config =
            json!({"timeout_ms": 10_000, "retry": {"max_attempts": 5, "backoff": "linear"}});
        let step = json!({"retry": {"max_attempts": 2}});
        let p = Policy::layered([&config, &step]).unwrap();
        assert_eq!(p.timeout_ms, Millis::Fixed(10_000));
        assert_eq!(p.retry.max_attempts, 2);
        assert_eq!(p.retry.backoff, Backoff::Linear);
        assert_eq!(p.retry.initial_delay_ms, 500);
    }

    #[test]
    fn unknown_keys_are_errors_naming_the_key() {
        let err = Policy::layered([&json!({"retry": {"max_attempt": 5}})]).unwrap_err();
        assert_eq!(err.key, "retry.max_attempt");
    }

    #[test]
    fn durations_are_bounded_and_named() {
        let err = Policy::layered([&json!({"breaker": {"open_ms": 18446744073709551615u64}})])
            .unwrap_err();
        assert_eq!(err.key, "breaker.open_ms");
        let err = Policy::layered([&json!({"timeout_ms": MAX_DURATION_MS + 1})]).unwrap_err();
        assert_eq!(err.key, "timeout_ms");
        let err = Policy::layered([&json!({"retry": {"max_delay_ms": u64::MAX}})]).unwrap_err();
        assert_eq!(err.key, "retry.max_delay_ms");
        let err = Policy::layered([&json!({"breaker": {"window_ms": 0}})]).unwrap_err();
        assert_eq!(err.key, "breaker.window_ms");
        let err = Policy::layered([&json!({"breaker": {"half_open_max_calls": 0}})]).unwrap_err();
        assert_eq!(err.key, "breaker.half_open_max_calls");
    }

    #[test]
    fn a_call_may_not_reconfigure_shared_state() {
        for layer in [
            json!({"breaker": {"failure_threshold": 1}}),
            json!({"limits": {"rate_per_sec": 1000}}),
            json!({"retry": {"budget_ratio": 100}}),
        ] {
            assert!(Policy::check_call_layer(&layer).is_err(), "{layer}");
        }
        let err =
            Policy::check_call_layer(&json!({"retry": {"budget_min_per_sec": 1}})).unwrap_err();
        assert_eq!(err.key, "retry.budget_min_per_sec");
        Policy::check_call_layer(
            &json!({"timeout_ms": 5, "retry": {"max_attempts": 2}, "cache": {"ttl_ms": 10}}),
        )
        .unwrap();
    }

    #[test]
    fn the_result_budget_is_bounded_and_named() {
        for bad in [1, 199, 10_000_001] {
            let err = Policy::layered([&json!({"max_result_tokens": bad})]).unwrap_err();
            assert_eq!(err.key, "max_result_tokens", "{bad}");
        }
        for good in [0, 200, 25_000] {
            let p = Policy::layered([&json!({"max_result_tokens": good})]).unwrap();
            assert_eq!(p.max_result_tokens, Some(good));
        }
        Policy::check_call_layer(&json!({"max_result_tokens": 500})).unwrap();
    }

    #[test]
    fn hedging_is_bounded() {
        let err =
            Policy::layered([&json!({"hedge": {"after_ms": 5, "max_hedges": 11}})]).unwrap_err();
        assert_eq!(err.key, "hedge.max_hedges");
        let err =
            Policy::layered([&json!({"hedge": {"after_ms": MAX_DURATION_MS + 1}})]).unwrap_err();
        assert_eq!(err.key, "hedge.after_ms");
        Policy::layered([&json!({"hedge": {"after_ms": 5, "max_hedges": 10}})]).unwrap();
    }

    #[test]
    fn a_policy_error_points_at_its_key() {
        let err = Policy::layered([&json!({"retry": {"jitter": 3}})]).unwrap_err();
        assert_eq!(
            (err.key.as_str(), err.pointer()),
            ("retry.jitter", "/retry/jitter".into())
        );
        let err = Policy::layered([&json!({"cache": {"ttl_sec": 3}})]).unwrap_err();
        assert_eq!(err.message, "unknown policy key");
        assert_eq!(err.pointer(), "/cache/ttl_sec");
    }

    #[test]
    fn bad_values_are_errors_naming_the_key() {
        let err = Policy::layered([&json!({"retry": {"max_attempts": 0}})]).unwrap_err();
        assert_eq!(err.key, "retry.max_attempts");
        let err = Policy::layered([&json!({"retry": {"backoff": "fibonacci"}})]).unwrap_err();
        assert!(err.message.contains("fibonacci"), "{err}");
    }
}
