//! Errors of the cube: one enum, a variant per cause, carrying the bad value.

use std::path::PathBuf;

/// A failed cube operation.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum CubeError {
    /// The history store failed.
    #[error("history store: {0}")]
    Store(#[from] store::Error),
    /// Reading or writing a file failed.
    #[error("{path}: {source}")]
    Io {
        /// The file.
        path: PathBuf,
        /// The cause.
        source: std::io::Error,
    },
    /// The configuration is invalid.
    #[error("cube config: {0}")]
    Config(String),
    /// A query names something the cube does not have, or is malformed.
    #[error("query: {0}")]
    Query(String),
    /// A time or duration could not be parsed (the message quotes it and says what
    /// was expected).
    #[error("bad time {0}")]
    Time(String),
    /// The catalog of a cube file is damaged or of another version.
    #[error("cube catalog {path}: {reason}")]
    Catalog {
        /// The catalog file.
        path: PathBuf,
        /// What is wrong.
        reason: String,
    },
    /// The trace could not be read.
    #[error("trace: {0}")]
    Trace(String),
}

/// Result of cube operations.
pub type Result<T> = std::result::Result<T, CubeError>;
