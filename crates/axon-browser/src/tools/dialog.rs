//! `browser_handle_dialog`: answer the dialog a session holds open
//! (sessions opened with `hold_dialogs`; crate::dialogs says why and how
//! nothing waits on it meanwhile).

use std::sync::Arc;

use axon_core::{RegistryError, ToolContext, ToolError, ToolRegistry};
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::{Value, json};

use super::acting;
use crate::session::Browsers;

/// `browser_handle_dialog` arguments.
#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct HandleDialogArgs {
    /// OK (true) or Cancel (false).
    pub accept: bool,
    /// The answer to a prompt.
    pub prompt_text: Option<String>,
}

async fn handle_dialog(
    b: &Browsers,
    args: HandleDialogArgs,
    ctx: &ToolContext,
) -> Result<Value, ToolError> {
    let answered = b.answer_dialog(ctx, args.accept, args.prompt_text).await?;
    Ok(json!(answered))
}

pub(super) fn register(
    registry: &mut ToolRegistry,
    browsers: &Arc<Browsers>,
) -> Result<(), RegistryError> {
    browser_tool!(
        registry,
        browsers,
        "browser_handle_dialog",
        acting(),
        "Answers the dialog the session holds open (sessions opened with hold_dialogs).",
        handle_dialog
    );
    Ok(())
}
