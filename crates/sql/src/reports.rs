//! The analyses' results as tables, each computed when a query scans it by the
//! analysis of the `analysis` crate through the engine (the same numbers as `tracecube
//! analyze`, at any partitioning), one run per trace set, with a `trace` column:
//! - totals: `cpu_usage`, `cpu_usage_per_cpu`, `io_usage`, `io_files`, `syscall_stats`;
//! - one row per occurrence, from the kernel model's replay in the latency analyses
//!   (their `--log`): `sched_slices` (cpu's executions), `syscalls`, `wakeups`, `irqs`,
//!   `block_requests`, and `io`, each read or write that moved bytes, with its file
//!   (`analyze -a io`'s replay of the fd tables);
//! - `threads`: each thread's names with their validity ranges, from the kernel
//!   model's thread table ([`analysis::threads`]).
//!
//! A scan ([`ReportScanExec`]) has one partition per trace set, which runs that set's
//! analysis when it is executed (so that on a cluster each executor analyses its own
//! sets). The occurrences of `sched_slices`, `wakeups`, `irqs`, `syscalls`, `io` and
//! `block_requests` stream as the analysis merges its chunks in time order
//! ([`analysis::occurrences`]: the memory held is that of the slices in flight and a
//! few batches); the other tables' rows exist once their analysis has merged every
//! chunk, and are held until then.

use std::sync::Arc;

use std::ops::ControlFlow;

use analysis::occurrences::Occurrences;
use analysis::{AnalysisKind, EngineError, Report, RunOptions};
use async_trait::async_trait;
use datafusion::arrow::datatypes::{DataType, Field, Schema, SchemaRef};
use datafusion::catalog::{Session, TableProvider};
use datafusion::common::{DataFusionError, Result};
use datafusion::logical_expr::{Expr, TableType};
use datafusion::physical_plan::ExecutionPlan;
use serde::Serialize;

use datafusion::arrow::record_batch::RecordBatch;

pub use crate::report_scan::ReportScanExec;
use crate::rows::{RowBuilder, Scalar};
use crate::source::{Source, Sources};

/// One table of analysis results.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ReportTable {
    /// Per thread CPU time (`analyze -a cpu`, its threads).
    CpuUsage,
    /// Per CPU busy time (`analyze -a cpu`, its CPUs).
    CpuUsagePerCpu,
    /// Per thread bytes read and written (`analyze -a io`, its threads).
    IoUsage,
    /// Per file bytes read and written (`analyze -a io`, its files).
    IoFiles,
    /// Per thread and system call: count and durations (`analyze -a syscall`).
    SyscallStats,
    /// Every execution of a thread on a CPU, switch to switch (`analyze -a cpu --log`).
    SchedSlices,
    /// Every system call, entry to exit (`analyze -a syscall --log`).
    Syscalls,
    /// Every wake-up, to the switch that runs the task (`analyze -a sched --log`).
    Wakeups,
    /// Every hard and soft IRQ handler run (`analyze -a irq --log`).
    Irqs,
    /// Every block request, issue to completion (`analyze -a block --log`).
    BlockRequests,
    /// Every name of every thread, with when it held it ([`analysis::threads`]).
    Threads,
    /// Every read or write that moved bytes, with its fd and file (`analyze -a io
    /// --log`).
    Io,
}

impl ReportTable {
    /// Every report table.
    pub const ALL: [ReportTable; 12] = [
        ReportTable::CpuUsage,
        ReportTable::CpuUsagePerCpu,
        ReportTable::IoUsage,
        ReportTable::IoFiles,
        ReportTable::SyscallStats,
        ReportTable::SchedSlices,
        ReportTable::Syscalls,
        ReportTable::Wakeups,
        ReportTable::Irqs,
        ReportTable::BlockRequests,
        ReportTable::Threads,
        ReportTable::Io,
    ];

    /// The table's name.
    pub fn name(self) -> &'static str {
        match self {
            ReportTable::CpuUsage => "cpu_usage",
            ReportTable::CpuUsagePerCpu => "cpu_usage_per_cpu",
            ReportTable::IoUsage => "io_usage",
            ReportTable::IoFiles => "io_files",
            ReportTable::SyscallStats => "syscall_stats",
            ReportTable::SchedSlices => "sched_slices",
            ReportTable::Syscalls => "syscalls",
            ReportTable::Wakeups => "wakeups",
            ReportTable::Irqs => "irqs",
            ReportTable::BlockRequests => "block_requests",
            ReportTable::Threads => "threads",
            ReportTable::Io => "io",
        }
    }

    /// The table named `name`.
    pub fn by_name(name: &str) -> Option<ReportTable> {
        ReportTable::ALL.into_iter().find(|t| t.name() == name)
    }

    /// The analysis behind it (`None`: [`analysis::threads`], not an [`AnalysisKind`]).
    fn analysis(self) -> Option<AnalysisKind> {
        Some(match self {
            ReportTable::CpuUsage | ReportTable::CpuUsagePerCpu | ReportTable::SchedSlices => AnalysisKind::Cpu,
            ReportTable::IoUsage | ReportTable::IoFiles | ReportTable::Io => AnalysisKind::Io,
            ReportTable::SyscallStats | ReportTable::Syscalls => AnalysisKind::Syscall,
            ReportTable::Wakeups => AnalysisKind::Sched,
            ReportTable::Irqs => AnalysisKind::Irq,
            ReportTable::BlockRequests => AnalysisKind::Block,
            ReportTable::Threads => return None,
        })
    }

    /// Whether the table lists every occurrence (the analysis' `--log`).
    fn is_log(self) -> bool {
        matches!(
            self,
            ReportTable::SchedSlices | ReportTable::Syscalls | ReportTable::Wakeups | ReportTable::Irqs | ReportTable::BlockRequests | ReportTable::Io
        )
    }

    /// Its columns after `trace` (named as the report's JSON fields).
    fn columns(self) -> Vec<(&'static str, DataType)> {
        use DataType::{Boolean, Float64, Int32, Int64, UInt32, UInt64, Utf8};
        match self {
            ReportTable::CpuUsage => vec![("tid", Int32), ("pid", Int32), ("comm", Utf8), ("cpu_ns", UInt64), ("migrations", UInt64), ("usage", Float64)],
            ReportTable::CpuUsagePerCpu => vec![("cpu", UInt32), ("busy_ns", UInt64), ("usage", Float64)],
            ReportTable::IoUsage => vec![("tid", Int32), ("pid", Int32), ("comm", Utf8), ("read_bytes", UInt64), ("write_bytes", UInt64)],
            ReportTable::IoFiles => vec![("path", Utf8), ("read_bytes", UInt64), ("write_bytes", UInt64)],
            ReportTable::SyscallStats => vec![
                ("tid", Int32),
                ("pid", Int32),
                ("comm", Utf8),
                ("name", Utf8),
                ("count", UInt64),
                ("errors", UInt64),
                ("total_ns", UInt64),
                ("min_ns", UInt64),
                ("mean_ns", Float64),
                ("max_ns", UInt64),
                ("stdev_ns", Float64),
            ],
            ReportTable::SchedSlices => {
                vec![("cpu", UInt32), ("tid", Int32), ("pid", Int32), ("comm", Utf8), ("begin_ns", Int64), ("end_ns", Int64), ("end_state", Utf8)]
            }
            ReportTable::Syscalls => {
                vec![
                    ("tid", Int32),
                    ("pid", Int32),
                    ("comm", Utf8),
                    ("name", Utf8),
                    ("begin_ns", Int64),
                    ("end_ns", Int64),
                    ("duration_ns", UInt64),
                    ("ret", Int64),
                    ("fd", Int32),
                    ("path", Utf8),
                ]
            }
            ReportTable::Wakeups => {
                vec![("tid", Int32), ("comm", Utf8), ("prio", Int32), ("waker", Int32), ("wakeup_ns", Int64), ("switch_ns", Int64), ("latency_ns", UInt64)]
            }
            ReportTable::Irqs => vec![("nr", UInt32), ("hard", Boolean), ("begin_ns", Int64), ("duration_ns", UInt64)],
            ReportTable::BlockRequests => {
                vec![("disk", Utf8), ("tid", Int32), ("write", Boolean), ("sector", UInt64), ("bytes", UInt64), ("begin_ns", Int64), ("duration_ns", UInt64)]
            }
            ReportTable::Threads => vec![("tid", Int32), ("pid", Int32), ("name", Utf8), ("valid_from_ns", Int64), ("valid_to_ns", Int64)],
            ReportTable::Io => {
                vec![
                    ("tid", Int32),
                    ("pid", Int32),
                    ("comm", Utf8),
                    ("exit_ns", Int64),
                    ("fd", Int32),
                    ("path", Utf8),
                    ("bytes", UInt64),
                    ("kind", Utf8),
                    ("entry_ns", Int64),
                    ("name", Utf8),
                ]
            }
        }
    }

    /// Appends the rows of `r` for this table to `b`, each with the `trace` column
    /// `trace`.
    fn append(self, r: &Report, trace: &str, b: &mut RowBuilder) -> Result<()> {
        let name = [("trace", Scalar::Str(trace))];
        let all = |b: &mut RowBuilder, rows: &dyn erased::Rows| rows.push_all(b, &name);
        match (self, r) {
            (ReportTable::CpuUsage, Report::Cpu(c)) => all(b, &c.threads),
            (ReportTable::CpuUsagePerCpu, Report::Cpu(c)) => all(b, &c.cpus),
            (ReportTable::IoUsage, Report::Io(i)) => all(b, &i.threads),
            (ReportTable::IoFiles, Report::Io(i)) => all(b, &i.files),
            (ReportTable::SyscallStats, Report::Syscall(r)) => all(b, &syscall_stats(r)),
            (ReportTable::SchedSlices, Report::Cpu(c)) => all(b, &c.executions),
            (ReportTable::Syscalls, Report::Syscall(r)) => all(b, &r.log),
            (ReportTable::Wakeups, Report::Sched(r)) => all(b, &r.log),
            (ReportTable::Irqs, Report::Irq(r)) => all(b, &r.log),
            (ReportTable::BlockRequests, Report::Block(r)) => all(b, &r.log),
            (ReportTable::Io, Report::Io(r)) => with_calls(&r.transfers, trace, b),
            _ => Ok(()),
        }
    }
}

/// A row of `syscall_stats`: a thread's calls of one name, durations flattened.
#[derive(Serialize)]
struct StatRow<'r> {
    tid: Option<i32>,
    pid: Option<i32>,
    comm: &'r str,
    name: &'r str,
    count: u64,
    errors: u64,
    total_ns: u64,
    min_ns: u64,
    mean_ns: f64,
    max_ns: u64,
    stdev_ns: Option<f64>,
}

/// The rows of `syscall_stats`: one per thread and system call, with its durations
/// flattened and its failed calls (every return value but `success`) summed.
fn syscall_stats(r: &analysis::SyscallReport) -> Vec<StatRow<'_>> {
    let mut rows = Vec::new();
    for t in &r.threads {
        for c in &t.calls {
            let l = &c.latency;
            let errors: u64 = c.returns.iter().filter(|(k, _)| k.as_str() != "success").map(|(_, n)| n).sum();
            rows.push(StatRow {
                tid: t.tid,
                pid: t.pid,
                comm: &t.comm,
                name: &c.name,
                count: l.count,
                errors,
                total_ns: l.total_ns,
                min_ns: l.min_ns,
                mean_ns: l.mean_ns,
                max_ns: l.max_ns,
                stdev_ns: l.stdev_ns,
            });
        }
    }
    rows
}

/// Appends the rows of the `io` table: each transfer with the entry time and name of
/// its system call, which io's replay gives it (the kernel model's pending call, the
/// one the syscall analysis completes: one run, not two).
fn with_calls(transfers: &[analysis::io::TransferRow], trace: &str, b: &mut RowBuilder) -> Result<()> {
    for t in transfers {
        let entry = t.entry_ns.map_or(Scalar::Null, |e| Scalar::Int(e.into()));
        let name = t.name.as_deref().map_or(Scalar::Null, Scalar::Str);
        b.push_with(t, &[("trace", Scalar::Str(trace)), ("entry_ns", entry), ("name", name)])?;
    }
    Ok(())
}

/// Appending rows of any report type.
mod erased {
    use super::{RowBuilder, Scalar};
    use datafusion::common::Result;

    /// A list of rows that serialise.
    pub trait Rows {
        /// Appends each row to `b`, with the values `extra`.
        fn push_all(&self, b: &mut RowBuilder, extra: &[(&str, Scalar)]) -> Result<()>;
    }
    impl<T: serde::Serialize> Rows for Vec<T> {
        fn push_all(&self, b: &mut RowBuilder, extra: &[(&str, Scalar)]) -> Result<()> {
            self.iter().try_for_each(|r| b.push_with(r, extra))
        }
    }
}

/// A report table over the traces of a session.
#[derive(Clone)]
pub struct ReportProvider {
    sources: Arc<Sources>,
    which: ReportTable,
    schema: SchemaRef,
}

impl std::fmt::Debug for ReportProvider {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "ReportProvider({})", self.which.name())
    }
}

impl ReportProvider {
    /// Table `which` over `sources`.
    pub fn new(sources: Arc<Sources>, which: ReportTable) -> ReportProvider {
        let mut fields = vec![Field::new("trace", DataType::Utf8, false)];
        fields.extend(which.columns().into_iter().map(|(n, t)| Field::new(n, t, true)));
        ReportProvider { sources, which, schema: Arc::new(Schema::new(fields)) }
    }

    /// Table `which` over `sources`, as [`crate::wire`] carries it.
    pub fn which(&self) -> ReportTable {
        self.which
    }

    /// The trace sets it reads.
    pub fn sources(&self) -> &Arc<Sources> {
        &self.sources
    }

    /// Runs the analysis over trace set `src`, with analysis threads `threads` (0:
    /// one per core), and hands `send` its rows of the table, of the columns
    /// `projection` (None: all; only those are built), in batches of at most
    /// [`BATCH_ROWS`] rows. An occurrence table (its analysis hands its log over as
    /// the run goes, [`analysis::occurrences`]) sends its rows as the engine's ordered
    /// merge passes them, so that the run holds the rows of the slices in flight only
    /// (and waits while `send` does); the other tables send theirs once the run has
    /// ended. `send` returning `Break` stops the run (no error).
    pub fn stream_batches(
        &self,
        src: &Source,
        threads: usize,
        projection: Option<&[usize]>,
        send: &mut dyn FnMut(RecordBatch) -> ControlFlow<()>,
    ) -> Result<()> {
        let threads = if threads == 0 { std::thread::available_parallelism().map_or(1, |n| n.get()) } else { threads };
        let opts = RunOptions { threads, log: self.which.is_log(), top: 0, ..RunOptions::default() };
        let failed = |e: analysis::AnalysisError| DataFusionError::Execution(format!("{}: {e}", src.path.display()));
        let name = src.names.first().map_or("", String::as_str);
        let schema = match projection {
            Some(p) => Arc::new(self.schema.project(p)?),
            None => self.schema.clone(),
        };
        let mut out = Batches { rows: RowBuilder::new(schema.clone())?, schema, send, error: None };
        match self.which.analysis() {
            Some(kind) => {
                let extra = [("trace", Scalar::Str(name))];
                let mut streamed = |o: Occurrences| {
                    out.push(|b| match &o {
                        Occurrences::Executions(rows) => erased::Rows::push_all(rows, b, &extra),
                        Occurrences::Wakeups(rows) => erased::Rows::push_all(rows, b, &extra),
                        Occurrences::Irqs(rows) => erased::Rows::push_all(rows, b, &extra),
                        Occurrences::Calls(rows) => erased::Rows::push_all(rows, b, &extra),
                        Occurrences::Transfers(rows) => with_calls(rows, name, b),
                        Occurrences::Requests(rows) => erased::Rows::push_all(rows, b, &extra),
                    })
                };
                let report = match analysis::occurrences::run_streaming(&src.set, kind, &opts, &mut streamed) {
                    // Stopped by `send`, or by a row that could not be built.
                    Err(analysis::AnalysisError::Engine(EngineError::Stopped)) => return out.error.map_or(Ok(()), Err),
                    r => r.map_err(failed)?,
                };
                if out.push(|b| self.which.append(&report, name, b)).is_break() {
                    return out.error.map_or(Ok(()), Err);
                }
            }
            None => {
                let threads = analysis::threads::run(&src.set, &opts).map_err(failed)?.threads;
                if out.push(|b| erased::Rows::push_all(&threads, b, &[("trace", Scalar::Str(name))])).is_break() {
                    return out.error.map_or(Ok(()), Err);
                }
            }
        }
        let _ = out.flush();
        out.error.map_or(Ok(()), Err)
    }
}

/// The most rows of a batch a report table sends.
pub const BATCH_ROWS: usize = 8192;

/// Rows on their way out of a report table: built into batches of [`BATCH_ROWS`] rows
/// at most, each handed to `send` when full.
struct Batches<'s> {
    schema: SchemaRef,
    rows: RowBuilder,
    send: &'s mut dyn FnMut(RecordBatch) -> ControlFlow<()>,
    /// The first error met (the rows stop there).
    error: Option<DataFusionError>,
}

impl Batches<'_> {
    /// Appends rows with `append`, then sends the full batches; `Break` when `send`
    /// stopped or a row could not be built (then in `error`).
    fn push(&mut self, append: impl FnOnce(&mut RowBuilder) -> Result<()>) -> ControlFlow<()> {
        if let Err(e) = append(&mut self.rows) {
            self.error = Some(e);
            return ControlFlow::Break(());
        }
        if self.rows.rows() >= BATCH_ROWS {
            return self.flush();
        }
        ControlFlow::Continue(())
    }

    /// Sends the rows appended so far (none: nothing), in batches of [`BATCH_ROWS`].
    fn flush(&mut self) -> ControlFlow<()> {
        if self.rows.rows() == 0 {
            return ControlFlow::Continue(());
        }
        let fresh = match RowBuilder::new(self.schema.clone()) {
            Ok(b) => b,
            Err(e) => return self.fail(e),
        };
        let batch = match std::mem::replace(&mut self.rows, fresh).finish() {
            Ok(b) => b,
            Err(e) => return self.fail(e),
        };
        let mut at = 0;
        while at < batch.num_rows() {
            let n = BATCH_ROWS.min(batch.num_rows() - at);
            (self.send)(batch.slice(at, n))?;
            at += n;
        }
        ControlFlow::Continue(())
    }

    /// Notes error `e` and stops.
    fn fail(&mut self, e: DataFusionError) -> ControlFlow<()> {
        self.error = Some(e);
        ControlFlow::Break(())
    }
}

#[async_trait]
impl TableProvider for ReportProvider {
    fn schema(&self) -> SchemaRef {
        self.schema.clone()
    }

    fn table_type(&self) -> TableType {
        TableType::Base
    }

    async fn scan(&self, _state: &dyn Session, projection: Option<&Vec<usize>>, _filters: &[Expr], limit: Option<usize>) -> Result<Arc<dyn ExecutionPlan>> {
        Ok(Arc::new(ReportScanExec::new(self.clone(), projection.cloned(), limit)?))
    }
}
