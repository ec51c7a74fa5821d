//! `axon approvals`: the calls waiting for a person (axon_core::approval), and
//! `approve`/`deny` for one. The approvals are in the store, so this works
//! from any terminal on the same store as the process whose call waits.

use axon_cli::config::Config;
use axon_core::approval::{ApprovalError, ApprovalRecord, ApprovalStore, Decision};

use crate::wiring::open_store;
use crate::{ApprovalAction, Exit, Outcome, infra, output, usage};

/// List (pending, or `all`), or decide one.
pub(crate) async fn run(
    config: &Config,
    ui: output::Ui,
    all: bool,
    action: Option<ApprovalAction>,
) -> Outcome {
    let store = open_store(config).await?;
    let done = match action {
        None => list(store.approvals.as_ref(), ui, all).await,
        Some(action) => decide(store.approvals.as_ref(), ui, action).await,
    };
    store.upkeep.close().await;
    done
}

async fn list(store: &dyn ApprovalStore, ui: output::Ui, all: bool) -> Outcome {
    let records = store
        .list(!all, 1000)
        .await
        .map_err(|e| infra(format!("store: {e}")))?;
    if ui.json {
        let shown: Vec<_> = records.iter().cloned().map(ApprovalRecord::shown).collect();
        output::print_json(&serde_json::json!({ "approvals": shown }));
        return Ok(Exit::Success);
    }
    if records.is_empty() {
        println!("no call is waiting for approval");
    }
    for r in &records {
        println!(
            "{}  {}  {}  {}",
            r.id,
            r.status.as_str(),
            r.tool,
            serde_json::to_string(&r.args).unwrap_or_default()
        );
        println!("  {} (correlation {})", r.reason, r.correlation_id);
        if let Some(by) = &r.decided_by {
            println!(
                "  decided by {by}{}",
                r.comment
                    .as_deref()
                    .map(|c| format!(": {c}"))
                    .unwrap_or_default()
            );
        }
    }
    Ok(Exit::Success)
}

async fn decide(store: &dyn ApprovalStore, ui: output::Ui, action: ApprovalAction) -> Outcome {
    let by =
        std::env::var("USER").map_or_else(|_| "cli".to_string(), |user| format!("cli ({user})"));
    let (id, decision) = match action {
        ApprovalAction::Approve { id, args, comment } => {
            let args = match args {
                Some(text) => match serde_json::from_str::<serde_json::Value>(&text) {
                    Ok(value) if value.is_object() => Some(value),
                    _ => return Err(usage("--args: must be a JSON object")),
                },
                None => None,
            };
            (
                id,
                Decision {
                    approve: true,
                    by,
                    comment,
                    args,
                },
            )
        }
        ApprovalAction::Deny { id, comment } => (
            id,
            Decision {
                approve: false,
                by,
                comment,
                args: None,
            },
        ),
    };
    let record = store.decide(&id, &decision).await.map_err(|e| match e {
        ApprovalError::Store(e) => infra(format!("store: {e}")),
        other => usage(other.to_string()),
    })?;
    if ui.json {
        output::print_json(&record.clone().shown());
    } else {
        println!("{} {}", record.id, record.status.as_str());
    }
    Ok(Exit::Success)
}
