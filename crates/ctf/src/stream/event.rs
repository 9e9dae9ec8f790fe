//! The event a cursor is on, decoded lazily: header fields, scopes, field values.

use crate::decode::Visitor;
use crate::error::DecodeError;
use crate::plan::{EventPlan, FieldHandle, Node, Plan, StreamPlan};
use crate::trace::PacketRef;
use crate::units::BitPos;

use super::skim::until_nul;
use super::{HeaderCopy, StreamCursor};

/// A decoded event, valid until its cursor moves.
pub struct EventRef<'c, 't> {
    pub(super) c: &'c mut StreamCursor<'t>,
}

/// Which scope of an event to visit.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum EventScope {
    /// Stream event context (common to the stream's events).
    CommonContext,
    /// Event-specific context.
    SpecificContext,
    /// Payload.
    Payload,
}

impl<'c, 't> EventRef<'c, 't> {
    /// The event class.
    #[inline]
    pub fn class(&self) -> &'t EventPlan {
        &self.c.sp.events[self.c.ev.class as usize]
    }

    /// Index of the event class in its stream class's `events` (for dispatch tables).
    #[inline]
    pub fn class_index(&self) -> usize {
        self.c.ev.class as usize
    }

    /// Index of the trace (in the set) the event belongs to.
    #[inline]
    pub fn trace_index(&self) -> usize {
        self.c.trace as usize
    }

    /// The event class's name.
    #[inline]
    pub fn name(&self) -> &'t str {
        &self.class().name
    }

    /// Timestamp in ns from the clock's origin; `None` when the stream has no clock. (A
    /// time past the `i64` range is an error of the reader, never a saturated value.)
    #[inline(always)]
    pub fn ts(&self) -> Option<i64> {
        self.c.ev.ts
    }

    /// Timestamp in ns from origin without saturation (clock offsets can exceed 64 bits).
    pub fn ts_wide(&self) -> Option<i128> {
        self.c.conv.map(|c| c.to_ns_wide(self.c.ev.cycles))
    }

    /// Raw clock value in cycles.
    #[inline]
    pub fn cycles(&self) -> u64 {
        self.c.ev.cycles
    }

    /// The stream class.
    #[inline]
    pub fn stream_plan(&self) -> &'t StreamPlan {
        self.c.sp
    }

    /// The decoding plan.
    #[inline]
    pub fn plan(&self) -> &'t Plan {
        self.c.plan
    }

    /// The packet holding the event.
    #[inline]
    pub fn packet(&self) -> &PacketRef {
        self.c.packet.as_ref().expect("events are inside packets")
    }

    /// The `cpu_id` field of the packet context, if the stream has one.
    pub fn packet_cpu_id(&self) -> Option<u64> {
        let c = self.c.sp.packet_context?;
        let node = self.c.plan.find(c, &["cpu_id"])?;
        self.uint(FieldHandle { node, packet_level: true, lazy: None })
    }

    /// Bit position of the event in its packet.
    #[inline]
    pub fn bit_offset(&self) -> u64 {
        self.c.ev.start.bits()
    }

    #[inline(always)]
    fn valid(&self, h: FieldHandle) -> bool {
        let stamp = self.c.dec.stamps[h.node.0 as usize];
        let since = if h.packet_level { self.c.packet_epoch } else { self.c.ev.epoch_start() };
        stamp >= since && stamp <= self.c.ev.epoch
    }

    /// Bit position of a lazily read field in the packet.
    #[inline(always)]
    fn lazy_pos(&self, l: &crate::plan::LazyField) -> BitPos {
        self.c.ev.scopes[l.scope as usize].add_bits(u64::from(l.offset))
    }

    /// An integer field's value as unsigned (raw bits; signed values sign-extended), if
    /// the event has it.
    #[inline(always)]
    pub fn uint(&self, h: FieldHandle) -> Option<u64> {
        if let Some(l) = h.lazy {
            let crate::plan::LazyInt { bits, signed, be } = l.int?;
            let bits = u32::from(bits);
            let pos = self.lazy_pos(&l);
            return Some(crate::bits::read_int(self.c.cur.buf, pos, bits, signed, be));
        }
        if self.valid(h) {
            return Some(self.c.dec.slots[h.node.0 as usize]);
        }
        self.header_field(h)
    }

    /// A field of a header kept in [`EventPos::header`](super::EventPos::header) rather than in slots: the tag;
    /// the extended form's id, which is the class's; the timestamp field, which holds
    /// the clock value's low bits (the same values the slots would hold).
    #[cold]
    fn header_field(&self, h: FieldHandle) -> Option<u64> {
        let ev = &self.c.ev;
        let fh = self.c.sp.fast_header.as_ref()?;
        let ts = |f: &crate::plan::FixedInt| ev.cycles & crate::plan::low_mask(f.bits);
        match ev.header {
            HeaderCopy::InSlots => None,
            HeaderCopy::Short(tag) | HeaderCopy::Extended(tag) if h.node == fh.id.node => Some(tag),
            HeaderCopy::Short(_) => (h.node == fh.short_ts.node).then(|| ts(&fh.short_ts)),
            HeaderCopy::Extended(_) if h.node == fh.ext_id.node => self.c.sp.events.get(ev.class as usize).map(|c| c.id),
            HeaderCopy::Extended(_) => (h.node == fh.ext_ts.node).then(|| ts(&fh.ext_ts)),
        }
    }

    /// An integer field's value as signed, if the event has it.
    #[inline(always)]
    pub fn int(&self, h: FieldHandle) -> Option<i64> {
        self.uint(h).map(|v| v as i64)
    }

    /// Bit position in the packet of a string, array or sequence field, if the event
    /// has it (read in place when lazy, else from the slot decoding filled).
    #[inline(always)]
    fn string_pos(&self, h: FieldHandle) -> Option<BitPos> {
        match h.lazy {
            Some(l) => Some(self.lazy_pos(&l)),
            // (A string's slot holds its position.)
            None if self.valid(h) => Some(BitPos::new(self.c.dec.slots[h.node.0 as usize])),
            None => None,
        }
    }

    /// A string field (or character array) as bytes borrowed from the trace.
    pub fn bytes(&self, h: FieldHandle) -> Option<&'c [u8]> {
        let pos = self.string_pos(h)?;
        let buf: &'c [u8] = self.c.cur.buf;
        let s = buf.get(pos.bytes_floor().get()..self.c.cur.end.bytes_floor().get())?;
        match self.c.plan.node(h.node) {
            Node::Str { unit: 1, .. } => memchr::memchr(0, s).map(|n| &s[..n]),
            Node::Array { len, .. } => Some(until_nul(&s[..(*len as usize).min(s.len())])),
            Node::Seq { len, .. } => Some(until_nul(&s[..(self.c.dec.slots[len.0 as usize] as usize).min(s.len())])),
            _ => None,
        }
    }

    /// The whole storage of a fixed-length array field (e.g. a `char[16]` name, zero
    /// bytes included), borrowed from the trace: cheaper than [`EventRef::bytes`] for a
    /// caller that compares raw arrays. `None` when the field is not a byte-aligned
    /// array of 8-bit elements or the event lacks it.
    #[inline(always)]
    pub fn array_bytes(&self, h: FieldHandle) -> Option<&'c [u8]> {
        if let Some(l) = h.lazy.filter(|l| l.bytes > 0) {
            // Its length known from the handle: no node look-up.
            return self.bytes_at(self.lazy_pos(&l), u64::from(l.bytes));
        }
        self.array_bytes_slow(h)
    }

    /// The `len` bytes at bit `pos` of the packet, when `pos` starts a byte and they
    /// lie inside the packet's content.
    #[inline(always)]
    fn bytes_at(&self, pos: BitPos, len: u64) -> Option<&'c [u8]> {
        let start = pos.bytes_exact()?;
        let end = start.add(len as usize);
        if end.to_bits() > self.c.cur.end {
            return None;
        }
        self.c.cur.buf.get(start.get()..end.get())
    }

    /// Element `i` of a static array of integers (e.g. the `fildes[2]` of a
    /// `syscall_exit_pipe2`), as unsigned raw bits (signed values sign-extended), if the
    /// event has the array and the element lies inside the packet.
    pub fn int_elem(&self, h: FieldHandle, i: u64) -> Option<u64> {
        let pos = self.string_pos(h)?;
        let Node::Array { elem, len, .. } = *self.c.plan.node(h.node) else { return None };
        let Node::Int { align, bits, signed, be, .. } = *self.c.plan.node(elem) else { return None };
        if i >= len {
            return None;
        }
        let stride = crate::plan::align_up(u64::from(bits), u64::from(align));
        let at = pos.align_up(u64::from(align)).bits().checked_add(i.checked_mul(stride)?)?;
        if at.checked_add(u64::from(bits))? > self.c.cur.end.bits() {
            return None;
        }
        Some(crate::bits::read_int(self.c.cur.buf, BitPos::new(at), bits, signed, be))
    }

    /// [`EventRef::array_bytes`] through the field's node.
    #[inline(never)]
    fn array_bytes_slow(&self, h: FieldHandle) -> Option<&'c [u8]> {
        let pos = self.string_pos(h)?;
        let Node::Array { len, text: true, .. } = *self.c.plan.node(h.node) else { return None };
        self.bytes_at(pos, len)
    }

    /// The root node of one scope of the event and a cursor on its first bit (before
    /// the root's alignment), for readers that walk the scope themselves (the text and
    /// JSON writers' compiled programs). `None` when the event has no such scope.
    #[inline]
    pub fn scope_cursor(&self, scope: EventScope) -> Option<(crate::plan::NodeId, crate::decode::Cursor<'c>)> {
        let (root, pos) = match scope {
            EventScope::CommonContext => (self.c.sp.common_context, self.c.ev.scopes[0]),
            EventScope::SpecificContext => (self.class().context, self.c.ev.scopes[1]),
            EventScope::Payload => (self.class().payload, self.c.ev.scopes[2]),
        };
        let mut cur: crate::decode::Cursor<'c> = self.c.cur;
        cur.pos = pos;
        Some((root?, cur))
    }

    /// Decodes one scope again, reporting its structure to `v`. Returns false when the
    /// event has no such scope.
    pub fn visit<V: Visitor>(&mut self, scope: EventScope, v: &mut V) -> std::result::Result<bool, DecodeError> {
        let class = self.class();
        let (root, pos) = match scope {
            EventScope::CommonContext => (self.c.sp.common_context, self.c.ev.scopes[0]),
            EventScope::SpecificContext => (class.context, self.c.ev.scopes[1]),
            EventScope::Payload => (class.payload, self.c.ev.scopes[2]),
        };
        let Some(root) = root else { return Ok(false) };
        let mut cur = self.c.cur;
        cur.pos = pos;
        let epoch = self.c.dec.epoch;
        self.c.dec.apply_roles = false;
        let r = self.c.dec.decode(self.c.plan, root, &mut cur, v);
        self.c.dec.apply_roles = true;
        self.c.dec.epoch = epoch;
        r.map(|_| true)
    }
}
