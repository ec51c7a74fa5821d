//! A breaker's options (`[defaults.breaker]`, `[tools.<name>.breaker]`) and
//! their checks.

use serde::{Deserialize, Serialize};

use crate::policy::PolicyError;

/// Breaker options (`[defaults.breaker]`).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct BreakerPolicy {
    /// Failures within the window that open the breaker; 0 = no count rule
    /// (and no breaker unless `failure_ratio` is set). Default 5.
    pub failure_threshold: u32,
    /// The sliding window, ms: 1 ms to a day. Default 60 000.
    pub window_ms: u64,
    /// How long it stays open before letting probes through, ms; at most a day.
    /// Default 30 000.
    pub open_ms: u64,
    /// Probes allowed at once while half-open, ≥ 1. Default 1.
    pub half_open_max_calls: u32,
    /// The ratio rule (as Polly's and resilience4j's): the share of failed
    /// calls within the window that opens the breaker, once the window holds
    /// `minimum_throughput` calls; 0 = off (default), else at most 1.
    pub failure_ratio: f64,
    /// Calls the window must hold before the ratio rule may open it, ≥ 1.
    /// Default 10.
    pub minimum_throughput: u32,
}

impl Default for BreakerPolicy {
    fn default() -> Self {
        BreakerPolicy {
            failure_threshold: 5,
            window_ms: 60_000,
            open_ms: 30_000,
            half_open_max_calls: 1,
            failure_ratio: 0.0,
            minimum_throughput: 10,
        }
    }
}

impl BreakerPolicy {
    /// Whether there is a breaker at all (a count or a ratio rule).
    pub fn enabled(&self) -> bool {
        self.failure_threshold > 0 || self.failure_ratio > 0.0
    }

    pub(crate) fn check(&self) -> Result<(), PolicyError> {
        if !(0.0..=1.0).contains(&self.failure_ratio) {
            return Err(PolicyError::new(
                "breaker.failure_ratio",
                "must be between 0 (off) and 1",
            ));
        }
        if self.failure_ratio > 0.0 && self.minimum_throughput == 0 {
            return Err(PolicyError::new(
                "breaker.minimum_throughput",
                "must be at least 1 (the calls the ratio is measured over)",
            ));
        }
        if !self.enabled() {
            return Ok(());
        }
        if self.window_ms == 0 {
            return Err(PolicyError::new(
                "breaker.window_ms",
                "must be at least 1 (set failure_threshold = 0 to turn the breaker off)",
            ));
        }
        if self.half_open_max_calls == 0 {
            return Err(PolicyError::new(
                "breaker.half_open_max_calls",
                "must be at least 1 (a half-open breaker lets probes through)",
            ));
        }
        crate::policy::at_most(
            "breaker.window_ms",
            self.window_ms,
            crate::policy::MAX_DURATION_MS,
        )?;
        crate::policy::at_most(
            "breaker.open_ms",
            self.open_ms,
            crate::policy::MAX_DURATION_MS,
        )?;
        Ok(())
    }
}
