//! Rate limit and bulkhead of one tool: at most `rate_per_sec` attempts per second
//! (governor's GCRA, with a burst of one second's worth) and at most
//! `max_concurrent` attempts at once (a semaphore). Both wait rather than reject —
//! a caller that is early is made to queue — and the wait gives up when the call is
//! cancelled or its deadline passes. Governor runs on tokio's clock here, so limits
//! are testable with a paused clock. In a cluster the rate limit is the
//! cluster's: the shared state (Redis, `axon-redis`) runs the same GCRA for
//! every replica and says how long an attempt waits; the local limiter decides
//! only while it does not answer.

use std::num::NonZeroU32;
use std::ops::Add;
use std::sync::Arc;
use std::time::Duration;

use governor::clock::{Clock, Reference};
use governor::middleware::NoOpMiddleware;
use governor::nanos::Nanos;
use governor::state::{InMemoryState, NotKeyed};
use governor::{Quota, RateLimiter};
use serde::{Deserialize, Serialize};
use tokio::sync::{OwnedSemaphorePermit, Semaphore};
use tokio_util::sync::CancellationToken;

use super::PolicyError;
use super::timeout::Deadline;
use crate::error::{ErrorKind, ToolError};
use crate::tool::{cancelled, is_cancelled};

/// Limit options (`[defaults.limits]`).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct LimitPolicy {
    /// Attempts of this tool running at once. 0 = unlimited (the default).
    pub max_concurrent: u32,
    /// Attempts of this tool per second, ≥ 0. 0 = unlimited (the default).
    pub rate_per_sec: f64,
}

impl Default for LimitPolicy {
    fn default() -> Self {
        LimitPolicy {
            max_concurrent: 0,
            rate_per_sec: 0.0,
        }
    }
}

/// The slowest rate a limit takes: one call in about 11.6 days. A slower
/// one (5e-324 is a finite number ≥ 0) has a period no clock can hold.
pub const MIN_RATE_PER_SEC: f64 = 1e-6;

impl LimitPolicy {
    pub(crate) fn check(&self) -> Result<(), PolicyError> {
        let rate = self.rate_per_sec;
        if !(rate == 0.0 || (rate >= MIN_RATE_PER_SEC && rate.is_finite())) {
            return Err(PolicyError::new(
                "limits.rate_per_sec",
                "must be 0 (no limit) or a number ≥ 0.000001",
            ));
        }
        Ok(())
    }
}

/// An instant of tokio's clock, as governor wants it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub struct TokioInstant(tokio::time::Instant);

impl Add<Nanos> for TokioInstant {
    type Output = Self;
    fn add(self, other: Nanos) -> Self {
        TokioInstant(self.0 + Duration::from(other))
    }
}

impl Reference for TokioInstant {
    fn duration_since(&self, earlier: Self) -> Nanos {
        self.0.saturating_duration_since(earlier.0).into()
    }
    fn saturating_sub(&self, duration: Nanos) -> Self {
        self.0
            .checked_sub(duration.into())
            .map_or(*self, TokioInstant)
    }
}

/// tokio's clock (pausable in tests) as a governor clock.
#[derive(Clone, Copy, Debug, Default)]
pub struct TokioClock;

impl Clock for TokioClock {
    type Instant = TokioInstant;
    fn now(&self) -> TokioInstant {
        TokioInstant(tokio::time::Instant::now())
    }
}

type Limiter = RateLimiter<NotKeyed, InMemoryState, TokioClock, NoOpMiddleware<TokioInstant>>;

/// The limits of one tool.
#[derive(Default)]
pub struct Limits {
    rate: Option<Limiter>,
    rate_per_sec: f64,
    slots: Option<Arc<Semaphore>>,
}

impl std::fmt::Debug for Limits {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Limits")
            .field("rate", &self.rate.is_some())
            .field("slots", &self.slots)
            .finish()
    }
}

/// Held while an attempt runs; frees its concurrency slot when dropped.
pub struct Slot {
    _permit: Option<OwnedSemaphorePermit>,
    waited: bool,
}

impl Slot {
    fn at_once(permit: Option<OwnedSemaphorePermit>) -> Self {
        Slot {
            _permit: permit,
            waited: false,
        }
    }

    /// A slot the attempt had to wait for (its start is read again).
    fn after_wait(permit: Option<OwnedSemaphorePermit>) -> Self {
        Slot {
            _permit: permit,
            waited: true,
        }
    }

    /// Whether the attempt had to wait for it (the rate limit or a full
    /// bulkhead held it up): if not, the attempt starts when it was asked for.
    pub fn waited(&self) -> bool {
        self.waited
    }
}

impl Limits {
    /// Build the limits a policy asks for.
    pub fn new(policy: &LimitPolicy) -> Self {
        let rate = (policy.rate_per_sec > 0.0).then(|| {
            // Checked to be at least MIN_RATE_PER_SEC; a policy built
            // without the check gets the longest period instead of a panic.
            let period = Duration::try_from_secs_f64(1.0 / policy.rate_per_sec)
                .unwrap_or(Duration::from_secs_f64(1.0 / MIN_RATE_PER_SEC));
            let burst = NonZeroU32::new(policy.rate_per_sec.floor().max(1.0) as u32)
                .unwrap_or(NonZeroU32::MIN);
            let quota = Quota::with_period(period)
                .unwrap_or_else(|| Quota::per_second(NonZeroU32::MAX))
                .allow_burst(burst);
            RateLimiter::direct_with_clock(quota, TokioClock)
        });
        let slots = (policy.max_concurrent > 0)
            .then(|| Arc::new(Semaphore::new(policy.max_concurrent as usize)));
        Limits {
            rate,
            rate_per_sec: policy.rate_per_sec.max(0.0),
            slots,
        }
    }

    /// The rate limit, attempts a second (0 = none).
    pub fn rate_per_sec(&self) -> f64 {
        self.rate_per_sec
    }

    /// Wait for the rate limit, then for a concurrency slot. `reserved`: the
    /// wait for a place the cluster's rate limit already gave this attempt
    /// (then the local limiter is not asked). When nothing has to wait (the
    /// common case) no future beyond this one's few bytes is made: the waits
    /// are boxed, so that every attempt's future stays small.
    pub async fn acquire(
        &self,
        cancel: Option<&CancellationToken>,
        deadline: Deadline,
        reserved: Option<Duration>,
    ) -> Result<Slot, ToolError> {
        let rate_passed = match reserved {
            Some(wait) => wait.is_zero() && deadline.allows(wait),
            None => self
                .rate
                .as_ref()
                .is_none_or(|limiter| limiter.check().is_ok()),
        };
        if rate_passed {
            let Some(slots) = &self.slots else {
                return Ok(Slot::at_once(None));
            };
            // A free slot is taken at once (tokio's semaphore is fair: it has
            // free permits only when nobody queues).
            if let Ok(permit) = slots.clone().try_acquire_owned() {
                return Ok(Slot::at_once(Some(permit)));
            }
        }
        Box::pin(self.wait(cancel, deadline, reserved, rate_passed)).await
    }

    /// The waiting part of [`acquire`](Limits::acquire): for the rate limit
    /// unless `rate_passed`, then for a slot.
    async fn wait(
        &self,
        cancel: Option<&CancellationToken>,
        deadline: Deadline,
        reserved: Option<Duration>,
        rate_passed: bool,
    ) -> Result<Slot, ToolError> {
        let gave_up = |what: &str| {
            if is_cancelled(cancel) {
                ToolError::cancelled()
            } else {
                ToolError::new(
                    ErrorKind::BudgetExhausted,
                    format!(
                        "deadline of {} ms passed while waiting for the {what}",
                        deadline.total_ms()
                    ),
                )
                .with_code("deadline")
            }
        };
        if rate_passed {
            // Nothing to wait for but a slot.
        } else if let Some(wait) = reserved {
            if !deadline.allows(wait) {
                return Err(gave_up("rate limit"));
            }
            if !wait.is_zero() {
                tokio::select! {
                    biased;
                    _ = cancelled(cancel) => return Err(gave_up("rate limit")),
                    _ = tokio::time::sleep(wait) => {}
                }
            }
        } else if let Some(limiter) = &self.rate {
            while let Err(not_until) = limiter.check() {
                let wait = not_until.wait_time_from(TokioClock.now());
                if !deadline.allows(wait) {
                    return Err(gave_up("rate limit"));
                }
                tokio::select! {
                    biased;
                    _ = cancelled(cancel) => return Err(gave_up("rate limit")),
                    _ = tokio::time::sleep(wait) => {}
                }
            }
        }
        let Some(slots) = &self.slots else {
            return Ok(Slot::after_wait(None));
        };
        let expired = async {
            match deadline.remaining() {
                Some(left) => tokio::time::sleep(left).await,
                None => std::future::pending().await,
            }
        };
        tokio::select! {
            biased;
            permit = slots.clone().acquire_owned() => {
                permit.map(|p| Slot::after_wait(Some(p)))
                    .map_err(|_| ToolError::internal("concurrency limiter closed"))
            }
            _ = cancelled(cancel) => Err(gave_up("concurrency limit")),
            _ = expired => Err(gave_up("concurrency limit")),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use tokio::time::Instant;

    #[test]
    fn a_rate_too_slow_for_a_clock_is_refused_and_never_panics() {
        let limit = |rate_per_sec| LimitPolicy {
            rate_per_sec,
            ..LimitPolicy::default()
        };
        for bad in [5e-324, 1e-9, -1.0, f64::NAN, f64::INFINITY] {
            let err = limit(bad).check().expect_err("refused");
            assert_eq!(err.key, "limits.rate_per_sec", "{bad}");
        }
        for good in [0.0, MIN_RATE_PER_SEC, 5.0] {
            assert!(limit(good).check().is_ok(), "{good}");
        }
        // Built without the check, it still builds.
        let _ = Limits::new(&limit(5e-324));
    }

    #[tokio::test(start_paused = true)]
    async fn the_rate_limit_spaces_attempts_after_the_burst() {
        let limits = Limits::new(&LimitPolicy {
            max_concurrent: 0,
            rate_per_sec: 2.0,
        });
        let cancel = CancellationToken::new();
        let start = Instant::now();
        let mut at = Vec::new();
        for _ in 0..4 {
            limits
                .acquire(Some(&cancel), Deadline::start(0), None)
                .await
                .unwrap();
            at.push(start.elapsed().as_millis());
        }
        assert_eq!(at, [0, 0, 500, 1000]);
    }

    #[tokio::test(start_paused = true)]
    async fn waiting_for_a_slot_gives_up_at_the_deadline() {
        let limits = Limits::new(&LimitPolicy {
            max_concurrent: 1,
            rate_per_sec: 0.0,
        });
        let cancel = CancellationToken::new();
        let _held = limits
            .acquire(Some(&cancel), Deadline::start(0), None)
            .await
            .unwrap();
        let err = limits
            .acquire(Some(&cancel), Deadline::start(100), None)
            .await
            .err()
            .unwrap();
        assert_eq!(err.kind, ErrorKind::BudgetExhausted);
    }
}
