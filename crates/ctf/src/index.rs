//! Packet indexes: LTTng's `index/*.idx` files when present and consistent, else
//! an index built by decoding packet headers and contexts only.

use std::path::Path;

use crate::decode::{role_index, Cursor, Decoder, SlotsOnly};
use crate::error::{DecodeError, DecodeErrorKind as K, Error};
use crate::ir::Role;
use crate::plan::Plan;
use crate::units::{BitPos, ByteOffset};

/// Where a packet is and what its header and context say.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct PacketInfo {
    /// Byte offset of the packet in its file.
    pub offset: u64,
    /// Total size in bits (multiple of 8).
    pub total_bits: u64,
    /// Content size in bits (events end there).
    pub content_bits: u64,
    /// Stream class id.
    pub stream_class: u64,
    /// Stream instance id, if the header has one.
    pub instance: Option<u64>,
    /// `timestamp_begin` in cycles.
    pub ts_begin: Option<u64>,
    /// `timestamp_end` in cycles.
    pub ts_end: Option<u64>,
    /// `events_discarded` counter snapshot.
    pub discarded: Option<u64>,
    /// `packet_seq_num`.
    pub seq: Option<u64>,
}

/// Magic number of a packet header.
pub const PACKET_MAGIC: u64 = 0xC1FC_1FC1;
/// Magic number of an LTTng index file header.
pub const INDEX_MAGIC: u32 = 0xC1F1_DCC1;

/// Decodes the header and context of the packet at `offset` of `data`, leaving their
/// values in `dec`'s slots and roles. Returns the packet's description and, when the
/// packet claims to run past the end of the file, that error with the packet clipped
/// to the file (so that the events it does hold can still be read).
pub fn read_packet_header(plan: &Plan, dec: &mut Decoder, data: &[u8], offset: u64) -> Result<(PacketInfo, Option<DecodeError>), DecodeError> {
    let buf = &data[offset as usize..];
    let mut cur = Cursor::new(buf, ByteOffset::new(buf.len()).to_bits());
    dec.epoch = dec.epoch.wrapping_add(1);
    dec.clear_roles();
    if let Some(h) = plan.packet_header {
        dec.decode(plan, h, &mut cur, &mut SlotsOnly)?;
    }
    let role = |dec: &Decoder, r: Role| dec.roles[role_index(r)];
    if let Some(m) = role(dec, Role::PacketMagic) {
        if m != PACKET_MAGIC {
            return Err(DecodeError::new(BitPos::ZERO, K::BadMagic(m)));
        }
    }
    let stream_class = match role(dec, Role::StreamClassId) {
        Some(id) => id,
        None if plan.streams.len() == 1 => plan.streams[0].id,
        None => 0,
    };
    let sp = plan.stream(stream_class).ok_or(DecodeError::new(BitPos::ZERO, K::UnknownStreamClass(stream_class)))?;
    if let Some(c) = sp.packet_context {
        dec.decode(plan, c, &mut cur, &mut SlotsOnly)?;
    }
    let file_bits = buf.len() as u64 * 8;
    // Without packet_size the packet ends where its content does (or at end of file).
    let content = role(dec, Role::PacketContentSize);
    let mut total_bits = role(dec, Role::PacketTotalSize).or_else(|| content.map(|c| c.div_ceil(8).saturating_mul(8))).unwrap_or(file_bits);
    let mut content_bits = content.unwrap_or(total_bits);
    let bad = |m: String| DecodeError::new(BitPos::ZERO, K::BadPacketSize(m));
    if total_bits == 0 || total_bits % 8 != 0 {
        return Err(bad(format!("packet_size of {total_bits} bits is not a positive multiple of 8")));
    }
    if content_bits > total_bits {
        return Err(bad(format!("content_size ({content_bits} bits) is larger than packet_size ({total_bits} bits)")));
    }
    let mut overflow = None;
    if total_bits > file_bits {
        overflow = Some(bad(format!("packet_size of {} bytes runs past the end of the file ({} bytes left)", total_bits / 8, buf.len())));
        total_bits = file_bits;
        content_bits = content_bits.min(file_bits);
    }
    if content_bits > total_bits {
        return Err(bad(format!("content_size ({content_bits} bits) is larger than packet_size ({total_bits} bits)")));
    }
    if cur.pos.bits() > content_bits {
        return Err(bad(format!("content_size ({content_bits} bits) is smaller than the packet header and context ({} bits)", cur.pos.bits())));
    }
    let info = PacketInfo {
        offset,
        total_bits,
        content_bits,
        stream_class,
        instance: role(dec, Role::StreamInstanceId),
        ts_begin: role(dec, Role::PacketBeginTimestamp),
        ts_end: role(dec, Role::PacketEndTimestamp),
        discarded: role(dec, Role::DiscardedEventCounter),
        seq: role(dec, Role::PacketSequenceNumber),
    };
    Ok((info, overflow))
}

/// Builds the index of a stream file by reading its packet headers. Returns the good
/// packets and, if one was bad, the error (packets before it stay usable).
pub fn scan_packets(plan: &Plan, data: &[u8], path: &Path) -> (Vec<PacketInfo>, Option<Error>) {
    let mut dec = Decoder::new(plan);
    let mut out = Vec::new();
    let mut offset = 0u64;
    while offset < data.len() as u64 {
        match read_packet_header(plan, &mut dec, data, offset) {
            Ok((p, None)) => {
                offset += p.total_bits / 8;
                out.push(p);
            }
            Ok((p, Some(e))) => {
                out.push(p);
                let err = Error::Stream { path: path.into(), offset: offset + e.bit_pos / 8, kind: e.kind };
                return (out, Some(err));
            }
            Err(e) => {
                let err = Error::Stream { path: path.into(), offset: offset + e.bit_pos / 8, kind: e.kind };
                return (out, Some(err));
            }
        }
    }
    (out, None)
}

/// Reads an LTTng index file. Returns `None` when it is absent, malformed, or does not
/// describe `file_len` bytes of contiguous packets (the caller then scans the file).
pub fn read_index_file(idx_path: &Path, file_len: u64) -> Option<Vec<PacketInfo>> {
    // Only a regular file (a FIFO would block the read forever), links followed.
    if !std::fs::metadata(idx_path).ok()?.is_file() {
        return None;
    }
    let b = std::fs::read(idx_path).ok()?;
    let be32 = |o: usize| Some(u32::from_be_bytes(b.get(o..o + 4)?.try_into().ok()?));
    let be64 = |o: usize| Some(u64::from_be_bytes(b.get(o..o + 8)?.try_into().ok()?));
    if be32(0)? != INDEX_MAGIC {
        return None;
    }
    let (major, minor, entry_len) = (be32(4)?, be32(8)?, be32(12)? as usize);
    if major != 1 || entry_len < 56 {
        return None;
    }
    let has_v11 = minor >= 1 && entry_len >= 72;
    let mut out = Vec::new();
    let mut o = 16;
    let mut expect_offset = 0;
    while o + entry_len <= b.len() {
        let p = PacketInfo {
            offset: be64(o)?,
            total_bits: be64(o + 8)?,
            content_bits: be64(o + 16)?,
            ts_begin: Some(be64(o + 24)?),
            ts_end: Some(be64(o + 32)?),
            discarded: Some(be64(o + 40)?),
            stream_class: be64(o + 48)?,
            instance: if has_v11 { Some(be64(o + 56)?) } else { None },
            seq: if has_v11 { Some(be64(o + 64)?) } else { None },
        };
        let ok = p.offset == expect_offset
            && p.total_bits > 0
            && p.total_bits.is_multiple_of(8)
            && p.content_bits <= p.total_bits
            && p.offset.checked_add(p.total_bits / 8).is_some_and(|e| e <= file_len);
        if !ok {
            return None;
        }
        expect_offset = p.offset + p.total_bits / 8;
        out.push(p);
        o += entry_len;
    }
    (o == b.len() && expect_offset == file_len).then_some(out)
}
