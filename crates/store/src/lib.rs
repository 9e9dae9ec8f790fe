//! The tracecube history store: an append-only, disk-backed interval store of
//! cumulative values.
//!
//! The cube keeps every metric's history here. The store knows nothing of
//! traces: it holds records `(key, value, [start, end))` where the key is an
//! opaque metric id, the value a cumulative number ([`Value`]: `i64`, `u64` or
//! `f64`, room left for more kinds) and times are nanoseconds ([`Timestamp`]).
//!
//! * Per key, records arrive in time order (`start >=` previous `end`).
//! * The value of a key at `t` is that of its last record with `start <= t`;
//!   **before the first record it is zero**, after the last it is the last value.
//! * A range `[t1, t2]` is `value(t2) - value(t1)`: two stabbing queries, at a
//!   cost independent of the range's length ([`Reader::range`]).
//! * [`HistoryStore::update`] feeds a key change by change, dropping repeats and
//!   keeping one record per k changes (granularity degree, [`Config::granularity`]).
//! * [`HistoryStore::flush`] makes records visible to [`Reader`]s (on any
//!   thread), [`HistoryStore::commit`] makes them durable; after a crash the
//!   file reopens at the last commit. Damage is reported as [`Corruption`].
//!
//! Records are grouped per key into delta-encoded *chunks*; chunks of all keys
//! are packed into fixed-size blocks read through a bounded block cache; a
//! per-key list of chunks in memory finds the one chunk a point query reads.
//! The file format, its invariants and the commit protocol with its crash
//! analysis are in [`design`] (the crate's `DESIGN.md`).
//!
//! ```
//! use store::{Config, HistoryStore, Key, Record, Timestamp, Value};
//!
//! let mut s = HistoryStore::in_memory(Config::default())?;
//! let cpu = Key(7);
//! s.append(Record { key: cpu, value: Value::U64(10), start: Timestamp(100), end: Timestamp(200) })?;
//! s.append(Record { key: cpu, value: Value::U64(25), start: Timestamp(200), end: Timestamp(300) })?;
//! s.commit()?;
//! assert_eq!(s.value_at(cpu, Timestamp(50))?, Some(Value::U64(0)));   // before: zero
//! assert_eq!(s.value_at(cpu, Timestamp(250))?, Some(Value::U64(25)));
//! assert_eq!(s.range(cpu, Timestamp(150), Timestamp(1000))?, Some(Value::U64(15)));
//! assert_eq!(s.verify()?.records, 2);
//! # Ok::<(), store::Error>(())
//! ```
#![forbid(unsafe_code)]
#![warn(missing_docs)]

/// The file format, invariants, commit protocol and crash analysis
/// (`crates/store/DESIGN.md`, included here).
pub mod design {
    #![doc = include_str!("../DESIGN.md")]
}

mod backend;
mod cache;
mod chunk;
mod codec;
mod directory;
mod error;
mod format;
mod index;
mod reader;
mod sampler;
mod shared;
mod types;
mod verify;
mod writer;

pub use backend::{Backend, FileBackend, MemoryBackend};
pub use cache::CacheStats;
pub use codec::DecodeError;
pub use error::{Corruption, Error, Result};
pub use format::{FORMAT_VERSION, HEADER_SIZE};
pub use reader::{Reader, RecordIter, StoreStats};
pub use shared::Config;
pub use types::{BlockId, Key, KeyInfo, LogOffset, Record, Timestamp, Value, ValueKind};
pub use verify::VerifyReport;
pub use writer::HistoryStore;
