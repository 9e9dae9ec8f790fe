//! `cpu`: busy time per CPU, CPU time per thread, migrations.
//!
//! A thread's history is split into *executions* (the kernel's [`Runs`]): intervals between a `sched_switch`
//! that switches it in on a CPU and the next `sched_switch` on that CPU. An execution
//! is local to one stream, so a thread migrating between CPUs is just several
//! executions, summed in any order; the engine therefore reads each stream of a chunk
//! in turn, without merging them by time ([`StreamOrder::PerStream`]). Segments are
//! kept per stream and summed per `cpu_id` at the end (one stream per CPU and channel
//! in LTTng kernel traces). A chunk knows, per CPU, its first switch (whose
//! previous task started before the chunk: unresolved) and its last one (whose next
//! task runs past the chunk); merging joins the earlier chunk's last switch with the
//! later chunk's first one on the same CPU.
//!
//! At the trace's ends (as lttng-analyses' cputop): a task still running at the end is
//! credited up to the last event of the trace. The task running on a CPU before that
//! CPU's first `sched_switch` (its `prev_tid`) is credited from the first event of the
//! trace when [`HeadPolicy::FromStart`] (the synthesizer's definition), not at all with
//! [`HeadPolicy::Ignore`] (lttng-analyses 0.6.1 behaviour).
//!
//! Filters ([`Filter`], as lttng-cputop's `--tid`, `--procname`, `--cpu`): with one,
//! every credit is also kept per (thread, stream), and `finish` sums only what the
//! selection did: a thread's time is its time on the selected CPUs, a CPU's busy time
//! that of the selected threads on it, and the total the mean over the selected CPUs
//! (lttng-cputop divides by every CPU of the trace instead: with `--cpu 1` on an
//! 8-CPU trace it reports an eighth of CPU 1's usage, which is no CPU's usage). Whether a
//! thread is selected needs its pid and latest name, known only once every chunk is
//! merged: the split keeps the decision to `finish`, so the result is the same at
//! any chunking. Migrations count when the `sched_migrate_task` event is on a
//! selected CPU (lttng-cputop's test of the event's `cpu_id`).

use std::collections::BTreeMap;
use std::ops::ControlFlow;

use ctf::stream::{Copied, CopyRequest, EventRef};
use ctf::trace::TraceSet;
use engine::{Analysis, ChunkPolicy, Ctx, Selective, StreamOrder, Tally};
use serde::Serialize;

use crate::filter::Filter;
use kernel::layout::{cpu_of, Kind, Layout, StateEncoding};
use kernel::model::{switch_request, FxMap, Info, Span};
use kernel::runs::Runs;

/// What to do with the time before a CPU's first `sched_switch`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum HeadPolicy {
    /// Credit the switched-out task from the trace's first event.
    #[default]
    FromStart,
    /// Credit nothing (lttng-analyses).
    Ignore,
}

/// The cpu analysis.
pub struct Cpu {
    layout: Layout,
    head: HeadPolicy,
    streams: usize,
    filter: Filter,
    /// List every execution ([`CpuReport::executions`]).
    executions: bool,
    /// By stream index: how its kernel writes `prev_state`.
    states: Vec<StateEncoding>,
}

/// With a filter, each thread's time per stream: `(slot, stream) → ns`.
type SplitTimes = FxMap<(u32, u32), u64>;

/// One execution (see [`Runs`]), as a chunk records it with [`Cpu::with_executions`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Execution {
    slot: u32,
    stream: u32,
    start: i64,
    end: i64,
    /// The `prev_state` of the switch that ended it (`None`: it runs to the end).
    end_state: Option<i64>,
}

/// What a credit also records, when asked: with a filter, the split of every credit per
/// thread and stream; with [`Cpu::with_executions`], every execution.
#[derive(Debug, Clone, Default)]
struct Records {
    split: Option<SplitTimes>,
    executions: Option<Vec<Execution>>,
}

/// Per-stream chunk state: the kernel's executions on the stream, and the busy time
/// they were credited.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
struct CpuSeg {
    runs: Runs,
    busy: u64,
}

/// Per-thread totals.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
struct ThreadAcc {
    cpu_ns: u64,
    migrations: u64,
    /// Whether the thread ran (was credited time) or migrated: it is then listed.
    listed: bool,
}

/// Chunk state of [`Cpu`].
#[derive(Debug, Clone, Default)]
pub struct CpuState {
    /// By stream index.
    cpus: Vec<CpuSeg>,
    /// Per thread, by its slot in `info` (shorter when the last slots have none yet).
    threads: Vec<ThreadAcc>,
    info: Info,
    span: Span,
    /// The split per thread and stream, and the executions, when asked.
    records: Records,
}

/// The totals of the thread in slot `i`.
#[inline(always)]
fn acc(threads: &mut Vec<ThreadAcc>, i: usize) -> &mut ThreadAcc {
    if i >= threads.len() {
        grow(threads, i + 1);
    }
    &mut threads[i]
}

/// Makes `threads` `n` long (new totals zero).
#[cold]
#[inline(never)]
fn grow(threads: &mut Vec<ThreadAcc>, n: usize) {
    threads.resize(n, ThreadAcc::default());
}

/// Where a stream's credits go: the threads' totals and, when asked, the split per
/// thread and stream (a filter) and every execution (`--log`).
struct Sink<'a> {
    threads: &'a mut Vec<ThreadAcc>,
    records: &'a mut Records,
    stream: u32,
}

impl Sink<'_> {
    /// Credits the execution of the thread in slot `i` from `start` to `end` (ns), left
    /// in state `end_state`, on the CPU whose busy time is `busy`.
    #[inline]
    fn credit(&mut self, busy: &mut u64, i: u32, start: i64, end: i64, end_state: Option<i64>) {
        let d = (end - start) as u64;
        *busy += d;
        let a = acc(self.threads, i as usize);
        a.cpu_ns += d;
        a.listed = true;
        if let Some(s) = self.records.split.as_mut() {
            *s.entry((i, self.stream)).or_default() += d;
        }
        if let Some(x) = self.records.executions.as_mut() {
            x.push(Execution { slot: i, stream: self.stream, start, end, end_state });
        }
    }
}

/// A `sched_switch` at `t` on the CPU of `seg` from `prev`, left in state `prev_state`,
/// to the thread in slot `next` (`None`: tid 0): [`Runs::switch`], its credits
/// accumulated.
#[inline(always)]
fn switched(mut sink: Sink<'_>, seg: &mut CpuSeg, t: i64, prev: i32, prev_state: Option<i64>, next: Option<usize>) {
    let CpuSeg { runs, busy } = seg;
    runs.switch(t, prev, prev_state, next, |i, a, b, s| sink.credit(busy, i, a, b, s));
}

/// [`CopyRequest::label`] of `sched_switch` classes (the only ones cpu copies fields of).
const SWITCH_LABEL: u32 = 0;

/// One CPU of the result.
/// (Fields in alphabetical order: see [`crate::output::write_json`].)
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct CpuRow {
    /// Non-idle time, ns.
    pub busy_ns: u64,
    /// `cpu_id`.
    pub cpu: u32,
    /// `busy_ns / (end_ns - begin_ns)`.
    pub usage: f64,
}

/// One thread of the result.
/// (Fields in alphabetical order: see [`crate::output::write_json`].)
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ThreadCpuRow {
    /// Latest command name.
    pub comm: String,
    /// CPU time, ns.
    pub cpu_ns: u64,
    /// `sched_migrate_task` events for this thread.
    pub migrations: u64,
    /// Process id, when known.
    pub pid: Option<i32>,
    /// Thread id.
    pub tid: i32,
    /// `cpu_ns / (end_ns - begin_ns)`.
    pub usage: f64,
}

/// One execution of a thread on a CPU: from the `sched_switch` that switched it in
/// to the next switch on that CPU (or the trace's ends).
/// (Fields in alphabetical order: see [`crate::output::write_json`].)
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct ExecutionRow {
    /// Start, ns.
    pub begin_ns: i64,
    /// The thread's latest command name.
    pub comm: String,
    /// `cpu_id`.
    pub cpu: u32,
    /// End, ns.
    pub end_ns: i64,
    /// The state the switch that ended it left the thread in, as `ps` letters (`S`
    /// sleeping, `D` waiting on I/O, `R+` preempted…: [`StateEncoding::name`]); `None`
    /// while it still ran at the trace's end.
    pub end_state: Option<String>,
    /// Process id, when known.
    pub pid: Option<i32>,
    /// Thread id.
    pub tid: i32,
}

/// Result of [`Cpu`] (its JSON form is the `cpu` output format).
/// (Fields in alphabetical order: see [`crate::output::write_json`].)
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct CpuReport {
    /// Always `"cpu"`.
    pub analysis: &'static str,
    /// First event timestamp.
    pub begin_ns: Option<i64>,
    /// Per CPU, by id.
    pub cpus: Vec<CpuRow>,
    /// Last event timestamp.
    pub end_ns: Option<i64>,
    /// Every execution, by start (`--log`; else empty).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub executions: Vec<ExecutionRow>,
    /// Per thread, by decreasing CPU time then tid.
    pub threads: Vec<ThreadCpuRow>,
    /// Mean usage over CPUs.
    pub total_usage: f64,
}

impl Cpu {
    /// Prepares the cpu analysis for `set`.
    pub fn new(set: &TraceSet, head: HeadPolicy) -> Cpu {
        let states = set
            .streams
            .iter()
            .map(|s| s.packets.first().map_or_else(StateEncoding::default, |p| StateEncoding::of_trace(&set.traces[p.trace as usize])))
            .collect();
        Cpu { layout: Layout::new(set), head, streams: set.streams.len(), filter: Filter::default(), executions: false, states }
    }

    /// Counts only what `filter` selects (see the module documentation).
    pub fn with_filter(mut self, filter: Filter) -> Cpu {
        self.filter = filter;
        self
    }

    /// Also lists every execution (`--log`; the `sched_slices` table of SQL).
    pub fn with_executions(mut self, on: bool) -> Cpu {
        self.executions = on;
        self
    }

    /// Per thread slot of `st`, whether the filter selects its thread (by its tid, pid
    /// and latest name, known once every chunk is merged).
    fn selected_slots(&self, st: &CpuState) -> Vec<bool> {
        let info = &st.info;
        (0..st.threads.len())
            .map(|i| {
                let (pid, comm) = info.pid_and_comm_of_slot(i);
                self.filter.thread(info.tid_of_slot(i), pid, comm)
            })
            .collect()
    }

    /// The rows of `executions`, recorded with the slots of `st`, on the selected CPUs,
    /// of the threads `named(slot)` selects (`(tid, pid, comm, selected)`), by start
    /// then CPU then tid. An execution on a stream whose CPU is unknown makes no row.
    fn execution_rows<'n>(&self, st: &CpuState, executions: &[Execution], named: impl Fn(usize) -> (i32, Option<i32>, &'n str, bool)) -> Vec<ExecutionRow> {
        let mut rows: Vec<ExecutionRow> = executions
            .iter()
            .filter_map(|x| {
                let cpu = st.cpus[x.stream as usize].runs.cpu?;
                let (tid, pid, comm, selected) = named(x.slot as usize);
                (self.filter.cpu(cpu) && selected).then(|| ExecutionRow {
                    begin_ns: x.start,
                    comm: comm.to_string(),
                    cpu,
                    end_ns: x.end,
                    end_state: x.end_state.map(|v| self.states[x.stream as usize].name(v)),
                    pid,
                    tid,
                })
            })
            .collect();
        rows.sort_unstable_by_key(|r| (r.begin_ns, r.cpu, r.tid));
        rows
    }

    /// Takes the executions out of `st`, the running state of a run (see
    /// [`engine::run_draining`]: every execution a state holds has ended), and gives
    /// `out` their rows, as [`Analysis::finish`] would list them: named and selected
    /// by `names`, the trace's final thread table
    /// ([`TraceEnd::threads`](crate::trace_end::TraceEnd::threads)), in
    /// pieces of at most `piece` rows, each by start then CPU. Executions on a stream
    /// whose CPU is not known yet stay in `st`. Stops at `out`'s `Break`.
    pub fn drain_executions(
        &self,
        st: &mut CpuState,
        names: &Info,
        piece: usize,
        out: &mut dyn FnMut(Vec<ExecutionRow>) -> ControlFlow<()>,
    ) -> ControlFlow<()> {
        let Some(held) = st.records.executions.take() else { return ControlFlow::Continue(()) };
        let (ready, unplaced): (Vec<Execution>, Vec<Execution>) = held.into_iter().partition(|x| st.cpus[x.stream as usize].runs.cpu.is_some());
        st.records.executions = Some(unplaced);
        let st: &CpuState = st;
        let named = |slot: usize| {
            let tid = st.info.tid_of_slot(slot);
            let (pid, comm) = names.pid_and_comm(tid);
            (tid, pid, comm, self.filter.thread(tid, pid, comm))
        };
        for part in ready.chunks(piece.max(1)) {
            let rows = self.execution_rows(st, part, named);
            if !rows.is_empty() {
                out(rows)?;
            }
        }
        ControlFlow::Continue(())
    }

    /// With a filter, from the split of every credit per thread and stream: a thread's
    /// time becomes its time on the selected CPUs (a thread not selected, or with
    /// neither time nor migrations left, is no longer listed), a selected CPU's busy
    /// time that of the selected threads.
    fn filtered(&self, st: &mut CpuState, selected: &[bool], split: &SplitTimes, cpus: &mut BTreeMap<u32, u64>) {
        st.threads.iter_mut().for_each(|a| a.cpu_ns = 0);
        cpus.values_mut().for_each(|b| *b = 0);
        for (&(i, s), &d) in split {
            let Some(cpu) = st.cpus[s as usize].runs.cpu else { continue };
            if !selected[i as usize] || !self.filter.cpu(cpu) {
                continue;
            }
            st.threads[i as usize].cpu_ns += d;
            if let Some(b) = cpus.get_mut(&cpu) {
                *b += d;
            }
        }
        for (a, &sel) in st.threads.iter_mut().zip(selected) {
            a.listed = sel && (a.cpu_ns > 0 || a.migrations > 0);
        }
    }
}

impl Analysis for Cpu {
    type State = CpuState;
    type Output = CpuReport;

    fn new_state(&self) -> CpuState {
        let records = Records { split: (!self.filter.is_empty()).then(SplitTimes::default), executions: self.executions.then(Vec::new) };
        CpuState { cpus: vec![CpuSeg::default(); self.streams], records, ..Default::default() }
    }

    // Kept out of line: measured on syn2m, 1 % fewer instructions for cpu (and 2 % for
    // io, through what LLVM then inlines of `Info`) than `#[inline]`.
    #[inline(never)]
    fn on_event(&self, st: &mut CpuState, ev: &EventRef<'_, '_>, ctx: &Ctx) {
        st.span.see(ev.ts());
        let Some(c) = self.layout.class(ev) else { return };
        match c.kind {
            Kind::Other | Kind::Entry { .. } | Kind::Exit { .. } | Kind::OtherEntry => {}
            Kind::Switch { prev_tid, next_tid, prev_comm, next_comm, prev_state } => {
                let (Some(t), Some(prev), Some(next)) = (ev.ts(), ev.int(prev_tid), ev.int(next_tid)) else { return };
                // (Read for the executions' rows only.)
                let prev_state = if self.executions { prev_state.and_then(|h| ev.int(h)) } else { None };
                let Some(seg) = st.cpus.get_mut(ctx.stream) else { return };
                let (prev, next) = (prev as i32, next as i32);
                if seg.runs.cpu.is_none() {
                    seg.runs.cpu = Some(cpu_of(ev, c, ctx.stream));
                }
                let [_, n] = st.info.switch(ev, [(prev, prev_comm), (next, next_comm)], (ctx.order, ctx.stream));
                switched(Sink { threads: &mut st.threads, records: &mut st.records, stream: ctx.stream as u32 }, seg, t, prev, prev_state, n);
            }
            Kind::Migrate { tid } => {
                if let Some(t) = ev.int(tid).filter(|t| *t != 0 && self.filter.cpu(cpu_of(ev, c, ctx.stream))) {
                    let a = acc(&mut st.threads, st.info.slot(t as i32));
                    a.migrations += 1;
                    a.listed = true;
                }
            }
            _ => st.info.on_event(ev, c, (ctx.order, ctx.stream)),
        }
    }

    fn merge(&self, mut a: CpuState, b: CpuState) -> CpuState {
        // `b`'s slots, renumbered as `a`'s.
        let (info, map) = std::mem::take(&mut a.info).merge_mapped(b.info);
        a.info = info;
        let remap = |i: u32| map[i as usize];
        for (s, (la, lb)) in a.cpus.iter_mut().zip(b.cpus).enumerate() {
            let CpuSeg { runs, busy } = la;
            let mut sink = Sink { threads: &mut a.threads, records: &mut a.records, stream: s as u32 };
            runs.append(lb.runs, remap, |i, s, e, state| sink.credit(busy, i, s, e, state));
            la.busy += lb.busy;
        }
        if let (Some(sa), Some(sb)) = (a.records.split.as_mut(), b.records.split) {
            for ((i, s), d) in sb {
                *sa.entry((map[i as usize], s)).or_default() += d;
            }
        }
        if let (Some(xa), Some(xb)) = (a.records.executions.as_mut(), b.records.executions) {
            xa.extend(xb.into_iter().map(|x| Execution { slot: map[x.slot as usize], ..x }));
        }
        for (i, x) in b.threads.into_iter().enumerate().filter(|(_, x)| x.listed) {
            let y = acc(&mut a.threads, map[i] as usize);
            y.cpu_ns += x.cpu_ns;
            y.migrations += x.migrations;
            y.listed = true;
        }
        a.span = a.span.merge(b.span);
        a
    }

    fn finish(&self, mut st: CpuState) -> CpuReport {
        let (begin, end) = (st.span.begin().unwrap_or(0), st.span.end().unwrap_or(0));
        let dur = (end - begin).max(0) as f64;
        let ratio = |n: u64| if dur > 0.0 { n as f64 / dur } else { 0.0 };
        let mut cpus = BTreeMap::new();
        for (s, seg) in st.cpus.iter_mut().enumerate() {
            let Some(cpu) = seg.runs.cpu else { continue };
            let CpuSeg { runs, busy } = seg;
            let info = &mut st.info;
            let mut sink = Sink { threads: &mut st.threads, records: &mut st.records, stream: s as u32 };
            runs.finish(begin, end, self.head == HeadPolicy::FromStart, |prev| info.slot(prev) as u32, |i, s, e, state| sink.credit(busy, i, s, e, state));
            if cpu & 0x8000_0000 == 0 && self.filter.cpu(cpu) {
                *cpus.entry(cpu).or_insert(0) += seg.busy;
            }
        }
        let selected = self.selected_slots(&st);
        let executions = st
            .records
            .executions
            .take()
            .map(|x| {
                self.execution_rows(&st, &x, |slot| {
                    let (pid, comm) = st.info.pid_and_comm_of_slot(slot);
                    (st.info.tid_of_slot(slot), pid, comm, selected[slot])
                })
            })
            .unwrap_or_default();
        if let Some(split) = st.records.split.take() {
            self.filtered(&mut st, &selected, &split, &mut cpus);
        }
        let cpus: Vec<CpuRow> = cpus.into_iter().map(|(cpu, busy_ns)| CpuRow { cpu, busy_ns, usage: ratio(busy_ns) }).collect();
        let total_usage = if cpus.is_empty() { 0.0 } else { cpus.iter().map(|c| c.usage).sum::<f64>() / cpus.len() as f64 };
        // Sorted by time (most first), then tid, as keys (tids are unique: an unstable
        // sort gives the one order), before the rows are made in that order: a trace
        // may list hundreds of thousands of threads. What the rows need is taken in the
        // pass over the slots, in their order.
        let mut order: Vec<_> = st
            .threads
            .iter()
            .enumerate()
            .filter(|(_, a)| a.listed)
            .map(|(i, a)| {
                let (pid, comm) = st.info.pid_and_comm_of_slot(i);
                (std::cmp::Reverse(a.cpu_ns), st.info.tid_of_slot(i), pid, comm, a.migrations)
            })
            .collect();
        order.sort_unstable_by_key(|&(time, tid, ..)| (time, tid));
        let threads: Vec<ThreadCpuRow> = order
            .into_iter()
            .map(|(time, tid, pid, comm, migrations)| ThreadCpuRow { tid, pid, comm: comm.to_string(), cpu_ns: time.0, usage: ratio(time.0), migrations })
            .collect();
        CpuReport { analysis: "cpu", begin_ns: st.span.begin(), end_ns: st.span.end(), cpus, executions, threads, total_usage }
    }
}

impl Selective for Cpu {
    fn interest(&self, trace: usize, stream_class: u64) -> Option<Vec<bool>> {
        // What `on_event` and `Info::on_event` use.
        self.layout.mask(trace, stream_class, |k| {
            matches!(k, Kind::Switch { .. } | Kind::Migrate { .. } | Kind::Fork { .. } | Kind::Exec { .. } | Kind::ProcState { .. })
        })
    }

    /// `sched_switch`'s tids and names, copied (not with every execution listed: their
    /// rows want each switch's `prev_state`, which [`Cpu::on_event`] reads).
    fn copies(&self, trace: usize, stream_class: u64) -> Option<Vec<Option<CopyRequest>>> {
        if self.executions {
            return None;
        }
        Some(self.layout.stream_classes(trace, stream_class)?.iter().map(|c| switch_request(&c.kind, SWITCH_LABEL)).collect())
    }

    /// A `sched_switch` from its copied fields, as [`Cpu::on_event`] takes it, except a
    /// stream's first in the chunk (which also reads the stream's CPU from the packet).
    #[inline(always)]
    fn on_copied(&self, st: &mut CpuState, c: &Copied<'_>, ts: i64, ctx: &Ctx) -> bool {
        let Some(seg) = st.cpus.get_mut(ctx.stream).filter(|s| s.runs.cpu.is_some()) else { return false };
        let ([prev, _], [_, n]) = st.info.switch_copied(c, (ctx.order, ctx.stream));
        // (`ts` widens the span through `on_copied_span`.)
        switched(Sink { threads: &mut st.threads, records: &mut st.records, stream: ctx.stream as u32 }, seg, ts, prev, None, n);
        true
    }

    fn on_skipped(&self, st: &mut CpuState, first: i64, last: i64) {
        st.span.see_range(first, last);
    }

    fn on_copied_span(&self, st: &mut CpuState, first: i64, last: i64) {
        st.span.see_range(first, last);
    }
}

impl Tally for Cpu {}

impl ChunkPolicy for Cpu {
    fn stream_order(&self) -> StreamOrder {
        StreamOrder::PerStream
    }

    /// With every execution listed, slices of 16 MiB: a slice's state holds its
    /// executions until its merge (about one per 200 bytes of a kernel trace), and the
    /// slices in flight are what a streamed log ([`crate::occurrences`]) holds.
    fn max_auto_slice_bytes(&self) -> u64 {
        if self.executions {
            16 << 20
        } else {
            u64::MAX
        }
    }
}
