//! The Linux kernel model's event layouts: for every (trace, stream class, event class)
//! what the event means and the handles of the fields we read, resolved once from the
//! metadata (no name comparison per event). Covers the three LTTng naming generations:
//! `sys_*` entries with a generic `exit_syscall` (lttng-modules < 2.6),
//! `syscall_entry_*`/`syscall_exit_*` (>= 2.6), raw `sys_enter`/`sys_exit` with x86-64
//! syscall numbers.

use std::collections::BTreeMap;

use ctf::plan::{EventPlan, FieldHandle, Plan, StreamPlan};
use ctf::stream::EventRef;
use ctf::trace::TraceSet;

/// The syscalls the I/O analysis understands.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Sc {
    /// read-family: read, pread64, readv, preadv, recvfrom, recvmsg.
    Read,
    /// write-family: write, pwrite64, writev, pwritev, sendto, sendmsg.
    Write,
    /// open, openat, creat: a new fd (exit `ret`) for a path.
    Open,
    /// close(fd).
    Close,
    /// dup(oldfd) → ret.
    Dup,
    /// dup2(oldfd, newfd).
    Dup2,
    /// dup3(oldfd, newfd, flags).
    Dup3,
    /// fcntl(fd, cmd, arg): F_DUPFD / F_DUPFD_CLOEXEC duplicate.
    Fcntl,
}

impl Sc {
    /// Every syscall, in declaration order (`Sc::ALL[sc as usize] == sc`).
    pub const ALL: [Sc; 8] = [Sc::Read, Sc::Write, Sc::Open, Sc::Close, Sc::Dup, Sc::Dup2, Sc::Dup3, Sc::Fcntl];

    /// The syscall of index `i` in declaration order (`Sc::ALL[i]`), `None` past the
    /// last: a range check, no table load (`sc as u32` is its index).
    #[inline(always)]
    pub fn from_index(i: u32) -> Option<Sc> {
        Some(match i {
            0 => Sc::Read,
            1 => Sc::Write,
            2 => Sc::Open,
            3 => Sc::Close,
            4 => Sc::Dup,
            5 => Sc::Dup2,
            6 => Sc::Dup3,
            7 => Sc::Fcntl,
            _ => return None,
        })
    }

    /// The syscall of a bare name (`read`, `openat` …).
    pub fn from_name(n: &str) -> Option<Sc> {
        Some(match n {
            "read" | "pread64" | "readv" | "preadv" | "recvfrom" | "recvmsg" => Sc::Read,
            "write" | "pwrite64" | "writev" | "pwritev" | "sendto" | "sendmsg" => Sc::Write,
            "open" | "openat" | "creat" => Sc::Open,
            "close" => Sc::Close,
            "dup" => Sc::Dup,
            "dup2" => Sc::Dup2,
            "dup3" => Sc::Dup3,
            "fcntl" => Sc::Fcntl,
            _ => return None,
        })
    }

    /// The syscall of an x86-64 syscall number.
    pub fn from_x86_64(nr: u64) -> Option<Sc> {
        Some(match nr {
            0 | 17 | 19 | 45 | 47 | 295 => Sc::Read,
            1 | 18 | 20 | 44 | 46 | 296 => Sc::Write,
            2 | 85 | 257 => Sc::Open,
            3 => Sc::Close,
            32 => Sc::Dup,
            33 => Sc::Dup2,
            292 => Sc::Dup3,
            72 => Sc::Fcntl,
            _ => return None,
        })
    }
}

/// What an event class means to the kernel model, with its field handles.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[allow(missing_docs)] // variant fields are the handles of the tracepoint fields they are named after
pub enum Kind {
    /// Not used by the model.
    Other,
    /// `sched_switch`.
    Switch { prev_tid: FieldHandle, next_tid: FieldHandle, prev_comm: Option<FieldHandle>, next_comm: Option<FieldHandle> },
    /// `sched_process_fork`.
    Fork {
        parent_tid: Option<FieldHandle>,
        parent_pid: Option<FieldHandle>,
        child_tid: FieldHandle,
        child_pid: Option<FieldHandle>,
        child_comm: Option<FieldHandle>,
    },
    /// `sched_process_exec`.
    Exec { tid: Option<FieldHandle>, filename: Option<FieldHandle> },
    /// `sched_migrate_task`.
    Migrate { tid: FieldHandle },
    /// `lttng_statedump_process_state`.
    ProcState { tid: FieldHandle, pid: Option<FieldHandle>, name: Option<FieldHandle> },
    /// `lttng_statedump_file_descriptor`.
    FdDump { pid: FieldHandle, fd: FieldHandle, filename: Option<FieldHandle>, flags: Option<FieldHandle> },
    /// A syscall entry we understand; `a0..a2` are its fd-ish arguments.
    Entry { sc: Sc, a0: Option<FieldHandle>, a1: Option<FieldHandle>, a2: Option<FieldHandle>, path: Option<FieldHandle> },
    /// Entry of any other syscall (it still pairs with a generic exit).
    OtherEntry,
    /// A syscall exit; `sc` is `None` for the generic `exit_syscall`.
    Exit { sc: Option<Sc>, ret: Option<FieldHandle> },
    /// Raw `sys_enter` (x86-64 numbers; arguments not decoded).
    RawEntry { id: FieldHandle },
    /// Raw `sys_exit` (x86-64 numbers).
    RawExit { id: FieldHandle, ret: Option<FieldHandle> },
}

/// One event class: its global name index, its `cpu_id` handle, its meaning.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct EvClass {
    /// Index into [`Layout::names`].
    pub name: u32,
    /// Handle of the packet context's `cpu_id`.
    pub cpu: Option<FieldHandle>,
    /// Meaning.
    pub kind: Kind,
}

/// Dispatch tables for a whole trace set.
#[derive(Debug, Clone, Default)]
pub struct Layout {
    /// Per trace: per stream class, in the order of the trace plan's streams
    /// ([`StreamPlan::index`](ctf::plan::StreamPlan)), `(id, classes by class index)`.
    traces: Vec<Vec<(u64, Vec<EvClass>)>>,
    /// Distinct event names, sorted.
    pub names: Vec<Box<str>>,
}

fn kind_of(plan: &Plan, sp: &StreamPlan, ev: &EventPlan) -> Kind {
    let h = |n: &str| plan.event_field(sp, ev, &[n]);
    let name: &str = &ev.name;
    let args = |sc: Sc| {
        let a0 = h("fd").or_else(|| h("fildes")).or_else(|| h("oldfd"));
        let (a1, a2) = match sc {
            Sc::Dup2 | Sc::Dup3 => (h("newfd"), h("flags")),
            Sc::Fcntl => (h("cmd"), h("arg")),
            Sc::Open => (None, h("flags")),
            _ => (None, None),
        };
        Kind::Entry { sc, a0, a1, a2, path: if sc == Sc::Open { h("filename").or_else(|| h("pathname")) } else { None } }
    };
    match name {
        "sched_switch" => match (h("prev_tid"), h("next_tid")) {
            (Some(prev_tid), Some(next_tid)) => Kind::Switch { prev_tid, next_tid, prev_comm: h("prev_comm"), next_comm: h("next_comm") },
            _ => Kind::Other,
        },
        "sched_process_fork" => match h("child_tid") {
            Some(child_tid) => {
                Kind::Fork { parent_tid: h("parent_tid"), parent_pid: h("parent_pid"), child_tid, child_pid: h("child_pid"), child_comm: h("child_comm") }
            }
            None => Kind::Other,
        },
        "sched_process_exec" => Kind::Exec { tid: h("tid"), filename: h("filename") },
        "sched_migrate_task" => h("tid").map_or(Kind::Other, |tid| Kind::Migrate { tid }),
        "lttng_statedump_process_state" => h("tid").map_or(Kind::Other, |tid| Kind::ProcState { tid, pid: h("pid"), name: h("name") }),
        "lttng_statedump_file_descriptor" => match (h("pid"), h("fd")) {
            (Some(pid), Some(fd)) => Kind::FdDump { pid, fd, filename: h("filename"), flags: h("flags") },
            _ => Kind::Other,
        },
        "exit_syscall" => Kind::Exit { sc: None, ret: h("ret") },
        "sys_enter" | "raw_syscalls_sys_enter" => h("id").map_or(Kind::Other, |id| Kind::RawEntry { id }),
        "sys_exit" | "raw_syscalls_sys_exit" => h("id").map_or(Kind::Other, |id| Kind::RawExit { id, ret: h("ret") }),
        _ => {
            if let Some(n) = name.strip_prefix("syscall_entry_") {
                Sc::from_name(n).map_or(Kind::OtherEntry, args)
            } else if let Some(n) = name.strip_prefix("syscall_exit_") {
                Kind::Exit { sc: Sc::from_name(n), ret: h("ret") }
            } else if let Some(n) = name.strip_prefix("sys_") {
                Sc::from_name(n).map_or(Kind::OtherEntry, args)
            } else {
                Kind::Other
            }
        }
    }
}

impl Layout {
    /// Resolves every event class of every trace of `set`.
    pub fn new(set: &TraceSet) -> Layout {
        let mut names: BTreeMap<&str, u32> = BTreeMap::new();
        for t in &set.traces {
            for sp in &t.plan.streams {
                for ev in &sp.events {
                    names.insert(&ev.name, 0);
                }
            }
        }
        for (i, v) in names.values_mut().enumerate() {
            *v = i as u32;
        }
        let traces = set
            .traces
            .iter()
            .map(|t| {
                let plan = &t.plan;
                plan.streams
                    .iter()
                    .map(|sp| {
                        let classes = sp
                            .events
                            .iter()
                            .map(|ev| EvClass { name: names[&*ev.name], cpu: plan.event_field(sp, ev, &["cpu_id"]), kind: kind_of(plan, sp, ev) })
                            .collect();
                        (sp.id, classes)
                    })
                    .collect()
            })
            .collect();
        Layout { traces, names: names.keys().map(|n| Box::from(*n)).collect() }
    }

    /// The classes of stream class `id` of trace `trace`, by class index.
    pub fn stream_classes(&self, trace: usize, id: u64) -> Option<&[EvClass]> {
        self.traces.get(trace)?.iter().find(|(i, _)| *i == id).map(|(_, v)| &v[..])
    }

    /// A mask over the event classes of stream class `id` of trace `trace`: true where
    /// `keep` accepts the class's kind (for [`engine::Analysis::interest`]).
    pub fn mask(&self, trace: usize, id: u64, keep: impl Fn(&Kind) -> bool) -> Option<Vec<bool>> {
        Some(self.stream_classes(trace, id)?.iter().map(|c| keep(&c.kind)).collect())
    }

    /// The kernel meaning of an event's class.
    #[inline]
    pub fn class(&self, ev: &EventRef<'_, '_>) -> Option<&EvClass> {
        // `traces[t]` lists the plan's stream classes in the plan's order.
        let (_, v) = self.traces.get(ev.trace_index())?.get(ev.stream_plan().index)?;
        v.get(ev.class_index())
    }
}

/// The CPU of an event: its packet's `cpu_id`, else a key derived from the stream.
#[inline]
pub fn cpu_of(ev: &EventRef<'_, '_>, c: &EvClass, stream: usize) -> u32 {
    c.cpu.and_then(|h| ev.uint(h)).map(|v| v.min(u32::MAX as u64 >> 1) as u32).unwrap_or(0x8000_0000 | (stream as u32 & 0x7fff_ffff))
}

/// A signed integer field as i32 (tids, pids, fds), if present.
#[inline]
pub fn i32_of(ev: &EventRef<'_, '_>, h: Option<FieldHandle>) -> Option<i32> {
    h.and_then(|h| ev.int(h)).map(|v| v as i32)
}

/// Linux `O_CLOEXEC` (same value on x86 and arm).
pub const O_CLOEXEC: i64 = 0o2000000;

/// The command name a kernel gives a program: the file name's last component, at most
/// 15 bytes.
pub fn comm_of_path(p: &[u8]) -> &[u8] {
    let base = p.rsplit(|b| *b == b'/').next().unwrap_or(p);
    &base[..base.len().min(15)]
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `Sc::from_index` spells out `Sc::ALL` (by a match, for speed): the two agree at
    /// every index, and each syscall's index is its `as u32`.
    #[test]
    fn sc_from_index_is_sc_all() {
        for i in 0..=u8::MAX as u32 {
            assert_eq!(Sc::from_index(i), Sc::ALL.get(i as usize).copied(), "index {i}");
        }
        for sc in Sc::ALL {
            assert_eq!(Sc::from_index(sc as u32), Some(sc));
        }
    }
}
