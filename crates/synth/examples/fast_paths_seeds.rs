//! Writes the seed corpus of the fuzz target `fast_paths` (`fuzz/README.md`).
//!
//! `cargo run --profile ci -p synth --example fast_paths_seeds -- OUT_DIR`
//!
//! Four synthetic kernel traces (compact and large event headers, 400 and 1,500
//! events, 2 CPUs, seed 9, 30 % background events, 4 KiB packets), their packets
//! carrying the trace UUID of `fuzz/data/kernel-*.metadata` (the target's fixed
//! metadata); the first 4, 8 and 12 KiB of each stream file, each behind four input
//! prefixes (`ctf::crosscheck::fuzz_input_agrees` gives the layout): every class and no
//! turns; every other class, turns 0, 2, 1, 3; a sparse mask, turns 0, 0, 2; no class.
//! Each seed is checked with that function before it is written: a seed on which the
//! fast paths already differ from the general decoder is a finding, not a seed.

use std::path::Path;

const PACKET: usize = 4096;

fn main() {
    let Some(out) = std::env::args().nth(1) else {
        eprintln!("usage: fast_paths_seeds OUT_DIR");
        std::process::exit(2);
    };
    let out = Path::new(&out);
    std::fs::create_dir_all(out).expect("the output directory");
    let data = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../fuzz/data");
    let compact = std::fs::read(data.join("kernel-compact.metadata")).expect("fuzz/data/kernel-compact.metadata");
    let large = std::fs::read(data.join("kernel-large.metadata")).expect("fuzz/data/kernel-large.metadata");
    // (Both files are packetized metadata: the trace UUID follows each packet's magic.)
    let uuid: [u8; 16] = compact[4..20].try_into().unwrap();
    assert_eq!(large[4..20], uuid, "one trace UUID");
    let prefixes: [(u64, &[u8]); 4] = [(u64::MAX, &[]), (0x5555_5555_5555_5555, &[0, 2, 1, 3]), (0x0000_0001_0001_0001, &[0, 0, 2]), (0, &[])];
    let mut n = 0;
    for (large_headers, header) in [(false, synth::EventHeaderKind::Compact), (true, synth::EventHeaderKind::Large)] {
        for events in [400, 1_500] {
            let dir = tempfile::tempdir().expect("a temporary directory");
            let cfg = synth::SynthConfig { cpus: 2, events, seed: 9, background: 30, packet_size: PACKET, header, ..Default::default() };
            synth::generate(&cfg, dir.path()).expect("synthesize");
            for cpu in 0..cfg.cpus {
                let mut stream = std::fs::read(dir.path().join(format!("kernel/channel0_{cpu}"))).expect("a stream file");
                for packet in stream.chunks_mut(PACKET) {
                    packet[4..20].copy_from_slice(&uuid);
                }
                for kib in [4, 8, 12] {
                    let part = &stream[..stream.len().min(kib * 1024)];
                    for (k, (mask, turns)) in prefixes.iter().enumerate() {
                        let mut input = vec![u8::from(large_headers) | ((turns.len() as u8) << 1)];
                        input.extend_from_slice(&mask.to_le_bytes());
                        input.extend_from_slice(turns);
                        input.extend_from_slice(part);
                        if let Err(e) = ctf::crosscheck::fuzz_input_agrees(&input, &compact, &large) {
                            panic!("a seed on which the fast paths differ: {e}");
                        }
                        let name = format!("{}-{events}-cpu{cpu}-{kib}k-{k}", if large_headers { "large" } else { "compact" });
                        std::fs::write(out.join(name), &input).expect("a seed file");
                        n += 1;
                    }
                }
            }
        }
    }
    println!("{n} seeds in {}", out.display());
}
