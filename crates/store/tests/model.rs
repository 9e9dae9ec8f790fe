//! Property tests: for random record streams, interleaved with flushes,
//! commits and reopenings, every query answer equals a brute-force scan.

use crate::common;

use common::{make_value, value_at, window, SharedMem};
use proptest::prelude::*;
use store::{Config, HistoryStore, Key, Record, Timestamp};

#[derive(Debug, Clone)]
enum Op {
    Append { key: u8, gap: u64, dur: u64, delta: i64 },
    Flush,
    Commit,
    Reopen,
}

fn op() -> impl Strategy<Value = Op> {
    prop_oneof![
        40 => (0u8..8, prop_oneof![Just(0u64), 0u64..40], 0u64..60, -3i64..50)
            .prop_map(|(key, gap, dur, delta)| Op::Append { key, gap, dur, delta }),
        2 => Just(Op::Flush),
        2 => Just(Op::Commit),
        1 => Just(Op::Reopen),
    ]
}

fn config() -> impl Strategy<Value = Config> {
    (8usize..200, 1usize..6, prop_oneof![Just(64usize), Just(4096), Just(1 << 20)]).prop_map(|(chunk, cache, buf)| Config {
        block_size: 4096,
        chunk_bytes: chunk,
        cache_blocks: cache,
        write_buffer_bytes: buf,
        granularity: 1,
    })
}

fn check(store: &HistoryStore, model: &[Record], probes: &[u64], max_t: u64) -> Result<(), TestCaseError> {
    for key in (0..9).map(Key) {
        for &p in probes {
            let t = p % (max_t + 20);
            prop_assert_eq!(store.value_at(key, Timestamp(t)).unwrap(), value_at(model, key, t), "value {:?} at {}", key, t);
            let t2 = t + p % 97;
            let expect = match (value_at(model, key, t), value_at(model, key, t2)) {
                (Some(a), Some(b)) => b.minus(a),
                _ => None,
            };
            prop_assert_eq!(store.range(key, Timestamp(t), Timestamp(t2)).unwrap(), expect);
            let got: Vec<Record> = store.records(key, Timestamp(t), Timestamp(t2)).collect::<Result<_, _>>().unwrap();
            prop_assert_eq!(got, window(model, key, t, t2));
        }
        let recs: Vec<&Record> = model.iter().filter(|r| r.key == key).collect();
        let info = store.key_info(key);
        prop_assert_eq!(info.map(|i| i.records), (!recs.is_empty()).then_some(recs.len() as u64));
        if let (Some(i), Some(first), Some(last)) = (info, recs.first(), recs.last()) {
            prop_assert_eq!((i.first_start, i.last_end, i.last_value), (first.start, last.end, last.value));
        }
    }
    let t = probes.first().copied().unwrap_or(0) % (max_t + 20);
    let all = store.all_values_at(Timestamp(t)).unwrap();
    let expect: Vec<_> = (0..9).map(Key).filter_map(|k| value_at(model, k, t).map(|v| (k, v))).collect();
    prop_assert_eq!(all, expect);
    prop_assert_eq!(store.verify().unwrap().records, model.len() as u64);
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 96, ..ProptestConfig::default() })]

    #[test]
    fn answers_equal_brute_force(config in config(), ops in prop::collection::vec(op(), 1..600), probes in prop::collection::vec(0u64..100_000, 1..12)) {
        let mem = SharedMem::default();
        let mut store = HistoryStore::with_backend(Box::new(mem.clone()), config.clone()).unwrap();
        let mut appended: Vec<Record> = Vec::new();
        let (mut visible, mut committed) = (0usize, 0usize);
        let mut ends = [0u64; 8];
        let mut vals = [0i64; 8];
        for op in ops {
            match op {
                Op::Append { key, gap, dur, delta } => {
                    let k = usize::from(key);
                    let start = ends[k] + gap;
                    vals[k] += delta;
                    let r = Record { key: Key(u64::from(key)), value: make_value(key, vals[k]), start: Timestamp(start), end: Timestamp(start + dur) };
                    store.append(r).unwrap();
                    ends[k] = start + dur;
                    appended.push(r);
                }
                Op::Flush => { store.flush().unwrap(); visible = appended.len(); }
                Op::Commit => { store.commit().unwrap(); visible = appended.len(); committed = visible; }
                Op::Reopen => {
                    drop(store);
                    store = HistoryStore::with_backend(Box::new(mem.clone()), config.clone()).unwrap();
                    appended.truncate(committed);
                    visible = committed;
                    // Keys continue after their last committed record.
                    for k in 0..8 {
                        let last = appended.iter().rev().find(|r| r.key.0 == k as u64);
                        ends[k] = last.map_or(0, |r| r.end.0);
                        vals[k] = last.map_or(0, |r| match r.value { store::Value::U64(v) => v as i64, store::Value::I64(v) => v, store::Value::F64(v) => (v * 2.0) as i64, _ => 0 });
                    }
                }
            }
            let _ = visible;
        }
        let max_t = ends.iter().copied().max().unwrap_or(0);
        check(&store, &appended[..visible], &probes, max_t)?;
        store.commit().unwrap();
        drop(store);
        let store = HistoryStore::with_backend(Box::new(mem.clone()), config).unwrap();
        check(&store, &appended, &probes, max_t)?;
    }

    #[test]
    fn update_with_k1_is_exact_and_skips_repeats(changes in prop::collection::vec((0u8..4, 0u64..30, 0u64..4), 1..300), probes in prop::collection::vec(0u64..10_000, 1..20)) {
        let mut store = HistoryStore::in_memory(Config::default()).unwrap();
        let mut t = 0;
        let mut truth: Vec<(u8, u64, u64)> = Vec::new(); // (key, time, value)
        for (key, dt, v) in changes {
            t += dt;
            store.update(Key(u64::from(key)), Timestamp(t), store::Value::U64(v)).unwrap();
            truth.push((key, t, v));
        }
        store.close_intervals(Timestamp(t + 1)).unwrap();
        store.commit().unwrap();
        for key in 0..4u8 {
            let points: Vec<_> = truth.iter().filter(|c| c.0 == key).collect();
            let distinct_changes = points.windows(2).filter(|w| w[0].2 != w[1].2).count() as u64;
            if let Some(info) = store.key_info(Key(u64::from(key))) {
                prop_assert!(info.records <= distinct_changes + 1, "no record without a change");
            }
            for &p in &probes {
                let p = p % (t + 5);
                let expect = points.iter().rev().find(|c| c.1 <= p).map(|c| c.2).or(points.first().map(|_| 0));
                let got = store.value_at(Key(u64::from(key)), Timestamp(p)).unwrap().map(|v| match v { store::Value::U64(x) => x, _ => u64::MAX });
                prop_assert_eq!(got, expect, "key {} at {}", key, p);
            }
        }
    }
}

#[test]
fn granularity_k_keeps_one_record_per_k_changes() {
    let config = Config { granularity: 4, ..Config::default() };
    let mut store = HistoryStore::in_memory(config).unwrap();
    for i in 1..=400u64 {
        store.update(Key(1), Timestamp(i * 10), store::Value::U64(i)).unwrap();
    }
    store.close_intervals(Timestamp(5000)).unwrap();
    store.commit().unwrap();
    let info = store.key_info(Key(1)).unwrap();
    assert!(info.records <= 400 / 4 + 2, "{}", info.records);
    assert_eq!(info.last_value, store::Value::U64(400), "the final value is exact");
    // At every stored step the value is the true value at that time.
    for r in store.records(Key(1), Timestamp(0), Timestamp(u64::MAX)) {
        let r = r.unwrap();
        assert_eq!(r.value, store::Value::U64(r.start.0 / 10));
    }
}

#[test]
fn bad_appends_are_rejected_with_typed_errors() {
    let mut store = HistoryStore::in_memory(Config::default()).unwrap();
    let rec = |s, e, v| Record { key: Key(3), value: v, start: Timestamp(s), end: Timestamp(e) };
    store.append(rec(10, 20, store::Value::U64(1))).unwrap();
    assert!(matches!(store.append(rec(15, 30, store::Value::U64(2))), Err(store::Error::OutOfOrder { .. })));
    assert!(matches!(store.append(rec(40, 30, store::Value::U64(2))), Err(store::Error::OutOfOrder { .. })));
    assert!(matches!(store.append(rec(20, 30, store::Value::I64(2))), Err(store::Error::KindMismatch { .. })));
    store.append(rec(20, 30, store::Value::U64(2))).unwrap();
    assert!(HistoryStore::in_memory(Config { block_size: 1000, ..Config::default() }).is_err());
}

#[test]
fn file_store_round_trip_and_concurrent_readers() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("h.store");
    let mut store = HistoryStore::open(&path, Config { block_size: 4096, chunk_bytes: 64, ..Config::default() }).unwrap();
    let reader = store.reader();
    let stop = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
    let s2 = stop.clone();
    let handle = std::thread::spawn(move || {
        let mut checks = 0u64;
        // At least one check, however fast the writer is.
        loop {
            let done = s2.load(std::sync::atomic::Ordering::Relaxed);
            let n = reader.record_count();
            // Whatever is visible is a prefix of the stream: check its last record.
            if n > 0 {
                let info = reader.key_info(Key(0)).unwrap();
                let j = info.records - 1;
                let r = common::stream_record(j * 5, 5);
                assert_eq!(reader.value_at(Key(0), Timestamp(r.start.0)).unwrap(), Some(r.value));
                reader.verify().unwrap();
            }
            checks += 1;
            if done {
                break;
            }
        }
        checks
    });
    for i in 0..20_000u64 {
        store.append(common::stream_record(i, 5)).unwrap();
        if i % 1000 == 999 {
            store.flush().unwrap();
        }
    }
    store.commit().unwrap();
    stop.store(true, std::sync::atomic::Ordering::Relaxed);
    assert!(handle.join().unwrap() > 0);
    drop(store);
    let store = HistoryStore::open(&path, Config::default()).unwrap();
    assert_eq!(store.config().block_size, 64 << 10, "config only; the file keeps 4096");
    common::check_stream_prefix(&store, 20_000, 5);
    store.verify().unwrap();
    drop(store);
    let ro = store::Reader::open_read_only(&path, 8).unwrap();
    common::check_stream_prefix(&ro, 20_000, 5);
}
