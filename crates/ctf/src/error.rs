//! Typed errors. A cheap [`DecodeErrorKind`] is raised deep in the decoder with a bit
//! position; the stream layer wraps it with the file and byte offset ([`Error::Stream`]).

use std::path::PathBuf;

use crate::units::BitPos;

/// What went wrong while decoding bytes of a data stream.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum DecodeErrorKind {
    /// A field reaches past the end of the packet's content.
    #[error("field of {needed} bits runs past the end of the packet content ({available} bits left)")]
    OutOfBounds {
        /// Bits the field needs.
        needed: u64,
        /// Bits left in the packet's content.
        available: u64,
    },
    /// A string has no terminating NUL before the end of the packet content.
    #[error("unterminated string")]
    UnterminatedString,
    /// The event header names an event class that the metadata does not declare.
    #[error("no event class with id {0} in stream class {1}")]
    UnknownEventId(u64, u64),
    /// A packet header names a stream class that the metadata does not declare.
    #[error("no stream class with id {0}")]
    UnknownStreamClass(u64),
    /// The variant's tag value selects no option.
    #[error("variant tag value {0} selects no option")]
    NoVariantOption(i128),
    /// An event that occupies no bits would repeat forever.
    #[error("event of zero bits (event class {0}): the stream cannot advance")]
    EmptyEvent(u64),
    /// The packet header's magic number is not 0xC1FC1FC1.
    #[error("bad packet magic 0x{0:08x} (expected 0xc1fc1fc1)")]
    BadMagic(u64),
    /// Packet sizes are inconsistent with each other or with the file.
    #[error("bad packet size: {0}")]
    BadPacketSize(String),
    /// A field's value is unusable (e.g. a length that does not fit).
    #[error("{0}")]
    Invalid(String),
    /// A stream's time goes back: a packet begins before the one before it ends, or
    /// before the stream's last event, by more than old tracers' packets overlap.
    #[error("time goes back: {what} at {to} ns, after {from} ns")]
    TimeGoesBack {
        /// What begins too early.
        what: &'static str,
        /// The time it should not be before (ns from origin, exact: clock offsets and
        /// values can take it past the `i64` range).
        from: i128,
        /// The earlier time (ns from origin, exact).
        to: i128,
    },
    /// A time lies past the range of 64-bit nanoseconds from the clock's origin (for a
    /// clock whose origin is the Unix epoch, past the year 2262): no `i64` timestamp
    /// names it.
    #[error("{what} at {ns} ns from the clock's origin: past the range of 64-bit nanoseconds")]
    TimeOutOfRange {
        /// What lies there.
        what: &'static str,
        /// The time (ns from origin, exact).
        ns: i128,
    },
    /// Nesting of compound fields is deeper than the decoder allows.
    #[error("field nesting deeper than {0}")]
    TooDeep(usize),
}

/// A decoder error at a bit position relative to the start of the packet.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DecodeError {
    /// Bit position in the packet where the failing read started.
    pub bit_pos: u64,
    /// The cause.
    pub kind: DecodeErrorKind,
}

impl DecodeError {
    /// Makes an error at bit `at` of the packet.
    pub fn new(at: BitPos, kind: DecodeErrorKind) -> Self {
        DecodeError { bit_pos: at.bits(), kind }
    }
}

/// Any error of this crate, with the file and, where known, the line or byte offset.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// Reading a file failed.
    #[error("{path}: {err}")]
    Io {
        /// The file.
        path: PathBuf,
        /// The OS error (in the message, not a `source()`: printed once).
        err: std::io::Error,
    },
    /// The metadata is malformed or unsupported.
    #[error("{path}: metadata line {line}: {msg}")]
    Metadata {
        /// The metadata file.
        path: PathBuf,
        /// 1-based line of the TSDL text (0 when not tied to a line).
        line: u32,
        /// What was wrong or expected.
        msg: String,
    },
    /// The metadata's packet framing (packetized metadata) is malformed.
    #[error("{path}: offset {offset}: {msg}")]
    MetadataPacket {
        /// The metadata file.
        path: PathBuf,
        /// Byte offset of the bad packet header.
        offset: u64,
        /// What was wrong.
        msg: String,
    },
    /// A data stream is malformed at a byte offset.
    #[error("{path}: offset {offset}: {kind}")]
    Stream {
        /// The data stream file.
        path: PathBuf,
        /// Byte offset in the file where decoding failed.
        offset: u64,
        /// The cause.
        kind: DecodeErrorKind,
    },
    /// The files on disk are not laid out as a trace (a `metadata` that is a directory,
    /// a trace deeper than the search goes).
    #[error("{path}: {msg}")]
    Layout {
        /// The file or directory.
        path: PathBuf,
        /// What is wrong.
        msg: String,
    },
    /// No trace (no `metadata` file) was found.
    #[error("{0}: no CTF trace found (no file named `metadata`)")]
    NoTrace(PathBuf),
}

impl Error {
    /// A copy of this error (an OS error keeps its kind and message), for reporting it
    /// in more than one place (a stream's indexing error, reported by each reader).
    pub fn duplicate(&self) -> Error {
        match self {
            Error::Stream { path, offset, kind } => Error::Stream { path: path.clone(), offset: *offset, kind: kind.clone() },
            Error::Io { path, err } => Error::Io { path: path.clone(), err: std::io::Error::new(err.kind(), err.to_string()) },
            Error::Metadata { path, line, msg } => Error::Metadata { path: path.clone(), line: *line, msg: msg.clone() },
            Error::MetadataPacket { path, offset, msg } => Error::MetadataPacket { path: path.clone(), offset: *offset, msg: msg.clone() },
            Error::Layout { path, msg } => Error::Layout { path: path.clone(), msg: msg.clone() },
            Error::NoTrace(p) => Error::NoTrace(p.clone()),
        }
    }
}

/// Convenient result alias.
pub type Result<T, E = Error> = std::result::Result<T, E>;
