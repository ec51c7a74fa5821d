//! `[browser]` in `axon.toml`: which Chromium, which hosts its pages may
//! reach, how large a page is, how many pages stay open and how long each
//! kind of action may wait. Plain data with its defaults, and the two checks
//! every navigation makes (`check_url`, `check_host`).

use std::path::PathBuf;
use std::time::Duration;

use axon_core::{Owner, ToolError};
use serde::{Deserialize, Serialize};
use serde_json::Value;

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
    /// The page size in CSS pixels (default 1280×720).
    pub viewport_width: u32,
    /// See `viewport_width`.
    pub viewport_height: u32,
    /// Pages open at most; opening one more closes the least recently used.
    /// Sessions are correlation ids, and a server sees new ones all day.
    pub max_pages: usize,
    /// Pages one client (a tenant: a scoped token, an MCP session of a
    /// server without tokens) holds at most, so that one client cannot take
    /// the whole pool; past it, its next new page is refused
    /// (`rate_limited`, code `capacity_exhausted`). The process's owner has
    /// no such cap. Default 8.
    pub max_pages_per_client: usize,
    /// A page unused this long is closed (its session starts afresh).
    pub page_idle_ms: u64,
    /// How long each kind of action may wait (auto-wait, navigation), unless
    /// a call gives its own `timeout_ms`.
    pub timeouts: ActionTimeouts,
    /// Whether `browser_act` keeps its translated steps and reuses them on
    /// pages of the same shape (docs/browser-act.md, "Act cache"). Default
    /// on; off translates every step (to compare translators, or for pages
    /// whose controls keep their names but change their meaning).
    pub act_cache: bool,
    /// Whether a session makes a tab its page opens (a `target="_blank"`
    /// link, `window.open`) its current tab. Default on: an agent that
    /// clicks such a link wants to read what it opened. `browser_session_new`
    /// takes its own `follow_new_tabs`.
    pub follow_new_tabs: bool,
    /// Whether `browser_evaluate` is offered: it runs an agent's script in
    /// the page, which can do anything the page can (read its cookies, post
    /// its forms). Default off.
    pub allow_evaluate: bool,
    /// Whether a session keeps a page's JavaScript dialogs open for the
    /// agent to answer (`browser_handle_dialog`) instead of answering them
    /// at once (dismissed; `beforeunload` accepted). Default off.
    /// `browser_session_new` takes its own `dialogs`.
    pub hold_dialogs: bool,
    /// The largest file a page may download into the files folder
    /// (`[files] dir`; docs/design.md, "Downloads"); a larger one is
    /// cancelled. 0 refuses every download. Default 25 MiB: a page decides
    /// what it downloads, so a session writes at most 20 of these.
    pub max_download_bytes: u64,
    /// Chromium's own sandbox around its renderers: `true` on, `false` off;
    /// unset (the default), on unless Axon runs as root, where Chromium
    /// refuses to start sandboxed. Off, a page that exploits the renderer
    /// runs as Axon's user: run Axon as a user of its own, or in a container.
    pub sandbox: Option<bool>,
    /// What an action (click, type, select, press, navigate, …) answers
    /// about the page after it: `changes` (default: what changed since the
    /// session's last snapshot, so the agent needs no snapshot call), `full`
    /// (the whole snapshot) or `none`. A call's `snapshot` argument wins.
    pub snapshot_after_action: AfterAction,
    /// Whether a session keeps a filmstrip of its actions
    /// (`crate::recording`): `off` (default), `on_failure` (the frame before
    /// a failed action and the failure's) or `always`;
    /// `browser_session_new {record}` wins.
    pub record: Record,
}

/// Which frames a session keeps (`crate::recording`).
#[derive(
    Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema,
)]
#[serde(rename_all = "snake_case")]
pub enum Record {
    /// None: no screenshot is taken.
    #[default]
    Off,
    /// The frame before a failed action and the failure's own.
    OnFailure,
    /// A frame after every action.
    Always,
}

/// What an action answers about the page after it (`crate::changes`).
#[derive(
    Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema,
)]
#[serde(rename_all = "lowercase")]
pub enum AfterAction {
    /// What changed since the session's last snapshot (a new page: all of it).
    #[default]
    Changes,
    /// The whole snapshot.
    Full,
    /// Nothing.
    None,
}

/// `[browser.timeouts]`: the per-action defaults, in milliseconds.
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
            max_pages_per_client: 8,
            page_idle_ms: 300_000,
            timeouts: ActionTimeouts::default(),
            act_cache: true,
            follow_new_tabs: true,
            allow_evaluate: false,
            hold_dialogs: false,
            max_download_bytes: 25 * 1024 * 1024,
            sandbox: None,
            snapshot_after_action: AfterAction::Changes,
            record: Record::Off,
        }
    }
}

impl BrowserConfig {
    /// Whether Chromium runs in its sandbox (see [`BrowserConfig::sandbox`]).
    pub fn sandboxed(&self) -> bool {
        self.sandbox.unwrap_or_else(|| !running_as_root())
    }

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
        let bare = host.trim_start_matches('[').trim_end_matches(']');
        self.check_host(bare).or_else(|e| blocked(e.to_string()))?;
        // What the network rules decide without a lookup (an address, a
        // loopback name); the browser's proxy checks every request again.
        let port = parsed.port_or_known_default().unwrap_or(0);
        match axon_core::network::refused_literal(host, port) {
            Some(why) => blocked(why),
            None => Ok(()),
        }
    }

    /// Whether the browser may connect to `host` by the host lists (every
    /// request it makes is checked so, `crate::egress`); the error says which
    /// list refused it.
    pub fn check_host(&self, host: &str) -> Result<(), HostRefused> {
        let refused = |listed| HostRefused {
            host: host.to_string(),
            listed,
        };
        if axon_core::hosts::matches_any(&self.deny_hosts, host) {
            return Err(refused(true));
        }
        if !self.allow_hosts.is_empty() && !axon_core::hosts::matches_any(&self.allow_hosts, host) {
            return Err(refused(false));
        }
        Ok(())
    }

    /// A call's `timeout_ms`, else the action's default; never above
    /// `timeouts.wait_max_ms`.
    pub(crate) fn timeout(&self, asked: Option<u64>, default_ms: u64) -> Duration {
        Duration::from_millis(asked.unwrap_or(default_ms).min(self.timeouts.wait_max_ms))
    }
}

/// Whether this process runs as root (the owner of `/proc/self`, Linux).
pub(crate) fn running_as_root() -> bool {
    use std::os::unix::fs::MetadataExt;
    std::fs::metadata("/proc/self").is_ok_and(|m| m.uid() == 0)
}
/// A host the browser may not reach, and which list says so.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct HostRefused {
    /// The host asked for.
    pub host: String,
    /// `true`: it is in `browser.deny_hosts`; `false`: `browser.allow_hosts`
    /// is set and does not hold it.
    pub listed: bool,
}

impl std::fmt::Display for HostRefused {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        if self.listed {
            write!(f, "host {} is in browser.deny_hosts", self.host)
        } else {
            write!(f, "host {} is not in browser.allow_hosts", self.host)
        }
    }
}

impl std::error::Error for HostRefused {}

/// How a session starts: `browser_session_new`'s options.
#[derive(Clone, Debug, Default)]
pub struct SessionOptions {
    /// Cookies and `localStorage` to start from (Playwright's storage state:
    /// `{"cookies": [...], "origins": [{"origin", "localStorage": [{"name", "value"}]}]}`).
    pub storage_state: Option<Value>,
    /// The viewport, instead of `[browser] viewport_width`/`viewport_height`.
    pub viewport: Option<(u32, u32)>,
    /// Who it belongs to (`ToolContext::owner`).
    pub owner: Owner,
    /// Whether a tab its page opens becomes current, instead of
    /// `[browser] follow_new_tabs`.
    pub follow_new_tabs: Option<bool>,
    /// Whether dialogs stay open for `browser_handle_dialog`, instead of
    /// `[browser] hold_dialogs`.
    pub hold_dialogs: Option<bool>,
    /// Which frames it records, instead of `[browser] record`.
    pub record: Option<Record>,
}
