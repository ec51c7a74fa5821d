//! A session's filmstrip (issue 63): after each action a small image of the
//! page (from the tab's screencast, `screencast.rs`) with the action, the element it took (a box drawn over the frame, never
//! on the page), the URL, and the console errors and failed requests that
//! came with it — so that the builder of an agent whose run went wrong sees
//! what the page looked like at that step. `browser_recording` exports it as
//! one self-contained HTML file (`report.rs` beside this one).
//!
//! `[browser] record` (or `browser_session_new {record}`): `off` takes no
//! screenshot and costs nothing; `always` keeps a frame after every action
//! that is not read-only; `on_failure` keeps only a failed action's frame
//! and the frame before it. What is typed is masked as history masks it
//! (`ToolContext::masked`: a password field's text, secret-named fields, a
//! plan's `${secret.*}` values). A session keeps at most [`MAX_FRAMES`]
//! (the oldest go first); a frame's image is at most [`MAX_IMAGE`] bytes
//! (a bigger one is kept without its image). Frames are the session's:
//! they go when it closes, and only its owner reaches them. With a files
//! folder, each frame kept is also stored under its call's id
//! ([`axon_core::frames`]), where the dashboard finds it after the session
//! closed, until history's retention drops it. The image is taken beside
//! the action, which answers at once.

use std::collections::VecDeque;
use std::sync::{Arc, Mutex};
use std::time::{Instant, SystemTime};

use chromiumoxide::page::Page;
use serde::Serialize;
use serde_json::{Value, json};

use crate::config::Record;
use crate::screencast::{Cast, Shot};

/// Frames a session keeps.
pub(crate) const MAX_FRAMES: usize = 200;

/// The largest image a frame keeps (JPEG, half the viewport's size).
pub(crate) const MAX_IMAGE: usize = 256 * 1024;

/// Console errors and failed requests one frame lists.
const MAX_NOTES: usize = 10;

/// Where the action's element was, in CSS pixels of the viewport.
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize)]
pub(crate) struct Rect {
    pub(crate) x: f64,
    pub(crate) y: f64,
    pub(crate) width: f64,
    pub(crate) height: f64,
}

tokio::task_local! {
    /// The element the current action found, while a recording session's
    /// action runs (set by `locate::wait_for`).
    static TARGET: std::cell::Cell<Option<Rect>>;
}

/// Whether the running action is recorded (its element's box is wanted).
pub(crate) fn wants_target() -> bool {
    TARGET.try_with(|_| ()).is_ok()
}

/// Note the element the running action found.
pub(crate) fn note_target(rect: Rect) {
    let _ = TARGET.try_with(|t| t.set(Some(rect)));
}

/// Run `work` noting the element it finds: its result and the element.
pub(crate) async fn watching<T>(work: impl std::future::Future<Output = T>) -> (T, Option<Rect>) {
    TARGET
        .scope(std::cell::Cell::new(None), async {
            let out = work.await;
            (out, TARGET.with(std::cell::Cell::get))
        })
        .await
}

/// One frame.
#[derive(Clone, Debug, Serialize)]
pub(crate) struct Frame {
    /// 1, 2, … in the session's order.
    pub(crate) seq: u64,
    /// The action's call.
    pub(crate) call_id: String,
    /// The call of the frame before this one in the session, if any.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) previous: Option<String>,
    /// Milliseconds since the recording began.
    pub(crate) at_ms: u64,
    pub(crate) tool: String,
    /// The arguments, masked as history masks them.
    pub(crate) args: Value,
    pub(crate) ok: bool,
    /// `{code, message}` of a failed action.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) error: Option<Value>,
    pub(crate) url: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) target: Option<Rect>,
    /// The scale of the image against the viewport's CSS pixels.
    pub(crate) scale: f64,
    /// Milliseconds since the recording began when the page looked as the
    /// image shows (its paint; at or after the action answered).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) shot_at_ms: Option<u64>,
    /// Console errors new since the previous frame.
    pub(crate) console_errors: Vec<String>,
    /// Requests that failed (or answered 4xx/5xx) new since the previous
    /// frame.
    pub(crate) failed_requests: Vec<String>,
    /// The JPEG, when the screenshot was taken and not too big.
    #[serde(skip)]
    pub(crate) image: Option<Vec<u8>>,
    /// Whether the screenshot is over (taken or not).
    #[serde(skip)]
    pub(crate) shot: bool,
}

impl Frame {
    /// The frame as stored with history: its fields and its image in
    /// base64 (`image`, when it has one).
    fn stored(&self) -> Value {
        let mut value = serde_json::to_value(self).unwrap_or_default();
        if let (Some(image), Some(map)) = (&self.image, value.as_object_mut()) {
            use base64::Engine;
            let data = base64::engine::general_purpose::STANDARD.encode(image);
            map.insert("image".into(), Value::String(data));
        }
        value
    }
}

/// Where a kept frame is stored beside the session's memory.
#[derive(Clone)]
pub(crate) struct Keep {
    pub(crate) store: axon_core::frames::FrameStore,
    pub(crate) owner: axon_core::Owner,
}

impl Keep {
    /// Store `frame` (in the background: the caller goes on).
    fn store(&self, frame: &Frame) {
        let (keep, call_id, value) = (self.clone(), frame.call_id.clone(), frame.stored());
        tokio::spawn(async move {
            if let Err(e) = keep.store.write(&keep.owner, &call_id, &value).await {
                tracing::warn!(call_id, error = %e, "a browser frame was not stored");
            }
        });
    }
}

/// What one action was, for its frame.
pub(crate) struct Action<'a> {
    pub(crate) call_id: &'a str,
    pub(crate) tool: &'a str,
    pub(crate) args: Value,
    pub(crate) error: Option<&'a axon_core::ToolError>,
    pub(crate) target: Option<Rect>,
}

/// A session's frames.
pub(crate) struct Recording {
    mode: Record,
    began: Instant,
    /// `began` on the wall clock, which frames' paint times are on.
    began_at: SystemTime,
    state: Arc<Mutex<State>>,
}

#[derive(Default)]
struct State {
    seq: u64,
    frames: VecDeque<Frame>,
    /// Screenshots still being taken.
    pending: usize,
    /// `on_failure`: the last successful action's frame, kept until the
    /// next action shows whether it is needed.
    before: Option<Frame>,
    seen_console: Vec<String>,
    seen_requests: Vec<String>,
    /// The call of the last frame taken (kept or not yet).
    last_call: Option<String>,
}

impl Recording {
    /// A recording in `mode`; `None` for `off`.
    pub(crate) fn new(mode: Record) -> Option<Recording> {
        (mode != Record::Off).then(|| Recording {
            mode,
            began: Instant::now(),
            began_at: SystemTime::now(),
            state: Arc::default(),
        })
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, State> {
        lock(&self.state)
    }

    /// The frames kept, oldest first, once the screenshots under way are
    /// in (waiting at most [`SHOT_WAIT`]).
    pub(crate) async fn frames(&self) -> Vec<Frame> {
        let until = Instant::now() + SHOT_WAIT;
        while self.lock().pending > 0 && Instant::now() < until {
            tokio::time::sleep(std::time::Duration::from_millis(10)).await;
        }
        self.lock().frames.iter().cloned().collect()
    }

    /// Take the frame of `action` on `page` (with its tab's screencast),
    /// whose console errors and failed requests are `console` and
    /// `requests` (the tab's journal now). The image is taken beside the
    /// caller, which goes on at once (docs/benchmarks.md, "Recording").
    pub(crate) async fn capture(
        &self,
        page: (&Page, Option<Arc<Cast>>),
        action: Action<'_>,
        notes: (Vec<String>, Vec<String>),
        keep: Option<Keep>,
    ) {
        let ended = SystemTime::now();
        let ((page, cast), (console, requests)) = (page, notes);
        let url = page.url().await.ok().flatten().unwrap_or_default();
        let mut state = self.lock();
        state.seq += 1;
        let console_errors = new_since(&mut state.seen_console, console);
        let failed_requests = new_since(&mut state.seen_requests, requests);
        let previous = state.last_call.replace(action.call_id.to_string());
        let frame = Frame {
            seq: state.seq,
            call_id: action.call_id.to_string(),
            previous,
            at_ms: self.began.elapsed().as_millis() as u64,
            tool: action.tool.to_string(),
            args: action.args,
            ok: action.error.is_none(),
            error: action
                .error
                .map(|e| json!({"code": e.code, "message": e.message})),
            url: crate::journal::masked(&url),
            target: action.target,
            scale: SCALE,
            shot_at_ms: None,
            console_errors,
            failed_requests,
            image: None,
            shot: false,
        };
        let seq = frame.seq;
        match (self.mode, frame.ok) {
            (Record::OnFailure, true) => state.before = Some(frame),
            (Record::OnFailure, false) => {
                if let Some(before) = state.before.take() {
                    // Its screenshot over, it is stored now; else when it is.
                    if let (true, Some(keep)) = (before.shot, &keep) {
                        keep.store(&before);
                    }
                    keep_frame(&mut state.frames, before);
                }
                keep_frame(&mut state.frames, frame);
            }
            _ => keep_frame(&mut state.frames, frame),
        }
        state.pending += 1;
        drop(state);
        let (page, shared, began) = (page.clone(), self.state.clone(), self.began_at);
        tokio::spawn(async move {
            let shot = shoot(&page, cast.as_deref(), ended).await;
            let mut state = lock(&shared);
            state.pending -= 1;
            let State { frames, before, .. } = &mut *state;
            let taken = |frame: &mut Frame| {
                if let Some(shot) = shot {
                    let at = shot.swapped.duration_since(began).unwrap_or_default();
                    frame.shot_at_ms = Some(at.as_millis() as u64);
                    frame.scale = shot.scale;
                    frame.image = Some(shot.image.to_vec()).filter(|i| i.len() <= MAX_IMAGE);
                }
                frame.shot = true;
            };
            if let Some(frame) = frames.iter_mut().find(|f| f.seq == seq) {
                taken(frame);
                if let Some(keep) = &keep {
                    keep.store(frame);
                }
            } else if let Some(frame) = before.as_mut().filter(|f| f.seq == seq) {
                // Stored only if the next action fails.
                taken(frame);
            }
        });
    }
}

fn lock(state: &Mutex<State>) -> std::sync::MutexGuard<'_, State> {
    state.lock().unwrap_or_else(|e| e.into_inner())
}

/// The longest an export waits for the screenshots under way.
const SHOT_WAIT: std::time::Duration = std::time::Duration::from_secs(3);

/// The size of a frame's image against the viewport's CSS pixels.
const SCALE: f64 = 0.5;

/// Keep `frame`, the oldest going past [`MAX_FRAMES`].
fn keep_frame(frames: &mut VecDeque<Frame>, frame: Frame) {
    if frames.len() >= MAX_FRAMES {
        frames.pop_front();
    }
    frames.push_back(frame);
}

/// The entries of `now` not in `seen` (the journal's last look), at most
/// [`MAX_NOTES`]; `seen` becomes `now`. A page that navigated starts its
/// journal afresh, so its entries are all new.
fn new_since(seen: &mut Vec<String>, now: Vec<String>) -> Vec<String> {
    let fresh: Vec<String> = now
        .iter()
        .filter(|e| !seen.contains(e))
        .take(MAX_NOTES)
        .cloned()
        .collect();
    *seen = now;
    fresh
}

/// The page as the action left it: from the screencast when it can tell
/// (screencast.rs), else a screenshot.
async fn shoot(page: &Page, cast: Option<&Cast>, ended: SystemTime) -> Option<Shot> {
    if let Some(shot) = match cast {
        Some(cast) => cast.after(ended).await,
        None => None,
    } {
        return Some(shot);
    }
    let image = screenshot(page).await?;
    Some(Shot::screenshot(image, SCALE))
}

/// The viewport as a JPEG at half its size (quality 50), or none when the
/// page cannot be shot or the image is too big.
async fn screenshot(page: &Page) -> Option<Vec<u8>> {
    let size = crate::cdp::eval(page, "({w: innerWidth, h: innerHeight})").await;
    let (w, h) = match &size {
        Ok(v) => (
            v["w"].as_f64().unwrap_or(0.0),
            v["h"].as_f64().unwrap_or(0.0),
        ),
        Err(_) => (0.0, 0.0),
    };
    if w <= 0.0 || h <= 0.0 {
        return None;
    }
    let params = json!({
        "format": "jpeg", "quality": 50,
        "clip": {"x": 0, "y": 0, "width": w, "height": h, "scale": SCALE},
    });
    let shot = crate::cdp::send(page, "Page.captureScreenshot", params).await;
    let image = shot.ok().and_then(|v| {
        use base64::Engine;
        let data = v["data"].as_str()?;
        base64::engine::general_purpose::STANDARD.decode(data).ok()
    });
    image.filter(|i| i.len() <= MAX_IMAGE)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn frame(seq: u64, ok: bool) -> Frame {
        Frame {
            seq,
            call_id: format!("c{seq}"),
            previous: None,
            at_ms: 0,
            tool: "browser_click".into(),
            args: json!({}),
            ok,
            error: None,
            url: String::new(),
            target: None,
            scale: 0.5,
            shot_at_ms: None,
            console_errors: Vec::new(),
            failed_requests: Vec::new(),
            image: None,
            shot: false,
        }
    }

    #[test]
    fn off_records_nothing_and_frames_are_bounded() {
        assert!(Recording::new(Record::Off).is_none());
        let mut frames = VecDeque::new();
        for seq in 0..(MAX_FRAMES as u64 + 5) {
            keep_frame(&mut frames, frame(seq, true));
        }
        assert_eq!(frames.len(), MAX_FRAMES);
        assert_eq!(frames.front().map(|f| f.seq), Some(5), "the oldest went");
    }

    #[test]
    fn notes_are_the_new_ones_only() {
        let mut seen = vec!["a".to_string()];
        let fresh = new_since(&mut seen, vec!["a".into(), "b".into()]);
        assert_eq!(fresh, ["b"]);
        assert_eq!(seen, ["a", "b"]);
        assert!(new_since(&mut seen, vec!["a".into(), "b".into()]).is_empty());
    }

    #[tokio::test]
    async fn the_element_an_action_found_is_noted_only_while_watched() {
        assert!(!wants_target());
        note_target(Rect::default());
        let ((), target) = watching(async {
            assert!(wants_target());
            note_target(Rect {
                x: 1.0,
                y: 2.0,
                width: 3.0,
                height: 4.0,
            });
        })
        .await;
        assert_eq!(target.map(|r| r.width), Some(3.0));
    }
}
