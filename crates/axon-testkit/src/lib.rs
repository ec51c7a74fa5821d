//! What the test suites of several Axon crates share, so that no helper is
//! written twice: where the local services are, a free port, the
//! repository's root, killing a process the way a crash would. A crate's own
//! helpers stay in its `tests/common` (or `tests/support`); only what more
//! than one crate needs lives here. Standard library only, so that it costs
//! the tests nothing to build.

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
