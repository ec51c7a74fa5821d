//! The two ends of a call's pipeline (`Executor::pipeline`): the scope it
//! runs in, made as it starts; its duration and fetch time, stamped as it
//! ends; and the short way through for a tool that is not registered.

use std::sync::{Arc, Mutex, OnceLock};

use serde_json::Value;
use smol_str::SmolStr;
use tokio::time::Instant;

use super::Executor;
use crate::call::ToolCall;
use crate::error::{CallError, ErrorKind, ToolError};
use crate::outcome::Outcome;
use crate::result::{CallResult, Source, Timestamp};
use crate::tool::CallScope;

impl Executor {
    /// A call to a tool the registry does not have: counted, recorded,
    /// answered `unknown_tool`.
    pub(super) async fn unknown_tool(
        &self,
        call: ToolCall,
        scope: &Arc<CallScope>,
        started_at: Timestamp,
        clock: Instant,
    ) -> CallResult {
        let error = ToolError::new(
            ErrorKind::UnknownTool,
            format!("no tool named {:?} is registered", call.tool),
        );
        metrics::counter!("tool_errors_total", "tool" => "_unknown", "reason" => "unknown_tool")
            .increment(1);
        let result = CallResult {
            duration_ms: clock.elapsed().as_millis() as u64,
            ..assemble(Outcome::failed(error), scope, started_at)
        };
        if self.inner.history.records_at_once() {
            self.record_copy(&result, call, scope);
            return result;
        }
        self.record_lent(result, call, scope).await
    }
}

/// The scope a call runs in: its ids, cancellation, the secrets and chaos it
/// meets, the tool's name as registered, its events and tenant.
pub(super) fn scope_of(call: &mut ToolCall, call_id: SmolStr, tool: SmolStr) -> CallScope {
    CallScope {
        // Moved, not copied: the scope holds the call's correlation id from
        // here on, and the result shares it.
        correlation_id: call
            .correlation_id
            .take()
            .unwrap_or_else(|| call_id.clone()),
        call_id,
        cancel: call.cancel.clone().map(OnceLock::from).unwrap_or_default(),
        secret_pointers: Mutex::new(Vec::new()),
        output_secrets: Mutex::new(Vec::new()),
        secrets: call.secrets.clone(),
        chaos: Mutex::new(Vec::new()),
        approval: Mutex::new(None),
        tool,
        events: call.events.clone(),
        owner: call.owner.clone(),
    }
}

/// The call's duration, to the end of the answering attempt when there is
/// one (what follows it, the output check and the digest, takes
/// microseconds), and when a tool's answer was fetched.
pub(super) fn stamp_end(
    result: &mut CallResult,
    clock: Instant,
    ended: Option<Instant>,
    started_at: Timestamp,
) {
    let ended = ended.unwrap_or_else(Instant::now);
    result.duration_ms = ended.saturating_duration_since(clock).as_millis() as u64;
    if result.success && result.provenance.source == Source::Tool {
        // Fetched as the call ended, to the millisecond.
        let fetched = started_at.unix_ms() + result.duration_ms;
        result
            .provenance
            .fetched_at
            .get_or_insert(Timestamp::from_unix_ms(fetched));
    }
}

/// The call's result from the pipeline's outcome: the chaos it met and the
/// approval it ran under taken from its scope.
pub(super) fn assemble(outcome: Outcome, scope: &CallScope, started_at: Timestamp) -> CallResult {
    let mut provenance = outcome.provenance;
    if let Ok(mut notes) = scope.chaos.lock() {
        provenance.chaos = std::mem::take(&mut *notes);
    }
    let (success, data, error) = match outcome.result {
        Ok(data) => (true, data, None),
        Err(e) => (false, Value::Null, Some(CallError::from(e))),
    };
    CallResult {
        call_id: scope.call_id.clone(),
        correlation_id: scope.correlation_id.clone(),
        tool: scope.tool.clone(),
        success,
        data,
        error,
        attempts: outcome.attempts,
        retry_reasons: outcome.reasons,
        retry_delays_ms: outcome.delays_ms,
        started_at,
        duration_ms: 0,
        fallback: None,
        provenance,
        cut: None,
        approval: scope
            .approval
            .lock()
            .ok()
            .and_then(|mut note| note.take())
            .map(Box::new),
    }
}
