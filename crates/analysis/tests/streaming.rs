//! Logs handed over as the run goes ([`analysis::occurrences`]): the rows streamed and
//! those left in the report are together the report's log of a plain run, row for row
//! (names included), at any thread count and chunking; rows come before the run ends,
//! and a consumer that stops ends the run. Rows are named by the facts of the trace's
//! end (threads' and disks' last names, the statedump's last fd), read by a first
//! pass: rows streamed before a late statedump names a disk carry that name.

use std::ops::ControlFlow;

use analysis::occurrences::{run_streaming, Occurrences};
use analysis::{run, AnalysisKind, EngineError, Partition, Report, RunOptions};

use ctf_writer::small::{SmallTrace, TimedEvent};
use ctf_writer::Value;

use crate::chunking::synth_trace;

/// The log of `r` as comparable text rows, sorted.
fn log_rows(r: &Report) -> Vec<String> {
    let mut rows: Vec<String> = match r {
        Report::Cpu(c) => c.executions.iter().map(|x| format!("{x:?}")).collect(),
        Report::Sched(s) => s.log.iter().map(|x| format!("{x:?}")).collect(),
        Report::Irq(i) => i.log.iter().map(|x| format!("{x:?}")).collect(),
        Report::Syscall(s) => s.log.iter().map(|x| format!("{x:?}")).collect(),
        Report::Io(i) => i.transfers.iter().map(|x| format!("{x:?}")).collect(),
        Report::Block(b) => b.log.iter().map(|x| format!("{x:?}")).collect(),
        Report::Count(_) => unreachable!(),
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
        Occurrences::Requests(v) => v.iter().map(|x| format!("{x:?}")).collect(),
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

/// The rows of `kind`'s log over `set` streamed with `opts` (as they come), and the
/// rows left in the report, each sorted.
fn streamed(set: &ctf::trace::TraceSet, kind: AnalysisKind, opts: &RunOptions) -> (Vec<String>, Vec<String>) {
    let mut rows = Vec::new();
    let report = run_streaming(set, kind, opts, &mut |o| {
        rows.extend(piece_rows(&o));
        ControlFlow::Continue(())
    })
    .unwrap();
    rows.sort();
    (rows, log_rows(&report))
}

/// Asserts that `rows` are `plain`, naming the first row that differs (the lists are long).
fn assert_same_rows(rows: &[String], plain: &[String], at: &str) {
    let first = rows.iter().zip(plain).position(|(a, b)| a != b);
    assert!(
        rows.len() == plain.len() && first.is_none(),
        "{at}: {} rows against {}, first difference {:?}",
        rows.len(),
        plain.len(),
        first.map(|k| (&rows[k], &plain[k]))
    );
}

/// The options of the streaming runs below: small chunks, every partition scheme.
fn chunked() -> impl Iterator<Item = RunOptions> {
    [(1, Partition::Hybrid), (2, Partition::Time), (3, Partition::Stream)].into_iter().map(|(threads, partition)| RunOptions {
        threads,
        chunk_size: 4_096,
        partition,
        log: true,
        ..Default::default()
    })
}

/// 3000 block requests of 8 sectors, issued on CPU 0 and completed 5 µs later on CPU
/// 1, alternately on sda (named by the statedump at the start) and on a second disk
/// that only a statedump at the very end names `sdb`. The report names every request
/// of the second disk `sdb` (the trace's last name for it); so must the rows streamed
/// long before the end, and most rows leave the run before it ends.
#[test]
fn block_requests_stream_with_the_disk_names_of_the_trace_end() {
    use crate::latency_cases::{classes, rq, switch, Ev, DEV};
    const SDB: i64 = (8 << 20) | 16;
    let mut ev: Vec<Ev> = vec![(1, 0, "lttng_statedump_block_device", vec![Value::I(DEV), Value::Str("sda")]), switch(1, 0, 0, 10)];
    for k in 0..3000u64 {
        let (t, sector) = (10 + 10 * k, 8 * k as i64);
        let mut issue = rq(t, 0, "block_rq_issue", sector, 8, 10, 0);
        let mut complete = rq(t + 5, 1, "block_rq_complete", sector, 8, 0, 0);
        if k % 2 == 1 {
            issue.3[0] = Value::I(SDB);
            complete.3[0] = Value::I(SDB);
        }
        ev.extend([issue, complete]);
    }
    ev.push((40_000, 0, "lttng_statedump_block_device", vec![Value::I(SDB), Value::Str("sdb")]));
    ev.sort_by_key(|e| (e.1, e.0));
    let timed: Vec<_> = ev.iter().map(|(t, cpu, name, values)| TimedEvent::new(t * 1000, *cpu, name, values.clone())).collect();
    let dir = tempfile::tempdir().unwrap();
    SmallTrace::new(classes()).cpus(2).packet_size(4096).write(dir.path(), &timed).unwrap();
    let set = ctf::trace::TraceSet::open(dir.path()).unwrap();
    let plain = log_rows(&run(&set, AnalysisKind::Block, &RunOptions { threads: 1, log: true, ..Default::default() }).unwrap());
    assert_eq!(plain.len(), 3000);
    assert_eq!(plain.iter().filter(|r| r.contains("disk: \"sdb\"")).count(), 1500, "{:?}", &plain[..2]);
    for opts in chunked() {
        let (mut rows, left) = streamed(&set, AnalysisKind::Block, &opts);
        let at = format!("-j {} {:?}", opts.threads, opts.partition);
        assert!(rows.len() > 2500, "{at}: {} of 3000 streamed", rows.len());
        rows.extend(left);
        rows.sort();
        assert_same_rows(&rows, &plain, &at);
    }
}

/// Process 300 reads 10 bytes 1500 times from fd 9 and fd 5 in turn, fds it opened
/// before tracing began. In `late`, a statedump a fifth of the way in names fd 5
/// `/etc/conf` (the reads of fd 5 before it are then on that file, as the report
/// says) and never names fd 9; else the trace has no statedump. Reads on a
/// placeholder wait only while the statedump may still name them: most rows leave
/// the run before it ends, and the rows are the report's.
#[test]
fn transfers_on_fds_no_statedump_names_stream_once_it_cannot() {
    use crate::fd_rules::{classes, fd_dump, proc_state, read, switch, Ev};
    for late in [true, false] {
        let mut ev: Vec<Ev> = vec![switch(0, 300)];
        for k in 0..1500 {
            if late && k == 300 {
                ev.extend([proc_state(300, 300, "daemon"), fd_dump(300, 5, "/etc/conf")]);
            }
            ev.extend(read(if k % 2 == 0 { 9 } else { 5 }, 10));
        }
        let timed: Vec<_> = ev.iter().zip(1u64..).map(|((name, values), k)| TimedEvent::new(k * 1_000, 0, name, values.clone())).collect();
        let dir = tempfile::tempdir().unwrap();
        SmallTrace::new(classes()).packet_size(4096).write(dir.path(), &timed).unwrap();
        let set = ctf::trace::TraceSet::open(dir.path()).unwrap();
        for kind in [AnalysisKind::Io, AnalysisKind::Syscall] {
            let plain = log_rows(&run(&set, kind, &RunOptions { threads: 1, log: true, ..Default::default() }).unwrap());
            assert_eq!(plain.len(), 1500, "{kind:?}");
            if late && kind == AnalysisKind::Io {
                assert_eq!(plain.iter().filter(|r| r.contains("/etc/conf")).count(), 750);
            }
            for opts in chunked() {
                let (mut rows, left) = streamed(&set, kind, &opts);
                let at = format!("{kind:?} (statedump: {late}) -j {} {:?}", opts.threads, opts.partition);
                assert!(rows.len() > 1200, "{at}: {} of 1500 streamed", rows.len());
                rows.extend(left);
                rows.sort();
                assert_same_rows(&rows, &plain, &at);
            }
        }
    }
}
