//! The byte layout of a store file: superblock slots and frames. DESIGN.md has
//! the diagrams; each offset below is derived from the previous field.

use crate::codec::Cursor;
use crate::error::{Corruption, Error, Result};
use crate::types::LogOffset;

/// File magic, first 8 bytes of each superblock slot.
pub const MAGIC: [u8; 8] = *b"TCHSTORE";
/// Format version written by this build (see DESIGN.md, "Format history").
pub const FORMAT_VERSION: u8 = 1;
/// Size of one superblock slot region; slot `i` starts at `i * SLOT_REGION`.
pub const SLOT_REGION: u64 = 4096;
/// Bytes before the data region: two slot regions.
pub const HEADER_SIZE: u64 = 2 * SLOT_REGION;
/// Smallest and largest block sizes accepted.
pub const MIN_BLOCK_SIZE: u32 = 4096;
/// See [`MIN_BLOCK_SIZE`].
pub const MAX_BLOCK_SIZE: u32 = 16 << 20;

// Superblock layout (little-endian).
const SB_MAGIC: usize = 0;
const SB_VERSION: usize = SB_MAGIC + 8;
const SB_FLAGS: usize = SB_VERSION + 1;
const SB_RESERVED: usize = SB_FLAGS + 1; // 2 bytes, zero
const SB_BLOCK_SIZE: usize = SB_RESERVED + 2;
const SB_SEQ: usize = SB_BLOCK_SIZE + 4;
const SB_COMMITTED: usize = SB_SEQ + 8;
const SB_LAST_DIR: usize = SB_COMMITTED + 8;
const SB_RECORDS: usize = SB_LAST_DIR + 8;
const SB_CRC: usize = 60; // bytes SB_RECORDS + 8 .. 60 are reserved, zero
/// Encoded size of a superblock.
pub const SUPERBLOCK_SIZE: usize = SB_CRC + 4;

/// The root of a committed state; written alternately into two slots.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Superblock {
    /// Block size of the data region, fixed at creation.
    pub block_size: u32,
    /// Commit sequence number; the valid slot with the larger one wins.
    pub seq: u64,
    /// Data-region bytes covered by this commit; everything after is ignored.
    pub committed: LogOffset,
    /// Start of the newest directory frame, if any.
    pub last_dir: Option<LogOffset>,
    /// Total records committed (checked by `verify`).
    pub records: u64,
}

impl Superblock {
    /// Slot this commit is written to (alternating, so the previous survives).
    pub fn slot(&self) -> u64 {
        self.seq % 2
    }

    /// Encodes the superblock with its checksum.
    pub fn encode(&self) -> [u8; SUPERBLOCK_SIZE] {
        let mut b = [0u8; SUPERBLOCK_SIZE];
        b[SB_MAGIC..SB_MAGIC + 8].copy_from_slice(&MAGIC);
        b[SB_VERSION] = FORMAT_VERSION;
        b[SB_BLOCK_SIZE..SB_BLOCK_SIZE + 4].copy_from_slice(&self.block_size.to_le_bytes());
        b[SB_SEQ..SB_SEQ + 8].copy_from_slice(&self.seq.to_le_bytes());
        b[SB_COMMITTED..SB_COMMITTED + 8].copy_from_slice(&self.committed.0.to_le_bytes());
        let dir = self.last_dir.map_or(0, |o| o.0 + 1);
        b[SB_LAST_DIR..SB_LAST_DIR + 8].copy_from_slice(&dir.to_le_bytes());
        b[SB_RECORDS..SB_RECORDS + 8].copy_from_slice(&self.records.to_le_bytes());
        let crc = crc32fast::hash(&b[..SB_CRC]);
        b[SB_CRC..].copy_from_slice(&crc.to_le_bytes());
        b
    }

    /// Decodes one slot. `Ok(None)`: the slot is empty or damaged (a torn
    /// write); `Err`: a valid slot of an unsupported version.
    pub fn decode(b: &[u8]) -> Result<Option<Superblock>> {
        if b.len() < SUPERBLOCK_SIZE || b[SB_MAGIC..SB_MAGIC + 8] != MAGIC {
            return Ok(None);
        }
        let mut c = Cursor::new(&b[SB_CRC..SUPERBLOCK_SIZE]);
        let stored = c.u32_le().unwrap_or(0);
        if stored != crc32fast::hash(&b[..SB_CRC]) {
            return Ok(None);
        }
        if b[SB_VERSION] != FORMAT_VERSION {
            return Err(Error::UnsupportedVersion { found: b[SB_VERSION], supported: FORMAT_VERSION });
        }
        let mut c = Cursor::new(&b[SB_BLOCK_SIZE..SB_CRC]);
        // The slice is 48 bytes long, so these reads cannot fail.
        let block_size = c.u32_le().unwrap_or(0);
        let seq = c.u64_le().unwrap_or(0);
        let committed = LogOffset(c.u64_le().unwrap_or(0));
        let dir = c.u64_le().unwrap_or(0);
        let records = c.u64_le().unwrap_or(0);
        if !(MIN_BLOCK_SIZE..=MAX_BLOCK_SIZE).contains(&block_size) || !block_size.is_power_of_two() {
            return Ok(None);
        }
        let last_dir = dir.checked_sub(1).map(LogOffset);
        if last_dir.is_some_and(|d| d >= committed) {
            return Ok(None);
        }
        Ok(Some(Superblock { block_size, seq, committed, last_dir, records }))
    }
}

/// What a frame holds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FrameType {
    /// Records of one key (see `chunk`).
    Chunk = 1,
    /// Index entries of chunks written since the previous directory.
    Directory = 2,
}

/// Bytes of frame header: payload length (u32) and type (u8).
pub const FRAME_HEADER: usize = 5;
/// Bytes of frame overhead: header plus trailing CRC-32.
pub const FRAME_OVERHEAD: usize = FRAME_HEADER + 4;

/// Appends a frame (header, payload made of `parts`, CRC) to `out`.
/// The caller keeps the payload below `block_size - FRAME_OVERHEAD`.
pub fn put_frame(out: &mut Vec<u8>, ty: FrameType, parts: &[&[u8]]) {
    let start = out.len();
    let len: usize = parts.iter().map(|p| p.len()).sum();
    out.extend_from_slice(&(len as u32).to_le_bytes());
    out.push(ty as u8);
    for p in parts {
        out.extend_from_slice(p);
    }
    let crc = crc32fast::hash(&out[start..]);
    out.extend_from_slice(&crc.to_le_bytes());
}

/// A frame read from a block: its type and payload.
#[derive(Debug, Clone, Copy)]
pub struct Frame<'a> {
    /// Frame type.
    pub ty: FrameType,
    /// Payload bytes (CRC already checked).
    pub payload: &'a [u8],
    /// Total encoded length, overhead included.
    pub encoded_len: usize,
}

/// Reads the frame starting at `pos` in `block` (whose first byte is `block_start`).
/// `Ok(None)`: padding (a zero header or too few bytes left), the rest of the
/// block holds no frame.
pub fn read_frame(block: &[u8], pos: usize, block_start: LogOffset) -> Result<Option<Frame<'_>>, Corruption> {
    let offset = LogOffset(block_start.0 + pos as u64);
    let rest = block.get(pos..).unwrap_or(&[]);
    if rest.len() < FRAME_OVERHEAD {
        return Ok(None);
    }
    let len = u32::from_le_bytes([rest[0], rest[1], rest[2], rest[3]]) as usize;
    let ty = match rest[4] {
        0 if len == 0 => return Ok(None),
        1 => FrameType::Chunk,
        2 => FrameType::Directory,
        _ => return Err(Corruption::BadFrame { offset, reason: "unknown frame type" }),
    };
    if len > rest.len() - FRAME_OVERHEAD {
        return Err(Corruption::BadFrame { offset, reason: "frame extends past its block" });
    }
    let body = &rest[..FRAME_HEADER + len];
    let crc_at = FRAME_HEADER + len;
    let stored = u32::from_le_bytes([rest[crc_at], rest[crc_at + 1], rest[crc_at + 2], rest[crc_at + 3]]);
    let computed = crc32fast::hash(body);
    if stored != computed {
        return Err(Corruption::Checksum { offset, stored, computed });
    }
    Ok(Some(Frame { ty, payload: &body[FRAME_HEADER..], encoded_len: len + FRAME_OVERHEAD }))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn superblock_round_trip_and_damage() {
        let sb = Superblock { block_size: 65536, seq: 7, committed: LogOffset(1000), last_dir: Some(LogOffset(900)), records: 42 };
        let mut b = sb.encode();
        assert_eq!(Superblock::decode(&b).unwrap(), Some(sb));
        b[20] ^= 1;
        assert_eq!(Superblock::decode(&b).unwrap(), None, "a flipped bit makes the slot invalid");
        assert_eq!(Superblock::decode(&[0u8; 64]).unwrap(), None);
    }

    #[test]
    fn superblock_rejects_future_version() {
        let sb = Superblock { block_size: 4096, seq: 1, committed: LogOffset(0), last_dir: None, records: 0 };
        let mut b = sb.encode();
        b[SB_VERSION] = 9;
        let crc = crc32fast::hash(&b[..SB_CRC]);
        b[SB_CRC..].copy_from_slice(&crc.to_le_bytes());
        assert!(matches!(Superblock::decode(&b), Err(Error::UnsupportedVersion { found: 9, .. })));
    }

    #[test]
    fn frames_round_trip_pad_and_detect_damage() {
        let mut block = Vec::new();
        put_frame(&mut block, FrameType::Chunk, &[b"hel", b"lo"]);
        let first_len = block.len();
        put_frame(&mut block, FrameType::Directory, &[]);
        block.resize(64, 0);
        let f = read_frame(&block, 0, LogOffset(0)).unwrap().unwrap();
        assert_eq!((f.ty, f.payload, f.encoded_len), (FrameType::Chunk, &b"hello"[..], first_len));
        let g = read_frame(&block, first_len, LogOffset(0)).unwrap().unwrap();
        assert_eq!(g.ty, FrameType::Directory);
        assert!(read_frame(&block, first_len + g.encoded_len, LogOffset(0)).unwrap().is_none());
        block[6] ^= 0x40;
        assert!(matches!(read_frame(&block, 0, LogOffset(0)), Err(Corruption::Checksum { .. })));
        block[0] = 200; // length past the block
        assert!(matches!(read_frame(&block, 0, LogOffset(0)), Err(Corruption::BadFrame { .. })));
    }
}
