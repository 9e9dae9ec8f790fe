//! Directory frames: the persistent per-key index of chunks.
//!
//! Each commit appends directory frames describing the chunks written since the
//! previous commit; each frame points to its predecessor, the newest one is
//! named by the superblock. Reopening walks this chain (never the data).
//!
//! Payload: `prev varint (offset + 1, 0 = none) | n varint | n × entry`; entry:
//! `key varint | kind u8 | offset delta varint | first_start varint |
//! last_start - first_start varint | last_end - last_start varint | count varint |
//! last value bits varint`. Offsets increase within a frame; the first delta is
//! from 0.

use crate::codec::{put_varint, Cursor, DecodeError};
use crate::error::Corruption;
use crate::types::{Key, LogOffset, ValueKind};

/// Upper bound of one encoded entry (7 varints of at most 10 bytes and a tag).
pub const MAX_ENTRY_BYTES: usize = 71;
/// Upper bound of the payload header.
pub const MAX_HEADER_BYTES: usize = 20;

/// What the index needs to know about one stored chunk.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct DirEntry {
    /// Owner key.
    pub key: Key,
    /// Value kind of the key.
    pub kind: ValueKind,
    /// Start of the chunk's frame.
    pub offset: LogOffset,
    /// Start of the chunk's first record.
    pub first_start: u64,
    /// Start of the chunk's last record.
    pub last_start: u64,
    /// End of the chunk's last record.
    pub last_end: u64,
    /// Records in the chunk.
    pub count: u64,
    /// Value bits of the chunk's last record.
    pub last_bits: u64,
}

/// Encodes a directory payload with predecessor `prev` and `entries` (sorted by offset).
pub fn encode(prev: Option<LogOffset>, entries: &[DirEntry], out: &mut Vec<u8>) {
    put_varint(out, prev.map_or(0, |p| p.0 + 1));
    put_varint(out, entries.len() as u64);
    let mut last = 0;
    for e in entries {
        put_varint(out, e.key.0);
        out.push(e.kind.tag());
        put_varint(out, e.offset.0 - last);
        last = e.offset.0;
        put_varint(out, e.first_start);
        put_varint(out, e.last_start - e.first_start);
        put_varint(out, e.last_end - e.last_start);
        put_varint(out, e.count);
        put_varint(out, e.last_bits);
    }
}

/// A decoded directory frame.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Directory {
    /// The previous directory frame, if any.
    pub prev: Option<LogOffset>,
    /// The entries, sorted by offset.
    pub entries: Vec<DirEntry>,
}

/// Decodes the directory payload of the frame at `offset`.
pub fn decode(payload: &[u8], offset: LogOffset) -> Result<Directory, Corruption> {
    let bad = |cause: DecodeError| Corruption::Payload { offset, what: "directory", cause };
    let inv = |reason| Corruption::Invariant { offset, reason };
    let mut c = Cursor::new(payload);
    let prev = c.varint().map_err(bad)?.checked_sub(1).map(LogOffset);
    if prev.is_some_and(|p| p >= offset) {
        return Err(inv("directory points forward"));
    }
    let n = c.varint().map_err(bad)?;
    // Each entry takes at least 8 bytes: bounds the allocation below.
    if n > (c.remaining() / 8) as u64 {
        return Err(inv("entry count does not fit the frame"));
    }
    let mut entries = Vec::with_capacity(n as usize);
    let mut last = 0u64;
    for _ in 0..n {
        let key = Key(c.varint().map_err(bad)?);
        let kind = ValueKind::from_tag(c.u8().map_err(bad)?).ok_or(inv("unknown value kind"))?;
        let off = last.checked_add(c.varint().map_err(bad)?).ok_or(inv("offset overflow"))?;
        if off >= offset.0 || (!entries.is_empty() && off == last) {
            return Err(inv("chunk offset not before its directory or repeated"));
        }
        last = off;
        let first_start = c.varint().map_err(bad)?;
        let last_start = first_start.checked_add(c.varint().map_err(bad)?).ok_or(inv("time overflow"))?;
        let last_end = last_start.checked_add(c.varint().map_err(bad)?).ok_or(inv("time overflow"))?;
        let count = c.varint().map_err(bad)?;
        let last_bits = c.varint().map_err(bad)?;
        if count == 0 {
            return Err(inv("empty chunk in directory"));
        }
        entries.push(DirEntry { key, kind, offset: LogOffset(off), first_start, last_start, last_end, count, last_bits });
    }
    if c.remaining() != 0 {
        return Err(inv("trailing bytes after directory entries"));
    }
    Ok(Directory { prev, entries })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn directory_round_trip() {
        let e = |k, off| DirEntry {
            key: Key(k),
            kind: ValueKind::F64,
            offset: LogOffset(off),
            first_start: 10,
            last_start: 20,
            last_end: 25,
            count: 3,
            last_bits: 2.5f64.to_bits(),
        };
        let entries = vec![e(1, 0), e(u64::MAX, 70), e(3, 4000)];
        let mut out = Vec::new();
        encode(Some(LogOffset(5000)), &entries, &mut out);
        assert!(out.len() <= MAX_HEADER_BYTES + 3 * MAX_ENTRY_BYTES);
        let d = decode(&out, LogOffset(6000)).unwrap();
        assert_eq!(d, Directory { prev: Some(LogOffset(5000)), entries });
        assert!(decode(&out, LogOffset(4500)).is_err(), "prev must be before the frame");
        for cut in 0..out.len() {
            assert!(decode(&out[..cut], LogOffset(6000)).is_err());
        }
    }
}
