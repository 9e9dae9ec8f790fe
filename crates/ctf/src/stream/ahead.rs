//! Reading ahead: a run of fixed-size events of the open packet decoded at once, in
//! one tight loop, and made the current event one by one later
//! ([`StreamCursor::read_ahead`], [`StreamCursor::enter_ahead`]). A reader that merges
//! several streams by time then pays the general path's per-event costs (the cursor's
//! state checks, the item enum, the filter's look-up) once per run instead of once per
//! event.
//!
//! A reader can also have integer fields of the events read ahead copied out in place
//! ([`Wanted::with_copies`], [`StreamCursor::copied`]), by loads at offsets resolved
//! once per class: a consumer that needs nothing else never makes the event current.

use crate::plan::{FieldHandle, StreamPlan};
use crate::units::{BitPos, ByteOffset};

use super::{HeaderCopy, Passed, StreamCursor, Wanted};

/// Most fields copied out of one event.
pub const MAX_COPIES: usize = 4;

/// What to copy out of the events of one class read ahead: `fields`' values, in order
/// (at most [`MAX_COPIES`]; an absent field reads as `u64::MAX`, i.e. -1), under a
/// `label` of the caller's choice (say, what the class means to it). A field may also
/// be a text array of bytes ([`Copied::bytes`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CopyRequest {
    /// Handed back with the values ([`Copied::label`]).
    pub label: u32,
    /// The fields to copy: integers, or text arrays of bytes.
    pub fields: Vec<Option<FieldHandle>>,
}

/// Bytes of an event, from its first scope on, in which copied fields are read: every
/// field a [`CopySpec`] reads lies inside (its offset, a `u8`, is at most 255, and
/// an integer's load is 8 bytes), so a read needs no bounds check. The events read
/// ahead in the last `COPY_WINDOW` bytes of a file (less their headers) get no copies.
pub const COPY_WINDOW: usize = 256 + 8;

/// [`COPY_WINDOW`], in short.
const WINDOW: usize = COPY_WINDOW;

/// The fields a [`CopyRequest`] names, of an event read ahead, read in place on demand
/// ([`StreamCursor::copied`]).
#[derive(Debug, Clone, Copy)]
pub struct Copied<'a> {
    spec: &'a CopySpec,
    /// The buffer's [`WINDOW`] bytes from where the event's first scope starts.
    ev: &'a [u8; WINDOW],
}

impl Copied<'_> {
    /// The [`CopyRequest::label`].
    #[inline(always)]
    pub fn label(&self) -> u32 {
        self.spec.label
    }

    /// The value of the request's field `i` as [`crate::stream::EventRef::uint`] reads
    /// it (signed fields sign-extended); `u64::MAX` for an absent field and past the
    /// request's fields.
    #[inline(always)]
    pub fn get(&self, i: usize) -> u64 {
        self.spec.reads.get(i).map_or(u64::MAX, |r| r.read(self.ev))
    }

    /// The bytes of the request's field `i` when it is a text array of `N` bytes (as
    /// [`Copied::bytes`], of a known length); `None` for an integer, absent field or
    /// array of another length.
    #[inline(always)]
    pub fn array<const N: usize>(&self, i: usize) -> Option<&[u8; N]> {
        let r = self.spec.reads.get(i).filter(|r| r.len as usize == N && N > 0)?;
        let p = usize::from(r.off);
        self.ev.get(p..p + N)?.try_into().ok()
    }

    /// The bytes of the request's field `i` when it is a text array (as
    /// [`crate::stream::EventRef::array_bytes`] reads it); `None` for an integer or
    /// absent field.
    #[inline(always)]
    pub fn bytes(&self, i: usize) -> Option<&[u8]> {
        let r = self.spec.reads.get(i).filter(|r| r.len > 0)?;
        let p = usize::from(r.off);
        self.ev.get(p..p + r.len as usize)
    }
}

/// One field to copy, starting on a byte `off` bytes after the event's first scope. An
/// integer (little-endian) is an 8-byte load there, shifted up by `unused` bits and
/// arithmetically back down, and'ed with `keep` (all bits for a signed field, which is
/// so sign-extended; the field's `64 - unused` low bits for an unsigned one), or'ed
/// with `fill` (`u64::MAX` for an absent field or an array, which then read as
/// `u64::MAX` whatever the load gives): no branch on the field's form. A text array is
/// `len` bytes (0: not an array).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct FieldRead {
    off: u8,
    unused: u32,
    keep: u64,
    fill: u64,
    len: u32,
}

impl FieldRead {
    /// An absent field (reads as `u64::MAX`).
    const ABSENT: FieldRead = FieldRead { off: 0, unused: 0, keep: u64::MAX, fill: u64::MAX, len: 0 };

    /// A little-endian integer of `bits` bits (1 to 64) at byte `off`.
    fn int(off: u8, bits: u32, signed: bool) -> FieldRead {
        let unused = 64 - bits;
        FieldRead { off, unused, keep: if signed { u64::MAX } else { u64::MAX >> unused }, fill: 0, len: 0 }
    }

    /// The field's value in an event whose first scope starts at byte 0 of `ev`.
    #[inline(always)]
    fn read(&self, ev: &[u8; WINDOW]) -> u64 {
        let p = usize::from(self.off);
        // (In bounds whatever `off`: no check.)
        let w = u64::from_le_bytes(std::array::from_fn(|k| ev[p + k]));
        ((((w << self.unused) as i64) >> self.unused) as u64 & self.keep) | self.fill
    }
}

/// A [`CopyRequest`] resolved against a class of fixed size: where each field lies.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CopySpec {
    label: u32,
    reads: [FieldRead; MAX_COPIES],
}

impl CopySpec {
    /// The spec of request `r` for class index `class` of `sp`: `None` unless the class
    /// is of fixed size and every field named is a little-endian integer or a text
    /// array of bytes, starting on a byte, read in place inside it, within the
    /// [`WINDOW`] (starting at most 255 bytes after the first scope).
    pub(super) fn new(sp: &StreamPlan, class: usize, r: &CopyRequest) -> Option<CopySpec> {
        let f = sp.fixed.get(class).filter(|f| f.is_fixed())?;
        if r.fields.len() > MAX_COPIES {
            return None;
        }
        let mut reads = [FieldRead::ABSENT; MAX_COPIES];
        for (slot, h) in reads.iter_mut().zip(&r.fields) {
            let Some(h) = h else { continue };
            let l = h.lazy.filter(|_| !h.packet_level)?;
            let rel = f.starts.get(usize::from(l.scope))?.checked_add(l.offset)?;
            let (read, bits) = match l.int {
                Some(i) if !i.be && (1..=64).contains(&i.bits) => (FieldRead::int(u8::try_from(rel / 8).ok()?, u32::from(i.bits), i.signed), u64::from(i.bits)),
                None if l.bytes > 0 => (FieldRead { len: u32::from(l.bytes), off: u8::try_from(rel / 8).ok()?, ..FieldRead::ABSENT }, u64::from(l.bytes) * 8),
                _ => return None,
            };
            if !rel.is_multiple_of(8) || u64::from(rel) + bits > u64::from(f.bits) || u64::from(read.off) * 8 + bits > WINDOW as u64 * 8 {
                return None;
            }
            *slot = read;
        }
        Some(CopySpec { label: r.label, reads })
    }
}

/// Most events an [`AheadBuf`] holds.
pub const AHEAD_ROOM: usize = u8::MAX as usize;

/// Events read ahead ([`StreamCursor::read_ahead`]), at most [`AHEAD_ROOM`], in room
/// allocated once: as a slice, those read. (A `u8` counts them: taking them as a slice
/// needs no check.)
#[derive(Debug, Clone)]
pub struct AheadBuf {
    events: Box<[Ahead; AHEAD_ROOM]>,
    /// How many of `events` were read.
    len: u8,
}

impl AheadBuf {
    /// An empty buffer.
    pub fn new() -> AheadBuf {
        AheadBuf { events: Box::new([Ahead::default(); AHEAD_ROOM]), len: 0 }
    }

    /// Empties it.
    #[inline(always)]
    pub fn clear(&mut self) {
        self.len = 0;
    }
}

impl Default for AheadBuf {
    fn default() -> AheadBuf {
        AheadBuf::new()
    }
}

impl std::ops::Deref for AheadBuf {
    type Target = [Ahead];

    #[inline(always)]
    fn deref(&self) -> &[Ahead] {
        &self.events[..usize::from(self.len)]
    }
}

/// An event read ahead by [`StreamCursor::read_ahead`], in 40 bytes: its timestamp,
/// clock value, class, header tag, and where it lies in the open packet. (The rest of
/// its header follows: the timestamp field holds the clock value's low bits, and the
/// extended form's id is the class's.)
#[derive(Debug, Clone, Copy, Default)]
pub struct Ahead {
    ts: i64,
    cycles: u64,
    /// Where its first scope starts: on a byte (the skimming loop reads events in
    /// byte units).
    at: BitPos,
    /// The header's tag.
    tag: u64,
    class: u32,
    /// `at` less the event's first bit, and [`EXTENDED`] when the header has the
    /// extended form.
    lead: u32,
}

/// [`Ahead::lead`]'s flag of an extended header.
pub(super) const EXTENDED: u32 = 1 << 31;

impl Ahead {
    /// Its timestamp (ns from the clock's origin).
    #[inline(always)]
    pub fn ts(&self) -> i64 {
        self.ts
    }

    /// Its class index.
    #[inline(always)]
    pub fn class_index(&self) -> usize {
        self.class as usize
    }
}

impl<'t> StreamCursor<'t> {
    /// Reads ahead, from the cursor on, the events [`StreamCursor::next_wanted`] would
    /// yield next, with the same arguments, for as long as each is of fixed size with a
    /// header word loads read (the cases its skimming loop reads) and inside the open
    /// packet (within 4 GiB of the cursor), and its clock value lies in `window` (and,
    /// for a 1 GHz clock, below the values whose timestamps saturate): appends them to
    /// `out`, at most `max` in all (and as many as it has room for), and moves past
    /// them. Does nothing on a packet of another trace than `trace`, with notices
    /// pending, or on a stream without a clock. The event it
    /// stops before is left for [`StreamCursor::next_wanted`] (with any error it holds).
    ///
    /// Events passed over (not wanted) go to `passed` as there, except that when
    /// events were read ahead, `passed.last` becomes the clock value of the last event
    /// passed over after them (`None`: none was), as a reader's time key stands once it
    /// has taken them all.
    ///
    /// An event read ahead is made the current one with [`StreamCursor::enter_ahead`],
    /// before the cursor moves on again (it points into the open packet); one whose
    /// copied fields are all its reader needs may be left alone.
    ///
    /// Returns how many events it passed over (with the number read ahead, a measure
    /// of how dense the wanted events are).
    pub fn read_ahead(&mut self, wanted: &Wanted, trace: usize, window: (u64, u64), passed: &mut Passed, out: &mut AheadBuf, max: usize) -> usize {
        self.leave_replay();
        if !self.mode.in_packet() || !self.pending.is_empty() || self.trace as usize != trace {
            return 0;
        }
        let Some(conv) = self.conv else { return 0 };
        // At 1 GHz, events are read ahead only below the clock values whose timestamps
        // saturate: their timestamps are then one add.
        let plain = conv.plain_offset();
        let take_hi = plain.map_or(window.1, |(_, m)| window.1.min(m));
        let first = usize::from(out.len);
        // Written by index, one check for both bounds.
        let events = &mut out.events[..max.min(AHEAD_ROOM)];
        let (mut n, from) = (first, self.cur.pos);
        // The span of the events passed over inside the window.
        let (mut lo, mut hi) = (u64::MAX, 0);
        let mut passed_over = 0;
        self.skim_fixed_taking::<false, true>(
            &wanted.skim_by_id,
            0,
            |_, c| {
                passed_over += 1;
                if c >= window.0 && c <= window.1 {
                    (lo, hi) = (lo.min(c), hi.max(c));
                }
            },
            |s| {
                if n >= events.len() || s.cycles < window.0 || s.cycles > take_hi {
                    return false;
                }
                let ts = match plain {
                    Some((o, _)) => o.wrapping_add_unsigned(s.cycles),
                    None => conv.to_ns(s.cycles),
                };
                events[n] = Ahead { ts, cycles: s.cycles, at: s.at, tag: s.header.tag, class: s.class, lead: s.lead };
                n += 1;
                true
            },
        );
        out.len = n as u8;
        // Where the last event read ahead ends: the loop passed events over after it
        // when it moved on (the clock is then the last one's).
        let taken_end = match n.checked_sub(1).filter(|&i| i >= first) {
            Some(i) => {
                // What was passed before them is behind the events read ahead.
                passed.last = None;
                let e = &events[i];
                e.at.add_bits(self.sp.fixed.get(e.class as usize).map_or(0, |f| u64::from(f.bits)))
            }
            None => from,
        };
        let last = (self.cur.pos != taken_end).then_some(self.dec.clock);
        passed.see_run(last, (lo, hi));
        passed_over
    }

    /// The fields `wanted` (the [`Wanted`] `e` was read ahead with) copies out of event
    /// `e`, read ahead by this cursor's last [`StreamCursor::read_ahead`], when its class
    /// has a copy request ([`Wanted::with_copies`]) and the buffer holds the `WINDOW`
    /// from its first scope on (all but the last events of a file).
    #[inline(always)]
    pub fn copied<'w>(&self, e: &Ahead, wanted: &'w Wanted) -> Option<Copied<'w>>
    where
        't: 'w,
    {
        let spec = wanted.copies.get(e.class as usize)?.as_ref()?;
        // (On a byte: no test.)
        self.copied_from(spec, e.at.bytes_floor())
    }

    /// The fields `spec` copies out of the event whose first scope starts at bit `at`
    /// of the open packet's buffer, when that is on a byte and the buffer holds the
    /// [`WINDOW`] from there on.
    #[inline(always)]
    fn copied_at<'w>(&self, spec: &'w CopySpec, at: BitPos) -> Option<Copied<'w>>
    where
        't: 'w,
    {
        self.copied_from(spec, at.bytes_exact()?)
    }

    /// The fields `spec` copies out of the event whose first scope starts at byte
    /// `byte` of the open packet's buffer, when the buffer holds the [`WINDOW`] from
    /// there on.
    #[inline(always)]
    fn copied_from<'w>(&self, spec: &'w CopySpec, byte: ByteOffset) -> Option<Copied<'w>>
    where
        't: 'w,
    {
        let base = byte.get();
        let ev = self.cur.buf.get(base..base.checked_add(WINDOW)?)?.try_into().ok()?;
        Some(Copied { spec, ev })
    }

    /// The fields `wanted` copies out of the current event, as [`StreamCursor::copied`]
    /// gives them for an event read ahead: when the current item is an event of fixed
    /// size entered by word loads (as the skimming loop and the fast path enter them:
    /// its scopes then lie at its first scope's start plus the class's offsets) and its
    /// class has a copy request. `None` otherwise: a notice, an event the general path
    /// decoded, or one of a class without a request.
    #[inline(always)]
    pub fn copied_current<'w>(&self, wanted: &'w Wanted) -> Option<Copied<'w>>
    where
        't: 'w,
    {
        if self.current.is_some() || self.ev.header == HeaderCopy::InSlots {
            return None;
        }
        let class = self.ev.class as usize;
        let spec = wanted.copies.get(class)?.as_ref()?;
        let at = self.ev.scopes[0].sub_bits(u64::from(self.sp.fixed.get(class)?.starts[0]));
        self.copied_at(spec, at)
    }

    /// Makes event `e`, read ahead by this cursor's last [`StreamCursor::read_ahead`],
    /// the current one, as [`StreamCursor::next_wanted`] would have: its class, clock
    /// value, timestamp, scopes and header (the cursor's position and clock stay
    /// where reading ahead left them).
    #[inline(always)]
    pub fn enter_ahead(&mut self, e: &Ahead) {
        let sp = self.sp;
        let header = HeaderCopy::new(e.tag, e.lead & EXTENDED != 0);
        let starts = sp.fixed.get(e.class as usize).map_or([0; 3], |f| f.starts);
        let start = e.at.sub_bits(u64::from(e.lead & !EXTENDED));
        self.set_current_fixed(header, e.class, (start, e.at), starts, e.cycles, Some(e.ts));
        self.current = None;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    proptest! {
        /// A field read by [`FieldRead::read`] is the general reader's value (signed
        /// fields sign-extended), at any byte, up to the buffer's last byte, whatever
        /// bytes follow the field in the window.
        #[test]
        fn word_read_equals_read_int(bytes in proptest::collection::vec(any::<u8>(), 1..24), at in 0usize..24, width in prop_oneof![Just(8u32), Just(16), Just(32), Just(64), 1u32..64], signed in any::<bool>(), pad in any::<u8>()) {
            let off = at % bytes.len();
            prop_assume!(off * 8 + width as usize <= bytes.len() * 8);
            let r = FieldRead::int(off as u8, width, signed);
            let want = crate::bits::read_int(&bytes, ByteOffset::new(off).to_bits(), width, signed, false);
            let mut ev = [pad; WINDOW];
            ev[..bytes.len()].copy_from_slice(&bytes);
            prop_assert_eq!(r.read(&ev), want);
            prop_assert_eq!(FieldRead::ABSENT.read(&ev), u64::MAX);
        }
    }
}
