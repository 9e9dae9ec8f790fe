//! `tracecube demo`: the built-in example. Synthesizes a small kernel trace in a
//! temporary directory, reads it back, and shows what tracecube computes from it next
//! to the trace's true statistics.

use std::collections::BTreeMap;

use anyhow::{Context, Result};
use ctf::stream::{Item, StreamCursor};
use ctf::trace::TraceSet;

/// Arguments of `demo`.
#[derive(clap::Args)]
pub struct DemoArgs {
    /// Number of events of the demo trace.
    #[arg(long, default_value_t = 200_000)]
    pub events: u64,
    /// Keep the trace in this directory instead of a temporary one.
    #[arg(long)]
    pub keep: Option<std::path::PathBuf>,
    /// Also save the demo's cube in this directory (then `tracecube serve DIR`).
    #[arg(long)]
    pub cube: Option<std::path::PathBuf>,
}

/// Runs `demo`.
pub fn run(a: DemoArgs) -> Result<()> {
    let tmp = tempfile::tempdir().context("creating a temporary directory")?;
    let dir = a.keep.clone().unwrap_or_else(|| tmp.path().to_path_buf());
    let cfg = synth::SynthConfig { cpus: 4, events: a.events, seed: 2024, ..Default::default() };
    let t0 = std::time::Instant::now();
    let s = synth::generate(&cfg, &dir).context("synthesizing the demo trace")?;
    println!("1. synthesized a 4-CPU kernel trace: {} events, {:.1} MiB, in {:.2?}", s.events, s.bytes as f64 / (1 << 20) as f64, t0.elapsed());
    println!("   {}", s.trace_dir.display());

    let t0 = std::time::Instant::now();
    let set = TraceSet::open(&dir)?;
    let mut total = 0u64;
    let mut names: BTreeMap<String, u64> = BTreeMap::new();
    for i in 0..set.streams.len() {
        let mut c = StreamCursor::new(&set, i);
        let mut per_class = vec![0u64; c.stream_plan().events.len()];
        while let Some(item) = c.next()? {
            if let Item::Event(e) = item {
                total += 1;
                per_class[e.class_index()] += 1;
            }
        }
        for (k, n) in per_class.iter().enumerate().filter(|(_, n)| **n > 0) {
            *names.entry(c.stream_plan().events[k].name.to_string()).or_default() += n;
        }
    }
    let took = t0.elapsed();
    println!(
        "2. decoded all {} events back in {:.2?} ({:.1} M events/s); truth says {} — {}",
        total,
        took,
        total as f64 / took.as_secs_f64() / 1e6,
        s.truth.events_total,
        if total == s.truth.events_total { "identical" } else { "DIFFERENT" }
    );
    let mut top: Vec<_> = names.into_iter().collect();
    top.sort_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(&b.0)));
    println!("3. most frequent events:");
    for (n, c) in top.iter().take(8) {
        let truth = s.truth.events.get(n).copied().unwrap_or(0);
        println!("   {c:>9}  {n:<28} (truth {truth})");
    }
    for (kind, title) in [(analysis::AnalysisKind::Cpu, "CPU usage"), (analysis::AnalysisKind::Io, "I/O usage")] {
        let t0 = std::time::Instant::now();
        let opts = analysis::RunOptions { limit: Some(5), ..Default::default() };
        let report = analysis::run(&set, kind, &opts)?;
        println!("{title} (tracecube analyze -a {}, top 5, {:.2?}):", kind.name(), t0.elapsed());
        for line in analysis::output::to_text(&report).lines() {
            println!("   {line}");
        }
    }
    let t0 = std::time::Instant::now();
    let (mut c, _) = cube_feed::build_from_trace(&s.trace_dir, &cube_feed::BuildOptions { config: cube::CubeConfig::fine(), ..Default::default() })?;
    println!("4. built the statistics cube in {:.2?}; a few queries:", t0.elapsed());
    for line in cube::cli::demo_queries(&c)?.lines() {
        println!("   {line}");
    }
    if let Some(dir) = &a.cube {
        cube::save(&mut c, dir).with_context(|| format!("saving the cube to {}", dir.display()))?;
        println!("5. saved the cube to {}: tracecube serve {0} shows it in a browser", dir.display());
    }
    println!("Try: tracecube info DIR, tracecube dump DIR | head, tracecube analyze DIR -a cpu, with --keep DIR to keep the trace; --cube DIR keeps the cube for tracecube serve.");
    Ok(())
}
