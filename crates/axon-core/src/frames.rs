//! Browser frames kept with history (issue 63): when a browser session
//! records (`[browser] record`), each frame it keeps — the page's screenshot
//! right after an action, the action, its element, the URL, the console
//! errors and failed requests of that step — is stored under the action's
//! call id, so that the dashboard shows a run's step as the page looked
//! then, long after the session closed.
//!
//! Who reaches a frame. It lives in `.frames/` inside its owner's files
//! folder ([`FileDir::owned_by`]): a hidden name, which no tool argument can
//! name, so no tool reads, lists, writes or deletes one. The browser tools
//! write it for the calling owner only; the server reads one only for a call
//! whose history entry the reader may read, and from that call's owner's
//! folder, so one tenant's call id never finds another's frame, and a
//! tenant cannot squat on or overwrite another's (docs/security.md, "Who
//! owns what"). A frame goes with history: once it is older than history's
//! `max_age_days`, or past its owner's newest [`MAX_STORED`].

use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime};

use serde_json::Value;

use crate::files::FileDir;

/// The folder, inside an owner's files folder, of its frames.
pub const FOLDER: &str = ".frames";

/// Frames an owner keeps; the oldest go first.
pub const MAX_STORED: usize = 1000;

/// The largest stored frame read back (its image is at most 256 KiB,
/// base64 and the notes around it included).
pub const MAX_BYTES: u64 = 512 * 1024;

/// Where frames are kept, and for how long.
#[derive(Clone, Debug)]
pub struct FrameStore {
    files: FileDir,
    max_age: Option<Duration>,
    keep: usize,
}

impl FrameStore {
    /// Frames in `files` (each owner's folder of it), kept for `max_age`
    /// (history's; `None`: no limit) and at most [`MAX_STORED`] per owner.
    pub fn new(files: FileDir, max_age: Option<Duration>) -> Self {
        FrameStore {
            files,
            max_age,
            keep: MAX_STORED,
        }
    }

    /// Keep at most `keep` frames per owner instead (tests).
    pub fn keeping(mut self, keep: usize) -> Self {
        self.keep = keep.max(1);
        self
    }

    /// The folder of `owner`'s frames.
    fn folder(&self, owner: &crate::Owner) -> FileDir {
        FileDir::new(self.files.owned_by(owner).root().join(FOLDER))
    }

    /// Store `frame` as `owner`'s frame of call `call_id` (replacing the
    /// frame of an earlier attempt), then drop what retention says goes. A
    /// call id that is not a plain name is not stored.
    pub async fn write(
        &self,
        owner: &crate::Owner,
        call_id: &str,
        frame: &Value,
    ) -> Result<(), crate::ToolError> {
        let folder = self.folder(owner);
        let bytes = serde_json::to_vec(frame)
            .map_err(|e| crate::ToolError::internal(format!("a frame: {e}")))?;
        folder
            .write("/frame", &format!("{call_id}.json"), bytes, true)
            .await?;
        let (root, keep, max_age) = (folder.root().to_path_buf(), self.keep, self.max_age);
        let _ = tokio::task::spawn_blocking(move || prune(&root, keep, max_age)).await;
        Ok(())
    }

    /// `owner`'s frame of call `call_id`, if one is kept.
    pub async fn read(&self, owner: &crate::Owner, call_id: &str) -> Option<Value> {
        let bytes = self
            .folder(owner)
            .read("/frame", &format!("{call_id}.json"), MAX_BYTES)
            .await
            .ok()?;
        serde_json::from_slice(&bytes).ok()
    }
}

/// Drop the frames in `root` older than `max_age`, then all but the newest
/// `keep` (by the time they were written).
fn prune(root: &Path, keep: usize, max_age: Option<Duration>) {
    let Ok(entries) = std::fs::read_dir(root) else {
        return;
    };
    let mut frames: Vec<(SystemTime, PathBuf)> = entries
        .flatten()
        .filter(|e| e.file_name().to_string_lossy().ends_with(".json"))
        .filter_map(|e| Some((e.metadata().ok()?.modified().ok()?, e.path())))
        .collect();
    let cutoff = max_age.and_then(|age| SystemTime::now().checked_sub(age));
    frames.sort_by_key(|f| std::cmp::Reverse(f.0));
    for (i, (at, path)) in frames.iter().enumerate() {
        if i >= keep || cutoff.is_some_and(|cutoff| *at < cutoff) {
            let _ = std::fs::remove_file(path);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn temp() -> PathBuf {
        std::env::temp_dir().join(format!("axon-frames-{}", ulid::Ulid::new()))
    }

    /// Date the frame of `call_id` `ago` back.
    fn age(dir: &Path, owner: &crate::Owner, call_id: &str, ago: Duration) {
        let folder = FileDir::new(dir).owned_by(owner).root().join(FOLDER);
        let file = std::fs::File::options()
            .write(true)
            .open(folder.join(format!("{call_id}.json")))
            .unwrap();
        file.set_modified(SystemTime::now() - ago).unwrap();
    }

    #[tokio::test]
    async fn a_frame_is_its_owners_only_and_the_oldest_go() {
        let dir = temp();
        let frames = FrameStore::new(FileDir::new(&dir), None).keeping(2);
        let (a, b) = (crate::Owner::of(Some("a")), crate::Owner::of(Some("b")));
        frames.write(&a, "c1", &json!({"n": 1})).await.unwrap();
        assert_eq!(frames.read(&a, "c1").await, Some(json!({"n": 1})));
        assert_eq!(frames.read(&b, "c1").await, None, "another owner's call id");
        assert_eq!(frames.read(&crate::Owner::of(None), "c1").await, None);
        age(&dir, &a, "c1", Duration::from_secs(20));
        frames.write(&a, "c2", &json!({"n": 2})).await.unwrap();
        age(&dir, &a, "c2", Duration::from_secs(10));
        frames.write(&a, "c3", &json!({"n": 3})).await.unwrap();
        assert_eq!(frames.read(&a, "c1").await, None, "past the newest two");
        assert!(frames.read(&a, "c2").await.is_some());
        assert!(frames.read(&a, "c3").await.is_some());
        for bad in ["../c3", "/etc/passwd", ".x"] {
            assert!(frames.write(&a, bad, &json!({})).await.is_err(), "{bad}");
            assert_eq!(frames.read(&a, bad).await, None);
        }
        let _ = std::fs::remove_dir_all(dir);
    }

    #[tokio::test]
    async fn frames_older_than_history_go() {
        let dir = temp();
        let frames = FrameStore::new(FileDir::new(&dir), Some(Duration::from_secs(3600)));
        let owner = crate::Owner::of(Some("a"));
        frames.write(&owner, "old", &json!({})).await.unwrap();
        age(&dir, &owner, "old", Duration::from_secs(7200));
        frames.write(&owner, "new", &json!({})).await.unwrap();
        assert_eq!(frames.read(&owner, "old").await, None);
        assert!(frames.read(&owner, "new").await.is_some());
        let _ = std::fs::remove_dir_all(dir);
    }
}
