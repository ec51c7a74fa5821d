//! How long to wait before a retry: the backoff curve (constant, linear,
//! exponential, decorrelated), capped at `max_delay_ms`, then jittered (none, full,
//! equal, proportional). Pure functions over a seedable RNG, so the sequences are
//! testable exactly.

use std::time::Duration;

use serde::{Deserialize, Serialize};

use super::retry::RetryPolicy;

/// The shape of the delay curve.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Backoff {
    /// `initial` every time.
    Constant,
    /// `initial × n` before retry n.
    Linear,
    /// `initial × multiplier^(n-1)` before retry n.
    Exponential,
    /// AWS's "decorrelated jitter": random between `initial` and 3× the previous
    /// delay. Random by construction, so `jitter` is not applied on top.
    Decorrelated,
}

/// How the delay is randomised, so that many clients do not retry in lockstep.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Jitter {
    /// Exactly the curve.
    None,
    /// Uniform in `[0, d]`.
    Full,
    /// Uniform in `[d/2, d]`.
    Equal,
    /// Uniform in `[d × (1 − r), d × (1 + r)]`, r = `jitter_ratio`.
    Proportional,
}

/// The delay before retry number `retry` (1 for the first retry). `previous` is the
/// delay used before the previous retry (only decorrelated backoff reads it). The
/// result never exceeds `max_delay_ms`.
pub fn delay(
    policy: &RetryPolicy,
    retry: u32,
    previous: Option<Duration>,
    rng: &mut fastrand::Rng,
) -> Duration {
    let initial = policy.initial_delay_ms as f64;
    let cap = policy.max_delay_ms as f64;
    let base = match policy.backoff {
        Backoff::Constant => initial,
        Backoff::Linear => initial * f64::from(retry),
        Backoff::Exponential => initial * policy.multiplier.powi(retry.saturating_sub(1) as i32),
        Backoff::Decorrelated => {
            let prev = previous.map_or(initial, |d| d.as_millis() as f64);
            let high = (prev * 3.0).max(initial);
            let ms = initial + rng.f64() * (high - initial);
            return Duration::from_millis(ms.min(cap).round() as u64);
        }
    };
    let capped = base.min(cap);
    let jittered = match policy.jitter {
        Jitter::None => capped,
        Jitter::Full => rng.f64() * capped,
        Jitter::Equal => capped / 2.0 + rng.f64() * capped / 2.0,
        Jitter::Proportional => {
            let r = policy.jitter_ratio;
            capped * (1.0 - r + 2.0 * r * rng.f64())
        }
    };
    Duration::from_millis(jittered.clamp(0.0, cap).round() as u64)
}

#[cfg(test)]
mod tests {
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
                let d = delay(p, i, prev, &mut rng);
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
