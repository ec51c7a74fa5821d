//! Adaptive settle: after an action that may start work in the page (a click,
//! typing, a key, a selection), wait for the work it started — the network
//! requests and DOM mutations — to finish, instead of returning at once (the
//! next step would read a half-updated page) or sleeping a fixed time
//! (Playwright MCP waits 500 ms after every action).
//!
//! The wait goes on evidence. First the page is given one turn to react: a
//! rendering frame and a task after the action (its handlers, their promises,
//! a `setTimeout(…, 0)` and an animation frame have run). If by then no
//! request was started and no node changed, the action started nothing and the
//! step returns: a click on a dead button costs a frame, not a quiet window.
//! Otherwise the page must be quiet for [`QUIET`] (no request in flight, none
//! started or ended, no DOM mutation) to count as settled.
//!
//! Requests are followed through Chromium's Network events (the domain
//! chromiumoxide enables on every page), subscribed before the action so that
//! none is missed; mutations through a `MutationObserver` that counts them and
//! keeps the time of the last one. A page quiet by those counts may still be
//! moving what it shows: a calendar sliding to the next month holds both
//! months' days until its transition ends and the old ones go. So the quiet
//! also waits for the finite animations and transitions that move, size or
//! fade an element holding text or controls (`transform`, `opacity`,
//! `height`, …; not a colour or a shadow, not an empty ripple, not a spinner
//! that turns forever), when they end within [`ANIMATION`]. Streams that never end by design
//! (WebSocket, EventSource) are not waited for. The wait is bounded by
//! [`MAX_SETTLE`] and by the action's own timeout, whichever is shorter: a page
//! that is never quiet (a ticking clock, a poll every 50 ms) costs at most
//! that. Work an action schedules for later than its first turn (a
//! `setTimeout` of 200 ms before a request) is not waited for: nothing shows
//! it was started.

use std::collections::HashSet;
use std::time::Duration;

use chromiumoxide::Page;
use chromiumoxide::cdp::browser_protocol::network::{
    EventLoadingFailed, EventLoadingFinished, EventRequestWillBeSent, RequestId, ResourceType,
};
use futures::{FutureExt, StreamExt};
use serde_json::json;
use tokio::time::Instant;

use crate::cdp::{self, Evaluated};

/// How long the page must be quiet (no request in flight, no request
/// started or ended, no DOM mutation) to count as settled, once the action
/// has been seen to start work. Every action that starts work pays it once,
/// so it is the floor of a real app's step (issue 60: 100 ms made a task of
/// four actions 0.52–0.55× Playwright MCP's time, 75 ms 0.49×). It must
/// outlast the pauses a page makes while it draws: the act tests'
/// `settle.html` draws 50 ms after a request's answer and changes 60 ms
/// apart, and passes at 75 ms with both cores busy. 50 ms did as well on
/// the real apps (not run against `settle.html`), but would close inside
/// those pauses.
pub const QUIET: Duration = Duration::from_millis(75);

/// The longest settle, whatever the page does.
pub const MAX_SETTLE: Duration = Duration::from_secs(3);

/// The longest animation the settle waits for the end of: a transition
/// that draws the page's next state (a calendar's month sliding in, a
/// dialog fading in) ends within it; a longer one is decoration.
const ANIMATION: Duration = Duration::from_millis(1000);

/// How long the page is given to say when its DOM last changed (a page
/// between two documents may never answer that question).
const ASK: Duration = Duration::from_millis(250);

/// How often the page is looked at again while a request is in flight (its
/// end is an event; this is the fallback) or it cannot be read.
const POLL: Duration = Duration::from_millis(25);

/// Start observing mutations in the page; the observer counts them and writes
/// the time of the last one to `window.__axon_settle`. Idempotent per
/// document; returns the count so far.
const OBSERVE: &str = r#"(() => {
  const s = window.__axon_settle;
  if (s && s.observer) return s.count;
  const state = { last: performance.now(), count: 0, observer: null };
  state.observer = new MutationObserver((records) => {
    state.count += records.length;
    state.last = performance.now();
  });
  state.observer.observe(document, { subtree: true, childList: true, attributes: true, characterData: true });
  window.__axon_settle = state;
  return 0;
})()"#;

/// Resolves after the page's next turn: an animation frame and a task after
/// it (50 ms at most, for a page whose frames are paused), with the mutation
/// count then, or -1 when the observed document was replaced.
const NEXT_TURN: &str = r#"new Promise((resolve) => {
  const done = () => {
    const s = window.__axon_settle;
    resolve(s && s.observer ? s.count : -1);
  };
  requestAnimationFrame(() => setTimeout(done, 0));
  setTimeout(done, 50);
})"#;

/// Milliseconds since the last mutation; -2 for a new document that has
/// loaded (a navigation replaced the observed page: it is observed from then
/// on, so that an app drawing itself after its load is waited for), or -1
/// while it is still loading.
const SINCE_LAST: &str = r#"(() => {
  const s = window.__axon_settle;
  if (s) return performance.now() - s.last;
  return document.readyState === "complete" ? -2 : -1;
})()"#;

/// Milliseconds until the page's running animations that move, size or fade
/// an element holding text or controls have ended (0 when none; those that
/// run forever or end later than [`ANIMATION`] are left out). The focused
/// control's own decoration is not the page's answer and is left out too:
/// the animations on it, inside it and inside its labels (a text field's
/// label floating up as it takes the focus: 400 ms of every typing step in
/// a Quasar form, issue 60).
const ANIMATING: &str = r#"(() => {
  const moving = /^(transform|translate|scale|rotate|opacity|visibility|(max-|min-)?(height|width)|left|right|top|bottom|inset|margin.*|padding.*|clip-path)$/;
  const props = (a) => a.transitionProperty ? [a.transitionProperty]
    : (a.effect && a.effect.getKeyframes ? a.effect.getKeyframes().flatMap(Object.keys) : []);
  const shows = (t) => t && t.isConnected && ((t.textContent || "").trim() !== ""
    || t.querySelector("button, input, select, textarea, a[href], [role]") !== null);
  const focused = document.activeElement;
  const widget = focused && focused !== document.body && focused !== document.documentElement
    && focused.matches("input, textarea, select, button, [contenteditable], [role=button], [role=checkbox], [role=radio], [role=switch], [role=slider], [role=combobox], [role=option], [role=menuitem], [role=tab], [role=spinbutton], [role=textbox]");
  const field = widget ? [focused, focused.closest("label"), ...(focused.labels || [])].filter(Boolean) : [];
  const own = (t) => field.some((f) => f.contains(t));
  let left = 0;
  for (const a of document.getAnimations ? document.getAnimations() : []) {
    if (a.playState !== "running" || !a.effect) continue;
    const t = a.effect.getComputedTiming();
    if (!isFinite(t.endTime) || t.localTime === null) continue;
    const r = (t.endTime - t.localTime) / Math.abs(a.playbackRate || 1);
    if (r > left && r <= __MAX__ && props(a).some((p) => moving.test(p)) && shows(a.effect.target)
      && !own(a.effect.target)) left = r;
  }
  return left;
})()"#;

/// The network events of one page, subscribed before an action, and the
/// page's mutation count then.
pub struct Watch {
    started: chromiumoxide::listeners::EventStream<EventRequestWillBeSent>,
    finished: chromiumoxide::listeners::EventStream<EventLoadingFinished>,
    failed: chromiumoxide::listeners::EventStream<EventLoadingFailed>,
    mutations: i64,
    /// The observer, installed in every document the page loads while it is
    /// watched (a navigation the action starts is observed from its first
    /// node, not from when the settle first asks): removed by
    /// [`settle`] or [`unwatch`].
    script: Option<String>,
}

/// Subscribe to the page's requests and start observing its DOM: call before
/// the action. `None` when the page cannot be watched (then nothing settles:
/// the action's result stands as it is).
pub async fn watch(page: &Page) -> Option<Watch> {
    let started = page.event_listener::<EventRequestWillBeSent>().await.ok()?;
    let finished = page.event_listener::<EventLoadingFinished>().await.ok()?;
    let failed = page.event_listener::<EventLoadingFailed>().await.ok()?;
    let mutations = match cdp::evaluate(page, OBSERVE, true).await.ok()? {
        Evaluated::Value(v) => v.as_i64().unwrap_or(0),
        _ => 0,
    };
    let script = cdp::send(
        page,
        "Page.addScriptToEvaluateOnNewDocument",
        json!({ "source": OBSERVE }),
    )
    .await
    .ok()
    .and_then(|v| v["identifier"].as_str().map(String::from));
    Some(Watch {
        started,
        finished,
        failed,
        mutations,
        script,
    })
}

/// Stop watching without settling (the action failed): later documents are
/// not observed. Sent without waiting for the answer: a page that holds a
/// dialog open answers no Page command until the dialog is answered, and the
/// action's own answer is not kept waiting for that (an observer left on the
/// tab's later documents only counts mutations).
pub(crate) fn unwatch(page: &Page, w: Watch) {
    if let Some(identifier) = w.script {
        let page = page.clone();
        let params = json!({ "identifier": identifier });
        tokio::spawn(async move {
            let _ = cdp::send(&page, "Page.removeScriptToEvaluateOnNewDocument", params).await;
        });
    }
}

/// What a settle waited for, for the action's result to say.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Settled {
    /// How long it waited.
    pub waited: Duration,
    /// The requests the action started (streams aside).
    pub requests: usize,
    /// Why it stopped waiting.
    pub until: Until,
}

/// Why a settle stopped waiting.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Until {
    /// The action started nothing in the page (no request, no mutation).
    NothingStarted,
    /// The page was quiet for [`QUIET`] after the work it started.
    Quiet,
    /// The page was still busy at the limit.
    Limit,
}

impl Until {
    /// As the result says it.
    pub(crate) fn as_str(self) -> &'static str {
        match self {
            Until::NothingStarted => "nothing_started",
            Until::Quiet => "quiet",
            Until::Limit => "limit",
        }
    }
}

/// The requests an action started, as their events arrive.
struct Network {
    in_flight: HashSet<RequestId>,
    /// The requests that ended. Starts and ends come on separate event
    /// streams, and an end can be read before its start: a start read after
    /// its end is not in flight.
    ended: HashSet<RequestId>,
    /// How many started.
    started: usize,
    /// Whether any request started, ended or failed since the action.
    seen: bool,
    /// Whether a document started loading (the action navigated: the old
    /// page will not answer its turn).
    document: bool,
    last: Instant,
}

impl Network {
    /// Nothing seen yet, as of `began` (the settle's start).
    fn new(began: Instant) -> Self {
        Network {
            in_flight: HashSet::new(),
            ended: HashSet::new(),
            started: 0,
            seen: false,
            document: false,
            last: began,
        }
    }

    fn started(&mut self, e: &EventRequestWillBeSent) {
        if !matches!(
            e.r#type,
            Some(ResourceType::WebSocket | ResourceType::EventSource)
        ) {
            if !self.ended.contains(&e.request_id) {
                self.in_flight.insert(e.request_id.clone());
            }
            self.started += 1;
        }
        if e.r#type == Some(ResourceType::Document) {
            self.document = true;
        }
        self.ended(None);
    }

    fn ended(&mut self, id: Option<&RequestId>) {
        if let Some(id) = id {
            self.in_flight.remove(id);
            self.ended.insert(id.clone());
        }
        self.seen = true;
        self.last = Instant::now();
    }

    /// Take the events that have already arrived, without waiting.
    fn drain(&mut self, w: &mut Watch) {
        while let Some(Some(e)) = w.started.next().now_or_never() {
            self.started(&e);
        }
        while let Some(Some(e)) = w.finished.next().now_or_never() {
            self.ended(Some(&e.request_id));
        }
        while let Some(Some(e)) = w.failed.next().now_or_never() {
            self.ended(Some(&e.request_id));
        }
    }
}

/// Wait until the work the action started is done, at most `limit` (and
/// [`MAX_SETTLE`]); returns how long it waited, and for what.
pub async fn settle(page: &Page, mut w: Watch, limit: Duration) -> Settled {
    let settled = settle_watched(page, &mut w, limit).await;
    unwatch(page, w);
    settled
}

async fn settle_watched(page: &Page, w: &mut Watch, limit: Duration) -> Settled {
    let began = Instant::now();
    let until = began + limit.min(MAX_SETTLE);
    let mut net = Network::new(began);
    let done = |net: &Network, why| Settled {
        waited: began.elapsed(),
        requests: net.started,
        until: why,
    };
    if !started_work(page, w, &mut net, until).await {
        return done(&net, Until::NothingStarted);
    }
    // The earliest moment the page can have been quiet for a window; checked
    // then, not on a fixed beat, so the step returns a window after the last
    // thing it started.
    let mut check = net.last + QUIET;
    let why = loop {
        tokio::select! {
            Some(e) = w.started.next() => net.started(&e),
            Some(e) = w.finished.next() => net.ended(Some(&e.request_id)),
            Some(e) = w.failed.next() => net.ended(Some(&e.request_id)),
            _ = tokio::time::sleep_until(check.min(until)) => {
                let now = Instant::now();
                if now >= until {
                    break Until::Limit;
                }
                check = if !net.in_flight.is_empty() {
                    now + POLL
                } else if now < net.last + QUIET {
                    net.last + QUIET
                } else {
                    match tokio::time::timeout_at(until, since_last_mutation(page)).await {
                        Ok(Some(since)) if since >= QUIET => match animating(page).await {
                            // What ends the animation (the old month's days
                            // removed) is a mutation: quiet is counted again.
                            Some(left) => now + left,
                            None => break Until::Quiet,
                        },
                        Ok(Some(since)) => now + (QUIET - since),
                        _ => now + POLL,
                    }
                };
            }
        }
    };
    done(&net, why)
}

/// Give the page its next turn and say whether the action started anything
/// in it: a request, a mutation, or a new document. A page that cannot be
/// read in time counts as busy (the quiet wait, bounded, decides).
async fn started_work(page: &Page, w: &mut Watch, net: &mut Network, until: Instant) -> bool {
    let turn = tokio::time::timeout_at(until, cdp::evaluate(page, NEXT_TURN, true));
    tokio::pin!(turn);
    let mutations = loop {
        // A navigation replaces the page whose turn was asked for: its
        // answer never comes, and the work is plainly started.
        if net.document {
            break None;
        }
        tokio::select! {
            Some(e) = w.started.next() => net.started(&e),
            Some(e) = w.finished.next() => net.ended(Some(&e.request_id)),
            Some(e) = w.failed.next() => net.ended(Some(&e.request_id)),
            read = &mut turn => break match read {
                Ok(Ok(Evaluated::Value(v))) => v.as_i64(),
                _ => None,
            },
        }
    };
    // Events sent before the page answered may still be on their way to
    // their streams.
    net.drain(w);
    net.seen || mutations != Some(w.mutations)
}

/// How long ago the DOM last changed; `None` while the page cannot be read
/// (it is navigating), which is not quiet yet.
async fn since_last_mutation(page: &Page) -> Option<Duration> {
    // A page between two documents may not answer at all: asked again.
    let read = tokio::time::timeout(ASK, cdp::evaluate(page, SINCE_LAST, true)).await;
    let ms = match read.ok()? {
        Ok(Evaluated::Value(v)) => v.as_f64()?,
        _ => return None,
    };
    if ms == -2.0 {
        // The new document: observed from now, quiet from now.
        tokio::time::timeout(ASK, cdp::evaluate(page, OBSERVE, true))
            .await
            .ok()?
            .ok()?;
        return Some(Duration::ZERO);
    }
    page_ms(ms)
}

/// A duration the page reported in milliseconds: what the page's script
/// returns is the page's to choose (it can replace `__axon_settle` or
/// `getAnimations`), so anything that is not a finite, non-negative number
/// is `None` — never a panic — and a duration is capped at the settle's
/// longest.
fn page_ms(ms: f64) -> Option<Duration> {
    Duration::try_from_secs_f64(ms / 1000.0)
        .ok()
        .map(|d| d.min(MAX_SETTLE))
}

/// How long until the animations that draw the page's next state end;
/// `None` when none runs (or the page cannot say).
async fn animating(page: &Page) -> Option<Duration> {
    let script = ANIMATING.replace("__MAX__", &ANIMATION.as_millis().to_string());
    let read = tokio::time::timeout(ASK, cdp::evaluate(page, &script, true)).await;
    match read.ok()? {
        Ok(Evaluated::Value(v)) => v
            .as_f64()
            .and_then(page_ms)
            .filter(|left| !left.is_zero())
            .map(|left| left.min(ANIMATION)),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn start(id: &str) -> EventRequestWillBeSent {
        serde_json::from_value(serde_json::json!({
            "requestId": id, "loaderId": "l", "documentURL": "http://a/",
            "request": {"url": "http://a/x.js", "method": "GET", "headers": {},
                        "initialPriority": "High", "referrerPolicy": "no-referrer"},
            "timestamp": 1.0, "wallTime": 1.0, "initiator": {"type": "other"},
            "redirectHasExtraInfo": false, "type": "Script"
        }))
        .expect("a requestWillBeSent event")
    }

    #[test]
    fn what_a_page_reports_is_a_bounded_duration_or_none() {
        assert_eq!(page_ms(120.0), Some(Duration::from_millis(120)));
        assert_eq!(page_ms(1e12), Some(MAX_SETTLE));
        for hostile in [f64::INFINITY, f64::NEG_INFINITY, f64::NAN, -5.0] {
            assert_eq!(page_ms(hostile), None, "{hostile}");
        }
    }

    #[test]
    fn an_end_read_before_its_start_leaves_nothing_in_flight() {
        let mut net = Network::new(Instant::now());
        // Django's admin page: the end of one script was read from its stream
        // before its start was read from the other (3 s waited for nothing).
        net.ended(Some(&RequestId::new("1")));
        net.started(&start("1"));
        net.started(&start("2"));
        assert_eq!(net.started, 2);
        assert_eq!(
            net.in_flight.len(),
            1,
            "only the request that has not ended"
        );
        net.ended(Some(&RequestId::new("2")));
        assert!(net.in_flight.is_empty());
    }
}
