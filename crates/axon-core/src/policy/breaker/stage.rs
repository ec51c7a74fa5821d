//! The breaker as an attempt meets it: admitted by the cluster's breaker
//! while it answers, else by the process's own, and both told how it went.

use std::time::Duration;

use serde_json::Value;

use super::options::BreakerPolicy;
use super::shared::{SharedAdmit, SharedBreakers, SharedOutcome, SharedUnavailable};
use super::state::{Breaker, Permit, open_error};
use crate::error::ToolError;

/// A dependency's breakers: this process's, and the cluster's (named there
/// `name`) when the executor has a shared store.
#[derive(Clone, Copy)]
pub(crate) struct Breakers<'a> {
    pub(crate) local: &'a Breaker,
    pub(crate) shared: Option<(&'a dyn SharedBreakers, &'a str)>,
}

/// Leave to make an attempt: from the cluster's breaker while it answers,
/// else from the process's own.
pub(crate) enum Admission<'a> {
    Local(Permit<'a>),
    Shared { probe: bool },
}

/// The breaker's leave, and the wait for the attempt's place in the cluster's
/// rate limit (`rate_per_sec` > 0) when the shared state gave one (else the
/// local limiter decides). One round trip to the shared state does both.
pub(crate) async fn admit<'a>(
    breakers: Breakers<'a>,
    policy: &BreakerPolicy,
    rate_per_sec: f64,
) -> Result<(Admission<'a>, Option<Duration>), ToolError> {
    let local = breakers.local;
    if (policy.enabled() || rate_per_sec > 0.0)
        && let Some((shared, name)) = breakers.shared
    {
        match shared.admit(name, policy, rate_per_sec).await {
            Ok(SharedAdmit::Pass { probe, wait }) => {
                let wait = (rate_per_sec > 0.0).then_some(wait);
                if policy.enabled() {
                    return Ok((Admission::Shared { probe }, wait));
                }
                return local
                    .admit(policy)
                    .map(|permit| (Admission::Local(permit), wait));
            }
            Ok(SharedAdmit::Open { retry_after }) => {
                return Err(open_error(local.name(), retry_after));
            }
            Ok(SharedAdmit::Isolated) => {
                return Err(open_error(local.name(), None).with_code("isolated"));
            }
            Err(SharedUnavailable) => {}
        }
    }
    local
        .admit(policy)
        .map(|permit| (Admission::Local(permit), None))
}

impl Admission<'_> {
    /// Tell the breaker that admitted the attempt how it went. The local
    /// breaker hears every outcome; the cluster's hears failures and probes
    /// (and successes, for the ratio rule).
    pub(crate) async fn record(
        self,
        breakers: Breakers<'_>,
        outcome: &Result<Value, ToolError>,
        policy: &BreakerPolicy,
    ) {
        match self {
            Admission::Local(permit) => permit.record(outcome, policy),
            Admission::Shared { probe } => {
                breakers.local.observe(outcome, policy);
                let counted = SharedOutcome::of(outcome);
                if let Some((shared, name)) = breakers.shared
                    && (probe
                        || counted == SharedOutcome::Failure
                        || (policy.failure_ratio > 0.0 && counted == SharedOutcome::Success))
                {
                    // Unreachable now: the probe's slot frees itself after open_ms.
                    let _ = shared.record(name, probe, counted, policy).await;
                }
            }
        }
    }
}
