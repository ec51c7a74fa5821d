//! The shapes of the wait before a retry: the backoff curve (constant, linear,
//! exponential, decorrelated) and its jitter (none, full, equal, proportional).
//! [`RetryPolicy::delay`](super::RetryPolicy::delay) computes one delay from
//! them, a pure function over a seedable RNG, so the sequences are testable
//! exactly.

use serde::{Deserialize, Serialize};

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
