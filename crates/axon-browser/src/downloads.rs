//! Downloads land in the files folder, under a name of ours, and are
//! reported.
//!
//! A page decides what it downloads and what the file is called: a link's
//! `download="../../.bashrc"`, a `Content-Disposition` header, forty blobs
//! from one click. Chromium, left to itself, cancels every download in a
//! session's browser context, so the click that asked for a file succeeded
//! and the agent never learnt that nothing came. Now each session's context
//! saves its downloads as Chromium names them internally (`allowAndName`: a
//! GUID, never the page's name) into a hidden staging folder inside the files
//! folder (`[files] dir`, `.downloads/`, which no tool argument can name);
//! a finished one is moved into the files folder under the page's name made
//! safe (letters, digits, `.`, `_`, `-`; no leading dot; never replacing a
//! file: `report-1.pdf` when `report.pdf` exists), where `browser_upload_file`
//! and the operator find it.
//!
//! Bounded: a download larger than `[browser] max_download_bytes` is cancelled
//! as soon as its size is known (or it grows past it), and a session keeps at
//! most [`MAX_PER_SESSION`] downloads; the rest are cancelled as they begin.
//! Without a files folder (or with `max_download_bytes = 0`) downloads are
//! refused, and reported so.
//!
//! Reported: the call during which a download began or ended lists it in its
//! data (`downloads: [{file, url, bytes, state, reason}]`), waiting up to
//! [`FINISH_WAIT`] for one still in progress; one that takes longer is
//! reported `in_progress` and again by the call during which it ends.
//!
//! How: `Browser.setDownloadBehavior` sent on each tab's own CDP session with
//! events on delivers that context's `Browser.downloadWillBegin` and
//! `Browser.downloadProgress` to the tab (checked with Chromium 156: the
//! deprecated `Page.download*` events are not in chromiumoxide's protocol),
//! and `Browser.cancelDownload` works from it too. Every tab of a session
//! feeds one [`Downloads`], which knows each download by its GUID, so a
//! download is saved and reported once however many tabs hear of it.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use axon_core::ToolError;
use axon_core::files::FileDir;
use chromiumoxide::cdp::browser_protocol::browser::{
    BrowserContextId, CancelDownloadParams, DownloadProgressState, EventDownloadProgress,
    EventDownloadWillBegin, SetDownloadBehaviorBehavior, SetDownloadBehaviorParams,
};
use chromiumoxide::page::Page;
use futures::StreamExt;
use serde::Serialize;
use tokio::sync::Notify;

/// A session keeps (saves or is saving) at most this many downloads.
pub(crate) const MAX_PER_SESSION: usize = 20;

/// How long a call's report waits for a download still in progress.
pub(crate) const FINISH_WAIT: Duration = Duration::from_secs(2);

/// Read and reset how many downloads the page asked for since it was last
/// read (the count `axon.js` keeps: links with `download` that were
/// clicked); `0` where the helpers are not installed yet.
const ASKED: &str = "(() => { const a = window.__axon_downloads; if (!a) return 0; const n = a.count; a.count = 0; return n; })()";

/// How long reading that count may take: a page that does not answer (a
/// dialog open) has asked for nothing the call can wait for.
const ASKED_WAIT: Duration = Duration::from_millis(250);

/// How many downloads `page` asked for since the last look.
pub(crate) async fn asked(page: &Page) -> usize {
    let read = tokio::time::timeout(ASKED_WAIT, crate::cdp::evaluate(page, ASKED, true)).await;
    match read {
        Ok(Ok(crate::cdp::Evaluated::Value(n))) => n.as_u64().unwrap_or(0).min(100) as usize,
        _ => 0,
    }
}

/// The staging folder's name inside the files folder (hidden: a tool
/// argument cannot name it).
const STAGING: &str = ".downloads";

/// The longest name a saved download gets (the files folder takes 128).
const MAX_NAME: usize = 100;

/// A download, as a call's data reports it.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub(crate) struct Download {
    /// Its name in the files folder (once saved).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) file: Option<String>,
    /// Where it came from (secrets masked, cut).
    pub(crate) url: String,
    /// Bytes received.
    pub(crate) bytes: u64,
    /// `in_progress`, `completed` or `canceled`.
    pub(crate) state: &'static str,
    /// Why it was cancelled, when Axon cancelled it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) reason: Option<String>,
}

/// Where a session's downloads go, when it may download at all.
#[derive(Clone, Debug)]
pub(crate) struct Place {
    pub(crate) files: FileDir,
    pub(crate) max_bytes: u64,
}

impl Place {
    fn staging(&self) -> PathBuf {
        self.files.root().join(STAGING)
    }
}

#[derive(Default)]
struct State {
    /// Every download of the session, by GUID.
    known: HashMap<String, Download>,
    /// The name each one's page suggested, by GUID; taken by the one tab
    /// that saves it (every tab of the session hears of every download).
    names: HashMap<String, String>,
    /// GUIDs whose news the next report carries, oldest first.
    unreported: Vec<String>,
}

/// The downloads of one session (every tab's).
pub(crate) struct Downloads {
    place: Option<Place>,
    context: BrowserContextId,
    state: Mutex<State>,
    /// Woken when a download ends.
    ended: Notify,
}

/// Listens to one tab's downloads until dropped (with its tab).
pub(crate) struct Listener {
    task: tokio::task::AbortHandle,
}

impl Drop for Listener {
    fn drop(&mut self) {
        self.task.abort();
    }
}

impl Downloads {
    /// The downloads of a session in `context`, saved to `place` (refused
    /// without one).
    pub(crate) fn new(place: Option<Place>, context: BrowserContextId) -> Arc<Downloads> {
        let place = place.filter(|p| p.max_bytes > 0);
        Arc::new(Downloads {
            place,
            context,
            state: Mutex::new(State::default()),
            ended: Notify::new(),
        })
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Save (or refuse) `page`'s downloads from now on.
    pub(crate) async fn listen(self: &Arc<Self>, page: &Page) -> Result<Listener, ToolError> {
        let failed = |e: chromiumoxide::error::CdpError| {
            ToolError::transient(format!("listening for downloads: {e}"))
        };
        let mut begins = page
            .event_listener::<EventDownloadWillBegin>()
            .await
            .map_err(failed)?;
        let mut progress = page
            .event_listener::<EventDownloadProgress>()
            .await
            .map_err(failed)?;
        let behavior = match &self.place {
            Some(place) => {
                let staging = place.staging();
                create_private(&staging).await?;
                SetDownloadBehaviorParams::builder()
                    .behavior(SetDownloadBehaviorBehavior::AllowAndName)
                    .download_path(staging.to_string_lossy().into_owned())
            }
            None => {
                SetDownloadBehaviorParams::builder().behavior(SetDownloadBehaviorBehavior::Deny)
            }
        };
        let behavior = behavior
            .browser_context_id(self.context.clone())
            .events_enabled(true)
            .build()
            .map_err(|e| ToolError::internal(format!("download behaviour: {e}")))?;
        page.execute(behavior).await.map_err(failed)?;
        let this = self.clone();
        let page = page.clone();
        let task = tokio::spawn(async move {
            loop {
                tokio::select! {
                    Some(begin) = begins.next() => this.began(&page, &begin).await,
                    Some(step) = progress.next() => this.progressed(&page, &step).await,
                    else => break,
                }
            }
        });
        Ok(Listener {
            task: task.abort_handle(),
        })
    }

    async fn began(&self, page: &Page, begin: &EventDownloadWillBegin) {
        let refused = {
            let mut state = self.lock();
            if state.known.contains_key(&begin.guid) {
                return;
            }
            let over = state.known.len() >= MAX_PER_SESSION;
            let reason = match (&self.place, over) {
                (None, _) => Some(
                    "downloads are off: this server keeps no files ([files] dir, [browser] max_download_bytes)"
                        .to_string(),
                ),
                (Some(_), true) => Some(format!(
                    "this session has had {MAX_PER_SESSION} downloads already"
                )),
                (Some(_), false) => None,
            };
            let download = Download {
                file: None,
                url: crate::journal::masked(&begin.url),
                bytes: 0,
                state: if reason.is_some() {
                    "canceled"
                } else {
                    "in_progress"
                },
                reason,
            };
            let refused = download.reason.is_some();
            // Past the cap the report is not grown: the refusals are not news
            // an agent can act on one by one.
            if !over {
                state.unreported.push(begin.guid.clone());
                state.known.insert(begin.guid.clone(), download);
                state
                    .names
                    .insert(begin.guid.clone(), begin.suggested_filename.clone());
            }
            refused
        };
        if refused {
            self.cancel(page, &begin.guid).await;
        }
        // A report may be waiting for it to begin.
        self.ended.notify_waiters();
    }

    async fn progressed(&self, page: &Page, step: &EventDownloadProgress) {
        let Some(place) = self.place.clone() else {
            return;
        };
        if self.finished_too_late(step) {
            // Our cancel came after Chromium had finished it: the file is
            // whole and Chromium will not delete it; we do.
            let _ = tokio::fs::remove_file(place.staging().join(&step.guid)).await;
            return;
        }
        let size = step.total_bytes.max(step.received_bytes) as u64;
        // What this tab does about it, decided under the lock: every tab of
        // the session hears of every download, and only the first to hear it
        // ended saves (or drops) it.
        let todo = {
            let mut state = self.lock();
            let Some(d) = state.known.get_mut(&step.guid) else {
                return;
            };
            if d.state != "in_progress" {
                return;
            }
            d.bytes = step.received_bytes as u64;
            if size > place.max_bytes {
                d.state = "canceled";
                d.reason = Some(format!(
                    "{size} bytes is more than [browser] max_download_bytes ({})",
                    place.max_bytes
                ));
            } else if step.state == DownloadProgressState::Canceled {
                d.state = "canceled";
                d.reason = Some("the page or the browser cancelled it".into());
            } else if step.state == DownloadProgressState::Completed {
                // Still `in_progress` to readers until it is saved.
                d.state = "saving";
            } else {
                return;
            }
            let saving = d.state == "saving";
            let guid = step.guid.clone();
            if !state.unreported.contains(&guid) {
                state.unreported.push(guid);
            }
            let name = state.names.remove(&step.guid).unwrap_or_default();
            saving.then_some(name)
        };
        let staged = place.staging().join(&step.guid);
        match todo {
            Some(suggested) => {
                let saved = save(&place, &staged, &suggested).await;
                let mut state = self.lock();
                if let Some(d) = state.known.get_mut(&step.guid) {
                    match saved {
                        Ok(name) => {
                            d.state = "completed";
                            d.file = Some(name);
                        }
                        Err(e) => {
                            d.state = "canceled";
                            d.reason = Some(format!("saving it failed: {e}"));
                        }
                    }
                }
                // A report taken while it was being saved said in_progress.
                if !state.unreported.contains(&step.guid) {
                    state.unreported.push(step.guid.clone());
                }
            }
            // Finished already, over the cap (sent without a length, it grew
            // past it between two progress events): the file is whole and
            // Chromium will not delete it; we do.
            None if step.state == DownloadProgressState::Completed => {
                let _ = tokio::fs::remove_file(&staged).await;
            }
            // The partial file (`<guid>`, then `<guid>.crdownload`) is
            // Chromium's: its download thread may not have created it yet,
            // and deletes it once it has handled the cancel (docs/design.md,
            // "Downloads"). Deleting it from here raced with that thread.
            None => self.cancel(page, &step.guid).await,
        }
        self.ended.notify_waiters();
    }

    /// Whether `step` says Chromium finished a download we had cancelled.
    fn finished_too_late(&self, step: &EventDownloadProgress) -> bool {
        step.state == DownloadProgressState::Completed
            && self
                .lock()
                .known
                .get(&step.guid)
                .is_some_and(|d| d.state == "canceled")
    }

    async fn cancel(&self, page: &Page, guid: &str) {
        let mut params = CancelDownloadParams::new(guid.to_string());
        params.browser_context_id = Some(self.context.clone());
        // Already finished or gone: nothing to cancel.
        let _ = page.execute(params).await;
    }

    /// The downloads whose news no report carried yet, after waiting up to
    /// `wait` for those in progress, and for `asked` of them to have begun
    /// (the page asked for them during the call: Chromium tells of a
    /// download some milliseconds after the click that asked for it).
    pub(crate) async fn take(&self, wait: Duration, asked: usize) -> Vec<Download> {
        let deadline = tokio::time::Instant::now() + wait;
        loop {
            let ended = self.ended.notified();
            let pending = {
                let state = self.lock();
                // Past the session's cap a download is refused unreported.
                (state.unreported.len() < asked && state.known.len() < MAX_PER_SESSION)
                    || state.unreported.iter().any(|g| {
                        state
                            .known
                            .get(g)
                            .is_some_and(|d| matches!(d.state, "in_progress" | "saving"))
                    })
            };
            if !pending || tokio::time::timeout_at(deadline, ended).await.is_err() {
                break;
            }
        }
        let mut state = self.lock();
        let guids = std::mem::take(&mut state.unreported);
        guids
            .iter()
            .filter_map(|g| state.known.get(g).cloned())
            .map(|mut d| {
                // Being moved into the files folder: not there yet.
                if d.state == "saving" {
                    d.state = "in_progress";
                }
                d
            })
            .collect()
    }
}

/// A folder only its owner reads, created if missing.
async fn create_private(dir: &Path) -> Result<(), ToolError> {
    let dir = dir.to_path_buf();
    tokio::task::spawn_blocking(move || {
        let mut builder = std::fs::DirBuilder::new();
        builder.recursive(true);
        #[cfg(unix)]
        std::os::unix::fs::DirBuilderExt::mode(&mut builder, 0o700);
        builder.create(&dir)
    })
    .await
    .map_err(|e| ToolError::internal(format!("creating the downloads folder: {e}")))?
    .map_err(|e| ToolError::internal(format!("creating the downloads folder: {e}")))
}

/// The page's name for a file made safe for the files folder: letters,
/// digits, `.`, `_` and `-` (anything else `_`), no leading dot, at most
/// [`MAX_NAME`] bytes with its extension kept; `download` when nothing is
/// left.
pub(crate) fn safe_name(suggested: &str) -> String {
    let plain: String = suggested
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '-') {
                c
            } else {
                '_'
            }
        })
        .collect();
    let plain = plain.trim_start_matches(['.', '_']);
    if plain.trim_matches(['.', '_', '-']).is_empty() {
        return "download".into();
    }
    if plain.len() <= MAX_NAME {
        return plain.to_string();
    }
    let (stem, ext) = split_ext(plain);
    format!("{}{ext}", &stem[..MAX_NAME.saturating_sub(ext.len())])
}

/// `report.pdf` → (`report`, `.pdf`); an extension longer than 10 bytes, or
/// none, is no extension.
fn split_ext(name: &str) -> (&str, &str) {
    match name.rfind('.') {
        Some(at) if at > 0 && name.len() - at <= 10 => name.split_at(at),
        _ => (name, ""),
    }
}

/// Move the finished download `staged` into the files folder under the page's
/// name made safe, never replacing a file (nor following a link there): the
/// name is linked in exclusively, `-1`, `-2`, … added until one is free.
async fn save(place: &Place, staged: &Path, suggested: &str) -> std::io::Result<String> {
    let root = place.files.root().to_path_buf();
    let staged = staged.to_path_buf();
    let name = safe_name(suggested);
    tokio::task::spawn_blocking(move || {
        let (stem, ext) = split_ext(&name);
        for n in 0..1000 {
            let candidate = match n {
                0 => name.clone(),
                n => format!("{stem}-{n}{ext}"),
            };
            match std::fs::hard_link(&staged, root.join(&candidate)) {
                Ok(()) => {
                    std::fs::remove_file(&staged)?;
                    return Ok(candidate);
                }
                Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => continue,
                Err(e) => {
                    let _ = std::fs::remove_file(&staged);
                    return Err(e);
                }
            }
        }
        let _ = std::fs::remove_file(&staged);
        Err(std::io::Error::other("no free name"))
    })
    .await
    .map_err(std::io::Error::other)?
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_made_safe_and_keep_their_extension() {
        assert_eq!(safe_name("report.pdf"), "report.pdf");
        assert_eq!(safe_name("_.._.evil name.sh"), "evil_name.sh");
        assert_eq!(safe_name("../../etc/passwd"), "etc_passwd");
        assert_eq!(safe_name(".bashrc"), "bashrc");
        assert_eq!(safe_name("…"), "download");
        assert_eq!(safe_name(""), "download");
        assert_eq!(safe_name("..."), "download");
        assert_eq!(safe_name("naïve café.txt"), "na_ve_caf_.txt");
        let long = format!("{}.tar.gz", "a".repeat(300));
        let cut = safe_name(&long);
        assert_eq!(cut.len(), MAX_NAME);
        assert!(cut.ends_with(".gz"), "{cut}");
    }
}
