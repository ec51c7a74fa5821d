//! The state machine of one breaker (closed, open, half-open, isolated), the
//! permit an attempt holds while it runs and the `circuit_open` error.

use std::collections::VecDeque;
use std::sync::{Mutex, MutexGuard};
use std::time::Duration;

use serde::{Deserialize, Serialize};
use serde_json::Value;
use smol_str::SmolStr;
use tokio::time::Instant;

use super::options::BreakerPolicy;
use crate::error::{ErrorKind, ToolError};

/// What a breaker is doing, as reported to operators (`GET /v1/breakers`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum BreakerState {
    /// Calls pass.
    Closed,
    /// Probes pass, up to `half_open_max_calls` at once.
    HalfOpen,
    /// Calls are rejected until `open_ms` has passed.
    Open,
    /// Opened by hand; rejects until reset by hand.
    Isolated,
}

impl BreakerState {
    /// The value of the `tool_circuit_state` gauge: 0 closed, 1 half-open, 2 open.
    pub fn gauge_value(self) -> f64 {
        match self {
            BreakerState::Closed => 0.0,
            BreakerState::HalfOpen => 1.0,
            BreakerState::Open | BreakerState::Isolated => 2.0,
        }
    }
}

#[derive(Debug)]
enum State {
    Closed,
    Open { until: Instant },
    HalfOpen { probes: u32 },
    Isolated,
}

#[derive(Debug)]
struct Inner {
    state: State,
    failures: VecDeque<Instant>,
    /// The ratio rule's window: calls and failures per tenth of it.
    ratio: RatioWindow,
}

/// Calls and failures over a sliding window kept as ten buckets (a tenth of
/// the window each), so that a busy tool costs ten counters, not a queue of
/// every call.
#[derive(Debug, Default)]
struct RatioWindow {
    origin: Option<Instant>,
    /// (bucket number since `origin`, calls, failures).
    buckets: [(u64, u32, u32); 10],
}

impl RatioWindow {
    fn add(&mut self, now: Instant, window: Duration, failed: bool) -> (u32, u32) {
        let origin = *self.origin.get_or_insert(now);
        let width = (window.as_millis() as u64 / 10).max(1);
        let n = now.duration_since(origin).as_millis() as u64 / width;
        let slot = &mut self.buckets[(n % 10) as usize];
        if slot.0 != n {
            *slot = (n, 0, 0);
        }
        slot.1 += 1;
        slot.2 += u32::from(failed);
        self.buckets
            .iter()
            .filter(|(b, _, _)| *b + 10 > n && *b <= n)
            .fold((0, 0), |(c, f), (_, bc, bf)| (c + bc, f + bf))
    }

    fn clear(&mut self) {
        self.buckets = Default::default();
    }
}

/// The breaker of one dependency.
#[derive(Debug)]
pub struct Breaker {
    inner: Mutex<Inner>,
    gauge: metrics::Gauge,
    /// What it guards, as its `circuit_open` errors name it.
    name: SmolStr,
}

/// Leave to make one attempt. Record its outcome with [`Permit::record`]; a permit
/// dropped unrecorded (the call was cancelled) counts as neither success nor failure.
#[must_use]
pub struct Permit<'a> {
    breaker: &'a Breaker,
    probe: bool,
    recorded: bool,
}

impl Breaker {
    /// A closed breaker; `tool` labels its `tool_circuit_state` gauge.
    pub fn new(tool: &str) -> Self {
        let gauge = metrics::gauge!("tool_circuit_state", "tool" => tool.to_string());
        gauge.set(0.0);
        Self::with_gauge(gauge, SmolStr::from(tool))
    }

    /// A closed breaker for one key of a tool (an origin, a template's
    /// value), named `name` in its errors. It has no gauge: a label per host
    /// would make the metrics unbounded (docs/design.md, "Metrics").
    pub fn keyed(name: SmolStr) -> Self {
        Self::with_gauge(metrics::Gauge::noop(), name)
    }

    fn with_gauge(gauge: metrics::Gauge, name: SmolStr) -> Self {
        Breaker {
            inner: Mutex::new(Inner {
                state: State::Closed,
                failures: VecDeque::new(),
                ratio: RatioWindow::default(),
            }),
            gauge,
            name,
        }
    }

    /// What it guards, as its errors name it.
    pub fn name(&self) -> &str {
        &self.name
    }

    fn lock(&self) -> MutexGuard<'_, Inner> {
        self.inner
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
    }

    fn set(&self, inner: &mut Inner, state: State) {
        inner.state = state;
        self.gauge.set(public_state(&inner.state).gauge_value());
    }

    /// Ask to make an attempt. Rejected with `circuit_open` (and the time until
    /// probes are let through as `retry_after`) while open.
    pub fn admit(&self, policy: &BreakerPolicy) -> Result<Permit<'_>, ToolError> {
        let permit = |probe| Permit {
            breaker: self,
            probe,
            recorded: false,
        };
        if !policy.enabled() {
            return Ok(permit(false));
        }
        let mut inner = self.lock();
        if let State::Open { until } = inner.state {
            let now = Instant::now();
            if now < until {
                return Err(open_error(&self.name, Some(until - now)));
            }
            self.set(&mut inner, State::HalfOpen { probes: 0 });
        }
        match &mut inner.state {
            State::Closed => Ok(permit(false)),
            State::HalfOpen { probes } if *probes < policy.half_open_max_calls.max(1) => {
                *probes += 1;
                Ok(permit(true))
            }
            State::HalfOpen { .. } => Err(open_error(&self.name, None)),
            State::Isolated => Err(open_error(&self.name, None).with_code("isolated")),
            State::Open { .. } => Err(open_error(&self.name, None)),
        }
    }

    fn on_outcome(&self, probe: bool, kind: Option<ErrorKind>, policy: &BreakerPolicy) {
        if !policy.enabled() {
            return;
        }
        let failure = kind.is_some_and(ErrorKind::counts_for_breaker);
        let success = kind.is_none();
        if success && !probe && policy.failure_ratio == 0.0 {
            // The hot path: a success outside half-open changes nothing (the
            // ratio rule counts it).
            return;
        }
        let mut inner = self.lock();
        let now = Instant::now();
        match (&mut inner.state, probe) {
            (State::HalfOpen { .. }, true) if success => {
                inner.failures.clear();
                inner.ratio.clear();
                self.set(&mut inner, State::Closed);
            }
            (State::HalfOpen { .. }, true) if failure => {
                let until = now + Duration::from_millis(policy.open_ms);
                self.set(&mut inner, State::Open { until });
            }
            (State::HalfOpen { probes }, true) => *probes = probes.saturating_sub(1),
            (State::Closed, false) if failure || success => {
                let window = Duration::from_millis(policy.window_ms);
                let by_ratio = policy.failure_ratio > 0.0 && {
                    let (calls, failed) = inner.ratio.add(now, window, failure);
                    calls >= policy.minimum_throughput
                        && f64::from(failed) >= policy.failure_ratio * f64::from(calls)
                };
                let mut by_count = false;
                if failure && policy.failure_threshold > 0 {
                    inner.failures.push_back(now);
                    while inner
                        .failures
                        .front()
                        .is_some_and(|t| now.duration_since(*t) >= window)
                    {
                        inner.failures.pop_front();
                    }
                    by_count = inner.failures.len() >= policy.failure_threshold as usize;
                }
                if by_count || (by_ratio && failure) {
                    inner.failures.clear();
                    inner.ratio.clear();
                    let until = now + Duration::from_millis(policy.open_ms);
                    self.set(&mut inner, State::Open { until });
                }
            }
            // Outcomes of attempts admitted before the state changed tell us
            // nothing new.
            _ => {}
        }
    }

    /// The state now (an open breaker whose `open_ms` has passed reads half-open).
    pub fn state(&self) -> BreakerState {
        let inner = self.lock();
        match inner.state {
            State::Open { until } if Instant::now() >= until => BreakerState::HalfOpen,
            ref s => public_state(s),
        }
    }

    /// How long an open breaker still rejects before it lets a probe through;
    /// `None` unless it is open (an isolated one waits for a reset instead).
    pub fn next_probe_in(&self) -> Option<Duration> {
        match self.lock().state {
            State::Open { until } => Some(until.saturating_duration_since(Instant::now())),
            _ => None,
        }
    }

    /// Close it by hand and forget past failures.
    pub fn reset(&self) {
        let mut inner = self.lock();
        inner.failures.clear();
        inner.ratio.clear();
        self.set(&mut inner, State::Closed);
    }

    /// Open it by hand until [`Breaker::reset`]: take a dependency out of service.
    pub fn isolate(&self) {
        let mut inner = self.lock();
        self.set(&mut inner, State::Isolated);
    }
}

fn public_state(state: &State) -> BreakerState {
    match state {
        State::Closed => BreakerState::Closed,
        State::Open { .. } => BreakerState::Open,
        State::HalfOpen { .. } => BreakerState::HalfOpen,
        State::Isolated => BreakerState::Isolated,
    }
}

/// `circuit_open`, naming what is open (`circuit open for
/// https://api.example.com (http_request)`) and when it lets a probe through.
pub(crate) fn open_error(name: &str, retry_after: Option<Duration>) -> ToolError {
    let message = match retry_after {
        Some(d) => format!(
            "circuit open for {name}; probes allowed in {} ms",
            d.as_millis()
        ),
        None => format!("circuit open for {name}"),
    };
    ToolError {
        retry_after,
        ..ToolError::new(ErrorKind::CircuitOpen, message)
    }
}

impl Breaker {
    /// Count an attempt another breaker admitted (the shared one): the local
    /// breaker stays warm, ready to decide when the shared state is out of reach.
    pub fn observe(&self, outcome: &Result<Value, ToolError>, policy: &BreakerPolicy) {
        let kind = outcome.as_ref().err().map(|e| e.kind);
        if matches!(self.lock().state, State::Closed) {
            self.on_outcome(false, kind, policy);
        }
    }
}
impl Permit<'_> {
    /// Report how the attempt went.
    pub fn record(mut self, outcome: &Result<Value, ToolError>, policy: &BreakerPolicy) {
        self.recorded = true;
        let kind = outcome.as_ref().err().map(|e| e.kind);
        self.breaker.on_outcome(self.probe, kind, policy);
    }
}

impl Drop for Permit<'_> {
    fn drop(&mut self) {
        if !self.recorded && self.probe {
            let mut inner = self.breaker.lock();
            if let State::HalfOpen { probes } = &mut inner.state {
                *probes = probes.saturating_sub(1);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn policy() -> BreakerPolicy {
        BreakerPolicy {
            failure_threshold: 3,
            window_ms: 1_000,
            open_ms: 5_000,
            half_open_max_calls: 1,
            ..BreakerPolicy::default()
        }
    }

    fn fail(b: &Breaker, p: &BreakerPolicy) {
        b.admit(p)
            .unwrap()
            .record(&Err(ToolError::transient("x")), p);
    }

    #[tokio::test(start_paused = true)]
    async fn failures_outside_the_window_do_not_add_up() {
        let (b, p) = (Breaker::new("t"), policy());
        fail(&b, &p);
        fail(&b, &p);
        tokio::time::advance(Duration::from_millis(1_001)).await;
        fail(&b, &p);
        assert_eq!(b.state(), BreakerState::Closed);
        fail(&b, &p);
        fail(&b, &p);
        assert_eq!(b.state(), BreakerState::Open);
    }

    #[tokio::test(start_paused = true)]
    async fn an_open_breaker_says_when_it_probes_next() {
        let (b, p) = (Breaker::new("t"), policy());
        assert_eq!(b.next_probe_in(), None);
        for _ in 0..3 {
            fail(&b, &p);
        }
        assert_eq!(b.next_probe_in(), Some(Duration::from_millis(5_000)));
        tokio::time::advance(Duration::from_millis(3_000)).await;
        assert_eq!(b.next_probe_in(), Some(Duration::from_millis(2_000)));
        tokio::time::advance(Duration::from_millis(2_500)).await;
        assert_eq!(b.next_probe_in(), Some(Duration::ZERO), "due: half-open");
        b.isolate();
        assert_eq!(b.next_probe_in(), None);
    }

    #[tokio::test(start_paused = true)]
    async fn a_dropped_probe_frees_its_slot() {
        let (b, p) = (Breaker::new("t"), policy());
        for _ in 0..3 {
            fail(&b, &p);
        }
        tokio::time::advance(Duration::from_millis(5_000)).await;
        let probe = b.admit(&p).unwrap();
        assert!(b.admit(&p).is_err(), "only one probe at a time");
        drop(probe);
        assert!(
            b.admit(&p).is_ok(),
            "the cancelled probe gave its slot back"
        );
    }

    #[tokio::test(start_paused = true)]
    async fn isolate_rejects_until_reset() {
        let (b, p) = (Breaker::new("t"), policy());
        b.isolate();
        let err = b.admit(&p).err().unwrap();
        assert_eq!(err.kind, ErrorKind::CircuitOpen);
        assert_eq!(err.code.as_deref(), Some("isolated"));
        tokio::time::advance(Duration::from_secs(3600)).await;
        assert_eq!(b.state(), BreakerState::Isolated);
        b.reset();
        assert!(b.admit(&p).is_ok());
    }

    fn succeed(b: &Breaker, p: &BreakerPolicy) {
        b.admit(p).unwrap().record(&Ok(Value::Null), p);
    }

    #[tokio::test(start_paused = true)]
    async fn the_ratio_rule_opens_on_a_share_of_failures_once_the_window_is_full_enough() {
        let p = BreakerPolicy {
            failure_threshold: 0,
            window_ms: 10_000,
            failure_ratio: 0.5,
            minimum_throughput: 10,
            ..BreakerPolicy::default()
        };
        assert!(p.check().is_ok());
        let b = Breaker::new("t");
        // 4 failures of 4: a high share, but below the minimum throughput.
        for _ in 0..4 {
            fail(&b, &p);
        }
        assert_eq!(b.state(), BreakerState::Closed);
        // 6 successes: 4 of 10 failed (40 %).
        for _ in 0..6 {
            succeed(&b, &p);
        }
        assert_eq!(b.state(), BreakerState::Closed);
        // The fifth failure: 5 of 11 (45 %); the sixth: 6 of 12 (50 %) opens it.
        fail(&b, &p);
        assert_eq!(b.state(), BreakerState::Closed);
        fail(&b, &p);
        assert_eq!(b.state(), BreakerState::Open);

        // Calls older than the window no longer count.
        let b = Breaker::new("u");
        for _ in 0..9 {
            fail(&b, &p);
        }
        tokio::time::advance(Duration::from_millis(10_000)).await;
        for _ in 0..9 {
            succeed(&b, &p);
        }
        fail(&b, &p);
        assert_eq!(b.state(), BreakerState::Closed, "1 of 10 in the window");

        // Bad values are named.
        let bad = BreakerPolicy {
            failure_ratio: 1.5,
            ..BreakerPolicy::default()
        };
        assert_eq!(bad.check().unwrap_err().key, "breaker.failure_ratio");
        let bad = BreakerPolicy {
            failure_ratio: 0.5,
            minimum_throughput: 0,
            ..BreakerPolicy::default()
        };
        assert_eq!(bad.check().unwrap_err().key, "breaker.minimum_throughput");
    }
}
