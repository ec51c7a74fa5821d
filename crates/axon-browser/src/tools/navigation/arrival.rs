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

use std::collections::{HashMap, HashSet};

use axon_core::ToolError;
use chromiumoxide::cdp::browser_protocol::network::{
    EventLoadingFailed, EventRequestWillBeSent, LoaderId, ResourceType,
};
use chromiumoxide::cdp::browser_protocol::page::{EventLifecycleEvent, FrameId};
use chromiumoxide::listeners::EventStream;
use chromiumoxide::page::Page;
use futures::StreamExt;

use crate::session::cdp_error;

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
    /// earlier navigation left to overtake it.
    pub(super) async fn arrival(
        &mut self,
        frame: &FrameId,
        loader: &LoaderId,
        wanted: &str,
    ) -> Arrival {
        let mut track = Track::default();
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
            };
            if let Some(end) = end {
                return end;
            }
            if track.reached && !track.overtaking(loader) {
                return Arrival::Yes;
            }
        }
    }
}

/// What the events of one send have told so far.
#[derive(Default)]
struct Track {
    /// When our document committed (its `init`), on the browser's clock.
    committed_at: Option<f64>,
    /// Our document reached the event asked for.
    reached: bool,
    /// The frame's document requests: loader → (request id, when begun).
    begun: HashMap<String, (String, f64)>,
    /// Loaders whose navigation committed or failed.
    settled: HashSet<String>,
}

impl Track {
    fn request(&mut self, sent: &EventRequestWillBeSent, frame: &FrameId) {
        let document = sent.r#type == Some(ResourceType::Document);
        if document && sent.frame_id.as_ref() == Some(frame) {
            self.begun
                .entry(sent.loader_id.inner().clone())
                .or_insert((sent.request_id.inner().clone(), *sent.timestamp.inner()));
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
