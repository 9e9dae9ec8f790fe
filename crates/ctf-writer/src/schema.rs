//! The trace schema model: clock, stream classes, event classes and field types.
//!
//! This model is independent of any metadata syntax: [`crate::tsdl`] renders it as CTF 1.8
//! TSDL text and [`crate::ctf2`] as CTF 2 JSON.

use crate::error::{Result, WriterError};
use crate::ids::{EventClassId, StreamClassId};

/// Byte order of an integer or of the whole trace.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ByteOrder {
    /// Least significant byte first (`le`).
    Little,
    /// Most significant byte first (`be`).
    Big,
}

/// Text encoding of an integer (used for character arrays) or a string.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Encoding {
    /// Not text.
    None,
    /// UTF-8 text.
    Utf8,
}

/// An integer field type.
#[derive(Debug, Clone, PartialEq)]
pub struct IntType {
    /// Size in bits, 1..=64.
    pub size: u32,
    /// Alignment in bits, a power of two.
    pub align: u32,
    /// Two's complement signed.
    pub signed: bool,
    /// Explicit byte order; `None` means the trace's byte order.
    pub byte_order: Option<ByteOrder>,
    /// Preferred display base (2, 8, 10 or 16).
    pub base: u32,
    /// Text encoding (UTF-8 for `char` arrays).
    pub encoding: Encoding,
    /// Name of the clock this integer maps to, if any.
    pub map_clock: Option<String>,
}

impl IntType {
    /// An unsigned, byte-aligned, base-10 integer of `size` bits.
    pub fn unsigned(size: u32) -> Self {
        IntType { size, align: 8, signed: false, byte_order: None, base: 10, encoding: Encoding::None, map_clock: None }
    }
    /// A signed, byte-aligned, base-10 integer of `size` bits.
    pub fn signed(size: u32) -> Self {
        IntType { signed: true, ..Self::unsigned(size) }
    }
    /// An 8-bit UTF-8 character (element of a text array), as LTTng declares `char`.
    pub fn utf8_char() -> Self {
        IntType { encoding: Encoding::Utf8, ..Self::unsigned(8) }
    }
    /// Returns this type with another alignment (bits).
    pub fn with_align(mut self, align: u32) -> Self {
        self.align = align;
        self
    }
    /// Returns this type with another display base.
    pub fn with_base(mut self, base: u32) -> Self {
        self.base = base;
        self
    }
    /// Returns this type with an explicit byte order.
    pub fn with_byte_order(mut self, order: ByteOrder) -> Self {
        self.byte_order = Some(order);
        self
    }
    /// Returns this type mapped to the named clock.
    pub fn mapped_to(mut self, clock: &str) -> Self {
        self.map_clock = Some(clock.to_string());
        self
    }
    fn validate(&self) -> Result<()> {
        if !(1..=64).contains(&self.size) {
            return Err(WriterError::Schema(format!("integer size {} not in 1..=64", self.size)));
        }
        if !self.align.is_power_of_two() || self.align > 64 {
            return Err(WriterError::Schema(format!("integer alignment {} is not a power of two <= 64", self.align)));
        }
        if ![2, 8, 10, 16].contains(&self.base) {
            return Err(WriterError::Schema(format!("integer base {} not in 2, 8, 10, 16", self.base)));
        }
        Ok(())
    }
}

/// One label of an enumeration, covering `start..=end`.
#[derive(Debug, Clone, PartialEq)]
pub struct EnumMapping {
    /// The label.
    pub label: String,
    /// First value (inclusive).
    pub start: i64,
    /// Last value (inclusive).
    pub end: i64,
}

/// A field type.
#[derive(Debug, Clone, PartialEq)]
pub enum FieldType {
    /// An integer.
    Int(IntType),
    /// An enumeration over an integer container.
    Enum {
        /// The container integer.
        int: IntType,
        /// Its labels.
        mappings: Vec<EnumMapping>,
    },
    /// A null-terminated UTF-8 string.
    String,
    /// A fixed-length array.
    Array {
        /// Element type.
        elem: Box<FieldType>,
        /// Number of elements.
        len: u32,
    },
    /// A variable-length array whose length is an earlier sibling integer field.
    Sequence {
        /// Element type.
        elem: Box<FieldType>,
        /// Name of the sibling length field (as declared, e.g. `__vtids_length`).
        length_field: String,
    },
    /// A structure.
    Struct(StructType),
}

impl FieldType {
    /// A text array of `len` bytes (e.g. `char comm[16]`).
    pub fn char_array(len: u32) -> Self {
        FieldType::Array { elem: Box::new(FieldType::Int(IntType::utf8_char())), len }
    }
    /// Alignment in bits of this type.
    pub fn alignment(&self) -> u32 {
        match self {
            FieldType::Int(i) | FieldType::Enum { int: i, .. } => i.align,
            FieldType::String => 8,
            FieldType::Array { elem, .. } | FieldType::Sequence { elem, .. } => elem.alignment(),
            FieldType::Struct(s) => s.alignment(),
        }
    }
    fn validate(&self) -> Result<()> {
        match self {
            FieldType::Int(i) => i.validate(),
            FieldType::Enum { int, .. } => int.validate(),
            FieldType::String => Ok(()),
            FieldType::Array { elem, .. } | FieldType::Sequence { elem, .. } => elem.validate(),
            FieldType::Struct(s) => s.validate(),
        }
    }
}

/// A named field of a structure.
#[derive(Debug, Clone, PartialEq)]
pub struct Field {
    /// Field name as written in the metadata (LTTng prefixes an underscore).
    pub name: String,
    /// Field type.
    pub ty: FieldType,
}

/// A structure type: fields in order.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct StructType {
    /// The fields, in encoding order.
    pub fields: Vec<Field>,
}

impl StructType {
    /// An empty structure.
    pub fn new() -> Self {
        Self::default()
    }
    /// Appends a field (builder style).
    pub fn field(mut self, name: &str, ty: FieldType) -> Self {
        self.fields.push(Field { name: name.to_string(), ty });
        self
    }
    /// Appends an integer field (builder style).
    pub fn int(self, name: &str, ty: IntType) -> Self {
        self.field(name, FieldType::Int(ty))
    }
    /// Alignment in bits: the largest field alignment (1 when empty).
    pub fn alignment(&self) -> u32 {
        self.fields.iter().map(|f| f.ty.alignment()).max().unwrap_or(1)
    }
    fn validate(&self) -> Result<()> {
        for (i, f) in self.fields.iter().enumerate() {
            if self.fields[..i].iter().any(|g| g.name == f.name) {
                return Err(WriterError::Schema(format!("duplicate field name {:?}", f.name)));
            }
            if let FieldType::Sequence { length_field, .. } = &f.ty {
                let ok = self.fields[..i].iter().any(|g| &g.name == length_field && matches!(g.ty, FieldType::Int(_)));
                if !ok {
                    return Err(WriterError::Schema(format!("sequence {:?}: length field {length_field:?} is not an earlier integer sibling", f.name)));
                }
            }
            f.ty.validate()?;
        }
        Ok(())
    }
}

/// The trace clock.
#[derive(Debug, Clone, PartialEq)]
pub struct ClockClass {
    /// Clock name (`monotonic` for LTTng kernel traces).
    pub name: String,
    /// Clock UUID.
    pub uuid: [u8; 16],
    /// Description text.
    pub description: String,
    /// Frequency in Hz.
    pub freq: u64,
    /// Offset from the Epoch, in cycles (LTTng writes `offset` only).
    pub offset: u64,
}

/// Event header layout of a stream class, as LTTng defines them.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum EventHeaderKind {
    /// 5-bit id (31 = extended) + 27-bit timestamp, or 32-bit id + 64-bit timestamp.
    Compact,
    /// 16-bit id (65535 = extended) + 32-bit timestamp, or 32-bit id + 64-bit timestamp.
    Large,
}

/// One field of the packet context. The writer fills the well-known roles itself.
#[derive(Debug, Clone, PartialEq)]
pub enum PacketContextField {
    /// `uint64 timestamp_begin`, mapped to the clock.
    TimestampBegin,
    /// `uint64 timestamp_end`, mapped to the clock.
    TimestampEnd,
    /// `uint64 content_size` (bits).
    ContentSize,
    /// `uint64 packet_size` (bits).
    PacketSize,
    /// `uint64 packet_seq_num`.
    PacketSeqNum,
    /// `unsigned long events_discarded` (cumulative per stream).
    EventsDiscarded,
    /// Any other integer, whose value the stream writer is given (e.g. `cpu_id`).
    Extra {
        /// Field name.
        name: String,
        /// Field type.
        ty: IntType,
    },
}

impl PacketContextField {
    /// The field name as written in the metadata.
    pub fn name(&self) -> &str {
        match self {
            PacketContextField::TimestampBegin => "timestamp_begin",
            PacketContextField::TimestampEnd => "timestamp_end",
            PacketContextField::ContentSize => "content_size",
            PacketContextField::PacketSize => "packet_size",
            PacketContextField::PacketSeqNum => "packet_seq_num",
            PacketContextField::EventsDiscarded => "events_discarded",
            PacketContextField::Extra { name, .. } => name,
        }
    }
    /// The LTTng packet context with one extra `uint32_t cpu_id` field.
    pub fn lttng_kernel() -> Vec<PacketContextField> {
        vec![
            PacketContextField::TimestampBegin,
            PacketContextField::TimestampEnd,
            PacketContextField::ContentSize,
            PacketContextField::PacketSize,
            PacketContextField::PacketSeqNum,
            PacketContextField::EventsDiscarded,
            PacketContextField::Extra { name: "cpu_id".into(), ty: IntType::unsigned(32) },
        ]
    }
}

/// A stream class: its id, event header and packet context.
#[derive(Debug, Clone, PartialEq)]
pub struct StreamClass {
    /// Stream class id.
    pub id: StreamClassId,
    /// Event header layout.
    pub event_header: EventHeaderKind,
    /// Packet context fields, in order.
    pub packet_context: Vec<PacketContextField>,
}

/// An event class.
#[derive(Debug, Clone, PartialEq)]
pub struct EventClass {
    /// Event id, unique within the stream class.
    pub id: EventClassId,
    /// Event name.
    pub name: String,
    /// Stream class this event belongs to.
    pub stream: StreamClassId,
    /// Optional log level.
    pub loglevel: Option<i64>,
    /// Payload fields.
    pub fields: StructType,
}

/// A value of the `env` block.
#[derive(Debug, Clone, PartialEq)]
pub enum EnvValue {
    /// An integer.
    Int(i64),
    /// A string.
    Str(String),
}

/// The whole trace schema.
///
/// The trace packet header is LTTng's: `{ uint32 magic; uint8 uuid[16]; uint32 stream_id;
/// uint64 stream_instance_id; }`.
#[derive(Debug, Clone, PartialEq)]
pub struct TraceSchema {
    /// Trace UUID (also written in every packet header).
    pub uuid: [u8; 16],
    /// Default byte order of the trace.
    pub byte_order: ByteOrder,
    /// `env` block entries, in order.
    pub env: Vec<(String, EnvValue)>,
    /// The clock.
    pub clock: ClockClass,
    /// Stream classes.
    pub streams: Vec<StreamClass>,
    /// Event classes.
    pub events: Vec<EventClass>,
}

impl TraceSchema {
    /// Checks ids, field types and references; call before writing.
    pub fn validate(&self) -> Result<()> {
        for (i, s) in self.streams.iter().enumerate() {
            if self.streams[..i].iter().any(|t| t.id == s.id) {
                return Err(WriterError::Schema(format!("duplicate stream class id {}", s.id.0)));
            }
            for f in &s.packet_context {
                if let PacketContextField::Extra { ty, .. } = f {
                    ty.validate()?;
                }
            }
        }
        for (i, e) in self.events.iter().enumerate() {
            if !self.streams.iter().any(|s| s.id == e.stream) {
                return Err(WriterError::Schema(format!("event {:?}: unknown stream class {}", e.name, e.stream.0)));
            }
            if self.events[..i].iter().any(|f| f.id == e.id && f.stream == e.stream) {
                return Err(WriterError::Schema(format!("duplicate event id {} ({:?})", e.id.0, e.name)));
            }
            e.fields.validate().map_err(|err| WriterError::Schema(format!("event {:?}: {err}", e.name)))?;
        }
        if self.clock.freq == 0 {
            return Err(WriterError::Schema("clock frequency is 0".into()));
        }
        Ok(())
    }

    /// The stream class with this id.
    pub fn stream(&self, id: StreamClassId) -> Option<&StreamClass> {
        self.streams.iter().find(|s| s.id == id)
    }
}

/// Formats a UUID the way TSDL writes it (`8-4-4-4-12` lowercase hex).
pub fn uuid_string(u: &[u8; 16]) -> String {
    let h: String = u.iter().map(|b| format!("{b:02x}")).collect();
    format!("{}-{}-{}-{}-{}", &h[0..8], &h[8..12], &h[12..16], &h[16..20], &h[20..32])
}
