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
//!
//! A session can hold dialogs instead (`browser_session_new {"hold_dialogs":
//! true}`, `[browser] hold_dialogs`): a dialog stays open for the agent to
//! answer with `browser_handle_dialog`. Still nothing waits on it: the call
//! during which it opened returns at once, failing `dialog_open` with the
//! dialog's words (its action did happen: the failure is not retried), and
//! every other call on the session fails the same way, at once, until the
//! dialog is answered.

use std::sync::{Arc, Mutex};

use tokio::sync::Notify;

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

/// How a session's dialogs are answered, shared by its tabs.
#[derive(Default)]
pub(crate) struct Mode {
    /// Keep dialogs open for `browser_handle_dialog`.
    pub(crate) hold: bool,
    /// Woken when a held dialog opens.
    pub(crate) opened: Notify,
}

/// What one tab's answerer keeps.
#[derive(Default)]
struct Kept {
    answered: Vec<Answered>,
    /// A held dialog (`answered` is `open`).
    open: Option<Answered>,
}

/// Answers (or holds) a page's dialogs until dropped (its page is closed
/// with it), and keeps what it answered for the next report.
pub(crate) struct Answerer {
    task: tokio::task::AbortHandle,
    kept: Arc<Mutex<Kept>>,
}

impl Drop for Answerer {
    fn drop(&mut self) {
        self.task.abort();
    }
}

impl Answerer {
    fn lock(&self) -> std::sync::MutexGuard<'_, Kept> {
        self.kept.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// What was answered since the last call, oldest first.
    pub(crate) fn take(&self) -> Vec<Answered> {
        std::mem::take(&mut self.lock().answered)
    }

    /// The dialog held open now, if any.
    pub(crate) fn open(&self) -> Option<Answered> {
        self.lock().open.clone()
    }

    /// Answer the held dialog of `page` (this answerer's); what it was.
    pub(crate) async fn settle(
        &self,
        page: &Page,
        accept: bool,
        prompt_text: Option<String>,
    ) -> Result<Answered, ToolError> {
        let Some(mut open) = self.lock().open.take() else {
            return Err(no_dialog());
        };
        let mut params = HandleJavaScriptDialogParams::new(accept);
        params.prompt_text = prompt_text;
        page.execute(params)
            .await
            .map_err(|e| ToolError::transient(format!("answering the dialog: {e}")))?;
        open.answered = if accept { "accepted" } else { "dismissed" };
        Ok(open)
    }
}

/// The refusal of `browser_handle_dialog` when nothing is held open.
pub(crate) fn no_dialog() -> ToolError {
    ToolError::failed("no dialog is open in this session").with_code("no_dialog")
}

/// The failure of a call on a session whose tab holds `open` (see the
/// module's docs).
pub(crate) fn dialog_open(open: &Answered) -> ToolError {
    ToolError::failed(format!(
        "a {} dialog is open: {:?}; answer it with browser_handle_dialog (accept, prompt_text)",
        open.kind, open.message
    ))
    .with_code("dialog_open")
}

/// Start answering `page`'s dialogs, or holding them when `mode` says so.
pub(crate) async fn answer(page: &Page, mode: Arc<Mode>) -> Result<Answerer, ToolError> {
    let mut opening = page
        .event_listener::<EventJavascriptDialogOpening>()
        .await
        .map_err(|e| ToolError::transient(format!("listening for dialogs: {e}")))?;
    let kept = Arc::new(Mutex::new(Kept::default()));
    let shared = kept.clone();
    let page = page.clone();
    let task = tokio::spawn(async move {
        while let Some(dialog) = opening.next().await {
            let seen = Answered {
                kind: kind_name(&dialog.r#type),
                message: dialog.message.chars().take(MAX_MESSAGE_CHARS).collect(),
                answered: "open",
            };
            // `beforeunload` is never held: a page cannot refuse to be left.
            if mode.hold && dialog.r#type != DialogType::Beforeunload {
                shared.lock().unwrap_or_else(|e| e.into_inner()).open = Some(seen);
                mode.opened.notify_one();
                continue;
            }
            let accept = dialog.r#type == DialogType::Beforeunload;
            // Kept before it is answered: the page (and the call whose
            // action opened the dialog) resumes only once it is, so that call
            // always finds it here when it returns.
            {
                let mut kept = shared.lock().unwrap_or_else(|e| e.into_inner());
                if kept.answered.len() < MAX_KEPT {
                    kept.answered.push(Answered {
                        answered: if accept { "accepted" } else { "dismissed" },
                        ..seen
                    });
                }
            }
            // A dialog already gone (the page navigated) has nothing to answer.
            let _ = page
                .execute(HandleJavaScriptDialogParams::new(accept))
                .await;
        }
    });
    Ok(Answerer {
        task: task.abort_handle(),
        kept,
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
