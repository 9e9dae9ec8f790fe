//! Time that goes back inside a packet: an event whose clock value is earlier than the
//! event before it (by a full-width timestamp, LTTng's extended header, or a short one
//! that wraps the 64-bit clock past 2^64), beyond [`ctf::stream::OVERLAP_NS`] compared
//! exactly, is an error naming the file and the event's offset, on every reading path;
//! within the overlap it is read as written. A time past the range of 64-bit
//! nanoseconds from the clock's origin is an error too, where it would be delivered.

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
/// events earlier than the one before them; fuzz finding O3.) The clock runs at 4 GHz
/// here, so that 2^64 cycles lie inside the range of 64-bit nanoseconds (at 1 GHz
/// from the epoch, a clock value near 2^64 is itself past the range).
#[test]
fn a_short_timestamp_that_wraps_the_clock_past_2_pow_64_is_time_going_back() {
    for (header, bits) in [(EventHeaderKind::Compact, 27), (EventHeaderKind::Large, 32)] {
        let dir = tempfile::tempdir().unwrap();
        let near_end = u64::MAX - 1_000;
        let at = trace_with_jumps(dir.path(), header, &[near_end])[0];
        let metadata = std::fs::read_to_string(dir.path().join("metadata")).unwrap();
        assert!(metadata.contains("freq = 1000000000;"));
        std::fs::write(dir.path().join("metadata"), metadata.replace("freq = 1000000000;", "freq = 4000000000;")).unwrap();
        let fast = TraceSet::open(dir.path()).unwrap();
        let slow = TraceSet::open(dir.path()).unwrap().without_compiled_headers();
        let r = read_general(&slow, 0, u64::MAX);
        // The 60 events, the one near 2^64, then the error at the next event.
        assert_eq!(events(&r).len(), 61, "{header:?}");
        let e = r.error.expect("time goes back");
        // The next event, 1 µs later, wrote the low bits of JUMP + 1000: the clock's high
        // bits, all ones, carry into nothing.
        let wrapped = (JUMP + 1_000) & ((1 << bits) - 1);
        let ns = |c| fast.traces[0].clocks[0].to_ns_wide(c);
        assert!(e.ends_with(&format!("time goes back: an event's timestamp at {} ns, after {} ns", ns(wrapped), ns(near_end))), "{header:?}: {e}");
        assert!(offset_of(&e) > at && offset_of(&e) <= at + 16, "{header:?}: {e}, the timestamp at {at}");
        fast_paths_agree(&fast, &slow, u64::MAX, &[0, 2, 1, 3]).unwrap();
        fast_paths_agree(&fast, &slow, 0, &[0, 0, 2]).unwrap();
    }
}

/// A time past `i64::MAX` ns from the clock's origin (the year 2262 from the epoch)
/// is an error naming the file and the event's offset, on every path: no `i64`
/// timestamp names it (saturated, it would name a time the trace does not hold). An
/// event 2^62 cycles on (a full timestamp), or the clock passing the end of the range
/// 1 µs at a time (short timestamps), stops the stream at that event; a packet that
/// begins past the range stops it at the packet. Babeltrace 2 stops there too: its
/// clock snapshot cannot give its nanoseconds from origin when they overflow an
/// `int64_t` (`bt_clock_snapshot_get_ns_from_origin` answers an overflow error), so its
/// muxer, which orders messages by that time, fails at that message.
#[test]
fn a_time_past_the_range_of_64_bit_nanoseconds_is_an_error() {
    let past = |ns: u64| format!("at {ns} ns from the clock's origin: past the range of 64-bit nanoseconds");
    for header in [EventHeaderKind::Compact, EventHeaderKind::Large] {
        // A jump: the 61st event's full timestamp is 3·2^62.
        let dir = tempfile::tempdir().unwrap();
        let high = 3 << 62;
        let at = trace_with_jumps(dir.path(), header, &[high])[0];
        let (fast, slow) = (TraceSet::open(dir.path()).unwrap(), TraceSet::open(dir.path()).unwrap().without_compiled_headers());
        let r = read_general(&slow, 0, u64::MAX);
        assert_eq!(events(&r).len(), 60, "{header:?}");
        let e = r.error.expect("past the range");
        assert!(e.contains("channel0_0") && e.ends_with(&format!("an event's timestamp {}", past(high))), "{header:?}: {e}");
        assert!(offset_of(&e) < at && at - offset_of(&e) <= 8, "{header:?}: {e}, the timestamp at {at}");
        fast_paths_agree(&fast, &slow, u64::MAX, &[0, 2, 1, 3]).unwrap();
        fast_paths_agree(&fast, &slow, 0, &[0, 0, 2]).unwrap();

        // Step by step: events 1 µs apart, the 52nd 1 µs past `i64::MAX` ns, in one
        // packet that begins inside the range; then the same events all past it.
        for (first, delivered) in [(i64::MAX as u64 - 50_999, 51), (i64::MAX as u64 + 1, 0)] {
            let dir = tempfile::tempdir().unwrap();
            let trace = SmallTrace::new([("tick", StructType::new().int("_n", IntType::unsigned(32)))]).header(header).packet_size(8192);
            let ticks: Vec<_> = (0..100u64).map(|i| TimedEvent::new(first + i * 1_000, 0, "tick", vec![Value::U(i)])).collect();
            trace.write(dir.path(), &ticks).unwrap();
            let (fast, slow) = (TraceSet::open(dir.path()).unwrap(), TraceSet::open(dir.path()).unwrap().without_compiled_headers());
            assert_eq!(fast.streams[0].packets.len(), 1, "{header:?}");
            let r = read_general(&slow, 0, u64::MAX);
            let ts = events(&r);
            assert_eq!(ts, (0..delivered).map(|i| (first + i * 1_000) as i64).collect::<Vec<_>>(), "{header:?}");
            let e = r.error.expect("past the range");
            let what = if delivered > 0 { "an event's timestamp" } else { "the packet's beginning" };
            assert!(e.contains("channel0_0") && e.ends_with(&format!("{what} {}", past(first + delivered * 1_000))), "{header:?}: {e}");
            if delivered == 0 {
                assert_eq!(offset_of(&e), 0, "{e}");
            }
            fast_paths_agree(&fast, &slow, u64::MAX, &[0, 2, 1, 3]).unwrap();
            fast_paths_agree(&fast, &slow, 0, &[0, 0, 2]).unwrap();
            // The time-merge: the same events, then the error.
            let mut m = ctf::merge::Merger::new(&fast);
            let mut errors = Vec::new();
            let mut n = 0;
            while m.next_collecting(&mut errors).is_some() {
                n += 1;
            }
            assert_eq!((n, errors.len()), (delivered as usize, 1), "{header:?}");
        }
    }
}
