//! The server guards its own edge: a library user who builds a [`Server`]
//! and hands it a public listener without tokens is refused, not served
//! (the CLI checks too, but only to fail before it builds anything).

use std::sync::Arc;

use axon_core::{Executor, ToolRegistry};
use axon_plan::PlanRunner;
use axon_server::{BindError, ScopedToken, Server, ServerOptions};
use axon_store::{Retention, SqliteStore, Store};

async fn server(options: ServerOptions) -> Server {
    let path = std::env::temp_dir().join(format!("axon-bind-{}.db", ulid::Ulid::new()));
    let store: Arc<dyn Store> = Arc::new(
        SqliteStore::open(&path, Retention::default())
            .await
            .expect("a store in the temp dir"),
    );
    let executor = Executor::builder(ToolRegistry::with_utilities())
        .build()
        .expect("an executor");
    Server::new(PlanRunner::new(executor), store, options)
}

#[tokio::test]
async fn a_public_listener_without_tokens_is_refused_by_serve_itself() {
    let listener = tokio::net::TcpListener::bind("0.0.0.0:0").await.unwrap();
    let refused = server(ServerOptions::default())
        .await
        .serve(listener, std::future::pending())
        .await
        .expect_err("no tokens on 0.0.0.0");
    assert_eq!(refused.kind(), std::io::ErrorKind::PermissionDenied);
    let why = refused
        .get_ref()
        .and_then(|e| e.downcast_ref::<BindError>())
        .expect("the io error carries the BindError");
    assert!(why.to_string().contains("auth_tokens"), "{why}");

    // A scoped token protects it as a full one does: served, then stopped.
    let listener = tokio::net::TcpListener::bind("0.0.0.0:0").await.unwrap();
    let options = ServerOptions {
        tokens: vec![ScopedToken {
            token: "scoped".into(),
            tools: vec!["echo".into()],
            admin: false,
        }],
        ..ServerOptions::default()
    };
    server(options)
        .await
        .serve(listener, async {})
        .await
        .expect("a scoped token is enough");
}
