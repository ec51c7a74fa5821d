//! The circuit breaker of one tool. Closed: calls pass and failures are counted in a
//! sliding window; `failure_threshold` failures within `window_ms` open it. Open:
//! calls are rejected with `circuit_open` without touching the tool. After
//! `open_ms` it is half-open: `half_open_max_calls` probes go through; a probe that
//! succeeds closes it, one that fails opens it again. Only kinds that say the
//! dependency is unhealthy count (see [`ErrorKind::counts_for_breaker`](crate::error::ErrorKind::counts_for_breaker)); a
//! cancellation never does. Operators can `reset` or `isolate` it by hand.
//!
//! One breaker per dependency (a tool, an origin, an MCP server: see
//! policy/dependency.rs), shared by every executor in the process; and, when the
//! executor is given a [`SharedBreakers`] (Redis, in `axon-redis`), one per
//! dependency for every replica of a cluster: the shared one decides while it
//! answers, the local one is kept fed with every outcome and decides when it
//! does not (`stage.rs`).
//!
//! The folder holds all of it: the options (`options.rs`), the state machine
//! (`state.rs`), the trait the cluster's half implements (`shared.rs`), the
//! stage an attempt passes through (`stage.rs`) and what operators do to it
//! through the executor (`controls.rs`).

mod controls;
mod options;
mod shared;
mod stage;
mod state;

pub use controls::KeyBreaker;
pub use options::BreakerPolicy;
pub use shared::{SharedAdmit, SharedBreakers, SharedOutcome, SharedUnavailable};
pub(crate) use stage::{Breakers, admit};
pub use state::{Breaker, BreakerState, Permit};
