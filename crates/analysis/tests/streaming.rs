//! Logs handed over as the run goes ([`analysis::occurrences`]): the rows streamed and
//! those left in the report are together the report's log of a plain run, row for row
//! (names included), at any thread count and chunking; rows come before the run ends,
//! and a consumer that stops ends the run.

use std::ops::ControlFlow;

use analysis::occurrences::{run_streaming, Occurrences};
use analysis::{run, AnalysisKind, EngineError, Partition, Report, RunOptions};

use crate::chunking::synth_trace;

/// The log of `r` as comparable text rows, sorted.
fn log_rows(r: &Report) -> Vec<String> {
    let mut rows: Vec<String> = match r {
        Report::Cpu(c) => c.executions.iter().map(|x| format!("{x:?}")).collect(),
        Report::Sched(s) => s.log.iter().map(|x| format!("{x:?}")).collect(),
        Report::Irq(i) => i.log.iter().map(|x| format!("{x:?}")).collect(),
        Report::Syscall(s) => s.log.iter().map(|x| format!("{x:?}")).collect(),
        Report::Io(i) => i.transfers.iter().map(|x| format!("{x:?}")).collect(),
        _ => unreachable!(),
    };
    rows.sort();
    rows
}

/// The rows of `o` as [`log_rows`] writes them.
fn piece_rows(o: &Occurrences) -> Vec<String> {
    match o {
        Occurrences::Executions(v) => v.iter().map(|x| format!("{x:?}")).collect(),
        Occurrences::Wakeups(v) => v.iter().map(|x| format!("{x:?}")).collect(),
        Occurrences::Irqs(v) => v.iter().map(|x| format!("{x:?}")).collect(),
        Occurrences::Calls(v) => v.iter().map(|x| format!("{x:?}")).collect(),
        Occurrences::Transfers(v) => v.iter().map(|x| format!("{x:?}")).collect(),
    }
}

#[test]
fn streamed_logs_equal_the_plain_logs_at_any_chunking() {
    let (_d, set, _) = synth_trace(4, 40_000, 3, 60);
    for kind in [AnalysisKind::Cpu, AnalysisKind::Sched, AnalysisKind::Irq, AnalysisKind::Syscall, AnalysisKind::Io] {
        let plain = log_rows(&run(&set, kind, &RunOptions { threads: 1, log: true, ..Default::default() }).unwrap());
        assert!(plain.len() > 100, "{kind:?}: {} rows", plain.len());
        for (threads, chunk, partition) in
            [(1, 0, Partition::Hybrid), (1, 20_000, Partition::Hybrid), (3, 30_000, Partition::Time), (4, 50_000, Partition::Stream)]
        {
            let opts = RunOptions { threads, chunk_size: chunk, partition, log: true, ..Default::default() };
            let mut streamed = Vec::new();
            let mut pieces = 0;
            let report = run_streaming(&set, kind, &opts, &mut |o| {
                pieces += 1;
                streamed.extend(piece_rows(&o));
                ControlFlow::Continue(())
            })
            .unwrap();
            let at = format!("{kind:?} at {threads} threads, chunk {chunk}, {partition:?}");
            // Many slices: rows leave the run as it goes, most before its end.
            if chunk > 0 {
                assert!(pieces > 1, "{at}: {pieces} pieces");
                assert!(streamed.len() > plain.len() / 2, "{at}: {} of {} streamed", streamed.len(), plain.len());
            }
            streamed.extend(log_rows(&report));
            streamed.sort();
            assert_eq!(streamed, plain, "{at}");
        }
    }
}

#[test]
fn a_consumer_that_stops_stops_the_run() {
    let (_d, set, _) = synth_trace(4, 40_000, 3, 60);
    for kind in [AnalysisKind::Cpu, AnalysisKind::Syscall, AnalysisKind::Io] {
        for threads in [1, 3] {
            let opts = RunOptions { threads, chunk_size: 20_000, log: true, ..Default::default() };
            let mut pieces = 0;
            let r = run_streaming(&set, kind, &opts, &mut |_| {
                pieces += 1;
                ControlFlow::Break(())
            });
            assert!(matches!(r, Err(analysis::AnalysisError::Engine(EngineError::Stopped))), "{kind:?} at {threads} threads: {r:?}");
            assert_eq!(pieces, 1, "{kind:?} at {threads} threads: nothing is handed over after the stop");
        }
    }
}
