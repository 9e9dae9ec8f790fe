//! Decoding plans: the metadata compiled once into a flat arena of nodes, in which
//! every field reference (sequence length, variant tag) is a node id and every event
//! class is found by id without a name look-up.
//!
//! Each node owns one *slot*, numbered like the node: when a scalar field is decoded
//! its raw value lands in `slots[node]`, so later fields (lengths, tags) and users
//! (analyses, through [`FieldHandle`]s) read it back in O(1).

use crate::decode::node_align;
use crate::ir::*;

/// Index of a node in a [`Plan`]; also the index of its value slot.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct NodeId(pub u32);

/// A handle on a field, resolved once from its name (see [`Plan::event_field`]) and
/// then read per event without any look-up (see [`crate::stream::EventRef::uint`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct FieldHandle {
    /// The field's node (and slot).
    pub node: NodeId,
    /// Whether the field is in a packet scope (valid for the whole packet).
    pub packet_level: bool,
    /// Where to read the field directly when its scope is skipped (fixed layout).
    pub lazy: Option<LazyField>,
}

/// A field at a fixed bit offset inside a fixed-layout scope that decoding skips.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct LazyField {
    /// 0: common context, 1: specific context, 2: payload.
    pub scope: u8,
    /// Bit offset from the aligned start of the scope (handles stay small: event
    /// classes are matched and copied per event).
    pub offset: u32,
    /// When the field is an integer: its size in bits, signedness and byte order (read
    /// in place without consulting its node).
    pub int: Option<LazyInt>,
    /// When the field is a byte-aligned text array of 8-bit elements: its length in
    /// bytes (read in place by [`crate::stream::EventRef::array_bytes`]); else 0.
    pub bytes: u16,
}

/// How to read an integer field in place.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct LazyInt {
    /// Size in bits (1..=64).
    pub bits: u8,
    /// Signed (sign-extended).
    pub signed: bool,
    /// Big-endian.
    pub be: bool,
}

/// One decoding step.
#[derive(Debug, Clone)]
pub enum Node {
    /// Integer (possibly an enumeration when `enum_idx` is set).
    Int {
        /// Alignment in bits.
        align: u32,
        /// Size in bits (1..=64).
        bits: u32,
        /// Signed.
        signed: bool,
        /// Big-endian.
        be: bool,
        /// Display base.
        base: u32,
        /// Special meaning.
        role: Option<Role>,
        /// Updates the stream's default clock.
        clock: bool,
        /// Index in [`Plan::enums`], for enumerations.
        enum_idx: Option<u32>,
        /// Shown as a boolean.
        boolean: bool,
    },
    /// IEEE 754 binary32 or binary64.
    Float {
        /// Alignment in bits.
        align: u32,
        /// 32 or 64.
        bits: u32,
        /// Big-endian.
        be: bool,
    },
    /// NUL-terminated string (slot: bit position of its first byte), in code units of
    /// `unit` bytes (1: UTF-8/ASCII; 2: UTF-16; 4: UTF-32).
    Str {
        /// Bytes per code unit.
        unit: u32,
        /// Big-endian code units.
        be: bool,
    },
    /// Optional field: `inner` is present when the selector's value is non-zero
    /// (boolean) or falls in `Plan::choices[first..first + count]` (integer).
    Optional {
        /// The selector node.
        selector: NodeId,
        /// The field when present.
        inner: NodeId,
        /// First choice (ranges meaning "present").
        first: u32,
        /// Choice count (0: boolean selector).
        count: u32,
    },
    /// Variable-length (LEB128) integer, byte-aligned.
    VarInt {
        /// Signed (sign-extended).
        signed: bool,
        /// Special meaning.
        role: Option<Role>,
    },
    /// Structure: members are `Plan::members[first..first + count]`.
    Struct {
        /// Alignment in bits.
        align: u32,
        /// First member.
        first: u32,
        /// Member count.
        count: u32,
    },
    /// Variant: choices are `Plan::choices[first..first + count]`, options (by name)
    /// `Plan::members[opts..opts + nopts]`.
    Variant {
        /// The tag node (an enumeration decoded earlier).
        tag: NodeId,
        /// First choice.
        first: u32,
        /// Choice count.
        count: u32,
        /// First option.
        opts: u32,
        /// Option count.
        nopts: u32,
    },
    /// Static array; `text` when its elements are 8-bit characters (shown as a string).
    Array {
        /// Alignment in bits.
        align: u32,
        /// Element.
        elem: NodeId,
        /// Length.
        len: u64,
        /// Array of characters.
        text: bool,
    },
    /// Sequence whose length is the value of node `len`.
    Seq {
        /// Alignment in bits.
        align: u32,
        /// Element.
        elem: NodeId,
        /// Length node.
        len: NodeId,
        /// Sequence of characters.
        text: bool,
    },
}

/// A structure member.
#[derive(Debug, Clone)]
pub struct Member {
    /// Name.
    pub name: Box<str>,
    /// Node.
    pub node: NodeId,
}

/// A variant choice: tag values `lo..=hi` select `node`.
#[derive(Debug, Clone)]
pub struct Choice {
    /// Lowest tag value.
    pub lo: i128,
    /// Highest tag value.
    pub hi: i128,
    /// Selected option.
    pub node: NodeId,
}

/// How the decoder passes over one scope of an event.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum ScopeStep {
    /// The event has no such scope.
    #[default]
    Absent,
    /// Fixed layout nobody needs slots of: align, then skip `bits`.
    Skip {
        /// Alignment in bits.
        align: u32,
        /// Size in bits.
        bits: u64,
    },
    /// Decode through the interpreter.
    Decode(NodeId),
}

/// A compiled event class.
#[derive(Debug, Clone)]
pub struct EventPlan {
    /// Id within the stream class.
    pub id: u64,
    /// Name.
    pub name: Box<str>,
    /// Specific context root.
    pub context: Option<NodeId>,
    /// Payload root.
    pub payload: Option<NodeId>,
    /// Steps for the common context, the specific context and the payload.
    pub steps: [ScopeStep; 3],
    /// When every scope present is skipped: the three scopes as one skip.
    pub skip_all: Option<SkipChain>,
    /// Per scope decoded through the interpreter: how to pass over it without writing
    /// slots, when its fields are plain fixed-size fields and byte strings (see
    /// [`SkimOp`]). Used by loops that only count or pass over events.
    pub skim: [Option<Box<[SkimOp]>>; 3],
    /// Per scope decoded through the interpreter: how to decode it into the slots
    /// without walking its tree, when it holds only structures, integers without a
    /// role or clock, and byte strings (see [`FlatOp`]). The general path of events of
    /// variable size (`openat` and its path, say) takes this.
    pub flat: [Option<Box<[FlatOp]>>; 3],
}

/// A node's step in a list of steps ([`Plan::ops_of`]): a leaf's, or a structure's,
/// its members' following.
enum OpAt<T> {
    Leaf(T),
    Members(T),
}

/// One step of decoding a scope of plain fields into the decoder's slots, as the
/// interpreter would (the same slots written with the same values, the same errors at
/// the same positions).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FlatOp {
    /// Align to `align` bits (a structure's start).
    Align(u32),
    /// Integer node `node`: its slot gets its value (sign-extended when signed).
    Int {
        /// The node.
        node: NodeId,
        /// Alignment in bits.
        align: u32,
        /// Size in bits.
        bits: u32,
        /// Signed.
        signed: bool,
        /// Big-endian.
        be: bool,
    },
    /// Byte string node `node`: its slot gets its start.
    CStr(NodeId),
}

/// One step of passing over a scope by sizes alone.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SkimOp {
    /// Align to `align` bits, then skip `bits` (bounds checked).
    Fixed {
        /// Alignment in bits.
        align: u32,
        /// Size in bits.
        bits: u64,
    },
    /// Align to a byte, then skip a NUL-terminated byte string.
    CStr,
}

/// The scopes of an event passed over by one skip: every scope present is a
/// [`ScopeStep::Skip`] whose alignment divides the first one's, so that their offsets
/// from the first scope's aligned start do not depend on where the event lies.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SkipChain {
    /// Alignment of the first scope present (bits).
    pub align: u32,
    /// Offset of each scope's aligned start from the first scope's (absent scopes: the
    /// offset where they would start).
    pub starts: [u64; 3],
    /// Bits from the first scope's aligned start to the end of the last one.
    pub bits: u64,
}

impl SkipChain {
    /// The chain of `steps`, if they form one.
    fn of(steps: &[ScopeStep; 3]) -> Option<SkipChain> {
        let mut chain: Option<SkipChain> = None;
        let mut starts = [0u64; 3];
        for (k, step) in steps.iter().enumerate() {
            match *step {
                ScopeStep::Absent => starts[k] = chain.map_or(0, |c| c.bits),
                ScopeStep::Decode(_) => return None,
                ScopeStep::Skip { align, bits } => match chain.as_mut() {
                    None => {
                        starts[k] = 0;
                        chain = Some(SkipChain { align, starts, bits });
                    }
                    Some(c) => {
                        if align > c.align || c.align % align.max(1) != 0 {
                            return None;
                        }
                        let at = align_up(c.bits, align.max(1) as u64);
                        starts[k] = at;
                        c.bits = at + bits;
                    }
                },
            }
        }
        let mut c = chain.unwrap_or(SkipChain { align: 1, starts, bits: 0 });
        c.starts = starts;
        Some(c)
    }
}

/// A compiled stream class.
#[derive(Debug, Clone)]
pub struct StreamPlan {
    /// Stream class id.
    pub id: u64,
    /// Position of this plan in [`Plan::streams`] (lets users keep per-stream-class
    /// tables indexed directly).
    pub index: usize,
    /// Packet context root.
    pub packet_context: Option<NodeId>,
    /// Event header root.
    pub event_header: Option<NodeId>,
    /// Event common context root.
    pub common_context: Option<NodeId>,
    /// Event classes.
    pub events: Vec<EventPlan>,
    /// Index into `events` by event id, when ids are dense enough.
    by_id: Vec<u32>,
    /// Index of the default clock in the trace class's clocks.
    pub clock: Option<usize>,
    /// A compiled form of the event header when it has LTTng's shape.
    pub fast_header: Option<FastHeader>,
    /// Per event class (by index in `events`): its scopes' size when they form one
    /// [`SkipChain`] of whole bytes ([`FixedSize::NONE`] otherwise). With
    /// `fast_header`, such an event is read by word loads alone
    /// ([`FastHeader::peek`]).
    pub fixed: Vec<FixedSize>,
    /// By event id (as `by_id`): `class index << 32 | bytes` of the classes of `fixed`
    /// whose scopes need no alignment beyond a byte (and whose index is below 2^31:
    /// see [`TAKE`]), else `u64::MAX`: what the reader's skimming loop reads per event.
    pub fixed_by_id: Vec<u64>,
    /// By event id: what the skimming loop passes over an event by, when it is not
    /// wanted: `fixed_by_id`'s entry for a class of fixed size; for a class whose scopes
    /// are fields of whole bytes (aligned to at most a byte) around one NUL-terminated
    /// string ([`StringSkim`]), `class index << 32 |` [`StringSkim::entry`]; else
    /// `u64::MAX`.
    pub skim_by_id: Vec<u64>,
}

/// The flag of a skimming table's entry ([`crate::stream::Wanted`]) for a wanted class
/// of fixed size: its [`StreamPlan::fixed_by_id`] entry with this bit set, so that one
/// look-up tells the skimming loop to pass an event over or to stop at it. (Entries
/// keep class indexes below 2^31: passed ones never have the bit; `u64::MAX` has it.)
pub const TAKE: u64 = 1 << 63;

/// The layout of an event class the skimming loop passes over by its sizes and one
/// search for a NUL: `prefix` bytes, a NUL-terminated string, then `suffix` bytes
/// (from the end of the header, every field aligned to at most a byte). Kernel classes
/// such as `irq_handler_entry` (`irq`, then the handler's `name`) have it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct StringSkim {
    /// Bytes before the string.
    pub prefix: u16,
    /// Bytes after the string's NUL.
    pub suffix: u16,
}

impl StringSkim {
    /// The flag of a [`StreamPlan::skim_by_id`] entry of this form (in its low word).
    pub const FLAG: u64 = 1 << 31;

    /// The low word of its [`StreamPlan::skim_by_id`] entry: [`StringSkim::FLAG`], the
    /// suffix's size in bits 16 to 30 and the prefix's in bits 0 to 15.
    pub fn entry(self) -> u64 {
        Self::FLAG | u64::from(self.suffix & 0x7fff) << 16 | u64::from(self.prefix)
    }

    /// The layout of an entry's low word `low` (which has [`StringSkim::FLAG`]).
    #[inline(always)]
    pub fn of_entry(low: u64) -> StringSkim {
        StringSkim { prefix: low as u16, suffix: (low >> 16) as u16 & 0x7fff }
    }

    /// The layout of event class `ev`, if it has this form.
    fn of(ev: &EventPlan) -> Option<StringSkim> {
        let (mut sizes, mut strings) = ([0u64; 2], 0usize);
        for (step, skim) in ev.steps.iter().zip(&ev.skim) {
            let ops: &[SkimOp] = match step {
                ScopeStep::Absent => &[],
                ScopeStep::Skip { align, bits } => &[SkimOp::Fixed { align: *align, bits: *bits }],
                ScopeStep::Decode(_) => skim.as_deref()?,
            };
            for op in ops {
                match *op {
                    SkimOp::Fixed { align, bits } if align <= 8 && bits % 8 == 0 => sizes[strings.min(1)] += bits / 8,
                    SkimOp::CStr => strings += 1,
                    SkimOp::Fixed { .. } => return None,
                }
            }
        }
        let prefix = u16::try_from(sizes[0]).ok()?;
        let suffix = u16::try_from(sizes[1]).ok().filter(|s| *s <= 0x7fff)?;
        (strings == 1).then_some(StringSkim { prefix, suffix })
    }
}

/// The scopes of an event class passed over as one [`SkipChain`] of whole bytes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FixedSize {
    /// Alignment of the first scope present, in bits.
    pub align: u32,
    /// Bits of all the scopes (`u32::MAX`: the class has no such layout).
    pub bits: u32,
    /// Offset of each scope's start from the first one's ([`SkipChain::starts`]).
    pub starts: [u32; 3],
}

impl FixedSize {
    /// Not a fixed-size class.
    pub const NONE: FixedSize = FixedSize { align: 1, bits: u32::MAX, starts: [0; 3] };

    /// The fixed size of an event class with chain `chain`.
    fn of(chain: Option<&SkipChain>) -> FixedSize {
        match chain {
            Some(c) if c.bits % 8 == 0 && c.bits < u32::MAX as u64 && c.align.is_power_of_two() => {
                FixedSize { align: c.align, bits: c.bits as u32, starts: c.starts.map(|s| s as u32) }
            }
            _ => FixedSize::NONE,
        }
    }

    /// Whether the class has a fixed size.
    #[inline(always)]
    pub fn is_fixed(&self) -> bool {
        self.bits != u32::MAX
    }
}

/// An integer at a fixed bit offset of the event header.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FixedInt {
    /// Node (slot) of the field.
    pub node: NodeId,
    /// Bit offset from the header's aligned start.
    pub offset: u64,
    /// Size in bits.
    pub bits: u32,
}

/// LTTng's event header (compact: 5-bit id, 27-bit timestamp; large: 16-bit id,
/// 32-bit timestamp; each with an extended form holding a 32-bit id and a 64-bit
/// timestamp), recognised from the plan's structure and decoded without interpretation.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FastHeader {
    /// Alignment of the header structure.
    pub align: u32,
    /// Big-endian integers.
    pub be: bool,
    /// The id (enumeration) field.
    pub id: FixedInt,
    /// Tag values `lo..=hi` select the short form.
    pub short_range: (u64, u64),
    /// Timestamp of the short form.
    pub short_ts: FixedInt,
    /// Tag values selecting the extended form.
    pub ext_range: (u64, u64),
    /// Id of the extended form.
    pub ext_id: FixedInt,
    /// Timestamp of the extended form.
    pub ext_ts: FixedInt,
    /// When the short form (id and timestamp) lies in the first 64 bits of a
    /// byte-aligned header: where to find both in one 8-byte load.
    pub short_word: Option<ShortWord>,
    /// When the extended form's id and timestamp start on bytes (and the form ends on
    /// one): where to find each in one 8-byte load.
    pub ext_words: Option<ExtWords>,
    /// Which layout this is.
    pub layout: HeaderLayout,
}

/// What the skimming loop reads of a header's short form: where its id and timestamp
/// lie in its first 64 bits, the tag values that select it, the header's alignment.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ShortForm {
    /// Where the id and the timestamp lie.
    pub word: ShortWord,
    /// Tag values selecting the short form.
    pub range: (u64, u64),
    /// Alignment of the header, in bits.
    pub align: u32,
}

impl ShortForm {
    /// LTTng's compact header, little-endian: a 5-bit id (31: extended) and a 27-bit
    /// timestamp, byte-aligned.
    pub const LTTNG_COMPACT_LE: ShortForm = ShortForm { word: ShortWord { id: (0, 31), ts: (5, (1 << 27) - 1), bits: 32 }, range: (0, 30), align: 8 };

    /// LTTng's large header, little-endian: a 16-bit id (65535: extended) and a 32-bit
    /// timestamp, byte-aligned.
    pub const LTTNG_LARGE_LE: ShortForm = ShortForm { word: ShortWord { id: (0, 0xffff), ts: (16, 0xffff_ffff), bits: 48 }, range: (0, 65534), align: 8 };
}

/// What the skimming loop reads of a header's extended form: where its id and
/// timestamp lie, and the tag values that select it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ExtForm {
    /// Where the id and the timestamp lie.
    pub words: ExtWords,
    /// Tag values selecting the extended form.
    pub range: (u64, u64),
}

impl ExtForm {
    /// LTTng's compact header's extended form, little-endian: tag 31, then a 32-bit id
    /// and a 64-bit timestamp from the second byte on (13 bytes in all).
    pub const LTTNG_COMPACT_LE: ExtForm = ExtForm { words: ExtWords { id: (1, 0, 0xffff_ffff), ts: (5, 0, u64::MAX), bits: 104 }, range: (31, 31) };

    /// LTTng's large header's extended form, little-endian: tag 65535, then a 32-bit id
    /// and a 64-bit timestamp from the third byte on (14 bytes in all).
    pub const LTTNG_LARGE_LE: ExtForm = ExtForm { words: ExtWords { id: (2, 0, 0xffff_ffff), ts: (6, 0, u64::MAX), bits: 112 }, range: (65535, 65535) };
}

impl FastHeader {
    /// The extended form as the skimming loop takes it, when word loads read it.
    #[inline(always)]
    pub fn ext_form(&self) -> Option<ExtForm> {
        Some(ExtForm { words: self.ext_words?, range: self.ext_range })
    }

    /// The short form as the word-load readers take it, when word loads read it.
    #[inline(always)]
    pub fn short_form(&self) -> Option<ShortForm> {
        Some(ShortForm { word: self.short_word?, range: self.short_range, align: self.align })
    }
}

/// Which header a [`FastHeader`] is, for the loops compiled with a layout's constants.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum HeaderLayout {
    /// [`ShortForm::LTTNG_COMPACT_LE`] and [`ExtForm::LTTNG_COMPACT_LE`].
    LttngCompactLe,
    /// [`ShortForm::LTTNG_LARGE_LE`] and [`ExtForm::LTTNG_LARGE_LE`].
    LttngLargeLe,
    /// Any other (read through the header's fields).
    Other,
}

/// The extended form of an LTTng event header as two byte-aligned integers, each read
/// with one 8-byte load in the header's byte order.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ExtWords {
    /// Byte offset from the header's start, right shift and mask of the id.
    pub id: (usize, u32, u64),
    /// Byte offset from the header's start, right shift and mask of the timestamp.
    pub ts: (usize, u32, u64),
    /// Bits of the extended form.
    pub bits: u64,
}

impl ExtWords {
    fn of(h: &FastHeader) -> Option<ExtWords> {
        let field = |f: &FixedInt| {
            if !f.offset.is_multiple_of(8) || f.bits == 0 || f.bits > 64 {
                return None;
            }
            let shift = if h.be { 64 - f.bits } else { 0 };
            Some(((f.offset / 8) as usize, shift, low_mask(f.bits)))
        };
        if !h.align.is_multiple_of(8) {
            return None;
        }
        // As the bit-level path: the form ends with its timestamp.
        let end = h.ext_ts.offset + h.ext_ts.bits as u64;
        if h.ext_id.offset + h.ext_id.bits as u64 > end || !end.is_multiple_of(8) {
            return None;
        }
        Some(ExtWords { id: field(&h.ext_id)?, ts: field(&h.ext_ts)?, bits: end })
    }
}

/// The short form of an LTTng event header as bit fields of one 64-bit word, loaded in
/// the header's byte order from its first byte.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ShortWord {
    /// Right shift and mask of the id.
    pub id: (u32, u64),
    /// Right shift and mask of the timestamp.
    pub ts: (u32, u64),
    /// Bits of the short form.
    pub bits: u64,
}

/// The mask of the low `bits` bits of a `u64`.
#[inline]
pub(crate) fn low_mask(bits: u32) -> u64 {
    if bits >= 64 { u64::MAX } else { (1u64 << bits) - 1 }
}

impl ShortWord {
    fn of(h: &FastHeader) -> Option<ShortWord> {
        let end = h.short_ts.offset + h.short_ts.bits as u64;
        if !h.align.is_multiple_of(8) || end > 64 {
            return None;
        }
        let field = |f: &FixedInt| {
            let shift = if h.be { 64 - f.offset as u32 - f.bits } else { f.offset as u32 };
            (shift, low_mask(f.bits))
        };
        Some(ShortWord { id: field(&h.id), ts: field(&h.short_ts), bits: end })
    }
}

impl StreamPlan {
    /// The event class with id `id`.
    #[inline]
    pub fn event(&self, id: u64) -> Option<&EventPlan> {
        self.event_index(id).map(|i| &self.events[i])
    }

    /// The index in `events` of the event class with id `id`.
    #[inline]
    pub fn event_index(&self, id: u64) -> Option<usize> {
        if let Some(&i) = self.by_id.get(id as usize) {
            return (i != u32::MAX).then_some(i as usize);
        }
        if self.by_id.is_empty() {
            return self.events.iter().position(|e| e.id == id);
        }
        None
    }
}

/// The compiled decoding plan of a whole trace class.
#[derive(Debug, Clone)]
pub struct Plan {
    /// All nodes.
    pub nodes: Vec<Node>,
    /// All structure members.
    pub members: Vec<Member>,
    /// All variant choices.
    pub choices: Vec<Choice>,
    /// Enumeration mappings by `enum_idx`.
    pub enums: Vec<Vec<EnumMapping>>,
    /// Packet header root.
    pub packet_header: Option<NodeId>,
    /// Stream classes.
    pub streams: Vec<StreamPlan>,
    /// Size in bits of each node when constant (starting at its own alignment).
    pub fixed_size: Vec<Option<u64>>,
    /// Whether decoding may skip a node: constant size, and nothing inside it is a
    /// role, a clock, a sequence length or a variant tag.
    pub skippable: Vec<bool>,
    /// Selector ranges of CTF 2 variants, until their tag is resolved (compile time).
    variant_ranges: Vec<(NodeId, OptionRanges)>,
}

/// An error compiling a plan (a reference that cannot be resolved).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PlanError(pub String);

impl Plan {
    /// Compiles a trace class.
    pub fn compile(tc: &TraceClass) -> Result<Plan, PlanError> {
        let mut p = Plan {
            nodes: Vec::new(),
            members: Vec::new(),
            choices: Vec::new(),
            enums: Vec::new(),
            packet_header: None,
            streams: Vec::new(),
            fixed_size: Vec::new(),
            skippable: Vec::new(),
            variant_ranges: Vec::new(),
        };
        let mut roots: Vec<(Scope, NodeId)> = Vec::new();
        if let Some(h) = &tc.packet_header {
            let id = p.add(h, Scope::PacketHeader, &roots)?;
            p.packet_header = Some(id);
            roots.push((Scope::PacketHeader, id));
        }
        for sc in &tc.streams {
            let mut roots = roots.clone();
            let root = |p: &mut Plan, fc: &Option<FieldClass>, scope, roots: &mut Vec<(Scope, NodeId)>| -> Result<Option<NodeId>, PlanError> {
                let Some(fc) = fc else { return Ok(None) };
                let id = p.add(fc, scope, roots)?;
                roots.push((scope, id));
                Ok(Some(id))
            };
            let packet_context = root(&mut p, &sc.packet_context, Scope::PacketContext, &mut roots)?;
            let event_header = root(&mut p, &sc.event_header, Scope::EventHeader, &mut roots)?;
            let common_context = root(&mut p, &sc.event_common_context, Scope::EventCommonContext, &mut roots)?;
            let mut events = Vec::new();
            for ec in &sc.event_classes {
                let mut roots = roots.clone();
                let context = root(&mut p, &ec.context, Scope::EventSpecificContext, &mut roots)?;
                let payload = root(&mut p, &ec.payload, Scope::EventPayload, &mut roots)?;
                events.push(EventPlan { id: ec.id, name: ec.name.as_str().into(), context, payload, steps: [ScopeStep::Absent; 3], skip_all: None, skim: Default::default(), flat: Default::default() });
            }
            let max = events.iter().map(|e| e.id).max().unwrap_or(0);
            let by_id = if max < 1 << 16 {
                let mut v = vec![u32::MAX; max as usize + 1];
                for (i, e) in events.iter().enumerate() {
                    v[e.id as usize] = i as u32;
                }
                v
            } else {
                Vec::new()
            };
            let clock = sc.default_clock.as_ref().and_then(|n| tc.clocks.iter().position(|c| &c.name == n));
            p.streams.push(StreamPlan { id: sc.id, index: p.streams.len(), packet_context, event_header, common_context, events, by_id, clock, fast_header: None, fixed: Vec::new(), fixed_by_id: Vec::new(), skim_by_id: Vec::new() });
        }
        p.compute_layouts();
        for si in 0..p.streams.len() {
            let common = p.streams[si].common_context;
            for ei in 0..p.streams[si].events.len() {
                let ev = &p.streams[si].events[ei];
                let roots = [common, ev.context, ev.payload];
                let steps = roots.map(|r| p.scope_step(r));
                p.streams[si].events[ei].steps = steps;
                p.streams[si].events[ei].skip_all = SkipChain::of(&steps);
                // The scopes decoded through the interpreter: how to pass over each, and
                // how to decode it flat.
                let decoded = |k: usize| roots[k].filter(|_| matches!(steps[k], ScopeStep::Decode(_)));
                let skim = [0, 1, 2].map(|k| decoded(k).and_then(|r| p.skim_ops(r)));
                let flat = [0, 1, 2].map(|k| decoded(k).and_then(|r| p.flat_ops(r)));
                let e = &mut p.streams[si].events[ei];
                (e.skim, e.flat) = (skim, flat);
            }
            p.streams[si].fixed = p.streams[si].events.iter().map(|e| FixedSize::of(e.skip_all.as_ref())).collect();
            let sp = &p.streams[si];
            // Class index `i` as an entry's high word, when below 2^31 (see `TAKE`).
            let high_word = |i: u32| Some(u64::from(i) << 32).filter(|h| *h < TAKE);
            let fixed_by_id = sp
                .by_id
                .iter()
                .map(|&i| match (sp.fixed.get(i as usize), high_word(i)) {
                    (Some(f), Some(h)) if f.is_fixed() && f.align <= 8 => h | u64::from(f.bits / 8),
                    _ => u64::MAX,
                })
                .collect();
            let skim_by_id = sp
                .by_id
                .iter()
                .zip(&fixed_by_id)
                .map(|(&i, &f)| match (sp.events.get(i as usize).and_then(StringSkim::of), high_word(i)) {
                    (Some(s), Some(h)) if f == u64::MAX => h | s.entry(),
                    _ => f,
                })
                .collect();
            p.streams[si].fixed_by_id = fixed_by_id;
            p.streams[si].skim_by_id = skim_by_id;
        }
        // TRACECUBE_GENERIC_HEADERS=1 disables the compiled header (to measure it).
        if std::env::var_os("TRACECUBE_GENERIC_HEADERS").is_none() {
            for i in 0..p.streams.len() {
                p.streams[i].fast_header = p.streams[i].event_header.and_then(|h| p.recognize_lttng_header(h));
            }
        }
        Ok(p)
    }

    /// The [`SkimOp`]s passing over node `root`, when it holds only plain fixed-size
    /// fields (no role, clock or reference: see `skippable`) and byte strings.
    fn skim_ops(&self, root: NodeId) -> Option<Box<[SkimOp]>> {
        self.ops_of(root, |id, node| {
            let i = id.0 as usize;
            Some(match *node {
                _ if self.skippable[i] => OpAt::Leaf(SkimOp::Fixed { align: node_align(node), bits: self.fixed_size[i]? }),
                Node::Str { unit: 1, .. } => OpAt::Leaf(SkimOp::CStr),
                Node::Struct { .. } => OpAt::Members(SkimOp::Fixed { align: node_align(node), bits: 0 }),
                _ => return None,
            })
        })
    }

    /// The [`FlatOp`]s decoding node `root`, when it holds only structures, integers
    /// without a role or clock, and byte strings.
    fn flat_ops(&self, root: NodeId) -> Option<Box<[FlatOp]>> {
        self.ops_of(root, |id, node| {
            Some(match *node {
                Node::Int { align, bits, signed, be, role: None, clock: false, .. } => OpAt::Leaf(FlatOp::Int { node: id, align, bits, signed, be }),
                Node::Str { unit: 1, .. } => OpAt::Leaf(FlatOp::CStr(id)),
                Node::Struct { .. } => OpAt::Members(FlatOp::Align(node_align(node))),
                _ => return None,
            })
        })
    }

    /// Node `root` as a list of steps, in field order: `at` gives each node's step, a
    /// structure's followed by its members' (`None` for a node it does not take: then
    /// the whole list is `None`).
    fn ops_of<T>(&self, root: NodeId, at: impl Fn(NodeId, &Node) -> Option<OpAt<T>>) -> Option<Box<[T]>> {
        fn walk<T>(p: &Plan, id: NodeId, at: &impl Fn(NodeId, &Node) -> Option<OpAt<T>>, out: &mut Vec<T>) -> Option<()> {
            let node = p.node(id);
            match at(id, node)? {
                OpAt::Leaf(op) => out.push(op),
                OpAt::Members(op) => {
                    let Node::Struct { first, count, .. } = *node else { return None };
                    out.push(op);
                    for m in p.struct_members(first, count) {
                        walk(p, m.node, at, out)?;
                    }
                }
            }
            Some(())
        }
        let mut out = Vec::new();
        walk(self, root, &at, &mut out)?;
        Some(out.into_boxed_slice())
    }

    fn scope_step(&self, root: Option<NodeId>) -> ScopeStep {
        match root {
            None => ScopeStep::Absent,
            Some(r) if self.skippable[r.0 as usize] => {
                ScopeStep::Skip { align: node_align(self.node(r)), bits: self.fixed_size[r.0 as usize].unwrap_or(0) }
            }
            Some(r) => ScopeStep::Decode(r),
        }
    }

    /// Recognises `struct { enum id; variant <id> { struct { ts } short; struct { id; ts }
    /// extended; } v; }` with unsigned integers of one byte order, timestamps mapped to
    /// the clock, ids carrying the event-class-id role.
    fn recognize_lttng_header(&self, h: NodeId) -> Option<FastHeader> {
        let Node::Struct { align, first, count: 2, .. } = *self.node(h) else { return None };
        let m = self.struct_members(first, 2);
        let (id, var) = (m[0].node, m[1].node);
        let Node::Int { bits: id_bits, signed: false, be, role: Some(Role::EventClassId), clock: false, enum_idx: Some(_), align: id_align, .. } = *self.node(id) else { return None };
        let Node::Variant { tag, first: c0, count: 2, .. } = *self.node(var) else { return None };
        if tag != id || id_align > align {
            return None;
        }
        let choices = &self.choices[c0 as usize..c0 as usize + 2];
        let int = |n: NodeId, want_role: Option<Role>, want_clock: bool, at: u64| -> Option<FixedInt> {
            match *self.node(n) {
                Node::Int { bits, signed: false, be: b, role, clock, align, enum_idx: None, .. } if b == be && role == want_role && clock == want_clock => {
                    Some(FixedInt { node: n, offset: align_up(at, align as u64), bits })
                }
                _ => None,
            }
        };
        // Offsets are constant only when no alignment inside exceeds the header's own
        // (alignment is relative to the packet; a variant adds none of its own).
        let option = |c: &Choice| -> Option<(Vec<NodeId>, u64)> {
            let Node::Struct { first, count, align: opt_align } = *self.node(c.node) else { return None };
            if opt_align > align {
                return None;
            }
            let start = align_up(id_bits as u64, opt_align as u64);
            Some((self.struct_members(first, count).iter().map(|m| m.node).collect(), start))
        };
        let (mut short, mut ext) = (None, None);
        for c in choices {
            let (members, start) = option(c)?;
            let range = (u64::try_from(c.lo).ok()?, u64::try_from(c.hi).ok()?);
            match members.as_slice() {
                [ts] => short = Some((range, int(*ts, None, true, start)?)),
                [eid, ts] => {
                    let eid = int(*eid, Some(Role::EventClassId), false, start)?;
                    let ts = int(*ts, None, true, eid.offset + eid.bits as u64)?;
                    ext = Some((range, eid, ts));
                }
                _ => return None,
            }
        }
        let ((short_range, short_ts), (ext_range, ext_id, ext_ts)) = (short?, ext?);
        let mut h = FastHeader { align, be, id: FixedInt { node: id, offset: 0, bits: id_bits }, short_range, short_ts, ext_range, ext_id, ext_ts, short_word: None, ext_words: None, layout: HeaderLayout::Other };
        h.short_word = ShortWord::of(&h);
        h.ext_words = ExtWords::of(&h);
        if let (Some(short), Some(ext), false) = (h.short_form(), h.ext_form(), h.be) {
            if (short, ext) == (ShortForm::LTTNG_COMPACT_LE, ExtForm::LTTNG_COMPACT_LE) {
                h.layout = HeaderLayout::LttngCompactLe;
            } else if (short, ext) == (ShortForm::LTTNG_LARGE_LE, ExtForm::LTTNG_LARGE_LE) {
                h.layout = HeaderLayout::LttngLargeLe;
            }
        }
        Some(h)
    }

    /// Fills `fixed_size` and `skippable`. Children always precede their parent in the
    /// arena, so one pass in order sees every child first.
    fn compute_layouts(&mut self) {
        let n = self.nodes.len();
        let mut referenced = vec![false; n];
        for node in &self.nodes {
            match *node {
                Node::Seq { len, .. } => referenced[len.0 as usize] = true,
                Node::Variant { tag, .. } => referenced[tag.0 as usize] = true,
                Node::Optional { selector, .. } => referenced[selector.0 as usize] = true,
                _ => {}
            }
        }
        self.fixed_size = vec![None; n];
        self.skippable = vec![false; n];
        #[allow(clippy::needless_range_loop)] // children are read through earlier indexes
        for i in 0..n {
            let (size, plain) = match self.nodes[i] {
                Node::Int { bits, role, clock, .. } => (Some(bits as u64), role.is_none() && !clock),
                Node::Float { bits, .. } => (Some(bits as u64), true),
                Node::Str { .. } | Node::Seq { .. } | Node::Variant { .. } | Node::VarInt { .. } | Node::Optional { .. } => (None, false),
                Node::Array { elem, len, .. } => {
                    let e = elem.0 as usize;
                    let stride = self.fixed_size[e].map(|sz| align_up(sz, node_align(&self.nodes[e]) as u64));
                    let size = match (stride, self.fixed_size[e]) {
                        (_, _) if len == 0 => Some(0),
                        (Some(st), Some(sz)) => st.checked_mul(len - 1).and_then(|x| x.checked_add(sz)),
                        _ => None,
                    };
                    (size, self.skippable[e])
                }
                Node::Struct { first, count, .. } => {
                    let mut off = Some(0u64);
                    let mut plain = true;
                    for m in &self.members[first as usize..(first + count) as usize] {
                        let c = m.node.0 as usize;
                        plain &= self.skippable[c];
                        off = match (off, self.fixed_size[c]) {
                            (Some(o), Some(sz)) => Some(align_up(o, node_align(&self.nodes[c]) as u64) + sz),
                            _ => None,
                        };
                    }
                    (off, plain)
                }
            };
            self.fixed_size[i] = size;
            self.skippable[i] = size.is_some() && plain && !referenced[i];
        }
    }

    /// Bit offset of the node at `path` below a fixed-layout `root`, relative to the
    /// root's aligned start (arrays: their last element, like slots hold).
    fn fixed_offset(&self, root: NodeId, path: &[&str]) -> Option<u64> {
        let mut cur = root;
        let mut off = 0u64;
        for name in path {
            loop {
                match *self.node(cur) {
                    Node::Array { elem, len, .. } if len > 0 => {
                        let stride = align_up(self.fixed_size[elem.0 as usize]?, node_align(self.node(elem)) as u64);
                        off = align_up(off, node_align(self.node(cur)) as u64) + stride * (len - 1);
                        cur = elem;
                    }
                    Node::Array { .. } => return None,
                    _ => break,
                }
            }
            let Node::Struct { first, count, .. } = *self.node(cur) else { return None };
            off = align_up(off, node_align(self.node(cur)) as u64);
            let mut found = None;
            for m in self.struct_members(first, count) {
                off = align_up(off, node_align(self.node(m.node)) as u64);
                if &*m.name == *name {
                    found = Some(m.node);
                    break;
                }
                off += self.fixed_size[m.node.0 as usize]?;
            }
            cur = found?;
        }
        Some(align_up(off, node_align(self.node(cur)) as u64))
    }

    /// A handle on the field at `path` for events of class `ev` in stream class `sp`:
    /// searched in the payload, the specific context, the common context, the event
    /// header, the packet context and the packet header, in that order.
    pub fn event_field(&self, sp: &StreamPlan, ev: &EventPlan, path: &[&str]) -> Option<FieldHandle> {
        let event = [(ev.payload, 2u8), (ev.context, 1), (sp.common_context, 0), (sp.event_header, 3)];
        let packet = [sp.packet_context, self.packet_header];
        for (root, scope) in event {
            let Some(root) = root else { continue };
            if let Some(node) = self.find(root, path) {
                let lazy = if scope < 3 && self.skippable[root.0 as usize] {
                    let offset = self.fixed_offset(root, path)?;
                    let int = match *self.node(node) {
                        Node::Int { bits, signed, be, .. } => Some(LazyInt { bits: bits as u8, signed, be }),
                        _ => None,
                    };
                    let bytes = match *self.node(node) {
                        Node::Array { len, text: true, elem, .. } if offset % 8 == 0 && matches!(*self.node(elem), Node::Int { bits: 8, .. }) => u16::try_from(len).unwrap_or(0),
                        _ => 0,
                    };
                    u32::try_from(offset).ok().map(|offset| LazyField { scope, offset, int, bytes })
                } else {
                    None
                };
                return Some(FieldHandle { node, packet_level: false, lazy });
            }
        }
        for root in packet.into_iter().flatten() {
            if let Some(node) = self.find(root, path) {
                return Some(FieldHandle { node, packet_level: true, lazy: None });
            }
        }
        None
    }

    /// The stream class with id `id`.
    pub fn stream(&self, id: u64) -> Option<&StreamPlan> {
        self.streams.iter().find(|s| s.id == id)
    }

    /// The node of `id`.
    #[inline]
    pub fn node(&self, id: NodeId) -> &Node {
        &self.nodes[id.0 as usize]
    }

    /// Members of a structure node.
    pub fn struct_members(&self, first: u32, count: u32) -> &[Member] {
        &self.members[first as usize..(first + count) as usize]
    }

    /// Finds the node at `path` (member names) below `root`; arrays are crossed.
    pub fn find(&self, root: NodeId, path: &[&str]) -> Option<NodeId> {
        let mut cur = root;
        for name in path {
            while let Node::Array { elem, .. } | Node::Seq { elem, .. } = self.node(cur) {
                cur = *elem;
            }
            cur = match self.node(cur) {
                Node::Struct { first, count, .. } => self.struct_members(*first, *count).iter().find(|m| &*m.name == *name)?.node,
                Node::Variant { opts, nopts, .. } => self.struct_members(*opts, *nopts).iter().find(|m| &*m.name == *name)?.node,
                _ => return None,
            };
        }
        Some(cur)
    }

    fn push(&mut self, n: Node) -> NodeId {
        self.nodes.push(n);
        NodeId(self.nodes.len() as u32 - 1)
    }

    fn add(&mut self, fc: &FieldClass, scope: Scope, roots: &[(Scope, NodeId)]) -> Result<NodeId, PlanError> {
        // Paths are resolved against roots compiled so far plus the current root, whose
        // node id is not known until it is pushed; so compile, then resolve references.
        let mut refs = Vec::new();
        let id = self.add_node(fc, &mut refs)?;
        let mut all_roots = roots.to_vec();
        all_roots.push((scope, id));
        for (node, path, is_tag) in refs {
            let root = all_roots.iter().find(|(s, _)| *s == path.scope).map(|(_, r)| *r).ok_or_else(|| {
                PlanError(format!("field reference into scope {:?}, which this stream does not have", path.scope))
            })?;
            let names: Vec<&str> = path.path.iter().map(|s| s.as_str()).collect();
            let target = self.find(root, &names).ok_or_else(|| PlanError(format!("cannot resolve field reference `{}`", path.path.join("."))))?;
            if let Node::Optional { selector, .. } = &mut self.nodes[node.0 as usize] {
                *selector = target;
            } else if is_tag {
                self.resolve_variant(node, target)?;
            } else {
                if !matches!(self.nodes[target.0 as usize], Node::Int { signed: false, .. } | Node::VarInt { signed: false, .. }) {
                    return Err(PlanError(format!("sequence length `{}` is not an unsigned integer", path.path.join("."))));
                }
                if let Node::Seq { len, .. } = &mut self.nodes[node.0 as usize] {
                    *len = target;
                }
            }
        }
        Ok(id)
    }

    /// Sets a variant's tag and builds its choices: from the option's selector ranges
    /// (CTF 2), or from the tag's enumeration mappings, where a label selects the option
    /// of the same name (or that name with a leading `_`) (CTF 1.8).
    fn resolve_variant(&mut self, var: NodeId, tag_node: NodeId) -> Result<(), PlanError> {
        let Node::Variant { opts, nopts, .. } = self.nodes[var.0 as usize] else { unreachable!("a variant node") };
        let first = self.choices.len() as u32;
        if let Some(i) = self.variant_ranges.iter().position(|(v, _)| *v == var) {
            if !matches!(self.nodes[tag_node.0 as usize], Node::Int { .. } | Node::VarInt { .. }) {
                return Err(PlanError("variant selector is not an integer".into()));
            }
            let (_, ranges) = self.variant_ranges.swap_remove(i);
            for (k, rs) in ranges.iter().enumerate().take(nopts as usize) {
                let node = self.members[opts as usize + k].node;
                for &(lo, hi) in rs {
                    self.choices.push(Choice { lo, hi, node });
                }
            }
            let count = self.choices.len() as u32 - first;
            self.nodes[var.0 as usize] = Node::Variant { tag: tag_node, first, count, opts, nopts };
            return Ok(());
        }
        let Node::Int { enum_idx: Some(e), .. } = self.nodes[tag_node.0 as usize] else {
            return Err(PlanError("variant tag is not an enumeration".into()));
        };
        for m in &self.enums[e as usize] {
            let options = &self.members[opts as usize..(opts + nopts) as usize];
            let opt = options.iter().find(|o| *o.name == *m.label).or_else(|| options.iter().find(|o| o.name.strip_prefix('_') == Some(&m.label)));
            if let Some(o) = opt {
                self.choices.push(Choice { lo: m.lo, hi: m.hi, node: o.node });
            }
        }
        let count = self.choices.len() as u32 - first;
        self.nodes[var.0 as usize] = Node::Variant { tag: tag_node, first, count, opts, nopts };
        Ok(())
    }

    fn add_node(&mut self, fc: &FieldClass, refs: &mut Vec<(NodeId, FieldPath, bool)>) -> Result<NodeId, PlanError> {
        Ok(match fc {
            FieldClass::Int(i) => self.push(int_node(i, None)),
            FieldClass::Enum(e) => {
                self.enums.push(e.mappings.clone());
                let idx = self.enums.len() as u32 - 1;
                self.push(int_node(&e.int, Some(idx)))
            }
            FieldClass::Float(f) => self.push(Node::Float { align: f.align, bits: if f.mant_dig == 24 { 32 } else { 64 }, be: f.byte_order == ByteOrder::Big }),
            FieldClass::String(sc) => {
                let be = matches!(sc.encoding, Encoding::Utf16Be | Encoding::Utf32Be);
                self.push(Node::Str { unit: sc.encoding.unit_bytes(), be })
            }
            FieldClass::Bool(i) => {
                let mut n = int_node(i, None);
                if let Node::Int { boolean, .. } = &mut n {
                    *boolean = true;
                }
                self.push(n)
            }
            FieldClass::Optional(o) => {
                let inner = self.add_node(&o.fc, refs)?;
                let first = self.choices.len() as u32;
                for &(lo, hi) in o.ranges.iter().flatten() {
                    self.choices.push(Choice { lo, hi, node: inner });
                }
                let count = self.choices.len() as u32 - first;
                let id = self.push(Node::Optional { selector: NodeId(u32::MAX), inner, first, count });
                refs.push((id, o.selector.clone(), true));
                id
            }
            FieldClass::VarInt(v) => self.push(Node::VarInt { signed: v.signed, role: v.role }),
            FieldClass::Struct(s) => {
                let ids = s.members.iter().map(|(_, m)| self.add_node(m, refs)).collect::<Result<Vec<_>, _>>()?;
                let first = self.members.len() as u32;
                for ((name, _), node) in s.members.iter().zip(ids) {
                    self.members.push(Member { name: name.as_str().into(), node });
                }
                self.push(Node::Struct { align: fc.align(), first, count: s.members.len() as u32 })
            }
            FieldClass::Variant(v) => {
                let ids = v.options.iter().map(|(_, m)| self.add_node(m, refs)).collect::<Result<Vec<_>, _>>()?;
                let opts = self.members.len() as u32;
                for ((name, _), node) in v.options.iter().zip(ids) {
                    self.members.push(Member { name: name.as_str().into(), node });
                }
                let id = self.push(Node::Variant { tag: NodeId(u32::MAX), first: 0, count: 0, opts, nopts: v.options.len() as u32 });
                if let Some(r) = &v.selector_ranges {
                    self.variant_ranges.push((id, r.clone()));
                }
                refs.push((id, v.tag.clone(), true));
                id
            }
            FieldClass::Array(a) => {
                let elem = self.add_node(&a.elem, refs)?;
                self.push(Node::Array { align: fc.align(), elem, len: a.len, text: is_char(&a.elem) })
            }
            FieldClass::Sequence(s) => {
                let elem = self.add_node(&s.elem, refs)?;
                let id = self.push(Node::Seq { align: fc.align(), elem, len: NodeId(u32::MAX), text: is_char(&s.elem) });
                refs.push((id, s.length.clone(), false));
                id
            }
        })
    }
}

fn int_node(i: &IntClass, enum_idx: Option<u32>) -> Node {
    Node::Int {
        align: i.align,
        bits: i.size,
        signed: i.signed,
        be: i.byte_order == ByteOrder::Big,
        base: i.base,
        role: i.role,
        clock: i.mapped_clock.is_some(),
        enum_idx,
        boolean: false,
    }
}

fn is_char(fc: &FieldClass) -> bool {
    matches!(fc, FieldClass::Int(i) if i.size == 8 && i.encoding != Encoding::None)
}

/// Per variant option, the tag ranges that select it.
type OptionRanges = Vec<Vec<(i128, i128)>>;

/// Rounds `v` up to a multiple of `a` (a power of two, or 0/1 for none).
#[inline]
pub fn align_up(v: u64, a: u64) -> u64 {
    if a <= 1 { v } else { (v + a - 1) & !(a - 1) }
}
