//! Building a cube from a trace, in parallel, and the event-at-a-time feed.
//!
//! The build is an [`engine::Analysis`]: workers turn slices of the trace into
//! [`SliceLog`]s (decoding, the partial history of event counts, the kernel's
//! records), and the engine's ordered, pipelined merge hands them in time order to the
//! [`Applier`], which holds the cube and the kernel state. The applier is the
//! accumulator of the merge: `merge(applier, log)` applies the log, `merge(log, log)`
//! concatenates (associative). One worker runs the same code inline, so the serial
//! build is the one-thread case and every thread count and chunking gives the same
//! cube (`tests/parallel.rs`).

use std::path::Path;
use std::time::Instant;

use ctf::stream::EventRef;
use ctf::trace::TraceSet;
use cube::{Cube, CubeConfig, CubeError, Result};
use engine::{Analysis, ChunkPolicy, Ctx, EngineError, EngineOptions, Partition, Selective, Slice, Tally};
use serde::Serialize;

use crate::apply::{prescan_first_switch, Applier};
use crate::log::{FeedLayout, SliceLog};

/// Options of [`build_from_trace`].
#[derive(Debug, Clone)]
pub struct BuildOptions {
    /// The cube's configuration.
    pub config: CubeConfig,
    /// Worker threads (0: all cores).
    pub threads: usize,
    /// Approximate bytes of stream data per slice.
    pub chunk_size: u64,
    /// Where slices are cut.
    pub partition: Partition,
    /// The cube directory the built cube will be saved to, if known: the build then
    /// writes its histories there as it goes ([`Cube::spill_to`]), which bounds its
    /// memory; the cube answers queries only once saved there by [`cube::save`].
    pub spill: Option<std::path::PathBuf>,
}

impl Default for BuildOptions {
    fn default() -> Self {
        let e = EngineOptions::default();
        BuildOptions { config: CubeConfig::default(), threads: 0, chunk_size: e.chunk_size, partition: e.partition, spill: None }
    }
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
    /// Worker threads used.
    pub threads: usize,
    /// Wall time, s.
    pub seconds: f64,
    /// Errors of the streams that could not be read to their end (each naming the
    /// file and byte offset): the cube holds everything read before them.
    pub stream_errors: Vec<String>,
}

impl BuildReport {
    /// One line per fact.
    pub fn to_text(&self) -> String {
        format!(
            "events {}\nupdates {}\ncells {}\nrecords per level {:?}\nmemory {:.2} MB\nthreads {}\ntime {:.3} s ({:.1} M events/s)\n",
            self.events,
            self.updates,
            self.cells,
            self.records,
            self.memory_bytes as f64 / 1e6,
            self.threads,
            self.seconds,
            self.events as f64 / self.seconds.max(1e-9) / 1e6
        )
    }
}

/// A merge state of the build: the applier (the accumulator, holding the cube) or a
/// log of slices not yet applied.
#[allow(clippy::large_enum_variant, reason = "a part is moved once per merge, and a log is its common form: boxing it would add an allocation per slice")]
pub enum Part {
    /// The kernel state and the cube, with the first error met while applying.
    Cube(Box<(Applier, Cube)>, Option<CubeError>),
    /// Slices not yet applied.
    Log(SliceLog),
}

/// The cube build as an engine analysis (see the module docs).
pub struct CubeBuild {
    layout: FeedLayout,
    streams: usize,
    g0: i64,
    config: CubeConfig,
    first_switch: Vec<Option<i32>>,
    hosts: Vec<String>,
    spill: Option<std::path::PathBuf>,
}

/// The host of each stream of a trace set (its Machine member): its trace's
/// `env.hostname` (LTTng writes it, live traces too), else `unknown`.
pub fn hosts_of(set: &TraceSet) -> Vec<String> {
    let host = |t: &ctf::trace::Trace| match t.class.env("hostname") {
        Some(ctf::ir::EnvValue::Str(s)) if !s.is_empty() => s.clone(),
        Some(ctf::ir::EnvValue::Int(i)) => i.to_string(),
        _ => "unknown".into(),
    };
    set.streams
        .iter()
        .map(|st| st.packets.first().and_then(|p| set.traces.get(p.trace as usize)).or(set.traces.first()).map_or_else(|| "unknown".into(), host))
        .collect()
}

impl CubeBuild {
    /// A build of `set` into a new cube of `config` (each run of the build, see
    /// [`ChunkPolicy::initial_state`], starts a new cube: the engine reads a damaged trace
    /// twice when several slices read past a stream's damage).
    pub fn new(set: &TraceSet, config: CubeConfig) -> Result<CubeBuild> {
        Cube::new(config.clone())?; // (checks the config: each run's cube is made alike)
        let mut b = CubeBuild::logging(set, config.levels[0].granularity_ns as i64);
        b.first_switch = prescan_first_switch(set, &b.layout.model);
        b.config = config;
        Ok(b)
    }

    /// A build of `set` into frames of `g0` ns that only logs slices ([`log_slice`]):
    /// it knows neither the cube's config nor each stream's first switch, which only
    /// its applier ([`ChunkPolicy::initial_state`]) needs.
    fn logging(set: &TraceSet, g0: i64) -> CubeBuild {
        let layout = FeedLayout::new(set);
        CubeBuild { layout, streams: set.streams.len(), g0, config: CubeConfig::default(), first_switch: Vec::new(), hosts: hosts_of(set), spill: None }
    }

    fn empty_log(&self) -> SliceLog {
        SliceLog::new(self.g0, self.streams, self.layout.model.names.len())
    }
}

impl Analysis for CubeBuild {
    type State = Part;
    type Output = Result<(Applier, Cube)>;

    fn new_state(&self) -> Part {
        Part::Log(self.empty_log())
    }

    fn on_event(&self, st: &mut Part, ev: &EventRef<'_, '_>, ctx: &Ctx) {
        if let Part::Log(log) = st {
            log.push_event(&self.layout, ev, ctx.stream);
        }
    }

    fn merge(&self, earlier: Part, later: Part) -> Part {
        match (earlier, later) {
            (Part::Cube(mut a, mut err), Part::Log(mut log)) => {
                log.seal();
                if err.is_none() {
                    let (ap, c) = &mut *a;
                    if let Err(e) = ap.apply(c, &log) {
                        err = Some(e);
                    }
                }
                Part::Cube(a, err)
            }
            (Part::Log(mut a), Part::Log(b)) => {
                a.append(b);
                Part::Log(a)
            }
            (Part::Cube(a, err), Part::Cube(..)) | (Part::Log(_), Part::Cube(a, err)) => {
                Part::Cube(a, err.or(Some(CubeError::Trace("cube build: slices merged out of order".into()))))
            }
        }
    }

    fn finish(&self, st: Part) -> Result<(Applier, Cube)> {
        match st {
            Part::Cube(mut a, None) => {
                let (ap, c) = &mut *a;
                ap.finish(c)?;
                Ok(*a)
            }
            Part::Cube(_, Some(e)) => Err(e),
            Part::Log(_) => Err(CubeError::Trace("cube build: no cube in the merged state".into())),
        }
    }
}

impl Selective for CubeBuild {}
impl Tally for CubeBuild {}

impl ChunkPolicy for CubeBuild {
    fn initial_state(&self) -> Part {
        let made = Cube::new(self.config.clone()).and_then(|mut c| {
            if let Some(dir) = &self.spill {
                c.spill_to(dir)?;
            }
            Ok(c)
        });
        let (cube, err) = match made {
            Ok(c) => (c, None),
            Err(e) => (Cube::new(CubeConfig::default()).expect("the default config is valid"), Some(e)),
        };
        let mut cube = cube;
        let a = Applier::new(&mut cube, &self.layout.model, &self.first_switch, &self.hosts);
        Part::Cube(Box::new((a, cube)), err)
    }
}

/// Trace bytes of all slices in flight in a build at most (bounds its memory: a
/// slice's log takes a few times its trace bytes, ~48 bytes per record and its stamp).
pub const IN_FLIGHT_BYTES: u64 = 16 << 20;

/// Builds an in-memory cube from the trace (set) at `trace`.
pub fn build_from_trace(trace: &Path, opts: &BuildOptions) -> Result<(Cube, BuildReport)> {
    let set = TraceSet::open(trace).map_err(|e| CubeError::Trace(e.to_string()))?;
    build_from_set(&set, opts)
}

/// Builds an in-memory cube from an open trace set.
pub fn build_from_set(set: &TraceSet, opts: &BuildOptions) -> Result<(Cube, BuildReport)> {
    build_with_progress(set, opts, None)
}

/// The engine options of a build with `opts`.
fn engine_options(opts: &BuildOptions) -> EngineOptions {
    EngineOptions { threads: opts.threads, chunk_size: opts.chunk_size, partition: opts.partition, ..Default::default() }
}

/// The bytes of trace data per slice of a build of `set` with `opts`. The engine keeps
/// up to 2 slices per worker in flight, and a slice's log takes a few times its trace
/// bytes: slices are cut so that all in flight stay within [`IN_FLIGHT_BYTES`] of
/// trace data, whatever the workers and the asked chunk size (any chunking gives the
/// same cube).
pub fn slice_bytes(set: &TraceSet, opts: &BuildOptions) -> u64 {
    let e = engine_options(opts);
    let cap = (IN_FLIGHT_BYTES / (2 * e.worker_count().max(1) as u64)).max(1 << 20);
    e.slice_bytes(set).min(cap)
}

/// The slices of a build of `set` with `opts`, in time order: those of
/// [`slice_bytes`], cut by `opts.partition`.
pub fn slices(set: &TraceSet, opts: &BuildOptions) -> Vec<Slice> {
    engine::partition(set, opts.partition, slice_bytes(set, opts))
}

/// [`build_from_set`], calling `progress(bytes done, bytes in all)` as slices are
/// merged.
pub fn build_with_progress(set: &TraceSet, opts: &BuildOptions, progress: Option<&dyn Fn(u64, u64)>) -> Result<(Cube, BuildReport)> {
    let t0 = Instant::now();
    let mut build = CubeBuild::new(set, opts.config.clone())?;
    build.spill = opts.spill.clone();
    let e = engine_options(opts);
    let slices = slices(set, opts);
    let run = engine::run_slices_reporting(&build, set, &slices, &e, progress).map_err(|e| CubeError::Trace(e.to_string()))?;
    let threads = e.worker_count().min(slices.len()).max(1);
    report(&build, run.output, threads, t0, run.faults.iter().map(|f| f.to_string()).collect())
}

/// The cube of a build's merged state `st`, finished, and what the build did.
fn report(build: &CubeBuild, st: Part, threads: usize, t0: Instant, stream_errors: Vec<String>) -> Result<(Cube, BuildReport)> {
    let (a, c) = build.finish(st)?;
    let report = BuildReport {
        events: a.events,
        updates: c.updates,
        cells: c.schema.cell_count(),
        records: c.records(),
        memory_bytes: c.memory(),
        threads,
        seconds: t0.elapsed().as_secs_f64(),
        stream_errors,
    };
    Ok((c, report))
}

/// The log of one slice of `set` (what a worker of the build computes), for a cube
/// whose finest level is `g0` ns (its config's first level): the unit of work of a build spread over
/// processes (a cluster's executors, `tracecube cube build --cluster`), whose logs
/// [`build_from_logs`] applies. A stream that cannot be read fails the slice.
pub fn log_slice(set: &TraceSet, g0: i64, slice: &Slice) -> std::result::Result<SliceLog, EngineError> {
    let build = CubeBuild::logging(set, g0);
    match engine::exec::process_slice(&build, set, slice, (i64::MIN, i64::MAX))? {
        Part::Log(mut log) => {
            log.seal();
            Ok(log)
        }
        // A slice is read into a fresh chunk state, a log: a cube here is a bug, and an
        // empty log would silently drop the slice's events.
        Part::Cube(..) => Err(EngineError::Internal("a logging build's slice state is a cube, not a log")),
    }
}

/// Builds a cube of `set` from the logs of its [`slices`] (each made by
/// [`log_slice`], in any process), given in time order: the cube is the one
/// [`build_from_set`] makes with `opts`' config and spill (`threads`: the workers that
/// made them, for the report). The first error of `logs` ends the build.
pub fn build_from_logs(set: &TraceSet, opts: &BuildOptions, logs: impl IntoIterator<Item = Result<SliceLog>>, threads: usize) -> Result<(Cube, BuildReport)> {
    let t0 = Instant::now();
    let mut build = CubeBuild::new(set, opts.config.clone())?;
    build.spill = opts.spill.clone();
    let mut st = build.initial_state();
    for log in logs {
        st = build.merge(st, Part::Log(log?));
        if let Part::Cube(_, Some(_)) = st {
            break;
        }
    }
    report(&build, st, threads, t0, Vec::new())
}

/// Event-at-a-time feeding (for live sources), with the same semantics as the build.
/// Events are logged as they come and applied in small batches: call
/// [`KernelFeed::flush`] before querying the cube.
pub struct KernelFeed {
    layout: FeedLayout,
    log: SliceLog,
    applier: Applier,
}

impl KernelFeed {
    /// A feed for events of `set`'s streams into `cube`.
    pub fn new(set: &TraceSet, cube: &mut Cube) -> KernelFeed {
        let layout = FeedLayout::new(set);
        let first = prescan_first_switch(set, &layout.model);
        let applier = Applier::new(cube, &layout.model, &first, &hosts_of(set));
        let log = SliceLog::new(applier.g0(), set.streams.len(), layout.model.names.len());
        KernelFeed { layout, log, applier }
    }

    /// Consumes one event of stream `s` (events in time-merged order); applies the
    /// batch to `cube` when it is full.
    pub fn on_event(&mut self, cube: &mut Cube, ev: &EventRef<'_, '_>, s: usize) -> Result<()> {
        self.log.push_event(&self.layout, ev, s);
        if self.log.recs.len() >= 4096 || self.log.blocks.len() >= 64 {
            self.flush(cube)?;
        }
        Ok(())
    }

    /// Applies the events consumed so far to `cube`.
    pub fn flush(&mut self, cube: &mut Cube) -> Result<()> {
        self.log.seal();
        let r = self.applier.apply(cube, &self.log);
        self.log.clear();
        r
    }

    /// Adapts the feed to a set whose metadata or streams changed (a live session: new
    /// event classes, new streams appended after the existing ones), after applying
    /// what is pending to `cube`. Per-stream state is kept by stream index: stream `i`
    /// must still be the same stream.
    pub fn relayout(&mut self, cube: &mut Cube, set: &TraceSet) -> Result<()> {
        self.flush(cube)?;
        self.layout = FeedLayout::new(set);
        self.applier.relayout(&self.layout.model, set.streams.len());
        self.applier.set_hosts(cube, &hosts_of(set));
        self.log = SliceLog::new(self.applier.g0(), self.applier.stream_count(), self.layout.model.names.len());
        Ok(())
    }

    /// Streams the feed keeps state for.
    pub fn stream_count(&self) -> usize {
        self.applier.stream_count()
    }

    /// Events consumed (applied or not).
    pub fn events(&self) -> u64 {
        self.applier.events + self.log.events
    }

    /// Ends the stream: applies what is pending, credits the running threads and
    /// closes the cube's frames.
    pub fn finish(&mut self, cube: &mut Cube) -> Result<()> {
        self.flush(cube)?;
        self.applier.finish(cube)
    }
}
