//! Queries. A [`Reader`] is cheap to clone and may be used from any thread
//! while the writer appends; it sees every record up to the writer's last
//! `flush` or `commit`.

use crate::backend::FileBackend;
use crate::cache::CacheStats;
use crate::chunk::{ChunkDecoder, RawRecord};
use crate::error::{Corruption, Error, Result};
use crate::format::FrameType;
use crate::index::{ChunkRef, Lookup};
use crate::shared::{recover, Shared};
use crate::types::{Key, KeyInfo, LogOffset, Record, Timestamp, Value, ValueKind};
use std::sync::Arc;

/// A query handle on a store.
///
/// Cumulative semantics: the value of a key at `t` is the value of its last
/// record with `start <= t`. Inside a record's `[start, end)` that is the
/// record's value; in a gap after a record the value is held; before the key's
/// first record it is [`Value::zero`]; after its last record it is the last value.
#[derive(Debug, Clone)]
pub struct Reader {
    pub(crate) shared: Arc<Shared>,
}

fn not_found(offset: LogOffset) -> Error {
    Corruption::Invariant { offset, reason: "chunk does not cover the time its index promised" }.into()
}

impl Reader {
    /// Opens the store file at `path` read-only, at its last commit (it is not
    /// modified; a later commit by a writer elsewhere is not seen).
    pub fn open_read_only(path: &std::path::Path, cache_blocks: usize) -> Result<Reader> {
        let backend = FileBackend::open_read_only(path).map_err(|e| Error::io("open", 0, e))?;
        let Some(r) = recover(&backend)? else {
            return Err(Corruption::NoSuperblock.into());
        };
        let shared = Shared::new(Box::new(backend), r.superblock.block_size, cache_blocks, r.index);
        Ok(Reader { shared })
    }

    /// Decodes the chunk at `offset` and runs `f` on its decoder.
    fn with_chunk<R>(&self, offset: LogOffset, limit: LogOffset, f: impl FnOnce(ChunkDecoder<'_>) -> Result<R>) -> Result<R> {
        self.shared.with_frame(offset, limit, |frame| {
            if frame.ty != FrameType::Chunk {
                return Err(Corruption::Invariant { offset, reason: "index points to a non-chunk frame" }.into());
            }
            f(ChunkDecoder::new(frame.payload, offset)?)
        })
    }

    /// Value of `key` at `t` (stabbing query); `None` if the key has no record.
    pub fn value_at(&self, key: Key, t: Timestamp) -> Result<Option<Value>> {
        let (lookup, limit) = {
            let index = self.shared.index();
            (index.locate(key, t.0), index.visible)
        };
        match lookup {
            None => Ok(None),
            Some(Lookup::Known(v)) => Ok(Some(v)),
            Some(Lookup::Chunk { offset, kind }) => self.with_chunk(offset, limit, |d| {
                let bits = d.value_at(t.0)?.ok_or_else(|| not_found(offset))?;
                Ok(Some(Value::from_bits(kind, bits)))
            }),
        }
    }

    /// Values of several keys at `t`, in the order of `keys`.
    pub fn values_at(&self, keys: &[Key], t: Timestamp) -> Result<Vec<Option<Value>>> {
        keys.iter().map(|&k| self.value_at(k, t)).collect()
    }

    /// Values of all keys at `t`, sorted by key (keys not yet started hold zero).
    pub fn all_values_at(&self, t: Timestamp) -> Result<Vec<(Key, Value)>> {
        let keys = self.keys();
        let mut out = Vec::with_capacity(keys.len());
        for k in keys {
            if let Some(v) = self.value_at(k, t)? {
                out.push((k, v));
            }
        }
        Ok(out)
    }

    /// What accumulated in `key` over `[t1, t2]`: `value(t2) - value(t1)`.
    /// Two stabbing queries, whatever the range's length. `None` if the key
    /// has no record.
    pub fn range(&self, key: Key, t1: Timestamp, t2: Timestamp) -> Result<Option<Value>> {
        let (Some(a), Some(b)) = (self.value_at(key, t1)?, self.value_at(key, t2)?) else {
            return Ok(None);
        };
        Ok(b.minus(a))
    }

    /// [`Reader::range`] for every key, sorted by key.
    pub fn range_all(&self, t1: Timestamp, t2: Timestamp) -> Result<Vec<(Key, Value)>> {
        let mut out = Vec::new();
        for k in self.keys() {
            if let Some(v) = self.range(k, t1, t2)? {
                out.push((k, v));
            }
        }
        Ok(out)
    }

    /// Summary of `key` (first and last occurrence, last value, count).
    pub fn key_info(&self, key: Key) -> Option<KeyInfo> {
        self.shared.index().keys.get(&key).map(|k| k.info)
    }

    /// All keys with at least one visible record, sorted.
    pub fn keys(&self) -> Vec<Key> {
        let mut keys: Vec<Key> = self.shared.index().keys.keys().copied().collect();
        keys.sort_unstable();
        keys
    }

    /// Number of visible records.
    pub fn record_count(&self) -> u64 {
        self.shared.index().records
    }

    /// The records of `key` that meet the window `[from, to)`: those with
    /// `start < to` and either `end > from` or `start >= from`, in time order.
    pub fn records(&self, key: Key, from: Timestamp, to: Timestamp) -> RecordIter {
        let index = self.shared.index();
        let (kind, next_chunk) = match index.keys.get(&key) {
            Some(k) => {
                // Chunks before the last one starting before `from` end at or before `from`.
                let i = k.chunks.partition_point(|c| c.first_start < from.0).saturating_sub(1);
                (k.info.kind, i)
            }
            None => (ValueKind::U64, usize::MAX),
        };
        RecordIter {
            reader: self.clone(),
            key,
            kind,
            from: from.0,
            to: to.0,
            next_chunk,
            limit: index.visible,
            buf: Vec::new(),
            pos: 0,
            done: next_chunk == usize::MAX,
        }
    }

    /// Sizes and cache counters, for reports and benchmarks.
    pub fn stats(&self) -> StoreStats {
        let index = self.shared.index();
        let chunks: usize = index.keys.values().map(|k| k.chunks.len()).sum();
        let index_bytes =
            index.keys.capacity() * std::mem::size_of::<(Key, crate::index::KeyIndex)>() + index.keys.values().map(|k| k.chunks.heap_bytes()).sum::<usize>();
        StoreStats {
            keys: index.keys.len() as u64,
            records: index.records,
            chunks: chunks as u64,
            visible_bytes: index.visible.0,
            index_bytes: index_bytes as u64,
            cache_bytes: self.shared.cache.memory_bytes() as u64,
            cache: self.shared.cache.stats(),
        }
    }

    /// Chunk `i` of `key`, if visible.
    fn chunk_ref(&self, key: Key, i: usize) -> Option<ChunkRef> {
        self.shared.index().keys.get(&key).and_then(|k| k.chunks.get(i).copied())
    }
}

/// Sizes and counters of a store, from [`Reader::stats`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct StoreStats {
    /// Keys with a visible record.
    pub keys: u64,
    /// Visible records.
    pub records: u64,
    /// Visible chunks.
    pub chunks: u64,
    /// Bytes of data region visible (flushed).
    pub visible_bytes: u64,
    /// Approximate heap bytes of the in-memory index.
    pub index_bytes: u64,
    /// Heap bytes held by the block cache.
    pub cache_bytes: u64,
    /// Cache hits and misses.
    pub cache: CacheStats,
}

/// Iterator over a key's records in a window; see [`Reader::records`]. Stops
/// after the first error.
#[derive(Debug)]
pub struct RecordIter {
    reader: Reader,
    key: Key,
    kind: ValueKind,
    from: u64,
    to: u64,
    next_chunk: usize,
    limit: LogOffset,
    buf: Vec<RawRecord>,
    pos: usize,
    done: bool,
}

impl RecordIter {
    /// Decodes the next chunk into `buf`; `Ok(false)` when none is left.
    fn refill(&mut self) -> Result<bool> {
        let Some(c) = self.reader.chunk_ref(self.key, self.next_chunk) else { return Ok(false) };
        if c.first_start >= self.to || c.offset >= self.limit {
            return Ok(false);
        }
        self.next_chunk += 1;
        self.buf.clear();
        self.pos = 0;
        let buf = &mut self.buf;
        self.reader.with_chunk(c.offset, self.limit, |d| {
            for r in d {
                buf.push(r?);
            }
            Ok(())
        })?;
        Ok(true)
    }
}

impl Iterator for RecordIter {
    type Item = Result<Record>;

    fn next(&mut self) -> Option<Self::Item> {
        // Each turn consumes a buffered record or a chunk; chunks are finite.
        while !self.done {
            if let Some(&r) = self.buf.get(self.pos) {
                self.pos += 1;
                if r.start >= self.to {
                    self.done = true;
                    break;
                }
                if r.end > self.from || r.start >= self.from {
                    let value = Value::from_bits(self.kind, r.bits);
                    return Some(Ok(Record { key: self.key, value, start: Timestamp(r.start), end: Timestamp(r.end) }));
                }
                continue;
            }
            match self.refill() {
                Ok(true) => {}
                Ok(false) => self.done = true,
                Err(e) => {
                    self.done = true;
                    return Some(Err(e));
                }
            }
        }
        None
    }
}
