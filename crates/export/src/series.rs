//! Series of a cube: for each metric, a table `series_METRIC` of time buckets ×
//! members: `begin_ns`, `end_ns`, one column per `by` entry, `value` — rows with a
//! zero value left out (the cube's answers leave them out too). Every bucket is
//! answered by the cube's own query, so a row equals `tracecube query --metric M
//! --by ... --every E` for that window.

use cube::cli::QueryArgs;
use cube::time::format_duration;
use cube::{Agg, Cube};

use crate::table::{Table, Value};
use crate::Result;

/// What to export.
#[derive(Debug, Clone, Default)]
pub struct SeriesOptions {
    /// Metrics (empty: every metric but the `.count` / `.min` / `.max` companions).
    pub metrics: Vec<String>,
    /// `dim[:level]` entries (empty: each dimension of the metric at its finest level).
    pub by: Vec<String>,
    /// Bucket length as `tracecube query --every` takes it (default: the finest
    /// level's granularity, coarsened to at most [`AUTO_BUCKETS`] buckets).
    pub every: Option<String>,
    /// `T1..T2` as `tracecube query --range` takes it (default: the whole history).
    pub range: Option<String>,
    /// Aggregate (default: sum).
    pub agg: Option<String>,
}

/// The most buckets an automatic bucket length gives.
pub const AUTO_BUCKETS: u64 = 10_000;

/// The automatic bucket length: the finest level granularity giving at most
/// [`AUTO_BUCKETS`] buckets over the data, or a multiple of the coarsest.
pub fn auto_every(cube: &Cube) -> u64 {
    let span = cube.now().saturating_sub(cube.data_begin()).max(1);
    let levels = &cube.config.levels;
    if let Some(l) = levels.iter().find(|l| span.div_ceil(l.granularity_ns) <= AUTO_BUCKETS) {
        return l.granularity_ns;
    }
    let g = levels.last().map_or(1, |l| l.granularity_ns);
    span.div_ceil(AUTO_BUCKETS).div_ceil(g) * g
}

/// One table per metric.
pub fn series(cube: &Cube, o: &SeriesOptions) -> Result<Vec<Table>> {
    let s = &cube.schema;
    let metrics: Vec<String> =
        if o.metrics.is_empty() { s.metrics.iter().filter(|m| !m.name.contains('.')).map(|m| m.name.clone()).collect() } else { o.metrics.clone() };
    let every = o.every.clone().unwrap_or_else(|| format_duration(auto_every(cube)));
    let mut out = Vec::new();
    for name in metrics {
        let by: Vec<String> = if o.by.is_empty() {
            match s.metric(&name) {
                Some(id) => {
                    let m = &s.metrics[id.0 as usize];
                    m.dims.iter().zip(&m.leaf).map(|(&d, &l)| format!("{}:{}", s.dims[d as usize].name, s.dims[d as usize].levels[l as usize])).collect()
                }
                None => Vec::new(), // the query names the unknown metric
            }
        } else {
            o.by.clone()
        };
        let args = QueryArgs { metric: name.clone(), agg: o.agg.clone(), range: o.range.clone(), by, every: Some(every.clone()), ..Default::default() };
        let req = args.to_request(cube)?;
        let resp = cube.query(&req)?;
        let cols = resp.by_columns();
        let float = req.agg == Agg::Avg;
        let mut t = Table::new(&format!("series_{name}"));
        for w in &resp.windows {
            for r in &w.rows {
                let mut row = vec![("begin_ns".to_string(), Value::UInt(w.begin_ns)), ("end_ns".to_string(), Value::UInt(w.end_ns))];
                row.extend(cols.iter().cloned().zip(r.group.iter().map(|g| Value::Text(g.clone()))));
                row.push(("value".into(), if float { Value::Float(r.value) } else { Value::Int(r.value as i64) }));
                t.push_row(row);
            }
        }
        if t.rows() == 0 {
            // Keep the columns, so that the file still says what it would hold.
            let mut empty = vec![("begin_ns".to_string(), Value::Null), ("end_ns".to_string(), Value::Null)];
            empty.extend(cols.iter().map(|c| (c.clone(), Value::Null)));
            empty.push(("value".into(), Value::Null));
            t.push_row(empty);
            t = t.emptied();
        }
        out.push(t);
    }
    Ok(out)
}
