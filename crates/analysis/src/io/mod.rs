//! `io`: bytes read and written per thread, process and file.
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
//! Semantics: bytes are the exit `ret` when > 0 of read-family and write-family
//! syscalls whose entry was seen, credited to the thread, to its process (pid from
//! fork/statedump, else the tid), to the file the fd named in the process's table when
//! the syscall was entered, and to that file's class (disk, net, other). The tables
//! follow the kernel's fd rules, written once in `kernel::fdtable` (opens, every
//! syscall that makes an fd, dups, close and close_range, close-on-exec and exec, fork,
//! the statedump, bytes held for it, a late-known thread's fds); every byte has a file
//! row (by kind, or `unknown (fd N)`). Syscalls issued before their CPU's first
//! `sched_switch` are credited to that switch's `prev_tid` with
//! [`HeadPolicy::FromStart`](crate::cpu::HeadPolicy), dropped with `Ignore`
//! (lttng-analyses has no current thread there).
//!
//! Filters ([`Filter`]): threads are selected as the report is made, by their tid, pid
//! and latest name (see [`crate::filter`]), and with a thread selection the replay keeps
//! each file's bytes per thread, so that the file table counts only the selected
//! threads' bytes and the process table only their threads. `--cpu`, which
//! lttng-iousagetop ignores (it warns "cpu filter not enabled on I/O analysis"), counts
//! the read and write syscalls *entered* on a selected CPU: such an entry on another CPU
//! is taken as a syscall the analysis does not interpret (its exit then moves no byte),
//! while every other syscall still updates the fd tables, so that files stay named
//! right. (The fast path of copied fields, which does not know the CPU, is then off.)
//!
//! With [`Io::with_transfers`] (`--log`), the report also lists every read or write
//! that moved bytes ([`TransferRow`]), with its call's entry time and name: chunk logs
//! are then named ([`Log::named`]: each record with its event's time and tag), and the
//! replay notes each transfer with the time of the exit that moved the bytes.
//!
//! The syscall latency ([`crate::syscall`]) is this analysis with the calls kept
//! (`Io::with_calls`): the replay's pending call of each thread (the kernel model's
//! one pending-call state) completes each call with its name, entry time and file.

mod replay;
mod report;
mod syscall;

use std::borrow::Cow;
use std::cmp::Reverse;
use std::ops::ControlFlow;
use std::sync::Mutex;

use ctf::stream::{Copied, CopyRequest, EventRef};
use ctf::trace::TraceSet;
use engine::{Analysis, ChunkPolicy, Ctx, Selective, Tally};

use crate::cpu::HeadPolicy;
use crate::filter::Filter;
use crate::latency::LatencyOptions;
use crate::syscall::stats::CallStats;
use crate::trace_end::TraceEnd;
use kernel::fdtable::Call;
use kernel::latency::raw_call;
use kernel::layout::{cpu_of, fd_pair, i32_of, EvClass, Kind, Layout, Sc, O_CLOEXEC};
use kernel::model::{text_of, Info, Span};
use kernel::replay::{NO_RET, UNCOUNTED};

use kernel::log::{LRec, Log, Taken};
pub use kernel::log::{Rec, Who};
use kernel::replay::{SlotCache, NO_CACHE, NO_SLOT};
use kernel::running::Running;
pub(crate) use replay::Replay;
use report::{rows, thread_io, PARALLEL_ROWS};
pub use report::{FileIoRow, IoReport, ProcessIoRow, ThreadIoRow, TransferRow};
pub(crate) use syscall::Label;
use syscall::{call_of, int_or, syscall_of, Interpret, Logged, Syscall};

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
    pub(crate) replay: Replay,
    log: Log,
    cur: Running,
    /// Complete states: per stream, the slot of the task running there, once looked up
    /// (forgotten whenever that task may change: a switch, a merge), so that a cached
    /// slot is the running task's.
    run: Vec<SlotCache>,
    pub(crate) info: Info,
    pub(crate) span: Span,
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
        self.cur.switched(stream, prev, next);
        if let Some(r) = self.run.get_mut(stream) {
            *r = NO_CACHE;
        }
    }

    /// The task running on `stream` (the last switch's `next_tid`), when known.
    #[inline(always)]
    fn running(&self, stream: usize) -> Option<i32> {
        self.cur.running(stream)
    }

    /// The events that come next are at `ts`, with tag `tag` (for the transfers' and
    /// calls' times and names: [`kernel::replay::Replay::at`]).
    #[inline(always)]
    fn at(&mut self, ts: i64, tag: u32) {
        self.log.at(ts, tag);
        self.replay.at(ts, tag);
    }
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
    /// What to count (see the module documentation).
    filter: Filter,
    /// Emptied chunk log buffers, handed to new chunk states: a log grown from nothing
    /// in fresh memory costs a page fault, a page zeroing and copies as it doubles.
    spare: Mutex<Vec<Vec<LRec>>>,
    /// Whether every transfer is listed (see the module documentation).
    transfers: bool,
    /// With [`Io::with_calls`]: the syscall latency's options and the filter of its
    /// CPUs.
    calls: Option<(LatencyOptions, Filter)>,
}

/// Log buffers kept for reuse (about the chunks in flight).
const SPARE_LOGS: usize = 16;

impl Io {
    /// Prepares the io analysis for `set`.
    pub fn new(set: &TraceSet, head: HeadPolicy) -> Io {
        Io {
            layout: Layout::new(set),
            streams: set.streams.len(),
            head,
            workers: 1,
            filter: Filter::default(),
            spare: Mutex::default(),
            transfers: false,
            calls: None,
        }
    }

    /// Lists every read or write that moved bytes when `on` ([`IoReport::transfers`];
    /// see the module documentation).
    pub fn with_transfers(mut self, on: bool) -> Io {
        self.transfers = on;
        self
    }

    /// Keeps the statistics of every call completed (the syscall latency, with its
    /// options `lat`), counting the calls whose exit is on a CPU `filter` selects (its
    /// threads are selected by [`crate::syscall`]); chunk logs are then named as for
    /// [`Io::with_transfers`].
    pub(crate) fn with_calls(mut self, lat: LatencyOptions, filter: Filter) -> Io {
        self.calls = Some((lat, filter));
        self
    }

    /// Whether chunk logs and the replay know their events' times and tags.
    #[inline(always)]
    fn timed(&self) -> bool {
        self.transfers || self.calls.is_some()
    }

    /// The tag of event `ev` of class `c` on `stream` ([`kernel::replay::Replay::at`]):
    /// an entry's call name; an exit's flags (no return value; on a CPU the calls'
    /// filter does not select).
    #[inline(always)]
    fn tag(&self, ev: &EventRef<'_, '_>, c: &EvClass, stream: usize) -> u32 {
        match c.kind {
            Kind::Entry { .. } | Kind::OtherEntry | Kind::UnknownEntry { .. } => c.name,
            Kind::RawEntry { id, .. } => raw_call(ev.uint(id).unwrap_or(0)),
            Kind::Exit { ret, .. } | Kind::RawExit { ret, .. } => {
                let no_ret = if ret.and_then(|h| ev.int(h)).is_none() { NO_RET } else { 0 };
                let uncounted = match &self.calls {
                    Some((_, f)) if !f.on_cpu(&self.layout, ev, stream) => UNCOUNTED,
                    _ => 0,
                };
                no_ret | uncounted
            }
            _ => 0,
        }
    }

    /// Counts only what `filter` selects (see the module documentation).
    pub fn with_filter(mut self, filter: Filter) -> Io {
        self.filter = filter;
        self
    }

    /// [`syscall_of`], except that with a CPU filter, the entry of a read or write on a
    /// CPU that is not selected is a syscall not interpreted (see the module
    /// documentation).
    #[inline(always)]
    fn syscall_at(&self, ev: &EventRef<'_, '_>, c: &EvClass, stream: usize) -> Option<Syscall> {
        let s = syscall_of(ev, &c.kind)?;
        if !self.filter.cpus.is_empty() {
            if let Syscall::Entry(Call { sc: Sc::Read | Sc::Write, .. }) = s {
                if !self.filter.cpu(cpu_of(ev, c, stream)) {
                    return Some(Syscall::Other);
                }
            }
        }
        Some(s)
    }

    /// Lets [`Analysis::finish`] use `workers` threads (a run's workers, idle by then):
    /// the report of a trace of a few GB lists hundreds of thousands of threads and
    /// processes, and making their rows is serial work after the parallel part.
    pub fn with_workers(mut self, workers: usize) -> Io {
        self.workers = workers.max(1);
        self
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
            let Some(t) = cur.running(stream) else { return false };
            replay.slot_cached(cache, t)
        };
        Label::dispatch(c, Interpret { replay, slot })
    }

    /// [`Io::syscall_fast`] of the syscall event whose fields `c` copies, in a chunk
    /// state: logged under the task running on `stream` (false, with `st` unchanged,
    /// when that is not known yet).
    #[inline(always)]
    fn syscall_copied_chunk(&self, st: &mut IoState, c: &Copied<'_>, stream: usize) -> bool {
        let Some(tid) = st.cur.running(stream) else { return false };
        Label::dispatch(c, Logged { log: &mut st.log, tid })
    }

    /// `r` with its issuer resolved ([`Running::resolve`]) in a chunk whose
    /// predecessor's tasks are `earlier`, its own `later`; `complete`: the predecessor
    /// starts at the trace's beginning.
    #[inline(always)]
    fn resolve_l(&self, r: LRec, earlier: &Running, later: &Running, complete: bool) -> LRec {
        let from_later = complete && self.head == HeadPolicy::FromStart;
        match r {
            LRec::R(r) => match r.who() {
                Some(w @ Who::Head(_)) => LRec::R(r.with_who(Running::resolve(w, earlier, later, from_later))),
                _ => LRec::R(r),
            },
            r => r,
        }
    }
}

impl Io {
    /// Takes the transfers replayed so far out of `st`, the running state of a run
    /// (see [`engine::run_draining`]; with [`Io::with_transfers`]), and gives `out`
    /// their rows, as [`Analysis::finish`] would list them: named by `end`, the facts
    /// of the trace's end ([`TraceEnd::read`]), in pieces of at most `piece` rows,
    /// each by exit time then tid. Not with a thread filter. A transfer on a
    /// placeholder file the statedump may still name stays in `st`, as does one whose
    /// call's entry is still to be told. Stops at `out`'s `Break`.
    pub fn drain_transfers(&self, st: &mut IoState, end: &TraceEnd, piece: usize, out: &mut dyn FnMut(Vec<TransferRow>) -> ControlFlow<()>) -> ControlFlow<()> {
        let rows = st.replay.drain_transfer_rows(end, |c| kernel::latency::call_name(&self.layout.names, c));
        let mut rows = rows.into_iter().peekable();
        while rows.peek().is_some() {
            out(rows.by_ref().take(piece.max(1)).collect())?;
        }
        ControlFlow::Continue(())
    }
}

impl Io {
    /// The whole trace's state `st` with everything replayed: made complete (merged into
    /// the initial state) if it was not, and the records held back replayed. (Those
    /// whose stream never switched have no known thread and are dropped, as a serial
    /// run drops them.)
    pub(crate) fn completed(&self, st: IoState) -> IoState {
        let mut st = if st.complete { st } else { self.merge(self.initial_state(), st) };
        let Taken { recs, stamps, tags } = st.log.take();
        for (k, r) in recs.into_iter().enumerate() {
            if let Some(&t) = stamps.get(k) {
                st.replay.at(t, tags.get(k).copied().unwrap_or(0));
            }
            st.replay.apply_l(r);
        }
        st
    }

    /// Replays records `recs` into the complete state `a`, in order, each resolved by
    /// `resolve` (read/write records name a known thread: they need none), up to the
    /// first one still naming the unknown task of a stream that has not switched yet
    /// (with [`HeadPolicy::FromStart`] a later switch will name it); that record and
    /// all after it are held back in `a.log`, so that order is kept. `recs` is left
    /// empty (its buffer kept).
    fn replay_in_order(&self, a: &mut IoState, taken: &mut Taken, resolve: impl Fn(LRec) -> LRec) {
        let may_wait = self.head == HeadPolicy::FromStart;
        // Records before `done` are replayed (those taken out left as a placeholder
        // that owns nothing).
        let mut done = 0;
        if a.log.is_empty() {
            // (The threads of a log's read/write records are few at a time: their
            // slots are cached, by tid, as a stream caches its running task's.)
            let mut slots = [NO_CACHE; RW_SLOT_CACHE];
            let Taken { recs, stamps, tags } = &mut *taken;
            for (k, r) in recs.iter_mut().enumerate() {
                if let Some(&t) = stamps.get(k) {
                    a.replay.at(t, tags.get(k).copied().unwrap_or(0));
                }
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
        let stamped = taken.stamps.len().min(done);
        let tagged = taken.tags.len().min(done);
        a.log.extend(taken.recs.drain(done..).map(resolve), taken.stamps.drain(stamped..), taken.tags.drain(tagged..));
        taken.recs.clear();
        taken.stamps.clear();
        taken.tags.clear();
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
            Kind::Switch { prev_tid, next_tid, prev_comm, next_comm, .. } => {
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
            Kind::Exit { sc, ret, fds: fds @ Some(_) } => match (g(*ret), fd_pair(ev, *fds)) {
                (0, Some(fds)) => Rec::Pair { who, sc: *sc, fds },
                (ret, _) => Rec::Exit { who, sc: *sc, ret },
            },
            Kind::Entry { .. } | Kind::OtherEntry | Kind::UnknownEntry { .. } | Kind::RawEntry { .. } | Kind::Exit { .. } | Kind::RawExit { .. } => {
                return self.syscall_at(ev, c, ctx.stream).map(|s| s.record(who))
            }
            Kind::Fork { parent_tid, parent_pid, child_tid, child_pid, .. } => {
                st.info.on_event(ev, c, (ctx.order, ctx.stream));
                let child_tid = i32_of(ev, Some(*child_tid))?;
                Rec::Fork { parent_tid: i32_of(ev, *parent_tid), parent_pid: i32_of(ev, *parent_pid), child_tid, child_pid: i32_of(ev, *child_pid) }
            }
            Kind::Exec { tid, .. } => {
                st.info.on_event(ev, c, (ctx.order, ctx.stream));
                let t = i32_of(ev, *tid).or(match who {
                    Who::Tid(t) => Some(t),
                    Who::Head(_) | Who::Stream(_) => None,
                });
                Rec::Exec { who: Who::Tid(t?) }
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
        if st.cur.first_prev(stream).is_none() {
            return;
        }
        let mut held = st.log.take();
        let cur = std::mem::take(&mut st.cur);
        self.replay_in_order(st, &mut held, |r| self.resolve_l(r, &Running::default(), &cur, true));
        st.cur = cur;
    }
}

impl Analysis for Io {
    type State = IoState;
    type Output = IoReport;

    fn new_state(&self) -> IoState {
        let log = Log::with_buffer(self.buffer());
        let log = if self.timed() { log.named() } else { log };
        IoState { cur: Running::new(self.streams), log, ..Default::default() }
    }

    #[inline(always)]
    fn on_event(&self, st: &mut IoState, ev: &EventRef<'_, '_>, ctx: &Ctx) {
        st.span.see(ev.ts());
        let Some(c) = self.layout.class(ev) else { return };
        if self.timed() {
            st.at(ev.ts().unwrap_or(ctx.order), self.tag(ev, c, ctx.stream));
        }
        if let Some(s) = self.syscall_at(ev, c, ctx.stream) {
            if self.syscall_fast(st, s, ctx.stream) {
                return;
            }
        }
        let switch = matches!(c.kind, Kind::Switch { .. });
        let first_switch = switch && st.cur.unswitched(ctx.stream);
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
            self.replay_in_order(&mut a, &mut held, |r| self.resolve_l(r, &Running::default(), &b_cur, true));
            self.replay_in_order(&mut a, &mut fresh, |r| self.resolve_l(r, &earlier, &b_cur, true));
        } else {
            a.log.extend(fresh.recs.drain(..).map(|r| self.resolve_l(r, &a.cur, &b_cur, false)), fresh.stamps.drain(..), fresh.tags.drain(..));
        }
        self.recycle(fresh.recs);
        a.cur.append(&b_cur);
        // (The running tasks may have changed.)
        a.run.iter_mut().for_each(|r| *r = NO_CACHE);
        a.info = a.info.merge(b_info);
        a.span = a.span.merge(b_span);
        a
    }

    fn finish(&self, st: IoState) -> IoReport {
        let st = self.completed(st);
        // Each thread's pid and name are taken as the replay lists its threads, in its
        // slot order (the thread table, filled in much the same order, is then read
        // mostly in order, not in the rows' order), then the rows are sorted before any
        // name is copied: tids and pids are unique, so an unstable sort gives the one
        // order (decreasing total bytes, then increasing id). (A trace of 3 GB lists
        // 223 k threads and 138 k processes: this work is serial, after the parallel
        // part.)
        let info = &st.info;
        let mut raw = thread_io(st.replay.threads(), info);
        let selects = self.filter.selects_threads();
        if selects {
            raw.retain(|&(tid, _, _, pid, comm, _)| self.filter.thread(tid, pid, comm));
        }
        raw.sort_unstable_by_key(|&(tid, r, w, ..)| (Reverse(r + w), tid));
        let (threads, processes) = rows(&raw, info, self.workers > 1 && raw.len() >= PARALLEL_ROWS);
        let row = |(p, r, w): (&str, u64, u64)| FileIoRow { path: p.to_string(), read_bytes: r, write_bytes: w };
        let mut files: Vec<FileIoRow> = if selects {
            let keep = |tid: i32| {
                let (pid, comm) = info.pid_and_comm(tid);
                self.filter.thread(tid, pid, comm)
            };
            st.replay.files_of(keep).map(row).collect()
        } else {
            st.replay.files().map(row).collect()
        };
        files.sort_by(|x, y| (y.read_bytes + y.write_bytes).cmp(&(x.read_bytes + x.write_bytes)).then(x.path.cmp(&y.path)));
        let name_of = |c| kernel::latency::call_name(&self.layout.names, c);
        let transfers = st.replay.transfer_rows(info, |tid, pid, comm| !selects || self.filter.thread(tid, pid, comm), name_of);
        IoReport { analysis: "io", begin_ns: st.span.begin(), end_ns: st.span.end(), threads, processes, files, transfers }
    }
}

impl Selective for Io {
    fn interest(&self, trace: usize, stream_class: u64) -> Option<Vec<bool>> {
        self.layout.mask(trace, stream_class, |k| !matches!(k, Kind::Other | Kind::Migrate { .. }))
    }

    fn copies(&self, trace: usize, stream_class: u64) -> Option<Vec<Option<CopyRequest>>> {
        if !self.filter.cpus.is_empty() || self.calls.as_ref().is_some_and(|(_, f)| !f.cpus.is_empty()) {
            // (Copied fields do not say the CPU: see `syscall_at` and `tag`.)
            return None;
        }
        let classes = self.layout.stream_classes(trace, stream_class)?;
        Some(classes.iter().map(|c| if self.timed() { Label::named_request(c) } else { Label::request(&c.kind) }).collect())
    }

    #[inline(always)]
    fn on_copied(&self, st: &mut IoState, c: &Copied<'_>, ts: i64, ctx: &Ctx) -> bool {
        if self.timed() {
            st.at(ts, Label::tag(c));
        }
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
}

impl Tally for Io {}

impl ChunkPolicy for Io {
    fn initial_state(&self) -> IoState {
        let mut st = IoState { complete: true, run: vec![NO_CACHE; self.streams], ..self.new_state() };
        if self.filter.selects_threads() {
            st.replay.keep_files_by_thread();
        }
        if self.transfers {
            st.replay.keep_transfers();
        }
        if let Some((lat, _)) = self.calls {
            st.replay.keep_calls(CallStats::new(lat));
        }
        st
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
}
