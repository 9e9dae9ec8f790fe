//! `tracecube serve`: the HTTP/JSON API and the web page over a saved cube.

use std::net::{SocketAddr, ToSocketAddrs};
use std::path::PathBuf;
use std::sync::{Arc, RwLock};

use anyhow::{Context, Result};

/// Arguments of `serve`.
#[derive(clap::Args)]
pub struct ServeArgs {
    /// Cube directory (made by `cube build`).
    pub cube: PathBuf,
    /// Address to listen on, HOST:PORT (a name such as localhost:8397 or an IP);
    /// localhost unless told otherwise (port 0: any free port).
    #[arg(long, default_value = "127.0.0.1:8321")]
    pub addr: String,
    /// Trace directories to answer `POST /api/sql` over (repeatable): the tables of
    /// `tracecube sql`, read-only, bounded in rows and time, and the table function
    /// `cube_series` over the served cube, bounded in cost as `/api/query` is.
    #[cfg(feature = "sql")]
    #[arg(long = "trace")]
    pub traces: Vec<PathBuf>,
}

/// The socket address `flag`'s HOST:PORT names (the first one a host name resolves to).
pub fn listen_addr(flag: &str, text: &str) -> Result<SocketAddr> {
    let mut addrs = text.to_socket_addrs().with_context(|| format!("{flag} {text}: expected HOST:PORT, e.g. 127.0.0.1:8321 or localhost:8321"))?;
    addrs.next().ok_or_else(|| anyhow::anyhow!("{flag} {text}: the host name resolves to no address"))
}

/// Runs `serve` until the process is stopped.
pub fn run(a: ServeArgs) -> Result<()> {
    let c = cube::open(&a.cube).with_context(|| format!("opening the cube {}", a.cube.display()))?;
    let (addr, cube) = (listen_addr("--addr", &a.addr)?, Arc::new(RwLock::new(c)));
    #[cfg(feature = "sql")]
    let server = if a.traces.is_empty() {
        serve::spawn(addr, cube, false)?
    } else {
        let session = sql::SqlSession::open(&a.traces, 0)?;
        for w in &session.warnings {
            eprintln!("tracecube: warning: {w}");
        }
        // `cube_series` over the served cube, under `/api/query`'s cost bound.
        let limits = serve::Limits::default();
        session.add_cube_bounded(&a.cube, limits.max_query_cost)?;
        serve::spawn_with_sql(addr, cube, false, limits, Arc::new(SqlOverTraces(session)))?
    };
    #[cfg(not(feature = "sql"))]
    let server = serve::spawn(addr, cube, false)?;
    // One line, flushed, that scripts (and the tests) read to find the port.
    println!("serving {} on http://{}/ (API: /api/openapi.json)", a.cube.display(), server.local_addr());
    server.join()
}

/// `POST /api/sql` over the traces of `--trace`.
#[cfg(feature = "sql")]
struct SqlOverTraces(sql::SqlSession);

#[cfg(feature = "sql")]
impl serve::SqlService for SqlOverTraces {
    fn run(&self, query: &str, max_rows: usize, timeout: std::time::Duration) -> Result<serde_json::Value, String> {
        let answer = self.0.query_bounded(query, max_rows, timeout).map_err(|e| e.to_string())?;
        sql::output::json_answer(&answer).map_err(|e| e.to_string())
    }
}
