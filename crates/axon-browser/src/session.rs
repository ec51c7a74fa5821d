//! One Chromium for the process, one page per session.
//!
//! The browser is launched on first use (Debian's `/usr/bin/chromium`, or
//! `[browser] executable`, or `AXON_CHROME`; never downloaded), headless, with a
//! fresh temporary profile. Each session id — a plan run's correlation id, an MCP
//! session, a caller's correlation id — gets its own page, so concurrent runs
//! never see each other's state. When the browser dies (crash, killed), the
//! call that finds out fails `transient`, the dead browser is forgotten, and the
//! retry launches a new one.

use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use axon_core::{ErrorKind, ToolError};
use chromiumoxide::browser::{Browser, BrowserConfig as LaunchConfig};
use chromiumoxide::handler::viewport::Viewport;
use chromiumoxide::page::Page;
use futures::StreamExt;
use serde::{Deserialize, Serialize};
use tokio::time::Instant;

/// `[browser]` in `axon.toml`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct BrowserConfig {
    /// The Chromium binary; else `AXON_CHROME`, else `/usr/bin/chromium`.
    pub executable: Option<PathBuf>,
    /// Hosts pages may be opened on (`example.com`, `*.example.com`); empty
    /// allows every host not denied.
    pub allow_hosts: Vec<String>,
    /// Hosts pages may never be opened on; wins over `allow_hosts`.
    pub deny_hosts: Vec<String>,
    /// Whether `file:` URLs may be opened (off: a page could read local files).
    pub allow_file_urls: bool,
    /// How long Chromium may take to start.
    pub launch_timeout_ms: u64,
    /// The page size in CSS pixels (seed 003: 1280×720).
    pub viewport_width: u32,
    /// See `viewport_width`.
    pub viewport_height: u32,
    /// Pages open at most; opening one more closes the least recently used.
    /// Sessions are correlation ids, and a server sees new ones all day.
    pub max_pages: usize,
    /// A page unused this long is closed (its session starts afresh).
    pub page_idle_ms: u64,
    /// How long each kind of action may wait (auto-wait, navigation), unless
    /// a call gives its own `timeout_ms`.
    pub timeouts: ActionTimeouts,
}

/// `[browser.timeouts]`: seed 003's per-action defaults, in milliseconds.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct ActionTimeouts {
    /// `browser_navigate`, `browser_wait_for_url_change`, `browser_submit_form`.
    pub navigate_ms: u64,
    /// `browser_click`.
    pub click_ms: u64,
    /// `browser_type`, `browser_clear_input`, `browser_select_option`.
    pub type_ms: u64,
    /// `browser_search`.
    pub search_ms: u64,
    /// `browser_scroll`.
    pub scroll_ms: u64,
    /// `browser_press_key`.
    pub press_key_ms: u64,
    /// The longest `browser_wait` (and `timeout_ms` any tool accepts).
    pub wait_max_ms: u64,
    /// Every other element tool (`browser_get_text`, `browser_wait_for_element`,
    /// `browser_extract_table`, element screenshots and HTML).
    pub element_ms: u64,
}

impl Default for ActionTimeouts {
    fn default() -> Self {
        ActionTimeouts {
            navigate_ms: 10_000,
            click_ms: 3_000,
            type_ms: 2_000,
            search_ms: 5_000,
            scroll_ms: 1_000,
            press_key_ms: 1_000,
            wait_max_ms: 60_000,
            element_ms: 5_000,
        }
    }
}

impl Default for BrowserConfig {
    fn default() -> Self {
        BrowserConfig {
            executable: None,
            allow_hosts: Vec::new(),
            deny_hosts: Vec::new(),
            allow_file_urls: false,
            launch_timeout_ms: 20_000,
            viewport_width: 1280,
            viewport_height: 720,
            max_pages: 16,
            page_idle_ms: 300_000,
            timeouts: ActionTimeouts::default(),
        }
    }
}

impl BrowserConfig {
    /// The binary to launch.
    pub fn executable_path(&self) -> PathBuf {
        self.executable
            .clone()
            .or_else(|| std::env::var_os("AXON_CHROME").map(PathBuf::from))
            .unwrap_or_else(|| PathBuf::from("/usr/bin/chromium"))
    }

    /// Whether a page may be opened on `url`: the scheme (`http`, `https`,
    /// `about`, and `file` only when enabled) and the host lists. The error is a
    /// `failed` with code `navigation_blocked` that says which rule refused it.
    pub fn check_url(&self, url: &str) -> Result<(), ToolError> {
        let blocked = |why: String| Err(ToolError::failed(why).with_code("navigation_blocked"));
        let Ok(parsed) = url::Url::parse(url) else {
            return Err(ToolError::invalid_arguments(format!(
                "/url: {url:?} is not an absolute URL"
            )));
        };
        match parsed.scheme() {
            "http" | "https" => {}
            "about" => return Ok(()),
            "file" if self.allow_file_urls => return Ok(()),
            "file" => return blocked("file: URLs are off (browser.allow_file_urls)".into()),
            other => return blocked(format!("scheme {other}: is not allowed")),
        }
        let host = parsed.host_str().unwrap_or_default();
        if axon_core::hosts::matches_any(&self.deny_hosts, host) {
            return blocked(format!("host {host} is in browser.deny_hosts"));
        }
        if !self.allow_hosts.is_empty() && !axon_core::hosts::matches_any(&self.allow_hosts, host) {
            return blocked(format!("host {host} is not in browser.allow_hosts"));
        }
        Ok(())
    }

    /// A call's `timeout_ms`, else the action's default; never above
    /// `timeouts.wait_max_ms`.
    pub(crate) fn timeout(&self, asked: Option<u64>, default_ms: u64) -> Duration {
        Duration::from_millis(asked.unwrap_or(default_ms).min(self.timeouts.wait_max_ms))
    }
}

/// The flags of every launch (issue 4, and what works on this machine's
/// closed network: no background connections, no QUIC, no first-run UI).
const FLAGS: [&str; 7] = [
    "no-sandbox",
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
    /// Each session's page and when it was last used.
    pages: HashMap<String, (Page, Instant)>,
    profile: PathBuf,
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
        }
    }

    /// The config.
    pub fn config(&self) -> &BrowserConfig {
        &self.config
    }

    /// The page of `session`, launching the browser and opening the page as
    /// needed. A browser found dead is dropped first, so this relaunches.
    pub async fn page(&self, session: &str) -> Result<Page, ToolError> {
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
        if let Some((page, used)) = live.pages.get_mut(session) {
            *used = now;
            return Ok(page.clone());
        }
        // Make room: pages idle too long, then the least recently used.
        let idle = Duration::from_millis(self.config.page_idle_ms);
        let mut closing: Vec<String> = live
            .pages
            .iter()
            .filter(|(_, (_, used))| now.duration_since(*used) >= idle)
            .map(|(id, _)| id.clone())
            .collect();
        let mut by_age: Vec<(&String, Instant)> = live
            .pages
            .iter()
            .map(|(id, (_, used))| (id, *used))
            .collect();
        by_age.sort_by_key(|(_, used)| *used);
        let excess = (live.pages.len() + 1).saturating_sub(self.config.max_pages.max(1));
        closing.extend(by_age.into_iter().take(excess).map(|(id, _)| id.clone()));
        for id in closing {
            if let Some((page, _)) = live.pages.remove(&id) {
                tracing::debug!(session = %id, "closing an idle browser page");
                tokio::spawn(async move {
                    let _ = page.close().await;
                });
            }
        }
        let page = live
            .browser
            .new_page("about:blank")
            .await
            .map_err(|e| cdp_error("opening a page", &e))?;
        live.pages.insert(session.to_string(), (page.clone(), now));
        Ok(page)
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
        Ok((self.page(ctx.correlation_id()).await?, timeout))
    }

    /// Close the page of `session` (a run ended, an MCP session closed).
    pub async fn close_session(&self, session: &str) {
        let page = self
            .live
            .lock()
            .await
            .as_mut()
            .and_then(|live| live.pages.remove(session));
        if let Some((page, _)) = page {
            let _ = page.close().await;
        }
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
        let profile = std::env::temp_dir().join(format!("axon-chromium-{}", ulid::Ulid::new()));
        let config = LaunchConfig::builder()
            .chrome_executable(&executable)
            .user_data_dir(&profile)
            .launch_timeout(Duration::from_millis(self.config.launch_timeout_ms))
            .args(FLAGS)
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
            ToolError::unavailable(format!("cannot launch {}: {e}", executable.display()))
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
        tracing::info!(executable = %executable.display(), "browser launched");
        Ok(Live {
            browser,
            alive,
            pages: HashMap::new(),
            profile,
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
            }
            let _ = std::fs::remove_dir_all(&live.profile);
        }
    }
}

/// Close a browser and delete its profile.
async fn retire(mut live: Live) {
    if live.is_alive() {
        let _ = live.browser.close().await;
    }
    let _ = live.browser.kill().await;
    let _ = live.browser.wait().await;
    let _ = tokio::fs::remove_dir_all(&live.profile).await;
}

/// A CDP failure while doing `what`: `transient` (the page changed under us, the
/// connection dropped), with the message.
pub(crate) fn cdp_error(what: &str, e: &chromiumoxide::error::CdpError) -> ToolError {
    ToolError::new(ErrorKind::Transient, format!("{what}: {e}"))
}
