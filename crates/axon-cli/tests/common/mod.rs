//! What the CLI test files share.

#[allow(dead_code)] // each test file is its own crate; not all of them serve
pub mod served;

#[allow(dead_code)] // only the files that open the dashboard use it
pub mod dashboard;

#[allow(dead_code)] // only the files that run `axon` commands on a store of their own
pub mod local;

#[allow(dead_code)] // only the files that use PostgreSQL
pub mod pg;

#[allow(unused_imports)] // not every test file reads the repository
pub use axon_testkit::repo_root;

/// The tools every `axon` registry has, in listing order (sorted by name):
/// the browser tools, the utilities and `http_request`. MCP listings add
/// `run_plan` after them.
pub const BUILT_IN_TOOLS: [&str; 52] = [
    "browser_act",
    "browser_clear_input",
    "browser_click",
    "browser_console_messages",
    "browser_cookies",
    "browser_drag",
    "browser_emulate",
    "browser_extract_table",
    "browser_fill_form",
    "browser_get_page_html",
    "browser_get_page_state",
    "browser_get_text",
    "browser_handle_dialog",
    "browser_hover",
    "browser_mouse_click_xy",
    "browser_mouse_drag_xy",
    "browser_mouse_move_xy",
    "browser_mouse_wheel",
    "browser_navigate",
    "browser_navigate_back",
    "browser_navigate_forward",
    "browser_network_requests",
    "browser_pdf_save",
    "browser_press_key",
    "browser_recording",
    "browser_resize",
    "browser_route",
    "browser_scroll",
    "browser_search",
    "browser_select_option",
    "browser_session_close",
    "browser_session_list",
    "browser_session_new",
    "browser_session_save",
    "browser_snapshot",
    "browser_storage",
    "browser_submit_form",
    "browser_tabs",
    "browser_take_screenshot",
    "browser_type",
    "browser_unroute",
    "browser_upload_file",
    "browser_verify_element_exists",
    "browser_verify_text_visible",
    "browser_verify_value",
    "browser_wait",
    "browser_wait_for_element",
    "browser_wait_for_url_change",
    "echo",
    "flaky",
    "http_request",
    "sleep",
];

/// [`BUILT_IN_TOOLS`] but those of optional capabilities (`[mcp] caps`),
/// then `run_plan` and `axon_result_more`: what an MCP client of Axon lists
/// by default.
#[allow(dead_code)] // each test file is its own crate; not all of them list MCP tools
pub fn mcp_tools() -> Vec<&'static str> {
    let gated: Vec<&str> = axon_core::CAPABILITIES
        .iter()
        .flat_map(|(_, tools)| tools.iter().copied())
        .collect();
    let mut tools: Vec<&str> = BUILT_IN_TOOLS
        .into_iter()
        .filter(|t| !gated.contains(t))
        .collect();
    tools.push("run_plan");
    tools.push("axon_result_more");
    tools
}

/// The base URL a just-spawned `axon serve` (stdout piped) prints on its first
/// line: `axon: listening on http://…`.
#[allow(dead_code)] // each test file is its own crate; not all of them start servers
pub fn listening_url(child: &mut std::process::Child) -> String {
    use std::io::BufRead;
    let mut line = String::new();
    let stdout = child.stdout.take().expect("the server's stdout is piped");
    std::io::BufReader::new(stdout)
        .read_line(&mut line)
        .expect("the server prints its address");
    line.trim()
        .strip_prefix("axon: listening on ")
        .unwrap_or_else(|| panic!("unexpected first line {line:?}"))
        .to_string()
}

/// An HTTP endpoint that answers only once the returned sender says `true`: a
/// plan step that `http_request`s it holds its run until the test lets go, so a
/// test can look at a run while it runs, however slow the machine. Returns the
/// sender and the URL.
#[allow(dead_code)] // each test file is its own crate; not all of them hold runs
pub async fn gate() -> (tokio::sync::watch::Sender<bool>, String) {
    let (open, gate) = tokio::sync::watch::channel(false);
    let app = axum::Router::new().route(
        "/gate",
        axum::routing::get(move || {
            let mut gate = gate.clone();
            async move {
                let _ = gate.wait_for(|open| *open).await;
                "open"
            }
        }),
    );
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .expect("a loopback port");
    let url = format!(
        "http://{}/gate",
        listener.local_addr().expect("its address")
    );
    tokio::spawn(async move { axum::serve(listener, app).await });
    (open, url)
}

/// The Chromium profile folders (`axon-chromium-…`) in `dir`, a TMPDIR a test
/// gave the `axon` it spawned.
#[allow(dead_code)] // each test file is its own crate; not all of them launch browsers
pub fn browser_profiles(dir: &std::path::Path) -> Vec<std::path::PathBuf> {
    std::fs::read_dir(dir)
        .expect("the test's TMPDIR")
        .filter_map(Result::ok)
        .filter(|e| {
            e.file_name()
                .to_string_lossy()
                .starts_with("axon-chromium-")
        })
        .map(|e| e.path())
        .collect()
}

/// Stop an `axon` server the way an operator would: SIGTERM, so that it
/// takes its Chromium and profile along, then SIGKILL if it has not gone
/// within 10 s. A test that SIGKILLs a server leaves its Chromium running
/// until a later launch in the same temporary directory sweeps it, and a
/// test's own temporary directory never sees one.
#[allow(dead_code)] // each test file is its own crate; not all of them serve
pub fn stop(child: &mut std::process::Child) {
    if let Ok(Some(_)) = child.try_wait() {
        return;
    }
    // SAFETY: kill(2) on our own child's pid, which we have not waited for.
    unsafe {
        libc::kill(child.id() as i32, libc::SIGTERM);
    }
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
    while std::time::Instant::now() < deadline {
        if let Ok(Some(_)) = child.try_wait() {
            return;
        }
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    let _ = child.kill();
    let _ = child.wait();
}
