//! One module per subcommand.

// clap shows the doc comments of the argument structs as `--help` text, where
// `DIM[:LEVEL]` is syntax, not a link.
#![allow(rustdoc::broken_intra_doc_links)]

pub mod analyze;
pub mod count;
pub mod cube;
pub mod demo;
pub mod dump;
pub mod export;
pub mod info;
pub mod live;
pub mod progress;
pub mod serve;
pub mod synth;

use std::path::Path;

use ctf::trace::TraceSet;

/// Opens the traces below `path` (see [`TraceSet::open`]), printing to stderr what was
/// found but left out, and why.
pub fn open_traces(path: &Path) -> anyhow::Result<TraceSet> {
    let set = TraceSet::open(path)?;
    for w in &set.warnings {
        eprintln!("tracecube: warning: {w}");
    }
    Ok(set)
}

/// Prints each stream error to stderr, then fails when there was one (the command
/// then exits non-zero, after printing everything it could read: every intact stream
/// whole, a damaged one up to its damage).
/// (One error is the command's error: one line.)
pub fn fail_on_stream_errors<E: std::fmt::Display>(errors: &[E]) -> anyhow::Result<()> {
    match errors {
        [] => Ok(()),
        [e] => anyhow::bail!("{e}"),
        _ => {
            for e in errors {
                eprintln!("tracecube: error: {e}");
            }
            anyhow::bail!("{} streams could not be read to their end (the output holds what could be read)", errors.len())
        }
    }
}
