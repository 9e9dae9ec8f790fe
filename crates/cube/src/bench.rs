//! The first paper's experiments (C9) and the acceptance numbers, on
//! synthesized update streams spanning simulated days (`tracecube bench cube`).
//!
//! A stream of `rate` events per simulated second updates `metrics` finest cells of
//! the `events` metric (operations × CPUs), uniformly at random with a fixed seed.

use std::fmt::Write as _;
use std::time::Instant;

use crate::config::{CubeConfig, LevelSpec, Materialization};
use crate::cube::Cube;
use crate::error::Result;
use crate::query::{Request, When};
use crate::schema::CellId;

const S: u64 = 1_000_000_000;

/// Options of [`run`].
#[derive(Debug, Clone)]
pub struct BenchOptions {
    /// Simulated stream length, s (default one day).
    pub seconds: u64,
    /// Events per simulated second.
    pub rate: u64,
    /// Quick mode: shorter streams (for tests).
    pub quick: bool,
}

impl Default for BenchOptions {
    fn default() -> Self {
        BenchOptions { seconds: 86_400, rate: 100, quick: false }
    }
}

/// A table: title, header, rows.
#[derive(Debug, Clone)]
pub struct Table {
    /// Title.
    pub title: String,
    /// Column names.
    pub header: Vec<String>,
    /// Rows.
    pub rows: Vec<Vec<String>>,
}

impl Table {
    /// Text rendering.
    pub fn to_text(&self) -> String {
        let mut s = format!("## {}\n| {} |\n|{}\n", self.title, self.header.join(" | "), "---|".repeat(self.header.len()));
        for r in &self.rows {
            let _ = writeln!(s, "| {} |", r.join(" | "));
        }
        s
    }
    /// CSV rendering.
    pub fn to_csv(&self) -> String {
        let mut s = self.header.join(",") + "\n";
        for r in &self.rows {
            s += &(r.join(",") + "\n");
        }
        s
    }
}

fn three_levels() -> Vec<LevelSpec> {
    crate::config::default_levels().into_iter().take(3).collect()
}

/// A cube with `n` finest cells of `events` (n/10 operations × 10 CPUs, or fewer CPUs).
fn cube_with(n: usize, levels: Vec<LevelSpec>, m: Materialization, cuboids: Vec<crate::config::CuboidSpec>) -> Result<(Cube, Vec<CellId>)> {
    let mut cfg = CubeConfig { levels, materialize: m, cuboids, ..CubeConfig::default() };
    cfg.metrics.truncate(1);
    let mut c = Cube::new(cfg)?;
    let metric = c.schema.metric("events").expect("events metric");
    let cpus = 10.min(n);
    let mut cells = Vec::with_capacity(n);
    for i in 0..n {
        let op = c.schema.dims[4].member(&[&format!("kind{}", i / cpus % 10), &format!("op{}", i / cpus)]);
        let cpu = c.schema.dims[1].member(&[&(i % cpus).to_string()]);
        cells.push(c.cell(metric, &[op, cpu]));
    }
    Ok((c, cells))
}

/// xorshift: deterministic, no allocation.
fn rng(x: &mut u64) -> u64 {
    *x ^= *x << 13;
    *x ^= *x >> 7;
    *x ^= *x << 17;
    *x
}

/// Feeds `events` updates spaced by `delay` ns; returns seconds spent.
fn feed(c: &mut Cube, cells: &[CellId], events: u64, delay: u64) -> Result<f64> {
    let mut x = 0x9E37_79B9_7F4A_7C15u64;
    let t0 = Instant::now();
    let base = 1_700_000_000 * S;
    for i in 0..events {
        let cell = cells[(rng(&mut x) % cells.len() as u64) as usize];
        c.add(base + i * delay, cell, 1)?;
    }
    c.finish()?;
    Ok(t0.elapsed().as_secs_f64())
}

fn mb(b: u64) -> String {
    format!("{:.2}", b as f64 / 1e6)
}

fn median_ns(mut f: impl FnMut() -> Result<()>, reps: usize) -> Result<f64> {
    let mut v = Vec::with_capacity(reps);
    for _ in 0..reps {
        let t = Instant::now();
        f()?;
        v.push(t.elapsed().as_nanos() as f64);
    }
    v.sort_by(f64::total_cmp);
    Ok(v[v.len() / 2])
}

/// Runs every experiment and returns the tables.
pub fn run(o: &BenchOptions) -> Result<Vec<Table>> {
    let secs = if o.quick { 3_600 } else { o.seconds };
    let delay = S / o.rate.max(1);
    let events = secs * o.rate;
    let mut tables = Vec::new();

    // 1. Ingestion and memory, 1000 metrics, three levels, with and without the tilted frame.
    let mut rows = Vec::new();
    let (mut tilted, cells) = cube_with(1000, three_levels(), Materialization::Minimal, Vec::new())?;
    let t = feed(&mut tilted, &cells, events, delay)?;
    rows.push(vec![
        "tilted (1s/5min, 5min/24h, 1h/2w)".into(),
        events.to_string(),
        format!("{:.1}", events as f64 / t / 1e6),
        mb(tilted.memory()),
        format!("{:?}", tilted.records()),
    ]);
    let (mut flat, cells) = cube_with(1000, vec![LevelSpec { granularity_ns: S, span_ns: 400 * 86_400 * S }], Materialization::Minimal, Vec::new())?;
    let t = feed(&mut flat, &cells, events, delay)?;
    rows.push(vec![
        "no tilted frame (1s kept forever)".into(),
        events.to_string(),
        format!("{:.1}", events as f64 / t / 1e6),
        mb(flat.memory()),
        format!("{:?}", flat.records()),
    ]);
    tables.push(Table {
        title: format!("Memory over a {secs} s stream, 1000 metrics, {} events/s", o.rate),
        header: vec!["frame".into(), "events".into(), "M events/s (1 core)".into(), "memory MB".into(), "records per level".into()],
        rows,
    });

    // 2. Memory vs number of metrics.
    let mut rows = Vec::new();
    for n in [1000usize, 2000, 3000, 10000] {
        let (mut c, cells) = cube_with(n, three_levels(), Materialization::Minimal, Vec::new())?;
        let ev = events * n as u64 / 1000;
        let t = feed(&mut c, &cells, ev, delay * 1000 / n as u64)?;
        rows.push(vec![n.to_string(), ev.to_string(), mb(c.memory()), format!("{:.1}", ev as f64 / t / 1e6)]);
    }
    tables.push(Table {
        title: "Memory vs number of metrics (same stream length, rate × metrics/1000)".into(),
        header: vec!["metrics".into(), "events".into(), "memory MB".into(), "M events/s".into()],
        rows,
    });

    // 3. Processing time per event vs delay between events.
    let mut rows = Vec::new();
    let n_ev = if o.quick { 200_000 } else { 2_000_000 };
    for d in [1_000u64, 1_000_000, 100_000_000, S, 10 * S] {
        let (mut c, cells) = cube_with(1000, three_levels(), Materialization::Minimal, Vec::new())?;
        let t = feed(&mut c, &cells, n_ev, d)?;
        rows.push(vec![crate::time::format_duration(d), format!("{:.1}", t * 1e9 / n_ev as f64)]);
    }
    tables.push(Table {
        title: format!("Processing time per event vs delay between events ({n_ev} events, 1000 metrics)"),
        header: vec!["delay".into(), "ns/event".into()],
        rows,
    });

    // 4. Materialization.
    let mut rows = Vec::new();
    let partial = vec![crate::config::CuboidSpec { metric: "events".into(), by: vec!["operation:kind".into(), "cpu:all".into()] }];
    for (name, m, cbs) in [
        ("minimal", Materialization::Minimal, Vec::new()),
        ("partial (1 of 6 higher cuboids)", Materialization::Partial, partial),
        ("full (all 6 cuboids)", Materialization::Full, Vec::new()),
    ] {
        let (mut c, cells) = cube_with(1000, three_levels(), m, cbs)?;
        let t = feed(&mut c, &cells, events, delay)?;
        rows.push(vec![name.into(), c.schema.cell_count().to_string(), mb(c.memory()), format!("{:.1}", events as f64 / t / 1e6)]);
    }
    tables.push(Table {
        title: "Memory per materialization (1000 finest metrics)".into(),
        header: vec!["policy".into(), "cells".into(), "memory MB".into(), "M events/s".into()],
        rows,
    });

    // 5. Query latency on the tilted 1000-metric cube.
    let c = &tilted;
    let now = c.now();
    let cell = CellId(17);
    let mut rows = Vec::new();
    let reps = 2001;
    let p = median_ns(|| c.values_at(&[cell.0], c.resolve(now - 42 * S)).map(|_| ()), reps)?;
    rows.push(vec!["point, one metric".into(), format!("{:.2}", p / 1e3)]);
    for (name, len) in [("range 1 s", S), ("range 1 min", 60 * S), ("range 1 h", 3_600 * S), ("range 12 h", 43_200 * S)] {
        let len = len.min(now.saturating_sub(1_700_000_000 * S));
        let p = median_ns(|| c.range_cell(cell, now - len, now).map(|_| ()), reps)?;
        rows.push(vec![format!("{name}, one metric"), format!("{:.2}", p / 1e3)]);
    }
    let mut top = Request::new("events", When::Last(60 * S));
    top.by = vec!["operation:name".into(), "cpu:cpu".into()];
    top.top = Some(10);
    let p = median_ns(|| c.query(&top).map(|_| ()), 201)?;
    rows.push(vec!["top-10 over 1000 metrics, last 1 min".into(), format!("{:.2}", p / 1e3)]);
    let mut roll = Request::new("events", When::Last(3_600 * S));
    roll.by = vec!["operation:kind".into()];
    let p = median_ns(|| c.query(&roll).map(|_| ()), 201)?;
    rows.push(vec!["roll-up of 1000 leaves to 10 kinds, last 1 h".into(), format!("{:.2}", p / 1e3)]);
    tables.push(Table { title: "Query latency (median, µs)".into(), header: vec!["query".into(), "µs".into()], rows });
    Ok(tables)
}
