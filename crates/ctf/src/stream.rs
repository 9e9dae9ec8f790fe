//! Reading one data stream in order (no merging): packets, then events, with the
//! discarded-event and lost-packet notices that packet contexts imply.
//!
//! A [`StreamCursor`] may be limited to a range of packets (a chunk, for parallel
//! analysis); state that depends on earlier packets (the clock's high bits, the
//! previous discarded-event counter) then starts from the chunk's first packet.
//!
//! The cursor's general path is here. Its parts: `packet` (opening a packet, where a
//! cursor stands for a time range), `event` ([`EventRef`], the event it is on), `skim`
//! (passing over fixed-size events by their sizes), `count` (counting events per class),
//! `pair` (two packets counted in one loop), `ahead` (a run of events read ahead, their
//! fields copied in place) and `replay` (wanted events found in two packets side by side,
//! then delivered in order).

use crate::clock::ClockConv;
use crate::decode::{role_index, Cursor, Decoder, SlotsOnly};
use crate::error::{DecodeError, DecodeErrorKind as K, Error, Result};
use crate::ir::Role;
use crate::plan::{FieldHandle, Plan, ScopeStep, SkimEntry, StreamPlan};
use crate::trace::{PacketRef, Stream, TraceSet};
use crate::units::BitPos;

mod ahead;
mod count;
mod event;
mod packet;
mod pair;
mod replay;
mod skim;

pub use ahead::{Ahead, AheadBuf, Copied, CopyRequest, CopySpec, AHEAD_ROOM, COPY_WINDOW, MAX_COPIES};
pub use event::{EventRef, EventScope};
use packet::has_ts_range;
pub use packet::{OVERLAP_NS, PACKET_END_SLACK_NS};
pub use pair::PairCount;
use skim::SkimEnd;

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

/// An error met while counting a packet ([`StreamCursor::count_packet_in`],
/// [`StreamCursor::count_pair`]), with what had been counted of that packet before it.
#[derive(Debug, thiserror::Error)]
#[error("{error}")]
pub struct CountError {
    /// The packet's count up to the error: its notices and its events before the
    /// damage, which the per-class counts hold (and no more); `None` where the error
    /// came before the packet was open (its notices are then not counted either).
    /// (Boxed: the error is the rare case, its result stays small.)
    pub before: Option<Box<PacketCount>>,
    /// The error.
    pub error: Error,
}

impl From<Error> for CountError {
    fn from(error: Error) -> Self {
        CountError { before: None, error }
    }
}

impl From<CountError> for Error {
    fn from(e: CountError) -> Self {
        e.error
    }
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
/// wanted (passed over), [`StreamPlan::fixed_by_id`]'s entries of the wanted classes of
/// fixed size, [taken](SkimEntry::taken) (the loop stops there, or reads them ahead),
/// and [`SkimEntry::STOP`] (stop there, for the general path). One look-up per event.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Wanted {
    mask: Vec<bool>,
    skim_by_id: Vec<SkimEntry>,
    /// By class index: the fields [`StreamCursor::read_ahead`] copies out of its events
    /// (empty: none).
    copies: Vec<Option<CopySpec>>,
}

impl Wanted {
    /// The classes of `sp` true in `mask` (by class index; classes beyond it are wanted).
    pub fn new(sp: &StreamPlan, mask: Vec<bool>) -> Wanted {
        let wanted = |class: u32| mask.get(class as usize).copied().unwrap_or(true);
        let skim_by_id = sp
            .skim_by_id
            .iter()
            .zip(&sp.fixed_by_id)
            .map(|(&e, &f)| match e {
                SkimEntry::STOP => SkimEntry::STOP,
                e if !wanted(e.class()) => e,
                _ if !f.is_stop() => f.taken(),
                _ => SkimEntry::STOP,
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
    /// Where the common context, specific context and payload start.
    scopes: [BitPos; 3],
    /// The event's first bit.
    start: BitPos,
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
    /// Where the cursor stands: see [`Mode`].
    mode: Mode,
    packet: Option<PacketRef>,
    packet_epoch: u32,
    prev: Option<PacketRef>,
    prev_discarded: Option<u64>,
    has_ts_range: bool,
    pending: Vec<(bool, Notice)>,
    ev: EventPos,
    /// The item last returned by `next` (for [`StreamCursor::current`]).
    current: Option<(bool, Notice)>,
    report_stream_error: bool,
    /// The file (trace and file index) whose bytes are populated up to byte `.2`
    /// ([`StreamCursor::populate_ahead`]).
    populated: (u32, u32, u64),
    /// What reading packets in pairs keeps (made at the first pair: see `replay.rs`).
    pairing: Option<Box<replay::Pairing<'t>>>,
    /// Whether skimming reads whole packets in pairs ([`StreamCursor::read_in_pairs`]):
    /// a setting, not a state.
    pairs: bool,
}

/// A cursor gone releases the pages of the last packet it opened (those before it were
/// released as it went past them, [`crate::trace::FileBytes::release`]): a slice
/// read by a parallel worker usually ends inside a packet, and with slices of a packet
/// or two per stream the reader would otherwise keep most of a mapped trace resident
/// (`cube build -j 8` of a 248 MiB trace: 100 MB of file pages). Another cursor
/// reading that packet still reads the same bytes (faulted in again from the cache).
impl Drop for StreamCursor<'_> {
    fn drop(&mut self) {
        if let Some(p) = self.prev.filter(|_| self.mode != Mode::Fresh) {
            let (_, file) = self.set.packet_file(&p);
            let start = p.info.offset as usize;
            file.bytes.release(start..start.saturating_add((p.info.total_bits / 8) as usize));
        }
    }
}

/// Where a [`StreamCursor`] stands. (One value for what were four flags: inside a
/// packet, replaying found events, done, and whether the clock is the stream's.)
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Mode {
    /// No packet opened yet (since the cursor was made or pointed elsewhere,
    /// [`StreamCursor::retarget`]): the decoder's clock is not this stream's, so the
    /// first packet opened is not checked against it.
    Fresh,
    /// Between packets: the decoder's clock is this stream's as the packet before the
    /// next one left it (a packet beginning before it is an error).
    Between,
    /// Inside the open packet, reading its events in turn.
    InPacket,
    /// Inside the open packet, its wanted events delivered from what reading packets in
    /// pairs found (`pairing`: see `replay.rs`).
    Replaying,
    /// At the end of the range, or after an error: nothing more is yielded.
    Done,
}

impl Mode {
    /// Inside a packet (reading in turn or replaying).
    #[inline(always)]
    fn in_packet(self) -> bool {
        matches!(self, Mode::InPacket | Mode::Replaying)
    }
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
            cur: Cursor::new(&[], BitPos::ZERO),
            mode: Mode::Fresh,
            packet: None,
            packet_epoch: 0,
            prev,
            prev_discarded: prev.and_then(|p| p.info.discarded),
            has_ts_range: has_ts_range(plan, sp),
            pending: Vec::new(),
            ev: EventPos::default(),
            current: None,
            report_stream_error: report,
            populated: (u32::MAX, u32::MAX, 0),
            pairing: None,
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
                self.mode = Mode::Done;
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
        if self.mode == Mode::Replaying && (!skim || self.trace as usize != trace) {
            self.leave_replay();
        }
        loop {
            if self.mode.in_packet() && self.pending.is_empty() && self.trace as usize == trace {
                if self.mode == Mode::Replaying {
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
                self.mode = Mode::Between;
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
                    self.mode = Mode::Done;
                    return Err(e);
                }
            }
        }
    }

    /// Index (in the set) of the trace of the packet being read, or of the first packet.
    #[inline]
    pub fn trace_index(&self) -> usize {
        self.trace as usize
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
            if self.mode == Mode::Done {
                return Ok(None);
            }
            if let Some(n) = self.pending.pop() {
                return Ok(Some(Step::Notice(n)));
            }
            if self.mode.in_packet() {
                if self.cur.pos < self.cur.end {
                    self.decode_event().map_err(|e| self.stream_error(e))?;
                    return Ok(Some(Step::Event));
                }
                self.mode = Mode::Between;
            }
            if self.next_packet >= self.last_packet {
                self.mode = Mode::Done;
                if self.report_stream_error {
                    if let Some((t, f)) = self.stream.error {
                        // Re-scan to rebuild the (non-Clone) error.
                        let file = &self.set.traces[t as usize].files[f as usize];
                        if let Some(e) = &file.error {
                            return Err(e.duplicate());
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
        let before = self.dec.clock;
        self.dec.epoch = self.dec.epoch.wrapping_add(1);
        let id = if let Some(fh) = &sp.fast_header {
            match self.dec.decode_fast_header::<FULL>(fh, &mut self.cur) {
                Ok(id) => id,
                Err(e) => return Err(self.header_error(start, e)),
            }
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
        let mut scopes = [BitPos::ZERO; 3];
        if let Some(chain) = &class.skip_all {
            // Every scope is skipped: one bounds check for all.
            self.cur.align(chain.align)?;
            let at = self.cur.pos;
            self.cur.need(chain.bits)?;
            self.cur.pos = at.add_bits(chain.bits);
            scopes = chain.starts.map(|s| at.add_bits(s));
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
        if self.dec.clock < before {
            self.check_back(start, before)?;
        }
        if self.dec.clock > self.clock_last() {
            return Err(self.past_range(start));
        }
        if FULL {
            self.ev = EventPos {
                class: class_idx as u32,
                cycles: self.dec.clock,
                ts: self.clock_ts(),
                scopes,
                start,
                epoch: self.dec.epoch,
                header: HeaderCopy::InSlots,
            };
        }
        Ok(class_idx as u32)
    }

    /// Checks an event at bit `start` that put the clock back from `before` (cycles):
    /// by a full-width timestamp lower than the clock, or by an N-bit one that carried
    /// the clock past 2^64 cycles, where the stream's 64-bit clock wraps to a low value.
    /// Beyond [`OVERLAP_NS`], time goes back: an error naming the event's offset. The
    /// times compared and reported are exact nanoseconds, never saturated to the `i64`
    /// range: saturated, two clock values past `i64::MAX` ns would compare equal, and
    /// the message would name a time the trace does not hold.
    #[cold]
    #[inline(never)]
    fn check_back(&self, start: BitPos, before: u64) -> std::result::Result<(), DecodeError> {
        let ns = |c: u64| self.conv.map_or(i128::from(c), |v| v.to_ns_wide(c));
        let (from, to) = (ns(before), ns(self.dec.clock));
        if to + i128::from(OVERLAP_NS) < from {
            return Err(DecodeError::new(start, K::TimeGoesBack { what: "an event's timestamp", from, to }));
        }
        Ok(())
    }

    /// The error of the event at bit `start`, whose clock value's time lies past the
    /// range of 64-bit nanoseconds from the clock's origin: delivered, its timestamp
    /// would name a time the trace does not hold.
    #[cold]
    #[inline(never)]
    fn past_range(&self, start: BitPos) -> DecodeError {
        let ns = self.conv.map_or(i128::from(self.dec.clock), |v| v.to_ns_wide(self.dec.clock));
        DecodeError::new(start, K::TimeOutOfRange { what: "an event's timestamp", ns })
    }

    /// The last clock value whose time from the clock's origin fits 64-bit nanoseconds
    /// ([`ClockConv::last_in_range`]): `u64::MAX` for a stream without a clock, or whose
    /// clock's offset alone lies past the range (its times are kept as before: the
    /// canonical dump prints them modulo 2^64, as Babeltrace 1 does, which the
    /// conformance traces `ctfwriter-funky-trace` and `ctfwriter-JF8nq3` expect).
    #[inline(always)]
    fn clock_last(&self) -> u64 {
        self.conv.and_then(|c| c.last_in_range()).unwrap_or(u64::MAX)
    }

    /// The error the general decoder meets in the event header at bit `start`, which
    /// word loads (reading the header's fields as one) found damaged with `e`: the
    /// same field, offset and cause whichever way the header is read.
    #[cold]
    #[inline(never)]
    fn header_error(&mut self, start: BitPos, e: DecodeError) -> DecodeError {
        let Some(h) = self.sp.event_header else { return e };
        self.cur.pos = start;
        match self.dec.decode(self.plan, h, &mut self.cur, &mut SlotsOnly) {
            Err(general) => general,
            Ok(()) => e,
        }
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
        self.mode = Mode::Done;
        self.stream_error(e)
    }
}

enum Step {
    Notice((bool, Notice)),
    Event,
}

impl HeaderCopy {
    /// The copy of a header with tag `tag`, of the extended form when `extended`.
    #[inline(always)]
    pub(crate) fn new(tag: u64, extended: bool) -> HeaderCopy {
        if extended {
            HeaderCopy::Extended(tag)
        } else {
            HeaderCopy::Short(tag)
        }
    }
}

impl EventPos {
    /// Slots written while decoding this event carry its epoch.
    #[inline]
    fn epoch_start(&self) -> u32 {
        self.epoch
    }
}
