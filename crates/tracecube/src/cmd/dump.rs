//! `tracecube dump` and `tracecube print`: every event in time order, as the canonical
//! JSON lines or as Babeltrace 2's text (`print`), trimmed to a time range and filtered
//! by event name and CPU, formatted on N threads and written in order.
//!
//! Parts: `opts` (Babeltrace 2's options and time forms), `read` (a slice's items
//! merged by time, with the filters), `out` (slices formatted and written in order).

mod opts;
mod out;
mod read;

use std::io::Write;
use std::path::PathBuf;

use anyhow::{Context, Result};
use ctf::stream::{Item, StreamCursor, Wanted};
use ctf::text::{TextOptions, TextWriter};
use ctf::trace::TraceSet;

use opts::{glob, parse_fields, parse_names};

/// Arguments of `dump`.
#[derive(clap::Args)]
pub struct DumpArgs {
    /// Trace directory (searched recursively for `metadata` files).
    pub trace: PathBuf,
    /// Human-readable text instead of JSON lines (same as `--format text`).
    #[arg(long)]
    pub text: bool,
    /// Output format: json (JSON lines, default), text, or parquet (one table per
    /// event class in the `--output` directory, for DuckDB and friends).
    #[arg(long, default_value = "json")]
    pub format: String,
    /// Output file (json, text; default: standard output), or the output directory of
    /// `--format parquet`.
    #[arg(short, long)]
    pub output: Option<PathBuf>,
    /// What is read.
    #[command(flatten)]
    pub select: SelectArgs,
    /// How text is shown.
    #[command(flatten)]
    pub view: ViewArgs,
}

/// Which events are written, and by how many threads.
#[derive(clap::Args, Clone, Default)]
pub struct SelectArgs {
    /// Beginning of the time range: ns since the epoch, +OFFSET from the first event
    /// (+2.5s, +10ms), HH:MM:SS[.fraction] on the first event's day, or
    /// "YYYY-MM-DD HH:MM:SS[.fraction]" (in the time zone of the text: local unless
    /// --clock-gmt; or with Z / +HH:MM).
    #[arg(long)]
    pub begin: Option<String>,
    /// End of the time range (inclusive; same forms as --begin).
    #[arg(long)]
    pub end: Option<String>,
    /// Only events whose name matches this glob (`*`, `?`); repeatable. Other classes
    /// are passed over by their sizes, never decoded.
    #[arg(long = "name")]
    pub names: Vec<String>,
    /// Only events of the streams of this CPU (the packet context's `cpu_id`); repeatable.
    #[arg(long = "cpu")]
    pub cpus: Vec<u64>,
    /// Formatting threads (0: all cores). Slices of the trace are formatted in
    /// parallel and written in order: the output does not depend on it.
    #[arg(short = 'j', long = "jobs", default_value_t = 1)]
    pub jobs: usize,
}

/// Babeltrace 2's text options.
#[derive(clap::Args, Clone, Default)]
pub struct ViewArgs {
    /// Timestamps as seconds since the origin (`S.nnnnnnnnn`).
    #[arg(long)]
    pub clock_seconds: bool,
    /// Timestamps in UTC (default: the local time zone, as TZ says).
    #[arg(long)]
    pub clock_gmt: bool,
    /// Timestamps with their date.
    #[arg(long)]
    pub clock_date: bool,
    /// Without the time since the previous event.
    #[arg(long)]
    pub no_delta: bool,
    /// Names shown: payload, context, scope, header, all, none (comma-separated;
    /// default payload,context).
    #[arg(long = "names")]
    pub show_names: Option<String>,
    /// Header fields shown: trace, trace:hostname, trace:domain, trace:procname,
    /// trace:vpid, loglevel, emf, callsite, all (comma-separated; default
    /// trace:hostname,trace:procname,trace:vpid).
    #[arg(short = 'f', long)]
    pub fields: Option<String>,
}

/// Arguments of `print` (Babeltrace 2's text).
#[derive(clap::Args)]
pub struct PrintArgs {
    /// Trace directory.
    pub trace: PathBuf,
    /// Output file (default: standard output).
    #[arg(short, long)]
    pub output: Option<PathBuf>,
    /// What is read.
    #[command(flatten)]
    pub select: SelectArgs,
    /// How text is shown.
    #[command(flatten)]
    pub view: ViewArgs,
}

impl From<PrintArgs> for DumpArgs {
    fn from(p: PrintArgs) -> Self {
        DumpArgs { trace: p.trace, text: true, format: "text".into(), output: p.output, select: p.select, view: p.view }
    }
}

/// The text options of `v`.
pub fn text_options(v: &ViewArgs) -> Result<TextOptions> {
    let mut o = TextOptions { time: opts::time_format(v.clock_seconds, v.clock_gmt, v.clock_date), delta: !v.no_delta, ..TextOptions::default() };
    if let Some(n) = &v.show_names {
        o.names = parse_names(n)?;
    }
    if let Some(f) = &v.fields {
        o.fields = parse_fields(f)?;
    }
    Ok(o)
}

/// Runs `dump`: every item in time order; a decoding error ends the output after
/// everything decoded before it, and is returned.
pub fn run(mut a: DumpArgs) -> Result<()> {
    match a.format.as_str() {
        "json" => {}
        "text" => a.text = true,
        "parquet" => return parquet(&a),
        f => anyhow::bail!("unknown format {f:?} (json, text or parquet)"),
    }
    let set = super::open_traces(&a.trace)?;
    let topts = text_options(&a.view)?;
    // Civil times are read in the zone the text is shown in.
    let (b, e) = super::time_range(a.select.begin.as_deref(), a.select.end.as_deref(), super::time_base(&set, a.view.clock_gmt))?;
    let range = (b.unwrap_or(i64::MIN), e.unwrap_or(i64::MAX));
    let filter = read::Filter { range, streams: stream_filters(&set, &a.select) };
    let text = a.text;
    let make = || if text { TextWriter::text(&set, topts) } else { TextWriter::json(&set) };
    let job = out::Job { set: &set, filter: &filter, writer: &make, text, errors: Default::default() };
    let mut sink: Box<dyn Write> = match &a.output {
        Some(p) => Box::new(std::fs::File::create(p).with_context(|| format!("creating {}", p.display()))?),
        None => Box::new(std::io::stdout().lock()),
    };
    let workers = if a.select.jobs == 0 { std::thread::available_parallelism().map(|n| n.get()).unwrap_or(1) } else { a.select.jobs };
    let r = if workers <= 1 {
        let all: Vec<_> = (0..set.streams.len()).map(|i| (i, 0..set.streams[i].packets.len())).collect();
        out::serial(&job, &[(all, (i64::MIN, i64::MAX))], &mut sink)
    } else {
        // Slices of about 1 MiB of stream data: enough work per slice, little text held.
        let slices = engine::clip(&engine::partition(&set, engine::Partition::Hybrid, 1 << 20), range);
        let slices: Vec<_> = slices.into_iter().map(|s| (s.chunks, (s.lo, s.hi))).collect();
        out::parallel(&job, &slices, workers, &mut sink)
    };
    let r = r.and_then(|()| sink.flush().context("writing output"));
    match r {
        // A reader that stopped early (`| head`) is not an error.
        Err(e) if e.chain().any(|c| c.downcast_ref::<std::io::Error>().is_some_and(|io| io.kind() == std::io::ErrorKind::BrokenPipe)) => Ok(()),
        Err(e) => Err(e),
        // Everything readable is written: now the errors that ended streams, one per
        // stream, with those of streams no packet of which could be read.
        Ok(()) => {
            let mut errors = job.errors.into_inner().unwrap_or_else(|e| e.into_inner());
            errors.sort_by_key(|(stream, e)| (*stream, e.to_string()));
            errors.dedup_by_key(|(stream, _)| *stream);
            for (i, s) in set.streams.iter().enumerate() {
                if let (Some(e), false) = (set.stream_error(s), errors.iter().any(|(st, _)| *st == i)) {
                    if filter.streams.get(i).is_some_and(|f| f.is_some()) {
                        errors.push((i, e.duplicate()));
                    }
                }
            }
            let errors: Vec<ctf::error::Error> = errors.into_iter().map(|(_, e)| e).collect();
            super::fail_on_stream_errors(&errors)
        }
    }
}

/// Per stream: left out (`None`, a CPU not asked for), or the classes wanted.
fn stream_filters(set: &TraceSet, s: &SelectArgs) -> Vec<Option<Option<Wanted>>> {
    (0..set.streams.len())
        .map(|i| {
            if !s.cpus.is_empty() && !stream_cpu(set, i).is_some_and(|c| s.cpus.contains(&c)) {
                return None;
            }
            if s.names.is_empty() {
                return Some(None);
            }
            let first = set.streams[i].packets.first()?;
            let plan = &set.traces[first.trace as usize].plan;
            let sp = plan.stream(set.streams[i].class_id)?;
            let mask = sp.events.iter().map(|e| s.names.iter().any(|g| glob(g, &e.name))).collect();
            Some(Some(Wanted::new(sp, mask)))
        })
        .collect()
}

/// The `cpu_id` of a stream's first packet that holds an event (LTTng writes one
/// stream per CPU).
fn stream_cpu(set: &TraceSet, stream: usize) -> Option<u64> {
    let mut c = StreamCursor::new(set, stream);
    loop {
        match c.next() {
            Ok(Some(Item::Event(e))) => return e.packet_cpu_id(),
            Ok(Some(_)) => {}
            _ => return None,
        }
    }
}

/// `dump --format parquet`: one Parquet file per event class; every stream's events up
/// to its damage, then the errors (non-zero exit).
fn parquet(a: &DumpArgs) -> Result<()> {
    let dir = a.output.as_ref().ok_or_else(|| anyhow::anyhow!("--format parquet needs --output DIR (one file per event class)"))?;
    let set = super::open_traces(&a.trace)?;
    let rep = export::events::export_events(&set, dir, export::Format::Parquet)?;
    for (name, path, rows) in &rep.tables {
        eprintln!("{rows:>9} rows  {name}  {}", path.display());
    }
    if rep.lost_values > 0 {
        eprintln!("warning: {} values did not fit their column's type and are null", rep.lost_values);
    }
    super::fail_on_stream_errors(&rep.stream_errors)
}
