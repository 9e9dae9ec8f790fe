//! Helpers shared by the latency tests: the shared data and its presence.

use std::path::{Path, PathBuf};

/// `/work/shared`, as seen from this crate.
pub fn shared() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../../shared")
}

/// Whether `p` exists; panics when it does not and shared data is required (env CI or
/// TRACECUBE_REQUIRE_SHARED).
pub fn present(p: &Path) -> bool {
    if p.exists() {
        return true;
    }
    assert!(std::env::var_os("CI").is_none() && std::env::var_os("TRACECUBE_REQUIRE_SHARED").is_none(), "missing shared file {}", p.display());
    eprintln!("skipped: {} is missing", p.display());
    false
}

/// The shared kernel traces with lttng-analyses output: `(trace dir under traces/,
/// prefix of the expected files)`.
pub const TRACES: [(&str, &str); 5] = [
    ("lttng-recorded/kemu-small", "kemu-small"),
    ("bug446190-arm", "bug446190-arm"),
    ("flipping-endianness", "flipping-endianness"),
    ("many-threads", "many-threads"),
    ("scimark2-all-events-cpu3", "scimark2-all-events-cpu3"),
];

/// The trace set and lttng-analyses' MI output `{prefix}.{what}-mi.json` of each shared
/// trace present.
pub fn with_expected(what: &str) -> Vec<(&'static str, ctf::trace::TraceSet, serde_json::Value)> {
    let mut out = Vec::new();
    for (trace, prefix) in TRACES {
        let (tp, ep) = (shared().join("traces").join(trace), shared().join("expected/lttng-analyses").join(format!("{prefix}.{what}-mi.json")));
        if !present(&tp) || !present(&ep) {
            continue;
        }
        let exp = serde_json::from_str(&std::fs::read_to_string(&ep).unwrap()).unwrap();
        out.push((trace, ctf::trace::TraceSet::open(&tp).unwrap(), exp));
    }
    out
}
