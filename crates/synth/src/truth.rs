//! The true statistics of a synthesized trace, known by construction (`DIR/truth.json`).
//!
//! # Definitions
//!
//! - `begin_ns` / `end_ns`: timestamps (clock cycles = ns, without the clock offset) of the
//!   first and last event of the whole trace, all CPUs together. `clock_offset_ns` added to
//!   them gives ns since the Epoch (what Babeltrace and lttng-analyses print).
//! - `events`: number of events per event name; `events_total` their sum.
//! - CPU time (`cpus[].busy_ns`, `threads[].cpu_ns`, `processes[].cpu_ns`): time during which
//!   a non-idle thread (tid != 0) was switched in on a CPU, clipped to
//!   [`begin_ns`, `end_ns`]. Every CPU runs a non-idle thread when the trace starts (its
//!   first `sched_switch` switches that thread out), and that thread is credited from
//!   `begin_ns`, exactly as lttng-analyses' cputop credits time before a CPU's first
//!   `sched_switch`. A thread still running at the end is credited up to `end_ns`.
//! - Bytes (`read_bytes`, `write_bytes`): the exit `ret` of read-family (read, pread64,
//!   readv) or write-family (write, pwrite64, writev) syscalls when `ret >= 0`, credited
//!   when the exit event occurs, to the calling thread, its process and the path of the fd
//!   (fds opened by `openat`, `dup`/`dup2`, or listed by the statedump). Syscalls whose
//!   exit is beyond the end of the trace count nothing.
//! - `threads` are keyed by tid (tids are never reused), `processes` by pid; `comm` is the
//!   name at the end of the trace (exec renames).

use std::collections::BTreeMap;
use std::path::Path;

use serde::{Deserialize, Serialize};

use crate::error::{Result, SynthError};

/// Per-CPU truth.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct CpuTruth {
    /// CPU number (`cpu_id`).
    pub cpu: u32,
    /// Non-idle time, ns.
    pub busy_ns: u64,
    /// Events in this CPU's stream.
    pub events: u64,
}

/// Per-thread truth.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct ThreadTruth {
    /// Process id.
    pub pid: i32,
    /// Name at the end of the trace.
    pub comm: String,
    /// CPU time, ns.
    pub cpu_ns: u64,
    /// Bytes read.
    pub read_bytes: u64,
    /// Bytes written.
    pub write_bytes: u64,
}

/// Per-process truth (sum over its threads).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct ProcessTruth {
    /// Name at the end of the trace (of its main thread).
    pub comm: String,
    /// CPU time, ns.
    pub cpu_ns: u64,
    /// Bytes read.
    pub read_bytes: u64,
    /// Bytes written.
    pub write_bytes: u64,
}

/// Per-file truth.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct FileTruth {
    /// Bytes read.
    pub read_bytes: u64,
    /// Bytes written.
    pub write_bytes: u64,
}

/// Everything `truth.json` holds. See the module documentation for the definitions.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Truth {
    /// Format version of this file (1).
    pub version: u32,
    /// One-paragraph summary of the definitions, for readers of the JSON.
    pub definitions: String,
    /// Seed the trace was generated from.
    pub seed: u64,
    /// Number of CPUs (streams).
    pub cpus_count: u32,
    /// Clock offset from the Epoch, ns.
    pub clock_offset_ns: u64,
    /// First event timestamp (ns, without offset).
    pub begin_ns: u64,
    /// Last event timestamp (ns, without offset).
    pub end_ns: u64,
    /// Total events.
    pub events_total: u64,
    /// Events per name.
    pub events: BTreeMap<String, u64>,
    /// Per CPU.
    pub cpus: Vec<CpuTruth>,
    /// Per thread, by tid.
    pub threads: BTreeMap<i32, ThreadTruth>,
    /// Per process, by pid.
    pub processes: BTreeMap<i32, ProcessTruth>,
    /// Per file path.
    pub files: BTreeMap<String, FileTruth>,
}

/// Text stored in [`Truth::definitions`].
pub const DEFINITIONS: &str = "begin_ns/end_ns: first/last event timestamp of the trace (ns, add clock_offset_ns for Epoch time). \
CPU time: time a non-idle tid was switched in on a CPU, clipped to [begin_ns, end_ns]; the thread running on a CPU when the trace \
starts is credited from begin_ns (every CPU starts non-idle), a thread running at the end up to end_ns (as lttng-analyses cputop). \
Bytes: syscall exit ret >= 0 of read/pread64/readv (read_bytes) and write/pwrite64/writev (write_bytes), credited at the exit \
event to the thread, its process and the fd's path.";

impl Truth {
    /// Reads `path` (a truth.json).
    pub fn load(path: &Path) -> Result<Truth> {
        let text = std::fs::read_to_string(path).map_err(|source| SynthError::Io { path: path.to_path_buf(), source })?;
        Ok(serde_json::from_str(&text)?)
    }
    /// Writes `path` as pretty JSON.
    pub fn save(&self, path: &Path) -> Result<()> {
        let text = serde_json::to_string_pretty(self)?;
        std::fs::write(path, text).map_err(|source| SynthError::Io { path: path.to_path_buf(), source })
    }
    /// Duration of the trace, ns.
    pub fn duration_ns(&self) -> u64 {
        self.end_ns - self.begin_ns
    }
}
