//! Counting two packets of a stream in one loop ([`StreamCursor::count_pair`]).
//!
//! Passing over events is one chain of dependent loads: a header's id picks the entry
//! that gives where the next header starts. A core runs two such chains side by side
//! in little more time than one, so two packets counted in one loop, a step of each
//! per turn, take less time than the two counted in turn (see BENCHMARKS.md, session
//! 32). The second packet is read by a second cursor over the same stream (the
//! "twin", [`StreamCursor::twin`]), which the caller keeps between calls: it has its
//! own decoder, so each cursor holds its own packet's fields for
//! [`StreamCursor::packet_uint`].

use crate::error::{DecodeError, Result};
use crate::ir::Role;
use crate::plan::{FastHeader, Node, SkimEntry};
use crate::trace::PacketRef;
use crate::units::{BitPos, Cycles};

use super::count::{counted_whole, tally};
use super::skim::entry_end;
use super::{CountError, Mode, PacketCount, StreamCursor};

/// What [`StreamCursor::count_pair`] counted: the first packet, and the second or the
/// error met in it (after the first was counted, as reading them in turn would have).
pub type PairCount = (PacketCount, std::result::Result<PacketCount, CountError>);

impl<'t> StreamCursor<'t> {
    /// A cursor over the same stream, reading nothing yet, to hand to
    /// [`StreamCursor::count_pair`] (which points it at the packet it counts).
    pub fn twin(&self) -> StreamCursor<'t> {
        let index = self.set.streams.iter().position(|s| std::ptr::eq(s, self.stream)).unwrap_or(0);
        let n = self.stream.packets.len();
        StreamCursor::with_packets(self.set, index, n..n)
    }

    /// Points this cursor at packet `first` of its stream alone, as
    /// [`StreamCursor::with_packets`] with `first..first + 1` would, but keeping its
    /// decoder (sized by the metadata: large for kernel traces) and reporting no stream
    /// error at its end.
    pub(super) fn retarget(&mut self, first: usize) {
        let prev = first.checked_sub(1).and_then(|i| self.stream.packets.get(i)).copied();
        self.next_packet = first;
        self.last_packet = (first + 1).min(self.stream.packets.len());
        self.prev = prev;
        self.prev_discarded = prev.and_then(|p| p.info.discarded);
        self.mode = Mode::Fresh;
        self.pending.clear();
        self.current = None;
        self.report_stream_error = false;
    }

    /// Counts the next two packets of this cursor's range per event class into
    /// `per_class`, as two calls of [`StreamCursor::count_packet_in`] would, their
    /// events passed over side by side. Both must lie in `window` (by their index
    /// times) or `window` be everything: they are counted whole. The second is read by
    /// `twin` (from [`StreamCursor::twin`]), which is left on it (for its packet's
    /// fields); this cursor moves on past it, as if it had read it.
    ///
    /// `None`, with nothing moved, where that does not apply: the cursor inside a packet
    /// or with notices to yield, fewer than two packets left, either outside `window`,
    /// of another trace than the open one, a header that word loads do not read, or a
    /// packet context that does not set the clock whatever it was (its events would then
    /// depend on the packet before). Whatever error comes, `per_class` holds the events
    /// before it and no more, as counting the packets in turn would: what was counted of
    /// the second before an error in the first is taken back.
    pub fn count_pair(&mut self, twin: &mut StreamCursor<'t>, per_class: &mut [u64], window: (u64, u64)) -> std::result::Result<Option<PairCount>, CountError> {
        self.leave_replay();
        if !std::ptr::eq(twin.stream, self.stream) {
            return Ok(None);
        }
        let Some((a, b)) = self.next_two_whole(window) else { return Ok(None) };
        self.next_packet += 1;
        if let Err(e) = self.open_packet(a) {
            self.mode = Mode::Done;
            return Err(e.into());
        }
        let mut pa = self.begin_count(per_class)?;
        let b_open = self.open_in_twin(twin, b);
        // Where the second's events start, should they have to be taken back.
        let b_start = (twin.cur.pos, twin.dec.clock);
        let b_opened = b_open.is_ok();
        let mut pb = b_open.map_err(CountError::from).and_then(|()| twin.begin_count(per_class));
        if let (Some(h), Some(th), Ok(c)) = (self.sp.fast_header.as_ref(), twin.sp.fast_header.as_ref(), &pb) {
            if pa.events > 0 && c.events > 0 {
                let (na, nb) = pass_side_by_side(self, twin, (h, th), per_class);
                pa.events += na;
                if let Ok(c) = &mut pb {
                    c.events += nb;
                }
            }
        }
        // The second's events counted so far: not counted after all where an error
        // comes before them in the stream.
        let b_counted = pb.as_ref().map_or(0, |c| c.events);
        let a_count = match self.end_count(pa, per_class) {
            Ok(c) => c,
            Err(e) => {
                twin.take_back(b_start, b_counted, per_class);
                return Err(e);
            }
        };
        // The second begins after the first's last event, as opening it in turn checks
        // before any of its events is read (an error in its first event comes after).
        let b_count = match twin.packet.filter(|_| b_opened).map(|q| self.begins_after(&q, self.dec.clock)) {
            Some(Err(e)) => {
                twin.take_back(b_start, b_counted, per_class);
                Err(e.into())
            }
            _ => pb.and_then(|c| twin.end_count(c, per_class)),
        };
        // This cursor moves on past the second packet, its clock and the counters its
        // notices are computed from too, as reading it would have moved them.
        self.next_packet += 1;
        self.prev = twin.prev;
        self.prev_discarded = twin.prev_discarded;
        self.dec.clock = twin.dec.clock;
        if b_count.is_err() {
            self.mode = Mode::Done;
        }
        Ok(Some((a_count, b_count)))
    }

    /// The next two packets of the cursor's range, where both can be read at once
    /// (count's and skimming's pairs): the cursor between packets with no notice to
    /// yield, both of its open trace and read whole in `window`, a header that word
    /// loads read, and a packet context that sets the clock whatever it was (so that
    /// the second reads the same before the first is done).
    pub(super) fn next_two_whole(&self, window: (u64, u64)) -> Option<(PacketRef, PacketRef)> {
        let j = self.next_packet;
        if !matches!(self.mode, Mode::Fresh | Mode::Between) || !self.pending.is_empty() || j + 1 >= self.last_packet {
            return None;
        }
        let (a, b) = (self.stream.packets[j], self.stream.packets[j + 1]);
        let same_trace = a.trace == self.trace && b.trace == self.trace;
        if !same_trace || !counted_whole(&a.info, window) || !counted_whole(&b.info, window) || self.sp.fast_header.is_none() || !context_sets_clock(self) {
            return None;
        }
        Some((a, b))
    }

    /// Has `twin` open packet `b`, the one after the packet this cursor just opened,
    /// alone (see [`StreamCursor::retarget`]), sharing what this cursor has populated;
    /// an error leaves the twin done.
    pub(super) fn open_in_twin(&mut self, twin: &mut StreamCursor<'t>, b: PacketRef) -> Result<()> {
        twin.retarget(self.next_packet);
        twin.populated = self.populated;
        twin.next_packet += 1;
        let opened = twin.open_packet(b);
        if opened.is_err() {
            twin.mode = Mode::Done;
        }
        self.populated = twin.populated;
        opened
    }

    /// The count of the packet just opened before any of its events: its notices,
    /// drained (counted, not yielded).
    pub(super) fn count_of_open_packet(&mut self) -> PacketCount {
        let mut out = PacketCount { packet: self.packet.expect("a packet is open"), ..Default::default() };
        for (is_lost, n) in self.pending.drain(..) {
            if is_lost {
                out.lost += n.count
            } else {
                out.discarded += n.count
            }
        }
        out
    }

    /// Starts counting the packet just opened: its notices drained, its first event,
    /// if any, counted into `per_class` (read by the general path, which reports any
    /// error).
    pub(super) fn begin_count(&mut self, per_class: &mut [u64]) -> std::result::Result<PacketCount, CountError> {
        let mut out = self.count_of_open_packet();
        if self.cur.pos < self.cur.end {
            let class = self.skim_event().map_err(|e| self.fail_counting(e, out))?;
            tally(per_class, class);
            out.first_cycles = Some(self.dec.clock);
            out.events = 1;
        }
        Ok(out)
    }

    /// Ends counting the open packet begun with [`StreamCursor::begin_count`]: the
    /// rest of its events counted into `per_class` and added to `out`.
    pub(super) fn end_count(&mut self, mut out: PacketCount, per_class: &mut [u64]) -> std::result::Result<PacketCount, CountError> {
        if out.events > 0 {
            let mut n = 0;
            // (The clock of the last event counted: an event that fails may have moved
            // the clock.)
            let mut last = self.dec.clock;
            let seen = self.skim_each(|class, cycles| {
                tally(per_class, class);
                n += 1;
                last = cycles;
            });
            out.events += n;
            out.last_cycles = Some(last);
            seen.map_err(|e| self.fail_counting(e, out))?;
        }
        self.mode = Mode::Between;
        Ok(out)
    }

    /// Stops reading at error `e`, met while counting the open packet, which had
    /// counted `so_far`.
    #[cold]
    pub(super) fn fail_counting(&mut self, e: DecodeError, so_far: PacketCount) -> CountError {
        CountError { before: Some(Box::new(so_far)), error: self.fail(e) }
    }

    /// Takes the first `n` events of the open packet, which start at `from` (position
    /// and clock), back out of `per_class`, and ends the cursor: they were counted side
    /// by side with the packet before, whose error (or whose end after this one's
    /// beginning) comes first in the stream. Reads them again by the general path,
    /// which gives every event the class the counting loops gave it.
    #[cold]
    #[inline(never)]
    fn take_back(&mut self, from: (BitPos, u64), n: u64, per_class: &mut [u64]) {
        (self.cur.pos, self.dec.clock) = from;
        for _ in 0..n {
            let Ok(class) = self.skim_event() else { break };
            if let Some(c) = per_class.get_mut(class as usize) {
                *c = c.saturating_sub(1);
            }
        }
        self.mode = Mode::Done;
    }
}

/// Where one of the two chains of [`pass_side_by_side`] stands: its packet's bytes, the
/// next event's bit, the content's end and the clock, in locals.
struct Chain<'b> {
    buf: &'b [u8],
    pos: BitPos,
    end: BitPos,
    clock: u64,
}

impl Chain<'_> {
    /// Passes over the event at `pos` when `table` (a [`StreamPlan::skim_by_id`])
    /// passes it over (a fixed size, or a string found by its NUL) and it ends inside
    /// the packet, counting its class into `per_class`; false, with nothing moved,
    /// otherwise (the general path then reads it).
    ///
    /// [`StreamPlan::skim_by_id`]: crate::plan::StreamPlan::skim_by_id
    #[inline(always)]
    fn pass_one(&mut self, h: &FastHeader, table: &[SkimEntry], last: u64, per_class: &mut [u64]) -> bool {
        let base = self.pos.align_up(u64::from(h.align));
        let Some(w) = h.peek(self.buf, base, self.end) else { return false };
        let Some(&e) = table.get(w.id as usize) else { return false };
        if e.stops() {
            return false;
        }
        // (The event's size in bytes counts from the byte its scopes start on.)
        let Some(at) = base.add_bits(w.bits).bytes_exact() else { return false };
        let Some(next) = entry_end(self.buf, at, self.end.bytes_floor(), e) else { return false };
        // (As `Decoder::take_header` moves the clock; a clock that goes back, by an
        // extended header's full timestamp or a short one's wrapping it past 2^64, or
        // past the range of 64-bit nanoseconds, is the general path's to judge.)
        let clock = w.clock_after(Cycles(self.clock));
        if w.leaves_loops(Cycles(self.clock), clock, last) {
            return false;
        }
        self.clock = clock.0;
        self.pos = next.to_bits();
        tally(per_class, e.class());
        true
    }
}

/// Passes over the events of `a`'s and `b`'s open packets, a step of each per turn
/// (headers read by `h.0` and `h.1`), counting their classes into `per_class`; an
/// event the loop does not pass over is read by the general path before the loop goes
/// on. Returns how many events each passed over, when either packet ends or the
/// general path meets an error (its cursor then stands before the event, for the
/// reader after it to report).
#[inline(never)]
fn pass_side_by_side<'t>(a: &mut StreamCursor<'t>, b: &mut StreamCursor<'t>, h: (&FastHeader, &FastHeader), per_class: &mut [u64]) -> (u64, u64) {
    let (ta, tb) = (&a.sp.skim_by_id, &b.sp.skim_by_id);
    // (Both packets are of one trace: one clock.)
    let last = a.clock_last();
    let (mut na, mut nb) = (0, 0);
    loop {
        let mut ca = Chain { buf: a.cur.buf, pos: a.cur.pos, end: a.cur.end, clock: a.dec.clock };
        let mut cb = Chain { buf: b.cur.buf, pos: b.cur.pos, end: b.cur.end, clock: b.dec.clock };
        let (stopped_a, stopped_b) = loop {
            let stepped_a = ca.pass_one(h.0, ta, last, per_class);
            let stepped_b = cb.pass_one(h.1, tb, last, per_class);
            na += u64::from(stepped_a);
            nb += u64::from(stepped_b);
            if !(stepped_a && stepped_b) {
                break (!stepped_a, !stepped_b);
            }
        };
        (a.cur.pos, a.dec.clock) = (ca.pos, ca.clock);
        (b.cur.pos, b.dec.clock) = (cb.pos, cb.clock);
        if stopped_a {
            if !general_step(a, per_class) {
                return (na, nb);
            }
            na += 1;
        }
        if stopped_b {
            if !general_step(b, per_class) {
                return (na, nb);
            }
            nb += 1;
        }
    }
}

/// Reads the event at `c`'s position by the general path, counting its class into
/// `per_class`; false at the packet's end, or with the cursor put back where it was on
/// an error (for the reader after to meet it again and report it).
fn general_step(c: &mut StreamCursor<'_>, per_class: &mut [u64]) -> bool {
    if c.cur.pos >= c.cur.end {
        return false;
    }
    let (pos, clock) = (c.cur.pos, c.dec.clock);
    match c.skim_event() {
        Ok(class) => {
            tally(per_class, class);
            true
        }
        Err(_) => {
            (c.cur.pos, c.dec.clock) = (pos, clock);
            false
        }
    }
}

/// Whether a packet's context sets the clock whatever its value before: its members are
/// all integers, among them a clock field, and every clock field in it (but the end
/// timestamp, which does not move the clock) is 64 bits wide; the packet header holds
/// no clock field nor structure. A packet's events then read the same whether or not
/// the packet before it was read first.
fn context_sets_clock(c: &StreamCursor<'_>) -> bool {
    let plan = c.plan;
    let members = |n| match *plan.node(n) {
        Node::Struct { first, count, .. } => Some(plan.struct_members(first, count)),
        _ => None,
    };
    if let Some(h) = plan.packet_header {
        let Some(ms) = members(h) else { return false };
        if ms.iter().any(|m| matches!(*plan.node(m.node), Node::Int { clock: true, .. } | Node::Struct { .. } | Node::Variant { .. })) {
            return false;
        }
    }
    let Some(ms) = c.sp.packet_context.and_then(members) else { return false };
    let mut sets = false;
    for m in ms {
        match *plan.node(m.node) {
            Node::Int { clock: true, role: Some(Role::PacketEndTimestamp), .. } | Node::Int { clock: false, .. } => {}
            Node::Int { clock: true, bits: 64, .. } => sets = true,
            _ => return false,
        }
    }
    sets
}
