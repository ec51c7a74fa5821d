//! The connections of `axon serve`: accepted, served over HTTP/1.1 with a
//! bound on how long a client may take to send a request's head, and drained
//! on shutdown.
//!
//! `axum::serve` gives hyper no timer, and without one hyper's header-read
//! timeout never fires: a client that opens connections and sends its
//! headers a byte at a time, or nothing at all, holds each connection (and
//! its task) for as long as it likes (issue 59, "slow clients hold
//! connections forever"). This loop is `axum::serve`'s, with a timer and
//! `header_read_timeout` set: a request head not complete within
//! [`ServerOptions::header_timeout`](crate::ServerOptions::header_timeout) —
//! on a new connection, or on a kept-alive one waiting for its next request —
//! closes the connection. A request whose head arrived is not timed here (a
//! run may stream for an hour).

use std::future::Future;
use std::time::Duration;

use axum::Router;
use hyper_util::rt::{TokioIo, TokioTimer};
use hyper_util::server::graceful::GracefulShutdown;
use hyper_util::service::TowerToHyperService;
use tokio::net::TcpListener;

/// Serve `app` on `listener` until `shutdown` resolves, then wait for the
/// connections in flight to finish (their requests end as their runs do).
pub(crate) async fn serve(
    listener: TcpListener,
    app: Router,
    header_timeout: Duration,
    shutdown: impl Future<Output = ()>,
) -> std::io::Result<()> {
    let graceful = GracefulShutdown::new();
    let mut shutdown = std::pin::pin!(shutdown);
    loop {
        let stream = tokio::select! {
            accepted = listener.accept() => match accepted {
                Ok((stream, _)) => stream,
                Err(e) => {
                    // Out of file descriptors, a connection reset before it
                    // was taken: wait a little, as axum::serve does.
                    tracing::debug!(error = %e, "accepting a connection");
                    tokio::time::sleep(Duration::from_millis(10)).await;
                    continue;
                }
            },
            () = &mut shutdown => break,
        };
        let service = TowerToHyperService::new(app.clone());
        let connection = hyper::server::conn::http1::Builder::new()
            .timer(TokioTimer::new())
            .header_read_timeout(header_timeout)
            .serve_connection(TokioIo::new(stream), service);
        let connection = graceful.watch(connection);
        tokio::spawn(async move {
            if let Err(e) = connection.await {
                tracing::trace!(error = %e, "connection ended");
            }
        });
    }
    drop(listener);
    graceful.shutdown().await;
    Ok(())
}
