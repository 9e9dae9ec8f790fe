//! The boundary cases of `syscall`, `sched`, `irq` and `block`, each on a small two-CPU kernel trace written with
//! `ctf-writer` (times in µs worked out in each test's comment), each run serially and
//! in parallel with tiny chunks (every event boundary a possible chunk boundary): the
//! results must be equal.

use analysis::{run, AnalysisKind, BlockReport, Filter, HeadPolicy, IrqReport, Partition, Report, RunOptions, SchedReport, SyscallReport};
use ctf_writer::small::{SmallTrace, TimedEvent};
use ctf_writer::{FieldType, IntType, StructType, Value};

pub(crate) fn classes() -> Vec<(&'static str, StructType)> {
    let (s32, s64, u32t, u64t) = (IntType::signed(32), IntType::signed(64), IntType::unsigned(32), IntType::unsigned(64));
    let s = StructType::new;
    let comm = || FieldType::char_array(16);
    vec![
        ("sched_switch", synth::kernel::event_fields("sched_switch")),
        ("syscall_entry_read", s().int("_fd", u32t.clone())),
        ("syscall_exit_read", s().int("_ret", s64.clone())),
        ("syscall_entry_futex", s().int("_op", s32.clone())),
        ("syscall_exit_futex", s().int("_ret", s64.clone())),
        (
            "block_rq_insert",
            s().int("_dev", u32t.clone()).int("_sector", u64t.clone()).int("_nr_sector", u32t.clone()).int("_tid", s32.clone()).int("_rwbs", u32t.clone()),
        ),
        (
            "block_rq_issue",
            s().int("_dev", u32t.clone()).int("_sector", u64t.clone()).int("_nr_sector", u32t.clone()).int("_tid", s32.clone()).int("_rwbs", u32t.clone()),
        ),
        ("block_rq_complete", s().int("_dev", u32t.clone()).int("_sector", u64t.clone()).int("_nr_sector", u32t.clone()).int("_rwbs", u32t.clone())),
        ("lttng_statedump_block_device", s().int("_dev", u32t.clone()).field("_diskname", FieldType::String)),
        ("lttng_statedump_process_state", s().int("_tid", s32.clone()).int("_pid", s32.clone()).field("_name", comm())),
        ("sched_waking", s().field("_comm", comm()).int("_tid", s32.clone()).int("_prio", s32.clone()).int("_target_cpu", s32.clone())),
        ("irq_handler_entry", s().int("_irq", s32.clone()).field("_name", FieldType::String)),
        ("irq_handler_exit", s().int("_irq", s32.clone()).int("_ret", s32.clone())),
        ("softirq_raise", s().int("_vec", u32t.clone())),
        ("softirq_entry", s().int("_vec", u32t.clone())),
        ("softirq_exit", s().int("_vec", u32t.clone())),
    ]
}

/// One event: time (µs), CPU, class name, field values.
pub(crate) type Ev = (u64, u32, &'static str, Vec<Value<'static>>);

pub(crate) fn switch(t: u64, cpu: u32, prev: i64, next: i64) -> Ev {
    (t, cpu, "sched_switch", vec![Value::Str("p"), Value::I(prev), Value::I(20), Value::I(1), Value::Str("n"), Value::I(next), Value::I(20)])
}
fn entry(t: u64, cpu: u32, name: &'static str) -> Ev {
    (t, cpu, name, vec![Value::I(3)])
}
fn exit(t: u64, cpu: u32, name: &'static str, ret: i64) -> Ev {
    (t, cpu, name, vec![Value::I(ret)])
}

/// Writes `events` (in time order per CPU) as a two-CPU kernel trace.
fn write_trace(dir: &std::path::Path, events: &[Ev]) {
    let timed: Vec<_> = events.iter().map(|(t, cpu, name, values)| TimedEvent::new(t * 1000, *cpu, name, values.clone())).collect();
    SmallTrace::new(classes()).cpus(2).write(dir, &timed).unwrap();
}

/// The report of analysis `kind` on `events` with `head`, checked equal serially and in
/// parallel with tiny chunks under every partition scheme.
fn analyze(events: &[Ev], kind: AnalysisKind, head: HeadPolicy) -> Report {
    analyze_filtered(events, kind, head, Filter::default())
}

/// [`analyze`] with `filter`.
fn analyze_filtered(events: &[Ev], kind: AnalysisKind, head: HeadPolicy, filter: Filter) -> Report {
    let dir = tempfile::tempdir().unwrap();
    write_trace(dir.path(), events);
    if let Ok(keep) = std::env::var("SYSCALL_CASES_KEEP") {
        write_trace(std::path::Path::new(&keep), events);
    }
    let set = ctf::trace::TraceSet::open(dir.path()).unwrap();
    let serial = run(&set, kind, &RunOptions { threads: 1, chunk_size: u64::MAX, head, filter: filter.clone(), ..Default::default() }).unwrap();
    for partition in [Partition::Hybrid, Partition::Time, Partition::Stream] {
        for threads in [2, 3] {
            let par = run(&set, kind, &RunOptions { threads, chunk_size: 1, partition, head, filter: filter.clone(), ..Default::default() }).unwrap();
            assert_eq!(par, serial, "{partition:?} -j {threads} with tiny chunks");
        }
    }
    serial
}

/// The syscall report of `events` (see [`analyze`]).
fn report(events: &[Ev], head: HeadPolicy) -> SyscallReport {
    let Report::Syscall(r) = analyze(events, AnalysisKind::Syscall, head) else { unreachable!() };
    r
}

/// The block report of `events` (see [`analyze`]).
fn block(events: &[Ev]) -> BlockReport {
    let Report::Block(r) = analyze(events, AnalysisKind::Block, HeadPolicy::FromStart) else { unreachable!() };
    r
}

pub(crate) fn rq(t: u64, cpu: u32, name: &'static str, sector: i64, nr: i64, tid: i64, rwbs: i64) -> Ev {
    let v = if name == "block_rq_complete" {
        vec![Value::I(DEV), Value::I(sector), Value::I(nr), Value::I(rwbs)]
    } else {
        vec![Value::I(DEV), Value::I(sector), Value::I(nr), Value::I(tid), Value::I(rwbs)]
    };
    (t, cpu, name, v)
}

/// sda: major 8, minor 0, as LTTng's `dev_t` (12-bit major above a 20-bit minor).
pub(crate) const DEV: i64 = 8 << 20;

/// Thread 10 inserts a read of 8 sectors at sector 100 at 2 µs on CPU 0, issues it at
/// 3, and CPU 1 completes it at 40 (another CPU, another chunk): latency 37 µs, queued
/// 1 µs, 4096 B read. A write at sector 200 (16 sectors, rwbs 1) issued at 5 whose
/// complete at 9 gives 8 sectors stays pending (lengths differ) until the complete of
/// 16 sectors at 20: 15 µs, 8192 B written. A complete at sector 300, never issued
/// (issued before the trace), counts nothing; an issue of 0 sectors is ignored.
#[test]
fn block_requests_across_cpus_and_chunks() {
    let ev = vec![
        (1, 0, "lttng_statedump_block_device", vec![Value::I(DEV), Value::Str("sda")]),
        switch(1, 0, 0, 10),
        rq(2, 0, "block_rq_insert", 100, 8, 10, 0),
        rq(3, 0, "block_rq_issue", 100, 8, 10, 0),
        rq(5, 0, "block_rq_issue", 200, 16, 10, 1),
        rq(6, 0, "block_rq_issue", 400, 0, 10, 1),
        rq(9, 1, "block_rq_complete", 200, 8, 0, 1),
        rq(11, 1, "block_rq_complete", 300, 8, 0, 0),
        rq(20, 1, "block_rq_complete", 200, 16, 0, 1),
        rq(40, 1, "block_rq_complete", 100, 8, 0, 0),
    ];
    let r = block(&ev);
    assert_eq!(r.disks.len(), 1);
    let d = &r.disks[0];
    assert_eq!(d.name, "sda");
    assert_eq!((d.latency.count, d.latency.min_ns, d.latency.max_ns, d.latency.total_ns), (2, 15_000, 37_000, 52_000));
    assert_eq!((d.queued.count, d.queued.total_ns), (1, 1_000));
    assert_eq!((d.read_bytes, d.write_bytes), (4096, 8192));
    assert_eq!(r.processes.len(), 1);
    assert_eq!((r.processes[0].id, r.processes[0].latency.count), (10, 2));
    assert_eq!((r.longest[0].duration_ns, r.longest[0].sector, r.longest[0].tid), (37_000, 100, 10));
}

/// Thread 10's two requests of [`block_requests_across_cpus_and_chunks`], issued on CPU
/// 0, and thread 11's write of 4 sectors at sector 500 issued on CPU 1 at 12 and
/// completed on CPU 0 at 30 (18 µs): `--tid` and `--cpu` (the issue's) select requests
/// in every table, disks included, at every chunking.
#[test]
fn block_filters_select_requests_in_every_table() {
    let ev = vec![
        (1, 0, "lttng_statedump_block_device", vec![Value::I(DEV), Value::Str("sda")]),
        switch(1, 0, 0, 10),
        switch(1, 1, 0, 11),
        rq(3, 0, "block_rq_issue", 100, 8, 10, 0),
        rq(5, 0, "block_rq_issue", 200, 16, 10, 1),
        rq(12, 1, "block_rq_issue", 500, 4, 11, 1),
        rq(20, 1, "block_rq_complete", 200, 16, 0, 1),
        rq(30, 0, "block_rq_complete", 500, 4, 0, 1),
        rq(40, 1, "block_rq_complete", 100, 8, 0, 0),
    ];
    let run = |f: Filter| {
        let Report::Block(r) = analyze_filtered(&ev, AnalysisKind::Block, HeadPolicy::FromStart, f) else { unreachable!() };
        r
    };
    let disk = |r: &BlockReport| (r.disks[0].latency.count, r.disks[0].latency.total_ns, r.disks[0].read_bytes, r.disks[0].write_bytes);
    let all = run(Filter::default());
    assert_eq!(disk(&all), (3, 70_000, 4096, 8192 + 2048));
    for f in [Filter { tids: vec![10], ..Default::default() }, Filter { cpus: vec![0], ..Default::default() }] {
        let r = run(f.clone());
        assert_eq!(disk(&r), (2, 52_000, 4096, 8192), "{f:?}");
        assert_eq!(r.processes.iter().map(|p| p.id).collect::<Vec<_>>(), [10], "{f:?}");
        assert!(r.longest.iter().all(|l| l.tid == 10) && r.longest.len() == 2, "{f:?}");
    }
    for f in [Filter { pids: vec![11], ..Default::default() }, Filter { cpus: vec![1], ..Default::default() }] {
        let r = run(f.clone());
        assert_eq!(disk(&r), (1, 18_000, 0, 2048), "{f:?}");
        assert_eq!((r.longest.len(), r.longest[0].tid, r.longest[0].sector), (1, 11, 500), "{f:?}");
    }
}

/// `(tid, name) → (count, min, max, total)` (µs) of a report.
fn rows(r: &SyscallReport) -> Vec<(i32, String, u64, u64, u64, u64)> {
    let mut v: Vec<_> = r
        .threads
        .iter()
        .flat_map(|t| {
            t.calls
                .iter()
                .map(move |c| (t.tid.unwrap(), c.name.clone(), c.latency.count, c.latency.min_ns / 1000, c.latency.max_ns / 1000, c.latency.total_ns / 1000))
        })
        .collect();
    v.sort();
    v
}

/// Thread 10 enters read on CPU 0 at 2, blocks (switched out at 3), is woken and run on
/// CPU 1 at 50 (migrated while blocked), exits read at 51 with -11 (EAGAIN): one read
/// of 49 µs, whose entry and exit lie on different CPUs and, with tiny chunks, in
/// different chunks. Thread 20 runs on CPU 0 meanwhile: futex 5 → 9 (4 µs). The
/// statedump names 10 a thread of process 7: the longest call says so (with the
/// thread's latest name, the switch's `n`).
#[test]
fn a_call_spanning_chunks_and_cpus() {
    let ev = vec![
        (1, 0, "lttng_statedump_process_state", vec![Value::I(10), Value::I(7), Value::Str("cat")]),
        switch(1, 0, 0, 10),
        entry(2, 0, "syscall_entry_read"),
        switch(3, 0, 10, 20),
        entry(5, 0, "syscall_entry_futex"),
        exit(9, 0, "syscall_exit_futex", 0),
        switch(10, 1, 0, 30),
        switch(50, 1, 30, 10),
        exit(51, 1, "syscall_exit_read", -11),
    ];
    let r = report(&ev, HeadPolicy::FromStart);
    assert_eq!(rows(&r), vec![(10, "read".into(), 1, 49, 49, 49), (20, "futex".into(), 1, 4, 4, 4)]);
    let read = &r.threads.iter().find(|t| t.tid == Some(10)).unwrap().calls[0];
    assert_eq!(read.returns.get("EAGAIN"), Some(&1));
    let l = &r.longest[0];
    assert_eq!((l.tid, l.pid, l.comm.as_str()), (10, Some(7), "n"));
    assert_eq!((l.begin_ns, l.end_ns), (2_000, 51_000));
    assert_eq!((r.longest[1].tid, r.longest[1].pid), (20, None));
    // LAMI's top-syscall table: the same rows, longest first.
    let lami = analysis::output::to_lami(&Report::Syscall(r.clone()));
    let top = lami["results"].as_array().unwrap().iter().find(|t| t["class"] == "top-syscall").unwrap();
    let first = &top["data"][0];
    assert_eq!((&first[1]["value"], &first[2]["name"], &first[3]["pid"], &first[3]["tid"]), (&49_000.0.into(), &"read".into(), &7.into(), &10.into()));
    assert_eq!(top["data"].as_array().unwrap().len(), 2);
}

/// CPU 1 runs thread 40 from before the trace: its read 2 → 6 comes before CPU 1's
/// first switch (40 → 0 at 8), and an exit at 7 has no entry (dropped: the call began
/// before the trace). With `FromStart` the read is 40's (4 µs); with `Ignore` (lttng-analyses,
/// which knows no thread on a CPU before its first switch) nothing is counted for 40.
/// Thread 10 on CPU 0: an exit without entry at 3 (dropped), then read 4 → 5.
#[test]
fn events_before_the_first_switch_and_exits_without_entry() {
    let ev = vec![
        switch(1, 0, 0, 10),
        exit(3, 0, "syscall_exit_read", 0),
        entry(4, 0, "syscall_entry_read"),
        exit(5, 0, "syscall_exit_read", 8),
        entry(2, 1, "syscall_entry_read"),
        exit(6, 1, "syscall_exit_read", 0),
        exit(7, 1, "syscall_exit_futex", 0),
        switch(8, 1, 40, 0),
    ];
    let from_start = report(&ev, HeadPolicy::FromStart);
    assert_eq!(rows(&from_start), vec![(10, "read".into(), 1, 1, 1, 1), (40, "read".into(), 1, 4, 4, 4)]);
    let ignore = report(&ev, HeadPolicy::Ignore);
    assert_eq!(rows(&ignore), vec![(10, "read".into(), 1, 1, 1, 1)]);
}

/// An entry left without exit is replaced by the thread's next entry (as lttng-analyses
/// does): 10 enters futex at 2, then read at 4 (the futex is forgotten), exits at 7:
/// one read of 3 µs. The longest-calls list, capped at 1, keeps the longest.
#[test]
fn a_lost_exit_and_the_top_list() {
    let ev = vec![
        switch(1, 0, 0, 10),
        entry(2, 0, "syscall_entry_futex"),
        entry(4, 0, "syscall_entry_read"),
        exit(7, 0, "syscall_exit_read", 1),
        entry(8, 0, "syscall_entry_read"),
        exit(9, 0, "syscall_exit_read", 1),
    ];
    let r = report(&ev, HeadPolicy::FromStart);
    assert_eq!(rows(&r), vec![(10, "read".into(), 2, 1, 3, 4)]);
    assert_eq!(r.longest.len(), 2);
    assert_eq!(r.longest[0].duration_ns, 3_000);
    assert_eq!(r.processes.len(), 1);
    assert_eq!(r.processes[0].count, 2);
}

fn waking(t: u64, cpu: u32, tid: i64) -> Ev {
    (t, cpu, "sched_waking", vec![Value::Str("w"), Value::I(tid), Value::I(20), Value::I(0)])
}

/// Thread 10 runs on CPU 0 from 1 and thread 20 on CPU 1 from 2, both woken before the
/// trace (their wake-ups are not in it): no latency is invented for them. 10 blocks at
/// 5 (switched out, state 1); 20 wakes it on CPU 1 at 8 (another CPU, and with tiny
/// chunks another chunk); CPU 0 runs it at 15: one latency of 7 µs, waker 20. A second
/// wake-up of 10 at 9, before it ran, does not move the first (lttng-schedstats keeps
/// the first); a wake-up of 20 at 16, which CPU 1 runs, is ignored.
#[test]
fn wakeups_before_the_trace_and_across_chunks() {
    let ev = vec![switch(1, 0, 0, 10), switch(2, 1, 0, 20), switch(5, 0, 10, 0), waking(8, 1, 10), waking(9, 1, 10), switch(15, 0, 0, 10), waking(16, 0, 20)];
    let Report::Sched(r): Report = analyze(&ev, AnalysisKind::Sched, HeadPolicy::FromStart) else { unreachable!() };
    let r: SchedReport = r;
    let threads: Vec<_> = r.threads.iter().map(|t| (t.tid, t.latency.count, t.latency.total_ns)).collect();
    assert_eq!(threads, vec![(Some(10), 1, 7_000)]);
    assert_eq!(r.total.count, 1);
    let l = &r.longest[0];
    assert_eq!((l.tid, l.wakeup_ns, l.switch_ns, l.latency_ns, l.waker), (10, 8_000, 15_000, 7_000, Some(20)));
}

fn irq_ev(t: u64, cpu: u32, name: &'static str, nr: i64) -> Ev {
    let v = match name {
        "irq_handler_entry" => vec![Value::I(nr), Value::Str("eth0")],
        "irq_handler_exit" => vec![Value::I(nr), Value::I(1)],
        _ => vec![Value::I(nr)],
    };
    (t, cpu, name, v)
}

/// Nested interrupts on CPU 0 (µs):
/// - TIMER_SOFTIRQ (1) raised at 10, entered at 12; hard IRQ 42 interrupts it from 15
///   to 18 and raises vector 1 again at 16; the softirq exits at 25, and the re-raised
///   one runs 26 → 27. Softirq 1: 2 runs, 13 (12 → 25) and 1; raise latencies 2 and
///   10. IRQ 42: 3.
///
///   The softirq's 13 µs is the wall time from `softirq_entry` to `softirq_exit`,
///   the 3 µs of IRQ 42 included: lttng-irqstats reports the same (its softirq is
///   begin → end on the CPU, whatever ran inside). The kernel's own accounting
///   (`CONFIG_IRQ_TIME_ACCOUNTING`, `irqtime_account_irq`) would charge those 3 µs to
///   hard IRQ time, leaving 10 µs of softirq time; both are right for what they
///   measure, and tracecube, like lttng-analyses, reports the handler's duration. The
///   raise during the handler is a new softirq (`__do_softirq` clears the pending bits
///   before running the handlers and restarts), as both tools count it.
/// - Hard IRQ 44 enters at 30, hard IRQ 45 enters at 31 and exits at 32, then 44's exit
///   at 34. Linux runs hard IRQ handlers with local interrupts disabled (since 4.1 for
///   every handler), so one cannot nest in another on a CPU: such a sequence means
///   lost events. Both tools take the latest entry as the CPU's handler and clear it at
///   any exit: 45 counts 1 µs, 44's exit matches nothing and 44 counts nothing (a stack
///   would give 44 4 µs, 45's included, from events the kernel cannot emit).
/// - CPU 1 meanwhile: IRQ 43 runs 16 → 17 inside IRQ 42's span on CPU 0 (another CPU:
///   independent), and exits without entry (IRQ 43 at 3, softirq 3 at 4) count nothing.
///
/// `lttng-irqstats --no-intersection` (0.6.1) on this trace (written with
/// `SYSCALL_CASES_KEEP=DIR`) prints exactly these rows: IRQs 42 (3), 43 (1), 45 (1),
/// TIMER_SOFTIRQ 2 runs (min 1, max 13), raise latency 2 runs (2 and 10); no row for
/// 44, whose count is 0 (tracecube listed it with count 0 before this test).
#[test]
fn nested_irqs() {
    let ev = vec![
        irq_ev(10, 0, "softirq_raise", 1),
        irq_ev(12, 0, "softirq_entry", 1),
        irq_ev(15, 0, "irq_handler_entry", 42),
        irq_ev(16, 0, "softirq_raise", 1),
        irq_ev(18, 0, "irq_handler_exit", 42),
        irq_ev(25, 0, "softirq_exit", 1),
        irq_ev(26, 0, "softirq_entry", 1),
        irq_ev(27, 0, "softirq_exit", 1),
        irq_ev(30, 0, "irq_handler_entry", 44),
        irq_ev(31, 0, "irq_handler_entry", 45),
        irq_ev(32, 0, "irq_handler_exit", 45),
        irq_ev(34, 0, "irq_handler_exit", 44),
        irq_ev(3, 1, "irq_handler_exit", 43),
        irq_ev(4, 1, "softirq_exit", 3),
        irq_ev(16, 1, "irq_handler_entry", 43),
        irq_ev(17, 1, "irq_handler_exit", 43),
    ];
    let Report::Irq(r) = analyze(&ev, AnalysisKind::Irq, HeadPolicy::FromStart) else { unreachable!() };
    let r: IrqReport = r;
    let hard: Vec<_> = r.hard.iter().map(|h| (h.irq, h.latency.count, h.latency.total_ns)).collect();
    assert_eq!(hard, vec![(42, 1, 3_000), (43, 1, 1_000), (45, 1, 1_000)]);
    let soft: Vec<_> = r.soft.iter().map(|s| (s.vec, s.latency.count, s.latency.min_ns, s.latency.max_ns, s.raise.count, s.raise.total_ns)).collect();
    assert_eq!(soft, vec![(1, 2, 1_000, 13_000, 2, 12_000)]);
    assert_eq!((r.longest[0].nr, r.longest[0].hard, r.longest[0].begin_ns, r.longest[0].duration_ns), (1, false, 12_000, 13_000));
}

/// A `sched_switch` at `t` µs on `cpu` from `prev`, left in state `state`, to `next`.
fn switch_state(t: u64, cpu: u32, prev: i64, state: i64, next: i64) -> Ev {
    (t, cpu, "sched_switch", vec![Value::Str("p"), Value::I(prev), Value::I(20), Value::I(state), Value::Str("n"), Value::I(next), Value::I(20)])
}

/// Each execution ends in the state its ending switch's `prev_state` gives (Linux ≥ 4.15
/// as LTTng writes it: 0 runnable, 1 sleeping, 2 uninterruptible, 256 preempted). CPU 0:
/// 10 runs from 1 to 5 and blocks on I/O (`D`), 11 from 5 to 9 and is preempted
/// (`R+`), 10 again from 12 to the trace's end at 20 (no end state). CPU 1: 14 ran
/// before the trace and sleeps at 2 (`S`: the head, from the trace's first event at 1);
/// 12 from 2 to 7 is left runnable (`R`); 13 from 7 to 20 exits (`Z`, 32).
/// Serially, with tiny chunks (switch by switch) and under every partition scheme.
#[test]
fn executions_end_in_the_state_of_their_switch() {
    let ev = vec![
        switch_state(1, 0, 0, 0, 10),
        switch_state(2, 1, 14, 1, 12),
        switch_state(5, 0, 10, 2, 11),
        switch_state(7, 1, 12, 0, 13),
        switch_state(9, 0, 11, 256, 0),
        switch_state(12, 0, 0, 0, 10),
        switch_state(20, 1, 13, 32, 0),
    ];
    let dir = tempfile::tempdir().unwrap();
    write_trace(dir.path(), &ev);
    let set = ctf::trace::TraceSet::open(dir.path()).unwrap();
    let want: Vec<(u32, i32, i64, i64, Option<&str>)> = vec![
        (0, 10, 1_000, 5_000, Some("D")),
        (1, 14, 1_000, 2_000, Some("S")),
        (1, 12, 2_000, 7_000, Some("R")),
        (0, 11, 5_000, 9_000, Some("R+")),
        (1, 13, 7_000, 20_000, Some("Z")),
        (0, 10, 12_000, 20_000, None),
    ];
    for (threads, chunk_size, partition) in [(1, u64::MAX, Partition::Hybrid), (2, 1, Partition::Hybrid), (3, 1, Partition::Time), (2, 1, Partition::Stream)] {
        let opts = RunOptions { threads, chunk_size, partition, log: true, ..Default::default() };
        let Report::Cpu(r) = run(&set, AnalysisKind::Cpu, &opts).unwrap() else { unreachable!() };
        let got: Vec<_> = r.executions.iter().map(|x| (x.cpu, x.tid, x.begin_ns, x.end_ns, x.end_state.as_deref())).collect();
        assert_eq!(got, want, "-j {threads}, chunk {chunk_size}, {partition:?}");
    }
}
