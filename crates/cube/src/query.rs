//! OLAP queries: point, range, moving (`last`) and fixed (`every`) windows,
//! top-k, roll-up / drill-down (`by dim:level`), slice and dice (`where`).
//!
//! Every window is answered by two stabbing queries per cell (`C(end) - C(begin)`),
//! at boundaries chosen by [`Cube::resolve`]: the answer states the exact interval
//! `[begin, end)` it covers, which depends on the precision kept at that age. A
//! grouping at a level coarser than a materialized cuboid is aggregated on the fly
//! from the smallest materialized cuboid that is fine enough.

use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, Ordering};

use serde::Serialize;

use crate::cube::{Cube, Resolved};
use crate::dims::{Dimension, NodeId};
use crate::error::{CubeError, Result};
use crate::schema::MetricId;
use crate::time::format_duration;

/// The most windows one query may ask for (`every`).
pub const MAX_WINDOWS: u64 = 100_000;

/// How cell values combine.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Default)]
#[serde(rename_all = "lowercase")]
pub enum Agg {
    /// Sum of the measure.
    #[default]
    Sum,
    /// Number of updates (needs `count = true` on the metric).
    Count,
    /// Sum / count.
    Avg,
    /// Smallest single update (needs `extremes = true` on the metric).
    Min,
    /// Largest single update (needs `extremes = true` on the metric).
    Max,
}

impl std::str::FromStr for Agg {
    type Err = CubeError;
    fn from_str(s: &str) -> Result<Agg> {
        match s {
            "sum" => Ok(Agg::Sum),
            "count" => Ok(Agg::Count),
            "avg" | "average" => Ok(Agg::Avg),
            "min" => Ok(Agg::Min),
            "max" => Ok(Agg::Max),
            _ => Err(CubeError::Query(format!("unknown aggregate {s:?} (sum, count, avg, min, max)"))),
        }
    }
}

/// Which time a query covers.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum When {
    /// Everything before this instant (ns), from the start of the data.
    At(u64),
    /// `[begin, end)` (ns).
    Range(u64, u64),
    /// The last `d` ns before [`Cube::now`] (the end of the data).
    Last(u64),
}

/// A query.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Request {
    /// Metric name.
    pub metric: String,
    /// Aggregate.
    pub agg: Agg,
    /// Time.
    pub when: When,
    /// Group by these `dim[:level]` (empty: one total).
    pub by: Vec<String>,
    /// Keep cells whose member at `dim[:level]` is one of the labels (slice: one
    /// label, dice: several; several filters combine with AND).
    pub filters: Vec<(String, Vec<String>)>,
    /// Keep the k largest rows.
    pub top: Option<usize>,
    /// Split the time into windows of this many ns.
    pub every: Option<u64>,
}

impl Request {
    /// A sum of `metric` over `when`, ungrouped.
    pub fn new(metric: &str, when: When) -> Request {
        Request { metric: metric.into(), agg: Agg::Sum, when, by: Vec::new(), filters: Vec::new(), top: None, every: None }
    }
}

/// One group of an answer.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Row {
    /// Labels, one per `by` entry.
    pub group: Vec<String>,
    /// The value.
    pub value: f64,
}

/// The answer over one window.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Window {
    /// Start of the covered interval, ns (inclusive).
    pub begin_ns: u64,
    /// End of the covered interval, ns (exclusive).
    pub end_ns: u64,
    /// Granularity of the level that answered the start.
    pub begin_granularity_ns: u64,
    /// Granularity of the level that answered the end.
    pub end_granularity_ns: u64,
    /// How far the start moved from the request, ns (`begin_ns` − requested start;
    /// 0 when both lie before the first update, where nothing happened).
    pub begin_moved_ns: i64,
    /// How far the end moved from the request, ns (`end_ns` − requested end).
    pub end_moved_ns: i64,
    /// Rows, by decreasing value then group.
    pub rows: Vec<Row>,
}

/// The answer to a [`Request`].
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Response {
    /// Metric name.
    pub metric: String,
    /// Aggregate.
    pub agg: Agg,
    /// The `by` entries, resolved to `dim:level`.
    pub by: Vec<String>,
    /// The first update of the cube (offsets are relative to it), ns.
    pub origin_ns: u64,
    /// One window, or several with `every`.
    pub windows: Vec<Window>,
}

/// `stated - requested`, ns, saturated to `i64`.
fn moved(stated: u64, requested: u64) -> i64 {
    (i128::from(stated) - i128::from(requested)).clamp(i128::from(i64::MIN), i128::from(i64::MAX)) as i64
}

/// A signed duration: `+1.5s`, `-300ms`.
fn signed_duration(ns: i64) -> String {
    format!("{}{}", if ns < 0 { "-" } else { "+" }, format_duration(ns.unsigned_abs()))
}

/// At most this many `by` entries (one per dimension).
const MAX_BY: usize = 8;

/// A group: label ids of its `by` entries.
type GroupKey = [u32; MAX_BY];

/// Label ids of one answer: equal labels share an id, so members with equal labels
/// (a pid under two names after `exec`) fall in one group.
#[derive(Default)]
struct Labels<'s> {
    /// Per dimension: member → id + 1 (0: not seen yet).
    by_node: Vec<Vec<u32>>,
    /// Label → id.
    by_text: HashMap<&'s str, u32>,
    /// Id → label.
    text: Vec<&'s str>,
}

impl<'s> Labels<'s> {
    fn id(&mut self, dim: &'s Dimension, d: usize, n: NodeId) -> u32 {
        if self.by_node.len() <= d {
            self.by_node.resize_with(d + 1, Vec::new);
        }
        let slots = &mut self.by_node[d];
        if slots.len() < dim.len() {
            slots.resize(dim.len(), 0);
        }
        match slots[n.0 as usize] {
            0 => {
                let t = dim.label(n);
                let next = self.text.len() as u32;
                let i = *self.by_text.entry(t).or_insert(next);
                if i == next {
                    self.text.push(t);
                }
                slots[n.0 as usize] = i + 1;
                i
            }
            i => i - 1,
        }
    }
}

/// Groups and their values, sorted by key.
type Grouped = Vec<(GroupKey, i64)>;

/// Folds `(key, value)` pairs into groups with `f`: a dense table for a single `by`
/// entry (keys are label ids), a hash map otherwise.
fn fold_groups(pairs: impl Iterator<Item = (GroupKey, i64)>, nby: usize, f: impl Fn(i64, i64) -> i64) -> Grouped {
    let mut out: Grouped = if nby <= 1 {
        let mut dense: Vec<Option<i64>> = Vec::new();
        for (k, v) in pairs {
            let i = k[0] as usize;
            if dense.len() <= i {
                dense.resize(i + 1, None);
            }
            dense[i] = Some(dense[i].map_or(v, |o| f(o, v)));
        }
        dense.into_iter().enumerate().filter_map(|(i, v)| v.map(|v| ([i as u32, 0, 0, 0, 0, 0, 0, 0], v))).collect()
    } else {
        let mut m: HashMap<GroupKey, i64> = HashMap::new();
        for (k, v) in pairs {
            m.entry(k).and_modify(|o| *o = f(*o, v)).or_insert(v);
        }
        m.into_iter().collect()
    };
    out.sort_unstable_by_key(|x| x.0);
    out
}

/// Frames of one level: `(level, first, last)` boundary indices of their ends.
type Frames = (usize, u64, u64);

struct Plan {
    metric: MetricId,
    cuboid: u32,
    /// Position of each `by` in the metric's dimensions, and its level.
    by: Vec<(usize, u8)>,
    filters: Vec<(usize, u8, Vec<String>)>,
}

impl Cube {
    fn plan(&self, metric: MetricId, req: &Request) -> Result<Plan> {
        let s = &self.schema;
        let m = &s.metrics[metric.0 as usize];
        let pos = |spec: &str| -> Result<(usize, u8)> {
            let (d, l) = s.dim_level(spec)?;
            let i = m
                .dims
                .iter()
                .position(|x| *x == d)
                .ok_or_else(|| CubeError::Query(format!("metric {} has no dimension {}", m.name, s.dims[d as usize].name)))?;
            if l > m.leaf[i] {
                return Err(CubeError::Query(format!(
                    "metric {} stops at {}:{}",
                    m.name, s.dims[d as usize].name, s.dims[d as usize].levels[m.leaf[i] as usize]
                )));
            }
            Ok((i, l))
        };
        if req.by.len() > MAX_BY {
            return Err(CubeError::Query(format!("{} `by` entries (at most {MAX_BY})", req.by.len())));
        }
        let by: Vec<(usize, u8)> = req.by.iter().map(|b| pos(b)).collect::<Result<_>>()?;
        let filters: Vec<(usize, u8, Vec<String>)> = req.filters.iter().map(|(f, v)| pos(f).map(|(i, l)| (i, l, v.clone()))).collect::<Result<_>>()?;
        // A member the cube does not know is a mistake to say, not an empty answer.
        for ((spec, _), (i, l, values)) in req.filters.iter().zip(&filters) {
            let dim = &s.dims[m.dims[*i] as usize];
            let known: Vec<&str> = dim.members_at(*l).into_iter().map(|n| dim.label(n)).collect();
            if let Some(v) = values.iter().find(|v| !known.contains(&v.as_str())) {
                let shown: Vec<&str> = known.iter().copied().take(8).collect();
                let more = if known.len() > shown.len() { format!(", … {} in all", known.len()) } else { String::new() };
                return Err(CubeError::Query(format!("where {spec}={v}: no such member (members: {}{more})", shown.join(", "))));
            }
        }
        let mut need = vec![0u8; m.dims.len()];
        for (i, l) in by.iter().copied().chain(filters.iter().map(|(i, l, _)| (*i, *l))) {
            need[i] = need[i].max(l);
        }
        let cuboid = m
            .cuboids
            .iter()
            .copied()
            .filter(|&cb| s.cuboids[cb as usize].levels.iter().zip(&need).all(|(have, want)| have >= want))
            .min_by_key(|&cb| s.cells_of(cb).len())
            .unwrap_or(m.cuboids[0]);
        Ok(Plan { metric, cuboid, by, filters })
    }

    /// Sums per group of `C(r2) - C(r1)`.
    /// Frames of the tilted frame that tile `[b1, b2)` from `b2` down, finest first:
    /// `(level, first, last)` boundary indices of the frames' ends, and the begin
    /// actually reached (`b1` unless no level holds the older part at an aligned
    /// boundary; then the covered interval is shorter and says so).
    pub(crate) fn cover(&self, b1: u64, b2: u64) -> (u64, Vec<Frames>) {
        let n = self.levels.len();
        let (mut cursor, mut out, mut i) = (b2, Vec::new(), 0);
        while cursor > b1 {
            let Some(j) = (i..n).find(|&j| {
                let g = self.levels[j].spec.granularity_ns;
                cursor % g == 0 && self.levels[j].available(cursor / g)
            }) else {
                break;
            };
            let l = &self.levels[j];
            let g = l.spec.granularity_ns;
            // The oldest retained record ends the frame starting one granule before it.
            let avail = if l.expired { l.oldest().saturating_sub(1) * g } else { 0 };
            let mut lo = b1.max(avail);
            if lo > b1 || lo % g != 0 {
                // Hand the older part to a coarser level, at the lowest boundary one of
                // them holds (so nothing between is lost).
                lo = (j + 1..n)
                    .filter_map(|k| {
                        let lk = &self.levels[k];
                        let gk = lk.spec.granularity_ns;
                        let x = lo.max(lk.oldest() * gk).div_ceil(gk) * gk;
                        lk.available(x / gk).then_some(x)
                    })
                    .min()
                    .unwrap_or(cursor)
                    .max(lo.div_ceil(g) * g);
            }
            if lo < cursor {
                out.push((j, lo / g + 1, cursor / g));
                cursor = lo;
            }
            i = j + 1;
        }
        (cursor, out)
    }

    /// Per group: the sums of `C(r2) - C(r1)`, or with `extremes = Some((max, cover))`
    /// the min / max of the bucket records of the cover. Groups are keyed by label ids
    /// of `labels` (equal labels merge, whatever member they come from).
    fn groups<'s>(
        &'s self,
        p: &Plan,
        r1: Resolved,
        r2: Resolved,
        zero_start: bool,
        extremes: Option<(bool, &[Frames])>,
        labels: &mut Labels<'s>,
    ) -> Result<Grouped> {
        let s = &self.schema;
        let m = &s.metrics[p.metric.0 as usize];
        let levels = &s.cuboids[p.cuboid as usize].levels;
        let node = |c: u32, i: usize, l: u8| -> (usize, NodeId) {
            let d = &s.dims[m.dims[i] as usize];
            let n = NodeId(s.nodes_of(crate::schema::CellId(c))[i]);
            (m.dims[i] as usize, d.ancestor(n, l.min(levels[i])))
        };
        let label = |c: u32, i: usize, l: u8| -> &str {
            let (d, n) = node(c, i, l);
            s.dims[d].label(n)
        };
        let cells: Vec<u32> =
            s.cells_of(p.cuboid).iter().copied().filter(|&c| p.filters.iter().all(|(i, l, v)| v.iter().any(|x| x == label(c, *i, *l)))).collect();
        let mut key_of = |c: u32| -> GroupKey {
            let mut k = [0u32; MAX_BY];
            for (j, &(i, l)) in p.by.iter().enumerate() {
                let (d, n) = node(c, i, l);
                k[j] = labels.id(&s.dims[d], d, n);
            }
            k
        };
        let nby = p.by.len();
        if let Some((max, cover)) = extremes {
            // Per cell, the extreme of the buckets of the cover that had updates.
            let mut pairs = Vec::new();
            for &c in &cells {
                let mut best: Option<i64> = None;
                for &(li, lo, hi) in cover {
                    self.levels[li].each_record(c, lo, hi, |v| best = Some(best.map_or(v, |b| if max { b.max(v) } else { b.min(v) })))?;
                }
                if let Some(v) = best {
                    pairs.push((key_of(c), v));
                }
            }
            return Ok(fold_groups(pairs.into_iter(), nby, |a, b| if max { a.max(b) } else { a.min(b) }));
        }
        let v2 = self.values_at(&cells, r2)?;
        let v1 = if zero_start || r1.at == 0 { vec![0; cells.len()] } else { self.values_at(&cells, r1)? };
        let pairs: Vec<(GroupKey, i64)> = cells
            .iter()
            .enumerate()
            .filter_map(|(k, &c)| {
                let d = v2[k].wrapping_sub(v1[k]);
                (d != 0).then(|| (key_of(c), d))
            })
            .collect();
        Ok(fold_groups(pairs.into_iter(), nby, i64::wrapping_add))
    }

    fn window(&self, req: &Request, plans: &(Plan, Option<Plan>), t1: u64, t2: u64) -> Result<Window> {
        // Everything before the first update is zero: a window starting at or before
        // it starts with the data (stated as the finest boundary before the data).
        let begin = self.data_begin();
        let zero_start = t1 <= begin || self.span.is_some_and(|s| t1 <= s.0);
        let mut r1 = if zero_start { Resolved { at: t1.max(begin), level: 0 } } else { self.resolve(t1) };
        let mut r2 = self.resolve(t2);
        if r2.at < r1.at {
            r2 = r1;
        }
        if t2 > t1 && r2.at == r1.at && !zero_start {
            // Both ends rounded to one boundary b: state the frame next to b that
            // overlaps the request most, rather than an empty interval.
            let l = &self.levels[r1.level];
            let (g, (lo, hi)) = (l.spec.granularity_ns, l.kept_ns().unwrap_or((r1.at, r1.at)));
            let b = r1.at;
            let overlap = |a: u64, z: u64| t2.min(z).saturating_sub(t1.max(a));
            let after = (b + g <= hi).then(|| overlap(b, b + g));
            let before = (b >= lo + g).then(|| overlap(b - g, b));
            match (after, before) {
                (Some(x), y) if y.is_none_or(|y| x >= y) => r2 = Resolved { at: b + g, level: r1.level },
                (_, Some(_)) => r1 = Resolved { at: b - g, level: r1.level },
                _ => {}
            }
        }
        // Min / max: the buckets tiling the interval (from 0 when it starts with the data).
        // Nothing happened after `now`: a window ending there may be tiled up to the
        // latest boundary of any level (coarse frames then fit exactly).
        let top = if r2.at >= self.now() { self.latest().max(r2.at) } else { r2.at };
        let (cover_begin, cover) =
            if matches!(req.agg, Agg::Min | Agg::Max) { self.cover(if zero_start { 0 } else { r1.at }, top) } else { (r1.at, Vec::new()) };
        let extremes = matches!(req.agg, Agg::Min | Agg::Max).then(|| (req.agg == Agg::Max, cover.as_slice()));
        let mut labels = Labels::default();
        let sums = self.groups(&plans.0, r1, r2, zero_start, extremes, &mut labels)?;
        let mut keyed: Vec<(GroupKey, f64)> = match &plans.1 {
            None => sums.into_iter().map(|(k, v)| (k, v as f64)).collect(),
            Some(cp) => {
                let counts = self.groups(cp, r1, r2, zero_start, None, &mut labels)?;
                let sum_of = |k: &GroupKey| sums.binary_search_by_key(k, |x| x.0).map_or(0, |i| sums[i].1);
                counts.into_iter().filter(|(_, n)| *n != 0).map(|(k, n)| (k, sum_of(&k) as f64 / n as f64)).collect()
            }
        };
        // By decreasing value, then group labels; labels are made only for the rows kept.
        let nby = plans.0.by.len();
        let text = |id: u32| labels.text[id as usize];
        let order = |a: &(GroupKey, f64), b: &(GroupKey, f64)| {
            b.1.total_cmp(&a.1).then_with(|| a.0[..nby].iter().map(|&i| text(i)).cmp(b.0[..nby].iter().map(|&i| text(i))))
        };
        if let Some(k) = req.top.filter(|&k| k < keyed.len()) {
            // Top-k: select the k first, then sort only them.
            if k == 0 {
                keyed.clear();
            } else {
                keyed.select_nth_unstable_by(k - 1, order);
                keyed.truncate(k);
            }
        }
        keyed.sort_by(order);
        let rows: Vec<Row> = keyed.iter().map(|(k, v)| Row { group: k[..nby].iter().map(|&i| text(i).to_string()).collect(), value: *v }).collect();
        let g = |r: Resolved| self.levels[r.level].spec.granularity_ns;
        let (begin_ns, begin_granularity_ns) = if extremes.is_some() {
            (cover_begin.max(r1.at).min(r2.at), cover.last().map_or(g(r1), |&(li, _, _)| self.levels[li].spec.granularity_ns))
        } else {
            (r1.at, g(r1))
        };
        // A start moved within the time before the first update changes nothing.
        let before_data = |t: u64| self.span.is_none_or(|s| t <= s.0);
        let begin_moved_ns = if before_data(t1) && before_data(begin_ns) { 0 } else { moved(begin_ns, t1) };
        Ok(Window { begin_ns, end_ns: r2.at, begin_granularity_ns, end_granularity_ns: g(r2), begin_moved_ns, end_moved_ns: moved(r2.at, t2), rows })
    }

    /// Answers `req`.
    pub fn query(&self, req: &Request) -> Result<Response> {
        self.query_until(req, &AtomicBool::new(false))
    }

    /// An estimate of the work [`Cube::query`] does for `req`, in cell values read:
    /// windows × cells of the cuboid that answers (× 2 for `avg`, which reads the
    /// counts too; × the levels of the tilted frame for `min`/`max`, which read
    /// bucket records). Cheap (no value is read): a server checks it before it runs
    /// a request. The errors are those of [`Cube::query`].
    pub fn query_cost(&self, req: &Request) -> Result<u64> {
        let q = self.prepare(req)?;
        let per_window = |p: &Plan| self.schema.cells_of(p.cuboid).len() as u64;
        let mut cells = per_window(&q.plans.0) + q.plans.1.as_ref().map_or(0, per_window);
        if matches!(req.agg, Agg::Min | Agg::Max) {
            cells *= self.levels.len() as u64;
        }
        Ok(q.windows.saturating_mul(cells.max(1)))
    }

    /// Answers `req` unless `cancel` is set before it is done: then the error says
    /// the query was cancelled (a server sets it when its client goes away).
    pub fn query_until(&self, req: &Request, cancel: &AtomicBool) -> Result<Response> {
        let q = self.prepare(req)?;
        let (t1, t2) = q.span;
        let windows = match req.every {
            Some(e) if q.windows > 1 => (0..q.windows)
                .map(|i| {
                    if cancel.load(Ordering::Relaxed) {
                        return Err(CubeError::Query("query cancelled".into()));
                    }
                    // `(i + 1) * e` may pass u64::MAX on an unbounded range: saturate.
                    self.window(req, &q.plans, t1 + i * e, t1.saturating_add((i + 1).saturating_mul(e)).min(t2))
                })
                .collect::<Result<_>>()?,
            _ => vec![self.window(req, &q.plans, t1, t2)?],
        };
        let s = &self.schema;
        let m = &s.metrics[q.base.0 as usize];
        let by = q
            .plans
            .0
            .by
            .iter()
            .map(|&(i, l)| {
                let d = &s.dims[m.dims[i] as usize];
                format!("{}:{}", d.name, d.levels[l as usize])
            })
            .collect();
        Ok(Response { metric: req.metric.clone(), agg: req.agg, by, origin_ns: self.span.map_or(0, |s| s.0), windows })
    }

    /// The plans, time span and number of windows of `req`, checked.
    fn prepare(&self, req: &Request) -> Result<Prepared> {
        let s = &self.schema;
        let base = s.metric(&req.metric).ok_or_else(|| {
            let names: Vec<&str> = s.metrics.iter().map(|m| m.name.as_str()).collect();
            CubeError::Query(format!("no metric {:?} (metrics: {})", req.metric, names.join(", ")))
        })?;
        let count = || s.metrics[base.0 as usize].count.ok_or_else(|| CubeError::Query(format!("metric {} keeps no count (set count = true)", req.metric)));
        let plans = match req.agg {
            Agg::Sum => (self.plan(base, req)?, None),
            Agg::Count => (self.plan(count()?, req)?, None),
            Agg::Avg => (self.plan(base, req)?, Some(self.plan(count()?, req)?)),
            Agg::Min | Agg::Max => {
                let (lo, hi) = s.metrics[base.0 as usize]
                    .extremes
                    .ok_or_else(|| CubeError::Query(format!("metric {} keeps no min / max (set extremes = true)", req.metric)))?;
                (self.plan(if req.agg == Agg::Min { lo } else { hi }, req)?, None)
            }
        };
        // Nothing happens after `now` (the end of the data), so ends past it are
        // clamped there; `At` starts with the data.
        let now = self.now();
        let clamp = |t: u64| if self.span.is_some() { t.min(now) } else { t };
        let (t1, t2) = match req.when {
            When::At(t) => (self.data_begin().min(clamp(t)), clamp(t)),
            When::Range(a, b) => (a.min(clamp(b)), clamp(b)),
            When::Last(d) => (now.saturating_sub(d), now),
        };
        let windows = match req.every {
            Some(e) if e > 0 && t2 > t1 => {
                let n = (t2 - t1).div_ceil(e);
                if n > MAX_WINDOWS {
                    return Err(CubeError::Query(format!(
                        "every {}: {n} windows, over the limit of {MAX_WINDOWS} (ask a larger every or a shorter range)",
                        format_duration(e)
                    )));
                }
                n
            }
            _ => 1,
        };
        Ok(Prepared { base, plans, span: (t1, t2), windows })
    }
}

/// A checked request, ready to answer.
struct Prepared {
    base: MetricId,
    /// The plan of the values and, for `avg`, of the counts.
    plans: (Plan, Option<Plan>),
    span: (u64, u64),
    windows: u64,
}

impl Response {
    /// The JSON form: `{"metric","agg","by":[..],"origin_ns","windows":[{"begin_ns",
    /// "end_ns","begin_granularity_ns","end_granularity_ns","rows":[{"group":[..],"value"}]}]}`.
    pub fn to_json(&self) -> serde_json::Value {
        serde_json::to_value(self).unwrap_or(serde_json::Value::Null)
    }

    /// A column name for each `by` entry, as tables of the answer name them (the
    /// `export` crate's series, SQL's `cube_series`): the level's name when no other
    /// entry has a level of that name, else `dim_level`.
    pub fn by_columns(&self) -> Vec<String> {
        let levels: Vec<&str> = self.by.iter().map(|b| b.rsplit(':').next().unwrap_or(b)).collect();
        self.by.iter().zip(&levels).map(|(b, l)| if levels.iter().filter(|x| *x == l).count() == 1 { l.to_string() } else { b.replace(':', "_") }).collect()
    }

    /// The first line of the text: `metric (Agg) by dim:level, …`.
    pub fn title(&self) -> String {
        let by = if self.by.is_empty() { String::new() } else { format!(" by {}", self.by.join(", ")) };
        format!("{} ({:?}){by}\n", self.metric, self.agg)
    }

    /// The lines that state window `w`'s exact interval (and how far it moved from the
    /// request).
    pub fn window_header(&self, w: &Window) -> String {
        let rel = |t: u64| {
            if t >= self.origin_ns {
                format!("+{:.3}s", (t - self.origin_ns) as f64 / 1e9)
            } else {
                format!("-{:.3}s", (self.origin_ns - t) as f64 / 1e9)
            }
        };
        let mut s = format!(
            "[{}, {}) ns = [{}, {}) from start, precision {} / {}\n",
            w.begin_ns,
            w.end_ns,
            rel(w.begin_ns),
            rel(w.end_ns),
            format_duration(w.begin_granularity_ns),
            format_duration(w.end_granularity_ns)
        );
        if w.begin_moved_ns != 0 || w.end_moved_ns != 0 {
            s += &format!("  (asked start moved {}, end moved {})\n", signed_duration(w.begin_moved_ns), signed_duration(w.end_moved_ns));
        }
        s
    }

    /// Plain text with raw values: one block per window stating its exact interval
    /// (`tracecube query` shows units and names instead).
    pub fn to_text(&self) -> String {
        let mut s = self.title();
        for w in &self.windows {
            s += &self.window_header(w);
            if w.rows.is_empty() {
                s += "  (nothing)\n";
            }
            for r in &w.rows {
                let v = if r.value.fract() == 0.0 { format!("{}", r.value as i64) } else { format!("{:.3}", r.value) };
                s += &format!("  {v:>16}  {}\n", if r.group.is_empty() { "all".to_string() } else { r.group.join("  ") });
            }
        }
        s
    }
}
