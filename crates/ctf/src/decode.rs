//! The plan interpreter: decodes one scope of a packet at a bit position, storing each
//! scalar's raw value in its slot and reporting structure to a [`Visitor`].
//!
//! Invariants: every read is bounds-checked against the packet's content end; loops are
//! bounded by lengths that are checked against the bits left before iterating; recursion
//! depth is bounded by the plan's nesting, itself bounded by the metadata parser.

use crate::bits::{read_be, read_le, sign_extend};
use crate::error::{DecodeError, DecodeErrorKind as K};
use crate::event_header::{Bits, HeaderWord, NotRead};
use crate::ir::Role;
use crate::plan::{FastHeader, FlatOp, Node, NodeId, Plan};
use crate::units::{BitPos, ByteOffset, Cycles};

/// A bounded view of one packet's bytes and a bit position in it.
#[derive(Debug, Clone, Copy)]
pub struct Cursor<'a> {
    /// The packet's bytes, from its first byte.
    pub buf: &'a [u8],
    /// Current position.
    pub pos: BitPos,
    /// End of the content (not past the end of `buf`).
    pub end: BitPos,
}

impl<'a> Cursor<'a> {
    /// A cursor at the start of `buf`, bounded by `end` (or by `buf`'s end, if before).
    pub fn new(buf: &'a [u8], end: BitPos) -> Self {
        Cursor { buf, pos: BitPos::ZERO, end: end.min(ByteOffset::new(buf.len()).to_bits()) }
    }

    /// The bits from the position to the content's end.
    #[inline(always)]
    pub fn left(&self) -> u64 {
        self.pos.bits_to(self.end)
    }

    /// The error of a read of `needed` bits here, past the content's end.
    #[cold]
    fn out_of_bounds(&self, needed: u64) -> DecodeError {
        DecodeError::new(self.pos, K::OutOfBounds { needed, available: self.left() })
    }

    #[inline]
    pub(crate) fn align(&mut self, align: u32) -> Result<(), DecodeError> {
        if align > 1 {
            let p = self.pos.align_up(u64::from(align));
            if p > self.end {
                return Err(self.out_of_bounds(self.pos.bits_to(p)));
            }
            self.pos = p;
        }
        Ok(())
    }

    #[inline]
    pub(crate) fn need(&self, bits: u64) -> Result<(), DecodeError> {
        if self.left() < bits {
            return Err(self.out_of_bounds(bits));
        }
        Ok(())
    }

    /// Skips `bits` bits after aligning to `align` bits.
    #[inline]
    pub fn skip(&mut self, align: u32, bits: u64) -> Result<(), DecodeError> {
        self.align(align)?;
        self.need(bits)?;
        self.pos = self.pos.add_bits(bits);
        Ok(())
    }

    /// Passes over fields by their sizes (see [`crate::plan::SkimOp`]), checking every
    /// bound as decoding them would.
    #[inline]
    pub fn skim(&mut self, ops: &[crate::plan::SkimOp]) -> Result<(), DecodeError> {
        for op in ops {
            match *op {
                crate::plan::SkimOp::Fixed { align, bits } => self.skip(align, bits)?,
                crate::plan::SkimOp::CStr => {
                    self.read_cstr()?;
                }
            }
        }
        Ok(())
    }

    /// Reads an integer as [`Cursor::read_uint`] would, by one 8-byte load, where that
    /// applies: little-endian, of whole bytes, the cursor on a byte already aligned to
    /// `align`, inside the content, and 8 bytes of the buffer from there. `None`, with
    /// nothing moved, otherwise.
    #[inline(always)]
    fn word_at_aligned_byte(&mut self, align: u32, bits: u32, be: bool) -> Option<u64> {
        let p = self.pos;
        if be || !bits.is_multiple_of(8) || p.bits() & (u64::from(align.max(8)) - 1) != 0 || self.left() < u64::from(bits) {
            return None;
        }
        let b = p.bytes_floor().get();
        let w = u64::from_le_bytes(self.buf.get(b..b.checked_add(8)?)?.try_into().ok()?);
        self.pos = p.add_bits(u64::from(bits));
        Some(w & crate::plan::low_mask(bits))
    }

    /// Reads an integer of `bits` bits after aligning to `align` bits.
    #[inline]
    pub fn read_uint(&mut self, align: u32, bits: u32, be: bool) -> Result<u64, DecodeError> {
        self.align(align)?;
        self.need(u64::from(bits))?;
        let pos = self.pos;
        let v = match pos.bytes_exact() {
            Some(at) if bits.is_multiple_of(8) => {
                let (b, buf) = (at.get(), self.buf);
                match (bits, be) {
                    (8, _) => u64::from(buf[b]),
                    (16, false) => u64::from(u16::from_le_bytes([buf[b], buf[b + 1]])),
                    (32, false) => u64::from(u32::from_le_bytes(buf[b..b + 4].try_into().unwrap_or_default())),
                    (64, false) => u64::from_le_bytes(buf[b..b + 8].try_into().unwrap_or_default()),
                    (_, false) => read_le(buf, pos, bits),
                    (_, true) => read_be(buf, pos, bits),
                }
            }
            _ if be => read_be(self.buf, pos, bits),
            _ => read_le(self.buf, pos, bits),
        };
        self.pos = pos.add_bits(u64::from(bits));
        Ok(v)
    }

    /// The content's bytes from the position's byte on.
    #[inline(always)]
    fn rest(&self) -> &'a [u8] {
        &self.buf[self.pos.bytes_floor().get()..self.end.bytes_floor().get()]
    }

    /// The bytes (without terminator) of a NUL-terminated string of `unit`-byte code
    /// units at the current (unit-aligned) position.
    pub fn read_wide_cstr(&mut self, unit: u32) -> Result<&'a [u8], DecodeError> {
        let s = self.rest();
        let u = unit as usize;
        let n = s.chunks_exact(u).position(|c| c.iter().all(|b| *b == 0)).ok_or(DecodeError::new(self.pos, K::UnterminatedString))?;
        self.pos = self.pos.bytes_floor().add((n + 1) * u).to_bits();
        Ok(&s[..n * u])
    }

    /// Reads a LEB128 integer (at most 64 bits of value): (value, raw unsigned bits).
    pub fn read_leb128(&mut self, signed: bool) -> Result<(u64, u64), DecodeError> {
        self.align(8)?;
        let start = self.pos;
        let mut v: u64 = 0;
        let mut shift = 0u32;
        loop {
            self.need(8).map_err(|e| DecodeError::new(start, e.kind))?;
            let b = self.buf[self.pos.bytes_floor().get()];
            self.pos = self.pos.add_bits(8);
            // The 10th byte holds bit 63; its other bits must be 0 (or, signed, copies
            // of bit 63).
            let fits = match shift {
                0..=62 => true,
                63 => (b & 0x7f) <= 1 || (signed && (b & 0x7f) == 0x7f),
                _ => false,
            };
            if !fits {
                return Err(DecodeError::new(start, K::Invalid("variable-length integer longer than 64 bits".into())));
            }
            v |= u64::from(b & 0x7f) << shift;
            shift += 7;
            if b & 0x80 == 0 {
                break;
            }
        }
        let val = if signed && shift < 64 { sign_extend(v, shift) as u64 } else { v };
        Ok((val, v))
    }

    /// The bytes of a NUL-terminated string at the current (byte-aligned) position,
    /// without the NUL; the cursor moves past the NUL.
    #[inline]
    pub fn read_cstr(&mut self) -> Result<&'a [u8], DecodeError> {
        self.align(8)?;
        let s = self.rest();
        let n = memchr::memchr(0, s).ok_or(DecodeError::new(self.pos, K::UnterminatedString))?;
        self.pos = self.pos.bytes_floor().add(n + 1).to_bits();
        Ok(&s[..n])
    }
}

/// Receives the structure and values of decoded fields. Every method has an empty
/// default, so a visitor that only needs slots costs nothing.
pub trait Visitor {
    /// An integer (raw two's complement bits sign-extended for signed ones).
    #[inline]
    fn int(&mut self, _plan: &Plan, _node: &Node, _raw: u64) {}
    /// A floating point number.
    #[inline]
    fn float(&mut self, _v: f64) {}
    /// A string (node `Str`), or an array/sequence of characters (that node) up to its
    /// first NUL.
    #[inline]
    fn string(&mut self, _node: NodeId, _bytes: &[u8]) {}
    /// An absent optional field.
    #[inline]
    fn null(&mut self) {}
    /// A structure begins.
    #[inline]
    fn begin_struct(&mut self) {}
    /// The next structure member is `name`.
    #[inline]
    fn member(&mut self, _name: &str) {}
    /// The next structure member is `name`, of node `node` (by default:
    /// [`Visitor::member`]).
    #[inline]
    fn member_node(&mut self, name: &str, _node: NodeId) {
        self.member(name)
    }
    /// The structure ends.
    #[inline]
    fn end_struct(&mut self) {}
    /// A variant's selected option `name` begins (its value follows).
    #[inline]
    fn begin_variant(&mut self, _name: &str) {}
    /// The variant's value ends.
    #[inline]
    fn end_variant(&mut self) {}
    /// An array or sequence begins.
    #[inline]
    fn begin_array(&mut self) {}
    /// The array or sequence ends.
    #[inline]
    fn end_array(&mut self) {}
}

/// A visitor that does nothing: decoding only fills slots.
pub struct SlotsOnly;
impl Visitor for SlotsOnly {}

/// Number of [`Role`] kinds tracked per packet/event.
pub const ROLE_COUNT: usize = 10;

/// Index of a role in role tables.
#[inline]
pub fn role_index(r: Role) -> usize {
    match r {
        Role::PacketMagic => 0,
        Role::StreamClassId => 1,
        Role::StreamInstanceId => 2,
        Role::PacketBeginTimestamp => 3,
        Role::PacketEndTimestamp => 4,
        Role::PacketContentSize => 5,
        Role::PacketTotalSize => 6,
        Role::DiscardedEventCounter => 7,
        Role::PacketSequenceNumber => 8,
        Role::EventClassId => 9,
    }
}

/// Arrays and sequences longer than the bits left are refused beyond this many
/// elements (elements may be zero bits wide, so length alone does not bound the loop).
const MAX_EMPTY_ELEMENTS: u64 = 1 << 16;

/// Decoding state of one stream: slots of the last decoded values, the default clock,
/// and the role values seen in the current packet/event.
#[derive(Debug, Clone)]
pub struct Decoder {
    /// Raw value of each node's last decode (strings: bit position of the first byte).
    pub slots: Vec<u64>,
    /// Epoch in which each slot was last written.
    pub stamps: Vec<u32>,
    /// Current epoch (bumped per packet and per event).
    pub epoch: u32,
    /// The stream's default clock value in cycles.
    pub clock: u64,
    /// Role values decoded since the last [`Decoder::clear_roles`].
    pub roles: [Option<u64>; ROLE_COUNT],
    /// When false, roles and the clock are left alone (re-decoding for display).
    pub apply_roles: bool,
}

impl Decoder {
    /// A decoder for a plan.
    pub fn new(plan: &Plan) -> Self {
        Decoder { slots: vec![0; plan.nodes.len()], stamps: vec![0; plan.nodes.len()], epoch: 1, clock: 0, roles: [None; ROLE_COUNT], apply_roles: true }
    }

    /// Decodes an LTTng event header through its compiled form. Returns the event id;
    /// updates the clock and (`SLOTS`) the fields' slots as the interpreter would.
    #[inline(always)]
    pub fn decode_fast_header<const SLOTS: bool>(&mut self, h: &FastHeader, cur: &mut Cursor<'_>) -> Result<u64, DecodeError> {
        cur.align(h.align)?;
        let base = cur.pos;
        // The common case: read by word loads.
        if let Some(w) = h.peek(cur.buf, base, cur.end) {
            self.take_header::<SLOTS>(h, &w);
            cur.pos = base.add_bits(w.bits);
            return Ok(w.id);
        }
        self.decode_header_fields::<SLOTS>(h, cur, base)
    }

    /// Takes header `w` read by [`FastHeader::peek`]: updates the clock and (`SLOTS`)
    /// writes the header fields' slots as the interpreter would.
    #[inline(always)]
    pub fn take_header<const SLOTS: bool>(&mut self, h: &FastHeader, w: &HeaderWord) {
        if SLOTS {
            self.set(h.id.node, w.tag);
            if w.ext {
                self.set(h.ext_id.node, w.id);
                self.set(h.ext_ts.node, w.ts);
            } else {
                self.set(h.short_ts.node, w.ts);
            }
        }
        self.clock = w.clock_after(Cycles(self.clock)).0;
    }

    /// [`Decoder::decode_fast_header`] by bit-level reads ([`Bits`]: extended forms,
    /// packet ends), every bound checked.
    #[inline(never)]
    fn decode_header_fields<const SLOTS: bool>(&mut self, h: &FastHeader, cur: &mut Cursor<'_>, base: BitPos) -> Result<u64, DecodeError> {
        let mut bits = Bits { buf: cur.buf, be: h.be, base, end: cur.end, needed: 0 };
        match h.fields().read(&mut bits) {
            Ok(w) => {
                self.take_header::<SLOTS>(h, &w);
                cur.pos = base.add_bits(w.bits);
                Ok(w.id)
            }
            Err(NotRead::Tag(tag)) => {
                if SLOTS {
                    self.set(h.id.node, tag);
                }
                Err(DecodeError::new(base, K::NoVariantOption(tag as i128)))
            }
            Err(NotRead::Bytes) => Err(DecodeError::new(base, K::OutOfBounds { needed: bits.needed, available: base.bits_to(cur.end) })),
        }
    }

    /// Forgets role values.
    #[inline]
    pub fn clear_roles(&mut self) {
        self.roles = [None; ROLE_COUNT];
    }

    /// Decodes a scope by its [`FlatOp`]s at the cursor into the slots, as
    /// [`Decoder::decode`] of its root with [`SlotsOnly`] would.
    pub fn decode_flat(&mut self, ops: &[FlatOp], cur: &mut Cursor<'_>) -> Result<(), DecodeError> {
        for op in ops {
            match *op {
                FlatOp::Align(a) => cur.align(a)?,
                FlatOp::Int { node, align, bits, signed, be } => {
                    let raw = match cur.word_at_aligned_byte(align, bits, be) {
                        Some(v) => v,
                        None => cur.read_uint(align, bits, be)?,
                    };
                    self.set(node, if signed { sign_extend(raw, bits) as u64 } else { raw });
                }
                FlatOp::CStr(node) => {
                    cur.align(8)?;
                    self.set(node, cur.pos.bits());
                    cur.read_cstr()?;
                }
            }
        }
        Ok(())
    }

    /// Decodes node `id` at the cursor.
    pub fn decode<V: Visitor>(&mut self, plan: &Plan, id: NodeId, cur: &mut Cursor<'_>, v: &mut V) -> Result<(), DecodeError> {
        let node = plan.node(id);
        match *node {
            Node::Int { align, bits, signed, be, role, clock, .. } => {
                let raw = cur.read_uint(align, bits, be)?;
                let val = if signed { sign_extend(raw, bits) as u64 } else { raw };
                self.set(id, val);
                if self.apply_roles {
                    if let Some(r) = role {
                        self.roles[role_index(r)] = Some(raw);
                    }
                    if clock && role != Some(Role::PacketEndTimestamp) {
                        self.clock = Cycles(self.clock).extended(raw, crate::plan::low_mask(bits)).0;
                    }
                }
                v.int(plan, node, val);
            }
            Node::Float { align, bits, be } => {
                let raw = cur.read_uint(align, bits, be)?;
                self.set(id, raw);
                v.float(if bits == 32 { f32::from_bits(raw as u32) as f64 } else { f64::from_bits(raw) });
            }
            Node::VarInt { signed, role } => {
                let (val, raw) = cur.read_leb128(signed)?;
                self.set(id, val);
                if self.apply_roles {
                    if let Some(r) = role {
                        self.roles[role_index(r)] = Some(raw);
                    }
                }
                v.int(plan, node, val);
            }
            Node::Str { unit, .. } => {
                cur.align(8 * unit)?;
                self.set(id, cur.pos.bits());
                let s = if unit == 1 { cur.read_cstr()? } else { cur.read_wide_cstr(unit)? };
                v.string(id, s);
            }
            Node::Optional { selector, inner, first, count } => {
                let sel = self.slots[selector.0 as usize];
                let present = if count == 0 {
                    sel != 0
                } else {
                    let value = self.tag_value(plan, selector);
                    plan.choices[first as usize..(first + count) as usize].iter().any(|c| c.lo <= value && value <= c.hi)
                };
                if present {
                    self.decode(plan, inner, cur, v)?;
                } else {
                    v.null();
                }
            }
            Node::Struct { first, count, .. } => {
                cur.align(node_align(node))?;
                v.begin_struct();
                for i in first..first + count {
                    let m = &plan.members[i as usize];
                    v.member_node(&m.name, m.node);
                    self.decode(plan, m.node, cur, v)?;
                }
                v.end_struct();
            }
            Node::Variant { tag, first, count, opts, nopts } => {
                let value = self.tag_value(plan, tag);
                let choice = plan.choices[first as usize..(first + count) as usize]
                    .iter()
                    .find(|c| c.lo <= value && value <= c.hi)
                    .ok_or(DecodeError::new(cur.pos, K::NoVariantOption(value)))?;
                let options = plan.members.get(opts as usize..(opts + nopts) as usize).unwrap_or_default();
                v.begin_variant(options.iter().find(|m| m.node == choice.node).map_or("", |m| &m.name));
                self.decode(plan, choice.node, cur, v)?;
                v.end_variant();
            }
            Node::Array { align, elem, len, text } => {
                cur.align(align)?;
                self.set(id, cur.pos.bits());
                self.elements(plan, id, elem, len, text, cur, v)?;
            }
            Node::Seq { align, elem, len, text } => {
                let n = self.slots[len.0 as usize];
                cur.align(align)?;
                self.set(id, cur.pos.bits());
                self.elements(plan, id, elem, n, text, cur, v)?;
            }
        }
        Ok(())
    }

    #[inline(always)]
    fn set(&mut self, id: NodeId, v: u64) {
        let i = id.0 as usize;
        self.slots[i] = v;
        self.stamps[i] = self.epoch;
    }

    /// The value of a variant's tag as a wide signed integer.
    fn tag_value(&self, plan: &Plan, tag: NodeId) -> i128 {
        let raw = self.slots[tag.0 as usize];
        match plan.node(tag) {
            Node::Int { signed: true, .. } => raw as i64 as i128,
            _ => raw as i128,
        }
    }

    #[allow(clippy::too_many_arguments)]
    fn elements<V: Visitor>(&mut self, plan: &Plan, id: NodeId, elem: NodeId, n: u64, text: bool, cur: &mut Cursor<'_>, v: &mut V) -> Result<(), DecodeError> {
        let left = cur.left();
        if text {
            let bits =
                n.checked_mul(8).filter(|b| *b <= left).ok_or(DecodeError::new(cur.pos, K::OutOfBounds { needed: n.saturating_mul(8), available: left }))?;
            let start = cur.pos.bytes_floor().get();
            let bytes = &cur.buf[start..start + n as usize];
            let shown = bytes.iter().position(|b| *b == 0).map_or(bytes, |z| &bytes[..z]);
            // Elements still go through their slot so a handle on them stays valid.
            if n > 0 {
                self.set(elem, bytes[n as usize - 1] as u64);
            }
            cur.pos = cur.pos.add_bits(bits);
            v.string(id, shown);
            return Ok(());
        }
        if n > left && n > MAX_EMPTY_ELEMENTS {
            return Err(DecodeError::new(cur.pos, K::Invalid(format!("array of {n} elements, more than the {left} bits left in the packet content hold"))));
        }
        v.begin_array();
        for _ in 0..n {
            self.decode(plan, elem, cur, v)?;
        }
        v.end_array();
        Ok(())
    }
}

/// Alignment of a node in bits.
pub fn node_align(n: &Node) -> u32 {
    match *n {
        Node::Int { align, .. } | Node::Float { align, .. } | Node::Struct { align, .. } | Node::Array { align, .. } | Node::Seq { align, .. } => align,
        Node::Str { unit, .. } => 8 * unit,
        Node::VarInt { .. } => 8,
        Node::Variant { .. } | Node::Optional { .. } => 1,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cursor_bounds() {
        let buf = [1u8, 2, 3, 0, 9];
        let mut c = Cursor::new(&buf, BitPos::new(40));
        assert_eq!(c.read_uint(8, 8, false).unwrap(), 1);
        assert_eq!(c.read_cstr().unwrap(), &[2, 3]);
        assert_eq!(c.read_uint(8, 8, false).unwrap(), 9);
        assert!(matches!(c.read_uint(1, 1, false).unwrap_err().kind, K::OutOfBounds { .. }));
        let mut c = Cursor::new(&buf[..2], BitPos::new(16));
        assert_eq!(c.read_cstr().unwrap_err().kind, K::UnterminatedString);
        let mut c = Cursor::new(&buf, BitPos::new(40));
        c.read_uint(8, 8, false).unwrap();
        assert!(c.read_uint(64, 8, false).is_err(), "aligning to bit 64 passes the end");
    }
}
