//! SQL answers equal the CLI's (the `analysis` crate's reports and the dump) on the
//! shared kernel traces, at several partition counts.

use std::collections::BTreeMap;
use std::path::PathBuf;

use analysis::{AnalysisKind, Report, RunOptions};
use sql::arrow::array::{Array, AsArray};
use sql::arrow::datatypes::{Int32Type, Int64Type, UInt64Type};
use sql::arrow::record_batch::RecordBatch;
use sql::SqlSession;

/// The shared kernel traces (README of `shared/traces`).
const KERNEL: &[&str] = &["many-threads", "bug446190-arm", "lttng-modules-2.0.0-ref", "scimark2-all-events-cpu3", "flipping-endianness"];

fn trace(test: &str, name: &str) -> Option<PathBuf> {
    testkit::shared_trace(test, name)
}

fn count_report(path: &std::path::Path) -> analysis::CountReport {
    let set = ctf::trace::TraceSet::open(path).unwrap();
    match analysis::run(&set, AnalysisKind::Count, &RunOptions::default()).unwrap() {
        Report::Count(c) => c,
        _ => unreachable!(),
    }
}

/// The single integer of a one-row, one-column result.
fn scalar(b: &[RecordBatch]) -> i64 {
    let b: Vec<&RecordBatch> = b.iter().filter(|b| b.num_rows() > 0).collect();
    assert_eq!(b.len(), 1);
    b[0].column(0).as_primitive::<Int64Type>().value(0)
}

/// `(string, integer)` rows of a two-column result.
fn pairs(batches: &[RecordBatch]) -> BTreeMap<String, u64> {
    let mut m = BTreeMap::new();
    for b in batches {
        let k = b.column(0).as_string::<i32>();
        let v = b.column(1).as_primitive::<Int64Type>();
        for i in 0..b.num_rows() {
            m.insert(k.value(i).to_string(), v.value(i) as u64);
        }
    }
    m
}

#[test]
fn count_and_count_by_name_equal_the_count_analysis_at_any_partitioning() {
    for name in KERNEL {
        let Some(path) = trace("count_equal", name) else { return };
        let truth = count_report(&path);
        for parts in [1, 3, 8] {
            let s = SqlSession::open(std::slice::from_ref(&path), parts).unwrap();
            assert_eq!(scalar(&s.query("SELECT count(*) FROM events").unwrap()) as u64, truth.events, "{name} at {parts} partitions");
            let by = pairs(&s.query("SELECT name, count(*) FROM events GROUP BY name").unwrap());
            assert_eq!(by, truth.by_name, "{name} at {parts} partitions");
        }
    }
}

#[test]
fn filters_on_name_and_ts_give_what_a_full_scan_filtered_gives() {
    let Some(path) = trace("filters", "many-threads") else { return };
    let truth = count_report(&path);
    let s = SqlSession::open(std::slice::from_ref(&path), 4).unwrap();
    let n = scalar(&s.query("SELECT count(*) FROM events WHERE name = 'sched_switch'").unwrap());
    assert_eq!(n as u64, truth.by_name["sched_switch"]);
    let n = scalar(&s.query("SELECT count(*) FROM ev_sched_switch").unwrap());
    assert_eq!(n as u64, truth.by_name["sched_switch"]);
    // A time window: the pushed-down range must agree with the same filter evaluated
    // over every row (`ts + 0` is not recognised by the scan).
    let (lo, hi) = (truth.begin_ns.unwrap() + 100_000_000, truth.begin_ns.unwrap() + 200_000_000);
    let pushed = scalar(&s.query(&format!("SELECT count(*) FROM events WHERE ts >= {lo} AND ts < {hi}")).unwrap());
    let full = scalar(&s.query(&format!("SELECT count(*) FROM events WHERE ts + 0 >= {lo} AND ts + 0 < {hi}")).unwrap());
    assert_eq!(pushed, full);
    assert!(pushed > 0 && (pushed as u64) < truth.events);
    let limited = s.query("SELECT ts FROM events LIMIT 7").unwrap();
    assert_eq!(limited.iter().map(|b| b.num_rows()).sum::<usize>(), 7);
}

#[test]
fn cpu_usage_equals_the_cpu_analysis() {
    for name in ["many-threads", "bug446190-arm"] {
        let Some(path) = trace("cpu_usage", name) else { return };
        let set = ctf::trace::TraceSet::open(&path).unwrap();
        let Report::Cpu(truth) = analysis::run(&set, AnalysisKind::Cpu, &RunOptions::default()).unwrap() else { unreachable!() };
        let want: BTreeMap<i32, u64> = truth.threads.iter().map(|t| (t.tid, t.cpu_ns)).collect();
        for parts in [1, 5] {
            let s = SqlSession::open(std::slice::from_ref(&path), parts).unwrap();
            let mut got = BTreeMap::new();
            for b in s.query("SELECT tid, cpu_ns FROM cpu_usage").unwrap() {
                for i in 0..b.num_rows() {
                    got.insert(b.column(0).as_primitive::<Int32Type>().value(i), b.column(1).as_primitive::<UInt64Type>().value(i));
                }
            }
            assert!(!got.is_empty());
            assert_eq!(got, want, "{name} at {parts} partitions");
        }
    }
}

#[test]
fn several_traces_are_told_apart_by_the_trace_column() {
    let (Some(a), Some(b)) = (trace("multi", "many-threads"), trace("multi", "bug446190-arm")) else { return };
    let s = SqlSession::open(&[a.clone(), b.clone()], 3).unwrap();
    let per = pairs(&s.query("SELECT trace, count(*) FROM events GROUP BY trace").unwrap());
    assert_eq!(per.len(), 2, "{per:?}");
    assert_eq!(per.get("wilbrod").copied(), Some(count_report(&a).events), "{per:?}");
    assert_eq!(per.values().sum::<u64>(), count_report(&a).events + count_report(&b).events);
}

#[test]
fn typed_columns_of_an_event_table_equal_the_dump() {
    let Some(path) = trace("typed", "many-threads") else { return };
    let set = ctf::trace::TraceSet::open(&path).unwrap();
    // The first sched_switch events in the merged order, from the canonical dump.
    let mut want = Vec::new();
    let mut m = ctf::merge::Merger::new(&set);
    let mut errors = Vec::new();
    while let Some(mut x) = m.next_collecting(&mut errors) {
        if let ctf::stream::Item::Event(e) = &mut x.item {
            if e.name() == "sched_switch" {
                let mut line = Vec::new();
                ctf::dump::write_event_json(&mut line, e).unwrap();
                let v: serde_json::Value = serde_json::from_slice(&line).unwrap();
                want.push((v["ts"].as_i64().unwrap(), v["p"]["prev_tid"].as_i64().unwrap(), v["p"]["next_comm"].as_str().unwrap().to_string()));
                if want.len() == 5 {
                    break;
                }
            }
        }
    }
    let s = SqlSession::open(&[path], 4).unwrap();
    let mut got = Vec::new();
    for b in s.query("SELECT ts, prev_tid, next_comm FROM ev_sched_switch ORDER BY ts, stream LIMIT 5").unwrap() {
        for i in 0..b.num_rows() {
            got.push((
                b.column(0).as_primitive::<Int64Type>().value(i),
                b.column(1).as_primitive::<Int64Type>().value(i),
                b.column(2).as_string::<i32>().value(i).to_string(),
            ));
        }
    }
    assert_eq!(got, want);
    // The JSON column holds the same fields.
    let b = s.query("SELECT fields FROM events WHERE name = 'sched_switch' ORDER BY ts, stream LIMIT 1").unwrap();
    let col = b.iter().find(|b| b.num_rows() > 0).unwrap().column(0).as_string::<i32>().value(0).to_string();
    let v: serde_json::Value = serde_json::from_str(&col).unwrap();
    assert_eq!(v["prev_tid"].as_i64(), Some(want[0].1));
    assert_eq!(v["next_comm"].as_str(), Some(want[0].2.as_str()));
}

#[test]
fn bad_sql_and_unknown_tables_are_clean_errors() {
    let Some(path) = trace("errors", "bug446190-arm") else { return };
    let s = SqlSession::open(&[path], 2).unwrap();
    let e = s.query("SELEC count(*) FROM events").unwrap_err().to_string();
    assert!(e.contains("SELEC"), "{e}");
    let e = s.query("SELECT * FROM nosuchtable").unwrap_err().to_string();
    assert!(e.contains("nosuchtable"), "{e}");
    let e = s.query("SELECT nosuchcolumn FROM events").unwrap_err().to_string();
    assert!(e.contains("nosuchcolumn"), "{e}");
    assert!(SqlSession::open(&[PathBuf::from("/nonexistent/trace")], 1).is_err());
    // Nulls where a class lacks a field, not garbage: every sched_switch has next_tid.
    let b = s.query("SELECT count(next_tid) = count(*) FROM ev_sched_switch").unwrap();
    assert!(b.iter().any(|b| b.num_rows() == 1 && b.column(0).as_boolean().value(0) && !b.column(0).is_null(0)));
}

/// The analysis `kind` of the trace at `path`, as `analyze` runs it.
fn report(path: &std::path::Path, kind: AnalysisKind) -> Report {
    let set = ctf::trace::TraceSet::open(path).unwrap();
    analysis::run(&set, kind, &RunOptions::default()).unwrap()
}

/// The integers of a one-column result, in order.
fn column_u64(batches: &[RecordBatch]) -> Vec<u64> {
    batches.iter().flat_map(|b| (0..b.num_rows()).map(move |i| b.column(0).as_primitive::<Int64Type>().value(i) as u64)).collect()
}

#[test]
fn occurrence_tables_equal_the_latency_analyses_at_any_partitioning() {
    let mut seen = [0u64; 3];
    for name in ["many-threads", "scimark2-all-events-cpu3", "bug446190-arm"] {
        let Some(path) = trace("occurrences", name) else { return };
        let Report::Syscall(sys) = report(&path, AnalysisKind::Syscall) else { unreachable!() };
        let Report::Sched(sched) = report(&path, AnalysisKind::Sched) else { unreachable!() };
        let Report::Irq(irq) = report(&path, AnalysisKind::Irq) else { unreachable!() };
        // Per system call name: calls and total duration, summed over the threads.
        let mut calls: BTreeMap<String, (u64, u64)> = BTreeMap::new();
        for c in sys.threads.iter().flat_map(|t| &t.calls) {
            let e = calls.entry(c.name.clone()).or_default();
            e.0 += c.latency.count;
            e.1 += c.latency.total_ns;
        }
        let irqs = irq.hard.iter().map(|r| r.latency.count).sum::<u64>() + irq.soft.iter().map(|r| r.latency.count).sum::<u64>();
        for parts in [1, 4] {
            let s = SqlSession::open(std::slice::from_ref(&path), parts).unwrap();
            let at = format!("{name} at {parts} partitions");
            assert_eq!(scalar(&s.query("SELECT count(*) FROM syscalls").unwrap()) as u64, sys.count, "{at}");
            let by = s.query("SELECT name, count(*), CAST(sum(duration_ns) AS BIGINT) FROM syscalls GROUP BY name ORDER BY name").unwrap();
            let mut got = BTreeMap::new();
            for b in &by {
                for i in 0..b.num_rows() {
                    let (n, c, d) = (b.column(0).as_string::<i32>().value(i), b.column(1).as_primitive::<Int64Type>(), b.column(2).as_primitive::<Int64Type>());
                    got.insert(n.to_string(), (c.value(i) as u64, d.value(i) as u64));
                }
            }
            assert_eq!(got, calls, "{at}");
            let stats = column_u64(&s.query("SELECT CAST(sum(count) AS BIGINT) FROM syscall_stats").unwrap());
            assert_eq!(stats.first().copied().unwrap_or(0), sys.count, "{at}");
            assert_eq!(scalar(&s.query("SELECT count(*) FROM wakeups").unwrap()) as u64, sched.total.count, "{at}");
            assert_eq!(scalar(&s.query("SELECT count(*) FROM irqs").unwrap()) as u64, irqs, "{at}");
        }
        seen[0] += sys.count;
        seen[1] += sched.total.count;
        seen[2] += irqs;
    }
    assert!(seen.iter().all(|&n| n > 0), "every table was checked on some occurrences: {seen:?}");
}

#[test]
fn cpu_time_per_thread_from_sched_slices_equals_the_cpu_analysis() {
    for name in ["many-threads", "bug446190-arm", "scimark2-all-events-cpu3"] {
        let Some(path) = trace("slices", name) else { return };
        let Report::Cpu(truth) = report(&path, AnalysisKind::Cpu) else { unreachable!() };
        let want: BTreeMap<i32, u64> = truth.threads.iter().filter(|t| t.cpu_ns > 0).map(|t| (t.tid, t.cpu_ns)).collect();
        let busy: BTreeMap<u32, u64> = truth.cpus.iter().map(|c| (c.cpu, c.busy_ns)).collect();
        assert!(!want.is_empty(), "{name}");
        for parts in [1, 4] {
            let s = SqlSession::open(std::slice::from_ref(&path), parts).unwrap();
            let at = format!("{name} at {parts} partitions");
            let mut got = BTreeMap::new();
            for b in s.query("SELECT tid, CAST(sum(end_ns - begin_ns) AS BIGINT) FROM sched_slices GROUP BY tid").unwrap() {
                for i in 0..b.num_rows() {
                    got.insert(b.column(0).as_primitive::<Int32Type>().value(i), b.column(1).as_primitive::<Int64Type>().value(i) as u64);
                }
            }
            assert_eq!(got, want, "{at}");
            let mut per_cpu = BTreeMap::new();
            for b in s.query("SELECT cpu, CAST(sum(end_ns - begin_ns) AS BIGINT) FROM sched_slices GROUP BY cpu").unwrap() {
                for i in 0..b.num_rows() {
                    per_cpu.insert(
                        b.column(0).as_primitive::<sql::arrow::datatypes::UInt32Type>().value(i),
                        b.column(1).as_primitive::<Int64Type>().value(i) as u64,
                    );
                }
            }
            assert_eq!(per_cpu, busy.iter().filter(|(_, &b)| b > 0).map(|(&c, &b)| (c, b)).collect::<BTreeMap<_, _>>(), "{at}");
            // One CPU runs one task at a time: no two slices of a CPU overlap.
            let overlaps = scalar(
                &s.query(
                    "SELECT count(*) FROM (SELECT begin_ns, lag(end_ns) OVER (PARTITION BY cpu ORDER BY begin_ns) AS prev_end FROM sched_slices) \
                     WHERE prev_end > begin_ns",
                )
                .unwrap(),
            );
            assert_eq!(overlaps, 0, "{at}");
        }
    }
}

#[test]
fn bytes_per_file_from_io_equal_the_io_analysis_at_any_partitioning() {
    let mut moved = 0;
    for name in KERNEL {
        let Some(path) = trace("io", name) else { return };
        let Report::Io(truth) = report(&path, AnalysisKind::Io) else { unreachable!() };
        let want: BTreeMap<String, (u64, u64)> = truth.files.iter().map(|f| (f.path.clone(), (f.read_bytes, f.write_bytes))).collect();
        for parts in [1, 4] {
            let s = SqlSession::open(std::slice::from_ref(&path), parts).unwrap();
            let q = "SELECT path, CAST(sum(CASE WHEN kind = 'read' THEN bytes ELSE 0 END) AS BIGINT), \
                     CAST(sum(CASE WHEN kind = 'write' THEN bytes ELSE 0 END) AS BIGINT) FROM io GROUP BY path";
            let mut got = BTreeMap::new();
            for b in s.query(q).unwrap() {
                let (p, r, w) = (b.column(0).as_string::<i32>(), b.column(1).as_primitive::<Int64Type>(), b.column(2).as_primitive::<Int64Type>());
                for i in 0..b.num_rows() {
                    got.insert(p.value(i).to_string(), (r.value(i) as u64, w.value(i) as u64));
                }
            }
            assert_eq!(got, want, "{name} at {parts} partitions");
            // Every row moved bytes, on an fd, at a time inside the trace.
            let bad = scalar(&s.query("SELECT count(*) FROM io WHERE bytes = 0 OR fd IS NULL OR exit_ns IS NULL OR kind NOT IN ('read', 'write')").unwrap());
            assert_eq!(bad, 0, "{name} at {parts} partitions");
        }
        moved += want.values().map(|(r, w)| r + w).sum::<u64>();
    }
    assert!(moved > 0, "some trace moved bytes");
}

/// The rows of a query as text, cell by cell (`NULL` for nulls), through the table
/// writer's CSV form.
fn text_rows(s: &SqlSession, q: &str) -> Vec<String> {
    let mut out = Vec::new();
    for b in s.query(q).unwrap() {
        for i in 0..b.num_rows() {
            let cells: Vec<String> = (0..b.num_columns())
                .map(|c| {
                    let col = b.column(c);
                    if col.is_null(i) {
                        "NULL".to_string()
                    } else {
                        sql::arrow::util::display::array_value_to_string(col, i).unwrap()
                    }
                })
                .collect();
            out.push(cells.join(","));
        }
    }
    out
}

/// `syscalls` has each call's fd and file, `io` each transfer's entry time and exact
/// call name: exact rows on bug446190-arm at 1, 3 and 8 partitions (the same calls,
/// files and fds as `lttng-iolatencytop` lists: sh's two longest reads of /dev/pts/1,
/// sshd's 100-byte write on socket:[8995]); on many-threads, io's rows per call name
/// (`pread64`, `pwrite64`, `writev`, `recvmsg` among them) are the read and write calls of
/// `syscalls` that moved bytes, with the same fd and path (io's `unknown (fd N)`, a
/// file never named, being `syscalls`' NULL).
#[test]
fn syscalls_name_their_files_and_io_its_calls_at_any_partitioning() {
    let Some(arm) = trace("syscall_files", "bug446190-arm") else { return };
    let Some(many) = trace("syscall_files", "many-threads") else { return };
    for parts in [1, 3, 8] {
        let s = SqlSession::open(std::slice::from_ref(&arm), parts).unwrap();
        let longest = "SELECT tid, name, begin_ns, end_ns, fd, path FROM syscalls WHERE tid = 407 AND name = 'read' ORDER BY duration_ns DESC LIMIT 2";
        assert_eq!(
            text_rows(&s, longest),
            ["407,read,1412670961314578139,1412670962824323739,0,/dev/pts/1", "407,read,1412670963206773639,1412670964384404539,0,/dev/pts/1"],
            "at {parts} partitions"
        );
        let io = "SELECT tid, name, entry_ns, exit_ns, fd, path, bytes, kind FROM io WHERE tid = 403 ORDER BY exit_ns LIMIT 3";
        assert_eq!(
            text_rows(&s, io),
            [
                "403,read,1412670961314182739,1412670961314201239,9,/dev/ptmx,50,read",
                "403,write,1412670961314294239,1412670961314393539,4,socket:[8995],100,write",
                "403,read,1412670961314651339,1412670961314665539,9,/dev/ptmx,24,read",
            ],
            "at {parts} partitions"
        );
        // A call on no fd has none, nor a file. (epoll_wait acts on its epoll fd: it
        // names it.)
        let q = "SELECT count(*), count(fd), count(path) FROM syscalls WHERE name IN ('rt_sigprocmask', 'clock_gettime')";
        assert_eq!(text_rows(&s, q), ["269,0,0"], "at {parts} partitions");
    }
    let per_name = |s: &SqlSession, q: &str| text_rows(s, q);
    for parts in [1, 4] {
        let s = SqlSession::open(std::slice::from_ref(&many), parts).unwrap();
        let io = per_name(&s, "SELECT name, count(*), CAST(sum(bytes) AS BIGINT) FROM io GROUP BY name ORDER BY name");
        let calls = per_name(
            &s,
            "SELECT name, count(*), sum(ret) FROM syscalls WHERE ret > 0 AND name IN ('read', 'pread64', 'readv', 'preadv', 'recvfrom', 'recvmsg', \
             'write', 'pwrite64', 'writev', 'pwritev', 'sendto', 'sendmsg') GROUP BY name ORDER BY name",
        );
        assert_eq!(io, calls, "at {parts} partitions");
        assert!(["pread64,1,", "pwrite64,1,", "writev,37,", "recvmsg,47,"].iter().all(|p| io.iter().any(|r| r.starts_with(p))), "{io:?}");
        let q = "SELECT count(*) FROM io JOIN syscalls ON io.tid = syscalls.tid AND io.exit_ns = syscalls.end_ns \
                 WHERE io.entry_ns = syscalls.begin_ns AND io.name = syscalls.name AND io.fd = syscalls.fd \
                 AND (io.path = syscalls.path OR (syscalls.path IS NULL AND io.path = concat('unknown (fd ', io.fd, ')')))";
        let all = text_rows(&s, "SELECT count(*) FROM io");
        assert_eq!(text_rows(&s, q), all, "at {parts} partitions");
    }
}

/// A synthetic kernel trace of `events` events, with interrupts and wake-ups (400 000:
/// about 10 MB, several of the engine's slices at two threads).
fn synth_trace(events: u64) -> (tempfile::TempDir, PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let cfg = synth::SynthConfig { cpus: 4, events, seed: 5, packet_size: 4096, background: 60, ..Default::default() };
    let s = synth::generate(&cfg, dir.path()).unwrap();
    (dir, s.trace_dir)
}

/// `sched_slices`, `wakeups`, `irqs`, `syscalls` and `io`, whose rows stream as the
/// analysis merges, list row for row (names and files included) the analyses' logs, at
/// one and several partitions.
#[test]
fn streamed_occurrence_tables_equal_the_analyses_logs_row_for_row() {
    let (_d, path) = synth_trace(400_000);
    let set = ctf::trace::TraceSet::open(&path).unwrap();
    let opt = |v: Option<i32>| v.map_or("NULL".to_string(), |v| v.to_string());
    for parts in [1, 2] {
        let log = |kind| analysis::run(&set, kind, &RunOptions { threads: parts, log: true, ..Default::default() }).unwrap();
        let Report::Cpu(cpu) = log(AnalysisKind::Cpu) else { unreachable!() };
        let Report::Sched(sched) = log(AnalysisKind::Sched) else { unreachable!() };
        let Report::Irq(irq) = log(AnalysisKind::Irq) else { unreachable!() };
        let Report::Syscall(calls) = log(AnalysisKind::Syscall) else { unreachable!() };
        let Report::Io(io) = log(AnalysisKind::Io) else { unreachable!() };
        let text = |v: &Option<String>| v.clone().unwrap_or_else(|| "NULL".to_string());
        let tables = [
            (
                "SELECT cpu, tid, pid, comm, begin_ns, end_ns, end_state FROM sched_slices",
                cpu.executions
                    .iter()
                    .map(|x| format!("{},{},{},{},{},{},{}", x.cpu, x.tid, opt(x.pid), x.comm, x.begin_ns, x.end_ns, text(&x.end_state)))
                    .collect::<Vec<_>>(),
            ),
            (
                "SELECT tid, comm, prio, waker, wakeup_ns, switch_ns, latency_ns FROM wakeups",
                sched
                    .log
                    .iter()
                    .map(|w| format!("{},{},{},{},{},{},{}", w.tid, w.comm, w.prio, opt(w.waker), w.wakeup_ns, w.switch_ns, w.latency_ns))
                    .collect(),
            ),
            (
                "SELECT nr, hard, begin_ns, duration_ns FROM irqs",
                irq.log.iter().map(|i| format!("{},{},{},{}", i.nr, i.hard, i.begin_ns, i.duration_ns)).collect(),
            ),
            (
                "SELECT tid, pid, comm, name, begin_ns, end_ns, duration_ns, ret, fd, path FROM syscalls",
                calls
                    .log
                    .iter()
                    .map(|c| {
                        let (pid, fd, path) = (opt(c.pid), opt(c.fd), text(&c.path));
                        format!("{},{pid},{},{},{},{},{},{},{fd},{path}", c.tid, c.comm, c.name, c.begin_ns, c.end_ns, c.duration_ns, c.ret)
                    })
                    .collect(),
            ),
            (
                "SELECT tid, pid, comm, exit_ns, fd, path, bytes, kind, entry_ns, name FROM io",
                io.transfers
                    .iter()
                    .map(|t| {
                        let (pid, path, entry, name) = (opt(t.pid), text(&t.path), t.entry_ns.map_or("NULL".to_string(), |e| e.to_string()), text(&t.name));
                        format!("{},{pid},{},{},{},{path},{},{},{entry},{name}", t.tid, t.comm, t.exit_ns, t.fd, t.bytes, t.kind)
                    })
                    .collect(),
            ),
        ];
        let s = SqlSession::open(std::slice::from_ref(&path), parts).unwrap();
        for (q, mut want) in tables {
            assert!(want.len() > 1000, "{q}: {} rows", want.len());
            let mut got = text_rows(&s, q);
            got.sort();
            want.sort();
            assert_eq!(got, want, "{q} at {parts} partitions");
        }
        let first = text_rows(&s, "SELECT begin_ns FROM sched_slices LIMIT 5");
        assert_eq!(first.len(), 5, "at {parts} partitions");
    }
}

/// The rows of `sched_slices`, `syscalls` and `io` leave their analysis as the merge
/// passes them, in batches of at most `BATCH_ROWS` rows: on a trace whose last part is
/// damaged (its largest stream file cut short), rows come before the run meets the
/// damage and fails; a consumer that stops after the first batch gets no other, and the
/// run ends without an error.
#[test]
fn occurrence_rows_leave_the_analysis_before_it_ends() {
    use sql::reports::ReportTable;
    let (_d, path) = synth_trace(400_000);
    let open = || std::sync::Arc::new(sql::source::Sources::open(std::slice::from_ref(&path), 2).unwrap().0);
    let table_of = |sources: &std::sync::Arc<sql::source::Sources>, t| sql::reports::ReportProvider::new(sources.clone(), t);
    let tables = [ReportTable::SchedSlices, ReportTable::Syscalls, ReportTable::Io];
    let sources = open();
    for t in tables {
        let mut sent = 0;
        table_of(&sources, t)
            .stream_batches(&sources.sets[0], 2, None, &mut |_| {
                sent += 1;
                std::ops::ControlFlow::Break(())
            })
            .unwrap();
        assert_eq!(sent, 1, "{}", t.name());
    }
    // Cut the largest stream file at 90 %.
    let mut files: Vec<(u64, PathBuf)> =
        walk(&path).into_iter().filter(|p| !p.ends_with("metadata")).map(|p| (std::fs::metadata(&p).unwrap().len(), p)).collect();
    files.sort();
    let (len, largest) = files.pop().unwrap();
    std::fs::OpenOptions::new().write(true).open(&largest).unwrap().set_len(len * 9 / 10).unwrap();
    let sources = open();
    for t in tables {
        let mut sizes = Vec::new();
        let r = table_of(&sources, t).stream_batches(&sources.sets[0], 2, None, &mut |b| {
            sizes.push(b.num_rows());
            std::ops::ControlFlow::Continue(())
        });
        assert!(r.is_err(), "{}: the damage is an error", t.name());
        assert!(!sizes.is_empty() && sizes.iter().all(|&n| n > 0 && n <= sql::reports::BATCH_ROWS), "{}: {sizes:?}", t.name());
    }
}

/// Every file below `dir`, except index files.
fn walk(dir: &std::path::Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    for e in std::fs::read_dir(dir).unwrap() {
        let p = e.unwrap().path();
        if p.is_dir() {
            if !p.ends_with("index") {
                out.extend(walk(&p));
            }
        } else {
            out.push(p);
        }
    }
    out
}

/// `GROUP BY name` with `count(*)` is answered from per-class counts (`NameCountExec`
/// in the plan) and equals the plain plan's answer (a session without the rewrite),
/// without and with filters on `ts` and `name`, at one and three partitions; a
/// filter the counting cannot apply (on `cpu`) keeps the plain plan.
#[test]
fn counts_by_name_from_class_counts_equal_the_plain_plan() {
    let (_d, path) = synth_trace(60_000);
    let truth = count_report(&path);
    let (lo, hi) = (truth.begin_ns.unwrap() + 1_000_000, truth.begin_ns.unwrap() + 3_000_000);
    let rewritten = [
        "SELECT name, count(*) FROM events GROUP BY name".to_string(),
        format!("SELECT name, count(*) FROM events WHERE ts >= {lo} AND ts < {hi} GROUP BY name"),
        format!("SELECT count(*), name FROM events WHERE {lo} < ts AND name IN ('sched_switch', 'irq_handler_entry', 'none') GROUP BY name"),
        format!("SELECT name, count(*) FROM events WHERE name = 'sched_switch' AND ts BETWEEN {lo} AND {hi} GROUP BY name"),
        "SELECT name, count(*) AS n FROM ev_sched_switch GROUP BY name HAVING count(*) > 1 ORDER BY n".to_string(),
    ];
    let plain_only = ["SELECT name, count(*) FROM events WHERE cpu = 1 GROUP BY name", "SELECT name, count(ts) FROM events GROUP BY name"];
    for parts in [1, 3] {
        let s = SqlSession::open(std::slice::from_ref(&path), parts).unwrap();
        let plain = SqlSession::open_with(std::slice::from_ref(&path), parts, |_, c| Ok(datafusion::prelude::SessionContext::new_with_config(c))).unwrap();
        let sorted = |s: &SqlSession, q: &str| {
            let mut r = text_rows(s, q);
            r.sort();
            r
        };
        for (q, counted) in rewritten.iter().map(|q| (q.as_str(), true)).chain(plain_only.iter().map(|q| (*q, false))) {
            let plan = text_rows(&s, &format!("EXPLAIN {q}")).join("\n");
            assert_eq!(plan.contains("NameCountExec"), counted, "{q}: {plan}");
            let want = sorted(&plain, q);
            assert!(!want.is_empty(), "{q}");
            assert_eq!(sorted(&s, q), want, "{q} at {parts} partitions");
        }
        assert_eq!(pairs(&s.query(&rewritten[0]).unwrap()), truth.by_name, "at {parts} partitions");
    }
}

/// A two-CPU kernel trace of `n` block requests of 8 sectors by thread 10, issued on
/// CPU 0 and completed 5 µs later on CPU 1, alternately on sda (named by the statedump
/// at the start) and on 8:16, which only a statedump at the very end names `sdb`.
fn block_trace(n: u64) -> (tempfile::TempDir, PathBuf) {
    use ctf_writer::small::{SmallTrace, TimedEvent};
    use ctf_writer::{FieldType, IntType, StructType, Value};
    let (s32, u32t, u64t) = (IntType::signed(32), IntType::unsigned(32), IntType::unsigned(64));
    let request = || StructType::new().int("_dev", u32t.clone()).int("_sector", u64t.clone()).int("_nr_sector", u32t.clone());
    let classes = vec![
        ("sched_switch", synth::kernel::event_fields("sched_switch")),
        ("block_rq_issue", request().int("_tid", s32.clone()).int("_rwbs", u32t.clone())),
        ("block_rq_complete", request().int("_rwbs", u32t.clone())),
        ("lttng_statedump_block_device", StructType::new().int("_dev", u32t.clone()).field("_diskname", FieldType::String)),
    ];
    let (sda, sdb) = (8u64 << 20, (8u64 << 20) | 16);
    let switch = vec![Value::Str("p"), Value::I(0), Value::I(20), Value::I(1), Value::Str("n"), Value::I(10), Value::I(20)];
    let mut cpu0 = vec![
        TimedEvent::new(1_000, 0, "lttng_statedump_block_device", vec![Value::U(sda), Value::Str("sda")]),
        TimedEvent::new(1_000, 0, "sched_switch", switch),
    ];
    let mut cpu1 = Vec::new();
    for k in 0..n {
        let (t, dev) = ((10 + 10 * k) * 1_000, if k % 2 == 0 { sda } else { sdb });
        cpu0.push(TimedEvent::new(t, 0, "block_rq_issue", vec![Value::U(dev), Value::U(8 * k), Value::U(8), Value::I(10), Value::U(0)]));
        cpu1.push(TimedEvent::new(t + 5_000, 1, "block_rq_complete", vec![Value::U(dev), Value::U(8 * k), Value::U(8), Value::U(0)]));
    }
    cpu0.push(TimedEvent::new((20 + 10 * n) * 1_000, 0, "lttng_statedump_block_device", vec![Value::U(sdb), Value::Str("sdb")]));
    cpu0.extend(cpu1);
    let dir = tempfile::tempdir().unwrap();
    SmallTrace::new(classes).cpus(2).write(dir.path(), &cpu0).unwrap();
    let path = dir.path().to_path_buf();
    (dir, path)
}

/// `block_requests` streams (its rows leave the analysis as the merge passes them) and
/// its rows are the block analysis's log row for row at 1 and 3 partitions, each
/// request of 8:16 named `sdb`, the name only the trace's end gives it; on the trace
/// cut short, rows come before the run meets the damage.
#[test]
fn block_requests_stream_with_the_disk_names_of_the_trace_end() {
    let (_d, path) = block_trace(20_000);
    let set = ctf::trace::TraceSet::open(&path).unwrap();
    let Report::Block(block) = analysis::run(&set, AnalysisKind::Block, &RunOptions { threads: 1, log: true, ..Default::default() }).unwrap() else {
        unreachable!()
    };
    let mut want: Vec<String> =
        block.log.iter().map(|r| format!("{},{},{},{},{},{},{}", r.disk, r.sector, r.bytes, r.begin_ns, r.duration_ns, r.tid, r.write)).collect();
    want.sort();
    assert_eq!(want.len(), 20_000);
    assert_eq!(want.iter().filter(|r| r.starts_with("sdb,")).count(), 10_000);
    for parts in [1, 3] {
        let s = SqlSession::open(std::slice::from_ref(&path), parts).unwrap();
        let mut got = text_rows(&s, "SELECT disk, sector, bytes, begin_ns, duration_ns, tid, write FROM block_requests");
        got.sort();
        assert_eq!(got, want, "at {parts} partitions");
    }
    let mut files: Vec<(u64, PathBuf)> =
        walk(&path).into_iter().filter(|p| !p.ends_with("metadata")).map(|p| (std::fs::metadata(&p).unwrap().len(), p)).collect();
    files.sort();
    let (len, largest) = files.pop().unwrap();
    std::fs::OpenOptions::new().write(true).open(&largest).unwrap().set_len(len * 9 / 10).unwrap();
    let sources = std::sync::Arc::new(sql::source::Sources::open(std::slice::from_ref(&path), 2).unwrap().0);
    let table = sql::reports::ReportProvider::new(sources.clone(), sql::reports::ReportTable::BlockRequests);
    let mut sizes = Vec::new();
    let r = table.stream_batches(&sources.sets[0], 2, None, &mut |b| {
        sizes.push(b.num_rows());
        std::ops::ControlFlow::Continue(())
    });
    assert!(r.is_err(), "the damage is an error");
    assert!(!sizes.is_empty() && sizes.iter().all(|&n| n > 0 && n <= sql::reports::BATCH_ROWS), "{sizes:?}");
}

/// `sched_slices`' `end_state` is the `prev_state` of the switch that ended each
/// execution, read as its kernel writes it: per state, the slices that end in it are
/// the switches away from a thread (not the idle task) with that `prev_state`, less
/// those that end an empty execution (a thread switched in and out at one time), on
/// the shared kernel traces (Linux 3.2 to 4.4: raw task states, `R+` the
/// `TASK_STATE_MAX` bit of a preemption).
#[test]
fn sched_slices_end_in_the_state_of_their_switch() {
    let mut states = std::collections::BTreeSet::new();
    for name in ["many-threads", "bug446190-arm", "lttng-modules-2.0.0-ref"] {
        let Some(path) = trace("sched_slices_end_state", name) else { return };
        let set = ctf::trace::TraceSet::open(&path).unwrap();
        let encoding = kernel::layout::StateEncoding::of_trace(&set.traces[0]);
        let s = SqlSession::open(std::slice::from_ref(&path), 2).unwrap();
        let slices = pairs(&s.query("SELECT end_state, count(*) FROM sched_slices WHERE end_state IS NOT NULL GROUP BY end_state").unwrap());
        let mut switches: BTreeMap<String, u64> = BTreeMap::new();
        for row in text_rows(&s, "SELECT prev_state, count(*) FROM ev_sched_switch WHERE prev_tid <> 0 GROUP BY prev_state") {
            let (state, n) = row.split_once(',').unwrap();
            *switches.entry(encoding.name(state.parse().unwrap())).or_default() += n.parse::<u64>().unwrap();
        }
        let empty = scalar(&s.query("SELECT count(*) FROM (SELECT cpu, ts, count(*) AS n FROM ev_sched_switch GROUP BY cpu, ts HAVING count(*) > 1)").unwrap());
        let (ours, theirs): (u64, u64) = (slices.values().sum(), switches.values().sum());
        assert!(ours <= theirs && theirs - ours <= empty as u64, "{name}: {slices:?} against {switches:?} ({empty} times with several switches)");
        for (state, n) in &slices {
            assert!(switches.get(state).is_some_and(|m| m >= n && m - n <= empty as u64), "{name} {state}: {slices:?} against {switches:?}");
        }
        assert!(slices.len() >= 3, "{name}: {slices:?}");
        states.extend(slices.into_keys());
    }
    for s in ["S", "D", "R+"] {
        assert!(states.contains(s), "{s} among {states:?}");
    }
}

/// A filter on `cpu` is pushed into the scan (`EXPLAIN` shows it), which then reads only
/// the packets whose context names those CPUs: per CPU, the events counted equal that
/// CPU's row of a full scan grouped by `cpu`; per class name, the events of two CPUs
/// equal the sum of the full scan's for them; at 1 and 3 partitions, on the shared
/// kernel traces with several CPUs.
#[test]
fn cpu_filters_read_only_those_cpus_packets() {
    let mut checked = 0;
    for name in ["many-threads", "bug446190-arm", "lttng-modules-2.0.0-ref"] {
        let Some(path) = trace("cpu_filters", name) else { return };
        for parts in [1, 3] {
            let s = SqlSession::open(std::slice::from_ref(&path), parts).unwrap();
            let at = format!("{name} at {parts} partitions");
            let per_cpu = text_rows(&s, "SELECT cpu, count(*) FROM events GROUP BY cpu ORDER BY cpu");
            assert!(per_cpu.len() >= 2, "{at}: {per_cpu:?}");
            for row in &per_cpu {
                let (cpu, n) = row.split_once(',').unwrap();
                let q = format!("SELECT count(*) FROM events WHERE cpu = {cpu}");
                assert_eq!(scalar(&s.query(&q).unwrap()).to_string(), n, "{at}: {q}");
                checked += 1;
            }
            let explain = text_rows(&s, "EXPLAIN SELECT count(*) FROM events WHERE cpu = 1").join("\n");
            assert!(explain.contains("cpus={1}"), "{at}: {explain}");
            let two = pairs(&s.query("SELECT name, count(*) FROM events WHERE cpu IN (0, 1) GROUP BY name").unwrap());
            let mut want: BTreeMap<String, u64> = BTreeMap::new();
            for row in text_rows(&s, "SELECT name, cpu, count(*) FROM events GROUP BY name, cpu") {
                let v: Vec<&str> = row.rsplitn(3, ',').collect();
                if ["0", "1"].contains(&v[1]) {
                    *want.entry(v[2].to_string()).or_default() += v[0].parse::<u64>().unwrap();
                }
            }
            assert_eq!(two, want, "{at}");
        }
    }
    assert!(checked >= 6, "{checked} CPUs checked");
}
