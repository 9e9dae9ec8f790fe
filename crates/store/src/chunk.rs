//! Chunks: a run of consecutive records of one key, delta-encoded.
//!
//! Payload layout (DESIGN.md, "Chunk frame"):
//! `key varint | kind u8 | count varint | first_start varint | count × record`,
//! each record being `gap varint | duration varint | value delta`, where
//! `gap = start - previous end` (the first record's "previous end" is
//! `first_start`, its previous value 0).

use crate::codec::{put_value_delta, put_varint, Cursor, DecodeError};
use crate::error::Corruption;
use crate::types::{Key, LogOffset, Timestamp, ValueKind};

/// Smallest encoded record: three one-byte fields. Bounds `count` on decode.
const MIN_RECORD_BYTES: usize = 3;

/// The open (still growing) chunk of one key, held by the writer.
#[derive(Debug, Clone)]
pub struct ChunkBuilder {
    /// Value kind of every record.
    pub kind: ValueKind,
    /// Records so far.
    pub count: u32,
    /// Start of the first record.
    pub first_start: u64,
    /// Start of the last record.
    pub last_start: u64,
    /// End of the last record.
    pub prev_end: u64,
    /// Value bits of the last record.
    pub prev_bits: u64,
    /// Encoded records.
    pub body: Vec<u8>,
}

impl ChunkBuilder {
    /// An empty chunk whose first record starts at `first_start`.
    pub fn new(kind: ValueKind, first_start: u64, capacity: usize) -> Self {
        ChunkBuilder { kind, count: 0, first_start, last_start: first_start, prev_end: first_start, prev_bits: 0, body: Vec::with_capacity(capacity) }
    }

    /// Appends a record; the caller has checked `prev_end <= start <= end`.
    #[inline]
    pub fn push(&mut self, start: u64, end: u64, bits: u64) {
        put_varint(&mut self.body, start - self.prev_end);
        put_varint(&mut self.body, end - start);
        put_value_delta(&mut self.body, self.kind, self.prev_bits, bits);
        self.count += 1;
        self.last_start = start;
        self.prev_end = end;
        self.prev_bits = bits;
    }

    /// Encodes the payload header for `key` into `out` (the body follows it).
    pub fn header(&self, key: Key, out: &mut Vec<u8>) {
        put_varint(out, key.0);
        out.push(self.kind.tag());
        put_varint(out, u64::from(self.count));
        put_varint(out, self.first_start);
    }
}

/// Header fields of a stored chunk.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ChunkHeader {
    /// Owner key.
    pub key: Key,
    /// Value kind.
    pub kind: ValueKind,
    /// Number of records.
    pub count: u64,
    /// Start of the first record.
    pub first_start: Timestamp,
}

/// A decoded record: `[start, end)` with raw value bits.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RawRecord {
    /// Inclusive start.
    pub start: u64,
    /// Exclusive end.
    pub end: u64,
    /// Value bits (see `Value::to_bits`).
    pub bits: u64,
}

/// Decodes the records of a chunk one by one, without allocating.
#[derive(Debug, Clone)]
pub struct ChunkDecoder<'a> {
    header: ChunkHeader,
    cursor: Cursor<'a>,
    left: u64,
    prev_end: u64,
    prev_bits: u64,
    offset: LogOffset,
}

impl<'a> ChunkDecoder<'a> {
    /// Parses the header of the chunk payload found in the frame at `offset`.
    pub fn new(payload: &'a [u8], offset: LogOffset) -> Result<Self, Corruption> {
        let mut cursor = Cursor::new(payload);
        let bad = |cause| Corruption::Payload { offset, what: "chunk header", cause };
        let key = Key(cursor.varint().map_err(bad)?);
        let kind = ValueKind::from_tag(cursor.u8().map_err(bad)?).ok_or(Corruption::Invariant { offset, reason: "unknown value kind" })?;
        let count = cursor.varint().map_err(bad)?;
        let first_start = cursor.varint().map_err(bad)?;
        if count == 0 || count > (cursor.remaining() / MIN_RECORD_BYTES) as u64 {
            return Err(Corruption::Invariant { offset, reason: "record count does not fit the chunk" });
        }
        let header = ChunkHeader { key, kind, count, first_start: Timestamp(first_start) };
        Ok(ChunkDecoder { header, cursor, left: count, prev_end: first_start, prev_bits: 0, offset })
    }

    /// The chunk's header.
    pub fn header(&self) -> ChunkHeader {
        self.header
    }

    /// Bytes not consumed by the records decoded so far.
    pub fn remaining_bytes(&self) -> usize {
        self.cursor.remaining()
    }

    #[inline]
    fn decode_one(&mut self) -> Result<RawRecord, Corruption> {
        let offset = self.offset;
        let bad = |cause: DecodeError| Corruption::Payload { offset, what: "chunk record", cause };
        let gap = self.cursor.varint().map_err(bad)?;
        let dur = self.cursor.varint().map_err(bad)?;
        let bits = self.cursor.value_delta(self.header.kind, self.prev_bits).map_err(bad)?;
        let overflow = Corruption::Invariant { offset, reason: "record time overflows 64 bits" };
        let start = self.prev_end.checked_add(gap).ok_or(overflow)?;
        let end = start.checked_add(dur).ok_or(overflow)?;
        self.prev_end = end;
        self.prev_bits = bits;
        Ok(RawRecord { start, end, bits })
    }

    /// The value bits of the last record starting at or before `t`, if any.
    pub fn value_at(self, t: u64) -> Result<Option<u64>, Corruption> {
        let mut found = None;
        for r in self {
            let r = r?;
            if r.start > t {
                break;
            }
            found = Some(r.bits);
        }
        Ok(found)
    }
}

impl Iterator for ChunkDecoder<'_> {
    type Item = Result<RawRecord, Corruption>;

    fn next(&mut self) -> Option<Self::Item> {
        if self.left == 0 {
            return None;
        }
        match self.decode_one() {
            Ok(r) => {
                self.left -= 1;
                Some(Ok(r))
            }
            Err(e) => {
                self.left = 0; // stop after an error
                Some(Err(e))
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn encode(b: &ChunkBuilder, key: Key) -> Vec<u8> {
        let mut out = Vec::new();
        b.header(key, &mut out);
        out.extend_from_slice(&b.body);
        out
    }

    #[test]
    fn chunk_round_trip_with_gaps_and_empty_records() {
        let mut b = ChunkBuilder::new(ValueKind::U64, 100, 64);
        b.push(100, 150, 1);
        b.push(150, 150, 2); // empty interval
        b.push(170, 200, 10); // gap before it
        let payload = encode(&b, Key(9));
        let d = ChunkDecoder::new(&payload, LogOffset(0)).unwrap();
        assert_eq!(d.header(), ChunkHeader { key: Key(9), kind: ValueKind::U64, count: 3, first_start: Timestamp(100) });
        let recs: Vec<_> = d.clone().map(Result::unwrap).collect();
        assert_eq!(recs[2], RawRecord { start: 170, end: 200, bits: 10 });
        assert_eq!(d.clone().value_at(99).unwrap(), None);
        assert_eq!(d.clone().value_at(149).unwrap(), Some(1));
        assert_eq!(d.clone().value_at(150).unwrap(), Some(2));
        assert_eq!(d.clone().value_at(160).unwrap(), Some(2), "a gap holds the previous value");
        assert_eq!(d.value_at(1000).unwrap(), Some(10));
    }

    #[test]
    fn truncated_or_lying_chunks_are_errors() {
        let mut b = ChunkBuilder::new(ValueKind::I64, 0, 64);
        for i in 0..10 {
            b.push(i * 1000, i * 1000 + 1000, i * 300);
        }
        let payload = encode(&b, Key(1));
        for cut in 0..payload.len() {
            let r = ChunkDecoder::new(&payload[..cut], LogOffset(0)).and_then(|d| d.collect::<Result<Vec<_>, _>>());
            assert!(r.is_err(), "cut at {cut} must fail");
        }
        let mut lying = payload.clone();
        lying[2] = 0x7f; // count far beyond the bytes present
        assert!(ChunkDecoder::new(&lying, LogOffset(0)).is_err());
    }
}
