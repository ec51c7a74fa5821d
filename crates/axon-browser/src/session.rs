//! One Chromium for the process, one page per session.
//!
//! The browser is launched on first use (Debian's `/usr/bin/chromium`, or
//! `[browser] executable`, or `AXON_CHROME`; never downloaded), headless, with a
//! fresh temporary profile. Each session — a handle from `browser_session_new`,
//! else the call's correlation id (a plan run, an MCP session) — gets its own
//! page in a browser context of its own (its own cookies and storage), so
//! concurrent runs never see each other's state. When the browser dies (crash, killed), the
//! call that finds out fails `transient`, the dead browser is forgotten, and the
//! retry launches a new one.

use std::collections::{HashMap, VecDeque};
use std::path::PathBuf;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use axon_core::{Owner, ToolError};
use chromiumoxide::browser::{Browser, BrowserConfig as LaunchConfig};
use chromiumoxide::cdp::browser_protocol::browser::BrowserContextId;
use chromiumoxide::handler::viewport::Viewport;
use chromiumoxide::page::Page;
use futures::StreamExt;
use serde::Serialize;
use serde_json::{Value, json};
use tokio::time::Instant;

pub use crate::config::SessionOptions;
pub use crate::config::{ActionTimeouts, BrowserConfig};
use crate::storage::playwright_cookie;

mod pages;

mod calls;
pub use calls::{PageDialog, PageTab};

/// How [`Browsers::page_of`] may find a session.
enum Open {
    /// A correlation id's own session: opened on first use.
    Default,
    /// A handle: must be open already.
    Existing,
    /// A new handle: must not be open yet.
    New(SessionOptions),
}

/// The flags of every launch: headless with no GPU, and what works on a
/// closed network (no background connections, no QUIC, no first-run UI).
/// The sandbox is `[browser] sandbox`'s.
const FLAGS: [&str; 7] = [
    // No first window: every page is a target Axon opens. With the startup
    // window's tab left beside them, a page's load took ~1.5× as long
    // (NiceGUI's form: 955 ms against 610, `browser_navigate` p50, issue 60;
    // Playwright launches so too).
    "no-startup-window",
    "disable-gpu",
    "disable-quic",
    "no-first-run",
    "disable-background-networking",
    "disable-component-update",
    "disable-sync",
];

/// A running browser.
struct Live {
    browser: Browser,
    /// Cleared by the CDP handler task when the connection ends.
    alive: Arc<AtomicBool>,
    /// Each session's page, by session id.
    pages: HashMap<String, Slot>,
    profile: PathBuf,
    /// The proxy every request of this browser goes through.
    _egress: crate::egress::Egress,
    /// Chromium's DevTools port, which no tool call may reach while it lives.
    devtools_port: Option<u16>,
    /// Counts tabs opening and closing (tabs.rs).
    watch: crate::tabs::Watch,
}

impl Drop for Live {
    fn drop(&mut self) {
        if let Some(port) = self.devtools_port {
            axon_core::network::forget_own_port(port);
        }
    }
}

/// One session: its tabs in a browser context of its own (its own cookies and
/// storage), and when it was last used.
struct Slot {
    tabs: crate::tabs::Tabs,
    used: Instant,
    /// The last snapshot taken in this session (for `changes_since`).
    last_snapshot: Vec<crate::snapshot::SnapshotNode>,
    context: Option<BrowserContextId>,
    /// Opened by `browser_session_new` (a handle), not for a correlation id.
    handle: bool,
    /// The `localStorage` origins it was started with, kept for a later save.
    seeded: Vec<Value>,
    /// Who opened it (`ToolContext::owner`); only it (and the process's
    /// owner) may use, list, save or close it.
    owner: Owner,
}

impl Slot {
    /// Whether `owner` may see this session: the process's owner sees every
    /// one, a tenant only its own.
    fn visible_to(&self, owner: &Owner) -> bool {
        owner.sees(&self.owner)
    }
}

/// The refusal for a session that is not there, or not the caller's: the
/// same words for both, so that a tenant learns nothing of the others'.
fn no_session(session: &str) -> ToolError {
    ToolError::failed(format!(
        "no browser session {session:?}: open one with browser_session_new (sessions idle for browser.page_idle_ms close)"
    ))
    .with_code("unknown_session")
}

/// One session as `browser_session_list` shows it.
#[derive(Clone, Debug, Serialize, schemars::JsonSchema)]
pub struct SessionInfo {
    /// The handle (or the correlation id of a default session).
    pub session: String,
    /// Whether it was opened by `browser_session_new`.
    pub handle: bool,
    /// The page's URL.
    pub url: String,
    /// Milliseconds since its last use.
    pub idle_ms: u64,
}

tokio::task_local! {
    /// The session handle a browser tool call was given (its `session`
    /// argument), set around the call by [`crate::tools::with_session::WithSession`].
    pub(crate) static HANDLE: Arc<str>;
}

impl Live {
    /// Whether the browser is still there: its CDP connection is up and its
    /// process has not exited (a kill is seen here before the socket notices).
    fn is_alive(&mut self) -> bool {
        self.alive.load(Ordering::SeqCst) && matches!(self.browser.try_wait(), Ok(None))
    }
}

/// The browser of this process and its pages, shared by every browser tool.
pub struct Browsers {
    config: BrowserConfig,
    live: tokio::sync::Mutex<Option<Live>>,
    /// Where files that calls name are written and read (`[files] dir`);
    /// none: no tool writes or reads a file.
    files: Option<axon_core::files::FileDir>,
    /// Where recorded frames are kept with history ([`Browsers::with_frames`]).
    frame_store: Option<axon_core::frames::FrameStore>,
    /// How many calls work on each session now ([`Browsers::lease`]): a
    /// session in use is never closed to make room.
    busy: std::sync::Mutex<HashMap<String, usize>>,
    /// Default sessions closed to make room (the oldest first, at most
    /// [`LOST_REMEMBERED`]): the next call on one fails `session_lost`
    /// instead of reading a fresh blank page as if it were its own.
    lost: std::sync::Mutex<VecDeque<String>>,
}

/// How many sessions closed to make room are remembered.
const LOST_REMEMBERED: usize = 1024;

/// A call working on a session: while it lives, the session's page is not
/// closed to make room for another (see [`Browsers::lease`]).
pub(crate) struct Lease<'a> {
    browsers: &'a Browsers,
    session: String,
}

impl Drop for Lease<'_> {
    fn drop(&mut self) {
        let mut busy = self.browsers.busy.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(n) = busy.get_mut(&self.session) {
            *n -= 1;
            if *n == 0 {
                busy.remove(&self.session);
            }
        }
    }
}

impl std::fmt::Debug for Browsers {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Browsers")
            .field("executable", &self.config.executable_path())
            .finish_non_exhaustive()
    }
}

impl Browsers {
    /// Nothing is launched until a tool needs a page.
    pub fn new(config: BrowserConfig) -> Self {
        Browsers {
            config,
            live: tokio::sync::Mutex::new(None),
            files: None,
            frame_store: None,
            busy: std::sync::Mutex::new(HashMap::new()),
            lost: std::sync::Mutex::new(VecDeque::new()),
        }
    }

    /// Mark `session` in use until the lease is dropped (every browser tool
    /// call holds one for its session, `crate::tools::with_session::WithSession`).
    pub(crate) fn lease(&self, session: &str) -> Lease<'_> {
        let mut busy = self.busy.lock().unwrap_or_else(|e| e.into_inner());
        *busy.entry(session.to_string()).or_insert(0) += 1;
        Lease {
            browsers: self,
            session: session.to_string(),
        }
    }

    fn is_busy(&self, session: &str) -> bool {
        self.busy
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .contains_key(session)
    }

    /// Whether `session` was closed to make room since its last call (and
    /// forget it: the call after the failing one starts afresh).
    fn take_lost(&self, session: &str) -> bool {
        let mut lost = self.lost.lock().unwrap_or_else(|e| e.into_inner());
        match lost.iter().position(|s| s == session) {
            Some(i) => {
                lost.remove(i);
                true
            }
            None => false,
        }
    }

    fn remember_lost(&self, session: String) {
        let mut lost = self.lost.lock().unwrap_or_else(|e| e.into_inner());
        if lost.len() >= LOST_REMEMBERED {
            lost.pop_front();
        }
        lost.push_back(session);
    }

    /// Screenshots and storage states named by a call go to `dir`, and
    /// storage states are read from it (axon_core::files). Without it, a
    /// call that names a file is refused.
    pub fn with_files(mut self, dir: axon_core::files::FileDir) -> Self {
        self.files = Some(dir);
        self
    }

    /// Keep each recorded frame in `store` too, under its call's id, for
    /// the dashboard (`axon_core::frames`; `[browser] record`).
    pub fn with_frames(mut self, store: axon_core::frames::FrameStore) -> Self {
        self.frame_store = Some(store);
        self
    }

    /// The files directory of the caller of `ctx` (its owner's folder,
    /// [`axon_core::files::FileDir::owned_by`]), or the refusal a call naming
    /// a file gets.
    pub(crate) fn files(
        &self,
        ctx: &axon_core::ToolContext,
        field: &str,
    ) -> Result<axon_core::files::FileDir, ToolError> {
        let files = self.files.as_ref().ok_or_else(|| {
            ToolError::invalid_arguments(format!(
                "{field}: this server keeps no files ([files] dir is not set); leave {field} out to get the data inline"
            ))
            .with_code("files_disabled")
            .at(field)
        })?;
        Ok(files.owned_by(ctx.owner()))
    }

    /// The config.
    pub fn config(&self) -> &BrowserConfig {
        &self.config
    }

    /// The page of `session`, launching the browser and opening the page as
    /// needed. A browser found dead is dropped first, so this relaunches.
    pub async fn page(&self, session: &str) -> Result<Page, ToolError> {
        self.page_of(session, Open::Default, &Owner::Process).await
    }

    /// The page a browser tool call works on: the session handle it was given
    /// (which must be open), else its correlation id's default session (opened
    /// on first use).
    pub async fn page_for(&self, ctx: &axon_core::ToolContext) -> Result<Page, ToolError> {
        match HANDLE.try_with(Arc::clone) {
            Ok(handle) => self.page_of(&handle, Open::Existing, ctx.owner()).await,
            Err(_) => {
                self.page_of(&Self::default_session(ctx), Open::Default, ctx.owner())
                    .await
            }
        }
    }

    /// The session id a call works on (see [`Browsers::page_for`]).
    pub(crate) fn session_for(ctx: &axon_core::ToolContext) -> String {
        HANDLE
            .try_with(|h| h.to_string())
            .unwrap_or_else(|_| Self::default_session(ctx))
    }

    /// The default session of a call without a handle: its correlation id's,
    /// and its owner's. The process owner's is the correlation id itself; a
    /// tenant's is `<correlation id>@<tenant>` (tenant names hold no `@`), so
    /// that two tenants who use the same correlation id get a page each:
    /// neither is refused nor given the other's (issue 59).
    pub(crate) fn default_session(ctx: &axon_core::ToolContext) -> String {
        match ctx.tenant() {
            None => ctx.correlation_id().to_string(),
            Some(tenant) => format!("{}@{tenant}", ctx.correlation_id()),
        }
    }

    /// Keep `nodes` as the session's last snapshot and return the one before
    /// (empty when there was none, or the session's page is gone).
    pub(crate) async fn swap_snapshot(
        &self,
        ctx: &axon_core::ToolContext,
        nodes: Vec<crate::snapshot::SnapshotNode>,
    ) -> Vec<crate::snapshot::SnapshotNode> {
        let session = Self::session_for(ctx);
        let mut live = self.live.lock().await;
        match live.as_mut().and_then(|l| l.pages.get_mut(&session)) {
            Some(slot) => std::mem::replace(&mut slot.last_snapshot, nodes),
            None => Vec::new(),
        }
    }

    /// Open a session under `id` (a handle) with `options`; fails when one is
    /// open under that id already.
    pub async fn open_session(&self, id: &str, options: SessionOptions) -> Result<(), ToolError> {
        let owner = options.owner.clone();
        self.page_of(id, Open::New(options), &owner)
            .await
            .map(|_| ())
    }

    /// The open sessions, most recently used first.
    pub async fn sessions(&self) -> Vec<SessionInfo> {
        self.sessions_of(&Owner::Process).await
    }

    /// The open sessions `tenant` may see (its own; every one for `None`),
    /// most recently used first.
    pub async fn sessions_of(&self, owner: &Owner) -> Vec<SessionInfo> {
        let pages: Vec<(String, bool, Page, Instant)> = match self.live.lock().await.as_ref() {
            Some(live) => live
                .pages
                .iter()
                .filter(|(_, s)| s.visible_to(owner))
                .map(|(id, s)| (id.clone(), s.handle, s.tabs.page().clone(), s.used))
                .collect(),
            None => return Vec::new(),
        };
        let now = Instant::now();
        let mut out = Vec::with_capacity(pages.len());
        for (session, handle, page, used) in pages {
            let url = page.url().await.ok().flatten().unwrap_or_default();
            out.push(SessionInfo {
                session,
                handle,
                url,
                idle_ms: now.duration_since(used).as_millis() as u64,
            });
        }
        out.sort_by_key(|s| s.idle_ms);
        out
    }

    /// The storage state of `session` (Playwright's format): every cookie of its
    /// browser context, and `localStorage` of the page's origin plus the origins
    /// it was started with.
    pub async fn storage_state(&self, session: &str, owner: &Owner) -> Result<Value, ToolError> {
        let (page, seeded) = {
            let live = self.live.lock().await;
            let slot = live
                .as_ref()
                .and_then(|l| l.pages.get(session))
                .filter(|slot| slot.visible_to(owner))
                .ok_or_else(|| no_session(session))?;
            (slot.tabs.page().clone(), slot.seeded.clone())
        };
        let cookies = crate::cdp::send(&page, "Network.getAllCookies", json!({})).await?;
        let cookies: Vec<Value> = cookies["cookies"]
            .as_array()
            .map(|list| list.iter().map(playwright_cookie).collect())
            .unwrap_or_default();
        let here = crate::cdp::eval(
            &page,
            "(() => { try { return {origin: location.origin, localStorage: Object.entries(localStorage).map(([name, value]) => ({name, value}))}; } catch (e) { return null; } })()",
        )
        .await?;
        let here_origin = here["origin"].as_str().unwrap_or("null").to_string();
        let mut origins: Vec<Value> = seeded
            .into_iter()
            .filter(|o| o["origin"].as_str() != Some(here_origin.as_str()))
            .collect();
        if here_origin.starts_with("http") {
            origins.push(here);
        }
        Ok(json!({"cookies": cookies, "origins": origins}))
    }

    /// Close `session`: its page and its browser context. Whether it was open.
    pub async fn close_handle(&self, session: &str) -> bool {
        self.close_as(session, &Owner::Process).await
    }

    /// Close `session` if `tenant` may see it (see [`Browsers::sessions_of`]).
    /// Whether it was open (and `tenant`'s).
    pub async fn close_as(&self, session: &str, owner: &Owner) -> bool {
        let mut live = self.live.lock().await;
        let Some(live) = live.as_mut() else {
            return false;
        };
        if !live
            .pages
            .get(session)
            .is_some_and(|slot| slot.visible_to(owner))
        {
            return false;
        }
        let Some(slot) = live.pages.remove(session) else {
            return false;
        };
        close_slot(&live.browser, slot).await;
        true
    }

    /// What every browser tool starts with: its session's page and how long
    /// the action may wait (the call's `timeout_ms`, else the configured
    /// default `pick` chooses).
    pub(crate) async fn start(
        &self,
        ctx: &axon_core::ToolContext,
        asked: Option<u64>,
        pick: fn(&ActionTimeouts) -> u64,
    ) -> Result<(Page, Duration), ToolError> {
        let timeout = self.config.timeout(asked, pick(&self.config.timeouts));
        Ok((self.page_for(ctx).await?, timeout))
    }

    /// Close the page of `session` (a run ended, an MCP session closed).
    pub async fn close_session(&self, session: &str) {
        self.close_handle(session).await;
    }

    /// Whether a browser is running now, and its pid (diagnostics, tests).
    pub async fn pid(&self) -> Option<u32> {
        let mut slot = self.live.lock().await;
        let live = slot.as_mut()?;
        if !live.is_alive() {
            return None;
        }
        live.browser
            .get_mut_child()
            .and_then(|child| child.inner.id())
    }

    /// Close the browser (the process is exiting).
    pub async fn shutdown(&self) {
        if let Some(live) = self.live.lock().await.take() {
            retire(live).await;
        }
    }

    /// Whether a failure may have been caused by the browser dying under it; the
    /// caller turns it into `transient` so the retry relaunches.
    pub async fn browser_died(&self) -> bool {
        self.live
            .lock()
            .await
            .as_mut()
            .is_some_and(|live| !live.is_alive())
    }

    async fn launch(&self) -> Result<Live, ToolError> {
        let executable = self.config.executable_path();
        if !executable.exists() {
            return Err(ToolError::unavailable(format!(
                "no Chromium at {} (install Debian's chromium, or set browser.executable / AXON_CHROME)",
                executable.display()
            ))
            .with_code("browser_missing"));
        }
        // What processes killed before they could clean up left behind.
        let _ = tokio::task::spawn_blocking(crate::profile::sweep_orphans).await;
        let profile = crate::profile::new_profile();
        let egress = crate::egress::Egress::start(self.config.clone())
            .await
            .map_err(|e| {
                ToolError::unavailable(format!("cannot start the browser's proxy: {e}"))
            })?;
        let sandboxed = self.config.sandboxed();
        let mut config = LaunchConfig::builder();
        if !sandboxed {
            config = config.no_sandbox();
        }
        let config = config
            .chrome_executable(&executable)
            .user_data_dir(&profile)
            .launch_timeout(Duration::from_millis(self.config.launch_timeout_ms))
            .args(FLAGS)
            // Every request, loopback included, through the proxy that holds
            // the host rules (crate::egress).
            .arg(("proxy-server", egress.proxy_server().as_str()))
            .arg(("proxy-bypass-list", "<-loopback>"))
            // WebRTC speaks UDP, which the proxy does not carry: none of it
            // may leave but through the proxy, so none leaves (a page's STUN
            // request to a denied host, its view of this machine's addresses).
            .arg(("webrtc-ip-handling-policy", "disable_non_proxied_udp"))
            // One renderer process for a page and its cross-origin iframes, so
            // the snapshot reads a frame's accessibility tree and the element
            // tools resolve its refs through the page's own connection.
            // Costs the per-site process isolation an agent's browser gains
            // little from (docs/security.md).
            .arg("disable-site-isolation-trials")
            .arg((
                "disable-features",
                ["IsolateOrigins", "site-per-process"].as_slice(),
            ))
            .window_size(self.config.viewport_width, self.config.viewport_height)
            .viewport(Viewport {
                width: self.config.viewport_width,
                height: self.config.viewport_height,
                device_scale_factor: None,
                emulating_mobile: false,
                is_landscape: false,
                has_touch: false,
            })
            .build()
            .map_err(|e| ToolError::unavailable(format!("browser config: {e}")))?;
        let (browser, mut handler) = Browser::launch(config).await.map_err(|e| {
            let hint = if sandboxed && crate::config::running_as_root() {
                " (Chromium's sandbox is on, and Chromium refuses it as root: set [browser] sandbox = false, or run Axon as another user)"
            } else {
                ""
            };
            ToolError::unavailable(format!(
                "cannot launch {}: {e}{hint}",
                executable.display()
            ))
            .with_code("browser_launch_failed")
        })?;
        let alive = Arc::new(AtomicBool::new(true));
        let flag = alive.clone();
        // CDP only moves while the handler is polled. It ends (or errors on the
        // websocket) when the browser goes away.
        tokio::spawn(async move {
            while let Some(event) = handler.next().await {
                if let Err(e) = event
                    && matches!(e, chromiumoxide::error::CdpError::Ws(_))
                {
                    break;
                }
            }
            flag.store(false, Ordering::SeqCst);
        });
        let devtools_port = url::Url::parse(browser.websocket_address())
            .ok()
            .and_then(|u| u.port());
        if let Some(port) = devtools_port {
            axon_core::network::register_devtools_port(port);
        }
        let watch = crate::tabs::Watch::start(&browser).await?;
        tracing::info!(executable = %executable.display(), "browser launched");
        Ok(Live {
            watch,
            browser,
            alive,
            pages: HashMap::new(),
            profile,
            _egress: egress,
            devtools_port,
        })
    }
}

impl Drop for Browsers {
    /// A process that exits without [`Browsers::shutdown`] (the CLI after one
    /// call) still kills its Chromium and deletes the temporary profile.
    fn drop(&mut self) {
        if let Some(mut live) = self.live.get_mut().take() {
            if let Some(child) = live.browser.get_mut_child() {
                let _ = child.inner.start_kill();
                // Until it is gone it may still write into its profile (seen:
                // a profile left behind under load). Bounded: a process on
                // its way out waits at most this.
                let deadline = std::time::Instant::now() + Duration::from_secs(3);
                while matches!(child.inner.try_wait(), Ok(None))
                    && std::time::Instant::now() < deadline
                {
                    std::thread::sleep(Duration::from_millis(10));
                }
            }
            crate::profile::remove(&live.profile);
        }
    }
}

/// Close a session: its tabs, then its browser context.
async fn close_slot(browser: &Browser, slot: Slot) {
    for page in slot.tabs.pages() {
        let _ = page.clone().close().await;
    }
    if let Some(context) = slot.context {
        let _ = browser.dispose_browser_context(context).await;
    }
}

/// Close a browser and delete its profile.
async fn retire(mut live: Live) {
    if live.is_alive() {
        let _ = live.browser.close().await;
    }
    let _ = live.browser.kill().await;
    let _ = live.browser.wait().await;
    let profile = live.profile.clone();
    let _ = tokio::task::spawn_blocking(move || crate::profile::remove(&profile)).await;
}
