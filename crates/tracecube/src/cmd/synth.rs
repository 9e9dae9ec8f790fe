//! `tracecube synth`: a synthetic lttng-modules 2.13 kernel trace of any size.

use std::path::PathBuf;

use anyhow::{Context, Result};

/// Arguments of `synth`.
#[derive(clap::Args)]
pub struct SynthArgs {
    /// Number of CPUs (one stream each).
    #[arg(long, default_value_t = 4)]
    pub cpus: u32,
    /// Number of events to write.
    #[arg(long, default_value_t = 1_000_000)]
    pub events: u64,
    /// Seed of the workload (same seed, same trace).
    #[arg(long, default_value_t = 1)]
    pub seed: u64,
    /// Target number of live threads (default: 6 per CPU, at least 16).
    #[arg(long)]
    pub threads: Option<u32>,
    /// Percentage of background kernel events (irq, softirq, timer, kmem, wake-up),
    /// 0 to 90, filling the gaps between the workload's syscalls and switches as in
    /// real kernel traces (0: none, the trace as before).
    #[arg(long, default_value_t = 0, value_parser = clap::value_parser!(u8).range(0..=i64::from(synth::MAX_BACKGROUND)))]
    pub background: u8,
    /// Write CTF 2 metadata (JSON text sequence, as LTTng 2.15 does) instead of CTF 1.8.
    #[arg(long)]
    pub ctf2: bool,
    /// Bytes per packet, a power of two from 4096 (small packets keep small traces
    /// small: the test fixtures are written with 4096).
    #[arg(long, default_value_t = 256 * 1024)]
    pub packet_size: usize,
    /// Instead: a sparse UST-like trace of RATE events/s spanning `--span` seconds
    /// (default a day), for `tracecube replay` tests of long streams (written to DIR).
    #[arg(long)]
    pub day_rate: Option<u64>,
    /// Stream time spanned by `--day-rate` traces, s.
    #[arg(long, default_value_t = 86_400)]
    pub span: u64,
    /// The trace's host name (`env.hostname`: the `trace` column of `sql`).
    #[arg(long, default_value = "synth")]
    pub hostname: String,
    /// Output directory (the trace goes to DIR/kernel, the truth to DIR/truth.json).
    #[arg(short, long)]
    pub output: PathBuf,
}

/// Runs `synth`.
pub fn run(a: SynthArgs) -> Result<()> {
    if let Some(rate) = a.day_rate {
        let n = live::day::write(&a.output, &live::day::DayTrace { seconds: a.span, rate, cpus: a.cpus, seed: a.seed })
            .with_context(|| format!("writing {}", a.output.display()))?;
        println!("wrote {n} events over {} s of stream time to {}", a.span, a.output.display());
        return Ok(());
    }
    let metadata = if a.ctf2 { synth::MetadataKind::Ctf2 } else { synth::MetadataKind::Ctf18 };
    let cfg = synth::SynthConfig {
        cpus: a.cpus,
        events: a.events,
        seed: a.seed,
        threads: a.threads,
        metadata,
        background: a.background,
        hostname: a.hostname,
        packet_size: a.packet_size,
        ..Default::default()
    };
    let s = synth::generate(&cfg, &a.output).with_context(|| format!("writing {}", a.output.display()))?;
    println!(
        "wrote {} events in {} packets ({:.1} MiB) to {}; truth in {}",
        s.events,
        s.packets,
        s.bytes as f64 / (1 << 20) as f64,
        s.trace_dir.display(),
        s.truth_path.display()
    );
    Ok(())
}
