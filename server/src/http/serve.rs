//! The accept loop: the router on hyper's HTTP/1 server, with a deadline
//! on every request's headers.
//!
//! `axum::serve` sets no timer, so hyper enforces no timeouts: a tester's
//! 300 connections that trickled their headers, or opened and sent nothing,
//! all stayed open for as long as the tester waited, each holding a socket
//! and a task (docs/benchmarks.md, "The accept loop"). Here
//! hyper's header-read timeout runs whenever a connection waits for a
//! request head: a new connection, a trickled header, and a keep-alive
//! connection idle between requests are all closed when it passes. A
//! request whose head has arrived is not cut short: long uploads and
//! event streams are bounded elsewhere (body limit, job and search budgets).

use std::future::Future;
use std::time::Duration;

use axum::Router;
use hyper::server::conn::http1;
use hyper_util::rt::{TokioIo, TokioTimer};
use hyper_util::service::TowerToHyperService;
use tokio::net::TcpListener;
use tokio::sync::watch;
use tokio::task::JoinSet;

/// How long a connection may take to send a request's headers, or sit
/// idle before its next request.
pub const HEADER_TIMEOUT: Duration = Duration::from_secs(30);

/// How long in-flight requests get to finish once shutdown starts.
const DRAIN: Duration = Duration::from_secs(10);

/// Serves `app` on `listener` until `shutdown` resolves, then lets open
/// requests finish (for at most [`DRAIN`]).
pub async fn serve(
    listener: TcpListener,
    app: Router,
    header_timeout: Duration,
    shutdown: impl Future<Output = ()>,
) {
    let mut http = http1::Builder::new();
    http.timer(TokioTimer::new())
        .header_read_timeout(header_timeout)
        .keep_alive(true);
    // Shutdown reaches each connection through this channel; the set
    // holds the open ones, so shutdown can wait for them.
    let (stopping, stop) = watch::channel(false);
    let mut open = JoinSet::new();
    tokio::pin!(shutdown);
    loop {
        let (stream, peer) = tokio::select! {
            accepted = listener.accept() => match accepted {
                Ok(accepted) => accepted,
                Err(err) => {
                    // Out of file descriptors, usually: wait rather than spin.
                    tracing::warn!(%err, "cannot accept a connection");
                    tokio::time::sleep(Duration::from_millis(100)).await;
                    continue;
                }
            },
            // Reap finished connections so the set stays as large as the
            // open ones, not every one ever accepted.
            Some(_) = open.join_next(), if !open.is_empty() => continue,
            () = &mut shutdown => break,
        };
        let _ = stream.set_nodelay(true);
        // hyper's own answers to heads it cannot parse get JSON bodies.
        let stream = super::parse_errors::JsonParseErrors::new(stream);
        // Each request carries its connection's peer, which failed token
        // attempts are counted against (`auth`).
        let app = tower::ServiceBuilder::new()
            .map_request(move |mut request: hyper::Request<hyper::body::Incoming>| {
                request
                    .extensions_mut()
                    .insert(axum::extract::ConnectInfo(peer));
                request
            })
            .service(app.clone());
        let connection = http.serve_connection(TokioIo::new(stream), TowerToHyperService::new(app));
        let mut stop = stop.clone();
        open.spawn(async move {
            tokio::pin!(connection);
            let result = tokio::select! {
                result = connection.as_mut() => result,
                _ = stop.changed() => {
                    // Finish the request in flight, take no new one.
                    connection.as_mut().graceful_shutdown();
                    connection.await
                }
            };
            if let Err(err) = result {
                // A client that timed out or went away: theirs to notice.
                tracing::debug!(%err, "connection closed with an error");
            }
        });
    }
    let _ = stopping.send(true);
    let drained = async { while open.join_next().await.is_some() {} };
    if tokio::time::timeout(DRAIN, drained).await.is_err() {
        tracing::warn!("requests still open {DRAIN:?} after shutdown began were dropped");
    }
}
