//! The HTTP listener: an accept loop that bounds what a connection may cost, which
//! `axum::serve` leaves open. At most `[http] max_connections` are served at once (the next one
//! is answered 503 and closed); a request head must arrive within `header_timeout` of the server
//! being ready for it — hyper starts that clock when it waits for a head, so an idle keep-alive
//! connection is closed after it too — and may be at most `max_header_bytes`. Shutdown stops
//! accepting, ends event streams, lets requests in flight finish for `shutdown_grace`, then
//! drops whatever is left: a client holding a connection cannot keep the process alive.

use std::future::Future;
use std::sync::Arc;
use std::time::Duration;

use axum::Router;
use hyper_util::rt::{TokioExecutor, TokioIo, TokioTimer};
use hyper_util::server::conn::auto;
use hyper_util::server::graceful::GracefulShutdown;
use hyper_util::service::TowerToHyperService;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::Semaphore;
use tokio::task::JoinSet;
use tokio_util::sync::CancellationToken;

/// What one connection may cost, and how shutdown ends them.
#[derive(Debug, Clone, Copy)]
pub(crate) struct ConnectionLimits {
    /// Connections served at once.
    pub(crate) max_connections: usize,
    /// Time to receive a request head (also the longest a keep-alive connection stays idle).
    pub(crate) header_timeout: Duration,
    /// Largest request head.
    pub(crate) max_header_bytes: usize,
    /// Time requests in flight get to finish once shutdown starts.
    pub(crate) shutdown_grace: Duration,
}

/// Refusals being written at once past the connection cap; beyond it a connection is just closed.
const MAX_REFUSING: usize = 64;

/// Serve `app` on `listener` until `shutdown` completes; then end `streams` (the MCP event
/// streams) and the connections, within the grace period. `again` completing during the grace
/// period (a second signal) ends it at once.
pub(crate) async fn serve(
    listener: TcpListener,
    app: Router,
    limits: ConnectionLimits,
    streams: CancellationToken,
    shutdown: impl Future<Output = ()>,
    again: impl Future<Output = ()>,
) -> std::io::Result<()> {
    let slots = Arc::new(Semaphore::new(limits.max_connections));
    let refusing = Arc::new(Semaphore::new(MAX_REFUSING));
    // HTTP/1 only: telling HTTP/2 apart takes 24 bytes read with no timeout (a client sending one
    // byte would hold a slot forever), and HTTP/2 multiplexes 200 bodies per connection past
    // every per-connection bound here. MCP clients speak HTTP/1.1; TLS terminators in front may
    // speak HTTP/2 to the client.
    let mut builder = auto::Builder::new(TokioExecutor::new()).http1_only();
    builder
        .http1()
        .timer(TokioTimer::new())
        .header_read_timeout(limits.header_timeout)
        // hyper's floor is 8 KiB; config refuses less.
        .max_buf_size(limits.max_header_bytes);
    let graceful = GracefulShutdown::new();
    let mut connections = JoinSet::new();
    tokio::pin!(shutdown);
    loop {
        tokio::select! {
            () = &mut shutdown => break,
            Some(_) = connections.join_next(), if !connections.is_empty() => {}
            accepted = listener.accept() => {
                let socket = match accepted {
                    Ok((socket, _)) => socket,
                    // Out of file descriptors (or a connection reset before it was accepted):
                    // back off a little rather than spin, and keep serving.
                    Err(error) => {
                        tracing::debug!(%error, "accept failed");
                        tokio::time::sleep(Duration::from_millis(20)).await;
                        continue;
                    }
                };
                let Ok(slot) = slots.clone().try_acquire_owned() else {
                    refuse(socket, limits.max_connections, &refusing);
                    continue;
                };
                let _ = socket.set_nodelay(true);
                let (builder, app, watcher) = (builder.clone(), app.clone(), graceful.watcher());
                let header_timeout = limits.header_timeout;
                connections.spawn(async move {
                    // hyper's head timeout starts only once it knows the protocol, which takes
                    // bytes: a connection that never sends one is closed here instead.
                    let mut first = [0u8; 1];
                    match tokio::time::timeout(header_timeout, socket.peek(&mut first)).await {
                        Ok(Ok(1..)) => {}
                        _ => return,
                    }
                    let service = TowerToHyperService::new(app);
                    let connection = builder.serve_connection(TokioIo::new(socket), service);
                    if let Err(error) = watcher.watch(connection.into_owned()).await {
                        tracing::debug!(%error, "connection ended with an error");
                    }
                    drop(slot);
                });
            }
        }
    }
    drop(listener);
    while connections.try_join_next().is_some() {}
    tracing::info!(open = connections.len(), grace = ?limits.shutdown_grace, "shutting down");
    streams.cancel();
    tokio::select! {
        () = graceful.shutdown() => {}
        () = tokio::time::sleep(limits.shutdown_grace) => {
            while connections.try_join_next().is_some() {}
            tracing::warn!(open = connections.len(), "grace period over; closing the connections left");
        }
        () = again => tracing::warn!("second shutdown signal; closing every connection now"),
    }
    connections.shutdown().await;
    Ok(())
}

/// Answer a connection past the cap with 503 and close it, draining the request briefly so that
/// closing does not reset the connection before the client reads the answer: at most
/// `MAX_REFUSING` such tasks at once, each done within half a second.
fn refuse(socket: TcpStream, max: usize, refusing: &Arc<Semaphore>) {
    tracing::debug!(max, "refusing a connection past [http] max_connections");
    let body = format!(
        r#"{{"jsonrpc":"2.0","id":null,"error":{{"code":-32000,"message":"the server is at its connection limit ({max}); retry shortly"}}}}"#
    );
    let answer = format!(
        "HTTP/1.1 503 Service Unavailable\r\ncontent-type: application/json\r\nretry-after: 1\r\nconnection: close\r\ncontent-length: {}\r\n\r\n{body}",
        body.len()
    );
    let Ok(permit) = refusing.clone().try_acquire_owned() else {
        // Too many refusals in flight: best effort, without waiting.
        let _ = socket.try_write(answer.as_bytes());
        return;
    };
    tokio::spawn(async move {
        let mut socket = socket;
        let refusing = async {
            let _ = socket.write_all(answer.as_bytes()).await;
            let _ = socket.shutdown().await;
            let mut buffer = [0u8; 1024];
            while matches!(socket.read(&mut buffer).await, Ok(n) if n > 0) {}
        };
        let _ = tokio::time::timeout(Duration::from_millis(500), refusing).await;
        drop(permit);
    });
}
