//! What a browser call asks of its session besides its page: what to report
//! after it (dialogs answered, tabs opened: crate::dialogs, crate::tabs), the
//! current tab's journal (crate::journal), the dialog it holds open, and the
//! tab actions of `browser_tabs`. A child of `session` so that it reads the
//! pool's slots without widening them.

use std::sync::Arc;

use axon_core::ToolError;
use serde::Serialize;

use super::{Browsers, no_session};

/// A JavaScript dialog held open, as a tool built on the browser tools (a
/// translator of `browser_act`) sees it.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct PageDialog {
    /// `alert`, `confirm`, `prompt` or `beforeunload`.
    pub kind: String,
    /// Its words (page content: cut at 500 characters).
    pub message: String,
}

/// One tab of the session, as a tool built on the browser tools sees it.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct PageTab {
    /// From 0, in the order the tabs opened.
    pub index: usize,
    /// Its page's title.
    pub title: String,
    /// Its page's URL.
    pub url: String,
    /// Whether the session works on it now.
    pub current: bool,
}

impl Browsers {
    /// What a call's result adds about its session: the dialogs its tabs
    /// answered since the last report (dialogs.rs), the tabs when they
    /// opened or closed since (tabs.rs), and the downloads that began or
    /// ended since (downloads.rs). After a call that `acted` on the page,
    /// the downloads its page asked for are waited for too.
    pub(crate) async fn report(&self, session: &str, acted: bool) -> crate::tabs::Report {
        let (dialogs, tabs, downloads, page) = {
            let mut live = self.live.lock().await;
            let Some(live) = live.as_mut() else {
                return crate::tabs::Report::default();
            };
            let Some(slot) = live.pages.get_mut(session) else {
                return crate::tabs::Report::default();
            };
            let Some(context) = slot.context.clone() else {
                return crate::tabs::Report::default();
            };
            let _ = slot.tabs.sync(&live.browser, &context, &live.watch).await;
            let tabs = match slot.tabs.take_changed() {
                true => slot.tabs.list(&live.browser, &context).await.ok(),
                false => None,
            };
            let page = acted.then(|| slot.tabs.page().clone());
            (slot.tabs.take_dialogs(), tabs, slot.tabs.downloads(), page)
        };
        // Waited for outside the pool's lock: other sessions go on meanwhile.
        let asked = match page {
            Some(page) => crate::downloads::asked(&page).await,
            None => 0,
        };
        let downloads = downloads.take(crate::downloads::FINISH_WAIT, asked).await;
        crate::tabs::Report {
            dialogs,
            tabs,
            downloads,
        }
    }

    /// Read the journal (journal.rs) of the current tab of the session a
    /// call works on.
    pub(crate) async fn journal<T>(
        &self,
        ctx: &axon_core::ToolContext,
        read: impl FnOnce(&crate::journal::Journal) -> T,
    ) -> Result<T, ToolError> {
        let page = self.page_for(ctx).await?;
        let session = Self::session_for(ctx);
        let syncer = {
            let live = self.live.lock().await;
            live.as_ref()
                .and_then(|l| l.pages.get(&session))
                .map(|slot| slot.tabs.journal().syncer())
        };
        // Outside the pool's lock: what the page logged before this call is
        // heard first (journal.rs, Syncer).
        if let Some(syncer) = syncer {
            syncer.caught_up(&page).await;
        }
        let live = self.live.lock().await;
        live.as_ref()
            .and_then(|l| l.pages.get(&session))
            .map(|slot| read(slot.tabs.journal()))
            .ok_or_else(|| no_session(&session))
    }

    /// The dialog mode of `session` and the dialog it holds open, if it is
    /// open (for [`crate::tools::with_session::WithSession`], before and during a call).
    pub(crate) async fn dialogs_of(
        &self,
        session: &str,
    ) -> Option<(Arc<crate::dialogs::Mode>, Option<crate::dialogs::Answered>)> {
        let live = self.live.lock().await;
        let slot = live.as_ref()?.pages.get(session)?;
        Some((slot.tabs.mode(), slot.tabs.held()))
    }

    /// Answer the dialog the session a call works on holds open.
    pub(crate) async fn answer_dialog(
        &self,
        ctx: &axon_core::ToolContext,
        accept: bool,
        prompt_text: Option<String>,
    ) -> Result<crate::dialogs::Answered, ToolError> {
        let session = Self::session_for(ctx);
        let live = self.live.lock().await;
        let slot = live
            .as_ref()
            .and_then(|l| l.pages.get(&session))
            .filter(|slot| slot.visible_to(ctx.owner()))
            .ok_or_else(|| no_session(&session))?;
        slot.tabs.answer_held(accept, prompt_text).await
    }

    /// `read` of `session`'s slot under the pool's lock, when it is open and
    /// `owner` may see it (else `unknown_session`, the same words as for
    /// none).
    async fn with_slot<T>(
        &self,
        session: &str,
        owner: &axon_core::Owner,
        read: impl FnOnce(&super::Slot) -> T,
    ) -> Result<T, ToolError> {
        let live = self.live.lock().await;
        live.as_ref()
            .and_then(|l| l.pages.get(session))
            .filter(|slot| slot.visible_to(owner))
            .map(read)
            .ok_or_else(|| no_session(session))
    }

    /// Whether an action on `session` may keep a frame: it records, or it
    /// is not open yet and `[browser] record` is on (recording.rs). A
    /// recording tab's screencast wakes for the action (screencast.rs) —
    /// only for the session's owner: another's call keeps no one's cast
    /// encoding.
    pub(crate) async fn may_record(&self, session: &str, owner: &axon_core::Owner) -> bool {
        let live = self.live.lock().await;
        let slot = live
            .as_ref()
            .and_then(|l| l.pages.get(session))
            .filter(|slot| slot.visible_to(owner));
        if let Some(cast) = slot.and_then(|slot| slot.tabs.cast()) {
            cast.wake();
        }
        self.config.record != crate::config::Record::Off
            || slot.is_some_and(|slot| slot.tabs.recording().is_some())
    }

    /// Keep the frame of `action` on `session`, when it records and is
    /// `owner`'s (a call on another's handle failed, and is no frame of
    /// theirs).
    pub(crate) async fn record(
        &self,
        session: &str,
        owner: &axon_core::Owner,
        action: crate::recording::Action<'_>,
    ) {
        let seen = self
            .with_slot(session, owner, |slot| {
                let recording = slot.tabs.recording()?;
                let journal = slot.tabs.journal();
                let console: Vec<String> = journal
                    .messages(crate::journal::Level::Error)
                    .into_iter()
                    .map(|m| m.text)
                    .collect();
                let requests: Vec<String> = journal
                    .requests()
                    .into_iter()
                    .filter(|r| r.failure.is_some() || r.status.is_some_and(|s| s >= 400))
                    .map(|r| match (&r.failure, r.status) {
                        (Some(why), _) => format!("{} {} ({why})", r.method, r.url),
                        (None, status) => {
                            format!("{} {} ({})", r.method, r.url, status.unwrap_or(0))
                        }
                    })
                    .collect();
                let page = (slot.tabs.page().clone(), slot.tabs.cast());
                Some((recording, page, (console, requests)))
            })
            .await;
        let Ok(Some((recording, (page, cast), notes))) = seen else {
            return;
        };
        let keep = self
            .frame_store
            .clone()
            .map(|store| crate::recording::Keep {
                store,
                owner: owner.clone(),
            });
        // Outside the pool's lock: the frame is waited for.
        recording.capture((&page, cast), action, notes, keep).await;
    }

    /// The frames of the session a call works on: `None` when it does not
    /// record.
    pub(crate) async fn frames(
        &self,
        ctx: &axon_core::ToolContext,
    ) -> Result<Option<Vec<crate::recording::Frame>>, ToolError> {
        self.page_for(ctx).await?;
        let session = Self::session_for(ctx);
        let recording = self
            .with_slot(&session, ctx.owner(), |slot| slot.tabs.recording())
            .await?;
        match recording {
            Some(r) => Ok(Some(r.frames().await)),
            None => Ok(None),
        }
    }

    /// Change the network routes of the session a call works on (routes.rs)
    /// and switch its tabs' interception to match; the routes after.
    pub(crate) async fn routes(
        &self,
        ctx: &axon_core::ToolContext,
        change: impl FnOnce(&crate::routes::Routes) -> Result<(), ToolError>,
    ) -> Result<Vec<crate::routes::Route>, ToolError> {
        // Opens the session (or refuses it) as every tool does.
        self.page_for(ctx).await?;
        let session = Self::session_for(ctx);
        let (routes, pages) = self
            .with_slot(&session, ctx.owner(), |slot| {
                let pages: Vec<_> = slot.tabs.pages().cloned().collect();
                (slot.tabs.routes(), pages)
            })
            .await?;
        change(&routes)?;
        // Outside the pool's lock: other sessions go on meanwhile.
        routes.apply(&pages).await?;
        Ok(routes.list())
    }

    /// Run `action` on the tabs of the session a call works on (after
    /// catching up with the tabs its page opened) and list them.
    pub(crate) async fn tabs(
        &self,
        ctx: &axon_core::ToolContext,
        action: crate::tabs::Action,
    ) -> Result<Vec<crate::tabs::TabInfo>, ToolError> {
        // Opens the session (or refuses it) as every tool does.
        self.page_for(ctx).await?;
        let session = Self::session_for(ctx);
        let mut live = self.live.lock().await;
        let live = live.as_mut().ok_or_else(|| no_session(&session))?;
        let slot = live
            .pages
            .get_mut(&session)
            .filter(|slot| slot.visible_to(ctx.owner()))
            .ok_or_else(|| no_session(&session))?;
        let context = slot.context.clone().ok_or_else(|| no_session(&session))?;
        action
            .apply(&mut slot.tabs, &live.browser, &context, &live.watch)
            .await?;
        slot.tabs.take_changed();
        slot.tabs.list(&live.browser, &context).await
    }

    /// The dialog the session a call works on holds open, as `browser_act`
    /// shows it to its translator.
    pub async fn held_dialog(&self, ctx: &axon_core::ToolContext) -> Option<PageDialog> {
        let (_, open) = self.dialogs_of(&Self::session_for(ctx)).await?;
        open.map(|d| PageDialog {
            kind: d.kind.to_string(),
            message: d.message,
        })
    }

    /// The tabs of the session a call works on, as `browser_act` shows them
    /// to its translator.
    pub async fn tab_list(&self, ctx: &axon_core::ToolContext) -> Result<Vec<PageTab>, ToolError> {
        let listed = self.tabs(ctx, crate::tabs::Action::List).await?;
        Ok(listed
            .into_iter()
            .map(|t| PageTab {
                index: t.index,
                title: t.title,
                url: t.url,
                current: t.current,
            })
            .collect())
    }
}
