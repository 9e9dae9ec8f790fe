//! Fleet cubes (`tracecube cube build --cluster`): one cube over many hosts' traces,
//! its slices logged on the executors and applied in time order by the client.
//!
//! The build is the local one ([`cube_feed`]) cut between processes: the client opens
//! the fleet's trace set and cuts it into the build's slices (time ranges across every
//! host's streams, `engine::partition`); the scan [`CubeLogExec`] has one partition
//! per slice, and the executor that runs partition `k` opens the same set (at the same
//! path), cuts the same slices and ships slice `k`'s log ([`cube_feed::log_slice`]) as
//! one row `(part, log)`, the log in its wire form ([`SliceLog::encode`]). The client
//! orders the rows by part and hands the logs to the build's applier
//! ([`cube_feed::build_from_logs`]): the cube is the one a local `cube build` of the
//! same directory makes.
//!
//! The cluster re-runs the tasks of an executor it has lost, but the logs are the
//! job's output, fetched by the client from the executors that wrote them: an
//! executor lost after logging a slice fails that fetch. The client then asks again,
//! in a new job, for the slices it has not received (at most 3 times).
//!
//! The scan travels in plans as [`MAGIC`] then JSON (the set's path and how it is cut),
//! beside `sql`'s tables in this crate's codecs ([`crate::codec`]).

use std::collections::BTreeMap;
use std::fmt;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use ::cube::{Cube, CubeError};
use async_trait::async_trait;
use ctf::trace::TraceSet;
use cube_feed::log::{FeedLayout, SliceLog};
use cube_feed::{BuildOptions, BuildReport};
use datafusion::arrow::array::{Array, BinaryArray, UInt32Array};
use datafusion::arrow::datatypes::{DataType, Field, Schema, SchemaRef};
use datafusion::arrow::record_batch::RecordBatch;
use datafusion::catalog::{Session, TableProvider};
use datafusion::common::{DataFusionError, Result};
use datafusion::execution::{SendableRecordBatchStream, TaskContext};
use datafusion::logical_expr::{Expr, TableType};
use datafusion::physical_plan::stream::RecordBatchStreamAdapter;
use datafusion::physical_plan::{DisplayAs, DisplayFormatType, ExecutionPlan, PlanProperties};
use engine::{EngineError, EngineOptions, Partition};
use futures::StreamExt;
use serde::{Deserialize, Serialize};

use crate::FleetError;

/// The first bytes of an encoded [`CubeLogTable`] or [`CubeLogExec`].
pub const MAGIC: &[u8] = b"tracecube-cube-logs/1\n";

/// What every process needs to log the same slices: the set's directory, how it is
/// cut, and the finest frame.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Job {
    /// The fleet's trace directory (every trace below it), read at this path by every
    /// executor.
    pub path: PathBuf,
    /// Bytes of trace data per slice.
    pub slice_bytes: u64,
    /// The partition scheme (`hybrid`, `time` or `stream`).
    pub partition: String,
    /// The slices the client cut (each executor checks it cuts as many).
    pub parts: usize,
    /// The first slice this job logs: partition `p` of its scan logs slice `first + p`
    /// (0, unless the client asks again for the slices it did not receive).
    #[serde(default)]
    pub first: usize,
    /// The cube's finest granularity, ns.
    pub g0: i64,
}

impl Job {
    fn scheme(&self) -> Result<Partition> {
        self.partition.parse().map_err(|e| DataFusionError::Internal(format!("{e}")))
    }

    /// The slices of `set`, which must be as many as the client cut.
    fn slices(&self, set: &TraceSet) -> Result<Vec<engine::Slice>> {
        let slices = engine::partition(set, self.scheme()?, self.slice_bytes);
        if slices.len() != self.parts {
            return Err(DataFusionError::Execution(format!(
                "{}: cut into {} slices here and {} by the client: the traces differ between the machines (or changed)",
                self.path.display(),
                slices.len(),
                self.parts
            )));
        }
        Ok(slices)
    }

    /// The log of slice `k`, as bytes (run on an executor). Each task cuts the slices
    /// again rather than sharing them across tasks: cutting sorts the packets' times
    /// (the set's indexes are cached with the set), microseconds beside logging one.
    fn log(&self, k: usize) -> Result<Vec<u8>> {
        let (sources, _) = sql::Sources::open_cached(std::slice::from_ref(&self.path), 1).map_err(|e| DataFusionError::Execution(e.to_string()))?;
        let set = &sources.sets[0].set;
        let slices = self.slices(set)?;
        let slice = slices.get(k).ok_or_else(|| DataFusionError::Internal(format!("no slice {k} of {}", slices.len())))?;
        let mut log = cube_feed::log_slice(set, self.g0, slice).map_err(|e| DataFusionError::Execution(fault(set, &e)))?;
        Ok(log.encode())
    }
}

/// A stream's error, naming its host (the Machine member of its events) beside the
/// reader's own words (file, offset, cause).
fn fault(set: &TraceSet, e: &EngineError) -> String {
    match e {
        EngineError::Decode { stream, source } => {
            let host = cube_feed::build::hosts_of(set).get(*stream).cloned().unwrap_or_else(|| "unknown".into());
            format!("host {host}: {source}")
        }
        e => e.to_string(),
    }
}

fn schema() -> SchemaRef {
    Arc::new(Schema::new(vec![Field::new("part", DataType::UInt32, false), Field::new("log", DataType::Binary, false)]))
}

/// The table of a fleet build's slice logs: one row `(part, log)` per slice.
#[derive(Debug, Clone)]
pub struct CubeLogTable {
    /// The build.
    pub job: Job,
}

#[async_trait]
impl TableProvider for CubeLogTable {
    fn schema(&self) -> SchemaRef {
        schema()
    }

    fn table_type(&self) -> TableType {
        TableType::Base
    }

    async fn scan(&self, _state: &dyn Session, _projection: Option<&Vec<usize>>, _filters: &[Expr], _limit: Option<usize>) -> Result<Arc<dyn ExecutionPlan>> {
        Ok(Arc::new(CubeLogExec::new(self.job.clone())))
    }
}

/// The scan of [`CubeLogTable`]: partition `k` logs slice `k` (see the module docs).
pub struct CubeLogExec {
    job: Job,
    props: Arc<PlanProperties>,
}

impl fmt::Debug for CubeLogExec {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "CubeLogExec({:?})", self.job)
    }
}

impl CubeLogExec {
    /// The scan of `job`'s slices.
    pub fn new(job: Job) -> CubeLogExec {
        let props = sql::leaf_plan::leaf_properties(schema(), job.parts.saturating_sub(job.first).max(1), false);
        CubeLogExec { job, props: Arc::new(props) }
    }
}

impl DisplayAs for CubeLogExec {
    fn fmt_as(&self, _t: DisplayFormatType, f: &mut fmt::Formatter) -> fmt::Result {
        write!(f, "CubeLogExec: trace={}, slices={}..{}", self.job.path.display(), self.job.first, self.job.parts)
    }
}

impl ExecutionPlan for CubeLogExec {
    sql::leaf_plan_methods!("CubeLogExec");

    fn execute(&self, partition: usize, _context: Arc<TaskContext>) -> Result<SendableRecordBatchStream> {
        let job = self.job.clone();
        let slice = job.first + partition;
        let work = tokio::task::spawn_blocking(move || -> Result<RecordBatch> {
            let bytes = job.log(slice)?;
            let part = u32::try_from(slice).map_err(|_| DataFusionError::Internal(format!("slice {slice}")))?;
            let cols: Vec<Arc<dyn Array>> = vec![Arc::new(UInt32Array::from(vec![part])), Arc::new(BinaryArray::from(vec![bytes.as_slice()]))];
            Ok(RecordBatch::try_new(schema(), cols)?)
        });
        let batch = futures::stream::once(async move {
            match work.await {
                Ok(r) => r,
                Err(e) => Err(DataFusionError::Execution(format!("the logging thread failed: {e}"))),
            }
        });
        Ok(Box::pin(RecordBatchStreamAdapter::new(schema(), batch)))
    }
}

/// One table or scan of this module, as it travels.
#[derive(Serialize, Deserialize)]
enum Node {
    Table(Job),
    Scan(Job),
}

fn to_bytes(node: &Node) -> Result<Vec<u8>> {
    sql::wire::tagged_bytes(MAGIC, node)
}

fn from_bytes(buf: &[u8]) -> Result<Node> {
    sql::wire::from_tagged_bytes(MAGIC, "fleet cube scan", buf)
}

/// Whether `buf` holds a table or scan of this module.
pub fn is_ours(buf: &[u8]) -> bool {
    buf.starts_with(MAGIC)
}

/// The bytes of `table` when it is a [`CubeLogTable`].
pub fn encode_table(table: &dyn TableProvider) -> Option<Result<Vec<u8>>> {
    table.downcast_ref::<CubeLogTable>().map(|t| to_bytes(&Node::Table(t.job.clone())))
}

/// The table that [`encode_table`] wrote.
pub fn decode_table(buf: &[u8]) -> Result<Arc<dyn TableProvider>> {
    match from_bytes(buf)? {
        Node::Table(job) => Ok(Arc::new(CubeLogTable { job })),
        Node::Scan(_) => Err(DataFusionError::Internal("a fleet cube scan where a table was expected".into())),
    }
}

/// The bytes of `plan` when it is a [`CubeLogExec`].
pub fn encode_plan(plan: &dyn ExecutionPlan) -> Option<Result<Vec<u8>>> {
    plan.downcast_ref::<CubeLogExec>().map(|s| to_bytes(&Node::Scan(s.job.clone())))
}

/// The scan that [`encode_plan`] wrote.
pub fn decode_plan(buf: &[u8]) -> Result<Arc<dyn ExecutionPlan>> {
    match from_bytes(buf)? {
        Node::Scan(job) => Ok(Arc::new(CubeLogExec::new(job))),
        Node::Table(_) => Err(DataFusionError::Internal("a fleet cube table where a scan was expected".into())),
    }
}

/// The name of a partition scheme, as [`Partition`]'s `FromStr` reads it.
fn scheme_name(p: Partition) -> &'static str {
    match p {
        Partition::Hybrid => "hybrid",
        Partition::Time => "time",
        Partition::Stream => "stream",
    }
}

/// Builds the cube of the traces below `path` (opened here as `set`) on the cluster
/// whose scheduler is at `url`, with `opts`' config and partition scheme; slices are
/// `opts.chunk_size` bytes, or (0) about 8 per each of `opts.threads` workers (0: 16,
/// [`crate::client::DEFAULT_PARTITIONS`]) within the engine's bounds. Returns the cube
/// and the report of a local build.
pub fn build(url: &str, path: &Path, set: &TraceSet, opts: &BuildOptions) -> Result<(Cube, BuildReport), FleetError> {
    let workers = if opts.threads == 0 { crate::client::DEFAULT_PARTITIONS } else { opts.threads };
    let e = EngineOptions { threads: workers, chunk_size: opts.chunk_size, partition: opts.partition, ..Default::default() };
    let slice_bytes = e.slice_bytes(set);
    let parts = engine::partition(set, opts.partition, slice_bytes).len();
    let g0 = opts.config.levels.first().map_or(1, |l| l.granularity_ns as i64);
    let job = Job { path: path.to_path_buf(), slice_bytes, partition: scheme_name(opts.partition).into(), parts, first: 0, g0 };
    let (rt, ctx) = crate::client::remote(url, 2)?;
    let submit = |first: usize| -> Result<SendableRecordBatchStream> {
        let df = ctx.read_table(Arc::new(CubeLogTable { job: Job { first, ..job.clone() } }))?;
        rt.block_on(df.execute_stream())
    };
    let mut stream = submit(0).map_err(|e| FleetError::Ballista(e.to_string()))?;
    let mut resubmits = 0;
    let (streams, names) = (set.streams.len(), FeedLayout::new(set).model.names.len());
    // Rows come in any order: each part waits here until the parts before it came.
    let mut waiting: BTreeMap<u32, Vec<u8>> = BTreeMap::new();
    let mut next = 0u32;
    let logs = std::iter::from_fn(|| -> Option<::cube::Result<SliceLog>> {
        loop {
            if let Some(bytes) = waiting.remove(&next) {
                next += 1;
                let log =
                    SliceLog::decode(&bytes, g0, streams, names).map_err(|e| CubeError::Trace(format!("the log of slice {} from the cluster: {e}", next - 1)));
                return Some(log);
            }
            if next as usize >= parts {
                return None;
            }
            let batch = match rt.block_on(stream.next()) {
                Some(Ok(b)) => b,
                Some(Err(e)) if executor_lost(&e) && resubmits < MAX_RESUBMITS => {
                    // The logs already received stay; the others are asked again,
                    // from executors that still answer.
                    resubmits += 1;
                    match submit(next as usize) {
                        Ok(s) => stream = s,
                        Err(e) => return Some(Err(CubeError::Trace(e.to_string()))),
                    }
                    continue;
                }
                Some(Err(e)) => return Some(Err(CubeError::Trace(e.to_string()))),
                None => return Some(Err(CubeError::Trace(format!("the cluster answered {next} of {parts} slices' logs")))),
            };
            if let Err(e) = take_rows(&batch, &mut waiting) {
                return Some(Err(e));
            }
        }
    });
    Ok(cube_feed::build_from_logs(set, opts, logs, workers)?)
}

/// How many times a build asks again for the slices it has not received when an
/// executor that held some of them is lost.
const MAX_RESUBMITS: usize = 3;

/// Whether `e` says an executor could not be reached: a job's outputs are fetched
/// from the executors that wrote them, so an executor lost after writing a slice's
/// log (and before the scheduler noticed) fails the fetch, though the cluster could
/// log that slice again. (Ballista tells this only in its error's text.)
fn executor_lost(e: &DataFusionError) -> bool {
    let text = e.to_string();
    ["GrpcConnectionError", "Connection refused", "connection reset", "FetchFailed"].iter().any(|t| text.contains(t))
}

/// The rows of `batch` into `waiting`, by part.
fn take_rows(batch: &RecordBatch, waiting: &mut BTreeMap<u32, Vec<u8>>) -> ::cube::Result<()> {
    let bad = || CubeError::Trace("the cluster answered rows that are not slice logs".into());
    let parts = batch.column(0).as_any().downcast_ref::<UInt32Array>().ok_or_else(bad)?;
    let logs = batch.column(1).as_any().downcast_ref::<BinaryArray>().ok_or_else(bad)?;
    for i in 0..batch.num_rows() {
        waiting.insert(parts.value(i), logs.value(i).to_vec());
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_scan_travels_and_comes_back_the_same() {
        let job = Job { path: "/fleet/traces".into(), slice_bytes: 1 << 20, partition: "hybrid".into(), parts: 7, first: 2, g0: 1_000_000 };
        let bytes = encode_plan(&CubeLogExec::new(job.clone())).unwrap().unwrap();
        assert!(is_ours(&bytes) && !sql::wire::is_ours(&bytes));
        let back = decode_plan(&bytes).unwrap();
        let back = back.downcast_ref::<CubeLogExec>().unwrap();
        assert_eq!(back.job, job);
        assert_eq!(back.properties().partitioning.partition_count(), 5, "slices 2 to 6");
        let t = encode_table(&CubeLogTable { job: job.clone() }).unwrap().unwrap();
        assert!(decode_plan(&t).is_err(), "a table is no scan");
        assert!(decode_table(&t).is_ok());
        let damaged = [MAGIC, b"{\"Scan\":"].concat();
        assert!(decode_plan(&damaged).unwrap_err().to_string().contains("damaged"));
    }
}
