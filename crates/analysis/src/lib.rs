//! The `count`, `cpu`, `io` and `syscall` analyses, as mergeable chunk
//! states run by [`engine`].
//!
//! Where it sits: above `ctf`, `kernel` (the kernel model: event layouts, threads, fd
//! tables) and `engine`; the `tracecube` binary calls [`run`] and the formatters in
//! [`output`]. Modules: [`count`], [`cpu`], [`io`], [`syscall`], [`irq`], [`sched`] and [`block`](mod@block) (latency, with the
//! pieces of [`latency`]), [`threads`] (each thread's names and when, for SQL's `threads`), [`occurrences`] (the occurrence logs handed over as a run goes, for SQL, named by the facts of [`trace_end`]), [`output`] (text, JSON, LAMI 1.0), [`lami`] (the LAMI handshake).
//!
//! Every result is independent of the thread count, chunk size and partition scheme,
//! and equal to a serial run (tests sweep them).

pub mod block;
pub mod count;
pub mod cpu;
pub mod filter;
pub mod io;
pub mod irq;
pub mod lami;
pub mod latency;
pub mod occurrences;
pub mod output;
pub mod sched;
pub mod syscall;
pub mod text;
pub mod threads;
pub mod trace_end;

use ctf::trace::TraceSet;
pub use engine::{EngineError, Partition};

pub use block::BlockReport;
pub use count::CountReport;
pub use cpu::{CpuReport, ExecutionRow, HeadPolicy};
pub use filter::Filter;
pub use io::IoReport;
pub use irq::IrqReport;
pub use sched::SchedReport;
pub use syscall::{SyscallOptions, SyscallReport};

/// Which analysis to run.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AnalysisKind {
    /// Event counts.
    Count,
    /// CPU usage.
    Cpu,
    /// I/O usage.
    Io,
    /// System call latency.
    Syscall,
    /// Interrupt durations.
    Irq,
    /// Wake-up latency.
    Sched,
    /// Block request latency.
    Block,
}

impl AnalysisKind {
    /// All analyses.
    pub const ALL: [AnalysisKind; 3] = [AnalysisKind::Count, AnalysisKind::Cpu, AnalysisKind::Io];
    /// The latency analyses (not run by default: see [`AnalysisKind::ALL`]).
    pub const LATENCY: [AnalysisKind; 4] = [AnalysisKind::Syscall, AnalysisKind::Irq, AnalysisKind::Sched, AnalysisKind::Block];
    /// Name used on the command line and in JSON.
    pub fn name(self) -> &'static str {
        match self {
            AnalysisKind::Count => "count",
            AnalysisKind::Cpu => "cpu",
            AnalysisKind::Io => "io",
            AnalysisKind::Syscall => "syscall",
            AnalysisKind::Irq => "irq",
            AnalysisKind::Sched => "sched",
            AnalysisKind::Block => "block",
        }
    }
}

impl std::str::FromStr for AnalysisKind {
    type Err = AnalysisError;
    fn from_str(s: &str) -> Result<Self, AnalysisError> {
        match s {
            "count" => Ok(AnalysisKind::Count),
            "cpu" | "cputop" => Ok(AnalysisKind::Cpu),
            "io" | "iousagetop" => Ok(AnalysisKind::Io),
            "syscall" | "syscallstats" => Ok(AnalysisKind::Syscall),
            "irq" | "irqstats" => Ok(AnalysisKind::Irq),
            "sched" | "schedstats" => Ok(AnalysisKind::Sched),
            "block" | "iolatency" => Ok(AnalysisKind::Block),
            _ => Err(AnalysisError::UnknownAnalysis(s.into())),
        }
    }
}

/// Options of [`run`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RunOptions {
    /// Worker threads (0: all cores).
    pub threads: usize,
    /// Approximate bytes per chunk (0: chosen by the engine, see
    /// [`engine::auto_chunk_size`]).
    pub chunk_size: u64,
    /// Partition scheme.
    pub partition: Partition,
    /// Only events at or after this timestamp (ns from origin).
    pub begin: Option<i64>,
    /// Only events at or before this timestamp (ns from origin).
    pub end: Option<i64>,
    /// Only what these threads and CPUs did, in every table ([`Filter`]).
    pub filter: Filter,
    /// Keep the N first rows of each table (None: all): see [`Report::limit`].
    pub limit: Option<usize>,
    /// Time before a CPU's first `sched_switch` (see [`HeadPolicy`]).
    pub head: HeadPolicy,
    /// Latency analyses: how many of the longest occurrences to list.
    pub top: usize,
    /// Latency analyses: only occurrences at least this long (ns).
    pub min_duration: u64,
    /// Latency analyses: only occurrences at most this long (ns).
    pub max_duration: u64,
    /// List every occurrence (`--log`): the latency analyses' calls, wake-ups, IRQs
    /// and requests; cpu's executions and io's transfers (in json only).
    pub log: bool,
    /// Latency analyses: a latency histogram (`--freq`).
    pub freq: Option<latency::FreqOptions>,
}

impl Default for RunOptions {
    fn default() -> Self {
        RunOptions {
            threads: 0,
            chunk_size: 0,
            partition: Partition::Hybrid,
            begin: None,
            end: None,
            filter: Filter::default(),
            limit: None,
            head: HeadPolicy::FromStart,
            top: 10,
            min_duration: 0,
            max_duration: u64::MAX,
            log: false,
            freq: None,
        }
    }
}

impl RunOptions {
    /// The latency analyses' part of these options.
    /// Every occurrence is kept for `--log` and `--freq`, and with a thread filter (the
    /// longest are then chosen among the selected threads' in `finish`:
    /// [`latency::Sink::retain`]).
    pub fn latency(&self) -> latency::LatencyOptions {
        let keep_all = self.log || self.freq.is_some() || self.filter.selects_threads();
        latency::LatencyOptions { top: self.top, min_duration: self.min_duration, max_duration: self.max_duration, keep_all }
    }

    /// The histogram of `durations` when `--freq` asks for one (else empty).
    fn freq(&self, durations: impl Iterator<Item = u64>) -> Vec<latency::Bucket> {
        self.freq.as_ref().map_or_else(Vec::new, |f| latency::histogram(&durations.collect::<Vec<_>>(), f))
    }

    /// Empties `log` unless `--log` asked for it (it was kept for `--freq`).
    fn keep_log<T>(&self, log: &mut Vec<T>) {
        if !self.log {
            *log = Vec::new();
        }
    }

    /// The `cpu` analysis these options ask for.
    fn cpu(&self, set: &TraceSet) -> cpu::Cpu {
        cpu::Cpu::new(set, self.head).with_filter(self.filter.clone()).with_executions(self.log)
    }

    /// The `io` analysis these options ask for.
    fn io(&self, set: &TraceSet) -> io::Io {
        io::Io::new(set, self.head).with_workers(self.engine().worker_count()).with_filter(self.filter.clone()).with_transfers(self.log)
    }

    /// The `syscall` analysis these options ask for.
    fn syscall(&self, set: &TraceSet) -> syscall::Syscall {
        syscall::Syscall::new(set, SyscallOptions { head: self.head, lat: self.latency() }).with_filter(self.filter.clone())
    }

    /// The `irq` analysis these options ask for.
    fn irq(&self, set: &TraceSet) -> irq::Irq {
        irq::Irq::new(set, self.latency()).with_filter(set, self.filter.clone())
    }

    /// The `sched` analysis these options ask for.
    fn sched(&self, set: &TraceSet) -> sched::Sched {
        sched::Sched::new(set, self.latency()).with_filter(self.filter.clone())
    }

    /// The `block` analysis these options ask for.
    fn block(&self, set: &TraceSet) -> block::Block {
        block::Block::new(set, self.latency()).with_filter(self.filter.clone())
    }

    /// The engine's part of these options.
    pub fn engine(&self) -> engine::EngineOptions {
        engine::EngineOptions { threads: self.threads, chunk_size: self.chunk_size, partition: self.partition, begin: self.begin, end: self.end }
    }
}

/// A failed analysis.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum AnalysisError {
    /// The engine failed (decoding error, worker panic).
    #[error(transparent)]
    Engine(#[from] EngineError),
    /// Not `count`, `cpu`, `io`, `syscall`, `irq`, `sched` or `block`.
    #[error("unknown analysis {0:?} (expected count, cpu, io, syscall, irq, sched or block)")]
    UnknownAnalysis(String),
}

/// The result of one analysis.
#[derive(Debug, Clone, PartialEq)]
pub enum Report {
    /// From `count`.
    Count(CountReport),
    /// From `cpu`.
    Cpu(CpuReport),
    /// From `io`.
    Io(IoReport),
    /// From `syscall`.
    Syscall(SyscallReport),
    /// From `irq`.
    Irq(IrqReport),
    /// From `sched`.
    Sched(SchedReport),
    /// From `block`.
    Block(BlockReport),
}

/// Runs analysis `which` over `set` with `opts`' filter and limit.
pub fn run(set: &TraceSet, which: AnalysisKind, opts: &RunOptions) -> Result<Report, AnalysisError> {
    run_with_progress(set, which, opts, None)
}

/// [`run`], calling `progress(bytes done, bytes in all)` as slices are merged.
pub fn run_with_progress(set: &TraceSet, which: AnalysisKind, opts: &RunOptions, progress: Option<&dyn Fn(u64, u64)>) -> Result<Report, AnalysisError> {
    let (report, faults) = run_reporting(set, which, opts, progress)?;
    match faults.into_iter().next() {
        Some(e) => Err(e.into()),
        None => Ok(report),
    }
}

/// [`run_with_progress`] that reads on past damaged streams: the report of everything
/// that could be read, and the streams' errors (see [`engine::run_reporting`]). `Err`
/// only for a failure of the run itself. Each analysis applies [`RunOptions::filter`]
/// as it accumulates (see [`filter`]); [`RunOptions::limit`] is then applied by
/// [`Report::limit`], the one place that cuts rows.
pub fn run_reporting(
    set: &TraceSet,
    which: AnalysisKind,
    opts: &RunOptions,
    progress: Option<&dyn Fn(u64, u64)>,
) -> Result<(Report, Vec<EngineError>), AnalysisError> {
    let e = opts.engine();
    let (mut report, faults) = match which {
        AnalysisKind::Count => {
            let o = engine::run_reporting(&count::Count::new(set).with_filter(opts.filter.clone()), set, &e, progress)?;
            (Report::Count(o.output), o.faults)
        }
        AnalysisKind::Cpu => {
            let o = engine::run_reporting(&opts.cpu(set), set, &e, progress)?;
            (Report::Cpu(o.output), o.faults)
        }
        AnalysisKind::Io => {
            let o = engine::run_reporting(&opts.io(set), set, &e, progress)?;
            (Report::Io(o.output), o.faults)
        }
        AnalysisKind::Syscall => {
            let o = engine::run_reporting(&opts.syscall(set), set, &e, progress)?;
            let mut r = o.output;
            r.freq = opts.freq(r.log.iter().map(|l| l.duration_ns));
            opts.keep_log(&mut r.log);
            (Report::Syscall(r), o.faults)
        }
        AnalysisKind::Irq => {
            let o = engine::run_reporting(&opts.irq(set), set, &e, progress)?;
            let mut r = o.output;
            r.freq = opts.freq(r.log.iter().map(|l| l.duration_ns));
            opts.keep_log(&mut r.log);
            (Report::Irq(r), o.faults)
        }
        AnalysisKind::Sched => {
            let o = engine::run_reporting(&opts.sched(set), set, &e, progress)?;
            let mut r = o.output;
            r.freq = opts.freq(r.log.iter().map(|l| l.latency_ns));
            opts.keep_log(&mut r.log);
            (Report::Sched(r), o.faults)
        }
        AnalysisKind::Block => {
            let o = engine::run_reporting(&opts.block(set), set, &e, progress)?;
            let mut r = o.output;
            r.freq = opts.freq(r.log.iter().map(|l| l.duration_ns));
            opts.keep_log(&mut r.log);
            (Report::Block(r), o.faults)
        }
    };
    if let Some(n) = opts.limit {
        report.limit(n);
    }
    Ok((report, faults))
}

impl Report {
    /// Keeps the first `n` rows, in each table's order (the largest first, except
    /// interrupts and disks, by number), of each table whose rows are threads,
    /// processes, files, disks, interrupts or event names (the most frequent), in every
    /// output format (`--limit`; lttng-analyses' `--limit` likewise cuts
    /// its per-thread tables). Per-CPU rows are *not* cut (a machine has few CPUs, and
    /// lttng-cputop lists every CPU whatever `--limit`), nor are the latency analyses'
    /// longest occurrences (counted by their own `--top`), their `--log` and
    /// histogram, or the per-call rows inside a thread; totals are those of every row.
    pub fn limit(&mut self, n: usize) {
        match self {
            Report::Count(r) => {
                let mut names: Vec<(u64, String)> = std::mem::take(&mut r.by_name).into_iter().map(|(k, v)| (v, k)).collect();
                names.sort_by(|a, b| b.0.cmp(&a.0).then(a.1.cmp(&b.1)));
                r.by_name = names.into_iter().take(n).map(|(v, k)| (k, v)).collect();
            }
            Report::Cpu(r) => r.threads.truncate(n),
            Report::Io(r) => {
                r.threads.truncate(n);
                r.processes.truncate(n);
                r.files.truncate(n);
            }
            Report::Syscall(r) => {
                r.threads.truncate(n);
                r.processes.truncate(n);
            }
            Report::Irq(r) => {
                r.hard.truncate(n);
                r.soft.truncate(n);
            }
            Report::Sched(r) => {
                r.threads.truncate(n);
                r.processes.truncate(n);
            }
            Report::Block(r) => {
                r.disks.truncate(n);
                r.processes.truncate(n);
            }
        }
    }
}
