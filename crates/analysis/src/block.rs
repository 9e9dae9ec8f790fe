//! `block`: block request latency per disk and per process (`block_rq_issue` →
//! `block_rq_complete`; `block_rq_insert` → issue, the time queued, when the trace has
//! inserts), request sizes and throughput (lttng-iolatencystats' block part).
//!
//! Semantics (as lttng-analyses 0.6.1, less its bio remapping, which tracecube does not
//! follow): a request is keyed by disk and sector; an issue of 0 sectors is ignored,
//! another one replaces a pending request of the same key; a complete of the same key
//! and length completes it (one of another length leaves it pending). The request
//! belongs to the issue's `tid` (its process from the kernel model); `rwbs` bit 0 makes
//! it a write. Disk names come from `lttng_statedump_block_device`.
//!
//! Chunk state: requests complete on any CPU, often in another chunk than their
//! issue; a chunk that does not start the trace logs its block events in time order
//! as kernel records ([`kernel::log::Rec::Block`], stamped with their times), the
//! state that starts the trace holds the kernel's pending requests
//! ([`kernel::latency::replay::Latencies`]) and replays each log merged into it (as
//! `sched`), telling this analysis each request issued after a wait in the queue and
//! each request served.
//!
//! Filters ([`Filter`]; lttng-analyses' block latency takes none, these are ours): a
//! request counts when its issue is on a selected CPU and its issuing thread is
//! selected (by tid, pid and latest name in `finish`, see [`crate::filter`]); with a
//! thread filter the disks' totals are kept per disk and thread, so that the disk
//! table sums only the selected threads' requests, and the longest are chosen among
//! theirs.

use std::collections::BTreeMap;
use std::ops::ControlFlow;

use ctf::stream::EventRef;
use ctf::trace::TraceSet;
use engine::{Analysis, ChunkPolicy, Ctx, Selective, Tally};
use serde::Serialize;

use crate::filter::Filter;
use crate::latency::{hand_over, Bucket, DurationRow, Durations, LatencyOptions, Sink};
use crate::trace_end::{disk_name, named_disk, TraceEnd};
use kernel::events::{EvKind, EventLayout};
use kernel::latency::replay::{self, Latencies};
use kernel::latency::Issued;
use kernel::layout::{cpu_of, i32_of, EvClass, Kind, Layout};
use kernel::log::{BlockEvent, BlockRec, Log, Rec};
use kernel::model::{FxMap, Info, Span};

/// The block analysis.
pub struct Block {
    layout: Layout,
    events: EventLayout,
    opts: LatencyOptions,
    filter: Filter,
}

/// Totals of a disk or a process.
#[derive(Debug, Clone, Default)]
struct Acc {
    latency: Durations,
    queued: Durations,
    read_bytes: u64,
    write_bytes: u64,
}

impl Acc {
    /// Adds `o`'s totals.
    fn merge(&mut self, o: &Acc) {
        self.latency.merge(&o.latency);
        self.queued.merge(&o.queued);
        self.read_bytes += o.read_bytes;
        self.write_bytes += o.write_bytes;
    }
}

/// A completed request, longest first, then earliest.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
struct Long {
    dur: u64,
    at: std::cmp::Reverse<i64>,
    dev: std::cmp::Reverse<u64>,
    sector: std::cmp::Reverse<u64>,
    bytes: u64,
    tid: i32,
    write: bool,
}

/// The statistics of [`BlockState`].
#[derive(Debug, Clone, Default)]
struct BlockStats {
    disks: BTreeMap<u64, Acc>,
    tids: FxMap<i32, Acc>,
    /// With a thread filter, the disks' totals per disk and thread.
    by_disk_tid: FxMap<(u64, i32), Acc>,
    top: Sink<Long>,
}

/// [`BlockStats`] as the kernel's replay tells them the requests queued and served.
struct Replayed<'a> {
    block: &'a Block,
    stats: &'a mut BlockStats,
}

impl Replayed<'_> {
    /// The accumulators a request of `tid` on `dev` adds to: the disk's, the thread's
    /// and, with a thread filter, the disk's for that thread.
    fn accs(&mut self, dev: u64, tid: i32) -> impl Iterator<Item = &mut Acc> {
        let BlockStats { disks, tids, by_disk_tid, .. } = &mut *self.stats;
        let split = self.block.filter.selects_threads().then(|| by_disk_tid.entry((dev, tid)).or_default());
        [disks.entry(dev).or_default(), tids.entry(tid).or_default()].into_iter().chain(split)
    }
}

impl replay::Sink for Replayed<'_> {
    fn queued(&mut self, issue: &BlockRec, queued: u64) {
        if self.block.filter.cpu(issue.cpu) {
            self.accs(issue.dev, issue.tid.unwrap_or(0)).for_each(|a| a.queued.add(queued));
        }
    }

    fn served(&mut self, issued: &Issued<BlockRec>, complete: &BlockRec, d: u64) {
        let issue = &issued.data;
        if !self.block.opts.keeps(d) || !self.block.filter.cpu(issue.cpu) {
            return;
        }
        let (tid, bytes) = (issue.tid.unwrap_or(0), issued.nr * 512);
        for acc in self.accs(complete.dev, tid) {
            acc.latency.add(d);
            if issue.write {
                acc.write_bytes += bytes;
            } else {
                acc.read_bytes += bytes;
            }
        }
        self.stats.top.offer(Long {
            dur: d,
            at: std::cmp::Reverse(issued.ts),
            dev: std::cmp::Reverse(complete.dev),
            sector: std::cmp::Reverse(complete.sector),
            bytes,
            tid,
            write: issue.write,
        });
    }
}

/// Chunk state of [`Block`].
#[derive(Debug, Clone, Default)]
pub struct BlockState {
    complete: bool,
    /// Incomplete states: the block events, stamped.
    log: Log,
    /// Complete states: the kernel's pending requests.
    kernel: Latencies,
    stats: BlockStats,
    names: BTreeMap<u64, String>,
    info: Info,
    span: Span,
}

/// One disk or process of the result.
/// (Fields in alphabetical order: see [`crate::output::write_json`].)
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct BlockRow {
    /// Process id (process rows) or the device number (disk rows).
    pub id: i64,
    /// Issue → complete latency.
    pub latency: DurationRow,
    /// Disk name (`sda`, else `major:minor`) or command name.
    pub name: String,
    /// Insert → issue (requests whose insert was seen).
    pub queued: DurationRow,
    /// Bytes read.
    pub read_bytes: u64,
    /// Bytes per second over the trace's span (read and written).
    pub throughput_bps: f64,
    /// Bytes written.
    pub write_bytes: u64,
}

/// One of the longest requests.
/// (Fields in alphabetical order: see [`crate::output::write_json`].)
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct LongRequestRow {
    /// Issue, ns from origin.
    pub begin_ns: i64,
    /// Size.
    pub bytes: u64,
    /// Disk.
    pub disk: String,
    /// Latency, ns.
    pub duration_ns: u64,
    /// First sector.
    pub sector: u64,
    /// Issuing thread.
    pub tid: i32,
    /// A write (else a read).
    pub write: bool,
}

/// Result of [`Block`].
/// (Fields in alphabetical order: see [`crate::output::write_json`].)
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct BlockReport {
    /// Always `"block"`.
    pub analysis: &'static str,
    /// First event timestamp.
    pub begin_ns: Option<i64>,
    /// Per disk, by device number.
    pub disks: Vec<BlockRow>,
    /// Last event timestamp.
    pub end_ns: Option<i64>,
    /// Latency histogram (`--freq`; else empty).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub freq: Vec<Bucket>,
    /// Every request, by issue time (`--log`; else empty).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub log: Vec<LongRequestRow>,
    /// The longest requests.
    pub longest: Vec<LongRequestRow>,
    /// Per process (pid, else tid), by decreasing count then pid.
    pub processes: Vec<BlockRow>,
}

impl Block {
    /// Prepares the block analysis for `set`.
    pub fn new(set: &TraceSet, opts: LatencyOptions) -> Block {
        Block { layout: Layout::new(set), events: EventLayout::new(set), opts, filter: Filter::default() }
    }

    /// Counts only what `filter` selects (see the module documentation).
    pub fn with_filter(mut self, filter: Filter) -> Block {
        self.filter = filter;
        self
    }

    /// [`Analysis::on_event`] of an event the kernel's thread table does not follow:
    /// a block request or disk name (apart, so that the common path stays short).
    #[inline(never)]
    fn on_block_event(&self, st: &mut BlockState, ev: &EventRef<'_, '_>, c: &EvClass, ctx: &Ctx) {
        let Some(ts) = ev.ts() else { return };
        let u = |h| ev.uint(h).or_else(|| ev.int(h).map(|v| v as u64)).unwrap_or(0);
        let b = match self.events.kind(ev) {
            EvKind::Block { insert, complete, dev, sector, nr_sector, tid, rwbs } => BlockRec {
                s: ctx.stream as u32,
                cpu: cpu_of(ev, c, ctx.stream),
                what: if insert {
                    BlockEvent::Insert
                } else if complete {
                    BlockEvent::Complete
                } else {
                    BlockEvent::Issue
                },
                dev: u(dev),
                sector: u(sector),
                nr: u(nr_sector),
                tid: i32_of(ev, tid),
                write: rwbs.is_some_and(|h| u(h) & 1 == 1),
            },
            EvKind::BlockDevice { dev, name } => {
                st.names.extend(named_disk(ev, dev, name));
                return;
            }
            _ => return,
        };
        if st.complete {
            st.kernel.block(ts, &b, &mut Replayed { block: self, stats: &mut st.stats });
        } else {
            st.log.at(ts, 0);
            st.log.push(Rec::Block(Box::new(b)));
        }
    }
}

impl Block {
    /// Takes the requests served so far out of `st`, the running state of a run (see
    /// [`engine::run_draining`]; with [`LatencyOptions::keep_all`]), and gives `out`
    /// their rows, as [`Analysis::finish`] would log them: each disk named by `end`,
    /// the names the trace gives the disks last ([`TraceEnd::read`]), in pieces of at
    /// most `piece` rows, each by issue time. Not with a thread filter (`finish`
    /// chooses the longest again among the selected threads' then). Stops at `out`'s
    /// `Break`.
    pub fn drain_log(&self, st: &mut BlockState, end: &TraceEnd, piece: usize, out: &mut dyn FnMut(Vec<LongRequestRow>) -> ControlFlow<()>) -> ControlFlow<()> {
        hand_over(st.stats.top.drain_all(), log_order, piece, |l| request_row(*l, end.disk_name(l.dev.0)), out)
    }
}

/// The order of the log: by issue, then disk, sector, duration and thread.
fn log_order(l: &Long) -> (i64, u64, u64, u64, i32) {
    (l.at.0, l.dev.0, l.sector.0, l.dur, l.tid)
}

/// The row of request `l`, on the disk called `disk`.
fn request_row(l: Long, disk: String) -> LongRequestRow {
    LongRequestRow { begin_ns: l.at.0, bytes: l.bytes, disk, duration_ns: l.dur, sector: l.sector.0, tid: l.tid, write: l.write }
}

impl Analysis for Block {
    type State = BlockState;
    type Output = BlockReport;

    fn new_state(&self) -> BlockState {
        BlockState { log: Log::default().stamped(), stats: BlockStats { top: Sink::new(&self.opts), ..Default::default() }, ..Default::default() }
    }

    fn on_event(&self, st: &mut BlockState, ev: &EventRef<'_, '_>, ctx: &Ctx) {
        st.span.see(ev.ts());
        let Some(c) = self.layout.class(ev) else { return };
        if !matches!(c.kind, Kind::Other) {
            return st.info.on_event(ev, c, (ctx.order, ctx.stream));
        }
        self.on_block_event(st, ev, c, ctx);
    }

    fn merge(&self, mut a: BlockState, mut b: BlockState) -> BlockState {
        a.info = std::mem::take(&mut a.info).merge(b.info);
        a.span = a.span.merge(b.span);
        a.names.extend(b.names);
        let logged = b.log.take();
        if a.complete {
            a.kernel.apply_all(&logged.recs, &logged.stamps, &mut Replayed { block: self, stats: &mut a.stats });
        } else {
            a.log.extend(logged.recs, logged.stamps, logged.tags);
        }
        a
    }

    fn finish(&self, mut st: BlockState) -> BlockReport {
        if self.filter.selects_threads() {
            let selected = |tid: i32| {
                let (pid, comm) = st.info.pid_and_comm(tid);
                self.filter.thread(tid, pid, comm)
            };
            let st = &mut st.stats;
            st.top.retain(|l| selected(l.tid));
            st.tids.retain(|t, _| selected(*t));
            st.disks.clear();
            for (&(dev, t), a) in &st.by_disk_tid {
                if selected(t) {
                    st.disks.entry(dev).or_default().merge(a);
                }
            }
        }
        let secs = match (st.span.begin(), st.span.end()) {
            (Some(b), Some(e)) if e > b => (e - b) as f64 / 1e9,
            _ => 0.0,
        };
        let row = |id: i64, name: String, a: &Acc| BlockRow {
            latency: a.latency.row(),
            name,
            id,
            queued: a.queued.row(),
            read_bytes: a.read_bytes,
            throughput_bps: if secs > 0.0 { (a.read_bytes + a.write_bytes) as f64 / secs } else { 0.0 },
            write_bytes: a.write_bytes,
        };
        let disks = st.stats.disks.iter().map(|(dev, a)| row(*dev as i64, disk_name(&st.names, *dev), a)).collect();
        let mut procs: BTreeMap<i32, Acc> = BTreeMap::new();
        for (tid, a) in &st.stats.tids {
            procs.entry(st.info.pid_of(*tid).unwrap_or(*tid)).or_default().merge(a);
        }
        let mut processes: Vec<BlockRow> = procs.iter().map(|(pid, a)| row(i64::from(*pid), st.info.comm_of(*pid).to_string(), a)).collect();
        processes.sort_by(|x, y| y.latency.count.cmp(&x.latency.count).then(x.id.cmp(&y.id)));
        let (longest, all) = st.stats.top.finish(log_order);
        let row = |l: Long| request_row(l, disk_name(&st.names, l.dev.0));
        let longest = longest.into_iter().map(row).collect();
        let log = all.into_iter().map(row).collect();
        BlockReport { analysis: "block", begin_ns: st.span.begin(), disks, end_ns: st.span.end(), freq: Vec::new(), log, longest, processes }
    }
}

impl Selective for Block {
    fn interest(&self, trace: usize, stream_class: u64) -> Option<Vec<bool>> {
        let model =
            self.layout.mask(trace, stream_class, |k| matches!(k, Kind::Switch { .. } | Kind::Fork { .. } | Kind::Exec { .. } | Kind::ProcState { .. }))?;
        let block = self.events.mask(trace, stream_class, |k| matches!(k, EvKind::Block { .. } | EvKind::BlockDevice { .. }))?;
        Some(model.into_iter().zip(block).map(|(a, b)| a || b).collect())
    }

    fn on_skipped(&self, st: &mut BlockState, first: i64, last: i64) {
        st.span.see_range(first, last);
    }

    fn on_copied_span(&self, st: &mut BlockState, first: i64, last: i64) {
        st.span.see_range(first, last);
    }
}

impl Tally for Block {}

impl ChunkPolicy for Block {
    fn initial_state(&self) -> BlockState {
        let stats = BlockStats { top: Sink::new(&self.opts), ..Default::default() };
        BlockState { complete: true, kernel: Latencies::new(0), stats, ..Default::default() }
    }

    fn folds_in_place(&self) -> bool {
        true
    }

    /// A chunk that does not start the trace logs its block events as boxed records
    /// (about 80 bytes for an event of about 30): slices of 16 MiB keep that log near
    /// 40 MiB a slice in flight. (`SELECT count(*) FROM block_requests`, 9 M requests,
    /// 502 MB, `-j 2`: peak anonymous memory 649 MB with the 31 MiB slices picked
    /// otherwise.)
    fn max_auto_slice_bytes(&self) -> u64 {
        16 << 20
    }
}

/// LAMI 1.0 results: a `block-latency-stats` table per disk and one per process.
pub fn lami(r: &BlockReport) -> Vec<serde_json::Value> {
    use serde_json::json;
    let tr = crate::output::range(r.begin_ns, r.end_ns);
    let table = |title: &str, rows: &[BlockRow]| {
        let dur = |v: f64| json!({"class":"duration","value":v});
        let data: Vec<_> = rows
            .iter()
            .map(|b| {
                let l = &b.latency;
                json!([{"class":"string","value":b.name},{"class":"number","value":l.count},dur(l.min_ns as f64),dur(l.mean_ns),dur(l.max_ns as f64),
                    l.stdev_ns.map_or(json!({"class":"unknown"}), dur),{"class":"size","value":b.read_bytes},{"class":"size","value":b.write_bytes}])
            })
            .collect();
        json!({"class":{"inherit":"block-latency-stats","title":title},"time-range":tr,"data":data})
    };
    vec![table("Block request latency per disk", &r.disks), table("Block request latency per process", &r.processes)]
}

/// Readable tables (µs).
pub fn write_text(r: &BlockReport, w: &mut impl std::fmt::Write) -> std::fmt::Result {
    use crate::text::{duration_row, duration_table, section, write_occurrences};
    for (title, label, rows) in
        [("Block request latency per disk (usec)", "Disk", &r.disks), ("Block request latency per process (usec)", "Process", &r.processes)]
    {
        let mut t = duration_table(label, &["Read (B)", "Written (B)", "B/s"]);
        for b in rows.iter() {
            let mut cells = duration_row(format!("{} ({})", b.name, b.id), &b.latency);
            cells.extend([b.read_bytes.to_string(), b.write_bytes.to_string(), format!("{:.0}", b.throughput_bps)]);
            t.add_row(cells);
        }
        section(w, title, t)?;
    }
    let request = |l: &LongRequestRow| {
        let rw = if l.write { "W" } else { "R" };
        (l.begin_ns, l.duration_ns, vec![l.disk.clone(), l.sector.to_string(), l.bytes.to_string(), rw.into(), l.tid.to_string()])
    };
    let more = ["Disk", "Sector", "Bytes", "R/W", "TID"];
    write_occurrences(w, "Longest requests (usec)", &r.longest, &more, request)?;
    write_occurrences(w, "Log (usec)", &r.log, &more, request)?;
    crate::output::write_freq(w, &r.freq)
}
