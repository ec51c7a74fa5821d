//! What axon-server's tests share: a server over a store of its own, with
//! the utility tools, driven in process (`Router::oneshot`: no port, no
//! process), and the requests a client sends it.

// Each test file is a crate of its own, and not every one uses every helper.
#![allow(dead_code)]

use std::sync::Arc;

use axon_core::{Executor, ToolRegistry};
use axon_plan::PlanRunner;
use axon_server::{Server, ServerOptions};
use axon_store::{Retention, SqliteStore};
use axon_store_roles::Stores;
use axum::body::Body;
use axum::http::{HeaderMap, Request, StatusCode};
use serde_json::Value;
use tower::ServiceExt;

/// A server with `options` over a new SQLite file in the temp dir, which
/// keeps history and runs, as `axon serve` wires it.
pub async fn server(options: ServerOptions) -> Server {
    let path = std::env::temp_dir().join(format!("axon-server-test-{}.db", ulid::Ulid::new()));
    let store = Arc::new(
        SqliteStore::open(&path, Retention::default())
            .await
            .expect("a store in the temp dir"),
    );
    let executor = Executor::builder(ToolRegistry::with_utilities())
        .history(store.clone())
        .build()
        .expect("an executor");
    Server::new(
        PlanRunner::with_store(executor, store.clone()),
        &Stores::of(store),
        options,
    )
}

/// The API of a server, as a client on this machine calls it.
#[derive(Clone)]
pub struct Api {
    router: axum::Router,
}

/// What the server answered.
pub struct Reply {
    pub status: StatusCode,
    pub headers: HeaderMap,
    /// The body as JSON (`Null` when it is not JSON).
    pub body: Value,
    /// The body as text (a graph, a page).
    pub text: String,
}

impl Reply {
    /// Whether the body is an RFC 9457 problem (`application/problem+json`).
    pub fn is_problem(&self) -> bool {
        self.headers
            .get("content-type")
            .and_then(|v| v.to_str().ok())
            .is_some_and(|v| v.starts_with("application/problem+json"))
    }
}

impl Api {
    /// A server with `options` ([`server`]).
    pub async fn start(options: ServerOptions) -> Api {
        Api {
            router: server(options).await.router(),
        }
    }

    /// `method path`, with `headers` and a `body` of its content type.
    pub async fn send(
        &self,
        method: &str,
        path: &str,
        headers: &[(&str, &str)],
        body: Option<(&str, Vec<u8>)>,
    ) -> Reply {
        let mut request = Request::builder()
            .method(method)
            .uri(path)
            .header("host", "localhost");
        for (name, value) in headers {
            request = request.header(*name, *value);
        }
        let body = match body {
            Some((kind, bytes)) => {
                request = request.header("content-type", kind);
                Body::from(bytes)
            }
            None => Body::empty(),
        };
        let response = self
            .router
            .clone()
            .oneshot(request.body(body).expect("a request"))
            .await
            .expect("the router answers");
        let status = response.status();
        let headers = response.headers().clone();
        let bytes = axum::body::to_bytes(response.into_body(), 16 << 20)
            .await
            .expect("a body");
        Reply {
            status,
            headers,
            body: serde_json::from_slice(&bytes).unwrap_or(Value::Null),
            text: String::from_utf8_lossy(&bytes).into_owned(),
        }
    }

    /// `POST path` with `body` as JSON.
    pub async fn post(&self, path: &str, body: Value) -> (StatusCode, Value) {
        let r = self.post_with(path, &[], &body).await;
        (r.status, r.body)
    }

    /// `POST path` with `body` as JSON and `headers`.
    pub async fn post_with(&self, path: &str, headers: &[(&str, &str)], body: &Value) -> Reply {
        let bytes = serde_json::to_vec(body).expect("JSON");
        self.send("POST", path, headers, Some(("application/json", bytes)))
            .await
    }

    /// `POST path` with a raw body, typed as JSON when it looks like JSON and
    /// as YAML otherwise (a body with no type is refused: docs/security.md).
    pub async fn post_text(&self, path: &str, body: &str) -> Reply {
        let kind = if body.trim_start().starts_with(['{', '[']) {
            "application/json"
        } else {
            "application/yaml"
        };
        self.send("POST", path, &[], Some((kind, body.as_bytes().to_vec())))
            .await
    }

    /// `GET path`.
    pub async fn get(&self, path: &str) -> (StatusCode, Value) {
        let r = self.send("GET", path, &[], None).await;
        (r.status, r.body)
    }
}
