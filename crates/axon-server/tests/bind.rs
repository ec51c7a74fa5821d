//! The server guards its own edge: a library user who builds a [`Server`]
//! and hands it a public listener without tokens is refused, not served
//! (the CLI checks too, but only to fail before it builds anything).

mod common;

use axon_server::{BindError, ScopedToken, ServerOptions};
use common::server;

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
            secrets: Vec::new(),
        }],
        ..ServerOptions::default()
    };
    server(options)
        .await
        .serve(listener, async {})
        .await
        .expect("a scoped token is enough");
}
