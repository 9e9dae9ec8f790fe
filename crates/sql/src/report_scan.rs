//! The scan of a report table: one partition per trace set, each running that set's
//! analysis on a blocking thread when it is executed, its rows (only the projected
//! columns are built) sent through a channel of [`IN_FLIGHT`] batches as they come
//! (the analysis waits while the channel is full, and stops when the query no longer
//! reads). Filters are applied above the scan; a limit stops a partition's output,
//! and its analysis, early.

use crate::leaf_plan::leaf_properties;
use std::ops::ControlFlow;
use std::sync::Arc;

use datafusion::arrow::datatypes::SchemaRef;
use datafusion::arrow::record_batch::RecordBatch;
use datafusion::common::{DataFusionError, Result};
use datafusion::execution::{SendableRecordBatchStream, TaskContext};
use datafusion::physical_plan::stream::RecordBatchStreamAdapter;
use datafusion::physical_plan::{DisplayAs, DisplayFormatType, ExecutionPlan, PlanProperties};
use tokio::sync::mpsc::Sender;

use crate::reports::ReportProvider;

/// The most batches of a partition sent and not yet read by the query.
pub const IN_FLIGHT: usize = 2;

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
        let props = leaf_properties(schema.clone(), table.sources().sets.len().max(1), true);
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

    /// Sends partition `partition`'s batches (its trace set's rows, projected and cut
    /// at the limit) through `tx` as they come, then its error if any; stops when the
    /// receiver is gone (the query ended or no longer needs rows).
    fn send_partition(table: &ReportProvider, partition: usize, projection: Option<&[usize]>, limit: Option<usize>, tx: &Sender<Result<RecordBatch>>) {
        let Some(src) = table.sources().sets.get(partition) else { return };
        let mut left = limit.unwrap_or(usize::MAX);
        let mut send = |b: RecordBatch| {
            if left == 0 {
                return ControlFlow::Break(());
            }
            let b = if b.num_rows() > left { b.slice(0, left) } else { b };
            left -= b.num_rows();
            // (Blocks while the channel is full: the analysis waits for the query.)
            match tx.blocking_send(Ok(b)) {
                Ok(()) if left > 0 => ControlFlow::Continue(()),
                _ => ControlFlow::Break(()),
            }
        };
        let r = table.stream_batches(src, table.sources().partitions, projection, &mut send);
        if let Some(e) = r.err() {
            let _ = tx.blocking_send(Err(e));
        }
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
    crate::leaf_plan_methods!("ReportScanExec");

    fn execute(&self, partition: usize, _context: Arc<TaskContext>) -> Result<SendableRecordBatchStream> {
        let (table, projection, limit) = (self.table.clone(), self.projection.clone(), self.limit);
        let (tx, rx) = tokio::sync::mpsc::channel(IN_FLIGHT);
        tokio::task::spawn_blocking(move || {
            let run = std::panic::AssertUnwindSafe(|| ReportScanExec::send_partition(&table, partition, projection.as_deref(), limit, &tx));
            if std::panic::catch_unwind(run).is_err() {
                let _ = tx.blocking_send(Err(DataFusionError::Execution("the analysis thread failed (a panic)".into())));
            }
        });
        let batches = futures::stream::unfold(rx, |mut rx| async move { rx.recv().await.map(|b| (b, rx)) });
        Ok(Box::pin(RecordBatchStreamAdapter::new(self.schema.clone(), batches)))
    }
}
