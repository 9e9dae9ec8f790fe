//! A bounded, sharded block cache with CLOCK (second-chance) eviction.
//!
//! Invariants:
//! 1. A cached block is a prefix of the block's bytes on the medium: data is
//!    only ever appended after the committed or flushed length, so a prefix
//!    never goes stale; it may only be too short, and callers ask for the length
//!    they need (`min_len`), which reloads a short entry.
//! 2. Each shard holds at most `capacity / shards` blocks (at least one), so
//!    the cache never holds more than `capacity + shards` blocks.

use crate::types::BlockId;
use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

const SHARDS: usize = 8;

#[derive(Debug)]
struct Slot {
    block: BlockId,
    data: Arc<Vec<u8>>,
    referenced: bool,
}

#[derive(Debug, Default)]
struct Shard {
    slots: Vec<Slot>,
    map: HashMap<BlockId, usize>,
    hand: usize,
}

/// Cached blocks shared by the writer and all readers.
#[derive(Debug)]
pub struct BlockCache {
    shards: Vec<Mutex<Shard>>,
    per_shard: usize,
    hits: AtomicU64,
    misses: AtomicU64,
}

/// Hit and miss counts since the store was opened.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct CacheStats {
    /// Lookups served from memory.
    pub hits: u64,
    /// Lookups that read the medium.
    pub misses: u64,
}

impl BlockCache {
    /// A cache of about `capacity` blocks.
    pub fn new(capacity: usize) -> Self {
        let per_shard = capacity.div_ceil(SHARDS).max(1);
        BlockCache { shards: (0..SHARDS).map(|_| Mutex::new(Shard::default())).collect(), per_shard, hits: AtomicU64::new(0), misses: AtomicU64::new(0) }
    }

    fn shard(&self, block: BlockId) -> std::sync::MutexGuard<'_, Shard> {
        let i = (block.0 as usize).wrapping_mul(0x9E37_79B9) % SHARDS;
        // A panic while holding the lock cannot leave a shard inconsistent
        // (every mutation is a single assignment), so poisoning is ignored.
        self.shards[i].lock().unwrap_or_else(|e| e.into_inner())
    }

    /// The cached prefix of `block` if it holds at least `min_len` bytes;
    /// otherwise `load` reads the block and the result is cached.
    pub fn get<E>(&self, block: BlockId, min_len: usize, load: impl FnOnce() -> Result<Vec<u8>, E>) -> Result<Arc<Vec<u8>>, E> {
        {
            let mut shard = self.shard(block);
            if let Some(&i) = shard.map.get(&block) {
                let slot = &mut shard.slots[i];
                if slot.data.len() >= min_len {
                    slot.referenced = true;
                    self.hits.fetch_add(1, Ordering::Relaxed);
                    return Ok(Arc::clone(&slot.data));
                }
            }
        }
        self.misses.fetch_add(1, Ordering::Relaxed);
        let data = Arc::new(load()?); // read without holding the lock
        self.insert(block, Arc::clone(&data));
        Ok(data)
    }

    fn insert(&self, block: BlockId, data: Arc<Vec<u8>>) {
        let per_shard = self.per_shard;
        let mut shard = self.shard(block);
        if let Some(&i) = shard.map.get(&block) {
            // Keep the longer prefix (invariant 1: both are prefixes).
            if shard.slots[i].data.len() < data.len() {
                shard.slots[i].data = data;
            }
            return;
        }
        if shard.slots.len() < per_shard {
            let i = shard.slots.len();
            shard.slots.push(Slot { block, data, referenced: false });
            shard.map.insert(block, i);
            return;
        }
        // CLOCK: skip (and clear) referenced slots; bounded by two turns.
        let n = shard.slots.len();
        for _ in 0..2 * n {
            let h = shard.hand;
            shard.hand = (h + 1) % n;
            if shard.slots[h].referenced {
                shard.slots[h].referenced = false;
            } else {
                let old = shard.slots[h].block;
                shard.map.remove(&old);
                shard.slots[h] = Slot { block, data, referenced: false };
                shard.map.insert(block, h);
                return;
            }
        }
    }

    /// Hit and miss counts.
    pub fn stats(&self) -> CacheStats {
        CacheStats { hits: self.hits.load(Ordering::Relaxed), misses: self.misses.load(Ordering::Relaxed) }
    }

    /// Bytes currently held.
    pub fn memory_bytes(&self) -> usize {
        self.shards.iter().map(|s| s.lock().unwrap_or_else(|e| e.into_inner()).slots.iter().map(|x| x.data.capacity()).sum::<usize>()).sum()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cache_is_bounded_and_reloads_short_prefixes() {
        let cache = BlockCache::new(16);
        for b in 0..1000u64 {
            let got = cache.get(BlockId(b), 4, || Ok::<_, ()>(vec![b as u8; 4])).unwrap();
            assert_eq!(got[0], b as u8);
        }
        let held: usize = cache.shards.iter().map(|s| s.lock().unwrap().slots.len()).sum();
        assert!(held <= 16 + SHARDS);
        let _ = cache.get(BlockId(5000), 2, || Ok::<_, ()>(vec![1, 2])).unwrap();
        let longer = cache.get(BlockId(5000), 3, || Ok::<_, ()>(vec![1, 2, 3])).unwrap();
        assert_eq!(longer.len(), 3, "a too-short prefix is reloaded");
        let again = cache.get(BlockId(5000), 3, || Err(())).unwrap();
        assert_eq!(again.len(), 3);
    }
}
