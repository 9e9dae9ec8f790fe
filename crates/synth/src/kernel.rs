//! The LTTng kernel trace schema (lttng-modules 2.13 session layout) and the encoding of
//! [`KEvent`]s into it.
//!
//! Event layouts and field names are those of the real kernel traces' metadata
//! (`shared/traces/many-threads`, `scimark2-all-events-cpu3`: lttng-modules 2.8, unchanged
//! for these events in 2.13). Ids: statedump and syscall events get 0..=23 (compact
//! headers), `sched_*` get 300..=303, so every `sched_switch` uses the extended header as in
//! real kernel traces (where sched ids are above 1000). Background activity
//! ([`Background`]: irq, softirq, timer, kmem, wake-up events, lttng-modules' layouts)
//! gets 400 and up, and is declared only in traces that have it.

use ctf_writer::{
    ByteOrder, ClockClass, Cycles, EnvValue, EventClass, EventClassId, EventHeaderKind, FieldType, IntType, PacketContextField, StreamClass, StreamClassId,
    StreamWriter, StructType, TraceSchema, Value,
};

use crate::events::{Background, KEvent, SyscallArgs, EVENT_NAMES, WORKLOAD_EVENTS};

/// Event class id of each entry of [`EVENT_NAMES`].
pub fn event_id(name_index: usize) -> EventClassId {
    if name_index < 24 {
        EventClassId(name_index as u32)
    } else if name_index < WORKLOAD_EVENTS {
        EventClassId(300 + (name_index - 24) as u32)
    } else {
        EventClassId(400 + (name_index - WORKLOAD_EVENTS) as u32)
    }
}

fn s32() -> IntType {
    IntType::signed(32)
}
fn u32t() -> IntType {
    IntType::unsigned(32)
}
fn s64() -> IntType {
    IntType::signed(64)
}
fn u64t() -> IntType {
    IntType::unsigned(64)
}
fn hex64() -> IntType {
    IntType::unsigned(64).with_base(16)
}

/// The payload fields of kernel event class `name` as lttng-modules writes them (the
/// module documentation says from which traces); an empty structure for a name it does
/// not know. Tests that write their own kernel-shaped traces take classes from here.
pub fn event_fields(name: &str) -> StructType {
    let s = StructType::new();
    let comm = || FieldType::char_array(16);
    match name {
        "lttng_statedump_start" | "lttng_statedump_end" => s,
        "lttng_statedump_process_state" => s
            .int("_tid", s32())
            .int("_vtid", s32())
            .int("_pid", s32())
            .int("_vpid", s32())
            .int("_ppid", s32())
            .int("_vppid", s32())
            .field("_name", comm())
            .int("_type", s32())
            .int("_mode", s32())
            .int("_submode", s32())
            .int("_status", s32())
            .int("_ns_level", s32())
            .int("_ns_inum", u32t()),
        "lttng_statedump_file_descriptor" => {
            s.int("_pid", s32()).int("_fd", s32()).int("_flags", u32t().with_base(8)).int("_fmode", u32t().with_base(16)).field("_filename", FieldType::String)
        }
        "syscall_entry_read" => s.int("_fd", u32t()).int("_count", u64t()),
        "syscall_entry_write" => s.int("_fd", u32t()).int("_buf", hex64()).int("_count", u64t()),
        "syscall_entry_pread64" => s.int("_fd", u32t()).int("_count", u64t()).int("_pos", s64()),
        "syscall_entry_pwrite64" => s.int("_fd", u32t()).int("_buf", hex64()).int("_count", u64t()).int("_pos", s64()),
        "syscall_entry_readv" | "syscall_entry_writev" => s.int("_fd", u64t()).int("_vec", hex64()).int("_vlen", u64t()),
        "syscall_entry_openat" => s.int("_dfd", s32()).field("_filename", FieldType::String).int("_flags", s32()).int("_mode", IntType::unsigned(16)),
        "syscall_entry_close" => s.int("_fd", u32t()),
        "syscall_entry_dup" => s.int("_fildes", u32t()),
        "syscall_entry_dup2" => s.int("_oldfd", u32t()).int("_newfd", u32t()),
        "syscall_exit_read" | "syscall_exit_pread64" => s.int("_ret", s64()).int("_buf", hex64()),
        "syscall_exit_readv" | "syscall_exit_writev" => s.int("_ret", s64()).int("_vec", hex64()),
        n if n.starts_with("syscall_exit_") => s.int("_ret", s64()),
        "sched_switch" => s
            .field("_prev_comm", comm())
            .int("_prev_tid", s32())
            .int("_prev_prio", s32())
            .int("_prev_state", s64())
            .field("_next_comm", comm())
            .int("_next_tid", s32())
            .int("_next_prio", s32()),
        "sched_process_fork" => s
            .field("_parent_comm", comm())
            .int("_parent_tid", s32())
            .int("_parent_pid", s32())
            .int("_parent_ns_inum", u32t())
            .field("_child_comm", comm())
            .int("_child_tid", s32())
            .int("__vtids_length", IntType::unsigned(8))
            .field("_vtids", FieldType::Sequence { elem: Box::new(FieldType::Int(s32())), length_field: "__vtids_length".into() })
            .int("_child_pid", s32())
            .int("_child_ns_inum", u32t()),
        "sched_process_exec" => s.field("_filename", FieldType::String).int("_tid", s32()).int("_old_tid", s32()),
        "sched_process_exit" => s.field("_comm", comm()).int("_tid", s32()).int("_prio", s32()),
        "irq_handler_entry" => s.int("_irq", s32()).field("_name", FieldType::String),
        "irq_handler_exit" => s.int("_irq", s32()).int("_ret", s32()),
        "softirq_entry" | "softirq_exit" => s.int("_vec", u32t()),
        "timer_hrtimer_expire_entry" => s.int("_hrtimer", hex64()).int("_now", s64()).int("_function", hex64()),
        "timer_hrtimer_expire_exit" => s.int("_hrtimer", hex64()),
        "kmem_kmalloc" => s.int("_call_site", hex64()).int("_ptr", hex64()).int("_bytes_req", u64t()).int("_bytes_alloc", u64t()).int("_gfp_flags", u32t()),
        "kmem_kfree" => s.int("_call_site", hex64()).int("_ptr", hex64()),
        "sched_wakeup" => s.field("_comm", comm()).int("_tid", s32()).int("_prio", s32()).int("_target_cpu", s32()),
        _ => s,
    }
}

/// Parameters of the kernel schema that vary per trace.
#[derive(Debug, Clone)]
pub struct KernelTraceInfo {
    /// Trace UUID.
    pub uuid: [u8; 16],
    /// Clock UUID.
    pub clock_uuid: [u8; 16],
    /// Clock offset from the Epoch, in ns.
    pub clock_offset_ns: u64,
    /// `env.hostname`.
    pub hostname: String,
    /// Event header layout (LTTng kernel channels use the compact one).
    pub header: EventHeaderKind,
    /// Whether the trace has background activity: its classes are declared only then.
    pub background: bool,
}

/// The kernel `TraceSchema`: env, monotonic clock, one stream class, the event classes.
pub fn kernel_schema(info: &KernelTraceInfo) -> TraceSchema {
    let env = vec![
        ("hostname".to_string(), EnvValue::Str(info.hostname.clone())),
        ("domain".to_string(), EnvValue::Str("kernel".into())),
        ("sysname".to_string(), EnvValue::Str("Linux".into())),
        ("kernel_release".to_string(), EnvValue::Str("6.1.0-synth-amd64".into())),
        ("kernel_version".to_string(), EnvValue::Str("#1 SMP PREEMPT_DYNAMIC Debian 6.1.0 (synthetic)".into())),
        ("tracer_name".to_string(), EnvValue::Str("lttng-modules".into())),
        ("tracer_major".to_string(), EnvValue::Int(2)),
        ("tracer_minor".to_string(), EnvValue::Int(13)),
        ("tracer_patchlevel".to_string(), EnvValue::Int(9)),
        ("trace_buffering_scheme".to_string(), EnvValue::Str("global".into())),
        ("trace_name".to_string(), EnvValue::Str("tracecube-synth".into())),
        ("trace_creation_datetime".to_string(), EnvValue::Str("20240101T000000+0000".into())),
        ("product_uuid".to_string(), EnvValue::Str("00000000-0000-0000-0000-000000000000".into())),
    ];
    let declared = if info.background { EVENT_NAMES.len() } else { WORKLOAD_EVENTS };
    let events = EVENT_NAMES[..declared]
        .iter()
        .enumerate()
        .map(|(i, n)| EventClass { id: event_id(i), name: n.to_string(), stream: StreamClassId(0), loglevel: None, fields: event_fields(n) })
        .collect();
    TraceSchema {
        uuid: info.uuid,
        byte_order: ByteOrder::Little,
        env,
        clock: ClockClass {
            name: "monotonic".into(),
            uuid: info.clock_uuid,
            description: "Monotonic Clock".into(),
            freq: 1_000_000_000,
            offset: info.clock_offset_ns,
        },
        streams: vec![StreamClass { id: StreamClassId(0), event_header: info.header, packet_context: PacketContextField::lttng_kernel() }],
        events,
    }
}

/// Encodes one kernel event at `ts` on a per-CPU stream.
pub fn write_kevent(w: &mut StreamWriter, ts: u64, ev: &KEvent) -> ctf_writer::Result<()> {
    use Value::{Bytes, Str, I, U};
    let id = event_id(ev.name_index());
    let t = Cycles(ts);
    match ev {
        KEvent::StatedumpStart | KEvent::StatedumpEnd => w.write_event(t, id, &[]),
        KEvent::StatedumpProcess { tid, pid, ppid, name, kernel_thread, status } => w.write_event(
            t,
            id,
            &[
                I((*tid).into()),
                I((*tid).into()),
                I((*pid).into()),
                I((*pid).into()),
                I((*ppid).into()),
                I((*ppid).into()),
                Bytes(name),
                I(i64::from(*kernel_thread)),
                I(5),
                I(0),
                I((*status).into()),
                I(0),
                U(0xEFFF_FFFC),
            ],
        ),
        KEvent::StatedumpFd { pid, fd, filename } => w.write_event(t, id, &[I((*pid).into()), I((*fd).into()), U(0o2), U(0x1f), Str(filename)]),
        KEvent::SchedSwitch { prev_comm, prev_tid, prev_prio, prev_state, next_comm, next_tid, next_prio } => w.write_event(
            t,
            id,
            &[Bytes(prev_comm), I((*prev_tid).into()), I((*prev_prio).into()), I(*prev_state), Bytes(next_comm), I((*next_tid).into()), I((*next_prio).into())],
        ),
        KEvent::Fork { parent_comm, parent_tid, parent_pid, child_comm, child_tid, child_pid } => w.write_event(
            t,
            id,
            &[
                Bytes(parent_comm),
                I((*parent_tid).into()),
                I((*parent_pid).into()),
                U(0xEFFF_FFFC),
                Bytes(child_comm),
                I((*child_tid).into()),
                U(1),
                Value::List(&[I((*child_tid).into())]),
                I((*child_pid).into()),
                U(0xEFFF_FFFC),
            ],
        ),
        KEvent::Exec { filename, tid, old_tid } => w.write_event(t, id, &[Str(filename), I((*tid).into()), I((*old_tid).into())]),
        KEvent::Exit { comm, tid, prio } => w.write_event(t, id, &[Bytes(comm), I((*tid).into()), I((*prio).into())]),
        KEvent::SyscallEntry(call, args) => {
            use crate::events::Syscall as S;
            match (call, args) {
                (S::Read, SyscallArgs::Read { fd, count, .. }) => w.write_event(t, id, &[U(*fd as u64), U(*count)]),
                (S::Pread64, SyscallArgs::Read { fd, count, pos, .. }) => w.write_event(t, id, &[U(*fd as u64), U(*count), I(*pos)]),
                (S::Readv, SyscallArgs::Read { fd, buf, count, .. }) | (S::Writev, SyscallArgs::Write { fd, buf, count, .. }) => {
                    w.write_event(t, id, &[U(*fd as u64), U(*buf), U(*count)])
                }
                (S::Write, SyscallArgs::Write { fd, buf, count, .. }) => w.write_event(t, id, &[U(*fd as u64), U(*buf), U(*count)]),
                (S::Pwrite64, SyscallArgs::Write { fd, buf, count, pos }) => w.write_event(t, id, &[U(*fd as u64), U(*buf), U(*count), I(*pos)]),
                (S::Openat, SyscallArgs::Openat { dfd, filename, flags, mode }) => {
                    w.write_event(t, id, &[I((*dfd).into()), Str(filename), I((*flags).into()), U((*mode).into())])
                }
                (S::Close, SyscallArgs::Close { fd }) => w.write_event(t, id, &[U(*fd as u64)]),
                (S::Dup, SyscallArgs::Dup { fildes }) => w.write_event(t, id, &[U(*fildes as u64)]),
                (S::Dup2, SyscallArgs::Dup2 { oldfd, newfd }) => w.write_event(t, id, &[U(*oldfd as u64), U(*newfd as u64)]),
                _ => Err(ctf_writer::WriterError::ValueMismatch { event: ev.name().to_string(), reason: "arguments of another syscall".into() }),
            }
        }
        KEvent::Background(b) => match b {
            Background::IrqEntry { irq, name } => w.write_event(t, id, &[I((*irq).into()), Str(name)]),
            Background::IrqExit { irq, ret } => w.write_event(t, id, &[I((*irq).into()), I((*ret).into())]),
            Background::SoftirqEntry { vec } | Background::SoftirqExit { vec } => w.write_event(t, id, &[U((*vec).into())]),
            Background::HrtimerEntry { hrtimer, now, function } => w.write_event(t, id, &[U(*hrtimer), I(*now), U(*function)]),
            Background::HrtimerExit { hrtimer } => w.write_event(t, id, &[U(*hrtimer)]),
            Background::Kmalloc { call_site, ptr, bytes_req, bytes_alloc } => {
                w.write_event(t, id, &[U(*call_site), U(*ptr), U(*bytes_req), U(*bytes_alloc), U(0xcc0)])
            }
            Background::Kfree { call_site, ptr } => w.write_event(t, id, &[U(*call_site), U(*ptr)]),
            Background::Wakeup { comm, tid, prio, target_cpu } => {
                w.write_event(t, id, &[Bytes(comm), I((*tid).into()), I((*prio).into()), I((*target_cpu).into())])
            }
        },
        KEvent::SyscallExit { call, ret, buf } => {
            if call.is_read() || matches!(call, crate::events::Syscall::Writev) {
                w.write_event(t, id, &[I(*ret), U(*buf)])
            } else {
                w.write_event(t, id, &[I(*ret)])
            }
        }
    }
}
