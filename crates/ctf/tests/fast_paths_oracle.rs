//! The fast paths against the general decoder ([`ctf::crosscheck`], the oracle of the
//! fuzz target `fast_paths`) on synthesized kernel traces of both LTTng header kinds,
//! intact and damaged by seeded bit flips and truncations: the same events, timestamps,
//! field values and error, whichever way the stream is read.

use std::path::Path;

use ctf::crosscheck::fast_paths_agree;
use ctf::trace::TraceSet;

/// A small kernel trace of seed `seed` (compact headers for even seeds) in `dir/kernel`.
fn synth_trace(dir: &Path, seed: u64) {
    let header = if seed.is_multiple_of(2) { synth::EventHeaderKind::Compact } else { synth::EventHeaderKind::Large };
    let cfg = synth::SynthConfig { cpus: 2, events: 3_000, seed, packet_size: 4096, header, background: 30, ..Default::default() };
    synth::generate(&cfg, dir).expect("synthesize");
}

/// A xorshift step.
fn next(x: &mut u64) -> u64 {
    *x ^= *x << 13;
    *x ^= *x >> 7;
    *x ^= *x << 17;
    *x
}

fn check(dir: &Path, mask: u64, turns: &[u8]) {
    let fast = TraceSet::open(dir).expect("open");
    let slow = TraceSet::open(dir).expect("open").without_compiled_headers();
    assert!(fast.traces[0].plan.streams.iter().all(|sp| sp.fast_header.is_some()), "LTTng headers are compiled");
    if let Err(e) = fast_paths_agree(&fast, &slow, mask, turns) {
        panic!("{}: {e}", dir.display());
    }
}

#[test]
fn fast_paths_equal_the_general_decoder_on_intact_and_damaged_traces() {
    let mut damaged = 0;
    for seed in 0..4u64 {
        let dir = tempfile::tempdir().unwrap();
        synth_trace(dir.path(), seed);
        let trace = dir.path().join("kernel");
        let mut x = seed * 0x9e37_79b9 + 1;
        let masks = [u64::MAX, next(&mut x), next(&mut x) & next(&mut x)];
        let turns: Vec<u8> = (0..17).map(|_| (next(&mut x) % 4) as u8).collect();
        for &mask in &masks {
            check(&trace, mask, &turns);
        }
        // Damaged copies: a flipped bit or a cut in one stream file.
        let streams: Vec<_> = std::fs::read_dir(&trace)
            .unwrap()
            .flatten()
            .map(|e| e.path())
            .filter(|p| p.file_name().is_some_and(|n| n.to_string_lossy().starts_with("channel")))
            .collect();
        assert!(!streams.is_empty());
        for round in 0..6 {
            let copy = tempfile::tempdir().unwrap();
            std::fs::copy(trace.join("metadata"), copy.path().join("metadata")).unwrap();
            for (i, s) in streams.iter().enumerate() {
                let mut bytes = std::fs::read(s).unwrap();
                if i == 0 {
                    let at = (next(&mut x) % bytes.len() as u64) as usize;
                    if round % 3 == 2 {
                        bytes.truncate(at);
                    } else {
                        bytes[at] ^= 1 << (next(&mut x) % 8);
                    }
                    damaged += 1;
                }
                std::fs::write(copy.path().join(s.file_name().unwrap()), bytes).unwrap();
            }
            check(copy.path(), masks[round % 3], &turns);
        }
    }
    assert_eq!(damaged, 24);
}

/// Packets that report discarded events (a notice before their events) in an intact
/// trace, read by a reader that turns to another way of reading right after a notice:
/// packets read in pairs deliver the first packet's notice before its first event, and
/// the cursor must then stand at that packet's first event, as reading in turn leaves
/// it (it stood where finding the pair's events had left it, and read-ahead, `next` or
/// decoding in turn read on from there).
#[test]
fn a_reader_turning_after_a_packets_notice_reads_on_from_the_packets_first_event() {
    for seed in 0..2u64 {
        let dir = tempfile::tempdir().unwrap();
        synth_trace(dir.path(), seed);
        let trace = dir.path().join("kernel");
        let copy = tempfile::tempdir().unwrap();
        std::fs::copy(trace.join("metadata"), copy.path().join("metadata")).unwrap();
        let mut notices = 0;
        for cpu in 0..2 {
            let name = format!("channel0_{cpu}");
            let mut bytes = std::fs::read(trace.join(&name)).unwrap();
            // Each packet's `events_discarded` (after the 32-byte packet header and five
            // 64-bit fields of the kernel packet context): 3 more in each packet.
            for (k, packet) in bytes.chunks_mut(4096).enumerate() {
                packet[72..80].copy_from_slice(&(3 * k as u64).to_le_bytes());
                notices += usize::from(k > 0);
            }
            std::fs::write(copy.path().join(&name), bytes).unwrap();
        }
        assert!(notices > 10, "{notices} packets with a notice");
        for turns in [&[0u8, 1][..], &[0, 2], &[0, 3], &[0, 0, 2, 3, 1]] {
            for mask in [u64::MAX, 0x0001_0000_0100_0010, 0] {
                check(copy.path(), mask, turns);
            }
        }
    }
}
