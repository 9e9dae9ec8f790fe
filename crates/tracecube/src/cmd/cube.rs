//! `tracecube cube build`, `tracecube query` and `tracecube bench cube`: the
//! statistics cube of the `cube` crate.

use std::path::{Path, PathBuf};

use anyhow::{bail, Context, Result};

/// Arguments of `cube`.
#[derive(clap::Args)]
pub struct CubeArgs {
    /// `build`.
    pub action: String,
    /// Trace directory.
    pub trace: PathBuf,
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
    /// `bytes_written` (bytes); a cube built with `--config` has the metrics its config
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
    let opts = cube_feed::BuildOptions { config, threads: a.chunking.threads, chunk_size: a.chunking.chunk_bytes()?, partition: a.chunking.scheme()? };
    let (mut c, rep) = {
        let bar = super::progress::Progress::bytes("cube build");
        let cb = bar.callback();
        cube_feed::build_with_progress(&set, &opts, Some(&cb))?
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
        "text" => print!("{}", resp.to_text()),
        "json" => println!("{}", serde_json::to_string_pretty(&resp.to_json())?),
        f => bail!("unknown format {f:?} (text or json)"),
    }
    Ok(())
}

/// Runs `bench cube`.
pub fn bench(quick: bool, csv: Option<&Path>) -> Result<()> {
    let tables = cube::bench::run(&cube::bench::BenchOptions { quick, ..Default::default() })?;
    for (i, t) in tables.iter().enumerate() {
        println!("{}", t.to_text());
        if let Some(dir) = csv {
            std::fs::create_dir_all(dir)?;
            std::fs::write(dir.join(format!("cube_{i}.csv")), t.to_csv())?;
        }
    }
    Ok(())
}
