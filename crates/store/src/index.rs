//! The in-memory index shared by the writer and the readers.
//!
//! Invariants (checked when rebuilt from directory frames, see DESIGN.md):
//! 1. A key's chunks are in log order, which is also time order: each chunk's
//!    `first_start` is at or after the previous chunk's last record's end.
//! 2. `KeyInfo` summarises exactly the chunks listed (first/last times, last
//!    value, record count).
//! 3. Every listed chunk lies entirely before `visible` (flushed to the medium).

use crate::directory::DirEntry;
use crate::types::{Key, KeyInfo, LogOffset, Timestamp, Value};

/// A map from keys, hashed by `rustc-hash` (keys come from our own cube, not from an
/// adversary, so hash flooding is not a concern).
pub type KeyMap<V> = rustc_hash::FxHashMap<Key, V>;

/// Where one chunk of a key lives and when it starts.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ChunkRef {
    /// Start of the chunk's first record.
    pub first_start: u64,
    /// Start of the chunk's frame.
    pub offset: LogOffset,
}

/// The chunks of one key in time order: most keys of a cube's segment have one, held
/// inline (no allocation of its own); a slice of them by [`std::ops::Deref`].
#[derive(Debug, Clone)]
pub enum Chunks {
    /// A single chunk.
    One(ChunkRef),
    /// Two or more.
    Many(Vec<ChunkRef>),
}

impl Chunks {
    /// Adds a chunk after the others.
    pub fn push(&mut self, c: ChunkRef) {
        match self {
            Chunks::One(a) => *self = Chunks::Many(vec![*a, c]),
            Chunks::Many(v) => v.push(c),
        }
    }

    /// Heap bytes held (none for a single chunk).
    pub fn heap_bytes(&self) -> usize {
        match self {
            Chunks::One(_) => 0,
            Chunks::Many(v) => v.capacity() * std::mem::size_of::<ChunkRef>(),
        }
    }
}

impl std::ops::Deref for Chunks {
    type Target = [ChunkRef];
    fn deref(&self) -> &[ChunkRef] {
        match self {
            Chunks::One(c) => std::slice::from_ref(c),
            Chunks::Many(v) => v,
        }
    }
}

/// Index of one key.
#[derive(Debug, Clone)]
pub struct KeyIndex {
    /// Summary.
    pub info: KeyInfo,
    /// Chunks in time order.
    pub chunks: Chunks,
}

/// Index of all keys.
#[derive(Debug, Default)]
pub struct Index {
    /// Per-key index.
    pub keys: KeyMap<KeyIndex>,
    /// Data-region bytes flushed to the medium (readable).
    pub visible: LogOffset,
    /// Records visible.
    pub records: u64,
}

impl Index {
    /// Adds a chunk described by `e`; `Err` names the broken invariant.
    pub fn add(&mut self, e: &DirEntry) -> Result<(), &'static str> {
        let last_value = Value::from_bits(e.kind, e.last_bits);
        let chunk = ChunkRef { first_start: e.first_start, offset: e.offset };
        if e.last_start < e.first_start || e.last_end < e.last_start {
            return Err("chunk times not ordered");
        }
        match self.keys.entry(e.key) {
            std::collections::hash_map::Entry::Vacant(v) => {
                let info = KeyInfo {
                    kind: e.kind,
                    first_start: Timestamp(e.first_start),
                    last_start: Timestamp(e.last_start),
                    last_end: Timestamp(e.last_end),
                    last_value,
                    records: e.count,
                };
                v.insert(KeyIndex { info, chunks: Chunks::One(chunk) });
            }
            std::collections::hash_map::Entry::Occupied(mut o) => {
                let k = o.get_mut();
                if k.info.kind != e.kind {
                    return Err("value kind changes between chunks of a key");
                }
                if e.first_start < k.info.last_end.0 || k.chunks.last().is_some_and(|c| c.offset >= e.offset) {
                    return Err("chunks of a key out of order");
                }
                k.info.last_start = Timestamp(e.last_start);
                k.info.last_end = Timestamp(e.last_end);
                k.info.last_value = last_value;
                k.info.records += e.count;
                k.chunks.push(chunk);
            }
        }
        self.records += e.count;
        Ok(())
    }

    /// What to read to answer "value of `key` at `t`".
    pub fn locate(&self, key: Key, t: u64) -> Option<Lookup> {
        let k = self.keys.get(&key)?;
        let info = &k.info;
        Some(if t >= info.last_start.0 {
            Lookup::Known(info.last_value)
        } else if t < info.first_start.0 {
            Lookup::Known(Value::zero(info.kind))
        } else {
            // Last chunk with first_start <= t; exists since t >= first_start.
            let i = k.chunks.partition_point(|c| c.first_start <= t).saturating_sub(1);
            Lookup::Chunk { offset: k.chunks[i].offset, kind: info.kind }
        })
    }
}

/// Outcome of [`Index::locate`].
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Lookup {
    /// The answer is known without reading a block.
    Known(Value),
    /// The answer is in the chunk at `offset`.
    Chunk {
        /// Frame offset.
        offset: LogOffset,
        /// The key's kind.
        kind: crate::types::ValueKind,
    },
}
