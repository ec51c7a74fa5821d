//! The retry budget (tower's idea): retries may add at most `budget_ratio` of a
//! tool's call rate, plus a floor of `budget_min_per_sec`, over a sliding 10 s
//! window. When a dependency is down and every call fails, the load it sees stays
//! near 1.1× instead of `max_attempts`×. Runs on tokio's clock.

use std::sync::Mutex;

use tokio::time::Instant;

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

struct Window {
    start: Instant,
    buckets: [Bucket; WINDOW_SECS as usize],
}

/// Calls and retries of one tool over the last 10 s, shared by every executor in
/// the process (it lives beside the tool's breaker).
pub struct RetryBudget {
    window: Mutex<Window>,
}

impl Default for RetryBudget {
    fn default() -> Self {
        RetryBudget {
            window: Mutex::new(Window {
                start: Instant::now(),
                buckets: [EMPTY; WINDOW_SECS as usize],
            }),
        }
    }
}

impl std::fmt::Debug for RetryBudget {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("RetryBudget")
    }
}

impl Window {
    fn now_sec(&self) -> u64 {
        Instant::now()
            .saturating_duration_since(self.start)
            .as_secs()
    }

    fn current(&mut self, sec: u64) -> &mut Bucket {
        let b = &mut self.buckets[(sec % WINDOW_SECS) as usize];
        if b.sec != sec {
            *b = Bucket { sec, ..EMPTY };
        }
        b
    }

    fn totals(&self, sec: u64) -> (u64, u64) {
        self.buckets
            .iter()
            .filter(|b| b.sec <= sec && sec - b.sec < WINDOW_SECS)
            .fold((0, 0), |(c, r), b| (c + b.calls, r + b.retries))
    }
}

impl RetryBudget {
    /// Count a call (its first attempt).
    pub fn deposit(&self) {
        if let Ok(mut w) = self.window.lock() {
            let sec = w.now_sec();
            w.current(sec).calls += 1;
        }
    }

    /// Take one retry from the budget; false when it is spent. `ratio` of 0
    /// turns the budget off (every retry allowed).
    pub fn try_withdraw(&self, ratio: f64, min_per_sec: f64) -> bool {
        if ratio <= 0.0 {
            return true;
        }
        let Ok(mut w) = self.window.lock() else {
            return true;
        };
        let sec = w.now_sec();
        let (calls, retries) = w.totals(sec);
        let allowed = min_per_sec * WINDOW_SECS as f64 + ratio * calls as f64;
        if (retries as f64) < allowed.floor() {
            w.current(sec).retries += 1;
            true
        } else {
            false
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    #[tokio::test(start_paused = true)]
    async fn retries_are_limited_to_the_ratio_of_calls() {
        let budget = RetryBudget::default();
        for _ in 0..100 {
            budget.deposit();
        }
        let granted = (0..100).filter(|_| budget.try_withdraw(0.1, 0.0)).count();
        assert_eq!(granted, 10);
    }

    #[tokio::test(start_paused = true)]
    async fn the_floor_allows_retries_when_calls_are_rare() {
        let budget = RetryBudget::default();
        budget.deposit();
        let granted = (0..1000).filter(|_| budget.try_withdraw(0.1, 2.0)).count();
        assert_eq!(granted, 20, "2/s over a 10 s window");
    }

    #[tokio::test(start_paused = true)]
    async fn old_calls_leave_the_window() {
        let budget = RetryBudget::default();
        for _ in 0..100 {
            budget.deposit();
        }
        tokio::time::advance(Duration::from_secs(11)).await;
        assert!(
            !budget.try_withdraw(0.1, 0.0),
            "the 100 calls are older than the window"
        );
    }
}
