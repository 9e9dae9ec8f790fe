//! Typed errors of the writer.

use std::path::PathBuf;

/// Everything that can go wrong while declaring a schema or writing a trace.
#[derive(Debug, thiserror::Error)]
pub enum WriterError {
    /// An I/O operation on a trace file failed.
    #[error("I/O error on {path}: {source}")]
    Io {
        /// The file being written.
        path: PathBuf,
        /// The underlying error.
        #[source]
        source: std::io::Error,
    },
    /// The schema is not valid CTF (bad size, alignment, duplicate id, ...).
    #[error("invalid schema: {0}")]
    Schema(String),
    /// An event class id was used that the schema does not declare for this stream.
    #[error("unknown event class id {0}")]
    UnknownEventClass(u32),
    /// The values given for an event do not match its declared fields.
    #[error("event {event}: {reason}")]
    ValueMismatch {
        /// Name of the event class.
        event: String,
        /// What did not match.
        reason: String,
    },
    /// A timestamp went backwards on a stream.
    #[error("timestamp {ts} is before the stream's previous timestamp {prev}")]
    TimestampBackwards {
        /// The offending timestamp (clock cycles).
        ts: u64,
        /// The previous timestamp on the stream.
        prev: u64,
    },
    /// A single event does not fit in an empty packet.
    #[error("event of {bits} bits does not fit in a packet of {capacity} bits")]
    EventTooLarge {
        /// Encoded size of the event, in bits (at least).
        bits: u64,
        /// Packet capacity after header and context, in bits.
        capacity: u64,
    },
    /// A stream writer option is invalid (e.g. packet size not a power of two).
    #[error("invalid option: {0}")]
    Option(String),
}

/// Result alias of this crate.
pub type Result<T> = std::result::Result<T, WriterError>;

/// Attaches a path to an I/O error.
pub(crate) fn io_err(path: &std::path::Path) -> impl FnOnce(std::io::Error) -> WriterError + '_ {
    move |source| WriterError::Io { path: path.to_path_buf(), source }
}
