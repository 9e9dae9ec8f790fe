//! The traces a session queries: the trace sets opened from the command line, the
//! name of each trace (its `trace` column) and the engine's slices of each set, which
//! are the units the scans share out among their partitions.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use ctf::trace::TraceSet;
use engine::{Partition, Slice};

use crate::SqlError;

/// One trace set (a directory given on the command line) with its traces' names.
pub struct Source {
    /// The directory it was opened from.
    pub path: PathBuf,
    /// The open set, shared by the scan threads.
    pub set: Arc<TraceSet>,
    /// The `trace` column's value of each trace of the set (by trace index).
    pub names: Vec<String>,
}

/// Every trace set of a session, and how scans cut them.
pub struct Sources {
    /// The sets, in the order given.
    pub sets: Vec<Source>,
    /// How many partitions a scan has (0: the core count).
    pub partitions: usize,
}

impl Sources {
    /// Opens the traces below each of `paths`; warnings of the reader (what was found
    /// but left out) are returned, to be shown by the caller.
    pub fn open(paths: &[PathBuf], partitions: usize) -> Result<(Sources, Vec<String>), SqlError> {
        let mut sets = Vec::new();
        let mut warnings = Vec::new();
        for p in paths {
            let set = TraceSet::open(p).map_err(|e| SqlError::Open(p.display().to_string(), e.to_string()))?;
            warnings.extend(set.warnings.iter().map(|w| format!("{}: {w}", p.display())));
            let names = (0..set.traces.len()).map(|t| trace_name(&set, t, p)).collect();
            sets.push(Source { path: p.clone(), set: Arc::new(set), names });
        }
        Ok((Sources { sets, partitions }, warnings))
    }

    /// The number of partitions of a scan (at least 1).
    pub fn partition_count(&self) -> usize {
        match self.partitions {
            0 => std::thread::available_parallelism().map(|n| n.get()).unwrap_or(1),
            n => n,
        }
    }

    /// The work of a scan restricted to `[begin, end]` (ns, inclusive), shared out
    /// among `parts` partitions: partition `k` gets every `parts`-th slice of every
    /// set, starting at the `k`-th, as `(set index, slice)`. Slices that do not meet
    /// the range are dropped (their events would all be skipped).
    pub fn share(&self, parts: usize, range: (i64, i64)) -> Vec<Vec<(usize, Slice)>> {
        let mut all = Vec::new();
        for (i, s) in self.sets.iter().enumerate() {
            let chunk = engine::auto_chunk_size(&s.set, parts);
            let slices = engine::partition(&s.set, Partition::Hybrid, chunk);
            all.extend(engine::clip(&slices, range).into_iter().map(|sl| (i, sl)));
        }
        let mut out: Vec<Vec<(usize, Slice)>> = (0..parts).map(|_| Vec::new()).collect();
        for (k, w) in all.into_iter().enumerate() {
            out[k % parts].push(w);
        }
        out
    }
}

/// The `trace` column of trace `t` of `set`: its `env.hostname`, else the name of its
/// directory (else of the directory opened).
fn trace_name(set: &TraceSet, t: usize, opened: &Path) -> String {
    let tr = &set.traces[t];
    match tr.class.env("hostname") {
        Some(ctf::ir::EnvValue::Str(s)) if !s.is_empty() => s.clone(),
        Some(ctf::ir::EnvValue::Int(i)) => i.to_string(),
        _ => tr.dir.file_name().or(opened.file_name()).map_or_else(|| opened.display().to_string(), |n| n.to_string_lossy().into_owned()),
    }
}
