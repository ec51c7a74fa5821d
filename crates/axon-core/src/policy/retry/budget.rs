//! The retry budget (tower's idea, smoothed): over any 10 s window, a tool's
//! retries may number at most `budget_ratio` of its calls, or
//! `budget_min_per_sec` × 10 when that is more (so a tool called rarely can still
//! retry). On top, retries are paid from a token bucket that refills at that
//! rate and holds one second's worth, so a burst of failures spends at most a
//! second of budget at once instead of the whole window. When a dependency is
//! down and every call fails, the load it sees stays near 1.1× instead of
//! `max_attempts`×. Runs on tokio's clock.
//!
//! In a cluster the budget is the cluster's: each retry is asked of the shared
//! state (Redis, `axon-redis`), which keeps the same window and bucket for
//! every replica, so that N replicas together retry a tenth of the cluster's
//! calls rather than each its own floor. Calls are counted here and sent with
//! the next withdrawal (no round trip on the happy path); while the shared
//! state does not answer, this local budget decides.

use std::sync::Mutex;
use std::sync::atomic::{AtomicU64, Ordering};

use tokio::time::Instant;

/// The call rate is measured over this many seconds.
const WINDOW_SECS: u64 = 10;

#[derive(Clone, Copy)]
struct Bucket {
    sec: u64,
    calls: u64,
    retries: u64,
}

const EMPTY: Bucket = Bucket {
    sec: u64::MAX,
    calls: 0,
    retries: 0,
};

struct State {
    start: Instant,
    /// Calls and retries per second over the last [`WINDOW_SECS`].
    calls: [Bucket; WINDOW_SECS as usize],
    /// Retries that may start now.
    tokens: f64,
    /// When `tokens` was last refilled.
    refilled: Instant,
}

/// The retry budget of one tool, shared by every executor in the process (it
/// lives beside the tool's breaker).
pub struct RetryBudget {
    state: Mutex<State>,
    /// Calls not yet sent to the cluster's budget.
    unsent: AtomicU64,
}

impl Default for RetryBudget {
    fn default() -> Self {
        let now = Instant::now();
        RetryBudget {
            state: Mutex::new(State {
                start: now,
                calls: [EMPTY; WINDOW_SECS as usize],
                // Full: a tool's first failures may retry at once.
                tokens: f64::MAX,
                refilled: now,
            }),
            unsent: AtomicU64::new(0),
        }
    }
}

impl std::fmt::Debug for RetryBudget {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("RetryBudget")
    }
}

impl State {
    fn sec(&self, now: Instant) -> u64 {
        now.saturating_duration_since(self.start).as_secs()
    }

    /// Calls and retries over the window.
    fn totals(&self, sec: u64) -> (u64, u64) {
        self.calls
            .iter()
            .filter(|b| b.sec <= sec && sec - b.sec < WINDOW_SECS)
            .fold((0, 0), |(c, r), b| (c + b.calls, r + b.retries))
    }

    fn current(&mut self, sec: u64) -> &mut Bucket {
        let b = &mut self.calls[(sec % WINDOW_SECS) as usize];
        if b.sec != sec {
            *b = Bucket { sec, ..EMPTY };
        }
        b
    }
}

impl RetryBudget {
    /// Count a call (its first attempt).
    pub fn deposit(&self) {
        self.deposit_at(Instant::now());
    }

    /// Count a call that started at `now` (the pipeline's own reading of the
    /// clock: one read fewer per call).
    pub fn deposit_at(&self, now: Instant) {
        self.unsent.fetch_add(1, Ordering::Relaxed);
        if let Ok(mut s) = self.state.lock() {
            let sec = s.sec(now);
            s.current(sec).calls += 1;
        }
    }

    /// The calls counted since the last time, for the cluster's budget.
    pub fn take_unsent(&self) -> u64 {
        self.unsent.swap(0, Ordering::Relaxed)
    }

    /// Calls [`take_unsent`](RetryBudget::take_unsent) took that did not
    /// reach the cluster's budget: sent with the next withdrawal.
    pub fn keep_unsent(&self, calls: u64) {
        self.unsent.fetch_add(calls, Ordering::Relaxed);
    }

    /// A retry the cluster's budget granted: counted here too, so that this
    /// budget is warm when it has to decide alone.
    pub fn note_retry(&self) {
        if let Ok(mut s) = self.state.lock() {
            let sec = s.sec(Instant::now());
            s.current(sec).retries += 1;
        }
    }

    /// Take one retry from the budget; false when it is spent. `ratio` of 0
    /// turns the budget off (every retry allowed).
    pub fn try_withdraw(&self, ratio: f64, min_per_sec: f64) -> bool {
        if ratio <= 0.0 {
            return true;
        }
        let Ok(mut s) = self.state.lock() else {
            return true;
        };
        let now = Instant::now();
        let sec = s.sec(now);
        let (calls, retries) = s.totals(sec);
        let window = WINDOW_SECS as f64;
        let allowed = (ratio * calls as f64).max(min_per_sec * window);
        let rate = allowed / window;
        let elapsed = now.saturating_duration_since(s.refilled).as_secs_f64();
        s.tokens = (s.tokens + rate * elapsed).min(rate.max(1.0));
        s.refilled = now;
        if (retries as f64) < allowed.floor() && s.tokens >= 1.0 {
            s.tokens -= 1.0;
            s.current(sec).retries += 1;
            true
        } else {
            false
        }
    }
}

/// The retry budget kept outside the process (Redis, `axon-redis`), with
/// the rules of [`RetryBudget`] over every replica's calls, so that when a
/// dependency is down the cluster's retries stay a tenth of its calls
/// instead of every replica adding its own floor. An implementation answers
/// fast or not at all: the process's own budget decides then.
#[async_trait::async_trait]
pub trait SharedBudget: Send + Sync + 'static {
    /// Take one retry of `key` (a tool, or one of its dependency keys) from
    /// the cluster's budget, first adding the `calls` this replica made since
    /// it last asked. `Ok(false)`: the budget is spent.
    async fn withdraw_retry(
        &self,
        key: &str,
        calls: u64,
        ratio: f64,
        min_per_sec: f64,
    ) -> Result<bool, crate::policy::breaker::SharedUnavailable>;
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    /// `calls_per_sec` calls a second for `secs` seconds, each failing and asking
    /// for `wanted` retries; the retries granted.
    async fn offered(budget: &RetryBudget, calls_per_sec: u32, secs: u32, wanted: u32) -> u32 {
        let tick = Duration::from_secs(1) / calls_per_sec;
        let mut granted = 0;
        for _ in 0..calls_per_sec * secs {
            budget.deposit();
            for _ in 0..wanted {
                if budget.try_withdraw(0.1, 10.0) {
                    granted += 1;
                }
            }
            tokio::time::advance(tick).await;
        }
        granted
    }

    #[tokio::test(start_paused = true)]
    async fn at_a_steady_rate_retries_add_a_tenth() {
        let budget = RetryBudget::default();
        let granted = offered(&budget, 100, 30, 2).await;
        let ratio = f64::from(3000 + granted) / 3000.0;
        assert!(ratio <= 1.11, "attempts / calls = {ratio}");
        assert!(ratio >= 1.05, "the budget is used: {ratio}");
    }

    #[tokio::test(start_paused = true)]
    async fn the_window_bounds_retries_to_a_tenth_of_calls() {
        let budget = RetryBudget::default();
        // 1000 calls/s for 20 s: a tenth is 100 retries a second.
        let granted = offered(&budget, 1000, 20, 1).await;
        let ratio = f64::from(20_000 + granted) / 20_000.0;
        assert!((1.05..=1.1).contains(&ratio), "attempts / calls = {ratio}");
    }

    #[tokio::test(start_paused = true)]
    async fn a_burst_spends_one_second_of_budget() {
        let budget = RetryBudget::default();
        tokio::time::advance(Duration::from_secs(60)).await;
        for _ in 0..200 {
            budget.deposit();
        }
        let granted = (0..400).filter(|_| budget.try_withdraw(0.1, 10.0)).count();
        assert_eq!(granted, 10, "a full bucket holds one second at 10/s");
    }

    #[tokio::test(start_paused = true)]
    async fn the_floor_lets_rare_calls_retry() {
        let budget = RetryBudget::default();
        budget.deposit();
        tokio::time::advance(Duration::from_secs(1)).await;
        assert_eq!(
            (0..5).filter(|_| budget.try_withdraw(0.1, 2.0)).count(),
            2,
            "2/s, one second's worth"
        );
        tokio::time::advance(Duration::from_millis(500)).await;
        assert!(budget.try_withdraw(0.1, 2.0), "refilled by half a second");
        assert!(!budget.try_withdraw(0.1, 2.0));
    }

    #[tokio::test(start_paused = true)]
    async fn a_ratio_of_zero_turns_it_off() {
        let budget = RetryBudget::default();
        assert!((0..100).all(|_| budget.try_withdraw(0.0, 0.0)));
    }
}
