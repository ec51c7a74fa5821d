//! Adaptive policies: a timeout and a hedge delay chosen from the latency a tool
//! has shown, instead of a number someone guessed. A static timeout is either
//! too tight (false timeouts when the tool slows down under load) or too loose
//! (an agent waits 30 s for a call that normally answers in 200 ms).
//!
//! - `timeout_ms = "auto"`: the observed p99 × `adaptive.timeout_factor`, kept
//!   between `adaptive.timeout_floor_ms` and `adaptive.timeout_ceiling_ms`.
//! - `hedge.after_ms = "auto"`: a hedge starts once an attempt has run past the
//!   observed p95, as in Dean and Barroso, "The Tail at Scale" (2013).
//!
//! Until a tool has `adaptive.min_samples` observations, an automatic timeout is
//! the ceiling and an automatic hedge is off.
//!
//! The observations live in a [`LatencySketch`] per tool (in
//! [`ToolState`](crate::state::ToolState)): a DDSketch (the `sketches-ddsketch`
//! crate; quantiles within 1 % relative error in a few KB) over two rotating
//! windows, so that a tool whose latency shifts is followed within two windows.
//! What is recorded is each execution's own time to a success, and the limit of
//! an attempt that timed out: a tool that got slower than its automatic timeout
//! pushes the estimate up (a censored observation) rather than timing out forever.
//! Fast failures are not recorded: a refused connection says nothing about how
//! long an answer takes.

use std::sync::Mutex;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use serde::{Deserialize, Deserializer, Serialize, Serializer};
use sketches_ddsketch::{Config, DDSketch};
use tokio::time::Instant;

use super::PolicyError;

/// A duration option that may be `"auto"`: a number of milliseconds, or a value
/// the executor chooses from observed latency (see the module docs).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Millis {
    /// This many milliseconds.
    Fixed(u64),
    /// Chosen from the tool's latency sketch.
    Auto,
}

impl Millis {
    /// The fixed value, `None` for `"auto"`.
    pub fn fixed(self) -> Option<u64> {
        match self {
            Millis::Fixed(ms) => Some(ms),
            Millis::Auto => None,
        }
    }
}

impl Serialize for Millis {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match self {
            Millis::Fixed(ms) => s.serialize_u64(*ms),
            Millis::Auto => s.serialize_str("auto"),
        }
    }
}

impl<'de> Deserialize<'de> for Millis {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct Visitor;
        impl serde::de::Visitor<'_> for Visitor {
            type Value = Millis;
            fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                f.write_str("a whole number of milliseconds or \"auto\"")
            }
            fn visit_u64<E: serde::de::Error>(self, v: u64) -> Result<Millis, E> {
                Ok(Millis::Fixed(v))
            }
            fn visit_i64<E: serde::de::Error>(self, v: i64) -> Result<Millis, E> {
                u64::try_from(v).map(Millis::Fixed).map_err(|_| {
                    E::invalid_value(serde::de::Unexpected::Signed(v), &"0 or more milliseconds")
                })
            }
            fn visit_str<E: serde::de::Error>(self, v: &str) -> Result<Millis, E> {
                if v == "auto" {
                    Ok(Millis::Auto)
                } else {
                    Err(E::invalid_value(serde::de::Unexpected::Str(v), &self))
                }
            }
        }
        d.deserialize_any(Visitor)
    }
}

/// How automatic values are chosen (`[defaults.adaptive]`, a tool's
/// `adaptive` table).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct AdaptivePolicy {
    /// An automatic timeout is the observed p99 times this: 1 to 100. Default 3.
    pub timeout_factor: f64,
    /// An automatic timeout is at least this, ms. Default 100.
    pub timeout_floor_ms: u64,
    /// An automatic timeout is at most this, ms, and is this until enough has
    /// been observed. Default 30 000 (the fixed default).
    pub timeout_ceiling_ms: u64,
    /// Observations a tool needs before automatic values are chosen from them:
    /// 1 to 100 000. Default 20.
    pub min_samples: u64,
}

impl Default for AdaptivePolicy {
    fn default() -> Self {
        AdaptivePolicy {
            timeout_factor: 3.0,
            timeout_floor_ms: 100,
            timeout_ceiling_ms: 30_000,
            min_samples: 20,
        }
    }
}

impl AdaptivePolicy {
    pub(crate) fn check(&self) -> Result<(), PolicyError> {
        if !(1.0..=100.0).contains(&self.timeout_factor) {
            return Err(PolicyError::new(
                "adaptive.timeout_factor",
                "must be between 1 and 100",
            ));
        }
        if self.timeout_floor_ms == 0 {
            return Err(PolicyError::new(
                "adaptive.timeout_floor_ms",
                "must be at least 1",
            ));
        }
        super::at_most(
            "adaptive.timeout_ceiling_ms",
            self.timeout_ceiling_ms,
            super::MAX_DURATION_MS,
        )?;
        if self.timeout_ceiling_ms < self.timeout_floor_ms {
            return Err(PolicyError::new(
                "adaptive.timeout_ceiling_ms",
                "must be at least adaptive.timeout_floor_ms",
            ));
        }
        if !(1..=100_000).contains(&self.min_samples) {
            return Err(PolicyError::new(
                "adaptive.min_samples",
                "must be between 1 and 100000",
            ));
        }
        Ok(())
    }

    /// The automatic timeout for what has been observed.
    pub fn timeout(&self, seen: Option<Estimate>) -> Duration {
        let ms = match seen.filter(|e| e.samples >= self.min_samples) {
            None => self.timeout_ceiling_ms,
            Some(e) => ((e.p99_ms * self.timeout_factor).ceil() as u64)
                .clamp(self.timeout_floor_ms, self.timeout_ceiling_ms),
        };
        Duration::from_millis(ms)
    }

    /// The automatic hedge delay (the observed p95, at least 1 ms), or `None`
    /// (no hedging) until enough has been observed.
    pub fn hedge_after(&self, seen: Option<Estimate>) -> Option<Duration> {
        seen.filter(|e| e.samples >= self.min_samples)
            .map(|e| Duration::from_micros((e.p95_ms * 1000.0).ceil().max(1000.0) as u64))
    }
}

/// Quantiles of a tool's recent latency, ms.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, schemars::JsonSchema)]
pub struct Estimate {
    /// Observations the figures come from (the last one or two windows).
    pub samples: u64,
    /// Median.
    pub p50_ms: f64,
    /// 95th percentile.
    pub p95_ms: f64,
    /// 99th percentile.
    pub p99_ms: f64,
}

/// A window is closed after this many observations…
pub const WINDOW_SAMPLES: u64 = 256;
/// …or once it is this old and holds at least [`MIN_AGED_WINDOW`] observations.
pub const WINDOW_AGE: Duration = Duration::from_secs(60);
/// A window younger than [`WINDOW_SAMPLES`] closes on age only with this many
/// observations, so a quiet tool keeps what it has seen.
pub const MIN_AGED_WINDOW: u64 = 32;

/// The quantiles are recomputed after this many observations (each one while
/// fewer than [`WINDOW_SAMPLES`] have been seen), so that a call reads four
/// atomics instead of merging sketches.
const REFRESH_EVERY: u64 = 8;

/// One tool's recent latency. Recording takes a short lock; reading the
/// estimate takes none.
pub struct LatencySketch {
    windows: Mutex<Windows>,
    samples: AtomicU64,
    p50_us: AtomicU64,
    p95_us: AtomicU64,
    p99_us: AtomicU64,
}

struct Windows {
    /// The window being filled.
    current: DDSketch,
    /// The last closed window and the current one together, kept up to date
    /// on each observation so that the quantiles never need a merge.
    both: DDSketch,
    /// Observations in the last closed window.
    previous: u64,
    opened: Instant,
    since_refresh: u64,
}

impl std::fmt::Debug for LatencySketch {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("LatencySketch")
            .field("estimate", &self.estimate())
            .finish()
    }
}

impl Default for LatencySketch {
    fn default() -> Self {
        Self::new()
    }
}

fn sketch() -> DDSketch {
    // 1 % relative error, values from 10 µs, at most 1024 bins (8 KB).
    DDSketch::new(Config::new(0.01, 1024, 0.01))
}

impl LatencySketch {
    /// An empty sketch.
    pub fn new() -> Self {
        LatencySketch {
            windows: Mutex::new(Windows {
                current: sketch(),
                both: sketch(),
                previous: 0,
                opened: Instant::now(),
                since_refresh: 0,
            }),
            samples: AtomicU64::new(0),
            p50_us: AtomicU64::new(0),
            p95_us: AtomicU64::new(0),
            p99_us: AtomicU64::new(0),
        }
    }

    /// Record one observation.
    pub fn record(&self, took: Duration) {
        self.record_at(took, Instant::now());
    }

    /// Record one observation made at `now`: the attempt's end, which the
    /// executor has read already (one clock read per call fewer).
    pub fn record_at(&self, took: Duration, now: Instant) {
        let mut w = self.windows.lock().unwrap_or_else(|p| p.into_inner());
        let count = w.current.count() as u64;
        if count >= WINDOW_SAMPLES
            || (count >= MIN_AGED_WINDOW && now.saturating_duration_since(w.opened) >= WINDOW_AGE)
        {
            let closed = std::mem::replace(&mut w.current, sketch());
            w.previous = count;
            w.both = closed;
            w.opened = now;
        }
        let ms = took.as_secs_f64() * 1000.0;
        w.current.add(ms);
        w.both.add(ms);
        w.since_refresh += 1;
        let total = w.previous + w.current.count() as u64;
        if w.since_refresh >= REFRESH_EVERY || total < WINDOW_SAMPLES {
            w.since_refresh = 0;
            self.refresh(&w.both, total);
        }
    }

    fn refresh(&self, all: &DDSketch, total: u64) {
        let q = |q: f64| {
            all.quantile(q)
                .ok()
                .flatten()
                .map_or(0, |ms| (ms * 1000.0).round() as u64)
        };
        self.p50_us.store(q(0.5), Ordering::Relaxed);
        self.p95_us.store(q(0.95), Ordering::Relaxed);
        self.p99_us.store(q(0.99), Ordering::Relaxed);
        self.samples.store(total, Ordering::Release);
    }

    /// The recent quantiles, `None` before the first observation.
    pub fn estimate(&self) -> Option<Estimate> {
        let samples = self.samples.load(Ordering::Acquire);
        (samples > 0).then(|| Estimate {
            samples,
            p50_ms: self.p50_us.load(Ordering::Relaxed) as f64 / 1000.0,
            p95_ms: self.p95_us.load(Ordering::Relaxed) as f64 / 1000.0,
            p99_ms: self.p99_us.load(Ordering::Relaxed) as f64 / 1000.0,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn millis_reads_a_number_or_auto_and_names_anything_else() {
        let read = |v| serde_json::from_value::<Millis>(v);
        assert_eq!(read(json!(250)).unwrap(), Millis::Fixed(250));
        assert_eq!(read(json!("auto")).unwrap(), Millis::Auto);
        assert!(
            read(json!("fast"))
                .unwrap_err()
                .to_string()
                .contains("\"auto\"")
        );
        assert!(read(json!(-1)).is_err());
        assert_eq!(serde_json::to_value(Millis::Auto).unwrap(), json!("auto"));
        assert_eq!(serde_json::to_value(Millis::Fixed(7)).unwrap(), json!(7));
    }

    #[test]
    fn the_timeout_is_the_ceiling_until_enough_is_seen_then_p99_times_the_factor() {
        let p = AdaptivePolicy::default();
        let seen = |samples| {
            Some(Estimate {
                samples,
                p50_ms: 10.0,
                p95_ms: 40.0,
                p99_ms: 50.0,
            })
        };
        assert_eq!(p.timeout(None), Duration::from_secs(30));
        assert_eq!(p.timeout(seen(19)), Duration::from_secs(30));
        assert_eq!(p.timeout(seen(20)), Duration::from_millis(150));
        assert_eq!(p.hedge_after(seen(19)), None);
        assert_eq!(p.hedge_after(seen(20)), Some(Duration::from_millis(40)));
        let fast = Some(Estimate {
            samples: 100,
            p50_ms: 0.1,
            p95_ms: 0.2,
            p99_ms: 0.3,
        });
        assert_eq!(p.timeout(fast), Duration::from_millis(100), "the floor");
        assert_eq!(p.hedge_after(fast), Some(Duration::from_millis(1)));
    }

    #[test]
    fn bad_adaptive_values_are_named() {
        let bad = AdaptivePolicy {
            timeout_floor_ms: 500,
            timeout_ceiling_ms: 100,
            ..AdaptivePolicy::default()
        };
        assert_eq!(bad.check().unwrap_err().key, "adaptive.timeout_ceiling_ms");
        let bad = AdaptivePolicy {
            timeout_factor: 0.5,
            ..AdaptivePolicy::default()
        };
        assert_eq!(bad.check().unwrap_err().key, "adaptive.timeout_factor");
    }

    #[tokio::test(start_paused = true)]
    async fn the_sketch_follows_a_shift_within_two_windows() {
        let s = LatencySketch::new();
        assert_eq!(s.estimate(), None);
        for _ in 0..WINDOW_SAMPLES {
            s.record(Duration::from_millis(10));
        }
        let e = s.estimate().unwrap();
        assert!((e.p99_ms - 10.0).abs() < 0.2, "{e:?}");
        for _ in 0..2 * WINDOW_SAMPLES {
            s.record(Duration::from_millis(100));
        }
        let e = s.estimate().unwrap();
        assert!((e.p50_ms - 100.0).abs() < 2.0, "{e:?}");
        assert!((e.p99_ms - 100.0).abs() < 2.0, "{e:?}");
        // Two windows at most (the figures are refreshed every few observations).
        assert!(e.samples > 2 * WINDOW_SAMPLES - REFRESH_EVERY, "{e:?}");
        assert!(e.samples <= 2 * WINDOW_SAMPLES, "{e:?}");
    }

    #[tokio::test(start_paused = true)]
    async fn an_old_window_closes_on_age() {
        let s = LatencySketch::new();
        for _ in 0..MIN_AGED_WINDOW {
            s.record(Duration::from_millis(10));
        }
        tokio::time::advance(WINDOW_AGE).await;
        for _ in 0..MIN_AGED_WINDOW {
            s.record(Duration::from_millis(50));
        }
        tokio::time::advance(WINDOW_AGE).await;
        s.record(Duration::from_millis(50));
        // The 10 ms window is gone: 32 + 1 observations of 50 ms remain.
        let e = s.estimate().unwrap();
        assert_eq!(e.samples, MIN_AGED_WINDOW + 1);
        assert!((e.p50_ms - 50.0).abs() < 1.0, "{e:?}");
    }
}
