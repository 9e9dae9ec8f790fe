//! Criterion benchmarks of the history store, in the spirit of Trace Compass's
//! HistoryTreeBackendBenchmark: build rate, point and range queries. The same
//! numbers, plus file size and memory, come faster from the `store_report`
//! example. Fixed seed; workloads as in `examples/store_report.rs`.

#![allow(missing_docs)] // criterion_group! makes an undocumented public function
use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion, Throughput};
use std::time::Duration;
use store::{Config, HistoryStore, Key, Timestamp};

#[path = "shared/workload.rs"]
mod shared_workload;
use shared_workload::workload;

fn scramble(i: u64) -> u64 {
    i.wrapping_mul(0x9E37_79B9_7F4A_7C15).rotate_left(29)
}

fn build(c: &mut Criterion) {
    let mut g = c.benchmark_group("build");
    g.sample_size(10).measurement_time(Duration::from_secs(4));
    // The large case is scaled down from 1000 x 1 M to 1000 x 2000 so that a
    // criterion run stays short on 2 cores; store_report runs 1000 x 20000.
    for (keys, per_key) in [(1500u64, 500u64), (1000, 2000)] {
        g.throughput(Throughput::Elements(keys * per_key));
        g.bench_with_input(BenchmarkId::new("file", format!("{keys}x{per_key}")), &(keys, per_key), |b, &(k, n)| {
            b.iter(|| {
                let dir = tempfile::tempdir().unwrap();
                let mut s = HistoryStore::open(&dir.path().join("b.store"), Config::default()).unwrap();
                workload(k, n, |r| s.append(r).unwrap());
                s.commit().unwrap();
            })
        });
        g.bench_with_input(BenchmarkId::new("memory", format!("{keys}x{per_key}")), &(keys, per_key), |b, &(k, n)| {
            b.iter(|| {
                let mut s = HistoryStore::in_memory(Config::default()).unwrap();
                workload(k, n, |r| s.append(r).unwrap());
                s.commit().unwrap();
            })
        });
    }
    g.finish();
}

fn queries(c: &mut Criterion) {
    let (keys, per_key) = (1500u64, 500u64);
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("q.store");
    let mut s = HistoryStore::open(&path, Config::default()).unwrap();
    let max_t = workload(keys, per_key, |r| s.append(r).unwrap());
    s.commit().unwrap();
    let len = std::fs::metadata(&path).unwrap().len();
    eprintln!("1500x500: file {len} bytes, {:.2} bytes/record", len as f64 / (keys * per_key) as f64);
    let reader = s.reader();
    for i in 0..50_000 {
        reader.value_at(Key(scramble(i) % keys), Timestamp(scramble(i + 1) % max_t)).unwrap();
    }
    let mut g = c.benchmark_group("query");
    g.sample_size(20).measurement_time(Duration::from_secs(3));
    let mut i = 0u64;
    g.bench_function("stabbing_one_key_warm", |b| {
        b.iter(|| {
            i += 1;
            reader.value_at(Key(scramble(i) % keys), Timestamp(scramble(i + 1) % max_t)).unwrap()
        })
    });
    g.bench_function("stabbing_all_keys_warm", |b| {
        b.iter(|| {
            i += 1;
            reader.all_values_at(Timestamp(scramble(i) % max_t)).unwrap()
        })
    });
    for (label, range) in [("1us", 1_000u64), ("1ms", 1_000_000), ("100ms", 100_000_000), ("whole", max_t)] {
        let range = range.min(max_t);
        g.bench_function(BenchmarkId::new("range_one_key", label), |b| {
            b.iter(|| {
                i += 1;
                let t1 = scramble(i + 7) % (max_t - range + 1);
                reader.range(Key(scramble(i) % keys), Timestamp(t1), Timestamp(t1 + range)).unwrap()
            })
        });
    }
    g.finish();
}

criterion_group!(benches, build, queries);
criterion_main!(benches);
