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

use kernel::running::Running;
use std::collections::BTreeMap;

use ctf::stream::EventRef;
use ctf::trace::TraceSet;
use engine::{Analysis, Ctx};
use serde::Serialize;

use crate::cpu::HeadPolicy;
use crate::filter::Filter;
use crate::latency::{return_key, Bucket, DurationRow, Durations, LatencyOptions, Sink};
use kernel::latency::{call_name, raw_call, CallId};
use kernel::layout::{Kind, Layout};
use kernel::model::{FxMap, Info, Span};

/// Options of [`Syscall`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct SyscallOptions {
    /// Events before a CPU's first `sched_switch`.
    pub head: HeadPolicy,
    /// The longest listed, the filter, every call kept.
    pub lat: LatencyOptions,
}

/// The syscall analysis.
pub struct Syscall {
    layout: Layout,
    opts: SyscallOptions,
    streams: usize,
    filter: Filter,
}

/// Statistics of one call name of one thread.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
struct CallAcc {
    d: Durations,
    /// Return value → occurrences, with every value ≥ 0 (success) as 0: a read's byte
    /// counts would otherwise make one entry each.
    rets: BTreeMap<i64, u64>,
}

/// A completed call, ordered by duration (longest first), then earliest, then tid.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
struct Long {
    dur: u64,
    begin: std::cmp::Reverse<i64>,
    tid: std::cmp::Reverse<i32>,
    call: std::cmp::Reverse<CallId>,
    ret: i64,
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
        *acc.rets.entry(ret.min(0)).or_insert(0) += 1;
        top.offer(Long { dur, begin: std::cmp::Reverse(begin), tid: std::cmp::Reverse(tid), call: std::cmp::Reverse(call), ret });
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
                    for (r, n) in acc.rets {
                        *a.rets.entry(r).or_insert(0) += n;
                    }
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
        Syscall { layout: Layout::new(set), opts, streams: set.streams.len(), filter: Filter::default() }
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

    /// Appends `seg` to thread `tid`'s segment of `st` (tid 0, the idle task: dropped).
    fn give(&self, threads: &mut FxMap<i32, Seg>, top: &mut Sink<Long>, tid: i32, seg: Seg) {
        if tid == 0 {
            return;
        }
        threads.entry(tid).or_default().append(seg, &self.opts, top, tid);
    }
}

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
    /// Syscall name.
    pub name: String,
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

    fn interest(&self, trace: usize, stream_class: u64) -> Option<Vec<bool>> {
        self.layout.mask(trace, stream_class, |k| !matches!(k, Kind::Other | Kind::Migrate { .. } | Kind::FdDump { .. }))
    }

    fn on_skipped(&self, st: &mut SyscallState, first: i64, last: i64) {
        st.span.see_range(first, last);
    }

    fn on_copied_span(&self, st: &mut SyscallState, first: i64, last: i64) {
        st.span.see_range(first, last);
    }

    fn new_state(&self) -> SyscallState {
        let o = &self.opts.lat;
        SyscallState {
            streams: (0..self.streams).map(|_| StreamSeg { head: Seg::new(o) }).collect(),
            running: Running::new(self.streams),
            top: Sink::new(o),
            ..Default::default()
        }
    }

    fn on_event(&self, st: &mut SyscallState, ev: &EventRef<'_, '_>, ctx: &Ctx) {
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
            _ => return st.info.on_event(ev, c, v),
        };
        let SyscallState { streams, running, threads, top, .. } = st;
        let Some(s) = streams.get_mut(ctx.stream) else { return };
        match running.running(ctx.stream) {
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
                for (r, n) in &acc.rets {
                    *e.rets.entry(*r).or_insert(0) += n;
                }
            }
            let mut rows: Vec<CallRow> = by_name
                .into_iter()
                .map(|(name, acc)| {
                    let mut returns = BTreeMap::new();
                    for (r, n) in acc.rets {
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
        let call_row = |l: Long| {
            let (pid, comm) = st.info.pid_and_comm(l.tid.0);
            LongCallRow {
                begin_ns: l.begin.0,
                comm: comm.to_string(),
                duration_ns: l.dur,
                end_ns: l.begin.0 + l.dur as i64,
                name: self.name(l.call.0),
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

/// The `returns` map as lttng-analyses prints it: `{'success': N, 'EAGAIN': M}`.
fn returns_text(r: &BTreeMap<String, u64>) -> String {
    let parts: Vec<String> = r.iter().map(|(k, n)| format!("'{k}': {n}")).collect();
    format!("{{{}}}", parts.join(", "))
}

/// LAMI 1.0 results in the manner of `lttng-syscallstats-mi`: one per-tid table per
/// thread, then the total per thread, then the longest calls (`top-syscall`).
pub fn lami(r: &SyscallReport) -> Vec<serde_json::Value> {
    use serde_json::json;
    let tr = crate::output::range(r.begin_ns, r.end_ns);
    let dur = |v: f64| json!({"class":"duration","value":v});
    let mut out: Vec<serde_json::Value> = r
        .threads
        .iter()
        .map(|t| {
            let tid = t.tid.unwrap_or(0);
            let title = format!("System call statistics [{} ({}, TID: {tid})]", t.comm, t.pid.unwrap_or(tid));
            let data: Vec<_> = t
                .calls
                .iter()
                .map(|c| {
                    let l = &c.latency;
                    json!([{"class":"syscall","name":c.name},{"class":"number","value":l.count},dur(l.min_ns as f64),dur(l.mean_ns),dur(l.max_ns as f64),
                        l.stdev_ns.map_or(json!({"class":"unknown"}), dur),{"class":"string","value":returns_text(&c.returns)}])
                })
                .collect();
            json!({"class":{"inherit":"per-tid","title":title},"time-range":tr,"data":data})
        })
        .collect();
    let total: Vec<_> =
        r.threads.iter().map(|t| json!([{"class":"process","name":t.comm,"pid":t.pid,"tid":t.tid},{"class":"number","value":t.count}])).collect();
    out.push(json!({"class":"total","time-range":tr,"data":total}));
    // The longest calls, as lttng-iolatencytop-mi's `top-syscall` table (its size, path
    // and fd columns apart), with the return value.
    let top: Vec<_> = r
        .longest
        .iter()
        .map(|l| {
            json!([crate::output::range(Some(l.begin_ns), Some(l.end_ns)),dur(l.duration_ns as f64),{"class":"syscall","name":l.name},
                {"class":"process","name":l.comm,"pid":l.pid,"tid":l.tid},{"class":"number","value":l.ret}])
        })
        .collect();
    out.push(json!({"class":"top-syscall","time-range":tr,"data":top}));
    out
}

/// Readable tables in the manner of `lttng-syscallstats` (durations in µs), per thread
/// then per process, and the longest calls.
pub fn write_text(r: &SyscallReport, w: &mut impl std::fmt::Write) -> std::fmt::Result {
    let us = |ns: f64| ns / 1000.0;
    let owners = |w: &mut dyn std::fmt::Write, title: &str, rows: &[SyscallOwnerRow]| -> std::fmt::Result {
        writeln!(w, "{title} (usec)")?;
        for o in rows {
            let who = match o.tid {
                Some(t) => format!("{} ({}, TID: {t})", o.comm, o.pid.unwrap_or(t)),
                None => format!("{} (PID: {})", o.comm, o.pid.unwrap_or(0)),
            };
            writeln!(w, "{who:<40} {:>12} {:>14} {:>14} {:>14} {:>10}  Return values", "Count", "Min", "Average", "Max", "Stdev")?;
            for c in &o.calls {
                let l = &c.latency;
                let sd = l.stdev_ns.map_or("?".to_string(), |s| format!("{:.3}", us(s)));
                let name = format!(" - {}", c.name);
                writeln!(
                    w,
                    "{name:<40} {:>12} {:>14.3} {:>14.3} {:>14.3} {sd:>10}  {}",
                    l.count,
                    us(l.min_ns as f64),
                    us(l.mean_ns),
                    us(l.max_ns as f64),
                    returns_text(&c.returns)
                )?;
            }
            writeln!(w, "{:<40} {:>12}", "Total:", o.count)?;
            writeln!(w, "{}", "-".repeat(113))?;
        }
        Ok(())
    };
    owners(w, "Per-TID syscalls statistics", &r.threads)?;
    owners(w, "\nPer-process syscalls statistics", &r.processes)?;
    writeln!(w, "\nTotal syscalls: {}", r.count)?;
    for (title, rows) in [("Longest syscalls", &r.longest), ("Log", &r.log)] {
        if rows.is_empty() {
            continue;
        }
        writeln!(w, "\n{title} (usec)\n{:<20} {:<40} {:>14}  {:<20} {:>8}", "Begin (ns)", "Thread", "Duration", "Syscall", "Return")?;
        for l in rows.iter() {
            let who = format!("{} ({}, TID: {})", l.comm, l.pid.unwrap_or(l.tid), l.tid);
            writeln!(w, "{:<20} {who:<40} {:>14.3}  {:<20} {:>8}", l.begin_ns, us(l.duration_ns as f64), l.name, l.ret)?;
        }
    }
    crate::output::write_freq(w, &r.freq)
}
