//! The tilted time frame: one history per level, cut into segments that expire.
//!
//! Every level stores, for each cell that changed during a frame, the cell's
//! *cumulative* value `C(B)` at the frame's end boundary `B` (a store record whose
//! time is the boundary index `B / granularity`, so gaps and durations encode in one
//! byte). The total of any frame or run of frames at any level is then
//! `C(B2) - C(B1)`: two stabbing queries, whatever the length. A coarser level's
//! frame total is exactly the two stabbing queries `C(B) - C(B - G)` of the finer
//! level, which the cumulative representation makes implicit: at a coarse boundary
//! the level writes `C(B)` for the cells dirty since its previous boundary.
//!
//! A level's history is a queue of *segments* of `span / 2` each, one in-memory
//! `store::HistoryStore` per segment holding values relative to the segment's
//! `base` (the cells' values when it began); when a segment lies wholly more than
//! `span` in the past it is dropped, so memory is bounded by about 1.5 spans of
//! frames per level whatever the stream's length (expired fine detail is still
//! answered, coarser, by the next level). Records become visible to queries when a
//! segment is committed (every `flush_every` boundaries, at a segment change and on
//! [`crate::Cube::flush`]); until then they are also kept in the level's *tail* (a
//! plain list), so every written boundary is answerable at once.

use std::collections::VecDeque;

use store::{Config, HistoryStore, Key, Reader, Timestamp, Value};

use crate::config::LevelSpec;
use crate::error::{CubeError, Result};
use crate::schema::Combine;
use crate::spill::{prefix, Sink};

/// Where a segment's records live.
pub(crate) enum Hist {
    /// Being written, in memory.
    Mem(Box<HistoryStore>),
    /// In a cube file: the keys are `prefix | cell`.
    File { reader: Reader, prefix: u64 },
    /// Moved to the history file of a spilling cube ([`crate::Cube::spill_to`]).
    Spilled,
}

/// A run of boundaries `[start, end)` (indices) of one level.
pub(crate) struct Segment {
    pub start: u64,
    pub end: u64,
    pub base: Vec<i64>,
    pub hist: Hist,
    /// Number of the segment in its level (from 0, in creation order): its key
    /// prefix in the history file of a spilling cube.
    pub id: u32,
    /// Whether some of its records were moved to the history file of a spilling cube
    /// (it can then no longer answer from memory).
    pub spilled: bool,
}

/// The answer to a query of a cube whose history is partly in a file being written.
fn spilled_err() -> CubeError {
    CubeError::Query("this cube's history is being written to its file (a build with bounded memory): query the saved cube".into())
}

impl Segment {
    /// The segment's reader and the key prefix of its records (none when spilled).
    pub(crate) fn reader(&self) -> Option<(Reader, u64)> {
        match &self.hist {
            Hist::Mem(s) => Some((s.reader(), 0)),
            Hist::File { reader, prefix } => Some((reader.clone(), *prefix)),
            Hist::Spilled => None,
        }
    }

    fn get(&self, cell: u32, idx: u64) -> Result<i64> {
        let base = self.base.get(cell as usize).copied().unwrap_or(0);
        if self.spilled {
            return Err(spilled_err());
        }
        let v = match &self.hist {
            Hist::Mem(s) => s.value_at(Key(u64::from(cell)), Timestamp(idx))?,
            Hist::File { reader, prefix } => reader.value_at(Key(prefix | u64::from(cell)), Timestamp(idx))?,
            Hist::Spilled => None,
        };
        Ok(base.wrapping_add(match v {
            Some(Value::I64(x)) => x,
            _ => 0,
        }))
    }

    /// Bytes of memory this segment holds (store data, index, writer buffers, base).
    fn memory(&self) -> u64 {
        let b = (self.base.capacity() * 8) as u64;
        match &self.hist {
            Hist::Mem(s) => {
                let st = s.stats();
                b + s.data_len() + st.index_bytes + st.cache_bytes + s.writer_memory() as u64
            }
            Hist::File { reader, .. } => {
                let st = reader.stats();
                b + st.visible_bytes + st.index_bytes + st.cache_bytes
            }
            Hist::Spilled => b,
        }
    }
}

/// The store settings for segments: small blocks and cache, since many small
/// segments live side by side in memory.
pub(crate) fn segment_store_config() -> Config {
    Config { block_size: 4096, chunk_bytes: 256, cache_blocks: 4, write_buffer_bytes: 1 << 20, granularity: 1 }
}

/// One level of the tilted frame.
pub struct Level {
    /// Granularity and span.
    pub spec: LevelSpec,
    pub(crate) segs: VecDeque<Segment>,
    /// Latest value written per cell: `C(written_to)` of every cell (in a level being
    /// written; empty in a level read from a file).
    pub(crate) last: Vec<i64>,
    /// Per `Min` / `Max` cell, by its slot (`Cube::slots`): its extreme over the
    /// current frame (dirty cells only; which cells are dirty: `Cube::dirty`).
    pub(crate) acc: Vec<i64>,
    /// Next boundary of this level, ns.
    pub(crate) next_boundary: u64,
    /// Whether a segment was ever dropped (else times before the first are zero).
    pub(crate) expired: bool,
    /// Latest boundary index processed (every boundary up to it is answerable).
    pub(crate) written_to: Option<u64>,
    /// Records written since the last commit, in write order: `(cell, index −
    /// tail_base, value)` (absolute values), read by queries over the store's older
    /// records.
    tail: Vec<(u32, u32, i64)>,
    /// Boundary index the tail's indices count from.
    tail_base: u64,
    unflushed: u32,
    flush_every: u32,
    /// Granularity degree: a summed cell is written at one of every `degree` changes.
    degree: u32,
    /// Per cell: changes not written yet (with `degree` > 1).
    unwritten: Vec<u32>,
    seg_frames: u64,
    /// Segments created.
    next_id: u32,
    /// Records written to in-memory segments since the last full spill.
    pub(crate) held: u64,
    /// Records written.
    pub(crate) records: u64,
}

impl Level {
    pub(crate) fn new(spec: LevelSpec, flush_every: u32, degree: u32) -> Level {
        let frames = spec.span_ns / spec.granularity_ns;
        Level {
            spec,
            segs: VecDeque::new(),
            last: Vec::new(),
            acc: Vec::new(),
            next_boundary: 0,
            expired: false,
            written_to: None,
            tail: Vec::new(),
            tail_base: 0,
            unflushed: 0,
            flush_every,
            degree: degree.max(1),
            unwritten: Vec::new(),
            seg_frames: (frames / 2).max(1),
            next_id: 0,
            held: 0,
            records: 0,
        }
    }

    /// A read-only level of a cube file.
    pub(crate) fn from_file(spec: LevelSpec, segs: Vec<Segment>, expired: bool, written_to: Option<u64>, records: u64) -> Level {
        let mut l = Level::new(spec, u32::MAX, 1);
        l.next_id = segs.iter().map(|s| s.id + 1).max().unwrap_or(0);
        l.segs = segs.into();
        l.expired = expired;
        l.written_to = written_to;
        l.records = records;
        l
    }

    /// Folds `v` into the current frame's extreme of the `Min` / `Max` cell whose slot
    /// is `slot` (`new`: the cell's first update in this frame).
    #[inline]
    pub(crate) fn extreme(&mut self, slot: u32, v: i64, kind: Combine, new: bool) {
        let i = slot as usize;
        if i >= self.acc.len() {
            self.acc.resize(i + 1, 0);
        }
        let a = &mut self.acc[i];
        *a = match kind {
            _ if new => v,
            Combine::Min => (*a).min(v),
            _ => (*a).max(v),
        };
    }

    /// Writes `C(B)` of `cells`, the cells changed since the previous boundary (sorted,
    /// each once), at boundary index `idx` (B = idx × granularity); for `Min` / `Max`
    /// cells (per `kinds`), the extreme of the frame ending at `B` (kept at the cell's
    /// slot of `slots`).
    pub(crate) fn write(&mut self, idx: u64, cells: &[u32], cum: &[i64], kinds: &[Combine], slots: &[u32]) -> Result<()> {
        if self.written_to.is_some_and(|w| idx <= w) {
            return Ok(());
        }
        if !cells.is_empty() {
            if !self.tail.is_empty() && idx - self.tail_base > u64::from(u32::MAX) {
                // The tail counts indices in 32 bits: commit before a longer gap.
                self.flush()?;
            }
            if self.segs.back().is_none_or(|s| idx >= s.end) {
                self.new_segment(idx)?;
            }
            if self.last.len() < cum.len() {
                self.last.resize(cum.len(), 0);
            }
            let seg = self.segs.back_mut().expect("a segment exists");
            let Hist::Mem(st) = &mut seg.hist else { unreachable!("a file cube is read-only") };
            let mut written = 0u64;
            for &c in cells {
                let v = match kinds.get(c as usize) {
                    Some(Combine::Min | Combine::Max) => self.acc[slots[c as usize] as usize],
                    _ if self.degree > 1 => {
                        // Granularity degree k: every k-th change of the cell is written.
                        if self.unwritten.len() <= c as usize {
                            self.unwritten.resize(c as usize + 1, 0);
                        }
                        let n = &mut self.unwritten[c as usize];
                        *n += 1;
                        if *n < self.degree {
                            continue;
                        }
                        *n = 0;
                        cum[c as usize]
                    }
                    _ => cum[c as usize],
                };
                written += 1;
                let base = seg.base.get(c as usize).copied().unwrap_or(0);
                st.append_parts(Key(u64::from(c)), Value::I64(v.wrapping_sub(base)), Timestamp(idx), Timestamp(idx + 1))?;
                if self.tail.is_empty() {
                    self.tail_base = idx;
                }
                self.tail.push((c, (idx - self.tail_base) as u32, v));
                self.last[c as usize] = v;
            }
            self.records += written;
            self.held += written;
            self.unflushed += 1;
        }
        self.written_to = Some(idx);
        if self.unflushed >= self.flush_every {
            self.flush()?;
        }
        self.expire(idx);
        Ok(())
    }

    fn new_segment(&mut self, idx: u64) -> Result<()> {
        self.flush()?;
        // The sealed segment keeps only its reader: the writer's per-key state goes.
        if let Some(seg) = self.segs.back_mut() {
            if let Hist::Mem(st) = &seg.hist {
                seg.hist = Hist::File { reader: st.reader(), prefix: 0 };
            }
        }
        let start = idx / self.seg_frames * self.seg_frames;
        let hist = Hist::Mem(Box::new(HistoryStore::in_memory(segment_store_config())?));
        let id = self.next_id;
        self.next_id += 1;
        self.segs.push_back(Segment { start, end: start + self.seg_frames, base: self.last.clone(), hist, id, spilled: false });
        Ok(())
    }

    /// Whether a segment before the current one still holds records in memory.
    pub(crate) fn has_sealed_in_memory(&self) -> bool {
        self.segs.iter().rev().skip(1).any(|s| !matches!(s.hist, Hist::Spilled))
    }

    /// Moves the records of the in-memory segments to `sink`, the history file of a
    /// spilling cube, as level `li`: every segment's (`all`), or those of the sealed
    /// segments only. The current segment goes on in a new in-memory store.
    pub(crate) fn spill(&mut self, li: usize, sink: &mut Sink, all: bool) -> Result<()> {
        self.flush()?;
        let n = self.segs.len();
        for (i, seg) in self.segs.iter_mut().enumerate() {
            let current = i + 1 == n;
            if current && !all {
                continue;
            }
            let Some((reader, src)) = seg.reader() else { continue };
            if seg.id >= 1 << 24 {
                return Err(CubeError::Config(format!("level {li} has more than 2^24 segments: too many to keep in one cube file")));
            }
            sink.dump(&reader, src, prefix(li, seg.id))?;
            seg.spilled = true;
            seg.hist = if current { Hist::Mem(Box::new(HistoryStore::in_memory(segment_store_config())?)) } else { Hist::Spilled };
        }
        if all {
            self.held = 0;
        }
        Ok(())
    }

    fn expire(&mut self, idx: u64) {
        let keep_from = idx.saturating_sub(self.spec.span_ns / self.spec.granularity_ns);
        // A segment answers from its start until the next one starts: it goes once
        // the next starts at or before the oldest boundary to keep.
        while self.segs.get(1).is_some_and(|s| s.start <= keep_from) {
            self.segs.pop_front();
            self.expired = true;
        }
    }

    /// Makes every written record visible to queries.
    pub(crate) fn flush(&mut self) -> Result<()> {
        if let Some(Segment { hist: Hist::Mem(st), .. }) = self.segs.back_mut() {
            // A commit (not a flush) also drops the writer's pending directory entries
            // (64 bytes per chunk); on the memory backend its syncs cost nothing.
            st.commit()?;
        }
        self.unflushed = 0;
        // Capacity released: a coarse level's tail holds up to `flush_every` frames of
        // its cells (16 bytes a record) only between commits.
        self.tail = Vec::new();
        Ok(())
    }

    /// Whether boundary index `idx` can be answered at this level.
    pub(crate) fn available(&self, idx: u64) -> bool {
        let lo_ok = !self.expired || self.segs.front().is_some_and(|s| idx >= s.start);
        lo_ok && self.written_to.is_some_and(|v| idx <= v)
    }

    /// The boundaries this level answers, ns: `[oldest, latest]` (none before its
    /// first boundary is processed).
    pub fn kept_ns(&self) -> Option<(u64, u64)> {
        let g = self.spec.granularity_ns;
        self.written_to.map(|w| (self.oldest() * g, w * g))
    }

    /// Oldest answerable boundary index.
    pub(crate) fn oldest(&self) -> u64 {
        if self.expired {
            self.segs.front().map_or(0, |s| s.start)
        } else {
            0
        }
    }

    /// `C(idx × granularity)` of each cell (caller checked [`Level::available`]).
    pub(crate) fn values_at(&self, cells: &[u32], idx: u64) -> Result<Vec<i64>> {
        if self.written_to == Some(idx) && !self.last.is_empty() {
            // The latest boundary (a window ending now): the running values, no look-up.
            // Cells created since hold zero there.
            return Ok(cells.iter().map(|&c| self.last.get(c as usize).copied().unwrap_or(0)).collect());
        }
        let Some(seg) = self.segs.iter().rev().find(|s| s.start <= idx) else {
            // Before the first segment (nothing expired): every value is zero.
            return Ok(vec![0; cells.len()]);
        };
        let mut out: Vec<i64> = cells.iter().map(|&c| seg.get(c, idx)).collect::<Result<_>>()?;
        if !self.tail.is_empty() && self.tail_base <= idx {
            // Uncommitted records (all later than the committed ones) override.
            let pos: std::collections::HashMap<u32, usize> = cells.iter().enumerate().map(|(k, &c)| (c, k)).collect();
            let rel = idx - self.tail_base;
            for &(c, _, v) in self.tail.iter().take_while(|r| u64::from(r.1) <= rel) {
                if let Some(&k) = pos.get(&c) {
                    out[k] = v;
                }
            }
        }
        Ok(out)
    }

    /// Folds the values of `cell`'s records at boundary indices `[lo, hi]` into `f`
    /// (for `Min` / `Max` cells: the extremes of the frames ending there that had
    /// updates; caller checked availability).
    pub(crate) fn each_record(&self, cell: u32, lo: u64, hi: u64, mut f: impl FnMut(i64)) -> Result<()> {
        for seg in self.segs.iter().filter(|s| s.end > lo && s.start <= hi) {
            let base = seg.base.get(cell as usize).copied().unwrap_or(0);
            let (reader, prefix) = seg.reader().filter(|_| !seg.spilled).ok_or_else(spilled_err)?;
            for rec in reader.records(Key(prefix | u64::from(cell)), Timestamp(lo.max(seg.start)), Timestamp((hi + 1).min(seg.end))) {
                if let Value::I64(x) = rec?.value {
                    f(base.wrapping_add(x));
                }
            }
        }
        let at = |r: &(u32, u32, i64)| self.tail_base + u64::from(r.1);
        self.tail.iter().filter(|r| r.0 == cell && at(r) >= lo && at(r) <= hi).for_each(|r| f(r.2));
        Ok(())
    }

    /// Number of live segments.
    pub fn segment_count(&self) -> usize {
        self.segs.len()
    }

    /// Per segment: `data, index, cache, writer` bytes (diagnostics).
    pub fn segment_stats(&self) -> Vec<String> {
        self.segs
            .iter()
            .map(|s| match &s.hist {
                Hist::Mem(st) => {
                    let x = st.stats();
                    format!(
                        "data {} index {} cache {} writer {} records {} chunks {}",
                        st.data_len(),
                        x.index_bytes,
                        x.cache_bytes,
                        st.writer_memory(),
                        x.records,
                        x.chunks
                    )
                }
                Hist::File { .. } => "file".into(),
                Hist::Spilled => "spilled".into(),
            })
            .collect()
    }

    /// Bytes held by this level.
    pub fn memory(&self) -> u64 {
        self.segs.iter().map(Segment::memory).sum::<u64>() + (self.last.capacity() * 8 + self.acc.capacity() * 8 + self.tail.capacity() * 16) as u64
    }
}
