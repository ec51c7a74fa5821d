//! Opening a session's page: an existing one found (and its tabs brought up
//! to date), a new one admitted (not a session lost while idle, not past
//! the client's share), room made under `max_pages`, and a browser context
//! of its own opened and equipped.

use std::sync::Arc;
use std::time::Duration;

use axon_core::ToolError;
use chromiumoxide::cdp::browser_protocol::browser::BrowserContextId;
use chromiumoxide::cdp::browser_protocol::target::{
    CreateBrowserContextParams, CreateTargetParams,
};
use chromiumoxide::page::Page;
use tokio::time::Instant;

use crate::cdp::cdp_error;
use crate::storage::prepare;

use super::*;

impl Browsers {
    /// The page of `session`: the open one (if `owner` may see it), or a
    /// new one as `open` allows; a dead browser is relaunched first.
    pub(super) async fn page_of(
        &self,
        session: &str,
        open: Open,
        owner: &axon_core::Owner,
    ) -> Result<Page, ToolError> {
        let mut slot = self.live.lock().await;
        if slot.as_mut().is_some_and(|live| !live.is_alive())
            && let Some(dead) = slot.take()
        {
            tracing::warn!("the browser died; relaunching");
            retire(dead).await;
        }
        if slot.is_none() {
            *slot = Some(self.launch().await?);
        }
        let Some(live) = slot.as_mut() else {
            return Err(ToolError::internal("browser slot empty after launch"));
        };
        let now = Instant::now();
        match (live.pages.get_mut(session), &open) {
            (Some(_), Open::New(_)) => {
                return Err(ToolError::invalid_arguments(format!(
                    "/session: a browser session {session:?} is open already"
                )));
            }
            (Some(slot), _) if !slot.visible_to(owner) => return Err(no_session(session)),
            (Some(slot), _) => {
                slot.used = now;
                if let Some(context) = &slot.context {
                    slot.tabs.sync(&live.browser, context, &live.watch).await?;
                }
                return Ok(slot.tabs.page().clone());
            }
            (None, Open::Existing) => return Err(no_session(session)),
            (None, _) => {}
        }
        self.admit(live, session, &open, owner)?;
        self.make_room(live, now).await?;
        let (page, context, tab, shared) = self.open_context(live, &open, owner).await?;
        let seen = live.watch.generation();
        let (options, handle) = match open {
            Open::New(options) => (options, true),
            _ => (
                SessionOptions {
                    owner: owner.clone(),
                    ..SessionOptions::default()
                },
                false,
            ),
        };
        let seeded = match prepare(&page, &options).await {
            Ok(seeded) => seeded,
            Err(e) => {
                let _ = page.close().await;
                let _ = live.browser.dispose_browser_context(context).await;
                return Err(e);
            }
        };
        let follow = options
            .follow_new_tabs
            .unwrap_or(self.config.follow_new_tabs);
        live.pages.insert(
            session.to_string(),
            Slot {
                tabs: crate::tabs::Tabs::new(tab, follow, seen, shared),
                used: now,
                last_snapshot: Vec::new(),
                context: Some(context),
                handle,
                seeded,
                owner: options.owner.clone(),
            },
        );
        Ok(page)
    }

    /// Whether a new session may open: not one closed while idle to make
    /// room (its page is gone; the caller is told, not handed a blank one),
    /// and not past the client's share of pages.
    pub(super) fn admit(
        &self,
        live: &Live,
        session: &str,
        open: &Open,
        owner: &axon_core::Owner,
    ) -> Result<(), ToolError> {
        if matches!(open, Open::Default) && self.take_lost(session) {
            return Err(ToolError::failed(format!(
                "the browser session {session:?} was closed to make room for others (browser.max_pages) while it was not in use; its page is gone, start again"
            ))
            .with_code("session_lost"));
        }
        if !owner.is_process() {
            let held = live
                .pages
                .values()
                .filter(|slot| slot.owner == *owner)
                .count();
            if held >= self.config.max_pages_per_client.max(1) {
                return Err(ToolError::rate_limited(
                    format!(
                        "this client holds {held} browser pages already (browser.max_pages_per_client); close one (browser_session_close) or wait for one to go idle"
                    ),
                    Some(Duration::from_secs(1)),
                )
                .with_code("capacity_exhausted"));
            }
        }
        Ok(())
    }

    /// A new browser context with one page, equipped (dialogs, downloads):
    /// every session is a context of its own, so its cookies and storage are
    /// nobody else's. What was made is undone when a later part fails.
    pub(super) async fn open_context(
        &self,
        live: &mut Live,
        open: &Open,
        owner: &axon_core::Owner,
    ) -> Result<
        (
            Page,
            BrowserContextId,
            crate::tabs::Tab,
            crate::tabs::Shared,
        ),
        ToolError,
    > {
        let context = live
            .browser
            .create_browser_context(CreateBrowserContextParams::default())
            .await
            .map_err(|e| cdp_error("creating a browser context", &e))?;
        let mut target = CreateTargetParams::new("about:blank");
        target.browser_context_id = Some(context.clone());
        let page = match live.browser.new_page(target).await {
            Ok(page) => page,
            Err(e) => {
                let _ = live.browser.dispose_browser_context(context).await;
                return Err(cdp_error("opening a page", &e));
            }
        };
        let hold = match open {
            Open::New(options) => options.hold_dialogs,
            _ => None,
        }
        .unwrap_or(self.config.hold_dialogs);
        let record = match open {
            Open::New(options) => options.record,
            _ => None,
        }
        .unwrap_or(self.config.record);
        let shared = crate::tabs::Shared {
            mode: Arc::new(crate::dialogs::Mode {
                hold,
                ..Default::default()
            }),
            downloads: crate::downloads::Downloads::new(
                // The session's owner's files folder (axon_core::files).
                self.files.as_ref().map(|files| crate::downloads::Place {
                    files: files.owned_by(owner),
                    max_bytes: self.config.max_download_bytes,
                }),
                context.clone(),
            ),
            routes: Arc::default(),
            recording: crate::recording::Recording::new(record).map(Arc::new),
        };
        match crate::tabs::Tab::equip(page.clone(), None, &shared).await {
            Ok(tab) => Ok((page, context, tab, shared)),
            Err(e) => {
                let _ = page.close().await;
                let _ = live.browser.dispose_browser_context(context).await;
                Err(e)
            }
        }
    }

    /// Close what must go before one more page opens: pages idle longer than
    /// `page_idle_ms`, then, past `max_pages`, the least recently used
    /// default session. A session in use, or opened as a handle, is never
    /// closed to make room: when only those are left, the new page is
    /// refused (`rate_limited`, code `capacity_exhausted`).
    pub(super) async fn make_room(&self, live: &mut Live, now: Instant) -> Result<(), ToolError> {
        let idle = Duration::from_millis(self.config.page_idle_ms);
        let mut closing: Vec<String> = live
            .pages
            .iter()
            .filter(|(id, slot)| now.duration_since(slot.used) >= idle && !self.is_busy(id))
            .map(|(id, _)| id.clone())
            .collect();
        let excess =
            (live.pages.len() - closing.len() + 1).saturating_sub(self.config.max_pages.max(1));
        if excess > 0 {
            let mut by_age: Vec<(&String, Instant)> = live
                .pages
                .iter()
                .filter(|(id, slot)| !slot.handle && !closing.contains(id) && !self.is_busy(id))
                .map(|(id, slot)| (id, slot.used))
                .collect();
            if by_age.len() < excess {
                return Err(ToolError::rate_limited(
                    format!(
                        "all {} browser pages are in use (browser.max_pages); try again when one is free",
                        live.pages.len()
                    ),
                    Some(Duration::from_secs(1)),
                )
                .with_code("capacity_exhausted"));
            }
            by_age.sort_by_key(|(_, used)| *used);
            let evicted: Vec<String> = by_age
                .into_iter()
                .take(excess)
                .map(|(id, _)| id.clone())
                .collect();
            for id in &evicted {
                self.remember_lost(id.clone());
            }
            closing.extend(evicted);
        }
        for id in closing {
            if let Some(slot) = live.pages.remove(&id) {
                tracing::debug!(session = %id, "closing a browser session to make room");
                close_slot(&live.browser, slot).await;
            }
        }
        Ok(())
    }
}
