//! The writer's memory follows what is pending, not every key: per-key writer state
//! is dropped once published (the index then answers for it), and a store written
//! without an index holds one key at a time. The checks still hold across flushes.

use store::{Error, HistoryStore, Key, Reader, Timestamp, Value};

fn cfg() -> store::Config {
    store::Config { block_size: 4096, chunk_bytes: 256, cache_blocks: 4, write_buffer_bytes: 1 << 20, granularity: 1 }
}

#[test]
fn order_and_kind_are_checked_after_the_writer_forgot_a_key() {
    let mut st = HistoryStore::in_memory(cfg()).unwrap();
    for k in 0..1000u64 {
        st.append_parts(Key(k), Value::I64(k as i64), Timestamp(10), Timestamp(11)).unwrap();
    }
    st.commit().unwrap();
    let after_flush = st.writer_memory();
    // The writer holds no per-key state once everything is committed (its tail
    // block remains).
    assert!(after_flush < 8 << 10, "writer holds {after_flush} bytes for 1000 published keys");
    // Known only through the index now: its end and kind still bind new records.
    assert!(matches!(st.append_parts(Key(7), Value::I64(1), Timestamp(5), Timestamp(6)), Err(Error::OutOfOrder { .. })));
    assert!(matches!(st.append_parts(Key(7), Value::F64(1.0), Timestamp(20), Timestamp(21)), Err(Error::KindMismatch { .. })));
    st.append_parts(Key(7), Value::I64(70), Timestamp(20), Timestamp(21)).unwrap();
    st.commit().unwrap();
    assert_eq!(st.value_at(Key(7), Timestamp(10)).unwrap(), Some(Value::I64(7)));
    assert_eq!(st.value_at(Key(7), Timestamp(20)).unwrap(), Some(Value::I64(70)));
    assert_eq!(st.value_at(Key(8), Timestamp(30)).unwrap(), Some(Value::I64(8)));
}

#[test]
fn an_unindexed_store_reads_back_as_written_and_refuses_keys_out_of_order() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("h.tcs");
    let mut st = HistoryStore::create_unindexed(&path, cfg()).unwrap();
    let mut expect = Vec::new();
    for k in 0..3000u64 {
        for t in 0..(k % 5 + 1) {
            let v = (k * 100 + t) as i64;
            st.append_parts(Key(k), Value::I64(v), Timestamp(t * 3), Timestamp(t * 3 + 1)).unwrap();
            expect.push((k, t * 3, v));
        }
        if k % 700 == 0 {
            st.commit().unwrap();
        }
    }
    assert!(st.writer_memory() < 64 << 10, "writer holds {} bytes", st.writer_memory());
    assert!(matches!(st.append_parts(Key(5), Value::I64(0), Timestamp(100), Timestamp(101)), Err(Error::KeyOrder { .. })));
    st.commit().unwrap();
    drop(st);
    let r = Reader::open_read_only(&path, 8).unwrap();
    assert_eq!(r.record_count(), expect.len() as u64);
    for &(k, t, v) in &expect {
        assert_eq!(r.value_at(Key(k), Timestamp(t)).unwrap(), Some(Value::I64(v)), "key {k} at {t}");
    }
}
