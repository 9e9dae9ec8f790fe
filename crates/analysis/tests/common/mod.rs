//! Helpers shared by the latency tests: the shared data, through `testkit` (which
//! fails a test in CI when something is missing).

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
/// trace.
pub fn with_expected(what: &str) -> Vec<(&'static str, ctf::trace::TraceSet, serde_json::Value)> {
    let mut out = Vec::new();
    let test = format!("{what} against lttng-analyses");
    for (trace, prefix) in TRACES {
        let Some(tp) = testkit::shared_trace(&test, trace) else { continue };
        let Some(ep) = testkit::shared_path(&test, &format!("expected/lttng-analyses/{prefix}.{what}-mi.json")) else { continue };
        let exp = serde_json::from_str(&std::fs::read_to_string(&ep).unwrap()).unwrap();
        out.push((trace, ctf::trace::TraceSet::open(&tp).unwrap(), exp));
    }
    out
}
