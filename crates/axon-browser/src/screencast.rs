//! A recording tab's screencast: the frames Chromium pushes as it paints,
//! from which a recorded action's frame is taken (recording.rs).
//!
//! Why not a screenshot after each action: `Page.captureScreenshot` forces
//! a redraw and holds the page ~34 ms, and the *next* action waits for it —
//! an action fired right after a recorded one took 1.73× as long. The
//! screencast (`Page.startScreencast`) costs nothing the page waits for: it
//! hands over the frames the compositor draws anyway, encoded off the main
//! thread. An action's frame is the first one *swapped* (Chromium's own
//! timestamp of the paint) after the action answered, so a paint from before
//! the action is never shown as its result; when none comes within
//! [`FRESH_WAIT`] (the action's paint came before it answered, or it
//! changed nothing on screen) the last frame is the page as it left it —
//! unless a paint may have gone unsent (the cast was resting), when the
//! caller takes a screenshot instead.
//!
//! Bounded: frames are at most [`MAX_WIDTH`]×[`MAX_HEIGHT`] JPEGs; a frame is
//! acknowledged (which lets Chromium send the next) only while actions come
//! — within [`ACTIVE`] of the last one — so an animated page left alone is
//! not encoded 60 times a second: Chromium stops after the frame it holds.

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant, SystemTime};

use axon_core::ToolError;
use chromiumoxide::cdp::browser_protocol::page::EventScreencastFrame;
use chromiumoxide::page::Page;
use futures::StreamExt;
use serde_json::json;

/// The largest frame Chromium sends, in image pixels (half a 1280×800
/// viewport).
const MAX_WIDTH: u32 = 640;
const MAX_HEIGHT: u32 = 400;

/// How long an action's frame is waited for.
const FRESH_WAIT: Duration = Duration::from_millis(150);

/// How long after an action frames keep coming.
const ACTIVE: Duration = Duration::from_secs(3);

/// One frame as Chromium painted it.
#[derive(Clone, Debug)]
pub(crate) struct Shot {
    /// The JPEG.
    pub(crate) image: Arc<Vec<u8>>,
    /// Image pixels per CSS pixel of the viewport.
    pub(crate) scale: f64,
    /// When the page looked like this (Chromium's swap time).
    pub(crate) swapped: SystemTime,
    /// Whether it was acknowledged at once, so that a later paint would
    /// have come after it (not so for a frame held while no action came:
    /// Chromium paints on without sending).
    current: bool,
}

impl Shot {
    /// A screenshot's image at `scale`, taken now.
    pub(crate) fn screenshot(image: Vec<u8>, scale: f64) -> Shot {
        Shot {
            image: Arc::new(image),
            scale,
            swapped: SystemTime::now(),
            current: true,
        }
    }
}

/// A tab's screencast, running until dropped (its tab closed).
pub(crate) struct Cast {
    latest: tokio::sync::watch::Sender<Option<Shot>>,
    /// Milliseconds since `began` until which frames are acknowledged.
    active_until: Arc<AtomicU64>,
    began: Instant,
    /// Wakes the listener to acknowledge a frame it held.
    wake: Arc<tokio::sync::Notify>,
    task: tokio::task::AbortHandle,
}

impl Drop for Cast {
    fn drop(&mut self) {
        self.task.abort();
    }
}

/// Start the screencast of `page`.
pub(crate) async fn start(page: &Page) -> Result<Cast, ToolError> {
    let mut frames = page
        .event_listener::<EventScreencastFrame>()
        .await
        .map_err(|e| ToolError::transient(format!("listening for screencast frames: {e}")))?;
    let (latest, _) = tokio::sync::watch::channel(None);
    let began = Instant::now();
    let active_until = Arc::new(AtomicU64::new(ACTIVE.as_millis() as u64));
    let wake = Arc::new(tokio::sync::Notify::new());
    let (sender, until, woken, tab) = (
        latest.clone(),
        active_until.clone(),
        wake.clone(),
        page.clone(),
    );
    let task = tokio::spawn(async move {
        // The frames not yet acknowledged, while no action comes (as many
        // as Chromium sends unacknowledged: two).
        let mut held = Vec::<i64>::new();
        loop {
            tokio::select! {
                frame = frames.next() => {
                    let Some(frame) = frame else { break };
                    let active = (began.elapsed().as_millis() as u64) < until.load(Ordering::Relaxed);
                    if let Some(shot) = shot_of(&frame, active) {
                        sender.send_replace(Some(shot));
                    }
                    match active {
                        true => ack(&tab, frame.session_id).await,
                        false => held.push(frame.session_id),
                    }
                }
                () = woken.notified() => {
                    for id in std::mem::take(&mut held) {
                        ack(&tab, id).await;
                    }
                }
            }
        }
    });
    let params = json!({
        "format": "jpeg", "quality": 50,
        "maxWidth": MAX_WIDTH, "maxHeight": MAX_HEIGHT,
    });
    crate::cdp::send(page, "Page.startScreencast", params).await?;
    Ok(Cast {
        latest,
        active_until,
        began,
        wake,
        task: task.abort_handle(),
    })
}

impl Cast {
    /// An action is under way: frames keep coming until [`ACTIVE`] after it.
    pub(crate) fn wake(&self) {
        let until = (self.began.elapsed() + ACTIVE).as_millis() as u64;
        self.active_until.fetch_max(until, Ordering::Relaxed);
        self.wake.notify_one();
    }

    /// The page as an action that answered at `at` left it: the first frame
    /// painted at or after `at`, waiting at most [`FRESH_WAIT`]; when none
    /// comes, the last frame painted before, if every paint since reached
    /// here (it was acknowledged at once, and the wait let any frame under
    /// way arrive); else none.
    pub(crate) async fn after(&self, at: SystemTime) -> Option<Shot> {
        self.wake();
        let mut frames = self.latest.subscribe();
        let fresh = |s: &Option<Shot>| s.as_ref().is_some_and(|s| s.swapped >= at);
        let found = tokio::time::timeout(FRESH_WAIT, frames.wait_for(fresh)).await;
        if let Ok(Ok(shot)) = found {
            return shot.clone();
        }
        let latest = self.latest.borrow().clone();
        latest.filter(|s| s.current)
    }
}

/// Let Chromium send the next frame.
async fn ack(page: &Page, session_id: i64) {
    let params = json!({"sessionId": session_id});
    let _ = crate::cdp::send(page, "Page.screencastFrameAck", params).await;
}

/// The frame as a [`Shot`]: none without a swap time or a readable image.
fn shot_of(frame: &EventScreencastFrame, current: bool) -> Option<Shot> {
    use base64::Engine;
    let swapped = *frame.metadata.timestamp.as_ref()?.inner();
    let swapped = SystemTime::UNIX_EPOCH + Duration::try_from_secs_f64(swapped).ok()?;
    let data: &str = frame.data.as_ref();
    let image = base64::engine::general_purpose::STANDARD
        .decode(data)
        .ok()?;
    let width = jpeg_width(&image)?;
    let css_width = frame.metadata.device_width;
    (css_width > 0.0).then(|| Shot {
        scale: f64::from(width) / css_width,
        image: Arc::new(image),
        swapped,
        current,
    })
}

/// The width of a baseline or progressive JPEG, from its frame header.
fn jpeg_width(jpeg: &[u8]) -> Option<u32> {
    let mut at = 2; // past the start-of-image marker
    (jpeg.get(..2)? == [0xFF, 0xD8]).then_some(())?;
    loop {
        let (marker, kind) = (*jpeg.get(at)?, *jpeg.get(at + 1)?);
        if marker != 0xFF {
            return None;
        }
        let length = usize::from(u16::from_be_bytes([*jpeg.get(at + 2)?, *jpeg.get(at + 3)?]));
        // SOF0–SOF15, less DHT (C4), JPG (C8) and DAC (CC).
        if (0xC0..=0xCF).contains(&kind) && ![0xC4, 0xC8, 0xCC].contains(&kind) {
            let width = u16::from_be_bytes([*jpeg.get(at + 7)?, *jpeg.get(at + 8)?]);
            return Some(u32::from(width));
        }
        at += 2 + length;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_jpegs_width_is_read_from_its_frame_header() {
        // SOI, an APP0 of 4 bytes, SOF0 of a 3×640 image.
        let jpeg = [
            0xFF, 0xD8, 0xFF, 0xE0, 0x00, 0x04, 0x00, 0x00, 0xFF, 0xC0, 0x00, 0x0B, 0x08, 0x00,
            0x03, 0x02, 0x80, 0x01, 0x01, 0x11, 0x00,
        ];
        assert_eq!(jpeg_width(&jpeg), Some(640));
        assert_eq!(jpeg_width(&jpeg[..12]), None, "cut short");
        assert_eq!(jpeg_width(b"GIF89a"), None);
        assert_eq!(jpeg_width(&[0xFF, 0xD8, 0x00]), None, "no marker");
    }
}
