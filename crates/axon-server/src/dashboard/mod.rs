//! The dashboard: a web UI at `/` over the JSON API (runs and their DAGs live,
//! tools with breakers and latency, history). Its three files are compiled into
//! the binary, so it works offline and needs no build step: `index.html` is the
//! page for every dashboard URL (`/runs`, `/runs/{id}`, `/tools`,
//! `/history/{id}`), and `app.js` renders each from the API in the browser. The
//! page itself holds no data, so it is served without a token; the API calls it
//! makes carry the token the user enters, or the one got by signing in through
//! the identity provider (`signin.js`, docs/dashboard.md).

use axum::Router;
use axum::http::{HeaderValue, header};
use axum::response::{IntoResponse, Response};
use axum::routing::get;

const INDEX: &str = include_str!("index.html");
const APP_JS: &str = include_str!("app.js");
const APP_CSS: &str = include_str!("app.css");
const SIGNIN_JS: &str = include_str!("signin.js");

/// The dashboard's routes: its pages and its two assets.
pub(crate) fn routes<S: Clone + Send + Sync + 'static>() -> Router<S> {
    Router::new()
        .route("/", get(page))
        .route("/runs", get(page))
        .route("/runs/{id}", get(page))
        .route("/tools", get(page))
        .route("/approvals", get(page))
        .route("/history", get(page))
        .route("/history/{id}", get(page))
        .route("/auth/callback", get(page))
        .route(
            "/ui/app.js",
            get(|| asset(APP_JS, "text/javascript; charset=utf-8")),
        )
        .route(
            "/ui/signin.js",
            get(|| asset(SIGNIN_JS, "text/javascript; charset=utf-8")),
        )
        .route(
            "/ui/app.css",
            get(|| asset(APP_CSS, "text/css; charset=utf-8")),
        )
}

async fn page() -> Response {
    asset(INDEX, "text/html; charset=utf-8").await
}

async fn asset(body: &'static str, content_type: &'static str) -> Response {
    (
        [
            (header::CONTENT_TYPE, HeaderValue::from_static(content_type)),
            // The page is as old as the binary; revalidate so an upgrade shows.
            (header::CACHE_CONTROL, HeaderValue::from_static("no-cache")),
        ],
        body,
    )
        .into_response()
}
