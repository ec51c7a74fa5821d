//! JavaScript dialogs never block. While a page shows `alert`, `confirm`,
//! `prompt` or `beforeunload`, Chromium runs none of its script and answers
//! no input command: a click whose handler calls `confirm()` used to time out
//! after 31 s, and every later call in the session with it. So every page
//! gets an answerer the moment it opens (before it loads anything, so that a
//! dialog raised while loading is caught too): each dialog is answered at
//! once, as Playwright does unless told otherwise — dismissed (`confirm` is
//! false, `prompt` null, an `alert` closed), except `beforeunload`, which is
//! accepted so that a page cannot refuse to be left.
//!
//! What was answered is kept until the session's next call returns, which
//! reports it (`dialogs: [{type, message, answered}]` in its data): the agent
//! learns that "Delete it?" was asked and answered no.

use std::sync::{Arc, Mutex};

use axon_core::ToolError;
use chromiumoxide::cdp::browser_protocol::page::{
    DialogType, EventJavascriptDialogOpening, HandleJavaScriptDialogParams,
};
use chromiumoxide::page::Page;
use futures::StreamExt;
use serde::Serialize;

/// A dialog's message is page content: kept to this many characters.
const MAX_MESSAGE_CHARS: usize = 500;

/// Dialogs kept for one call's report at most (a page that opens one per
/// frame cannot grow it without bound).
const MAX_KEPT: usize = 20;

/// One dialog the page opened, and how it was answered.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub(crate) struct Answered {
    /// `alert`, `confirm`, `prompt` or `beforeunload`.
    #[serde(rename = "type")]
    pub(crate) kind: &'static str,
    pub(crate) message: String,
    /// `dismissed` or `accepted`.
    pub(crate) answered: &'static str,
}

/// Answers a page's dialogs until dropped (its page is closed with it), and
/// keeps what it answered for the next report.
pub(crate) struct Answerer {
    task: tokio::task::AbortHandle,
    answered: Arc<Mutex<Vec<Answered>>>,
}

impl Drop for Answerer {
    fn drop(&mut self) {
        self.task.abort();
    }
}

impl Answerer {
    /// What was answered since the last call, oldest first.
    pub(crate) fn take(&self) -> Vec<Answered> {
        std::mem::take(&mut *self.answered.lock().unwrap_or_else(|e| e.into_inner()))
    }
}

/// Start answering `page`'s dialogs.
pub(crate) async fn answer(page: &Page) -> Result<Answerer, ToolError> {
    let mut opening = page
        .event_listener::<EventJavascriptDialogOpening>()
        .await
        .map_err(|e| ToolError::transient(format!("listening for dialogs: {e}")))?;
    let answered = Arc::new(Mutex::new(Vec::new()));
    let kept = answered.clone();
    let page = page.clone();
    let task = tokio::spawn(async move {
        while let Some(dialog) = opening.next().await {
            let accept = dialog.r#type == DialogType::Beforeunload;
            // A dialog already gone (the page navigated) has nothing to answer.
            let _ = page
                .execute(HandleJavaScriptDialogParams::new(accept))
                .await;
            let mut kept = kept.lock().unwrap_or_else(|e| e.into_inner());
            if kept.len() < MAX_KEPT {
                kept.push(Answered {
                    kind: kind_name(&dialog.r#type),
                    message: dialog.message.chars().take(MAX_MESSAGE_CHARS).collect(),
                    answered: if accept { "accepted" } else { "dismissed" },
                });
            }
        }
    });
    Ok(Answerer {
        task: task.abort_handle(),
        answered,
    })
}

fn kind_name(kind: &DialogType) -> &'static str {
    match kind {
        DialogType::Alert => "alert",
        DialogType::Confirm => "confirm",
        DialogType::Prompt => "prompt",
        DialogType::Beforeunload => "beforeunload",
    }
}

/// Dismiss the dialog `page` shows now, if any: one raised before its
/// answerer listened (a tab that alerts while it opens).
pub(crate) async fn dismiss_open(page: &Page) {
    // "No dialog is showing" is the usual answer, and fine.
    let _ = page.execute(HandleJavaScriptDialogParams::new(false)).await;
}
