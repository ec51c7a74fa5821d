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

/// A request refused for its token before its body is read says
/// `Connection: close`: hyper drains a body that has already arrived and
/// otherwise closes the connection, and a client that pooled the
/// connection without being told sends its next request (the same one,
/// with a token) into the close ("Server disconnected without sending a
/// response", the Python SDK's OAuth flow under load). Here the body never
/// comes: the 401 must still say the connection ends.
#[tokio::test]
async fn a_refusal_before_the_body_is_read_says_the_connection_closes() {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};

    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let address = listener.local_addr().unwrap();
    let options = ServerOptions {
        auth_tokens: vec!["admin-token".into()],
        ..ServerOptions::default()
    };
    let served = tokio::spawn(
        server(options)
            .await
            .serve(listener, std::future::pending()),
    );
    let mut socket = tokio::net::TcpStream::connect(address).await.unwrap();
    let head = format!(
        "POST /v1/tools/echo/call HTTP/1.1\r\nHost: {address}\r\n\
         Content-Type: application/json\r\nContent-Length: 1000\r\n\r\n"
    );
    socket.write_all(head.as_bytes()).await.unwrap();
    let mut answer = Vec::new();
    let mut chunk = [0u8; 4096];
    while !answer.windows(4).any(|w| w == b"\r\n\r\n") {
        let n = tokio::time::timeout(std::time::Duration::from_secs(10), socket.read(&mut chunk))
            .await
            .expect("an answer within 10 s")
            .unwrap();
        assert!(
            n > 0,
            "closed before the head: {}",
            String::from_utf8_lossy(&answer)
        );
        answer.extend_from_slice(&chunk[..n]);
    }
    let text = String::from_utf8_lossy(&answer).to_ascii_lowercase();
    assert!(text.starts_with("http/1.1 401"), "{text}");
    assert!(text.contains("\r\nconnection: close\r\n"), "{text}");
    // And it does close: the rest of the answer, then the end.
    loop {
        let n = tokio::time::timeout(std::time::Duration::from_secs(10), socket.read(&mut chunk))
            .await
            .expect("the connection ends within 10 s")
            .unwrap_or(0);
        if n == 0 {
            break;
        }
    }
    served.abort();
}
