//! State shared by the writer and every reader, and the recovery on open.

use crate::backend::Backend;
use crate::cache::BlockCache;
use crate::directory;
use crate::error::{Corruption, Error, Result};
use crate::format::{self, Frame, FrameType, Superblock, FRAME_OVERHEAD, HEADER_SIZE, SLOT_REGION, SUPERBLOCK_SIZE};
use crate::index::Index;
use crate::types::{BlockId, LogOffset};
use std::sync::{Arc, RwLock, RwLockReadGuard, RwLockWriteGuard};

/// Settings of a store. Only `block_size` is stored in the file; the others
/// may change from one opening to the next.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Config {
    /// Size of a block in bytes: a power of two from 4 KiB to 16 MiB, fixed when
    /// the file is created (an existing file keeps its own). Default 64 KiB.
    pub block_size: u32,
    /// A key's open chunk is sealed once its encoded records reach this many
    /// bytes (at most `block_size / 4`). Smaller: faster point queries, larger
    /// index. Default 512.
    pub chunk_bytes: usize,
    /// Blocks kept by the block cache. Default 256 (16 MiB with 64 KiB blocks).
    pub cache_blocks: usize,
    /// Bytes of open chunks the writer may hold before sealing them all.
    /// Default 8 MiB.
    pub write_buffer_bytes: usize,
    /// Granularity degree k used by `update`: one record per k changes of a
    /// key's value. Default 1.
    pub granularity: u32,
}

impl Default for Config {
    fn default() -> Self {
        Config { block_size: 64 << 10, chunk_bytes: 512, cache_blocks: 256, write_buffer_bytes: 8 << 20, granularity: 1 }
    }
}

impl Config {
    /// Checks the ranges documented on each field.
    pub fn validate(&self) -> Result<()> {
        if !(format::MIN_BLOCK_SIZE..=format::MAX_BLOCK_SIZE).contains(&self.block_size) || !self.block_size.is_power_of_two() {
            return Err(Error::Config("block_size must be a power of two in 4 KiB..=16 MiB"));
        }
        if self.chunk_bytes == 0 || self.chunk_bytes > self.block_size as usize / 4 {
            return Err(Error::Config("chunk_bytes must be in 1..=block_size/4"));
        }
        if self.granularity == 0 {
            return Err(Error::Config("granularity must be at least 1"));
        }
        Ok(())
    }
}

/// Backend, cache and index, behind an `Arc` shared by the writer and readers.
#[derive(Debug)]
pub(crate) struct Shared {
    pub backend: Box<dyn Backend>,
    pub block_size: u32,
    pub cache: BlockCache,
    index: RwLock<Index>,
}

impl Shared {
    pub fn new(backend: Box<dyn Backend>, block_size: u32, cache_blocks: usize, index: Index) -> Arc<Self> {
        Arc::new(Shared { backend, block_size, cache: BlockCache::new(cache_blocks), index: RwLock::new(index) })
    }

    /// Read access to the index. A writer that panicked mid-publish leaves the
    /// index as a prefix of its work, which is still consistent: poisoning is ignored.
    pub fn index(&self) -> RwLockReadGuard<'_, Index> {
        self.index.read().unwrap_or_else(|e| e.into_inner())
    }

    pub fn index_mut(&self) -> RwLockWriteGuard<'_, Index> {
        self.index.write().unwrap_or_else(|e| e.into_inner())
    }

    /// Runs `f` on the checked frame at `offset`, which must end before `limit`.
    pub fn with_frame<R>(&self, offset: LogOffset, limit: LogOffset, f: impl FnOnce(Frame<'_>) -> Result<R>) -> Result<R> {
        let bs = self.block_size;
        let block = offset.block(bs);
        let pos = offset.in_block(bs);
        let load = || load_block(&*self.backend, bs, block, limit);
        let mut data = self.cache.get(block, pos + FRAME_OVERHEAD, load)?;
        if let Some(h) = data.get(pos..pos + 4) {
            let need = pos + FRAME_OVERHEAD + u32::from_le_bytes([h[0], h[1], h[2], h[3]]) as usize;
            if need > data.len() && need <= bs as usize {
                data = self.cache.get(block, need, load)?;
            }
        }
        frame_in(&data, offset, bs, f)
    }
}

/// Reads the bytes of `block` below `limit` (bytes at or past `limit` may be in
/// the middle of being written and must not enter the cache).
pub(crate) fn load_block(backend: &dyn Backend, bs: u32, block: BlockId, limit: LogOffset) -> Result<Vec<u8>> {
    let start = block.start(bs);
    let len = limit.0.saturating_sub(start.0).min(u64::from(bs)) as usize;
    let mut buf = vec![0u8; len];
    let pos = HEADER_SIZE + start.0;
    let n = backend.read_at(pos, &mut buf).map_err(|e| Error::io("read", pos, e))?;
    buf.truncate(n);
    Ok(buf)
}

/// Runs `f` on the checked frame at `offset` inside the block bytes `data`.
fn frame_in<R>(data: &[u8], offset: LogOffset, bs: u32, f: impl FnOnce(Frame<'_>) -> Result<R>) -> Result<R> {
    let bad = Corruption::BadFrame { offset, reason: "frame missing or past the readable data" };
    match format::read_frame(data, offset.in_block(bs), offset.block(bs).start(bs))? {
        Some(frame) => f(frame),
        None => Err(bad.into()),
    }
}

/// What `recover` finds in an existing medium.
pub(crate) struct Recovered {
    pub superblock: Superblock,
    pub index: Index,
}

/// Reads the newest valid superblock and rebuilds the index from the
/// directory chain. Reads no chunk. `Ok(None)`: the medium is empty.
pub(crate) fn recover(backend: &dyn Backend) -> Result<Option<Recovered>> {
    let len = backend.size().map_err(|e| Error::io("stat", 0, e))?;
    if len == 0 {
        return Ok(None);
    }
    let mut best: Option<Superblock> = None;
    for slot in 0..2 {
        let mut b = [0u8; SUPERBLOCK_SIZE];
        let pos = slot * SLOT_REGION;
        let n = backend.read_at(pos, &mut b).map_err(|e| Error::io("read superblock", pos, e))?;
        if let Some(sb) = Superblock::decode(&b[..n])? {
            if best.is_none_or(|b| sb.seq > b.seq) {
                best = Some(sb);
            }
        }
    }
    let Some(sb) = best else {
        // A crash while creating the file, before anything was committed.
        if len <= HEADER_SIZE {
            return Ok(None);
        }
        return Err(Corruption::NoSuperblock.into());
    };
    let available = len.saturating_sub(HEADER_SIZE);
    if sb.committed.0 > available {
        return Err(Corruption::Truncated { committed: sb.committed, available }.into());
    }
    // The chain runs from the newest directory to the oldest, the index is built
    // oldest first: the walk keeps only the frames' offsets, and the entries are
    // decoded again, a frame at a time, as they are indexed (a store of millions of
    // chunks would otherwise hold all their entries, 64 bytes each, beside its index).
    let read_dir = |offset: LogOffset| -> Result<directory::Directory> {
        let data = load_block(backend, sb.block_size, offset.block(sb.block_size), sb.committed)?;
        frame_in(&data, offset, sb.block_size, |frame| {
            if frame.ty != FrameType::Directory {
                return Err(Corruption::Invariant { offset, reason: "directory chain points to a non-directory frame" }.into());
            }
            Ok(directory::decode(frame.payload, offset)?)
        })
    };
    let mut dirs: Vec<LogOffset> = Vec::new();
    let mut next = sb.last_dir;
    // Terminates: `directory::decode` demands prev < offset, so offsets strictly decrease.
    while let Some(offset) = next {
        next = read_dir(offset)?.prev;
        dirs.push(offset);
    }
    let mut index = Index { visible: sb.committed, ..Index::default() };
    for &offset in dirs.iter().rev() {
        for e in &read_dir(offset)?.entries {
            index.add(e).map_err(|reason| Corruption::Invariant { offset, reason })?;
        }
    }
    if index.records != sb.records {
        return Err(Corruption::Invariant { offset: sb.committed, reason: "record count differs from superblock" }.into());
    }
    Ok(Some(Recovered { superblock: sb, index }))
}
