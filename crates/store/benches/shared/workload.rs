//! The deterministic workload shared by the `store` benchmark and the
//! `store_report` example (both include this file with `#[path]`).

use store::{Key, Record, Timestamp, Value};

/// Fixed seed of every run.
pub const SEED: u64 = 0x7ace_c0be;

/// Deterministic cumulative-counter workload: `keys` counters, each with
/// `per_key` contiguous intervals of 1 µs..4 ms, increments of 1..100,
/// arriving interleaved (as a trace produces them). Returns the last end time.
pub fn workload(keys: u64, per_key: u64, mut f: impl FnMut(Record)) -> u64 {
    let mut rng = SEED;
    let mut ends = vec![0u64; keys as usize];
    let mut vals = vec![0u64; keys as usize];
    for _ in 0..per_key {
        for k in 0..keys as usize {
            rng = rng.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
            let r = rng >> 33;
            let start = ends[k];
            let end = start + 1_000 + r % 3_999_000;
            vals[k] += 1 + (r >> 16) % 100;
            f(Record { key: Key(k as u64), value: Value::U64(vals[k]), start: Timestamp(start), end: Timestamp(end) });
            ends[k] = end;
        }
    }
    ends.into_iter().max().unwrap_or(0)
}
