//! # axon-browser
//!
//! Browser tools on a real headless Chromium, driven over the DevTools protocol
//! with chromiumoxide (no browser download: Debian's `chromium`). One browser per
//! process ([`Browsers`]), one page per session, each in a browser context of
//! its own (the call's correlation id, so a plan run's steps share a page, or a
//! `session` handle from `browser_session_new`: see `handles`), crash detection
//! and relaunch: a call that hits a dead browser fails `transient` and its retry
//! gets a new one.
//!
//! The tools (docs/design.md lists them): page tools (`browser_navigate`,
//! `browser_get_page_state`, `browser_get_page_html`, `browser_take_screenshot`,
//! `browser_snapshot`), element tools that address an element by `selector`,
//! `ref`, `role` + `name`, `label` or `has_text` and auto-wait for it
//! (`locate`), and input tools (`browser_press_key`, `browser_scroll`,
//! `browser_wait`), and the session tools (`browser_session_new`, `_save`,
//! `_list`, `_close`). `[browser]` host and scheme rules are checked before every
//! navigation and, through the browser's own proxy (`egress`), on every
//! request the browser makes; text typed into password fields is `***` in
//! history.
//!
//! [`layer`] is what a tool built on top of these uses: `axon-browser-act`'s
//! `browser_act` (one plan step in words, one action chosen by a heuristic
//! or an OpenAI-compatible model) runs its action with the tools' own code.

#![warn(missing_docs)]

#[doc(hidden)]
pub mod cdp;
mod changes;
mod config;
mod dialogs;
mod downloads;
mod egress;
mod helpers;
mod input;
mod journal;
pub mod layer;
mod locate;
mod profile;
mod recording;
mod routes;
mod screencast;
mod session;
mod settle;
mod snapshot;
mod storage;
mod tabs;
mod tools;

pub use config::SessionOptions;
pub use config::{AfterAction, HostRefused, Record};
pub use locate::Address;
pub use session::{ActionTimeouts, BrowserConfig, Browsers, SessionInfo};
pub use snapshot::{Snapshot, SnapshotArgs, SnapshotNode};
pub use tools::handles::{NewSessionArgs, SaveArgs};
pub use tools::{
    ClickArgs, Direction, Edge, ElementArgs, ElementState, OneOrMany, PageState, PressKeyArgs,
    ScrollArgs, SearchArgs, SelectArgs, SubmitArgs, TabAction, TableArgs, TableFormat, TabsArgs,
    TypeArgs, UrlChangeArgs, VerifyArgs, WaitArgs, WaitForElementArgs, WaitUntil, register,
};
