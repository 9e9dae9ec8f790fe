//! The tracecube cube: dimensions with hierarchies,
//! metrics between them, a tilted time frame of cumulative histories, and OLAP
//! queries whose range answers cost two stabbing queries per cell.
//!
//! Where it sits: above `store` (histories). It knows nothing of traces: it ingests
//! `(time, cell, delta)` updates; the `cube-feed` crate turns kernel events into them.
//! Design, file format and invariants: [`design`] (the crate's `DESIGN.md`).
//!
//! ```
//! use cube::{Cube, CubeConfig, Request, When};
//!
//! let mut c = Cube::new(CubeConfig::default())?;
//! let m = c.schema.metric("events").unwrap();
//! let op = c.schema.dims[4].member(&["syscall", "syscall_entry_read"]);
//! let cpu = c.schema.dims[1].member(&["0"]);
//! let cell = c.cell(m, &[op, cpu]);
//! for t in [1_500_000_000u64, 2_100_000_000, 2_200_000_000] {
//!     c.add(t, cell, 1)?;
//! }
//! c.finish()?;
//! let r = c.query(&Request::new("events", When::Range(2_000_000_000, 3_000_000_000)))?;
//! assert_eq!((r.windows[0].begin_ns, r.windows[0].end_ns), (2_000_000_000, 3_000_000_000));
//! assert_eq!(r.windows[0].rows[0].value, 2.0);
//! # Ok::<(), cube::CubeError>(())
//! ```
#![forbid(unsafe_code)]
#![warn(missing_docs)]

/// Design, file format and invariants (`crates/cube/DESIGN.md`, included here).
pub mod design {
    #![doc = include_str!("../DESIGN.md")]
}

pub mod cli;
pub mod config;
mod cube;
pub mod dims;
mod dirty;
mod error;
pub mod file;
pub mod query;
pub mod schema;
pub mod spill;
pub mod tilt;
pub mod time;

pub use config::{CubeConfig, LevelSpec, Materialization};
pub use cube::{Cube, Resolved};
pub use error::{CubeError, Result};
pub use file::{open, save};
pub use query::{Agg, Request, Response, Row, When, Window};
pub use schema::{CellId, MetricId};
