//! The tracecube server: an HTTP/JSON API over a statistics
//! [`cube::Cube`] and a web page of charts, with its assets embedded in the binary.
//!
//! Where it sits: above `cube` only (it knows no trace). `tracecube serve FILE.cube`
//! serves a saved cube; `tracecube live ... --serve` serves the cube it is filling,
//! shared behind a lock ([`SharedCube`]): queries take a read lock.
//!
//! Endpoints (described by the OpenAPI document served at `/api/openapi.json`):
//!
//! | path | answer |
//! | --- | --- |
//! | `GET /api/query?metric=M&agg=&at=&range=&last=&by=&where=&top=&every=` | what `tracecube query --format json` prints for the same arguments (`by` and `where` repeatable) |
//! | `GET /api/metrics` | the metrics, their finest levels and aggregates |
//! | `GET /api/dimensions` | the dimensions and their levels |
//! | `GET /api/members?dim=D&level=L&within=LEVEL=LABEL` | the members of a dimension at a level (the tree, level by level) |
//! | `GET /api/info` | time span, `now`, tilted-frame levels, updates, live or not |
//! | `POST /api/sql` | `{"query": "SELECT ..."}` → `{"columns", "rows", "truncated"}`: read-only SQL over the traces the server was given ([`SqlService`]; 404 without); `tracecube serve` adds `cube_series` over its cube, bounded in cost as `/api/query` |
//! | `GET /` | the web page |
//!
//! A bad request gets a 4xx answer `{"error": "what is wrong"}`; a handler never
//! panics on input (and a panic would still only fail its own request).
//!
//! No client can keep the server busy ([`Limits`]): a query's cost is estimated
//! before it runs and refused over a bound; a query whose client goes away is
//! cancelled; headers must arrive within a timeout, which also closes connections
//! left idle; and the connections served at once are bounded.

#![forbid(unsafe_code)]
#![warn(missing_docs)]

mod api;
mod assets;
mod conn;
mod params;
mod sql;

use std::net::SocketAddr;
use std::sync::{Arc, RwLock};
use std::time::Duration;

use axum::routing::{get, post};
use axum::Router;

pub use params::{MAX_TOP, MAX_WINDOWS};
pub use sql::SqlService;

/// A cube shared between the thread that fills it (live mode) and the server.
pub type SharedCube = Arc<RwLock<cube::Cube>>;

/// What every handler sees.
#[derive(Clone)]
pub(crate) struct AppState {
    pub cube: SharedCube,
    pub live: bool,
    /// What the server allows a query.
    pub limits: Limits,
    /// SQL over the traces, when the server was given them.
    pub sql: Option<Arc<dyn SqlService>>,
}

/// The application: API routes, the page and its assets. `live: true` tells the page
/// to refresh on its own.
pub fn router(cube: SharedCube, live: bool) -> Router {
    router_with(cube, live, Limits::default(), None)
}

fn router_with(cube: SharedCube, live: bool, limits: Limits, sql: Option<Arc<dyn SqlService>>) -> Router {
    Router::new()
        .route("/", get(assets::index))
        .route("/assets/{file}", get(assets::asset))
        .route("/api/openapi.json", get(assets::openapi))
        .route("/api/query", get(api::query))
        .route("/api/metrics", get(api::metrics))
        .route("/api/dimensions", get(api::dimensions))
        .route("/api/members", get(api::members))
        .route("/api/info", get(api::info))
        .route("/api/sql", post(sql::query))
        .fallback(api::not_found)
        .with_state(AppState { cube, live, limits, sql })
}

/// What the server allows each client, so that no client can keep it busy.
#[derive(Debug, Clone, Copy)]
pub struct Limits {
    /// How long a client may take to send a request's headers, and how long a
    /// connection may stay idle between two requests, before it is closed.
    pub header_timeout: Duration,
    /// The most work a query may ask for, in cell values read
    /// ([`cube::Cube::query_cost`]); a query over it is refused before it runs.
    pub max_query_cost: u64,
    /// Connections served at once; more wait in the listen backlog.
    pub max_connections: usize,
    /// How long an SQL query may run before it is cancelled.
    pub sql_timeout: Duration,
    /// The most rows an SQL answer holds (the rest is cut, and the answer says so).
    pub sql_max_rows: usize,
}

impl Default for Limits {
    fn default() -> Self {
        Limits {
            header_timeout: Duration::from_secs(10),
            max_query_cost: 20_000_000,
            max_connections: 256,
            sql_timeout: Duration::from_secs(30),
            sql_max_rows: 10_000,
        }
    }
}

/// A server running on its own thread; see [`spawn`].
pub struct ServerHandle {
    addr: SocketAddr,
    stop: Option<tokio::sync::oneshot::Sender<()>>,
    thread: Option<std::thread::JoinHandle<std::io::Result<()>>>,
}

impl ServerHandle {
    /// The address the server listens on (with the port chosen when asked for 0).
    pub fn local_addr(&self) -> SocketAddr {
        self.addr
    }

    /// Stops accepting connections, lets the open ones finish, and waits for the
    /// server thread.
    pub fn shutdown(mut self) -> anyhow::Result<()> {
        if let Some(s) = self.stop.take() {
            let _ = s.send(());
        }
        self.join()
    }

    /// Waits until the server stops (it runs until [`ServerHandle::shutdown`] or
    /// the end of the process; `tracecube serve` waits here).
    pub fn join(mut self) -> anyhow::Result<()> {
        match self.thread.take().map(|t| t.join()) {
            Some(Ok(r)) => Ok(r?),
            Some(Err(_)) => anyhow::bail!("the server thread panicked"),
            None => Ok(()),
        }
    }
}

/// Binds `addr` and serves [`router`] on a background thread with its own tokio
/// runtime, with the default [`Limits`]. Dropping the handle leaves the server
/// running until the process ends.
pub fn spawn(addr: SocketAddr, cube: SharedCube, live: bool) -> anyhow::Result<ServerHandle> {
    spawn_with(addr, cube, live, Limits::default())
}

/// [`spawn`] with the given limits.
pub fn spawn_with(addr: SocketAddr, cube: SharedCube, live: bool, limits: Limits) -> anyhow::Result<ServerHandle> {
    spawn_full(addr, cube, live, limits, None)
}

/// [`spawn_with`], also answering `POST /api/sql` with `sql`.
pub fn spawn_with_sql(addr: SocketAddr, cube: SharedCube, live: bool, limits: Limits, sql: Arc<dyn SqlService>) -> anyhow::Result<ServerHandle> {
    spawn_full(addr, cube, live, limits, Some(sql))
}

fn spawn_full(addr: SocketAddr, cube: SharedCube, live: bool, limits: Limits, sql: Option<Arc<dyn SqlService>>) -> anyhow::Result<ServerHandle> {
    let listener = std::net::TcpListener::bind(addr).map_err(|e| anyhow::anyhow!("cannot listen on {addr}: {e}"))?;
    listener.set_nonblocking(true)?;
    let local = listener.local_addr()?;
    let rt = tokio::runtime::Builder::new_multi_thread().worker_threads(2).thread_name("tracecube-http").enable_io().enable_time().build()?;
    let (tx, rx) = tokio::sync::oneshot::channel::<()>();
    let app = router_with(cube, live, limits, sql);
    let thread = std::thread::Builder::new().name("tracecube-serve".into()).spawn(move || {
        rt.block_on(async move {
            let l = tokio::net::TcpListener::from_std(listener)?;
            conn::serve(l, app, limits, async move {
                // A dropped handle (sender gone without a message) keeps serving.
                if rx.await.is_err() {
                    std::future::pending::<()>().await;
                }
            })
            .await
        })
    })?;
    Ok(ServerHandle { addr: local, stop: Some(tx), thread: Some(thread) })
}
