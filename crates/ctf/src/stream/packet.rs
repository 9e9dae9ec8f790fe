//! Packets: opening one (its header and context, the notices it implies, the file's
//! pages mapped ahead), and where a cursor stands among its packets for a time range.

use crate::decode::{Cursor, Decoder, SlotsOnly};
use crate::error::{DecodeError, Error, Result};
use crate::index::read_packet_header;
use crate::ir::Role;
use crate::plan::{Node, Plan, StreamPlan};
use crate::trace::{PacketRef, TraceSet};
use crate::units::BitPos;

use super::{Item, Mode, Notice, StreamCursor};

impl<'t> StreamCursor<'t> {
    pub(super) fn open_packet(&mut self, p: PacketRef) -> Result<()> {
        let (trace, file) = self.set.packet_file(&p);
        if p.trace != self.trace {
            // Another chunk of a session rotation: same stream, another metadata.
            let clock = self.dec.clock;
            self.trace = p.trace;
            self.plan = &trace.plan;
            self.sp = self.plan.stream(self.stream.class_id).unwrap_or(&self.plan.streams[0]);
            self.conv = self.sp.clock.map(|c| trace.clocks[c]);
            self.dec = Decoder::new(self.plan);
            self.dec.clock = clock;
            self.has_ts_range = has_ts_range(self.plan, self.sp);
        }
        self.populate_ahead(&p);
        if let Some(q) = self.prev.filter(|q| self.mode != Mode::Fresh && (q.trace, q.file) == (p.trace, p.file) && q.info.offset < p.info.offset) {
            // The packet read before, and what lies between: this cursor is past them.
            file.bytes.release(q.info.offset as usize..p.info.offset as usize);
        }
        // The clock as the packet before left it, where this cursor read that packet.
        let last_clock = (self.mode != Mode::Fresh && p.trace == self.prev.map_or(u32::MAX, |q| q.trace)).then_some(self.dec.clock);
        let data: &'t [u8] = &file.bytes;
        // A packet running past the end of its file is read up to there; the stream's
        // indexing error is reported after its last event.
        let (info, _) = read_packet_header(self.plan, &mut self.dec, data, p.info.offset).map_err(|e| Error::Stream {
            path: file.path.clone(),
            offset: p.info.offset + e.bit_pos / 8,
            kind: e.kind,
        })?;
        let header_end = {
            // Decode again into a cursor we keep, so events continue after the context.
            // The buffer runs on to the file's end (reads stop at the content's end,
            // within the packet): a word load of the packet's last bytes then never runs
            // past the buffer, so the skimming loop reads its last event too.
            let buf = &data[info.offset as usize..];
            let mut cur = Cursor::new(buf, BitPos::new(info.content_bits.min(info.total_bits)));
            self.dec.epoch = self.dec.epoch.wrapping_add(1);
            self.dec.clear_roles();
            let r: std::result::Result<(), DecodeError> = (|| {
                if let Some(h) = self.plan.packet_header {
                    self.dec.decode(self.plan, h, &mut cur, &mut SlotsOnly)?;
                }
                if let Some(c) = self.sp.packet_context {
                    self.dec.decode(self.plan, c, &mut cur, &mut SlotsOnly)?;
                }
                Ok(())
            })();
            r.map_err(|e| Error::Stream { path: file.path.clone(), offset: info.offset + e.bit_pos / 8, kind: e.kind })?;
            self.cur = cur;
            cur.pos
        };
        let _ = header_end;
        self.packet_epoch = self.dec.epoch;
        let p = PacketRef { info, ..p };
        let located = |kind| Error::Stream { path: file.path.clone(), offset: info.offset, kind };
        self.check_time(&p, last_clock).map_err(located)?;
        self.queue_notices(&p).map_err(located)?;
        self.prev = Some(p);
        self.packet = Some(p);
        self.mode = Mode::InPacket;
        Ok(())
    }

    /// Checks that time does not go back at packet `p` (just opened, its header and
    /// context decoded): its beginning not after its end, nor before the previous
    /// packet's end or the last event's time (`last_clock`, cycles, where known), nor
    /// another beginning than the index gives it, each beyond [`OVERLAP_NS`]. A flipped
    /// bit in a `timestamp_begin` is caught here rather than delivering events out of
    /// order. (Within a packet, a clock value that goes back, by a full-width timestamp
    /// or an N-bit one that wraps the clock past 2^64, is checked as its event is
    /// decoded: `StreamCursor::check_back`.) Times are compared as exact nanoseconds.
    /// Its beginning must also lie in the range of 64-bit nanoseconds from the clock's
    /// origin, as every delivered time (an event's: `StreamCursor::past_range`), where
    /// the clock's offset does (see `StreamCursor::clock_last`).
    fn check_time(&self, p: &PacketRef, last_clock: Option<u64>) -> std::result::Result<(), crate::error::DecodeErrorKind> {
        use crate::error::DecodeErrorKind::{TimeGoesBack, TimeOutOfRange};
        // An index file's entry must say what the packet says of itself.
        let index = self.stream.packets.get(self.next_packet.wrapping_sub(1)).filter(|q| q.info.offset == p.info.offset);
        if let Some(q) = index.filter(|q| self.set.packet_file(q).1.from_index) {
            let (a, b) = (&q.info, &p.info);
            let fields = [("size", a.total_bits, b.total_bits), ("content size", a.content_bits, b.content_bits)];
            let times = [("timestamp_begin", a.ts_begin, b.ts_begin), ("timestamp_end", a.ts_end, b.ts_end)];
            let differs = fields.iter().find(|f| f.1 != f.2).map(|f| (f.0, f.1, f.2));
            let differs =
                differs.or_else(|| times.iter().find(|f| f.1.is_some() && f.2.is_some() && f.1 != f.2).map(|f| (f.0, f.1.unwrap_or(0), f.2.unwrap_or(0))));
            if let Some((what, idx, own)) = differs {
                return Err(crate::error::DecodeErrorKind::Invalid(format!("the index gives the packet's {what} as {idx}, the packet as {own}")));
            }
        }
        let Some(conv) = self.conv else { return Ok(()) };
        if let Some(b) = p.info.ts_begin.filter(|&b| b > conv.last_in_range().unwrap_or(u64::MAX)) {
            return Err(TimeOutOfRange { what: "the packet's beginning", ns: conv.to_ns_wide(b) });
        }
        let overlap = i128::from(OVERLAP_NS);
        let Some(begin) = p.info.ts_begin.map(|c| conv.to_ns_wide(c)) else { return Ok(()) };
        let back = |what, from: i128| if begin + overlap < from { Err(TimeGoesBack { what, from, to: begin }) } else { Ok(()) };
        if let Some(end) = p.info.ts_end.filter(|&e| e != 0).map(|c| conv.to_ns_wide(c)) {
            if end + overlap < begin {
                return Err(TimeGoesBack { what: "the packet's end", from: begin, to: end });
            }
        }
        let prev = self.next_packet.checked_sub(2).and_then(|i| self.stream.packets.get(i)).filter(|q| q.trace == p.trace);
        // (Old tracers' packet ends run well past their last events: a coarse bound.)
        if let Some(end) = prev.and_then(|q| q.info.ts_end).filter(|&e| e != 0) {
            back("the packet's beginning", conv.to_ns_wide(end) - i128::from(PACKET_END_SLACK_NS))?;
        }
        if let Some(c) = last_clock {
            back("the packet's beginning", conv.to_ns_wide(c))?;
        }
        Ok(())
    }

    /// [`StreamCursor::check_time`]'s check that packet `p`, of this cursor's stream
    /// and trace, begins after the last event before it (clock value `last_clock`), for
    /// a packet opened by a twin ([`StreamCursor::count_pair`]) before that event was
    /// read: an error naming the packet's file and offset.
    pub(super) fn begins_after(&self, p: &PacketRef, last_clock: u64) -> Result<()> {
        let (Some(conv), Some(begin)) = (self.conv, p.info.ts_begin) else { return Ok(()) };
        let (from, to) = (conv.to_ns_wide(last_clock), conv.to_ns_wide(begin));
        if to + i128::from(OVERLAP_NS) >= from {
            return Ok(());
        }
        let (_, file) = self.set.packet_file(p);
        let kind = crate::error::DecodeErrorKind::TimeGoesBack { what: "the packet's beginning", from, to };
        Err(Error::Stream { path: file.path.clone(), offset: p.info.offset, kind })
    }

    /// Has the bytes of packet `p` and of those after it in the cursor's range, up to
    /// [`POPULATE_AHEAD`] bytes on, mapped in at once unless they already are
    /// ([`crate::trace::FileBytes::populate`]): a cursor reading a file's packets in
    /// turn then pays one call per few megabytes instead of a page fault every few pages
    /// (4–8 % of the time of a reader that wants few events, on one VM; see
    /// BENCHMARKS.md, session 23), and populates nothing outside its range (a parallel
    /// chunk's).
    fn populate_ahead(&mut self, p: &PacketRef) {
        let end_of = |q: &PacketRef| q.info.offset.saturating_add(q.info.total_bits / 8);
        let in_file = |q: &PacketRef| (q.trace, q.file) == (p.trace, p.file);
        let (t, f, upto_before) = self.populated;
        let same_file = (t, f) == (p.trace, p.file);
        let end = end_of(p);
        if same_file && end <= upto_before {
            return;
        }
        // The end of the range's last packet, when it lies in this file.
        let range_end = self.stream.packets[..self.last_packet].last().filter(|q| in_file(q)).map_or(u64::MAX, end_of);
        let upto = end.max(p.info.offset.saturating_add(POPULATE_AHEAD)).min(range_end.max(end));
        // (What this file has populated already is not asked for again.)
        let from = if same_file { p.info.offset.max(upto_before) } else { p.info.offset };
        let (_, file) = self.set.packet_file(p);
        file.bytes.populate(from as usize..upto as usize);
        self.populated = (p.trace, p.file, upto);
    }

    /// Discarded-event and lost-packet notices implied by packet `p` (Babeltrace 2's
    /// rules); an error where a time they give lies past the range of 64-bit
    /// nanoseconds from the clock's origin.
    fn queue_notices(&mut self, p: &PacketRef) -> std::result::Result<(), crate::error::DecodeErrorKind> {
        let ns = |c: Option<u64>| -> std::result::Result<Option<i64>, crate::error::DecodeErrorKind> {
            let (Some(conv), Some(c), true) = (self.conv, c, self.has_ts_range) else { return Ok(None) };
            if c > conv.last_in_range().unwrap_or(u64::MAX) {
                return Err(crate::error::DecodeErrorKind::TimeOutOfRange { what: "a notice's time", ns: conv.to_ns_wide(c) });
            }
            Ok(Some(conv.to_ns(c)))
        };
        let mut out = Vec::new();
        if let (Some(prev), Some(cur)) = (self.prev.and_then(|q| q.info.seq), p.info.seq) {
            if cur > prev.wrapping_add(1) && cur > prev {
                out.push((true, Notice { count: cur - prev - 1, begin_ns: ns(self.prev.and_then(|q| q.info.ts_end))?, end_ns: ns(p.info.ts_begin)? }));
            }
        }
        if let Some(cur) = p.info.discarded {
            let (count, begin) = match self.prev_discarded {
                None => (cur, p.info.ts_begin),
                Some(prev) => (cur.wrapping_sub(prev), self.prev.and_then(|q| q.info.ts_end)),
            };
            if count != 0 {
                out.push((false, Notice { count, begin_ns: ns(begin)?, end_ns: ns(p.info.ts_end)? }));
            }
            self.prev_discarded = Some(cur);
        }
        // `pending` is popped from the back: lost packets first, like Babeltrace.
        out.reverse();
        self.pending = out;
        Ok(())
    }

    /// Whether the cursor reads the last packet of its range and nothing follows it: no
    /// further packet, no stream error left to report at the end. (A reader that has
    /// gone past the time it wants there may then stop: a stream's clock only grows.)
    #[inline]
    pub fn in_last_packet(&self) -> bool {
        self.mode.in_packet() && self.next_packet >= self.last_packet && !self.report_stream_error
    }

    /// For a reader whose last item lies after `ns` (ns from origin): whether, by the
    /// packet index, nothing the cursor has yet to yield can have a time key at or
    /// below `ns`. That is so when the packet last opened ends after `ns` and every
    /// packet left in the range begins and ends after it: a stream's clock only grows,
    /// so the open packet's later events lie past the last item, and a packet's notices
    /// are keyed by its predecessor's end. False before any packet is opened, when a
    /// packet lacks index times or its trace a clock, and when the cursor has the
    /// stream's indexing error to report at its end (that error stays reported whatever
    /// part of the stream is read). The reader may then stop without reading the rest: a
    /// range's end costs what the events before it cost.
    pub fn rest_after(&self, ns: i64) -> bool {
        if self.report_stream_error && self.stream.error.is_some() {
            return false;
        }
        let after = |p: &PacketRef, ts: Option<u64>| self.set.packet_ns(p, ts).is_some_and(|t| t > ns);
        let Some(open) = self.packet.as_ref() else { return false };
        let rest = self.stream.packets.get(self.next_packet..self.last_packet).unwrap_or_default();
        after(open, open.info.ts_end) && rest.iter().all(|p| after(p, p.info.ts_begin) && after(p, p.info.ts_end))
    }

    /// Of packets `range` of stream `index` of `set`, the first that a reader wanting
    /// only items at or after `ns` (ns from origin) must read: the packets before it
    /// hold nothing it wants. That is so of the packets before packet `j` when `j`'s
    /// first event lies before `ns` (a stream's clock only grows: every earlier event
    /// does too) and, by the index, the packets before `j` and the one before them end
    /// before `ns` (a packet's notices are keyed by its predecessor's end, or for the
    /// first packet by its own times). Found by a binary search
    /// that reads the first event of a few packets (each by a cursor of its own);
    /// `range.start` when a packet read fails or lacks what the rule needs.
    pub fn first_needed(set: &'t TraceSet, index: usize, range: std::ops::Range<usize>, ns: i64) -> usize {
        let stream = &set.streams[index];
        let first_event_before = |j: usize| -> bool {
            let mut c = StreamCursor::with_packets(set, index, j..j + 1);
            loop {
                match c.next() {
                    Ok(Some(Item::Event(e))) => return e.ts().is_some_and(|t| t < ns),
                    Ok(Some(_)) => {}
                    _ => return false,
                }
            }
        };
        let ends_before = |j: usize| stream.packets.get(j).is_some_and(|p| set.packet_ns(p, p.info.ts_end).is_some_and(|t| t < ns));
        // The last packet whose first event lies before `ns` (the predicate holds on a
        // prefix of the range, the stream's clock growing).
        let (mut lo, mut hi) = (range.start, range.end.min(stream.packets.len()));
        if hi.saturating_sub(lo) < 2 {
            return range.start;
        }
        while hi - lo > 1 {
            let mid = lo + (hi - lo) / 2;
            if first_event_before(mid) {
                lo = mid;
            } else {
                hi = mid;
            }
        }
        // The notices of the packets passed over must be out of reach too: start no
        // later than the first of them (or the packet before them) that ends at or
        // after `ns`.
        match (range.start.saturating_sub(1)..lo).find(|&k| !ends_before(k)) {
            Some(k) => k.max(range.start),
            None => lo,
        }
    }

    /// Passes over the open packet's next events while the skimming loop of
    /// [`StreamCursor::next_wanted`] can (headers read by word loads, a fixed size or a
    /// [`StringSkim`](crate::plan::StringSkim) layout: [`StreamPlan::skim_by_id`]) and their clock values
    /// lie below `lo` (`u64::MAX`: up to the packet's end), by their headers and sizes
    /// only, whatever their class: for a reader that has no use for the part of a packet
    /// outside the time it wants (a chunk starting inside the packet, or one past its
    /// end). Returns the last passed event's clock value, `None` when none was passed.
    /// The event it stops before is read as usual next (with any error it holds).
    #[inline(never)]
    pub fn pass_before(&mut self, lo: u64) -> Option<u64> {
        self.leave_replay();
        if !self.mode.in_packet() || !self.pending.is_empty() {
            return None;
        }
        let (from, sp) = (self.cur.pos, self.sp);
        self.skim_fixed::<true>(&sp.skim_by_id, lo, |_, _| {});
        (self.cur.pos != from).then_some(self.dec.clock)
    }
}

/// How far (ns) a packet may begin before the stream's last event: old LTTng versions
/// write overlapping packets. No trace of `shared/traces` has a packet beginning
/// before the last event of the one before; their packets' *ends* overlap the next
/// beginning by up to 1.25 ms (`ust-hello-lost`; 1.5 µs in `synctraces-scp-src`), so
/// events are allowed that much too. Beyond it, time going back is an error, checked
/// as each packet is opened (a flipped bit of weight 2^20 or more in a
/// `timestamp_begin` is caught, any flip where an index file holds the packet's times)
/// and at each event whose clock value is earlier than the one before it (by a
/// full-width timestamp, LTTng's extended header, or an N-bit one that wraps the 64-bit
/// clock past 2^64), on every reading path (the fast ones hand such an event to
/// the general one).
pub const OVERLAP_NS: i64 = 1_250_000;

/// How far (ns) before the previous packet's `timestamp_end` a packet may begin, beyond
/// [`OVERLAP_NS`]: a coarse bound, as packet ends are the tracer's word. Readers that do
/// not know the stream's last event (a parallel chunk's first packet, packets read in
/// pairs) judge by this bound only.
pub const PACKET_END_SLACK_NS: i64 = 1_000_000_000;

/// Bytes of a stream file a cursor has mapped in ahead of the packet it opens
/// ([`StreamCursor::populate_ahead`]).
const POPULATE_AHEAD: u64 = 4 << 20;

/// Whether the packet context has clock-mapped beginning and end timestamps (then
/// notices carry times, as Babeltrace's do).
pub(super) fn has_ts_range(plan: &Plan, sp: &StreamPlan) -> bool {
    let Some(c) = sp.packet_context else { return false };
    let Node::Struct { first, count, .. } = *plan.node(c) else { return false };
    let has =
        |want: Role| plan.struct_members(first, count).iter().any(|m| matches!(*plan.node(m.node), Node::Int { clock: true, role: Some(r), .. } if r == want));
    has(Role::PacketBeginTimestamp) && has(Role::PacketEndTimestamp)
}
