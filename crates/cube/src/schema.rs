//! Metrics, cuboids and cells.
//!
//! A *metric* sums one measure over cells named by members of some dimensions at
//! given finest levels. A *cuboid* is the metric seen at one level per dimension;
//! the finest one is always kept, others only as the [`Materialization`] says. A
//! *cell* is one member per dimension of a cuboid, and owns one history key. Each
//! finest cell knows the materialized cells above it (its *targets*), so an update
//! costs one addition per materialized cuboid and roll-ups from materialized cuboids
//! are exact by construction.

use serde::{Deserialize, Serialize};

use crate::config::{split_dim_level, CubeConfig, Materialization};
use crate::dims::{Dimension, NodeId};
use crate::error::{CubeError, Result};

/// Index of a metric.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct MetricId(pub u16);

/// Index of a cell (its history key).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
pub struct CellId(pub u32);

/// How a metric's updates combine within a tilted-frame bucket.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, Default)]
#[serde(rename_all = "lowercase")]
pub enum Combine {
    /// Summed; the history keeps cumulative values `C(B)`.
    #[default]
    Sum,
    /// The smallest update per bucket (the history keeps one record per bucket).
    Min,
    /// The largest update per bucket.
    Max,
}

/// A compiled metric.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Metric {
    /// Name used in queries (`events`, `cpu_time`, `bytes_read.count` …).
    pub name: String,
    /// Measure the feed adds.
    pub measure: String,
    /// Dimension indices.
    pub dims: Vec<u8>,
    /// Finest level per dimension.
    pub leaf: Vec<u8>,
    /// The companion metric counting updates, if kept.
    pub count: Option<MetricId>,
    /// How updates combine (`Min` / `Max` for the `.min` / `.max` companions).
    #[serde(default)]
    pub combine: Combine,
    /// The companion metrics keeping per-bucket minimum and maximum, if kept.
    #[serde(default)]
    pub extremes: Option<(MetricId, MetricId)>,
    /// Cuboids of this metric; the first is the finest.
    pub cuboids: Vec<u32>,
}

/// One cuboid: a metric at one level per dimension.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Cuboid {
    /// The metric.
    pub metric: MetricId,
    /// Level per dimension of the metric.
    pub levels: Vec<u8>,
}

/// Metrics, cuboids and the cells created so far.
///
/// Per-cell tables are flat (a cube may hold millions of cells): the members of all
/// cells in one list, the targets of all finest cells in another, and the index from
/// members to cells keyed by a hash of them (equal hashes of different members, rare,
/// go to a small map of their own).
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Schema {
    /// Dimensions with their members.
    pub dims: Vec<Dimension>,
    /// Metrics.
    pub metrics: Vec<Metric>,
    /// Cuboids.
    pub cuboids: Vec<Cuboid>,
    /// Per cell: its cuboid.
    cell_cuboid: Vec<u32>,
    /// Per cell: its members, one per dimension of its metric.
    cell_nodes: CellNodes,
    /// Per cuboid: its cells.
    cuboid_cells: Vec<Vec<u32>>,
    #[serde(skip)]
    index: CellIndex,
    /// Per finest cell: the cells an update adds to (itself first).
    #[serde(skip)]
    targets: CellNodes,
    /// Whether `index` and `targets` are built (a schema read from a file builds them
    /// when a cell is first asked by its members: queries never need them).
    #[serde(skip)]
    cells_indexed: bool,
}

/// Lists of `u32`, one per cell, stored flat (written as a list of lists). While every
/// list has the same length (the members of cells whose metrics have as many
/// dimensions, or the one target of each finest cell of a minimal cube) no start is
/// kept: list `i` is `flat[i × width..]`.
#[derive(Debug, Clone, Default)]
struct CellNodes {
    /// Every list, one after the other.
    flat: Vec<u32>,
    /// Where list `i` starts in `flat` (it ends where list `i + 1` starts); empty
    /// while every list is `width` long.
    start: Vec<u64>,
    /// The length of every list, while `start` is empty.
    width: usize,
    /// Number of lists.
    count: usize,
}

impl CellNodes {
    fn len(&self) -> usize {
        self.count
    }

    fn get(&self, i: usize) -> &[u32] {
        if self.start.is_empty() {
            return &self.flat[i * self.width..(i + 1) * self.width];
        }
        let a = self.start[i] as usize;
        let b = self.start.get(i + 1).map_or(self.flat.len(), |&e| e as usize);
        &self.flat[a..b]
    }

    fn push(&mut self, list: &[u32]) {
        if self.count == 0 {
            self.width = list.len();
        }
        if self.start.is_empty() && list.len() != self.width {
            // The first list of another length: every list gets its start.
            self.start = (0..self.count).map(|i| (i * self.width) as u64).collect();
        }
        if !self.start.is_empty() {
            self.start.push(self.flat.len() as u64);
        }
        self.flat.extend_from_slice(list);
        self.count += 1;
    }

    fn iter(&self) -> impl Iterator<Item = &[u32]> {
        (0..self.len()).map(|i| self.get(i))
    }

    /// Bytes held.
    fn memory(&self) -> usize {
        self.flat.capacity() * 4 + self.start.capacity() * 8
    }
}

impl Serialize for CellNodes {
    fn serialize<S: serde::Serializer>(&self, s: S) -> std::result::Result<S::Ok, S::Error> {
        s.collect_seq(self.iter())
    }
}

impl<'de> Deserialize<'de> for CellNodes {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> std::result::Result<Self, D::Error> {
        struct V;
        impl<'de> serde::de::Visitor<'de> for V {
            type Value = CellNodes;
            fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                f.write_str("a list of lists of members")
            }
            fn visit_seq<A: serde::de::SeqAccess<'de>>(self, mut seq: A) -> std::result::Result<CellNodes, A::Error> {
                let mut out = CellNodes::default();
                while let Some(list) = seq.next_element::<Vec<u32>>()? {
                    out.push(&list);
                }
                Ok(out)
            }
        }
        d.deserialize_seq(V)
    }
}

/// The index from `(cuboid, members)` to cells: an open-addressing table of cell ids
/// (linear probing, at most 3/4 full), placed by a 64-bit hash of the cell's cuboid
/// and members and recognized by them, so that it costs 4 bytes a slot (5 to 11 a
/// cell) and equal hashes need nothing of their own.
#[derive(Debug, Clone, Default)]
struct CellIndex {
    /// Cell ids, [`CellIndex::EMPTY`] where none; a power of two long (or empty).
    slots: Vec<u32>,
    /// Cells indexed.
    len: usize,
}

impl CellIndex {
    /// An empty slot.
    const EMPTY: u32 = u32::MAX;

    /// The slot where the probe for `hash` starts (the hash's high bits: FxHash mixes
    /// them best).
    fn home(&self, hash: u64) -> usize {
        let bits = self.slots.len().trailing_zeros();
        (hash >> (64 - bits)) as usize
    }

    /// The cell with hash `hash` for which `is` holds.
    fn find(&self, hash: u64, is: impl Fn(u32) -> bool) -> Option<u32> {
        if self.slots.is_empty() {
            return None;
        }
        let mask = self.slots.len() - 1;
        let mut i = self.home(hash);
        loop {
            match self.slots[i] {
                Self::EMPTY => return None,
                c if is(c) => return Some(c),
                _ => i = (i + 1) & mask,
            }
        }
    }

    /// Adds cell `id` (not yet indexed) with hash `hash`; `hash_of` gives the hash of
    /// an indexed cell (when the table grows).
    fn insert(&mut self, hash: u64, id: u32, hash_of: impl Fn(u32) -> u64) {
        if (self.len + 1) * 4 > self.slots.len() * 3 {
            let grown = vec![Self::EMPTY; (self.slots.len() * 2).max(16)];
            let old = std::mem::replace(&mut self.slots, grown);
            for c in old.into_iter().filter(|&c| c != Self::EMPTY) {
                self.place(hash_of(c), c);
            }
        }
        self.place(hash, id);
        self.len += 1;
    }

    fn place(&mut self, hash: u64, id: u32) {
        let mask = self.slots.len() - 1;
        let mut i = self.home(hash);
        while self.slots[i] != Self::EMPTY {
            i = (i + 1) & mask;
        }
        self.slots[i] = id;
    }
}

fn cell_hash(cuboid: u32, nodes: &[u32]) -> u64 {
    use std::hash::{Hash, Hasher};
    let mut h = rustc_hash::FxHasher::default();
    (cuboid, nodes).hash(&mut h);
    h.finish()
}

/// Dimensions of a metric at most (the built-in dimensions; checked on open).
const MAX_DIMS: usize = 8;

/// The metric a companion (`X.count`, `X.min`, `X.max`) belongs to (`X`).
fn companion_base(name: &str) -> &str {
    [".count", ".min", ".max"].iter().find_map(|sfx| name.strip_suffix(sfx)).unwrap_or(name)
}

fn product(ranges: &[u8]) -> Vec<Vec<u8>> {
    let mut out = vec![Vec::new()];
    for &r in ranges {
        out = out
            .into_iter()
            .flat_map(|p| {
                (0..=r).map(move |l| {
                    let mut q = p.clone();
                    q.push(l);
                    q
                })
            })
            .collect();
    }
    out
}

impl Schema {
    /// Compiles `cfg` over the built-in dimensions.
    pub fn new(cfg: &CubeConfig) -> Result<Schema> {
        let mut s = Schema {
            dims: crate::dims::builtin(),
            metrics: Vec::new(),
            cuboids: Vec::new(),
            cell_cuboid: Vec::new(),
            cell_nodes: CellNodes::default(),
            cuboid_cells: Vec::new(),
            index: CellIndex::default(),
            cells_indexed: true,
            targets: CellNodes::default(),
        };
        for m in &cfg.metrics {
            if m.by.len() > MAX_DIMS {
                return Err(CubeError::Config(format!("metric {}: {} dimensions (at most {MAX_DIMS})", m.name, m.by.len())));
            }
            let mut dims = Vec::new();
            let mut leaf = Vec::new();
            for b in &m.by {
                let (d, l) = s.dim_level(b)?;
                dims.push(d);
                leaf.push(l);
            }
            let id = s.add_metric(&m.name, &m.measure, dims.clone(), leaf.clone());
            if m.count {
                let c = s.add_metric(&format!("{}.count", m.name), &m.measure, dims.clone(), leaf.clone());
                s.metrics[id as usize].count = Some(MetricId(c));
            }
            if m.extremes {
                let lo = s.add_metric(&format!("{}.min", m.name), &m.measure, dims.clone(), leaf.clone());
                let hi = s.add_metric(&format!("{}.max", m.name), &m.measure, dims.clone(), leaf.clone());
                s.metrics[lo as usize].combine = Combine::Min;
                s.metrics[hi as usize].combine = Combine::Max;
                s.metrics[id as usize].extremes = Some((MetricId(lo), MetricId(hi)));
            }
        }
        for m in 0..s.metrics.len() {
            let leaf = s.metrics[m].leaf.clone();
            let mut extra: Vec<Vec<u8>> = match cfg.materialize {
                Materialization::Minimal => Vec::new(),
                Materialization::Full => product(&leaf),
                Materialization::Partial => {
                    let base = companion_base(&s.metrics[m].name).to_string();
                    let mut v = Vec::new();
                    for c in cfg.cuboids.iter().filter(|c| c.metric == base) {
                        let mut lv = vec![0u8; leaf.len()];
                        for b in &c.by {
                            let (d, l) = s.dim_level(b)?;
                            let Some(i) = s.metrics[m].dims.iter().position(|x| *x == d) else {
                                return Err(CubeError::Config(format!("cuboid of {base}: {b} is not a dimension of the metric")));
                            };
                            if l > leaf[i] {
                                return Err(CubeError::Config(format!("cuboid of {base}: {b} is finer than the metric")));
                            }
                            lv[i] = l;
                        }
                        v.push(lv);
                    }
                    v
                }
            };
            extra.retain(|l| *l != leaf);
            extra.dedup();
            for levels in std::iter::once(leaf.clone()).chain(extra) {
                let id = s.cuboids.len() as u32;
                s.cuboids.push(Cuboid { metric: MetricId(m as u16), levels });
                s.cuboid_cells.push(Vec::new());
                s.metrics[m].cuboids.push(id);
            }
        }
        Ok(s)
    }

    fn add_metric(&mut self, name: &str, measure: &str, dims: Vec<u8>, leaf: Vec<u8>) -> u16 {
        self.metrics.push(Metric {
            name: name.into(),
            measure: measure.into(),
            dims,
            leaf,
            count: None,
            combine: Combine::Sum,
            extremes: None,
            cuboids: Vec::new(),
        });
        (self.metrics.len() - 1) as u16
    }

    /// Resolves `dim[:level]` (default level: the leaf).
    pub fn dim_level(&self, s: &str) -> Result<(u8, u8)> {
        let (d, l) = split_dim_level(s);
        let di = self.dims.iter().position(|x| x.name == d).ok_or_else(|| {
            let names: Vec<&str> = self.dims.iter().map(|x| x.name.as_str()).collect();
            CubeError::Query(format!("no dimension {d:?} (dimensions: {})", names.join(", ")))
        })?;
        let dim = &self.dims[di];
        let li = match l {
            None => dim.leaf_level(),
            Some(l) => dim.level(l).ok_or_else(|| CubeError::Query(format!("dimension {d} has no level {l:?} (levels: {})", dim.levels.join(", "))))?,
        };
        Ok((di as u8, li))
    }

    /// The metric called `name`.
    pub fn metric(&self, name: &str) -> Option<MetricId> {
        self.metrics.iter().position(|m| m.name == name).map(|i| MetricId(i as u16))
    }

    /// Metrics whose measure is `measure`, without the count companions.
    pub fn metrics_of(&self, measure: &str) -> Vec<MetricId> {
        (0..self.metrics.len())
            .filter(|&i| self.metrics[i].measure == measure && companion_base(&self.metrics[i].name) == self.metrics[i].name)
            .map(|i| MetricId(i as u16))
            .collect()
    }

    /// Bytes held by the per-cell tables (members, cuboid, targets, index).
    pub fn cell_memory(&self) -> u64 {
        (self.cell_cuboid.capacity() * 4
            + self.cell_nodes.memory()
            + self.targets.memory()
            + self.cuboid_cells.iter().map(|c| c.capacity() * 4).sum::<usize>()
            + self.index.slots.capacity() * 4) as u64
    }

    /// Number of cells.
    pub fn cell_count(&self) -> usize {
        self.cell_cuboid.len()
    }

    /// The finest cell of `metric` at members `nodes` (one per metric dimension, at
    /// the metric's finest levels; trailing ones left out are `all`, as for a feed
    /// that knows no host), created with its materialized ancestors if new.
    pub fn leaf_cell(&mut self, metric: MetricId, nodes: &[NodeId]) -> CellId {
        if !self.cells_indexed {
            self.index_cells();
        }
        let m = &self.metrics[metric.0 as usize];
        let (leaf_cuboid, n) = (m.cuboids[0], m.dims.len());
        let mut key = [0u32; MAX_DIMS];
        for (k, v) in key.iter_mut().zip(nodes) {
            *k = v.0;
        }
        let key = &key[..n.min(MAX_DIMS)];
        if let Some(c) = self.find(leaf_cuboid, key) {
            return CellId(c);
        }
        let leaf = self.insert_cell(leaf_cuboid, key);
        let mut targets = vec![leaf];
        for &cb in &self.metrics[metric.0 as usize].cuboids.clone()[1..] {
            let anc = self.ancestors(metric.0 as usize, cb, key);
            let c = match self.find(cb, &anc) {
                Some(c) => c,
                None => self.insert_cell(cb, &anc),
            };
            targets.push(c);
        }
        self.set_targets(leaf, &targets);
        CellId(leaf)
    }

    /// The members of cuboid `cb` (of metric `m`) above the finest members `key`.
    fn ancestors(&self, m: usize, cb: u32, key: &[u32]) -> Vec<u32> {
        let levels = &self.cuboids[cb as usize].levels;
        key.iter().zip(&self.metrics[m].dims).zip(levels).map(|((&n, &d), &l)| self.dims[d as usize].ancestor(NodeId(n), l).0).collect()
    }

    /// The cell of `cuboid` at `nodes`, if it exists.
    fn find(&self, cuboid: u32, nodes: &[u32]) -> Option<u32> {
        let (cuboids, members) = (&self.cell_cuboid, &self.cell_nodes);
        self.index.find(cell_hash(cuboid, nodes), |c| cuboids[c as usize] == cuboid && members.get(c as usize) == nodes)
    }

    /// Indexes cell `id` of `cuboid` at `nodes`.
    fn index_cell(&mut self, cuboid: u32, nodes: &[u32], id: u32) {
        let (cuboids, members) = (&self.cell_cuboid, &self.cell_nodes);
        self.index.insert(cell_hash(cuboid, nodes), id, |c| cell_hash(cuboids[c as usize], members.get(c as usize)));
    }

    /// Sets the targets of finest cell `leaf` (created last but for its ancestors).
    fn set_targets(&mut self, leaf: u32, targets: &[u32]) {
        while self.targets.len() < leaf as usize {
            self.targets.push(&[]);
        }
        self.targets.push(targets);
    }

    fn insert_cell(&mut self, cuboid: u32, nodes: &[u32]) -> u32 {
        let id = self.cell_cuboid.len() as u32;
        self.cell_cuboid.push(cuboid);
        self.cell_nodes.push(nodes);
        self.cuboid_cells[cuboid as usize].push(id);
        self.index_cell(cuboid, nodes, id);
        id
    }

    /// The cells an update of finest cell `c` adds to (itself first; a cell of a
    /// schema read from a file has its targets once [`Schema::leaf_cell`] was called).
    #[inline]
    pub fn targets(&self, c: CellId) -> &[u32] {
        if (c.0 as usize) < self.targets.len() {
            self.targets.get(c.0 as usize)
        } else {
            &[]
        }
    }

    /// How the updates of a cell combine.
    pub fn combine_of(&self, c: CellId) -> Combine {
        let cb = self.cell_cuboid[c.0 as usize] as usize;
        self.metrics[self.cuboids[cb].metric.0 as usize].combine
    }

    /// The cuboid of a cell.
    pub fn cuboid_of(&self, c: CellId) -> u32 {
        self.cell_cuboid[c.0 as usize]
    }

    /// The members of a cell, one per dimension of its metric.
    pub fn nodes_of(&self, c: CellId) -> &[u32] {
        self.cell_nodes.get(c.0 as usize)
    }

    /// The cells of a cuboid.
    pub fn cells_of(&self, cuboid: u32) -> &[u32] {
        &self.cuboid_cells[cuboid as usize]
    }

    /// Checks a deserialized schema: every index in range and consistent, so that
    /// no query can index out of bounds.
    pub(crate) fn validate(&self) -> std::result::Result<(), String> {
        self.dims.iter().try_for_each(Dimension::validate)?;
        let (nm, nc, ncells) = (self.metrics.len(), self.cuboids.len(), self.cell_cuboid.len());
        for m in &self.metrics {
            let ok = m.dims.len() == m.leaf.len()
                && m.dims.len() <= 8
                && m.dims.iter().zip(&m.leaf).all(|(&d, &l)| self.dims.get(d as usize).is_some_and(|d| l <= d.leaf_level()))
                && m.count.is_none_or(|c| (c.0 as usize) < nm)
                && m.extremes.is_none_or(|(a, b)| (a.0 as usize) < nm && (b.0 as usize) < nm)
                && !m.cuboids.is_empty()
                && m.cuboids.iter().all(|&c| (c as usize) < nc);
            if !ok {
                return Err(format!("metric {:?} has bad dimensions, levels or cuboids", m.name));
            }
        }
        for (i, cb) in self.cuboids.iter().enumerate() {
            let m = self.metrics.get(cb.metric.0 as usize).ok_or(format!("cuboid {i}: no metric {}", cb.metric.0))?;
            if cb.levels.len() != m.dims.len() || cb.levels.iter().zip(&m.leaf).any(|(l, leaf)| l > leaf) {
                return Err(format!("cuboid {i}: bad levels"));
            }
        }
        if self.cell_nodes.len() != ncells || self.cuboid_cells.len() != nc {
            return Err("cell tables of different lengths".into());
        }
        for (c, (&cb, nodes)) in self.cell_cuboid.iter().zip(self.cell_nodes.iter()).enumerate() {
            let m = self.cuboids.get(cb as usize).map(|x| &self.metrics[x.metric.0 as usize]).ok_or(format!("cell {c}: no cuboid {cb}"))?;
            if nodes.len() != m.dims.len() || nodes.iter().zip(&m.dims).any(|(&n, &d)| n as usize >= self.dims[d as usize].len()) {
                return Err(format!("cell {c}: bad members"));
            }
        }
        for (cb, cells) in self.cuboid_cells.iter().enumerate() {
            if cells.iter().any(|&c| self.cell_cuboid.get(c as usize) != Some(&(cb as u32))) {
                return Err(format!("cuboid {cb}: lists a cell of another cuboid"));
            }
        }
        Ok(())
    }

    /// Rebuilds the members' indexes after deserialization (the cells' are built
    /// when first needed: a cube opened to be queried never needs them, and they take
    /// a hash table entry per cell).
    pub(crate) fn reindex(&mut self) {
        for d in &mut self.dims {
            d.reindex();
        }
        self.index = CellIndex::default();
        self.targets = CellNodes::default();
        self.cells_indexed = false;
    }

    /// Builds the index from members to cells and the finest cells' targets.
    fn index_cells(&mut self) {
        self.cells_indexed = true;
        for i in 0..self.cell_cuboid.len() {
            let nodes = self.cell_nodes.get(i).to_vec();
            self.index_cell(self.cell_cuboid[i], &nodes, i as u32);
        }
        let mut leaves: Vec<(u32, usize)> =
            self.metrics.iter().enumerate().flat_map(|(m, x)| self.cuboid_cells[x.cuboids[0] as usize].iter().map(move |&c| (c, m))).collect();
        leaves.sort_unstable();
        self.targets = CellNodes::default();
        for (leaf, m) in leaves {
            let key = self.cell_nodes.get(leaf as usize).to_vec();
            let mut t = vec![leaf];
            for &cb in &self.metrics[m].cuboids[1..] {
                if let Some(c) = self.find(cb, &self.ancestors(m, cb, &key)) {
                    t.push(c);
                }
            }
            self.set_targets(leaf, &t);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Cells whose hashes are equal (here all of them) or whose probes meet each
    /// stay apart in the index and are found again by their members.
    #[test]
    fn equal_hashes_keep_cells_apart() {
        let members: Vec<[u32; 2]> = (0..100).map(|i| [i, i % 7]).collect();
        let mut ix = CellIndex::default();
        for (id, _) in members.iter().enumerate() {
            ix.insert(42, id as u32, |_| 42);
        }
        for (id, m) in members.iter().enumerate() {
            assert_eq!(ix.find(42, |c| members[c as usize] == *m), Some(id as u32));
        }
        assert_eq!(ix.find(42, |_| false), None);
        assert!(ix.slots.len() >= 128 && ix.len == 100);
    }

    /// A reindexed copy of a schema (as read from a file) finds the same cells and
    /// targets; a minimal schema keeps no starts for its equally long lists.
    #[test]
    fn a_reindexed_schema_finds_the_same_cells() {
        let cfg = CubeConfig { materialize: Materialization::Full, ..Default::default() };
        let mut s = Schema::new(&cfg).unwrap();
        let m = s.metric("events").unwrap();
        let ops: Vec<NodeId> = (0..50).map(|i| s.dims[4].member(&["k", &format!("op{i}")])).collect();
        let cpu = s.dims[1].member(&["3"]);
        let cells: Vec<CellId> = ops.iter().map(|&o| s.leaf_cell(m, &[o, cpu])).collect();
        let mut copy: Schema = serde_json::from_str(&serde_json::to_string(&s).unwrap()).unwrap();
        copy.reindex();
        for (&o, &c) in ops.iter().zip(&cells) {
            assert_eq!(copy.leaf_cell(m, &[o, cpu]), c);
            assert_eq!(copy.targets(c), s.targets(c));
            assert!(s.targets(c).len() > 1, "full materialization: ancestors");
            assert_eq!(copy.nodes_of(c), s.nodes_of(c));
        }
        assert_eq!(copy.cell_count(), s.cell_count());
        let mut minimal = Schema::new(&CubeConfig::default()).unwrap();
        let cpu = minimal.dims[1].member(&["3"]);
        for i in 0..50 {
            let o = minimal.dims[4].member(&["k", &format!("op{i}")]);
            let c = minimal.leaf_cell(m, &[o, cpu]);
            assert_eq!((minimal.targets(c), minimal.nodes_of(c)), (&[c.0][..], &[o.0, cpu.0, 0][..]));
        }
        assert!(minimal.targets.start.is_empty() && minimal.cell_nodes.start.is_empty());
    }
}
