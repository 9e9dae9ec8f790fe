//! A generic CTF 1.8 (and CTF 2 metadata) trace writer.
//!
//! Where it sits: below `synth` (which declares LTTng kernel events with it); it knows
//! nothing about kernels. The flow is:
//!
//! 1. describe the trace with the [`schema`] model ([`TraceSchema`]: clock, stream classes
//!    with LTTng-style packet contexts and event headers, event classes with field types);
//! 2. write the `metadata` file with [`write_metadata`] (TSDL text from [`tsdl::to_tsdl`],
//!    plain or packetized like lttng-modules);
//! 3. write each data stream with a [`StreamWriter`]: one packet buffered in memory,
//!    events encoded field by field with CTF bit alignment, full packets padded to a
//!    power-of-two size and streamed to disk, with LTTng `index/*.idx` entries.
//!
//! The schema model is separate from the metadata syntax: [`tsdl`] renders it as CTF 1.8
//! TSDL text and [`ctf2`] as CTF 2 JSON ([`MetadataFormat::Ctf2Json`]); the data streams
//! are the same either way.
//!
//! # Example
//!
//! ```
//! use ctf_writer::*;
//! let dir = tempfile::tempdir().unwrap();
//! let schema = TraceSchema {
//!     uuid: [7; 16],
//!     byte_order: ByteOrder::Little,
//!     env: vec![("domain".into(), EnvValue::Str("kernel".into()))],
//!     clock: ClockClass { name: "monotonic".into(), uuid: [8; 16], description: "Monotonic Clock".into(),
//!                         freq: 1_000_000_000, offset: 1_700_000_000_000_000_000 },
//!     streams: vec![StreamClass { id: StreamClassId(0), event_header: EventHeaderKind::Compact,
//!                                 packet_context: PacketContextField::lttng_kernel() }],
//!     events: vec![EventClass { id: EventClassId(0), name: "hello".into(), stream: StreamClassId(0),
//!                               loglevel: None,
//!                               fields: StructType::new().int("_n", IntType::signed(32))
//!                                                        .field("_msg", FieldType::String) }],
//! };
//! write_metadata(dir.path(), &schema, MetadataFormat::Packetized { packet_len: 4096 }).unwrap();
//! let opts = StreamOptions { extra_context: vec![("cpu_id".into(), 0)], ..Default::default() };
//! let mut w = StreamWriter::create(dir.path(), "channel0_0", &schema, StreamClassId(0), opts).unwrap();
//! w.write_event(Cycles(1000), EventClassId(0), &[Value::I(-1), Value::Str("hi")]).unwrap();
//! let stats = w.finish(Cycles(2000)).unwrap();
//! assert_eq!((stats.events, stats.packets, stats.bytes), (1, 1, 256 * 1024));
//! ```

pub mod bits;
pub mod ctf2;
pub mod error;
pub mod ids;
pub mod index;
pub mod layout;
pub mod metadata;
pub mod schema;
pub mod small;
pub mod stream;
pub mod tsdl;

pub use error::{Result, WriterError};
pub use ids::{Bits, Cycles, EventClassId, FileOffset, StreamClassId};
pub use index::{IndexEntry, IndexWriter};
pub use layout::{Layout, Value};
pub use metadata::{encode_metadata, write_metadata, MetadataFormat};
pub use schema::{
    ByteOrder, ClockClass, Encoding, EnumMapping, EnvValue, EventClass, EventHeaderKind, Field, FieldType, IntType, PacketContextField, StreamClass,
    StructType, TraceSchema,
};
pub use stream::{StreamOptions, StreamStats, StreamWriter, PACKET_MAGIC};
