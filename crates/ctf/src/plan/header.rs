//! LTTng's event header recognised from the plan's structure ([`FastHeader`]), with its
//! layouts for [`crate::event_header`]'s reader: by bit fields, and by words where word
//! loads read it.

use crate::event_header::{Form, Layout, WordField, WordLayout};
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
    /// The header as word loads read it, where they do: its short form in the first
    /// 64 bits of a byte-aligned header, its extended form's fields on bytes (else
    /// `ext` is `None`).
    pub words: Option<WordLayout>,
    /// Which layout this is.
    pub layout: HeaderLayout,
}

impl FastHeader {
    /// The header's layout as the bit-level reader takes it ([`Bits`](crate::event_header::Bits)).
    pub fn fields(&self) -> Layout<FixedInt> {
        let end = |f: &FixedInt| f.offset + u64::from(f.bits);
        Layout {
            align: self.align,
            tag: self.id,
            short: Form { tags: self.short_range, id: None, ts: self.short_ts, bits: end(&self.short_ts) },
            ext: Some(Form { tags: self.ext_range, id: Some(self.ext_id), ts: self.ext_ts, bits: end(&self.ext_ts) }),
        }
    }
}

/// Which header a [`FastHeader`] is, for the loops compiled with a layout's constants.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum HeaderLayout {
    /// [`WordLayout::LTTNG_COMPACT_LE`].
    LttngCompactLe,
    /// [`WordLayout::LTTNG_LARGE_LE`].
    LttngLargeLe,
    /// Any other (read through the header's fields).
    Other,
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

/// The header `h` as word loads read it, where they do (see [`FastHeader::words`]).
fn word_layout(h: &FastHeader) -> Option<WordLayout> {
    let end = |f: &FixedInt| f.offset + u64::from(f.bits);
    let short_end = end(&h.short_ts);
    if !h.align.is_multiple_of(8) || short_end > 64 {
        return None;
    }
    // The short form's fields, in the word loaded from the header's first byte.
    let in_first = |f: &FixedInt| {
        let shift = if h.be { 64 - f.offset as u32 - f.bits } else { f.offset as u32 };
        WordField { byte: 0, shift, mask: low_mask(f.bits) }
    };
    // The extended form's, each in the word loaded from its own first byte.
    let on_byte = |f: &FixedInt| {
        if !f.offset.is_multiple_of(8) || f.bits == 0 || f.bits > 64 {
            return None;
        }
        let shift = if h.be { 64 - f.bits } else { 0 };
        Some(WordField { byte: (f.offset / 8) as usize, shift, mask: low_mask(f.bits) })
    };
    // As the bit-level path: the extended form ends with its timestamp.
    let ext_end = end(&h.ext_ts);
    let ext = match (on_byte(&h.ext_id), on_byte(&h.ext_ts)) {
        (Some(id), Some(ts)) if end(&h.ext_id) <= ext_end && ext_end.is_multiple_of(8) => Some(Form { tags: h.ext_range, id: Some(id), ts, bits: ext_end }),
        _ => None,
    };
    let short = Form { tags: h.short_range, id: None, ts: in_first(&h.short_ts), bits: short_end };
    Some(Layout { align: h.align, tag: in_first(&h.id), short, ext })
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
            words: None,
            layout: HeaderLayout::Other,
        };
        h.words = word_layout(&h);
        if !h.be {
            if h.words == Some(WordLayout::LTTNG_COMPACT_LE) {
                h.layout = HeaderLayout::LttngCompactLe;
            } else if h.words == Some(WordLayout::LTTNG_LARGE_LE) {
                h.layout = HeaderLayout::LttngLargeLe;
            }
        }
        Some(h)
    }
}
