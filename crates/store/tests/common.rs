//! Shared helpers for the integration tests: a brute-force model of the store
//! and a shareable in-memory backend.
#![allow(dead_code)]

use std::io;
use std::sync::Arc;
use store::{Backend, Key, MemoryBackend, Record, Timestamp, Value, ValueKind};

/// A backend handle that survives the store being dropped (to reopen it).
#[derive(Debug, Clone, Default)]
pub struct SharedMem(pub Arc<MemoryBackend>);

impl Backend for SharedMem {
    fn size(&self) -> io::Result<u64> {
        self.0.size()
    }
    fn read_at(&self, pos: u64, buf: &mut [u8]) -> io::Result<usize> {
        self.0.read_at(pos, buf)
    }
    fn write_at(&self, pos: u64, data: &[u8]) -> io::Result<()> {
        self.0.write_at(pos, data)
    }
    fn set_len(&self, len: u64) -> io::Result<()> {
        self.0.set_len(len)
    }
    fn sync(&self) -> io::Result<()> {
        self.0.sync()
    }
}

/// Brute force over a list of records in append order.
pub fn value_at(records: &[Record], key: Key, t: u64) -> Option<Value> {
    let mut kind: Option<ValueKind> = None;
    let mut found = None;
    for r in records.iter().filter(|r| r.key == key) {
        kind = Some(r.value.kind());
        if r.start.0 <= t {
            found = Some(r.value);
        }
    }
    kind.map(|k| found.unwrap_or(Value::zero(k)))
}

/// Brute force for `Reader::records`.
pub fn window(records: &[Record], key: Key, from: u64, to: u64) -> Vec<Record> {
    records.iter().filter(|r| r.key == key && r.start.0 < to && (r.end.0 > from || r.start.0 >= from)).copied().collect()
}

/// Value of kind `kind` built from a small integer.
pub fn make_value(kind: u8, v: i64) -> Value {
    match kind % 3 {
        0 => Value::U64(v as u64),
        1 => Value::I64(v),
        _ => Value::F64(v as f64 * 0.5),
    }
}

/// Deterministic stream used by crash tests: record `i` belongs to key
/// `i % keys`; the j-th record of a key covers `[100 j, 100 j + 100 - 10 (j % 3))`.
pub fn stream_record(i: u64, keys: u64) -> Record {
    let k = i % keys;
    let j = i / keys;
    Record { key: Key(k), value: Value::U64(j * (k + 1) + j * j), start: Timestamp(j * 100), end: Timestamp(j * 100 + 100 - 10 * (j % 3)) }
}

/// Checks that `reader` holds exactly the first `m` records of the stream.
pub fn check_stream_prefix(reader: &store::Reader, m: u64, keys: u64) {
    assert_eq!(reader.record_count(), m);
    for k in 0..keys.min(m) {
        let n = m / keys + u64::from(k < m % keys); // records of key k
        let info = reader.key_info(Key(k)).expect("key present");
        assert_eq!(info.records, n, "key {k}");
        let last = stream_record((n - 1) * keys + k, keys);
        assert_eq!(info.last_value, last.value);
        for j in [0, n / 3, n / 2, n - 1] {
            let r = stream_record(j * keys + k, keys);
            assert_eq!(reader.value_at(Key(k), Timestamp(r.start.0 + 5)).unwrap(), Some(r.value), "key {k} rec {j}");
        }
    }
}
