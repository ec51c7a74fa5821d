//! Approval in-band: a call that waits for a person (axon_core::approval)
//! asks the MCP client's user with an elicitation (protocol 2025-11-25), when
//! the client declared it can show forms and the caller is the server's owner
//! (`axon mcp` over stdio, or `/mcp` without a scoped token: a client of a
//! shared server does not approve its own calls). The answer decides the
//! approval like any other decider would: accepted with `approve: true`
//! approves, accepted with `false` or declined denies, dismissed (`cancel`)
//! leaves it waiting for another decider or its deadline.
//!
//! Protocol 2026-07-28 forbids server-to-client requests; there, the call
//! waits for a decision made elsewhere (the dashboard, the API, the CLI):
//! docs/design.md, "Approval", says why.

use std::sync::Arc;

use axon_core::approval::{ApprovalStore, Decision};
use rmcp::RoleServer;
use rmcp::model::{ElicitRequestParams, ElicitationAction, ElicitationSchema};
use rmcp::service::Peer;
use serde_json::Value;

/// Whether this client can be asked (it declared form elicitation).
pub(crate) fn can_ask(peer: &Peer<RoleServer>) -> bool {
    peer.supported_elicitation_modes()
        .contains(&rmcp::service::ElicitationMode::Form)
}

/// Ask the client's user about approval `id` in the background; the answer
/// (if any) decides it.
pub(crate) fn ask(peer: Peer<RoleServer>, approvals: Arc<dyn ApprovalStore>, id: String) {
    tokio::spawn(async move {
        let record = match approvals.get(&id).await {
            Ok(Some(record)) => record,
            _ => return,
        };
        let message = format!(
            "Allow the call to {}? ({})\nArguments: {}",
            record.tool,
            record.reason,
            serde_json::to_string_pretty(&record.args).unwrap_or_default()
        );
        let Ok(schema) = ElicitationSchema::builder()
            .required_bool("approve")
            .optional_string("comment")
            .description("Approve or deny this call")
            .build()
        else {
            return;
        };
        let request = ElicitRequestParams::FormElicitationParams {
            meta: None,
            message,
            requested_schema: schema,
        };
        let answer = match peer.create_elicitation(request).await {
            Ok(answer) => answer,
            Err(e) => {
                tracing::debug!(approval = %id, error = %e, "the client was not asked");
                return;
            }
        };
        let content = answer.content.unwrap_or(Value::Null);
        let approve = match answer.action {
            ElicitationAction::Accept => content["approve"].as_bool().unwrap_or(false),
            ElicitationAction::Decline => false,
            // Dismissed: someone else may still decide.
            _ => return,
        };
        let client = peer
            .peer_info()
            .map(|info| info.client_info.name.clone())
            .unwrap_or_else(|| "client".into());
        let decision = Decision {
            approve,
            by: format!("mcp ({client})"),
            comment: content["comment"].as_str().map(str::to_string),
            args: None,
        };
        if let Err(e) = approvals.decide(&id, &decision).await {
            tracing::debug!(approval = %id, error = %e, "the client's answer came too late");
        }
    });
}
