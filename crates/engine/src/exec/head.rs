//! One stream of a slice being read: what the analysis passes over, reading ahead,
//! the spans of events not delivered one by one.

use std::ops::Range;

use ctf::clock::ClockConv;
use ctf::stream::{Ahead, AheadBuf, Item, Passed, StreamCursor, Wanted};
use ctf::trace::TraceSet;

use super::EngineError;
use crate::partition::Slice;
use crate::Runnable;

/// Time key of an item (events: timestamp; notices: start, else end of the interval).
#[inline]
fn key(item: &Item<'_, '_>) -> Option<i64> {
    match item {
        Item::Event(e) => e.ts(),
        Item::Discarded(n) | Item::LostPackets(n) => n.begin_ns.or(n.end_ns),
    }
}

/// One stream of a slice being read.
pub(super) struct Head<'t> {
    set: &'t TraceSet,
    pub(super) stream: usize,
    /// The stream's class id.
    class_id: u64,
    /// The packets the head reads: the chunk's, less those wholly before the range.
    pub(super) packets: Range<usize>,
    pub(super) cur: StreamCursor<'t>,
    /// Time key of the current item.
    pub(super) key: i64,
    /// Running maximum of the keys (see [`Ctx::order`](super::Ctx::order)).
    pub(super) order: i64,
    /// The timestamps this head delivers: the slice's and the range's, inclusive.
    pub(super) bounds: (i64, i64),
    /// What the analysis reads of the trace last seen ([`Selective::interest`](crate::Selective::interest)).
    pub(super) interest: Interest,
    /// Span of the events passed over so far, inside `bounds` (reported when the head
    /// ends); [`NO_SPAN`] while none is.
    skipped: (i64, i64),
    /// Span of the events read ahead, or taken by [`Selective::on_copied`](crate::Selective::on_copied), so far
    /// (reported when the head ends: see [`Selective::on_copied_span`](crate::Selective::on_copied_span)); [`NO_SPAN`]
    /// while none is.
    pub(super) copied_span: (i64, i64),
    /// Events read ahead ([`StreamCursor::read_ahead`]); those from `ahead_at` on are
    /// still to be taken.
    pub(super) ahead: AheadBuf,
    pub(super) ahead_at: usize,
    /// Whether the current item is the event read ahead last taken (`ahead[ahead_at -
    /// 1]`), not yet made the cursor's current one ([`Head::enter_taken`]): delivered
    /// by its copied fields, it never is.
    pub(super) unentered: bool,
    /// The last event passed over after those read ahead, for when they are all taken.
    passed_after: Passed,
    /// Whether to read ahead on a stream of whose classes the analysis wants few.
    density: Density,
}

/// Most events a head reads ahead at once.
const AHEAD: usize = 64;

/// Whether a head reads ahead on a stream of whose classes the analysis wants few (a
/// filter that `skim`s): it does while the events show that most are wanted all the
/// same (a few classes can make most events: syscalls and switches of a kernel trace
/// with a thousand classes), and skims otherwise, reading ahead again now and then to
/// look at the density anew.
#[derive(Debug, Default, Clone, Copy)]
struct Density {
    /// Events read ahead and passed over by the runs seen lately (halved as they add
    /// up, so that older runs weigh less).
    taken: u32,
    passed: u32,
    /// Items to take by skimming before reading ahead again (0: read ahead).
    skims_left: u32,
}

impl Density {
    /// Items taken by skimming between two tries at reading ahead, where few events
    /// are wanted.
    const SKIMS: u32 = 1024;
    /// Events the density is judged by.
    const SAMPLE: u32 = 1024;

    /// Whether to read ahead.
    #[inline(always)]
    fn reads_ahead(self) -> bool {
        self.skims_left == 0
    }

    /// A read-ahead run took `taken` events and passed over `passed`: once enough
    /// events are seen, skim for a while if most were passed over.
    #[inline(always)]
    fn ran(&mut self, taken: usize, passed: usize) {
        self.taken = self.taken.saturating_add(taken as u32);
        self.passed = self.passed.saturating_add(passed as u32);
        if self.taken.saturating_add(self.passed) >= Self::SAMPLE {
            if self.passed > self.taken {
                self.skims_left = Self::SKIMS;
            }
            (self.taken, self.passed) = (self.taken / 2, self.passed / 2);
        }
    }

    /// The cursor found `taken` wanted events and passed over `passed` in a pair of
    /// packets ([`StreamCursor::take_pair_sample`]): a sample as a read-ahead run's,
    /// and, where most were passed over, skimming goes on at least until they are
    /// delivered.
    #[cold]
    fn paired(&mut self, taken: usize, passed: usize) {
        self.ran(taken, passed);
        if self.skims_left > 0 {
            self.skims_left = self.skims_left.max(Self::SKIMS.saturating_add(taken as u32));
        }
    }

    /// An item taken by skimming.
    #[inline(always)]
    fn skimmed(&mut self) {
        self.skims_left = self.skims_left.saturating_sub(1);
    }
}

/// What a head passes over in one trace.
pub(super) struct Filter {
    /// Event classes delivered.
    pub(super) wanted: Wanted,
    /// The stream's clock in that trace.
    conv: ClockConv,
    /// Clock values whose timestamps lie inside the head's bounds (`(1, 0)`: none).
    window: (u64, u64),
    /// Pass over events by their sizes only ([`StreamCursor::next_wanted`]): when
    /// fewer than half of the classes are read. (A head still reads ahead while its
    /// [`Density`] finds most events wanted.)
    skim: bool,
}

/// The [`Filter`] of the trace last seen by a [`Head`] (`None`: every event), and
/// where the head's bounds start in that trace's clock.
#[derive(Default)]
pub(super) struct Interest {
    /// The trace `filter` and `first` are for; `None` before the first look-up.
    trace: Option<usize>,
    pub(super) filter: Option<Filter>,
    /// The first clock value inside the head's bounds (`None`: the stream has no
    /// clock), for [`Head::out_of_bounds`].
    first: Option<u64>,
}

impl Interest {
    /// The interest for trace `trace`, refreshed when it was for another.
    #[inline(always)]
    fn of<A: Runnable>(&mut self, a: &A, set: &TraceSet, trace: usize, stream_class: u64, bounds: (i64, i64)) -> &Interest {
        if self.trace != Some(trace) {
            self.refresh(a, set, trace, stream_class, bounds);
        }
        self
    }

    /// The filter of trace `trace` (`None`: every event).
    #[inline(always)]
    fn filter<A: Runnable>(&mut self, a: &A, set: &TraceSet, trace: usize, stream_class: u64, bounds: (i64, i64)) -> Option<&Filter> {
        self.of(a, set, trace, stream_class, bounds).filter.as_ref()
    }

    /// The first clock value inside `bounds` in trace `trace` (`None`: the stream has
    /// no clock).
    fn first<A: Runnable>(&mut self, a: &A, set: &TraceSet, trace: usize, stream_class: u64, bounds: (i64, i64)) -> Option<u64> {
        self.of(a, set, trace, stream_class, bounds).first
    }

    #[inline(never)]
    fn refresh<A: Runnable>(&mut self, a: &A, set: &TraceSet, trace: usize, stream_class: u64, bounds: (i64, i64)) {
        let clock = cycle_window(set, trace, stream_class, bounds);
        self.first = clock.map(|(_, w)| w.0);
        self.filter = Filter::new(a, set, trace, stream_class, clock);
        self.trace = Some(trace);
    }
}

impl Filter {
    /// The filter of stream class `stream_class` of trace `trace`, whose clock and
    /// window are `clock` ([`cycle_window`]), if the analysis passes over any of its
    /// event classes.
    fn new<A: Runnable>(a: &A, set: &TraceSet, trace: usize, stream_class: u64, clock: Option<(ClockConv, (u64, u64))>) -> Option<Filter> {
        if a.packet_counts(trace, stream_class) {
            return None;
        }
        let mask = a.interest(trace, stream_class).filter(|m| m.contains(&false))?;
        let (conv, window) = clock?;
        let skim = mask.iter().filter(|w| **w).count() * 2 < mask.len();
        let sp = set.traces.get(trace)?.plan.stream(stream_class)?;
        let wanted = match a.copies(trace, stream_class) {
            Some(requests) => Wanted::with_copies(sp, mask, &requests),
            None => Wanted::new(sp, mask),
        };
        Some(Filter { wanted, conv, window, skim })
    }
}

/// The default clock of stream class `stream_class` of trace `trace`, and the clock
/// values whose timestamps lie in `bounds` (inclusive; `(1, 0)` when none); `None`
/// when the stream class has no clock.
pub(super) fn cycle_window(set: &TraceSet, trace: usize, stream_class: u64, bounds: (i64, i64)) -> Option<(ClockConv, (u64, u64))> {
    let t = set.traces.get(trace)?;
    let conv = *t.clocks.get(t.plan.stream(stream_class)?.clock?)?;
    let window = if bounds.0 <= bounds.1 { conv.cycle_window(bounds.0, bounds.1).unwrap_or((1, 0)) } else { (1, 0) };
    Some((conv, window))
}

impl<'t> Head<'t> {
    pub(super) fn new(set: &'t TraceSet, stream: usize, packets: Range<usize>, s: &Slice, range: (i64, i64)) -> Self {
        let hi = if s.hi == i64::MAX { i64::MAX } else { s.hi - 1 };
        // A range beginning inside the slice: the packets wholly before it are not read.
        let packets = if range.0 > s.lo { StreamCursor::first_needed(set, stream, packets.clone(), range.0)..packets.end } else { packets };
        Head {
            set,
            stream,
            class_id: set.streams[stream].class_id,
            cur: StreamCursor::with_packets(set, stream, packets.clone()),
            packets,
            key: i64::MIN,
            order: i64::MIN,
            bounds: (s.lo.max(range.0), hi.min(range.1)),
            interest: Interest::default(),
            skipped: NO_SPAN,
            copied_span: NO_SPAN,
            ahead: AheadBuf::new(),
            ahead_at: 0,
            unentered: false,
            passed_after: Passed::default(),
            density: Density::default(),
        }
    }

    /// Whether time key `k` is inside the slice and the range.
    #[inline]
    pub(super) fn in_bounds(&self, k: i64) -> bool {
        k >= self.bounds.0 && k <= self.bounds.1
    }

    /// Moves to the next item the analysis reads, passing over events it has no
    /// interest in (their span inside the bounds is kept in `skipped`); false at the end
    /// of the chunk. Events read ahead are taken first.
    #[inline(always)]
    pub(super) fn advance<A: Runnable>(&mut self, a: &A) -> Result<bool, EngineError> {
        if self.next_ahead() {
            return Ok(true);
        }
        self.advance_general(a)
    }

    /// Takes the next event read ahead as the current item (see [`Head::taken`]);
    /// false when none is left.
    #[inline(always)]
    pub(super) fn next_ahead(&mut self) -> bool {
        let Some(e) = self.ahead.get(self.ahead_at) else { return false };
        if let Some(p) = self.ahead_at.checked_sub(1).and_then(|i| self.ahead.get(i)) {
            went_back(&mut self.copied_span, p.ts(), e.ts());
        }
        self.key = e.ts();
        self.ahead_at += 1;
        self.unentered = true;
        self.order = self.order.max(self.key);
        true
    }

    /// The event read ahead that is the current item, if one is.
    #[inline(always)]
    fn taken(&self) -> Option<&Ahead> {
        if self.unentered {
            self.ahead_at.checked_sub(1).and_then(|i| self.ahead.get(i))
        } else {
            None
        }
    }

    /// The fields copied out of the current item, if it is an event whose class has a
    /// copy request ([`Selective::copies`](crate::Selective::copies)) and that was read ahead, or, when `ENTERED`,
    /// entered by word loads ([`ctf::stream::StreamCursor::copied_current`]).
    #[inline(always)]
    pub(super) fn copied<const ENTERED: bool>(&self) -> Option<ctf::stream::Copied<'_>> {
        let wanted = &self.interest.filter.as_ref()?.wanted;
        match self.taken() {
            Some(e) => self.cur.copied(e, wanted),
            None if ENTERED => self.cur.copied_current(wanted),
            None => None,
        }
    }

    /// Makes the event read ahead that is the current item the cursor's current one.
    #[inline(always)]
    fn enter_taken(&mut self) {
        if let Some(&e) = self.taken() {
            self.cur.enter_ahead(&e);
            self.unentered = false;
        }
    }

    /// The current item.
    #[inline(always)]
    pub(super) fn current(&mut self) -> Item<'_, 't> {
        self.enter_taken();
        self.cur.current()
    }

    /// [`Head::advance`] once the events read ahead are taken: reads ahead again where
    /// the cursor can ([`StreamCursor::read_ahead`]) and the analysis wants most events,
    /// else takes the next item from the cursor.
    #[inline(always)]
    fn advance_general<A: Runnable>(&mut self, a: &A) -> Result<bool, EngineError> {
        let class_id = self.class_id;
        self.unentered = false;
        loop {
            let trace = self.cur.trace_index();
            let mut passed = std::mem::take(&mut self.passed_after);
            let filter = self.interest.filter(a, self.set, trace, class_id, self.bounds);
            // Read ahead where most events are delivered (when few are, the cursor's
            // skimming loop passes over the rest at less cost): where the analysis wants
            // most classes, or fewer but most events all the same ([`Density`]).
            // (Not while the cursor delivers the events it found in a pair of packets:
            // those measure the density too.)
            if let Some(f) = filter.filter(|f| !f.skim || (self.density.reads_ahead() && !self.cur.replaying())) {
                self.ahead.clear();
                self.ahead_at = 0;
                let passed_over = self.cur.read_ahead(&f.wanted, trace, f.window, &mut passed, &mut self.ahead, AHEAD);
                if f.skim {
                    self.density.ran(self.ahead.len(), passed_over);
                }
                if let (Some(first), Some(last)) = (self.ahead.first(), self.ahead.last()) {
                    // (From its ends: see `went_back`.)
                    widen(&mut self.copied_span, first.ts(), last.ts());
                    widen_passed(&mut self.skipped, &f.conv, passed.inside.take());
                    // `passed.last` is now what follows the events read ahead.
                    self.passed_after = passed;
                    return Ok(self.next_ahead());
                }
            }
            let next = match filter {
                Some(f) => {
                    // (The events of the last pair of packets the cursor read, if any.)
                    if let Some((found, passed_over)) = self.cur.take_pair_sample() {
                        self.density.paired(found, passed_over);
                    }
                    // Where most events are wanted, each is decoded once.
                    let skim = f.skim && !self.density.reads_ahead();
                    if skim {
                        self.density.skimmed();
                    }
                    self.cur.next_wanted(&f.wanted, trace, f.window, skim, &mut passed)
                }
                None => self.cur.next(),
            };
            if let Some(f) = filter {
                if let Some(c) = passed.last {
                    self.key = f.conv.to_ns(c);
                    self.order = self.order.max(self.key);
                }
                widen_passed(&mut self.skipped, &f.conv, passed.inside);
            }
            let item = match next {
                Ok(None) => return Ok(false),
                Ok(Some(item)) => item,
                Err(source) => return Err(EngineError::Decode { stream: self.stream, source }),
            };
            // Events of the trace just filtered are wanted; one of another trace (a
            // session rotation) is checked against that trace's filter.
            let wanted = match &item {
                Item::Event(ev) if ev.trace_index() != trace => {
                    self.interest.filter(a, self.set, ev.trace_index(), class_id, self.bounds).is_none_or(|f| f.wanted.has(ev.class_index()))
                }
                _ => true,
            };
            if let Some(k) = key(&item) {
                self.key = k;
            }
            self.order = self.order.max(self.key);
            if wanted {
                return Ok(true);
            }
            if self.in_bounds(self.key) {
                widen(&mut self.skipped, self.key, self.key);
            }
        }
    }

    /// [`Head::advance_general`], out of line (for the time-merge, as `deliver_and_advance` is).
    #[inline(never)]
    pub(super) fn read_on<A: Runnable>(&mut self, a: &A) -> Result<bool, EngineError> {
        self.advance_general(a)
    }

    /// For a current item outside the slice and range (not delivered): whether the head
    /// has more to deliver. Past the slice, so is every later event of the packet (a
    /// stream's clock only grows): in the last packet of the chunk the head ends (the
    /// next slice reads the rest), and so it does where the packet index shows that
    /// nothing left in the chunk comes earlier ([`StreamCursor::rest_after`]: past the
    /// range's end, the rest of the stream is not read); otherwise the rest of the
    /// packet is passed over by its event headers. Before the slice (the part of a
    /// packet that the previous slice reads), the events up to the slice are passed over
    /// by their headers. A slice wholly outside the range delivers nothing: it ends.
    /// (See [`StreamCursor::pass_before`]: events it cannot pass that way, and any error,
    /// still go through the general decoder.)
    #[cold]
    #[inline(never)]
    pub(super) fn out_of_bounds<A: Runnable>(&mut self, a: &A) -> bool {
        if !matches!(self.current(), Item::Event(_)) {
            return true;
        }
        let (lo, hi) = self.bounds;
        let until = if self.key > hi {
            if self.cur.in_last_packet() || self.cur.rest_after(hi) {
                return false;
            }
            u64::MAX
        } else if lo > hi {
            // A slice wholly outside the range: nothing of it is delivered.
            return false;
        } else {
            let trace = self.cur.trace_index();
            match self.interest.first(a, self.set, trace, self.class_id, self.bounds) {
                Some(c) => c,
                None => return true,
            }
        };
        if let Some(k) = self.cur.pass_before(until).and_then(|c| self.cur.cycles_to_ns(c)) {
            self.key = k;
            self.order = self.order.max(k);
        }
        true
    }

    /// Reports the spans of the events passed over and of those read ahead or taken as
    /// copies so far (and forgets them).
    #[inline]
    pub(super) fn flush_skipped<A: Runnable>(&mut self, a: &A, st: &mut A::State) {
        if let Some((f, l)) = take_span(&mut self.skipped) {
            a.on_skipped(st, f, l);
        }
        if let Some((f, l)) = take_span(&mut self.copied_span) {
            a.on_copied_span(st, f, l);
        }
    }
}

/// The span of no timestamp (a head's spans before they are widened).
const NO_SPAN: (i64, i64) = (i64::MAX, i64::MIN);

/// The span `span`, when widened since it was [`NO_SPAN`] (which it is made again).
#[inline]
fn take_span(span: &mut (i64, i64)) -> Option<(i64, i64)> {
    let (f, l) = std::mem::replace(span, NO_SPAN);
    (f <= l).then_some((f, l))
}

/// Widens the span `span` to `[first, last]` (branches, predicted, as time mostly moves
/// forward).
#[inline(always)]
pub(super) fn widen(span: &mut (i64, i64), first: i64, last: i64) {
    if last > span.1 {
        span.1 = last;
    }
    if first < span.0 {
        span.0 = first;
    }
}

/// Where an event read ahead of timestamp `k` follows one of timestamp `prev`: widens
/// `span` ([`Head::copied_span`]) to both if `k` goes back. (The span of a run read
/// ahead is first widened to its ends' timestamps, which bound it, one packet's clock
/// never going back, unless a malformed trace's full timestamp does: then this widens
/// it to the others.)
#[inline(always)]
pub(super) fn went_back(span: &mut (i64, i64), prev: i64, k: i64) {
    if k < prev {
        widen(span, k, prev);
    }
}

/// Widens `span` to the timestamps of the clock values `inside` (see [`Passed::inside`]).
#[inline]
fn widen_passed(span: &mut (i64, i64), conv: &ClockConv, inside: Option<(u64, u64)>) {
    if let Some((x, y)) = inside {
        widen(span, conv.to_ns(x), conv.to_ns(y));
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    proptest! {
        /// The span of a run read ahead taken from its ends, widened where a timestamp
        /// goes back, is the span of its timestamps.
        #[test]
        fn went_back_completes_the_span_of_a_run(ts in proptest::collection::vec(-5i64..5, 1..12)) {
            let mut span = NO_SPAN;
            widen(&mut span, ts[0], ts[ts.len() - 1]);
            for w in ts.windows(2) {
                went_back(&mut span, w[0], w[1]);
            }
            prop_assert_eq!(span, (*ts.iter().min().unwrap(), *ts.iter().max().unwrap()));
        }
    }

    /// A head reads ahead until runs show most events passed over, then skims
    /// `SKIMS` items before looking again; recent runs outweigh older ones.
    #[test]
    fn density_follows_the_runs() {
        let mut d = Density::default();
        assert!(d.reads_ahead(), "reads ahead at first");
        // Dense runs: reads ahead on.
        for _ in 0..100 {
            d.ran(60, 4);
            assert!(d.reads_ahead());
        }
        // Sparse runs outweigh the dense ones within a few samples.
        let mut runs = 0;
        while d.reads_ahead() {
            d.ran(8, 120);
            runs += 1;
            assert!(runs < 40, "never turned to skimming");
        }
        for _ in 0..Density::SKIMS {
            assert!(!d.reads_ahead());
            d.skimmed();
        }
        assert!(d.reads_ahead(), "looks again after SKIMS items");
        // Too few events seen by a run: no judgement yet.
        let mut e = Density::default();
        e.ran(0, 20);
        assert!(e.reads_ahead());
    }
}
