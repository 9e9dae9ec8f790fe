//! `tracecube`: the command-line front end. It only wires the library crates together:
//! parsing arguments, opening traces, and printing what the crates compute.

mod cmd;

/// mimalloc instead of the system allocator: metadata lowering, hash maps of the
/// kernel model and the cube allocate many small objects, where glibc's malloc costs
/// up to a third of a short run. Built without transparent huge pages (`no_thp`): its
/// arena would otherwise be backed by 2 MiB pages, each zeroed whole on first touch
/// even for a few small objects (3 ms of a 26 ms `cpu` run, BENCHMARKS session 24).
/// Buffers that are written through, io's chunk logs, ask for huge pages themselves.
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

use clap::{Parser, Subcommand};

/// Statistics of LTTng/CTF execution traces, fast.
#[derive(Parser)]
#[command(name = "tracecube", version, about)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Decode every event of a trace, in time order (canonical JSON lines, or text).
    Dump(cmd::dump::DumpArgs),
    /// Decode a trace as human-readable text (same as `dump --text`).
    Print(cmd::dump::PrintArgs),
    /// Describe a trace: streams, packets, events, time range, clocks, env, losses.
    Info(cmd::info::InfoArgs),
    /// Count the events of a trace (total and per name).
    Count(cmd::count::CountArgs),
    /// Analyse a trace in parallel: event counts, CPU usage, I/O usage.
    Analyze(cmd::analyze::AnalyzeArgs),
    /// Benchmarks: `bench analyze TRACE` (time, speedup, efficiency per thread count),
    /// `bench cube` (the cube paper's experiments).
    Bench(cmd::analyze::BenchArgs),
    /// The statistics cube: `cube build TRACE -o DIR`.
    Cube(cmd::cube::CubeArgs),
    /// Query a cube: point, range, top-k, windows, roll-up, drill-down, slice, dice.
    Query(cmd::cube::QueryArgs),
    /// Export analysis results (of a TRACE) or series (of a cube) as Parquet, CSV or JSON.
    Export(cmd::export::ExportArgs),
    /// Serve a cube: HTTP/JSON API (`/api/openapi.json`) and a web page of charts.
    Serve(cmd::serve::ServeArgs),
    /// SQL over traces and analyses (Apache DataFusion): `events`, `ev_<name>` per
    /// event class, `cpu_usage`, `io_usage`...; `-e QUERY`, `-f FILE`, or a shell.
    #[cfg(feature = "sql")]
    Sql(cmd::sql::SqlArgs),
    /// The processes of a cluster for `sql --cluster` (Apache DataFusion Ballista):
    /// `cluster scheduler`, `cluster executor --scheduler ADDR`.
    #[cfg(feature = "cluster")]
    Cluster(cmd::cluster::ClusterArgs),
    /// Follow a live source into the cube: an LTTng relay daemon's session
    /// (`net://HOST/host/HOSTNAME/SESSION`; `--list net://HOST` lists them) or a trace
    /// directory being written; periodic summary, optional `--serve ADDR`.
    Live(cmd::live::LiveArgs),
    /// Feed a trace through the live pipeline at its own pace, or `--speed X` faster.
    Replay(cmd::live::ReplayArgs),
    /// Write a realistic synthetic LTTng kernel trace and its true statistics.
    Synth(cmd::synth::SynthArgs),
    /// The built-in example: synthesize a small kernel trace and analyse it.
    Demo(cmd::demo::DemoArgs),
}

fn main() {
    // Die quietly on a closed pipe (`tracecube dump T | head`), like other Unix tools.
    // SAFETY: restoring the default disposition of SIGPIPE before any thread starts.
    unsafe {
        libc::signal(libc::SIGPIPE, libc::SIG_DFL);
    }
    let cli = Cli::parse();
    let r = match cli.command {
        Command::Dump(a) => cmd::dump::run(a),
        Command::Print(a) => cmd::dump::run(a.into()),
        Command::Info(a) => cmd::info::run(a),
        Command::Count(a) => cmd::count::run(a),
        Command::Analyze(a) => cmd::analyze::run(a),
        Command::Bench(a) => cmd::analyze::bench(a),
        Command::Cube(a) => cmd::cube::run(a),
        Command::Query(a) => cmd::cube::query(a),
        Command::Export(a) => cmd::export::run(a),
        Command::Serve(a) => cmd::serve::run(a),
        #[cfg(feature = "sql")]
        Command::Sql(a) => cmd::sql::run(a),
        #[cfg(feature = "cluster")]
        Command::Cluster(a) => cmd::cluster::run(a),
        Command::Live(a) => cmd::live::run(a),
        Command::Replay(a) => cmd::live::replay(a),
        Command::Synth(a) => cmd::synth::run(a),
        Command::Demo(a) => cmd::demo::run(a),
    };
    if let Err(e) = r {
        eprintln!("tracecube: error: {e:#}");
        std::process::exit(2);
    }
}
