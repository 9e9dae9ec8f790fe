//! Prints the history store's headline numbers as a table: build rate, bytes
//! per record, point and range query latency, memory. Quicker than the
//! criterion suite (`cargo bench -p store`); same workloads, fixed seed.
//!
//! `cargo run --release -p store --example store_report [-- RECORDS_PER_KEY_LARGE]`

use std::time::{Duration, Instant};
use store::{Config, HistoryStore, Key, Timestamp};

#[path = "../benches/shared/workload.rs"]
mod shared_workload;
use shared_workload::{workload, SEED};

fn peak_rss_kib() -> u64 {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| s.lines().find(|l| l.starts_with("VmHWM:")).map(|l| l.split_whitespace().nth(1).unwrap_or("0").parse().unwrap_or(0)))
        .unwrap_or(0)
}

/// Median over `reps` runs of the mean time per call of `n` calls of `f(i)`.
fn per_call(reps: usize, n: u64, mut f: impl FnMut(u64)) -> Duration {
    let mut v: Vec<Duration> = (0..reps)
        .map(|_| {
            let t = Instant::now();
            for i in 0..n {
                f(i);
            }
            t.elapsed() / n as u32
        })
        .collect();
    v.sort();
    v[reps / 2]
}

fn scramble(i: u64) -> u64 {
    i.wrapping_mul(0x9E37_79B9_7F4A_7C15).rotate_left(29)
}

fn scenario(name: &str, keys: u64, per_key: u64) {
    let dir = tempfile::tempdir().expect("tempdir");
    let path = dir.path().join("bench.store");
    let mut store = HistoryStore::open(&path, Config::default()).expect("open");
    let bounded = store.reader(); // default cache: 256 blocks = 16 MiB
    let t0 = Instant::now();
    let mut max_t = 0;
    max_t = max_t.max(workload(keys, per_key, |r| store.append(r).expect("append")));
    let appended = t0.elapsed();
    let writer_mem = store.writer_memory();
    store.commit().expect("commit");
    let built = t0.elapsed();
    let n = keys * per_key;
    let file_len = std::fs::metadata(&path).expect("stat").len();
    drop(store);
    // Warm: a reader whose cache can hold the whole file.
    let cache_blocks = (file_len / 65536 + 16) as usize;
    let warm_store = HistoryStore::open(&path, Config { cache_blocks, ..Config::default() }).expect("reopen");
    let reader = warm_store.reader();
    let q = |i: u64| (Key(scramble(i) % keys), Timestamp(scramble(i + 1) % max_t));
    // Warm the cache with one pass, then measure.
    for i in 0..20_000 {
        let (k, t) = q(i);
        reader.value_at(k, t).expect("query");
    }
    let one = per_call(5, 20_000, |i| {
        let (k, t) = q(i);
        std::hint::black_box(reader.value_at(k, t).expect("query"));
    });
    let cold = per_call(5, 2_000, |i| {
        let (k, t) = q(i + 1_000_000);
        std::hint::black_box(bounded.value_at(k, t).expect("query"));
    });
    let all = per_call(3, 3, |i| {
        std::hint::black_box(reader.all_values_at(Timestamp(scramble(i) % max_t)).expect("query"));
    });
    let stats = reader.stats();
    println!("\n## {name}: {keys} keys x {per_key} records = {n} records (history {:.3} s)", max_t as f64 / 1e9);
    println!("| metric | value |\n|---|---|");
    println!("| build rate (append only, 1 core) | {:.1} M records/s |", n as f64 / appended.as_secs_f64() / 1e6);
    println!("| build rate (append + commit/fsync) | {:.1} M records/s |", n as f64 / built.as_secs_f64() / 1e6);
    println!("| file size | {:.1} MiB, {:.2} bytes/record |", file_len as f64 / 1048576.0, file_len as f64 / n as f64);
    println!("| stabbing query, one key, warm | {:.2} µs |", one.as_nanos() as f64 / 1e3);
    println!("| stabbing query, one key, 16 MiB cache, random | {:.2} µs |", cold.as_nanos() as f64 / 1e3);
    println!("| stabbing query, all {keys} keys, warm | {:.2} ms |", all.as_nanos() as f64 / 1e6);
    for (label, len) in [("1 µs", 1_000u64), ("1 ms", 1_000_000), ("1 s", 1_000_000_000), ("whole history", max_t)] {
        let len = len.min(max_t);
        let d = per_call(5, 20_000, |i| {
            let k = Key(scramble(i) % keys);
            let t1 = scramble(i + 7) % (max_t - len + 1);
            std::hint::black_box(reader.range(k, Timestamp(t1), Timestamp(t1 + len)).expect("range"));
        });
        println!("| range query, one key, {label} | {:.2} µs |", d.as_nanos() as f64 / 1e3);
    }
    println!("| writer memory before commit | {:.1} MiB |", writer_mem as f64 / 1048576.0);
    println!("| index memory | {:.1} MiB ({} chunks) |", stats.index_bytes as f64 / 1048576.0, stats.chunks);
    println!("| block cache (warm reader) | {:.1} MiB |", stats.cache_bytes as f64 / 1048576.0);
    println!("| peak RSS of the process so far | {:.1} MiB |", peak_rss_kib() as f64 / 1024.0);
    let v = Instant::now();
    let report = reader.verify().expect("verify");
    println!("| verify() | {:.2} s, {} records |", v.elapsed().as_secs_f64(), report.records);
}

fn main() {
    let large: u64 = std::env::args().nth(1).and_then(|a| a.parse().ok()).unwrap_or(20_000);
    println!("# store_report (block 64 KiB, chunk 512 B, cache 256 blocks, seed {SEED:#x})");
    scenario("small (Trace Compass benchmark size)", 1500, 500);
    scenario("large (scaled down)", 1000, large);
}
