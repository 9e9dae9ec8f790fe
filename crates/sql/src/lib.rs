//! SQL over traces and analyses, on Apache DataFusion.
//!
//! Where it sits: above `ctf` (the reader), `engine` (slices and workers) and
//! `analysis` (the analyses); the `tracecube` binary's `sql` command wires it. Nothing
//! below knows it.
//!
//! A [`SqlSession`] opens trace directories and registers these tables:
//! - `events`: every event: `trace` (the trace's `env.hostname`, else its directory's
//!   name, so that traces of several machines can be compared), `ts` (ns from the
//!   clock's origin), `cpu` (the packet's `cpu_id`), `stream` (the stream's index in
//!   its trace set), `name`, and `fields`, the scalar fields of every scope as one JSON
//!   object;
//! - `ev_<name>`, one per event class name (`ev_sched_switch`,
//!   `ev_syscall_entry_openat`): the same first five columns, then the class's scalar
//!   fields as typed columns ([`columns::Kind`]);
//! - the analyses' results ([`reports::ReportTable`]): `cpu_usage`,
//!   `cpu_usage_per_cpu`, `io_usage`, `io_files`, `syscall_stats`, and tables of
//!   occurrences from the kernel model: `sched_slices`, `syscalls`, `wakeups`, `irqs`,
//!   `block_requests`, `io` (each read or write that moved bytes, with its fd and
//!   file), and `threads` (each thread's names with their validity ranges);
//! - with [`SqlSession::add_cube`], the table function `cube_series(metric, every [,
//!   by [, agg]])` over a statistics cube's directory ([`cube_series`]): the answers
//!   of `tracecube query --every` as a table.
//!
//! The trace tables are DataFusion table providers over the reader ([`scan`]): no
//! copy of the trace, record batches streamed by one thread per partition, each
//! reading a share of the engine's slices; projection, `ts` and `name` filters and
//! `LIMIT` are pushed into the scan. `GROUP BY name` with `count(*)` (and such
//! filters) is answered from per-class counts ([`name_counts`]), without decoding.

pub mod columns;
pub mod cube_series;
pub mod leaf_plan;
pub mod name_counts;
pub mod output;
pub mod report_scan;
pub mod reports;
pub mod rows;
pub mod scan;
pub mod source;
pub mod table;
pub mod wire;

use std::ops::ControlFlow;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use datafusion::arrow::record_batch::RecordBatch;
use datafusion::execution::context::{SQLOptions, SessionContext};
use datafusion::execution::SessionStateBuilder;
use datafusion::prelude::SessionConfig;
use futures::StreamExt;

pub use datafusion::arrow;
pub use output::Format;
pub use source::Sources;

/// A failure of a session or a query.
#[derive(Debug, thiserror::Error)]
pub enum SqlError {
    /// A trace directory could not be opened.
    #[error("cannot open trace {0}: {1}")]
    Open(String, String),
    /// A cube directory could not be opened.
    #[error("cannot open cube {0}: {1}")]
    OpenCube(String, String),
    /// The query failed (syntax, planning, or the scan: a damaged stream names its
    /// file and offset).
    #[error("{0}")]
    Query(String),
    /// Writing the result failed.
    #[error("writing the result: {0}")]
    Output(String),
    /// The query runtime could not be started.
    #[error("cannot start the query runtime: {0}")]
    Runtime(std::io::Error),
}

impl From<datafusion::error::DataFusionError> for SqlError {
    fn from(e: datafusion::error::DataFusionError) -> SqlError {
        // DataFusion's messages carry a context prefix per layer; the cause is enough.
        SqlError::Query(e.find_root().to_string())
    }
}

/// The answer of [`SqlSession::query_bounded`].
#[derive(Debug)]
pub struct Bounded {
    /// The result's column names.
    pub columns: Vec<String>,
    /// The rows kept.
    pub batches: Vec<RecordBatch>,
    /// How many rows were kept.
    pub rows: usize,
    /// Whether the result had more rows than were kept.
    pub truncated: bool,
}

/// Traces opened for SQL, with their tables registered.
pub struct SqlSession {
    ctx: SessionContext,
    rt: tokio::runtime::Runtime,
    sources: Arc<Sources>,
    /// What the reader found but left out, one line each.
    pub warnings: Vec<String>,
}

impl SqlSession {
    /// Opens the trace directories `paths`; scans use `partitions` partitions (0: one
    /// per core).
    pub fn open(paths: &[PathBuf], partitions: usize) -> Result<SqlSession, SqlError> {
        SqlSession::open_with(paths, partitions, |_, config| {
            let state =
                SessionStateBuilder::new().with_config(config).with_default_features().with_physical_optimizer_rule(Arc::new(name_counts::NameCounts)).build();
            Ok(SessionContext::new_with_state(state))
        })
    }

    /// [`SqlSession::open`] on the context that `context` makes from the session's
    /// configuration, on the session's runtime: a cluster's client context plans and
    /// runs the same tables on the cluster (the `fleet` crate).
    pub fn open_with(
        paths: &[PathBuf],
        partitions: usize,
        context: impl FnOnce(&tokio::runtime::Runtime, SessionConfig) -> Result<SessionContext, SqlError>,
    ) -> Result<SqlSession, SqlError> {
        let (sources, warnings) = Sources::open(paths, partitions)?;
        let sources = Arc::new(sources);
        let parts = sources.partition_count();
        let config = SessionConfig::new().with_target_partitions(parts).with_information_schema(true);
        let rt = tokio::runtime::Builder::new_multi_thread().worker_threads(parts).thread_name("sql").enable_all().build().map_err(SqlError::Runtime)?;
        let ctx = context(&rt, config)?;
        ctx.register_table("events", Arc::new(table::TraceTable::events(sources.clone())))?;
        for (name, t) in table::TraceTable::per_class(&sources) {
            ctx.register_table(name.as_str(), Arc::new(t))?;
        }
        for r in reports::ReportTable::ALL {
            ctx.register_table(r.name(), Arc::new(reports::ReportProvider::new(sources.clone(), r)))?;
        }
        Ok(SqlSession { ctx, rt, sources, warnings })
    }

    /// Registers the table function `cube_series` over the cube directory `dir`
    /// ([`cube_series`]; the cube is read now and kept in memory). A later call
    /// replaces the cube.
    pub fn add_cube(&self, dir: &Path) -> Result<(), SqlError> {
        self.ctx.register_udtf(cube_series::NAME, Arc::new(cube_series::CubeSeries::open(dir)?));
        Ok(())
    }

    /// [`SqlSession::add_cube`] for a server's users: a call that would read more than
    /// `max_cost` cell values is refused before it runs
    /// ([`cube_series::CubeSeries::with_max_cost`]).
    pub fn add_cube_bounded(&self, dir: &Path, max_cost: u64) -> Result<(), SqlError> {
        self.ctx.register_udtf(cube_series::NAME, Arc::new(cube_series::CubeSeries::open(dir)?.with_max_cost(max_cost)));
        Ok(())
    }

    /// The names of the session's table functions (DataFusion's own, such as
    /// `generate_series`, and `cube_series` once a cube is added), sorted.
    pub fn function_names(&self) -> Vec<String> {
        let mut names: Vec<String> = self.ctx.state().table_functions().keys().cloned().collect();
        names.sort();
        names
    }

    /// The trace sets of the session.
    pub fn sources(&self) -> &Sources {
        &self.sources
    }

    /// Runs `query` and returns every batch of its result.
    pub fn query(&self, query: &str) -> Result<Vec<RecordBatch>, SqlError> {
        let mut out = Vec::new();
        self.query_each(query, |b| {
            out.push(b);
            Ok(())
        })?;
        Ok(out)
    }

    /// Runs `query`, handing each batch of its result to `each` as it comes (memory
    /// stays bounded by the batches in flight, whatever the result's size).
    pub fn query_each(&self, query: &str, mut each: impl FnMut(RecordBatch) -> Result<(), SqlError>) -> Result<(), SqlError> {
        self.run_each(query, &mut each)
    }

    /// [`SqlSession::query_each`] without generics: DataFusion's async code is then
    /// compiled once, in this crate, not again in every caller (which made the
    /// `tracecube` binary's build minutes longer).
    fn run_each(&self, query: &str, each: &mut dyn FnMut(RecordBatch) -> Result<(), SqlError>) -> Result<(), SqlError> {
        self.rt.block_on(async {
            let df = self.ctx.sql(query).await?;
            for_each_batch(df, &mut |b| each(b).map(|()| ControlFlow::Continue(()))).await
        })
    }

    /// Runs a read-only `query`, as a server's users may: no DDL, DML or statements
    /// (nothing created, written or set); at most `max_rows` rows are kept; a query
    /// still running after `timeout` is cancelled (its scans stop) and is an error.
    pub fn query_bounded(&self, query: &str, max_rows: usize, timeout: Duration) -> Result<Bounded, SqlError> {
        let read_only = SQLOptions::new().with_allow_ddl(false).with_allow_dml(false).with_allow_statements(false);
        let work = async {
            let df = self.ctx.sql_with_options(query, read_only).await?;
            let columns = df.schema().fields().iter().map(|f| f.name().clone()).collect();
            let mut out = Bounded { columns, batches: Vec::new(), rows: 0, truncated: false };
            for_each_batch(df, &mut |b| {
                let room = max_rows - out.rows;
                if b.num_rows() > room {
                    out.batches.push(b.slice(0, room));
                    out.rows = max_rows;
                    out.truncated = true;
                    return Ok(ControlFlow::Break(()));
                }
                out.rows += b.num_rows();
                out.batches.push(b);
                Ok(ControlFlow::Continue(()))
            })
            .await?;
            Ok(out)
        };
        self.rt.block_on(async {
            match tokio::time::timeout(timeout, work).await {
                Ok(r) => r,
                Err(_) => Err(SqlError::Query(format!("the query ran longer than {} s and was cancelled", timeout.as_secs_f64()))),
            }
        })
    }

    /// The names of the tables, sorted.
    pub fn table_names(&self) -> Vec<String> {
        let mut names: Vec<String> = self.ctx.catalog("datafusion").and_then(|c| c.schema("public")).map(|s| s.table_names()).unwrap_or_default();
        names.sort();
        names
    }

    /// The column names of every table, sorted and without repeats.
    pub fn column_names(&self) -> Vec<String> {
        let mut names = Vec::new();
        if let Some(s) = self.ctx.catalog("datafusion").and_then(|c| c.schema("public")) {
            for t in s.table_names() {
                if let Ok(Some(p)) = self.rt.block_on(s.table(&t)) {
                    names.extend(p.schema().fields().iter().map(|f| f.name().clone()));
                }
            }
        }
        names.sort();
        names.dedup();
        names
    }
}

/// Executes `df`, handing its batches to `each` in order until `each` breaks (the
/// stream is then dropped, which stops the scans).
async fn for_each_batch(df: datafusion::dataframe::DataFrame, each: &mut dyn FnMut(RecordBatch) -> Result<ControlFlow<()>, SqlError>) -> Result<(), SqlError> {
    let mut stream = df.execute_stream().await?;
    while let Some(b) = stream.next().await {
        if each(b?)?.is_break() {
            break;
        }
    }
    Ok(())
}
