//! Approval in-band: a call that waits for a person (axon_core::approval)
//! asks the MCP client's user with an elicitation (protocol 2025-11-25), when
//! the client declared it can show forms and the caller is the server's owner
//! (`axon mcp` over stdio, or `/mcp` with an admin token: a scoped client,
//! or a session of a server without tokens, does not approve its own calls). The answer decides the
//! approval like any other decider would: accepted with `approve: true`
//! approves, accepted with `false` or declined denies, dismissed (`cancel`)
//! leaves it waiting for another decider or its deadline.
//!
//! Protocol 2026-07-28 forbids server-to-client requests and offers
//! multi-round-trip requests instead (SEP-2322): the call answers
//! `InputRequiredResult` with the same form as an input request and the
//! approval's id as `requestState`; the client asks its user and sends the
//! call again with the answer, which decides the approval, and the call runs
//! under it ([`answered`]). `requestState` comes back from the client, so it
//! is checked: it must name a pending approval of the same tool with the same
//! arguments, or the call is refused.

use std::sync::Arc;

use axon_core::approval::{ApprovalRecord, ApprovalStatus, ApprovalStore, Decision};
use axon_core::{CallEvent, ToolCall};
use rmcp::RoleServer;
use rmcp::model::{
    ElicitRequest, ElicitRequestParams, ElicitationAction, ElicitationSchema, InputRequest,
    InputRequiredResult, InputResponses, ProtocolVersion,
};
use rmcp::service::{Peer, RequestContext};
use serde_json::Value;

/// The key of the approval question among a call's input requests.
const INPUT_KEY: &str = "axon_approval";

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
        let Some(request) = form(&record) else {
            return;
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

/// The form that asks a person about `record`.
fn form(record: &ApprovalRecord) -> Option<ElicitRequestParams> {
    let message = format!(
        "Allow the call to {}? ({})\nArguments: {}",
        record.tool,
        record.reason,
        serde_json::to_string_pretty(&record.args).unwrap_or_default()
    );
    let schema = ElicitationSchema::builder()
        .required_bool("approve")
        .optional_string("comment")
        .description("Approve or deny this call")
        .build()
        .ok()?;
    Some(ElicitRequestParams::FormElicitationParams {
        meta: None,
        message,
        requested_schema: schema,
    })
}

/// Whether this request speaks 2026-07-28 or later and its client declared
/// form elicitation (the revision's per-request capabilities).
pub(crate) fn can_ask_inline(context: &RequestContext<RoleServer>) -> bool {
    let modern = context
        .protocol_version()
        .is_some_and(|v| v.as_str() >= ProtocolVersion::V_2026_07_28.as_str());
    let form = context
        .client_capabilities()
        .and_then(|c| c.elicitation)
        .is_some_and(|e| e.form.is_some() || e.url.is_none());
    modern && form
}

/// The answer to a call parked for approval, for a 2026-07-28 client: the
/// question as an input request, the approval's id as `requestState`.
pub(crate) fn input_required(record: &ApprovalRecord) -> Option<InputRequiredResult> {
    let question = InputRequest::Elicitation(ElicitRequest::new(form(record)?));
    Some(InputRequiredResult::new(
        Some([(INPUT_KEY.to_string(), question)].into_iter().collect()),
        Some(record.id.clone()),
    ))
}

/// Why a call sent again with an answer is refused.
pub(crate) type Refusal = (&'static str, String);

/// A call sent again with its user's answer (`requestState`,
/// `inputResponses`): check that the state names a pending approval of this
/// very call (tool and arguments as shown), then decide it. The approval id
/// to run the call under, or why not.
pub(crate) async fn answered(
    approvals: &dyn ApprovalStore,
    state: &str,
    responses: Option<&InputResponses>,
    tool: &str,
    shown: &Value,
    digest: &str,
    client: &str,
) -> Result<String, Refusal> {
    let not_this = || {
        (
            "invalid_arguments",
            "requestState does not name a pending approval of this call".to_string(),
        )
    };
    let record = approvals
        .get(state)
        .await
        .map_err(|e| ("unavailable", e.to_string()))?
        .ok_or_else(not_this)?;
    // This very call: its tool, its arguments as shown and as they really
    // are (a secret changed alone still changes the digest), the owner's.
    let same_args = record.args_digest.as_ref().is_none_or(|d| d == digest);
    if record.tool != tool || &record.args != shown || !same_args || !record.owner.is_process() {
        return Err(not_this());
    }
    if record.spent_at_ms.is_some() {
        return Err((
            "approval_denied",
            "this approval was used by a call already: one approval runs one call".to_string(),
        ));
    }
    if record.status == ApprovalStatus::Approved {
        return Ok(record.id);
    }
    if record.status != ApprovalStatus::Pending {
        return Err(not_this());
    }
    let answer = responses
        .and_then(|r| r.get(INPUT_KEY))
        .cloned()
        .unwrap_or(Value::Null);
    let approve = answer["action"] == "accept" && answer["content"]["approve"] == true;
    let decision = Decision {
        approve,
        by: format!("mcp ({client})"),
        comment: answer["content"]["comment"]
            .as_str()
            .map(str::to_string)
            .or_else(|| {
                (answer["action"] != "accept").then(|| {
                    format!(
                        "{} in the MCP client",
                        answer["action"].as_str().unwrap_or("no answer")
                    )
                })
            }),
        args: None,
    };
    match approvals.decide(state, &decision).await {
        Ok(decided) if decided.status == ApprovalStatus::Approved => Ok(decided.id),
        Ok(decided) => Err((
            "approval_denied",
            format!(
                "{} denied the call{}",
                decision.by,
                decided
                    .comment
                    .map(|c| format!(": {c}"))
                    .unwrap_or_default()
            ),
        )),
        Err(e) => Err(("approval_denied", e.to_string())),
    }
}

/// The approval a call sent again with its user's answer (2026-07-28) was
/// asked for, or why the answer does not count (a scoped client does not
/// approve its own calls; elicit.rs checks the rest).
pub(crate) async fn approval_answered(
    approvals: &Arc<dyn axon_core::approval::ApprovalStore>,
    call: &ToolCall,
    state: &str,
    responses: Option<&rmcp::model::InputResponses>,
    context: &RequestContext<RoleServer>,
) -> Result<String, Refusal> {
    if !call.owner.is_process() {
        return Err((
            "invalid_arguments",
            "a scoped client does not approve its own calls".to_string(),
        ));
    }
    let shown = axon_core::redact::redact(&call.args, &[]);
    answered(
        approvals.as_ref(),
        state,
        responses,
        &call.tool,
        &shown,
        &axon_core::approval::args_digest(&call.args),
        &client_name(context),
    )
    .await
}

/// `call` with its events wired to the client: progress notifications when
/// it asked for them; an approval question asked in-band (`asks`), or the
/// parked call's id sent on the returned channel (`inline`: the client
/// answers `input_required`).
pub(crate) fn with_events(
    call: ToolCall,
    context: &RequestContext<RoleServer>,
    approvals: &Arc<dyn axon_core::approval::ApprovalStore>,
    asks: bool,
    inline: bool,
) -> (ToolCall, tokio::sync::oneshot::Receiver<String>) {
    let progress = context.meta.get_progress_token();
    let (parked_tx, parked) = tokio::sync::oneshot::channel::<String>();
    if progress.is_none() && !asks && !inline {
        return (call, parked);
    }
    let parked_tx = std::sync::Mutex::new(Some(parked_tx));
    let peer = context.peer.clone();
    let approvals = approvals.clone();
    let call = call.on_event(move |event| match event {
        CallEvent::Progress {
            progress: done,
            total,
            message,
            ..
        } => {
            let Some(token) = &progress else { return };
            let mut note = rmcp::model::ProgressNotificationParam::new(token.clone(), done);
            note.total = total;
            note.message = message;
            let peer = peer.clone();
            tokio::spawn(async move { peer.notify_progress(note).await });
        }
        CallEvent::AwaitingApproval { call_id, .. } if asks => {
            ask(peer.clone(), approvals.clone(), call_id);
        }
        CallEvent::AwaitingApproval { call_id, .. } if inline => {
            if let Some(tx) = parked_tx.lock().ok().and_then(|mut tx| tx.take()) {
                let _ = tx.send(call_id);
            }
        }
        _ => {}
    });
    (call, parked)
}

/// The name the client gave itself, for the history of what it decided.
pub(crate) fn client_name(context: &RequestContext<RoleServer>) -> String {
    context
        .client_info()
        .map(|info| info.name)
        .unwrap_or_else(|| "client".into())
}

#[cfg(test)]
mod tests {
    use super::*;
    use axon_core::approval::InMemoryApprovals;
    use serde_json::json;

    fn parked(id: &str, tool: &str, args: Value) -> ApprovalRecord {
        ApprovalRecord {
            id: id.into(),
            tool: tool.into(),
            owner: axon_core::Owner::Process,
            correlation_id: "c".into(),
            reason: "required".into(),
            requested_at_ms: 1,
            expires_at_ms: u64::MAX,
            status: ApprovalStatus::Pending,
            decided_by: None,
            decided_at_ms: None,
            comment: None,
            edited_args: None,
            args_digest: Some(axon_core::approval::args_digest(&args)),
            args,
            spent_at_ms: None,
        }
    }

    fn yes() -> InputResponses {
        [(
            INPUT_KEY.to_string(),
            json!({"action": "accept", "content": {"approve": true}}),
        )]
        .into_iter()
        .collect()
    }

    /// The attack: a client echoes a `requestState` naming an approval that
    /// is not this call's (another tool, other arguments, another client's),
    /// to get it approved.
    #[tokio::test]
    async fn a_request_state_must_name_a_pending_approval_of_this_very_call() {
        let approvals = InMemoryApprovals::default();
        let bob = json!({"to": "bob", "cents": 5});
        approvals
            .open(&parked("a1", "pay", bob.clone()))
            .await
            .unwrap();
        let mut theirs = parked("a2", "pay", bob.clone());
        theirs.owner = axon_core::Owner::of(Some("token-1"));
        approvals.open(&theirs).await.unwrap();
        let eve = json!({"to": "eve", "cents": 5000});
        for (state, tool, args) in [
            ("a1", "pay", &eve),
            ("a1", "refund", &bob),
            ("a2", "pay", &bob),
            ("nope", "pay", &bob),
        ] {
            let digest = axon_core::approval::args_digest(args);
            let refused = answered(&approvals, state, Some(&yes()), tool, args, &digest, "t").await;
            assert_eq!(
                refused.unwrap_err().0,
                "invalid_arguments",
                "{state} {tool}"
            );
        }
        assert_eq!(
            approvals.get("a1").await.unwrap().unwrap().status,
            ApprovalStatus::Pending,
            "nothing was decided by the forgeries"
        );
        let digest = axon_core::approval::args_digest(&bob);
        let id = answered(&approvals, "a1", Some(&yes()), "pay", &bob, &digest, "t").await;
        assert_eq!(id.unwrap(), "a1");
        assert_eq!(
            approvals
                .get("a1")
                .await
                .unwrap()
                .unwrap()
                .decided_by
                .as_deref(),
            Some("mcp (t)")
        );
    }

    #[tokio::test]
    async fn a_declined_question_denies_the_call() {
        let approvals = InMemoryApprovals::default();
        approvals
            .open(&parked("a1", "pay", json!({})))
            .await
            .unwrap();
        let no: InputResponses = [(INPUT_KEY.to_string(), json!({"action": "decline"}))]
            .into_iter()
            .collect();
        let digest = axon_core::approval::args_digest(&json!({}));
        let denied = answered(&approvals, "a1", Some(&no), "pay", &json!({}), &digest, "t").await;
        let (kind, message) = denied.unwrap_err();
        assert_eq!(kind, "approval_denied");
        assert!(message.contains("decline in the MCP client"), "{message}");
    }

    /// Issue 59: the answer binds the real arguments (a secret changed
    /// alone, masked alike, is another call), and runs the call once.
    #[tokio::test]
    async fn an_answer_binds_the_real_arguments_and_is_spent_once() {
        let approvals = InMemoryApprovals::default();
        // Shown masked; parked with the digest of the real arguments.
        let shown = json!({"to": "bob", "password": "***"});
        let real_args = json!({"to": "bob", "password": "hunter2"});
        let mut record = parked("s1", "pay", shown.clone());
        record.args_digest = Some(axon_core::approval::args_digest(&real_args));
        approvals.open(&record).await.unwrap();
        let other = axon_core::approval::args_digest(&json!({"to": "bob", "password": "other"}));
        let refused = answered(&approvals, "s1", Some(&yes()), "pay", &shown, &other, "t").await;
        assert_eq!(refused.unwrap_err().0, "invalid_arguments");

        let real = axon_core::approval::args_digest(&real_args);
        let id = answered(&approvals, "s1", Some(&yes()), "pay", &shown, &real, "t").await;
        assert_eq!(id.unwrap(), "s1");
        assert!(
            approvals.spend("s1").await.unwrap(),
            "the first run spends it"
        );
        assert!(!approvals.spend("s1").await.unwrap(), "and no second");
        let again = answered(&approvals, "s1", Some(&yes()), "pay", &shown, &real, "t").await;
        assert_eq!(again.unwrap_err().0, "approval_denied");
    }
}
