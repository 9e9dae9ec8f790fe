//! `tracecube export`: analysis results of a trace, or the series of a cube, as
//! Parquet, CSV or JSON tables (one file per table) for pandas, DuckDB or Spark.

use std::path::PathBuf;

use analysis::RunOptions;
use anyhow::{Context, Result};
use export::series::SeriesOptions;
use export::Format;

/// Arguments of `export`.
#[derive(clap::Args)]
pub struct ExportArgs {
    /// A cube directory (made by `cube build`): its series; or a trace: its analyses.
    pub source: PathBuf,
    /// Output format: parquet, csv or json.
    #[arg(long = "to")]
    pub to: String,
    /// Output directory (one file per table).
    #[arg(short, long)]
    pub output: PathBuf,
    /// Trace: the analyses to export (comma-separated: count, cpu, io).
    #[arg(long, value_delimiter = ',', default_value = "count,cpu,io")]
    pub analysis: Vec<String>,
    /// Trace: worker threads (0: all cores).
    #[arg(short = 'j', long, default_value_t = 0)]
    pub threads: usize,
    /// Cube: metrics to export (repeatable; default: all).
    #[arg(long)]
    pub metric: Vec<String>,
    /// Cube: group by DIM[:LEVEL] (repeatable; default: each dimension of the metric
    /// at its finest level).
    #[arg(long)]
    pub by: Vec<String>,
    /// Cube: bucket length (default: the finest kept granularity, at most 10000 buckets).
    #[arg(long)]
    pub every: Option<String>,
    /// Cube: only T1..T2 (as `query --range`).
    #[arg(long)]
    pub range: Option<String>,
    /// Cube: aggregate (sum, count, avg, min, max).
    #[arg(long)]
    pub agg: Option<String>,
}

/// Runs `export`.
pub fn run(a: ExportArgs) -> Result<()> {
    let format: Format = a.to.parse()?;
    let mut errors: Vec<String> = Vec::new();
    let tables = if cube::file::is_cube(&a.source) {
        let c = cube::open(&a.source).with_context(|| format!("opening the cube {}", a.source.display()))?;
        let o = SeriesOptions { metrics: a.metric, by: a.by, every: a.every, range: a.range, agg: a.agg };
        export::series::series(&c, &o)?
    } else {
        let set = super::open_traces(&a.source)?;
        let mut tables = Vec::new();
        for name in &a.analysis {
            let kind = super::analyze::parse_analysis(name)?;
            let (report, faults) = analysis::run_reporting(&set, kind, &RunOptions { threads: a.threads, ..Default::default() }, None)?;
            tables.extend(export::report::report_tables(name, &analysis::output::to_json(&report)));
            // (The same errors for every analysis: those of the first.)
            if errors.is_empty() {
                errors = faults.iter().map(|f| f.to_string()).collect();
            }
        }
        tables
    };
    for t in &tables {
        let path = export::sink::write_table(&a.output, t, format)?;
        eprintln!("{:>9} rows  {}", t.rows(), path.display());
    }
    super::fail_on_stream_errors(&errors)
}
