//! `count`: events in total, per name, per CPU; discarded events.
//!
//! Filters ([`Filter`]; lttng-analyses has no event count): `--cpu` counts the events
//! recorded on the selected CPUs (their packet's `cpu_id`), in every table; whole
//! packets are then counted event by event. Discarded events are the tracer's, of every
//! CPU. With a thread filter, an event is the task's its CPU last switched to (a
//! `sched_switch` is its `prev_tid`'s; before a CPU's first switch, that switch's
//! `prev_tid`, as `syscall` with [`HeadPolicy::FromStart`](crate::HeadPolicy); a stream
//! that never switches has no known task and counts nothing): events are kept per
//! (thread, name, CPU), those before a stream's first switch in a chunk apart, given to
//! the task the earlier chunk left running there when merged, and `finish` sums the
//! selected threads' (by tid, pid and latest name: [`crate::filter`]).

use std::collections::BTreeMap;

use ctf::plan::FieldHandle;
use ctf::stream::{EventRef, Notice, PacketCount, StreamCursor};
use ctf::trace::TraceSet;
use engine::{Analysis, ChunkPolicy, Ctx, NoticeKind, Selective, StreamOrder, Tally};
use serde::Serialize;

use crate::filter::Filter;
use kernel::layout::{cpu_of, Kind, Layout};
use kernel::model::{FxMap, Info, Span};
use kernel::running::Running;

/// The count analysis.
pub struct Count {
    layout: Layout,
    /// Per trace: per stream class `(id, cpu)` where every class reads its CPU from the
    /// same packet-level field (or none has one): such packets may be counted whole.
    packet_cpu: Vec<Vec<(u64, Option<FieldHandle>)>>,
    /// Only events on these CPUs and of these threads (see the module documentation).
    filter: Filter,
    streams: usize,
}

/// Chunk state of [`Count`].
#[derive(Debug, Clone, Default)]
pub struct CountState {
    events: u64,
    discarded: u64,
    by_name: Vec<u64>,
    by_cpu: BTreeMap<u32, u64>,
    /// Per CPU, small CPU numbers (the common case) without a map look-up.
    by_cpu_small: Vec<u64>,
    span: Span,
    /// With a thread filter, the events by thread (see the module documentation).
    by_thread: Option<Box<ByThread>>,
}

/// An event's name (`NO_KEY`: a class the layout does not know) and CPU (`NO_KEY`: its
/// class has no `cpu_id`).
type NameCpu = (u32, u32);

/// For keys an event lacks.
const NO_KEY: u32 = u32::MAX;

/// The events by thread of a chunk (see the module documentation).
#[derive(Debug, Clone, Default)]
struct ByThread {
    running: Running,
    counts: FxMap<(i32, NameCpu), u64>,
    /// Per stream, the events before its first switch.
    heads: Vec<FxMap<NameCpu, u64>>,
    info: Info,
}

impl ByThread {
    /// Adds `n` events `key` of thread `tid`.
    fn add(&mut self, tid: i32, key: NameCpu, n: u64) {
        *self.counts.entry((tid, key)).or_default() += n;
    }
}

/// Result of [`Count`] (its JSON form is the `count` output format).
/// (Fields in alphabetical order: see [`crate::output::write_json`].)
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct CountReport {
    /// Always `"count"`.
    pub analysis: &'static str,
    /// First event timestamp (ns from origin).
    pub begin_ns: Option<i64>,
    /// Events per CPU (`cpu_id`, as a string key).
    pub by_cpu: BTreeMap<String, u64>,
    /// Events per name (names with no event omitted).
    pub by_name: BTreeMap<String, u64>,
    /// Events discarded by the tracer.
    pub discarded: u64,
    /// Last event timestamp.
    pub end_ns: Option<i64>,
    /// Events.
    pub events: u64,
}

impl Count {
    /// Prepares the count analysis for `set`.
    pub fn new(set: &TraceSet) -> Count {
        let layout = Layout::new(set);
        let packet_cpu = set
            .traces
            .iter()
            .enumerate()
            .map(|(ti, t)| {
                t.plan
                    .streams
                    .iter()
                    .filter_map(|sp| {
                        let cl = layout.stream_classes(ti, sp.id)?;
                        let first = cl.first().and_then(|c| c.cpu);
                        let uniform = cl.iter().all(|c| c.cpu == first) && first.is_none_or(|h| h.packet_level);
                        uniform.then_some((sp.id, first))
                    })
                    .collect()
            })
            .collect();
        Count { layout, packet_cpu, filter: Filter::default(), streams: set.streams.len() }
    }

    /// Event `ev` with a thread filter: counted under its thread (or its stream's head)
    /// when `counted`, and the kernel model's events followed.
    fn by_thread(&self, bt: &mut ByThread, ev: &EventRef<'_, '_>, ctx: &Ctx, counted: bool) {
        let c = self.layout.class(ev);
        let key = c.map_or((NO_KEY, NO_KEY), |c| (c.name, if c.cpu.is_some() { cpu_of(ev, c, ctx.stream) } else { NO_KEY }));
        match bt.running.running(ctx.stream) {
            Some(t) if counted => bt.add(t, key, 1),
            None if counted => *bt.heads[ctx.stream].entry(key).or_default() += 1,
            _ => {}
        }
        let Some(c) = c else { return };
        let v = (ctx.order, ctx.stream);
        match c.kind {
            Kind::Switch { prev_tid, next_tid, prev_comm, next_comm, .. } => {
                let (Some(prev), Some(next)) = (ev.int(prev_tid), ev.int(next_tid)) else { return };
                let (prev, next) = (prev as i32, next as i32);
                bt.info.switch(ev, [(prev, prev_comm), (next, next_comm)], v);
                bt.running.switched(ctx.stream, prev, next);
            }
            Kind::Fork { .. } | Kind::Exec { .. } | Kind::ProcState { .. } => bt.info.on_event(ev, c, v),
            _ => {}
        }
    }

    /// The totals of the threads the filter selects replace `st`'s (each stream's head
    /// is its first switch's `prev_tid`'s).
    fn selected(&self, st: &mut CountState, mut bt: ByThread) {
        for (k, head) in std::mem::take(&mut bt.heads).into_iter().enumerate() {
            if let Some(t) = bt.running.first_prev(k) {
                head.into_iter().for_each(|(key, n)| bt.add(t, key, n));
            }
        }
        st.events = 0;
        st.by_name.iter_mut().for_each(|n| *n = 0);
        st.by_cpu.clear();
        st.by_cpu_small.clear();
        for (&(tid, (name, cpu)), &n) in &bt.counts {
            let (pid, comm) = bt.info.pid_and_comm(tid);
            if !self.filter.thread(tid, pid, comm) {
                continue;
            }
            st.events += n;
            if let Some(x) = st.by_name.get_mut(name as usize) {
                *x += n;
            }
            if cpu != NO_KEY {
                Self::add_cpu(st, cpu, n);
            }
        }
    }

    /// Counts only the events on the CPUs `filter` selects (see the module
    /// documentation).
    pub fn with_filter(mut self, filter: Filter) -> Count {
        self.filter = filter;
        self
    }

    #[inline]
    fn add_cpu(st: &mut CountState, cpu: u32, n: u64) {
        if (cpu as usize) < 1024 {
            if st.by_cpu_small.len() <= cpu as usize {
                st.by_cpu_small.resize(cpu as usize + 1, 0);
            }
            st.by_cpu_small[cpu as usize] += n;
        } else {
            *st.by_cpu.entry(cpu).or_default() += n;
        }
    }
}

impl Analysis for Count {
    type State = CountState;
    type Output = CountReport;

    fn new_state(&self) -> CountState {
        let by_thread = self
            .filter
            .selects_threads()
            .then(|| Box::new(ByThread { running: Running::new(self.streams), heads: vec![FxMap::default(); self.streams], ..Default::default() }));
        CountState { by_name: vec![0; self.layout.names.len()], by_thread, ..Default::default() }
    }

    #[inline]
    fn on_event(&self, st: &mut CountState, ev: &EventRef<'_, '_>, ctx: &Ctx) {
        st.span.see(ev.ts());
        let selected_cpu = self.filter.cpus.is_empty() || self.filter.on_cpu(&self.layout, ev, ctx.stream);
        if let Some(bt) = st.by_thread.as_mut() {
            // (Every CPU's events keep the threads' names and pids.)
            self.by_thread(bt, ev, ctx, selected_cpu);
        }
        if !selected_cpu {
            return;
        }
        st.events += 1;
        let Some(c) = self.layout.class(ev) else { return };
        st.by_name[c.name as usize] += 1;
        if c.cpu.is_some() {
            Self::add_cpu(st, cpu_of(ev, c, ctx.stream), 1);
        }
    }

    fn merge(&self, mut a: CountState, b: CountState) -> CountState {
        a.events += b.events;
        a.discarded += b.discarded;
        for (x, y) in a.by_name.iter_mut().zip(&b.by_name) {
            *x += y;
        }
        if a.by_cpu_small.len() < b.by_cpu_small.len() {
            a.by_cpu_small.resize(b.by_cpu_small.len(), 0);
        }
        for (x, y) in a.by_cpu_small.iter_mut().zip(&b.by_cpu_small) {
            *x += y;
        }
        for (k, v) in b.by_cpu {
            *a.by_cpu.entry(k).or_default() += v;
        }
        a.span = a.span.merge(b.span);
        if let (Some(x), Some(y)) = (a.by_thread.as_mut(), b.by_thread) {
            let y = *y;
            for (k, head) in y.heads.into_iter().enumerate() {
                match x.running.running(k) {
                    Some(t) => head.into_iter().for_each(|(key, n)| x.add(t, key, n)),
                    None => head.into_iter().for_each(|(key, n)| *x.heads[k].entry(key).or_default() += n),
                }
            }
            x.running.append(&y.running);
            y.counts.into_iter().for_each(|((t, key), n)| x.add(t, key, n));
            x.info = std::mem::take(&mut x.info).merge(y.info);
        }
        a
    }

    fn finish(&self, mut st: CountState) -> CountReport {
        if let Some(bt) = st.by_thread.take() {
            self.selected(&mut st, *bt);
        }
        let mut by_cpu: BTreeMap<u32, u64> = st.by_cpu;
        for (i, n) in st.by_cpu_small.iter().enumerate() {
            if *n > 0 {
                *by_cpu.entry(i as u32).or_default() += n;
            }
        }
        CountReport {
            analysis: "count",
            events: st.events,
            discarded: st.discarded,
            by_name: self.layout.names.iter().zip(&st.by_name).filter(|(_, n)| **n > 0).map(|(k, n)| (k.to_string(), *n)).collect(),
            by_cpu: by_cpu.into_iter().map(|(k, v)| (k.to_string(), v)).collect(),
            begin_ns: st.span.begin(),
            end_ns: st.span.end(),
        }
    }
}

impl Selective for Count {}

impl Tally for Count {
    fn packet_counts(&self, trace: usize, stream_class: u64) -> bool {
        self.filter.is_empty() && self.packet_cpu.get(trace).is_some_and(|v| v.iter().any(|(id, _)| *id == stream_class))
    }

    #[inline]
    fn on_packet(&self, st: &mut CountState, cur: &StreamCursor<'_>, pc: &PacketCount, ctx: &Ctx) {
        if pc.events == 0 {
            return;
        }
        st.events += pc.events;
        st.span.see(pc.first_cycles.and_then(|c| cur.cycles_to_ns(c)));
        st.span.see(pc.last_cycles.and_then(|c| cur.cycles_to_ns(c)));
        let cpu = self.packet_cpu.get(pc.packet.trace as usize).and_then(|v| v.iter().find(|(id, _)| *id == cur.stream_plan().id));
        if let Some((_, Some(h))) = cpu {
            // As `cpu_of`.
            let cpu = cur.packet_uint(*h).map(|v| v.min(u32::MAX as u64 >> 1) as u32).unwrap_or(0x8000_0000 | (ctx.stream as u32 & 0x7fff_ffff));
            Self::add_cpu(st, cpu, pc.events);
        }
    }

    fn on_class_counts(&self, st: &mut CountState, trace: usize, stream_class: u64, per_class: &[u64]) {
        let Some(cl) = self.layout.stream_classes(trace, stream_class) else { return };
        for (c, n) in cl.iter().zip(per_class) {
            st.by_name[c.name as usize] += n;
        }
    }

    fn on_notice(&self, st: &mut CountState, kind: NoticeKind, n: &Notice, _ctx: &Ctx) {
        if kind == NoticeKind::Discarded {
            st.discarded += n.count;
        }
    }
}

impl ChunkPolicy for Count {
    fn stream_order(&self) -> StreamOrder {
        StreamOrder::PerStream
    }
}
