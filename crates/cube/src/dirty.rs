//! The cells each level must write at its next boundary: those changed since its
//! previous one.
//!
//! A level's current frame holds the current frames of the finer levels, so these
//! sets are nested: level 0's ⊆ level 1's ⊆ …. Each cell is listed once for the
//! finest level where it is dirty (and is then dirty at every coarser one), not once
//! per level: a cube whose coarse levels have not rolled yet (a trace shorter than
//! their frames) keeps one entry per changed cell, not one per level.
//!
//! Per cell, bit `j` of its mask says that it is in list `j`; its lowest bit is the
//! finest level where it is dirty. A cell changed again while listed for a coarser
//! level goes into list 0 and stays (stale) in the coarser list, where the mask
//! keeps it from being listed twice; a level's dirty set is the union of the lists
//! up to it.

/// Levels at most (the mask's bits).
pub(crate) const MAX_LEVELS: usize = 16;

/// The dirty cells of every level (see the module docs).
#[derive(Default)]
pub(crate) struct Dirty {
    /// Per cell: bit `j` set when the cell is in `lists[j]`.
    mask: Vec<u16>,
    /// Per level: cells listed for it.
    lists: Vec<Vec<u32>>,
}

impl Dirty {
    /// For a cube of `levels` levels (at most [`MAX_LEVELS`]: the config says so).
    pub fn new(levels: usize) -> Dirty {
        debug_assert!(levels <= MAX_LEVELS);
        Dirty { mask: Vec::new(), lists: vec![Vec::new(); levels] }
    }

    /// Marks cell `c` changed in the finest level's current frame; returns since which
    /// level it was dirty before (`None`: at none): it is new in the frames of the
    /// levels finer than that.
    #[inline]
    pub fn mark(&mut self, c: u32) -> Option<usize> {
        let i = c as usize;
        if i >= self.mask.len() {
            self.mask.resize(i + 1, 0);
        }
        let m = self.mask[i];
        if m & 1 == 0 {
            self.mask[i] = m | 1;
            self.lists[0].push(c);
            return (m != 0).then(|| m.trailing_zeros() as usize);
        }
        Some(0)
    }

    /// The cells changed in the finest level's current frame (each once).
    pub fn finest(&self) -> &[u32] {
        &self.lists[0]
    }

    /// Since which level cell `c`, now listed for level 0, was dirty before this
    /// frame (`None`: at none).
    pub fn before(&self, c: u32) -> Option<usize> {
        let m = self.mask[c as usize] & !1;
        (m != 0).then(|| m.trailing_zeros() as usize)
    }

    /// Whether level `l` has dirty cells.
    pub fn any_at(&self, l: usize) -> bool {
        self.lists[..=l].iter().any(|v| !v.is_empty())
    }

    /// An upper bound of the dirty cells of levels `1..=k` together (the work of
    /// their writes).
    pub fn work(&self, k: usize) -> usize {
        (1..=k).map(|i| self.lists[..=i].iter().map(Vec::len).sum::<usize>()).sum()
    }

    /// The dirty cells of level `l`, given those of level `l - 1` (`finer`, sorted;
    /// empty for level 0): sorted, each once.
    pub fn at(&self, l: usize, finer: &[u32]) -> Vec<u32> {
        let mut own: Vec<u32> = self.lists[l].iter().copied().filter(|&c| self.mask[c as usize].trailing_zeros() as usize == l).collect();
        own.sort_unstable();
        if finer.is_empty() {
            return own;
        }
        // Cells listed here are dirty at no finer level: the two sets are disjoint.
        let mut out = Vec::with_capacity(finer.len() + own.len());
        let (mut a, mut b) = (finer.iter().peekable(), own.iter().peekable());
        while let (Some(&&x), Some(&&y)) = (a.peek(), b.peek()) {
            if x < y {
                out.push(x);
                a.next();
            } else {
                out.push(y);
                b.next();
            }
        }
        out.extend(a);
        out.extend(b);
        out
    }

    /// Levels `0..=k` wrote `cells`, the dirty cells of level `k`: they are now dirty
    /// at the levels coarser than `k` only (at none when `k` is the coarsest).
    pub fn rolled(&mut self, k: usize, cells: &[u32]) {
        let finer = (1u32 << (k + 1)) as u16 - 1;
        let next = self.lists.len() > k + 1;
        for &c in cells {
            let m = &mut self.mask[c as usize];
            *m &= !finer;
            if next && *m & (1 << (k + 1)) == 0 {
                *m |= 1 << (k + 1);
                self.lists[k + 1].push(c);
            }
        }
        for l in &mut self.lists[..=k] {
            l.clear();
        }
    }

    /// Bytes held.
    pub fn memory(&self) -> u64 {
        (self.mask.capacity() * 2 + self.lists.iter().map(|l| l.capacity() * 4).sum::<usize>()) as u64
    }
}
