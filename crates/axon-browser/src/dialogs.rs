//! JavaScript dialogs never block. While a page shows `alert`, `confirm`,
//! `prompt` or `beforeunload`, Chromium runs none of its script and answers
//! no input command: a click whose handler calls `confirm()` used to time out
//! after 31 s, and every later call in the session with it. So every page
//! gets an answerer the moment it opens (before it loads anything, so that a
//! dialog raised while loading is caught too): each dialog is answered at
//! once, as Playwright does unless told otherwise — dismissed (`confirm` is
//! false, `prompt` null, an `alert` closed), except `beforeunload`, which is
//! accepted so that a page cannot refuse to be left. The message is logged
//! (it is page content: the log says only its type and length).

use axon_core::ToolError;
use chromiumoxide::cdp::browser_protocol::page::{
    DialogType, EventJavascriptDialogOpening, HandleJavaScriptDialogParams,
};
use chromiumoxide::page::Page;
use futures::StreamExt;

/// Answers a page's dialogs until dropped (its page is closed with it).
pub(crate) struct Answerer(tokio::task::AbortHandle);

impl Drop for Answerer {
    fn drop(&mut self) {
        self.0.abort();
    }
}

/// Start answering `page`'s dialogs.
pub(crate) async fn answer(page: &Page) -> Result<Answerer, ToolError> {
    let mut opening = page
        .event_listener::<EventJavascriptDialogOpening>()
        .await
        .map_err(|e| ToolError::transient(format!("listening for dialogs: {e}")))?;
    let page = page.clone();
    let task = tokio::spawn(async move {
        while let Some(dialog) = opening.next().await {
            let accept = dialog.r#type == DialogType::Beforeunload;
            tracing::debug!(kind = ?dialog.r#type, chars = dialog.message.len(), accept, "answered a dialog");
            // A dialog already gone (the page navigated) has nothing to answer.
            let _ = page
                .execute(HandleJavaScriptDialogParams::new(accept))
                .await;
        }
    });
    Ok(Answerer(task.abort_handle()))
}
