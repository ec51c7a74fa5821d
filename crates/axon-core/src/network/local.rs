//! The DevTools ports of every Axon's Chromium on the machine.
//!
//! Every Axon process writes its Chromium's DevTools port into one folder,
//! so that no tool call of *another* Axon on the machine reaches it either:
//! a developer's `axon mcp` beside an `axon serve`, two agents' Axons side
//! by side. (Issue 59: `http_request` reached another local Axon's DevTools
//! port, which lists its sessions and opens `file:` tabs.)
//!
//! `<temp dir>/axon-ports/<port>` holds the pid of the process listening
//! there. An entry whose process is gone (killed before it could withdraw
//! it) is ignored. The folder is shared by every user of the machine and
//! sticky, like `/tmp`: a local user can make tool calls refuse one more
//! loopback port by writing an entry, and cannot remove another's. Where the
//! folder cannot be written, a process still refuses its own ports (the
//! in-process list in `network`).

use std::path::PathBuf;

/// The folder of entries, one per port.
fn folder() -> PathBuf {
    std::env::temp_dir().join("axon-ports")
}

/// Say that this process listens on loopback `port`.
pub(super) fn announce(port: u16) {
    let dir = folder();
    if !dir.is_dir() && std::fs::create_dir_all(&dir).is_ok() {
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            let _ = std::fs::set_permissions(&dir, std::fs::Permissions::from_mode(0o1777));
        }
    }
    if let Err(e) = std::fs::write(dir.join(port.to_string()), std::process::id().to_string()) {
        tracing::debug!(port, error = %e, "cannot announce a loopback port to other Axon processes");
    }
}

/// Say that this process no longer listens on `port` (only its own entry is
/// removed: the port may already be another process's).
pub(super) fn withdraw(port: u16) {
    let entry = folder().join(port.to_string());
    if holder(port) == Some(std::process::id()) {
        let _ = std::fs::remove_file(entry);
    }
}

/// Whether a live Axon process on this machine listens on loopback `port`.
pub(super) fn is_axon_port(port: u16) -> bool {
    holder(port).is_some_and(alive)
}

/// The pid an entry names.
fn holder(port: u16) -> Option<u32> {
    std::fs::read_to_string(folder().join(port.to_string()))
        .ok()?
        .trim()
        .parse()
        .ok()
}

/// Whether process `pid` runs (where `/proc` tells; elsewhere every entry
/// counts).
fn alive(pid: u32) -> bool {
    if !std::path::Path::new("/proc/self").exists() {
        return true;
    }
    std::path::Path::new(&format!("/proc/{pid}")).exists()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_entry_counts_while_its_process_lives() {
        announce(40_211);
        assert!(is_axon_port(40_211));
        withdraw(40_211);
        assert!(!is_axon_port(40_211));
        // A process that is gone (pids are below 2^22 on Linux).
        std::fs::write(folder().join("40212"), "4294967").unwrap();
        assert!(!is_axon_port(40_212));
        let _ = std::fs::remove_file(folder().join("40212"));
    }
}
