//! Loading a trace's `metadata` file: packetized (binary framing, either byte order)
//! or plain text, then the TSDL front end.

use std::path::Path;

use crate::error::{Error, Result};
use crate::ir::{MetadataFormat, TraceClass};

/// Magic number of a metadata packet header.
pub const METADATA_PACKET_MAGIC: u32 = 0x75D1_1D57;
/// Size in bytes of a metadata packet header.
const HEADER_LEN: usize = 37;

/// The text of a metadata file and how it was framed.
#[derive(Debug, Clone)]
pub struct MetadataText {
    /// The TSDL text.
    pub text: String,
    /// Plain or packetized.
    pub format: MetadataFormat,
    /// UUID of the metadata packets, when packetized.
    pub packet_uuid: Option<[u8; 16]>,
    /// Byte order of the metadata packet headers, when packetized.
    pub packet_byte_order: Option<crate::ir::ByteOrder>,
}

/// Extracts the TSDL text from the bytes of a metadata file.
pub fn metadata_text(bytes: &[u8], path: &Path) -> Result<MetadataText> {
    let le = bytes.len() >= 4 && u32::from_le_bytes(bytes[..4].try_into().unwrap_or_default()) == METADATA_PACKET_MAGIC;
    let be = bytes.len() >= 4 && u32::from_be_bytes(bytes[..4].try_into().unwrap_or_default()) == METADATA_PACKET_MAGIC;
    if !le && !be {
        if crate::ctf2::is_ctf2(bytes) {
            return Ok(MetadataText {
                text: String::from_utf8_lossy(bytes).into_owned(),
                format: MetadataFormat::Ctf2Json,
                packet_uuid: None,
                packet_byte_order: None,
            });
        }
        if bytes.contains(&0) {
            let nul = bytes.iter().position(|b| *b == 0).unwrap_or(0);
            let line = 1 + bytes[..nul].iter().filter(|b| **b == b'\n').count() as u32;
            return Err(Error::Metadata { path: path.into(), line, msg: "NUL character in plain-text metadata".into() });
        }
        return Ok(MetadataText {
            text: String::from_utf8_lossy(bytes).into_owned(),
            format: MetadataFormat::TsdlText,
            packet_uuid: None,
            packet_byte_order: None,
        });
    }
    let rd = |b: &[u8]| -> u32 {
        let a: [u8; 4] = b.try_into().unwrap_or_default();
        if le {
            u32::from_le_bytes(a)
        } else {
            u32::from_be_bytes(a)
        }
    };
    let mut text = Vec::new();
    let mut off = 0usize;
    let mut uuid = None;
    let bad = |off: usize, msg: String| Error::MetadataPacket { path: path.into(), offset: off as u64, msg };
    while off < bytes.len() {
        let h = bytes.get(off..off + HEADER_LEN).ok_or_else(|| bad(off, "truncated metadata packet header".into()))?;
        if rd(&h[0..4]) != METADATA_PACKET_MAGIC {
            return Err(bad(off, format!("bad metadata packet magic 0x{:08x}", rd(&h[0..4]))));
        }
        let content_bits = rd(&h[24..28]) as usize;
        let packet_bits = rd(&h[28..32]) as usize;
        let (compression, encryption, checksum, major, minor) = (h[32], h[33], h[34], h[35], h[36]);
        if (major, minor) != (1, 8) && (major, minor) != (2, 0) {
            return Err(bad(off, format!("invalid metadata packet version {major}.{minor} (expecting 1.8 or 2.0)")));
        }
        if compression != 0 || encryption != 0 || checksum != 0 {
            return Err(bad(off, "compressed, encrypted or checksummed metadata packets are not supported".into()));
        }
        if !content_bits.is_multiple_of(8) || !packet_bits.is_multiple_of(8) || content_bits < HEADER_LEN * 8 || content_bits > packet_bits {
            return Err(bad(off, format!("bad metadata packet sizes: content {content_bits} bits, packet {packet_bits} bits")));
        }
        let end = off + content_bits / 8;
        if end > bytes.len() {
            return Err(bad(off, "metadata packet runs past the end of the file".into()));
        }
        let mut u = [0u8; 16];
        u.copy_from_slice(&h[4..20]);
        uuid.get_or_insert(u);
        text.extend_from_slice(&bytes[off + HEADER_LEN..end]);
        off += packet_bits / 8;
    }
    // Content may be NUL-padded at the end of the last packet.
    while text.last() == Some(&0) {
        text.pop();
    }
    if let Some(nul) = text.iter().position(|b| *b == 0) {
        let line = 1 + text[..nul].iter().filter(|b| **b == b'\n').count() as u32;
        return Err(Error::Metadata { path: path.into(), line, msg: "NUL character in metadata text".into() });
    }
    Ok(MetadataText {
        // Valid UTF-8 (the usual case) is taken as it is, without a copy.
        text: String::from_utf8(text).unwrap_or_else(|e| String::from_utf8_lossy(e.as_bytes()).into_owned()),
        format: MetadataFormat::TsdlPacketized,
        packet_uuid: uuid,
        packet_byte_order: Some(if le { crate::ir::ByteOrder::Little } else { crate::ir::ByteOrder::Big }),
    })
}

/// Reads and parses the metadata file at `path`.
pub fn load_metadata(path: &Path) -> Result<(TraceClass, MetadataFormat)> {
    let bytes = std::fs::read(path).map_err(|err| Error::Io { path: path.into(), err })?;
    parse_metadata(&bytes, path)
}

/// Parses metadata bytes (`path` is only used in errors).
pub fn parse_metadata(bytes: &[u8], path: &Path) -> Result<(TraceClass, MetadataFormat)> {
    let mt = metadata_text(bytes, path)?;
    if mt.format == MetadataFormat::Ctf2Json || crate::ctf2::is_ctf2(mt.text.as_bytes()) {
        let tc = crate::ctf2::parse_ctf2(mt.text.as_bytes()).map_err(|(frag, msg)| Error::Metadata {
            path: path.into(),
            line: frag,
            msg: format!("CTF 2 fragment {frag}: {msg}"),
        })?;
        return Ok((tc, MetadataFormat::Ctf2Json));
    }
    let tc = crate::tsdl::parse_tsdl(&mt.text).map_err(|(line, msg)| Error::Metadata { path: path.into(), line, msg })?;
    if let Some(packet_order) = mt.packet_byte_order {
        if packet_order != tc.byte_order {
            return Err(Error::MetadataPacket {
                path: path.into(),
                offset: 0,
                msg: format!("metadata packets are {packet_order:?}-endian but the trace's byte_order is {:?}", tc.byte_order),
            });
        }
    }
    Ok((tc, mt.format))
}
