//! The writer: [`HistoryStore`] appends records, seals chunks into blocks and
//! runs the commit protocol (DESIGN.md, "Commit protocol").

use crate::backend::{Backend, FileBackend, MemoryBackend};
use crate::chunk::ChunkBuilder;
use crate::directory::{self, DirEntry, MAX_ENTRY_BYTES, MAX_HEADER_BYTES};
use crate::error::{Corruption, Error, Result};
use crate::format::{put_frame, FrameType, Superblock, FRAME_OVERHEAD, HEADER_SIZE, SLOT_REGION};
use crate::index::{Index, KeyMap};
use crate::reader::Reader;
use crate::sampler::Sampler;
use crate::shared::{recover, Config, Shared};
use crate::types::{Key, LogOffset, Record, Timestamp, Value, ValueKind};
use std::path::Path;

/// Bytes of a chunk payload header at most (key, kind, count, first start).
const MAX_CHUNK_HEADER: usize = 31;

/// Writer-side state of one key, kept only while the key has something pending (an
/// open chunk, a sealed chunk not yet published, or a sampler): once published, the
/// shared index holds its kind and last end, and [`HistoryStore::flush`] drops it, so
/// the writer's memory follows the keys written since the last flush, not all keys.
/// The rare parts are boxed: a state is 32 bytes.
#[derive(Debug)]
pub(crate) struct KeyState {
    pub kind: ValueKind,
    /// End of the key's last appended record (0 before the first).
    pub last_end: u64,
    pub chunk: Option<Box<ChunkBuilder>>,
    pub sampler: Option<Box<Sampler>>,
}

impl KeyState {
    /// Whether the state may be dropped after a flush (the index then knows it all).
    fn idle(&self) -> bool {
        self.chunk.is_none() && self.sampler.is_none()
    }
}

/// The single writer of a store; dereferences to a [`Reader`] for queries.
///
/// Records become visible to readers at [`flush`](Self::flush) and durable at
/// [`commit`](Self::commit). Dropping the store without `commit` loses what
/// was appended since the last commit (as a crash would).
#[derive(Debug)]
pub struct HistoryStore {
    reader: Reader,
    config: Config,
    block_size: u32,
    keys: KeyMap<KeyState>,
    /// Bytes of the current block, from its start up to `end`.
    tail: Vec<u8>,
    /// Start of the current block.
    tail_start: LogOffset,
    /// Bytes of `tail` already written to the medium.
    tail_written: usize,
    /// Open-chunk bytes held in memory.
    buffered: usize,
    /// Chunks sealed since the last commit (to list in a directory); the
    /// first `published` of them are already in the shared index.
    uncommitted: Vec<DirEntry>,
    published: usize,
    superblock: Superblock,
    records: u64,
    /// Written without an index (see [`HistoryStore::create_unindexed`]): the latest
    /// key taken, if any.
    unindexed: Option<Option<Key>>,
}

impl HistoryStore {
    /// Opens the store file at `path`, creating it if missing. After a crash
    /// it reopens at the last commit; uncommitted bytes are cut off.
    pub fn open(path: &Path, config: Config) -> Result<Self> {
        let backend = FileBackend::open(path, true).map_err(|e| Error::io("open", 0, e))?;
        Self::with_backend(Box::new(backend), config)
    }

    /// A store kept in memory, with the same interface and format.
    pub fn in_memory(config: Config) -> Result<Self> {
        Self::with_backend(Box::new(MemoryBackend::new()), config)
    }

    /// Opens the store on `backend`, initialising it if empty.
    pub fn with_backend(backend: Box<dyn Backend>, config: Config) -> Result<Self> {
        config.validate()?;
        let (superblock, index) = match recover(&*backend)? {
            Some(r) => (r.superblock, r.index),
            None => {
                let sb = Superblock { block_size: config.block_size, seq: 0, committed: LogOffset(0), last_dir: None, records: 0 };
                write_superblock(&*backend, &sb)?;
                (sb, Index::default())
            }
        };
        let bs = superblock.block_size;
        if config.chunk_bytes > bs as usize / 4 {
            return Err(Error::Config("chunk_bytes must be at most block_size/4 of the file"));
        }
        // Cut whatever a crashed session wrote after the last commit.
        let end = HEADER_SIZE + superblock.committed.0;
        backend.set_len(end).map_err(|e| Error::io("truncate", end, e))?;
        let tail_start = LogOffset(superblock.committed.0 - u64::from(superblock.committed.in_block(bs) as u32));
        let mut tail = vec![0u8; superblock.committed.in_block(bs)];
        let pos = HEADER_SIZE + tail_start.0;
        backend.read_at(pos, &mut tail).map_err(|e| Error::io("read tail", pos, e))?;
        let records = index.records;
        let shared = Shared::new(backend, bs, config.cache_blocks, index);
        Ok(HistoryStore {
            reader: Reader { shared },
            config,
            block_size: bs,
            keys: KeyMap::default(),
            tail_written: tail.len(),
            tail,
            tail_start,
            buffered: 0,
            uncommitted: Vec::new(),
            published: 0,
            superblock,
            records,
            unindexed: None,
        })
    }

    /// Creates the store file at `path` (truncating what it held) for writing only:
    /// the records appended are not indexed in memory, so they are not visible to
    /// this handle's queries, and the writer holds one key's open chunk and the
    /// directory entries not yet committed, whatever the number of keys (commit
    /// now and then to bound the latter). Keys must come in increasing order, each
    /// key's records in time order; the file is an ordinary store ([`Reader::open_read_only`]).
    pub fn create_unindexed(path: &Path, config: Config) -> Result<Self> {
        let backend = FileBackend::open(path, true).map_err(|e| Error::io("open", 0, e))?;
        backend.set_len(0).map_err(|e| Error::io("truncate", 0, e))?;
        let mut st = Self::with_backend(Box::new(backend), config)?;
        st.unindexed = Some(None);
        Ok(st)
    }

    /// Starts a new run of keys in a store made by [`create_unindexed`](Self::create_unindexed):
    /// the next key may be any key, even one written before, whose new records must
    /// then start at or after the end of its earlier ones (checked when the file is
    /// opened, not here: the writer keeps no state of finished keys). A file written in
    /// runs holds, per key, one chunk or more per run, in time order. A no-op on an
    /// indexed store.
    pub fn restart_keys(&mut self) -> Result<()> {
        if let Some(Some(l)) = self.unindexed {
            let chunk = self.keys.remove(&l).and_then(|s| s.chunk);
            self.seal(l, chunk)?;
            self.unindexed = Some(None);
        }
        Ok(())
    }

    /// A query handle that other threads may keep.
    pub fn reader(&self) -> Reader {
        self.reader.clone()
    }

    /// The configuration in use.
    pub fn config(&self) -> &Config {
        &self.config
    }

    /// Appends a record. Per key, records must not overlap and must arrive in
    /// time order (`start >= previous end`, `end >= start`), and keep the
    /// key's value kind.
    pub fn append(&mut self, record: Record) -> Result<()> {
        let Record { key, value, start, end } = record;
        if let Some(last) = self.unindexed {
            self.next_unindexed_key(key, last)?;
        }
        let state = Self::state_of(&mut self.keys, &self.reader, key, value.kind())?;
        if start.0 < state.last_end || end < start {
            return Err(Error::OutOfOrder { key, start, end, prev_end: Timestamp(state.last_end) });
        }
        push_record(state, &mut self.buffered, start.0, end.0, value.to_bits());
        self.records += 1;
        if state.chunk.as_ref().is_some_and(|c| c.body.len() >= self.config.chunk_bytes) {
            let chunk = state.chunk.take();
            self.seal(key, chunk)?;
        }
        if self.buffered > self.config.write_buffer_bytes {
            self.seal_all()?;
        }
        Ok(())
    }

    /// Checks `key` against `last`, the latest key of an unindexed store; at a new
    /// key, seals the previous one's chunk and forgets its state (it cannot return).
    fn next_unindexed_key(&mut self, key: Key, last: Option<Key>) -> Result<()> {
        match last {
            Some(l) if key < l => Err(Error::KeyOrder { key, after: l }),
            Some(l) if key == l => Ok(()),
            _ => {
                if let Some(l) = last {
                    let chunk = self.keys.remove(&l).and_then(|s| s.chunk);
                    self.seal(l, chunk)?;
                }
                self.unindexed = Some(Some(key));
                Ok(())
            }
        }
    }

    /// Shorthand for [`append`](Self::append).
    pub fn append_parts(&mut self, key: Key, value: Value, start: Timestamp, end: Timestamp) -> Result<()> {
        self.append(Record { key, value, start, end })
    }

    pub(crate) fn key_state(&mut self, key: Key, kind: ValueKind) -> Result<&mut KeyState> {
        Self::state_of(&mut self.keys, &self.reader, key, kind)
    }

    /// The writer state of `key`, made from the index (or new) when the key has none,
    /// checked to hold values of `kind`.
    #[inline]
    fn state_of<'k>(keys: &'k mut KeyMap<KeyState>, reader: &Reader, key: Key, kind: ValueKind) -> Result<&'k mut KeyState> {
        let state = keys.entry(key).or_insert_with(|| match reader.shared.index().keys.get(&key) {
            Some(k) => KeyState { kind: k.info.kind, last_end: k.info.last_end.0, chunk: None, sampler: None },
            None => KeyState { kind, last_end: 0, chunk: None, sampler: None },
        });
        if state.kind != kind {
            return Err(Error::KindMismatch { key, expected: state.kind, found: kind });
        }
        Ok(state)
    }

    pub(crate) fn keys_mut(&mut self) -> impl Iterator<Item = (&Key, &mut KeyState)> {
        self.keys.iter_mut()
    }

    /// Seals the open chunk of `key` into the tail block.
    fn seal(&mut self, key: Key, chunk: Option<Box<ChunkBuilder>>) -> Result<()> {
        let Some(chunk) = chunk else { return Ok(()) };
        self.buffered -= chunk.body.len();
        let mut header = Vec::with_capacity(MAX_CHUNK_HEADER);
        chunk.header(key, &mut header);
        let offset = self.reserve(FRAME_OVERHEAD + header.len() + chunk.body.len())?;
        put_frame(&mut self.tail, FrameType::Chunk, &[&header, &chunk.body]);
        let entry = DirEntry {
            key,
            kind: chunk.kind,
            offset,
            first_start: chunk.first_start,
            last_start: chunk.last_start,
            last_end: chunk.prev_end,
            count: u64::from(chunk.count),
            last_bits: chunk.prev_bits,
        };
        self.uncommitted.push(entry);
        Ok(())
    }

    /// Seals every open chunk (in key order, so files are reproducible).
    fn seal_all(&mut self) -> Result<()> {
        let mut open: Vec<(Key, Box<ChunkBuilder>)> = self.keys.iter_mut().filter_map(|(&k, s)| s.chunk.take().map(|c| (k, c))).collect();
        open.sort_unstable_by_key(|(k, _)| *k);
        for (k, c) in open {
            self.seal(k, Some(c))?;
        }
        Ok(())
    }

    /// Makes room for a frame of `len` bytes in the tail block, moving to the
    /// next block (zero padding the rest) if it does not fit; returns its offset.
    fn reserve(&mut self, len: usize) -> Result<LogOffset> {
        let bs = self.block_size as usize;
        debug_assert!(len <= bs, "frame larger than a block");
        if self.tail.len() + len > bs {
            self.tail.resize(bs, 0);
            self.write_tail()?;
            self.tail_start = LogOffset(self.tail_start.0 + bs as u64);
            self.tail.clear();
            self.tail_written = 0;
        }
        Ok(LogOffset(self.tail_start.0 + self.tail.len() as u64))
    }

    /// Writes the unwritten part of the tail block to the medium.
    fn write_tail(&mut self) -> Result<()> {
        if self.tail_written < self.tail.len() {
            let pos = HEADER_SIZE + self.tail_start.0 + self.tail_written as u64;
            let backend = &self.reader.shared.backend;
            backend.write_at(pos, &self.tail[self.tail_written..]).map_err(|e| Error::io("write", pos, e))?;
            self.tail_written = self.tail.len();
        }
        Ok(())
    }

    /// End of the data written or buffered in the tail.
    fn end(&self) -> LogOffset {
        LogOffset(self.tail_start.0 + self.tail.len() as u64)
    }

    /// Makes every appended record visible to readers (not yet durable).
    pub fn flush(&mut self) -> Result<()> {
        self.seal_all()?;
        self.write_tail()?;
        let end = self.end();
        let mut index = self.reader.shared.index_mut();
        for e in self.uncommitted[self.published..].iter().filter(|_| self.unindexed.is_none()) {
            // The writer validated every record, so this cannot fail; an error
            // here would be a bug, reported rather than panicking.
            index.add(e).map_err(|reason| Corruption::Invariant { offset: e.offset, reason })?;
        }
        index.visible = end;
        drop(index);
        self.published = self.uncommitted.len();
        // Published keys need no writer state: the index holds their kind and end.
        // (An unindexed store keeps its current key's state: it has no index to ask.)
        let current = self.unindexed.flatten();
        self.keys.retain(|k, s| !s.idle() || Some(*k) == current);
        if self.keys.capacity() > 4 * self.keys.len().max(64) {
            self.keys.shrink_to(2 * self.keys.len());
        }
        Ok(())
    }

    /// Makes every appended record durable: flush, write the directory, sync,
    /// write the other superblock slot, sync. See DESIGN.md for the crash analysis.
    pub fn commit(&mut self) -> Result<()> {
        self.flush()?;
        if self.uncommitted.is_empty() {
            return Ok(());
        }
        let per_frame = (self.block_size as usize - FRAME_OVERHEAD - MAX_HEADER_BYTES) / MAX_ENTRY_BYTES;
        let entries = std::mem::take(&mut self.uncommitted);
        self.published = 0;
        let mut last_dir = self.superblock.last_dir;
        let mut payload = Vec::new();
        for group in entries.chunks(per_frame) {
            payload.clear();
            directory::encode(last_dir, group, &mut payload);
            let offset = self.reserve(FRAME_OVERHEAD + payload.len())?;
            put_frame(&mut self.tail, FrameType::Directory, &[&payload]);
            last_dir = Some(offset);
        }
        self.write_tail()?;
        let backend = &self.reader.shared.backend;
        backend.sync().map_err(|e| Error::io("sync", 0, e))?;
        let sb = Superblock {
            block_size: self.block_size,
            seq: self.superblock.seq + 1,
            committed: self.end(),
            last_dir,
            records: self.superblock.records + entries.iter().map(|e| e.count).sum::<u64>(),
        };
        write_superblock(&**backend, &sb)?;
        self.superblock = sb;
        self.reader.shared.index_mut().visible = sb.committed;
        Ok(())
    }

    /// The last committed superblock (sequence number, committed length).
    pub fn committed(&self) -> (u64, LogOffset) {
        (self.superblock.seq, self.superblock.committed)
    }

    /// Records appended (committed or not) since the store was created.
    pub fn appended(&self) -> u64 {
        self.records
    }

    /// Bytes of the data region written or buffered so far.
    pub fn data_len(&self) -> u64 {
        self.end().0
    }

    /// Writer memory in bytes: the states of keys with something pending (their open
    /// chunks and samplers), tail block and pending entries.
    pub fn writer_memory(&self) -> usize {
        let per_key = std::mem::size_of::<(Key, KeyState)>();
        let chunk = std::mem::size_of::<ChunkBuilder>();
        let sampler = std::mem::size_of::<Sampler>();
        self.keys.values().map(|s| s.chunk.as_ref().map_or(0, |c| chunk + c.body.capacity()) + s.sampler.as_ref().map_or(0, |_| sampler)).sum::<usize>()
            + self.keys.capacity() * per_key
            + self.tail.capacity()
            + self.uncommitted.capacity() * std::mem::size_of::<DirEntry>()
    }
}

/// Appends a validated record to the key's open chunk.
#[inline]
pub(crate) fn push_record(state: &mut KeyState, buffered: &mut usize, start: u64, end: u64, bits: u64) {
    // Start small: with many keys most chunks hold a few records before a commit
    // seals them; the body grows by doubling up to the chunk size.
    let chunk = state.chunk.get_or_insert_with(|| Box::new(ChunkBuilder::new(state.kind, start, 16)));
    let before = chunk.body.len();
    chunk.push(start, end, bits);
    *buffered += chunk.body.len() - before;
    state.last_end = end;
}

/// Writes `sb` into its slot and syncs.
fn write_superblock(backend: &dyn Backend, sb: &Superblock) -> Result<()> {
    let pos = sb.slot() * SLOT_REGION;
    backend.write_at(pos, &sb.encode()).map_err(|e| Error::io("write superblock", pos, e))?;
    backend.sync().map_err(|e| Error::io("sync", pos, e))
}

impl std::ops::Deref for HistoryStore {
    type Target = Reader;
    fn deref(&self) -> &Reader {
        &self.reader
    }
}
