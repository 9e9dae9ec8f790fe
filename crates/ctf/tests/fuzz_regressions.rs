//! Inputs the fuzzers (`fuzz/`) once crashed on, replayed on every `cargo test`.
//! `packet_decode` inputs are one stream file decoded with `fuzz/data/metadata`;
//! `trace_pair` inputs are metadata, `\n%%STREAM%%\n`, then the stream bytes.

use std::path::Path;

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
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../fuzz");
    let metadata = std::fs::read(root.join("data/metadata")).unwrap();
    let mut n = 0;
    for target in ["packet_decode", "trace_pair"] {
        let Ok(dir) = std::fs::read_dir(root.join("regressions").join(target)) else { continue };
        for e in dir {
            let bytes = std::fs::read(e.unwrap().path()).unwrap();
            if target == "packet_decode" {
                replay(&metadata, &bytes);
            } else {
                let sep = b"\n%%STREAM%%\n";
                let at = bytes.windows(sep.len()).position(|w| w == sep).unwrap_or(bytes.len());
                let stream = bytes.get(at + sep.len()..).unwrap_or_default();
                replay(&bytes[..at], stream);
            }
            n += 1;
        }
    }
    assert!(n >= 2, "regression inputs found: {n}");
}
