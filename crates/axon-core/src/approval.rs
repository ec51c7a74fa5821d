//! Approval: a person decides before a consequential call runs.
//!
//! A tool whose policy says `approval = "required"` (or `"auto"`, for tools
//! their annotations call destructive, or neither read-only nor idempotent)
//! is **parked** after its arguments pass validation and before its first
//! attempt: an [`ApprovalRecord`] (tool, arguments with secrets masked,
//! caller, correlation id, reason, deadline) is written to the executor's
//! [`ApprovalStore`], and the call waits until a person approves it —
//! optionally with edited arguments, validated again — or denies it, or the
//! deadline (`approval_timeout_ms`) passes. A denial fails the call
//! `approval_denied`, a deadline `approval_timeout`; neither is retried or
//! counted by the breaker. The decision (who, when, whether the arguments
//! were edited) is in the call result's `approval`, so in history.
//!
//! The store decides where the wait lives: [`InMemoryApprovals`] in the
//! process (library users decide through [`crate::Executor::approvals`]), or
//! the SQLite/PostgreSQL store (axon-store), where a decision given by any
//! process on the same store — the CLI, another replica — reaches the call.

use std::collections::BTreeMap;
use std::sync::Mutex;
use std::time::Duration;

use async_trait::async_trait;
use serde::{Deserialize, Serialize};
use serde_json::Value;
use tokio::sync::Notify;

use crate::history::StoreError;
pub use crate::result::approval_note::{ApprovalNote, ApprovalStatus};
use crate::tool::Annotations;
use crate::{ErrorKind, Timestamp, ToolError};

/// The `approval` policy key: whether calls wait for a person.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Approval {
    /// Calls run without asking (the default).
    #[default]
    Never,
    /// Ask for tools whose annotations say they may destroy, or that are
    /// neither read-only nor idempotent.
    Auto,
    /// Ask for every call.
    Required,
}

impl Approval {
    /// Whether a call to a tool with `annotations` waits for a person, and
    /// why (the reason the person is shown).
    pub fn reason(self, annotations: &Annotations) -> Option<&'static str> {
        match self {
            Approval::Never => None,
            Approval::Required => Some("the tool's policy requires approval"),
            Approval::Auto if annotations.destructive => {
                Some("the tool is annotated destructive (approval = \"auto\")")
            }
            Approval::Auto if !annotations.read_only && !annotations.idempotent => {
                Some("the tool is annotated neither read-only nor idempotent (approval = \"auto\")")
            }
            Approval::Auto => None,
        }
    }
}

/// One parked call and, once made, its decision.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ApprovalRecord {
    /// The approval's id: the call's id.
    pub id: String,
    /// The tool.
    pub tool: String,
    /// The arguments as the call gave them, secrets masked (what the person
    /// is shown; the call keeps the real ones).
    pub args: Value,
    /// Who makes the call (stored as `tenant`, a scoped token's name; left
    /// out for the process's owner): another tenant neither lists nor reads
    /// it.
    #[serde(
        rename = "tenant",
        default,
        skip_serializing_if = "crate::Owner::is_process"
    )]
    pub owner: crate::Owner,
    /// The call's correlation id (a plan run's id for its steps).
    pub correlation_id: String,
    /// Why it waits.
    pub reason: String,
    /// When it was parked, ms since the epoch.
    pub requested_at_ms: u64,
    /// When the deadline denies it, ms since the epoch.
    pub expires_at_ms: u64,
    /// Where it stands.
    pub status: ApprovalStatus,
    /// Who decided (`expired` records: nobody).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub decided_by: Option<String>,
    /// When, ms since the epoch.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub decided_at_ms: Option<u64>,
    /// The decider's words (a denial's reason).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub comment: Option<String>,
    /// Arguments the approver put in place of the call's (validated against
    /// the tool's schema before the call runs).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub edited_args: Option<Value>,
    /// The digest of the call's real arguments, secrets included
    /// ([`args_digest`]): the approval is for these arguments only, however
    /// alike their masked forms look.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub args_digest: Option<String>,
    /// When the approved call was let run, ms since the epoch: an approval
    /// is spent once ([`ApprovalStore::spend`]).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub spent_at_ms: Option<u64>,
}

/// An approver's edited arguments with every value it left masked
/// ([`crate::redact::REDACTED`], as the approver was shown it) put back to the
/// call's real value at the same place: a mask is never sent on to the tool.
/// A mask with no real value at its place stays (and fails the tool's schema
/// or reaches the tool as the approver wrote it).
pub fn unmask_edit(edit: Value, real: &Value) -> Value {
    match (edit, real) {
        (Value::String(s), real) if s == crate::redact::REDACTED && !real.is_null() => real.clone(),
        (Value::Object(edit), Value::Object(real)) => Value::Object(
            edit.into_iter()
                .map(|(k, v)| {
                    let v = match real.get(&k) {
                        Some(r) => unmask_edit(v, r),
                        None => v,
                    };
                    (k, v)
                })
                .collect(),
        ),
        (Value::Array(edit), Value::Array(real)) => Value::Array(
            edit.into_iter()
                .enumerate()
                .map(|(i, v)| match real.get(i) {
                    Some(r) => unmask_edit(v, r),
                    None => v,
                })
                .collect(),
        ),
        (edit, _) => edit,
    }
}

/// The digest an approval binds its call's real arguments by (`sha256:` of
/// their canonical JSON, secrets included).
pub fn args_digest(args: &Value) -> String {
    crate::ResponseDigest::of(args).to_string()
}

impl ApprovalRecord {
    /// The record as a person or a client is shown it: without
    /// `args_digest`, which is of the real arguments (a digest of a short
    /// password beside the other arguments can be guessed offline).
    pub fn shown(mut self) -> Self {
        self.args_digest = None;
        self
    }
}

/// A person's decision on a pending approval.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Decision {
    /// Approve (`true`) or deny.
    pub approve: bool,
    /// Who decides (a name for history).
    pub by: String,
    /// A comment; for a denial, the reason the caller is told.
    #[serde(default)]
    pub comment: Option<String>,
    /// Arguments to run the call with instead (approvals only).
    #[serde(default)]
    pub args: Option<Value>,
}

impl ApprovalRecord {
    /// The record with `decision` applied (pending records only).
    pub fn decided(mut self, decision: &Decision, at_ms: u64) -> Result<Self, ApprovalError> {
        if self.status != ApprovalStatus::Pending {
            return Err(ApprovalError::Decided {
                id: self.id,
                status: self.status,
            });
        }
        if decision.args.is_some() && !decision.approve {
            return Err(ApprovalError::Invalid(
                "edited arguments come with an approval, not a denial".into(),
            ));
        }
        self.status = if decision.approve {
            ApprovalStatus::Approved
        } else {
            ApprovalStatus::Denied
        };
        self.decided_by = Some(decision.by.clone());
        self.decided_at_ms = Some(at_ms);
        self.comment = decision.comment.clone();
        self.edited_args = decision.args.clone();
        Ok(self)
    }

    /// What the call result keeps of the decision.
    pub fn note(&self) -> ApprovalNote {
        ApprovalNote {
            id: self.id.clone(),
            status: self.status,
            by: self.decided_by.clone(),
            at_ms: self.decided_at_ms,
            waited_ms: self
                .decided_at_ms
                .unwrap_or(self.expires_at_ms)
                .saturating_sub(self.requested_at_ms),
            args_edited: self.edited_args.is_some(),
        }
    }
}

/// Why an approval could not be recorded or decided.
#[derive(Debug, thiserror::Error)]
pub enum ApprovalError {
    /// No approval with that id (or not one this caller may see).
    #[error("no approval {0:?}")]
    NotFound(String),
    /// It was decided already (or expired).
    #[error("approval {id:?} is {} already", status.as_str())]
    Decided {
        /// The approval.
        id: String,
        /// How it stands.
        status: ApprovalStatus,
    },
    /// The decision itself is malformed.
    #[error("{0}")]
    Invalid(String),
    /// The store failed.
    #[error(transparent)]
    Store(#[from] StoreError),
}

/// Where parked calls and their decisions live.
#[async_trait]
pub trait ApprovalStore: Send + Sync + 'static {
    /// Record a new pending approval (replacing a decided one of the same
    /// id: a plan step asked again).
    async fn open(&self, record: &ApprovalRecord) -> Result<(), StoreError>;
    /// The approval `id`, if there is one.
    async fn get(&self, id: &str) -> Result<Option<ApprovalRecord>, StoreError>;
    /// Decide a pending approval; an approval decided already is
    /// [`ApprovalError::Decided`] (the first decision stands).
    async fn decide(&self, id: &str, decision: &Decision) -> Result<ApprovalRecord, ApprovalError>;
    /// Mark a pending approval expired (its deadline passed); `false` when it
    /// was decided meanwhile.
    async fn expire(&self, id: &str) -> Result<bool, StoreError>;
    /// Mark an approved approval spent as its call is let run: `true` for
    /// the one caller that spends it, `false` when it is not approved or was
    /// spent already (one decision, one run, whoever sends it again).
    async fn spend(&self, id: &str) -> Result<bool, StoreError>;
    /// Approvals, newest first: the pending ones, or all that are kept.
    async fn list(&self, pending_only: bool, limit: u32)
    -> Result<Vec<ApprovalRecord>, StoreError>;
    /// Resolves when approval `id` may have been decided: at once for a store
    /// that knows (in memory), after a short poll interval for a shared one.
    async fn changed(&self, id: &str);
}

/// Approvals in the process: decided through the same executor (or an
/// `Arc` of this store).
#[derive(Default)]
pub struct InMemoryApprovals {
    records: Mutex<BTreeMap<String, ApprovalRecord>>,
    changed: Notify,
}

impl InMemoryApprovals {
    fn lock(&self) -> std::sync::MutexGuard<'_, BTreeMap<String, ApprovalRecord>> {
        self.records
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
    }
}

#[async_trait]
impl ApprovalStore for InMemoryApprovals {
    async fn open(&self, record: &ApprovalRecord) -> Result<(), StoreError> {
        self.lock().insert(record.id.clone(), record.clone());
        Ok(())
    }

    async fn get(&self, id: &str) -> Result<Option<ApprovalRecord>, StoreError> {
        Ok(self.lock().get(id).cloned())
    }

    async fn decide(&self, id: &str, decision: &Decision) -> Result<ApprovalRecord, ApprovalError> {
        let decided = {
            let mut records = self.lock();
            let record = records
                .get(id)
                .cloned()
                .ok_or_else(|| ApprovalError::NotFound(id.to_string()))?;
            let decided = record.decided(decision, now_ms())?;
            records.insert(id.to_string(), decided.clone());
            decided
        };
        self.changed.notify_waiters();
        Ok(decided)
    }

    async fn expire(&self, id: &str) -> Result<bool, StoreError> {
        let mut records = self.lock();
        match records.get_mut(id) {
            Some(record) if record.status == ApprovalStatus::Pending => {
                record.status = ApprovalStatus::Expired;
                Ok(true)
            }
            _ => Ok(false),
        }
    }

    async fn spend(&self, id: &str) -> Result<bool, StoreError> {
        let mut records = self.lock();
        match records.get_mut(id) {
            Some(record)
                if record.status == ApprovalStatus::Approved && record.spent_at_ms.is_none() =>
            {
                record.spent_at_ms = Some(now_ms());
                Ok(true)
            }
            _ => Ok(false),
        }
    }

    async fn list(
        &self,
        pending_only: bool,
        limit: u32,
    ) -> Result<Vec<ApprovalRecord>, StoreError> {
        let records = self.lock();
        Ok(records
            .values()
            .rev()
            .filter(|r| !pending_only || r.status == ApprovalStatus::Pending)
            .take(limit as usize)
            .cloned()
            .collect())
    }

    async fn changed(&self, _id: &str) {
        // A decision made between the caller's read and this wait is seen
        // at the next poll at the latest.
        let _ = tokio::time::timeout(POLL, self.changed.notified()).await;
    }
}

/// The approval id of a plan step: `<run id>.<step id or index>`, the same
/// for every execution of the step.
pub fn step_id(step: &crate::history::StepMark) -> String {
    match &step.id {
        Some(id) => format!("{}.{id}", step.run_id),
        None => format!("{}.{}", step.run_id, step.index),
    }
}

/// How often a call parked in a shared store looks for its decision.
pub const POLL: Duration = Duration::from_millis(250);

/// What the pipeline asks for one call.
pub(crate) struct Ask<'a> {
    pub(crate) id: &'a str,
    pub(crate) tool: &'a str,
    pub(crate) args: Value,
    /// [`args_digest`] of the call's real arguments.
    pub(crate) digest: String,
    /// Whether the caller named the approval (`ToolCall::approval_id`).
    pub(crate) named: bool,
    pub(crate) owner: &'a crate::Owner,
    pub(crate) correlation_id: &'a str,
    pub(crate) reason: &'static str,
    pub(crate) timeout: Duration,
    /// The caller's listener, told that the call waits.
    pub(crate) sink: Option<&'a crate::EventSink>,
}

/// Park the call and wait for its decision: the approved record (whose
/// `edited_args`, if any, replace the call's), or the error the call fails
/// with. A cancelled call stops waiting (its approval expires).
///
/// A plan step asked before (a run resumed after a crash, on this replica or
/// another) finds its approval: one given meanwhile lets it run, a pending
/// one is waited on until its own deadline, and a denied or expired one is
/// asked again.
pub(crate) async fn wait(
    store: &dyn ApprovalStore,
    ask: Ask<'_>,
    cancel: Option<&tokio_util::sync::CancellationToken>,
) -> Result<ApprovalRecord, ToolError> {
    let unavailable = |e: StoreError| {
        ToolError::new(
            ErrorKind::ApprovalDenied,
            format!("approval could not be recorded: {e}"),
        )
        .with_code("store")
        .before_acting()
    };
    let now = now_ms();
    let earlier = store.get(ask.id).await.map_err(unavailable)?;
    // An approval is for one call's real arguments, and runs it once.
    let same = |r: &ApprovalRecord| r.args_digest.as_ref().is_none_or(|d| *d == ask.digest);
    let expires_at_ms = match earlier {
        // A caller that names the approval it was given (an MCP client
        // sending its answer) gets that one or nothing: not for other
        // arguments, and not a second time.
        Some(r) if ask.named && !same(&r) => {
            return Err(ToolError::new(
                ErrorKind::ApprovalDenied,
                format!(
                    "the approval {} was given for other arguments than this call's",
                    ask.id
                ),
            )
            .with_code("approval_mismatch")
            .before_acting());
        }
        Some(r) if ask.named && r.spent_at_ms.is_some() => return Err(spent(ask.id)),
        Some(r) if same(&r) && r.status == ApprovalStatus::Approved && r.spent_at_ms.is_none() => {
            return spend(store, r).await;
        }
        Some(r) if same(&r) && r.status == ApprovalStatus::Pending => r.expires_at_ms,
        // A plan step asked again (its approval spent by an execution that
        // did not finish, denied, expired, or given for arguments it no
        // longer has) is asked anew.
        _ => {
            let record = pending(&ask, now);
            store.open(&record).await.map_err(unavailable)?;
            record.expires_at_ms
        }
    };
    tracing::info!(
        approval = ask.id,
        tool = ask.tool,
        reason = ask.reason,
        "call waits for approval"
    );
    if let Some(sink) = ask.sink {
        sink(crate::CallEvent::AwaitingApproval {
            call_id: ask.id.to_string(),
            tool: ask.tool.to_string(),
            reason: ask.reason.to_string(),
            expires_at_ms,
        });
    }
    let left = Duration::from_millis(expires_at_ms.saturating_sub(now));
    let deadline = tokio::time::Instant::now() + left;
    loop {
        let seen = store.get(ask.id).await.map_err(unavailable)?;
        if let Some(record) = seen.filter(|r| r.status != ApprovalStatus::Pending) {
            return spend(store, settle(record)?).await;
        }
        tokio::select! {
            _ = store.changed(ask.id) => {}
            _ = tokio::time::sleep_until(deadline) => {
                if store.expire(ask.id).await.map_err(unavailable)? {
                    return Err(ToolError::new(
                        ErrorKind::ApprovalTimeout,
                        format!("nobody approved the call within {} ms (approval_timeout_ms)", ask.timeout.as_millis()),
                    ).before_acting());
                }
            }
            _ = crate::tool::cancelled(cancel) => {
                let _ = store.expire(ask.id).await;
                return Err(ToolError::cancelled());
            }
        }
    }
}

/// A new pending record for `ask`, asked at `now`.
fn pending(ask: &Ask<'_>, now: u64) -> ApprovalRecord {
    ApprovalRecord {
        id: ask.id.to_string(),
        tool: ask.tool.to_string(),
        args: ask.args.clone(),
        args_digest: Some(ask.digest.clone()),
        spent_at_ms: None,
        owner: ask.owner.clone(),
        correlation_id: ask.correlation_id.to_string(),
        reason: ask.reason.to_string(),
        requested_at_ms: now,
        expires_at_ms: now + ask.timeout.as_millis() as u64,
        status: ApprovalStatus::Pending,
        decided_by: None,
        decided_at_ms: None,
        comment: None,
        edited_args: None,
    }
}

/// Spend the approved `record` for the call about to run; refused when
/// another call spent it first (the same answer sent twice, two replicas).
async fn spend(
    store: &dyn ApprovalStore,
    record: ApprovalRecord,
) -> Result<ApprovalRecord, ToolError> {
    match store.spend(&record.id).await {
        Ok(true) => Ok(record),
        Ok(false) => Err(spent(&record.id)),
        Err(e) => Err(ToolError::new(
            ErrorKind::ApprovalDenied,
            format!("approval could not be recorded: {e}"),
        )
        .with_code("store")
        .before_acting()),
    }
}

fn spent(id: &str) -> ToolError {
    ToolError::new(
        ErrorKind::ApprovalDenied,
        format!("the approval {id} was used by a call already: one approval runs one call"),
    )
    .with_code("approval_spent")
    .before_acting()
}

fn settle(record: ApprovalRecord) -> Result<ApprovalRecord, ToolError> {
    match record.status {
        ApprovalStatus::Approved => Ok(record),
        ApprovalStatus::Expired => Err(ToolError::new(
            ErrorKind::ApprovalTimeout,
            "nobody approved the call before its deadline (approval_timeout_ms)",
        )
        .before_acting()),
        _ => {
            let by = record.decided_by.as_deref().unwrap_or("someone");
            let why = record
                .comment
                .as_deref()
                .map(|c| format!(": {c}"))
                .unwrap_or_default();
            Err(ToolError::new(
                ErrorKind::ApprovalDenied,
                format!("{by} denied the call{why}"),
            )
            .before_acting())
        }
    }
}

fn now_ms() -> u64 {
    Timestamp::now().unix_ms()
}
