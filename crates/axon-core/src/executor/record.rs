//! What history keeps of a call: the entry (arguments and result masked where
//! they hold secrets), recorded at once in memory or lent to a store that writes
//! rows.

use std::sync::Mutex;

use serde_json::Value;

use super::Executor;
use crate::call::ToolCall;
use crate::history::HistoryEntry;
use crate::redact::{needs_redaction, redact_owned, scrub_text, scrub_values};
use crate::result::CallResult;
use crate::tool::CallScope;

impl Executor {
    /// Record the call in a store that keeps entries (in memory): it gets a
    /// copy of its own (masked where needed), made before any future is.
    pub(super) fn record_copy(&self, result: &CallResult, call: ToolCall, scope: &CallScope) {
        let owner = call.owner.clone();
        let (args, masking) = Masking::of(call, scope);
        let entry = HistoryEntry {
            result: masking.copy(result),
            args,
            step: masking.step,
            owner,
        };
        if let Some(sink) = &masking.on_record {
            sink(&entry);
        }
        if let Err(e) = self.inner.history.record_at_once(entry) {
            warn_unrecorded(result, &e);
        }
    }

    /// Record the call in a store that writes rows (SQLite, PostgreSQL): it is
    /// lent the entry, which holds the caller's result itself unless something
    /// in it had to be masked, so nothing is copied.
    pub(super) async fn record_lent(
        &self,
        result: CallResult,
        call: ToolCall,
        scope: &CallScope,
    ) -> CallResult {
        let stored = Stored::of(result, call, scope);
        if let Err(e) = self.inner.history.record(stored.entry()).await {
            warn_unrecorded(&stored.entry().result, &e);
        }
        stored.into_result()
    }
}

fn warn_unrecorded(result: &CallResult, e: &crate::history::StoreError) {
    tracing::warn!(call_id = %result.call_id, error = %e, "could not record the call in history");
}

/// A call's history entry and its result. The caller got the real data (a
/// login step's token feeds the next step); history keeps fields named like
/// secrets (an `access_token`, a `Set-Cookie` header), those the tool marked
/// and the plan's secret values as `"***"`. Most results have none of these:
/// then the entry holds the result itself.
enum Stored {
    /// The entry holds the caller's result unchanged.
    Same(HistoryEntry),
    /// The entry holds a masked copy; the caller's result is beside it.
    Masked(Box<HistoryEntry>, CallResult),
}

impl Stored {
    /// Build the entry (the call's `on_record` listener hears it).
    fn of(result: CallResult, call: ToolCall, scope: &CallScope) -> Stored {
        let owner = call.owner.clone();
        let (args, mut masking) = Masking::of(call, scope);
        let step = masking.step.take();
        let stored = if masking.needed(&result) {
            let entry = HistoryEntry {
                result: masking.copy(&result),
                args,
                step,
                owner,
            };
            Stored::Masked(Box::new(entry), result)
        } else {
            Stored::Same(HistoryEntry {
                result,
                args,
                step,
                owner,
            })
        };
        if let Some(sink) = &masking.on_record {
            sink(stored.entry());
        }
        stored
    }

    fn entry(&self) -> &HistoryEntry {
        match self {
            Stored::Same(entry) => entry,
            Stored::Masked(entry, _) => entry,
        }
    }

    fn into_result(self) -> CallResult {
        match self {
            Stored::Same(entry) => entry.result,
            Stored::Masked(_, result) => result,
        }
    }
}

/// What history masks of one call: the pointers the tool marked in its data,
/// the plan's secret values, and what the call brings to its entry.
struct Masking {
    output_secrets: Vec<String>,
    secrets: Vec<String>,
    step: Option<crate::history::StepMark>,
    on_record: Option<crate::call::RecordSink>,
}

impl Masking {
    /// The arguments as stored (redacted), and how to mask the result.
    fn of(call: ToolCall, scope: &CallScope) -> (Value, Masking) {
        let pointers =
            |list: &Mutex<Vec<String>>| list.lock().map(|s| s.clone()).unwrap_or_default();
        let mut args = redact_owned(call.args, &pointers(&scope.secret_pointers));
        let secrets = crate::redact::with_encoded_forms(call.secrets);
        if !secrets.is_empty() {
            scrub_values(&mut args, &secrets);
        }
        let masking = Masking {
            output_secrets: pointers(&scope.output_secrets),
            secrets,
            step: call.step.map(|step| *step),
            on_record: call.on_record,
        };
        (args, masking)
    }

    /// Whether the stored result differs from the caller's.
    fn needed(&self, result: &CallResult) -> bool {
        !self.output_secrets.is_empty() || !self.secrets.is_empty() || needs_redaction(&result.data)
    }

    /// The result as history keeps it.
    fn copy(&self, result: &CallResult) -> CallResult {
        let mut copy = result.clone();
        if !self.needed(result) {
            return copy;
        }
        copy.data = redact_owned(copy.data, &self.output_secrets);
        if !self.secrets.is_empty() {
            scrub_values(&mut copy.data, &self.secrets);
            if let Some(e) = copy.error.as_mut()
                && let Some(clean) = scrub_text(&e.message, &self.secrets)
            {
                e.message = clean;
            }
        }
        copy
    }
}
