//! Clock-less LTTng 2.0-era traces: metadata without a `clock` block, whose event
//! header still holds a `timestamp` (27 bits in the compact form, 64 in the extended
//! one, inside the header's variant) and whose packet context holds
//! `timestamp_begin`/`timestamp_end`. They are read as Babeltrace 1 reads them: an
//! implicit 1 GHz clock of origin 0, N-bit timestamps extended against the stream's
//! previous value, so every event gets its own time (not its packet's beginning).

use ctf_writer::*;

/// Writes a trace whose events lie at `times` (cycles = ns), then strips the clock from
/// its metadata: no `clock` block, no `map = clock....` attribute.
fn clockless_trace(dir: &std::path::Path, times: &[u64]) {
    let schema = TraceSchema {
        uuid: [3; 16],
        byte_order: ByteOrder::Little,
        env: vec![("domain".into(), EnvValue::Str("kernel".into()))],
        clock: ClockClass { name: "monotonic".into(), uuid: [4; 16], description: "x".into(), freq: 1_000_000_000, offset: 0 },
        streams: vec![StreamClass { id: StreamClassId(0), event_header: EventHeaderKind::Compact, packet_context: PacketContextField::lttng_kernel() }],
        events: vec![EventClass {
            id: EventClassId(0),
            name: "tick".into(),
            stream: StreamClassId(0),
            loglevel: None,
            fields: StructType::new().int("_n", IntType::unsigned(32)),
        }],
    };
    write_metadata(dir, &schema, MetadataFormat::PlainText).unwrap();
    // Small packets: several packets, and compact headers whose 27 bits wrap inside them.
    let opts = StreamOptions { extra_context: vec![("cpu_id".into(), 0)], packet_size: 4096, ..Default::default() };
    let mut w = StreamWriter::create(dir, "channel0_0", &schema, StreamClassId(0), opts).unwrap();
    for (i, &t) in times.iter().enumerate() {
        w.write_event(Cycles(t), EventClassId(0), &[Value::U(i as u64)]).unwrap();
    }
    w.finish(Cycles(times.last().unwrap() + 10)).unwrap();
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
