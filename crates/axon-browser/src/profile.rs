//! Chromium's temporary profiles: one per launch, named after the process
//! that owns it, and swept once that process is gone.
//!
//! A process that exits normally closes its browser and deletes the profile
//! (`Browsers::shutdown`, or its `Drop`). One killed with SIGKILL (an OOM
//! kill, a supervisor, a test harness) cannot: its Chromium lives on, orphaned,
//! at ~240 MB, and its profile stays in the temporary directory. So every
//! launch first sweeps what such processes left: a profile whose owner is not
//! running, with the Chromium processes still using it (found by their
//! `--user-data-dir` in `/proc`), is killed and deleted. Linux only (it reads
//! `/proc`); elsewhere nothing is swept.

use std::path::{Path, PathBuf};

/// The prefix of every profile folder.
const PREFIX: &str = "axon-chromium-";

/// A new profile folder for this process: `axon-chromium-<pid>-<ulid>` in
/// the temporary directory.
pub(crate) fn new_profile() -> PathBuf {
    std::env::temp_dir().join(format!(
        "{PREFIX}{}-{}",
        std::process::id(),
        ulid::Ulid::new()
    ))
}

/// Delete a profile whose browser was told to go. Chromium's helper
/// processes (zygote, renderers, crashpad) can outlive the main one by a
/// moment and write into it again, so every process still using it is
/// killed and waited for (up to 3 s) first, then the folder goes (a few
/// tries, 50 ms apart).
pub(crate) fn remove(profile: &Path) {
    #[cfg(target_os = "linux")]
    {
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(3);
        loop {
            let users: Vec<i32> = profile_users()
                .into_iter()
                .filter(|(_, dir)| Path::new(dir) == profile)
                .map(|(pid, _)| pid)
                .collect();
            if users.is_empty() || std::time::Instant::now() >= deadline {
                break;
            }
            for pid in users {
                // SAFETY: kill(2) on a process whose command line names this
                // profile: one of this browser's own.
                unsafe {
                    libc::kill(pid, libc::SIGKILL);
                }
            }
            std::thread::sleep(std::time::Duration::from_millis(20));
        }
    }
    for _ in 0..10 {
        if std::fs::remove_dir_all(profile).is_ok() || !profile.exists() {
            return;
        }
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
    tracing::warn!(profile = %profile.display(), "could not delete a Chromium profile");
}

/// Kill the browsers of dead owners and delete their profiles; how many
/// profiles went.
pub(crate) fn sweep_orphans() -> usize {
    #[cfg(target_os = "linux")]
    {
        sweep_in(&std::env::temp_dir())
    }
    #[cfg(not(target_os = "linux"))]
    {
        0
    }
}

#[cfg(target_os = "linux")]
fn sweep_in(dir: &Path) -> usize {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return 0;
    };
    let users = profile_users();
    let mut swept = 0;
    for entry in entries.filter_map(Result::ok) {
        let name = entry.file_name().to_string_lossy().into_owned();
        let Some(rest) = name.strip_prefix(PREFIX) else {
            continue;
        };
        let path = entry.path();
        let using: Vec<i32> = users
            .iter()
            .filter(|(_, profile)| Path::new(profile) == path)
            .map(|(pid, _)| *pid)
            .collect();
        // `<pid>-<ulid>`; an older `<ulid>` alone names no owner: it is stale
        // when no process uses it, or when its Chromium was orphaned
        // (re-parented to init: whoever launched it is gone).
        let stale = match rest
            .split_once('-')
            .and_then(|(pid, _)| pid.parse::<u32>().ok())
        {
            Some(owner) => owner != std::process::id() && !alive(owner),
            None => using.is_empty() || using.iter().any(|pid| parent(*pid) == Some(1)),
        };
        if !stale {
            continue;
        }
        for pid in using {
            // SAFETY: kill(2) with a pid read from /proc whose command line
            // names this very profile: one of our orphaned Chromiums.
            unsafe {
                libc::kill(pid, libc::SIGKILL);
            }
        }
        if std::fs::remove_dir_all(&path).is_ok() {
            swept += 1;
        }
    }
    if swept > 0 {
        tracing::info!(
            swept,
            "removed Chromium profiles of processes that are gone"
        );
    }
    swept
}

#[cfg(target_os = "linux")]
fn alive(pid: u32) -> bool {
    Path::new(&format!("/proc/{pid}")).exists()
}

/// The parent of `pid` (the fourth field of `/proc/<pid>/stat`, after the
/// command name in parentheses, which may itself hold spaces).
#[cfg(target_os = "linux")]
fn parent(pid: i32) -> Option<i32> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    let after = &stat[stat.rfind(')')? + 1..];
    after.split_whitespace().nth(1)?.parse().ok()
}

/// Every process started with `--user-data-dir=…`, and that folder.
#[cfg(target_os = "linux")]
fn profile_users() -> Vec<(i32, String)> {
    let Ok(procs) = std::fs::read_dir("/proc") else {
        return Vec::new();
    };
    procs
        .filter_map(Result::ok)
        .filter_map(|e| {
            let pid: i32 = e.file_name().to_str()?.parse().ok()?;
            let cmdline = std::fs::read(e.path().join("cmdline")).ok()?;
            let dir = cmdline.split(|b| *b == 0).find_map(|arg| {
                let arg = std::str::from_utf8(arg).ok()?;
                arg.strip_prefix("--user-data-dir=").map(str::to_string)
            })?;
            Some((pid, dir))
        })
        .collect()
}

#[cfg(all(test, target_os = "linux"))]
mod tests {
    use super::*;

    #[test]
    fn profiles_of_dead_owners_go_and_live_ones_stay() {
        let dir = std::env::temp_dir().join(format!("axon-sweep-{}", ulid::Ulid::new()));
        std::fs::create_dir_all(&dir).unwrap();
        // pid_max is at most 2^22: this pid is nobody's.
        let dead = dir.join(format!("{PREFIX}4194399-01ABC"));
        let mine = dir.join(format!("{PREFIX}{}-01ABC", std::process::id()));
        let legacy = dir.join(format!("{PREFIX}01ABCDEF"));
        let other = dir.join("something-else");
        for d in [&dead, &mine, &legacy, &other] {
            std::fs::create_dir_all(d).unwrap();
        }
        assert_eq!(sweep_in(&dir), 2);
        assert!(!dead.exists() && !legacy.exists());
        assert!(mine.exists() && other.exists());
        assert_eq!(
            parent(std::process::id() as i32),
            Some(unsafe { libc::getppid() })
        );
        let _ = std::fs::remove_dir_all(dir);
    }
}
