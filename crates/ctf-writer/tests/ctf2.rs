//! CTF 2 metadata: the same streams described by TSDL and by CTF 2 JSON decode (with the
//! `ctf` reader) to the same canonical dump, for both byte orders and both LTTng event
//! headers, with enumerations, nested structures, sequences and character arrays.

use ctf_writer::*;

fn schema(order: ByteOrder, header: EventHeaderKind) -> TraceSchema {
    let inner = StructType::new()
        .int("_n", IntType::unsigned(8))
        .field("_seq", FieldType::Sequence { elem: Box::new(FieldType::Int(IntType::signed(16))), length_field: "_n".into() })
        .int("_x", IntType::unsigned(64).with_base(16).with_byte_order(ByteOrder::Big));
    let state = FieldType::Enum {
        int: IntType::signed(32),
        mappings: vec![
            EnumMapping { label: "RUN".into(), start: 0, end: 0 },
            EnumMapping { label: "WAIT".into(), start: 1, end: 3 },
            EnumMapping { label: "RUN".into(), start: 10, end: 12 },
            EnumMapping { label: "NEG".into(), start: -5, end: -1 },
        ],
    };
    TraceSchema {
        uuid: [0xAB; 16],
        byte_order: order,
        env: vec![("domain".into(), EnvValue::Str("kernel".into())), ("tracer_major".into(), EnvValue::Int(2))],
        clock: ClockClass {
            name: "monotonic".into(),
            uuid: [1; 16],
            description: "Monotonic \"Clock\"".into(),
            freq: 1_000_000_000,
            offset: 1_700_000_000_123_456_789,
        },
        streams: vec![StreamClass { id: StreamClassId(0), event_header: header, packet_context: PacketContextField::lttng_kernel() }],
        events: vec![
            EventClass {
                id: EventClassId(3),
                name: "small".into(),
                stream: StreamClassId(0),
                loglevel: None,
                fields: StructType::new().int("_v", IntType::unsigned(32)),
            },
            EventClass {
                id: EventClassId(40_000),
                name: "big".into(),
                stream: StreamClassId(0),
                loglevel: Some(13),
                fields: StructType::new()
                    .field("_comm", FieldType::char_array(4))
                    .field("_state", state)
                    .field("_inner", FieldType::Struct(inner))
                    .int("_len", IntType::unsigned(16))
                    .field("_text", FieldType::Sequence { elem: Box::new(FieldType::Int(IntType::utf8_char())), length_field: "_len".into() })
                    .field("_s", FieldType::String)
                    .int("_bits", IntType::unsigned(3).with_align(1))
                    .int("s", IntType::signed(7).with_align(1)),
            },
        ],
    }
}

fn write(dir: &std::path::Path, s: &TraceSchema, format: MetadataFormat) {
    write_metadata(dir, s, format).unwrap();
    let opts = StreamOptions { packet_size: 4096, instance_id: 1, extra_context: vec![("cpu_id".into(), 1)], ..Default::default() };
    let mut w = StreamWriter::create(dir, "chan_1", s, StreamClassId(0), opts).unwrap();
    for i in 0..400u64 {
        let ts = Cycles(1_000 + i * i * 997);
        if i % 3 == 0 {
            w.write_event(ts, EventClassId(3), &[Value::U(i)]).unwrap();
        } else {
            let seq = [Value::I(-1), Value::I(i as i64), Value::I(7)];
            let n = (i % 4) as usize;
            let text = format!("t{i}");
            let state = [0i64, 2, 11, -3, 20][(i % 5) as usize];
            let values = [
                Value::Str("ab"),
                Value::I(state),
                Value::U(n as u64),
                Value::List(&seq[..n]),
                Value::U(0xDEAD_0000 + i),
                Value::U(text.len() as u64),
                Value::Str(&text),
                Value::Str(if i % 7 == 0 { "" } else { "hello" }),
                Value::U(i % 8),
                Value::I(-((i % 60) as i64)),
            ];
            w.write_event(ts, EventClassId(40_000), &values).unwrap();
        }
    }
    w.finish(Cycles(1_000 + 400 * 400 * 997)).unwrap();
}

fn dump(dir: &std::path::Path) -> (String, ctf::ir::MetadataFormat) {
    let set = ctf::trace::TraceSet::open(dir).unwrap();
    let mut out = Vec::new();
    let mut merger = ctf::merge::Merger::new(&set);
    while let Some(mut m) = merger.next().unwrap() {
        ctf::dump::write_json(&mut out, &mut m.item).unwrap();
    }
    (String::from_utf8(out).unwrap(), set.traces[0].format)
}

#[test]
fn tsdl_and_ctf2_decode_to_the_same_dump() {
    for order in [ByteOrder::Little, ByteOrder::Big] {
        for header in [EventHeaderKind::Compact, EventHeaderKind::Large] {
            let s = schema(order, header);
            let (a, b) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
            write(a.path(), &s, MetadataFormat::Packetized { packet_len: 4096 });
            write(b.path(), &s, MetadataFormat::Ctf2Json);
            assert_eq!(std::fs::read(a.path().join("chan_1")).unwrap(), std::fs::read(b.path().join("chan_1")).unwrap());
            let (d18, f18) = dump(a.path());
            let (d2, f2) = dump(b.path());
            assert_eq!(f18, ctf::ir::MetadataFormat::TsdlPacketized);
            assert_eq!(f2, ctf::ir::MetadataFormat::Ctf2Json);
            assert_eq!(d18.lines().count(), 400, "{order:?} {header:?}");
            assert!(d2.contains(r#""comm":"ab""#) && d2.contains(r#""seq":[-1,"#), "{}", d2.lines().nth(2).unwrap());
            assert!(d18 == d2, "{order:?} {header:?}: dumps differ\n{}\n{}", d18.lines().nth(1).unwrap(), d2.lines().nth(1).unwrap());
        }
    }
}

#[test]
fn ctf2_fragments() {
    let s = schema(ByteOrder::Little, EventHeaderKind::Compact);
    let m = encode_metadata(&s, MetadataFormat::Ctf2Json);
    let frags: Vec<serde_json::Value> = m.split(|b| *b == ctf2::RS).filter(|c| !c.is_empty()).map(|c| serde_json::from_slice(c).unwrap()).collect();
    let types: Vec<&str> = frags.iter().map(|f| f["type"].as_str().unwrap()).collect();
    assert_eq!(types, ["preamble", "trace-class", "clock-class", "data-stream-class", "event-record-class", "event-record-class"]);
    assert_eq!(frags[0]["version"], 2);
    assert_eq!(frags[2]["offset-from-origin"], serde_json::json!({ "seconds": 1_700_000_000u64, "cycles": 123_456_789u64 }));
    let big = &frags[5];
    assert_eq!(big["attributes"]["lttng.org,2009"]["log-level"], 13);
    let members = big["payload-field-class"]["member-classes"].as_array().unwrap();
    let names: Vec<&str> = members.iter().map(|m| m["name"].as_str().unwrap()).collect();
    assert_eq!(names, ["comm", "state", "inner", "len", "text", "_s", "bits", "s"]);
    assert_eq!(members[1]["field-class"]["mappings"]["RUN"], serde_json::json!([[0, 0], [10, 12]]));
    assert_eq!(
        members[2]["field-class"]["member-classes"][1]["field-class"]["length-field-location"],
        serde_json::json!({ "origin": "event-record-payload", "path": ["inner", "n"] })
    );
}
