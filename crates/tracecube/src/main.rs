//! `tracecube`: the command-line front end. It only wires the library crates together:
//! parsing arguments, opening traces, and printing what the crates compute.

mod cmd;

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
}

fn main() {
    let cli = Cli::parse();
    let r = match cli.command {
        Command::Dump(a) => cmd::dump::run(a),
        Command::Print(a) => cmd::dump::run(a.into()),
        Command::Info(a) => cmd::info::run(a),
        Command::Count(a) => cmd::count::run(a),
    };
    if let Err(e) = r {
        eprintln!("tracecube: error: {e:#}");
        std::process::exit(2);
    }
}
