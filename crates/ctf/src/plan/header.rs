//! LTTng's event header recognised from the plan's structure ([`FastHeader`]) and its
//! forms as bit fields of machine words, for decoding without interpretation.

use crate::ir::Role;

use super::{align_up, Choice, Node, NodeId, Plan};

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
    if bits >= 64 {
        u64::MAX
    } else {
        (1u64 << bits) - 1
    }
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

impl Plan {
    /// Recognises `struct { enum id; variant <id> { struct { ts } short; struct { id; ts }
    /// extended; } v; }` with unsigned integers of one byte order, timestamps mapped to
    /// the clock, ids carrying the event-class-id role.
    pub(super) fn recognize_lttng_header(&self, h: NodeId) -> Option<FastHeader> {
        let Node::Struct { align, first, count: 2, .. } = *self.node(h) else { return None };
        let m = self.struct_members(first, 2);
        let (id, var) = (m[0].node, m[1].node);
        let Node::Int { bits: id_bits, signed: false, be, role: Some(Role::EventClassId), clock: false, enum_idx: Some(_), align: id_align, .. } =
            *self.node(id)
        else {
            return None;
        };
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
        let mut h = FastHeader {
            align,
            be,
            id: FixedInt { node: id, offset: 0, bits: id_bits },
            short_range,
            short_ts,
            ext_range,
            ext_id,
            ext_ts,
            short_word: None,
            ext_words: None,
            layout: HeaderLayout::Other,
        };
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
}
