//! tracecube's SQL on an Apache DataFusion Ballista cluster: a fleet
//! of hosts' traces queried with the same tables and the same answers as
//! `tracecube sql` on one machine.
//!
//! Where it sits: above `sql`, whose tables and scans it carries; the `tracecube`
//! binary's `cluster` and `sql --cluster` commands wire it. Ballista provides the
//! scheduler, the executors, the shuffles and the task retries; this crate adds:
//! - [`codec`]: the logical and physical extension codecs that carry tracecube's
//!   table providers and scans in plans (as [`sql::wire`] descriptions: the trace
//!   directories, which every process must read at the same paths, and what is
//!   selected), wrapped around Ballista's own codecs;
//! - [`process`]: the scheduler and executor processes with those codecs;
//! - [`client`]: an [`sql::SqlSession`] whose queries are planned on the scheduler;
//! - [`cube`]: fleet cubes (`cube build --cluster`): the build's slices logged on the
//!   executors, applied in time order by the client.
//!
//! A scan of a trace table has one partition per share of the engine's slices of
//! every trace (so a fleet of traces and one large trace both spread over the
//! executors); a scan of an analysis table has one partition per trace set, which
//! runs that set's analysis on the executor that takes it.

pub mod client;
pub mod codec;
pub mod cube;
pub mod process;

pub use log::LevelFilter;

/// A failure to start or reach a cluster.
#[derive(Debug, thiserror::Error)]
pub enum FleetError {
    /// An address or URL could not be used.
    #[error("{0}")]
    Address(String),
    /// Ballista reported an error.
    #[error("{0}")]
    Ballista(String),
    /// The SQL session failed.
    #[error(transparent)]
    Sql(#[from] sql::SqlError),
    /// The fleet cube's build failed.
    #[error(transparent)]
    Cube(#[from] ::cube::CubeError),
}
