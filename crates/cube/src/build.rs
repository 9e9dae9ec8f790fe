//! Building a cube from a trace on disk (C8).
//!
//! The kernel model's state (running thread per CPU, fd tables, pending syscalls)
//! makes each update depend on everything before it, so the feed runs serially in
//! time-merged order; see DESIGN.md for the parallel plan (chunk-partial histories).

use std::path::Path;
use std::time::Instant;

use ctf::merge::Merger;
use ctf::stream::Item;
use ctf::trace::TraceSet;
use serde::Serialize;

use crate::config::CubeConfig;
use crate::cube::Cube;
use crate::error::{CubeError, Result};
use crate::feed::KernelFeed;

/// Options of [`build_from_trace`].
#[derive(Debug, Clone, Default)]
pub struct BuildOptions {
    /// The cube's configuration.
    pub config: CubeConfig,
    /// Worker threads (0: all cores). The kernel feed is serial today.
    pub threads: usize,
}

/// What a build did.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct BuildReport {
    /// Events read.
    pub events: u64,
    /// Cube updates.
    pub updates: u64,
    /// Cells created.
    pub cells: usize,
    /// Records written per level.
    pub records: Vec<u64>,
    /// Bytes of memory held by the cube.
    pub memory_bytes: u64,
    /// Wall time, s.
    pub seconds: f64,
}

impl BuildReport {
    /// One line per fact.
    pub fn to_text(&self) -> String {
        format!(
            "events {}\nupdates {}\ncells {}\nrecords per level {:?}\nmemory {:.2} MB\ntime {:.3} s ({:.1} M events/s)\n",
            self.events,
            self.updates,
            self.cells,
            self.records,
            self.memory_bytes as f64 / 1e6,
            self.seconds,
            self.events as f64 / self.seconds.max(1e-9) / 1e6
        )
    }
}

/// Builds an in-memory cube from the trace (set) at `trace`.
pub fn build_from_trace(trace: &Path, opts: &BuildOptions) -> Result<(Cube, BuildReport)> {
    let set = TraceSet::open(trace).map_err(|e| CubeError::Trace(e.to_string()))?;
    build_from_set(&set, opts)
}

/// Builds an in-memory cube from an open trace set.
pub fn build_from_set(set: &TraceSet, opts: &BuildOptions) -> Result<(Cube, BuildReport)> {
    let t0 = Instant::now();
    let mut cube = Cube::new(opts.config.clone())?;
    let mut feed = KernelFeed::new(set, &mut cube);
    let mut merger = Merger::new(set);
    loop {
        let next = merger.next().map_err(|e| CubeError::Trace(e.to_string()))?;
        let Some(m) = next else { break };
        if let Item::Event(ev) = m.item {
            feed.on_event(&mut cube, &ev, m.stream)?;
        }
    }
    feed.finish(&mut cube)?;
    cube.finish()?;
    let report = BuildReport { events: feed.events, updates: cube.updates, cells: cube.schema.cell_count(), records: cube.records(), memory_bytes: cube.memory(), seconds: t0.elapsed().as_secs_f64() };
    Ok((cube, report))
}
