//! A call's approval as its result shows it: how a parked call stands and,
//! once decided, who decided, when, and whether the arguments were edited.
//! The waiting itself is `crate::approval`'s.

use serde::{Deserialize, Serialize};

/// Where a parked call stands.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum ApprovalStatus {
    /// Waiting for a person.
    Pending,
    /// Approved: the call runs.
    Approved,
    /// Denied: the call fails `approval_denied`.
    Denied,
    /// Nobody decided before the deadline: the call fails `approval_timeout`.
    Expired,
}

impl ApprovalStatus {
    /// The name the API and the CLI use.
    pub fn as_str(self) -> &'static str {
        match self {
            ApprovalStatus::Pending => "pending",
            ApprovalStatus::Approved => "approved",
            ApprovalStatus::Denied => "denied",
            ApprovalStatus::Expired => "expired",
        }
    }
}

/// A call's approval as its result (and so its history entry) shows it.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct ApprovalNote {
    /// The approval's id (the call id).
    pub id: String,
    /// How it was decided.
    #[schemars(with = "String")]
    pub status: ApprovalStatus,
    /// Who decided.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub by: Option<String>,
    /// When, ms since the epoch.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub at_ms: Option<u64>,
    /// How long the call waited for the decision.
    pub waited_ms: u64,
    /// Whether the call ran with arguments the approver edited.
    pub args_edited: bool,
}
