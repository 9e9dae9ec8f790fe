//! Writes the `metadata` file: plain TSDL text, LTTng's packetized form, or CTF 2 JSON.
//!
//! A metadata packet is a 37-byte header followed by TSDL text and zero padding:
//! `u32 magic = 0x75D11D57`, `u8 uuid[16]`, `u32 checksum = 0`, `u32 content_size` (bits,
//! header included), `u32 packet_size` (bits), `u8 compression_scheme = 0`,
//! `u8 encryption_scheme = 0`, `u8 checksum_scheme = 0`, `u8 major = 1`, `u8 minor = 8`,
//! all in the trace's byte order. lttng-modules uses 4096-byte packets.

use std::path::Path;

use crate::ctf2::to_ctf2;
use crate::error::{io_err, Result};
use crate::schema::{ByteOrder, TraceSchema};
use crate::tsdl::to_tsdl;

/// Magic number of a metadata packet.
pub const METADATA_MAGIC: u32 = 0x75D1_1D57;
/// Size of a metadata packet header, in bytes.
pub const METADATA_HEADER_LEN: usize = 37;
/// Size of the metadata packets lttng-modules writes, in bytes.
pub const METADATA_PACKET_LEN: usize = 4096;

/// How the metadata file is written.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MetadataFormat {
    /// `/* CTF 1.8 */` followed by TSDL text.
    PlainText,
    /// TSDL text split into packets of `packet_len` bytes (LTTng's form).
    Packetized {
        /// Bytes per packet (header included), more than 37.
        packet_len: usize,
    },
    /// CTF 2 metadata: the JSON text sequence of [`crate::ctf2::to_ctf2`] (not packetized).
    /// The data streams are the same as with the TSDL forms.
    Ctf2Json,
}

/// Encodes the metadata of a schema in the given form.
pub fn encode_metadata(schema: &TraceSchema, format: MetadataFormat) -> Vec<u8> {
    match format {
        MetadataFormat::PlainText => format!("/* CTF 1.8 */\n\n{}", to_tsdl(schema)).into_bytes(),
        MetadataFormat::Packetized { packet_len } => packetize(to_tsdl(schema).as_bytes(), schema, packet_len.max(64)),
        MetadataFormat::Ctf2Json => to_ctf2(schema),
    }
}

fn packetize(text: &[u8], schema: &TraceSchema, packet_len: usize) -> Vec<u8> {
    let room = packet_len - METADATA_HEADER_LEN;
    let mut out = Vec::with_capacity(text.len().div_ceil(room) * packet_len);
    let u32b = |v: u32| match schema.byte_order {
        ByteOrder::Little => v.to_le_bytes(),
        ByteOrder::Big => v.to_be_bytes(),
    };
    for chunk in text.chunks(room) {
        let start = out.len();
        out.extend_from_slice(&u32b(METADATA_MAGIC));
        out.extend_from_slice(&schema.uuid);
        out.extend_from_slice(&u32b(0));
        out.extend_from_slice(&u32b(((METADATA_HEADER_LEN + chunk.len()) * 8) as u32));
        out.extend_from_slice(&u32b((packet_len * 8) as u32));
        out.extend_from_slice(&[0, 0, 0, 1, 8]);
        out.extend_from_slice(chunk);
        out.resize(start + packet_len, 0);
    }
    out
}

/// Writes `DIR/metadata`.
pub fn write_metadata(dir: &Path, schema: &TraceSchema, format: MetadataFormat) -> Result<()> {
    schema.validate()?;
    let path = dir.join("metadata");
    std::fs::write(&path, encode_metadata(schema, format)).map_err(io_err(&path))
}
