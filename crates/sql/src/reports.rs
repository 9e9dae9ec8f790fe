//! The analyses' results as tables (`cpu_usage`, `cpu_usage_per_cpu`, `io_usage`,
//! `io_files`): each computed when a query scans it, by the analysis of the
//! `analysis` crate through the engine (the same numbers as `tracecube analyze`, at
//! any partitioning), one run per trace set, with a `trace` column.

use std::sync::Arc;

use analysis::{AnalysisKind, Report, RunOptions};
use async_trait::async_trait;
use datafusion::arrow::datatypes::{DataType, Field, Schema, SchemaRef};
use datafusion::arrow::json::ReaderBuilder;
use datafusion::catalog::{Session, TableProvider};
use datafusion::common::{DataFusionError, Result};
use datafusion::datasource::MemTable;
use datafusion::logical_expr::{Expr, TableType};
use datafusion::physical_plan::ExecutionPlan;
use serde_json::Value;

use crate::source::Sources;

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
}

impl ReportTable {
    /// Every report table.
    pub const ALL: [ReportTable; 4] = [ReportTable::CpuUsage, ReportTable::CpuUsagePerCpu, ReportTable::IoUsage, ReportTable::IoFiles];

    /// The table's name.
    pub fn name(self) -> &'static str {
        match self {
            ReportTable::CpuUsage => "cpu_usage",
            ReportTable::CpuUsagePerCpu => "cpu_usage_per_cpu",
            ReportTable::IoUsage => "io_usage",
            ReportTable::IoFiles => "io_files",
        }
    }

    /// The analysis behind it.
    fn analysis(self) -> AnalysisKind {
        match self {
            ReportTable::CpuUsage | ReportTable::CpuUsagePerCpu => AnalysisKind::Cpu,
            ReportTable::IoUsage | ReportTable::IoFiles => AnalysisKind::Io,
        }
    }

    /// Its columns after `trace` (named as the report's JSON fields).
    fn columns(self) -> Vec<(&'static str, DataType)> {
        use DataType::{Float64, Int32, UInt32, UInt64, Utf8};
        match self {
            ReportTable::CpuUsage => vec![("tid", Int32), ("pid", Int32), ("comm", Utf8), ("cpu_ns", UInt64), ("migrations", UInt64), ("usage", Float64)],
            ReportTable::CpuUsagePerCpu => vec![("cpu", UInt32), ("busy_ns", UInt64), ("usage", Float64)],
            ReportTable::IoUsage => vec![("tid", Int32), ("pid", Int32), ("comm", Utf8), ("read_bytes", UInt64), ("write_bytes", UInt64)],
            ReportTable::IoFiles => vec![("path", Utf8), ("read_bytes", UInt64), ("write_bytes", UInt64)],
        }
    }

    /// The rows of `r` for this table, as JSON objects.
    fn rows(self, r: &Report) -> Result<Vec<Value>, serde_json::Error> {
        let v = |x: &dyn erased::Ser| x.to_values();
        match (self, r) {
            (ReportTable::CpuUsage, Report::Cpu(c)) => v(&c.threads),
            (ReportTable::CpuUsagePerCpu, Report::Cpu(c)) => v(&c.cpus),
            (ReportTable::IoUsage, Report::Io(i)) => v(&i.threads),
            (ReportTable::IoFiles, Report::Io(i)) => v(&i.files),
            _ => Ok(Vec::new()),
        }
    }
}

/// Serialising rows of any report type to JSON values.
mod erased {
    /// A list of rows that serialise.
    pub trait Ser {
        /// Each row as a JSON value.
        fn to_values(&self) -> Result<Vec<serde_json::Value>, serde_json::Error>;
    }
    impl<T: serde::Serialize> Ser for Vec<T> {
        fn to_values(&self) -> Result<Vec<serde_json::Value>, serde_json::Error> {
            self.iter().map(serde_json::to_value).collect()
        }
    }
}

/// A report table over the traces of a session.
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

    /// Runs the analysis over every trace set and builds the table's rows.
    fn compute(&self) -> Result<Vec<datafusion::arrow::record_batch::RecordBatch>> {
        let mut out = Vec::new();
        let opts = RunOptions { threads: self.sources.partition_count(), ..RunOptions::default() };
        for src in &self.sources.sets {
            let report =
                analysis::run(&src.set, self.which.analysis(), &opts).map_err(|e| DataFusionError::Execution(format!("{}: {e}", src.path.display())))?;
            let name = src.names.first().cloned().unwrap_or_default();
            let mut rows = self.which.rows(&report).map_err(|e| DataFusionError::External(Box::new(e)))?;
            for r in &mut rows {
                if let Value::Object(m) = r {
                    m.insert("trace".into(), Value::String(name.clone()));
                }
            }
            let mut decoder = ReaderBuilder::new(self.schema.clone()).with_batch_size(rows.len().max(1)).build_decoder()?;
            decoder.serialize(&rows)?;
            out.extend(decoder.flush()?);
        }
        Ok(out)
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

    async fn scan(&self, state: &dyn Session, projection: Option<&Vec<usize>>, filters: &[Expr], limit: Option<usize>) -> Result<Arc<dyn ExecutionPlan>> {
        let batches = self.compute()?;
        let mem = MemTable::try_new(self.schema.clone(), vec![batches])?;
        mem.scan(state, projection, filters, limit).await
    }
}
