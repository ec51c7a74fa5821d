//! Adaptive settle: after an action that may start work in the page (a click,
//! typing, a key, a selection), wait until the network requests and DOM
//! mutations it started have gone quiet — for [`QUIET`] — instead of
//! returning at once (the next step would read a half-updated page) or
//! sleeping a fixed time (Playwright MCP waits 500 ms after every action).
//!
//! Requests are followed through Chromium's Network events (the domain
//! chromiumoxide enables on every page), subscribed before the action so that
//! none is missed; mutations through a `MutationObserver` the page keeps the
//! time of the last one in. Streams that never end by design (WebSocket,
//! EventSource) are not waited for. The wait is bounded by [`MAX_SETTLE`]
//! and by the action's own timeout, whichever is shorter: a page that is never
//! quiet (a ticking clock, a poll every 50 ms) costs at most that.

use std::collections::HashSet;
use std::time::Duration;

use chromiumoxide::Page;
use chromiumoxide::cdp::browser_protocol::network::{
    EventLoadingFailed, EventLoadingFinished, EventRequestWillBeSent, RequestId, ResourceType,
};
use futures::StreamExt;
use tokio::time::Instant;

use crate::cdp::{self, Evaluated};

/// How long the page must be quiet (no request in flight, no request
/// started or ended, no DOM mutation) to count as settled.
pub const QUIET: Duration = Duration::from_millis(100);

/// The longest settle, whatever the page does.
pub const MAX_SETTLE: Duration = Duration::from_secs(3);

/// How often the DOM's last mutation is read while the network is quiet.
const POLL: Duration = Duration::from_millis(25);

/// Start observing mutations in the page; the observer writes the time of
/// the last one to `window.__axon_settle`. Idempotent per document.
const OBSERVE: &str = r#"(() => {
  const now = performance.now();
  const s = window.__axon_settle;
  if (s && s.observer) { s.last = now; return true; }
  const state = { last: now, observer: null };
  state.observer = new MutationObserver(() => { state.last = performance.now(); });
  state.observer.observe(document, { subtree: true, childList: true, attributes: true, characterData: true });
  window.__axon_settle = state;
  return true;
})()"#;

/// Milliseconds since the last mutation; since the document loaded when it
/// is a new one (a navigation replaced the observed page), or -1 while it is
/// still loading.
const SINCE_LAST: &str = r#"(() => {
  const s = window.__axon_settle;
  if (s) return performance.now() - s.last;
  return document.readyState === "complete" ? performance.now() : -1;
})()"#;

/// The network events of one page, subscribed before an action.
pub(crate) struct Watch {
    started: chromiumoxide::listeners::EventStream<EventRequestWillBeSent>,
    finished: chromiumoxide::listeners::EventStream<EventLoadingFinished>,
    failed: chromiumoxide::listeners::EventStream<EventLoadingFailed>,
}

/// Subscribe to the page's requests and start observing its DOM: call before
/// the action. `None` when the page cannot be watched (then nothing settles:
/// the action's result stands as it is).
pub(crate) async fn watch(page: &Page) -> Option<Watch> {
    let started = page.event_listener::<EventRequestWillBeSent>().await.ok()?;
    let finished = page.event_listener::<EventLoadingFinished>().await.ok()?;
    let failed = page.event_listener::<EventLoadingFailed>().await.ok()?;
    cdp::evaluate(page, OBSERVE, true).await.ok()?;
    Some(Watch {
        started,
        finished,
        failed,
    })
}

/// Wait until the page has been quiet for [`QUIET`], at most `limit` (and
/// [`MAX_SETTLE`]); returns how long it waited.
pub(crate) async fn settle(page: &Page, mut w: Watch, limit: Duration) -> Duration {
    let began = Instant::now();
    let until = began + limit.min(MAX_SETTLE);
    let mut in_flight: HashSet<RequestId> = HashSet::new();
    let mut last_network = began;
    loop {
        let now = Instant::now();
        if now >= until {
            break;
        }
        tokio::select! {
            Some(e) = w.started.next() => {
                if !matches!(e.r#type, Some(ResourceType::WebSocket | ResourceType::EventSource)) {
                    in_flight.insert(e.request_id.clone());
                }
                last_network = Instant::now();
            }
            Some(e) = w.finished.next() => {
                in_flight.remove(&e.request_id);
                last_network = Instant::now();
            }
            Some(e) = w.failed.next() => {
                in_flight.remove(&e.request_id);
                last_network = Instant::now();
            }
            _ = tokio::time::sleep_until((now + POLL).min(until)) => {
                if in_flight.is_empty()
                    && last_network.elapsed() >= QUIET
                    && tokio::time::timeout_at(until, dom_quiet(page)).await.unwrap_or(false)
                {
                    break;
                }
            }
        }
    }
    began.elapsed()
}

/// Whether the DOM has not changed for [`QUIET`]. A page that cannot be read
/// (it is navigating) is not quiet yet.
async fn dom_quiet(page: &Page) -> bool {
    match cdp::evaluate(page, SINCE_LAST, true).await {
        Ok(Evaluated::Value(v)) => v
            .as_f64()
            .is_some_and(|ms| ms >= QUIET.as_secs_f64() * 1000.0),
        _ => false,
    }
}
