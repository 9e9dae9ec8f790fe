//! `cube_series(metric, every [, by [, agg]])`: the series of a statistics cube (a
//! directory written by `tracecube cube build`) as a table function.
//!
//! Each call asks the cube the question `tracecube query CUBE --metric METRIC --every
//! EVERY --by BY --agg AGG` asks (over the whole history) and returns its answer as a
//! table, one row per window and group, in the answer's order (windows by time, then
//! rows by decreasing value): `begin_ns`, `end_ns` (the exact interval `[begin, end)`
//! each window covers, ns since the epoch), one text column per `by` entry (named
//! after its level, as the `export` crate's series name them:
//! [`cube::Response::by_columns`]), and `value` (a 64-bit integer, a double for
//! `avg`). Groups with a zero value are left out, as the cube's answers leave them
//! out.
//!
//! - `metric`: a metric name (`cpu_time`, `events`, …);
//! - `every`: the window length, as `--every` takes it (`'1s'`, `'10min'`, a number
//!   of ns, or an SQL interval such as `INTERVAL '1 second'`); `NULL`: one window
//!   over the whole history;
//! - `by`: `'dim[:level]'`, several separated by commas (`'process:name,cpu'`);
//!   `NULL` or `''`: one total per window;
//! - `agg`: `'sum'` (default), `'count'`, `'avg'`, `'min'` or `'max'`.
//!
//! The answer is computed when the query is planned (the cube is in memory), so an
//! unknown metric or dimension is an error of the statement, naming what exists. The
//! table is an in-memory table: it is not carried to a cluster's executors
//! (`tracecube sql --cluster` refuses `--cube`).

use std::path::{Path, PathBuf};
use std::sync::Arc;

use cube::cli::QueryArgs;
use cube::{Agg, Cube, CubeError};
use datafusion::arrow::array::{ArrayRef, Float64Builder, Int64Builder, StringBuilder};
use datafusion::arrow::datatypes::{DataType, Field, Schema};
use datafusion::arrow::record_batch::RecordBatch;
use datafusion::catalog::{TableFunctionArgs, TableFunctionImpl, TableProvider};
use datafusion::common::{DataFusionError, Result, ScalarValue};
use datafusion::datasource::MemTable;
use datafusion::logical_expr::Expr;

use crate::SqlError;

/// The table function's name.
pub const NAME: &str = "cube_series";

/// How the function is called, for error messages.
const USAGE: &str = "cube_series(metric, every [, by [, agg]])";

/// The columns every answer has (beside one text column per `by` entry), for the
/// shell's completion.
pub const COLUMNS: [&str; 3] = ["begin_ns", "end_ns", "value"];

/// The table function over one cube directory.
pub struct CubeSeries {
    dir: PathBuf,
    cube: Cube,
    /// The most cell values one call may read (the bound of a server's `/api/query`);
    /// None: no bound.
    max_cost: Option<u64>,
}

impl std::fmt::Debug for CubeSeries {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "CubeSeries({})", self.dir.display())
    }
}

/// A question to the cube, as the function's arguments give it.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Question {
    /// Metric name.
    pub metric: String,
    /// Window length as `--every` takes it (None: one window).
    pub every: Option<String>,
    /// `dim[:level]` entries (empty: one total per window).
    pub by: Vec<String>,
    /// Aggregate as `--agg` takes it (None: sum).
    pub agg: Option<String>,
}

impl CubeSeries {
    /// Opens the cube directory `dir`.
    pub fn open(dir: &Path) -> Result<CubeSeries, SqlError> {
        let cube = cube::open(dir).map_err(|e| SqlError::OpenCube(dir.display().to_string(), e.to_string()))?;
        Ok(CubeSeries { dir: dir.to_path_buf(), cube, max_cost: None })
    }

    /// Refuses, before it runs, a call that would read more than `max` cell values
    /// (as [`cube::Cube::query_cost`] estimates them), as a server's `/api/query` does.
    pub fn with_max_cost(mut self, max: u64) -> CubeSeries {
        self.max_cost = Some(max);
        self
    }

    /// The cube's answer to `q` as one record batch (see the module's documentation
    /// for its columns).
    pub fn batch(&self, q: &Question) -> Result<RecordBatch, CubeError> {
        let args = QueryArgs { metric: q.metric.clone(), agg: q.agg.clone(), by: q.by.clone(), every: q.every.clone(), ..Default::default() };
        let req = args.to_request(&self.cube)?;
        if let Some(max) = self.max_cost {
            let cost = self.cube.query_cost(&req)?;
            if cost > max {
                return Err(CubeError::Query(format!(
                    "this question would read {cost} cell values, over the limit of {max}: ask a larger every, or fewer groups"
                )));
            }
        }
        let resp = self.cube.query(&req)?;
        let float = req.agg == Agg::Avg;
        let n: usize = resp.windows.iter().map(|w| w.rows.len()).sum();
        let ns = |t: u64| i64::try_from(t).unwrap_or(i64::MAX);
        let (mut begin, mut end) = (Int64Builder::with_capacity(n), Int64Builder::with_capacity(n));
        let names = resp.by_columns();
        let mut groups: Vec<StringBuilder> = names.iter().map(|_| StringBuilder::with_capacity(n, n * 8)).collect();
        let (mut ints, mut floats) = (Int64Builder::with_capacity(n), Float64Builder::with_capacity(n));
        for w in &resp.windows {
            for r in &w.rows {
                begin.append_value(ns(w.begin_ns));
                end.append_value(ns(w.end_ns));
                for (g, label) in groups.iter_mut().zip(&r.group) {
                    g.append_value(label);
                }
                if float {
                    floats.append_value(r.value);
                } else {
                    ints.append_value(r.value as i64);
                }
            }
        }
        let mut fields = vec![Field::new("begin_ns", DataType::Int64, false), Field::new("end_ns", DataType::Int64, false)];
        fields.extend(names.iter().map(|c| Field::new(c, DataType::Utf8, false)));
        fields.push(Field::new("value", if float { DataType::Float64 } else { DataType::Int64 }, false));
        let mut cols: Vec<ArrayRef> = vec![Arc::new(begin.finish()), Arc::new(end.finish())];
        cols.extend(groups.iter_mut().map(|g| Arc::new(g.finish()) as ArrayRef));
        cols.push(if float { Arc::new(floats.finish()) } else { Arc::new(ints.finish()) });
        RecordBatch::try_new(Arc::new(Schema::new(fields)), cols).map_err(|e| CubeError::Query(e.to_string()))
    }
}

/// A planning error of the function.
fn usage(why: impl std::fmt::Display) -> DataFusionError {
    DataFusionError::Plan(format!("{USAGE}: {why}"))
}

/// The value of argument `i` (None: absent or `NULL`); it must be a literal.
fn literal<'a>(args: &'a [Expr], i: usize, what: &str) -> Result<Option<&'a ScalarValue>> {
    match args.get(i) {
        None => Ok(None),
        Some(Expr::Literal(v, _)) if v.is_null() => Ok(None),
        Some(Expr::Literal(v, _)) => Ok(Some(v)),
        Some(e) => Err(usage(format!("{what} must be a constant, not {e}"))),
    }
}

/// Argument `i` as text (None: absent or `NULL`).
fn text(args: &[Expr], i: usize, what: &str) -> Result<Option<String>> {
    match literal(args, i, what)? {
        None => Ok(None),
        Some(v) => v.try_as_str().flatten().map(|s| Some(s.to_string())).ok_or_else(|| usage(format!("{what} must be text, not {v}"))),
    }
}

/// The `every` argument as `--every` takes it: text as is, an integer as ns, an
/// interval of days and smaller units in ns.
fn every(args: &[Expr]) -> Result<Option<String>> {
    let Some(v) = literal(args, 1, "every")? else { return Ok(None) };
    let bad = || usage(format!("every must be a duration ('1s', '10min'), a number of ns or an interval of days or less, not {v}"));
    let ns: i128 = match v {
        ScalarValue::IntervalMonthDayNano(Some(x)) if x.months == 0 => i128::from(x.days) * 86_400_000_000_000 + i128::from(x.nanoseconds),
        ScalarValue::IntervalDayTime(Some(x)) => i128::from(x.days) * 86_400_000_000_000 + i128::from(x.milliseconds) * 1_000_000,
        v if v.data_type().is_integer() => match v.cast_to(&DataType::Int64)? {
            ScalarValue::Int64(Some(x)) => i128::from(x),
            _ => return Err(bad()),
        },
        v => return v.try_as_str().flatten().map(|s| Some(s.to_string())).ok_or_else(bad),
    };
    if ns <= 0 {
        return Err(usage(format!("every must be positive, not {v}")));
    }
    Ok(Some(ns.to_string()))
}

impl Question {
    /// The question of a call's arguments.
    pub fn of(args: &[Expr]) -> Result<Question> {
        if !(2..=4).contains(&args.len()) {
            return Err(usage(format!("{} arguments", args.len())));
        }
        let metric = text(args, 0, "metric")?.ok_or_else(|| usage("metric must not be NULL"))?;
        let by = text(args, 2, "by")?.map_or_else(Vec::new, |b| b.split(',').map(str::trim).filter(|s| !s.is_empty()).map(str::to_string).collect());
        Ok(Question { metric, every: every(args)?, by, agg: text(args, 3, "agg")? })
    }
}

impl TableFunctionImpl for CubeSeries {
    fn call_with_args(&self, args: TableFunctionArgs) -> Result<Arc<dyn TableProvider>> {
        let q = Question::of(args.exprs())?;
        let b = self.batch(&q).map_err(|e| usage(format!("{}: {e}", self.dir.display())))?;
        Ok(Arc::new(MemTable::try_new(b.schema(), vec![vec![b]])?))
    }
}
