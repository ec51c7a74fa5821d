//! The cluster's half of the breaker: what a store outside the process
//! (Redis, in `axon-redis`) implements so that every replica sees one breaker
//! per dependency.

use std::time::Duration;

use serde_json::Value;

use super::options::BreakerPolicy;
use super::state::BreakerState;
use crate::error::ToolError;

/// What the shared breaker says to an attempt.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SharedAdmit {
    /// Go ahead (`probe`: as one of the half-open breaker's probes), after
    /// `wait`.
    Pass {
        /// A half-open probe, whose outcome must be reported.
        probe: bool,
        /// How long to wait first for the attempt's place in the cluster's
        /// rate limit (zero without one).
        wait: Duration,
    },
    /// Open: rejected, with the time until probes when known.
    Open {
        /// Until the next probe.
        retry_after: Option<Duration>,
    },
    /// Opened by hand, until reset.
    Isolated,
}

/// An attempt's outcome as a breaker counts it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SharedOutcome {
    /// It answered.
    Success,
    /// It failed in a way that says the dependency is unhealthy.
    Failure,
    /// It failed in a way that says nothing about the dependency.
    Neutral,
}

impl SharedOutcome {
    /// How `outcome` counts.
    pub fn of(outcome: &Result<Value, ToolError>) -> Self {
        match outcome {
            Ok(_) => SharedOutcome::Success,
            Err(e) if e.kind.counts_for_breaker() => SharedOutcome::Failure,
            Err(_) => SharedOutcome::Neutral,
        }
    }
}

/// The shared state did not answer (in time): decide on the local breaker.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SharedUnavailable;

/// Breakers kept outside the process, with the same state machine as
/// [`Breaker`](super::Breaker), so that every replica of a cluster sees one breaker per tool:
/// the threshold-th failure in the window opens it everywhere, and
/// `half_open_max_calls` probes go out across the cluster. An implementation
/// answers fast or not at all ([`SharedUnavailable`]): the executor then
/// decides locally, so a slow store never fails a call.
///
/// The admission also reserves the attempt's place in the tool's cluster-wide
/// rate limit (`limits.rate_per_sec`), in the same round trip, so that N
/// replicas together make `rate_per_sec` attempts a second, not N times as
/// many: the rate limit is not a trait of its own because one round trip
/// per call on the happy path is the point (docs/scaling.md). The retry
/// budget is ([`SharedBudget`](crate::policy::retry::budget::SharedBudget)).
#[async_trait::async_trait]
pub trait SharedBreakers: Send + Sync + 'static {
    /// Ask to make an attempt at `tool`: through its breaker when `policy` is
    /// enabled, and with `rate_per_sec` > 0 taking a place in its rate limit
    /// (GCRA, a burst of one second's worth, as the local limiter):
    /// [`SharedAdmit::Pass`]'s `wait` is how long until that place.
    async fn admit(
        &self,
        tool: &str,
        policy: &BreakerPolicy,
        rate_per_sec: f64,
    ) -> Result<SharedAdmit, SharedUnavailable>;
    /// Report an attempt's outcome (the executor sends failures and probes,
    /// and successes only when the ratio rule is on: otherwise a success
    /// outside half-open changes nothing and is not sent).
    async fn record(
        &self,
        tool: &str,
        probe: bool,
        outcome: SharedOutcome,
        policy: &BreakerPolicy,
    ) -> Result<(), SharedUnavailable>;
    /// The state now.
    async fn state(&self, tool: &str) -> Result<BreakerState, SharedUnavailable>;
    /// Close it by hand and forget past failures.
    async fn reset(&self, tool: &str) -> Result<(), SharedUnavailable>;
    /// Open it by hand until reset.
    async fn isolate(&self, tool: &str) -> Result<(), SharedUnavailable>;
}
