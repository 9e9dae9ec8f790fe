//! Fixtures shared by the integration tests.

use cube::{CubeConfig, LevelSpec};

/// 1 ms.
pub const MS: u64 = 1_000_000;

/// Millisecond levels long enough that no test trace expires its finest frames.
pub fn config() -> CubeConfig {
    CubeConfig {
        levels: vec![LevelSpec { granularity_ns: MS, span_ns: 1_000_000 * MS }, LevelSpec { granularity_ns: 10 * MS, span_ns: 10_000_000 * MS }],
        ..CubeConfig::default()
    }
}

/// The real kernel traces of `../shared` for test `test`, or `None` after
/// `testkit::skip` (a failure in CI) when `../shared` is absent; a missing trace is
/// skipped the same way.
pub fn shared_kernel_traces(test: &str) -> Option<Vec<std::path::PathBuf>> {
    testkit::shared(test)?;
    let names = ["many-threads", "scimark2-all-events-cpu3", "bug446190-arm", "synctraces-scp-src", "lttng-modules-2.0.0-ref", "flipping-endianness"];
    Some(names.iter().filter_map(|n| testkit::shared_trace(test, n)).collect())
}
