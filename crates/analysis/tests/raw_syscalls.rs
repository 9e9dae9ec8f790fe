//! Raw `sys_exit` events carry a syscall number, whose meaning depends on the traced
//! machine's architecture: the kernel model picks the table (x86-64, arm, arm64) from
//! the trace's metadata environment (`arch`, else `kernel_release`; x86-64 when
//! neither names one). Each trace here, written with `ctf-writer`, has thread 10
//! (process 10) with fd 3 named `/data/f` by the statedump, enter `read(3, …)` and
//! leave through a raw `sys_exit` with `ret` 100: the 100 bytes are read from /data/f
//! when the number is that architecture's read, and nothing is credited when it is
//! another call's (the exit of another call ends the pending read: its exit was lost).
//! Raw `sys_enter` events carry the call's six arguments: where the table says the
//! first is an fd, the entry names it, so the syscall latency names each call's file
//! (`raw_entries_of_calls_on_an_fd_name_their_file`).

use analysis::{run, AnalysisKind, Report, RunOptions};
use ctf_writer::small::{SmallTrace, TimedEvent};
use ctf_writer::{FieldType, IntType, StructType, Value};

/// The classes every trace here has, followed by `calls` (a syscall's entry and
/// exit): `sched_switch` and the statedump's process and file descriptor lines.
fn classes_with(calls: [(&'static str, StructType); 2]) -> [(&'static str, StructType); 5] {
    let s32 = IntType::signed(32);
    let s = StructType::new;
    let [entry, exit] = calls;
    [
        ("sched_switch", synth::kernel::event_fields("sched_switch")),
        ("lttng_statedump_process_state", s().int("_tid", s32.clone()).int("_pid", s32.clone()).field("_name", FieldType::char_array(16))),
        (
            "lttng_statedump_file_descriptor",
            s().int("_pid", s32.clone()).int("_fd", s32).int("_flags", IntType::unsigned(32)).field("_filename", FieldType::String),
        ),
        entry,
        exit,
    ]
}

/// The events every trace here begins with: thread 10 (process 10, `app`) in the
/// statedump at 1 µs, with its fds `fds` (fd, file, time in ns, between 1 and 3 µs),
/// switched in on CPU 0 at 3 µs.
fn app_with_fds(fds: &[(i64, &'static str, u64)]) -> Vec<TimedEvent<'static>> {
    let mut events = vec![TimedEvent::new(1_000, 0, "lttng_statedump_process_state", vec![Value::I(10), Value::I(10), Value::Str("app")])];
    for &(fd, file, ns) in fds {
        events.push(TimedEvent::new(ns, 0, "lttng_statedump_file_descriptor", vec![Value::I(10), Value::I(fd), Value::U(0), Value::Str(file)]));
    }
    let switch = vec![Value::Str("swapper"), Value::I(0), Value::I(20), Value::I(0), Value::Str("app"), Value::I(10), Value::I(20)];
    events.push(TimedEvent::new(3_000, 0, "sched_switch", switch));
    events
}

/// Writes the trace of the module documentation, its environment naming `arch`
/// (none: no `arch` entry), its `sys_exit` numbered `nr`.
fn write_trace(dir: &std::path::Path, arch: Option<&str>, nr: u64) {
    let s = StructType::new;
    let classes = classes_with([
        ("syscall_entry_read", s().int("_fd", IntType::unsigned(32)).int("_count", IntType::unsigned(64))),
        ("sys_exit", s().int("_id", IntType::signed(64)).int("_ret", IntType::signed(64))),
    ]);
    let mut trace = SmallTrace::new(classes);
    if let Some(a) = arch {
        trace = trace.env("arch", a);
    }
    let mut events = app_with_fds(&[(3, "/data/f", 2_000)]);
    events.push(TimedEvent::new(4_000, 0, "syscall_entry_read", vec![Value::U(3), Value::U(4096)]));
    events.push(TimedEvent::new(5_000, 0, "sys_exit", vec![Value::I(nr as i64), Value::I(100)]));
    trace.write(dir, &events).unwrap();
}

/// Bytes read from /data/f by the io analysis of that trace (serial, and the same in
/// parallel with tiny chunks).
fn read_bytes(arch: Option<&str>, nr: u64) -> u64 {
    let dir = tempfile::tempdir().unwrap();
    write_trace(dir.path(), arch, nr);
    let set = ctf::trace::TraceSet::open(dir.path()).unwrap();
    let serial = run(&set, AnalysisKind::Io, &RunOptions { threads: 1, chunk_size: u64::MAX, ..Default::default() }).unwrap();
    let par = run(&set, AnalysisKind::Io, &RunOptions { threads: 3, chunk_size: 1, ..Default::default() }).unwrap();
    assert_eq!(par, serial, "parallel with tiny chunks");
    let Report::Io(io) = serial else { unreachable!() };
    io.files.iter().filter(|f| f.path == "/data/f").map(|f| f.read_bytes).sum()
}

#[test]
fn x86_64_is_the_default_table() {
    // x86-64: read is 0; 3 is close.
    assert_eq!(read_bytes(None, 0), 100);
    assert_eq!(read_bytes(None, 3), 0);
    assert_eq!(read_bytes(Some("x86_64"), 0), 100);
}

#[test]
fn arm_traces_use_the_arm_table() {
    // 32-bit arm (EABI): read is 3, close 6, and 0 is restart_syscall (no call the
    // model follows: a generic exit, which ends the read as its own would).
    assert_eq!(read_bytes(Some("armv7l"), 3), 100);
    assert_eq!(read_bytes(Some("armv7l"), 6), 0);
    assert_eq!(read_bytes(Some("armv7l"), 0), 100);
}

#[test]
fn arm64_traces_use_the_generic_table() {
    // arm64 (asm-generic/unistd.h): read is 63, close 57; on x86-64, 63 would be
    // uname and 3 close.
    assert_eq!(read_bytes(Some("aarch64"), 63), 100);
    assert_eq!(read_bytes(Some("aarch64"), 57), 0);
}

/// A trace whose calls are all raw `sys_enter`/`sys_exit` (numbers of `arch`'s table,
/// an args array of six): thread 10 (process 10, fds 3 `/data/f` and 4 `/data/g` from
/// the statedump) reads 100 bytes from fd 3 (entry 4 µs, exit 5 µs), fsyncs fd 4
/// (6 → 9 µs) and sleeps (10 → 20 µs, no fd). `nr` are the numbers of read, fsync and
/// nanosleep.
fn write_raw_trace(dir: &std::path::Path, arch: &str, nr: [i64; 3]) {
    let s64 = IntType::signed(64);
    let s = StructType::new;
    let classes = classes_with([
        ("sys_enter", s().int("_id", s64.clone()).field("_args", FieldType::Array { elem: Box::new(FieldType::Int(IntType::unsigned(64))), len: 6 })),
        ("sys_exit", s().int("_id", s64.clone()).int("_ret", s64)),
    ]);
    let args = |fd: u64| [Value::U(fd), Value::U(0x7ff0_0000), Value::U(4096), Value::U(0), Value::U(0), Value::U(0)];
    let (read, fsync, sleep) = (args(3), args(4), args(0x7ffd_1234));
    let enter = |ns, nr, a| TimedEvent::new(ns, 0, "sys_enter", vec![Value::I(nr), Value::List(a)]);
    let exit = |ns, nr, ret| TimedEvent::new(ns, 0, "sys_exit", vec![Value::I(nr), Value::I(ret)]);
    let mut events = app_with_fds(&[(3, "/data/f", 1_500), (4, "/data/g", 2_000)]);
    events.extend([
        enter(4_000, nr[0], &read),
        exit(5_000, nr[0], 100),
        enter(6_000, nr[1], &fsync),
        exit(9_000, nr[1], 0),
        enter(10_000, nr[2], &sleep),
        exit(20_000, nr[2], 0),
    ]);
    SmallTrace::new(classes).env("arch", arch).write(dir, &events).unwrap();
}

#[test]
fn raw_entries_of_calls_on_an_fd_name_their_file() {
    // x86-64: read 0, fsync 74, nanosleep 35; arm64: read 63, fsync 82, nanosleep 101.
    for (arch, nr) in [("x86_64", [0, 74, 35]), ("aarch64", [63, 82, 101])] {
        let dir = tempfile::tempdir().unwrap();
        write_raw_trace(dir.path(), arch, nr);
        let set = ctf::trace::TraceSet::open(dir.path()).unwrap();
        let serial = RunOptions { threads: 1, chunk_size: u64::MAX, ..Default::default() };
        let par = RunOptions { threads: 3, chunk_size: 1, ..Default::default() };
        for kind in [AnalysisKind::Syscall, AnalysisKind::Io] {
            assert_eq!(run(&set, kind, &par).unwrap(), run(&set, kind, &serial).unwrap(), "{arch} {kind:?}: parallel with tiny chunks");
        }
        // The longest calls, longest first: the sleep names no fd (its first argument is
        // a pointer, not an fd: the table says it takes none), the fsync fd 4 and its
        // file, the read fd 3 and its file; each is named by its number.
        let Report::Syscall(r) = run(&set, AnalysisKind::Syscall, &serial).unwrap() else { unreachable!() };
        let longest: Vec<_> = r.longest.iter().map(|c| (c.name.as_str(), c.duration_ns, c.fd, c.path.as_deref())).collect();
        let name = |k: usize| format!("syscall_{}", nr[k]);
        assert_eq!(
            longest,
            vec![
                (name(2).as_str(), 10_000, None, None),
                (name(1).as_str(), 3_000, Some(4), Some("/data/g")),
                (name(0).as_str(), 1_000, Some(3), Some("/data/f"))
            ],
            "{arch}"
        );
        // The read's 100 bytes are /data/f's (its entry now names the fd it reads).
        let Report::Io(io) = run(&set, AnalysisKind::Io, &serial).unwrap() else { unreachable!() };
        let read: u64 = io.files.iter().filter(|f| f.path == "/data/f").map(|f| f.read_bytes).sum();
        assert_eq!(read, 100, "{arch}");
    }
}
