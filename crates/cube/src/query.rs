//! OLAP queries (C6): point, range, moving (`last`) and fixed (`every`) windows,
//! top-k, roll-up / drill-down (`by dim:level`), slice and dice (`where`).
//!
//! Every window is answered by two stabbing queries per cell (`C(end) - C(begin)`),
//! at boundaries chosen by [`Cube::resolve`]: the answer states the exact interval
//! `[begin, end)` it covers, which depends on the precision kept at that age. A
//! grouping at a level coarser than a materialized cuboid is aggregated on the fly
//! from the smallest materialized cuboid that is fine enough.

use std::collections::BTreeMap;

use serde::Serialize;

use crate::cube::{Cube, Resolved};
use crate::dims::NodeId;
use crate::error::{CubeError, Result};
use crate::schema::MetricId;
use crate::time::format_duration;

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
}

impl std::str::FromStr for Agg {
    type Err = CubeError;
    fn from_str(s: &str) -> Result<Agg> {
        match s {
            "sum" => Ok(Agg::Sum),
            "count" => Ok(Agg::Count),
            "avg" | "average" => Ok(Agg::Avg),
            _ => Err(CubeError::Query(format!("unknown aggregate {s:?} (sum, count, avg)"))),
        }
    }
}

/// Which time a query covers.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum When {
    /// Everything before this instant (ns).
    At(u64),
    /// `[begin, end)` (ns).
    Range(u64, u64),
    /// The last `d` ns before the cube's latest boundary.
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
            let i = m.dims.iter().position(|x| *x == d).ok_or_else(|| CubeError::Query(format!("metric {} has no dimension {}", m.name, s.dims[d as usize].name)))?;
            if l > m.leaf[i] {
                return Err(CubeError::Query(format!("metric {} stops at {}:{}", m.name, s.dims[d as usize].name, s.dims[d as usize].levels[m.leaf[i] as usize])));
            }
            Ok((i, l))
        };
        let by: Vec<(usize, u8)> = req.by.iter().map(|b| pos(b)).collect::<Result<_>>()?;
        let filters: Vec<(usize, u8, Vec<String>)> = req.filters.iter().map(|(f, v)| pos(f).map(|(i, l)| (i, l, v.clone()))).collect::<Result<_>>()?;
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
    fn groups(&self, p: &Plan, r1: Resolved, r2: Resolved) -> Result<BTreeMap<Vec<String>, i64>> {
        let s = &self.schema;
        let m = &s.metrics[p.metric.0 as usize];
        let levels = &s.cuboids[p.cuboid as usize].levels;
        let label = |c: u32, i: usize, l: u8| -> &str {
            let d = &s.dims[m.dims[i] as usize];
            let n = NodeId(s.nodes_of(crate::schema::CellId(c))[i]);
            d.label(d.ancestor(n, l.min(levels[i])))
        };
        let cells: Vec<u32> = s.cells_of(p.cuboid).iter().copied().filter(|&c| p.filters.iter().all(|(i, l, v)| v.iter().any(|x| x == label(c, *i, *l)))).collect();
        let v2 = self.values_at(&cells, r2)?;
        let v1 = if r1.at == 0 { vec![0; cells.len()] } else { self.values_at(&cells, r1)? };
        let mut out: BTreeMap<Vec<String>, i64> = BTreeMap::new();
        for (k, &c) in cells.iter().enumerate() {
            let d = v2[k].wrapping_sub(v1[k]);
            if d == 0 {
                continue;
            }
            let key: Vec<String> = p.by.iter().map(|&(i, l)| label(c, i, l).to_string()).collect();
            *out.entry(key).or_default() += d;
        }
        Ok(out)
    }

    fn window(&self, req: &Request, plans: &(Plan, Option<Plan>), t1: u64, t2: u64) -> Result<Window> {
        let r1 = if t1 == 0 { Resolved { at: 0, level: 0 } } else { self.resolve(t1) };
        let mut r2 = self.resolve(t2);
        if r2.at < r1.at {
            r2 = r1;
        }
        let sums = self.groups(&plans.0, r1, r2)?;
        let rows: Vec<Row> = match &plans.1 {
            None => sums.into_iter().map(|(group, v)| Row { group, value: v as f64 }).collect(),
            Some(cp) => {
                let counts = self.groups(cp, r1, r2)?;
                counts.into_iter().filter(|(_, n)| *n != 0).map(|(g, n)| Row { value: *sums.get(&g).unwrap_or(&0) as f64 / n as f64, group: g }).collect()
            }
        };
        let mut rows = rows;
        rows.sort_by(|a, b| b.value.total_cmp(&a.value).then_with(|| a.group.cmp(&b.group)));
        if let Some(k) = req.top {
            rows.truncate(k);
        }
        let g = |r: Resolved| self.levels[r.level].spec.granularity_ns;
        Ok(Window { begin_ns: r1.at, end_ns: r2.at, begin_granularity_ns: g(r1), end_granularity_ns: g(r2), rows })
    }

    /// Answers `req`.
    pub fn query(&self, req: &Request) -> Result<Response> {
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
        };
        let (t1, t2) = match req.when {
            When::At(t) => (0, t),
            When::Range(a, b) => (a, b),
            When::Last(d) => {
                let now = self.now();
                (now.saturating_sub(d), now)
            }
        };
        let windows = match req.every {
            Some(e) if e > 0 && t2 > t1 => {
                let n = (t2 - t1).div_ceil(e);
                if n > 100_000 {
                    return Err(CubeError::Query(format!("{n} windows: use a larger --every")));
                }
                (0..n).map(|i| self.window(req, &plans, t1 + i * e, (t1 + (i + 1) * e).min(t2))).collect::<Result<_>>()?
            }
            _ => vec![self.window(req, &plans, t1, t2)?],
        };
        let m = &s.metrics[base.0 as usize];
        let by = plans.0.by.iter().map(|&(i, l)| { let d = &s.dims[m.dims[i] as usize]; format!("{}:{}", d.name, d.levels[l as usize]) }).collect();
        Ok(Response { metric: req.metric.clone(), agg: req.agg, by, origin_ns: self.span.map_or(0, |s| s.0), windows })
    }
}

impl Response {
    /// The JSON form: `{"metric","agg","by":[..],"origin_ns","windows":[{"begin_ns",
    /// "end_ns","begin_granularity_ns","end_granularity_ns","rows":[{"group":[..],"value"}]}]}`.
    pub fn to_json(&self) -> serde_json::Value {
        serde_json::to_value(self).unwrap_or(serde_json::Value::Null)
    }

    /// Readable text: one block per window stating its exact interval.
    pub fn to_text(&self) -> String {
        let mut s = String::new();
        let rel = |t: u64| if t >= self.origin_ns { format!("+{:.3}s", (t - self.origin_ns) as f64 / 1e9) } else { format!("-{:.3}s", (self.origin_ns - t) as f64 / 1e9) };
        let by = if self.by.is_empty() { String::new() } else { format!(" by {}", self.by.join(", ")) };
        s += &format!("{} ({:?}){by}\n", self.metric, self.agg);
        for w in &self.windows {
            s += &format!(
                "[{}, {}) ns = [{}, {}) from start, precision {} / {}\n",
                w.begin_ns,
                w.end_ns,
                rel(w.begin_ns),
                rel(w.end_ns),
                format_duration(w.begin_granularity_ns),
                format_duration(w.end_granularity_ns)
            );
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
