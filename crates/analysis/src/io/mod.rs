//! `io`: bytes read and written per thread, process and file (B5).
//!
//! Which file an fd names depends on everything before (opens, dups, closes, forks,
//! execs, the statedump, on any CPU), and which thread issued a syscall depends on the
//! CPU's last `sched_switch`. A chunk therefore does not interpret syscalls: it turns
//! the relevant events into a compact, time-ordered log of records ([`Rec`]), naming the
//! issuing thread when its CPU switched inside the chunk, else "the task running on
//! stream S when the chunk began". Merging rewrites the later log's unknown threads with
//! the earlier chunk's last task per stream and appends it; a state that starts at the
//! beginning of the trace is *complete* and interprets (replays) every log merged into
//! it. Since the engine folds slices into the initial (complete) state in time order,
//! logs are replayed as soon as their slice arrives and memory stays bounded; the
//! result equals a serial replay of the whole trace. Decoding, the costly part, runs in
//! parallel.
//!
//! Semantics (as lttng-analyses): bytes are the exit `ret` when > 0 of read-family and
//! write-family syscalls whose entry was seen, credited to the thread, to its process
//! (pid from fork/statedump, else the tid) and to the path the fd had in the process's
//! table when the syscall was entered (files opened by open/openat/creat, duplicated by dup/dup2/dup3/fcntl(F_DUPFD),
//! listed by the statedump; forked processes copy the table; exec drops `O_CLOEXEC`
//! fds). Syscalls issued before their CPU's first `sched_switch` are credited to that
//! switch's `prev_tid` with [`HeadPolicy::FromStart`](crate::cpu::HeadPolicy), dropped
//! with `Ignore` (lttng-analyses has no current thread there).

mod log;
mod replay;

use std::borrow::Cow;
use std::cmp::Reverse;
use std::sync::Mutex;

use ctf::stream::{Copied, CopyRequest, EventRef};
use ctf::trace::TraceSet;
use engine::{Analysis, Ctx};
use serde::Serialize;

use crate::cpu::HeadPolicy;
use crate::fdtable::Call;
use crate::kernel::{i32_of, EvClass, Kind, Layout, Sc, O_CLOEXEC};
use crate::model::{switch_request, text_of, Info, Span};
use crate::tid_index::TidIndex;

pub use log::{Rec, Who};
use log::{LRec, Log};
use replay::{Replay, SlotCache, NO_CACHE, NO_SLOT};

/// Per stream: `(prev_tid of the first switch, next_tid of the last switch)`.
type Cur = Vec<(Option<i32>, Option<i32>)>;

/// Chunk state of [`Io`].
///
/// A *complete* state starts at the trace's beginning: its events are interpreted as
/// they come (`replay`), except that with [`HeadPolicy::FromStart`] a syscall of a
/// stream that has not switched yet waits for that switch to name its thread; it and
/// every record after it are then held in `log`, in order, until then. Any other state
/// logs its records for a later merge to interpret.
#[derive(Debug, Clone, Default)]
pub struct IoState {
    complete: bool,
    replay: Replay,
    log: Log,
    cur: Cur,
    /// Complete states: per stream, the slot of the task running there, once looked up
    /// (forgotten whenever that task may change: a switch, a merge), so that a cached
    /// slot is the running task's.
    run: Vec<SlotCache>,
    info: Info,
    span: Span,
}

impl IoState {
    /// Whether this complete state holds records back (see [`IoState`]): events are
    /// then logged behind them, not interpreted at once.
    #[inline(always)]
    fn holds_back(&self) -> bool {
        self.complete && !self.log.is_empty()
    }

    /// Stream `stream` switched from `prev` to `next`.
    #[inline(always)]
    fn switched(&mut self, stream: usize, prev: i32, next: i32) {
        if let Some(cur) = self.cur.get_mut(stream) {
            if cur.1.is_none() && cur.0.is_none() {
                cur.0 = Some(prev);
            }
            cur.1 = Some(next);
        }
        if let Some(r) = self.run.get_mut(stream) {
            *r = NO_CACHE;
        }
    }

    /// The task running on `stream` (the last switch's `next_tid`), when known.
    #[inline(always)]
    fn running(&self, stream: usize) -> Option<i32> {
        running_in(&self.cur, stream)
    }
}

/// The task running on `stream` by `cur` (an [`IoState`]'s): [`IoState::running`],
/// for a caller that holds other fields of the state borrowed.
#[inline(always)]
fn running_in(cur: &[(Option<i32>, Option<i32>)], stream: usize) -> Option<i32> {
    cur.get(stream).and_then(|c| c.1)
}

/// Slots cached while a log is replayed ([`Io::replay_in_order`]).
const RW_SLOT_CACHE: usize = 64;

/// The io analysis.
pub struct Io {
    layout: Layout,
    streams: usize,
    head: HeadPolicy,
    /// Threads `finish` may use (the run's workers; see [`Io::with_workers`]).
    workers: usize,
    /// Emptied chunk log buffers, handed to new chunk states: a log grown from nothing
    /// in fresh memory costs a page fault, a page zeroing and copies as it doubles.
    spare: Mutex<Vec<Vec<LRec>>>,
}

/// Log buffers kept for reuse (about the chunks in flight).
const SPARE_LOGS: usize = 16;

impl Io {
    /// Prepares the io analysis for `set`.
    pub fn new(set: &TraceSet, head: HeadPolicy) -> Io {
        Io { layout: Layout::new(set), streams: set.streams.len(), head, workers: 1, spare: Mutex::default() }
    }

    /// Lets [`Analysis::finish`] use `workers` threads (a run's workers, idle by then):
    /// the report of a trace of a few GB lists hundreds of thousands of threads and
    /// processes, and making their rows is serial work after the parallel part.
    pub fn with_workers(mut self, workers: usize) -> Io {
        self.workers = workers.max(1);
        self
    }

    /// `who` of a record of a chunk whose predecessor's tasks are `earlier`; `later`
    /// is the chunk's own `cur`, used when the predecessor is complete and never
    /// switched on the stream ([`HeadPolicy::FromStart`]).
    #[inline]
    fn resolve(&self, who: Who, earlier: &[(Option<i32>, Option<i32>)], later: &[(Option<i32>, Option<i32>)], complete: bool) -> Who {
        match who {
            Who::Head(s) => {
                let s = s as usize;
                match earlier.get(s).and_then(|c| c.1) {
                    Some(t) => Who::Tid(t),
                    None if complete && self.head == HeadPolicy::FromStart => later.get(s).and_then(|c| c.0).map_or(who, Who::Tid),
                    None => who,
                }
            }
            w => w,
        }
    }

    /// An empty log buffer, reused when one is spare.
    fn buffer(&self) -> Vec<LRec> {
        self.spare.lock().ok().and_then(|mut v| v.pop()).unwrap_or_default()
    }

    /// Keeps emptied log buffer `b` for a later chunk.
    fn recycle(&self, mut b: Vec<LRec>) {
        b.clear();
        if b.capacity() > 0 {
            if let Ok(mut v) = self.spare.lock() {
                if v.len() < SPARE_LOGS {
                    v.push(b);
                }
            }
        }
    }

    /// Interprets (complete state) or logs (chunk state) syscall event `s` of the task
    /// running on `stream`, when that needs nothing of the general path: the task is
    /// known and, in a complete state, no record is held back. False, with `st`
    /// unchanged, otherwise.
    #[inline(always)]
    fn syscall_fast(&self, st: &mut IoState, s: Syscall, stream: usize) -> bool {
        let Some(t) = st.running(stream) else { return false };
        if st.holds_back() {
            return false;
        }
        if st.complete {
            let slot = st.replay.slot_cached(&mut st.run[stream], t);
            s.feed(Interpret { replay: &mut st.replay, slot });
        } else {
            s.feed(Logged { log: &mut st.log, tid: t });
        }
        true
    }

    /// [`Io::syscall_fast`] of the syscall event whose fields `c` copies
    /// ([`Label::request`]), in a complete state: the thread's slot is found first, then
    /// the label says what to do with it (one dispatch on the label, not one to build
    /// a [`Syscall`] and another to take it).
    #[inline(always)]
    fn syscall_copied_complete(&self, st: &mut IoState, c: &Copied<'_>, stream: usize) -> bool {
        if !st.log.is_empty() {
            return false;
        }
        // (The cached slot, when there is one, is the running task's: `switched`
        // empties the cache. On a miss, the running task's slot is looked up and
        // cached; its tid is read only then.)
        let IoState { run, replay, cur, .. } = &mut *st;
        let Some(cache) = run.get_mut(stream) else { return false };
        let slot = if cache.1 != NO_SLOT {
            cache.1 as usize
        } else {
            let Some(t) = running_in(cur, stream) else { return false };
            replay.slot_cached(cache, t)
        };
        Label::dispatch(c, Interpret { replay, slot })
    }

    /// [`Io::syscall_fast`] of the syscall event whose fields `c` copies, in a chunk
    /// state: logged under the task running on `stream` (false, with `st` unchanged,
    /// when that is not known yet).
    #[inline(always)]
    fn syscall_copied_chunk(&self, st: &mut IoState, c: &Copied<'_>, stream: usize) -> bool {
        let Some(tid) = running_in(&st.cur, stream) else { return false };
        Label::dispatch(c, Logged { log: &mut st.log, tid })
    }

    #[inline(always)]
    fn resolve_l(&self, r: LRec, earlier: &[(Option<i32>, Option<i32>)], later: &[(Option<i32>, Option<i32>)], complete: bool) -> LRec {
        match r {
            LRec::R(r) => match r.who() {
                Some(w @ Who::Head(_)) => LRec::R(r.with_who(self.resolve(w, earlier, later, complete))),
                _ => LRec::R(r),
            },
            r => r,
        }
    }
}

/// One thread of the result.
/// (Fields in alphabetical order: see [`crate::output::write_json`].)
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct ThreadIoRow {
    /// Latest command name.
    pub comm: String,
    /// Process id, when known.
    pub pid: Option<i32>,
    /// Bytes read.
    pub read_bytes: u64,
    /// Thread id.
    pub tid: i32,
    /// Bytes written.
    pub write_bytes: u64,
}

/// One process of the result.
/// (Fields in alphabetical order: see [`crate::output::write_json`].)
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct ProcessIoRow {
    /// Name of its main thread (or of any thread).
    pub comm: String,
    /// Process id (the tid when unknown).
    pub pid: i32,
    /// Bytes read.
    pub read_bytes: u64,
    /// Bytes written.
    pub write_bytes: u64,
}

/// One file of the result.
/// (Fields in alphabetical order: see [`crate::output::write_json`].)
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct FileIoRow {
    /// Path.
    pub path: String,
    /// Bytes read.
    pub read_bytes: u64,
    /// Bytes written.
    pub write_bytes: u64,
}

/// Result of [`Io`] (its JSON form is the `io` output format).
/// (Fields in alphabetical order: see [`crate::output::write_json`].)
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct IoReport {
    /// Always `"io"`.
    pub analysis: &'static str,
    /// First event timestamp.
    pub begin_ns: Option<i64>,
    /// Last event timestamp.
    pub end_ns: Option<i64>,
    /// Files with I/O (fds of unknown path are not listed), same order.
    pub files: Vec<FileIoRow>,
    /// Processes with I/O, same order.
    pub processes: Vec<ProcessIoRow>,
    /// Threads with I/O, by decreasing total bytes then tid.
    pub threads: Vec<ThreadIoRow>,
}

impl Io {
    /// Replays records `recs` into the complete state `a`, in order, each resolved by
    /// `resolve` (read/write records name a known thread: they need none), up to the
    /// first one still naming the unknown task of a stream that has not switched yet
    /// (with [`HeadPolicy::FromStart`] a later switch will name it); that record and
    /// all after it are held back in `a.log`, so that order is kept. `recs` is left
    /// empty (its buffer kept).
    fn replay_in_order(&self, a: &mut IoState, recs: &mut Vec<LRec>, resolve: impl Fn(LRec) -> LRec) {
        let may_wait = self.head == HeadPolicy::FromStart;
        // Records before `done` are replayed (those taken out left as a placeholder
        // that owns nothing).
        let mut done = 0;
        if a.log.is_empty() {
            // (The threads of a log's read/write records are few at a time: their
            // slots are cached, by tid, as a stream caches its running task's.)
            let mut slots = [NO_CACHE; RW_SLOT_CACHE];
            for r in recs.iter_mut() {
                if let LRec::Rw { t, sc, fd, ret, exited } = *r {
                    let i = a.replay.slot_cached(&mut slots[t as u32 as usize % RW_SLOT_CACHE], t);
                    a.replay.apply_rw(i, sc, fd, exited.then_some(ret));
                } else {
                    let taken = resolve(std::mem::replace(r, LRec::Rw { t: 0, sc: Sc::Read, fd: 0, ret: 0, exited: false }));
                    if may_wait && taken.names_head() {
                        // (Resolved again below: resolving a record is idempotent.)
                        *r = taken;
                        break;
                    }
                    a.replay.apply_l(taken);
                }
                done += 1;
            }
        }
        a.log.extend(recs.drain(done..).map(resolve));
        recs.clear();
    }

    /// The record of an event (`None`: the event changes nothing in the replay), its
    /// issuer named from `cur` as of before the event; a switch updates `cur`.
    #[inline(always)]
    fn record<'e>(&self, st: &mut IoState, ev: &EventRef<'e, '_>, c: &EvClass, ctx: &Ctx) -> Option<Rec<Cow<'e, str>>> {
        let who = match st.running(ctx.stream) {
            Some(t) => Who::Tid(t),
            None => Who::Head(ctx.stream as u32),
        };
        let g = |h| int_or(ev, &h);
        let path = |h: Option<ctf::plan::FieldHandle>| h.and_then(|h| ev.bytes(h)).map(text_of);
        Some(match &c.kind {
            Kind::Other | Kind::Migrate { .. } => return None,
            Kind::Switch { prev_tid, next_tid, prev_comm, next_comm } => {
                let (Some(p), Some(n)) = (ev.int(*prev_tid), ev.int(*next_tid)) else { return None };
                let (p, n) = (p as i32, n as i32);
                st.info.switch(ev, [(p, *prev_comm), (n, *next_comm)], (ctx.order, ctx.stream));
                st.switched(ctx.stream, p, n);
                return None;
            }
            Kind::Entry { sc, a0, a1, a2, path: p @ Some(_) } => {
                let Call { sc, a0, a1, a2 } = call_of(ev, *sc, [a0, a1, a2]);
                Rec::Entry { who, sc, a0, a1, a2, path: path(*p) }
            }
            Kind::Entry { .. } | Kind::OtherEntry | Kind::RawEntry { .. } | Kind::Exit { .. } | Kind::RawExit { .. } => return syscall_of(ev, &c.kind).map(|s| s.record(who)),
            Kind::Fork { parent_tid, parent_pid, child_tid, child_pid, .. } => {
                st.info.on_event(ev, c, (ctx.order, ctx.stream));
                let child_tid = i32_of(ev, Some(*child_tid))?;
                Rec::Fork { parent_tid: i32_of(ev, *parent_tid), parent_pid: i32_of(ev, *parent_pid), child_tid, child_pid: i32_of(ev, *child_pid) }
            }
            Kind::Exec { tid, .. } => {
                st.info.on_event(ev, c, (ctx.order, ctx.stream));
                let t = i32_of(ev, *tid).or(match who {
                    Who::Tid(t) => Some(t),
                    Who::Head(_) => None,
                });
                Rec::Exec { tid: t? }
            }
            Kind::ProcState { tid, pid, .. } => {
                st.info.on_event(ev, c, (ctx.order, ctx.stream));
                Rec::ProcState { tid: i32_of(ev, Some(*tid))?, pid: i32_of(ev, *pid)? }
            }
            Kind::FdDump { pid, fd, filename, flags } => {
                let (pid, fd) = (i32_of(ev, Some(*pid))?, i32_of(ev, Some(*fd))?);
                let path = path(*filename).unwrap_or(Cow::Borrowed("unknown"));
                Rec::FdDump { pid, fd, path, cloexec: g(*flags) & O_CLOEXEC != 0 && g(*flags) >= 0 }
            }
        })
    }

    /// A switch on `stream` in a complete state that holds records back: if it is the
    /// stream's first, its `prev_tid` names the records held for the stream's unknown
    /// task; replay what can be.
    fn release_held(&self, st: &mut IoState, stream: usize) {
        let Some(&(Some(_), _)) = st.cur.get(stream) else { return };
        let mut held = st.log.take();
        let cur = std::mem::take(&mut st.cur);
        self.replay_in_order(st, &mut held, |r| self.resolve_l(r, &[], &cur, true));
        st.cur = cur;
    }
}

/// A signed integer field, or -1 when absent.
#[inline(always)]
fn int_or(ev: &EventRef<'_, '_>, h: &Option<ctf::plan::FieldHandle>) -> i64 {
    h.as_ref().and_then(|h| ev.int(*h)).unwrap_or(-1)
}

/// The call of a syscall entry event with argument handles `a0..a2`.
#[inline(always)]
fn call_of(ev: &EventRef<'_, '_>, sc: Sc, [a0, a1, a2]: [&Option<ctf::plan::FieldHandle>; 3]) -> Call {
    Call::new(sc, int_or(ev, a0), int_or(ev, a1), int_or(ev, a2))
}

/// The syscall (`None`: unknown or generic) and return value of an exit event.
#[inline(always)]
fn exit_of(ev: &EventRef<'_, '_>, kind: &Kind) -> Option<(Option<Sc>, i64)> {
    match *kind {
        Kind::Exit { sc, ref ret } => Some((sc, int_or(ev, ret))),
        Kind::RawExit { id, ref ret } => Some((ev.uint(id).and_then(Sc::from_x86_64), int_or(ev, ret))),
        _ => None,
    }
}

/// A syscall event as the fast paths take it ([`Io::syscall_fast`]).
#[derive(Debug, Clone, Copy)]
enum Syscall {
    /// Entry of a syscall we understand that names no path.
    Entry(Call),
    /// Entry of another syscall (raw entries too: their arguments are not decoded).
    Other,
    /// An exit: the syscall, when known, and `ret`.
    Exit(Option<Sc>, i64),
}

impl Syscall {
    /// Hands this syscall event to `sink`.
    #[inline(always)]
    fn feed(self, mut sink: impl SyscallSink) {
        match self {
            Syscall::Entry(call) => sink.enter(call),
            Syscall::Other => sink.other_entry(),
            Syscall::Exit(sc, ret) => sink.exit(sc, ret),
        }
    }

    /// The record of this syscall event, issued by `who`.
    #[inline(always)]
    fn record<P>(self, who: Who) -> Rec<P> {
        match self {
            Syscall::Entry(Call { sc, a0, a1, a2 }) => Rec::Entry { who, sc, a0, a1, a2, path: None },
            Syscall::Other => Rec::OtherEntry { who },
            Syscall::Exit(sc, ret) => Rec::Exit { who, sc, ret },
        }
    }
}

/// Where the fast paths put a syscall event of a known thread: interpreted at once
/// ([`Interpret`], a complete state) or logged ([`Logged`], a chunk state).
trait SyscallSink {
    /// Entry of `call` (that names no path).
    fn enter(&mut self, call: Call);
    /// Entry of a read or write `sc` of `fd`, its other arguments absent.
    fn enter_rw(&mut self, sc: Sc, fd: i64);
    /// Entry of a syscall the analysis does not interpret.
    fn other_entry(&mut self);
    /// Exit of `sc` (`None`: a generic exit) returning `ret`.
    fn exit(&mut self, sc: Option<Sc>, ret: i64);
}

/// A complete state's replay, for the thread of slot `slot`.
struct Interpret<'a> {
    replay: &'a mut Replay,
    slot: usize,
}

impl SyscallSink for Interpret<'_> {
    #[inline(always)]
    fn enter(&mut self, call: Call) {
        self.replay.enter(self.slot, call, None);
    }

    #[inline(always)]
    fn enter_rw(&mut self, sc: Sc, fd: i64) {
        self.replay.enter_rw(self.slot, sc, fd);
    }

    #[inline(always)]
    fn other_entry(&mut self) {
        self.replay.other_entry(self.slot);
    }

    #[inline(always)]
    fn exit(&mut self, sc: Option<Sc>, ret: i64) {
        self.replay.exit(self.slot, sc, ret);
    }
}

/// A chunk state's log, for thread `tid`.
struct Logged<'a> {
    log: &'a mut Log,
    tid: i32,
}

impl SyscallSink for Logged<'_> {
    #[inline(always)]
    fn enter(&mut self, call: Call) {
        self.log.push_entry(self.tid, call);
    }

    #[inline(always)]
    fn enter_rw(&mut self, sc: Sc, fd: i64) {
        // (Truncated as `Call::new` truncates an argument.)
        self.log.push_rw_entry(self.tid, sc, fd as i32);
    }

    #[inline(always)]
    fn other_entry(&mut self) {
        self.log.push_other_entry(self.tid);
    }

    #[inline(always)]
    fn exit(&mut self, sc: Option<Sc>, ret: i64) {
        self.log.push_exit(self.tid, sc, ret);
    }
}

/// The [`Syscall`] of an event of kind `kind` (`None`: not one, or an entry naming a
/// path).
#[inline(always)]
fn syscall_of(ev: &EventRef<'_, '_>, kind: &Kind) -> Option<Syscall> {
    Some(match kind {
        Kind::Entry { sc, a0, a1, a2, path: None } => Syscall::Entry(call_of(ev, *sc, [a0, a1, a2])),
        Kind::OtherEntry | Kind::RawEntry { .. } => Syscall::Other,
        Kind::Exit { .. } | Kind::RawExit { .. } => {
            let (sc, ret) = exit_of(ev, kind)?;
            Syscall::Exit(sc, ret)
        }
        _ => return None,
    })
}

/// How a syscall class's copied fields ([`Analysis::copies`]) are read: the label's
/// high bits say which form (one bit each, so that a form is told by a bit test), its
/// low byte which syscall (`Sc as u32`; [`Label::NO_SC`]: none).
struct Label;

impl Label {
    const ENTRY: u32 = 1 << 8;
    /// An entry whose only argument is its fd (read/write families, close, dup): one
    /// field copied, `[a0]`, the others read as absent.
    const ENTRY_FD: u32 = 1 << 9;
    /// [`Label::ENTRY_FD`] of the read or write family.
    const ENTRY_RW: u32 = 1 << 14;
    const OTHER: u32 = 1 << 10;
    const EXIT: u32 = 1 << 11;
    const RAW_EXIT: u32 = 1 << 12;
    /// `sched_switch` with `char[16]` names (or none): `[prev_tid, next_tid, prev_comm,
    /// next_comm]`.
    const SWITCH: u32 = 1 << 13;
    const NO_SC: u32 = 0xff;

    /// The copy request of a class of kind `kind` (for syscalls, the fields
    /// [`syscall_of`] reads, in the same order); `None` for kinds the fast paths do not
    /// take.
    fn request(kind: &Kind) -> Option<CopyRequest> {
        let sc = |sc: Option<Sc>| sc.map_or(Label::NO_SC, |s| s as u32);
        let (label, fields) = match *kind {
            Kind::Entry { sc: s @ (Sc::Read | Sc::Write), a0, a1: None, a2: None, path: None } => (Label::ENTRY_RW | sc(Some(s)), vec![a0]),
            Kind::Entry { sc: s, a0, a1: None, a2: None, path: None } => (Label::ENTRY_FD | sc(Some(s)), vec![a0]),
            Kind::Entry { sc: s, a0, a1, a2, path: None } => (Label::ENTRY | sc(Some(s)), vec![a0, a1, a2]),
            Kind::OtherEntry | Kind::RawEntry { .. } => (Label::OTHER, vec![]),
            Kind::Exit { sc: s, ret } => (Label::EXIT | sc(s), vec![ret]),
            Kind::RawExit { id, ret } => (Label::RAW_EXIT, vec![Some(id), ret]),
            Kind::Switch { .. } => return switch_request(kind, Label::SWITCH),
            _ => return None,
        };
        Some(CopyRequest { label, fields })
    }

    /// Hands the syscall event whose fields [`Label::request`]'s request copied to
    /// `sink` (absent fields read as -1, as [`int_or`] reads them); false, with nothing
    /// done, when its label names no syscall. Bit tests, the common forms first (no
    /// jump table's indirect jump): exits (of every call), then the entries of reads
    /// and writes.
    #[inline(always)]
    fn dispatch(c: &Copied<'_>, mut sink: impl SyscallSink) -> bool {
        let label = c.label();
        // Entries name a syscall (`request` puts one in their low byte): `& 7` keeps
        // the index among the eight, so never `None` (the fallback is never taken).
        let entry_sc = || Sc::from_index(label & 7).unwrap_or(Sc::Read);
        let v = |i: usize| c.get(i) as i64;
        if label & Label::EXIT != 0 {
            sink.exit(Sc::from_index(label & 0xff), v(0));
        } else if label & Label::ENTRY_RW != 0 {
            sink.enter_rw(entry_sc(), v(0));
        } else if label & Label::ENTRY_FD != 0 {
            sink.enter(Call::new(entry_sc(), v(0), -1, -1));
        } else if label & Label::ENTRY != 0 {
            sink.enter(Call::new(entry_sc(), v(0), v(1), v(2)));
        } else if label & Label::OTHER != 0 {
            sink.other_entry();
        } else if label & Label::RAW_EXIT != 0 {
            sink.exit(Sc::from_x86_64(c.get(0)), v(1));
        } else {
            // (No other label names a syscall.)
            return false;
        }
        true
    }
}

impl Analysis for Io {
    type State = IoState;
    type Output = IoReport;

    fn new_state(&self) -> IoState {
        IoState { cur: vec![(None, None); self.streams], log: Log::with_buffer(self.buffer()), ..Default::default() }
    }

    fn interest(&self, trace: usize, stream_class: u64) -> Option<Vec<bool>> {
        self.layout.mask(trace, stream_class, |k| !matches!(k, Kind::Other | Kind::Migrate { .. }))
    }

    fn copies(&self, trace: usize, stream_class: u64) -> Option<Vec<Option<CopyRequest>>> {
        Some(self.layout.stream_classes(trace, stream_class)?.iter().map(|c| Label::request(&c.kind)).collect())
    }

    #[inline(always)]
    fn on_copied(&self, st: &mut IoState, c: &Copied<'_>, _ts: i64, ctx: &Ctx) -> bool {
        if c.label() == Label::SWITCH {
            // A complete state holding records back: a first switch releases them
            // (the general path).
            if st.holds_back() {
                return false;
            }
            let ([p, n], _) = st.info.switch_copied(c, (ctx.order, ctx.stream));
            st.switched(ctx.stream, p, n);
        } else if st.complete {
            if !self.syscall_copied_complete(st, c, ctx.stream) {
                return false;
            }
        } else if !self.syscall_copied_chunk(st, c, ctx.stream) {
            return false;
        }
        // (Its timestamp widens the span through `on_copied_span`.)
        true
    }

    fn on_skipped(&self, st: &mut IoState, first: i64, last: i64) {
        st.span.see_range(first, last);
    }

    fn on_copied_span(&self, st: &mut IoState, first: i64, last: i64) {
        st.span.see_range(first, last);
    }

    fn initial_state(&self) -> IoState {
        IoState { complete: true, run: vec![NO_CACHE; self.streams], ..self.new_state() }
    }

    fn folds_in_place(&self) -> bool {
        true
    }

    /// A chunk's log holds about 2 bytes per byte of its slice (one 40-byte record per
    /// event of 20 bytes or more): slices of 16 MiB keep a log of about 32 MiB, which
    /// is written by one worker and replayed soon after, in the caches. (syn3g at
    /// `-j 2`, 3 GB: 2.109 s against 2.206 s with the 64 MiB slices picked otherwise.)
    fn max_auto_slice_bytes(&self) -> u64 {
        16 << 20
    }

    fn reserve(&self, st: &mut IoState, bytes: u64) {
        if !st.complete {
            // At most about one record per event, events of 20 bytes or more: room
            // never touched costs no memory.
            st.log.reserve((bytes / 20).min(1 << 26) as usize);
        }
    }

    #[inline(always)]
    fn on_event(&self, st: &mut IoState, ev: &EventRef<'_, '_>, ctx: &Ctx) {
        st.span.see(ev.ts());
        let Some(c) = self.layout.class(ev) else { return };
        if let Some(s) = syscall_of(ev, &c.kind) {
            if self.syscall_fast(st, s, ctx.stream) {
                return;
            }
        }
        let switch = matches!(c.kind, Kind::Switch { .. });
        let first_switch = switch && st.cur.get(ctx.stream).is_some_and(|c| c.0.is_none() && c.1.is_none());
        let Some(rec) = self.record(st, ev, c, ctx) else {
            if first_switch && st.holds_back() {
                self.release_held(st, ctx.stream);
            }
            return;
        };
        if st.complete && st.log.is_empty() {
            match rec.who() {
                Some(Who::Tid(t)) => {
                    // Issued by the task running on the stream: its slot is cached.
                    let i = st.replay.slot_cached(&mut st.run[ctx.stream], t);
                    return st.replay.apply(rec, Some(i));
                }
                Some(Who::Head(_)) if self.head == HeadPolicy::FromStart => {}
                _ => return st.replay.apply(rec, None),
            }
        }
        st.log.push(rec.into_owned());
    }

    fn merge(&self, mut a: IoState, b: IoState) -> IoState {
        let complete = a.complete;
        let IoState { log: mut b_log, cur: b_cur, info: b_info, span: b_span, .. } = b;
        let mut fresh = b_log.take();
        if complete {
            // Records held back wait for the first switch of a stream that had none
            // yet (so `a.cur` knows no task there): `b` may name it. (No earlier task
            // is known for them: resolve against an empty `cur`.)
            let mut held = a.log.take();
            let earlier = a.cur.clone();
            self.replay_in_order(&mut a, &mut held, |r| self.resolve_l(r, &[], &b_cur, true));
            self.replay_in_order(&mut a, &mut fresh, |r| self.resolve_l(r, &earlier, &b_cur, true));
        } else {
            a.log.extend(fresh.drain(..).map(|r| self.resolve_l(r, &a.cur, &b_cur, false)));
        }
        self.recycle(fresh);
        for (x, y) in a.cur.iter_mut().zip(&b_cur) {
            x.0 = x.0.or(y.0);
            x.1 = y.1.or(x.1);
        }
        // (The running tasks may have changed.)
        a.run.iter_mut().for_each(|r| *r = NO_CACHE);
        a.info = a.info.merge(b_info);
        a.span = a.span.merge(b_span);
        a
    }

    fn finish(&self, st: IoState) -> IoReport {
        let mut st = if st.complete { st } else { self.merge(self.initial_state(), st) };
        // Held-back records whose stream never switched: their syscalls have no known
        // thread and are dropped, as a serial run drops them.
        for r in st.log.take() {
            st.replay.apply_l(r);
        }
        // Each thread's pid and name are taken as the replay lists its threads, in its
        // slot order (the thread table, filled in much the same order, is then read
        // mostly in order, not in the rows' order), then the rows are sorted before any
        // name is copied: tids and pids are unique, so an unstable sort gives the one
        // order (decreasing total bytes, then increasing id). (A trace of 3 GB lists
        // 223 k threads and 138 k processes: this work is serial, after the parallel
        // part.)
        let info = &st.info;
        let mut raw = thread_io(st.replay.threads(), info);
        raw.sort_unstable_by_key(|&(tid, r, w, ..)| (Reverse(r + w), tid));
        let (threads, processes) = rows(&raw, info, self.workers > 1 && raw.len() >= PARALLEL_ROWS);
        let mut files: Vec<FileIoRow> = st.replay.files().map(|(p, r, w)| FileIoRow { path: p.to_string(), read_bytes: r, write_bytes: w }).collect();
        files.sort_by(|x, y| (y.read_bytes + y.write_bytes).cmp(&(x.read_bytes + x.write_bytes)).then(x.path.cmp(&y.path)));
        IoReport { analysis: "io", begin_ns: st.span.begin(), end_ns: st.span.end(), threads, processes, files }
    }
}

/// Reports with fewer threads than this make their rows on one thread.
const PARALLEL_ROWS: usize = 1 << 14;

/// A thread's numbers and names, as its rows need them: `(tid, read, written, pid,
/// name)`.
type ThreadIo<'i> = (i32, u64, u64, Option<i32>, &'i str);

/// The [`ThreadIo`] of each thread `(tid, read, written)` of `threads`, in their order.
fn thread_io<'i>(threads: impl Iterator<Item = (i32, u64, u64)>, info: &'i Info) -> Vec<ThreadIo<'i>> {
    threads
        .map(|(tid, r, w)| {
            let (pid, comm) = info.pid_and_comm(tid);
            (tid, r, w, pid, comm)
        })
        .collect()
}

/// The thread rows and process rows of the threads `raw` lists (in row order): with
/// `side_by_side`, made on two threads.
fn rows(raw: &[ThreadIo<'_>], info: &Info, side_by_side: bool) -> (Vec<ThreadIoRow>, Vec<ProcessIoRow>) {
    let procs = || process_rows(raw.iter().map(|&(tid, r, w, pid, _)| (pid.unwrap_or(tid), r, w)), info);
    if !side_by_side {
        return (thread_rows(raw), procs());
    }
    std::thread::scope(|s| {
        let procs = s.spawn(procs);
        let threads = thread_rows(raw);
        (threads, procs.join().unwrap_or_else(|p| std::panic::resume_unwind(p)))
    })
}

/// The rows of the threads `raw` lists (in row order).
fn thread_rows(raw: &[ThreadIo<'_>]) -> Vec<ThreadIoRow> {
    raw.iter().map(|&(tid, r, w, pid, comm)| ThreadIoRow { tid, pid, comm: comm.to_string(), read_bytes: r, write_bytes: w }).collect()
}

/// The rows of the processes of threads given as `(process, read, written)` (a
/// thread's process: its pid, its tid when unknown), each summing its threads' bytes,
/// by decreasing total bytes then pid.
fn process_rows(threads: impl Iterator<Item = (i32, u64, u64)>, info: &Info) -> Vec<ProcessIoRow> {
    // (Pids are tids: indexed as tids are.)
    let mut procs: Vec<(i32, u64, u64)> = Vec::new();
    let mut proc_of = TidIndex::default();
    for (pid, r, w) in threads {
        let i = match proc_of.get(pid) {
            Some(i) => i as usize,
            None => {
                proc_of.insert(pid, procs.len() as u32);
                procs.push((pid, 0, 0));
                procs.len() - 1
            }
        };
        procs[i].1 += r;
        procs[i].2 += w;
    }
    procs.sort_unstable_by_key(|&(pid, r, w)| (Reverse(r + w), pid));
    procs.into_iter().map(|(pid, r, w)| ProcessIoRow { pid, comm: info.comm_of(pid).to_string(), read_bytes: r, write_bytes: w }).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rows_side_by_side_equal_rows_made_in_turn() {
        // 40 k threads of 3 k processes (some with no known pid), bytes that tie.
        let mut info = Info::default();
        let raw: Vec<(i32, u64, u64)> = (1..=40_000).map(|t| (t, (t % 7) as u64 * 100, (t % 5) as u64)).collect();
        for &(t, ..) in &raw {
            if t % 11 != 0 {
                info.pid(t, 1 + t % 3000, (0, 0));
            }
        }
        let gathered = thread_io(raw.iter().copied(), &info);
        let serial = rows(&gathered, &info, false);
        assert_eq!(rows(&gathered, &info, true), serial);
        // Processes sum their threads, each counted once, in the documented order.
        let total = |r: &[(i32, u64, u64)]| r.iter().map(|x| x.1 + x.2).sum::<u64>();
        assert_eq!(serial.1.iter().map(|p| p.read_bytes + p.write_bytes).sum::<u64>(), total(&raw));
        assert!(serial.1.windows(2).all(|w| (Reverse(w[0].read_bytes + w[0].write_bytes), w[0].pid) < (Reverse(w[1].read_bytes + w[1].write_bytes), w[1].pid)));
        let keys: std::collections::HashSet<i32> = raw.iter().map(|&(t, ..)| info.pid_of(t).unwrap_or(t)).collect();
        assert_eq!(serial.1.len(), keys.len());
    }
}
