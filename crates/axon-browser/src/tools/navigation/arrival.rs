//! When a navigation has arrived: its document reached the lifecycle event
//! asked for, and no navigation begun before it committed is still on its
//! way to replace it.
//!
//! A page can start a navigation of its own just before or while ours is in
//! flight — a form a click submitted a moment ago, whose request the
//! renderer sends after ours has begun — and Chromium does not always cancel
//! it when ours commits: it can commit after ours has loaded, and the page
//! changes under the agent after the call reported ours (a wrong answer
//! reported as success). A navigation begun *after* ours committed is the new
//! document's own (a script that moves on once loaded, a form that submits
//! itself): where the page goes then is where the agent is. So each document
//! request of the frame (`Network.requestWillBeSent`) is timed against our
//! document's commit (its `init` lifecycle event), on the browser's
//! monotonic clock that both carry.
//!
//! The clock is not the whole story. Under load the browser can begin the
//! form's request only after our document committed (the renderer asked for
//! it before, the browser got to it after), and the form's answer then
//! commits over ours, which was reported where the page "moved on" to (a
//! wrong answer reported as success, seen in CI). Such a request names the
//! page it came from in its `Referer` header: a document request whose
//! referrer is the page ours replaced ([`Left`]) is counted as begun before
//! ours, whenever the browser began it. A page that sends no referrer is
//! timed by the clock alone.
//!
//! An earlier navigation that neither commits nor fails is waited for
//! [`OVERTAKE_WAIT`] at most once ours has arrived.

use std::collections::{HashMap, HashSet};
use std::time::Duration;

use axon_core::ToolError;
use chromiumoxide::cdp::browser_protocol::network::{
    EventLoadingFailed, EventRequestWillBeSent, LoaderId, ResourceType,
};
use chromiumoxide::cdp::browser_protocol::page::{EventLifecycleEvent, FrameId};
use chromiumoxide::listeners::EventStream;
use chromiumoxide::page::Page;
use futures::StreamExt;

use crate::cdp::cdp_error;

/// The document a navigation replaces, as the requests it starts name it in
/// their `Referer`: its URL without the fragment, or only its origin (`/`
/// after it) when the request goes to another origin under the default
/// referrer policy.
pub(super) struct Left {
    url: String,
    /// Set only when it differs from our document's origin: our own
    /// document's requests then never name it.
    origin: Option<String>,
}

impl Left {
    /// The document at `current` that a navigation to `ours` replaces; `None`
    /// when a referrer could not tell them apart (the same URL, or not a
    /// web page).
    pub(super) fn of(current: Option<&str>, ours: &str) -> Option<Left> {
        let without_fragment = |u: &str| {
            let mut u = url::Url::parse(u).ok()?;
            u.set_fragment(None);
            Some(u)
        };
        let (current, ours) = (without_fragment(current?)?, without_fragment(ours)?);
        if current == ours || !matches!(current.scheme(), "http" | "https") {
            return None;
        }
        let origin = current.origin().ascii_serialization();
        Some(Left {
            url: current.to_string(),
            origin: (origin != ours.origin().ascii_serialization()).then(|| format!("{origin}/")),
        })
    }

    /// Whether `sent` names this document as where it came from.
    fn sent(&self, sent: &EventRequestWillBeSent) -> bool {
        let Some(headers) = sent.request.headers.inner().as_object() else {
            return false;
        };
        let referrer = headers
            .iter()
            .find(|(name, _)| name.eq_ignore_ascii_case("referer"))
            .and_then(|(_, value)| value.as_str());
        referrer.is_some_and(|r| r == self.url || self.origin.as_deref() == Some(r))
    }
}

/// How long a navigation that has arrived waits for an earlier one still on
/// its way to commit or fail.
const OVERTAKE_WAIT: Duration = Duration::from_secs(2);

/// How waiting for a navigation ended.
pub(super) enum Arrival {
    /// Ours reached the event asked for (or its document moved on by itself),
    /// and nothing begun before it is left to replace it.
    Yes,
    /// A navigation begun before ours committed replaced it: send ours again.
    Replaced,
    /// The page went away.
    Closed,
}

/// The events of one page that tell a navigation's arrival, heard from
/// before the navigation is sent so that none is missed.
pub(super) struct Watch {
    lifecycle: EventStream<EventLifecycleEvent>,
    requests: EventStream<EventRequestWillBeSent>,
    failures: EventStream<EventLoadingFailed>,
}

impl Watch {
    pub(super) async fn new(page: &Page) -> Result<Watch, ToolError> {
        let listening = |e| cdp_error("listening for page events", &e);
        Ok(Watch {
            lifecycle: page.event_listener().await.map_err(listening)?,
            requests: page.event_listener().await.map_err(listening)?,
            failures: page.event_listener().await.map_err(listening)?,
        })
    }

    /// Wait for `loader`'s document of `frame` to reach `wanted` with no
    /// earlier navigation left to overtake it; `left` is the document ours
    /// replaces.
    pub(super) async fn arrival(
        &mut self,
        frame: &FrameId,
        loader: &LoaderId,
        wanted: &str,
        left: Option<&Left>,
    ) -> Arrival {
        let mut track = Track {
            left,
            ..Track::default()
        };
        // Set once ours has arrived with an earlier one still on its way.
        let mut give_up = None;
        loop {
            // Requests and failures first: the browser sends events in order,
            // so those sent before a lifecycle event are read before it.
            let end = tokio::select! {
                biased;
                Some(sent) = self.requests.next() => {
                    track.request(&sent, frame);
                    None
                }
                Some(failed) = self.failures.next() => track.failed(&failed, loader),
                event = self.lifecycle.next() => match event {
                    None => Some(Arrival::Closed),
                    Some(event) if event.frame_id != *frame => None,
                    Some(event) => track.lifecycle(&event, loader, wanted),
                },
                () = sleep_until(give_up) => {
                    tracing::debug!("an earlier navigation neither committed nor failed; ours stands");
                    Some(Arrival::Yes)
                }
            };
            if let Some(end) = end {
                return end;
            }
            if track.reached {
                if !track.overtaking(loader) {
                    return Arrival::Yes;
                }
                give_up.get_or_insert_with(|| tokio::time::Instant::now() + OVERTAKE_WAIT);
            }
        }
    }
}

/// Sleep until `at`; forever when there is none.
async fn sleep_until(at: Option<tokio::time::Instant>) {
    match at {
        Some(at) => tokio::time::sleep_until(at).await,
        None => std::future::pending().await,
    }
}

/// What the events of one send have told so far.
#[derive(Default)]
struct Track<'a> {
    /// The document ours replaces, when a referrer can name it.
    left: Option<&'a Left>,
    /// When our document committed (its `init`), on the browser's clock.
    committed_at: Option<f64>,
    /// Our document reached the event asked for.
    reached: bool,
    /// The frame's document requests: loader → (request id, when begun).
    begun: HashMap<String, (String, f64)>,
    /// Loaders whose navigation committed or failed.
    settled: HashSet<String>,
}

impl Track<'_> {
    fn request(&mut self, sent: &EventRequestWillBeSent, frame: &FrameId) {
        let document = sent.r#type == Some(ResourceType::Document);
        if document && sent.frame_id.as_ref() == Some(frame) {
            // One the page ours replaces asked for is earlier than ours,
            // whenever the browser got to it.
            let at = match self.left {
                Some(left) if left.sent(sent) => f64::NEG_INFINITY,
                _ => *sent.timestamp.inner(),
            };
            self.begun
                .entry(sent.loader_id.inner().clone())
                .or_insert((sent.request_id.inner().clone(), at));
        }
    }

    /// A request failed: if it was a document's, that navigation is over
    /// (ours, cancelled before it committed: send it again).
    fn failed(&mut self, failed: &EventLoadingFailed, ours: &LoaderId) -> Option<Arrival> {
        let id = failed.request_id.inner();
        let (loader, _) = self.begun.iter().find(|(_, (request, _))| request == id)?;
        if loader == ours.inner() && self.committed_at.is_none() {
            return Some(Arrival::Replaced);
        }
        self.settled.insert(loader.clone());
        None
    }

    fn lifecycle(
        &mut self,
        event: &EventLifecycleEvent,
        ours: &LoaderId,
        wanted: &str,
    ) -> Option<Arrival> {
        let at = *event.timestamp.inner();
        if event.loader_id == *ours {
            if event.name == "init" {
                self.committed_at = Some(at);
            }
            self.reached |= event.name == wanted;
            return None;
        }
        if event.name != "init" {
            return None;
        }
        let loader = event.loader_id.inner();
        self.settled.insert(loader.clone());
        // A document that committed before ours is one ours replaced.
        let committed = self.committed_at?;
        // One begun before ours committed (or before we listened) came from
        // the page ours replaced; one begun after is our document's own.
        let begun = self.begun.get(loader).map(|(_, t)| *t);
        if begun.is_none_or(|t| t < committed) {
            Some(Arrival::Replaced)
        } else {
            Some(Arrival::Yes)
        }
    }

    /// Whether a navigation begun before ours committed is still on its way.
    fn overtaking(&self, ours: &LoaderId) -> bool {
        let Some(committed) = self.committed_at else {
            return false;
        };
        self.begun.iter().any(|(loader, (_, begun))| {
            loader != ours.inner() && *begun < committed && !self.settled.contains(loader)
        })
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    const OURS: &str = "http://shop.test/roles.html";

    fn lifecycle(loader: &str, name: &str, at: f64) -> EventLifecycleEvent {
        serde_json::from_value(
            json!({"frameId": "F", "loaderId": loader, "name": name, "timestamp": at}),
        )
        .unwrap()
    }

    /// A document request of frame `F`, begun at `at`, naming `referrer`.
    fn sent(loader: &str, referrer: Option<&str>, at: f64) -> EventRequestWillBeSent {
        let headers = match referrer {
            Some(r) => json!({"Referer": r}),
            None => json!({}),
        };
        serde_json::from_value(json!({
            "requestId": format!("R-{loader}"), "loaderId": loader,
            "documentURL": "http://shop.test/welcome.html",
            "request": {"url": "http://shop.test/welcome.html", "method": "GET",
                        "headers": headers, "initialPriority": "VeryHigh",
                        "referrerPolicy": "strict-origin-when-cross-origin"},
            "timestamp": at, "wallTime": 0.0, "initiator": {"type": "other"},
            "redirectHasExtraInfo": false, "type": "Document", "frameId": "F"
        }))
        .unwrap()
    }

    /// Ours committed at 2; the form's request, begun by the browser at 3
    /// (after ours committed), commits at 4.
    fn form_commits_after_ours(referrer: Option<&str>, left: Option<&Left>) -> Option<Arrival> {
        let (frame, ours) = (FrameId::new("F"), LoaderId::new("OURS"));
        let mut track = Track {
            left,
            ..Track::default()
        };
        assert!(
            track
                .lifecycle(&lifecycle("OURS", "init", 2.0), &ours, "load")
                .is_none()
        );
        track.request(&sent("FORM", referrer, 3.0), &frame);
        let waits = track.overtaking(&ours);
        let end = track.lifecycle(&lifecycle("FORM", "init", 4.0), &ours, "load");
        assert_eq!(waits, matches!(end, Some(Arrival::Replaced)));
        end
    }

    /// The race CI found under load: the form the page ours replaced
    /// submitted is begun by the browser only after ours committed. Named by
    /// its referrer, it is waited for, and ours is sent again.
    #[test]
    fn a_request_of_the_page_ours_replaced_is_earlier_whenever_it_began() {
        let left = Left::of(Some("http://shop.test/login.html#top"), OURS).unwrap();
        let from_left = form_commits_after_ours(Some("http://shop.test/login.html"), Some(&left));
        assert!(matches!(from_left, Some(Arrival::Replaced)));
        // Our own document's next page (a redirect script) stands.
        let own = form_commits_after_ours(Some(OURS), Some(&left));
        assert!(matches!(own, Some(Arrival::Yes)));
        // No referrer: the clock alone, as before.
        assert!(matches!(
            form_commits_after_ours(None, Some(&left)),
            Some(Arrival::Yes)
        ));
    }

    /// To another origin the default policy sends only the origin: that
    /// names the page ours replaced when ours is elsewhere, and nothing when
    /// ours is on the same origin (our own page's requests would say so too).
    #[test]
    fn an_origin_alone_names_the_page_left_only_across_origins() {
        let across = Left::of(Some("https://login.test/form"), OURS).unwrap();
        let end = form_commits_after_ours(Some("https://login.test/"), Some(&across));
        assert!(matches!(end, Some(Arrival::Replaced)));
        let same = Left::of(Some("http://shop.test/login.html"), OURS).unwrap();
        let end = form_commits_after_ours(Some("http://shop.test/"), Some(&same));
        assert!(matches!(end, Some(Arrival::Yes)));
    }

    #[test]
    fn a_referrer_cannot_name_the_same_page_or_one_that_is_not_on_the_web() {
        assert!(Left::of(Some(OURS), &format!("{OURS}#part")).is_none());
        assert!(Left::of(Some("about:blank"), OURS).is_none());
        assert!(Left::of(None, OURS).is_none());
    }
}
