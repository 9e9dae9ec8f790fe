//! The speedup table: every analysis at 1, 2, 4 … N threads.

use analysis::{run, AnalysisError, AnalysisKind, RunOptions};
use ctf::trace::TraceSet;

use crate::speedup::{measure, thread_ladder, BenchRow};

/// Measures each analysis of `which` on `set` at every thread count of
/// [`thread_ladder`]`(max_threads)`, `reps` runs each, the thread counts taking turns
/// (see [`measure`]).
pub fn bench(set: &TraceSet, which: &[AnalysisKind], max_threads: usize, reps: usize, base: &RunOptions) -> Result<Vec<BenchRow>, AnalysisError> {
    let ladder = thread_ladder(max_threads);
    let mut rows = Vec::new();
    for &k in which {
        rows.extend(measure(k.name(), &ladder, reps, |t| {
            let opts = RunOptions { threads: t, ..base.clone() };
            run(set, k, &opts).map(|_| ())
        })?);
    }
    Ok(rows)
}
