//! Typed errors. Each variant names one cause and carries the bad value and,
//! for damaged files, the offset where it was found.

use crate::codec::DecodeError;
use crate::types::{Key, LogOffset, Timestamp, ValueKind};
use std::io;

/// A damaged file: what is wrong and where. Cheap to copy.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum Corruption {
    /// Neither superblock slot has a valid magic, version and checksum.
    #[error("no valid superblock (both slots damaged or not a tracecube store)")]
    NoSuperblock,
    /// A frame's stored CRC-32 does not match its bytes.
    #[error("checksum mismatch in frame at {offset}: stored {stored:#010x}, computed {computed:#010x}")]
    Checksum {
        /// Where the frame starts.
        offset: LogOffset,
        /// The checksum in the file.
        stored: u32,
        /// The checksum of the bytes read.
        computed: u32,
    },
    /// A frame header is impossible (length past its block, unknown type).
    #[error("bad frame header at {offset}: {reason}")]
    BadFrame {
        /// Where the frame starts.
        offset: LogOffset,
        /// What is wrong.
        reason: &'static str,
    },
    /// A frame's payload could not be decoded.
    #[error("undecodable {what} in frame at {offset}: {cause:?}")]
    Payload {
        /// Where the frame starts.
        offset: LogOffset,
        /// Which structure was being decoded.
        what: &'static str,
        /// The low-level cause.
        cause: DecodeError,
    },
    /// Decoded fields contradict an invariant of DESIGN.md.
    #[error("invariant broken in frame at {offset}: {reason}")]
    Invariant {
        /// Where the frame starts.
        offset: LogOffset,
        /// Which invariant.
        reason: &'static str,
    },
    /// The committed length points past the end of the file.
    #[error("file too short: committed data ends at {committed}, file holds {available} bytes")]
    Truncated {
        /// End of committed data according to the superblock.
        committed: LogOffset,
        /// Bytes of data region present.
        available: u64,
    },
}

/// Any failure of the store.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// The operating system refused a read, write or sync.
    #[error("I/O error during {op} at byte {pos}: {source}")]
    Io {
        /// The operation (`"read"`, `"write"`, `"sync"`, ...).
        op: &'static str,
        /// File byte position involved (0 when not applicable).
        pos: u64,
        /// The OS error.
        #[source]
        source: io::Error,
    },
    /// The file is damaged; see [`Corruption`].
    #[error("damaged store file: {0}")]
    Corrupt(#[from] Corruption),
    /// The file was written by a newer (or unknown) format version.
    #[error("unsupported store format version {found} (this build reads version {supported})")]
    UnsupportedVersion {
        /// Version byte in the file.
        found: u8,
        /// Version this build reads and writes.
        supported: u8,
    },
    /// A configuration value is out of range.
    #[error("invalid configuration: {0}")]
    Config(&'static str),
    /// A record would go back in time for its key (its start is before the
    /// previous record's end) or has `end < start`.
    #[error("out-of-order record for {key}: [{start}, {end}) after a record ending at {prev_end}")]
    OutOfOrder {
        /// The key.
        key: Key,
        /// Start of the rejected record.
        start: Timestamp,
        /// End of the rejected record.
        end: Timestamp,
        /// End of the key's previous record.
        prev_end: Timestamp,
    },
    /// A store written without an index ([`crate::HistoryStore::create_unindexed`])
    /// was given a key lower than one it already took.
    #[error("key {key} after key {after}: a store written without an index takes its keys in increasing order")]
    KeyOrder {
        /// The rejected key.
        key: Key,
        /// The latest key taken.
        after: Key,
    },
    /// A record's value kind differs from the key's kind.
    #[error("value kind mismatch for {key}: key holds {expected:?}, record has {found:?}")]
    KindMismatch {
        /// The key.
        key: Key,
        /// Kind fixed by the key's first record.
        expected: ValueKind,
        /// Kind of the rejected record.
        found: ValueKind,
    },
}

/// Shorthand used across the crate.
pub type Result<T, E = Error> = std::result::Result<T, E>;

impl Error {
    /// Wraps an OS error with the operation and file position.
    pub(crate) fn io(op: &'static str, pos: u64, source: io::Error) -> Self {
        Error::Io { op, pos, source }
    }

    /// The corruption behind this error, if it is one.
    pub fn corruption(&self) -> Option<Corruption> {
        match self {
            Error::Corrupt(c) => Some(*c),
            _ => None,
        }
    }
}
