//! The run's schedule: which steps are ready, and which goes first (the
//! longest remaining path), and whether a resumed run is the same plan.

use std::cmp::Reverse;
use std::collections::{BinaryHeap, HashMap, VecDeque};

use axon_core::Executor;
use axon_core::redact::REDACTED;
use futures::stream::FuturesUnordered;
use serde_json::Value;

use crate::plan::Plan;
use crate::validate::Graph;

use super::*;

/// Where every step of a run stands while it is scheduled.
pub(super) struct Schedule<'a> {
    /// Each step's longest remaining path: the larger goes first.
    pub(super) priority: Vec<u64>,
    /// Dependencies each step still waits for.
    pub(super) pending: Vec<usize>,
    /// Steps that may start, by priority, then index.
    pub(super) ready: BinaryHeap<(u64, Reverse<usize>)>,
    /// Steps finished (or skipped) whose dependents are yet to hear of it.
    pub(super) settled: VecDeque<usize>,
    /// The calls in flight.
    pub(super) running: FuturesUnordered<StepCall<'a>>,
    /// Calls in flight per tool, against its `max_concurrent`.
    pub(super) per_tool: HashMap<&'a str, u32>,
}

impl<'a> Schedule<'a> {
    /// Steps already finished (resumed from checkpoints) are settled; steps with
    /// no dependencies are ready.
    pub(super) fn new(
        plan: &'a Plan,
        graph: &Graph,
        outcomes: &[Option<StepOutcome>],
        executor: &Executor,
    ) -> Self {
        let priority = critical_path(plan, graph, |tool| executor.observed_p50_ms(tool));
        let pending: Vec<usize> = graph.deps.iter().map(Vec::len).collect();
        let mut ready = BinaryHeap::new();
        let mut settled = VecDeque::new();
        for i in 0..plan.steps.len() {
            if outcomes[i].is_some() {
                settled.push_back(i);
            } else if pending[i] == 0 {
                ready.push((priority[i], Reverse(i)));
            }
        }
        Schedule {
            priority,
            pending,
            ready,
            settled,
            running: FuturesUnordered::new(),
            per_tool: HashMap::new(),
        }
    }
}

/// Whether a plan submitted now is the one a run began with: equal, except
/// where the stored document masked a secret (`"***"` there matches any value,
/// so a changed password does not count as a changed plan).
pub(super) fn same_plan(now: &Plan, stored: &Plan) -> bool {
    fn same(now: &Value, stored: &Value) -> bool {
        match (now, stored) {
            (_, Value::String(s)) if s == REDACTED => true,
            (Value::Object(a), Value::Object(b)) => {
                a.len() == b.len() && a.iter().all(|(k, v)| b.get(k).is_some_and(|w| same(v, w)))
            }
            (Value::Array(a), Value::Array(b)) => {
                a.len() == b.len() && a.iter().zip(b).all(|(v, w)| same(v, w))
            }
            (a, b) => a == b,
        }
    }
    match (serde_json::to_value(now), serde_json::to_value(stored)) {
        (Ok(a), Ok(b)) => same(&a, &b),
        _ => false,
    }
}

/// Longest remaining path from each step to the end of the plan, itself included:
/// in time when every step has a duration — its `expected_ms`, else the median
/// `observed_ms` gives for its tool (what the executor has seen of it) — and in
/// steps otherwise.
pub fn critical_path(
    plan: &Plan,
    graph: &Graph,
    observed_ms: impl Fn(&str) -> Option<f64>,
) -> Vec<u64> {
    // Weights in µs, so that sub-millisecond tools still order among themselves.
    let durations: Option<Vec<u64>> = plan
        .steps
        .iter()
        .map(|s| {
            s.expected_ms
                .map(|ms| ms.saturating_mul(1000))
                .or_else(|| observed_ms(&s.tool).map(|ms| (ms * 1000.0).round() as u64))
                .map(|us| us.max(1))
        })
        .collect();
    let weight = |i: usize| durations.as_ref().map_or(1, |d| d[i]);
    // Kahn's order from the sinks back (the graph is acyclic after validation).
    let n = plan.steps.len();
    let mut remaining: Vec<usize> = graph.dependents.iter().map(Vec::len).collect();
    let mut queue: VecDeque<usize> = (0..n).filter(|&i| remaining[i] == 0).collect();
    let mut longest = vec![0u64; n];
    while let Some(i) = queue.pop_front() {
        let below = graph.dependents[i]
            .iter()
            .map(|&d| longest[d])
            .max()
            .unwrap_or(0);
        longest[i] = weight(i) + below;
        for &d in &graph.deps[i] {
            remaining[d] -= 1;
            if remaining[d] == 0 {
                queue.push_back(d);
            }
        }
    }
    longest
}
