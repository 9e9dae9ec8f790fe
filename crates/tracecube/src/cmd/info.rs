//! `tracecube info`: what a trace holds.

use std::path::PathBuf;

use anyhow::Result;

/// Arguments of `info`.
#[derive(clap::Args)]
pub struct InfoArgs {
    /// Trace directory.
    pub trace: PathBuf,
}

/// Runs `info`.
pub fn run(a: InfoArgs) -> Result<()> {
    let set = ctf::trace::TraceSet::open(&a.trace)?;
    println!("{} trace(s), {} stream(s), {} packet(s)", set.traces.len(), set.streams.len(), set.packet_count());
    Ok(())
}
