//! Reading one data stream in order (no merging): packets, then events, with the
//! discarded-event and lost-packet notices that packet contexts imply (A3).
//!
//! A [`StreamCursor`] may be limited to a range of packets (a chunk, for parallel
//! analysis); state that depends on earlier packets (the clock's high bits, the
//! previous discarded-event counter) then starts from the chunk's first packet.

use crate::clock::ClockConv;
use crate::decode::{role_index, Cursor, Decoder, HeaderWord, SlotsOnly, Visitor};
use crate::error::{DecodeError, DecodeErrorKind as K, Error, Result};
use crate::index::read_packet_header;
use crate::ir::Role;
use crate::plan::{EventPlan, ExtForm, FieldHandle, HeaderLayout, Node, Plan, ScopeStep, ShortForm, StreamPlan, StringSkim, TAKE};
use crate::trace::{PacketRef, Stream, TraceSet};

mod ahead;
mod pair;
mod replay;

pub use ahead::{Ahead, AheadBuf, Copied, CopyRequest, CopySpec, AHEAD_ROOM, COPY_WINDOW, MAX_COPIES};
pub use pair::PairCount;

/// Events discarded by the tracer, or packets lost, between two points in time.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Notice {
    /// How many events (or packets).
    pub count: u64,
    /// Beginning of the interval, ns from origin (previous packet's end), when known.
    pub begin_ns: Option<i64>,
    /// End of the interval, ns from origin, when known.
    pub end_ns: Option<i64>,
}

/// What [`StreamCursor::count_packet`] counted in one packet.
#[derive(Debug, Clone, Copy, Default)]
pub struct PacketCount {
    /// The packet.
    pub packet: PacketRef,
    /// Events decoded.
    pub events: u64,
    /// Clock value (cycles) of the first and last event.
    pub first_cycles: Option<u64>,
    /// See `first_cycles`.
    pub last_cycles: Option<u64>,
    /// Discarded events noticed at this packet.
    pub discarded: u64,
    /// Lost packets noticed before this packet.
    pub lost: u64,
}

/// What a cursor yields.
pub enum Item<'c, 't> {
    /// An event (decoded; its fields are in the cursor's slots).
    Event(EventRef<'c, 't>),
    /// The stream's `events_discarded` counter grew.
    Discarded(Notice),
    /// `packet_seq_num` skipped values.
    LostPackets(Notice),
}

/// Clock values of the events [`StreamCursor::next_wanted`] passed over.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Passed {
    /// Smallest and largest clock values (cycles) inside the window.
    pub inside: Option<(u64, u64)>,
    /// Clock value of the last event passed over, inside the window or not.
    pub last: Option<u64>,
}

impl Passed {
    /// Joins a run of passed events: the clock of its last one, and the span of
    /// those inside the window (`lo > hi`: none).
    #[inline(always)]
    fn see_run(&mut self, last: Option<u64>, (lo, hi): (u64, u64)) {
        if last.is_some() {
            self.last = last;
        }
        if lo <= hi {
            self.inside = Some(self.inside.map_or((lo, hi), |(f, l)| (f.min(lo), l.max(hi))));
        }
    }
    /// Joins one passed event, of clock value `cycles`.
    #[inline(always)]
    fn see(&mut self, cycles: u64, window: (u64, u64)) {
        self.last = Some(cycles);
        if cycles >= window.0 && cycles <= window.1 {
            self.inside = Some(self.inside.map_or((cycles, cycles), |(f, l)| (f.min(cycles), l.max(cycles))));
        }
    }
}

/// The event classes a reader wants from one stream class, in the two forms
/// [`StreamCursor::next_wanted`] reads: a mask by class index, and by event id the
/// table of its skimming loop: [`StreamPlan::skim_by_id`]'s entries of the classes not
/// wanted (passed over), [`TAKE`]-flagged [`StreamPlan::fixed_by_id`] entries of the
/// wanted classes of fixed size (the loop stops there, or reads them ahead), and
/// `u64::MAX` (stop there, for the general path). One look-up per event.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Wanted {
    mask: Vec<bool>,
    skim_by_id: Vec<u64>,
    /// By class index: the fields [`StreamCursor::read_ahead`] copies out of its events
    /// (empty: none).
    copies: Vec<Option<CopySpec>>,
}

impl Wanted {
    /// The classes of `sp` true in `mask` (by class index; classes beyond it are wanted).
    pub fn new(sp: &StreamPlan, mask: Vec<bool>) -> Wanted {
        let wanted = |class: u64| mask.get(class as usize).copied().unwrap_or(true);
        let skim_by_id = sp
            .skim_by_id
            .iter()
            .zip(&sp.fixed_by_id)
            .map(|(&e, &f)| match e {
                u64::MAX => u64::MAX,
                e if !wanted(e >> 32) => e,
                _ if f != u64::MAX => TAKE | f,
                _ => u64::MAX,
            })
            .collect();
        Wanted { mask, skim_by_id, copies: Vec::new() }
    }

    /// [`Wanted::new`] that also has [`StreamCursor::read_ahead`] copy, out of each event
    /// of class index `i` it reads ahead, the integer fields `requests[i]` names (see
    /// [`CopyRequest`]; a class whose fields cannot all be read in place gets none).
    pub fn with_copies(sp: &StreamPlan, mask: Vec<bool>, requests: &[Option<CopyRequest>]) -> Wanted {
        let mut w = Wanted::new(sp, mask);
        w.copies = requests.iter().enumerate().map(|(class, r)| r.as_ref().and_then(|r| CopySpec::new(sp, class, r))).collect();
        w
    }

    /// Whether events of class index `class` are wanted.
    #[inline(always)]
    pub fn has(&self, class: usize) -> bool {
        self.mask.get(class).copied().unwrap_or(true)
    }
}

/// The event the cursor is on.
#[derive(Debug, Clone, Copy, Default)]
struct EventPos {
    class: u32,
    cycles: u64,
    /// Timestamp (ns from origin) of `cycles`, converted once; `None` when the stream
    /// has no clock.
    ts: Option<i64>,
    /// Bit positions where the common context, specific context and payload start.
    scopes: [u64; 3],
    /// Bit position of the event's first bit.
    start: u64,
    epoch: u32,
    /// The header of an event entered without writing its slots (fixed-size events
    /// read by word loads): its fields are read from here on demand
    /// ([`EventRef::header_field`]).
    header: HeaderCopy,
}

/// What [`EventPos::header`] keeps of a header read by word loads: its tag and form.
/// The rest follows from the event (see [`EventRef::header_field`]).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(crate) enum HeaderCopy {
    /// The header's slots hold its fields (the general path).
    #[default]
    InSlots,
    /// A short-form header with this tag.
    Short(u64),
    /// An extended-form header with this tag.
    Extended(u64),
}

/// Reads one stream's packets `[first, last)` in order.
pub struct StreamCursor<'t> {
    set: &'t TraceSet,
    stream: &'t Stream,
    next_packet: usize,
    last_packet: usize,
    trace: u32,
    plan: &'t Plan,
    sp: &'t StreamPlan,
    conv: Option<ClockConv>,
    dec: Decoder,
    cur: Cursor<'t>,
    in_packet: bool,
    packet: Option<PacketRef>,
    packet_epoch: u32,
    prev: Option<PacketRef>,
    prev_discarded: Option<u64>,
    has_ts_range: bool,
    pending: Vec<(bool, Notice)>,
    ev: EventPos,
    /// The item last returned by `next` (for [`StreamCursor::current`]).
    current: Option<(bool, Notice)>,
    done: bool,
    report_stream_error: bool,
    /// The file (trace and file index) whose bytes are populated up to byte `.2`
    /// ([`StreamCursor::populate_ahead`]).
    populated: (u32, u32, u64),
    /// What reading packets in pairs keeps (made at the first pair: see `replay.rs`).
    pairing: Option<Box<replay::Pairing<'t>>>,
    /// Whether the open packet's wanted events come from `pairing`.
    replaying: bool,
    /// Whether skimming reads whole packets in pairs ([`StreamCursor::read_in_pairs`]).
    pairs: bool,
}

impl<'t> StreamCursor<'t> {
    /// A cursor over all packets of stream `index` of `set`.
    pub fn new(set: &'t TraceSet, index: usize) -> Self {
        let n = set.streams[index].packets.len();
        Self::with_packets(set, index, 0..n)
    }

    /// A cursor over packets `range` of stream `index` of `set`.
    pub fn with_packets(set: &'t TraceSet, index: usize, range: std::ops::Range<usize>) -> Self {
        let stream = &set.streams[index];
        let first = stream.packets.first().map(|p| p.trace).unwrap_or(0);
        let trace = &set.traces[first as usize];
        let plan = &trace.plan;
        let sp = plan.stream(stream.class_id).unwrap_or(&plan.streams[0]);
        let report = range.end == stream.packets.len();
        // A chunk starting inside the stream continues from the previous packet's
        // counters, so that notices do not depend on where chunks are cut.
        let prev = range.start.checked_sub(1).and_then(|i| stream.packets.get(i)).copied();
        StreamCursor {
            set,
            stream,
            next_packet: range.start,
            last_packet: range.end.min(stream.packets.len()),
            trace: first,
            plan,
            sp,
            conv: sp.clock.map(|c| trace.clocks[c]),
            dec: Decoder::new(plan),
            cur: Cursor::new(&[], 0),
            in_packet: false,
            packet: None,
            packet_epoch: 0,
            prev,
            prev_discarded: prev.and_then(|p| p.info.discarded),
            has_ts_range: has_ts_range(plan, sp),
            pending: Vec::new(),
            ev: EventPos::default(),
            current: None,
            done: false,
            report_stream_error: report,
            populated: (u32::MAX, u32::MAX, 0),
            pairing: None,
            replaying: false,
            pairs: true,
        }
    }

    /// The decoding plan of the current packet's trace.
    pub fn plan(&self) -> &'t Plan {
        self.plan
    }

    /// The stream class of this stream.
    pub fn stream_plan(&self) -> &'t StreamPlan {
        self.sp
    }

    /// The packet being read.
    pub fn packet(&self) -> Option<&PacketRef> {
        self.packet.as_ref()
    }

    /// Advances to the next item. After an error, the cursor yields `None`.
    #[allow(clippy::should_implement_trait)]
    pub fn next(&mut self) -> Result<Option<Item<'_, 't>>> {
        self.leave_replay();
        match self.advance() {
            Ok(Some(Step::Notice(n))) => {
                self.current = Some(n);
                Ok(Some(self.current()))
            }
            Ok(Some(Step::Event)) => {
                self.current = None;
                Ok(Some(Item::Event(EventRef { c: self })))
            }
            Ok(None) => Ok(None),
            Err(e) => {
                self.done = true;
                Err(e)
            }
        }
    }

    /// [`StreamCursor::next`], passing over the events of packets of trace `trace` that
    /// `wanted` (made for this stream's class in that trace) does not want (decoded,
    /// every bound checked, not yielded):
    /// their clock values go to `passed`. Events of another trace are yielded whatever
    /// their class, so that the caller may change masks. `skim`: pass over events by
    /// their header and sizes only, decoding a wanted one a second time (cheaper when
    /// most events are passed over), two whole packets side by side where they can be
    /// ([`StreamCursor::read_in_pairs`]); else decode every event fully.
    #[inline(always)]
    pub fn next_wanted(&mut self, wanted: &Wanted, trace: usize, window: (u64, u64), skim: bool, passed: &mut Passed) -> Result<Option<Item<'_, 't>>> {
        let is_wanted = |class: u32| wanted.has(class as usize);
        if self.replaying && (!skim || self.trace as usize != trace) {
            self.leave_replay();
        }
        loop {
            if self.in_packet && !self.done && self.pending.is_empty() && self.trace as usize == trace {
                if self.replaying {
                    match self.replay_step(wanted, passed)? {
                        replay::Replayed::Event => {
                            self.current = None;
                            return Ok(Some(Item::Event(EventRef { c: self })));
                        }
                        // The packet found with it is open: its notices first.
                        replay::Replayed::Opened => continue,
                        replay::Replayed::Done => {}
                    }
                }
                // The tight loop: the rest of the packet, event by event.
                while self.cur.pos < self.cur.end {
                    if skim {
                        match self.skim_run(wanted, window, passed) {
                            SkimEnd::Wanted => {
                                self.current = None;
                                return Ok(Some(Item::Event(EventRef { c: self })));
                            }
                            SkimEnd::Again => continue,
                            SkimEnd::General => {}
                        }
                    }
                    let (start, clock) = (self.cur.pos, self.dec.clock);
                    let class = if skim { self.skim_event() } else { self.decode_event_as::<true>() };
                    let class = class.map_err(|e| self.fail(e))?;
                    if is_wanted(class) {
                        if skim {
                            // Decode it again, fully (same bytes, same clock: same result).
                            self.cur.pos = start;
                            self.dec.clock = clock;
                            self.decode_event().map_err(|e| self.fail(e))?;
                        }
                        self.current = None;
                        return Ok(Some(Item::Event(EventRef { c: self })));
                    }
                    passed.see(self.dec.clock, window);
                }
                self.in_packet = false;
            }
            // The next two packets read in a pair where they can be.
            if skim && self.start_pair(wanted, trace, window)? {
                continue;
            }
            match self.advance() {
                Ok(Some(Step::Notice(n))) => {
                    self.current = Some(n);
                    return Ok(Some(self.current()));
                }
                Ok(Some(Step::Event)) => {
                    if self.trace as usize != trace || is_wanted(self.ev.class) {
                        self.current = None;
                        return Ok(Some(Item::Event(EventRef { c: self })));
                    }
                    passed.see(self.ev.cycles, window);
                }
                Ok(None) => {
                    // (What reading in pairs kept goes back to the allocator, for the
                    // next stream's cursor.)
                    self.pairing = None;
                    return Ok(None);
                }
                Err(e) => {
                    self.done = true;
                    return Err(e);
                }
            }
        }
    }

    /// Whether the cursor reads the last packet of its range and nothing follows it: no
    /// further packet, no stream error left to report at the end. (A reader that has
    /// gone past the time it wants there may then stop: a stream's clock only grows.)
    #[inline]
    pub fn in_last_packet(&self) -> bool {
        self.in_packet && self.next_packet >= self.last_packet && !self.report_stream_error
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
    /// [`StringSkim`] layout: [`StreamPlan::skim_by_id`]) and their clock values
    /// lie below `lo` (`u64::MAX`: up to the packet's end), by their headers and sizes
    /// only, whatever their class: for a reader that has no use for the part of a packet
    /// outside the time it wants (a chunk starting inside the packet, or one past its
    /// end). Returns the last passed event's clock value, `None` when none was passed.
    /// The event it stops before is read as usual next (with any error it holds).
    #[inline(never)]
    pub fn pass_before(&mut self, lo: u64) -> Option<u64> {
        self.leave_replay();
        if !self.in_packet || !self.pending.is_empty() || self.done {
            return None;
        }
        let (from, sp) = (self.cur.pos, self.sp);
        self.skim_fixed::<true>(&sp.skim_by_id, lo, |_, _| {});
        (self.cur.pos != from).then_some(self.dec.clock)
    }

    /// Index (in the set) of the trace of the packet being read, or of the first packet.
    #[inline]
    pub fn trace_index(&self) -> usize {
        self.trace as usize
    }

    /// Counts the remaining events per event class (`per_class[class_index] += 1`) and
    /// returns the discarded events and lost packets noticed, decoding exactly what
    /// [`StreamCursor::next`] decodes (every bound checked) without yielding items.
    /// Whole packets are counted two at a time where they can be
    /// ([`StreamCursor::count_pair`]).
    pub fn count(&mut self, per_class: &mut [u64]) -> Result<(u64, u64)> {
        self.leave_replay();
        let (mut discarded, mut lost) = (0, 0);
        // Reads the second packet of each pair ([`StreamCursor::count_pair`]).
        let mut twin = None;
        loop {
            while let Some((is_lost, n)) = self.pending.pop() {
                if is_lost { lost += n.count } else { discarded += n.count }
            }
            if self.in_packet {
                self.skim_rest(per_class).map_err(|e| self.stream_error(e))?;
                self.in_packet = false;
            }
            if !self.done && self.next_packet + 1 < self.last_packet {
                let twin = twin.get_or_insert_with(|| self.twin());
                if let Some((first, second)) = self.count_pair(twin, per_class, (0, u64::MAX))? {
                    let second = second?;
                    discarded += first.discarded + second.discarded;
                    lost += first.lost + second.lost;
                    continue;
                }
            }
            match self.advance() {
                Ok(None) => return Ok((discarded, lost)),
                Ok(Some(Step::Notice((is_lost, n)))) => {
                    if is_lost { lost += n.count } else { discarded += n.count }
                }
                Ok(Some(Step::Event)) => {
                    tally(per_class, self.ev.class);
                }
                Err(e) => {
                    self.done = true;
                    return Err(e);
                }
            }
        }
    }

    /// Decodes the rest of the current packet, or the next packet when between packets,
    /// counting its events per event class; returns what it counted, or `None` at the
    /// end of the range. Notices of that packet are counted, not yielded.
    pub fn count_packet(&mut self, per_class: &mut [u64]) -> Result<Option<PacketCount>> {
        self.count_packet_in(per_class, (0, u64::MAX))
    }

    /// [`StreamCursor::count_packet`], counting only the events whose clock value lies
    /// in `window` (inclusive; all are decoded); `first_cycles` and `last_cycles` are
    /// those of the counted events.
    pub fn count_packet_in(&mut self, per_class: &mut [u64], window: (u64, u64)) -> Result<Option<PacketCount>> {
        self.leave_replay();
        if !self.in_packet {
            if self.done || self.next_packet >= self.last_packet {
                // Let `advance` report the stream's error (if any) and finish.
                return match self.advance() {
                    Ok(_) => Ok(None),
                    Err(e) => {
                        self.done = true;
                        Err(e)
                    }
                };
            }
            let p = self.stream.packets[self.next_packet];
            self.next_packet += 1;
            if let Err(e) = self.open_packet(p) {
                self.done = true;
                return Err(e);
            }
        }
        if counted_whole(&self.packet.expect("a packet is open").info, window) {
            // Every event counts (the packet's events lie within its context's time
            // range, as the packet index assumes): the tight loop, first and last clock
            // values read around it.
            let out = self.begin_count(per_class)?;
            return self.end_count(out, per_class).map(Some);
        }
        let mut out = self.count_of_open_packet();
        let seen = self.skim_each(|class, cycles| {
            if cycles >= window.0 && cycles <= window.1 {
                tally(per_class, class);
                out.events += 1;
                out.first_cycles.get_or_insert(cycles);
                out.last_cycles = Some(cycles);
            }
        });
        seen.map_err(|e| self.fail(e))?;
        self.in_packet = false;
        Ok(Some(out))
    }

    /// A packet-level field (packet header or context) of the current packet.
    pub fn packet_uint(&self, h: FieldHandle) -> Option<u64> {
        if !h.packet_level || self.packet.is_none() {
            return None;
        }
        let i = h.node.0 as usize;
        (self.dec.stamps[i] >= self.packet_epoch).then(|| self.dec.slots[i])
    }

    /// Nanoseconds from origin of a clock value of this stream.
    pub fn cycles_to_ns(&self, cycles: u64) -> Option<i64> {
        self.conv.map(|c| c.to_ns(cycles))
    }

    /// The item last returned by [`StreamCursor::next`], again.
    pub fn current(&mut self) -> Item<'_, 't> {
        match self.current {
            Some((true, n)) => Item::LostPackets(n),
            Some((false, n)) => Item::Discarded(n),
            None => Item::Event(EventRef { c: self }),
        }
    }

    fn advance(&mut self) -> Result<Option<Step>> {
        loop {
            if self.done {
                return Ok(None);
            }
            if let Some(n) = self.pending.pop() {
                return Ok(Some(Step::Notice(n)));
            }
            if self.in_packet {
                if self.cur.pos < self.cur.end {
                    self.decode_event().map_err(|e| self.stream_error(e))?;
                    return Ok(Some(Step::Event));
                }
                self.in_packet = false;
            }
            if self.next_packet >= self.last_packet {
                self.done = true;
                if self.report_stream_error {
                    if let Some((t, f)) = self.stream.error {
                        // Re-scan to rebuild the (non-Clone) error.
                        let file = &self.set.traces[t as usize].files[f as usize];
                        if let Some(e) = &file.error {
                            return Err(clone_error(e));
                        }
                    }
                }
                return Ok(None);
            }
            let p = self.stream.packets[self.next_packet];
            self.next_packet += 1;
            self.open_packet(p)?;
        }
    }

    fn stream_error(&self, e: DecodeError) -> Error {
        let p = self.packet.expect("an event is decoded inside a packet");
        let (_, file) = self.set.packet_file(&p);
        Error::Stream { path: file.path.clone(), offset: p.info.offset + e.bit_pos / 8, kind: e.kind }
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

    fn open_packet(&mut self, p: PacketRef) -> Result<()> {
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
        let data: &'t [u8] = &file.bytes;
        // A packet running past the end of its file is read up to there; the stream's
        // indexing error is reported after its last event.
        let (info, _) = read_packet_header(self.plan, &mut self.dec, data, p.info.offset)
            .map_err(|e| Error::Stream { path: file.path.clone(), offset: p.info.offset + e.bit_pos / 8, kind: e.kind })?;
        let header_end = {
            // Decode again into a cursor we keep, so events continue after the context.
            // The buffer runs on to the file's end (reads stop at the content's end,
            // within the packet): a word load of the packet's last bytes then never runs
            // past the buffer, so the skimming loop reads its last event too.
            let buf = &data[info.offset as usize..];
            let mut cur = Cursor::new(buf, info.content_bits.min(info.total_bits));
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
        self.queue_notices(&p);
        self.prev = Some(p);
        self.packet = Some(p);
        self.in_packet = true;
        Ok(())
    }

    /// Discarded-event and lost-packet notices implied by packet `p` (Babeltrace 2's rules).
    fn queue_notices(&mut self, p: &PacketRef) {
        let ns = |c: Option<u64>| -> Option<i64> {
            if !self.has_ts_range {
                return None;
            }
            Some(self.conv?.to_ns(c?))
        };
        let mut out = Vec::new();
        if let (Some(prev), Some(cur)) = (self.prev.and_then(|q| q.info.seq), p.info.seq) {
            if cur > prev.wrapping_add(1) && cur > prev {
                out.push((true, Notice {
                    count: cur - prev - 1,
                    begin_ns: ns(self.prev.and_then(|q| q.info.ts_end)),
                    end_ns: ns(p.info.ts_begin),
                }));
            }
        }
        if let Some(cur) = p.info.discarded {
            let (count, begin) = match self.prev_discarded {
                None => (cur, p.info.ts_begin),
                Some(prev) => (cur.wrapping_sub(prev), self.prev.and_then(|q| q.info.ts_end)),
            };
            if count != 0 {
                out.push((false, Notice { count, begin_ns: ns(begin), end_ns: ns(p.info.ts_end) }));
            }
            self.prev_discarded = Some(cur);
        }
        // `pending` is popped from the back: lost packets first, like Babeltrace.
        out.reverse();
        self.pending = out;
    }

    /// Passes over the rest of the open packet, counting its events per class; returns
    /// how many there were.
    #[inline(always)]
    fn skim_rest(&mut self, per_class: &mut [u64]) -> std::result::Result<u64, DecodeError> {
        let mut n = 0;
        self.skim_each(|class, _| {
            tally(per_class, class);
            n += 1;
        })?;
        Ok(n)
    }

    /// Passes over the rest of the open packet, calling `see(class, clock)` for each
    /// event: runs of fixed-size events through [`StreamCursor::skim_fixed`], the others
    /// one by one through the general path.
    #[inline(always)]
    fn skim_each(&mut self, mut see: impl FnMut(u32, u64)) -> std::result::Result<(), DecodeError> {
        while self.cur.pos < self.cur.end {
            let sp = self.sp;
            self.skim_fixed::<false>(&sp.skim_by_id, 0, &mut see);
            if self.cur.pos >= self.cur.end {
                break;
            }
            let class = self.skim_event()?;
            see(class, self.dec.clock);
        }
        Ok(())
    }

    /// Decodes the next event's header and passes over its scopes without recording
    /// where they start or writing the header's slots (for loops that only count or pass
    /// over events). Returns the class index; the clock is updated.
    #[inline(always)]
    fn skim_event(&mut self) -> std::result::Result<u32, DecodeError> {
        self.decode_event_as::<false>()
    }

    /// Decodes the next event and records it (`self.ev`) for [`EventRef`].
    #[inline(always)]
    fn decode_event(&mut self) -> std::result::Result<(), DecodeError> {
        self.decode_event_as::<true>().map(|_| ())
    }

    /// Decodes the next event: header, class and scopes, every bound checked; returns
    /// the class index and updates the clock. `FULL`: also writes the header's slots and
    /// records the event in `self.ev` (class, clock, each scope's aligned start).
    #[inline(always)]
    fn decode_event_as<const FULL: bool>(&mut self) -> std::result::Result<u32, DecodeError> {
        if let Some(class) = self.fixed_event::<FULL>() {
            return Ok(class);
        }
        let plan = self.plan;
        let sp = self.sp;
        let start = self.cur.pos;
        self.dec.epoch = self.dec.epoch.wrapping_add(1);
        let id = if let Some(fh) = &sp.fast_header {
            self.dec.decode_fast_header::<FULL>(fh, &mut self.cur)?
        } else {
            self.dec.roles[role_index(Role::EventClassId)] = None;
            if let Some(h) = sp.event_header {
                self.dec.decode(plan, h, &mut self.cur, &mut SlotsOnly)?;
            }
            match self.dec.roles[role_index(Role::EventClassId)] {
                Some(id) => id,
                None => sp.events.first().map(|e| e.id).unwrap_or(0),
            }
        };
        let class_idx = sp.event_index(id).ok_or(DecodeError::new(start, K::UnknownEventId(id, sp.id)))?;
        let class = &sp.events[class_idx];
        let mut scopes = [0u64; 3];
        if let Some(chain) = &class.skip_all {
            // Every scope is skipped: one bounds check for all.
            self.cur.align(chain.align)?;
            let at = self.cur.pos;
            self.cur.need(chain.bits)?;
            self.cur.pos = at + chain.bits;
            scopes = chain.starts.map(|s| at + s);
        } else {
            // `scopes` holds each scope's aligned start (what `LazyField` offsets and
            // `EventRef::visit` start from).
            for (k, step) in class.steps.iter().enumerate() {
                match *step {
                    ScopeStep::Absent => scopes[k] = self.cur.pos,
                    // Fixed layout and nothing anyone needs a slot for: skip it; handles
                    // read its fields in place (`LazyField`).
                    ScopeStep::Skip { align, bits } => {
                        self.cur.align(align)?;
                        scopes[k] = self.cur.pos;
                        self.cur.skip(1, bits)?;
                    }
                    ScopeStep::Decode(root) => {
                        self.cur.align(crate::decode::node_align(plan.node(root)))?;
                        scopes[k] = self.cur.pos;
                        match (&class.skim[k], &class.flat[k]) {
                            (Some(ops), _) if !FULL => self.cur.skim(ops)?,
                            (_, Some(ops)) => self.dec.decode_flat(ops, &mut self.cur)?,
                            _ => self.dec.decode(plan, root, &mut self.cur, &mut SlotsOnly)?,
                        }
                    }
                }
            }
        }
        if self.cur.pos == start {
            return Err(DecodeError::new(start, K::EmptyEvent(id)));
        }
        if FULL {
            self.ev = EventPos { class: class_idx as u32, cycles: self.dec.clock, ts: self.clock_ts(), scopes, start, epoch: self.dec.epoch, header: HeaderCopy::InSlots };
        }
        Ok(class_idx as u32)
    }

    /// The skimming part of [`StreamCursor::next_wanted`] (kept out of line: a reader
    /// that wants most events never skims): passes over a run of unwanted events of
    /// fixed size, then reads the event it stopped before when that is of fixed size.
    #[inline(never)]
    fn skim_run(&mut self, wanted: &Wanted, window: (u64, u64), passed: &mut Passed) -> SkimEnd {
        // The run's span, in locals (`lo > hi`: none passed). The clock ends at the
        // last passed event's.
        let (from, clock) = (self.cur.pos, self.dec.clock);
        let (mut lo, mut hi) = (u64::MAX, 0);
        let mut stopped = self.skim_fixed::<false>(&wanted.skim_by_id, 0, |_, clock| (lo, hi) = (lo.min(clock), hi.max(clock)));
        if lo <= hi && (lo < window.0 || hi > window.1) {
            if hi < window.0 || lo > window.1 {
                // All outside the window (the part of a packet beyond the slice).
                (lo, hi) = (u64::MAX, 0);
            } else {
                // Across the window's edge: read the run again.
                (self.cur.pos, self.dec.clock) = (from, clock);
                (stopped, (lo, hi)) = self.skim_in_window(wanted, window);
            }
        }
        let last = (self.cur.pos != from).then_some(self.dec.clock);
        passed.see_run(last, (lo, hi));
        if self.cur.pos >= self.cur.end {
            return SkimEnd::Again;
        }
        // Stopped before a wanted event: take it as the loop read it.
        if let Some(w) = stopped {
            self.take_stopped(w);
            return SkimEnd::Wanted;
        }
        // Stopped before an event of another kind: a fixed one is read fully at once.
        match self.fixed_event::<true>() {
            Some(class) if wanted.has(class as usize) => SkimEnd::Wanted,
            Some(_) => {
                passed.see(self.dec.clock, window);
                SkimEnd::Again
            }
            None => SkimEnd::General,
        }
    }

    /// The skim run of [`StreamCursor::next_wanted`] again, for a run that crosses the
    /// window's edge (a few per slice): returns where it stopped and the span of the
    /// passed events inside the window.
    #[cold]
    #[inline(never)]
    fn skim_in_window(&mut self, wanted: &Wanted, window: (u64, u64)) -> (Option<Stopped>, (u64, u64)) {
        let (mut lo, mut hi) = (u64::MAX, 0);
        let stopped = self.skim_fixed::<false>(&wanted.skim_by_id, 0, |_, clock| {
            if clock >= window.0 && clock <= window.1 {
                (lo, hi) = (lo.min(clock), hi.max(clock));
            }
        });
        (stopped, (lo, hi))
    }

    /// Passes over the open packet's events, from the cursor on, for as long as each
    /// has a header [`StreamCursor::fixed_event`] reads and an id whose entry in `table`
    /// (one of [`Wanted`]'s tables, or [`StreamPlan::skim_by_id`]) passes it over (a
    /// fixed size, or a [`StringSkim`] layout whose string ends inside the packet) and,
    /// with `STOP`, a clock value below `stop_at`, calling `see(class, clock)` for each.
    /// The event it stops before is left unread, for the general path; when its entry
    /// has the [`TAKE`] flag (a wanted class of fixed size) and it lies inside the
    /// packet, it is returned as read.
    /// Only the position and the clock change: skimmed events write no slot. The whole
    /// loop runs on locals.
    ///
    /// LTTng's two little-endian header layouts get loops of their own, compiled with
    /// the layout's constants (fewer live values in the loop, fewer spills).
    #[inline(always)]
    fn skim_fixed<const STOP: bool>(&mut self, table: &[u64], stop_at: u64, see: impl FnMut(u32, u64)) -> Option<Stopped> {
        self.skim_fixed_taking::<STOP, false>(table, stop_at, see, |_| false)
    }

    /// [`StreamCursor::skim_fixed`] that offers each event of fixed size it would stop
    /// before (one whose entry has the [`TAKE`] flag) to `take` first: when `take`
    /// returns true (it keeps the event), the loop goes on after that event. Without
    /// `STOP` only; `TAKES` where `take` may keep events (its checks are then fewer; the
    /// loop may stop 4 GiB on in a packet).
    #[inline(always)]
    fn skim_fixed_taking<const STOP: bool, const TAKES: bool>(&mut self, table: &[u64], stop_at: u64, see: impl FnMut(u32, u64), take: impl FnMut(&Stopped) -> bool) -> Option<Stopped> {
        let h = self.sp.fast_header.as_ref()?;
        match h.layout {
            HeaderLayout::LttngCompactLe => self.skim_fixed_as::<false, STOP, TAKES>(ShortForm::LTTNG_COMPACT_LE, Some(ExtForm::LTTNG_COMPACT_LE), table, stop_at, see, take),
            HeaderLayout::LttngLargeLe => self.skim_fixed_as::<false, STOP, TAKES>(ShortForm::LTTNG_LARGE_LE, Some(ExtForm::LTTNG_LARGE_LE), table, stop_at, see, take),
            HeaderLayout::Other => {
                let (form, ext) = (h.short_form()?, h.ext_form());
                if h.be {
                    self.skim_fixed_as::<true, STOP, TAKES>(form, ext, table, stop_at, see, take)
                } else {
                    self.skim_fixed_as::<false, STOP, TAKES>(form, ext, table, stop_at, see, take)
                }
            }
        }
    }

    /// [`StreamCursor::skim_fixed`] in byte units, for headers of byte order `BE` whose
    /// short form is `form` and extended form `ext` (`None`: word loads do not read it),
    /// every invariant held in a local (`STOP` and `TAKES` as there).
    #[inline(always)]
    fn skim_fixed_as<const BE: bool, const STOP: bool, const TAKES: bool>(&mut self, form: ShortForm, ext: Option<ExtForm>, table: &[u64], stop_at: u64, mut see: impl FnMut(u32, u64), mut take: impl FnMut(&Stopped) -> bool) -> Option<Stopped> {
        let sw = form.word;
        let sbytes = sw.bits / 8;
        if !self.cur.pos.is_multiple_of(8) || !sw.bits.is_multiple_of(8) || !form.align.is_multiple_of(8) {
            return None;
        }
        let buf = self.cur.buf;
        let end = (self.cur.end / 8) as usize;
        let am = (form.align / 8) as usize - 1;
        let (short_lo, short_span) = (form.range.0, form.range.1.wrapping_sub(form.range.0));
        // (Each timestamp's mask is the low bits of its field: `sw.ts.1`, `x.ts.2`.)
        let (ext_lo, ext_span) = ext.map_or((1, 0), |x| (x.range.0, x.range.1.wrapping_sub(x.range.0)));
        // 8 bytes as a word in the header's byte order; the word at byte `i` (below 9)
        // of a 16-byte block.
        let word_of = |w: [u8; 8]| if BE { u64::from_be_bytes(w) } else { u64::from_le_bytes(w) };
        let word_in = |b: &[u8; 16], i: usize| word_of(b[i..i + 8].try_into().unwrap_or_default());
        let load = |at: usize| -> Option<u64> { Some(word_of(buf.get(at..at + 8)?.try_into().ok()?)) };
        // The words at `at + i` and `at + j`, for an extended form `in_block` does not
        // cover. (Its first branch is then never taken; it stays because taking it out
        // changes the code generated for the whole skimming loop: 5 % more
        // instructions on LTTng's layouts, measured.)
        let load_pair = |at: usize, i: usize, j: usize| -> Option<(u64, u64)> {
            if i <= 8 && j <= 8 {
                let b: &[u8; 16] = buf.get(at..at + 16)?.try_into().ok()?;
                Some((word_in(b, i), word_in(b, j)))
            } else {
                Some((load(at + i)?, load(at + j)?))
            }
        };
        // Where the extended form's id and timestamp lie in the header's first 16 bytes
        // (LTTng's forms, constants there), one load and one bounds check read either
        // form; a header in the file's last 16 bytes is then left to the general path.
        let in_block = ext.is_some_and(|x| x.words.id.0 <= 8 && x.words.ts.0 <= 8);
        let (mut p, mut clock, mut stopped) = ((self.cur.pos / 8) as usize, self.dec.clock, None);
        // With `TAKES`, content more than 4 GiB on is left to the next run: an entry of
        // `u64::MAX` (stop there), read as a size of 2^32 - 1 bytes, then ends past
        // `end`, which so checks both.
        let end = if TAKES { end.min(p.saturating_add(u32::MAX as usize - 1)) } else { end };
        while p < end {
            let base = (p + am) & !am;
            let block = if in_block { buf.get(base..base + 16).and_then(|b| <&[u8; 16]>::try_from(b).ok()) } else { None };
            let word = match block {
                Some(b) => word_in(b, 0),
                None if in_block => break,
                None => match load(base) {
                    Some(w) => w,
                    None => break,
                },
            };
            let tag = (word >> sw.id.0) & sw.id.1;
            // The clock is extended in each form's branch, with its mask (a constant
            // for LTTng's layouts: the extended form's 64-bit timestamp is the clock).
            // (`hlead`: the header's bits, with the extended form's flag, a constant of
            // each branch.)
            let (id, ts, hbytes, hlead, cycles, is_ext) = if tag.wrapping_sub(short_lo) <= short_span {
                let ts = (word >> sw.ts.0) & sw.ts.1;
                (tag, ts, sbytes as usize, (sbytes * 8) as u32, crate::decode::extend_clock_masked(clock, ts, sw.ts.1), false)
            } else {
                let Some(x) = ext.filter(|_| tag.wrapping_sub(ext_lo) <= ext_span).map(|x| x.words) else { break };
                let pair = match block {
                    Some(b) => Some((word_in(b, x.id.0), word_in(b, x.ts.0))),
                    None => load_pair(base, x.id.0, x.ts.0),
                };
                let Some((i, t)) = pair else { break };
                let ts = (t >> x.ts.1) & x.ts.2;
                ((i >> x.id.1) & x.id.2, ts, (x.bits / 8) as usize, (x.bits / 8 * 8) as u32 | ahead::EXTENDED, crate::decode::extend_clock_masked(clock, ts, x.ts.2), true)
            };
            let Some(&e) = table.get(id as usize) else { break };
            if e & TAKE != 0 {
                // Not passed over: one of fixed size (`TAKE`, not `u64::MAX`), inside
                // the packet, is offered to `take`, else handed over.
                let next = base + hbytes + (e & 0xffff_ffff) as usize;
                if (!TAKES && e == u64::MAX) || next > end {
                    break;
                }
                let header = HeaderWord { tag, id, ts, ext: is_ext, bits: hbytes as u64 * 8 };
                let lead = ((base - p) * 8) as u32 + hlead;
                let s = Stopped { header, lead, start: p as u64 * 8, at: (base + hbytes) as u64 * 8, end: next as u64 * 8, class: ((e & !TAKE) >> 32) as u32, cycles };
                if !STOP && take(&s) {
                    (p, clock) = (next, cycles);
                    continue;
                }
                stopped = Some(s);
                break;
            }
            let mut next = base + hbytes + (e & 0xffff_ffff) as usize;
            if e & StringSkim::FLAG != 0 {
                let Some(n) = string_end(buf, base + hbytes, end, StringSkim::of_entry(e)) else { break };
                next = n;
            }
            if next > end {
                break;
            }
            if STOP && cycles >= stop_at {
                break;
            }
            see((e >> 32) as u32, cycles);
            (p, clock) = (next, cycles);
        }
        self.cur.pos = p as u64 * 8;
        self.dec.clock = clock;
        stopped
    }

    /// Takes the event a skim run stopped before as the current one, with the effects
    /// of [`StreamCursor::fixed_event`] (header slots, clock, scopes), without reading
    /// its header again.
    #[inline(always)]
    fn take_stopped(&mut self, s: Stopped) {
        let Some(h) = self.sp.fast_header.as_ref() else { return };
        // `fixed_by_id` holds only classes aligned to at most a byte: the scopes start
        // right after the header.
        let starts = self.sp.fixed.get(s.class as usize).map_or([0; 3], |f| f.starts);
        self.enter_fixed::<true>(h, &s.header, s.class, (s.start, s.at, s.end), starts);
    }

    /// Makes a fixed-size event whose header `w` was read the current one (with `FULL`,
    /// else only the clock and position move): it starts at bit `start`, its scopes at
    /// `at` (plus `starts`), and it ends at `end`.
    #[inline(always)]
    fn enter_fixed<const FULL: bool>(&mut self, h: &crate::plan::FastHeader, w: &HeaderWord, class: u32, (start, at, end): (u64, u64, u64), starts: [u32; 3]) {
        self.dec.take_header::<false>(h, w);
        self.cur.pos = end;
        if FULL {
            self.set_current_fixed(HeaderCopy::new(w.tag, w.ext), class, (start, at), starts, self.dec.clock, self.clock_ts());
        } else {
            self.dec.epoch = self.dec.epoch.wrapping_add(1);
        }
    }

    /// Records the fixed-size event of class `class` whose header (kept as `header`)
    /// gives clock value `cycles` (timestamp `ts`) as the current one: a new epoch and
    /// `self.ev` (first bit `start`, scopes at `at` plus `starts`). The header's slots
    /// are not written: its fields are read from `header` on demand. The position and the
    /// clock are the caller's to move.
    #[inline(always)]
    #[allow(clippy::too_many_arguments)]
    fn set_current_fixed(&mut self, header: HeaderCopy, class: u32, (start, at): (u64, u64), starts: [u32; 3], cycles: u64, ts: Option<i64>) {
        self.dec.epoch = self.dec.epoch.wrapping_add(1);
        let scopes = starts.map(|x| at + u64::from(x));
        self.ev = EventPos { class, cycles, ts, scopes, start, epoch: self.dec.epoch, header };
    }

    /// [`StreamCursor::decode_event_as`] for the common LTTng case: a header that word
    /// loads read ([`crate::plan::FastHeader::peek`]) and an event class of fixed size
    /// ([`crate::plan::FixedSize`]), so one bounds check covers the whole event and no
    /// bit-level read is made. Same effects as the general path; `None` (nothing
    /// consumed): take the general path, which also reports any error.
    #[inline(always)]
    fn fixed_event<const FULL: bool>(&mut self) -> Option<u32> {
        let sp = self.sp;
        let h = sp.fast_header.as_ref()?;
        let start = self.cur.pos;
        let base = crate::plan::align_up(start, h.align as u64);
        let w = h.peek(self.cur.buf, base, self.cur.end)?;
        let class = sp.event_index(w.id)?;
        let f = *sp.fixed.get(class)?;
        if !f.is_fixed() {
            return None;
        }
        let at = crate::plan::align_up(base + w.bits, f.align as u64);
        let end = at + f.bits as u64;
        if end > self.cur.end {
            return None;
        }
        self.enter_fixed::<FULL>(h, &w, class as u32, (start, at, end), f.starts);
        Some(class as u32)
    }

    /// The time (ns from origin) of the clock's current value: of the event last read
    /// or passed over, else the packet's beginning.
    pub fn clock_ns(&self) -> Option<i64> {
        self.clock_ts()
    }

    /// The timestamp of the clock's current value (of the event being made current).
    #[inline(always)]
    fn clock_ts(&self) -> Option<i64> {
        self.conv.map(|c| c.to_ns(self.dec.clock))
    }

    /// Ends the cursor on a decoding error of the open packet, as an error naming the
    /// file and offset.
    fn fail(&mut self, e: DecodeError) -> Error {
        self.done = true;
        self.stream_error(e)
    }
}

/// Bytes of a stream file a cursor has mapped in ahead of the packet it opens
/// ([`StreamCursor::populate_ahead`]).
const POPULATE_AHEAD: u64 = 4 << 20;

/// How [`StreamCursor::skim_run`] ended.
enum SkimEnd {
    /// On a wanted event, now the current one.
    Wanted,
    /// Go on (at the packet's end, or after an unwanted event read fully).
    Again,
    /// Before an event only the general path reads.
    General,
}

/// An event a skim run refused ([`StreamCursor::skim_fixed`]): its header, where it
/// starts (`start`), where its scopes start (`at`) and end (`end`), in bits, and its
/// class index.
#[derive(Debug, Clone, Copy)]
struct Stopped {
    header: HeaderWord,
    /// `at - start`, with [`ahead::EXTENDED`] when the header has the extended form
    /// (as [`Ahead`] keeps it).
    lead: u32,
    start: u64,
    at: u64,
    end: u64,
    class: u32,
    /// The clock value its header gives.
    cycles: u64,
}

enum Step {
    Notice((bool, Notice)),
    Event,
}

/// Whether the packet context has clock-mapped beginning and end timestamps (then
/// notices carry times, as Babeltrace's do).
fn has_ts_range(plan: &Plan, sp: &StreamPlan) -> bool {
    let Some(c) = sp.packet_context else { return false };
    let Node::Struct { first, count, .. } = *plan.node(c) else { return false };
    let has = |want: Role| {
        plan.struct_members(first, count).iter().any(|m| matches!(*plan.node(m.node), Node::Int { clock: true, role: Some(r), .. } if r == want))
    };
    has(Role::PacketBeginTimestamp) && has(Role::PacketEndTimestamp)
}

fn clone_error(e: &Error) -> Error {
    match e {
        Error::Stream { path, offset, kind } => Error::Stream { path: path.clone(), offset: *offset, kind: kind.clone() },
        Error::Io { path, source } => Error::Io { path: path.clone(), source: std::io::Error::new(source.kind(), source.to_string()) },
        Error::Metadata { path, line, msg } => Error::Metadata { path: path.clone(), line: *line, msg: msg.clone() },
        Error::MetadataPacket { path, offset, msg } => Error::MetadataPacket { path: path.clone(), offset: *offset, msg: msg.clone() },
        Error::NoTrace(p) => Error::NoTrace(p.clone()),
    }
}

/// A decoded event, valid until its cursor moves.
pub struct EventRef<'c, 't> {
    c: &'c mut StreamCursor<'t>,
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

    /// Timestamp in ns from the clock's origin; `None` when the stream has no clock.
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
        self.c.ev.start
    }

    #[inline(always)]
    fn valid(&self, h: FieldHandle) -> bool {
        let stamp = self.c.dec.stamps[h.node.0 as usize];
        let since = if h.packet_level { self.c.packet_epoch } else { self.c.ev.epoch_start() };
        stamp >= since && stamp <= self.c.ev.epoch
    }

    /// Bit position of a lazily read field in the packet.
    #[inline(always)]
    fn lazy_pos(&self, l: &crate::plan::LazyField) -> u64 {
        self.c.ev.scopes[l.scope as usize] + u64::from(l.offset)
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

    /// A field of a header kept in [`EventPos::header`] rather than in slots: the tag;
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
    fn string_pos(&self, h: FieldHandle) -> Option<u64> {
        match h.lazy {
            Some(l) => Some(self.lazy_pos(&l)),
            None if self.valid(h) => Some(self.c.dec.slots[h.node.0 as usize]),
            None => None,
        }
    }

    /// A string field (or character array) as bytes borrowed from the trace.
    pub fn bytes(&self, h: FieldHandle) -> Option<&'c [u8]> {
        let pos = self.string_pos(h)?;
        let buf: &'c [u8] = self.c.cur.buf;
        let start = (pos / 8) as usize;
        let end = (self.c.cur.end / 8) as usize;
        let s = buf.get(start..end)?;
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
    fn bytes_at(&self, pos: u64, len: u64) -> Option<&'c [u8]> {
        if !pos.is_multiple_of(8) || pos + len * 8 > self.c.cur.end {
            return None;
        }
        let start = (pos / 8) as usize;
        self.c.cur.buf.get(start..start + len as usize)
    }

    /// [`EventRef::array_bytes`] through the field's node.
    #[inline(never)]
    fn array_bytes_slow(&self, h: FieldHandle) -> Option<&'c [u8]> {
        let pos = self.string_pos(h)?;
        let Node::Array { len, text: true, .. } = *self.c.plan.node(h.node) else { return None };
        self.bytes_at(pos, len)
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

/// Whether a packet of index entry `info` is counted whole in `window` (clock values):
/// `window` is everything, or the packet's index times lie inside it (its events lie
/// within its context's time range, as the packet index assumes).
fn counted_whole(info: &crate::index::PacketInfo, window: (u64, u64)) -> bool {
    match (info.ts_begin, info.ts_end) {
        _ if window == (0, u64::MAX) => true,
        (Some(b), Some(e)) => b >= window.0 && e <= window.1,
        _ => false,
    }
}

/// Where an event whose scopes start at byte `from` ends, by its entry `e` in a
/// skimming table ([`StreamPlan::skim_by_id`], or a [`Wanted`] table whose [`TAKE`]
/// entries are of fixed size): a fixed size, or a [`StringSkim`] layout's string found by
/// its NUL; `None` where it ends past `end`. (The skimming loop keeps its own copy of
/// this step: sharing it changed that loop's machine code, BENCHMARKS.md, session 32.)
#[inline(always)]
fn entry_end(buf: &[u8], from: usize, end: usize, e: u64) -> Option<usize> {
    let next = if e & TAKE == 0 && e & StringSkim::FLAG != 0 { string_end(buf, from, end, StringSkim::of_entry(e))? } else { from + (e & 0xffff_ffff) as usize };
    (next <= end).then_some(next)
}

/// Counts one event of class index `class` (classes beyond `per_class` are not counted).
#[inline(always)]
fn tally(per_class: &mut [u64], class: u32) {
    if let Some(c) = per_class.get_mut(class as usize) {
        *c += 1;
    }
}

/// `s` up to its first NUL byte (all of it when it has none): eight bytes at a time, as
/// character arrays such as `sched_switch`'s 16-byte `prev_comm` are short.
#[inline]
fn until_nul(s: &[u8]) -> &[u8] {
    let mut words = s.chunks_exact(8);
    let mut at = 0;
    for w in words.by_ref() {
        if let Some(z) = nul_in_word(w.try_into().unwrap_or_default()) {
            return &s[..at + z];
        }
        at += 8;
    }
    match words.remainder().iter().position(|b| *b == 0) {
        Some(z) => &s[..at + z],
        None => s,
    }
}

impl HeaderCopy {
    /// The copy of a header with tag `tag`, of the extended form when `extended`.
    #[inline(always)]
    pub(crate) fn new(tag: u64, extended: bool) -> HeaderCopy {
        if extended { HeaderCopy::Extended(tag) } else { HeaderCopy::Short(tag) }
    }
}

impl EventPos {
    /// Slots written while decoding this event carry its epoch.
    #[inline]
    fn epoch_start(&self) -> u32 {
        self.epoch
    }
}

/// Where an event of layout `layout` whose scopes start on byte `at` of `buf` ends (the
/// byte after its last), when its string's NUL lies before byte `end`.
#[inline(always)]
fn string_end(buf: &[u8], at: usize, end: usize, layout: StringSkim) -> Option<usize> {
    let from = at + usize::from(layout.prefix);
    let s = buf.get(from..end)?;
    // Names (of IRQ handlers, of programs) are short: their first eight bytes by one
    // word, the rest by `memchr`.
    let nul = match s.first_chunk::<8>().map(|w| nul_in_word(*w)) {
        Some(Some(z)) => z,
        Some(None) => 8 + memchr::memchr(0, &s[8..])?,
        None => memchr::memchr(0, s)?,
    };
    Some(from + nul + 1 + usize::from(layout.suffix))
}

/// The position of the first zero byte of `w`, if it has one.
#[inline(always)]
fn nul_in_word(w: [u8; 8]) -> Option<usize> {
    const ONES: u64 = 0x0101_0101_0101_0101;
    const HIGHS: u64 = 0x8080_8080_8080_8080;
    let w = u64::from_le_bytes(w);
    // The lowest flagged byte is the first zero byte (flags above it may be false).
    let zero = w.wrapping_sub(ONES) & !w & HIGHS;
    (zero != 0).then(|| (zero.trailing_zeros() / 8) as usize)
}

#[cfg(test)]
mod until_nul_tests {
    use super::until_nul;

    #[test]
    fn stops_at_the_first_nul_byte() {
        // Every length and every NUL position, with bytes that make the word trick's
        // false positives (0x01 after a zero, 0x80 and 0xff bytes) appear.
        for len in 0..40usize {
            for nul in 0..=len {
                let mut s: Vec<u8> = (0..len).map(|i| [0x01u8, 0x80, 0xff, b'a'][i % 4]).collect();
                if nul < len {
                    s[nul] = 0;
                    if nul + 1 < len {
                        s[nul + 1] = 0x01;
                    }
                }
                let want = s.iter().position(|b| *b == 0).map_or(&s[..], |z| &s[..z]);
                assert_eq!(until_nul(&s), want, "len {len}, nul {nul}");
            }
        }
    }
}
