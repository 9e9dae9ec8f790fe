//! Time that goes back inside a packet: an event whose clock value is earlier than the
//! event before it (by a full-width timestamp, LTTng's extended header, or a short one
//! that wraps the 64-bit clock past 2^64), beyond [`ctf::stream::OVERLAP_NS`] compared
//! exactly, is an error naming the file and the event's offset, on every reading path;
//! within the overlap it is read as written.

use ctf::crosscheck::{fast_paths_agree, read_fast, read_general, Seen};
use ctf::trace::TraceSet;
use ctf_writer::small::{SmallTrace, TimedEvent};
use ctf_writer::{EventHeaderKind, IntType, MetadataFormat, StructType, Value};

/// The time of the event whose timestamp is later moved back.
const JUMP: u64 = 5_000_000_000;

/// The time of the 60th event, the last before the jump.
const BEFORE: u64 = 100_060_000;

/// A trace of one stream: 60 events 1 µs apart (the last at [`BEFORE`]), one at
/// [`JUMP`] (written with the extended header: a step over 2^32 cycles), 39 more; the
/// jump's 64-bit timestamp is then overwritten with `BEFORE - back`. Returns the byte
/// offset of that timestamp in the stream file.
fn trace(dir: &std::path::Path, header: EventHeaderKind, back: u64) -> usize {
    trace_with_jumps(dir, header, &[BEFORE - back])[0]
}

/// As [`trace`], with `to.len()` jumps, from the 61st event on: the `k`-th jump's event
/// is written at `JUMP + k·2^33` (an extended header), then its timestamp overwritten
/// with `to[k]`. Returns the byte offsets of those timestamps.
fn trace_with_jumps(dir: &std::path::Path, header: EventHeaderKind, to: &[u64]) -> Vec<usize> {
    let trace =
        SmallTrace::new([("tick", StructType::new().int("_n", IntType::unsigned(32)))]).header(header).metadata(MetadataFormat::PlainText).packet_size(8192);
    let jump = |k: usize| JUMP + ((k as u64) << 33);
    let mut t = 100_000_000;
    let events: Vec<_> = (0..100usize)
        .map(|i| {
            t = if (60..60 + to.len()).contains(&i) { jump(i - 60) } else { t + 1_000 };
            TimedEvent::new(t, 0, "tick", vec![Value::U(i as u64)])
        })
        .collect();
    trace.write(dir, &events).unwrap();
    let path = dir.join("channel0_0");
    let mut bytes = std::fs::read(&path).unwrap();
    let offsets = to
        .iter()
        .enumerate()
        .map(|(k, moved)| {
            let written = jump(k).to_le_bytes();
            let at = bytes.windows(8).position(|b| b == written).expect("the extended header's timestamp");
            assert_eq!(bytes.windows(8).filter(|b| *b == written).count(), 1);
            bytes[at..at + 8].copy_from_slice(&moved.to_le_bytes());
            at
        })
        .collect();
    std::fs::write(&path, bytes).unwrap();
    offsets
}

/// The byte offset an error message names.
fn offset_of(e: &str) -> usize {
    e.split("offset ").nth(1).and_then(|s| s.split(':').next()).and_then(|s| s.parse().ok()).expect("an offset")
}

fn events(r: &ctf::crosscheck::Reading) -> Vec<i64> {
    r.items.iter().filter_map(|i| if let Seen::Event(_, _, ts, _) = i { *ts } else { None }).collect()
}

#[test]
fn a_full_timestamp_going_back_beyond_the_overlap_is_an_error_on_every_path() {
    for header in [EventHeaderKind::Compact, EventHeaderKind::Large] {
        let dir = tempfile::tempdir().unwrap();
        // 5 ms back: beyond the 1.25 ms old tracers' packets overlap by.
        let at = trace(dir.path(), header, 5_000_000);
        let fast = TraceSet::open(dir.path()).unwrap();
        let slow = TraceSet::open(dir.path()).unwrap().without_compiled_headers();
        let r = read_general(&slow, 0, u64::MAX);
        // The 60 events before it, then the error, naming the file and the event's offset.
        assert_eq!(events(&r), (1..=60).map(|i| 100_000_000 + i * 1_000).collect::<Vec<i64>>(), "{header:?}");
        let e = r.error.expect("time goes back");
        assert!(e.contains("channel0_0") && e.contains("an event's timestamp"), "{e}");
        let offset = offset_of(&e);
        assert!(offset < at && at - offset <= 8, "{header:?}: error at {offset}, the timestamp at {at}");
        // The fast paths: same events, same error.
        assert_eq!(read_fast(&fast, 0, u64::MAX, &[0], true).unwrap().error.as_deref(), Some(e.as_str()));
        fast_paths_agree(&fast, &slow, u64::MAX, &[0, 2, 1, 3]).unwrap();
        fast_paths_agree(&fast, &slow, 0, &[0, 2]).unwrap();
        // The time-merge ends the stream there too.
        let mut m = ctf::merge::Merger::new(&fast);
        let mut errors = Vec::new();
        let mut n = 0;
        while m.next_collecting(&mut errors).is_some() {
            n += 1;
        }
        assert_eq!((n, errors.len()), (60, 1));
    }
}

#[test]
fn a_full_timestamp_going_back_within_the_overlap_is_read_as_written() {
    for header in [EventHeaderKind::Compact, EventHeaderKind::Large] {
        let dir = tempfile::tempdir().unwrap();
        trace(dir.path(), header, 1_000_000);
        let fast = TraceSet::open(dir.path()).unwrap();
        let slow = TraceSet::open(dir.path()).unwrap().without_compiled_headers();
        let r = read_general(&slow, 0, u64::MAX);
        assert_eq!(r.error, None);
        let ts = events(&r);
        assert_eq!(ts.len(), 100);
        assert_eq!(ts[59..61], [BEFORE as i64, BEFORE as i64 - 1_000_000]);
        fast_paths_agree(&fast, &slow, u64::MAX, &[0, 2, 1, 3]).unwrap();
    }
}

/// The clock is a 64-bit value. An event with a short (N-bit) timestamp after one
/// whose full timestamp is near 2^64 cycles carries it past 2^64, where it wraps to the
/// N low bits of the short timestamp: time going back by some 585 years, the same error
/// as a full timestamp that is lower, on every path. (The fast paths used to hand over
/// only full timestamps below the clock: they took the wrapped clock and read on,
/// events earlier than the one before them; fuzz finding O3.)
#[test]
fn a_short_timestamp_that_wraps_the_clock_past_2_pow_64_is_time_going_back() {
    for (header, bits) in [(EventHeaderKind::Compact, 27), (EventHeaderKind::Large, 32)] {
        let dir = tempfile::tempdir().unwrap();
        let near_end = u64::MAX - 1_000;
        let at = trace_with_jumps(dir.path(), header, &[near_end])[0];
        let fast = TraceSet::open(dir.path()).unwrap();
        let slow = TraceSet::open(dir.path()).unwrap().without_compiled_headers();
        let r = read_general(&slow, 0, u64::MAX);
        // The 60 events, the one near 2^64, then the error at the next event.
        assert_eq!(events(&r).len(), 61, "{header:?}");
        let e = r.error.expect("time goes back");
        // The next event, 1 µs later, wrote the low bits of JUMP + 1000: the clock's high
        // bits, all ones, carry into nothing.
        let wrapped = (JUMP + 1_000) & ((1 << bits) - 1);
        assert!(e.ends_with(&format!("time goes back: an event's timestamp at {wrapped} ns, after {near_end} ns")), "{header:?}: {e}");
        assert!(offset_of(&e) > at && offset_of(&e) <= at + 16, "{header:?}: {e}, the timestamp at {at}");
        fast_paths_agree(&fast, &slow, u64::MAX, &[0, 2, 1, 3]).unwrap();
        fast_paths_agree(&fast, &slow, 0, &[0, 0, 2]).unwrap();
    }
}

/// Times past `i64::MAX` ns are compared exactly: an event 5 ms before the one before
/// it, both about 1.4·10^19 ns from the origin, is time going back, although both
/// timestamps saturate to the same `i64` (which would hide it, and name a time the
/// trace does not hold in the message).
#[test]
fn time_going_back_past_the_i64_range_is_seen_and_reported_exactly() {
    for header in [EventHeaderKind::Compact, EventHeaderKind::Large] {
        let dir = tempfile::tempdir().unwrap();
        let high = 3 << 62;
        let at = trace_with_jumps(dir.path(), header, &[high, high - 5_000_000]);
        let fast = TraceSet::open(dir.path()).unwrap();
        let slow = TraceSet::open(dir.path()).unwrap().without_compiled_headers();
        let r = read_general(&slow, 0, u64::MAX);
        assert_eq!(events(&r).len(), 61, "{header:?}");
        assert_eq!(events(&r)[60], i64::MAX, "the event's own timestamp saturates");
        let e = r.error.expect("time goes back");
        assert!(e.ends_with(&format!("time goes back: an event's timestamp at {} ns, after {high} ns", high - 5_000_000)), "{header:?}: {e}");
        assert!(offset_of(&e) < at[1] && at[1] - offset_of(&e) <= 8, "{header:?}: {e}, the timestamp at {}", at[1]);
        fast_paths_agree(&fast, &slow, u64::MAX, &[0, 2, 1, 3]).unwrap();
    }
}
