//! The log of a chunk: the records of the events whose meaning depends on the kernel
//! state at the chunk's start (syscalls, forks, execs, the statedump), in time order,
//! to be interpreted by a [`crate::replay::Replay`] once the state before the chunk is
//! known. A record names its issuing thread when the chunk saw its CPU switch to it,
//! else the task running on the stream when the chunk began ([`Who::Head`], resolved
//! by [`crate::running::Running::resolve`] when chunks merge).
//!
//! This is the one chunk-local record type of the kernel model: every statistic that
//! needs the kernel's state at a chunk's start logs these records and replays them.
//! Three kinds of consumers write them:
//! * io logs the model's records only (syscalls, fork, exec, the statedump) in a
//!   [`Log`], which joins a read or write with its exit and drops no-ops, naming
//!   issuers by [`Who::Tid`] or [`Who::Head`];
//! * the cube's feed (`cube-feed`) logs every record, each stamped with its event's
//!   time beside it, and names the issuer of a syscall record by its stream
//!   ([`Who::Stream`]): its applier follows the switches ([`Rec::Switch`]) in time
//!   order, so it knows who runs on each stream at each record. It also logs the
//!   threads' names ([`Rec::Name`], which the replay keeps:
//!   [`crate::replay::Replay::name`]) and what its measures need beyond the replay's
//!   state: every syscall entry's name ([`Rec::Call`], for the syscall latency),
//!   wake-ups, interrupt handlers and block requests (for the latency measures,
//!   [`crate::latency`]), and its own frame marks ([`Rec::Frame`]). A
//!   [`crate::replay::Replay`] ignores those (and records naming a stream or a chunk's
//!   unknown task).
//! * the latency analyses of `analysis` (sched, irq, block) log the records of what
//!   they measure ([`Rec::Switch`], [`Rec::Wakeup`], [`Rec::Irq`], [`Rec::Block`]) in
//!   a stamped [`Log`], replayed by [`crate::latency::replay::Latencies`].

use std::borrow::Cow;

use crate::fdtable::Call;
use crate::latency::CallId;
use crate::layout::Sc;

pub mod wire;

/// Who issued a syscall.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Who {
    /// A known thread.
    Tid(i32),
    /// The task running on this stream when the chunk began.
    Head(u32),
    /// The task running on this stream at the record's time: for a log read in time
    /// order by a consumer that follows the stream's switches itself (the cube's
    /// applier; see the module documentation).
    Stream(u32),
}

/// A path as a chunk's log keeps it: behind one thin pointer, since the size of the
/// largest record is the size of every record of a log (memory written, then read
/// back), and paths are rare (opens, the statedump).
#[derive(Debug, Clone, PartialEq, Eq)]
#[allow(clippy::box_collection, reason = "the box is the point: one thin pointer, where a `String` is three words")]
pub struct LoggedPath(Box<String>);

impl LoggedPath {
    /// A copy of `p`.
    pub fn new(p: &str) -> LoggedPath {
        LoggedPath(Box::new(p.to_owned()))
    }
}

impl AsRef<str> for LoggedPath {
    fn as_ref(&self) -> &str {
        &self.0
    }
}

/// One record of an event the kernel model interprets (or, from the variant
/// [`Rec::Switch`] on, that a statistic measures beside the model; a
/// [`crate::replay::Replay`] ignores those). `P` is the form of a path or name:
/// borrowed from the trace while the event is at hand, owned in a chunk's log (or an
/// index into the log's own bytes, as the cube's).
#[derive(Debug, Clone, PartialEq, Eq)]
#[allow(missing_docs)] // variant fields are the tracepoint fields they are named after
pub enum Rec<P = LoggedPath> {
    /// A syscall entry we understand.
    Entry { who: Who, sc: Sc, a0: i32, a1: i32, a2: i32, path: Option<P> },
    /// Entry of another syscall (forgets a pending entry).
    OtherEntry { who: Who },
    /// A syscall exit (`sc: None` = generic exit).
    Exit { who: Who, sc: Option<Sc>, ret: i64 },
    /// A successful pipe, pipe2 or socketpair exit (`ret` 0) with its two new fds.
    Pair { who: Who, sc: Option<Sc>, fds: [i32; 2] },
    /// A thread was created.
    Fork { parent_tid: Option<i32>, parent_pid: Option<i32>, child_tid: i32, child_pid: Option<i32> },
    /// A thread executed a program (`sched_process_exec`; `who` is its `tid`, or the
    /// task running on the CPU when the event has none).
    Exec { who: Who },
    /// Statedump: thread → process.
    ProcState { tid: i32, pid: i32 },
    /// Statedump: an open fd.
    FdDump { pid: i32, fd: i32, path: P, cloexec: bool },
    /// Thread `tid` is called `name` (a switch, fork, exec or the statedump named it),
    /// logged before the record of the same event (the replay's rules:
    /// [`crate::replay`]).
    Name { tid: i32, name: P },
    /// `sched_switch` on stream `s` (CPU id `cpu`) from `prev` to `next`, which runs
    /// with priority `prio` (`next_prio`, 0 when the event has none).
    Switch { s: u32, cpu: u32, prev: i32, next: i32, prio: i32 },
    /// Entry of the syscall named `call` (any syscall, for the syscall latency),
    /// logged before the entry's [`Rec::Entry`] or [`Rec::OtherEntry`].
    Call { who: Who, call: CallId },
    /// A wake-up of `tid` on stream `s` (`sched_waking`, `sched_wakeup`,
    /// `sched_wakeup_new`).
    Wakeup { s: u32, tid: i32 },
    /// An interrupt handler event on stream `s` (IRQ number or softirq vector `id`;
    /// `name` the hard IRQ entry's handler name).
    Irq { s: u32, what: IrqEvent, id: u32, name: Option<P> },
    /// A block request event (boxed: rare, and larger than any other record).
    Block(Box<BlockRec>),
    /// `lttng_statedump_block_device`: disk `dev` is called `name`.
    BlockDevice { dev: u64, name: P },
    /// A mark of the log's writer (the cube's: the first event of a finest frame):
    /// `prev` is the time of the log's event just before it (`None` at the log's first
    /// event), `block` indexes the writer's data of the frame.
    Frame { prev: Option<i64>, block: u32 },
}

/// Which interrupt event a [`Rec::Irq`] is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[allow(missing_docs)] // the tracepoints of the same names
pub enum IrqEvent {
    HardEntry,
    HardExit,
    SoftRaise,
    SoftEntry,
    SoftExit,
}

/// Which block request event a [`BlockRec`] is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[allow(missing_docs)] // `block_rq_insert`, `block_rq_issue`, `block_rq_complete`
pub enum BlockEvent {
    Insert,
    Issue,
    Complete,
}

/// A block request event on stream `s`, CPU id `cpu` (`tid`: the issuing thread, on
/// inserts and issues; `write`: bit 0 of their `rwbs`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[allow(missing_docs)] // the tracepoint fields of the same names
pub struct BlockRec {
    pub s: u32,
    pub cpu: u32,
    pub what: BlockEvent,
    pub dev: u64,
    pub sector: u64,
    pub nr: u64,
    pub tid: Option<i32>,
    pub write: bool,
}

impl<P> Rec<P> {
    /// The issuer of a syscall (or exec) record.
    #[inline]
    pub fn who(&self) -> Option<Who> {
        match self {
            Rec::Entry { who, .. } | Rec::OtherEntry { who } | Rec::Exit { who, .. } | Rec::Pair { who, .. } | Rec::Exec { who } | Rec::Call { who, .. } => {
                Some(*who)
            }
            _ => None,
        }
    }

    /// The same record naming `who` instead (syscall and exec records only).
    #[inline]
    pub fn with_who(self, w: Who) -> Rec<P> {
        match self {
            Rec::Entry { sc, a0, a1, a2, path, .. } => Rec::Entry { who: w, sc, a0, a1, a2, path },
            Rec::OtherEntry { .. } => Rec::OtherEntry { who: w },
            Rec::Exit { sc, ret, .. } => Rec::Exit { who: w, sc, ret },
            Rec::Pair { sc, fds, .. } => Rec::Pair { who: w, sc, fds },
            Rec::Exec { .. } => Rec::Exec { who: w },
            Rec::Call { call, .. } => Rec::Call { who: w, call },
            r => r,
        }
    }

    /// The record's path or name, when it has one (a record has one at most), to
    /// change in place (a log of the cube moves them when logs are joined).
    #[inline]
    pub fn path_mut(&mut self) -> Option<&mut P> {
        match self {
            Rec::Entry { path, .. } | Rec::Irq { name: path, .. } => path.as_mut(),
            Rec::FdDump { path, .. } | Rec::Name { name: path, .. } | Rec::BlockDevice { name: path, .. } => Some(path),
            _ => None,
        }
    }

    /// The same record with its path or name `p` as `f(p)`.
    #[inline]
    pub fn map_path<Q>(self, f: impl FnOnce(P) -> Q) -> Rec<Q> {
        match self {
            Rec::Entry { who, sc, a0, a1, a2, path } => Rec::Entry { who, sc, a0, a1, a2, path: path.map(f) },
            Rec::OtherEntry { who } => Rec::OtherEntry { who },
            Rec::Exit { who, sc, ret } => Rec::Exit { who, sc, ret },
            Rec::Pair { who, sc, fds } => Rec::Pair { who, sc, fds },
            Rec::Fork { parent_tid, parent_pid, child_tid, child_pid } => Rec::Fork { parent_tid, parent_pid, child_tid, child_pid },
            Rec::Exec { who } => Rec::Exec { who },
            Rec::ProcState { tid, pid } => Rec::ProcState { tid, pid },
            Rec::FdDump { pid, fd, path, cloexec } => Rec::FdDump { pid, fd, path: f(path), cloexec },
            Rec::Name { tid, name } => Rec::Name { tid, name: f(name) },
            Rec::Switch { s, cpu, prev, next, prio } => Rec::Switch { s, cpu, prev, next, prio },
            Rec::Call { who, call } => Rec::Call { who, call },
            Rec::Wakeup { s, tid } => Rec::Wakeup { s, tid },
            Rec::Irq { s, what, id, name } => Rec::Irq { s, what, id, name: name.map(f) },
            Rec::Block(b) => Rec::Block(b),
            Rec::BlockDevice { dev, name } => Rec::BlockDevice { dev, name: f(name) },
            Rec::Frame { prev, block } => Rec::Frame { prev, block },
        }
    }
}

impl Rec<Cow<'_, str>> {
    /// The record with its path owned (for a log).
    #[inline]
    pub fn into_owned(self) -> Rec {
        self.map_path(|p| LoggedPath::new(p.as_ref()))
    }
}

/// A record of a chunk's log: a [`Rec`], or a read/write entry and its exit joined.
#[derive(Debug, Clone, PartialEq, Eq)]
#[allow(missing_docs)] // fields: the entry's thread, call and fd, the exit's return value
pub enum LRec {
    /// A record as the event gave it.
    R(Rec),
    /// A read or write `Entry { who: Tid(t), sc, a0: fd }` and, once the log sees it
    /// (the thread's next syscall record), its matching `Exit { ret }`: replayed at the
    /// entry's place (the file is looked up there, as the entry would; bytes are sums,
    /// so crediting them early is exact). Until `exited` (then `ret` is the exit's) it
    /// replays as the entry alone (its other arguments play no part in a read or
    /// write). The exit is written in place, so the record holds nothing to drop. (Not
    /// an `Option<i64>`: flat fields keep the record at 24 bytes, so that the enum is
    /// as large as [`Rec`], 32.)
    Rw { t: i32, sc: Sc, fd: i32, ret: i64, exited: bool },
}

impl LRec {
    /// Whether the record still names the unknown task of a stream.
    #[inline]
    pub fn names_head(&self) -> bool {
        matches!(self, LRec::R(r) if matches!(r.who(), Some(Who::Head(_))))
    }
}

/// What a chunk knows of a thread's pending syscall in the replay, from its own log
/// (valid only while no `Who::Head` record intervenes: such a record may name any
/// thread).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Pend {
    /// None pending: another `OtherEntry` or `Exit` of the thread is a no-op.
    Nothing,
    /// A read/write entry at this log index, not yet exited.
    Rw(usize),
}

/// What a log knows of threads' pending syscalls: a small direct-mapped table by tid.
/// It may forget (a thread whose entry was overwritten is simply unknown: its records
/// are kept as they are) but never holds stale knowledge, so pairing stays exact.
#[derive(Debug, Clone)]
struct PendTable {
    /// `(tid, state)`, the state a [`Pend`] in the compact form of
    /// [`PendTable::encode`] or [`UNKNOWN`] (the way knows no thread).
    ways: Box<[(i32, u32); PEND_WAYS]>,
}

/// Entries of a [`PendTable`] (threads running or in a syscall at one time are few).
const PEND_WAYS: usize = 256;

/// A [`PendTable`] way's state when it knows nothing.
const UNKNOWN: u32 = u32::MAX;

/// [`Pend::Nothing`] in a [`PendTable`] way (other states below it are
/// [`Pend::Rw`]'s index).
const NOTHING: u32 = u32::MAX - 1;

impl Default for PendTable {
    fn default() -> Self {
        PendTable { ways: Box::new([(0, UNKNOWN); PEND_WAYS]) }
    }
}

impl PendTable {
    #[inline(always)]
    fn way(t: i32) -> usize {
        (t as u32 as usize) % PEND_WAYS
    }

    /// The compact form of `p`; [`UNKNOWN`] for a log index too large to have one
    /// (such a record is then simply not paired).
    #[inline(always)]
    fn encode(p: Pend) -> u32 {
        match p {
            Pend::Nothing => NOTHING,
            Pend::Rw(i) => u32::try_from(i).ok().filter(|&i| i < NOTHING).unwrap_or(UNKNOWN),
        }
    }

    /// Records `p` for `t` and returns what was known of `t` before, in the compact
    /// form ([`UNKNOWN`]: nothing).
    #[inline(always)]
    fn insert(&mut self, t: i32, p: Pend) -> u32 {
        let w = &mut self.ways[Self::way(t)];
        let old = if w.0 == t { w.1 } else { UNKNOWN };
        *w = (t, Self::encode(p));
        old
    }

    /// Forgets `t`.
    #[inline(always)]
    fn remove(&mut self, t: i32) {
        let w = &mut self.ways[Self::way(t)];
        if w.0 == t {
            w.1 = UNKNOWN;
        }
    }

    fn clear(&mut self) {
        self.ways.fill((0, UNKNOWN));
    }
}

/// A chunk's log with what it knows of pending syscalls (see [`Pend`]), and, when
/// [`Log::stamped`], the time of each record (beside the records, not in them: a
/// record's size is memory traffic, and only a few statistics want times); when
/// [`Log::named`], each record's tag too (an entry's call name: see
/// [`crate::replay::Replay::at`]).
#[derive(Debug, Clone, Default)]
pub struct Log {
    /// The records, in time order.
    pub recs: Vec<LRec>,
    /// Pairing state by tid; refers to `recs` by index, so it is forgotten whenever
    /// records are taken out.
    pend: PendTable,
    /// Whether records are stamped with their times.
    stamped: bool,
    /// When stamped: per record of `recs`, the time of its event ([`Log::at`]); of a
    /// joined read or write ([`LRec::Rw`]), its exit's once joined.
    stamps: Vec<i64>,
    /// The time of the event being logged ([`Log::at`]).
    now: i64,
    /// Whether records are tagged ([`Log::named`]).
    named: bool,
    /// When named: per record of `recs`, its event's tag.
    tags: Vec<u32>,
    /// The tag of the event being logged ([`Log::at`]).
    tag: u32,
}

/// Records taken out of a [`Log`], with their times when it is stamped (`stamps` is
/// empty otherwise, else as long as `recs`) and their tags when it is named (`tags`
/// likewise).
#[derive(Debug, Clone, Default)]
pub struct Taken {
    /// The records, in time order.
    pub recs: Vec<LRec>,
    /// Their times, when stamped.
    pub stamps: Vec<i64>,
    /// Their tags, when named.
    pub tags: Vec<u32>,
}

impl Taken {
    /// The time of record `i`, when stamped.
    #[inline(always)]
    pub fn stamp(&self, i: usize) -> Option<i64> {
        self.stamps.get(i).copied()
    }

    /// The time and tag of record `i` (tag 0 when not named), when stamped.
    #[inline(always)]
    pub fn stamp_and_tag(&self, i: usize) -> Option<(i64, u32)> {
        Some((*self.stamps.get(i)?, self.tags.get(i).copied().unwrap_or(0)))
    }
}

impl Log {
    /// An empty log writing into `buf` (its records dropped, its capacity kept).
    pub fn with_buffer(mut buf: Vec<LRec>) -> Log {
        buf.clear();
        Log { recs: buf, ..Log::default() }
    }

    /// The same log, stamping its records with their times ([`Log::at`]).
    pub fn stamped(mut self) -> Log {
        self.stamped = true;
        self.stamps = vec![self.now; self.recs.len()];
        self
    }

    /// The same log, stamped and tagging its records ([`Log::at`]): for a replay
    /// whose sink wants the calls ([`crate::replay::Sink::wants_calls`]). It joins no
    /// read or write with its exit (both keep their own time and tag) and drops no
    /// entry or exit (a call the model does not interpret is pending for the latency).
    pub fn named(self) -> Log {
        let mut log = self.stamped();
        log.named = true;
        log.tags = vec![log.tag; log.recs.len()];
        log
    }

    /// The time of the events logged next (used by a stamped log only), and their tag
    /// (by a named one only).
    #[inline(always)]
    pub fn at(&mut self, ts: i64, tag: u32) {
        self.now = ts;
        self.tag = tag;
    }

    /// Appends `r`, stamped with the current time (and tag) when the log is.
    #[inline(always)]
    fn put(&mut self, r: LRec) {
        if self.stamped {
            self.stamps.push(self.now);
            if self.named {
                self.tags.push(self.tag);
            }
        }
        self.recs.push(r);
    }

    /// Makes room for `n` more records. An empty log whose buffer is too small gets a
    /// new one rather than a grown one: growing copies the whole old allocation (the
    /// allocator does not know that none of it is in use) and touches both.
    pub fn reserve(&mut self, n: usize) {
        if self.recs.is_empty() && self.recs.capacity() < n {
            self.recs = Vec::with_capacity(n);
            advise_huge_pages(&self.recs);
        } else {
            self.recs.reserve(n);
        }
        if self.stamped {
            self.stamps.reserve(n);
        }
        if self.named {
            self.tags.reserve(n);
        }
    }

    /// Whether the log holds no record.
    #[inline]
    pub fn is_empty(&self) -> bool {
        self.recs.is_empty()
    }

    /// Takes the records out, with their stamps (and forgets the pairing state, which
    /// refers to them).
    pub fn take(&mut self) -> Taken {
        self.pend.clear();
        Taken { recs: std::mem::take(&mut self.recs), stamps: std::mem::take(&mut self.stamps), tags: std::mem::take(&mut self.tags) }
    }

    /// Appends records (whose pairing this log does not know) and, for a stamped log,
    /// their stamps (one per record), for a named one their tags.
    pub fn extend(&mut self, recs: impl IntoIterator<Item = LRec>, stamps: impl IntoIterator<Item = i64>, tags: impl IntoIterator<Item = u32>) {
        self.pend.clear();
        self.recs.extend(recs);
        if self.stamped {
            self.stamps.extend(stamps);
            debug_assert_eq!(self.stamps.len(), self.recs.len());
        }
        if self.named {
            self.tags.extend(tags);
            debug_assert_eq!(self.tags.len(), self.recs.len());
        }
    }

    /// Appends `rec`, joining a read/write entry with its exit and dropping records
    /// that are no-ops in any replay (see [`Pend`]).
    #[inline]
    pub fn push(&mut self, rec: Rec) {
        let t = match rec.who() {
            None => {
                self.put(LRec::R(rec));
                return;
            }
            Some(Who::Head(_) | Who::Stream(_)) => {
                // May be any thread: forget everything known.
                self.pend.clear();
                self.put(LRec::R(rec));
                return;
            }
            Some(Who::Tid(t)) => t,
        };
        match rec {
            Rec::Entry { sc, a0, a1, a2, path: None, .. } => self.push_entry(t, Call { sc, a0, a1, a2 }),
            Rec::Entry { .. } => {
                self.pend.remove(t);
                self.put(LRec::R(rec));
            }
            Rec::OtherEntry { .. } => self.push_other_entry(t),
            Rec::Exit { sc, ret, .. } => self.push_exit(t, sc, ret),
            Rec::Pair { .. } => {
                // Ends the thread's pending call, whatever it was (an uncounted exit of
                // a named log: not for the latency).
                if self.named {
                    self.pend.remove(t);
                } else {
                    self.pend.insert(t, Pend::Nothing);
                }
                self.put(LRec::R(rec));
            }
            // (An exec leaves a pending call as it is; a call's name is no model record.)
            _ => self.put(LRec::R(rec)),
        }
    }

    /// [`Log::push`] of `Entry { who: Tid(t), sc, a0: fd, path: None }` for a read or
    /// write `sc` (its other arguments play no part).
    #[inline(always)]
    pub fn push_rw_entry(&mut self, t: i32, sc: Sc, fd: i32) {
        debug_assert!(matches!(sc, Sc::Read | Sc::Write));
        if self.named {
            self.pend.remove(t);
            return self.put(LRec::R(Rec::Entry { who: Who::Tid(t), sc, a0: fd, a1: -1, a2: -1, path: None }));
        }
        self.pend.insert(t, Pend::Rw(self.recs.len()));
        self.put(LRec::Rw { t, sc, fd, ret: 0, exited: false });
    }

    /// [`Log::push`] of `Entry { who: Tid(t), path: None }` of `call` (a read or write
    /// goes through [`Log::push_rw_entry`]).
    #[inline(always)]
    pub fn push_entry(&mut self, t: i32, call: Call) {
        let Call { sc, a0, a1, a2 } = call;
        if let Sc::Read | Sc::Write = sc {
            return self.push_rw_entry(t, sc, a0);
        }
        self.pend.remove(t);
        self.put(LRec::R(Rec::Entry { who: Who::Tid(t), sc, a0, a1, a2, path: None }));
    }

    /// [`Log::push`] of `OtherEntry { who: Tid(t) }`.
    #[inline(always)]
    pub fn push_other_entry(&mut self, t: i32) {
        if self.named {
            // (Pending for the latency: the next exit completes it.)
            self.pend.remove(t);
            return self.put(LRec::R(Rec::OtherEntry { who: Who::Tid(t) }));
        }
        if self.pend.insert(t, Pend::Nothing) != NOTHING {
            self.put(LRec::R(Rec::OtherEntry { who: Who::Tid(t) }));
        }
    }

    /// [`Log::push`] of `Exit { who: Tid(t), sc, ret }`.
    #[inline(always)]
    pub fn push_exit(&mut self, t: i32, sc: Option<Sc>, ret: i64) {
        if self.named && self.tag & crate::replay::UNCOUNTED != 0 {
            // (It leaves the call pending for the latency.)
            self.pend.remove(t);
            return self.put(LRec::R(Rec::Exit { who: Who::Tid(t), sc, ret }));
        }
        let unpaired = match self.pend.insert(t, Pend::Nothing) {
            NOTHING => false,
            UNKNOWN => true,
            i => match self.recs.get_mut(i as usize) {
                Some(LRec::Rw { sc: esc, ret: r, exited: e @ false, .. }) if sc.is_none_or(|s| s == *esc) => {
                    (*r, *e) = (ret, true);
                    if let Some(at) = self.stamps.get_mut(i as usize) {
                        *at = self.now;
                    }
                    false
                }
                _ => true,
            },
        };
        if unpaired {
            self.put(LRec::R(Rec::Exit { who: Who::Tid(t), sc, ret }));
        }
    }
}

/// Asks the kernel to back the 2 MiB-aligned interior of `v`'s buffer with transparent
/// huge pages. A chunk's log is written once from start to end: one page fault per
/// 2 MiB instead of one per 4 KiB (18.7 k faults fewer for io on a 10 M-event trace
/// with 2 threads). The allocator itself asks for no huge pages (its `no_thp` feature,
/// see the `tracecube` binary): short runs would pay for zeroing 2 MiB pages of which
/// they use little. Only a hint: errors are ignored, and no byte changes.
fn advise_huge_pages<T>(v: &Vec<T>) {
    #[cfg(target_os = "linux")]
    {
        const HUGE: usize = 2 << 20;
        let start = v.as_ptr() as usize;
        let end = start.saturating_add(v.capacity().saturating_mul(std::mem::size_of::<T>()));
        let (from, to) = (start.next_multiple_of(HUGE), end / HUGE * HUGE);
        if from < to {
            // SAFETY: the range lies inside `v`'s allocation, which `v` owns; MADV_HUGEPAGE
            // only changes how the kernel backs those pages, never their contents.
            unsafe {
                libc::madvise(from as *mut libc::c_void, to - from, libc::MADV_HUGEPAGE);
            }
        }
    }
    #[cfg(not(target_os = "linux"))]
    let _ = v;
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reserve_makes_room_and_keeps_records() {
        let mut log = Log::with_buffer(Vec::with_capacity(4));
        log.reserve(1000);
        assert!(log.recs.capacity() >= 1000);
        log.push(Rec::Exec { who: Who::Tid(7) });
        log.reserve(5000);
        assert!(log.recs.capacity() >= 5001);
        assert_eq!(log.take().recs, vec![LRec::R(Rec::Exec { who: Who::Tid(7) })]);
    }

    #[test]
    fn huge_page_advice_changes_no_byte() {
        // 8 MiB and more: the buffer has a 2 MiB-aligned interior, which is advised.
        let v: Vec<u64> = (0..(1u64 << 20) + 3).collect();
        advise_huge_pages(&v);
        assert!(v.iter().enumerate().all(|(i, &x)| x == i as u64));
        // A log reserved that large keeps what is written into it, across the interior.
        let mut log = Log::with_buffer(Vec::new());
        log.reserve(300_000);
        for t in 0..300_000 {
            log.push_exit(t, None, t as i64);
        }
        let recs = log.take().recs;
        assert_eq!(recs.len(), 300_000);
        assert!(recs.iter().enumerate().all(|(t, r)| *r == LRec::R(Rec::Exit { who: Who::Tid(t as i32), sc: None, ret: t as i64 })));
        // Small and empty buffers have no interior: nothing to advise, nothing breaks.
        advise_huge_pages(&Vec::<u8>::new());
        advise_huge_pages(&vec![1u8; 100]);
    }

    #[test]
    fn a_stamped_log_keeps_each_records_time_and_a_joined_exits() {
        let mut log = Log::default().stamped();
        log.at(5, 0);
        log.push(Rec::Exec { who: Who::Tid(7) });
        log.at(10, 0);
        log.push_rw_entry(7, Sc::Read, 3);
        log.at(12, 0);
        log.push(Rec::Fork { parent_tid: Some(7), parent_pid: None, child_tid: 8, child_pid: None });
        log.at(20, 0);
        log.push_exit(7, Some(Sc::Read), 100);
        let t = log.take();
        assert_eq!(t.recs.len(), 3);
        assert_eq!(t.recs[1], LRec::Rw { t: 7, sc: Sc::Read, fd: 3, ret: 100, exited: true });
        assert_eq!(t.stamps, vec![5, 20, 12]);
        // Unstamped logs keep no times.
        let mut plain = Log::default();
        plain.push(Rec::Exec { who: Who::Tid(7) });
        assert!(plain.take().stamps.is_empty());
    }

    #[test]
    fn a_named_log_tags_each_record_and_drops_or_joins_no_call() {
        let mut log = Log::default().named();
        log.at(10, 7);
        log.push_rw_entry(1, Sc::Read, 3);
        log.at(20, 0);
        log.push_exit(1, Some(Sc::Read), 5);
        log.at(30, 9);
        log.push_other_entry(1);
        log.push_other_entry(1);
        log.at(40, crate::replay::UNCOUNTED);
        log.push_exit(1, None, 0);
        log.at(50, 0);
        log.push_exit(1, None, 0);
        // Nothing pending after an exit: a second exit is a no-op in any replay.
        log.push_exit(1, None, 0);
        let t = log.take();
        assert_eq!(t.recs.len(), 6);
        assert_eq!(t.recs[0], LRec::R(Rec::Entry { who: Who::Tid(1), sc: Sc::Read, a0: 3, a1: -1, a2: -1, path: None }));
        assert_eq!(t.stamps, vec![10, 20, 30, 30, 40, 50]);
        assert_eq!(t.tags, vec![7, 0, 9, 9, crate::replay::UNCOUNTED, 0]);
        assert_eq!(t.stamp_and_tag(2), Some((30, 9)));
    }

    #[test]
    fn records_stay_small() {
        // Logs hold millions of records: their size is memory traffic.
        assert!(std::mem::size_of::<LRec>() <= 32, "{}", std::mem::size_of::<LRec>());
    }
}
