//! `browser_tabs`: list, select, open and close the session's tabs
//! (crate::tabs says how a session keeps them).

use std::sync::Arc;

use axon_core::{RegistryError, ToolContext, ToolError, ToolRegistry};
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::{Value, json};

use super::acting;
use crate::session::Browsers;
use crate::tabs::Action;

/// What `browser_tabs` does.
#[derive(Clone, Copy, Debug, Default, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum TabAction {
    /// List the tabs.
    #[default]
    List,
    /// Make tab `index` current.
    Select,
    /// Open a tab (at `url`) and make it current.
    New,
    /// Close tab `index` (default: the current one).
    Close,
}

/// `browser_tabs` arguments.
#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct TabsArgs {
    #[serde(default)]
    #[allow(missing_docs)]
    pub action: TabAction,
    /// The tab, from 0 (select, close).
    pub index: Option<usize>,
    /// The page a new tab opens.
    pub url: Option<String>,
}

async fn tabs(b: &Browsers, args: TabsArgs, ctx: &ToolContext) -> Result<Value, ToolError> {
    let action = match (args.action, args.index) {
        (TabAction::List, _) => Action::List,
        (TabAction::Select, Some(index)) => Action::Select(index),
        (TabAction::Select, None) => {
            return Err(
                ToolError::invalid_arguments("/index: select needs the tab's index").at("/index"),
            );
        }
        (TabAction::New, _) => Action::New,
        (TabAction::Close, index) => Action::Close(index),
    };
    if let Some(url) = &args.url {
        if !matches!(args.action, TabAction::New) {
            return Err(
                ToolError::invalid_arguments("/url: only a new tab takes a url").at("/url"),
            );
        }
        b.config().check_url(url)?;
    }
    let listed = b.tabs(ctx, action).await?;
    let Some(url) = args.url else {
        return Ok(json!({"tabs": listed}));
    };
    let navigate = super::navigation::NavigateArgs {
        url,
        wait_until: Default::default(),
        timeout_ms: None,
    };
    let mut state = super::navigation::navigate(b, navigate, ctx).await?;
    state["tabs"] = json!(b.tabs(ctx, Action::List).await?);
    Ok(state)
}

pub(super) fn register(
    registry: &mut ToolRegistry,
    browsers: &Arc<Browsers>,
) -> Result<(), RegistryError> {
    browser_tool!(
        registry,
        browsers,
        "browser_tabs",
        acting(),
        "Lists the session's tabs, or selects, opens (at url) or closes one; returns them. A tab the page opens becomes current.",
        tabs
    );
    Ok(())
}
