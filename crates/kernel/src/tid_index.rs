//! tid → slot, for the per-thread tables of the analyses ([`crate::model::Info`], io's
//! process rows): looked up on every `sched_switch`, and for each row of a report.
//!
//! Linux tids are small non-negative numbers (below `pid_max`, at most 2^22) handed out
//! about in order, so they are indexed directly, in pages of `PAGE` (1024) slots made when a
//! tid of their range first comes: two loads and no hashing, and memory in proportion
//! to the ranges of tids seen, not to the largest (a state per chunk of a parallel run
//! each has one). Other tids (negative ones, or beyond 2^22, in malformed or foreign
//! traces) go to a hash map.

use crate::model::FxMap;

/// Slots per page (a page is 4 KiB).
const PAGE: usize = 1024;

/// Tids below this are indexed directly.
const DIRECT_TIDS: usize = 1 << 22;

/// No slot, in a page.
const NONE: u32 = u32::MAX;

/// A map from tid to slot (a `u32` below `u32::MAX`); see the module documentation.
#[derive(Debug, Clone, Default)]
pub struct TidIndex {
    /// Page `k` holds the slots of tids `k * PAGE ..`, [`NONE`] where a tid has none.
    pages: Vec<Option<Box<[u32; PAGE]>>>,
    /// Slots of tids that are not indexed directly.
    others: FxMap<i32, u32>,
}

/// Where `tid` lies in the pages (page, offset), when it is indexed directly.
#[inline(always)]
fn direct(tid: i32) -> Option<(usize, usize)> {
    usize::try_from(tid).ok().filter(|&t| t < DIRECT_TIDS).map(|t| (t / PAGE, t % PAGE))
}

impl TidIndex {
    /// The slot of `tid`, if it has one.
    #[inline(always)]
    pub fn get(&self, tid: i32) -> Option<u32> {
        match direct(tid) {
            Some((k, o)) => self.pages.get(k).and_then(|p| p.as_ref()).map(|p| p[o]).filter(|&i| i != NONE),
            None => self.others.get(&tid).copied(),
        }
    }

    /// Gives `tid` slot `slot` (below `u32::MAX`), replacing any it had.
    pub fn insert(&mut self, tid: i32, slot: u32) {
        debug_assert!(slot != NONE);
        match direct(tid) {
            Some((k, o)) => {
                if self.pages.len() <= k {
                    self.pages.resize_with(k + 1, || None);
                }
                self.pages[k].get_or_insert_with(|| Box::new([NONE; PAGE]))[o] = slot;
            }
            None => {
                self.others.insert(tid, slot);
            }
        }
    }

    /// The number of tids looked up through the hash map (not indexed directly).
    #[cfg(test)]
    fn others(&self) -> usize {
        self.others.len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    proptest::proptest! {
        /// Any tids, in any order: each gets back the slot it was last given, and tids
        /// never given one have none (as a hash map would answer).
        #[test]
        fn answers_as_a_map(ops in proptest::collection::vec((proptest::prop_oneof![0i32..3000, 4_190_000i32..4_200_000, proptest::num::i32::ANY], 0u32..1000), 0..300), probes in proptest::collection::vec(proptest::num::i32::ANY, 0..50)) {
            let (mut ix, mut want) = (TidIndex::default(), std::collections::HashMap::new());
            for &(t, s) in &ops {
                ix.insert(t, s);
                want.insert(t, s);
            }
            for t in ops.iter().map(|o| o.0).chain(probes) {
                proptest::prop_assert_eq!(ix.get(t), want.get(&t).copied(), "tid {}", t);
            }
        }
    }

    #[test]
    fn small_tids_are_indexed_directly_in_pages_made_on_demand() {
        let mut ix = TidIndex::default();
        for (s, t) in [0, 1, 1023, 1024, (DIRECT_TIDS - 1) as i32, DIRECT_TIDS as i32, -1, i32::MIN, i32::MAX].into_iter().enumerate() {
            ix.insert(t, s as u32);
        }
        assert_eq!(ix.others(), 4);
        // Pages 0, 1 and the last one only.
        assert_eq!(ix.pages.iter().filter(|p| p.is_some()).count(), 3);
        assert_eq!(ix.get(1024), Some(3));
        assert_eq!(ix.get(1025), None);
        assert_eq!(ix.get(5000), None);
        assert_eq!(ix.get(DIRECT_TIDS as i32), Some(5));
    }
}
