//! Prints the speedup table on many-threads (run with `--ignored --nocapture`; no
//! timing assertions).

use analysis::{bench::bench, AnalysisKind, RunOptions};

#[test]
#[ignore]
fn many_threads_table() {
    let p = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../../shared/traces/many-threads");
    let Ok(set) = ctf::trace::TraceSet::open(&p) else { return };
    let opts = RunOptions { chunk_size: 512 << 10, ..Default::default() };
    let rows = bench(&set, &AnalysisKind::ALL, 2, 5, &opts).unwrap();
    print!("{}", analysis::bench::format_table(&rows));
}
