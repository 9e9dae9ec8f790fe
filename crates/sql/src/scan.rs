//! The scan of a trace table: an [`ExecutionPlan`] whose partitions each read a share
//! of the engine's slices on a thread of their own, through the engine (one worker
//! per partition), and stream the rows as record batches of the projected columns.
//!
//! Nothing of the trace is copied beyond the batches in flight: each partition holds
//! the batch it fills and at most [`CHANNEL`] finished ones waiting for the consumer.
//! A query that needs no column (`count(*)`) gets packets as counts from the packet
//! index and the reader's per-class counting, without decoding events. Event classes
//! that a table or a `name` filter leaves out are passed over by their sizes; slices
//! outside a `ts` filter's range are not read. With a `LIMIT`, a partition stops after
//! the slice in which it reached the limit.

use crate::leaf_plan::leaf_properties;
use std::collections::{BTreeSet, HashSet};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::Arc;

use ctf::stream::{EventRef, PacketCount, StreamCursor};
use ctf::trace::TraceSet;
use datafusion::arrow::datatypes::SchemaRef;
use datafusion::arrow::record_batch::{RecordBatch, RecordBatchOptions};
use datafusion::common::{DataFusionError, Result};
use datafusion::execution::{SendableRecordBatchStream, TaskContext};
use datafusion::physical_plan::stream::RecordBatchStreamAdapter;
use datafusion::physical_plan::{DisplayAs, DisplayFormatType, ExecutionPlan, PlanProperties};
use engine::{Analysis, ChunkPolicy, Ctx, EngineOptions, Selective, Slice, StreamOrder, Tally};
use tokio::sync::mpsc;

use crate::columns::{scalar_fields, Builder, Col, Handle};
use crate::source::{Source, Sources};
use crate::table::resolve_column;

/// Rows per record batch.
pub const BATCH_ROWS: usize = 8192;
/// Finished batches a partition may hold before its consumer takes them.
pub const CHANNEL: usize = 2;

/// What a scan reads: the projected columns, the classes, the time range, the limit.
#[derive(Debug)]
pub struct ScanSpec {
    /// Projected columns, in output order.
    pub cols: Vec<Col>,
    /// The output schema (the projected columns).
    pub schema: SchemaRef,
    /// Only events of these class names (None: all).
    pub names: Option<HashSet<String>>,
    /// Only events in `[begin, end]`, ns, inclusive.
    pub range: (i64, i64),
    /// Only the packets whose context names one of these CPUs (`cpu_id`; packets
    /// without one are read; None: all).
    pub cpus: Option<BTreeSet<u64>>,
    /// Rows wanted at most (per partition; the plan above applies the exact limit).
    pub limit: Option<usize>,
}

/// The physical scan of a trace table.
pub struct TraceScanExec {
    pub(crate) spec: Arc<ScanSpec>,
    pub(crate) sources: Arc<Sources>,
    pub(crate) work: Arc<Vec<Vec<(usize, Slice)>>>,
    props: Arc<PlanProperties>,
}

impl std::fmt::Debug for TraceScanExec {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "TraceScanExec({:?})", self.spec)
    }
}

impl TraceScanExec {
    /// A scan of `sources` as `spec` asks, in `parts` partitions.
    pub fn new(spec: ScanSpec, sources: Arc<Sources>, parts: usize) -> TraceScanExec {
        let work = sources.share(parts.max(1), spec.range);
        let props = leaf_properties(spec.schema.clone(), work.len(), true);
        TraceScanExec { spec: Arc::new(spec), sources, work: Arc::new(work), props: Arc::new(props) }
    }
}

impl DisplayAs for TraceScanExec {
    fn fmt_as(&self, _t: DisplayFormatType, f: &mut std::fmt::Formatter) -> std::fmt::Result {
        let names: Vec<String> = self.spec.schema.fields().iter().map(|f| f.name().clone()).collect();
        write!(f, "TraceScanExec: partitions={}, columns=[{}]", self.work.len(), names.join(", "))?;
        if let Some(n) = &self.spec.names {
            let mut n: Vec<&String> = n.iter().collect();
            n.sort();
            write!(f, ", names={n:?}")?;
        }
        if self.spec.range != (i64::MIN, i64::MAX) {
            write!(f, ", ts=[{}, {}]", self.spec.range.0, self.spec.range.1)?;
        }
        if let Some(c) = &self.spec.cpus {
            write!(f, ", cpus={c:?}")?;
        }
        if let Some(l) = self.spec.limit {
            write!(f, ", limit={l}")?;
        }
        Ok(())
    }
}

impl ExecutionPlan for TraceScanExec {
    crate::leaf_plan_methods!("TraceScanExec");

    fn execute(&self, partition: usize, _context: Arc<TaskContext>) -> Result<SendableRecordBatchStream> {
        let (tx, rx) = mpsc::channel::<Result<RecordBatch>>(CHANNEL);
        let (spec, sources, work) = (self.spec.clone(), self.sources.clone(), self.work.clone());
        std::thread::Builder::new()
            .name(format!("sql-scan-{partition}"))
            .spawn(move || produce(&spec, &sources, work.get(partition).map_or(&[][..], |w| &w[..]), tx))
            .map_err(|e| DataFusionError::Execution(format!("cannot start a scan thread: {e}")))?;
        let stream = futures::stream::unfold(rx, |mut rx| async move { rx.recv().await.map(|b| (b, rx)) });
        Ok(Box::pin(RecordBatchStreamAdapter::new(self.spec.schema.clone(), stream)))
    }
}

/// Reads the slices of one partition into batches sent on `tx`.
fn produce(spec: &ScanSpec, sources: &Sources, work: &[(usize, Slice)], tx: mpsc::Sender<Result<RecordBatch>>) {
    let stop = AtomicBool::new(false);
    let rows = AtomicUsize::new(0);
    let mut runs: Vec<Option<Reader>> = (0..sources.sets.len()).map(|_| None).collect();
    let opts = EngineOptions { threads: 1, begin: Some(spec.range.0), end: Some(spec.range.1), ..EngineOptions::default() };
    for (si, slice) in work {
        if stop.load(Ordering::Relaxed) {
            break;
        }
        let src = &sources.sets[*si];
        let on_cpus;
        let slice = match &spec.cpus {
            Some(cpus) => {
                on_cpus = on_cpus_only(&src.set, slice, cpus);
                &on_cpus
            }
            None => slice,
        };
        if slice.chunks.is_empty() {
            continue;
        }
        let r = runs[*si].get_or_insert_with(|| Reader::new(spec, src, &tx, &stop, &rows));
        match engine::run_slices(&*r, &src.set, std::slice::from_ref(slice), &opts) {
            Ok(mut st) => r.flush(&mut st),
            Err(e) => {
                let msg = format!("{}: {e}", src.path.display());
                let _ = tx.blocking_send(Err(DataFusionError::Execution(msg)));
                return;
            }
        }
    }
}

/// `slice` less its streams' packet ranges of which no packet names a CPU of `cpus`
/// in its context (`cpu_id`; a packet without one might be on any: kept). An LTTng
/// stream is one CPU's buffer, so a filter on `cpu` reads only those CPUs' files.
fn on_cpus_only(set: &TraceSet, slice: &Slice, cpus: &BTreeSet<u64>) -> Slice {
    let on = |s: usize, r: &std::ops::Range<usize>| set.packet_context_uints(s, r.clone(), "cpu_id").iter().any(|c| c.is_none_or(|c| cpus.contains(&c)));
    Slice { lo: slice.lo, hi: slice.hi, chunks: slice.chunks.iter().filter(|(s, r)| on(*s, r)).cloned().collect() }
}

/// A value per trace, per stream class index, per event class index.
type PerTraceClass<T> = Vec<Vec<Vec<T>>>;

/// The engine analysis of one partition over one trace set: it turns events into rows.
struct Reader<'a> {
    spec: &'a ScanSpec,
    src: &'a Source,
    /// Per trace, per stream class index, per class index: the handle of each
    /// projected column that is a field (by position in `spec.cols`).
    handles: PerTraceClass<Vec<Option<Handle>>>,
    /// Per trace, per stream class index, per class index: the scalar fields (for the
    /// `fields` column, when projected).
    fields: PerTraceClass<Vec<(Box<str>, Handle)>>,
    /// Per trace, per stream class index: which classes to read (None: all).
    masks: Vec<Vec<Option<Vec<bool>>>>,
    /// No column is projected: rows are only counted.
    count_only: bool,
    tx: &'a mpsc::Sender<Result<RecordBatch>>,
    stop: &'a AtomicBool,
    rows: &'a AtomicUsize,
}

/// `f` of every event class of `plan`, by stream class index and class index.
fn per_class<T>(plan: &ctf::plan::Plan, f: impl Fn(&ctf::plan::StreamPlan, &ctf::plan::EventPlan) -> T) -> Vec<Vec<T>> {
    plan.streams.iter().map(|sp| sp.events.iter().map(|ev| f(sp, ev)).collect()).collect()
}

/// The rows a slice has read and not yet sent.
struct Rows {
    cols: Vec<Builder>,
    n: usize,
    json: Vec<u8>,
}

impl<'a> Reader<'a> {
    fn new(spec: &'a ScanSpec, src: &'a Source, tx: &'a mpsc::Sender<Result<RecordBatch>>, stop: &'a AtomicBool, rows: &'a AtomicUsize) -> Reader<'a> {
        let want_fields = spec.cols.contains(&Col::Fields);
        let (mut handles, mut fields, mut masks) = (Vec::new(), Vec::new(), Vec::new());
        for t in &src.set.traces {
            let plan = &t.plan;
            handles.push(per_class(plan, |sp, ev| spec.cols.iter().map(|c| resolve_column(plan, sp, ev, c)).collect::<Vec<_>>()));
            fields.push(if want_fields { per_class(plan, |sp, ev| scalar_fields(plan, sp, ev)) } else { Vec::new() });
            masks.push(plan.streams.iter().map(|sp| spec.names.as_ref().map(|n| sp.events.iter().map(|e| n.contains(&*e.name)).collect())).collect());
        }
        Reader { spec, src, handles, fields, masks, count_only: spec.cols.is_empty(), tx, stop, rows }
    }

    /// Sends the rows of `st` as a batch (nothing when there are none).
    fn flush(&self, st: &mut Rows) {
        if st.n == 0 || self.stop.load(Ordering::Relaxed) {
            st.n = 0;
            return;
        }
        let cols = st.cols.iter_mut().map(Builder::finish).collect();
        let opts = RecordBatchOptions::new().with_row_count(Some(st.n));
        let batch = RecordBatch::try_new_with_options(self.spec.schema.clone(), cols, &opts).map_err(DataFusionError::from);
        let total = self.rows.fetch_add(st.n, Ordering::Relaxed) + st.n;
        st.n = 0;
        if self.tx.blocking_send(batch).is_err() || self.spec.limit.is_some_and(|l| total >= l) {
            self.stop.store(true, Ordering::Relaxed);
        }
    }

    /// Indices of the event's stream class in its trace's plan.
    fn sc_index(ev: &EventRef<'_, '_>) -> (usize, usize, usize) {
        (ev.trace_index(), ev.stream_plan().index, ev.class_index())
    }
}

impl Analysis for Reader<'_> {
    type State = Rows;
    type Output = ();

    fn new_state(&self) -> Rows {
        Rows { cols: self.spec.cols.iter().map(Builder::for_col).collect(), n: 0, json: Vec::new() }
    }

    fn on_event(&self, st: &mut Rows, ev: &EventRef<'_, '_>, ctx: &Ctx) {
        if self.stop.load(Ordering::Relaxed) {
            return;
        }
        st.n += 1;
        if !self.count_only {
            let (t, sc, class) = Self::sc_index(ev);
            for (i, (col, b)) in self.spec.cols.iter().zip(st.cols.iter_mut()).enumerate() {
                match (col, b) {
                    (Col::Trace, Builder::Str(b)) => b.append_value(&self.src.names[t]),
                    (Col::Name, Builder::Str(b)) => b.append_value(ev.name()),
                    (Col::Ts, Builder::Int(b)) => b.append_option(ev.ts()),
                    (Col::Cpu, Builder::U32(b)) => b.append_option(ev.packet_cpu_id().map(|c| c as u32)),
                    (Col::Stream, Builder::U32(b)) => b.append_value(ctx.stream as u32),
                    (Col::Fields, Builder::Str(b)) => {
                        st.json.clear();
                        crate::columns::write_fields_json(&mut st.json, ev, &self.fields[t][sc][class]);
                        b.append_value(String::from_utf8_lossy(&st.json));
                    }
                    (_, b) => b.push_field(ev, self.handles[t][sc][class][i].as_ref()),
                }
            }
        }
        if st.n >= BATCH_ROWS {
            self.flush(st);
        }
    }

    fn merge(&self, mut earlier: Rows, later: Rows) -> Rows {
        self.flush(&mut earlier);
        later
    }

    fn finish(&self, _st: Rows) {}
}

impl Selective for Reader<'_> {
    fn interest(&self, trace: usize, stream_class: u64) -> Option<Vec<bool>> {
        let plan = &self.src.set.traces.get(trace)?.plan;
        let sc = plan.streams.iter().position(|s| s.id == stream_class)?;
        self.masks[trace][sc].clone()
    }
}

impl Tally for Reader<'_> {
    fn packet_counts(&self, _trace: usize, _stream_class: u64) -> bool {
        self.count_only && self.spec.names.is_none()
    }

    fn on_packet(&self, st: &mut Rows, _cur: &StreamCursor<'_>, pc: &PacketCount, _ctx: &Ctx) {
        if self.stop.load(Ordering::Relaxed) {
            return;
        }
        st.n += pc.events as usize;
        if st.n >= BATCH_ROWS {
            self.flush(st);
        }
    }
}

impl ChunkPolicy for Reader<'_> {
    fn stream_order(&self) -> StreamOrder {
        StreamOrder::PerStream
    }
}
