//! `axon tools --changed` and `axon tools accept NAME`: the imported tools
//! held because their definition is not the accepted one (axon_mcp_client::pin),
//! and accepting one after reading its diff.

use std::sync::Arc;

use axon_cli::config::Config;
use axon_mcp_client::pin::{self, PinError, PinStatus, PinStore};
use axon_server::StorePins;

use crate::wiring::{Imports, executor, open_store};
use crate::{Exit, Outcome, infra, output, usage};

/// Import every server (which records what each lists now against its pin),
/// then show the held tools: status, flags, fingerprint and diff.
pub(crate) async fn changed(config: &Config, ui: output::Ui) -> Outcome {
    let store = open_store(config).await?;
    let imported = executor(config, ui, Some(store.clone()), Imports::All).await;
    let pins = StorePins(store.pins.clone()).list().await;
    store.upkeep.close().await;
    imported?;
    let held: Vec<_> = pins
        .map_err(|e| infra(format!("store: {e}")))?
        .into_iter()
        .filter(|pin| pin.status() != PinStatus::Pinned)
        .collect();
    if ui.json {
        let views: Vec<_> = held.iter().map(pin::Pin::view).collect();
        output::print_json(&serde_json::json!({ "pins": views }));
        return Ok(Exit::Success);
    }
    if held.is_empty() {
        println!("no imported tool is held: every one lists its accepted definition");
    }
    for pin in &held {
        let rules: Vec<&str> = pin.seen.flags.iter().map(|f| f.rule.as_str()).collect();
        println!(
            "{}  {}{}",
            pin.tool,
            pin.status().as_str(),
            if rules.is_empty() {
                String::new()
            } else {
                format!("  flags: {}", rules.join(", "))
            }
        );
        for flag in &pin.seen.flags {
            println!("  {} at {}: {}", flag.rule, flag.field, flag.excerpt);
        }
        println!(
            "  accept: axon tools accept {} --fingerprint {}",
            pin.tool, pin.seen.fingerprint
        );
        for line in pin.diff().lines() {
            println!("  {line}");
        }
    }
    Ok(Exit::Success)
}

/// Accept `tool`'s listed definition; with `fingerprint`, only if it is
/// still that one.
pub(crate) async fn accept(
    config: &Config,
    ui: output::Ui,
    tool: &str,
    fingerprint: Option<&str>,
) -> Outcome {
    let store = open_store(config).await?;
    let pins: Arc<dyn PinStore> = Arc::new(StorePins(store.pins.clone()));
    let by =
        std::env::var("USER").map_or_else(|_| "cli".to_string(), |user| format!("cli ({user})"));
    let accepted = pin::accept(pins.as_ref(), tool, fingerprint, &by).await;
    store.upkeep.close().await;
    let pin = accepted.map_err(|e| match e {
        PinError::Store(e) => infra(format!("store: {e}")),
        other => usage(other.to_string()),
    })?;
    if ui.json {
        output::print_json(&pin.view());
    } else {
        println!("{} accepted ({})", pin.tool, pin.seen.fingerprint);
    }
    Ok(Exit::Success)
}
