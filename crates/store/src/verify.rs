//! `verify`: a full integrity check that reads every visible byte once.

use crate::chunk::ChunkDecoder;
use crate::directory;
use crate::error::{Corruption, Result};
use crate::format::{read_frame, FrameType};
use crate::index::KeyMap;
use crate::reader::Reader;
use crate::shared::load_block;
use crate::types::{BlockId, Key, LogOffset};
use std::collections::HashMap;

/// What [`Reader::verify`] checked.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct VerifyReport {
    /// Blocks read.
    pub blocks: u64,
    /// Chunk frames decoded.
    pub chunks: u64,
    /// Directory frames decoded.
    pub directories: u64,
    /// Records decoded.
    pub records: u64,
    /// Keys seen.
    pub keys: u64,
}

impl Reader {
    /// Reads every frame up to the visible end: checksums, decodes every chunk
    /// and directory, checks per-key time order and that the in-memory index
    /// names exactly the chunks found. The first problem is returned as an
    /// error with its offset.
    pub fn verify(&self) -> Result<VerifyReport> {
        let shared = &self.shared;
        let bs = shared.block_size;
        // One consistent snapshot of the index: the writer publishes chunks
        // and moves `visible` under the same lock.
        let (limit, indexed, index_records, keys) = {
            let index = shared.index();
            let indexed: HashMap<LogOffset, (Key, u64)> =
                index.keys.iter().flat_map(|(&key, k)| k.chunks.iter().map(move |c| (c.offset, (key, c.first_start)))).collect();
            (index.visible, indexed, index.records, index.keys.len() as u64)
        };
        let mut report = VerifyReport::default();
        // Chunk offset -> (key, first start) for the cross-check with the index.
        let mut chunks: HashMap<LogOffset, (Key, u64)> = HashMap::new();
        let mut last_end: KeyMap<u64> = KeyMap::default();
        let blocks = limit.0.div_ceil(u64::from(bs));
        for b in 0..blocks {
            let block = BlockId(b);
            let start = block.start(bs);
            let data = load_block(&*shared.backend, bs, block, limit)?;
            report.blocks += 1;
            let mut pos = 0usize;
            // Each turn consumes a frame of at least FRAME_OVERHEAD bytes.
            while start.0 + (pos as u64) < limit.0 {
                let offset = LogOffset(start.0 + pos as u64);
                let Some(frame) = read_frame(&data, pos, start)? else {
                    // Padding to the end of the block is written as zeros.
                    if data[pos.min(data.len())..].iter().any(|&b| b != 0) {
                        return Err(Corruption::BadFrame { offset, reason: "non-zero bytes in block padding" }.into());
                    }
                    break;
                };
                pos += frame.encoded_len;
                match frame.ty {
                    FrameType::Directory => {
                        directory::decode(frame.payload, offset)?;
                        report.directories += 1;
                    }
                    FrameType::Chunk => {
                        let mut d = ChunkDecoder::new(frame.payload, offset)?;
                        let h = d.header();
                        let prev = last_end.entry(h.key).or_insert(0);
                        let mut first = true;
                        for r in d.by_ref() {
                            let r = r?;
                            if r.start < *prev || (first && r.start != h.first_start.0) {
                                return Err(Corruption::Invariant { offset, reason: "records of a key out of order" }.into());
                            }
                            first = false;
                            *prev = r.end;
                            report.records += 1;
                        }
                        if d.remaining_bytes() != 0 {
                            return Err(Corruption::Invariant { offset, reason: "trailing bytes after chunk records" }.into());
                        }
                        chunks.insert(offset, (h.key, h.first_start.0));
                        report.chunks += 1;
                    }
                }
            }
        }
        for (offset, entry) in &indexed {
            if chunks.get(offset) != Some(entry) {
                return Err(Corruption::Invariant { offset: *offset, reason: "index entry does not match a chunk" }.into());
            }
        }
        if indexed.len() != chunks.len() || index_records != report.records {
            return Err(Corruption::Invariant { offset: limit, reason: "chunks or records not covered by the index" }.into());
        }
        report.keys = keys;
        Ok(report)
    }
}
