//! Finding a reader's wanted events in two packets side by side, then delivering them
//! in order ([`StreamCursor::next_wanted`] with `skim`).
//!
//! A reader that wants few events spends its time passing over the others: one chain
//! of dependent loads per packet, each header's id giving where the next one starts
//! (see `pair.rs`, which counts two packets so). Where the next two packets of a
//! stream are read whole, the cursor passes over both side by side, the second through
//! a twin cursor, and notes for each wanted event where it starts, the clock before it
//! and the clock values passed over since the one before (its "spot"). It then
//! delivers those events one by one, each decoded again from its spot, and reports the
//! events passed over between them: the same items, the same [`Passed`] values, the
//! same position and clock after each item as reading in turn gives. Between two
//! items the cursor stands where reading in turn would, so a reader that turns to
//! another way of reading mid-packet ([`StreamCursor::leave_replay`]) reads on from
//! there.

use crate::error::Result;
use crate::event_header::{Block, WordLayout, Words};
use crate::plan::{FastHeader, HeaderLayout, SkimEntry};
use crate::units::{BitPos, ByteOffset, Cycles};

use super::ahead::EXTENDED;
use super::skim::entry_end;
use super::{HeaderCopy, Mode, Passed, StreamCursor, Wanted};

/// A wanted event found by a [`Finder`], or where its packet's chain ended.
#[derive(Debug, Clone, Copy, Default)]
struct Spot {
    /// Its first bit.
    pos: BitPos,
    /// The clock value: the event's, for one of fixed size; before it, for one the
    /// general path reads again, and at the chain's end.
    clock: u64,
    /// The span of the clock values of the events passed over since the spot before
    /// (`lo > hi`: none; `hi`: the last one's).
    run: (u64, u64),
    /// The rest of an event of fixed size, to make it the current one without reading
    /// it again.
    head: SpotHead,
}

/// What makes an event of fixed size the current one: its header's tag, its class
/// (`u32::MAX`: an event the general path reads again), where its scopes start (bits
/// from its start, with [`EXTENDED`] for the extended header form) and its size past
/// the header (bytes).
#[derive(Debug, Clone, Copy)]
struct SpotHead {
    tag: u64,
    class: u32,
    lead: u32,
    size: u32,
}

impl Default for SpotHead {
    fn default() -> SpotHead {
        SpotHead { tag: 0, class: u32::MAX, lead: 0, size: 0 }
    }
}

/// The spots of one packet: its wanted events, and where its chain ended (`end`: the
/// packet's end, unless the general path met an error there, or the packet's start
/// where its clock values do not allow the replay).
#[derive(Debug, Default)]
struct PacketSpots {
    spots: Vec<Spot>,
    /// The next spot to deliver.
    at: usize,
    end: Spot,
}

/// What a cursor keeps to read packets in pairs: the twin that reads the second, and
/// the spots of both.
pub(super) struct Pairing<'t> {
    twin: StreamCursor<'t>,
    /// The spots of the packet being delivered.
    open: PacketSpots,
    /// The spots of the packet after it, found with it (`None`: none were, or they are
    /// delivered).
    next: Option<PacketSpots>,
    /// A spot list delivered, kept for its allocation.
    spare: Vec<Spot>,
    /// The table the spots were found with (by address: a reader that changes tables
    /// reads on from where it stands).
    table: usize,
    /// Wanted events found and events passed over since the reader last asked
    /// ([`StreamCursor::take_pair_sample`]).
    sample: Option<(usize, usize)>,
}

/// How a step of [`StreamCursor::replay_step`] ended.
pub(super) enum Replayed {
    /// The next wanted event is the current one.
    Event,
    /// The packet's spots are all delivered and the packet after it, whose spots
    /// follow, is open: its notices, if any, come first.
    Opened,
    /// The spots are all delivered: the cursor stands where the chain ended and reads
    /// on from there.
    Done,
}

impl<'t> StreamCursor<'t> {
    /// Whether the cursor delivers the wanted events of a pair of packets found side by
    /// side (see the module's docs).
    #[inline(always)]
    pub fn replaying(&self) -> bool {
        self.mode == Mode::Replaying
    }

    /// Stops delivering found events: the cursor reads on, in turn, from after the
    /// last event it delivered (where reading in turn would stand).
    #[inline(always)]
    pub(super) fn leave_replay(&mut self) {
        if self.mode == Mode::Replaying {
            self.mode = Mode::InPacket;
        }
    }

    /// Whether [`StreamCursor::next_wanted`], skimming, reads whole packets in pairs
    /// (the default; see the module's docs), or each in turn: the items and what is
    /// passed over are the same either way.
    pub fn read_in_pairs(&mut self, yes: bool) {
        self.pairs = yes;
        self.leave_replay();
    }

    /// The wanted events found and the events passed over by the packets read in pairs
    /// since the last call (a measure of how dense the wanted events are), if any were.
    pub fn take_pair_sample(&mut self) -> Option<(usize, usize)> {
        self.pairing.as_mut()?.sample.take()
    }

    /// Opens the next packet and, where it and the one after it can be read in a pair
    /// (both in the cursor's range, of trace `trace`, read whole in `window`, headers
    /// that word loads read, a packet context that sets the clock whatever it was),
    /// finds the wanted events of both side by side, the second read by the twin; the
    /// cursor then delivers them ([`StreamCursor::replay_step`]). False, with nothing
    /// moved, where that does not apply; an error opening the first packet ends the
    /// cursor.
    pub(super) fn start_pair(&mut self, wanted: &Wanted, trace: usize, window: (u64, u64)) -> Result<bool> {
        if !self.pairs || self.trace as usize != trace {
            return Ok(false);
        }
        let Some((a, b)) = self.next_two_whole(window) else { return Ok(false) };
        let Some(h) = self.sp.fast_header.as_ref() else { return Ok(false) };
        let mut p = match self.pairing.take() {
            Some(p) => p,
            None => Box::new(Pairing { twin: self.twin(), open: PacketSpots::default(), next: None, spare: Vec::new(), table: 0, sample: None }),
        };
        self.next_packet += 1;
        if let Err(e) = self.open_packet(a) {
            self.mode = Mode::Done;
            self.pairing = Some(p);
            return Err(e);
        }
        // Where the packet's events begin, as the packet leaves the cursor.
        let first = (self.cur.pos, self.dec.clock);
        // (A second packet that does not open is opened again, and its error met, by
        // this cursor when it reads it in turn.)
        let second = self.open_in_twin(&mut p.twin, b).is_ok();
        let twin = &mut p.twin;
        let table = &wanted.skim_by_id[..];
        // (A packet found but not delivered: a reader that read on otherwise.)
        let spare = p.next.take().map_or_else(|| std::mem::take(&mut p.spare), |n| n.spots);
        let mut next = PacketSpots::default();
        let mut fa = Finder::new(self, window, std::mem::take(&mut p.open.spots));
        let mut passed = 0;
        if second {
            let mut fb = Finder::new(twin, window, spare);
            find_side_by_side(self, &mut fa, twin, &mut fb, h, wanted);
            fb.find_rest(twin, h, wanted);
            passed += fb.passed();
            next = fb.into_spots();
        }
        fa.find_rest(self, h, wanted);
        passed += fa.passed();
        p.open = fa.into_spots();
        // Finding moved the cursor (the general path reads events the loops do not).
        // Until the first spot is delivered it must stand where reading in turn would,
        // at the packet's first event: the packet's notices come first, and a reader
        // may turn to another way of reading after them (`leave_replay`).
        (self.cur.pos, self.dec.clock) = first;
        let found = p.open.spots.len() + if second { next.spots.len() } else { 0 };
        let (f0, p0) = p.sample.unwrap_or((0, 0));
        p.sample = Some((f0 + found, p0 + passed));
        p.next = second.then_some(next);
        p.table = table.as_ptr() as usize;
        self.pairing = Some(p);
        self.mode = Mode::Replaying;
        Ok(true)
    }

    /// Delivers the next event found for the open packet, reporting the events passed
    /// over before it to `passed`; once all are delivered, moves to where the packet's
    /// chain ended and opens the packet found with it, if any.
    #[inline(never)]
    pub(super) fn replay_step(&mut self, wanted: &Wanted, passed: &mut Passed) -> Result<Replayed> {
        let Some(p) = self.pairing.as_mut().filter(|p| p.table == wanted.skim_by_id.as_ptr() as usize) else {
            self.mode = Mode::InPacket;
            return Ok(Replayed::Done);
        };
        let open = &mut p.open;
        // (The clock values of a chain whose spots are used never go back and lie in
        // the window: events were passed over where the span is not empty, the last
        // one at the span's end.)
        let see = |passed: &mut Passed, s: &Spot| passed.see_run((s.run.0 <= s.run.1).then_some(s.run.1), s.run);
        if let Some(&s) = open.spots.get(open.at) {
            see(passed, &s);
            open.at += 1;
            let h = s.head;
            if h.class == u32::MAX {
                (self.cur.pos, self.dec.clock) = (s.pos, s.clock);
                self.decode_event().map_err(|e| self.fail(e))?;
            } else {
                // As `take_stopped` makes an event the skimming loop stopped before the
                // current one.
                let at = s.pos.add_bits(u64::from(h.lead & !EXTENDED));
                (self.cur.pos, self.dec.clock) = (at.add_bytes(u64::from(h.size)), s.clock);
                let starts = self.sp.fixed.get(h.class as usize).map_or([0; 3], |f| f.starts);
                self.set_current_fixed(HeaderCopy::new(h.tag, h.lead & EXTENDED != 0), h.class, (s.pos, at), starts, s.clock, self.clock_ts());
            }
            return Ok(Replayed::Event);
        }
        let e = open.end;
        see(passed, &e);
        (self.cur.pos, self.dec.clock) = (e.pos, e.clock);
        let second = if e.pos >= self.cur.end { p.next.take() } else { None };
        let Some(second) = second else {
            self.mode = Mode::InPacket;
            return Ok(Replayed::Done);
        };
        p.spare = std::mem::replace(&mut p.open, second).spots;
        self.mode = Mode::Between;
        let b = self.stream.packets[self.next_packet];
        self.next_packet += 1;
        // (The clock is the first packet's last event's: `b` must not begin before it.)
        if let Err(e) = self.open_packet(b) {
            self.mode = Mode::Done;
            return Err(e);
        }
        self.mode = Mode::Replaying;
        Ok(Replayed::Opened)
    }
}

/// Where one chain of [`find_side_by_side`] stands: the next event's byte, the clock,
/// how many events it has read, the span of the clock values passed over since the
/// last spot, and whether a clock value went back or past the window (the chain's
/// spots are then not used).
#[derive(Debug, Clone, Copy)]
struct ChainAt {
    pos: ByteOffset,
    clock: u64,
    n: u32,
    run: (u64, u64),
    bad: bool,
}

/// One chain of [`find_side_by_side`]: its packet's bytes and content's end (bytes),
/// where it stands, and the spots found so far.
struct Finder<'b> {
    buf: &'b [u8],
    end: ByteOffset,
    at: ChainAt,
    /// The window's last clock value, or the clock's last in range if earlier.
    last: u64,
    /// Where the chain started (bit, clock), for a chain whose spots are not used.
    start: (BitPos, u64),
    spots: Vec<Spot>,
}

impl ChainAt {
    /// Moves past an event that ends at byte `next` with clock value `clock`, noting it
    /// in `spots` when `take` (with `head`), else as passed over.
    #[inline(always)]
    fn moved(&mut self, next: ByteOffset, clock: u64, take: bool, head: SpotHead, last: u64, spots: &mut Vec<Spot>) {
        if take {
            let spot_clock = if head.class == u32::MAX { self.clock } else { clock };
            spots.push(Spot { pos: self.pos.to_bits(), clock: spot_clock, run: self.run, head });
            self.run = (u64::MAX, 0);
        } else {
            self.run = (self.run.0.min(clock), clock);
        }
        self.bad |= clock > last;
        (self.pos, self.clock, self.n) = (next, clock, self.n + 1);
    }
}

impl<'b> Finder<'b> {
    /// A chain from `c`'s position and clock (a packet just opened), filling `spots`
    /// (cleared), for `window`.
    fn new(c: &StreamCursor<'b>, window: (u64, u64), mut spots: Vec<Spot>) -> Finder<'b> {
        spots.clear();
        let (pos, clock) = (c.cur.pos, c.dec.clock);
        // (A chain that starts off a byte, or before the window, finds nothing.)
        let bad = !pos.is_byte_aligned() || clock < window.0;
        let at = ChainAt { pos: pos.bytes_floor(), clock, n: 0, run: (u64::MAX, 0), bad };
        let end = if bad { ByteOffset::new(0) } else { c.cur.end.bytes_floor() };
        // (Past the clock's last value in range, the reader reports the error.)
        Finder { buf: c.cur.buf, end, at, last: window.1.min(c.clock_last()), start: (pos, clock), spots }
    }

    /// Moves past the event at `at.pos` when its header is read by word loads in
    /// `layout` (of byte order `be`; `None`: never) and `table` (a [`Wanted`] table)
    /// gives its size (a fixed size, or a string found by its NUL) and it ends inside
    /// the packet, noting it as a spot when wanted; false, with nothing moved, otherwise
    /// (the general path then reads it). LTTng's layouts, constants here, are read by
    /// one 16-byte load ([`Block`]).
    #[inline(always)]
    fn step(&mut self, layout: Option<&WordLayout>, be: bool, table: &[SkimEntry]) -> bool {
        let Some(layout) = layout else { return false };
        let at = &mut self.at;
        let am = (layout.align / 8) as usize - 1;
        let base = ByteOffset::new((at.pos.get() + am) & !am);
        // (Where the event ends is checked by `step_on`: the header's own bound is not.)
        let read = if layout.in_block() {
            let Some(mut block) = Block::at(self.buf, base, be) else { return false };
            layout.read(&mut block)
        } else {
            layout.read(&mut Words { buf: self.buf, at: base, room: u64::MAX, be })
        };
        let Ok(w) = read else { return false };
        if !w.bits.is_multiple_of(8) {
            return false;
        }
        let clock = w.clock_after(Cycles(at.clock));
        at.bad |= w.went_back(Cycles(at.clock), clock);
        let clock = clock.0;
        let from = base.add((w.bits / 8) as usize);
        let lead = at.pos.to_bits().bits_to(from.to_bits()) as u32 | if w.ext { EXTENDED } else { 0 };
        step_on(at, self.buf, self.end, from, (w.id, w.tag, lead), clock, table, self.last, &mut self.spots)
    }

    /// Reads the event at `at.pos` by `c`'s general path, noting it as a spot when
    /// `wanted`; false at the packet's end, or on an error or an event that ends off a
    /// byte (the chain then ends before the event, for the reader to read it).
    fn general(&mut self, c: &mut StreamCursor<'_>, wanted: &Wanted) -> bool {
        let at = &mut self.at;
        if at.pos >= self.end {
            return false;
        }
        (c.cur.pos, c.dec.clock) = (at.pos.to_bits(), at.clock);
        let Ok(class) = c.skim_event() else { return false };
        let Some(next) = c.cur.pos.bytes_exact() else { return false };
        at.bad |= c.dec.clock < at.clock;
        at.moved(next, c.dec.clock, wanted.has(class as usize), SpotHead::default(), self.last, &mut self.spots);
        true
    }

    /// Finds the rest of the packet's spots alone.
    fn find_rest(&mut self, c: &mut StreamCursor<'_>, h: &FastHeader, wanted: &Wanted) {
        match h.layout {
            HeaderLayout::LttngCompactLe => self.find_rest_by(c, wanted, Some(&WordLayout::LTTNG_COMPACT_LE), false),
            HeaderLayout::LttngLargeLe => self.find_rest_by(c, wanted, Some(&WordLayout::LTTNG_LARGE_LE), false),
            HeaderLayout::Other => self.find_rest_by(c, wanted, h.words.as_ref(), h.be),
        }
    }

    /// [`Finder::find_rest`] with the steps of [`Finder::step`] in `layout`.
    #[inline(always)]
    fn find_rest_by(&mut self, c: &mut StreamCursor<'_>, wanted: &Wanted, layout: Option<&WordLayout>, be: bool) {
        let table = &wanted.skim_by_id[..];
        while self.step(layout, be, table) || self.general(c, wanted) {}
    }

    /// Events passed over.
    fn passed(&self) -> usize {
        self.at.n as usize - self.spots.len()
    }

    /// The spots found and where the chain ended; none, and the chain's start, where
    /// a clock value went back or outside the window.
    fn into_spots(mut self) -> PacketSpots {
        let a = self.at;
        if a.bad {
            self.spots.clear();
            let end = Spot { pos: self.start.0, clock: self.start.1, run: (u64::MAX, 0), head: SpotHead::default() };
            return PacketSpots { spots: self.spots, at: 0, end };
        }
        let end = Spot { pos: a.pos.to_bits(), clock: a.clock, run: a.run, head: SpotHead::default() };
        PacketSpots { spots: self.spots, at: 0, end }
    }
}

/// The rest of a step past the header (which ends at byte `from`) of an event of id,
/// header tag and lead (see [`SpotHead`]) `(id, tag, lead)` and clock value `clock`: its
/// size from `table`, then [`ChainAt::moved`]; false where `table` does not give it or
/// it ends past `end`.
#[allow(clippy::too_many_arguments)]
#[inline(always)]
fn step_on(
    at: &mut ChainAt,
    buf: &[u8],
    end: ByteOffset,
    from: ByteOffset,
    (id, tag, lead): (u64, u64, u32),
    clock: u64,
    table: &[SkimEntry],
    last: u64,
    spots: &mut Vec<Spot>,
) -> bool {
    let Some(&e) = table.get(id as usize) else { return false };
    if e.is_stop() {
        return false;
    }
    let Some(next) = entry_end(buf, from, end, e) else { return false };
    let take = e.stops();
    let head = SpotHead { tag, class: e.class(), lead, size: e.bytes() as u32 };
    at.moved(next, clock, take, head, last, spots);
    true
}

/// Finds the spots of `a`'s and `b`'s open packets, a step of each per turn; an event
/// the loop does not pass over is read by its cursor's general path before the loop
/// goes on. Returns when either chain ends.
#[inline(never)]
fn find_side_by_side(a: &mut StreamCursor<'_>, fa: &mut Finder<'_>, b: &mut StreamCursor<'_>, fb: &mut Finder<'_>, h: &FastHeader, wanted: &Wanted) {
    match h.layout {
        HeaderLayout::LttngCompactLe => side_by_side(a, fa, b, fb, wanted, Some(&WordLayout::LTTNG_COMPACT_LE), false),
        HeaderLayout::LttngLargeLe => side_by_side(a, fa, b, fb, wanted, Some(&WordLayout::LTTNG_LARGE_LE), false),
        HeaderLayout::Other => side_by_side(a, fa, b, fb, wanted, h.words.as_ref(), h.be),
    }
}

/// [`find_side_by_side`] with the steps of [`Finder::step`] in `layout`.
#[inline(always)]
fn side_by_side(
    a: &mut StreamCursor<'_>,
    fa: &mut Finder<'_>,
    b: &mut StreamCursor<'_>,
    fb: &mut Finder<'_>,
    wanted: &Wanted,
    layout: Option<&WordLayout>,
    be: bool,
) {
    let table = &wanted.skim_by_id[..];
    loop {
        let (stepped_a, stepped_b) = loop {
            let stepped_a = fa.step(layout, be, table);
            let stepped_b = fb.step(layout, be, table);
            if !(stepped_a && stepped_b) {
                break (stepped_a, stepped_b);
            }
        };
        if !stepped_a && !fa.general(a, wanted) {
            return;
        }
        if !stepped_b && !fb.general(b, wanted) {
            return;
        }
    }
}
