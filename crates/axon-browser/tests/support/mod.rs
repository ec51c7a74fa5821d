//! What the browser tests share: the fixture server and an executor with the
//! browser tools on a real Chromium. `axon-browser-act`'s tests include this
//! file too (its own support adds `browser_act`), so paths here do not lean
//! on which crate runs them.
#![allow(dead_code)]

use std::path::PathBuf;
use std::sync::Arc;

use axon_browser::{BrowserConfig, Browsers};
use axon_core::{CallResult, Executor, PolicyState, ToolCall, ToolRegistry};
use serde_json::{Value, json};

/// Serves tests/fixtures/<file> on a random loopback port, `/slow` (text
/// after 300 ms), `/slow/<file>` (the fixture after 300 ms: a page whose
/// server is slow to answer), `/attachment/<name>` (a short text the server
/// says to save as `<name>`: a navigation that becomes a download),
/// `/stream/<name>` (3 MiB to save as `<name>`, sent without a length) and
/// `/nocontent` (204: a navigation that goes nowhere); returns the base URL.
pub async fn serve_fixtures() -> String {
    use axum::extract::Path;
    let dir = PathBuf::from(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../axon-browser/tests/fixtures"
    ));
    let slow_dir = dir.clone();
    let slow = axum::routing::get(|| async {
        tokio::time::sleep(std::time::Duration::from_millis(300)).await;
        "slow data"
    });
    let app = axum::Router::new()
        .route("/slow", slow)
        .route(
            "/slow/{file}",
            axum::routing::get(move |Path(file): Path<String>| {
                let dir = slow_dir.clone();
                async move {
                    tokio::time::sleep(std::time::Duration::from_millis(300)).await;
                    fixture_file(&dir, &file).await
                }
            }),
        )
        .route(
            "/attachment/{file}",
            axum::routing::get(|Path(file): Path<String>| async move {
                let disposition = format!("attachment; filename=\"{}\"", file.replace('"', ""));
                ([("content-disposition", disposition)], "saved, not shown")
            }),
        )
        .route(
            "/stream/{file}",
            axum::routing::get(|Path(file): Path<String>| async move {
                // 3 MiB sent in pieces without a Content-Length.
                let pieces = futures::stream::iter(
                    (0..48).map(|_| Ok::<_, std::io::Error>(vec![0u8; 64 * 1024])),
                );
                let disposition = format!("attachment; filename=\"{}\"", file.replace('"', ""));
                (
                    [("content-disposition", disposition)],
                    axum::body::Body::from_stream(pieces),
                )
            }),
        )
        .route(
            "/nocontent",
            axum::routing::get(|| async { axum::http::StatusCode::NO_CONTENT }),
        )
        .route(
            "/{file}",
            axum::routing::get(move |Path(file): Path<String>| {
                let dir = dir.clone();
                async move { fixture_file(&dir, &file).await }
            }),
        );
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    tokio::spawn(async move { axum::serve(listener, app).await });
    format!("http://{addr}")
}

/// The fixture `file` of `dir`, typed by its extension.
async fn fixture_file(
    dir: &std::path::Path,
    file: &str,
) -> Result<([(&'static str, &'static str); 1], String), axum::http::StatusCode> {
    let kind = if file.ends_with(".js") {
        "text/javascript; charset=utf-8"
    } else {
        "text/html; charset=utf-8"
    };
    match tokio::fs::read_to_string(dir.join(file.replace("..", ""))).await {
        Ok(body) => Ok(([("content-type", kind)], body)),
        Err(_) => Err(axum::http::StatusCode::NOT_FOUND),
    }
}

/// Serves the tree under `root` (any depth, `..` refused) on a random
/// loopback port, each file typed by its extension; returns the base URL.
/// For pages written elsewhere that load their scripts, styles and images
/// by relative paths (MiniWoB++'s, in peers/miniwob).
pub async fn serve_tree(root: PathBuf) -> String {
    use axum::extract::Path;
    use axum::http::StatusCode;
    let app = axum::Router::new().route(
        "/{*path}",
        axum::routing::get(move |Path(path): Path<String>| {
            let root = root.clone();
            async move {
                if path.split('/').any(|part| part == "..") {
                    return Err(StatusCode::NOT_FOUND);
                }
                let kind = match path.rsplit('.').next().unwrap_or_default() {
                    "html" => "text/html; charset=utf-8",
                    "js" => "text/javascript; charset=utf-8",
                    "css" => "text/css; charset=utf-8",
                    "json" => "application/json",
                    "png" => "image/png",
                    "gif" => "image/gif",
                    "jpg" | "jpeg" => "image/jpeg",
                    "svg" => "image/svg+xml",
                    _ => "application/octet-stream",
                };
                match tokio::fs::read(root.join(&path)).await {
                    Ok(body) => Ok(([("content-type", kind)], body)),
                    Err(_) => Err(StatusCode::NOT_FOUND),
                }
            }
        }),
    );
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    tokio::spawn(async move { axum::serve(listener, app).await });
    format!("http://{addr}")
}

pub struct Fixture {
    pub executor: Executor,
    pub browsers: Arc<Browsers>,
    pub base: String,
    /// The files directory (`[files] dir`) of these browsers.
    pub files: PathBuf,
}

/// A fresh files directory under the temporary directory.
pub fn files_dir() -> PathBuf {
    std::env::temp_dir().join(format!("axon-files-{}", ulid::Ulid::new()))
}

/// The browser tools on a real Chromium (which must be installed).
pub fn browser_tools(
    config: BrowserConfig,
    files: &std::path::Path,
) -> (ToolRegistry, Arc<Browsers>) {
    assert!(
        config.executable_path().exists(),
        "Chromium is not installed at {} (apt-get install chromium; .ci/run does)",
        config.executable_path().display()
    );
    let browsers =
        Arc::new(Browsers::new(config).with_files(axon_core::files::FileDir::new(files)));
    let mut registry = ToolRegistry::new();
    axon_browser::register(&mut registry, browsers.clone()).unwrap();
    (registry, browsers)
}

pub async fn fixture(config: BrowserConfig) -> Fixture {
    let files = files_dir();
    let (registry, browsers) = browser_tools(config, &files);
    fixture_of(registry, browsers, files, json!({"initial_delay_ms": 10})).await
}

/// A fixture on `registry` (the browser tools on `browsers`, and whatever a
/// crate on top of them added), each call retried by `retry`.
pub async fn fixture_of(
    registry: ToolRegistry,
    browsers: Arc<Browsers>,
    files: PathBuf,
    retry: Value,
) -> Fixture {
    let executor = Executor::builder(registry)
        .policy_state(PolicyState::new())
        // No breaker: these tests provoke failures on purpose, many per tool.
        .defaults(json!({
            "timeout_ms": 15000,
            "retry": retry,
            "breaker": {"failure_threshold": 0},
        }))
        .build()
        .unwrap();
    Fixture {
        executor,
        browsers,
        base: serve_fixtures().await,
        files,
    }
}

impl Fixture {
    pub async fn call(&self, session: &str, tool: &str, args: Value) -> CallResult {
        self.executor
            .call(ToolCall::new(tool, args).correlation_id(session))
            .await
    }
}

impl Fixture {
    /// Like [`Fixture::call`], with no retries (to see a failure's own kind).
    pub async fn once(&self, session: &str, tool: &str, args: Value) -> CallResult {
        self.executor
            .call(
                ToolCall::new(tool, args)
                    .correlation_id(session)
                    .policy(json!({"retry": {"max_attempts": 1}})),
            )
            .await
    }

    /// Open fixture `page` in `session`'s page.
    pub async fn open(&self, session: &str, page: &str) {
        let url = format!("{}/{page}", self.base);
        let r = self
            .call(session, "browser_navigate", json!({"url": url}))
            .await;
        assert!(r.success, "opening {page}: {r:?}");
    }

    /// On fixture `page`, click its form's submit button (`#login-btn`), then
    /// at once navigate to roles.html: the navigation's result.
    pub async fn submit_then_leave(&self, session: &str, page: &str) -> CallResult {
        self.open(session, page).await;
        let click = self
            .call(session, "browser_click", json!({"selector": "#login-btn"}))
            .await;
        assert!(click.success, "{click:?}");
        let url = format!("{}/roles.html", self.base);
        self.call(session, "browser_navigate", json!({"url": url}))
            .await
    }

    /// The visible text of the element `selector` matches.
    pub async fn text(&self, session: &str, selector: &str) -> String {
        let r = self
            .call(session, "browser_get_text", json!({"selector": selector}))
            .await;
        assert!(r.success, "text of {selector}: {r:?}");
        r.data["text"].as_str().unwrap_or_default().to_string()
    }
}

/// A failed call's kind and code.
pub fn failure(r: &CallResult) -> (axon_core::ErrorKind, Option<String>) {
    let e = r
        .error
        .as_ref()
        .unwrap_or_else(|| panic!("expected a failure: {r:?}"));
    (e.kind, e.code.clone())
}
