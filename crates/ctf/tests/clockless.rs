//! Clock-less LTTng 2.0-era traces: metadata without a `clock` block, whose event
//! header still holds a `timestamp` (27 bits in the compact form, 64 in the extended
//! one, inside the header's variant) and whose packet context holds
//! `timestamp_begin`/`timestamp_end`. They are read as Babeltrace 1 reads them: an
//! implicit 1 GHz clock of origin 0, N-bit timestamps extended against the stream's
//! previous value, so every event gets its own time (not its packet's beginning).

use ctf_writer::small::{SmallTrace, TimedEvent};
use ctf_writer::{EventHeaderKind, IntType, MetadataFormat, StructType, Value};

/// Writes a trace whose events lie at `times` (cycles = ns), then strips the clock from
/// its metadata: no `clock` block, no `map = clock....` attribute.
fn clockless_trace(dir: &std::path::Path, times: &[u64]) {
    // Small packets: several packets, and compact headers whose 27 bits wrap inside them.
    let trace =
        SmallTrace::new([("tick", StructType::new().int("_n", IntType::unsigned(32)))]).header(EventHeaderKind::Compact).metadata(MetadataFormat::PlainText);
    let events: Vec<_> = times.iter().zip(0u64..).map(|(&t, i)| TimedEvent::new(t, 0, "tick", vec![Value::U(i)])).collect();
    trace.write(dir, &events).unwrap();
    let path = dir.join("metadata");
    let text = std::fs::read_to_string(&path).unwrap();
    let start = text.find("clock {").expect("a clock block");
    let end = start + text[start..].find("};").unwrap() + 2;
    let stripped = format!("{}{}", &text[..start], &text[end..]).replace("map = clock.monotonic.value;", "");
    assert!(!stripped.contains("clock {") && !stripped.contains("map ="), "{stripped}");
    std::fs::write(&path, stripped).unwrap();
}

#[test]
fn clockless_lttng_events_get_their_own_times_through_27_bit_wraps() {
    let dir = tempfile::tempdir().unwrap();
    // Steps of 100 M cycles: below 2^27 (compact headers), so the 27 low bits wrap
    // around between events; a step of 2^30 (extended header, 64 bits) now and then.
    let mut times = Vec::new();
    let mut t = 5_000u64;
    for i in 0..1500u64 {
        t += if i % 97 == 0 { 1 << 30 } else { 100_000_000 + i * 13 };
        times.push(t);
    }
    clockless_trace(dir.path(), &times);
    let set = ctf::trace::TraceSet::open(dir.path()).unwrap();
    let mut m = ctf::merge::Merger::new(&set);
    let mut got = Vec::new();
    while let Some(x) = m.next().unwrap() {
        if let ctf::stream::Item::Event(e) = x.item {
            got.push(e.ts().expect("an implicit clock"));
        }
    }
    let want: Vec<i64> = times.iter().map(|&t| t as i64).collect();
    assert_eq!(got.len(), want.len());
    assert!(set.streams[0].packets.len() > 1, "several packets");
    assert_eq!(got, want);
}
