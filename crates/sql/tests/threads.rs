//! The `threads` table on a small kernel trace written with `ctf-writer`: its rows and
//! validity ranges are what the events say (a statedump, a fork, two execs, a rename
//! seen by a switch), and the table is the same at any partitioning.

use analysis::threads::ThreadNameRow;
use analysis::RunOptions;
use ctf_writer::small::{SmallTrace, TimedEvent};
use ctf_writer::{FieldType, IntType, StructType, Value};
use sql::arrow::array::{Array, AsArray};
use sql::arrow::datatypes::{Int32Type, Int64Type};
use sql::SqlSession;

/// The classes written, with lttng-modules' field names and types.
fn classes() -> Vec<(&'static str, StructType)> {
    let s32 = IntType::signed(32);
    let comm = || FieldType::char_array(16);
    vec![
        ("sched_switch", synth::kernel::event_fields("sched_switch")),
        (
            "sched_process_fork",
            StructType::new()
                .field("_parent_comm", comm())
                .int("_parent_tid", s32.clone())
                .int("_parent_pid", s32.clone())
                .field("_child_comm", comm())
                .int("_child_tid", s32.clone())
                .int("_child_pid", s32.clone()),
        ),
        ("sched_process_exec", StructType::new().field("_filename", FieldType::String).int("_tid", s32.clone()).int("_old_tid", s32.clone())),
        ("lttng_statedump_process_state", StructType::new().int("_tid", s32.clone()).int("_pid", s32).field("_name", comm())),
    ]
}

/// The events, 1 µs apart, and the times of the exec of `sh` and of the rename of
/// thread 12 (seen by a switch only).
struct Events {
    list: Vec<TimedEvent<'static>>,
    exec_sh: i64,
    renamed: i64,
}

fn events() -> Events {
    let mut list = Vec::new();
    let mut at = |cpu: u32, class: &'static str, values: Vec<Value<'static>>| {
        let ns = (list.len() as u64 + 1) * 1_000;
        list.push(TimedEvent::new(ns, cpu, class, values));
        ns as i64
    };
    let switch = |prev: i64, pc: &'static str, next: i64, nc: &'static str| {
        vec![Value::Str(pc), Value::I(prev), Value::I(20), Value::I(0), Value::Str(nc), Value::I(next), Value::I(20)]
    };
    at(0, "lttng_statedump_process_state", vec![Value::I(10), Value::I(10), Value::Str("bash")]);
    at(0, "sched_switch", switch(0, "swapper/0", 10, "bash"));
    at(0, "sched_process_fork", vec![Value::Str("bash"), Value::I(10), Value::I(10), Value::Str("bash"), Value::I(11), Value::I(11)]);
    at(1, "sched_switch", switch(0, "swapper/1", 11, "bash"));
    at(1, "sched_process_exec", vec![Value::Str("/usr/bin/ls"), Value::I(11), Value::I(11)]);
    at(1, "sched_switch", switch(11, "ls", 12, "kworker"));
    // Many switches that change no name, across many packets and slices; thread 11
    // executes `sh` at round 200; thread 12 is renamed (no exec) before round 300.
    let (mut eleven, mut twelve) = ("ls", "kworker");
    let (mut exec_sh, mut renamed) = (0, 0);
    for round in 0..400 {
        at(0, "sched_switch", switch(10, "bash", 0, "swapper/0"));
        at(0, "sched_switch", switch(0, "swapper/0", 10, "bash"));
        if round == 300 {
            twelve = "kworker/u8";
        }
        let t = at(1, "sched_switch", switch(12, twelve, 11, eleven));
        if round == 300 {
            renamed = t;
        }
        if round == 200 {
            exec_sh = at(1, "sched_process_exec", vec![Value::Str("/bin/sh"), Value::I(11), Value::I(11)]);
            eleven = "sh";
        }
        at(1, "sched_switch", switch(11, eleven, 12, twelve));
    }
    Events { list, exec_sh, renamed }
}

fn row(tid: i32, pid: Option<i32>, name: &str, from: Option<i64>, to: Option<i64>) -> ThreadNameRow {
    ThreadNameRow { tid, pid, name: name.into(), valid_from_ns: from, valid_to_ns: to }
}

/// The rows of `SELECT tid, pid, name, valid_from_ns, valid_to_ns FROM threads`.
fn table(s: &SqlSession) -> Vec<ThreadNameRow> {
    let mut out = Vec::new();
    for b in s.query("SELECT tid, pid, name, valid_from_ns, valid_to_ns FROM threads ORDER BY tid, valid_from_ns NULLS FIRST").unwrap() {
        let (tid, pid, name) = (b.column(0).as_primitive::<Int32Type>(), b.column(1).as_primitive::<Int32Type>(), b.column(2).as_string::<i32>());
        let (from, to) = (b.column(3).as_primitive::<Int64Type>(), b.column(4).as_primitive::<Int64Type>());
        let opt = |a: &sql::arrow::array::PrimitiveArray<Int64Type>, i: usize| (!a.is_null(i)).then(|| a.value(i));
        for i in 0..b.num_rows() {
            out.push(row(tid.value(i), (!pid.is_null(i)).then(|| pid.value(i)), name.value(i), opt(from, i), opt(to, i)));
        }
    }
    out
}

#[test]
fn thread_names_and_their_ranges_are_what_the_events_say_at_any_partitioning() {
    let dir = tempfile::tempdir().unwrap();
    let ev = events();
    SmallTrace::new(classes()).cpus(2).write(dir.path(), &ev.list).unwrap();
    let want = vec![
        // Named by the statedump: it had the name before the trace.
        row(10, Some(10), "bash", None, None),
        // Born by the fork with its parent's name, then two execs.
        row(11, Some(11), "bash", Some(3_000), Some(5_000)),
        row(11, Some(11), "ls", Some(5_000), Some(ev.exec_sh)),
        row(11, Some(11), "sh", Some(ev.exec_sh), None),
        // First seen by a switch (no pid known), renamed without an exec: the new
        // name holds from the first event that shows it.
        row(12, None, "kworker", None, Some(ev.renamed)),
        row(12, None, "kworker/u8", Some(ev.renamed), None),
    ];
    for parts in [1, 2, 5] {
        let s = SqlSession::open(&[dir.path().to_path_buf()], parts).unwrap();
        assert_eq!(table(&s), want, "at {parts} partitions");
        let traces = s.query("SELECT DISTINCT trace FROM threads").unwrap();
        assert_eq!(traces.iter().map(|b| b.num_rows()).sum::<usize>(), 1);
    }
    // The analysis behind the table at tiny slices, on several threads: slices cut
    // runs of equal names and name changes alike.
    let set = ctf::trace::TraceSet::open(dir.path()).unwrap();
    for (threads, chunk_size) in [(1, 0), (1, 4096), (3, 4096), (4, 10_000)] {
        let r = analysis::threads::run(&set, &RunOptions { threads, chunk_size, ..RunOptions::default() }).unwrap();
        assert_eq!(r.threads, want, "{threads} threads, slices of {chunk_size} bytes");
    }
}
