//! `SELECT name, count(*) FROM events [WHERE …] GROUP BY name` from per-class counts:
//! a physical plan rewrite ([`NameCounts`]) that replaces the partial aggregation over
//! a trace scan (or the one-step aggregation over a scan of one partition) by
//! [`NameCountExec`], which counts the events of each class as `tracecube count
//! --by-name` does (whole packets as per-class counts from the reader, without
//! decoding their events) and gives each partition's counts as the aggregation it
//! replaces would (the final aggregation above is unchanged).
//!
//! It applies only where the answer is the same: one group, the scan's `name`; one
//! aggregate, `count(*)` (no `DISTINCT`, no `FILTER`); and between the aggregation and
//! the scan at most a filter whose every conjunct is a comparison of `ts` with an
//! integer, or `name = 'x'`, `name IN (…)` or a disjunction of those, which the
//! counting applies itself (ranges intersected with the scan's, names too; an event
//! without a timestamp counts only where no `ts` condition is).

use crate::leaf_plan::leaf_properties;
use std::collections::{BTreeMap, HashSet};
use std::sync::Arc;

use ctf::stream::EventRef;
use ctf::trace::TraceSet;
use datafusion::arrow::array::{ArrayRef, Int64Array, StringArray};
use datafusion::arrow::datatypes::{DataType, SchemaRef};
use datafusion::arrow::record_batch::RecordBatch;
use datafusion::common::config::ConfigOptions;
use datafusion::common::tree_node::{Transformed, TreeNode};
use datafusion::common::{DataFusionError, Result, ScalarValue};
use datafusion::execution::{SendableRecordBatchStream, TaskContext};
use datafusion::logical_expr::Operator;
use datafusion::physical_expr::expressions::{BinaryExpr, Column, InListExpr, Literal};
use datafusion::physical_expr::utils::split_conjunction;
use datafusion::physical_expr::PhysicalExpr;
use datafusion::physical_optimizer::PhysicalOptimizerRule;
use datafusion::physical_plan::aggregates::{AggregateExec, AggregateMode};
use datafusion::physical_plan::coop::CooperativeExec;
use datafusion::physical_plan::filter::FilterExec;
use datafusion::physical_plan::stream::RecordBatchStreamAdapter;
use datafusion::physical_plan::{DisplayAs, DisplayFormatType, ExecutionPlan, ExecutionPlanProperties, PlanProperties};
use engine::{Analysis, ChunkPolicy, Ctx, EngineOptions, Selective, Slice, StreamOrder, Tally};

use crate::columns::Col;
use crate::scan::TraceScanExec;
use crate::source::Sources;
use crate::table::op_bounds;

/// The rewrite (a DataFusion physical optimizer rule; see the module documentation).
#[derive(Debug, Default)]
pub struct NameCounts;

impl PhysicalOptimizerRule for NameCounts {
    fn optimize(&self, plan: Arc<dyn ExecutionPlan>, _config: &ConfigOptions) -> Result<Arc<dyn ExecutionPlan>> {
        plan.transform_up(|p| {
            Ok(match rewrite(&p) {
                Some(n) => Transformed::yes(n),
                None => Transformed::no(p),
            })
        })
        .map(|t| t.data)
    }

    fn name(&self) -> &str {
        "name_counts"
    }

    fn schema_check(&self) -> bool {
        true
    }
}

/// What a filter between the aggregation and the scan asks: a `ts` range and class
/// names (None: any).
type Conditions = ((i64, i64), Option<HashSet<String>>);

/// `p` as a [`NameCountExec`], when it is a partial `count(*)` grouped by the `name` of
/// a trace scan, through at most a filter that the counting can apply.
fn rewrite(p: &Arc<dyn ExecutionPlan>) -> Option<Arc<dyn ExecutionPlan>> {
    let agg = p.downcast_ref::<AggregateExec>()?;
    // (`Single` over one partition: the partial counts are the answer.)
    let one_step = *agg.mode() == AggregateMode::Single && agg.input().output_partitioning().partition_count() == 1;
    if (*agg.mode() != AggregateMode::Partial && !one_step) || !agg.group_expr().is_single() || agg.group_expr().expr().len() != 1 {
        return None;
    }
    let [count] = agg.aggr_expr() else { return None };
    let counts_rows = count.fun().name() == "count"
        && !count.is_distinct()
        && matches!(&count.expressions()[..], [e] if e.downcast_ref::<Literal>().is_some_and(|l| !l.value().is_null()));
    let schema = agg.schema();
    let shaped = schema.fields().len() == 2 && schema.field(0).data_type() == &DataType::Utf8 && schema.field(1).data_type() == &DataType::Int64;
    if !counts_rows || !shaped || agg.filter_expr().iter().any(Option::is_some) {
        return None;
    }
    let group = agg.group_expr().expr()[0].0.downcast_ref::<Column>()?.index();
    let input = skip_cooperative(agg.input());
    // The scan, the scan column of the group, and the filter's conditions.
    let (scan, col, cond) = match input.downcast_ref::<FilterExec>() {
        Some(f) => {
            let scan = skip_cooperative(f.input()).downcast_ref::<TraceScanExec>()?;
            let col = match f.projection() {
                Some(p) => *p.get(group)?,
                None => group,
            };
            (scan, col, conditions(f.predicate(), scan)?)
        }
        None => (input.downcast_ref::<TraceScanExec>()?, group, ((i64::MIN, i64::MAX), None)),
    };
    // (Counts per class cannot leave out packets of other CPUs.)
    if scan.spec.cols.get(col) != Some(&Col::Name) || scan.spec.limit.is_some() || scan.spec.cpus.is_some() {
        return None;
    }
    let range = (scan.spec.range.0.max(cond.0 .0), scan.spec.range.1.min(cond.0 .1));
    let names = match (&scan.spec.names, cond.1) {
        (Some(a), Some(b)) => Some(a.intersection(&b).cloned().collect()),
        (a, b) => a.clone().or(b),
    };
    let timed = range != (i64::MIN, i64::MAX);
    let props = Arc::new(leaf_properties(schema.clone(), scan.work.len(), false));
    Some(Arc::new(NameCountExec { sources: scan.sources.clone(), work: scan.work.clone(), range, timed, names, schema, props }))
}

/// `p`, or its input when it only makes its input yield to the scheduler.
fn skip_cooperative(p: &Arc<dyn ExecutionPlan>) -> &Arc<dyn ExecutionPlan> {
    p.downcast_ref::<CooperativeExec>().map_or(p, |c| c.input())
}

/// The conditions of `predicate` over the columns of `scan`, when every conjunct is
/// one the counting applies.
fn conditions(predicate: &Arc<dyn PhysicalExpr>, scan: &TraceScanExec) -> Option<Conditions> {
    let mut range = (i64::MIN, i64::MAX);
    let mut names: Option<HashSet<String>> = None;
    for c in split_conjunction(predicate) {
        if let Some((lo, hi)) = ts_bounds(c, scan) {
            range = (range.0.max(lo), range.1.min(hi));
            continue;
        }
        let allowed = name_values(c, scan)?;
        names = Some(match names {
            Some(n) => n.intersection(&allowed).cloned().collect(),
            None => allowed,
        });
    }
    Some((range, names))
}

/// The scan column `e` is, when it is a bare column.
fn scan_col<'s>(e: &Arc<dyn PhysicalExpr>, scan: &'s TraceScanExec) -> Option<&'s Col> {
    scan.spec.cols.get(e.downcast_ref::<Column>()?.index())
}

/// The value of literal `e`.
fn literal(e: &Arc<dyn PhysicalExpr>) -> Option<&ScalarValue> {
    e.downcast_ref::<Literal>().map(Literal::value)
}

/// `e` as a column of `scan`, an operator and a literal, the column on the left.
fn comparison<'e, 's>(e: &'e Arc<dyn PhysicalExpr>, scan: &'s TraceScanExec) -> Option<(&'s Col, Operator, &'e ScalarValue)> {
    let b = e.downcast_ref::<BinaryExpr>()?;
    match (scan_col(b.left(), scan), scan_col(b.right(), scan)) {
        (Some(c), None) => Some((c, *b.op(), literal(b.right())?)),
        (None, Some(c)) => Some((c, b.op().swap()?, literal(b.left())?)),
        _ => None,
    }
}

/// The inclusive `ts` range of `ts OP integer`.
fn ts_bounds(e: &Arc<dyn PhysicalExpr>, scan: &TraceScanExec) -> Option<(i64, i64)> {
    match comparison(e, scan)? {
        (Col::Ts, op, ScalarValue::Int64(Some(v))) => op_bounds(op, *v),
        _ => None,
    }
}

/// The names `e` allows: `name = 'x'`, `name IN (…)`, and disjunctions of them.
fn name_values(e: &Arc<dyn PhysicalExpr>, scan: &TraceScanExec) -> Option<HashSet<String>> {
    let text = |v: &ScalarValue| v.try_as_str().flatten().map(str::to_string);
    if let Some(b) = e.downcast_ref::<BinaryExpr>().filter(|b| *b.op() == Operator::Or) {
        let mut both = name_values(b.left(), scan)?;
        both.extend(name_values(b.right(), scan)?);
        return Some(both);
    }
    if let Some(l) = e.downcast_ref::<InListExpr>() {
        if l.negated() || scan_col(l.expr(), scan) != Some(&Col::Name) {
            return None;
        }
        return l.list().iter().map(|e| text(literal(e)?)).collect();
    }
    match comparison(e, scan)? {
        (Col::Name, Operator::Eq, v) => Some(HashSet::from([text(v)?])),
        _ => None,
    }
}

/// The partial counts per event class name of a trace scan's partitions, events in
/// `range` (with a timestamp, when `timed`) of the classes `names` (None: all).
#[derive(Clone)]
pub struct NameCountExec {
    sources: Arc<Sources>,
    work: Arc<Vec<Vec<(usize, Slice)>>>,
    range: (i64, i64),
    timed: bool,
    names: Option<HashSet<String>>,
    schema: SchemaRef,
    props: Arc<PlanProperties>,
}

impl std::fmt::Debug for NameCountExec {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "NameCountExec({:?}, {:?})", self.range, self.names)
    }
}

impl NameCountExec {
    /// The counts of partition `partition`, by class name.
    fn count(&self, partition: usize) -> Result<BTreeMap<String, u64>> {
        let mut by_name = BTreeMap::new();
        let opts = EngineOptions { threads: 1, begin: Some(self.range.0), end: Some(self.range.1), ..EngineOptions::default() };
        let mut counters: Vec<Option<Counter>> = (0..self.sources.sets.len()).map(|_| None).collect();
        for (si, slice) in self.work.get(partition).map_or(&[][..], |w| &w[..]) {
            let src = &self.sources.sets[*si];
            let c = counters[*si].get_or_insert_with(|| Counter::new(&src.set, self.names.as_ref(), self.range, self.timed));
            let st = engine::run_slices(&*c, &src.set, std::slice::from_ref(slice), &opts)
                .map_err(|e| DataFusionError::Execution(format!("{}: {e}", src.path.display())))?;
            for (t, per_sc) in st.iter().enumerate() {
                let plan = &src.set.traces[t].plan;
                for (sc, per_class) in per_sc.iter().enumerate() {
                    for (class, &n) in per_class.iter().enumerate().filter(|(_, n)| **n > 0) {
                        *by_name.entry(plan.streams[sc].events[class].name.to_string()).or_insert(0) += n;
                    }
                }
            }
        }
        Ok(by_name)
    }
}

impl DisplayAs for NameCountExec {
    fn fmt_as(&self, _t: DisplayFormatType, f: &mut std::fmt::Formatter) -> std::fmt::Result {
        write!(f, "NameCountExec: partitions={}, ts=[{}, {}]", self.work.len(), self.range.0, self.range.1)?;
        if let Some(n) = &self.names {
            let mut n: Vec<&String> = n.iter().collect();
            n.sort();
            write!(f, ", names={n:?}")?;
        }
        Ok(())
    }
}

impl ExecutionPlan for NameCountExec {
    crate::leaf_plan_methods!("NameCountExec");

    fn execute(&self, partition: usize, _context: Arc<TaskContext>) -> Result<SendableRecordBatchStream> {
        let me = self.clone();
        let schema = self.schema.clone();
        let work = tokio::task::spawn_blocking(move || -> Result<Option<RecordBatch>> {
            let counts = me.count(partition)?;
            if counts.is_empty() {
                return Ok(None);
            }
            let names: ArrayRef = Arc::new(StringArray::from_iter_values(counts.keys()));
            let n: ArrayRef = Arc::new(counts.values().map(|&n| n as i64).collect::<Int64Array>());
            Ok(Some(RecordBatch::try_new(me.schema.clone(), vec![names, n])?))
        });
        let batch = futures::stream::once(async move {
            match work.await {
                Ok(Ok(b)) => b.map(Ok),
                Ok(Err(e)) => Some(Err(e)),
                Err(e) => Some(Err(DataFusionError::Execution(format!("the counting thread failed: {e}")))),
            }
        });
        let batches = futures::StreamExt::filter_map(batch, futures::future::ready);
        Ok(Box::pin(RecordBatchStreamAdapter::new(schema, batches)))
    }
}

/// A value per trace, per stream class index, per event class index.
type PerClass<T> = Vec<Vec<Vec<T>>>;

/// The engine analysis that counts the events of each class: whole packets as
/// per-class counts, the others one by one.
struct Counter<'a> {
    set: &'a TraceSet,
    /// Per trace, stream class index and class index: whether the class is counted.
    counted: PerClass<bool>,
    range: (i64, i64),
    timed: bool,
}

impl<'a> Counter<'a> {
    fn new(set: &'a TraceSet, names: Option<&HashSet<String>>, range: (i64, i64), timed: bool) -> Counter<'a> {
        let counted = set
            .traces
            .iter()
            .map(|t| t.plan.streams.iter().map(|sp| sp.events.iter().map(|e| names.is_none_or(|n| n.contains(&*e.name))).collect()).collect())
            .collect();
        Counter { set, counted, range, timed }
    }

    /// The index of stream class `id` in the plan of trace `trace`.
    fn sc_index(&self, trace: usize, id: u64) -> Option<usize> {
        self.set.traces.get(trace)?.plan.streams.iter().position(|s| s.id == id)
    }
}

impl Analysis for Counter<'_> {
    type State = PerClass<u64>;
    type Output = ();

    fn new_state(&self) -> PerClass<u64> {
        self.counted.iter().map(|t| t.iter().map(|sc| vec![0; sc.len()]).collect()).collect()
    }

    fn on_event(&self, st: &mut PerClass<u64>, ev: &EventRef<'_, '_>, _ctx: &Ctx) {
        let (t, sc, class) = (ev.trace_index(), ev.stream_plan().index, ev.class_index());
        if !self.counted[t][sc][class] {
            return;
        }
        if self.timed && !ev.ts().is_some_and(|ts| ts >= self.range.0 && ts <= self.range.1) {
            return;
        }
        st[t][sc][class] += 1;
    }

    fn merge(&self, mut earlier: PerClass<u64>, later: PerClass<u64>) -> PerClass<u64> {
        for (a, b) in earlier.iter_mut().flatten().zip(later.into_iter().flatten()) {
            a.iter_mut().zip(b).for_each(|(x, y)| *x += y);
        }
        earlier
    }

    fn finish(&self, _st: PerClass<u64>) {}
}

impl Selective for Counter<'_> {
    fn interest(&self, trace: usize, stream_class: u64) -> Option<Vec<bool>> {
        Some(self.counted[trace][self.sc_index(trace, stream_class)?].clone())
    }
}

impl Tally for Counter<'_> {
    fn packet_counts(&self, _trace: usize, _stream_class: u64) -> bool {
        true
    }

    fn on_class_counts(&self, st: &mut PerClass<u64>, trace: usize, stream_class: u64, per_class: &[u64]) {
        let Some(sc) = self.sc_index(trace, stream_class) else { return };
        for ((n, counted), add) in st[trace][sc].iter_mut().zip(&self.counted[trace][sc]).zip(per_class) {
            if *counted {
                *n += add;
            }
        }
    }
}

impl ChunkPolicy for Counter<'_> {
    fn stream_order(&self) -> StreamOrder {
        StreamOrder::PerStream
    }
}
