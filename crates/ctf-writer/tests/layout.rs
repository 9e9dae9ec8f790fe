//! Byte-level checks of what the writer produces: metadata packets, packet header and
//! context, compact and extended event headers, packet closing and index entries.

use ctf_writer::*;

fn schema(header: EventHeaderKind) -> TraceSchema {
    TraceSchema {
        uuid: [0xAB; 16],
        byte_order: ByteOrder::Little,
        env: vec![("domain".into(), EnvValue::Str("kernel".into())), ("tracer_major".into(), EnvValue::Int(2))],
        clock: ClockClass { name: "monotonic".into(), uuid: [1; 16], description: "Monotonic Clock".into(), freq: 1_000_000_000, offset: 0 },
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
                id: EventClassId(40),
                name: "big".into(),
                stream: StreamClassId(0),
                loglevel: Some(13),
                fields: StructType::new()
                    .field("_comm", FieldType::char_array(4))
                    .int("_n", IntType::unsigned(8))
                    .field("_seq", FieldType::Sequence { elem: Box::new(FieldType::Int(IntType::signed(16))), length_field: "_n".into() })
                    .field("_s", FieldType::String),
            },
        ],
    }
}

fn u64_at(b: &[u8], at: usize) -> u64 {
    u64::from_le_bytes(b[at..at + 8].try_into().unwrap())
}

#[test]
fn metadata_packets_have_lttng_headers() {
    let s = schema(EventHeaderKind::Compact);
    let m = encode_metadata(&s, MetadataFormat::Packetized { packet_len: 4096 });
    assert_eq!(m.len() % 4096, 0);
    assert_eq!(&m[0..4], &0x75D1_1D57u32.to_le_bytes());
    assert_eq!(&m[4..20], &[0xAB; 16]);
    let content = u32::from_le_bytes(m[24..28].try_into().unwrap()) as usize / 8;
    assert_eq!(u32::from_le_bytes(m[28..32].try_into().unwrap()), 4096 * 8);
    assert_eq!(&m[32..37], &[0, 0, 0, 1, 8]);
    let text = std::str::from_utf8(&m[37..content]).unwrap();
    assert!(text.starts_with("typealias integer { size = 8;"));
    let full = tsdl::to_tsdl(&s);
    assert!(full.contains("enum : uint5_t { compact = 0 ... 30, extended = 31 } id;"));
    assert!(full.contains("integer { size = 16; align = 8; signed = 1; encoding = none; base = 10; } _seq[ _n ];"));
    assert!(full.contains("loglevel = 13;"));
    assert!(encode_metadata(&s, MetadataFormat::PlainText).starts_with(b"/* CTF 1.8 */"));
}

#[test]
fn compact_and_extended_headers_and_packet_close() {
    let d = tempfile::tempdir().unwrap();
    let s = schema(EventHeaderKind::Compact);
    let opts = StreamOptions { packet_size: 4096, instance_id: 2, extra_context: vec![("cpu_id".into(), 2)], ..Default::default() };
    let mut w = StreamWriter::create(d.path(), "chan_2", &s, StreamClassId(0), opts).unwrap();
    w.write_event(Cycles(1000), EventClassId(3), &[Value::U(0xDEAD)]).unwrap();
    // Delta >= 2^27 forces the extended header even for a small id.
    w.write_event(Cycles(1000 + (1 << 27)), EventClassId(3), &[Value::U(1)]).unwrap();
    let seq = [Value::I(-2), Value::I(3)];
    w.write_event(Cycles(1 << 28), EventClassId(40), &[Value::Str("ab"), Value::U(2), Value::List(&seq), Value::Str("x")]).unwrap();
    for i in 0..600 {
        w.write_event(Cycles((1 << 28) + i), EventClassId(3), &[Value::U(i)]).unwrap();
    }
    let st = w.finish(Cycles(1 << 29)).unwrap();
    assert_eq!(st.events, 603);
    assert_eq!(st.extended_headers, 2);
    assert!(st.packets >= 2);
    let b = std::fs::read(d.path().join("chan_2")).unwrap();
    assert_eq!(b.len() as u64, st.packets * 4096);
    assert_eq!(&b[0..4], &PACKET_MAGIC.to_le_bytes());
    assert_eq!(u64_at(&b, 24), 2);
    assert_eq!(u64_at(&b, 32), 1000);
    assert_eq!(u64_at(&b, 56), 4096 * 8);
    assert_eq!(u64_at(&b, 64), 0);
    assert_eq!(u32::from_le_bytes(b[80..84].try_into().unwrap()), 2);
    let word = u32::from_le_bytes(b[84..88].try_into().unwrap());
    assert_eq!((word & 31, word >> 5), (3, 1000));
    assert_eq!(u32::from_le_bytes(b[88..92].try_into().unwrap()), 0xDEAD);
    assert_eq!(b[92] & 31, 31);
    assert_eq!(u32::from_le_bytes(b[93..97].try_into().unwrap()), 3);
    assert_eq!(u64_at(&b, 97), 1000 + (1 << 27));
    let content = u64_at(&b, 48);
    assert!(content <= 4096 * 8 && content > 3000 * 8);
    assert_eq!(u64_at(&b, 4096 + 64), 1);
    let last = (st.packets as usize - 1) * 4096;
    assert_eq!(u64_at(&b, last + 40), 1 << 29);
    let ix = std::fs::read(d.path().join("index/chan_2.idx")).unwrap();
    assert_eq!(ix.len() as u64, 16 + 72 * st.packets);
    let be = |at: usize| u64::from_be_bytes(ix[at..at + 8].try_into().unwrap());
    assert_eq!((be(16), be(24), be(32)), (0, 4096 * 8, content));
    assert_eq!((be(16 + 72), be(16 + 72 + 64)), (4096, 1));
}

#[test]
fn errors_not_panics() {
    let d = tempfile::tempdir().unwrap();
    let s = schema(EventHeaderKind::Large);
    let bad = StreamOptions { packet_size: 1000, extra_context: vec![("cpu_id".into(), 0)], ..Default::default() };
    assert!(matches!(StreamWriter::create(d.path(), "x", &s, StreamClassId(0), bad), Err(WriterError::Option(_))));
    assert!(StreamWriter::create(d.path(), "x", &s, StreamClassId(0), StreamOptions::default()).is_err());
    let opts = StreamOptions { packet_size: 4096, extra_context: vec![("cpu_id".into(), 0)], ..Default::default() };
    let mut w = StreamWriter::create(d.path(), "x", &s, StreamClassId(0), opts).unwrap();
    assert!(matches!(w.write_event(Cycles(5), EventClassId(9), &[]), Err(WriterError::UnknownEventClass(9))));
    assert!(matches!(w.write_event(Cycles(5), EventClassId(3), &[]), Err(WriterError::ValueMismatch { .. })));
    w.write_event(Cycles(5), EventClassId(3), &[Value::U(1)]).unwrap();
    assert!(matches!(w.write_event(Cycles(4), EventClassId(3), &[Value::U(1)]), Err(WriterError::TimestampBackwards { .. })));
    let huge = "y".repeat(5000);
    let r = w.write_event(Cycles(6), EventClassId(40), &[Value::Str("a"), Value::U(0), Value::List(&[]), Value::Str(&huge)]);
    assert!(matches!(r, Err(WriterError::EventTooLarge { .. })));
    let mut dup = schema(EventHeaderKind::Compact);
    dup.events[1].id = EventClassId(3);
    assert!(matches!(dup.validate(), Err(WriterError::Schema(_))));
}
