//! `irq`: hard IRQ handler durations per IRQ (`irq_handler_entry` → `irq_handler_exit`)
//! and softirq durations and raise → entry latencies per vector (lttng-irqstats).
//!
//! Semantics (as lttng-analyses 0.6.1, per CPU): a hard IRQ entry becomes the CPU's
//! current handler (replacing one left without exit); an exit of the same IRQ completes
//! it, any exit clears it. Softirqs are queued per CPU and vector: a raise queues a
//! pending softirq unless the first queued one has not started; an entry starts the
//! first queued (or a new unraised one); an exit completes and removes the first
//! (its raise → entry latency counted when it was raised). An IRQ's names are those its
//! entries gave.
//!
//! Chunk state: the handlers are per CPU and the kernel's state at a chunk's start is
//! unknown, so a chunk that does not start the trace logs its interrupt events as
//! kernel records ([`kernel::log::Rec::Irq`], stamped with their times); the state
//! that starts the trace (*complete*) holds the kernel's interrupt state
//! ([`kernel::latency::replay::Latencies`]), which interprets events as they come and
//! replays each log merged into it, telling this analysis each handler run completed.
//! The engine folds slices into it in time order, so logs live no longer than their
//! slice, and the result equals a serial run for every chunking. (Events come stream
//! by stream: a log is in time order per stream, which is all the per-CPU handlers
//! need.)
//!
//! Filters ([`Filter`]): `--cpu` keeps the interrupt events of the selected CPUs (each
//! CPU's handlers are its own: dropping another CPU's events whole changes nothing of
//! the selected ones'), as lttng-irqstats tests each event's `cpu_id`. `--tid`, `--pid`
//! and `--procname` do not apply (an interrupt runs on behalf of no thread; lttng-irqstats
//! ignores them too).

use std::collections::{BTreeMap, BTreeSet};
use std::ops::ControlFlow;

use ctf::stream::EventRef;
use ctf::trace::TraceSet;
use engine::{Analysis, ChunkPolicy, Ctx, Selective, StreamOrder, Tally};
use serde::Serialize;

use crate::filter::Filter;
use crate::latency::{hand_over, Bucket, DurationRow, Durations, LatencyOptions, Sink};
use kernel::events::{softirq_name, EvKind, EventLayout};
use kernel::latency::replay::{self, Latencies};
use kernel::latency::{elapsed, Handled};
use kernel::layout::Layout;
use kernel::log::{IrqEvent, Log, Rec};
use kernel::model::{text_of, FxMap, Span};

/// The irq analysis.
pub struct Irq {
    layout: EventLayout,
    streams: usize,
    opts: LatencyOptions,
    filter: Filter,
    /// With a CPU filter, the kernel's layout (which knows each event's `cpu_id`).
    model: Option<Layout>,
}

/// Softirq statistics of one vector.
#[derive(Debug, Clone, Default)]
struct SoftAcc {
    dur: Durations,
    raise: Durations,
}

/// A completed interrupt, ordered by duration (longest first), then earliest.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
struct Long {
    dur: u64,
    begin: std::cmp::Reverse<i64>,
    hard: bool,
    id: std::cmp::Reverse<u32>,
}

/// The statistics of [`IrqState`].
#[derive(Debug, Clone, Default)]
struct IrqStats {
    hard: BTreeMap<u32, Durations>,
    soft: BTreeMap<u32, SoftAcc>,
    top: Sink<Long>,
}

/// [`IrqStats`] as the kernel's replay tells them the handler runs completed.
struct Replayed<'a> {
    opts: &'a LatencyOptions,
    stats: &'a mut IrqStats,
}

impl replay::Sink for Replayed<'_> {
    #[inline]
    fn handled(&mut self, hard: bool, h: Handled) {
        if !self.opts.keeps(h.duration) {
            return;
        }
        let st = &mut *self.stats;
        if hard {
            st.hard.entry(h.id).or_default().add(h.duration);
        } else {
            let acc = st.soft.entry(h.id).or_default();
            acc.dur.add(h.duration);
            if let Some(t) = h.raised {
                acc.raise.add(elapsed(t, h.begin));
            }
        }
        st.top.offer(Long { dur: h.duration, begin: std::cmp::Reverse(h.begin), hard, id: std::cmp::Reverse(h.id) });
    }
}

/// Chunk state of [`Irq`].
#[derive(Debug, Clone, Default)]
pub struct IrqState {
    complete: bool,
    /// Incomplete states: the interrupt events, stamped.
    log: Log,
    /// Complete states: the kernel's interrupt handlers per CPU.
    kernel: Latencies,
    /// Per hard IRQ, the names its entries gave, each once, as the events' bytes (text
    /// in `finish`: an entry costs a compare, not a decode).
    names: FxMap<u32, Vec<Box<[u8]>>>,
    stats: IrqStats,
    span: Span,
}

/// One hard IRQ of the result.
/// (Fields in alphabetical order: see [`crate::output::write_json`].)
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct HardIrqRow {
    /// IRQ number.
    pub irq: u32,
    /// Handler durations.
    pub latency: DurationRow,
    /// Names its entries gave, comma-separated.
    pub name: String,
}

/// One softirq vector of the result.
/// (Fields in alphabetical order: see [`crate::output::write_json`].)
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct SoftIrqRow {
    /// Handler durations.
    pub latency: DurationRow,
    /// Vector name (`TIMER_SOFTIRQ` …).
    pub name: String,
    /// Raise → entry latencies (of the softirqs that were raised).
    pub raise: DurationRow,
    /// Vector number.
    pub vec: u32,
}

/// One of the longest interrupts.
/// (Fields in alphabetical order: see [`crate::output::write_json`].)
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct LongIrqRow {
    /// Entry, ns from origin.
    pub begin_ns: i64,
    /// Duration, ns.
    pub duration_ns: u64,
    /// Hard IRQ (else softirq).
    pub hard: bool,
    /// IRQ or vector number.
    pub nr: u32,
}

/// Result of [`Irq`].
/// (Fields in alphabetical order: see [`crate::output::write_json`].)
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct IrqReport {
    /// Always `"irq"`.
    pub analysis: &'static str,
    /// First event timestamp.
    pub begin_ns: Option<i64>,
    /// Last event timestamp.
    pub end_ns: Option<i64>,
    /// Duration histogram (`--freq`; else empty).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub freq: Vec<Bucket>,
    /// Per hard IRQ, by number.
    pub hard: Vec<HardIrqRow>,
    /// Every interrupt, by entry time (`--log`; else empty).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub log: Vec<LongIrqRow>,
    /// The longest interrupts, longest first.
    pub longest: Vec<LongIrqRow>,
    /// Per softirq vector, by number.
    pub soft: Vec<SoftIrqRow>,
}

impl Irq {
    /// Prepares the irq analysis for `set`.
    pub fn new(set: &TraceSet, opts: LatencyOptions) -> Irq {
        Irq { layout: EventLayout::new(set), streams: set.streams.len(), opts, filter: Filter::default(), model: None }
    }

    /// Counts only the interrupts of the CPUs `filter` selects (see the module
    /// documentation).
    pub fn with_filter(mut self, set: &TraceSet, filter: Filter) -> Irq {
        self.model = (!filter.cpus.is_empty()).then(|| Layout::new(set));
        self.filter = filter;
        self
    }
}

impl Irq {
    /// Takes the handler runs completed so far out of `st`, the running state of a run
    /// (see [`engine::run_draining`]; with [`LatencyOptions::keep_all`]), and gives
    /// `out` their rows, as [`Analysis::finish`] would log them, in pieces of at most
    /// `piece` rows, each by start. Stops at `out`'s `Break`.
    pub fn drain_log(&self, st: &mut IrqState, piece: usize, out: &mut dyn FnMut(Vec<LongIrqRow>) -> ControlFlow<()>) -> ControlFlow<()> {
        hand_over(st.stats.top.drain_all(), log_order, piece, |l| irq_row(*l), out)
    }
}

/// The order of the log: by start, then hard before soft, then number.
fn log_order(l: &Long) -> (i64, bool, u32, u64) {
    (l.begin.0, l.hard, l.id.0, l.dur)
}

/// The row of handler run `l`.
fn irq_row(l: Long) -> LongIrqRow {
    LongIrqRow { begin_ns: l.begin.0, duration_ns: l.dur, hard: l.hard, nr: l.id.0 }
}

impl Analysis for Irq {
    type State = IrqState;
    type Output = IrqReport;

    fn new_state(&self) -> IrqState {
        IrqState { log: Log::default().stamped(), stats: IrqStats { top: Sink::new(&self.opts), ..Default::default() }, ..Default::default() }
    }

    fn on_event(&self, st: &mut IrqState, ev: &EventRef<'_, '_>, ctx: &Ctx) {
        st.span.see(ev.ts());
        let Some(ts) = ev.ts() else { return };
        // (A signed field's bits as unsigned: `uint` reads both.)
        let id = |h| ev.uint(h).unwrap_or(0) as u32;
        let (what, id) = match self.layout.kind(ev) {
            EvKind::Other | EvKind::Wakeup { .. } | EvKind::Switch { .. } | EvKind::Block { .. } | EvKind::BlockDevice { .. } => return,
            EvKind::HardEntry { irq, name } => {
                let irq = id(irq);
                if let Some(n) = name.and_then(|h| ev.bytes(h)) {
                    let seen = st.names.entry(irq).or_default();
                    if !seen.iter().any(|s| **s == *n) {
                        seen.push(n.into());
                    }
                }
                (IrqEvent::HardEntry, irq)
            }
            EvKind::HardExit { irq } => (IrqEvent::HardExit, id(irq)),
            EvKind::SoftRaise { vec } => (IrqEvent::SoftRaise, id(vec)),
            EvKind::SoftEntry { vec } => (IrqEvent::SoftEntry, id(vec)),
            EvKind::SoftExit { vec } => (IrqEvent::SoftExit, id(vec)),
        };
        if let Some(m) = &self.model {
            if !self.filter.on_cpu(m, ev, ctx.stream) {
                return;
            }
        }
        let s = ctx.stream as u32;
        if st.complete {
            st.kernel.irq(ts, s, what, id, &mut Replayed { opts: &self.opts, stats: &mut st.stats });
        } else {
            // (The handler's name is this analysis's, [`IrqState::names`].)
            st.log.at(ts, 0);
            st.log.push(Rec::Irq { s, what, id, name: None });
        }
    }

    fn merge(&self, mut a: IrqState, mut b: IrqState) -> IrqState {
        for (irq, names) in b.names {
            let seen = a.names.entry(irq).or_default();
            for n in names {
                if !seen.contains(&n) {
                    seen.push(n);
                }
            }
        }
        a.span = a.span.merge(b.span);
        let logged = b.log.take();
        if a.complete {
            a.kernel.apply_all(&logged.recs, &logged.stamps, &mut Replayed { opts: &self.opts, stats: &mut a.stats });
        } else {
            a.log.extend(logged.recs, logged.stamps, logged.tags);
        }
        a
    }

    fn finish(&self, st: IrqState) -> IrqReport {
        // Only IRQs with a completed handler: an entry whose exit never matched (lost,
        // or replaced by another IRQ's entry) makes no row, as in lttng-irqstats, which
        // skips a count of 0.
        let hard = st
            .stats
            .hard
            .iter()
            .filter(|(_, d)| d.count > 0)
            .map(|(&irq, d)| HardIrqRow {
                irq,
                latency: d.row(),
                name: st.names.get(&irq).map_or_else(
                    || "unknown".into(),
                    |n| n.iter().map(|b| text_of(b).into_owned()).collect::<BTreeSet<String>>().into_iter().collect::<Vec<_>>().join(", "),
                ),
            })
            .collect();
        let soft =
            st.stats.soft.iter().map(|(vec, a)| SoftIrqRow { latency: a.dur.row(), name: softirq_name(*vec), raise: a.raise.row(), vec: *vec }).collect();
        let (longest, all) = st.stats.top.finish(log_order);
        IrqReport {
            analysis: "irq",
            begin_ns: st.span.begin(),
            end_ns: st.span.end(),
            freq: Vec::new(),
            hard,
            log: all.into_iter().map(irq_row).collect(),
            longest: longest.into_iter().map(irq_row).collect(),
            soft,
        }
    }
}

impl Selective for Irq {
    fn interest(&self, trace: usize, stream_class: u64) -> Option<Vec<bool>> {
        self.layout.mask(trace, stream_class, |k| {
            matches!(k, EvKind::HardEntry { .. } | EvKind::HardExit { .. } | EvKind::SoftRaise { .. } | EvKind::SoftEntry { .. } | EvKind::SoftExit { .. })
        })
    }

    fn on_skipped(&self, st: &mut IrqState, first: i64, last: i64) {
        st.span.see_range(first, last);
    }

    fn on_copied_span(&self, st: &mut IrqState, first: i64, last: i64) {
        st.span.see_range(first, last);
    }
}

impl Tally for Irq {}

impl ChunkPolicy for Irq {
    fn stream_order(&self) -> StreamOrder {
        StreamOrder::PerStream
    }

    fn initial_state(&self) -> IrqState {
        let stats = IrqStats { top: Sink::new(&self.opts), ..Default::default() };
        IrqState { complete: true, kernel: Latencies::new(self.streams), stats, ..Default::default() }
    }

    fn folds_in_place(&self) -> bool {
        true
    }
}

/// LAMI 1.0 results in the manner of `lttng-irqstats-mi`: `hard-stats` and
/// `soft-stats` tables.
pub fn lami(r: &IrqReport) -> Vec<serde_json::Value> {
    use serde_json::json;
    let tr = crate::output::range(r.begin_ns, r.end_ns);
    let d = |l: &DurationRow| {
        let dur = |v: f64| json!({"class":"duration","value":v});
        vec![
            json!({"class":"number","value":l.count}),
            dur(l.min_ns as f64),
            dur(l.mean_ns),
            dur(l.max_ns as f64),
            l.stdev_ns.map_or(json!({"class":"unknown"}), dur),
        ]
    };
    let hard: Vec<_> = r
        .hard
        .iter()
        .map(|h| {
            let mut row = vec![json!({"class":"irq","hard":true,"nr":h.irq,"name":h.name})];
            row.extend(d(&h.latency));
            serde_json::Value::Array(row)
        })
        .collect();
    let soft: Vec<_> = r
        .soft
        .iter()
        .map(|s| {
            let mut row = vec![json!({"class":"irq","hard":false,"nr":s.vec,"name":s.name})];
            row.extend(d(&s.latency));
            row.extend(d(&s.raise));
            serde_json::Value::Array(row)
        })
        .collect();
    vec![json!({"class":"hard-stats","time-range":tr,"data":hard}), json!({"class":"soft-stats","time-range":tr,"data":soft})]
}

/// Readable tables in the manner of `lttng-irqstats` (durations in µs).
pub fn write_text(r: &IrqReport, w: &mut impl std::fmt::Write) -> std::fmt::Result {
    use crate::text::{duration_row as row, duration_table, section, write_occurrences};
    let mut t = duration_table("IRQ", &[]);
    for h in &r.hard {
        t.add_row(row(format!("{} <{}>", h.irq, h.name), &h.latency));
    }
    section(w, "Hard IRQ duration (usec)", t)?;
    let (mut dur, mut raise) = (duration_table("Vector", &[]), duration_table("Vector", &[]));
    for s in &r.soft {
        dur.add_row(row(format!("{} <{}>", s.vec, s.name), &s.latency));
        raise.add_row(row(format!("{} <{}>", s.vec, s.name), &s.raise));
    }
    section(w, "Soft IRQ duration (usec)", dur)?;
    section(w, "Soft IRQ raise latency (usec)", raise)?;
    let interrupt = |l: &LongIrqRow| (l.begin_ns, l.duration_ns, vec![if l.hard { "IRQ" } else { "softirq" }.into(), l.nr.to_string()]);
    write_occurrences(w, "Longest interrupts (usec)", &r.longest, &["Kind", "Number"], interrupt)?;
    write_occurrences(w, "Log (usec)", &r.log, &["Kind", "Number"], interrupt)?;
    crate::output::write_freq(w, &r.freq)?;
    Ok(())
}
