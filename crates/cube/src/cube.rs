//! The cube: schema + running totals + tilted-frame levels; ingestion.

use crate::config::CubeConfig;
use crate::dims::NodeId;
use crate::dirty::Dirty;
use crate::error::Result;
use crate::schema::{CellId, Combine, MetricId, Schema};
use crate::spill::{Spill, SPILL_RECORDS};
use crate::tilt::Level;

/// The slot of a summed cell (it keeps no extreme).
pub(crate) const NO_SLOT: u32 = u32::MAX;

/// A cube of trace statistics: ingest timestamped updates, then query.
pub struct Cube {
    /// Metrics, dimensions, cells.
    pub schema: Schema,
    /// The configuration it was built with.
    pub config: CubeConfig,
    pub(crate) levels: Vec<Level>,
    /// The cells each level must write at its next boundary.
    dirty: Dirty,
    /// Running cumulative value per cell (`C(now)`).
    pub(crate) cum: Vec<i64>,
    /// Whether `cum` holds the running totals (false in a cube read from a file).
    pub(crate) cum_live: bool,
    /// Per cell: how its updates combine.
    pub(crate) kinds: Vec<Combine>,
    /// Per cell: its number among the `Min` / `Max` cells ([`NO_SLOT`] for a summed
    /// one), where the levels keep its extreme over their current frames (so that
    /// this scratch is sized to those cells only).
    pub(crate) slots: Vec<u32>,
    /// `Min` / `Max` cells.
    extreme_cells: u32,
    /// End of the current finest frame, ns (0 before the first update).
    frame_end: u64,
    /// First and last update time, ns.
    pub(crate) span: Option<(u64, u64)>,
    /// Updates ingested.
    pub updates: u64,
    /// Levels rolling at one boundary are written on parallel threads when they have
    /// more dirty cells than this in all (`bench cube` measures where it pays).
    pub parallel_min_work: usize,
    /// Where the histories go while the cube is built ([`Cube::spill_to`]).
    pub(crate) spill: Option<Spill>,
    /// A spilling cube moves its records to its file once its levels hold this many
    /// in memory ([`SPILL_RECORDS`]; tests use small values).
    pub spill_records: u64,
}

/// Where a time was answered: the boundary used and the level it came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Resolved {
    /// The boundary, ns: the value is the total of everything strictly before it.
    pub at: u64,
    /// Level index (0: finest).
    pub level: usize,
}

impl Cube {
    /// An empty in-memory cube.
    pub fn new(config: CubeConfig) -> Result<Cube> {
        config.validate()?;
        let schema = Schema::new(&config)?;
        let levels: Vec<Level> = config.levels.iter().enumerate().map(|(i, s)| Level::new(*s, if i == 0 { 64 } else { 48 }, config.degree)).collect();
        Ok(Cube {
            schema,
            dirty: Dirty::new(levels.len()),
            config,
            levels,
            cum: Vec::new(),
            cum_live: true,
            kinds: Vec::new(),
            slots: Vec::new(),
            extreme_cells: 0,
            frame_end: 0,
            span: None,
            updates: 0,
            parallel_min_work: 50_000,
            spill: None,
            spill_records: SPILL_RECORDS,
        })
    }

    /// The finest cell of `metric` at `nodes` (created if new).
    pub fn cell(&mut self, metric: MetricId, nodes: &[NodeId]) -> CellId {
        let c = self.schema.leaf_cell(metric, nodes);
        self.sync_cells();
        c
    }

    /// Sizes the per-cell state to the schema's cells.
    pub(crate) fn sync_cells(&mut self) {
        let n = self.schema.cell_count();
        if self.cum.len() < n {
            self.cum.resize(n, 0);
        }
        while self.kinds.len() < n {
            let k = self.schema.combine_of(CellId(self.kinds.len() as u32));
            self.kinds.push(k);
            self.slots.push(match k {
                Combine::Sum => NO_SLOT,
                _ => {
                    self.extreme_cells += 1;
                    self.extreme_cells - 1
                }
            });
        }
    }

    /// Adds `delta` to finest cell `cell` (and the materialized cells above it) at
    /// time `t` (ns). Times must not decrease.
    #[inline]
    pub fn add(&mut self, t: u64, cell: CellId, delta: i64) -> Result<()> {
        if t >= self.frame_end {
            self.advance(t)?;
        }
        self.updates += 1;
        if let Some(s) = &mut self.span {
            s.1 = s.1.max(t);
        }
        match self.kinds[cell.0 as usize] {
            Combine::Sum => {
                for &c in self.schema.targets(cell) {
                    self.cum[c as usize] = self.cum[c as usize].wrapping_add(delta);
                    self.dirty.mark(c);
                }
            }
            k => {
                for &c in self.schema.targets(cell) {
                    let new = self.dirty.mark(c) != Some(0);
                    self.levels[0].extreme(self.slots[c as usize], delta, k, new);
                }
            }
        }
        Ok(())
    }

    /// Records that the data reaches time `t` without an update (the span grows, frames
    /// ending at or before `t` close). Times must not decrease.
    pub fn observe(&mut self, t: u64) -> Result<()> {
        if t >= self.frame_end {
            self.advance(t)?;
        }
        if let Some(s) = &mut self.span {
            s.1 = s.1.max(t);
        }
        Ok(())
    }

    /// Moves time to `t`: closes every finest frame ending at or before `t`.
    pub fn advance(&mut self, t: u64) -> Result<()> {
        let g0 = self.levels[0].spec.granularity_ns;
        if self.span.is_none() {
            self.span = Some((t, t));
            self.frame_end = t / g0 * g0 + g0;
            for l in &mut self.levels {
                let g = l.spec.granularity_ns;
                l.next_boundary = t / g * g + g;
            }
        }
        while t >= self.frame_end {
            let b = self.frame_end;
            self.close(b)?;
            self.spill_some()?;
            // Skip empty frames, but stop at a coarse boundary that has data to write.
            let mut next = (t / g0 * g0).max(b + g0);
            for (i, l) in self.levels.iter().enumerate().skip(1) {
                if self.dirty.any_at(i) {
                    next = next.min(l.next_boundary);
                }
            }
            self.frame_end = next;
        }
        Ok(())
    }

    /// Closes the finest frame ending at `b` and every coarser frame ending there.
    fn close(&mut self, b: u64) -> Result<()> {
        let (kinds, slots, dirty) = (&self.kinds, &self.slots, &self.dirty);
        let (first, rest) = self.levels.split_at_mut(1);
        // The finest frame's extremes fold into the current frame of every coarser level.
        if self.extreme_cells > 0 {
            for &c in dirty.finest() {
                let k = kinds[c as usize];
                if k == Combine::Sum {
                    continue;
                }
                let (slot, before) = (slots[c as usize], dirty.before(c));
                let v = first[0].acc[slot as usize];
                for (i, l) in rest.iter_mut().enumerate() {
                    l.extreme(slot, v, k, before.is_none_or(|p| p > i + 1));
                }
            }
        }
        // Levels 0..=k end a frame at `b`: each granularity divides the next, so a
        // level that does has finer levels that do too.
        let k = rest.iter().take_while(|l| b >= l.next_boundary).count();
        debug_assert!(rest[k..].iter().all(|l| b < l.next_boundary), "the levels ending a frame at {b} are not the finest ones");
        let cum = &self.cum;
        let step = |l: &mut Level, cells: &[u32]| -> Result<()> {
            let g = l.spec.granularity_ns;
            let idx = if cells.is_empty() { b / g } else { l.next_boundary / g };
            l.write(idx, cells, cum, kinds, slots)?;
            l.next_boundary = b / g * g + g;
            Ok(())
        };
        let cells = if k > 1 && dirty.work(k) > self.parallel_min_work {
            // Levels rolling at the same boundary are written in parallel, each from its
            // own list of dirty cells.
            let mut sets: Vec<Vec<u32>> = Vec::with_capacity(k + 1);
            for l in 0..=k {
                let s = dirty.at(l, sets.last().map_or(&[], Vec::as_slice));
                sets.push(s);
            }
            first[0].write(b / first[0].spec.granularity_ns, &sets[0], cum, kinds, slots)?;
            std::thread::scope(|s| {
                let hs: Vec<_> = rest[..k].iter_mut().zip(&sets[1..]).map(|(l, cells)| s.spawn(move || step(l, cells))).collect();
                hs.into_iter().try_for_each(|h| h.join().unwrap_or(Ok(())))
            })?;
            sets.pop().unwrap_or_default()
        } else {
            let mut cells = dirty.at(0, &[]);
            first[0].write(b / first[0].spec.granularity_ns, &cells, cum, kinds, slots)?;
            for (i, l) in rest[..k].iter_mut().enumerate() {
                cells = dirty.at(i + 1, &cells);
                step(l, &cells)?;
            }
            cells
        };
        self.dirty.rolled(k, &cells);
        Ok(())
    }

    /// Bounds the memory of a build whose result is saved to the cube directory `dir`
    /// (by [`crate::save`], which must name the same `dir`): from now on the levels'
    /// records are moved, as they accumulate, into the history file of the new
    /// generation of `dir` that the save will publish, so the cube holds about
    /// [`crate::spill::SPILL_RECORDS`] records in memory whatever its length. Until
    /// it is saved, the cube answers no query that needs a moved record (an error says
    /// so). Dropped unsaved (a failed build), the cube removes that generation, and
    /// `dir` if it made it; a killed build leaves an unnamed generation that the next
    /// save removes. The cube `dir` held stays as it was.
    pub fn spill_to(&mut self, dir: &std::path::Path) -> Result<()> {
        self.spill = Some(Spill::create(dir)?);
        Ok(())
    }

    /// Moves records to the spill file: sealed segments' at once, all of them when
    /// [`Cube::spill_records`] are held.
    fn spill_some(&mut self) -> Result<()> {
        let Some(sp) = &mut self.spill else { return Ok(()) };
        let all = self.levels.iter().map(|l| l.held).sum::<u64>() >= self.spill_records;
        for (li, l) in self.levels.iter_mut().enumerate() {
            if all || l.has_sealed_in_memory() {
                l.spill(li, &mut sp.sink, all)?;
            }
        }
        Ok(())
    }

    /// Closes the finest frame holding the last update (end of a trace) and commits.
    /// Coarser levels keep their open frames unwritten: the finest level answers that
    /// recent time, so a saved cube answers exactly what the live one answers now.
    pub fn finish(&mut self) -> Result<()> {
        if let Some((_, last)) = self.span {
            let g0 = self.levels[0].spec.granularity_ns;
            self.advance(last / g0 * g0 + g0)?;
        }
        self.flush()
    }

    /// Makes everything written visible to queries.
    pub fn flush(&mut self) -> Result<()> {
        self.levels.iter_mut().try_for_each(Level::flush)
    }

    /// The levels (finest first).
    pub fn levels(&self) -> &[Level] {
        &self.levels
    }

    /// First and last update times, ns.
    pub fn span(&self) -> Option<(u64, u64)> {
        self.span
    }

    /// "Now" for moving windows, ns: the finest boundary just after the last update
    /// (the end of the data, at the finest precision), or the latest boundary written
    /// if that is earlier (a live cube whose current frame is still open), but never
    /// before [`Cube::data_begin`].
    pub fn now(&self) -> u64 {
        match self.span {
            Some((_, last)) => {
                let g0 = self.levels[0].spec.granularity_ns;
                (last / g0 * g0 + g0).min(self.latest()).max(self.data_begin())
            }
            None => self.latest(),
        }
    }

    /// The finest boundary at or before the first update, ns (0 for an empty cube):
    /// every cumulative value there is zero.
    pub fn data_begin(&self) -> u64 {
        let g0 = self.levels[0].spec.granularity_ns;
        self.span.map_or(0, |(first, _)| first / g0 * g0)
    }

    /// Bytes of memory held by the histories, running totals and the schema's cells.
    pub fn memory(&self) -> u64 {
        self.levels.iter().map(Level::memory).sum::<u64>()
            + self.dirty.memory()
            + (self.cum.capacity() * 8 + self.kinds.capacity() + self.slots.capacity() * 4) as u64
            + self.schema.cell_memory()
    }

    /// Records written, per level.
    pub fn records(&self) -> Vec<u64> {
        self.levels.iter().map(|l| l.records).collect()
    }

    /// The latest boundary written at any level, ns (0 before the first).
    pub(crate) fn latest(&self) -> u64 {
        self.levels.iter().filter_map(|l| l.kept_ns().map(|k| k.1)).max().unwrap_or(0)
    }

    /// Chooses the level and boundary that answer time `t`: the finest level whose
    /// kept boundaries `[oldest, latest]` cover `t`, at its boundary nearest to `t`
    /// (the lower one on a tie). A time no level covers (after everything, before
    /// everything kept, or in a gap between levels) goes to the nearest kept boundary
    /// of any level (the finer on a tie).
    pub fn resolve(&self, t: u64) -> Resolved {
        let mut best: Option<(u64, Resolved)> = None;
        for (i, l) in self.levels.iter().enumerate() {
            let Some((lo, hi)) = l.kept_ns() else { continue };
            let g = l.spec.granularity_ns;
            let down = (t / g * g).clamp(lo, hi);
            let up = (t / g).saturating_add(u64::from(!t.is_multiple_of(g))).saturating_mul(g).clamp(lo, hi);
            let at = if up.abs_diff(t) < down.abs_diff(t) { up } else { down };
            let r = Resolved { at, level: i };
            if (lo..=hi).contains(&t) {
                return r;
            }
            if best.is_none_or(|(d, _)| at.abs_diff(t) < d) {
                best = Some((at.abs_diff(t), r));
            }
        }
        best.map_or(Resolved { at: 0, level: 0 }, |b| b.1)
    }

    /// The total of one cell over `[t1, t2)` as resolved: `(value, begin, end)`.
    pub fn range_cell(&self, cell: CellId, t1: u64, t2: u64) -> Result<(i64, Resolved, Resolved)> {
        let (r1, r2) = (self.resolve(t1), self.resolve(t2));
        let a = self.values_at(&[cell.0], r1)?[0];
        let b = self.values_at(&[cell.0], r2)?[0];
        Ok((b.wrapping_sub(a), r1, r2))
    }

    /// `C(r.at)` of each cell.
    pub fn values_at(&self, cells: &[u32], r: Resolved) -> Result<Vec<i64>> {
        if self.cum_live && self.span.is_some_and(|(_, last)| r.at > last) {
            // After the last update every cumulative value is the running total (the
            // common "window ending now" case costs no look-up).
            return Ok(cells.iter().map(|&c| self.cum.get(c as usize).copied().unwrap_or(0)).collect());
        }
        let l = &self.levels[r.level];
        l.values_at(cells, r.at / l.spec.granularity_ns)
    }
}
