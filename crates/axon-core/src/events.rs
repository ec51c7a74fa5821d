//! What the pipeline reports as it goes. One [`Observer`] per call turns each step (attempt
//! started, retrying, slow, hedged, finished) into three things at once: Prometheus metrics
//! with the names and labels of docs/design.md ("Metrics and logs"), `tracing` events, and
//! an optional [`CallEvent`] for a listener (a plan's progress display, an SSE stream).

use std::sync::Arc;
use std::time::Duration;

use serde::Serialize;

use crate::error::{CallError, ToolError};
use crate::result::CallResult;

/// A progress event of one call, for listeners.
#[derive(Clone, Debug, PartialEq, Serialize)]
#[serde(tag = "event", rename_all = "snake_case")]
pub enum CallEvent {
    /// Attempt `attempt` is about to run the tool.
    AttemptStarted {
        /// The call.
        call_id: String,
        /// The tool.
        tool: String,
        /// 1-based.
        attempt: u32,
    },
    /// Attempt `attempt` failed; the next one starts after `delay_ms`.
    Retrying {
        /// The call.
        call_id: String,
        /// The tool.
        tool: String,
        /// The attempt that failed.
        attempt: u32,
        /// Why.
        error: CallError,
        /// Backoff before the next attempt.
        delay_ms: u64,
    },
    /// The attempt passed its soft timeout and is still running.
    Slow {
        /// The call.
        call_id: String,
        /// The tool.
        tool: String,
        /// The attempt.
        attempt: u32,
        /// How long it has run.
        elapsed_ms: u64,
    },
    /// A hedged execution started beside a slow attempt.
    Hedged {
        /// The call.
        call_id: String,
        /// The tool.
        tool: String,
        /// The attempt being hedged.
        attempt: u32,
        /// Which hedge (1-based).
        hedge: u32,
    },
    /// The tool reported progress ([`ToolContext::progress`](crate::ToolContext::progress)).
    Progress {
        /// The call.
        call_id: String,
        /// The tool.
        tool: String,
        /// The attempt reporting.
        attempt: u32,
        /// How far it has got, in the tool's own units.
        progress: f64,
        /// The end, when known.
        #[serde(skip_serializing_if = "Option::is_none")]
        total: Option<f64>,
        /// What it is doing.
        #[serde(skip_serializing_if = "Option::is_none")]
        message: Option<String>,
    },
    /// The call is parked until a person decides (crate::approval).
    AwaitingApproval {
        /// The call (and the approval's id).
        call_id: String,
        /// The tool.
        tool: String,
        /// Why it waits.
        reason: String,
        /// When the deadline denies it, ms since the epoch.
        expires_at_ms: u64,
    },
    /// The call finished.
    Finished {
        /// The whole result.
        result: Box<CallResult>,
    },
}

/// A listener for call events. Called inline; keep it quick (send on a channel).
pub type EventSink = Arc<dyn Fn(CallEvent) + Send + Sync>;

const OUTCOMES: [&str; 6] = [
    "success",
    "cache_hit",
    "timeout",
    "error",
    "circuit_open",
    "cancelled",
];

/// Metric handles of one tool, registered once so the hot path does no label work.
/// Install the metrics recorder before building the executor.
#[derive(Debug)]
pub struct ToolMetrics {
    tool: String,
    latency: [metrics::Histogram; 6],
    cache_hits: metrics::Counter,
    retries: metrics::Counter,
    inflight: metrics::Gauge,
}

impl ToolMetrics {
    /// Register the handles of `tool`.
    pub fn new(tool: &str) -> Self {
        let latency = OUTCOMES.map(|outcome| {
            metrics::histogram!("tool_latency_ms", "tool" => tool.to_string(), "outcome" => outcome)
        });
        ToolMetrics {
            tool: tool.to_string(),
            latency,
            cache_hits: metrics::counter!("tool_cache_hits_total", "tool" => tool.to_string()),
            retries: metrics::counter!("tool_retries_total", "tool" => tool.to_string()),
            inflight: metrics::gauge!("tool_inflight", "tool" => tool.to_string()),
        }
    }

    /// Describe the metrics (units and help text) to the installed recorder.
    pub fn describe() {
        metrics::describe_histogram!(
            "tool_latency_ms",
            metrics::Unit::Milliseconds,
            "Tool call latency in milliseconds"
        );
        metrics::describe_counter!("tool_errors_total", "Failed tool calls by reason");
        metrics::describe_counter!("tool_cache_hits_total", "Tool calls served from the cache");
        metrics::describe_counter!("tool_retries_total", "Retries of tool calls");
        metrics::describe_gauge!(
            "tool_circuit_state",
            "Circuit breaker state (0 closed, 1 half-open, 2 open)"
        );
        metrics::describe_gauge!("tool_inflight", "Tool calls in flight");
    }

    /// Count a call in flight until the guard drops.
    pub fn in_flight(&self) -> InFlight<'_> {
        self.inflight.increment(1.0);
        InFlight(&self.inflight)
    }
}

/// Decrements `tool_inflight` when dropped.
pub struct InFlight<'a>(&'a metrics::Gauge);

impl Drop for InFlight<'_> {
    fn drop(&mut self) {
        self.0.decrement(1.0);
    }
}

/// Reports one call's progress.
pub struct Observer<'a> {
    pub(crate) metrics: &'a ToolMetrics,
    pub(crate) call_id: &'a str,
    pub(crate) sink: Option<&'a EventSink>,
}

impl Observer<'_> {
    fn emit(&self, make: impl FnOnce() -> CallEvent) {
        if let Some(sink) = self.sink {
            sink(make());
        }
    }

    fn tool(&self) -> &str {
        &self.metrics.tool
    }

    /// An attempt starts.
    pub fn attempt_started(&self, attempt: u32) {
        // A retry counts when it reaches the tool, not when it is scheduled: one
        // the breaker then refuses, or the caller cancels, never ran.
        if attempt > 1 {
            self.metrics.retries.increment(1);
        }
        tracing::trace!(
            tool = self.tool(),
            call_id = self.call_id,
            attempt,
            "attempt started"
        );
        self.emit(|| CallEvent::AttemptStarted {
            call_id: self.call_id.into(),
            tool: self.tool().into(),
            attempt,
        });
    }

    /// An attempt failed and will be retried after `delay`.
    pub fn retrying(&self, attempt: u32, error: &ToolError, delay: Duration) {
        let delay_ms = delay.as_millis() as u64;
        tracing::warn!(
            tool = self.tool(), call_id = self.call_id, attempt, outcome = error.kind.as_str(),
            error = %error.message, delay_ms, "attempt failed; retrying"
        );
        self.emit(|| CallEvent::Retrying {
            call_id: self.call_id.into(),
            tool: self.tool().into(),
            attempt,
            error: error.clone().into(),
            delay_ms,
        });
    }

    /// An attempt passed its soft timeout.
    pub fn slow(&self, attempt: u32, elapsed: Duration) {
        let elapsed_ms = elapsed.as_millis() as u64;
        tracing::warn!(
            tool = self.tool(),
            call_id = self.call_id,
            attempt,
            elapsed_ms,
            "attempt passed its soft timeout"
        );
        self.emit(|| CallEvent::Slow {
            call_id: self.call_id.into(),
            tool: self.tool().into(),
            attempt,
            elapsed_ms,
        });
    }

    /// A hedge started.
    pub fn hedged(&self, attempt: u32, hedge: u32) {
        tracing::debug!(
            tool = self.tool(),
            call_id = self.call_id,
            attempt,
            hedge,
            "hedged attempt started"
        );
        self.emit(|| CallEvent::Hedged {
            call_id: self.call_id.into(),
            tool: self.tool().into(),
            attempt,
            hedge,
        });
    }

    /// The call is done: latency, errors and cache hits are counted, and a log line
    /// with the fields docs/design.md lists is written.
    pub fn finished(&self, result: &CallResult, warnings: &[String]) {
        let cache_hit = result.provenance.cache_hit;
        let outcome = match &result.error {
            None if cache_hit => "cache_hit",
            None => "success",
            Some(e) => e.kind.metric_outcome(),
        };
        if let Some(i) = OUTCOMES.iter().position(|o| *o == outcome) {
            self.metrics.latency[i].record(result.duration_ms as f64);
        }
        if cache_hit {
            self.metrics.cache_hits.increment(1);
        }
        match &result.error {
            None => tracing::debug!(
                tool = self.tool(), call_id = self.call_id, run_id = %result.correlation_id,
                attempt = result.attempts, outcome, latency_ms = result.duration_ms, cache_hit, "call finished"
            ),
            Some(e) => {
                metrics::counter!("tool_errors_total", "tool" => self.tool().to_string(), "reason" => e.kind.metric_reason())
                    .increment(1);
                tracing::warn!(
                    tool = self.tool(), call_id = self.call_id, run_id = %result.correlation_id,
                    attempt = result.attempts, outcome, latency_ms = result.duration_ms, cache_hit,
                    error_reason = %e.message, "call failed"
                );
            }
        }
        for w in warnings {
            tracing::warn!(tool = self.tool(), call_id = self.call_id, "{w}");
        }
        self.emit(|| CallEvent::Finished {
            result: Box::new(result.clone()),
        });
    }
}
