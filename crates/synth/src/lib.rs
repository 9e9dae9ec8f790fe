//! Realistic synthetic LTTng kernel traces, with their true statistics.
//!
//! Where it sits: on top of [`ctf_writer`]; the `tracecube` binary calls [`generate`] for
//! `tracecube synth` and `tracecube demo`. Nothing here reads traces.
//!
//! [`generate`] runs a deterministic discrete-event simulation of a multi-CPU machine
//! ([`sim`]: processes with several threads, per-CPU run queues, migrations, blocking
//! syscalls, fork/exec/exit) and writes what an lttng-modules 2.13 kernel session would:
//!
//! ```text
//! DIR/truth.json                  true statistics (see [`truth`] for the definitions)
//! DIR/kernel/metadata             packetized TSDL (4096-byte packets, magic 0x75D11D57),
//!                                 or CTF 2 JSON with `metadata: MetadataKind::Ctf2`
//! DIR/kernel/channel0_<cpu>       one stream per CPU, cpu_id in the packet context,
//!                                 power-of-two packets, compact event headers
//! DIR/kernel/index/channel0_<cpu>.idx   LTTng index v1.1
//! ```
//!
//! Memory stays flat: one packet per CPU is buffered, events are streamed to disk.
//!
//! # Example
//!
//! ```
//! let dir = tempfile::tempdir().unwrap();
//! let cfg = synth::SynthConfig { cpus: 2, events: 5_000, seed: 42, ..Default::default() };
//! let summary = synth::generate(&cfg, dir.path()).unwrap();
//! assert!(summary.events >= 5_000);
//! let truth = synth::Truth::load(&dir.path().join("truth.json")).unwrap();
//! assert_eq!(truth.events_total, summary.events);
//! // `tracecube synth --cpus N --events M --seed S -o DIR` is this call with DIR;
//! // `tracecube demo` calls it on a temporary directory and analyses `summary.trace_dir`.
//! ```

pub mod error;
pub mod events;
pub mod kernel;
pub mod sim;
pub mod truth;
pub mod workload;
mod writer;

use std::path::{Path, PathBuf};

pub use ctf_writer::EventHeaderKind;
pub use error::{Result, SynthError};
pub use truth::Truth;

/// The largest [`SynthConfig::background`] percentage.
pub const MAX_BACKGROUND: u8 = 90;

/// What to synthesize.
#[derive(Debug, Clone)]
pub struct SynthConfig {
    /// Number of CPUs (one stream each), 1..=1024.
    pub cpus: u32,
    /// Number of events to write (the statedump at the start is always complete, so tiny
    /// targets may be exceeded by its size).
    pub events: u64,
    /// Seed: the same configuration gives the same trace, byte for byte.
    pub seed: u64,
    /// Target number of live threads; `None` means 6 per CPU (at least 16).
    pub threads: Option<u32>,
    /// Packet (sub-buffer) size in bytes, a power of two >= 4096.
    pub packet_size: usize,
    /// Event header layout: LTTng kernel channels use `Compact`.
    pub header: EventHeaderKind,
    /// Metadata format; the data streams are the same, byte for byte, either way.
    pub metadata: MetadataKind,
    /// About this percentage of the events (0..=[`MAX_BACKGROUND`]) is background kernel activity
    /// ([`events::Background`]: irqs, softirqs, timers, allocations, wake-ups) in the
    /// gaps between the workload's events, as in real kernel traces (where syscalls
    /// and switches are often a minority). It changes no truth but the event counts.
    /// 0 (default): none, and its classes are not declared.
    pub background: u8,
    /// The trace's `env.hostname` (a fleet of hosts is synthesized with one seed and
    /// one name per host).
    pub hostname: String,
}

/// Which CTF version the `metadata` file is written in.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum MetadataKind {
    /// CTF 1.8: packetized TSDL, as lttng-modules 2.13 writes it.
    #[default]
    Ctf18,
    /// CTF 2: a JSON text sequence (CTF2-SPEC-2.0) describing the same streams.
    Ctf2,
}

impl Default for SynthConfig {
    fn default() -> Self {
        SynthConfig {
            cpus: 4,
            events: 100_000,
            seed: 1,
            threads: None,
            packet_size: 256 * 1024,
            header: EventHeaderKind::Compact,
            metadata: MetadataKind::Ctf18,
            background: 0,
            hostname: "synth".into(),
        }
    }
}

impl SynthConfig {
    fn validate(&self) -> Result<()> {
        if !(1..=1024).contains(&self.cpus) {
            return Err(SynthError::Config(format!("cpus = {} (must be 1..=1024)", self.cpus)));
        }
        if self.events == 0 {
            return Err(SynthError::Config("events = 0 (must be at least 1)".into()));
        }
        if let Some(t) = self.threads {
            if !(1..=1_000_000).contains(&t) {
                return Err(SynthError::Config(format!("threads = {t} (must be 1..=1000000)")));
            }
        }
        if self.background > MAX_BACKGROUND {
            return Err(SynthError::Config(format!("background = {}% (must be 0..={MAX_BACKGROUND})", self.background)));
        }
        if !self.packet_size.is_power_of_two() || self.packet_size < 4096 || self.packet_size > 1 << 30 {
            return Err(SynthError::Config(format!("packet_size = {} (must be a power of two in 4096..=1 GiB)", self.packet_size)));
        }
        Ok(())
    }
}

/// What [`generate`] wrote.
#[derive(Debug, Clone)]
pub struct Summary {
    /// The trace directory (`DIR/kernel`): pass it to a CTF reader.
    pub trace_dir: PathBuf,
    /// `DIR/truth.json`.
    pub truth_path: PathBuf,
    /// Events written.
    pub events: u64,
    /// Packets written, all streams.
    pub packets: u64,
    /// Bytes of stream files written, all streams.
    pub bytes: u64,
    /// The true statistics (also in truth.json).
    pub truth: Truth,
}

/// Runs the workload simulation into any [`sim::EventSink`] (no files written) and returns
/// its truth; [`generate`] is this with per-CPU CTF streams as the sink. Tests use it to
/// check the event stream itself.
pub fn simulate<S: sim::EventSink>(cfg: &SynthConfig, sink: &mut S) -> Result<Truth> {
    cfg.validate()?;
    let tally = sim::Sim::new(writer::sim_params(cfg), sink).run()?;
    Ok(writer::build_truth(cfg, &tally))
}

/// Synthesizes a trace into `out_dir` (created if missing): `out_dir/kernel/` and
/// `out_dir/truth.json`.
pub fn generate(cfg: &SynthConfig, out_dir: &Path) -> Result<Summary> {
    cfg.validate()?;
    writer::generate(cfg, out_dir)
}
