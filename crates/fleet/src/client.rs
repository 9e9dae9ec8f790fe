//! The client side: an [`SqlSession`] whose context sends its plans to a scheduler.

use std::net::{TcpStream, ToSocketAddrs};
use std::path::PathBuf;
use std::time::Duration;

use ballista::extension::SessionContextExt;
use ballista_core::extension::SessionConfigExt;
use datafusion::execution::SessionStateBuilder;
use datafusion::prelude::{SessionConfig, SessionContext};
use sql::{SqlError, SqlSession};

use crate::codec::codecs;
use crate::FleetError;

/// The partitions of a cluster scan when none is asked: enough shares of the slices
/// to keep several executors' cores busy.
pub const DEFAULT_PARTITIONS: usize = 16;

/// How long to wait for the scheduler to accept a connection.
const CONNECT_TIMEOUT: Duration = Duration::from_secs(5);

/// The scheduler's address in `url` (`df://HOST:PORT`), once something answers
/// there: Ballista connects only when the first query is planned; say now, and
/// plainly, when nothing answers there.
fn reachable(url: &str) -> Result<(), FleetError> {
    let Some(addr) = url.strip_prefix("df://") else {
        return Err(FleetError::Address(format!("{url}: a scheduler's address is df://HOST:PORT")));
    };
    let reachable =
        addr.to_socket_addrs().map_err(|e| FleetError::Address(format!("{url}: {e}")))?.any(|a| TcpStream::connect_timeout(&a, CONNECT_TIMEOUT).is_ok());
    if !reachable {
        return Err(FleetError::Address(format!("cannot reach the scheduler at {url}: nothing answers there")));
    }
    Ok(())
}

/// A context of `config` whose plans run on the cluster at `url`, with tracecube's
/// codecs, made on `rt`.
fn context(rt: &tokio::runtime::Runtime, url: &str, config: SessionConfig) -> Result<SessionContext, SqlError> {
    let (logical, physical) = codecs();
    let config = config.upgrade_for_ballista().with_ballista_logical_extension_codec(logical).with_ballista_physical_extension_codec(physical);
    let state = SessionStateBuilder::new().with_config(config).with_default_features().build();
    rt.block_on(SessionContext::remote_with_state(url, state)).map_err(|e| SqlError::Query(format!("cannot reach the scheduler at {url}: {e}")))
}

/// A runtime of `threads` threads and a context on it whose plans run on the cluster
/// at `url` (for plans other than an [`SqlSession`]'s: a fleet cube's).
pub(crate) fn remote(url: &str, threads: usize) -> Result<(tokio::runtime::Runtime, SessionContext), FleetError> {
    reachable(url)?;
    let rt = tokio::runtime::Builder::new_multi_thread().worker_threads(threads.max(1)).enable_all().build().map_err(SqlError::Runtime)?;
    let ctx = context(&rt, url, SessionConfig::new())?;
    Ok((rt, ctx))
}

/// Opens `paths` (directories that every executor reads at the same paths) for SQL
/// on the cluster whose scheduler is at `url` (`df://HOST:PORT`); scans have
/// `partitions` partitions (0: [`DEFAULT_PARTITIONS`]).
pub fn open(url: &str, paths: &[PathBuf], partitions: usize) -> Result<SqlSession, FleetError> {
    reachable(url)?;
    let partitions = if partitions == 0 { DEFAULT_PARTITIONS } else { partitions };
    Ok(SqlSession::open_with(paths, partitions, |rt, config| context(rt, url, config))?)
}
