//! The scan of a report table: one partition per trace set, each running that set's
//! analysis on a blocking thread when it is executed, then streaming the projected
//! rows. Filters are applied above the scan; a limit stops a partition's output early.

use std::sync::Arc;

use datafusion::arrow::datatypes::SchemaRef;
use datafusion::arrow::record_batch::RecordBatch;
use datafusion::common::{DataFusionError, Result};
use datafusion::execution::{SendableRecordBatchStream, TaskContext};
use datafusion::physical_expr::EquivalenceProperties;
use datafusion::physical_plan::execution_plan::{Boundedness, EmissionType};
use datafusion::physical_plan::stream::RecordBatchStreamAdapter;
use datafusion::physical_plan::{DisplayAs, DisplayFormatType, ExecutionPlan, Partitioning, PlanProperties};
use futures::StreamExt;

use crate::reports::ReportProvider;

/// The physical scan of a report table.
pub struct ReportScanExec {
    table: Arc<ReportProvider>,
    projection: Option<Vec<usize>>,
    limit: Option<usize>,
    schema: SchemaRef,
    props: Arc<PlanProperties>,
}

impl std::fmt::Debug for ReportScanExec {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "ReportScanExec({}, {:?}, {:?})", self.table.which().name(), self.projection, self.limit)
    }
}

impl ReportScanExec {
    /// A scan of `table`'s columns `projection` (None: all), at most `limit` rows per
    /// partition.
    pub fn new(table: ReportProvider, projection: Option<Vec<usize>>, limit: Option<usize>) -> Result<ReportScanExec> {
        use datafusion::catalog::TableProvider;
        let schema = match &projection {
            Some(p) => Arc::new(table.schema().project(p)?),
            None => table.schema(),
        };
        let props = PlanProperties::new(
            EquivalenceProperties::new(schema.clone()),
            Partitioning::UnknownPartitioning(table.sources().sets.len().max(1)),
            EmissionType::Final,
            Boundedness::Bounded,
        );
        Ok(ReportScanExec { table: Arc::new(table), projection, limit, schema, props: Arc::new(props) })
    }

    /// The table it scans.
    pub fn table(&self) -> &ReportProvider {
        &self.table
    }

    /// The projected columns (None: all).
    pub fn projection(&self) -> Option<&[usize]> {
        self.projection.as_deref()
    }

    /// The row limit per partition.
    pub fn limit(&self) -> Option<usize> {
        self.limit
    }

    /// The batches of partition `partition`: its trace set's rows, projected and cut
    /// at the limit.
    fn partition_batches(table: &ReportProvider, partition: usize, projection: Option<&[usize]>, limit: Option<usize>) -> Result<Vec<RecordBatch>> {
        let Some(src) = table.sources().sets.get(partition) else { return Ok(Vec::new()) };
        let mut left = limit.unwrap_or(usize::MAX);
        let mut out = Vec::new();
        for b in table.batches(src, table.sources().partitions)? {
            if left == 0 {
                break;
            }
            let b = match projection {
                Some(p) => b.project(p)?,
                None => b,
            };
            let b = if b.num_rows() > left { b.slice(0, left) } else { b };
            left -= b.num_rows();
            out.push(b);
        }
        Ok(out)
    }
}

impl DisplayAs for ReportScanExec {
    fn fmt_as(&self, _t: DisplayFormatType, f: &mut std::fmt::Formatter) -> std::fmt::Result {
        let names: Vec<String> = self.schema.fields().iter().map(|f| f.name().clone()).collect();
        write!(
            f,
            "ReportScanExec: table={}, partitions={}, columns=[{}]",
            self.table.which().name(),
            self.props.partitioning.partition_count(),
            names.join(", ")
        )?;
        if let Some(l) = self.limit {
            write!(f, ", limit={l}")?;
        }
        Ok(())
    }
}

impl ExecutionPlan for ReportScanExec {
    fn name(&self) -> &str {
        "ReportScanExec"
    }

    fn properties(&self) -> &Arc<PlanProperties> {
        &self.props
    }

    fn children(&self) -> Vec<&Arc<dyn ExecutionPlan>> {
        Vec::new()
    }

    fn with_new_children(self: Arc<Self>, _children: Vec<Arc<dyn ExecutionPlan>>) -> Result<Arc<dyn ExecutionPlan>> {
        Ok(self)
    }

    fn execute(&self, partition: usize, _context: Arc<TaskContext>) -> Result<SendableRecordBatchStream> {
        let (table, projection, limit) = (self.table.clone(), self.projection.clone(), self.limit);
        let work = tokio::task::spawn_blocking(move || ReportScanExec::partition_batches(&table, partition, projection.as_deref(), limit));
        let batches = futures::stream::once(async move {
            let found: Vec<Result<RecordBatch>> = match work.await {
                Ok(Ok(b)) => b.into_iter().map(Ok).collect(),
                Ok(Err(e)) => vec![Err(e)],
                Err(e) => vec![Err(DataFusionError::Execution(format!("the analysis thread failed: {e}")))],
            };
            futures::stream::iter(found)
        })
        .flatten();
        Ok(Box::pin(RecordBatchStreamAdapter::new(self.schema.clone(), batches)))
    }
}
