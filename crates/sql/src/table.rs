//! The trace tables as DataFusion [`TableProvider`]s: `events` (every event, its
//! scalar fields as one JSON column) and one `ev_<name>` per event class name (its
//! fields as typed columns). Filters on `ts` (comparisons, `BETWEEN`), on `name` and on
//! `cpu` (`=`, `IN`) are used by the scan and re-checked above it; `LIMIT` too.

use std::collections::{BTreeMap, BTreeSet, HashSet};
use std::sync::Arc;

use async_trait::async_trait;
use ctf::plan::{EventPlan, Plan, StreamPlan};
use datafusion::arrow::datatypes::{Schema, SchemaRef};
use datafusion::catalog::{Session, TableProvider};
use datafusion::common::{Result, ScalarValue};
use datafusion::logical_expr::{Between, BinaryExpr, Expr, Operator, TableProviderFilterPushDown, TableType};
use datafusion::physical_plan::ExecutionPlan;

use crate::columns::{class_table_name, common_columns, resolve, scalar_fields, Col, Handle};
use crate::scan::{ScanSpec, TraceScanExec};
use crate::source::Sources;

/// A table of events: `events` or `ev_<name>`.
pub struct TraceTable {
    pub(crate) sources: Arc<Sources>,
    pub(crate) cols: Vec<Col>,
    pub(crate) schema: SchemaRef,
    /// The class names of an `ev_` table (None: every class).
    pub(crate) classes: Option<HashSet<String>>,
}

impl std::fmt::Debug for TraceTable {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "TraceTable({:?})", self.classes)
    }
}

impl TraceTable {
    /// `events`: trace, ts, cpu, stream, name, and `fields` (JSON of the scalar
    /// fields of every scope).
    pub fn events(sources: Arc<Sources>) -> TraceTable {
        let mut cols = common_columns();
        cols.push(("fields".into(), Col::Fields));
        TraceTable::new(sources, cols, None)
    }

    pub(crate) fn new(sources: Arc<Sources>, cols: Vec<(String, Col)>, classes: Option<HashSet<String>>) -> TraceTable {
        let schema = Arc::new(Schema::new(cols.iter().map(|(n, c)| c.arrow_field(n)).collect::<Vec<_>>()));
        TraceTable { sources, cols: cols.into_iter().map(|(_, c)| c).collect(), schema, classes }
    }

    /// One `ev_<name>` table per event class name of `sources`, by table name: the
    /// common columns, then the scalar fields of the first class of that name met
    /// (a field named like a common column is prefixed with `f_`).
    pub fn per_class(sources: &Arc<Sources>) -> BTreeMap<String, TraceTable> {
        let mut first: BTreeMap<String, (String, Vec<(String, Col)>)> = BTreeMap::new();
        for src in &sources.sets {
            for t in &src.set.traces {
                for sp in &t.plan.streams {
                    for ev in &sp.events {
                        let table = class_table_name(&ev.name);
                        if first.contains_key(&table) {
                            continue;
                        }
                        let mut cols = common_columns();
                        for (field, h) in scalar_fields(&t.plan, sp, ev) {
                            let mut name = field.to_string();
                            while cols.iter().any(|(n, _)| *n == name) {
                                name.insert_str(0, "f_");
                            }
                            cols.push((name, Col::Field(field, h.kind)));
                        }
                        first.insert(table, (ev.name.to_string(), cols));
                    }
                }
            }
        }
        first.into_iter().map(|(table, (class, cols))| (table, TraceTable::new(sources.clone(), cols, Some(HashSet::from([class]))))).collect()
    }
}

/// The handle of column `col` for events of class `ev` (None for the columns that are
/// no field, or a class without that field or with another type).
pub fn resolve_column(plan: &Plan, sp: &StreamPlan, ev: &EventPlan, col: &Col) -> Option<Handle> {
    match col {
        Col::Field(name, kind) => resolve(plan, sp, ev, name, Some(*kind)),
        _ => None,
    }
}

/// What the filters of a scan tell it.
struct Pushed {
    /// The time range, ns, inclusive.
    range: (i64, i64),
    /// The class names (None: all).
    names: Option<HashSet<String>>,
    /// The CPUs (None: all).
    cpus: Option<BTreeSet<u64>>,
}

/// What `filters` tell a scan.
fn analyse(filters: &[Expr]) -> Pushed {
    let mut range = (i64::MIN, i64::MAX);
    let mut names: Option<HashSet<String>> = None;
    let mut cpus: Option<BTreeSet<u64>> = None;
    for f in filters {
        if let Some((lo, hi)) = ts_bounds(f) {
            range = (range.0.max(lo), range.1.min(hi));
        } else if let Some(n) = name_set(f) {
            names = Some(match names {
                Some(prev) => prev.intersection(&n).cloned().collect(),
                None => n,
            });
        } else if let Some(c) = cpu_set(f) {
            cpus = Some(match cpus {
                Some(prev) => prev.intersection(&c).copied().collect(),
                None => c,
            });
        }
    }
    Pushed { range, names, cpus }
}

/// The column name of `e` when it is a bare column.
fn column(e: &Expr) -> Option<&str> {
    match e {
        Expr::Column(c) => Some(c.name.as_str()),
        _ => None,
    }
}

/// An integer literal's value.
fn int_literal(e: &Expr) -> Option<i64> {
    match e {
        Expr::Literal(v, _) => match v.cast_to(&datafusion::arrow::datatypes::DataType::Int64).ok()? {
            ScalarValue::Int64(Some(x)) => Some(x),
            _ => None,
        },
        _ => None,
    }
}

/// A string literal's value.
fn str_literal(e: &Expr) -> Option<String> {
    match e {
        Expr::Literal(v, _) => v.try_as_str().flatten().map(str::to_string),
        _ => None,
    }
}

/// The inclusive `ts` range a filter implies (`ts OP literal`, `literal OP ts`,
/// `ts BETWEEN a AND b`).
fn ts_bounds(f: &Expr) -> Option<(i64, i64)> {
    match f {
        Expr::BinaryExpr(BinaryExpr { left, op, right }) => {
            let (op, v) = match (column(left), column(right)) {
                (Some("ts"), _) => (*op, int_literal(right)?),
                (_, Some("ts")) => (op.swap()?, int_literal(left)?),
                _ => return None,
            };
            op_bounds(op, v)
        }
        Expr::Between(Between { expr, negated: false, low, high }) if column(expr) == Some("ts") => Some((int_literal(low)?, int_literal(high)?)),
        _ => None,
    }
}

/// The inclusive range of `ts OP v` (`None` for another operator, or an empty range
/// at the ends of `i64`).
pub(crate) fn op_bounds(op: Operator, v: i64) -> Option<(i64, i64)> {
    match op {
        Operator::Eq => Some((v, v)),
        Operator::Gt => Some((v.checked_add(1)?, i64::MAX)),
        Operator::GtEq => Some((v, i64::MAX)),
        Operator::Lt => Some((i64::MIN, v.checked_sub(1)?)),
        Operator::LtEq => Some((i64::MIN, v)),
        _ => None,
    }
}

/// The values a filter allows column `col` (`col = v`, `v = col`, `col IN (v, w)`),
/// each read by `value` from its literal; `None` for another filter.
fn allowed<T>(f: &Expr, col: &str, value: impl Fn(&Expr) -> Option<T>) -> Option<Vec<T>> {
    match f {
        Expr::BinaryExpr(BinaryExpr { left, op: Operator::Eq, right }) => match (column(left), column(right)) {
            (Some(c), _) if c == col => Some(vec![value(right)?]),
            (_, Some(c)) if c == col => Some(vec![value(left)?]),
            _ => None,
        },
        Expr::InList(l) if !l.negated && column(&l.expr) == Some(col) => l.list.iter().map(value).collect(),
        _ => None,
    }
}

/// The class names a filter allows (`name = 'x'`, `name IN ('x', 'y')`).
fn name_set(f: &Expr) -> Option<HashSet<String>> {
    allowed(f, "name", str_literal).map(HashSet::from_iter)
}

/// The CPUs a filter allows (`cpu = N`, `cpu IN (N, M)`).
fn cpu_set(f: &Expr) -> Option<BTreeSet<u64>> {
    allowed(f, "cpu", |e| int_literal(e).and_then(|v| u64::try_from(v).ok())).map(BTreeSet::from_iter)
}

#[async_trait]
impl TableProvider for TraceTable {
    fn schema(&self) -> SchemaRef {
        self.schema.clone()
    }

    fn table_type(&self) -> TableType {
        TableType::Base
    }

    fn supports_filters_pushdown(&self, filters: &[&Expr]) -> Result<Vec<TableProviderFilterPushDown>> {
        Ok(filters
            .iter()
            .map(|f| {
                if ts_bounds(f).is_some() || name_set(f).is_some() || cpu_set(f).is_some() {
                    TableProviderFilterPushDown::Inexact
                } else {
                    TableProviderFilterPushDown::Unsupported
                }
            })
            .collect())
    }

    async fn scan(&self, state: &dyn Session, projection: Option<&Vec<usize>>, filters: &[Expr], limit: Option<usize>) -> Result<Arc<dyn ExecutionPlan>> {
        let idx: Vec<usize> = projection.cloned().unwrap_or_else(|| (0..self.cols.len()).collect());
        let cols = idx.iter().map(|&i| self.cols[i].clone()).collect();
        let schema = Arc::new(self.schema.project(&idx)?);
        let Pushed { range, mut names, cpus } = analyse(filters);
        if let Some(c) = &self.classes {
            names = Some(match names {
                Some(n) => n.intersection(c).cloned().collect(),
                None => c.clone(),
            });
        }
        let _ = state;
        let parts = self.sources.partition_count();
        let spec = ScanSpec { cols, schema, names, range, cpus, limit };
        Ok(Arc::new(TraceScanExec::new(spec, self.sources.clone(), parts)))
    }
}
