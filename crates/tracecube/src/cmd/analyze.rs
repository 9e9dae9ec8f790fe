//! `tracecube analyze` and `tracecube bench analyze`: the parallel analyses of the
//! `analysis` crate, with lttng-analyses' conventions (`--begin/--end`, the filters
//! `--tid`, `--pid`, `--procname`, `--cpu`, `--limit`, machine-readable LAMI output).

use std::io::Write;
use std::path::PathBuf;

use analysis::{AnalysisKind, Report, RunOptions};
use anyhow::{anyhow, bail, Context, Result};
use ctf::trace::TraceSet;
use cube::time::parse_duration;

/// Output formats.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum Format {
    /// Readable tables.
    Text,
    /// tracecube's JSON (stable; see the `analysis` crate docs).
    Json,
    /// LAMI 1.0, like lttng-analyses' `--mi` (Trace Compass can chart it).
    Lami,
}

/// Arguments of `analyze`.
#[derive(clap::Args)]
pub struct AnalyzeArgs {
    /// Trace directory (not needed with --mi-version or --metadata).
    #[arg(required_unless_present_any = ["mi_version", "metadata"])]
    pub trace: Option<PathBuf>,
    /// Which analysis: count, cpu, io, or a latency analysis: syscall, irq, sched,
    /// block.
    #[arg(short, long, default_value = "count")]
    pub analysis: String,
    /// Workers and slices.
    #[command(flatten)]
    pub chunking: ChunkingArgs,
    /// Start of the time range: ns since the epoch, +OFFSET from the first event
    /// (+2.5s, +300ms, +1min), HH:MM:SS[.fraction] on the first event's day, or
    /// YYYY-MM-DD[ |T]HH:MM:SS[.fraction][Z|+HH:MM] (local time unless --gmt).
    #[arg(long)]
    pub begin: Option<String>,
    /// End of the time range (same forms as --begin).
    #[arg(long)]
    pub end: Option<String>,
    /// Dates and times of day in UTC, not local time (in --begin/--end and in the
    /// text's time range).
    #[arg(long)]
    pub gmt: bool,
    /// Only what these threads did, in every table (thread ids; repeatable, or
    /// comma-separated, as lttng-analyses' --tid).
    #[arg(long, value_delimiter = ',')]
    pub tid: Vec<i32>,
    /// Only what the threads of these processes did, in every table (process ids;
    /// repeatable, or comma-separated).
    #[arg(long, value_delimiter = ',')]
    pub pid: Vec<i32>,
    /// Only what threads with these command names did, in every table (a thread's
    /// latest name, as its row shows it; repeatable, or comma-separated, as
    /// lttng-analyses' --procname).
    #[arg(long, value_delimiter = ',')]
    pub procname: Vec<String>,
    /// Only what happened on these CPUs, in every table (cpu_id; repeatable, or
    /// comma-separated, as lttng-analyses' --cpu).
    #[arg(long, value_delimiter = ',')]
    pub cpu: Vec<u32>,
    /// Keep the N first rows of each table of threads, processes, files, disks,
    /// interrupts or event names (0: all; per-CPU rows are never cut). Default: 10 in
    /// text, all in json and lami.
    #[arg(long)]
    pub limit: Option<usize>,
    /// Output format.
    #[arg(long, value_enum, default_value_t = Format::Text)]
    pub format: Format,
    /// Latency analyses: how many of the longest occurrences to list.
    #[arg(long, default_value_t = 10)]
    pub top: usize,
    /// Latency analyses: only occurrences at least this long (ns, or with a unit:
    /// `10us`, `2ms`, `1s`).
    #[arg(long)]
    pub min_duration: Option<String>,
    /// Latency analyses: only occurrences at most this long (same forms).
    #[arg(long)]
    pub max_duration: Option<String>,
    /// List every occurrence: the latency analyses' calls, wake-ups, IRQs or
    /// requests; with `-a cpu`, every execution of a thread on a CPU (json only).
    #[arg(long)]
    pub log: bool,
    /// Latency analyses: a latency histogram (log-spaced buckets unless --freq-linear).
    #[arg(long)]
    pub freq: bool,
    /// Buckets of the --freq histogram.
    #[arg(long, default_value_t = 20)]
    pub freq_resolution: usize,
    /// Equal-width buckets for --freq.
    #[arg(long)]
    pub freq_linear: bool,
    /// Lowest bound of the --freq histogram (default: the shortest occurrence; same
    /// forms as --min-duration).
    #[arg(long)]
    pub min: Option<String>,
    /// Highest bound of the --freq histogram (default: the longest occurrence).
    #[arg(long)]
    pub max: Option<String>,
    /// LAMI handshake: print the machine-interface version and exit (Trace Compass's
    /// external analyses run `tracecube analyze -a cpu --format lami` this way).
    #[arg(long)]
    pub mi_version: bool,
    /// LAMI handshake: print the analysis's LAMI metadata (its table classes) and exit.
    #[arg(long)]
    pub metadata: bool,
    /// Accepted from LAMI runners; progress is drawn on a terminal only.
    #[arg(long, hide = true)]
    pub output_progress: bool,
}

/// How a trace is cut and processed in parallel (`analyze`, `cube build`).
#[derive(clap::Args)]
pub struct ChunkingArgs {
    /// Worker threads (0: all cores).
    #[arg(short = 'j', long, default_value_t = 0)]
    pub threads: usize,
    /// Approximate chunk size (bytes; K, M, G suffixes), or auto: about 8 chunks per
    /// worker, between 4M and 64M.
    #[arg(long, default_value = "auto")]
    pub chunk_size: String,
    /// Partition scheme: hybrid (default), time or stream.
    #[arg(long, default_value = "hybrid")]
    pub partition: String,
}

impl ChunkingArgs {
    /// The chunk size in bytes (0: auto).
    pub fn chunk_bytes(&self) -> Result<u64> {
        if self.chunk_size == "auto" {
            return Ok(0);
        }
        parse_size(&self.chunk_size)
    }

    /// The partition scheme.
    pub fn scheme(&self) -> Result<engine::Partition> {
        self.partition.parse().map_err(|e| anyhow!("{e}"))
    }
}

/// Arguments of `bench`.
#[derive(clap::Args)]
pub struct BenchArgs {
    /// What to benchmark: `analyze` (needs TRACE) or `cube`.
    pub what: String,
    /// Trace directory (for `analyze`).
    pub trace: Option<PathBuf>,
    /// `bench cube`: a one-hour stream instead of a day.
    #[arg(long)]
    pub quick: bool,
    /// `bench cube`: also write each table as CSV into this directory.
    #[arg(long)]
    pub csv: Option<PathBuf>,
    /// Largest thread count (default: all cores).
    #[arg(long, default_value_t = 0)]
    pub max_threads: usize,
    /// Repetitions per point, the thread counts taking turns (the median and the
    /// minimum are reported).
    #[arg(long, default_value_t = 3)]
    pub reps: usize,
    /// `bench analyze`: only these analyses (repeatable; default: all).
    #[arg(long, short = 'a')]
    pub analysis: Vec<String>,
}

/// Parses `4M`, `256K`, `1G` or plain bytes.
pub fn parse_size(s: &str) -> Result<u64> {
    let s = s.trim();
    let (num, mult) = match s.chars().last() {
        Some('K' | 'k') => (&s[..s.len() - 1], 1u64 << 10),
        Some('M' | 'm') => (&s[..s.len() - 1], 1 << 20),
        Some('G' | 'g') => (&s[..s.len() - 1], 1 << 30),
        _ => (s, 1),
    };
    let n: u64 = num.parse().with_context(|| format!("bad size {s:?} (expected e.g. 4M, 256K, 65536)"))?;
    n.checked_mul(mult).filter(|v| *v > 0).ok_or_else(|| anyhow!("size {s:?} out of range"))
}

/// Rows per table: `--limit N` (0: all), by default 10 in text and all in json and lami.
fn limit(a: &AnalyzeArgs) -> Option<usize> {
    match a.limit {
        Some(0) => None,
        Some(n) => Some(n),
        None if a.format == Format::Text => Some(10),
        None => None,
    }
}

fn options(a: &AnalyzeArgs, set: &TraceSet) -> Result<RunOptions> {
    let (begin, end) = super::time_range(a.begin.as_deref(), a.end.as_deref(), super::time_base(set, a.gmt))?;
    Ok(RunOptions {
        threads: a.chunking.threads,
        chunk_size: a.chunking.chunk_bytes()?,
        partition: a.chunking.scheme()?,
        begin,
        end,
        filter: analysis::Filter { tids: a.tid.clone(), pids: a.pid.clone(), procnames: a.procname.clone(), cpus: a.cpu.clone() },
        limit: limit(a),
        top: a.top,
        min_duration: a.min_duration.as_deref().map(parse_duration).transpose()?.unwrap_or(0),
        max_duration: a.max_duration.as_deref().map(parse_duration).transpose()?.unwrap_or(u64::MAX),
        log: a.log,
        freq: a
            .freq
            .then(|| -> Result<_> {
                Ok(analysis::latency::FreqOptions {
                    buckets: a.freq_resolution.max(1),
                    min: a.min.as_deref().map(parse_duration).transpose()?,
                    max: a.max.as_deref().map(parse_duration).transpose()?,
                    linear: a.freq_linear,
                })
            })
            .transpose()?,
        ..Default::default()
    })
}

/// The analysis named `name` (`count`, `cpu`, `io`, `syscall`, `irq`, `sched`,
/// `block`).
pub fn parse_analysis(name: &str) -> Result<AnalysisKind> {
    name.parse().map_err(|e| anyhow!("{e}"))
}

/// Runs `analyze`.
pub fn run(a: AnalyzeArgs) -> Result<()> {
    let which = parse_analysis(&a.analysis)?;
    if a.mi_version {
        println!("{}", analysis::lami::MI_VERSION);
        return Ok(());
    }
    if a.metadata {
        println!("{}", analysis::lami::metadata(which));
        return Ok(());
    }
    let trace = a.trace.as_ref().ok_or_else(|| anyhow!("analyze needs a TRACE"))?;
    let set = super::open_traces(trace)?;
    let opts = options(&a, &set)?;
    let class_names = event_class_names(&set);
    // (Damaged streams are read up to their damage; the report holds everything read,
    // the errors come after it.)
    let (report, errors) = {
        let bar = super::progress::Progress::bytes(which.name());
        let cb = bar.callback();
        analysis::run_reporting(&set, which, &opts, Some(&cb))?
    };
    // With several workers, the trace is unmapped on another thread while the report is
    // written: tearing down the mappings of a large trace is serial work (29 ms for
    // 3 GB), after the parallel part. (With one worker, one thread does everything.)
    let unmapping = (opts.engine().worker_count() > 1).then(|| std::thread::spawn(move || drop(set)));
    // (A report may run to tens of MB: large writes.)
    let mut out = std::io::BufWriter::with_capacity(1 << 20, std::io::stdout().lock());
    match a.format {
        Format::Text => analysis::output::write_text_io(&report, &mut out, analysis::text::TextStyle { gmt: a.gmt })?,
        Format::Json => {
            analysis::output::write_json(&report, &mut out)?;
            writeln!(out)?;
        }
        Format::Lami => writeln!(out, "{}", serde_json::to_string_pretty(&analysis::output::to_lami(&report))?)?,
    }
    out.flush()?;
    if let Some(note) = nothing_relevant(&class_names, which, &report, &opts.filter) {
        eprintln!("note: {note}");
    }
    if let Some(u) = unmapping {
        u.join().map_err(|_| anyhow!("unmapping the trace failed"))?;
    }
    super::fail_on_stream_errors(&errors)
}

/// The names of every event class the trace declares.
fn event_class_names(set: &TraceSet) -> std::collections::BTreeSet<String> {
    set.traces.iter().flat_map(|t| t.plan.streams.iter()).flat_map(|s| s.events.iter()).map(|e| e.name.to_string()).collect()
}

/// A one-line note when the analysis found nothing because the trace cannot hold what
/// it looks for (no scheduling events for `cpu`, no system calls for `io`), the range
/// holds no event or the filters select nothing, so that an empty table is never left
/// unexplained.
fn nothing_relevant(classes: &std::collections::BTreeSet<String>, which: AnalysisKind, report: &Report, filter: &analysis::Filter) -> Option<String> {
    let has = |f: &dyn Fn(&str) -> bool| classes.iter().any(|n| f(n));
    let (begin, empty) = match report {
        Report::Count(r) => (r.begin_ns, r.by_name.is_empty()),
        Report::Cpu(r) => (r.begin_ns, r.threads.is_empty() && r.cpus.iter().all(|c| c.busy_ns == 0)),
        Report::Io(r) => (r.begin_ns, r.threads.is_empty() && r.files.is_empty()),
        Report::Syscall(r) => (r.begin_ns, r.threads.is_empty()),
        Report::Irq(r) => (r.begin_ns, r.hard.is_empty() && r.soft.is_empty()),
        Report::Sched(r) => (r.begin_ns, r.threads.is_empty()),
        Report::Block(r) => (r.begin_ns, r.disks.is_empty()),
    };
    if begin.is_none() && empty {
        return Some("no event in the range analysed".into());
    }
    if !empty {
        return None;
    }
    let traced = match which {
        AnalysisKind::Cpu => has(&|n| n == "sched_switch"),
        AnalysisKind::Io => has(&|n| n.starts_with("syscall_entry_") || n.starts_with("sys_") || n == "sys_enter"),
        _ => true,
    };
    if traced && !filter.is_empty() {
        return Some("nothing in the range analysed matches --tid, --pid, --procname or --cpu".into());
    }
    match which {
        AnalysisKind::Cpu if !has(&|n| n == "sched_switch") => {
            Some("the trace declares no sched_switch event (a user-space trace?): CPU usage needs a kernel trace with scheduling events".into())
        }
        AnalysisKind::Io if !has(&|n| n.starts_with("syscall_entry_") || n.starts_with("sys_") || n == "sys_enter") => {
            Some("the trace declares no system call events: I/O usage needs a kernel trace recorded with them (lttng enable-event -k --syscall -a)".into())
        }
        AnalysisKind::Cpu => Some("no sched_switch in the range analysed".into()),
        AnalysisKind::Io => Some("no read or write system call in the range analysed".into()),
        _ => None,
    }
}

/// Runs `bench analyze`.
pub fn bench(a: BenchArgs) -> Result<()> {
    if a.what == "cube" {
        return super::cube::bench(a.quick, a.csv.as_deref());
    }
    if a.what != "analyze" {
        bail!("unknown benchmark {:?} (expected `analyze` or `cube`)", a.what);
    }
    let trace = a.trace.as_ref().ok_or_else(|| anyhow!("`bench analyze` needs a TRACE"))?;
    let set = super::open_traces(trace)?;
    let max = if a.max_threads == 0 { std::thread::available_parallelism().map(|n| n.get()).unwrap_or(1) } else { a.max_threads };
    let which: Vec<AnalysisKind> =
        if a.analysis.is_empty() { AnalysisKind::ALL.to_vec() } else { a.analysis.iter().map(|s| parse_analysis(s)).collect::<Result<_>>()? };
    let rows = bench::analyses::bench(&set, &which, max, a.reps.max(1), &RunOptions::default())?;
    print!("{}", bench::speedup::format_table(&rows));
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes() {
        assert_eq!(parse_size("4M").unwrap(), 4 << 20);
        assert_eq!(parse_size("256k").unwrap(), 256 << 10);
        assert_eq!(parse_size("100").unwrap(), 100);
        assert!(parse_size("0").is_err());
        assert!(parse_size("x").is_err());
        assert!(parse_size("99999999999G").is_err());
    }
}
