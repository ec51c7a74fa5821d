//! # axon-browser
//!
//! Browser tools on a real headless Chromium, driven over the DevTools protocol
//! with chromiumoxide (no browser download: Debian's `chromium`). One browser per
//! process ([`Browsers`]), one page per session (the call's correlation id, so a
//! plan run's steps share a page), crash detection and relaunch: a call that
//! hits a dead browser fails `transient` and its retry gets a new one.
//!
//! Built so far: the session manager and the page-level tools
//! (`browser_navigate`, `browser_get_page_state`, `browser_get_page_html`,
//! `browser_take_screenshot`), with `[browser]` host and scheme rules checked
//! before every navigation. The element tools (addressing by selector, ref,
//! role + name, label, text, with auto-wait) come next.

#![warn(missing_docs)]

mod session;
mod tools;

pub use session::{BrowserConfig, Browsers};
pub use tools::{PageState, WaitUntil, register};
