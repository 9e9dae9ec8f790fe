//! Prints the speedup table on many-threads (run with `--ignored --nocapture`; no
//! timing assertions: a row per analysis and thread count).

use analysis::{AnalysisKind, RunOptions};
use bench::analyses::bench;
use bench::speedup::format_table;

#[test]
#[ignore]
fn many_threads_table() {
    let Some(p) = testkit::shared_trace("speedup_table", "many-threads") else { return };
    let set = ctf::trace::TraceSet::open(&p).unwrap();
    let opts = RunOptions { chunk_size: 512 << 10, ..Default::default() };
    let rows = bench(&set, &AnalysisKind::ALL, 2, 5, &opts).unwrap();
    print!("{}", format_table(&rows));
    assert_eq!(rows.len(), AnalysisKind::ALL.len() * 2, "a row per analysis at 1 and 2 threads");
}
