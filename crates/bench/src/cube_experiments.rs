//! The first paper's experiments and the acceptance numbers, on
//! synthesized update streams spanning simulated days (`tracecube bench cube`).
//!
//! A stream of `rate` events per simulated second updates `metrics` finest cells of
//! the `events` metric (operations × CPUs), uniformly at random with a fixed seed.

use std::fmt::Write as _;
use std::time::Instant;

use cube::config::CuboidSpec;
use cube::{CellId, Cube, CubeConfig, LevelSpec, Materialization, Request, Result, When};

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
    cube::config::default_levels().into_iter().take(3).collect()
}

/// A cube with `n` finest cells of `events` (n/10 operations × 10 CPUs, or fewer CPUs).
fn cube_with(n: usize, levels: Vec<LevelSpec>, m: Materialization, cuboids: Vec<CuboidSpec>) -> Result<(Cube, Vec<CellId>)> {
    cube_of_degree(n, levels, m, cuboids, 1)
}

/// [`cube_with`] at granularity degree `degree`.
fn cube_of_degree(n: usize, levels: Vec<LevelSpec>, m: Materialization, cuboids: Vec<CuboidSpec>, degree: u32) -> Result<(Cube, Vec<CellId>)> {
    let mut cfg = CubeConfig { levels, materialize: m, cuboids, degree, ..CubeConfig::default() };
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

/// Start of the simulated streams, ns.
const BASE: u64 = 1_700_000_000 * S;

/// Feeds `events` updates spaced by `delay` ns; returns seconds spent.
fn feed(c: &mut Cube, cells: &[CellId], events: u64, delay: u64) -> Result<f64> {
    let t = feed_part(c, cells, BASE, 0..events, delay, &mut 0x9E37_79B9_7F4A_7C15u64)?;
    c.finish()?;
    Ok(t)
}

/// Adds the events `range` of a stream starting at `start`, one every `delay` ns, each
/// to a random cell of `cells`; returns the seconds it took.
fn feed_part(c: &mut Cube, cells: &[CellId], start: u64, range: std::ops::Range<u64>, delay: u64, x: &mut u64) -> Result<f64> {
    let t0 = Instant::now();
    for i in range {
        let cell = cells[(rng(x) % cells.len() as u64) as usize];
        c.add(start + i * delay, cell, 1)?;
    }
    Ok(t0.elapsed().as_secs_f64())
}

/// Resident memory of this process, bytes (Linux; `None` elsewhere).
pub fn resident_bytes() -> Option<u64> {
    let s = std::fs::read_to_string("/proc/self/status").ok()?;
    let kb: u64 = s.lines().find_map(|l| l.strip_prefix("VmRSS:"))?.trim().trim_end_matches("kB").trim().parse().ok()?;
    Some(kb * 1024)
}

/// Growth of the resident memory since `before`, MB (or `n/a`).
fn rss_growth(before: Option<u64>) -> String {
    match (before, resident_bytes()) {
        (Some(a), Some(b)) => mb(b.saturating_sub(a)),
        _ => "n/a".into(),
    }
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

    // 1. Ingestion and memory over the stream's length, 1000 metrics, three levels,
    // with and without the tilted frame (the cube's estimate, and the growth of the
    // process's resident memory while it was fed).
    let mut rows = Vec::new();
    let mut tilted = None;
    for (name, levels) in [
        ("tilted (1s/5min, 5min/24h, 1h/2w)", three_levels()),
        ("no tilted frame (1s kept forever)", vec![LevelSpec { granularity_ns: S, span_ns: 400 * 86_400 * S }]),
    ] {
        let rss0 = resident_bytes();
        let (mut c, cells) = cube_with(1000, levels, Materialization::Minimal, Vec::new())?;
        let (mut x, mut t, mut done) = (0x9E37_79B9_7F4A_7C15u64, 0.0, 0);
        for q in 1..=4 {
            let upto = events * q / 4;
            t += feed_part(&mut c, &cells, BASE, done..upto, delay, &mut x)?;
            done = upto;
            if q == 4 {
                c.finish()?;
            }
            rows.push(vec![
                name.into(),
                format!("{} s", secs * q / 4),
                format!("{:.1}", done as f64 / t / 1e6),
                mb(c.memory()),
                rss_growth(rss0),
                format!("{:?}", c.records()),
            ]);
        }
        tilted.get_or_insert(c);
    }
    let tilted = tilted.expect("the tilted cube");
    tables.push(Table {
        title: format!("Memory over stream length, 1000 metrics, {} events/s", o.rate),
        header: vec![
            "frame".into(),
            "stream so far".into(),
            "M events/s (1 core)".into(),
            "cube estimate MB".into(),
            "resident growth MB".into(),
            "records per level".into(),
        ],
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
        rows.push(vec![cube::time::format_duration(d), format!("{:.1}", t * 1e9 / n_ev as f64)]);
    }
    tables.push(Table {
        title: format!("Processing time per event vs delay between events ({n_ev} events, 1000 metrics)"),
        header: vec!["delay".into(), "ns/event".into()],
        rows,
    });

    // 4. Materialization.
    let mut rows = Vec::new();
    let partial = vec![CuboidSpec { metric: "events".into(), by: vec!["operation:kind".into(), "cpu:all".into()] }];
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

    // 5. Query latency on the tilted 1000-metric cube; every range ends 100 s in the
    // past, so both ends are looked up in the history (none is the running total).
    let c = &tilted;
    let now = c.now();
    let end = now - 100 * S;
    let cell = CellId(17);
    let mut rows = Vec::new();
    let reps = 2001;
    let p = median_ns(|| c.values_at(&[cell.0], c.resolve(now - 42 * S)).map(|_| ()), reps)?;
    rows.push(vec!["point, one metric, 42 s ago".into(), format!("{:.2}", p / 1e3)]);
    for (name, len) in [("range 1 s", S), ("range 1 min", 60 * S), ("range 1 h", 3_600 * S), ("range 12 h", 43_200 * S)] {
        let len = len.min(end.saturating_sub(BASE));
        let p = median_ns(|| c.range_cell(cell, end - len, end).map(|_| ()), reps)?;
        rows.push(vec![format!("{name} ending 100 s ago, one metric"), format!("{:.2}", p / 1e3)]);
    }
    let past = |len: u64| When::Range(end - len.min(end - BASE), end);
    let mut top = Request::new("events", past(60 * S));
    top.by = vec!["operation:name".into(), "cpu:cpu".into()];
    top.top = Some(10);
    let p = median_ns(|| c.query(&top).map(|_| ()), 201)?;
    rows.push(vec!["top-10 over 1000 metrics, 1 min ending 100 s ago".into(), format!("{:.2}", p / 1e3)]);
    let mut roll = Request::new("events", past(3_600 * S));
    roll.by = vec!["operation:kind".into()];
    let p = median_ns(|| c.query(&roll).map(|_| ()), 201)?;
    rows.push(vec!["roll-up of 1000 leaves to 10 kinds, 1 h ending 100 s ago".into(), format!("{:.2}", p / 1e3)]);
    tables.push(Table { title: "Query latency (median, µs)".into(), header: vec!["query".into(), "µs".into()], rows });

    tables.push(degree_table(&tilted, events, delay, o.quick)?);
    tables.push(parallel_table(o.quick)?);
    tables.push(steps_table(o.quick)?);
    Ok(tables)
}

/// Table 6, granularity degree k: records, memory and the error of past ranges
/// against the exact cube (`exact`, k = 1), over the same stream.
fn degree_table(exact: &Cube, events: u64, delay: u64, quick: bool) -> Result<Table> {
    let mut rows = Vec::new();
    let now = exact.now();
    for k in [1u32, 2, 4, 8] {
        let (mut c, cells) = cube_of_degree(1000, three_levels(), Materialization::Minimal, Vec::new(), k)?;
        feed(&mut c, &cells, events, delay)?;
        // 40 ranges of 10 s to 2 h ending up to 12 h in the past, all cells.
        let (mut x, mut err, mut total) = (7u64, 0.0, 0.0);
        for _ in 0..if quick { 10 } else { 40 } {
            let end = now - rng(&mut x) % (now - BASE).min(43_200 * S);
            let len = (10 * S + rng(&mut x) % (7_200 * S)).min(end - BASE);
            let mut r = Request::new("events", When::Range(end - len, end));
            r.by = vec!["operation:name".into(), "cpu:cpu".into()];
            let (a, b) = (c.query(&r)?, exact.query(&r)?);
            let map = |w: &cube::query::Window| -> std::collections::HashMap<Vec<String>, f64> { w.rows.iter().map(|r| (r.group.clone(), r.value)).collect() };
            let (ma, mb_) = (map(&a.windows[0]), map(&b.windows[0]));
            err += mb_.iter().map(|(g, v)| (v - ma.get(g).copied().unwrap_or(0.0)).abs()).sum::<f64>();
            err += ma.iter().filter(|(g, _)| !mb_.contains_key(*g)).map(|(_, v)| v.abs()).sum::<f64>();
            total += mb_.values().sum::<f64>();
        }
        rows.push(vec![k.to_string(), format!("{:?}", c.records()), mb(c.memory()), format!("{:.2}", 100.0 * err / total.max(1.0))]);
    }
    Ok(Table {
        title: "Granularity degree k (one record per k changes), 1000 metrics".into(),
        header: vec!["k".into(), "records per level".into(), "memory MB".into(), "error of past ranges, % of their total".into()],
        rows,
    })
}

/// Table 7, parallel level update: the same stream with the levels rolling at one
/// boundary written on threads (whenever two roll) or on one thread.
fn parallel_table(quick: bool) -> Result<Table> {
    let mut rows = Vec::new();
    let secs = if quick { 600 } else { 3_600 };
    for (n, rate) in [(1000usize, 100u64), (100_000, 10_000)] {
        let events = secs * rate;
        let mut line = vec![n.to_string(), rate.to_string()];
        for min_work in [usize::MAX, 0] {
            let (mut c, cells) = cube_with(n, three_levels(), Materialization::Minimal, Vec::new())?;
            c.parallel_min_work = min_work;
            let t = feed(&mut c, &cells, events, S / rate)?;
            line.push(format!("{:.0}", t * 1e9 / events as f64));
        }
        rows.push(line);
    }
    Ok(Table {
        title: format!("Parallel level update, {secs} s stream, three levels (ns per event)"),
        header: vec!["metrics".into(), "events/s".into(), "serial".into(), "levels on threads".into()],
        rows,
    })
}

/// Which levels of [`three_levels`] roll at the boundary `k` seconds from the epoch: 1
/// (the 1 s level only), 2 (also the 5 min level) or 3 (also the 1 h level).
fn levels_rolling(k: u64) -> usize {
    1 + usize::from(k.is_multiple_of(300)) + usize::from(k.is_multiple_of(3_600))
}

/// The steps of one kind of boundary (see [`levels_rolling`]) of a stream.
#[derive(Debug, Default)]
struct Steps {
    /// Wall time of each step, µs.
    times: Vec<f64>,
    /// Records written per level over these steps.
    records: Vec<u64>,
}

/// The steps of one stream (each the events of one finest unit, 1 s, and the level
/// updates at its start), by how many levels roll at their start.
fn step_times(n: usize, rate: u64, secs: u64, min_work: usize) -> Result<[Steps; 3]> {
    let (mut c, cells) = cube_with(n, three_levels(), Materialization::Minimal, Vec::new())?;
    c.parallel_min_work = min_work;
    let mut x = 0x9E37_79B9_7F4A_7C15u64;
    let mut per_kind: [Steps; 3] = Default::default();
    // On a 1 s boundary (each step is one finest unit), half an hour before a 1 h
    // boundary (which then rolls with data in every level).
    let start = BASE / (3_600 * S) * 3_600 * S + 1_800 * S;
    for k in 0..secs {
        let before = c.records();
        let secs_taken = feed_part(&mut c, &cells, start + k * S, 0..rate, S / rate, &mut x)?;
        let steps = &mut per_kind[levels_rolling(start / S + k) - 1];
        steps.times.push(secs_taken * 1e6);
        steps.records.resize(before.len(), 0);
        for (sum, (b, a)) in steps.records.iter_mut().zip(before.iter().zip(c.records())) {
            *sum += a - b;
        }
    }
    c.finish()?;
    Ok(per_kind)
}

/// Table 8, the first paper's figures 16 and 17: the time of each processing step
/// (the events of one second, the level updates at its start included), by the
/// levels that roll at its start, with the levels written serially and on threads,
/// and the records each level wrote per step (the work the threads share).
fn steps_table(quick: bool) -> Result<Table> {
    let mut rows = Vec::new();
    let secs = if quick { 3_600 } else { 4 * 3_600 };
    for (n, rate) in [(1000usize, 100u64), (100_000, 10_000)] {
        for (mode, min_work) in [("serial", usize::MAX), ("levels on threads", 0)] {
            for (i, Steps { mut times, records }) in step_times(n, rate, secs, min_work)?.into_iter().enumerate() {
                if times.is_empty() {
                    continue;
                }
                times.sort_by(f64::total_cmp);
                let mean = times.iter().sum::<f64>() / times.len() as f64;
                let p99 = times[(times.len() * 99 / 100).min(times.len() - 1)];
                let per_step: Vec<String> = records.iter().map(|r| format!("{:.0}", *r as f64 / times.len() as f64)).collect();
                rows.push(vec![
                    n.to_string(),
                    rate.to_string(),
                    mode.into(),
                    (i + 1).to_string(),
                    times.len().to_string(),
                    format!("{:.0}", times[times.len() / 2]),
                    format!("{mean:.0}"),
                    format!("{p99:.0}"),
                    format!("{:.0}", times[times.len() - 1]),
                    per_step.join(" / "),
                ]);
            }
        }
    }
    Ok(Table {
        title: format!("Time per processing step (1 s of stream), {secs} s stream, three levels (µs)"),
        header: vec![
            "metrics".into(),
            "events/s".into(),
            "levels written".into(),
            "levels rolling".into(),
            "steps".into(),
            "median".into(),
            "mean".into(),
            "p99".into(),
            "max".into(),
            "records per step, by level".into(),
        ],
        rows,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn boundaries_roll_the_levels_whose_granularity_divides_them() {
        assert_eq!(levels_rolling(1), 1);
        assert_eq!(levels_rolling(300), 2);
        assert_eq!(levels_rolling(7_200), 3);
        let steps = |per_kind: &[Steps; 3]| per_kind.iter().map(|s| s.times.len()).collect::<Vec<_>>();
        assert_eq!(steps(&step_times(50, 10, 3_600, usize::MAX).unwrap()), [3_588, 11, 1]);
        let per_kind = step_times(50, 10, 7_200, 0).unwrap();
        assert_eq!(steps(&per_kind), [7_176, 22, 2]);
        // Only the finest level writes at a 1 s boundary; the 1 h level writes at its
        // own boundaries only.
        assert!(per_kind[0].records[0] > 0 && per_kind[0].records[1] == 0 && per_kind[0].records[2] == 0, "{:?}", per_kind[0].records);
        assert!(per_kind[2].records[2] > 0, "{:?}", per_kind[2].records);
    }
}
