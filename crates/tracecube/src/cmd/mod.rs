//! One module per subcommand.

// clap shows the doc comments of the argument structs as `--help` text, where
// `DIM[:LEVEL]` is syntax, not a link.
#![allow(rustdoc::broken_intra_doc_links)]

pub mod analyze;
#[cfg(feature = "cluster")]
pub mod cluster;
pub mod count;
pub mod cube;
pub mod demo;
pub mod dump;
pub mod export;
pub mod info;
pub mod live;
pub mod progress;
pub mod serve;
#[cfg(feature = "sql")]
pub mod sql;
pub mod synth;

use std::path::Path;

use ::cube::time::{parse_instant, TimeBase, Zone};
use ctf::stream::{Item, StreamCursor};
use ctf::trace::TraceSet;

/// Opens the traces below `path` (see [`TraceSet::open`]), printing to stderr what was
/// found but left out, and why.
pub fn open_traces(path: &Path) -> anyhow::Result<TraceSet> {
    let set = TraceSet::open(path)?;
    for w in &set.warnings {
        eprintln!("tracecube: warning: {w}");
    }
    Ok(set)
}

/// Prints each stream error to stderr, then fails when there was one (the command
/// then exits non-zero, after printing everything it could read: every intact stream
/// whole, a damaged one up to its damage).
/// (One error is the command's error: one line.)
pub fn fail_on_stream_errors<E: std::fmt::Display>(errors: &[E]) -> anyhow::Result<()> {
    match errors {
        [] => Ok(()),
        [e] => anyhow::bail!("{e}"),
        _ => {
            for e in errors {
                eprintln!("tracecube: error: {e}");
            }
            anyhow::bail!("{} streams could not be read to their end (the output holds what could be read)", errors.len())
        }
    }
}

/// The time of the set's first event (the origin of `+OFFSET`s everywhere): the
/// earliest first event of the streams, each read from its first packets (`None`: no
/// event has a time). A stream that cannot be read is skipped here; the command
/// reports it when it reads the stream.
pub fn first_event_ns(set: &TraceSet) -> Option<i64> {
    (0..set.streams.len())
        .filter_map(|i| {
            let mut c = StreamCursor::new(set, i);
            loop {
                match c.next() {
                    Ok(Some(Item::Event(e))) => break e.ts(),
                    Ok(Some(_)) => {}
                    Ok(None) | Err(_) => break None,
                }
            }
        })
        .min()
}

/// What `--begin`/`--end` are read against: the first event and the time zone of
/// civil times (local unless `gmt`).
pub fn time_base(set: &TraceSet, gmt: bool) -> TimeBase {
    TimeBase { origin_ns: first_event_ns(set).unwrap_or(0), zone: if gmt { Zone::Utc } else { Zone::Local } }
}

/// `--begin` and `--end` read by the one time syntax ([`cube::time::TIME_SYNTAX`]),
/// checked to be in order.
pub fn time_range(begin: Option<&str>, end: Option<&str>, base: TimeBase) -> anyhow::Result<(Option<i64>, Option<i64>)> {
    let read = |flag: &str, t: Option<&str>| t.map(|t| parse_instant(t, base).map_err(|e| anyhow::anyhow!("--{flag}: {e}"))).transpose();
    let (b, e) = (read("begin", begin)?, read("end", end)?);
    if let (Some(b), Some(e)) = (b, e) {
        anyhow::ensure!(b <= e, "--begin ({b}) is after --end ({e})");
    }
    Ok((b, e))
}
