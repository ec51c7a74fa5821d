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
/// processes can outlive the main one by a moment and write into it again
/// (the network service writes the disk cache's index at exit, and its
/// command line does not name the profile), so every process that names the
/// profile and all they started are killed and waited for (up to 3 s) first,
/// then the folder goes (a few tries, 50 ms apart).
pub(crate) fn remove(profile: &Path) {
    #[cfg(target_os = "linux")]
    {
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(3);
        loop {
            let tree = tree_of(profile, &processes());
            if tree.is_empty() || std::time::Instant::now() >= deadline {
                break;
            }
            for pid in tree {
                // SAFETY: kill(2) on a process that names this profile, or
                // one they started: this browser's own.
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
    let procs = processes();
    let mut swept = 0;
    for entry in entries.filter_map(Result::ok) {
        let name = entry.file_name().to_string_lossy().into_owned();
        let Some(rest) = name.strip_prefix(PREFIX) else {
            continue;
        };
        let path = entry.path();
        let using = users_of(&path, &procs);
        // `<pid>-<ulid>`; an older `<ulid>` alone names no owner: it is stale
        // when no process uses it, or when its Chromium was orphaned
        // (re-parented to init: whoever launched it is gone).
        let stale = match rest
            .split_once('-')
            .and_then(|(pid, _)| pid.parse::<u32>().ok())
        {
            Some(owner) => owner != std::process::id() && !alive(owner),
            None => using.is_empty() || using.iter().any(|p| p.ppid == 1),
        };
        if !stale {
            continue;
        }
        // Kills what still uses it (our orphaned Chromiums), waits for them.
        remove(&path);
        if !path.exists() {
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

/// A running process: its id, its parent's, and its command line.
#[cfg(target_os = "linux")]
struct Process {
    pid: i32,
    ppid: i32,
    cmdline: String,
}

/// Every live process (zombies left out: they write nothing and cannot be
/// killed again).
#[cfg(target_os = "linux")]
fn processes() -> Vec<Process> {
    let Ok(procs) = std::fs::read_dir("/proc") else {
        return Vec::new();
    };
    procs
        .filter_map(Result::ok)
        .filter_map(|e| {
            let pid: i32 = e.file_name().to_str()?.parse().ok()?;
            let stat = std::fs::read_to_string(e.path().join("stat")).ok()?;
            // `pid (comm) state ppid …`: comm may hold spaces and parentheses.
            let mut after = stat[stat.rfind(')')? + 1..].split_whitespace();
            let state = after.next()?;
            let ppid = after.next()?.parse().ok()?;
            if state == "Z" {
                return None;
            }
            let cmdline = std::fs::read(e.path().join("cmdline")).ok()?;
            let cmdline = String::from_utf8_lossy(&cmdline).replace('\0', " ");
            Some(Process { pid, ppid, cmdline })
        })
        .collect()
}

/// The processes started with `--user-data-dir=<profile>`.
#[cfg(target_os = "linux")]
fn users_of<'a>(profile: &Path, procs: &'a [Process]) -> Vec<&'a Process> {
    let flag = format!("--user-data-dir={} ", profile.display());
    procs
        .iter()
        .filter(|p| format!("{} ", p.cmdline).contains(&flag))
        .collect()
}

/// The users of `profile` and every process they started, transitively.
#[cfg(target_os = "linux")]
fn tree_of(profile: &Path, procs: &[Process]) -> Vec<i32> {
    let mut tree: Vec<i32> = users_of(profile, procs).iter().map(|p| p.pid).collect();
    let mut i = 0;
    while i < tree.len() {
        let parent = tree[i];
        for child in procs.iter().filter(|p| p.ppid == parent) {
            if !tree.contains(&child.pid) {
                tree.push(child.pid);
            }
        }
        i += 1;
    }
    tree
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
        let me = std::process::id() as i32;
        let procs = processes();
        let found = procs.iter().find(|p| p.pid == me).expect("this process");
        // SAFETY: getppid(2) has no preconditions.
        assert_eq!(found.ppid, unsafe { libc::getppid() });
        let _ = std::fs::remove_dir_all(dir);
    }
}
