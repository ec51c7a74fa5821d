//! A session is a set of tabs with one current tab.
//!
//! A page opens tabs of its own: a `target="_blank"` link, `window.open`, a
//! sign-in popup. Each lands in the session's browser context, so the
//! session's tabs are the page targets of its context. Before this, such a tab
//! was invisible: the click succeeded and every later call went on reading
//! the old page.
//!
//! The browser's target events bump one counter ([`Watch`]); a session whose
//! last look is older than the counter asks Chromium for its context's pages
//! (`Target.getTargets`) and adopts the new ones: each gets a dialog answerer
//! (dialogs.rs) and, when the session follows new tabs (the default,
//! `[browser] follow_new_tabs`, or `browser_session_new`'s
//! `follow_new_tabs`), becomes current — the agent clicked a link to read
//! what it opens. A tab that closes (a popup that signs in and closes itself)
//! hands the session back to the tab that opened it. The call during which
//! the set changed lists the tabs in its data (`tabs`); `browser_tabs` lists,
//! selects, opens and closes them.

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use axon_core::ToolError;
use chromiumoxide::browser::Browser;
use chromiumoxide::cdp::browser_protocol::browser::BrowserContextId;
use chromiumoxide::cdp::browser_protocol::target::{
    CloseTargetParams, CreateTargetParams, EventTargetCreated, EventTargetDestroyed,
    GetTargetsParams, TargetId, TargetInfo,
};
use chromiumoxide::page::Page;
use futures::StreamExt;
use serde::Serialize;

use crate::dialogs::{Answered, Answerer, Mode};
use crate::downloads::{Download, Downloads, Listener};
use crate::journal::Journal;

/// How long a new tab may take to become a page chromiumoxide can drive.
const ADOPT_WAIT: Duration = Duration::from_secs(2);

/// A session holds this many tabs at most: a page that opens tabs in a loop
/// cannot exhaust the browser (the ones past it are closed as they open).
pub(crate) const MAX_TABS: usize = 20;

/// Counts the browser's page targets opening and closing, so that a session
/// looks for new tabs only after one of them did.
pub(crate) struct Watch {
    generation: Arc<AtomicU64>,
    task: tokio::task::AbortHandle,
}

impl Drop for Watch {
    fn drop(&mut self) {
        self.task.abort();
    }
}

impl Watch {
    /// Start counting `browser`'s target events.
    pub(crate) async fn start(browser: &Browser) -> Result<Watch, ToolError> {
        let listen = |e: chromiumoxide::error::CdpError| {
            ToolError::transient(format!("listening for new tabs: {e}"))
        };
        let created = browser
            .event_listener::<EventTargetCreated>()
            .await
            .map_err(listen)?
            .filter(|e| std::future::ready(e.target_info.r#type == "page"))
            .map(|_| ());
        let destroyed = browser
            .event_listener::<EventTargetDestroyed>()
            .await
            .map_err(listen)?
            .map(|_| ());
        let generation = Arc::new(AtomicU64::new(1));
        let counter = generation.clone();
        let mut events = futures::stream::select(created, destroyed);
        let task = tokio::spawn(async move {
            while events.next().await.is_some() {
                counter.fetch_add(1, Ordering::SeqCst);
            }
        });
        Ok(Watch {
            generation,
            task: task.abort_handle(),
        })
    }

    /// The number of target events so far.
    pub(crate) fn generation(&self) -> u64 {
        self.generation.load(Ordering::SeqCst)
    }
}

/// What a call's result adds about its session ([`crate::tools::with_session::WithSession`]).
#[derive(Default)]
pub(crate) struct Report {
    /// The dialogs answered since the last report.
    pub(crate) dialogs: Vec<Answered>,
    /// The tabs, when they opened or closed since the last report.
    pub(crate) tabs: Option<Vec<TabInfo>>,
    /// The downloads that began or ended since the last report.
    pub(crate) downloads: Vec<Download>,
}

/// What `browser_tabs` does.
pub(crate) enum Action {
    List,
    Select(usize),
    /// Open a blank tab and make it current.
    New,
    /// Close a tab (the current one when none is named).
    Close(Option<usize>),
}

impl Action {
    pub(crate) async fn apply(
        self,
        tabs: &mut Tabs,
        browser: &Browser,
        context: &BrowserContextId,
        watch: &Watch,
    ) -> Result<(), ToolError> {
        match self {
            Action::List => Ok(()),
            Action::Select(index) => tabs.select(index).await,
            Action::New => tabs.open(browser, context, watch).await,
            Action::Close(index) => tabs.close(index.unwrap_or(tabs.current)).await,
        }
    }
}

/// One tab of a session.
pub(crate) struct Tab {
    page: Page,
    /// Answers its dialogs while it is open.
    dialogs: Answerer,
    /// What its page logged and fetched (journal.rs).
    journal: Journal,
    /// Saves its downloads (downloads.rs).
    _downloads: Listener,
    /// Answers its requests by the session's routes (routes.rs).
    _routes: crate::routes::Listener,
    /// Its screencast, when the session records (screencast.rs).
    cast: Option<Arc<crate::screencast::Cast>>,
    /// The tab whose page opened it.
    opener: Option<TargetId>,
}

impl Tab {
    /// Make `page` a tab: answer its dialogs and keep its journal, from
    /// before it loads anything (a dialog raised while loading is answered
    /// too).
    pub(crate) async fn equip(
        page: Page,
        opener: Option<TargetId>,
        shared: &Shared,
    ) -> Result<Tab, ToolError> {
        let dialogs = crate::dialogs::answer(&page, shared.mode.clone()).await?;
        let journal = crate::journal::keep(&page).await?;
        let downloads = shared.downloads.listen(&page).await?;
        let routes = shared.routes.listen(&page).await?;
        let cast = match shared.recording {
            Some(_) => Some(Arc::new(crate::screencast::start(&page).await?)),
            None => None,
        };
        Ok(Tab {
            page,
            dialogs,
            journal,
            _downloads: downloads,
            _routes: routes,
            cast,
            opener,
        })
    }
}

/// What a session's tabs share: how they answer dialogs (dialogs.rs),
/// where their downloads go (downloads.rs) and the routes their requests
/// take (routes.rs).
#[derive(Clone)]
pub(crate) struct Shared {
    pub(crate) mode: Arc<Mode>,
    pub(crate) downloads: Arc<Downloads>,
    pub(crate) routes: Arc<crate::routes::Routes>,
    /// Its filmstrip, when it records (recording.rs).
    pub(crate) recording: Option<Arc<crate::recording::Recording>>,
}

/// One tab as the tools show it.
#[derive(Clone, Debug, Serialize)]
pub(crate) struct TabInfo {
    pub(crate) index: usize,
    pub(crate) url: String,
    pub(crate) title: String,
    pub(crate) current: bool,
}

/// A session's tabs, in the order they opened, and which one is current.
pub(crate) struct Tabs {
    list: Vec<Tab>,
    current: usize,
    /// Whether a tab the page opens becomes current.
    follow: bool,
    /// The [`Watch`] generation of the last look.
    seen: u64,
    /// The set changed since the last report.
    changed: bool,
    /// How its dialogs are answered and its downloads saved.
    shared: Shared,
}

impl Tabs {
    /// A session's first tab.
    pub(crate) fn new(first: Tab, follow: bool, seen: u64, shared: Shared) -> Tabs {
        Tabs {
            shared,
            list: vec![first],
            current: 0,
            follow,
            seen,
            changed: false,
        }
    }

    /// The current tab's page.
    pub(crate) fn page(&self) -> &Page {
        &self.list[self.current].page
    }

    /// The current tab's screencast, when the session records.
    pub(crate) fn cast(&self) -> Option<Arc<crate::screencast::Cast>> {
        self.list[self.current].cast.clone()
    }

    /// The current tab's journal.
    pub(crate) fn journal(&self) -> &Journal {
        &self.list[self.current].journal
    }

    /// Every tab's page.
    pub(crate) fn pages(&self) -> impl Iterator<Item = &Page> {
        self.list.iter().map(|t| &t.page)
    }

    /// The dialogs every tab answered since the last report, oldest first
    /// within each tab.
    pub(crate) fn take_dialogs(&self) -> Vec<Answered> {
        self.list.iter().flat_map(|t| t.dialogs.take()).collect()
    }

    /// How the session answers dialogs.
    pub(crate) fn mode(&self) -> Arc<Mode> {
        self.shared.mode.clone()
    }

    /// The session's downloads.
    pub(crate) fn downloads(&self) -> Arc<Downloads> {
        self.shared.downloads.clone()
    }

    /// The session's filmstrip, when it records.
    pub(crate) fn recording(&self) -> Option<Arc<crate::recording::Recording>> {
        self.shared.recording.clone()
    }

    /// The session's network routes.
    pub(crate) fn routes(&self) -> Arc<crate::routes::Routes> {
        self.shared.routes.clone()
    }

    /// A dialog held open in one of the tabs, if any.
    pub(crate) fn held(&self) -> Option<Answered> {
        self.list.iter().find_map(|t| t.dialogs.open())
    }

    /// Answer the held dialog; what it was.
    pub(crate) async fn answer_held(
        &self,
        accept: bool,
        prompt_text: Option<String>,
    ) -> Result<Answered, ToolError> {
        let tab = self
            .list
            .iter()
            .find(|t| t.dialogs.open().is_some())
            .ok_or_else(crate::dialogs::no_dialog)?;
        tab.dialogs.settle(&tab.page, accept, prompt_text).await
    }

    /// Whether the set changed since this was last asked.
    pub(crate) fn take_changed(&mut self) -> bool {
        std::mem::take(&mut self.changed)
    }

    /// Catch up with the tabs opened and closed in `context` since the last
    /// look (nothing to do, and no CDP call, when no target event came).
    pub(crate) async fn sync(
        &mut self,
        browser: &Browser,
        context: &BrowserContextId,
        watch: &Watch,
    ) -> Result<(), ToolError> {
        let generation = watch.generation();
        if generation == self.seen {
            return Ok(());
        }
        self.seen = generation;
        let open = pages_in(browser, context).await?;
        let was = self.list[self.current].page.target_id().clone();
        let was_opener = self.list[self.current].opener.clone();
        let before = self.list.len();
        self.list
            .retain(|tab| open.iter().any(|t| &t.target_id == tab.page.target_id()));
        // The current tab closed: back to the one that opened it.
        let current = self
            .index_of(&was)
            .or_else(|| was_opener.and_then(|o| self.index_of(&o)));
        let mut adopted = None;
        for info in open {
            if self.index_of(&info.target_id).is_some() {
                continue;
            }
            if self.list.len() >= MAX_TABS {
                let _ = browser
                    .execute(CloseTargetParams::new(info.target_id))
                    .await;
                continue;
            }
            if let Some(tab) = adopt(browser, &info, &self.shared).await {
                self.list.push(tab);
                adopted = Some(self.list.len() - 1);
            }
        }
        self.changed |= self.list.len() != before || adopted.is_some();
        self.current = match (adopted, self.follow) {
            (Some(new), true) => new,
            _ => current.unwrap_or(self.list.len().saturating_sub(1)),
        };
        if self.list.is_empty() {
            return Err(ToolError::failed(
                "every tab of this browser session was closed; close it (browser_session_close) and open another",
            )
            .with_code("session_lost"));
        }
        Ok(())
    }

    fn index_of(&self, target: &TargetId) -> Option<usize> {
        self.list.iter().position(|t| t.page.target_id() == target)
    }

    /// The tabs, with their URLs and titles.
    pub(crate) async fn list(
        &self,
        browser: &Browser,
        context: &BrowserContextId,
    ) -> Result<Vec<TabInfo>, ToolError> {
        let open = pages_in(browser, context).await?;
        Ok(self
            .list
            .iter()
            .enumerate()
            .map(|(index, tab)| {
                let info = open.iter().find(|t| &t.target_id == tab.page.target_id());
                TabInfo {
                    index,
                    url: info.map(|t| t.url.clone()).unwrap_or_default(),
                    title: info.map(|t| t.title.clone()).unwrap_or_default(),
                    current: index == self.current,
                }
            })
            .collect())
    }

    /// Make tab `index` current.
    pub(crate) async fn select(&mut self, index: usize) -> Result<(), ToolError> {
        self.check(index)?;
        self.current = index;
        // A tab brought to the front runs its timers and animation frames
        // at full speed again.
        let _ = self.list[index].page.bring_to_front().await;
        Ok(())
    }

    /// Open a blank tab in `context` and make it current.
    pub(crate) async fn open(
        &mut self,
        browser: &Browser,
        context: &BrowserContextId,
        watch: &Watch,
    ) -> Result<(), ToolError> {
        if self.list.len() >= MAX_TABS {
            return Err(ToolError::failed(format!(
                "this session has {MAX_TABS} tabs open already; close one with browser_tabs {{\"action\": \"close\"}}"
            ))
            .with_code("too_many_tabs"));
        }
        let mut target = CreateTargetParams::new("about:blank");
        target.browser_context_id = Some(context.clone());
        let page = browser
            .new_page(target)
            .await
            .map_err(|e| crate::cdp::cdp_error("opening a tab", &e))?;
        let tab = match Tab::equip(page.clone(), None, &self.shared).await {
            Ok(tab) => tab,
            Err(e) => {
                let _ = page.close().await;
                return Err(e);
            }
        };
        self.list.push(tab);
        self.current = self.list.len() - 1;
        // Its own target event is not a tab the page opened.
        self.seen = watch.generation();
        Ok(())
    }

    /// Close tab `index`; the session's last tab is not closed.
    pub(crate) async fn close(&mut self, index: usize) -> Result<(), ToolError> {
        self.check(index)?;
        if self.list.len() == 1 {
            return Err(ToolError::invalid_arguments(
                "/index: this is the session's only tab; close the session with browser_session_close",
            )
            .at("/index"));
        }
        let tab = self.list.remove(index);
        self.current = if index == self.current {
            // Back to the tab that opened it, else the one before it.
            tab.opener
                .as_ref()
                .and_then(|o| self.index_of(o))
                .unwrap_or(index.saturating_sub(1))
        } else if index < self.current {
            self.current - 1
        } else {
            self.current
        };
        let _ = tab.page.close().await;
        Ok(())
    }

    fn check(&self, index: usize) -> Result<(), ToolError> {
        if index < self.list.len() {
            return Ok(());
        }
        Err(ToolError::invalid_arguments(format!(
            "/index: no tab {index}; this session has {} (0 to {})",
            self.list.len(),
            self.list.len() - 1
        ))
        .at("/index"))
    }
}

/// The page targets of `context`, in Chromium's order.
async fn pages_in(
    browser: &Browser,
    context: &BrowserContextId,
) -> Result<Vec<TargetInfo>, ToolError> {
    let targets = browser
        .execute(GetTargetsParams::default())
        .await
        .map_err(|e| crate::cdp::cdp_error("listing tabs", &e))?;
    Ok(targets
        .result
        .target_infos
        .into_iter()
        .filter(|t| t.r#type == "page" && t.browser_context_id.as_ref() == Some(context))
        .collect())
}

/// Take over a tab the page opened: its page (once chromiumoxide has attached
/// to it) and a dialog answerer. `None` when it closed before that.
async fn adopt(browser: &Browser, info: &TargetInfo, shared: &Shared) -> Option<Tab> {
    let started = tokio::time::Instant::now();
    let page = loop {
        if let Ok(page) = browser.get_page(info.target_id.clone()).await {
            break page;
        }
        if started.elapsed() >= ADOPT_WAIT {
            return None;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    };
    let hold = shared.mode.hold;
    let tab = Tab::equip(page, info.opener_id.clone(), shared)
        .await
        .ok()?;
    // A dialog it raised before the answerer listened is answered too.
    if !hold {
        crate::dialogs::dismiss_open(&tab.page).await;
    }
    Some(tab)
}
