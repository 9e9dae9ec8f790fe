//! The accept loop: hyper's HTTP/1 connections with a header timeout (which also
//! closes idle keep-alive connections), a bound on the connections served at once,
//! and a graceful shutdown that lets the open connections finish.

use std::future::Future;
use std::sync::Arc;

use axum::Router;
use hyper_util::rt::{TokioIo, TokioTimer};
use hyper_util::server::graceful::GracefulShutdown;
use hyper_util::service::TowerToHyperService;
use tokio::net::TcpListener;
use tokio::sync::Semaphore;

use crate::Limits;

/// Serves `app` on `listener` until `shutdown` completes, then waits for the open
/// connections to finish their requests.
pub(crate) async fn serve(listener: TcpListener, app: Router, limits: Limits, shutdown: impl Future<Output = ()>) -> std::io::Result<()> {
    let mut http = hyper::server::conn::http1::Builder::new();
    http.timer(TokioTimer::new()).header_read_timeout(limits.header_timeout).keep_alive(true);
    let slots = Arc::new(Semaphore::new(limits.max_connections.max(1)));
    let graceful = GracefulShutdown::new();
    tokio::pin!(shutdown);
    loop {
        // A free slot first: over the bound, clients wait in the listen backlog.
        let slot = tokio::select! {
            () = &mut shutdown => break,
            s = slots.clone().acquire_owned() => s.expect("the semaphore is never closed"),
        };
        let socket = tokio::select! {
            () = &mut shutdown => break,
            a = listener.accept() => match a {
                Ok((socket, _)) => socket,
                // Out of file descriptors and the like: wait a little, go on.
                Err(_) => {
                    tokio::time::sleep(std::time::Duration::from_millis(20)).await;
                    continue;
                }
            },
        };
        let conn = graceful.watch(http.serve_connection(TokioIo::new(socket), TowerToHyperService::new(app.clone())));
        tokio::spawn(async move {
            // A timed-out or reset connection is the client's business: nothing to report.
            let _ = conn.await;
            drop(slot);
        });
    }
    drop(listener);
    graceful.shutdown().await;
    Ok(())
}
