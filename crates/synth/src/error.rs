//! Typed errors of the generator.

use std::path::PathBuf;

/// Everything that can go wrong while synthesizing a trace.
#[derive(Debug, thiserror::Error)]
pub enum SynthError {
    /// The configuration is unusable (the value is named in the message).
    #[error("invalid configuration: {0}")]
    Config(String),
    /// The CTF writer failed.
    #[error(transparent)]
    Writer(#[from] ctf_writer::WriterError),
    /// Writing or reading a file failed.
    #[error("I/O error on {path}: {source}")]
    Io {
        /// The file.
        path: PathBuf,
        /// The underlying error.
        #[source]
        source: std::io::Error,
    },
    /// truth.json could not be encoded or decoded.
    #[error("truth.json: {0}")]
    Json(#[from] serde_json::Error),
}

/// Result alias of this crate.
pub type Result<T> = std::result::Result<T, SynthError>;
