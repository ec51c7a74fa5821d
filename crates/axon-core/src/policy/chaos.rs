//! Chaos for agents' tests (Polly's Simmy, agentgateway's fault injection): a
//! tool configured with `[tools.<name>.chaos]` gets extra latency and injected
//! faults before it runs, so an agent's retry and fallback paths can be
//! exercised on purpose. Off by default; set only in the tool's configuration
//! (never per call: injected faults open the shared breaker); every injection is
//! reported in the call's provenance (`provenance.chaos`), so no one mistakes an
//! injected failure for a real one.

use std::sync::Mutex;
use std::time::Duration;

use serde::{Deserialize, Serialize};

use crate::error::{ErrorKind, ToolError};
use crate::policy::PolicyError;

/// `[tools.<name>.chaos]`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct ChaosPolicy {
    /// Latency added to every attempt, ms (within the attempt's timeout). Default 0.
    pub latency_ms: u64,
    /// Share of attempts that fail with `fault_kind`, 0 to 1. Default 0.
    pub fault_rate: f64,
    /// The error kind of an injected fault. Default `transient`.
    pub fault_kind: ErrorKind,
    /// Seed of the fault dice, for repeatable tests; 0 picks one at random. Default 0.
    pub seed: u64,
}

impl Default for ChaosPolicy {
    fn default() -> Self {
        ChaosPolicy {
            latency_ms: 0,
            fault_rate: 0.0,
            fault_kind: ErrorKind::Transient,
            seed: 0,
        }
    }
}

impl ChaosPolicy {
    /// Whether anything is injected.
    pub fn enabled(&self) -> bool {
        self.latency_ms > 0 || self.fault_rate > 0.0
    }

    pub(crate) fn check(&self) -> Result<(), PolicyError> {
        if !(0.0..=1.0).contains(&self.fault_rate) {
            return Err(PolicyError::new(
                "chaos.fault_rate",
                "must be between 0 and 1",
            ));
        }
        super::at_most("chaos.latency_ms", self.latency_ms, super::MAX_DURATION_MS)
    }
}

/// The dice of one tool's chaos, seeded once.
pub struct ChaosDice {
    rng: Mutex<fastrand::Rng>,
}

impl ChaosDice {
    /// Dice seeded with `seed` (0: at random).
    pub fn new(seed: u64) -> Self {
        let rng = if seed == 0 {
            fastrand::Rng::new()
        } else {
            fastrand::Rng::with_seed(seed)
        };
        ChaosDice {
            rng: Mutex::new(rng),
        }
    }

    fn roll(&self) -> f64 {
        self.rng.lock().map(|mut r| r.f64()).unwrap_or(1.0)
    }
}

impl std::fmt::Debug for ChaosDice {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("ChaosDice")
    }
}

/// Inject before attempt `attempt` runs: sleep the latency, then perhaps fail.
/// `note` hears what was injected, for the provenance.
pub async fn inject(
    policy: &ChaosPolicy,
    dice: &ChaosDice,
    attempt: u32,
    note: impl Fn(String),
) -> Result<(), ToolError> {
    if policy.latency_ms > 0 {
        note(format!(
            "attempt {attempt}: {} ms latency injected",
            policy.latency_ms
        ));
        tokio::time::sleep(Duration::from_millis(policy.latency_ms)).await;
    }
    if policy.fault_rate > 0.0 && dice.roll() < policy.fault_rate {
        note(format!(
            "attempt {attempt}: {} fault injected",
            policy.fault_kind
        ));
        return Err(ToolError::new(
            policy.fault_kind,
            format!(
                "chaos: {} injected by [tools.<name>.chaos]",
                policy.fault_kind
            ),
        )
        .with_code("chaos"));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test(start_paused = true)]
    async fn faults_follow_the_rate_and_the_seed() {
        let policy = ChaosPolicy {
            fault_rate: 0.3,
            seed: 9,
            ..ChaosPolicy::default()
        };
        let dice = ChaosDice::new(9);
        let mut faults = 0;
        for n in 0..1000 {
            if inject(&policy, &dice, n, |_| {}).await.is_err() {
                faults += 1;
            }
        }
        assert!((250..350).contains(&faults), "{faults}");
        let again = ChaosDice::new(9);
        let first: Vec<bool> = futures::future::join_all((0..20).map(|n| {
            let (p, d) = (&policy, &again);
            async move { inject(p, d, n, |_| {}).await.is_err() }
        }))
        .await;
        let dice = ChaosDice::new(9);
        let second: Vec<bool> = futures::future::join_all((0..20).map(|n| {
            let (p, d) = (&policy, &dice);
            async move { inject(p, d, n, |_| {}).await.is_err() }
        }))
        .await;
        assert_eq!(first, second, "the same seed, the same faults");
    }
}
