//! The fd rules of the kernel model (`kernel::fdtable`), each on a small kernel trace
//! written with `ctf-writer` that reproduces the event pattern, with the bytes per file
//! worked out in each test's comment. Every trace is also run in parallel with tiny
//! chunks: the result must equal the serial one.
//!
//! Each comment also gives what lttng-analyses 0.6.1 reports on the same trace
//! (`lttng-iousagetop`, run on the traces these tests write: `FD_RULES_KEEP=DIR` keeps
//! them), and where it disagrees, which is right and why.

use std::collections::BTreeMap;

use analysis::{run, AnalysisKind, IoReport, Partition, Report, RunOptions};
use ctf_writer::small::{SmallTrace, TimedEvent};
use ctf_writer::{FieldType, IntType, StructType, Value};

/// `O_CLOEXEC`.
const O_CLOEXEC: i64 = 0o2000000;
/// fcntl `F_SETFD`.
const F_SETFD: i64 = 2;

/// The event classes the tests write, with lttng-modules' field names and types.
pub(crate) fn classes() -> Vec<(&'static str, StructType)> {
    let (s32, u32t, s64, u64t) = (IntType::signed(32), IntType::unsigned(32), IntType::signed(64), IntType::unsigned(64));
    let s = StructType::new;
    let comm = || FieldType::char_array(16);
    let int_array = |t: IntType, len| FieldType::Array { elem: Box::new(FieldType::Int(t)), len };
    vec![
        ("sched_switch", synth::kernel::event_fields("sched_switch")),
        (
            "sched_process_fork",
            s().field("_parent_comm", comm())
                .int("_parent_tid", s32.clone())
                .int("_parent_pid", s32.clone())
                .field("_child_comm", comm())
                .int("_child_tid", s32.clone())
                .int("_child_pid", s32.clone()),
        ),
        ("sched_process_exec", s().field("_filename", FieldType::String).int("_tid", s32.clone()).int("_old_tid", s32.clone())),
        ("lttng_statedump_process_state", s().int("_tid", s32.clone()).int("_pid", s32.clone()).field("_name", comm())),
        (
            "lttng_statedump_file_descriptor",
            s().int("_pid", s32.clone()).int("_fd", s32.clone()).int("_flags", u32t.clone()).field("_filename", FieldType::String),
        ),
        (
            "syscall_entry_openat",
            s().int("_dfd", s32.clone()).field("_filename", FieldType::String).int("_flags", s32.clone()).int("_mode", IntType::unsigned(16)),
        ),
        ("syscall_exit_openat", s().int("_ret", s64.clone())),
        ("syscall_entry_read", s().int("_fd", u32t.clone()).int("_count", u64t.clone())),
        ("syscall_exit_read", s().int("_ret", s64.clone()).int("_buf", u64t.clone())),
        ("syscall_entry_write", s().int("_fd", u32t.clone()).int("_buf", u64t.clone()).int("_count", u64t.clone())),
        ("syscall_exit_write", s().int("_ret", s64.clone())),
        ("syscall_entry_close", s().int("_fd", u32t.clone())),
        ("syscall_exit_close", s().int("_ret", s64.clone())),
        ("syscall_entry_fcntl", s().int("_fd", u32t.clone()).int("_cmd", u32t.clone()).int("_arg", u64t.clone())),
        ("syscall_exit_fcntl", s().int("_ret", s64.clone())),
        ("syscall_entry_pipe2", s().int("_flags", s32.clone())),
        ("syscall_exit_pipe2", s().int("_ret", s64.clone()).field("_fildes", int_array(s32.clone(), 2))),
        ("syscall_entry_socket", s().int("_family", s32.clone()).int("_type", s32.clone()).int("_protocol", s32.clone())),
        ("syscall_exit_socket", s().int("_ret", s64.clone())),
        ("syscall_entry_eventfd2", s().int("_count", u32t.clone()).int("_flags", s32.clone())),
        ("syscall_exit_eventfd2", s().int("_ret", s64.clone())),
        ("syscall_entry_execve", s().field("_filename", FieldType::String).int("_argv", u64t.clone()).int("_envp", u64t.clone())),
        ("syscall_exit_execve", s().int("_ret", s64.clone())),
        ("syscall_entry_fsync", s().int("_fd", u32t.clone())),
        ("syscall_exit_fsync", s().int("_ret", s64.clone())),
        ("syscall_entry_lseek", s().int("_fd", u32t.clone()).int("_offset", s64.clone()).int("_whence", u32t.clone())),
        ("syscall_exit_lseek", s().int("_ret", s64.clone())),
        ("syscall_entry_newfstat", s().int("_fd", u32t.clone()).int("_statbuf", u64t.clone())),
        ("syscall_exit_newfstat", s().int("_ret", s64.clone()).int("_statbuf", u64t.clone())),
        ("syscall_entry_ioctl", s().int("_fd", u32t.clone()).int("_cmd", u32t.clone()).int("_arg", u64t.clone())),
        ("syscall_exit_ioctl", s().int("_ret", s64.clone()).int("_arg", u64t.clone())),
        (
            "syscall_entry_mmap",
            s().int("_addr", u64t.clone())
                .int("_len", u64t.clone())
                .int("_prot", u64t.clone())
                .int("_flags", u64t.clone())
                .int("_fd", u64t.clone())
                .int("_off", u64t.clone()),
        ),
        ("syscall_exit_mmap", s().int("_ret", u64t.clone())),
        ("syscall_entry_sendfile64", s().int("_out_fd", s32.clone()).int("_in_fd", s32.clone()).int("_offset", u64t.clone()).int("_count", u64t.clone())),
        ("syscall_exit_sendfile64", s().int("_ret", s64.clone()).int("_offset", u64t.clone())),
        ("syscall_entry_unknown", s().int("_id", u32t.clone()).field("_args", int_array(u64t.clone(), 6))),
        ("syscall_exit_unknown", s().int("_id", u32t.clone()).int("_ret", s64.clone()).field("_args", int_array(u64t, 6))),
    ]
}

/// One event to write: class name and field values in declaration order.
pub(crate) type Ev<'a> = (&'static str, Vec<Value<'a>>);

/// Writes `events` (one CPU, 1 µs apart from 1 µs on) as a kernel trace in `dir`.
fn write_trace(dir: &std::path::Path, events: &[Ev<'_>]) {
    let timed: Vec<_> = events.iter().zip(1u64..).map(|((name, values), k)| TimedEvent::new(k * 1_000, 0, name, values.clone())).collect();
    SmallTrace::new(classes()).write(dir, &timed).unwrap();
}

// Event makers (the `who` of a syscall is the task the CPU's last switch ran).
pub(crate) fn switch<'a>(prev: i64, next: i64) -> Ev<'a> {
    ("sched_switch", vec![Value::Str("p"), Value::I(prev), Value::I(20), Value::I(0), Value::Str("n"), Value::I(next), Value::I(20)])
}
fn fork<'a>(parent: i64, child: i64) -> Ev<'a> {
    ("sched_process_fork", vec![Value::Str("p"), Value::I(parent), Value::I(parent), Value::Str("p"), Value::I(child), Value::I(child)])
}
fn exec<'a>(tid: i64, file: &'a str) -> Ev<'a> {
    ("sched_process_exec", vec![Value::Str(file), Value::I(tid), Value::I(tid)])
}
pub(crate) fn proc_state<'a>(tid: i64, pid: i64, name: &'a str) -> Ev<'a> {
    ("lttng_statedump_process_state", vec![Value::I(tid), Value::I(pid), Value::Str(name)])
}
pub(crate) fn fd_dump<'a>(pid: i64, fd: i64, path: &'a str) -> Ev<'a> {
    ("lttng_statedump_file_descriptor", vec![Value::I(pid), Value::I(fd), Value::U(0), Value::Str(path)])
}
fn open<'a>(path: &'a str, flags: i64, fd: i64) -> [Ev<'a>; 2] {
    [("syscall_entry_openat", vec![Value::I(-100), Value::Str(path), Value::I(flags), Value::U(0)]), ("syscall_exit_openat", vec![Value::I(fd)])]
}
pub(crate) fn read<'a>(fd: u64, n: i64) -> [Ev<'a>; 2] {
    [("syscall_entry_read", vec![Value::U(fd), Value::U(4096)]), ("syscall_exit_read", vec![Value::I(n), Value::U(0)])]
}
pub(crate) fn write<'a>(fd: u64, n: i64) -> [Ev<'a>; 2] {
    [("syscall_entry_write", vec![Value::U(fd), Value::U(0), Value::U(4096)]), ("syscall_exit_write", vec![Value::I(n)])]
}
fn close<'a>(fd: u64) -> [Ev<'a>; 2] {
    [("syscall_entry_close", vec![Value::U(fd)]), ("syscall_exit_close", vec![Value::I(0)])]
}
fn fcntl<'a>(fd: u64, cmd: i64, arg: u64, ret: i64) -> [Ev<'a>; 2] {
    [("syscall_entry_fcntl", vec![Value::U(fd), Value::U(cmd as u64), Value::U(arg)]), ("syscall_exit_fcntl", vec![Value::I(ret)])]
}
fn pipe2<'a>(fds: &'a [Value<'a>; 2]) -> [Ev<'a>; 2] {
    [("syscall_entry_pipe2", vec![Value::I(0)]), ("syscall_exit_pipe2", vec![Value::I(0), Value::List(fds)])]
}
fn socket<'a>(fd: i64) -> [Ev<'a>; 2] {
    [("syscall_entry_socket", vec![Value::I(2), Value::I(1), Value::I(0)]), ("syscall_exit_socket", vec![Value::I(fd)])]
}
fn eventfd2<'a>(fd: i64) -> [Ev<'a>; 2] {
    [("syscall_entry_eventfd2", vec![Value::U(0), Value::I(0)]), ("syscall_exit_eventfd2", vec![Value::I(fd)])]
}
fn execve<'a>(file: &'a str) -> [Ev<'a>; 2] {
    [("syscall_entry_execve", vec![Value::Str(file), Value::U(0), Value::U(0)]), ("syscall_exit_execve", vec![Value::I(0)])]
}
/// A syscall the tracer has no name for (`syscall_entry_unknown`), with its number and
/// arguments, returning 0.
fn unknown<'a>(args: &'a [Value<'a>; 6]) -> [Ev<'a>; 2] {
    [("syscall_entry_unknown", vec![Value::U(436), Value::List(args)]), ("syscall_exit_unknown", vec![Value::U(436), Value::I(0), Value::List(args)])]
}

/// The io report of `events`, checked to be the same serially and in parallel with
/// tiny chunks, and checked for the no-byte-missing invariant: per-file rows sum to the
/// per-process totals.
fn io_of(events: &[Ev<'_>]) -> IoReport {
    let dir = tempfile::tempdir().unwrap();
    write_trace(dir.path(), events);
    // (To compare with lttng-analyses: FD_RULES_KEEP=DIR keeps each trace in DIR/TEST.)
    if let (Ok(keep), Some(name)) = (std::env::var("FD_RULES_KEEP"), std::thread::current().name()) {
        let to = std::path::Path::new(&keep).join(name);
        std::fs::create_dir_all(&to).unwrap();
        write_trace(&to, events);
    }
    let set = ctf::trace::TraceSet::open(dir.path()).unwrap();
    let serial = run(&set, AnalysisKind::Io, &RunOptions { threads: 1, chunk_size: u64::MAX, ..Default::default() }).unwrap();
    for partition in [Partition::Hybrid, Partition::Time] {
        let par = run(&set, AnalysisKind::Io, &RunOptions { threads: 3, chunk_size: 1, partition, ..Default::default() }).unwrap();
        assert_eq!(par, serial, "{partition:?} with tiny chunks");
    }
    let Report::Io(io) = serial else { unreachable!() };
    let files: (u64, u64) = io.files.iter().fold((0, 0), |a, f| (a.0 + f.read_bytes, a.1 + f.write_bytes));
    let procs: (u64, u64) = io.processes.iter().fold((0, 0), |a, p| (a.0 + p.read_bytes, a.1 + p.write_bytes));
    assert_eq!(files, procs, "per-file rows sum to the per-process totals");
    io
}

/// `path → (read, written)` of a report.
fn by_file(io: &IoReport) -> BTreeMap<&str, (u64, u64)> {
    io.files.iter().map(|f| (f.path.as_str(), (f.read_bytes, f.write_bytes))).collect()
}

/// Process 100 opens /data/log (fd 3), marks it close-on-exec with fcntl(F_SETFD, 1),
/// writes 10 bytes; forks 200, which execs: fd 3 is closed in 200. 200's pipe2 returns
/// [3, 4]; 200 writes 7 bytes to 4 and reads 5 from 3, both the pipe. 100 still has
/// fd 3: its 20 bytes go to /data/log.
///
/// Expected: /data/log written 10 + 20 = 30; pipe read 5, written 7.
/// lttng-analyses 0.6.1 gives /data/log read 5, written 30, and `unknown (n)` written
/// 7: the 5 bytes are wrong, since the kernel closed fd 3 at exec (F_SETFD, which it
/// ignores, marked it) and pipe2 gave the number to the pipe, whose fds it does not
/// learn.
#[test]
fn fcntl_setfd_fork_exec_and_a_pipe_reusing_the_number() {
    let pipe_fds = [Value::I(3), Value::I(4)];
    let mut ev = vec![proc_state(100, 100, "parent"), switch(0, 100)];
    ev.extend(open("/data/log", 0, 3));
    ev.extend(fcntl(3, F_SETFD, 1, 0));
    ev.extend(write(3, 10));
    ev.push(fork(100, 200));
    ev.push(switch(100, 200));
    ev.push(exec(200, "/bin/child"));
    ev.extend(pipe2(&pipe_fds));
    ev.extend(write(4, 7));
    ev.extend(read(3, 5));
    ev.push(switch(200, 100));
    ev.extend(write(3, 20));
    let io = io_of(&ev);
    assert_eq!(by_file(&io), BTreeMap::from([("/data/log", (0, 30)), ("pipe", (5, 7))]));
    // Per process, split as lttng-iousagetop's columns: 100 wrote 30 to disk; 200's
    // pipe bytes are other. (lttng-iousagetop 0.6.1 puts 200's 5 bytes read under Disk:
    // it thinks fd 3 is still /data/log.)
    assert_eq!(split(&io), BTreeMap::from([(100, [[0, 30], [0, 0], [0, 0]]), (200, [[0, 0], [0, 0], [5, 7]])]));
}

/// `pid → [[disk read, written], [net …], [other …]]` of a report, each row checked to
/// sum to its totals.
fn split(io: &IoReport) -> BTreeMap<i32, [[u64; 2]; 3]> {
    io.processes
        .iter()
        .map(|p| {
            let s = [[p.disk_read_bytes, p.disk_write_bytes], [p.net_read_bytes, p.net_write_bytes], [p.other_read_bytes, p.other_write_bytes]];
            assert_eq!((s.iter().map(|c| c[0]).sum::<u64>(), s.iter().map(|c| c[1]).sum::<u64>()), (p.read_bytes, p.write_bytes), "pid {}", p.pid);
            (p.pid, s)
        })
        .collect()
}

/// fcntl(F_SETFD, 0) clears close-on-exec: an fd opened with O_CLOEXEC then cleared
/// survives exec. Process 100 opens /x with O_CLOEXEC (fd 3), clears the flag, execs,
/// writes 4 bytes to fd 3.
///
/// Expected: /x written 4. lttng-analyses 0.6.1 gives `unknown (n)` written 4: wrong,
/// it closes the fd at exec for its O_CLOEXEC, not seeing that F_SETFD cleared the
/// flag (the kernel keeps close-on-exec per fd, and fcntl sets it).
#[test]
fn fcntl_setfd_zero_keeps_the_fd_across_exec() {
    let mut ev = vec![proc_state(100, 100, "p"), switch(0, 100)];
    ev.extend(open("/x", O_CLOEXEC, 3));
    ev.extend(fcntl(3, F_SETFD, 0, 0));
    ev.push(exec(100, "/bin/q"));
    ev.extend(write(3, 4));
    assert_eq!(by_file(&io_of(&ev)), BTreeMap::from([("/x", (0, 4))]));
}

/// Process 300 reads 100 bytes from fd 5 and writes 40 to fd 6 before the statedump
/// names them; then it closes 6 and opens /tmp/new as 6; the statedump lists 5 as
/// /etc/conf and 6 as /tmp/new; 300 reads 1 more byte from 5.
///
/// Expected: /etc/conf read 100 + 1 = 101 (fd 5 was open before tracing began and
/// nothing touched it: the statedump names what it named); the 40 bytes written to 6
/// stay `unknown (fd 6)` (fd 6 was closed and reopened in between: they were written
/// to an earlier, unknown file). lttng-analyses 0.6.1 agrees on the files (/etc/conf
/// 101, `unknown (daemon)` 40) but files the 101 bytes under its Unknown column; ours
/// are Disk (the statedump names a path).
#[test]
fn bytes_before_the_statedump_go_to_its_path() {
    let mut ev = vec![switch(0, 300)];
    ev.extend(read(5, 100));
    ev.extend(write(6, 40));
    ev.extend(close(6));
    ev.extend(open("/tmp/new", 0, 6));
    ev.push(proc_state(300, 300, "daemon"));
    ev.push(fd_dump(300, 5, "/etc/conf"));
    ev.push(fd_dump(300, 6, "/tmp/new"));
    ev.extend(read(5, 1));
    let io = io_of(&ev);
    assert_eq!(by_file(&io), BTreeMap::from([("/etc/conf", (101, 0)), ("unknown (fd 6)", (0, 40))]));
    // The 100 held bytes moved from other to disk with their file.
    assert_eq!(split(&io), BTreeMap::from([(300, [[101, 0], [0, 0], [0, 40]])]));
}

/// Thread 401 of process 400 runs before the statedump says whose it is: it opens
/// /var/db as fd 7 and reads 50 bytes; the statedump says 401 belongs to 400; 401 reads
/// 60 more; thread 400 reads 70 from fd 7 (threads share their process's table).
///
/// Expected: /var/db read 50 + 60 + 70 = 180. (Before the rule the fd stayed under
/// 401's own id: the 130 later bytes had no file.) lttng-analyses 0.6.1 agrees.
#[test]
fn a_late_known_thread_brings_its_fds_to_its_process() {
    let mut ev = vec![switch(0, 401)];
    ev.extend(open("/var/db", 0, 7));
    ev.extend(read(7, 50));
    ev.push(proc_state(400, 400, "app"));
    ev.push(proc_state(401, 400, "app"));
    ev.extend(read(7, 60));
    ev.push(switch(401, 400));
    ev.extend(read(7, 70));
    let io = io_of(&ev);
    assert_eq!(by_file(&io), BTreeMap::from([("/var/db", (180, 0))]));
    assert_eq!(io.processes.iter().map(|p| (p.pid, p.read_bytes)).collect::<Vec<_>>(), vec![(400, 180)]);
}

/// close_range, seen as `syscall_entry_unknown` id 436 (a tracer without its name):
/// process 500 opens /a (3) and /b (4), marks 3..=~0 close-on-exec
/// (CLOSE_RANGE_CLOEXEC), then closes 4..=4; forks 501, which execs and gets a socket
/// as fd 3 and writes 9 bytes to it; 500 writes 11 bytes to 3 and reads 13 from 4.
///
/// Expected: /a written 11 (only marked in 500, which did not exec); socket written 9;
/// `unknown (fd 4)` read 13 (4 was closed: a read that moves bytes there means the
/// trace lost the event that reopened it). lttng-analyses 0.6.1 gives /a written 20 and
/// /b read 13: wrong, exec closed /a in 501 (close_range marked it) before socket()
/// took the number, and close_range closed /b's fd in 500.
#[test]
fn close_range_as_an_unknown_syscall() {
    let mark = [Value::U(3), Value::U(u32::MAX.into()), Value::U(4), Value::U(0), Value::U(0), Value::U(0)];
    let shut = [Value::U(4), Value::U(4), Value::U(0), Value::U(0), Value::U(0), Value::U(0)];
    let mut ev = vec![proc_state(500, 500, "srv"), switch(0, 500)];
    ev.extend(open("/a", 0, 3));
    ev.extend(open("/b", 0, 4));
    ev.extend(unknown(&mark));
    ev.extend(unknown(&shut));
    ev.push(fork(500, 501));
    ev.push(switch(500, 501));
    ev.push(exec(501, "/bin/w"));
    ev.extend(socket(3));
    ev.extend(write(3, 9));
    ev.push(switch(501, 500));
    ev.extend(write(3, 11));
    ev.extend(read(4, 13));
    let io = io_of(&ev);
    assert_eq!(by_file(&io), BTreeMap::from([("/a", (0, 11)), ("socket", (0, 9)), ("unknown (fd 4)", (13, 0))]));
    assert_eq!(split(&io), BTreeMap::from([(500, [[0, 11], [0, 0], [13, 0]]), (501, [[0, 0], [0, 9], [0, 0]])]));
}

/// An exec seen only as a successful execve exit (no `sched_process_exec` in the
/// trace): process 600 opens /c with O_CLOEXEC (3), forks 601, which execve()s, makes
/// an eventfd (3) and writes 8 bytes to it.
///
/// Expected: anon_inode:[eventfd] written 8, /c nothing. lttng-analyses 0.6.1 credits
/// the 8 bytes to /c: wrong, the execve closed it (O_CLOEXEC) and eventfd2 took the
/// number.
#[test]
fn execve_exit_without_sched_process_exec() {
    let mut ev = vec![proc_state(600, 600, "sh"), switch(0, 600)];
    ev.extend(open("/c", O_CLOEXEC, 3));
    ev.push(fork(600, 601));
    ev.push(switch(600, 601));
    ev.extend(execve("/bin/true"));
    ev.extend(eventfd2(3));
    ev.extend(write(3, 8));
    assert_eq!(by_file(&io_of(&ev)), BTreeMap::from([("anon_inode:[eventfd]", (0, 8))]));
}

/// An fd-taking call that changes no fd table: `syscall_entry_NAME(fd, …)` (the
/// other arguments 0) and its exit returning `ret`.
fn on_fd<'a>(name: &'static str, fd: u64, ret: i64) -> [Ev<'a>; 2] {
    let (entry, exit, args, exit_args): (&str, &str, usize, usize) = match name {
        "fsync" => ("syscall_entry_fsync", "syscall_exit_fsync", 0, 0),
        "lseek" => ("syscall_entry_lseek", "syscall_exit_lseek", 2, 0),
        "newfstat" => ("syscall_entry_newfstat", "syscall_exit_newfstat", 1, 1),
        "ioctl" => ("syscall_entry_ioctl", "syscall_exit_ioctl", 2, 1),
        _ => unreachable!("{name}"),
    };
    let mut e = vec![Value::U(fd)];
    e.extend(std::iter::repeat_n(Value::U(0), args));
    let mut x = vec![Value::I(ret)];
    x.extend(std::iter::repeat_n(Value::U(0), exit_args));
    [(entry, e), (exit, x)]
}
/// mmap of `fd` (`u64::MAX`: -1, anonymous memory).
fn mmap<'a>(fd: u64) -> [Ev<'a>; 2] {
    let z = Value::U(0);
    [("syscall_entry_mmap", vec![z, Value::U(4096), z, z, Value::U(fd), z]), ("syscall_exit_mmap", vec![Value::U(0x7f00_0000_0000)])]
}
fn sendfile64<'a>(out_fd: i64, in_fd: i64, n: i64) -> [Ev<'a>; 2] {
    [
        ("syscall_entry_sendfile64", vec![Value::I(out_fd), Value::I(in_fd), Value::U(0), Value::U(4096)]),
        ("syscall_exit_sendfile64", vec![Value::I(n), Value::U(0)]),
    ]
}

/// `(syscall, fd, path)` of every call of `events` (`analyze -a syscall --log`), in
/// order, checked to be the same serially and in parallel with tiny chunks; the longest
/// calls carry the same fd and path as their log rows.
fn call_files_of(events: &[Ev<'_>]) -> Vec<(String, Option<i32>, Option<String>)> {
    call_rows_of(events).into_iter().map(|l| (l.name, l.fd, l.path)).collect()
}

/// The rows of [`call_files_of`].
fn call_rows_of(events: &[Ev<'_>]) -> Vec<analysis::syscall::LongCallRow> {
    let dir = tempfile::tempdir().unwrap();
    write_trace(dir.path(), events);
    let set = ctf::trace::TraceSet::open(dir.path()).unwrap();
    let opts = |threads, chunk_size, partition| RunOptions { threads, chunk_size, partition, log: true, top: 3, ..Default::default() };
    let serial = run(&set, AnalysisKind::Syscall, &opts(1, u64::MAX, Partition::Hybrid)).unwrap();
    for partition in [Partition::Hybrid, Partition::Time] {
        assert_eq!(run(&set, AnalysisKind::Syscall, &opts(3, 1, partition)).unwrap(), serial, "{partition:?} with tiny chunks");
    }
    // Without --log (the longest only).
    let top = |threads, chunk_size| {
        let Report::Syscall(r) = run(&set, AnalysisKind::Syscall, &RunOptions { log: false, ..opts(threads, chunk_size, Partition::Time) }).unwrap() else {
            unreachable!()
        };
        r.longest
    };
    let Report::Syscall(r) = serial else { unreachable!() };
    assert_eq!(top(3, 1), top(1, u64::MAX));
    assert_eq!(top(1, u64::MAX), r.longest);
    for l in &r.longest {
        assert!(r.log.contains(l), "{l:?} in the log");
    }
    r.log
}

/// The fd and file each call worked on, as the longest calls and the log list them
/// (lttng-iolatencytop's `Filename (fd=N)`), worked out from the fd rules:
/// - read (fd 5) before the statedump, moving bytes: fd 5 is unknown then, and the
///   statedump later names it /var/log/syslog: the call's file is that one (as its bytes
///   are); a read of fd 6 that fails before the statedump names 6: no file;
/// - openat returns fd 3 for /data/a: fd 3, /data/a; a read of 3 returning 0 moved
///   nothing and still names /data/a; close(3) names the file it closed;
/// - a failed openat works on no fd; socket returns 4: `socket`;
/// - pipe2 makes two fds (no single one); a write to 7, which nothing names, moving
///   bytes: fd 7 and no file; fcntl(4, F_SETFD) names the socket;
/// - after fork and exec, the child's close-on-exec fd 4 is closed: its read of 4 names
///   no file, while 5 (kept) is /var/log/syslog.
///
/// lttng-iolatencytop 0.6.1 lists only reads, writes, opens and syncs; for those it
/// names the same files, except that it knows no statedump file for bytes moved before
/// the statedump (`unknown`).
#[test]
fn each_call_names_the_fd_and_file_it_worked_on() {
    let pipe_fds = [Value::I(8), Value::I(9)];
    let mut ev = vec![proc_state(100, 100, "app"), switch(0, 100)];
    ev.extend(read(5, 10));
    ev.extend(read(6, -9));
    ev.push(fd_dump(100, 5, "/var/log/syslog"));
    ev.extend(open("/data/a", 0, 3));
    ev.extend(read(3, 0));
    ev.extend(close(3));
    ev.extend(open("/nope", 0, -2));
    ev.extend(socket(4));
    ev.extend(fcntl(4, F_SETFD, 1, 0));
    ev.extend(pipe2(&pipe_fds));
    ev.extend(write(7, 3));
    ev.push(fork(100, 200));
    ev.push(switch(100, 200));
    ev.push(exec(200, "/bin/child"));
    ev.extend(read(4, -9));
    ev.extend(read(5, 1));
    let s = |n: &str, fd: Option<i32>, p: Option<&str>| (n.to_string(), fd, p.map(str::to_string));
    assert_eq!(
        call_files_of(&ev),
        vec![
            s("read", Some(5), Some("/var/log/syslog")),
            s("read", Some(6), None),
            s("openat", Some(3), Some("/data/a")),
            s("read", Some(3), Some("/data/a")),
            s("close", Some(3), Some("/data/a")),
            s("openat", None, None),
            s("socket", Some(4), Some("socket")),
            s("fcntl", Some(4), Some("socket")),
            s("pipe2", None, None),
            s("write", Some(7), None),
            s("read", Some(4), None),
            s("read", Some(5), Some("/var/log/syslog")),
        ]
    );
}

/// The calls that work on an fd without changing any fd table (`kernel::layout::Sc::OnFd`:
/// fsync, lseek, fstat, ioctl, mmap …) name the fd and the file it named at entry, as
/// reads do; sendfile64 names the fd read (`in_fd`) and the fd written (`out_fd`), each
/// with its file:
/// - after openat returns 3 for /data/a and socket returns 4: fsync, lseek, newfstat
///   of 3 name /data/a, ioctl of 4 names `socket`; mmap of 3 names /data/a, mmap of
///   -1 (anonymous memory) no fd; sendfile64(out 4, in 3) reads /data/a (fd 3) and
///   writes the socket (fd 4);
/// - fsync of 9, which nothing names: fd 9, no file; after close(3), fsync of 3: fd 3,
///   no file (the file an fd names is looked up at entry).
///
/// lttng-iolatencytop 0.6.1 lists syncs (fsync, fdatasync, sync_file_range) with
/// their fd and file, not the others; sendfile64 it counts as a read-write request
/// without naming its fds (`TODO: handle fd_in/fd_out`).
#[test]
fn calls_on_an_fd_name_it_and_its_file() {
    let mut ev = vec![proc_state(100, 100, "app"), switch(0, 100)];
    ev.extend(open("/data/a", 0, 3));
    ev.extend(socket(4));
    ev.extend(on_fd("fsync", 3, 0));
    ev.extend(on_fd("lseek", 3, 100));
    ev.extend(on_fd("newfstat", 3, 0));
    ev.extend(on_fd("ioctl", 4, -25));
    ev.extend(mmap(3));
    ev.extend(mmap(u64::MAX));
    ev.extend(sendfile64(4, 3, 4096));
    ev.extend(on_fd("fsync", 9, -9));
    ev.extend(close(3));
    ev.extend(on_fd("fsync", 3, -9));
    let s = |n: &str, fd: Option<i32>, p: Option<&str>| (n.to_string(), fd, p.map(str::to_string));
    let rows = call_rows_of(&ev);
    let files: Vec<_> = rows.iter().map(|l| (l.name.clone(), l.fd, l.path.clone())).collect();
    assert_eq!(
        files,
        vec![
            s("openat", Some(3), Some("/data/a")),
            s("socket", Some(4), Some("socket")),
            s("fsync", Some(3), Some("/data/a")),
            s("lseek", Some(3), Some("/data/a")),
            s("newfstat", Some(3), Some("/data/a")),
            s("ioctl", Some(4), Some("socket")),
            s("mmap", Some(3), Some("/data/a")),
            s("mmap", None, None),
            s("sendfile64", Some(3), Some("/data/a")),
            s("fsync", Some(9), None),
            s("close", Some(3), Some("/data/a")),
            s("fsync", Some(3), None),
        ]
    );
    let outs: Vec<_> = rows.iter().filter_map(|l| l.out_fd.map(|fd| (l.name.as_str(), fd, l.out_path.as_deref()))).collect();
    assert_eq!(outs, vec![("sendfile64", 4, Some("socket"))]);
    // The io analysis counts no byte of these calls (sendfile's included, as before).
    assert_eq!(by_file(&io_of(&ev)), BTreeMap::new());
    let mut text = String::new();
    let report = analysis::SyscallReport {
        analysis: "syscall",
        begin_ns: None,
        count: 0,
        end_ns: None,
        freq: Vec::new(),
        log: rows,
        longest: Vec::new(),
        processes: Vec::new(),
        threads: Vec::new(),
    };
    analysis::syscall::write_text(&report, &mut text).unwrap();
    assert!(text.contains("/data/a (fd=3) -> socket (fd=4)"), "{text}");
}
