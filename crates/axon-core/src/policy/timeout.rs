//! Time limits: the hard timeout of one attempt (`timeout_ms`), the soft timeout
//! that only raises a `slow` event (`soft_timeout_ms`), and the deadline across all
//! attempts and backoff (`deadline_ms`). All on tokio's clock.

use std::future::Future;
use std::time::Duration;

use futures::FutureExt;
use futures::future::Either;
use tokio::time::Instant;

use crate::error::{ErrorKind, ToolError};

/// The end of a call's time budget, if it has one.
#[derive(Clone, Copy, Debug)]
pub struct Deadline {
    at: Option<Instant>,
    total_ms: u64,
}

impl Deadline {
    /// Start the clock now; 0 means no deadline.
    pub fn start(deadline_ms: u64) -> Self {
        Deadline {
            at: (deadline_ms > 0).then(|| Instant::now() + Duration::from_millis(deadline_ms)),
            total_ms: deadline_ms,
        }
    }

    /// The configured budget, ms (0 = none).
    pub fn total_ms(&self) -> u64 {
        self.total_ms
    }

    /// Time left; `None` when there is no deadline.
    pub fn remaining(&self) -> Option<Duration> {
        self.at
            .map(|at| at.saturating_duration_since(Instant::now()))
    }

    /// The hard timeout of the next attempt: `timeout` shortened to what is left of
    /// the deadline, or `None` when the deadline has passed.
    pub fn attempt_limit(&self, timeout: Duration) -> Option<Duration> {
        match self.remaining() {
            None => Some(timeout),
            Some(left) if left.is_zero() => None,
            Some(left) => Some(timeout.min(left)),
        }
    }

    /// Whether sleeping `delay` still leaves time for an attempt.
    pub fn allows(&self, delay: Duration) -> bool {
        self.remaining().is_none_or(|left| delay < left)
    }
}

/// Run one attempt under its hard timeout. When `soft` is set and passes first,
/// `on_slow` is called once and the attempt keeps running. Both count from
/// `start`, the attempt's own reading of the clock. Not an `async fn`:
/// the common case (no soft timeout) is tokio's `Timeout` around the attempt
/// and nothing more, and the soft-timeout path is boxed, so that the attempt
/// future is held once and every attempt's state stays small.
pub fn within<F, S>(
    start: Instant,
    hard: Duration,
    soft: Option<Duration>,
    on_slow: S,
    attempt: F,
) -> impl Future<Output = Result<serde_json::Value, ToolError>>
where
    F: Future<Output = Result<serde_json::Value, ToolError>>,
    S: FnOnce(Duration),
{
    match soft.filter(|s| *s < hard) {
        None => Either::Left(
            tokio::time::timeout_at(start + hard, attempt)
                .map(move |r| r.unwrap_or_else(|_| timed_out(hard))),
        ),
        Some(soft) => Either::Right(Box::pin(within_soft(start, hard, soft, on_slow, attempt))),
    }
}

fn timed_out(hard: Duration) -> Result<serde_json::Value, ToolError> {
    Err(ToolError::new(
        ErrorKind::Timeout,
        format!("exceeded {} ms", hard.as_millis()),
    ))
}

/// [`within`] with a soft timeout shorter than the hard one.
async fn within_soft<F, S>(
    start: Instant,
    hard: Duration,
    soft: Duration,
    on_slow: S,
    attempt: F,
) -> Result<serde_json::Value, ToolError>
where
    F: Future<Output = Result<serde_json::Value, ToolError>>,
    S: FnOnce(Duration),
{
    let hard_at = tokio::time::sleep_until(start + hard);
    let soft_at = tokio::time::sleep_until(start + soft);
    tokio::pin!(attempt, hard_at, soft_at);
    let mut on_slow = Some(on_slow);
    loop {
        tokio::select! {
            biased;
            result = &mut attempt => return result,
            _ = &mut hard_at => return timed_out(hard),
            _ = &mut soft_at, if on_slow.is_some() => {
                if let Some(f) = on_slow.take() {
                    f(soft);
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[tokio::test(start_paused = true)]
    async fn an_attempt_past_its_hard_timeout_is_a_timeout() {
        let slow = async {
            tokio::time::sleep(Duration::from_millis(200)).await;
            Ok(json!(1))
        };
        let err = within(
            Instant::now(),
            Duration::from_millis(100),
            None,
            |_| {},
            slow,
        )
        .await
        .unwrap_err();
        assert_eq!(err.kind, ErrorKind::Timeout);
        assert_eq!(err.message, "exceeded 100 ms");
    }

    #[tokio::test(start_paused = true)]
    async fn the_soft_timeout_fires_once_and_lets_the_attempt_finish() {
        let fired = std::cell::Cell::new(0);
        let slow = async {
            tokio::time::sleep(Duration::from_millis(150)).await;
            Ok(json!("done"))
        };
        let r = within(
            Instant::now(),
            Duration::from_millis(300),
            Some(Duration::from_millis(100)),
            |_| fired.set(fired.get() + 1),
            slow,
        )
        .await;
        assert_eq!(r.unwrap(), json!("done"));
        assert_eq!(fired.get(), 1);
    }

    #[tokio::test(start_paused = true)]
    async fn a_deadline_shortens_the_attempt_and_then_expires() {
        let d = Deadline::start(250);
        assert_eq!(
            d.attempt_limit(Duration::from_secs(1)),
            Some(Duration::from_millis(250))
        );
        tokio::time::advance(Duration::from_millis(200)).await;
        assert!(d.allows(Duration::from_millis(40)));
        assert!(!d.allows(Duration::from_millis(60)));
        tokio::time::advance(Duration::from_millis(50)).await;
        assert_eq!(d.attempt_limit(Duration::from_secs(1)), None);
        assert_eq!(
            Deadline::start(0).attempt_limit(Duration::from_secs(1)),
            Some(Duration::from_secs(1))
        );
    }
}
