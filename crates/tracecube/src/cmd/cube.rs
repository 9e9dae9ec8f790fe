//! `tracecube cube build`, `tracecube query` and `tracecube bench cube`: the
//! statistics cube of the `cube` crate.

use std::path::{Path, PathBuf};

use anyhow::{bail, Context, Result};

/// Arguments of `cube`.
#[derive(clap::Args)]
pub struct CubeArgs {
    /// `build`.
    pub action: String,
    /// Trace directory: every trace below it, one Machine member per host (a fleet's
    /// traces: their common directory).
    pub trace: PathBuf,
    /// Build on the Ballista cluster whose scheduler is at this address
    /// (`df://HOST:PORT`, see `tracecube cluster`): the executors log the slices (`-j`:
    /// about 8 per worker of that many, 16 by default), this process applies them;
    /// every executor must read the trace directory at the path given.
    #[cfg(feature = "cluster")]
    #[arg(long, value_name = "URL")]
    pub cluster: Option<String>,
    /// Output cube directory.
    #[arg(short, long)]
    pub output: PathBuf,
    /// Cube configuration (TOML: dimensions, groups, metrics, levels, materialization).
    #[arg(long)]
    pub config: Option<PathBuf>,
    /// Workers and slices.
    #[command(flatten)]
    pub chunking: super::analyze::ChunkingArgs,
}

/// Arguments of `query`.
#[derive(clap::Args)]
pub struct QueryArgs {
    /// Cube directory (made by `cube build`).
    pub cube: PathBuf,
    /// Metric name. Built in: `events` (count), `cpu_time` (ns), `bytes_read` and
    /// `bytes_written` (bytes), and the latencies in ns (with `--agg avg|max|min|count`):
    /// `syscall_latency` (by thread and call), `sched_latency` (wake-up to run, by thread
    /// and CPU), `irq_time` (handler runs, by handler and CPU), `block_latency` (by
    /// issuing thread and disk); a cube built with `--config` has the metrics its config
    /// names (`tracecube serve` lists them at `/api/metrics`).
    #[arg(long)]
    pub metric: String,
    /// Aggregate: sum (default), count, avg, min or max (min/max: metrics with extremes).
    #[arg(long)]
    pub agg: Option<String>,
    /// Value from the first event to this time: ns since the epoch, +OFFSET from the
    /// first event (+2.5s), HH:MM:SS[.fraction] on the first event's day, or
    /// YYYY-MM-DD[ |T]HH:MM:SS[.fraction][Z|+HH:MM] (local time unless --gmt).
    #[arg(long)]
    pub at: Option<String>,
    /// Value over T1..T2 (each as --at).
    #[arg(long)]
    pub range: Option<String>,
    /// Value over the last DUR (e.g. `7min`).
    #[arg(long)]
    pub last: Option<String>,
    /// Group by DIM[:LEVEL] (repeatable): roll-up and drill-down.
    #[arg(long)]
    pub by: Vec<String>,
    /// Keep DIM[:LEVEL]=MEMBER[,MEMBER...] (repeatable): slice and dice.
    #[arg(long = "where")]
    pub filters: Vec<String>,
    /// The K largest rows.
    #[arg(long)]
    pub top: Option<usize>,
    /// Fixed windows of DUR.
    #[arg(long)]
    pub every: Option<String>,
    /// Output format: text or json.
    #[arg(long, default_value = "text")]
    pub format: String,
    /// Civil times in --at/--range are UTC, not local time.
    #[arg(long)]
    pub gmt: bool,
}

/// The cube configuration of `--config FILE`, or the defaults.
pub fn load_config(path: Option<&Path>) -> Result<cube::CubeConfig> {
    match path {
        Some(p) => cube::CubeConfig::load(p).with_context(|| format!("reading {}", p.display())),
        None => Ok(cube::CubeConfig::default()),
    }
}

/// The time between the first packet's start and the last packet's end, ns (from
/// the packet index: no event is read); unknown (no clock): `u64::MAX`.
fn trace_span(set: &ctf::trace::TraceSet) -> u64 {
    let ends = set.streams.iter().flat_map(|s| {
        s.packets.first().and_then(|p| set.packet_ns(p, p.info.ts_begin)).into_iter().chain(s.packets.last().and_then(|p| set.packet_ns(p, p.info.ts_end)))
    });
    let (lo, hi) = ends.fold((i64::MAX, i64::MIN), |(lo, hi), t| (lo.min(t), hi.max(t)));
    if lo > hi {
        return u64::MAX;
    }
    hi.saturating_sub(lo).max(0) as u64
}

/// Runs `cube build`.
pub fn run(a: CubeArgs) -> Result<()> {
    if a.action != "build" {
        bail!("unknown cube action {:?} (expected `build`)", a.action);
    }
    let set = super::open_traces(&a.trace)?;
    let config = match &a.config {
        Some(_) => load_config(a.config.as_deref())?,
        None => cube::CubeConfig::for_span(trace_span(&set)),
    };
    // The histories go to the output's new generation as they are built (bounded
    // memory), locally or from a cluster's logs.
    let opts = cube_feed::BuildOptions {
        config,
        threads: a.chunking.threads,
        chunk_size: a.chunking.chunk_bytes()?,
        partition: a.chunking.scheme()?,
        spill: Some(a.output.clone()),
    };
    #[cfg(feature = "cluster")]
    let remote = match &a.cluster {
        Some(url) => {
            super::cluster::ignore_sigpipe();
            Some(fleet::cube::build(url, &a.trace, &set, &opts)?)
        }
        None => None,
    };
    #[cfg(not(feature = "cluster"))]
    let remote = None;
    let (mut c, rep) = match remote {
        Some(built) => built,
        None => {
            let bar = super::progress::Progress::bytes("cube build");
            let cb = bar.callback();
            cube_feed::build_with_progress(&set, &opts, Some(&cb))?
        }
    };
    cube::save(&mut c, &a.output)?;
    eprint!("{}", rep.to_text());
    eprintln!("cube written to {}", a.output.display());
    super::fail_on_stream_errors(&rep.stream_errors)
}

/// Runs `query`.
pub fn query(a: QueryArgs) -> Result<()> {
    let c = cube::open(&a.cube)?;
    let args = cube::cli::QueryArgs {
        metric: a.metric,
        agg: a.agg,
        at: a.at,
        range: a.range,
        last: a.last,
        by: a.by,
        filters: a.filters,
        top: a.top,
        every: a.every,
        gmt: a.gmt,
    };
    let resp = c.query(&args.to_request(&c)?)?;
    match a.format.as_str() {
        "text" => print!("{}", query_text(&c, &resp)),
        "json" => println!("{}", serde_json::to_string_pretty(&resp.to_json())?),
        f => bail!("unknown format {f:?} (text or json)"),
    }
    Ok(())
}

/// How a metric's values read.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Unit {
    /// A number of things (events, updates): with thousands separators.
    Count,
    /// Nanoseconds (CPU time): s / ms / µs, and a share of the window for a sum.
    Duration,
    /// Bytes: binary units.
    Bytes,
}

/// The unit of `metric`'s values under `agg`, from the measure the cube's metric sums.
fn unit_of(c: &cube::Cube, metric: &str, agg: cube::query::Agg) -> Unit {
    let measure = c.schema.metrics.iter().find(|m| m.name == metric).map_or("", |m| m.measure.as_str());
    match measure {
        _ if agg == cube::query::Agg::Count || metric.ends_with(".count") => Unit::Count,
        "cpu_ns" => Unit::Duration,
        m if m.starts_with("bytes") => Unit::Bytes,
        _ => Unit::Count,
    }
}

/// For a `by` entry naming the process dimension's `pid` or `tid` level, each label's
/// readable form `name (id)`, with the latest name the cube knows for it (members are
/// made as the trace reveals them: after an `exec` the pid or tid has a member under
/// its new name, made later), as `analyze` names a thread; `None` for other entries.
fn member_names(c: &cube::Cube, by: &str) -> Option<std::collections::HashMap<String, String>> {
    let (di, level) = c.schema.dim_level(by).ok()?;
    let dim = &c.schema.dims[di as usize];
    let name_level = dim.level("name")?;
    if dim.name != "process" || !matches!(dim.levels.get(level as usize).map(String::as_str), Some("pid" | "tid")) {
        return None;
    }
    // (In creation order: the last member of a label names it.)
    Some(
        dim.members_at(level)
            .into_iter()
            .map(|n| (dim.label(n).to_string(), format!("{} ({})", dim.label(dim.ancestor(n, name_level)), dim.label(n))))
            .collect(),
    )
}

/// `query`'s text: per window, a table of the values in the metric's unit
/// ([`Unit`]: the `analysis::text` helpers, as `analyze`'s text), with a bar, for a sum
/// of CPU time its usage (a share of the window's length, as lttng-cputop's: a process
/// on several CPUs may pass 100 %), and members named `name (pid)` / `name (tid)` where the
/// cube knows the names. (`--format json` keeps the exact values.)
fn query_text(c: &cube::Cube, resp: &cube::query::Response) -> String {
    use analysis::text;
    let unit = unit_of(c, &resp.metric, resp.agg);
    let share = unit == Unit::Duration && resp.agg == cube::query::Agg::Sum;
    let names: Vec<_> = resp.by.iter().map(|b| member_names(c, b)).collect();
    let value = |v: f64| match unit {
        Unit::Duration => text::duration(v.round().max(0.0) as u64),
        Unit::Bytes => text::bytes(v.round().max(0.0) as u64),
        Unit::Count if v.fract() == 0.0 && v >= 0.0 => text::count(v as u64),
        Unit::Count => format!("{v:.3}"),
    };
    let mut header: Vec<&str> = vec![match unit {
        Unit::Duration => "Time",
        Unit::Bytes => "Bytes",
        Unit::Count => "Count",
    }];
    if share {
        header.push("Usage");
    }
    header.push("");
    let first_label = header.len();
    if resp.by.is_empty() {
        header.push("");
    }
    header.extend(resp.by.iter().map(String::as_str));
    let mut s = resp.title();
    for w in &resp.windows {
        s += &resp.window_header(w);
        if w.rows.is_empty() {
            s += "  (nothing)\n";
            continue;
        }
        let mut t = text::table(&header, &(0..first_label - 1).collect::<Vec<_>>());
        let max = w.rows.iter().map(|r| r.value).fold(0.0, f64::max);
        let len = w.end_ns.saturating_sub(w.begin_ns) as f64;
        for r in &w.rows {
            let mut row = vec![value(r.value)];
            if share {
                row.push(format!("{:.2} %", if len > 0.0 { r.value / len * 100.0 } else { 0.0 }));
            }
            row.push(text::bar(r.value, max, 20));
            if r.group.is_empty() {
                row.push("all".into());
            }
            for (label, names) in r.group.iter().zip(&names) {
                row.push(names.as_ref().and_then(|n| n.get(label)).cloned().unwrap_or_else(|| label.clone()));
            }
            t.add_row(row);
        }
        for line in t.lines() {
            s += line.trim_end();
            s += "\n";
        }
    }
    s
}

/// Runs `bench cube`.
pub fn bench(quick: bool, csv: Option<&Path>) -> Result<()> {
    let tables = bench::cube_experiments::run(&bench::cube_experiments::BenchOptions { quick, ..Default::default() })?;
    for (i, t) in tables.iter().enumerate() {
        println!("{}", t.to_text());
        if let Some(dir) = csv {
            std::fs::create_dir_all(dir)?;
            std::fs::write(dir.join(format!("cube_{i}.csv")), t.to_csv())?;
        }
    }
    Ok(())
}
