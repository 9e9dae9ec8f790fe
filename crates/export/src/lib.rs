//! Exports of tracecube results as tables that pandas, DuckDB or
//! Spark read: CSV and JSON always, Parquet with the cargo feature `parquet`.
//!
//! Where it sits: above `cube` (series of a cube: time buckets × members × metrics,
//! [`series`]) and `ctf` (decoded events, one table per event class, [`events`]);
//! analysis results arrive as their JSON report ([`report`]), so this crate does
//! not know the kernel model. Tables ([`table`]) are written batch by batch
//! ([`sink`]), so event exports stay in bounded memory.
//!
//! ```
//! use export::table::{Table, Value};
//! let dir = tempfile::tempdir()?;
//! let mut t = Table::new("cpu_threads");
//! t.push_row([("tid", Value::UInt(42)), ("cpu_ns", Value::UInt(1_500))]);
//! let path = export::sink::write_table(dir.path(), &t, export::Format::Csv)?;
//! assert_eq!(std::fs::read_to_string(path)?, "tid,cpu_ns\n42,1500\n");
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

#![forbid(unsafe_code)]
#![warn(missing_docs)]

use std::path::PathBuf;

pub mod events;
#[cfg(feature = "parquet")]
mod parquet_out;
pub mod report;
pub mod series;
pub mod sink;
pub mod table;

pub use sink::{Format, TableFile};
pub use table::{Table, Value};

/// A failed export.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ExportError {
    /// Writing a file failed.
    #[error("{path}: {source}")]
    Io {
        /// The file.
        path: PathBuf,
        /// The cause.
        source: std::io::Error,
    },
    /// The Parquet writer failed.
    #[error("{path}: parquet: {reason}")]
    Parquet {
        /// The file.
        path: PathBuf,
        /// What the writer said.
        reason: String,
    },
    /// The request cannot be done (unknown format, a format this build lacks).
    #[error("{0}")]
    Usage(String),
    /// The cube failed (a bad metric or level, a damaged cube).
    #[error(transparent)]
    Cube(#[from] cube::CubeError),
    /// The trace could not be read.
    #[error(transparent)]
    Trace(#[from] ctf::error::Error),
    /// An event could not be decoded (everything before it was written).
    #[error("decoding error at bit {bit} of a packet of stream {stream}: {reason}")]
    Decode {
        /// Stream index in the trace set.
        stream: usize,
        /// Bit position in the packet.
        bit: u64,
        /// The cause.
        reason: String,
    },
}

/// Result of exports.
pub type Result<T> = std::result::Result<T, ExportError>;
