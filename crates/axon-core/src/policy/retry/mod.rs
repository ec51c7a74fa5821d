//! All of retry: the options, the decision whether to try again, and the loop that
//! runs attempts, sleeps between them and records why.
//!
//! A failed attempt is retried when its kind is retryable (docs/design.md, "Error kinds"), there
//! are attempts left, repeating it is safe (idempotency-aware: a non-idempotent tool
//! is not retried after `timeout`/`transient`, which may have had side effects, unless
//! `retry_non_idempotent`), the deadline leaves room for the delay, and the retry
//! budget has a token. The delay is the backoff curve, or upstream's `Retry-After`
//! for `rate_limited` when `respect_retry_after`.
//!
//! The folder holds what only retry uses: the budget that bounds retries across
//! calls (`budget.rs`, its cluster half in `axon-redis`) and the backoff curve
//! (`backoff.rs`).

pub mod backoff;
pub mod budget;

use std::future::{Future, poll_fn};
use std::pin::pin;
use std::sync::Mutex;
use std::time::Duration;

use serde::{Deserialize, Serialize};
use serde_json::Value;
use tokio::time::Instant;
use tokio_util::sync::CancellationToken;

use super::PolicyError;
use super::breaker::SharedUnavailable;
use super::timeout::Deadline;
use crate::error::{ErrorKind, ToolError};
use crate::events::Observer;
use crate::tool::{cancelled, is_cancelled};
use backoff::{Backoff, Jitter};
use budget::{RetryBudget, SharedBudget};

/// The most attempts a call may make.
pub const MAX_ATTEMPTS: u32 = 100;
/// The longest delay between attempts (and the longest `Retry-After` honoured):
/// an hour.
pub const MAX_DELAY_MS: u64 = 3600 * 1000;

/// Retry options (`[defaults.retry]`).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct RetryPolicy {
    /// Total attempts, the first one included. 1 = no retries. 1 to 100; default 3.
    pub max_attempts: u32,
    /// The delay curve. Default `exponential`.
    pub backoff: Backoff,
    /// First delay, ms; at most `max_delay_ms`. Default 500.
    pub initial_delay_ms: u64,
    /// Growth factor of exponential backoff, ≥ 1. Default 2.0.
    pub multiplier: f64,
    /// Cap on any delay, ms; at most an hour. Default 10 000.
    pub max_delay_ms: u64,
    /// Randomisation of the delay. Default `proportional`.
    pub jitter: Jitter,
    /// ± ratio for proportional jitter, 0 to 1. Default 0.25.
    pub jitter_ratio: f64,
    /// Wait as long as upstream's `Retry-After` says after `rate_limited`. Default
    /// true.
    pub respect_retry_after: bool,
    /// Retries may add at most this share of the tool's call rate (0 = no budget),
    /// ≥ 0. Default 0.1.
    pub budget_ratio: f64,
    /// … or this many retries per second, whichever is more; ≥ 0. Default 10.
    pub budget_min_per_sec: f64,
    /// Retry non-idempotent tools even after outcomes that may have had side
    /// effects. Default false.
    pub retry_non_idempotent: bool,
}

impl Default for RetryPolicy {
    fn default() -> Self {
        RetryPolicy {
            max_attempts: 3,
            backoff: Backoff::Exponential,
            initial_delay_ms: 500,
            multiplier: 2.0,
            max_delay_ms: 10_000,
            jitter: Jitter::Proportional,
            jitter_ratio: 0.25,
            respect_retry_after: true,
            budget_ratio: 0.1,
            budget_min_per_sec: 10.0,
            retry_non_idempotent: false,
        }
    }
}

impl RetryPolicy {
    /// The delay before retry number `retry` (1 for the first retry). `previous` is the
    /// delay used before the previous retry (only decorrelated backoff reads it). The
    /// result never exceeds `max_delay_ms`.
    pub fn delay(
        &self,
        retry: u32,
        previous: Option<Duration>,
        rng: &mut fastrand::Rng,
    ) -> Duration {
        let initial = self.initial_delay_ms as f64;
        let cap = self.max_delay_ms as f64;
        let base = match self.backoff {
            Backoff::Constant => initial,
            Backoff::Linear => initial * f64::from(retry),
            Backoff::Exponential => initial * self.multiplier.powi(retry.saturating_sub(1) as i32),
            Backoff::Decorrelated => {
                let prev = previous.map_or(initial, |d| d.as_millis() as f64);
                let high = (prev * 3.0).max(initial);
                let ms = initial + rng.f64() * (high - initial);
                return Duration::from_millis(ms.min(cap).round() as u64);
            }
        };
        let capped = base.min(cap);
        let jittered = match self.jitter {
            Jitter::None => capped,
            Jitter::Full => rng.f64() * capped,
            Jitter::Equal => capped / 2.0 + rng.f64() * capped / 2.0,
            Jitter::Proportional => {
                let r = self.jitter_ratio;
                capped * (1.0 - r + 2.0 * r * rng.f64())
            }
        };
        Duration::from_millis(jittered.clamp(0.0, cap).round() as u64)
    }

    pub(crate) fn check(&self) -> Result<(), PolicyError> {
        let err = |key: &str, msg: &str| Err(PolicyError::new(&format!("retry.{key}"), msg));
        if self.max_attempts == 0 {
            return err(
                "max_attempts",
                "must be at least 1 (the first attempt counts)",
            );
        }
        if !(self.multiplier >= 1.0 && self.multiplier.is_finite()) {
            return err("multiplier", "must be a number ≥ 1");
        }
        if !(0.0..=1.0).contains(&self.jitter_ratio) {
            return err("jitter_ratio", "must be between 0 and 1");
        }
        if !(self.budget_ratio >= 0.0 && self.budget_ratio.is_finite()) {
            return err("budget_ratio", "must be a number ≥ 0");
        }
        if !(self.budget_min_per_sec >= 0.0 && self.budget_min_per_sec.is_finite()) {
            return err("budget_min_per_sec", "must be a number ≥ 0");
        }
        if self.max_delay_ms < self.initial_delay_ms {
            return err("max_delay_ms", "must be at least initial_delay_ms");
        }
        if self.max_attempts > MAX_ATTEMPTS {
            return err("max_attempts", "must be at most 100");
        }
        super::at_most("retry.max_delay_ms", self.max_delay_ms, MAX_DELAY_MS)?;
        Ok(())
    }
}

/// What the loop gathered: the final outcome and the story of the retries.
#[derive(Debug)]
pub(crate) struct Attempts {
    pub result: Result<Value, ToolError>,
    pub attempts: u32,
    pub reasons: Vec<String>,
    pub delays_ms: Vec<u64>,
    /// When the attempt that answered ended (`None` on failure): the call's
    /// end too, unless something runs after it (a fallback).
    pub answered_at: Option<Instant>,
}

/// How one attempt went: it ran (and succeeded or failed), or it was refused before
/// touching the tool (breaker open, limit wait given up) and does not count.
#[derive(Debug)]
pub(crate) enum Attempt {
    /// It ran; the instant is its end, read once for the latency it records.
    Ran(Result<Value, ToolError>, Instant),
    Refused(ToolError),
}

/// One call's retry loop and what it needs to decide.
pub(crate) struct RetryLoop<'a> {
    pub policy: &'a RetryPolicy,
    pub hard_timeout: Duration,
    pub safe_to_repeat: bool,
    pub budget: &'a RetryBudget,
    /// The cluster's budget (and the tool's name in it), when shared.
    pub shared: Option<(&'a dyn SharedBudget, &'a str)>,
    /// The caller set the attempt's timeout itself: a retry after that
    /// timeout is its own, not paid from the budget every caller of the
    /// dependency shares (issue 59).
    pub own_timeout: bool,
    pub deadline: Deadline,
    /// When the call started (tokio's clock): the budget counts the call then.
    pub started: Instant,
    /// The caller's token, when it gave one.
    pub cancel: Option<&'a CancellationToken>,
    pub observer: &'a Observer<'a>,
    pub rng: &'a Mutex<fastrand::Rng>,
}

enum Next {
    Retry(Duration),
    Stop(ToolError),
}

impl RetryLoop<'_> {
    /// Run `attempt(n, limit)` until it succeeds or the policy says stop. `limit` is
    /// the hard timeout of that attempt (shortened by the deadline).
    pub async fn run<F, Fut>(&self, mut attempt: F) -> Attempts
    where
        F: FnMut(u32, Duration) -> Fut,
        Fut: Future<Output = Attempt>,
    {
        self.budget.deposit_at(self.started);
        let mut reasons = Vec::new();
        let mut delays_ms = Vec::new();
        let mut attempts = 0;
        // The error of the last attempt that ran, for the message of a spent
        // deadline (no placeholder: nothing is allocated on the happy path).
        let mut last: Option<ToolError> = None;
        let mut previous_delay = None;
        let mut answered_at = None;
        let result = loop {
            if is_cancelled(self.cancel) {
                break Err(ToolError::cancelled());
            }
            let n = attempts + 1;
            let Some(limit) = self.deadline.attempt_limit(self.hard_timeout) else {
                break Err(deadline_spent(self.deadline.total_ms(), last));
            };
            // One span per attempt, closed before the backoff sleep: a trace shows
            // each try, how it ended and how long the engine waited after it.
            let span = tracing::debug_span!(
                "attempt",
                otel.name = "attempt",
                axon.attempt = i64::from(n),
                axon.retry.reason = tracing::field::Empty,
                axon.retry.delay_ms = tracing::field::Empty,
                error.type = tracing::field::Empty,
                otel.status_code = tracing::field::Empty,
                otel.status_description = tracing::field::Empty,
            );
            // Each poll in the span, when anybody wants it; polled where it
            // is, not moved into `tracing`'s `Instrumented` first.
            let ran = if span.is_disabled() {
                attempt(n, limit).await
            } else {
                let mut attempt = pin!(attempt(n, limit));
                poll_fn(|cx| span.in_scope(|| attempt.as_mut().poll(cx))).await
            };
            let error = match ran {
                Attempt::Refused(e) => {
                    crate::trace::record_error(&span, e.kind.as_str(), e.code.as_deref());
                    break Err(e);
                }
                Attempt::Ran(Ok(data), ended) => {
                    attempts = n;
                    answered_at = Some(ended);
                    break Ok(data);
                }
                Attempt::Ran(Err(e), _) => e,
            };
            crate::trace::record_error(&span, error.kind.as_str(), error.code.as_deref());
            attempts = n;
            let delay = match self.next(&error, n, previous_delay) {
                Next::Stop(e) => break Err(e),
                Next::Retry(delay) => delay,
            };
            let callers_own = self.own_timeout && error.kind == ErrorKind::Timeout;
            if !callers_own && !self.withdraw().await {
                break Err(budget_spent(&error));
            }
            if !span.is_disabled() {
                span.record("axon.retry.reason", error.kind.as_str());
                span.record("axon.retry.delay_ms", delay.as_millis() as i64);
            }
            drop(span);
            self.observer.retrying(n, &error, delay);
            reasons.push(error.reason());
            delays_ms.push(delay.as_millis() as u64);
            last = Some(error);
            previous_delay = Some(delay);
            // Boxed: only retries sleep, and the timer would otherwise be
            // part of every call's future.
            if !Box::pin(self.sleep(delay)).await {
                break Err(ToolError::cancelled());
            }
        };
        Attempts {
            result,
            attempts,
            reasons,
            delays_ms,
            answered_at,
        }
    }

    /// Sleep `delay` before the next attempt; false when the call was
    /// cancelled meanwhile.
    async fn sleep(&self, delay: Duration) -> bool {
        tokio::select! {
            biased;
            _ = cancelled(self.cancel) => false,
            _ = tokio::time::sleep(delay) => true,
        }
    }

    fn next(&self, error: &ToolError, attempt: u32, previous: Option<Duration>) -> Next {
        let p = self.policy;
        if !error.kind.is_retryable() || attempt >= p.max_attempts {
            return Next::Stop(error.clone());
        }
        if error.kind.may_have_side_effects()
            && !error.before_acting
            && !self.safe_to_repeat
            && !p.retry_non_idempotent
        {
            return Next::Stop(error.clone());
        }
        let delay = match (error.kind, error.retry_after) {
            // An upstream that asks for longer than we would ever wait gets its
            // answer now: `rate_limited` with its `retry_after_ms`, for the
            // caller to schedule.
            (ErrorKind::RateLimited, Some(after))
                if p.respect_retry_after && after > Duration::from_millis(p.max_delay_ms) =>
            {
                let mut e = error.clone();
                e.message = format!(
                    "{} (Retry-After of {} ms is longer than retry.max_delay_ms = {} ms)",
                    e.message,
                    after.as_millis(),
                    p.max_delay_ms
                );
                return Next::Stop(e);
            }
            (ErrorKind::RateLimited, Some(after)) if p.respect_retry_after => after,
            _ => {
                let mut rng = self
                    .rng
                    .lock()
                    .unwrap_or_else(|poisoned| poisoned.into_inner());
                p.delay(attempt, previous, &mut rng)
            }
        };
        if !self.deadline.allows(delay) {
            return Next::Stop(deadline_spent(
                self.deadline.total_ms(),
                Some(error.clone()),
            ));
        }
        Next::Retry(delay)
    }

    /// Take one retry from the tool's budget: the cluster's while it answers,
    /// else this process's.
    async fn withdraw(&self) -> bool {
        let p = self.policy;
        if p.budget_ratio <= 0.0 {
            return true;
        }
        if let Some((shared, tool)) = self.shared {
            let calls = self.budget.take_unsent();
            match shared
                .withdraw_retry(tool, calls, p.budget_ratio, p.budget_min_per_sec)
                .await
            {
                Ok(granted) => {
                    if granted {
                        self.budget.note_retry();
                    }
                    return granted;
                }
                Err(SharedUnavailable) => self.budget.keep_unsent(calls),
            }
        }
        self.budget
            .try_withdraw(p.budget_ratio, p.budget_min_per_sec)
    }
}

fn budget_spent(error: &ToolError) -> ToolError {
    ToolError::new(
        ErrorKind::BudgetExhausted,
        format!(
            "retry budget of the tool is spent; last error: {}",
            error.reason()
        ),
    )
    .with_code("retry_budget")
}

fn deadline_spent(total_ms: u64, last: Option<ToolError>) -> ToolError {
    let last = last
        .map(|e| format!("; last error: {}", e.reason()))
        .unwrap_or_default();
    ToolError::new(
        ErrorKind::BudgetExhausted,
        format!("deadline of {total_ms} ms spent{last}"),
    )
    .with_code("deadline")
}

#[cfg(test)]
mod delay_tests {
    use super::*;

    fn policy(backoff: Backoff, jitter: Jitter) -> RetryPolicy {
        RetryPolicy {
            backoff,
            jitter,
            initial_delay_ms: 100,
            multiplier: 2.0,
            max_delay_ms: 1_000,
            ..RetryPolicy::default()
        }
    }

    fn sequence(p: &RetryPolicy, n: u32, seed: u64) -> Vec<u64> {
        let mut rng = fastrand::Rng::with_seed(seed);
        let mut prev = None;
        (1..=n)
            .map(|i| {
                let d = p.delay(i, prev, &mut rng);
                prev = Some(d);
                d.as_millis() as u64
            })
            .collect()
    }

    #[test]
    fn constant_backoff_repeats_the_initial_delay() {
        assert_eq!(
            sequence(&policy(Backoff::Constant, Jitter::None), 4, 1),
            [100, 100, 100, 100]
        );
    }

    #[test]
    fn linear_backoff_grows_by_the_initial_delay_and_is_capped() {
        let mut p = policy(Backoff::Linear, Jitter::None);
        p.max_delay_ms = 350;
        assert_eq!(sequence(&p, 5, 1), [100, 200, 300, 350, 350]);
    }

    #[test]
    fn exponential_backoff_doubles_and_is_capped() {
        assert_eq!(
            sequence(&policy(Backoff::Exponential, Jitter::None), 6, 1),
            [100, 200, 400, 800, 1000, 1000]
        );
    }

    #[test]
    fn seed_001_sequence_is_one_two_four_seconds() {
        let p = RetryPolicy {
            initial_delay_ms: 1000,
            max_delay_ms: 10_000,
            jitter: Jitter::None,
            ..RetryPolicy::default()
        };
        assert_eq!(sequence(&p, 3, 1), [1000, 2000, 4000]);
    }

    #[test]
    fn decorrelated_backoff_stays_between_initial_and_three_times_previous() {
        let p = policy(Backoff::Decorrelated, Jitter::None);
        for seed in 0..200 {
            let seq = sequence(&p, 8, seed);
            let mut prev = 100u64;
            for d in seq {
                assert!(
                    d >= 100 && d <= (prev * 3).min(1000),
                    "seed {seed}: {d} after {prev}"
                );
                prev = d;
            }
        }
    }

    #[test]
    fn full_jitter_stays_within_zero_and_the_delay() {
        let p = policy(Backoff::Exponential, Jitter::Full);
        for seed in 0..200 {
            for (i, d) in sequence(&p, 5, seed).into_iter().enumerate() {
                let bound = (100u64 << i).min(1000);
                assert!(d <= bound, "seed {seed}: {d} > {bound}");
            }
        }
    }

    #[test]
    fn equal_jitter_stays_within_half_and_the_whole_delay() {
        let p = policy(Backoff::Exponential, Jitter::Equal);
        for seed in 0..200 {
            for (i, d) in sequence(&p, 5, seed).into_iter().enumerate() {
                let bound = (100u64 << i).min(1000);
                assert!(d >= bound / 2 && d <= bound, "seed {seed}: {d} vs {bound}");
            }
        }
    }

    #[test]
    fn proportional_jitter_stays_within_the_ratio_and_the_cap() {
        let p = RetryPolicy {
            jitter_ratio: 0.25,
            ..policy(Backoff::Exponential, Jitter::Proportional)
        };
        let mut spread = std::collections::HashSet::new();
        for seed in 0..200 {
            for (i, d) in sequence(&p, 5, seed).into_iter().enumerate() {
                let nominal = (100u64 << i).min(1000) as f64;
                assert!(
                    d as f64 >= nominal * 0.75 - 0.5,
                    "seed {seed}: {d} vs {nominal}"
                );
                assert!(
                    d as f64 <= (nominal * 1.25).min(1000.0) + 0.5,
                    "seed {seed}: {d} vs {nominal}"
                );
                if i == 0 {
                    spread.insert(d);
                }
            }
        }
        assert!(spread.len() > 10, "jitter should actually vary: {spread:?}");
    }

    #[test]
    fn the_same_seed_gives_the_same_sequence() {
        let p = policy(Backoff::Exponential, Jitter::Full);
        assert_eq!(sequence(&p, 5, 42), sequence(&p, 5, 42));
    }
}
