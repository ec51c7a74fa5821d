//! What a tool built on top of the browser tools may use: the tools' own
//! code as functions, reading the page, waiting for it to settle, and the
//! session's dialog and tabs. `axon-browser-act`'s `browser_act` is such a
//! tool: it reads the page, decides one action and runs it here, so that a
//! step in words does exactly what the explicit tool would (the same
//! auto-wait, the same checks, the same errors).
//!
//! Each action takes the [`Browsers`], its arguments and the call's context,
//! and works on the session the context names, as the tool would. What is not
//! here stays the browser's own: its sessions' insides, the DevTools
//! connection, how elements are located.

use axon_core::{ToolContext, ToolError};

use crate::session::Browsers;
use crate::tabs::Action;

pub use crate::locate::name_matches;
pub use crate::session::{PageDialog, PageTab};
pub use crate::settle::{Settled, Until, Watch, settle, watch};
pub use crate::snapshot::{CLICKABLE, INTERACTIVE, NEARBY_TEXT, snapshot};
pub use crate::tools::back_forward::{HistoryArgs, back, forward};
pub use crate::tools::elements::{Typed, click, press_key, type_text};
pub use crate::tools::forms::{UploadArgs, search, select_option, upload_file};
pub use crate::tools::mouse::{DragArgs, drag, hover};
pub use crate::tools::navigation::navigate;
pub use crate::tools::page::{scroll, wait};
pub use crate::tools::traced;
pub use crate::tools::with_session::WithSession;
pub use crate::tools::{Acted, NavigateArgs};
/// The page a call works on ([`Browsers::page_for`]), as chromiumoxide has
/// it: what [`snapshot`], [`watch`] and [`settle`] read.
pub use chromiumoxide::Page;

/// Whether `text` is a key chord `browser_press_key` takes (`Control+a`):
/// the error names what is wrong with it.
pub fn check_chord(text: &str) -> Result<(), ToolError> {
    crate::input::parse_chord(text).map(drop)
}

/// Answer the JavaScript dialog the call's session holds open, as
/// `browser_handle_dialog` does.
pub async fn answer_dialog(
    browsers: &Browsers,
    ctx: &ToolContext,
    accept: bool,
    prompt_text: Option<String>,
) -> Result<(), ToolError> {
    browsers
        .answer_dialog(ctx, accept, prompt_text)
        .await
        .map(drop)
}

/// Make tab `index` (from 0) of the call's session current, as
/// `browser_tabs` with `select` does.
pub async fn select_tab(
    browsers: &Browsers,
    ctx: &ToolContext,
    index: usize,
) -> Result<(), ToolError> {
    browsers.tabs(ctx, Action::Select(index)).await.map(drop)
}

/// Close tab `index` of the call's session (the current one when `None`),
/// as `browser_tabs` with `close` does.
pub async fn close_tab(
    browsers: &Browsers,
    ctx: &ToolContext,
    index: Option<usize>,
) -> Result<(), ToolError> {
    browsers.tabs(ctx, Action::Close(index)).await.map(drop)
}
