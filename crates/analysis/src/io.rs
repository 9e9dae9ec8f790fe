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

use std::collections::BTreeMap;
use std::sync::Arc;

use ctf::stream::EventRef;
use ctf::trace::TraceSet;
use engine::{Analysis, Ctx};
use serde::Serialize;

use crate::cpu::HeadPolicy;
use crate::fdtable::{Call, FdTables, PendingCall};
use crate::kernel::{i32_of, Kind, Layout, Sc, O_CLOEXEC};
use crate::model::{FxMap, Info, Span};

/// Who issued a syscall.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Who {
    /// A known thread.
    Tid(i32),
    /// The task running on this stream when the chunk began.
    Head(u32),
}

/// One interpreted-later record of the I/O log.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Rec {
    /// A syscall entry we understand.
    Entry { who: Who, sc: Sc, a0: i64, a1: i64, a2: i64, path: Option<Arc<str>> },
    /// Entry of another syscall (forgets a pending entry).
    OtherEntry { who: Who },
    /// A syscall exit (`sc: None` = generic exit).
    Exit { who: Who, sc: Option<Sc>, ret: i64 },
    /// A thread was created.
    Fork { parent_tid: Option<i32>, parent_pid: Option<i32>, child_tid: i32, child_pid: Option<i32> },
    /// A thread executed a program.
    Exec { tid: i32 },
    /// Statedump: thread → process.
    ProcState { tid: i32, pid: i32 },
    /// Statedump: an open fd.
    FdDump { pid: i32, fd: i32, path: Arc<str>, cloexec: bool },
}

/// A record of a chunk's log: a [`Rec`], or a read/write entry and its exit joined.
#[derive(Debug, Clone, PartialEq, Eq)]
enum LRec {
    R(Rec),
    /// `Entry { who: Tid(t), sc, a0: fd }` immediately followed (for thread `t`) by its
    /// matching `Exit { ret }`: replayed at the entry's place (the file is looked up
    /// there, as the entry would; bytes are sums, so crediting them early is exact).
    Rw { t: i32, sc: Sc, fd: i64, ret: i64 },
}

/// What a chunk knows of a thread's pending syscall in the replay, from its own log
/// (valid only while no `Who::Head` record intervenes: such a record may name any
/// thread).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Pend {
    /// None pending: another `OtherEntry` or `Exit` of the thread is a no-op.
    Nothing,
    /// A read/write entry at this log index, not yet exited.
    Rw(usize),
}

/// The id of path `p` in `paths` (added with zero bytes if new).
fn intern_in(paths: &mut Vec<(Arc<str>, u64, u64)>, path_ids: &mut FxMap<Arc<str>, u32>, p: Arc<str>) -> u32 {
    let n = paths.len() as u32;
    let i = *path_ids.entry(p.clone()).or_insert(n);
    if i == n {
        paths.push((p, 0, 0));
    }
    i
}

/// What the replay knows of one thread.
#[derive(Debug, Clone, Default)]
struct ThreadSlot {
    pid: Option<i32>,
    pending: Option<PendingCall>,
    /// Bytes read and written.
    bytes: (u64, u64),
    /// Whether bytes were credited (a read or write exit with `ret > 0`).
    io: bool,
}

/// The interpreted state of a complete prefix of the trace. Threads live in a dense
/// table (one hash look-up per record), paths are interned so that per-file totals are
/// a vector index.
#[derive(Debug, Clone, Default)]
struct Replay {
    tids: FxMap<i32, u32>,
    slots: Vec<ThreadSlot>,
    /// Fd tables; files are indexes into `paths`.
    fds: FdTables,
    path_ids: FxMap<Arc<str>, u32>,
    /// Interned paths with their bytes read and written.
    paths: Vec<(Arc<str>, u64, u64)>,
}

impl Replay {
    #[inline]
    fn slot(&mut self, tid: i32) -> usize {
        let n = self.slots.len() as u32;
        let i = *self.tids.entry(tid).or_insert(n);
        if i == n {
            self.slots.push(ThreadSlot::default());
        }
        i as usize
    }

    fn intern(&mut self, p: Arc<str>) -> u32 {
        intern_in(&mut self.paths, &mut self.path_ids, p)
    }

    fn key(&self, tid: i32) -> i32 {
        self.tids.get(&tid).and_then(|&i| self.slots[i as usize].pid).unwrap_or(tid)
    }

    #[inline(always)]
    fn apply_l(&mut self, r: LRec) {
        match r {
            LRec::R(r) => self.apply(r),
            LRec::Rw { t, sc, fd, ret } => {
                let i = self.slot(t);
                let pid = self.slots[i].pid.unwrap_or(t);
                let file = self.fds.file(pid, fd);
                let slot = &mut self.slots[i];
                slot.pending = None;
                if ret > 0 {
                    let n = ret as u64;
                    let read = sc == Sc::Read;
                    slot.io = true;
                    if read { slot.bytes.0 += n } else { slot.bytes.1 += n }
                    if let Some(f) = file {
                        let x = &mut self.paths[f as usize];
                        if read { x.1 += n } else { x.2 += n }
                    }
                }
            }
        }
    }

    fn apply(&mut self, r: Rec) {
        match r {
            Rec::Entry { who: Who::Tid(t), sc, a0, a1, a2, path } => {
                let i = self.slot(t);
                let pid = self.slots[i].pid.unwrap_or(t);
                let path = path.map(|p| self.intern(p));
                self.slots[i].pending = Some(self.fds.enter(pid, Call { sc, a0, a1, a2 }, path));
            }
            Rec::OtherEntry { who: Who::Tid(t) } => {
                if let Some(&i) = self.tids.get(&t) {
                    self.slots[i as usize].pending = None;
                }
            }
            Rec::Exit { who: Who::Tid(t), sc, ret } => {
                let Some(&i) = self.tids.get(&t) else { return };
                let slot = &mut self.slots[i as usize];
                let Some(e) = slot.pending.take() else { return };
                let pid = slot.pid.unwrap_or(t);
                let (paths, path_ids) = (&mut self.paths, &mut self.path_ids);
                let unknown = || intern_in(paths, path_ids, Arc::from("unknown"));
                if let Some(x) = self.fds.exit(pid, e, sc, ret, unknown) {
                    let slot = &mut self.slots[i as usize];
                    slot.io = true;
                    if x.read { slot.bytes.0 += x.bytes } else { slot.bytes.1 += x.bytes }
                    if let Some(f) = x.file {
                        let p = &mut self.paths[f as usize];
                        if x.read { p.1 += x.bytes } else { p.2 += x.bytes }
                    }
                }
            }
            Rec::Entry { who: Who::Head(_), .. } | Rec::OtherEntry { who: Who::Head(_) } | Rec::Exit { who: Who::Head(_), .. } => {}
            Rec::Fork { parent_tid, parent_pid, child_tid, child_pid } => {
                let child_pid = child_pid.unwrap_or(child_tid);
                let i = self.slot(child_tid);
                self.slots[i].pid = Some(child_pid);
                let parent = parent_pid.or_else(|| parent_tid.map(|t| self.key(t)));
                if let Some(parent) = parent {
                    self.fds.fork(parent, child_pid);
                }
            }
            Rec::Exec { tid } => {
                let pid = self.key(tid);
                self.fds.exec(pid);
            }
            Rec::ProcState { tid, pid } => {
                let i = self.slot(tid);
                self.slots[i].pid = Some(pid);
            }
            Rec::FdDump { pid, fd, path, cloexec } => {
                let file = self.intern(path);
                self.fds.insert(pid, fd, file, cloexec);
            }
        }
    }

    /// Per-thread `(tid, read, written)` of threads with I/O.
    fn threads(&self) -> impl Iterator<Item = (i32, u64, u64)> + '_ {
        self.tids.iter().map(|(&t, &i)| (t, &self.slots[i as usize])).filter(|(_, s)| s.io).map(|(t, s)| (t, s.bytes.0, s.bytes.1))
    }
}

/// Chunk state of [`Io`].
#[derive(Debug, Clone, Default)]
pub struct IoState {
    /// Starts at the trace's beginning: `replay` is meaningful and `log` empty.
    complete: bool,
    replay: Replay,
    log: Vec<LRec>,
    /// Chunk-local pairing state by tid (see [`Pend`]); not merged.
    pend: FxMap<i32, Pend>,
    /// Per stream: `(prev_tid of the first switch, next_tid of the last switch)`.
    cur: Vec<(Option<i32>, Option<i32>)>,
    info: Info,
    span: Span,
}

/// The io analysis.
pub struct Io {
    layout: Layout,
    streams: usize,
    head: HeadPolicy,
}

impl Io {
    /// Prepares the io analysis for `set`.
    pub fn new(set: &TraceSet, head: HeadPolicy) -> Io {
        Io { layout: Layout::new(set), streams: set.streams.len(), head }
    }

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
}

/// One thread of the result.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct ThreadIoRow {
    /// Thread id.
    pub tid: i32,
    /// Process id, when known.
    pub pid: Option<i32>,
    /// Latest command name.
    pub comm: String,
    /// Bytes read.
    pub read_bytes: u64,
    /// Bytes written.
    pub write_bytes: u64,
}

/// One process of the result.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct ProcessIoRow {
    /// Process id (the tid when unknown).
    pub pid: i32,
    /// Name of its main thread (or of any thread).
    pub comm: String,
    /// Bytes read.
    pub read_bytes: u64,
    /// Bytes written.
    pub write_bytes: u64,
}

/// One file of the result.
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
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct IoReport {
    /// Always `"io"`.
    pub analysis: &'static str,
    /// First event timestamp.
    pub begin_ns: Option<i64>,
    /// Last event timestamp.
    pub end_ns: Option<i64>,
    /// Threads with I/O, by decreasing total bytes then tid.
    pub threads: Vec<ThreadIoRow>,
    /// Processes with I/O, same order.
    pub processes: Vec<ProcessIoRow>,
    /// Files with I/O (fds of unknown path are not listed), same order.
    pub files: Vec<FileIoRow>,
}

impl Io {
    /// Replays resolved records into the complete state `a`, in order, up to the first
    /// one still naming the unknown task of a stream that has not switched yet (with
    /// [`HeadPolicy::FromStart`] a later switch will name it); that record and all
    /// after it are held back in `a.log`, so that order is kept.
    fn replay_in_order(&self, a: &mut IoState, records: impl Iterator<Item = LRec>) {
        let may_wait = self.head == HeadPolicy::FromStart;
        let mut records = records;
        if a.log.is_empty() {
            for r in records.by_ref() {
                if may_wait && matches!(r, LRec::R(Rec::Entry { who: Who::Head(_), .. } | Rec::OtherEntry { who: Who::Head(_) } | Rec::Exit { who: Who::Head(_), .. })) {
                    a.log.push(r);
                    break;
                }
                a.replay.apply_l(r);
            }
        }
        a.log.extend(records);
    }
}

impl Analysis for Io {
    type State = IoState;
    type Output = IoReport;

    fn new_state(&self) -> IoState {
        IoState { cur: vec![(None, None); self.streams], ..Default::default() }
    }

    fn interest(&self, trace: usize, stream_class: u64) -> Option<Vec<bool>> {
        self.layout.mask(trace, stream_class, |k| !matches!(k, Kind::Other | Kind::Migrate { .. }))
    }

    fn on_skipped(&self, st: &mut IoState, first: i64, last: i64) {
        st.span.see_range(first, last);
    }

    fn initial_state(&self) -> IoState {
        IoState { complete: true, ..self.new_state() }
    }

    #[inline]
    fn on_event(&self, st: &mut IoState, ev: &EventRef<'_, '_>, ctx: &Ctx) {
        st.span.see(ev.ts());
        let Some(c) = self.layout.class(ev) else { return };
        let who = || match st.cur.get(ctx.stream).and_then(|c| c.1) {
            Some(t) => Who::Tid(t),
            None => Who::Head(ctx.stream as u32),
        };
        let g = |h: Option<ctf::plan::FieldHandle>| h.and_then(|h| ev.int(h)).unwrap_or(-1);
        let rec = match c.kind {
            Kind::Other | Kind::Migrate { .. } => return,
            Kind::Switch { prev_tid, next_tid, .. } => {
                st.info.on_event(ev, c, (ctx.order, ctx.stream));
                if let (Some(p), Some(n), Some(cur)) = (ev.int(prev_tid), ev.int(next_tid), st.cur.get_mut(ctx.stream)) {
                    if cur.1.is_none() && cur.0.is_none() {
                        cur.0 = Some(p as i32);
                    }
                    cur.1 = Some(n as i32);
                }
                return;
            }
            Kind::Entry { sc, a0, a1, a2, path } => {
                let path = path.and_then(|h| ev.bytes(h)).map(|b| Arc::from(String::from_utf8_lossy(b).as_ref()));
                Rec::Entry { who: who(), sc, a0: g(a0), a1: g(a1), a2: g(a2), path }
            }
            Kind::OtherEntry => Rec::OtherEntry { who: who() },
            Kind::RawEntry { id } => match ev.uint(id).and_then(Sc::from_x86_64) {
                // Arguments of raw entries are not decoded: only the pairing is kept.
                Some(_) | None => Rec::OtherEntry { who: who() },
            },
            Kind::Exit { sc, ret } => Rec::Exit { who: who(), sc, ret: g(ret) },
            Kind::RawExit { id, ret } => Rec::Exit { who: who(), sc: ev.uint(id).and_then(Sc::from_x86_64), ret: g(ret) },
            Kind::Fork { parent_tid, parent_pid, child_tid, child_pid, .. } => {
                st.info.on_event(ev, c, (ctx.order, ctx.stream));
                let Some(child_tid) = i32_of(ev, Some(child_tid)) else { return };
                Rec::Fork { parent_tid: i32_of(ev, parent_tid), parent_pid: i32_of(ev, parent_pid), child_tid, child_pid: i32_of(ev, child_pid) }
            }
            Kind::Exec { tid, .. } => {
                st.info.on_event(ev, c, (ctx.order, ctx.stream));
                let t = i32_of(ev, tid).or(match who() {
                    Who::Tid(t) => Some(t),
                    Who::Head(_) => None,
                });
                match t {
                    Some(tid) => Rec::Exec { tid },
                    None => return,
                }
            }
            Kind::ProcState { tid, pid, .. } => {
                st.info.on_event(ev, c, (ctx.order, ctx.stream));
                match (i32_of(ev, Some(tid)), i32_of(ev, pid)) {
                    (Some(tid), Some(pid)) => Rec::ProcState { tid, pid },
                    _ => return,
                }
            }
            Kind::FdDump { pid, fd, filename, flags } => {
                let (Some(pid), Some(fd)) = (i32_of(ev, Some(pid)), i32_of(ev, Some(fd))) else { return };
                let path = filename.and_then(|h| ev.bytes(h)).map(|b| Arc::from(String::from_utf8_lossy(b).as_ref())).unwrap_or_else(|| Arc::from("unknown"));
                Rec::FdDump { pid, fd, path, cloexec: g(flags) & O_CLOEXEC != 0 && g(flags) >= 0 }
            }
        };
        push(st, rec);
    }

    fn merge(&self, mut a: IoState, b: IoState) -> IoState {
        let complete = a.complete;
        let resolve = |r: LRec, earlier: &[(Option<i32>, Option<i32>)]| -> LRec {
            let w = |who| self.resolve(who, earlier, &b.cur, complete);
            match r {
                LRec::R(Rec::Entry { who, sc, a0, a1, a2, path }) => LRec::R(Rec::Entry { who: w(who), sc, a0, a1, a2, path }),
                LRec::R(Rec::OtherEntry { who }) => LRec::R(Rec::OtherEntry { who: w(who) }),
                LRec::R(Rec::Exit { who, sc, ret }) => LRec::R(Rec::Exit { who: w(who), sc, ret }),
                r => r,
            }
        };
        if complete {
            // Records held back by an earlier merge wait for the first switch of a
            // stream that had none yet (so `a.cur` knows no task there): `b` may name it.
            // (No earlier task is known for them: resolve against an empty `cur`.)
            let held = std::mem::take(&mut a.log).into_iter().map(|r| resolve(r, &[]));
            let earlier = a.cur.clone();
            let fresh = b.log.into_iter().map(|r| resolve(r, &earlier));
            self.replay_in_order(&mut a, held.chain(fresh));
        } else {
            a.log.extend(b.log.into_iter().map(|r| resolve(r, &a.cur)));
        }
        for (x, y) in a.cur.iter_mut().zip(&b.cur) {
            x.0 = x.0.or(y.0);
            x.1 = y.1.or(x.1);
        }
        a.info = a.info.merge(b.info);
        a.span = a.span.merge(b.span);
        a
    }

    fn finish(&self, st: IoState) -> IoReport {
        let mut st = if st.complete { st } else { self.merge(self.initial_state(), st) };
        // Held-back records whose stream never switched: their syscalls have no known
        // thread and are dropped, as a serial run drops them.
        for r in std::mem::take(&mut st.log) {
            st.replay.apply_l(r);
        }
        let info = &st.info;
        let mut threads: Vec<ThreadIoRow> = st
            .replay
            .threads()
            .map(|(tid, r, w)| ThreadIoRow { tid, pid: info.pid_of(tid), comm: info.comm_of(tid).to_string(), read_bytes: r, write_bytes: w })
            .collect();
        threads.sort_by(|x, y| (y.read_bytes + y.write_bytes).cmp(&(x.read_bytes + x.write_bytes)).then(x.tid.cmp(&y.tid)));
        let mut procs: BTreeMap<i32, (u64, u64)> = BTreeMap::new();
        for t in &threads {
            let p = procs.entry(t.pid.unwrap_or(t.tid)).or_default();
            p.0 += t.read_bytes;
            p.1 += t.write_bytes;
        }
        let mut processes: Vec<ProcessIoRow> = procs
            .into_iter()
            .map(|(pid, (r, w))| ProcessIoRow { pid, comm: info.comm_of(pid).to_string(), read_bytes: r, write_bytes: w })
            .collect();
        processes.sort_by(|x, y| (y.read_bytes + y.write_bytes).cmp(&(x.read_bytes + x.write_bytes)).then(x.pid.cmp(&y.pid)));
        let mut files: Vec<FileIoRow> =
            st.replay.paths.iter().filter(|p| p.1 + p.2 > 0).map(|(p, r, w)| FileIoRow { path: p.to_string(), read_bytes: *r, write_bytes: *w }).collect();
        files.sort_by(|x, y| (y.read_bytes + y.write_bytes).cmp(&(x.read_bytes + x.write_bytes)).then(x.path.cmp(&y.path)));
        IoReport { analysis: "io", begin_ns: st.span.begin, end_ns: st.span.end, threads, processes, files }
    }
}

/// Appends `rec` to the chunk's log, joining a read/write entry with its exit and
/// dropping records that are no-ops in any replay (see [`Pend`]).
fn push(st: &mut IoState, rec: Rec) {
    let who = match &rec {
        Rec::Entry { who, .. } | Rec::OtherEntry { who } | Rec::Exit { who, .. } => *who,
        _ => {
            st.log.push(LRec::R(rec));
            return;
        }
    };
    let t = match who {
        Who::Tid(t) => t,
        Who::Head(_) => {
            // May be any thread: forget everything known.
            st.pend.clear();
            st.log.push(LRec::R(rec));
            return;
        }
    };
    match rec {
        Rec::Entry { sc: Sc::Read | Sc::Write, .. } => {
            st.pend.insert(t, Pend::Rw(st.log.len()));
            st.log.push(LRec::R(rec));
        }
        Rec::Entry { .. } => {
            st.pend.remove(&t);
            st.log.push(LRec::R(rec));
        }
        Rec::OtherEntry { .. } => {
            if st.pend.insert(t, Pend::Nothing) != Some(Pend::Nothing) {
                st.log.push(LRec::R(rec));
            }
        }
        Rec::Exit { sc, ret, .. } => match st.pend.insert(t, Pend::Nothing) {
            Some(Pend::Nothing) => {}
            Some(Pend::Rw(i)) => {
                let joined = match &st.log[i] {
                    LRec::R(Rec::Entry { sc: esc, a0, .. }) if sc.map_or(true, |s| s == *esc) => Some(LRec::Rw { t, sc: *esc, fd: *a0, ret }),
                    _ => None,
                };
                match joined {
                    Some(j) => st.log[i] = j,
                    None => st.log.push(LRec::R(rec)),
                }
            }
            None => st.log.push(LRec::R(rec)),
        },
        _ => unreachable!("only syscall records reach here"),
    }
}
