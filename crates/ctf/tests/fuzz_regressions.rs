//! Inputs the fuzzers (`fuzz/`) once found a fault with, replayed on every `cargo test`.
//! `packet_decode` inputs are one stream file decoded with `fuzz/data/metadata`;
//! `trace_pair` inputs are metadata, `\n%%STREAM%%\n`, then the stream bytes;
//! `fast_paths` inputs are checked as that target checks them
//! ([`ctf::crosscheck::fuzz_input_agrees`], with `fuzz/data/kernel-*.metadata`).

use std::path::{Path, PathBuf};

fn fuzz_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../fuzz")
}

/// The files of `fuzz/regressions/TARGET`, with their bytes.
fn inputs(target: &str) -> Vec<(PathBuf, Vec<u8>)> {
    let dir = fuzz_dir().join("regressions").join(target);
    let mut v: Vec<_> = std::fs::read_dir(&dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .map(|e| e.unwrap().path())
        .map(|p| {
            let bytes = std::fs::read(&p).unwrap();
            (p, bytes)
        })
        .collect();
    v.sort();
    v
}

fn replay(metadata: &[u8], stream: &[u8]) {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("metadata"), metadata).unwrap();
    std::fs::write(dir.path().join("stream"), stream).unwrap();
    let Ok(set) = ctf::trace::TraceSet::open(dir.path()) else { return };
    let mut m = ctf::merge::Merger::new(&set);
    let mut out = Vec::new();
    while let Ok(Some(mut x)) = m.next() {
        let _ = ctf::dump::write_json(&mut out, &mut x.item);
    }
}

#[test]
fn fuzz_regressions_do_not_panic() {
    let metadata = std::fs::read(fuzz_dir().join("data/metadata")).unwrap();
    let mut n = 0;
    for (_, bytes) in inputs("packet_decode") {
        replay(&metadata, &bytes);
        n += 1;
    }
    for (_, bytes) in inputs("trace_pair") {
        let sep = b"\n%%STREAM%%\n";
        let at = bytes.windows(sep.len()).position(|w| w == sep).unwrap_or(bytes.len());
        let stream = bytes.get(at + sep.len()..).unwrap_or_default();
        replay(&bytes[..at], stream);
        n += 1;
    }
    assert!(n >= 2, "regression inputs found: {n}");
}

/// The two metadata files of the `fast_paths` target: compact and large headers.
fn kernel_metadata() -> (Vec<u8>, Vec<u8>) {
    let read = |name: &str| std::fs::read(fuzz_dir().join("data").join(name)).unwrap();
    (read("kernel-compact.metadata"), read("kernel-large.metadata"))
}

#[test]
fn fast_paths_regressions_agree_with_the_general_decoder() {
    let (compact, large) = kernel_metadata();
    let inputs = inputs("fast_paths");
    assert!(!inputs.is_empty());
    for (path, bytes) in &inputs {
        if let Err(e) = ctf::crosscheck::fuzz_input_agrees(bytes, &compact, &large) {
            panic!("{}: {e}", path.display());
        }
    }
}

/// `time-back-after-saturated-clock` (compact headers): an extended header sets the
/// clock to 2^64 - 16,713,214 cycles (at offset 1437), and the next event, at offset
/// 1474, has a 27-bit timestamp of 0, whose extension carries the clock past 2^64: the
/// stream's 64-bit clock wraps to 0 (CTF clocks are 64-bit; every reader of the trace,
/// Babeltrace's included, holds it that way), so the event lies at the clock's origin,
/// 585 years before the one before it. That is time going back within a stream, an
/// error naming the file and the event's offset, as for a full timestamp that is
/// lower. The general decoder said so; the fast paths, which handed over to it only a
/// full 64-bit timestamp below the clock, took the wrapped clock and read on, giving
/// events at times earlier than their predecessor's, and `dump`, `count` and `analyze`
/// with them. Now every path hands over a clock that goes back, whatever the
/// timestamp's width. The times in the message are exact: the one before lies past
/// `i64::MAX` ns (the clock's 1.7·10^18 ns offset plus ~1.8·10^19 cycles of 1 ns) and
/// was shown saturated, as 9223372036854775807 ns, a time the trace does not hold.
/// Since a time past the range of 64-bit nanoseconds is itself an error, the stream
/// stops one event earlier, at the extended header (offset 1437), on every path; the
/// wrap is checked where the clock's range holds 2^64 cycles (`time_back`, a 4 GHz
/// clock).
#[test]
fn a_clock_set_past_the_range_then_wrapped_past_2_pow_64_stops_at_the_time_out_of_range() {
    let (compact, large) = kernel_metadata();
    let data = std::fs::read(fuzz_dir().join("regressions/fast_paths/time-back-after-saturated-clock")).unwrap();
    assert_eq!(data[0] & 1, 0, "compact headers");
    ctf::crosscheck::fuzz_input_agrees(&data, &compact, &large).unwrap();
    let n_turns = usize::from((data[0] >> 1) & 31);
    let stream = data[9 + n_turns..].to_vec();
    let dir = Path::new("fuzz");
    let mut set = ctf::trace::TraceSet::in_memory(dir);
    set.add_memory_trace(dir, &compact).unwrap();
    set.set_memory_files(0, vec![(PathBuf::from("channel0_0"), stream)]);
    let r = ctf::crosscheck::read_general(&set.without_compiled_headers(), 0, u64::MAX);
    let before = 1_704_067_200_000_000_000i128 + i128::from(u64::MAX - 16_713_213);
    let want = format!("channel0_0: offset 1437: an event's timestamp at {before} ns from the clock's origin: past the range of 64-bit nanoseconds");
    assert!(r.error.as_deref().is_some_and(|e| e.ends_with(&want)), "{:?}, want … {want}", r.error);
}
