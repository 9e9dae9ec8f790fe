//! Speedup measurement (B7): time, speedup and parallel efficiency at 1, 2, 4 … N
//! threads, like Table 2 of the paper.

use std::time::{Duration, Instant};

/// One row of the table.
#[derive(Debug, Clone, PartialEq)]
pub struct BenchRow {
    /// Analysis name.
    pub analysis: String,
    /// Worker threads.
    pub threads: usize,
    /// Median wall time.
    pub time: Duration,
    /// Time at one thread divided by this time.
    pub speedup: f64,
    /// Speedup divided by threads.
    pub efficiency: f64,
}

/// Thread counts 1, 2, 4 … up to `max` (and `max` itself).
pub fn thread_ladder(max: usize) -> Vec<usize> {
    let max = max.max(1);
    let mut v = Vec::new();
    let mut n = 1;
    while n < max {
        v.push(n);
        n *= 2;
    }
    v.push(max);
    v
}

/// Times `f(threads)` `reps` times per thread count (median kept) and builds the rows.
pub fn measure<E>(analysis: &str, ladder: &[usize], reps: usize, mut f: impl FnMut(usize) -> Result<(), E>) -> Result<Vec<BenchRow>, E> {
    let mut rows: Vec<BenchRow> = Vec::new();
    for &t in ladder {
        let mut times = Vec::new();
        for _ in 0..reps.max(1) {
            let start = Instant::now();
            f(t)?;
            times.push(start.elapsed());
        }
        times.sort();
        let time = times[times.len() / 2];
        let base = rows.first().map(|r| r.time).unwrap_or(time);
        let speedup = base.as_secs_f64() / time.as_secs_f64().max(1e-9);
        rows.push(BenchRow { analysis: analysis.to_string(), threads: t, time, speedup, efficiency: speedup / t as f64 });
    }
    Ok(rows)
}

/// Formats rows as a text table.
pub fn format_table(rows: &[BenchRow]) -> String {
    let mut s = format!("{:<10} {:>7} {:>12} {:>8} {:>10}\n", "analysis", "threads", "time (ms)", "speedup", "efficiency");
    for r in rows {
        s += &format!(
            "{:<10} {:>7} {:>12.1} {:>8.2} {:>9.0}%\n",
            r.analysis,
            r.threads,
            r.time.as_secs_f64() * 1e3,
            r.speedup,
            r.efficiency * 100.0
        );
    }
    s
}
