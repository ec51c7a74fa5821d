//! Hedging: when an attempt of an idempotent tool has not answered after
//! `after_ms`, start another one beside it (up to `max_hedges`) and take whichever
//! succeeds first; the others are dropped (aborted). Tail latency falls at the cost
//! of a little extra load. The whole hedged group is one attempt: one breaker
//! permit, one limiter slot, one hard timeout.

use std::future::Future;
use std::time::Duration;

use futures::stream::{FuturesUnordered, StreamExt};
use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::{Millis, PolicyError};
use crate::error::ToolError;

/// The most hedges one attempt may start: each is another request upstream, so a
/// per-call policy may not turn one call into thousands.
pub const MAX_HEDGES: u32 = 10;

/// Hedging options (`[defaults.hedge]`).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct HedgePolicy {
    /// Start a hedge when an attempt has run this long, ms (at most a day), or
    /// `"auto"`: after the tool's observed p95. 0 = off (the default).
    pub after_ms: Millis,
    /// At most this many hedges per attempt: 1 to 10 when hedging is on. Default 1.
    pub max_hedges: u32,
}

impl Default for HedgePolicy {
    fn default() -> Self {
        HedgePolicy {
            after_ms: Millis::Fixed(0),
            max_hedges: 1,
        }
    }
}

impl HedgePolicy {
    pub(crate) fn check(&self) -> Result<(), PolicyError> {
        if self.after_ms != Millis::Fixed(0) && self.max_hedges == 0 {
            return Err(PolicyError::new(
                "hedge.max_hedges",
                "must be at least 1 when hedge.after_ms is set",
            ));
        }
        if self.max_hedges > MAX_HEDGES {
            return Err(PolicyError::new(
                "hedge.max_hedges",
                format!("must be at most {MAX_HEDGES}"),
            ));
        }
        match self.after_ms {
            Millis::Fixed(ms) => super::at_most("hedge.after_ms", ms, super::MAX_DURATION_MS),
            Millis::Auto => Ok(()),
        }
    }

    /// Whether hedging is on.
    pub fn enabled(&self) -> bool {
        self.after_ms != Millis::Fixed(0) && self.max_hedges > 0
    }
}

/// Run `start(0)`, and `start(k)` for each hedge k (up to `max_hedges`) as
/// `after` passes without an answer. The first success wins; if every execution
/// fails, the last error is returned. `on_hedge(k)` is told about each hedge
/// started.
pub async fn race<F, Fut, H>(
    after: Duration,
    max_hedges: u32,
    mut start: F,
    on_hedge: H,
) -> Result<Value, ToolError>
where
    F: FnMut(u32) -> Fut,
    Fut: Future<Output = Result<Value, ToolError>>,
    H: Fn(u32),
{
    let mut running = FuturesUnordered::new();
    running.push(start(0));
    let mut hedges = 0;
    let timer = tokio::time::sleep(after);
    tokio::pin!(timer);
    loop {
        tokio::select! {
            biased;
            Some(result) = running.next() => match result {
                Ok(data) => return Ok(data),
                Err(e) if running.is_empty() => return Err(e),
                Err(_) => {}
            },
            _ = &mut timer, if hedges < max_hedges => {
                hedges += 1;
                on_hedge(hedges);
                running.push(start(hedges));
                timer.as_mut().reset(tokio::time::Instant::now() + after);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;
    use std::cell::Cell;

    #[tokio::test(start_paused = true)]
    async fn a_hedge_answers_when_the_first_execution_is_slow() {
        let started = Cell::new(0);
        let begin = tokio::time::Instant::now();
        let r = race(
            Duration::from_millis(50),
            1,
            |k| {
                started.set(started.get() + 1);
                async move {
                    let ms = if k == 0 { 1_000 } else { 10 };
                    tokio::time::sleep(Duration::from_millis(ms)).await;
                    Ok(json!({"from": k}))
                }
            },
            |_| {},
        )
        .await;
        assert_eq!(r.unwrap(), json!({"from": 1}));
        assert_eq!(started.get(), 2);
        assert_eq!(begin.elapsed(), Duration::from_millis(60));
    }
}
