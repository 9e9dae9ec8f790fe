//! Metrics, cuboids and cells (C2, C6 materialization).
//!
//! A *metric* sums one measure over cells named by members of some dimensions at
//! given finest levels. A *cuboid* is the metric seen at one level per dimension;
//! the finest one is always kept, others only as the [`Materialization`] says. A
//! *cell* is one member per dimension of a cuboid, and owns one history key. Each
//! finest cell knows the materialized cells above it (its *targets*), so an update
//! costs one addition per materialized cuboid and roll-ups from materialized cuboids
//! are exact by construction.

use std::collections::HashMap;

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
    /// Per cell: its members, one per dimension of its metric (flattened).
    cell_nodes: Vec<Vec<u32>>,
    /// Per cuboid: its cells.
    cuboid_cells: Vec<Vec<u32>>,
    #[serde(skip)]
    index: HashMap<(u32, Vec<u32>), u32>,
    /// Per finest cell: the cells an update adds to (itself first).
    #[serde(skip)]
    targets: Vec<Box<[u32]>>,
}

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
            cell_nodes: Vec::new(),
            cuboid_cells: Vec::new(),
            index: HashMap::new(),
            targets: Vec::new(),
        };
        for m in &cfg.metrics {
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
        let di = self.dims.iter().position(|x| x.name == d).ok_or_else(|| CubeError::Query(format!("no dimension {d:?}")))?;
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

    /// Number of cells.
    pub fn cell_count(&self) -> usize {
        self.cell_cuboid.len()
    }

    /// The finest cell of `metric` at members `nodes` (one per metric dimension, at
    /// the metric's finest levels; trailing ones left out are `all`, as for a feed
    /// that knows no host), created with its materialized ancestors if new.
    pub fn leaf_cell(&mut self, metric: MetricId, nodes: &[NodeId]) -> CellId {
        let m = &self.metrics[metric.0 as usize];
        let leaf_cuboid = m.cuboids[0];
        let mut key: Vec<u32> = nodes.iter().map(|n| n.0).collect();
        key.resize(m.dims.len(), 0);
        if let Some(&c) = self.index.get(&(leaf_cuboid, key.clone())) {
            return CellId(c);
        }
        let leaf = self.insert_cell(leaf_cuboid, key.clone());
        let mut targets = vec![leaf];
        for &cb in &self.metrics[metric.0 as usize].cuboids.clone()[1..] {
            let levels = self.cuboids[cb as usize].levels.clone();
            let anc: Vec<u32> = key
                .iter()
                .zip(&self.metrics[metric.0 as usize].dims)
                .zip(&levels)
                .map(|((&n, &d), &l)| self.dims[d as usize].ancestor(NodeId(n), l).0)
                .collect();
            let c = match self.index.get(&(cb, anc.clone())) {
                Some(&c) => c,
                None => self.insert_cell(cb, anc),
            };
            targets.push(c);
        }
        if self.targets.len() <= leaf as usize {
            self.targets.resize(leaf as usize + 1, Box::from([]));
        }
        self.targets[leaf as usize] = targets.into();
        CellId(leaf)
    }

    fn insert_cell(&mut self, cuboid: u32, nodes: Vec<u32>) -> u32 {
        let id = self.cell_cuboid.len() as u32;
        self.cell_cuboid.push(cuboid);
        self.cell_nodes.push(nodes.clone());
        self.cuboid_cells[cuboid as usize].push(id);
        self.index.insert((cuboid, nodes), id);
        id
    }

    /// The cells an update of finest cell `c` adds to (itself first).
    #[inline]
    pub fn targets(&self, c: CellId) -> &[u32] {
        &self.targets[c.0 as usize]
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
        &self.cell_nodes[c.0 as usize]
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
        for (c, (&cb, nodes)) in self.cell_cuboid.iter().zip(&self.cell_nodes).enumerate() {
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

    /// Rebuilds the indexes after deserialization.
    pub(crate) fn reindex(&mut self) {
        for d in &mut self.dims {
            d.reindex();
        }
        self.index = self.cell_cuboid.iter().zip(&self.cell_nodes).enumerate().map(|(i, (&cb, n))| ((cb, n.clone()), i as u32)).collect();
        self.targets = vec![Box::from([]); self.cell_cuboid.len()];
        for m in 0..self.metrics.len() {
            let cbs = self.metrics[m].cuboids.clone();
            for &leaf in &self.cuboid_cells[cbs[0] as usize].clone() {
                let key = self.cell_nodes[leaf as usize].clone();
                let mut t = vec![leaf];
                for &cb in &cbs[1..] {
                    let levels = &self.cuboids[cb as usize].levels;
                    let anc: Vec<u32> =
                        key.iter().zip(&self.metrics[m].dims).zip(levels).map(|((&n, &d), &l)| self.dims[d as usize].ancestor(NodeId(n), l).0).collect();
                    if let Some(&c) = self.index.get(&(cb, anc)) {
                        t.push(c);
                    }
                }
                self.targets[leaf as usize] = t.into();
            }
        }
    }
}
