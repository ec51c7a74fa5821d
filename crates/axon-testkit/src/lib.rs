//! What the test suites of several Axon crates share, so that no helper is
//! written twice: where the local services are, a free port, the
//! repository's root, killing a process the way a crash would. A crate's own
//! helpers stay in its `tests/common` (or `tests/support`); only what more
//! than one crate needs lives here. Standard library only, so that it costs
//! the tests nothing to build.

use std::ffi::{OsStr, OsString};
use std::path::PathBuf;

/// The PostgreSQL the store, cluster and approval tests use: the local server
/// (`AXON_TEST_POSTGRES_URL`, default `postgres://postgres@127.0.0.1:5432/test`;
/// each test makes a schema of its own). CI provides it; a test never skips
/// for want of it.
pub fn postgres_url() -> String {
    std::env::var("AXON_TEST_POSTGRES_URL")
        .unwrap_or_else(|_| "postgres://postgres@127.0.0.1:5432/test".into())
}

/// A port on loopback that nothing listened on a moment ago: for a server a
/// test starts itself and must name first (a Redis of its own, an MCP server
/// over HTTP). Another process may take it in between; the tests that use it
/// start their server at once.
pub fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .map(|a| a.port())
        .expect("the loopback interface takes a listener")
}

/// `kill -9 pid`: the process dies as in a crash, with no chance to clean up.
pub fn kill_9(pid: u32) {
    let status = std::process::Command::new("kill")
        .args(["-9", &pid.to_string()])
        .status()
        .expect("kill runs");
    assert!(status.success(), "kill -9 {pid} failed");
}

/// The repository's root (fixtures, peers, docs, examples).
pub fn repo_root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// The variables a child process of a test keeps from the test's own
/// environment: where programs, the browser and the local services are, the
/// locale, and the user name PostgreSQL defaults to. Nothing that configures
/// Axon (`AXON_CONFIG`, `AXON_STORE_PATH`, `AXON_FILES_DIR`, …), routes traffic
/// (`HTTP_PROXY` and its kin) or moves data directories (`XDG_*`) passes:
/// a test's outcome must not depend on the shell it was started from.
const KEPT: &[&str] = &[
    "PATH",
    "LANG",
    "LC_ALL",
    "TZ",
    "TERM",
    "TMPDIR",
    "USER",
    "LOGNAME",
    "AXON_CHROME",
    "AXON_TEST_POSTGRES_URL",
    "RUST_BACKTRACE",
];

/// The environment a test's child starts with: [`KEPT`] from this process,
/// and `HOME` set to a scratch folder of this test process (so that nothing a
/// child writes to its data directory by default lands in the user's).
pub fn clean_env() -> Vec<(OsString, OsString)> {
    let mut env: Vec<(OsString, OsString)> = std::env::vars_os()
        .filter(|(key, _)| KEPT.iter().any(|kept| key == OsStr::new(kept)))
        .collect();
    env.push(("HOME".into(), scratch_home().into_os_string()));
    env
}

/// A process for a test to start (the `axon` binary, a peer, a script), with
/// the clean environment of [`clean_env`] and nothing else; the test adds what
/// the child needs with `.env(…)`. For tokio, `tokio::process::Command::from`
/// takes it as it is.
pub fn command(program: impl AsRef<OsStr>) -> std::process::Command {
    let mut command = std::process::Command::new(program);
    command.env_clear().envs(clean_env());
    command
}

/// `HOME` for children: one folder per test process under the temporary
/// folder, made on first use.
fn scratch_home() -> PathBuf {
    let home = std::env::temp_dir().join(format!("axon-test-home-{}", std::process::id()));
    // A folder that cannot be made shows itself in the child's error.
    let _ = std::fs::create_dir_all(&home);
    home
}
