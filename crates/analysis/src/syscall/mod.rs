//! `syscall`: system call latency (entry → exit) per thread, per process and per
//! syscall, with return values tallied and the longest calls (lttng-syscallstats,
//! the top-N of lttng-iolatencytop).
//!
//! Semantics (as lttng-analyses 0.6.1): a syscall event belongs to the task its CPU
//! last switched to (`sched_switch`'s `next_tid`; the idle task issues none); an entry
//! becomes its thread's pending call (replacing one left without exit); an exit
//! completes the pending call (its name is the entry's), an exit without one is
//! dropped. Before a CPU's first `sched_switch` its task is known only from that
//! switch's `prev_tid`: with [`HeadPolicy::FromStart`] its events are that task's,
//! with [`HeadPolicy::Ignore`] (lttng-analyses) they are dropped.
//!
//! Chunk state (B1): per thread a `Seg`: whether its first syscall event in the chunk
//! is an exit (which may complete a call entered before the chunk), the call still
//! pending at the chunk's end, and the statistics of the calls completed inside. The
//! events of a CPU before its first switch in the chunk go to that stream's head
//! segment, given to the task the earlier chunk left running there when merged. Merging
//! per thread is associative: a call whose entry and exit lie in different chunks is
//! completed where they meet, whatever the CPUs.
//!
//! Filters ([`Filter`], as lttng-syscallstats' `--tid`, `--procname`, `--cpu`): a call
//! counts when its exit is on a selected CPU (the event's `cpu_id`, as lttng-analyses
//! tests it), in every table; threads are selected in `finish` by their tid, pid and
//! latest name (see [`crate::filter`]), so the per-process table and the total sum only
//! their calls, and the longest calls are chosen among theirs (every call is then kept
//! until `finish`: [`crate::RunOptions::latency`]).
//!
//! Files ([`SyscallOptions::files`], on in `analyze -a syscall`): each of the longest
//! calls (and of the log) names the fd it worked on and that fd's file, as
//! lttng-iolatencytop's `Filename (fd=N)`: the io analysis runs alongside, its replay of
//! the kernel model's fd tables (`kernel::fdtable`, exact at any chunking) noting every
//! call that ends on an fd by `(tid, exit time)` ([`kernel::replay::Sink::ended`]); the
//! report joins on that key. A call on an fd argument names the file the fd named at
//! entry (the calls that change no fd table too: fsync, lseek, fstat, ioctl, mmap …,
//! `kernel::layout::Sc::OnFd`; sendfile, splice, tee and copy_file_range name the fd
//! read and the fd written); an open, dup or call making an fd names the fd it returned
//! and the path or kind of object; other calls (`poll`, `select`, `*at` calls …) name
//! none. As the complete state grows, the replay forgets the calls no longer among
//! the longest, so it keeps about `--top` of them plus a few thousand (with `--log`,
//! `--freq` or a thread filter, every call is kept).

use kernel::running::Running;
use std::collections::BTreeMap;

use ctf::stream::{Copied, CopyRequest, EventRef};
use ctf::trace::TraceSet;
use engine::{Analysis, ChunkPolicy, Ctx, Selective, Tally};
use serde::Serialize;

mod output;

pub use output::{lami, write_text};

use crate::cpu::HeadPolicy;
use crate::filter::Filter;
use crate::io::{Io, IoState, Label};
use crate::latency::{return_key, Bucket, DurationRow, Durations, LatencyOptions, Sink};
use kernel::latency::{call_name, raw_call, CallId};
use kernel::layout::{EvClass, Kind, Layout};
use kernel::model::{FxMap, Info, Span};

/// Options of [`Syscall`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct SyscallOptions {
    /// Events before a CPU's first `sched_switch`.
    pub head: HeadPolicy,
    /// The longest listed, the filter, every call kept.
    pub lat: LatencyOptions,
    /// Whether the longest calls (and the log) name the fd and file each call worked on
    /// (see the module documentation).
    pub files: bool,
}

/// The syscall analysis.
pub struct Syscall {
    layout: Layout,
    opts: SyscallOptions,
    streams: usize,
    filter: Filter,
    /// With [`SyscallOptions::files`]: the io analysis, which replays the fd tables.
    io: Option<Io>,
}

/// Statistics of one call name of one thread.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
struct CallAcc {
    d: Durations,
    rets: Rets,
}

/// Return values tallied: every value ≥ 0 (success) as one count (a read's byte counts
/// would otherwise make one entry each), and each error with its count (few per call
/// name: a list, no map, nothing allocated while calls succeed).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
struct Rets {
    ok: u64,
    errs: Vec<(i64, u64)>,
}

impl Rets {
    /// `n` calls returned `ret`.
    #[inline]
    fn add(&mut self, ret: i64, n: u64) {
        if ret >= 0 {
            self.ok += n;
            return;
        }
        match self.errs.iter_mut().find(|(r, _)| *r == ret) {
            Some(e) => e.1 += n,
            None => self.errs.push((ret, n)),
        }
    }
    /// Adds every count of `o`.
    fn merge(&mut self, o: &Rets) {
        self.ok += o.ok;
        for &(r, n) in &o.errs {
            self.add(r, n);
        }
    }
    /// `(value, count)`: 0 for the successes, then the errors.
    fn iter(&self) -> impl Iterator<Item = (i64, u64)> + '_ {
        (self.ok > 0).then_some((0, self.ok)).into_iter().chain(self.errs.iter().copied())
    }
}

/// A completed call, ordered by duration (longest first), then earliest, then tid.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
struct Long {
    dur: u64,
    begin: std::cmp::Reverse<i64>,
    tid: std::cmp::Reverse<i32>,
    call: std::cmp::Reverse<CallId>,
    ret: i64,
    /// The exit's time (`begin + dur` unless time went back).
    end: i64,
}

/// How a segment's syscall events begin.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
enum First {
    /// None yet.
    #[default]
    Nothing,
    /// An entry (a call pending before it is forgotten).
    Entry,
    /// An exit `(ts, ret)`, completing a call pending before, if any.
    Exit(i64, i64),
}

/// One thread's syscall events in a chunk (see the module documentation).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
struct Seg {
    first: First,
    /// The call pending at the end: `(name, entry ts)`.
    pending: Option<(CallId, i64)>,
    calls: Vec<(CallId, CallAcc)>,
    /// The longest calls (and all), with tid 0 (for the head segments, whose thread
    /// is unknown).
    top: Sink<Long>,
}

/// Per-stream chunk state (its current task is the kernel's [`Running`]).
#[derive(Debug, Clone, Default)]
struct StreamSeg {
    /// Events before the first switch.
    head: Seg,
}

/// Chunk state of [`Syscall`].
#[derive(Debug, Clone, Default)]
pub struct SyscallState {
    streams: Vec<StreamSeg>,
    /// The task running on each stream.
    running: Running,
    threads: FxMap<i32, Seg>,
    top: Sink<Long>,
    info: Info,
    span: Span,
    /// With [`SyscallOptions::files`]: io's state, whose replay keeps the calls ended
    /// on an fd.
    files: IoState,
    /// How many calls ended `files` may keep before forgetting
    /// ([`Syscall::forget_files_when_many`]).
    forget_at: usize,
}

impl Seg {
    fn new(o: &LatencyOptions) -> Seg {
        Seg { top: Sink::new(o), ..Default::default() }
    }
    /// A call of `call` from `begin` to `end` (entry, exit) returned `ret`.
    fn complete(&mut self, o: &SyscallOptions, top: &mut Sink<Long>, tid: i32, call: CallId, (begin, end): (i64, i64), ret: i64) {
        let dur = (end - begin).max(0) as u64;
        if !o.lat.keeps(dur) {
            return;
        }
        let acc = match self.calls.iter().position(|(c, _)| *c == call) {
            Some(i) => &mut self.calls[i].1,
            None => {
                self.calls.push((call, CallAcc::default()));
                &mut self.calls.last_mut().unwrap().1
            }
        };
        acc.d.add(dur);
        acc.rets.add(ret, 1);
        top.offer(Long { dur, begin: std::cmp::Reverse(begin), tid: std::cmp::Reverse(tid), call: std::cmp::Reverse(call), ret, end });
    }
    fn entry(&mut self, call: CallId, ts: i64) {
        if self.first == First::Nothing {
            self.first = First::Entry;
        }
        self.pending = Some((call, ts));
    }
    /// An entry of `call` (`Some`) or an exit returning `exit_ret` at `ts`.
    #[inline]
    fn step(&mut self, o: &SyscallOptions, top: &mut Sink<Long>, tid: i32, call: Option<CallId>, exit_ret: Option<i64>, ts: i64) {
        match (call, exit_ret) {
            (Some(call), _) => self.entry(call, ts),
            (None, Some(ret)) => self.exit(o, top, tid, ts, ret),
            _ => {}
        }
    }
    fn exit(&mut self, o: &SyscallOptions, top: &mut Sink<Long>, tid: i32, ts: i64, ret: i64) {
        if self.first == First::Nothing {
            self.first = First::Exit(ts, ret);
        }
        if let Some((call, t0)) = self.pending.take() {
            self.complete(o, top, tid, call, (t0, ts), ret);
        }
    }
    /// Appends `later` (the same thread's next events) to `self`; completed calls of the
    /// joint go to `top` under `tid`, `later`'s own longest calls too (renamed `tid`).
    fn append(&mut self, later: Seg, o: &SyscallOptions, top: &mut Sink<Long>, tid: i32) {
        match later.first {
            First::Nothing => return,
            First::Exit(ts, ret) => {
                if let Some((call, t0)) = self.pending.take() {
                    self.complete(o, top, tid, call, (t0, ts), ret);
                }
            }
            First::Entry => {}
        }
        if self.first == First::Nothing {
            self.first = later.first;
        }
        self.pending = later.pending;
        for (c, acc) in later.calls {
            match self.calls.iter_mut().find(|(x, _)| *x == c) {
                Some((_, a)) => {
                    a.d.merge(&acc.d);
                    a.rets.merge(&acc.rets);
                }
                None => self.calls.push((c, acc)),
            }
        }
        let mut t = later.top;
        t.map_in_place(|l| l.tid = std::cmp::Reverse(tid));
        top.merge(t);
    }
}

impl Syscall {
    /// Prepares the syscall analysis for `set`.
    pub fn new(set: &TraceSet, opts: SyscallOptions) -> Syscall {
        let io = opts.files.then(|| Io::new(set, opts.head).with_ends(true));
        Syscall { layout: Layout::new(set), opts, streams: set.streams.len(), filter: Filter::default(), io }
    }

    /// Counts only what `filter` selects (see the module documentation).
    pub fn with_filter(mut self, filter: Filter) -> Self {
        self.filter = filter;
        self
    }

    /// The name of call `c`.
    fn name(&self, c: CallId) -> String {
        call_name(&self.layout.names, c)
    }

    /// The entry of `call` (`Some`) or the exit returning `exit_ret`, at `ts`, of the
    /// task running on `stream`.
    #[inline(always)]
    fn step(&self, st: &mut SyscallState, stream: usize, call: Option<CallId>, exit_ret: Option<i64>, ts: i64) {
        let SyscallState { streams, running, threads, top, .. } = st;
        let Some(s) = streams.get_mut(stream) else { return };
        match running.running(stream) {
            None => {
                // A head segment keeps its own longest calls (its thread is unknown).
                let mut t = std::mem::take(&mut s.head.top);
                s.head.step(&self.opts, &mut t, 0, call, exit_ret, ts);
                s.head.top = t;
            }
            Some(0) => {}
            Some(tid) => threads.entry(tid).or_default().step(&self.opts, top, tid, call, exit_ret, ts),
        }
    }

    /// Appends `seg` to thread `tid`'s segment of `st` (tid 0, the idle task: dropped).
    fn give(&self, threads: &mut FxMap<i32, Seg>, top: &mut Sink<Long>, tid: i32, seg: Seg) {
        if tid == 0 {
            return;
        }
        threads.entry(tid).or_default().append(seg, &self.opts, top, tid);
    }

    /// [`Syscall::forget_files`] when the calls ended on an fd that `st` keeps are more
    /// than twice as many as it kept after the last time (and than a few thousand), so
    /// that the work is linear in the calls (checked at every exit when folding in
    /// place: the complete state is then merged with nothing).
    #[inline(always)]
    fn forget_files_when_many(&self, st: &mut SyscallState) {
        let Some(io) = &self.io else { return };
        let o = &self.opts.lat;
        let floor = 4096 + 2 * o.top * (1 + self.streams);
        if o.keep_all || io.ends_kept(&st.files) <= st.forget_at.max(floor) {
            return;
        }
        self.forget_files(st);
        st.forget_at = 2 * io.ends_kept(&st.files);
    }

    /// In a state `st` of a prefix of the trace (whose io replay has run), forgets the
    /// calls ended on an fd that are no longer among the longest (a call once out of
    /// them never comes back: those of later chunks are only longer), when they are
    /// many: each longest call is known by its thread and exit time, those of streams
    /// whose thread is not known yet (tid 0) by their exit time; each thread's first
    /// exit is kept too (it may complete a head's pending call in `finish`).
    fn forget_files(&self, st: &mut SyscallState) {
        let Some(io) = &self.io else { return };
        let mut known: FxSet<(i32, i64)> = FxSet::default();
        let mut head_ends: FxSet<i64> = FxSet::default();
        for l in st.top.top.iter() {
            known.insert((l.tid.0, l.end));
        }
        for s in &st.streams {
            head_ends.extend(s.head.top.top.iter().map(|l| l.end));
        }
        // A thread's first exit may still complete the call a stream's head left
        // pending (joined in `finish`).
        for (tid, seg) in &st.threads {
            if let First::Exit(ts, _) = seg.first {
                known.insert((*tid, ts));
            }
        }
        io.retain_ends(&mut st.files, |tid, at| known.contains(&(tid, at)) || head_ends.contains(&at));
    }
}

/// [`Label`] bit of a raw `sys_enter` (`[id]` copied), above io's bits.
const RAW_ENTRY: u32 = 1 << 15;
/// Where an entry's label holds its [`CallId`] + 1.
const CALL_SHIFT: u32 = 16;

/// The copy request of class `c`: io's ([`Label::request`]: this analysis reads the
/// same fields, and with files io reads them from the same copy), with an entry's call
/// name in the label's high bits (io reads the low 16), a raw entry's number copied;
/// `None` where io's fast path takes no copy, or for a name past the label's room.
fn request(c: &EvClass) -> Option<CopyRequest> {
    let mut r = Label::request(&c.kind)?;
    match c.kind {
        // (`on_event` reads an absent return value as 0, a copy as -1.)
        Kind::Exit { ret: None, .. } | Kind::RawExit { ret: None, .. } => return None,
        Kind::RawEntry { id } => {
            r.label |= RAW_ENTRY;
            r.fields = vec![Some(id)];
        }
        Kind::Entry { .. } | Kind::OtherEntry => {
            if c.name >= (u32::MAX >> CALL_SHIFT) {
                return None;
            }
            r.label |= (c.name + 1) << CALL_SHIFT;
        }
        _ => {}
    }
    Some(r)
}

/// A hash set of the kernel model's hasher.
type FxSet<K> = std::collections::HashSet<K, std::hash::BuildHasherDefault<kernel::model::FxHasher>>;

/// Per-call statistics of the result.
/// (Fields in alphabetical order: see [`crate::output::write_json`].)
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct CallRow {
    /// Durations.
    pub latency: DurationRow,
    /// Syscall name (`read`, `openat` …).
    pub name: String,
    /// Return values: `success` (≥ 0) and each error by name (`ENOENT` …).
    pub returns: BTreeMap<String, u64>,
}

/// One thread or process of the result.
/// (Fields in alphabetical order: see [`crate::output::write_json`].)
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct SyscallOwnerRow {
    /// Per syscall, by decreasing count then name.
    pub calls: Vec<CallRow>,
    /// Command name.
    pub comm: String,
    /// Calls in all.
    pub count: u64,
    /// Process id, when known.
    pub pid: Option<i32>,
    /// Thread id (`None` for a process row).
    pub tid: Option<i32>,
}

/// One of the longest calls.
/// (Fields in alphabetical order: see [`crate::output::write_json`].)
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct LongCallRow {
    /// Entry, ns from origin.
    pub begin_ns: i64,
    /// Command name of the thread.
    pub comm: String,
    /// Duration, ns.
    pub duration_ns: u64,
    /// Exit, ns from origin.
    pub end_ns: i64,
    /// The fd it worked on (its fd argument, or the fd an open returned), when it
    /// worked on one that the kernel model follows.
    pub fd: Option<i32>,
    /// Syscall name.
    pub name: String,
    /// A call from one fd to another (sendfile, splice, tee, copy_file_range): the fd
    /// written (`fd` is the fd read).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub out_fd: Option<i32>,
    /// The file `out_fd` named, when known.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub out_path: Option<String>,
    /// The file that fd named (the path an open named), when known.
    pub path: Option<String>,
    /// Process id of the thread, when known (as in the per-thread table).
    pub pid: Option<i32>,
    /// Return value.
    pub ret: i64,
    /// Thread id.
    pub tid: i32,
}

/// Result of [`Syscall`].
/// (Fields in alphabetical order: see [`crate::output::write_json`].)
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct SyscallReport {
    /// Always `"syscall"`.
    pub analysis: &'static str,
    /// First event timestamp.
    pub begin_ns: Option<i64>,
    /// Calls in all.
    pub count: u64,
    /// Last event timestamp.
    pub end_ns: Option<i64>,
    /// Latency histogram (`--freq`; else empty).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub freq: Vec<Bucket>,
    /// Every call, by entry time (`--log`; else empty).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub log: Vec<LongCallRow>,
    /// The longest calls, longest first.
    pub longest: Vec<LongCallRow>,
    /// Per process (pid, or the tid when unknown), by decreasing count then pid.
    pub processes: Vec<SyscallOwnerRow>,
    /// Per thread, by decreasing count then tid.
    pub threads: Vec<SyscallOwnerRow>,
}

impl Analysis for Syscall {
    type State = SyscallState;
    type Output = SyscallReport;

    fn new_state(&self) -> SyscallState {
        let o = &self.opts.lat;
        SyscallState {
            streams: (0..self.streams).map(|_| StreamSeg { head: Seg::new(o) }).collect(),
            running: Running::new(self.streams),
            top: Sink::new(o),
            files: self.io.as_ref().map(|io| io.new_state()).unwrap_or_default(),
            ..Default::default()
        }
    }

    fn on_event(&self, st: &mut SyscallState, ev: &EventRef<'_, '_>, ctx: &Ctx) {
        if let Some(io) = &self.io {
            io.on_event(&mut st.files, ev, ctx);
        }
        st.span.see(ev.ts());
        let Some(c) = self.layout.class(ev) else { return };
        let Some(ts) = ev.ts() else { return };
        let v = (ctx.order, ctx.stream);
        let (call, exit_ret) = match c.kind {
            Kind::Switch { prev_tid, next_tid, prev_comm, next_comm } => {
                let (Some(prev), Some(next)) = (ev.int(prev_tid), ev.int(next_tid)) else { return };
                let (prev, next) = (prev as i32, next as i32);
                st.info.switch(ev, [(prev, prev_comm), (next, next_comm)], v);
                st.running.switched(ctx.stream, prev, next);
                return;
            }
            Kind::Entry { .. } | Kind::OtherEntry | Kind::UnknownEntry { .. } => (Some(c.name), None),
            Kind::RawEntry { id } => (Some(raw_call(ev.uint(id).unwrap_or(0))), None),
            // (As lttng-syscallstats, a call counts when its exit is on a selected CPU;
            // an exit dropped leaves its entry pending, forgotten at the next entry.)
            Kind::Exit { .. } | Kind::RawExit { .. } if !self.filter.on_cpu(&self.layout, ev, ctx.stream) => return,
            Kind::Exit { ret, .. } | Kind::RawExit { ret, .. } => (None, Some(ret.and_then(|h| ev.int(h)).unwrap_or(0))),
            // (Read for the io replay only.)
            Kind::FdDump { .. } => return,
            _ => return st.info.on_event(ev, c, v),
        };
        self.step(st, ctx.stream, call, exit_ret, ts);
        if exit_ret.is_some() {
            self.forget_files_when_many(st);
        }
    }

    fn merge(&self, mut a: SyscallState, b: SyscallState) -> SyscallState {
        a.info = std::mem::take(&mut a.info).merge(b.info);
        let mut top = std::mem::take(&mut a.top);
        for (k, (sa, sb)) in a.streams.iter_mut().zip(b.streams).enumerate() {
            match a.running.running(k) {
                Some(t) => self.give(&mut a.threads, &mut top, t, sb.head),
                None => {
                    // No switch in `a` either: `b`'s head is the same task's.
                    let mut t = std::mem::take(&mut sa.head.top);
                    sa.head.append(sb.head, &self.opts, &mut t, 0);
                    sa.head.top = t;
                }
            }
        }
        a.running.append(&b.running);
        for (t, seg) in b.threads {
            self.give(&mut a.threads, &mut top, t, seg);
        }
        top.merge(b.top);
        a.top = top;
        a.span = a.span.merge(b.span);
        if let Some(io) = &self.io {
            a.files = io.merge(std::mem::take(&mut a.files), b.files);
            self.forget_files_when_many(&mut a);
        }
        a
    }

    fn finish(&self, mut st: SyscallState) -> SyscallReport {
        let mut top = std::mem::take(&mut st.top);
        if self.opts.head == HeadPolicy::FromStart {
            for (k, s) in std::mem::take(&mut st.streams).into_iter().enumerate() {
                let Some(t) = st.running.first_prev(k).filter(|t| *t != 0) else { continue };
                // The head's events come before every other event of the thread.
                let mut seg = s.head;
                let later = st.threads.remove(&t).unwrap_or_default();
                let mut ht = std::mem::take(&mut seg.top);
                ht.map_in_place(|l| l.tid = std::cmp::Reverse(t));
                top.merge(ht);
                seg.append(later, &self.opts, &mut top, t);
                st.threads.insert(t, seg);
            }
        }
        let row = |calls: &[(CallId, CallAcc)]| {
            let mut by_name: BTreeMap<String, CallAcc> = BTreeMap::new();
            for (c, acc) in calls {
                let e = by_name.entry(self.name(*c)).or_default();
                e.d.merge(&acc.d);
                e.rets.merge(&acc.rets);
            }
            let mut rows: Vec<CallRow> = by_name
                .into_iter()
                .map(|(name, acc)| {
                    let mut returns = BTreeMap::new();
                    for (r, n) in acc.rets.iter() {
                        *returns.entry(return_key(r)).or_insert(0) += n;
                    }
                    CallRow { latency: acc.d.row(), name, returns }
                })
                .collect();
            rows.sort_by(|x, y| y.latency.count.cmp(&x.latency.count).then_with(|| x.name.cmp(&y.name)));
            rows
        };
        let selected = |tid: i32| {
            let (pid, comm) = st.info.pid_and_comm(tid);
            self.filter.thread(tid, pid, comm)
        };
        if self.filter.selects_threads() {
            top.retain(|l| selected(l.tid.0));
        }
        let mut threads = Vec::new();
        let mut procs: BTreeMap<i32, Vec<(CallId, CallAcc)>> = BTreeMap::new();
        for (tid, seg) in &st.threads {
            if seg.calls.is_empty() || !selected(*tid) {
                continue;
            }
            let (pid, comm) = st.info.pid_and_comm(*tid);
            procs.entry(pid.unwrap_or(*tid)).or_default().extend(seg.calls.iter().cloned());
            let calls = row(&seg.calls);
            let count = calls.iter().map(|c| c.latency.count).sum();
            threads.push(SyscallOwnerRow { calls, comm: comm.to_string(), count, pid, tid: Some(*tid) });
        }
        threads.sort_by(|x, y| y.count.cmp(&x.count).then(x.tid.cmp(&y.tid)));
        let mut processes: Vec<SyscallOwnerRow> = procs
            .into_iter()
            .map(|(pid, calls)| {
                let calls = row(&calls);
                let count = calls.iter().map(|c| c.latency.count).sum();
                SyscallOwnerRow { calls, comm: st.info.comm_of(pid).to_string(), count, pid: Some(pid), tid: None }
            })
            .collect();
        processes.sort_by(|x, y| y.count.cmp(&x.count).then(x.pid.cmp(&y.pid)));
        let (longest, all) = top.finish(|l| (l.begin.0, l.tid.0, l.call.0, l.dur, l.ret));
        // The files of the calls listed only.
        let listed: FxSet<(i32, i64)> = longest.iter().chain(&all).map(|l| (l.tid.0, l.end)).collect();
        let files = self.io.as_ref().map(|io| io.call_files(std::mem::take(&mut st.files), |tid, at| listed.contains(&(tid, at)))).unwrap_or_default();
        let call_row = |l: Long| {
            let (pid, comm) = st.info.pid_and_comm(l.tid.0);
            let f = files.get(&(l.tid.0, l.end));
            let (out_fd, out_path) = f.and_then(|f| f.out.clone()).map_or((None, None), |(fd, p)| (Some(fd), p));
            LongCallRow {
                begin_ns: l.begin.0,
                comm: comm.to_string(),
                duration_ns: l.dur,
                end_ns: l.begin.0 + l.dur as i64,
                fd: f.map(|f| f.fd),
                name: self.name(l.call.0),
                out_fd,
                out_path,
                path: f.and_then(|f| f.path.clone()),
                pid,
                ret: l.ret,
                tid: l.tid.0,
            }
        };
        let longest = longest.into_iter().map(call_row).collect();
        let log = all.into_iter().map(call_row).collect();
        let count = threads.iter().map(|t| t.count).sum();
        SyscallReport { analysis: "syscall", begin_ns: st.span.begin(), count, end_ns: st.span.end(), freq: Vec::new(), log, longest, processes, threads }
    }
}

impl Selective for Syscall {
    fn interest(&self, trace: usize, stream_class: u64) -> Option<Vec<bool>> {
        if let Some(io) = &self.io {
            // (It reads every event this analysis reads, and the statedump's fds.)
            return io.interest(trace, stream_class);
        }
        self.layout.mask(trace, stream_class, |k| !matches!(k, Kind::Other | Kind::Migrate { .. } | Kind::FdDump { .. }))
    }

    fn copies(&self, trace: usize, stream_class: u64) -> Option<Vec<Option<CopyRequest>>> {
        if !self.filter.cpus.is_empty() {
            // (Copied fields do not say the CPU, which the filter reads.)
            return None;
        }
        Some(self.layout.stream_classes(trace, stream_class)?.iter().map(request).collect())
    }

    #[inline(always)]
    fn on_copied(&self, st: &mut SyscallState, c: &Copied<'_>, ts: i64, ctx: &Ctx) -> bool {
        if let Some(io) = &self.io {
            // (io reads the same fields, under the same label's low bits: see `request`.)
            if !io.on_copied(&mut st.files, c, ts, ctx) {
                return false;
            }
        }
        let label = c.label();
        let (call, exit_ret) = if label == Label::SWITCH {
            let ([p, n], _) = st.info.switch_copied(c, (ctx.order, ctx.stream));
            st.running.switched(ctx.stream, p, n);
            return true;
        } else if label & Label::EXIT != 0 {
            (None, Some(c.get(0) as i64))
        } else if label & RAW_ENTRY != 0 {
            (Some(raw_call(c.get(0))), None)
        } else if label & Label::RAW_EXIT != 0 {
            (None, Some(c.get(1) as i64))
        } else {
            // An entry: its call's name is in the high bits.
            (Some((label >> CALL_SHIFT) - 1), None)
        };
        self.step(st, ctx.stream, call, exit_ret, ts);
        if exit_ret.is_some() {
            self.forget_files_when_many(st);
        }
        true
    }

    fn on_skipped(&self, st: &mut SyscallState, first: i64, last: i64) {
        st.span.see_range(first, last);
    }

    fn on_copied_span(&self, st: &mut SyscallState, first: i64, last: i64) {
        st.span.see_range(first, last);
    }
}

impl Tally for Syscall {}

impl ChunkPolicy for Syscall {
    fn initial_state(&self) -> SyscallState {
        SyscallState { files: self.io.as_ref().map(|io| io.initial_state()).unwrap_or_default(), ..self.new_state() }
    }

    fn reserve(&self, st: &mut SyscallState, bytes: u64) {
        if let Some(io) = &self.io {
            io.reserve(&mut st.files, bytes);
        }
    }

    fn max_auto_slice_bytes(&self) -> u64 {
        self.io.as_ref().map_or(u64::MAX, |io| io.max_auto_slice_bytes())
    }

    /// The state of everything before a slice takes its events as a fresh state
    /// would, then merged into it: a stream's events before its first switch go to
    /// its head segment in both, and a thread's calls to its segment (io folds in
    /// place too: it then replays at once, no chunk log).
    fn folds_in_place(&self) -> bool {
        true
    }
}
