//! Time that goes back inside a packet: an event whose full-width timestamp (LTTng's
//! extended header, 64 bits) is earlier than the event before it, beyond
//! [`ctf::stream::OVERLAP_NS`], is an error naming the file and the event's offset, on
//! every reading path; within the overlap it is read as written.

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
    let trace =
        SmallTrace::new([("tick", StructType::new().int("_n", IntType::unsigned(32)))]).header(header).metadata(MetadataFormat::PlainText).packet_size(8192);
    let mut t = 100_000_000;
    let events: Vec<_> = (0..100u64)
        .map(|i| {
            t = if i == 60 { JUMP } else { t + 1_000 };
            TimedEvent::new(t, 0, "tick", vec![Value::U(i)])
        })
        .collect();
    trace.write(dir, &events).unwrap();
    let path = dir.join("channel0_0");
    let mut bytes = std::fs::read(&path).unwrap();
    let at = bytes.windows(8).position(|b| b == JUMP.to_le_bytes()).expect("the extended header's timestamp");
    assert_eq!(bytes.windows(8).filter(|b| *b == JUMP.to_le_bytes()).count(), 1);
    let moved = BEFORE - back;
    bytes[at..at + 8].copy_from_slice(&moved.to_le_bytes());
    std::fs::write(&path, bytes).unwrap();
    at
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
        let offset: usize = e.split("offset ").nth(1).and_then(|s| s.split(':').next()).and_then(|s| s.parse().ok()).expect("an offset");
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
