//! The intermediate representation of a trace's metadata, independent of how it was
//! written (TSDL today, CTF 2 JSON later). Front ends produce it; [`crate::plan`]
//! compiles it into decoding plans.
//!
//! Field locations are absolute here: a front end resolves relative references
//! (TSDL's `len` in `char seq[len]`) into a [`FieldPath`] from one of the six scopes.

/// Byte order of a field or of the trace.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ByteOrder {
    /// Least significant byte first.
    Little,
    /// Most significant byte first.
    Big,
}

/// Text encoding of a string, or of an integer used as a character.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Encoding {
    /// Not text.
    #[default]
    None,
    /// UTF-8.
    Utf8,
    /// ASCII.
    Ascii,
    /// UTF-16, big-endian code units (CTF 2).
    Utf16Be,
    /// UTF-16, little-endian code units (CTF 2).
    Utf16Le,
    /// UTF-32, big-endian code units (CTF 2).
    Utf32Be,
    /// UTF-32, little-endian code units (CTF 2).
    Utf32Le,
}

impl Encoding {
    /// Bytes per code unit of a string in this encoding.
    pub fn unit_bytes(self) -> u32 {
        match self {
            Encoding::Utf16Be | Encoding::Utf16Le => 2,
            Encoding::Utf32Be | Encoding::Utf32Le => 4,
            _ => 1,
        }
    }
}

/// What a field means to the reader, beyond its value (CTF 2 "roles"; TSDL reserved names).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Role {
    /// Packet header magic number (0xC1FC1FC1).
    PacketMagic,
    /// Packet header stream class id.
    StreamClassId,
    /// Packet header stream instance id.
    StreamInstanceId,
    /// Packet context: clock value at the packet's beginning.
    PacketBeginTimestamp,
    /// Packet context: clock value at the packet's end.
    PacketEndTimestamp,
    /// Packet context: content size in bits.
    PacketContentSize,
    /// Packet context: total packet size in bits.
    PacketTotalSize,
    /// Packet context: snapshot of the stream's discarded-event counter.
    DiscardedEventCounter,
    /// Packet context: packet sequence number.
    PacketSequenceNumber,
    /// Event header: event class id.
    EventClassId,
}

/// An integer field class (also the container of an enumeration).
#[derive(Debug, Clone, PartialEq)]
pub struct IntClass {
    /// Size in bits (1..=64).
    pub size: u32,
    /// Alignment in bits (a power of two).
    pub align: u32,
    /// Two's complement signed.
    pub signed: bool,
    /// Byte order.
    pub byte_order: ByteOrder,
    /// Preferred display base (2, 8, 10, 16).
    pub base: u32,
    /// Character encoding, when the integer is a character.
    pub encoding: Encoding,
    /// Name of the clock class whose value this field updates, if any.
    pub mapped_clock: Option<String>,
    /// Special meaning, if any.
    pub role: Option<Role>,
}

/// A floating point field class.
#[derive(Debug, Clone, PartialEq)]
pub struct FloatClass {
    /// Exponent digits (8 for binary32, 11 for binary64).
    pub exp_dig: u32,
    /// Mantissa digits including the implicit bit (24 or 53).
    pub mant_dig: u32,
    /// Alignment in bits.
    pub align: u32,
    /// Byte order.
    pub byte_order: ByteOrder,
}

/// One mapping of an enumeration: the values `lo..=hi` carry `label`.
#[derive(Debug, Clone, PartialEq)]
pub struct EnumMapping {
    /// The label.
    pub label: String,
    /// Lowest value of the range (inclusive).
    pub lo: i128,
    /// Highest value of the range (inclusive).
    pub hi: i128,
}

/// An enumeration: an integer whose values map to labels (ranges may overlap).
#[derive(Debug, Clone, PartialEq)]
pub struct EnumClass {
    /// The container integer.
    pub int: IntClass,
    /// The mappings, in declaration order.
    pub mappings: Vec<EnumMapping>,
}

/// A NUL-terminated string.
#[derive(Debug, Clone, PartialEq)]
pub struct StringClass {
    /// Encoding.
    pub encoding: Encoding,
}

/// A structure: named members in order.
#[derive(Debug, Clone, PartialEq)]
pub struct StructClass {
    /// Minimum alignment in bits (the effective alignment is also at least each member's).
    pub min_align: u32,
    /// Members.
    pub members: Vec<(String, FieldClass)>,
}

/// A variant: one of several options, selected by an integer tag elsewhere.
#[derive(Debug, Clone, PartialEq)]
pub struct VariantClass {
    /// Location of the tag (an integer or enumeration decoded before the variant).
    pub tag: FieldPath,
    /// Options. Without `selector_ranges`, each is named after a label of the tag's
    /// enumeration (CTF 1.8).
    pub options: Vec<(String, FieldClass)>,
    /// Per option, the tag values that select it (CTF 2); `None`: by label.
    pub selector_ranges: Option<Vec<Vec<(i128, i128)>>>,
}

/// An optional field (CTF 2): present when its selector (a boolean, or an integer in
/// `ranges`) says so.
#[derive(Debug, Clone, PartialEq)]
pub struct OptionalClass {
    /// The field when present.
    pub fc: FieldClass,
    /// Location of the selector.
    pub selector: FieldPath,
    /// Integer selector values meaning "present"; `None`: a boolean selector.
    pub ranges: Option<Vec<(i128, i128)>>,
}

/// A variable-length (unsigned or signed LEB128) integer (CTF 2).
#[derive(Debug, Clone, PartialEq)]
pub struct VarIntClass {
    /// Signed (sign-extended LEB128).
    pub signed: bool,
    /// Special meaning, if any.
    pub role: Option<Role>,
}

/// A static array.
#[derive(Debug, Clone, PartialEq)]
pub struct ArrayClass {
    /// Element class.
    pub elem: FieldClass,
    /// Number of elements.
    pub len: u64,
}

/// A sequence (dynamic array) whose length is an unsigned integer decoded earlier.
#[derive(Debug, Clone, PartialEq)]
pub struct SequenceClass {
    /// Element class.
    pub elem: FieldClass,
    /// Location of the length field.
    pub length: FieldPath,
}

/// A field class.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub enum FieldClass {
    /// Fixed-size integer.
    Int(IntClass),
    /// Floating point number.
    Float(FloatClass),
    /// Enumeration.
    Enum(Box<EnumClass>),
    /// NUL-terminated string.
    String(StringClass),
    /// Structure.
    Struct(Box<StructClass>),
    /// Variant.
    Variant(Box<VariantClass>),
    /// Static array.
    Array(Box<ArrayClass>),
    /// Sequence.
    Sequence(Box<SequenceClass>),
    /// Variable-length integer.
    VarInt(VarIntClass),
    /// Fixed-length boolean (an integer shown as true/false).
    Bool(IntClass),
    /// Optional field.
    Optional(Box<OptionalClass>),
}

impl FieldClass {
    /// Alignment requirement in bits of a field of this class.
    pub fn align(&self) -> u32 {
        match self {
            FieldClass::Int(i) => i.align,
            FieldClass::Float(f) => f.align,
            FieldClass::Enum(e) => e.int.align,
            FieldClass::String(_) => 8,
            FieldClass::Struct(s) => s.members.iter().map(|(_, m)| m.align()).fold(s.min_align.max(1), u32::max),
            FieldClass::Variant(_) => 1,
            FieldClass::VarInt(_) => 8,
            FieldClass::Bool(i) => i.align,
            FieldClass::Optional(_) => 1,
            FieldClass::Array(a) => a.elem.align(),
            FieldClass::Sequence(s) => s.elem.align(),
        }
    }

    /// The member called `name` when this is a structure.
    pub fn member(&self, name: &str) -> Option<&FieldClass> {
        match self {
            FieldClass::Struct(s) => s.members.iter().find(|(n, _)| n == name).map(|(_, c)| c),
            _ => None,
        }
    }

    /// Whether this is a structure with no member (an empty scope).
    pub fn is_empty_struct(&self) -> bool {
        matches!(self, FieldClass::Struct(s) if s.members.is_empty())
    }
}

/// The six root scopes of a CTF trace, in decoding order.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Scope {
    /// `trace.packet.header`
    PacketHeader,
    /// `stream.packet.context`
    PacketContext,
    /// `stream.event.header`
    EventHeader,
    /// `stream.event.context` (common to all events of the stream)
    EventCommonContext,
    /// `event.context` (specific to one event class)
    EventSpecificContext,
    /// `event.fields` (the payload)
    EventPayload,
}

/// An absolute field location: a root scope and member names from it.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct FieldPath {
    /// Root scope.
    pub scope: Scope,
    /// Member names, outermost first (variant option names may appear).
    pub path: Vec<String>,
}

/// A clock class: converts cycles into nanoseconds from its origin.
#[derive(Debug, Clone, PartialEq)]
pub struct ClockClass {
    /// Name (referenced by `map = clock.NAME.value`).
    pub name: String,
    /// Frequency in Hz (> 0).
    pub freq: u64,
    /// Offset from origin, seconds part.
    pub offset_s: i64,
    /// Offset from origin, cycles part.
    pub offset_cycles: i64,
    /// Precision in cycles.
    pub precision: u64,
    /// Whether the origin is the Unix epoch.
    pub absolute: bool,
    /// UUID, if any.
    pub uuid: Option<[u8; 16]>,
    /// Free-form description.
    pub description: Option<String>,
}

impl ClockClass {
    /// A 1 GHz clock with no offset, called `name`.
    pub fn new_1ghz(name: &str) -> Self {
        ClockClass { name: name.into(), freq: 1_000_000_000, offset_s: 0, offset_cycles: 0, precision: 0, absolute: false, uuid: None, description: None }
    }
}

/// An event record class.
#[derive(Debug, Clone, PartialEq)]
pub struct EventClass {
    /// Numeric id within its stream class.
    pub id: u64,
    /// Name.
    pub name: String,
    /// Log level, if declared.
    pub loglevel: Option<i64>,
    /// EMF URI, if declared.
    pub emf_uri: Option<String>,
    /// Specific context (`event.context`).
    pub context: Option<FieldClass>,
    /// Payload (`event.fields`).
    pub payload: Option<FieldClass>,
}

/// A data stream class.
#[derive(Debug, Clone, PartialEq)]
pub struct StreamClass {
    /// Numeric id.
    pub id: u64,
    /// Packet context.
    pub packet_context: Option<FieldClass>,
    /// Event header.
    pub event_header: Option<FieldClass>,
    /// Event common context.
    pub event_common_context: Option<FieldClass>,
    /// Event classes, in declaration order.
    pub event_classes: Vec<EventClass>,
    /// Name of the default clock (the one the event header timestamp maps to).
    pub default_clock: Option<String>,
}

/// A value of the `env` block.
#[derive(Debug, Clone, PartialEq)]
pub enum EnvValue {
    /// Integer.
    Int(i64),
    /// String.
    Str(String),
}

/// Which metadata format described the trace.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MetadataFormat {
    /// CTF 1.8 TSDL, plain text.
    TsdlText,
    /// CTF 1.8 TSDL in metadata packets.
    TsdlPacketized,
    /// CTF 2 JSON text sequence.
    Ctf2Json,
}

/// Everything the metadata says about a trace.
#[derive(Debug, Clone, PartialEq)]
pub struct TraceClass {
    /// Native byte order of the trace.
    pub byte_order: ByteOrder,
    /// UUID, if any.
    pub uuid: Option<[u8; 16]>,
    /// Packet header.
    pub packet_header: Option<FieldClass>,
    /// Clock classes.
    pub clocks: Vec<ClockClass>,
    /// Stream classes.
    pub streams: Vec<StreamClass>,
    /// The `env` block, in order.
    pub env: Vec<(String, EnvValue)>,
    /// Non-fatal remarks made while reading the metadata (unknown attributes...).
    pub warnings: Vec<String>,
}

impl TraceClass {
    /// The clock class called `name`.
    pub fn clock(&self, name: &str) -> Option<&ClockClass> {
        self.clocks.iter().find(|c| c.name == name)
    }

    /// The env value of `key`.
    pub fn env(&self, key: &str) -> Option<&EnvValue> {
        self.env.iter().find(|(k, _)| k == key).map(|(_, v)| v)
    }
}
