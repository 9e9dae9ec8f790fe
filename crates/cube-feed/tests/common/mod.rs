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

/// The real kernel traces of `../shared` (absent outside the project's checkout).
#[allow(dead_code)]
pub fn shared_kernel_traces() -> Vec<std::path::PathBuf> {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../../shared/traces");
    ["many-threads", "scimark2-all-events-cpu3", "bug446190-arm", "synctraces-scp-src", "lttng-modules-2.0.0-ref", "flipping-endianness"]
        .iter()
        .map(|n| root.join(n))
        .filter(|p| p.exists())
        .collect()
}
