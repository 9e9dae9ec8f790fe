//! The replayed kernel state of a complete prefix of the trace: the threads (tid →
//! pid, fd table, pending syscall), the fd tables, and the interpretation of a chunk's
//! log ([`crate::log`]) against them.
//!
//! A statistic is a [`Sink`]: the replay tells it the resolved facts (bytes a read or
//! write moved, on which file, by which thread; each call completed, with its name,
//! entry and exit times and what it worked on) and the statistic only accumulates; it
//! may keep per-thread data in the thread's slot ([`Sink::Thread`]). The replay never
//! decides what is counted.
//!
//! The pending call of each thread ([`PendingCall`]) is the one pending-call state of
//! the model: io reads its fd and file, the syscall latency its name and entry time
//! ([`Sink::completed`]). The caller says the time and the *tag* of the event being
//! replayed ([`Replay::at`]): an entry's tag is its call's name ([`CallId`]), an
//! exit's says whether the call counts ([`UNCOUNTED`]: an exit on a CPU a filter does
//! not select, which leaves the call pending for the latency, as lttng-syscallstats
//! has it) and whether the exit has no return value ([`NO_RET`]).
//!
//! Kernel behaviour behind each rule: a syscall is the pending call of its thread from
//! its entry to its exit (another entry of the thread replaces it: the exit was lost);
//! an fd is looked up in the process's table at entry (the kernel resolves it then);
//! fork copies the table, exec closes the close-on-exec fds, the statedump names fds
//! opened before tracing ([`crate::fdtable`] has the fd rules themselves).
//!
//! A thread's name ([`Replay::name`]) is the kernel's `task->comm` as the events show
//! it, the last one in time order winning ([`Rec::Name`] records, which the log's
//! writer takes from these events):
//! * `sched_switch`'s `prev_comm` and `next_comm`: the name at the switch, whatever
//!   changed it (`prctl(PR_SET_NAME)` and writes to `/proc/PID/comm` have no
//!   tracepoint: the next switch shows them); the idle task (tid 0) is not named;
//! * `sched_process_fork`'s `child_comm`: a new thread starts with a copy of its
//!   parent's name (`copy_process`);
//! * `sched_process_exec`'s `filename`: exec names the thread after the program's
//!   file, its last component cut to 15 bytes (`__set_task_comm` in
//!   `begin_new_exec`, [`crate::layout::comm_of_path`]);
//! * `lttng_statedump_process_state`'s `name`: the name of a thread that existed when
//!   tracing began.
//!
//! Threads live in dense slots: a thread's slot is found by tid in a direct table (the
//! caller may cache the slot of the task running on each stream: [`SlotCache`]), and a
//! thread remembers its process's fd table, so a read or write costs no hash look-up.

use crate::fdtable::{Call, Ended, FdTables, FileNames, PendingCall, TableId, Transfer};
use crate::latency::CallId;
use crate::layout::Sc;
use crate::log::{LRec, Rec, Who};
use crate::model::FxMap;

/// What a statistic does with the facts of a replay (see the module documentation).
pub trait Sink: FileNames {
    /// What the statistic keeps per thread, in the thread's slot.
    type Thread: Default;

    /// The thread `tid` (process `pid`, when known; `data` its slot's data) moved
    /// `t.bytes` bytes, read when `t.read`, on `t.file` (an id from [`FileNames`]).
    fn moved(&mut self, tid: i32, pid: Option<i32>, data: &mut Self::Thread, t: Transfer);

    /// Whether the statistic wants [`Sink::completed`] (it costs a look-up of the fd
    /// of reads and writes that moved nothing). Default: no.
    #[inline(always)]
    fn wants_calls(&self) -> bool {
        false
    }

    /// Whether the statistic reads [`Completed::ended`] (a call's fd and file: naming
    /// the kind of a new fd interns it, [`FileNames::named`]); when not, `ended` is
    /// `None` for calls other than reads and writes. Default: yes.
    #[inline(always)]
    fn wants_ended(&self) -> bool {
        true
    }

    /// The thread `tid` (`data` its slot's data) completed its pending call `c`; only
    /// when [`Sink::wants_calls`], after the call's [`Sink::moved`], and not for an
    /// exit tagged [`UNCOUNTED`]. (An exit of another call also completes the pending
    /// one, under the entry's name.)
    #[inline(always)]
    fn completed(&mut self, _tid: i32, _data: &mut Self::Thread, _c: Completed) {}
}

/// A call completed ([`Sink::completed`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Completed {
    /// Its name (the entry's).
    pub name: CallId,
    /// The time of its entry.
    pub begin: i64,
    /// The time of its exit.
    pub end: i64,
    /// The exit's return value (0 when the exit has none: [`NO_RET`]).
    pub ret: i64,
    /// What it worked on ([`PendingCall::ended`]).
    pub ended: Option<Ended>,
}

/// An exit's tag ([`Replay::at`]): the call does not count (its exit is on a CPU a
/// filter does not select); it stays pending for the latency, as if the exit were not
/// there, while the fd tables take the exit as any other.
pub const UNCOUNTED: u32 = 1;

/// An exit's tag ([`Replay::at`]): the exit has no return value (read as -1 by the fd
/// rules, as 0 by the latency).
pub const NO_RET: u32 = 2;

/// What the replay knows of one thread.
#[derive(Debug, Clone, Default)]
struct ThreadSlot<T> {
    tid: i32,
    pid: Option<i32>,
    /// Its process's fd table, once looked up (forgotten when `pid` changes).
    table: Option<TableId>,
    pending: Option<PendingCall>,
    /// The statistic's data.
    data: T,
}

impl<T> ThreadSlot<T> {
    /// Its pid (its tid when unknown).
    #[inline(always)]
    fn pid(&self) -> i32 {
        self.pid.unwrap_or(self.tid)
    }
}

/// A thread's slot cached for a stream: `(tid, slot)` of the task last seen there, or
/// [`NO_CACHE`] (a plain pair, its slot read with one load).
pub type SlotCache = (i32, u32);

/// An empty [`SlotCache`] (its slot is [`NO_SLOT`]).
pub const NO_CACHE: SlotCache = (0, NO_SLOT);

/// Tids below this are looked up in [`Replay`]'s direct table (Linux's `pid_max` is at
/// most 2^22); others, in its map.
const DIRECT_TIDS: usize = 1 << 22;

/// No slot, in [`Replay`]'s direct table and in a [`SlotCache`].
pub const NO_SLOT: u32 = u32::MAX;

/// The index of `tid` in [`Replay`]'s direct table, when it has one there.
#[inline(always)]
fn direct_index(tid: i32) -> Option<usize> {
    usize::try_from(tid).ok().filter(|&t| t < DIRECT_TIDS)
}

/// The replayed state (see the module documentation), with per-thread data `T` of its
/// [`Sink`].
#[derive(Debug, Clone)]
pub struct Replay<T> {
    /// Slot of each tid in `0..DIRECT_TIDS` (or [`NO_SLOT`]), by tid: grown to the
    /// largest tid seen, so at most 16 MiB. (Flat, not paged as a
    /// [`crate::tid_index::TidIndex`]: only the one complete state has a replay, and a
    /// look-up is then one load, not two: 2 % of io's time on syn2m, measured.)
    by_tid: Vec<u32>,
    /// Slots of other tids.
    tids: FxMap<i32, u32>,
    slots: Vec<ThreadSlot<T>>,
    /// Per slot: the thread's name, once named (see the module documentation); apart
    /// from the slots, which a read or write touches: grown only when a name comes, so
    /// a replay whose statistic names no thread keeps it empty.
    names: Vec<Option<Box<str>>>,
    /// Fd tables; files are ids of the sink's [`FileNames`].
    fds: FdTables,
    /// The time of the event or record being replayed ([`Replay::at`]).
    now: i64,
    /// Its tag ([`Replay::at`]).
    tag: u32,
}

impl<T> Default for Replay<T> {
    fn default() -> Self {
        Replay { by_tid: Vec::new(), tids: FxMap::default(), slots: Vec::new(), names: Vec::new(), fds: FdTables::default(), now: 0, tag: 0 }
    }
}

impl<T> Replay<T> {
    /// The event or record replayed next is at `ts`, with tag `tag` (see the module
    /// documentation); callers whose sink wants no calls need not say.
    #[inline(always)]
    pub fn at(&mut self, ts: i64, tag: u32) {
        self.now = ts;
        self.tag = tag;
    }

    /// Renames the pending calls ([`PendingCall::name`]) by `f`: the event names were
    /// renumbered (a live session's new metadata, [`crate::latency::renumbered`]).
    pub fn rename_calls(&mut self, mut f: impl FnMut(CallId) -> CallId) {
        for p in self.slots.iter_mut().filter_map(|s| s.pending.as_mut()) {
            p.name = f(p.name);
        }
    }

    /// What `at` said last.
    #[inline(always)]
    fn entered(&self) -> (CallId, i64) {
        (self.tag, self.now)
    }
}

impl<T: Default> Replay<T> {
    /// The slot of `tid` (created if new).
    #[inline]
    pub fn slot(&mut self, tid: i32) -> usize {
        match self.find(tid) {
            Some(i) => i,
            None => self.new_slot(tid),
        }
    }

    /// Gives `tid`, which has none, a slot.
    #[cold]
    #[inline(never)]
    fn new_slot(&mut self, tid: i32) -> usize {
        let i = self.slots.len();
        self.slots.push(ThreadSlot { tid, pid: None, table: None, pending: None, data: T::default() });
        match direct_index(tid) {
            Some(t) => {
                if self.by_tid.len() <= t {
                    self.by_tid.resize((t + 1).next_power_of_two().min(DIRECT_TIDS), NO_SLOT);
                }
                self.by_tid[t] = i as u32;
            }
            None => {
                self.tids.insert(tid, i as u32);
            }
        }
        i
    }

    /// The slot of `tid`, if it has one.
    #[inline(always)]
    pub fn find(&self, tid: i32) -> Option<usize> {
        match direct_index(tid) {
            Some(t) => self.by_tid.get(t).copied().filter(|&i| i != NO_SLOT).map(|i| i as usize),
            None => self.tids.get(&tid).map(|&i| i as usize),
        }
    }

    /// The slot of `tid`, through `cache` (updated).
    #[inline(always)]
    pub fn slot_cached(&mut self, cache: &mut SlotCache, tid: i32) -> usize {
        match *cache {
            (t, i) if i != NO_SLOT && t == tid => i as usize,
            _ => {
                let i = self.slot(tid);
                *cache = (tid, i as u32);
                i
            }
        }
    }

    /// The pid of `tid` (its tid when unknown): the key of its fd table.
    pub fn pid_of(&self, tid: i32) -> i32 {
        self.find(tid).and_then(|i| self.slots[i].pid).unwrap_or(tid)
    }

    /// The pid of `tid`, if known.
    pub fn known_pid(&self, tid: i32) -> Option<i32> {
        self.find(tid).and_then(|i| self.slots[i].pid)
    }

    /// The pid of the thread of slot `i`, if known.
    #[inline(always)]
    pub fn slot_pid(&self, i: usize) -> Option<i32> {
        self.slots[i].pid
    }

    /// The statistic's data of slot `i`.
    #[inline(always)]
    pub fn data(&self, i: usize) -> &T {
        &self.slots[i].data
    }

    /// The statistic's data of slot `i`, to change.
    #[inline(always)]
    pub fn data_mut(&mut self, i: usize) -> &mut T {
        &mut self.slots[i].data
    }

    /// The name of the thread of slot `i`, once named (see the module documentation).
    #[inline]
    pub fn name(&self, i: usize) -> Option<&str> {
        self.names.get(i).and_then(Option::as_deref)
    }

    /// Names the thread of slot `i` `name` (see the module documentation).
    pub fn set_name(&mut self, i: usize, name: &str) {
        if self.names.len() <= i {
            self.names.resize(i + 1, None);
        }
        self.names[i] = Some(name.into());
    }

    /// `(tid, pid if known, data)` of every thread, in slot order.
    pub fn threads(&self) -> impl Iterator<Item = (i32, Option<i32>, &T)> + '_ {
        self.slots.iter().map(|s| (s.tid, s.pid, &s.data))
    }

    /// Gives `tid` process `pid` (a thread learnt late brings its fds to its process).
    pub fn set_pid(&mut self, tid: i32, pid: i32) {
        let i = self.slot(tid);
        let s = &mut self.slots[i];
        if s.pid != Some(pid) {
            if s.pid.is_none() {
                // Its fds were kept under its tid: they are its process's.
                self.fds.adopt(tid, pid);
            }
            s.pid = Some(pid);
            s.table = None;
        }
    }

    /// A thread was created: `child_tid` of `child_pid` (its tid when absent, a new
    /// process), whose parent is `parent_pid` (or `parent_tid`'s process).
    pub fn fork(&mut self, parent_tid: Option<i32>, parent_pid: Option<i32>, child_tid: i32, child_pid: Option<i32>) {
        let child_pid = child_pid.unwrap_or(child_tid);
        self.set_pid(child_tid, child_pid);
        if let Some(parent) = parent_pid.or_else(|| parent_tid.map(|t| self.pid_of(t))) {
            self.fds.fork(parent, child_pid);
        }
    }

    /// `tid` executed a program: its process's close-on-exec fds close.
    pub fn exec(&mut self, tid: i32) {
        let pid = self.pid_of(tid);
        self.fds.exec(pid);
    }

    /// The statedump names `fd` of `pid` as `file`: returns the placeholder whose bytes
    /// are now `file`'s, if bytes were held for it ([`FdTables::dump`]).
    pub fn fd_dump(&mut self, pid: i32, fd: i32, file: u32, cloexec: bool) -> Option<u32> {
        self.fds.dump(pid, fd, file, cloexec)
    }

    /// The thread of slot `i` enters `call` (`path`: an open's interned path).
    #[inline(always)]
    pub fn enter(&mut self, i: usize, call: Call, path: Option<u32>) {
        let slot = &mut self.slots[i];
        let table = table_of(slot, &mut self.fds);
        slot.pending = Some(self.fds.enter_in(table, call, path, (self.tag, self.now)));
    }

    /// [`Replay::enter`] of a read or write `sc` of `fd`, its other arguments absent
    /// (it takes an fd: no check of which call it is).
    #[inline(always)]
    pub fn enter_rw(&mut self, i: usize, sc: Sc, fd: i64) {
        let slot = &mut self.slots[i];
        let table = table_of(slot, &mut self.fds);
        let call = Call::new(sc, fd, -1, -1);
        let (name, at) = (self.tag, self.now);
        slot.pending = Some(PendingCall { call, name, at, path: None, file: self.fds.file_in(table, call.a0.into()), out: None });
    }

    /// The thread of slot `i` enters a syscall the model does not interpret.
    #[inline(always)]
    pub fn other_entry(&mut self, i: usize) {
        self.slots[i].pending = Some(PendingCall::other(self.entered()));
    }

    /// The thread of slot `i` exits syscall `sc` (`None`: a generic exit) with `ret`.
    #[inline(always)]
    pub fn exit<S: Sink<Thread = T>>(&mut self, i: usize, sc: Option<Sc>, ret: i64, sink: &mut S) {
        let Some(e) = self.slots[i].pending else { return };
        match e.call.sc {
            Sc::Read | Sc::Write => {
                // The common case, without the tables' general exit: as there, an exit
                // of another call ends the pending one and credits nothing.
                let (read, mut file, fd) = (e.call.sc == Sc::Read, e.file, e.call.a0);
                let matches = sc.is_none_or(|s| s == e.call.sc);
                self.slots[i].pending = None;
                if matches && ret > 0 {
                    let f = match file {
                        Some(f) => f,
                        None => self.held_file(i, fd.into(), sink),
                    };
                    file = Some(f);
                    let s = &mut self.slots[i];
                    sink.moved(s.tid, s.pid, &mut s.data, Transfer { read, bytes: ret as u64, file, fd });
                }
                self.complete(i, &e, ret, Some(Ended::on(fd, file)), sink);
            }
            Sc::Other => {
                self.slots[i].pending = None;
                self.complete(i, &e, ret, None, sink);
            }
            _ => self.exit_other(i, e, sc, ret, None, sink),
        }
    }

    /// Tells `sink` that the thread of slot `i` completed `e` with `ret`, having worked
    /// on `ended` (when it wants calls); an [`UNCOUNTED`] exit instead leaves the call
    /// pending for the latency only (as a call the model does not interpret).
    #[inline(always)]
    fn complete<S: Sink<Thread = T>>(&mut self, i: usize, e: &PendingCall, ret: i64, ended: Option<Ended>, sink: &mut S) {
        if !sink.wants_calls() {
            return;
        }
        let s = &mut self.slots[i];
        if self.tag & UNCOUNTED != 0 {
            s.pending = Some(PendingCall::other((e.name, e.at)));
            return;
        }
        let ret = if self.tag & NO_RET != 0 { 0 } else { ret };
        sink.completed(s.tid, &mut s.data, Completed { name: e.name, begin: e.at, end: self.now, ret, ended });
    }

    /// The file of bytes moved on `fd` by the thread of slot `i`, whose fd table does
    /// not know `fd`: a placeholder ([`FdTables::io_file`]).
    #[cold]
    #[inline(never)]
    fn held_file(&mut self, i: usize, fd: i64, names: &mut impl FileNames) -> u32 {
        let table = table_of(&mut self.slots[i], &mut self.fds);
        self.fds.io_file(table, fd, names)
    }

    /// [`Replay::exit`] of pending call `e`, not a read or write (`fds`: a pipe or
    /// socketpair exit's).
    #[inline(never)]
    fn exit_other<S: Sink<Thread = T>>(&mut self, i: usize, e: PendingCall, sc: Option<Sc>, ret: i64, fds: Option<[i32; 2]>, sink: &mut S) {
        self.slots[i].pending = None;
        let pid = self.slots[i].pid();
        let ended = if sink.wants_calls() && sink.wants_ended() { e.ended(ret, sink) } else { None };
        let moved = self.fds.exit(pid, e, sc, ret, fds, sink);
        if let Some(x) = moved {
            let s = &mut self.slots[i];
            sink.moved(s.tid, s.pid, &mut s.data, x);
        }
        // (Bytes moved on an fd nothing named went to a placeholder.)
        let ended = ended.map(|end| Ended { file: moved.and_then(|x| x.file).or(end.file), ..end });
        self.complete(i, &e, ret, ended, sink);
    }

    /// [`Replay::exit`] of an exit that may carry two new fds (`fds`: a pipe, pipe2 or
    /// socketpair exit's array).
    pub fn exit_fds<S: Sink<Thread = T>>(&mut self, i: usize, sc: Option<Sc>, ret: i64, fds: Option<[i32; 2]>, sink: &mut S) {
        match (fds, self.slots[i].pending) {
            (None, _) => self.exit(i, sc, ret, sink),
            (Some(_), Some(e)) => self.exit_other(i, e, sc, ret, fds, sink),
            (Some(_), None) => {}
        }
    }

    /// Interprets one record of a chunk's log (see [`Replay::apply`]).
    #[inline(always)]
    pub fn apply_l<S: Sink<Thread = T>>(&mut self, r: LRec, sink: &mut S) -> Option<(u32, u32)> {
        match r {
            LRec::R(r) => self.apply(r, None, sink),
            LRec::Rw { t, sc, fd, ret, exited } => {
                let i = self.slot(t);
                self.apply_rw(i, sc, fd, exited.then_some(ret), sink);
                None
            }
        }
    }

    /// Interprets [`LRec::Rw`]`{ t, sc, fd, .. }` of the thread of slot `i` (`t`'s), `ret`
    /// its exit's return value once it exited.
    #[inline(always)]
    pub fn apply_rw<S: Sink<Thread = T>>(&mut self, i: usize, sc: Sc, fd: i32, ret: Option<i64>, sink: &mut S) {
        match ret {
            // The entry and its exit: the call ends; bytes moved are credited to the
            // file the fd named at entry. (Nothing else happened in between: the
            // table is looked up only when there are bytes to credit, looking it up
            // changing nothing seen.)
            // (A sink that wants calls reads logs that join nothing, `Log::named`: for
            // one that does, the entry and the exit as they would come.)
            Some(ret) if sink.wants_calls() => {
                self.enter_rw(i, sc, fd.into());
                self.exit(i, Some(sc), ret, sink);
            }
            Some(ret) => {
                let slot = &mut self.slots[i];
                slot.pending = None;
                if ret > 0 {
                    let table = table_of(slot, &mut self.fds);
                    let file = self.fds.io_file(table, fd.into(), sink);
                    sink.moved(slot.tid, slot.pid, &mut slot.data, Transfer { read: sc == Sc::Read, bytes: ret as u64, file: Some(file), fd });
                }
            }
            // (A read or write uses only its fd: the other arguments as if absent.)
            None => self.enter_rw(i, sc, fd.into()),
        }
    }

    /// Interprets one record; `slot` is the slot of the thread it names, when the
    /// caller knows it. Records naming the unknown task of a stream (or a stream's
    /// task, [`Who::Stream`]: the caller resolves those) change nothing, nor do the
    /// records of what statistics measure beside the model (see [`crate::log`]).
    /// Returns `(placeholder, file)` when a statedump record named an fd whose bytes
    /// were held ([`Replay::fd_dump`]): the statistic moves them.
    #[inline(always)]
    pub fn apply<P: AsRef<str>, S: Sink<Thread = T>>(&mut self, r: Rec<P>, slot: Option<usize>, sink: &mut S) -> Option<(u32, u32)> {
        match r {
            Rec::Entry { who: Who::Tid(t), sc, a0, a1, a2, path } => {
                let i = slot.unwrap_or_else(|| self.slot(t));
                let path = path.map(|p| sink.named(p.as_ref()));
                self.enter(i, Call { sc, a0, a1, a2 }, path);
            }
            Rec::OtherEntry { who: Who::Tid(t) } => {
                // (Pending for the latency of calls: a thread seen first here gets its
                // slot, as at any entry.)
                let i = slot.unwrap_or_else(|| self.slot(t));
                self.other_entry(i);
            }
            Rec::Exit { who: Who::Tid(t), sc, ret } => {
                if let Some(i) = slot.or_else(|| self.find(t)) {
                    self.exit(i, sc, ret, sink);
                }
            }
            Rec::Pair { who: Who::Tid(t), sc, fds } => {
                if let Some(i) = slot.or_else(|| self.find(t)) {
                    self.exit_fds(i, sc, 0, Some(fds), sink);
                }
            }
            Rec::Entry { who: Who::Head(_) | Who::Stream(_), .. }
            | Rec::OtherEntry { who: Who::Head(_) | Who::Stream(_) }
            | Rec::Exit { who: Who::Head(_) | Who::Stream(_), .. }
            | Rec::Pair { who: Who::Head(_) | Who::Stream(_), .. }
            | Rec::Exec { who: Who::Head(_) | Who::Stream(_) } => {}
            Rec::Fork { parent_tid, parent_pid, child_tid, child_pid } => self.fork(parent_tid, parent_pid, child_tid, child_pid),
            Rec::Exec { who: Who::Tid(t) } => self.exec(t),
            Rec::ProcState { tid, pid } => self.set_pid(tid, pid),
            Rec::FdDump { pid, fd, path, cloexec } => {
                let file = sink.named(path.as_ref());
                return self.fd_dump(pid, fd, file, cloexec).map(|held| (held, file));
            }
            Rec::Name { tid, name } => {
                let i = self.slot(tid);
                self.set_name(i, name.as_ref());
            }
            // What statistics measure beside the model (see `crate::log`).
            Rec::Switch { .. } | Rec::Call { .. } | Rec::Wakeup { .. } | Rec::Irq { .. } | Rec::Block(_) | Rec::BlockDevice { .. } | Rec::Frame { .. } => {}
        }
        None
    }
}

/// The fd table in `fds` of `slot`'s process (looked up once, then kept in the slot).
#[inline(always)]
fn table_of<T>(slot: &mut ThreadSlot<T>, fds: &mut FdTables) -> TableId {
    match slot.table {
        Some(t) => t,
        None => {
            let t = fds.table(slot.pid());
            slot.table = Some(t);
            t
        }
    }
}

#[cfg(test)]
mod tests;
