//! Raw `sys_exit` events carry a syscall number, whose meaning depends on the traced
//! machine's architecture: the kernel model picks the table (x86-64, arm, arm64) from
//! the trace's metadata environment (`arch`, else `kernel_release`; x86-64 when
//! neither names one). Each trace here, written with `ctf-writer`, has thread 10
//! (process 10) with fd 3 named `/data/f` by the statedump, enter `read(3, …)` and
//! leave through a raw `sys_exit` with `ret` 100: the 100 bytes are read from /data/f
//! when the number is that architecture's read, and nothing is credited when it is
//! another call's (the exit of another call ends the pending read: its exit was lost).

use analysis::{run, AnalysisKind, Report, RunOptions};
use ctf_writer::small::{SmallTrace, TimedEvent};
use ctf_writer::{FieldType, IntType, StructType, Value};

/// Writes the trace of the module documentation, its environment naming `arch`
/// (none: no `arch` entry), its `sys_exit` numbered `nr`.
fn write_trace(dir: &std::path::Path, arch: Option<&str>, nr: u64) {
    let (s32, u32t, s64, u64t) = (IntType::signed(32), IntType::unsigned(32), IntType::signed(64), IntType::unsigned(64));
    let s = StructType::new;
    let comm = || FieldType::char_array(16);
    let classes = [
        (
            "sched_switch",
            s().field("_prev_comm", comm())
                .int("_prev_tid", s32.clone())
                .int("_prev_prio", s32.clone())
                .int("_prev_state", s64.clone())
                .field("_next_comm", comm())
                .int("_next_tid", s32.clone())
                .int("_next_prio", s32.clone()),
        ),
        ("lttng_statedump_process_state", s().int("_tid", s32.clone()).int("_pid", s32.clone()).field("_name", comm())),
        (
            "lttng_statedump_file_descriptor",
            s().int("_pid", s32.clone()).int("_fd", s32.clone()).int("_flags", u32t.clone()).field("_filename", FieldType::String),
        ),
        ("syscall_entry_read", s().int("_fd", u32t).int("_count", u64t.clone())),
        ("sys_exit", s().int("_id", IntType::signed(64)).int("_ret", s64)),
    ];
    let mut trace = SmallTrace::new(classes);
    if let Some(a) = arch {
        trace = trace.env("arch", a);
    }
    let events = [
        TimedEvent::new(1_000, 0, "lttng_statedump_process_state", vec![Value::I(10), Value::I(10), Value::Str("app")]),
        TimedEvent::new(2_000, 0, "lttng_statedump_file_descriptor", vec![Value::I(10), Value::I(3), Value::U(0), Value::Str("/data/f")]),
        TimedEvent::new(
            3_000,
            0,
            "sched_switch",
            vec![Value::Str("swapper"), Value::I(0), Value::I(20), Value::I(0), Value::Str("app"), Value::I(10), Value::I(20)],
        ),
        TimedEvent::new(4_000, 0, "syscall_entry_read", vec![Value::U(3), Value::U(4096)]),
        TimedEvent::new(5_000, 0, "sys_exit", vec![Value::I(nr as i64), Value::I(100)]),
    ];
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
