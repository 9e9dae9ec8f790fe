//! `sched`: wake-up latency (`sched_waking`/`sched_wakeup`/`sched_wakeup_new` → the
//! `sched_switch` that runs the task) per thread, per process and per priority, with the
//! longest (lttng-schedstats, schedtop).
//!
//! Semantics (as lttng-analyses 0.6.1): a wake-up of a thread that some CPU currently
//! runs is ignored; otherwise the first wake-up since the thread last ran is kept
//! (later ones do not move it) with its waker, the task running on the waking CPU; a
//! switch to the thread measures the latency from that wake-up and forgets it (a switch
//! always forgets it). Priorities are the switch's `next_prio`. A CPU runs no known
//! task before its first switch.
//!
//! Chunk state: whether a wake-up counts depends on every CPU's current task and
//! on the thread's earlier wake-ups, which a chunk that does not start the trace does
//! not know: such a chunk logs its switches and wake-ups in time order as kernel
//! records ([`kernel::log::Rec::Switch`], [`kernel::log::Rec::Wakeup`], stamped with
//! their times); the state that starts the trace (*complete*) holds the kernel's state
//! of them ([`kernel::latency::replay::Latencies`]: the task running on each CPU, the
//! pending wake-ups), which interprets events as they come and replays each log merged
//! into it (the engine folds slices into it in time order, so logs live no longer than
//! their slice), telling this analysis each wait a switch ended. A wake-up before the
//! trace start is unknown to every chunking alike, so the first switch to that thread
//! measures nothing.
//!
//! Filters ([`Filter`], as lttng-schedstats' `--tid`, `--procname`, `--cpu`): a latency
//! counts when the switch that ends it is on a selected CPU (lttng-analyses tests that
//! event's `cpu_id`; a switch elsewhere still ends the wait, uncounted), and when the
//! woken thread is selected, by its tid, pid and latest name in `finish` (see
//! [`crate::filter`]): the per-process, per-priority and total tables then sum only
//! the selected threads' latencies (kept per thread and priority for that), and the
//! longest are chosen among theirs.

use std::collections::BTreeMap;
use std::ops::ControlFlow;

use ctf::stream::EventRef;
use ctf::trace::TraceSet;
use engine::{Analysis, ChunkPolicy, Ctx, Selective, Tally};
use serde::Serialize;

use crate::filter::Filter;
use crate::latency::{hand_over, Bucket, DurationRow, Durations, LatencyOptions, Sink};
use kernel::events::{EvKind, EventLayout};
use kernel::latency::replay::{self, Latencies};
use kernel::latency::Wait;
use kernel::layout::{cpu_of, Kind, Layout};
use kernel::log::{Log, Rec};
use kernel::model::{FxMap, Info, Span};

/// The sched analysis.
pub struct Sched {
    layout: Layout,
    events: EventLayout,
    streams: usize,
    opts: LatencyOptions,
    filter: Filter,
}

/// A measured latency, ordered longest first, then earliest, then tid.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
struct Long {
    dur: u64,
    at: std::cmp::Reverse<i64>,
    tid: std::cmp::Reverse<i32>,
    waker: Option<i32>,
    prio: i32,
}

/// The statistics of [`SchedState`].
#[derive(Debug, Clone, Default)]
struct SchedStats {
    threads: FxMap<i32, Durations>,
    prios: BTreeMap<i32, Durations>,
    /// Per thread, the priorities its measured switches gave.
    thread_prios: FxMap<i32, Vec<i32>>,
    /// With a thread filter, the latencies per thread and priority.
    by_thread_prio: FxMap<(i32, i32), Durations>,
    top: Sink<Long>,
}

/// [`SchedStats`] as the kernel's replay tells them the waits ended.
struct Replayed<'a> {
    sched: &'a Sched,
    stats: &'a mut SchedStats,
}

impl replay::Sink for Replayed<'_> {
    #[inline]
    fn woken(&mut self, next: i32, cpu: u32, prio: i32, w: Wait) {
        let Wait { since: t0, waker, latency: d } = w;
        if !self.sched.opts.keeps(d) || !self.sched.filter.cpu(cpu) {
            return;
        }
        let st = &mut *self.stats;
        st.threads.entry(next).or_default().add(d);
        st.prios.entry(prio).or_default().add(d);
        if self.sched.filter.selects_threads() {
            st.by_thread_prio.entry((next, prio)).or_default().add(d);
        }
        let ps = st.thread_prios.entry(next).or_default();
        if !ps.contains(&prio) {
            ps.push(prio);
        }
        st.top.offer(Long { dur: d, at: std::cmp::Reverse(t0), tid: std::cmp::Reverse(next), waker, prio });
    }
}

/// Chunk state of [`Sched`].
#[derive(Debug, Clone, Default)]
pub struct SchedState {
    complete: bool,
    /// Incomplete states: the switches and wake-ups, stamped.
    log: Log,
    /// Complete states: the kernel's running tasks and pending wake-ups.
    kernel: Latencies,
    stats: SchedStats,
    info: Info,
    span: Span,
}

/// One thread, process or priority of the result.
/// (Fields in alphabetical order: see [`crate::output::write_json`].)
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct SchedRow {
    /// Command name (empty for a priority row).
    pub comm: String,
    /// Wake-up latencies.
    pub latency: DurationRow,
    /// Process id, when known (the pid of a process row).
    pub pid: Option<i32>,
    /// Priority (of a priority row), or the priorities seen (thread rows: sorted).
    pub prios: Vec<i32>,
    /// Thread id (thread rows).
    pub tid: Option<i32>,
}

/// One of the longest wake-up latencies.
/// (Fields in alphabetical order: see [`crate::output::write_json`].)
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct LongWakeupRow {
    /// Command name of the woken thread.
    pub comm: String,
    /// Latency, ns.
    pub latency_ns: u64,
    /// Priority it ran with.
    pub prio: i32,
    /// The switch that ran it, ns from origin.
    pub switch_ns: i64,
    /// The woken thread.
    pub tid: i32,
    /// The wake-up, ns from origin.
    pub wakeup_ns: i64,
    /// The thread that woke it, when known.
    pub waker: Option<i32>,
}

/// Result of [`Sched`].
/// (Fields in alphabetical order: see [`crate::output::write_json`].)
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct SchedReport {
    /// Always `"sched"`.
    pub analysis: &'static str,
    /// First event timestamp.
    pub begin_ns: Option<i64>,
    /// Last event timestamp.
    pub end_ns: Option<i64>,
    /// Latency histogram (`--freq`; else empty).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub freq: Vec<Bucket>,
    /// Every latency, by wake-up time (`--log`; else empty).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub log: Vec<LongWakeupRow>,
    /// The longest latencies, longest first.
    pub longest: Vec<LongWakeupRow>,
    /// Per priority, by priority.
    pub prios: Vec<SchedRow>,
    /// Per process, by decreasing count then pid.
    pub processes: Vec<SchedRow>,
    /// Per thread, by decreasing count then tid.
    pub threads: Vec<SchedRow>,
    /// All latencies.
    pub total: DurationRow,
}

impl Sched {
    /// Prepares the sched analysis for `set`.
    pub fn new(set: &TraceSet, opts: LatencyOptions) -> Sched {
        Sched { layout: Layout::new(set), events: EventLayout::new(set), streams: set.streams.len(), opts, filter: Filter::default() }
    }

    /// Counts only what `filter` selects (see the module documentation).
    pub fn with_filter(mut self, filter: Filter) -> Sched {
        self.filter = filter;
        self
    }
}

impl Sched {
    /// Takes the latencies measured so far out of `st`, the running state of a run
    /// (see [`engine::run_draining`]; with [`LatencyOptions::keep_all`]), and gives
    /// `out` their rows, as [`Analysis::finish`] would log them: named by `names`, the
    /// trace's final thread table
    /// ([`TraceEnd::threads`](crate::trace_end::TraceEnd::threads)), in pieces of at most
    /// `piece` rows, each by wake-up time. Not with a thread filter (`finish` chooses
    /// the longest again among every latency kept then). Stops at `out`'s `Break`.
    pub fn drain_log(&self, st: &mut SchedState, names: &Info, piece: usize, out: &mut dyn FnMut(Vec<LongWakeupRow>) -> ControlFlow<()>) -> ControlFlow<()> {
        hand_over(st.stats.top.drain_all(), log_order, piece, |l| wakeup_row(*l, names), out)
    }
}

/// The order of the log: by wake-up time, then tid (then the rest, for one order).
fn log_order(l: &Long) -> (i64, i32, u64, i32, Option<i32>) {
    (l.at.0, l.tid.0, l.dur, l.prio, l.waker)
}

/// The row of latency `l`, its thread named by `info`.
fn wakeup_row(l: Long, info: &Info) -> LongWakeupRow {
    LongWakeupRow {
        comm: info.comm_of(l.tid.0).to_string(),
        latency_ns: l.dur,
        prio: l.prio,
        switch_ns: l.at.0 + l.dur as i64,
        tid: l.tid.0,
        wakeup_ns: l.at.0,
        waker: l.waker,
    }
}

impl Analysis for Sched {
    type State = SchedState;
    type Output = SchedReport;

    fn new_state(&self) -> SchedState {
        SchedState { log: Log::default().stamped(), stats: SchedStats { top: Sink::new(&self.opts), ..Default::default() }, ..Default::default() }
    }

    fn on_event(&self, st: &mut SchedState, ev: &EventRef<'_, '_>, ctx: &Ctx) {
        st.span.see(ev.ts());
        let Some(c) = self.layout.class(ev) else { return };
        let Some(ts) = ev.ts() else { return };
        let v = (ctx.order, ctx.stream);
        let s = ctx.stream as u32;
        let r = match c.kind {
            Kind::Switch { prev_tid, next_tid, prev_comm, next_comm, .. } => {
                let (Some(prev), Some(next)) = (ev.int(prev_tid), ev.int(next_tid)) else { return };
                st.info.switch(ev, [(prev as i32, prev_comm), (next as i32, next_comm)], v);
                let next_prio = match self.events.kind(ev) {
                    EvKind::Switch { next_prio } => next_prio,
                    _ => None,
                };
                let prio = next_prio.and_then(|h| ev.int(h)).unwrap_or(0) as i32;
                // (The CPU id is read for a CPU filter only, the one reader of a switch's
                // `cpu` here: without one, every switch counts, and `cpu` is 0.)
                let cpu = if self.filter.cpus.is_empty() { 0 } else { cpu_of(ev, c, ctx.stream) };
                let (prev, next) = (prev as i32, next as i32);
                if st.complete {
                    return st.kernel.switch(ts, s, cpu, next, prio, &mut Replayed { sched: self, stats: &mut st.stats });
                }
                Rec::Switch { s, cpu, prev, next, prio }
            }
            Kind::Other => {
                let EvKind::Wakeup { tid } = self.events.kind(ev) else { return };
                let Some(tid) = ev.int(tid) else { return };
                if st.complete {
                    return st.kernel.wakeup(ts, s, tid as i32);
                }
                Rec::Wakeup { s, tid: tid as i32 }
            }
            _ => return st.info.on_event(ev, c, v),
        };
        st.log.at(ts, 0);
        st.log.push(r);
    }

    fn merge(&self, mut a: SchedState, mut b: SchedState) -> SchedState {
        a.info = std::mem::take(&mut a.info).merge(b.info);
        a.span = a.span.merge(b.span);
        let logged = b.log.take();
        if a.complete {
            a.kernel.apply_all(&logged.recs, &logged.stamps, &mut Replayed { sched: self, stats: &mut a.stats });
        } else {
            a.log.extend(logged.recs, logged.stamps, logged.tags);
        }
        a
    }

    fn finish(&self, mut st: SchedState) -> SchedReport {
        let selected = |tid: i32| {
            let (pid, comm) = st.info.pid_and_comm(tid);
            self.filter.thread(tid, pid, comm)
        };
        if self.filter.selects_threads() {
            let st = &mut st.stats;
            st.top.retain(|l| selected(l.tid.0));
            st.threads.retain(|t, _| selected(*t));
            st.prios.clear();
            for (&(t, p), d) in &st.by_thread_prio {
                if selected(t) {
                    st.prios.entry(p).or_default().merge(d);
                }
            }
        }
        let mut total = Durations::default();
        let mut procs: BTreeMap<i32, (Durations, Vec<i32>)> = BTreeMap::new();
        let mut threads: Vec<SchedRow> = st
            .stats
            .threads
            .iter()
            .map(|(tid, d)| {
                total.merge(d);
                let (pid, comm) = st.info.pid_and_comm(*tid);
                let mut prios = st.stats.thread_prios.get(tid).cloned().unwrap_or_default();
                prios.sort_unstable();
                let p = procs.entry(pid.unwrap_or(*tid)).or_default();
                p.0.merge(d);
                p.1.extend(&prios);
                SchedRow { comm: comm.to_string(), latency: d.row(), pid, prios, tid: Some(*tid) }
            })
            .collect();
        threads.sort_by(|x, y| y.latency.count.cmp(&x.latency.count).then(x.tid.cmp(&y.tid)));
        let mut processes: Vec<SchedRow> = procs
            .into_iter()
            .map(|(pid, (d, mut prios))| {
                prios.sort_unstable();
                prios.dedup();
                SchedRow { comm: st.info.comm_of(pid).to_string(), latency: d.row(), pid: Some(pid), prios, tid: None }
            })
            .collect();
        processes.sort_by(|x, y| y.latency.count.cmp(&x.latency.count).then(x.pid.cmp(&y.pid)));
        let prios = st.stats.prios.iter().map(|(p, d)| SchedRow { comm: String::new(), latency: d.row(), pid: None, prios: vec![*p], tid: None }).collect();
        let (longest, all) = st.stats.top.finish(log_order);
        let row = |l: Long| wakeup_row(l, &st.info);
        let longest = longest.into_iter().map(row).collect();
        let log = all.into_iter().map(row).collect();
        SchedReport {
            analysis: "sched",
            begin_ns: st.span.begin(),
            end_ns: st.span.end(),
            freq: Vec::new(),
            log,
            longest,
            prios,
            processes,
            threads,
            total: total.row(),
        }
    }
}

impl Selective for Sched {
    fn interest(&self, trace: usize, stream_class: u64) -> Option<Vec<bool>> {
        let model =
            self.layout.mask(trace, stream_class, |k| matches!(k, Kind::Switch { .. } | Kind::Fork { .. } | Kind::Exec { .. } | Kind::ProcState { .. }))?;
        let wakeups = self.events.mask(trace, stream_class, |k| matches!(k, EvKind::Wakeup { .. }))?;
        Some(model.into_iter().zip(wakeups).map(|(a, b)| a || b).collect())
    }

    fn on_skipped(&self, st: &mut SchedState, first: i64, last: i64) {
        st.span.see_range(first, last);
    }

    fn on_copied_span(&self, st: &mut SchedState, first: i64, last: i64) {
        st.span.see_range(first, last);
    }
}

impl Tally for Sched {}

impl ChunkPolicy for Sched {
    fn initial_state(&self) -> SchedState {
        let stats = SchedStats { top: Sink::new(&self.opts), ..Default::default() };
        SchedState { complete: true, kernel: Latencies::new(self.streams), stats, ..Default::default() }
    }

    fn folds_in_place(&self) -> bool {
        true
    }
}

/// LAMI 1.0 results in the manner of `lttng-schedstats-mi`: `per_tid_stats`.
pub fn lami(r: &SchedReport) -> Vec<serde_json::Value> {
    use serde_json::json;
    let tr = crate::output::range(r.begin_ns, r.end_ns);
    let dur = |v: f64| json!({"class":"duration","value":v});
    let data: Vec<_> = r
        .threads
        .iter()
        .map(|t| {
            let l = &t.latency;
            json!([{"class":"process","name":t.comm,"tid":t.tid},{"class":"number","value":l.count},dur(l.min_ns as f64),dur(l.mean_ns),dur(l.max_ns as f64),
                l.stdev_ns.map_or(json!({"class":"unknown"}), dur),{"class":"string","value":format!("{:?}", t.prios)}])
        })
        .collect();
    vec![json!({"class":"per_tid_stats","time-range":tr,"data":data})]
}

/// Readable tables in the manner of `lttng-schedstats` (µs).
pub fn write_text(r: &SchedReport, w: &mut impl std::fmt::Write) -> std::fmt::Result {
    use crate::text::{duration_row as row, duration_table, section, write_occurrences};
    let mut t = duration_table("Thread", &[]);
    for th in &r.threads {
        t.add_row(row(format!("{} ({}) {:?}", th.comm, th.tid.unwrap_or(0), th.prios), &th.latency));
    }
    section(w, "Scheduling latency (usec), per TID", t)?;
    let mut t = duration_table("Process", &[]);
    for p in &r.processes {
        t.add_row(row(format!("{} (PID {})", p.comm, p.pid.unwrap_or(0)), &p.latency));
    }
    section(w, "Per process", t)?;
    let mut t = duration_table("Priority", &[]);
    for p in &r.prios {
        t.add_row(row(format!("prio {}", p.prios.first().copied().unwrap_or(0)), &p.latency));
    }
    t.add_row(row("Total".into(), &r.total));
    section(w, "Per priority", t)?;
    let wakeup = |l: &LongWakeupRow| {
        (l.wakeup_ns, l.latency_ns, vec![format!("{} ({})", l.comm, l.tid), l.prio.to_string(), l.waker.map_or_else(|| "?".into(), |t| t.to_string())])
    };
    write_occurrences(w, "Longest wake-up latencies (usec)", &r.longest, &["Thread", "Prio", "Waker"], wakeup)?;
    write_occurrences(w, "Log (usec)", &r.log, &["Thread", "Prio", "Waker"], wakeup)?;
    crate::output::write_freq(w, &r.freq)?;
    Ok(())
}
