//! The trace tables and their scans as bytes, so that a query plan can travel to
//! another process (a cluster's scheduler and executors) and be rebuilt there.
//!
//! What travels is a description, not data: the trace directories (which every
//! process must be able to read at the same paths), the partition count, and what the
//! table or scan selects. The receiver opens the traces again (or reuses the sets it
//! opened for an earlier plan while their files are unchanged); a scan's partitions are
//! recomputed from the same slices, so partition `k` reads the same events in every
//! process. The bytes are [`MAGIC`] then JSON: a plan codec can tell them from its
//! other nodes by the prefix.

use std::collections::{BTreeSet, HashSet};
use std::path::PathBuf;
use std::sync::Arc;

use datafusion::catalog::TableProvider;
use datafusion::common::{DataFusionError, Result};
use datafusion::physical_plan::ExecutionPlan;
use serde::{Deserialize, Serialize};

use crate::columns::Col;
use crate::report_scan::ReportScanExec;
use crate::reports::{ReportProvider, ReportTable};
use crate::scan::{ScanSpec, TraceScanExec};
use crate::source::Sources;
use crate::table::TraceTable;

/// The first bytes of every encoded table or scan.
pub const MAGIC: &[u8] = b"tracecube-plan/1\n";

/// The traces a table reads: their directories and the session's partition count.
#[derive(Serialize, Deserialize)]
struct Traces {
    paths: Vec<PathBuf>,
    partitions: usize,
}

impl Traces {
    fn of(sources: &Sources) -> Traces {
        Traces { paths: sources.sets.iter().map(|s| s.path.clone()).collect(), partitions: sources.partitions }
    }

    /// The sets, shared with earlier plans of this process while their files are
    /// unchanged ([`Sources::open_cached`]).
    fn open(&self) -> Result<Arc<Sources>> {
        let (sources, _warnings) = Sources::open_cached(&self.paths, self.partitions).map_err(|e| DataFusionError::Execution(e.to_string()))?;
        Ok(Arc::new(sources))
    }
}

/// One table or scan, as it travels.
#[derive(Serialize, Deserialize)]
enum Node {
    /// A [`TraceTable`]: its named columns and its class names (None: every class).
    Table { traces: Traces, cols: Vec<(String, Col)>, classes: Option<Vec<String>> },
    /// A [`ReportProvider`], by table name.
    Report { traces: Traces, table: String },
    /// A [`TraceScanExec`] in `parts` partitions.
    Scan { traces: Traces, cols: Vec<(String, Col)>, names: Option<Vec<String>>, range: (i64, i64), cpus: Option<Vec<u64>>, limit: Option<usize>, parts: usize },
    /// A [`ReportScanExec`].
    ReportScan { traces: Traces, table: String, projection: Option<Vec<usize>>, limit: Option<usize> },
}

/// Named columns: each column with its schema field's name.
fn named(cols: &[Col], schema: &datafusion::arrow::datatypes::Schema) -> Vec<(String, Col)> {
    schema.fields().iter().map(|f| f.name().clone()).zip(cols.iter().cloned()).collect()
}

/// Sorted names, so that the bytes do not depend on a hash set's order.
fn sorted(names: &Option<HashSet<String>>) -> Option<Vec<String>> {
    names.as_ref().map(|n| {
        let mut v: Vec<String> = n.iter().cloned().collect();
        v.sort();
        v
    })
}

/// `node` as the bytes a plan codec ships: `magic` (which tells a codec's nodes apart)
/// then the node as JSON.
pub fn tagged_bytes<T: Serialize>(magic: &[u8], node: &T) -> Result<Vec<u8>> {
    let mut out = magic.to_vec();
    serde_json::to_writer(&mut out, node).map_err(|e| DataFusionError::External(Box::new(e)))?;
    Ok(out)
}

/// The node of [`tagged_bytes`]' `buf`, which must begin with `magic`; `what` names the
/// kind of node in the errors (bytes of another codec, or damaged).
pub fn from_tagged_bytes<T: serde::de::DeserializeOwned>(magic: &[u8], what: &str, buf: &[u8]) -> Result<T> {
    let body = buf.strip_prefix(magic).ok_or_else(|| DataFusionError::Internal(format!("not a {what}")))?;
    serde_json::from_slice(body).map_err(|e| DataFusionError::Internal(format!("a damaged {what}: {e}")))
}

fn to_bytes(node: &Node) -> Result<Vec<u8>> {
    tagged_bytes(MAGIC, node)
}

fn from_bytes(buf: &[u8]) -> Result<Node> {
    from_tagged_bytes(MAGIC, "tracecube table or scan", buf)
}

fn report_table(name: &str) -> Result<ReportTable> {
    ReportTable::by_name(name).ok_or_else(|| DataFusionError::Internal(format!("no report table named {name}")))
}

/// Whether `buf` holds a table or scan of this module.
pub fn is_ours(buf: &[u8]) -> bool {
    buf.starts_with(MAGIC)
}

/// The bytes of `table` when it is one of tracecube's tables (None: another kind).
pub fn encode_table(table: &dyn TableProvider) -> Option<Result<Vec<u8>>> {
    let node = if let Some(t) = table.downcast_ref::<TraceTable>() {
        Node::Table { traces: Traces::of(&t.sources), cols: named(&t.cols, &t.schema), classes: sorted(&t.classes) }
    } else if let Some(r) = table.downcast_ref::<ReportProvider>() {
        Node::Report { traces: Traces::of(r.sources()), table: r.which().name().into() }
    } else {
        return None;
    };
    Some(to_bytes(&node))
}

/// The table that [`encode_table`] wrote, its traces opened again.
pub fn decode_table(buf: &[u8]) -> Result<Arc<dyn TableProvider>> {
    Ok(match from_bytes(buf)? {
        Node::Table { traces, cols, classes } => Arc::new(TraceTable::new(traces.open()?, cols, classes.map(HashSet::from_iter))),
        Node::Report { traces, table } => Arc::new(ReportProvider::new(traces.open()?, report_table(&table)?)),
        _ => return Err(DataFusionError::Internal("a tracecube scan where a table was expected".into())),
    })
}

/// The bytes of `plan` when it is one of tracecube's scans (None: another node).
pub fn encode_plan(plan: &dyn ExecutionPlan) -> Option<Result<Vec<u8>>> {
    let node = if let Some(s) = plan.downcast_ref::<TraceScanExec>() {
        let spec = &s.spec;
        Node::Scan {
            traces: Traces::of(&s.sources),
            cols: named(&spec.cols, &spec.schema),
            names: sorted(&spec.names),
            range: spec.range,
            cpus: spec.cpus.as_ref().map(|c| c.iter().copied().collect()),
            limit: spec.limit,
            parts: s.work.len(),
        }
    } else if let Some(r) = plan.downcast_ref::<ReportScanExec>() {
        Node::ReportScan {
            traces: Traces::of(r.table().sources()),
            table: r.table().which().name().into(),
            projection: r.projection().map(<[usize]>::to_vec),
            limit: r.limit(),
        }
    } else {
        return None;
    };
    Some(to_bytes(&node))
}

/// The scan that [`encode_plan`] wrote, its traces opened again.
pub fn decode_plan(buf: &[u8]) -> Result<Arc<dyn ExecutionPlan>> {
    Ok(match from_bytes(buf)? {
        Node::Scan { traces, cols, names, range, cpus, limit, parts } => {
            let schema = Arc::new(datafusion::arrow::datatypes::Schema::new(cols.iter().map(|(n, c)| c.arrow_field(n)).collect::<Vec<_>>()));
            let spec = ScanSpec {
                cols: cols.into_iter().map(|(_, c)| c).collect(),
                schema,
                names: names.map(HashSet::from_iter),
                range,
                cpus: cpus.map(BTreeSet::from_iter),
                limit,
            };
            Arc::new(TraceScanExec::new(spec, traces.open()?, parts))
        }
        Node::ReportScan { traces, table, projection, limit } => {
            Arc::new(ReportScanExec::new(ReportProvider::new(traces.open()?, report_table(&table)?), projection, limit)?)
        }
        _ => Err(DataFusionError::Internal("a tracecube table where a scan was expected".into()))?,
    })
}
