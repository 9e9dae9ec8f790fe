//! Writes a synthetic trace and prints its size and the write speed.
//!
//! `cargo run --release -p synth --example synth_speed -- DIR [EVENTS] [CPUS] [SEED]`
//! (defaults: 25,000,000 events ≈ 1 GB, 4 CPUs, seed 1). Measure peak memory with
//! `/usr/bin/time -v`.

use std::time::Instant;

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let Some(dir) = args.get(1) else {
        eprintln!("usage: synth_speed DIR [EVENTS] [CPUS] [SEED]");
        std::process::exit(2);
    };
    let num = |i: usize, d: u64| args.get(i).and_then(|s| s.parse().ok()).unwrap_or(d);
    let cfg = synth::SynthConfig { events: num(2, 25_000_000), cpus: num(3, 4) as u32, seed: num(4, 1), ..Default::default() };
    let t = Instant::now();
    match synth::generate(&cfg, std::path::Path::new(dir)) {
        Ok(s) => {
            let secs = t.elapsed().as_secs_f64();
            println!(
                "events={} packets={} bytes={} seconds={:.2} MB/s={:.0} Mevents/s={:.2}",
                s.events,
                s.packets,
                s.bytes,
                secs,
                s.bytes as f64 / 1e6 / secs,
                s.events as f64 / 1e6 / secs
            );
        }
        Err(e) => {
            eprintln!("error: {e}");
            std::process::exit(1);
        }
    }
}
