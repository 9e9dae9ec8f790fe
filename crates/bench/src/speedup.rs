//! Speedup measurement: time, speedup and parallel efficiency at 1, 2, 4 … N
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
    /// Shortest wall time.
    pub min: Duration,
    /// Median time at one thread divided by this median.
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

/// Times `f(threads)` `reps` times per thread count and builds the rows (medians and
/// minimums). The thread counts take turns within each repetition (1, 2, 4 …, then
/// again): on a shared, noisy machine a burst of load then falls on every thread count
/// alike instead of on one, so that speedups compare like with like.
pub fn measure<E>(analysis: &str, ladder: &[usize], reps: usize, mut f: impl FnMut(usize) -> Result<(), E>) -> Result<Vec<BenchRow>, E> {
    let mut times: Vec<Vec<Duration>> = vec![Vec::new(); ladder.len()];
    for _ in 0..reps.max(1) {
        for (&t, ts) in ladder.iter().zip(&mut times) {
            let start = Instant::now();
            f(t)?;
            ts.push(start.elapsed());
        }
    }
    let mut rows: Vec<BenchRow> = Vec::new();
    for (&t, mut ts) in ladder.iter().zip(times) {
        ts.sort();
        let (time, min) = (ts[ts.len() / 2], ts[0]);
        let base = rows.first().map(|r| r.time).unwrap_or(time);
        let speedup = base.as_secs_f64() / time.as_secs_f64().max(1e-9);
        rows.push(BenchRow { analysis: analysis.to_string(), threads: t, time, min, speedup, efficiency: speedup / t as f64 });
    }
    Ok(rows)
}

/// Formats rows as a text table.
pub fn format_table(rows: &[BenchRow]) -> String {
    let mut s = format!("{:<10} {:>7} {:>12} {:>10} {:>8} {:>10}\n", "analysis", "threads", "median (ms)", "min (ms)", "speedup", "efficiency");
    for r in rows {
        s += &format!(
            "{:<10} {:>7} {:>12.1} {:>10.1} {:>8.2} {:>9.0}%\n",
            r.analysis,
            r.threads,
            r.time.as_secs_f64() * 1e3,
            r.min.as_secs_f64() * 1e3,
            r.speedup,
            r.efficiency * 100.0
        );
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ladder_doubles_up_to_max() {
        assert_eq!(thread_ladder(1), vec![1]);
        assert_eq!(thread_ladder(2), vec![1, 2]);
        assert_eq!(thread_ladder(6), vec![1, 2, 4, 6]);
        assert_eq!(thread_ladder(16), vec![1, 2, 4, 8, 16]);
        assert_eq!(thread_ladder(0), vec![1]);
    }

    #[test]
    fn thread_counts_take_turns_and_rows_keep_median_and_min() {
        let mut calls = Vec::new();
        let rows = measure::<()>("x", &[1, 2, 4], 3, |t| {
            calls.push(t);
            Ok(())
        })
        .unwrap();
        assert_eq!(calls, vec![1, 2, 4, 1, 2, 4, 1, 2, 4]);
        assert_eq!(rows.iter().map(|r| r.threads).collect::<Vec<_>>(), vec![1, 2, 4]);
        for r in &rows {
            assert!(r.min <= r.time);
            assert!((r.efficiency - r.speedup / r.threads as f64).abs() < 1e-12);
        }
        assert!((rows[0].speedup - 1.0).abs() < 1e-12);
        let table = format_table(&rows);
        assert_eq!(table.lines().count(), 4);
        assert!(table.lines().next().unwrap().contains("min (ms)"));
    }

    #[test]
    fn an_error_stops_the_measurement() {
        let mut n = 0;
        let r = measure("x", &[1, 2], 5, |_| {
            n += 1;
            if n == 3 {
                Err("boom")
            } else {
                Ok(())
            }
        });
        assert_eq!(r, Err("boom"));
        assert_eq!(n, 3);
    }
}
