//! Workers and the ordered, pipelined merge (B3).

use std::collections::BTreeMap;
use std::ops::Range;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{mpsc, Condvar, Mutex};

use ctf::clock::ClockConv;
use ctf::stream::{Ahead, AheadBuf, Item, PacketCount, Passed, StreamCursor, Wanted};
use ctf::trace::{PacketRef, TraceSet};

use crate::partition::{clip, partition, Slice};
use crate::{Analysis, EngineOptions, NoticeKind, StreamOrder};

/// What an analysis is told about the item it receives.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Ctx {
    /// Index of the stream in the set.
    pub stream: usize,
    /// Order key of the item inside its slice: the largest time key (timestamp, else the
    /// previous item's) seen so far on this stream in this slice. Sorting a slice's items
    /// by `(order, stream)`, stably, gives exactly the time-merged order, so an analysis
    /// run with [`StreamOrder::PerStream`](crate::StreamOrder) can still tell which of two
    /// items of different streams comes later.
    pub order: i64,
}

/// A failed run.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum EngineError {
    /// A stream could not be decoded.
    #[error("stream {stream}: {source}")]
    Decode {
        /// Stream index in the set.
        stream: usize,
        /// The reader's error.
        source: ctf::error::Error,
    },
    /// A worker thread panicked (a bug; reported rather than propagated).
    #[error("a worker thread panicked")]
    WorkerPanicked,
}

/// Runs `a` over `set` with `opts`: partitions, drops what lies outside the time range
/// ([`clip`]), processes slices on workers, merges in time order, finishes.
pub fn run<A: Analysis>(a: &A, set: &TraceSet, opts: &EngineOptions) -> Result<A::Output, EngineError> {
    run_with_progress(a, set, opts, None)
}

/// Processes given slices (time-ordered) and returns the merged state, before `finish`.
/// The slices are read as given: [`clip`] them to the time range first, as [`run`] does.
pub fn run_slices<A: Analysis>(a: &A, set: &TraceSet, slices: &[Slice], opts: &EngineOptions) -> Result<A::State, EngineError> {
    run_slices_with_progress(a, set, slices, opts, None)
}

/// [`run`], calling `progress(bytes merged, bytes in all)` after each slice is merged
/// (for a progress bar; bytes are the slices' packet bytes).
pub fn run_with_progress<A: Analysis>(a: &A, set: &TraceSet, opts: &EngineOptions, progress: Option<&dyn Fn(u64, u64)>) -> Result<A::Output, EngineError> {
    let mut bytes = opts.slice_bytes(set);
    if opts.chunk_size == 0 && opts.worker_count() > 1 {
        bytes = bytes.min(a.max_auto_slice_bytes());
    }
    let slices = clip(&partition(set, opts.partition, bytes), opts.range());
    let st = run_slices_with_progress(a, set, &slices, opts, progress)?;
    Ok(a.finish(st))
}

/// [`run_slices`] with a progress callback (see [`run_with_progress`]).
pub fn run_slices_with_progress<A: Analysis>(a: &A, set: &TraceSet, slices: &[Slice], opts: &EngineOptions, progress: Option<&dyn Fn(u64, u64)>) -> Result<A::State, EngineError> {
    let total: u64 = if progress.is_some() { slices.iter().map(|s| s.bytes(set)).sum() } else { 0 };
    let mut done = 0u64;
    let mut tick = |s: &Slice| {
        if let Some(p) = progress {
            done += s.bytes(set);
            p(done.min(total), total);
        }
    };
    let workers = opts.worker_count().min(slices.len()).max(1);
    let range = opts.range();
    let in_place = a.folds_in_place();
    if workers == 1 {
        let mut acc = a.initial_state();
        for s in slices {
            acc = if in_place {
                process_slice_from(a, set, s, range, acc)?
            } else {
                let st = process_slice(a, set, s, range)?;
                a.merge(acc, st)
            };
            tick(s);
        }
        return Ok(acc);
    }
    let window = 2 * workers;
    let next = AtomicUsize::new(0);
    let abort = AtomicBool::new(false);
    // Index of the next slice to merge; workers may not run more than `window` ahead.
    let merged = (Mutex::new(0usize), Condvar::new());
    let (tx, rx) = mpsc::channel::<(usize, Result<A::State, EngineError>)>();
    let handoff = Handoff::new();
    std::thread::scope(|scope| {
        for _ in 0..workers {
            let tx = tx.clone();
            let (next, abort, merged, handoff) = (&next, &abort, &merged, &handoff);
            scope.spawn(move || loop {
                let k = next.fetch_add(1, Ordering::SeqCst);
                if k >= slices.len() || abort.load(Ordering::SeqCst) {
                    break;
                }
                {
                    let mut m = merged.0.lock().unwrap_or_else(|e| e.into_inner());
                    while k >= *m + window && !abort.load(Ordering::SeqCst) {
                        m = merged.1.wait(m).unwrap_or_else(|e| e.into_inner());
                    }
                }
                // The first slice starts at the trace's beginning: read it into the
                // initial state when the analysis folds in place. Another slice may
                // be lent the running state while it is read.
                let start = if k == 0 && in_place { a.initial_state() } else { a.new_state() };
                let take_over = || if in_place { handoff.take_for(k) } else { None };
                let r = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| process_slice_taking_over(a, set, &slices[k], range, start, take_over)));
                let r = r.unwrap_or(Err(EngineError::WorkerPanicked));
                if tx.send((k, r)).is_err() {
                    break;
                }
            });
        }
        drop(tx);
        // `None` until the first slice arrives when that slice holds the initial state.
        let mut acc = if in_place { None } else { Some(a.initial_state()) };
        let mut pending = BTreeMap::new();
        let mut want = 0usize;
        let mut err = None;
        for (k, r) in rx.iter() {
            match r {
                Err(e) => {
                    err.get_or_insert(e);
                    abort.store(true, Ordering::SeqCst);
                    merged.1.notify_all();
                }
                Ok(st) => {
                    pending.insert(k, st);
                }
            }
            while let Some(st) = pending.remove(&want) {
                // The running state, if lent to this slice and not taken (else `st`
                // holds it: it is the state of everything up to this slice's end).
                if let Some(lent) = handoff.take_back() {
                    acc = Some(lent);
                }
                acc = Some(match acc.take() {
                    Some(prev) => a.merge(prev, st),
                    None => st,
                });
                tick(&slices[want]);
                want += 1;
                *merged.0.lock().unwrap_or_else(|e| e.into_inner()) = want;
                merged.1.notify_all();
            }
            // The next slice to merge is being read (or waits for a worker): lend it
            // the running state.
            if in_place && want < slices.len() && err.is_none() {
                if let Some(st) = acc.take() {
                    handoff.lend(want, st);
                }
            }
        }
        match err {
            Some(e) => Err(e),
            None => Ok(acc.unwrap_or_else(|| a.initial_state())),
        }
    })
}

/// The running state (of every slice merged so far) lent to the worker reading the next
/// slice to merge, when the analysis folds in place ([`Analysis::folds_in_place`]):
/// that worker merges the state of what it has read into it and reads the rest of its
/// slice into it, interpreting at once what it would otherwise hand over for a later
/// merge (see [`process_slice_taking_over`]). The merging thread takes the state back
/// when that slice arrives, unless its worker took it: then the slice's state is the
/// running state.
struct Handoff<S> {
    /// The slice the state is lent to, or [`Handoff::NONE`]: a hint for workers, read
    /// without the lock.
    slice: AtomicUsize,
    /// The slice the state is lent to and the state.
    lent: Mutex<Option<(usize, S)>>,
}

impl<S> Handoff<S> {
    /// [`Handoff::slice`] when nothing is lent.
    const NONE: usize = usize::MAX;

    fn new() -> Self {
        Handoff { slice: AtomicUsize::new(Self::NONE), lent: Mutex::new(None) }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Option<(usize, S)>> {
        self.lent.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Lends `st`, the state of every slice before slice `k`, to the worker of `k`.
    fn lend(&self, k: usize, st: S) {
        *self.lock() = Some((k, st));
        self.slice.store(k, Ordering::Release);
    }

    /// The state lent to slice `k`, for its worker (taken), if one is.
    #[inline]
    fn take_for(&self, k: usize) -> Option<S> {
        if self.slice.load(Ordering::Acquire) != k {
            return None;
        }
        let mut lent = self.lock();
        match lent.take() {
            Some((j, st)) if j == k => {
                self.slice.store(Self::NONE, Ordering::Release);
                Some(st)
            }
            other => {
                *lent = other;
                None
            }
        }
    }

    /// The state lent, taken back, if its worker did not take it.
    fn take_back(&self) -> Option<S> {
        let st = self.lock().take().map(|(_, st)| st);
        self.slice.store(Self::NONE, Ordering::Release);
        st
    }
}

/// Time key of an item (events: timestamp; notices: start, else end of the interval).
#[inline]
fn key(item: &Item<'_, '_>) -> Option<i64> {
    match item {
        Item::Event(e) => e.ts(),
        Item::Discarded(n) | Item::LostPackets(n) => n.begin_ns.or(n.end_ns),
    }
}

/// One stream of a slice being read.
struct Head<'t> {
    set: &'t TraceSet,
    stream: usize,
    /// The stream's class id.
    class_id: u64,
    /// The packets the head reads: the chunk's, less those wholly before the range.
    packets: Range<usize>,
    cur: StreamCursor<'t>,
    /// Time key of the current item.
    key: i64,
    /// Running maximum of the keys (see [`Ctx::order`]).
    order: i64,
    /// The timestamps this head delivers: the slice's and the range's, inclusive.
    bounds: (i64, i64),
    /// What the analysis reads of the trace last seen ([`Analysis::interest`]).
    interest: Interest,
    /// Span of the events passed over so far, inside `bounds` (reported when the head
    /// ends); [`NO_SPAN`] while none is.
    skipped: (i64, i64),
    /// Span of the events read ahead, or taken by [`Analysis::on_copied`], so far
    /// (reported when the head ends: see [`Analysis::on_copied_span`]); [`NO_SPAN`]
    /// while none is.
    copied_span: (i64, i64),
    /// Events read ahead ([`StreamCursor::read_ahead`]); those from `ahead_at` on are
    /// still to be taken.
    ahead: AheadBuf,
    ahead_at: usize,
    /// Whether the current item is the event read ahead last taken (`ahead[ahead_at -
    /// 1]`), not yet made the cursor's current one ([`Head::enter_taken`]): delivered
    /// by its copied fields, it never is.
    unentered: bool,
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
struct Filter {
    /// Event classes delivered.
    wanted: Wanted,
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
struct Interest {
    /// The trace `filter` and `first` are for; `None` before the first look-up.
    trace: Option<usize>,
    filter: Option<Filter>,
    /// The first clock value inside the head's bounds (`None`: the stream has no
    /// clock), for [`Head::out_of_bounds`].
    first: Option<u64>,
}

impl Interest {
    /// The interest for trace `trace`, refreshed when it was for another.
    #[inline(always)]
    fn of<A: Analysis>(&mut self, a: &A, set: &TraceSet, trace: usize, stream_class: u64, bounds: (i64, i64)) -> &Interest {
        if self.trace != Some(trace) {
            self.refresh(a, set, trace, stream_class, bounds);
        }
        self
    }

    /// The filter of trace `trace` (`None`: every event).
    #[inline(always)]
    fn filter<A: Analysis>(&mut self, a: &A, set: &TraceSet, trace: usize, stream_class: u64, bounds: (i64, i64)) -> Option<&Filter> {
        self.of(a, set, trace, stream_class, bounds).filter.as_ref()
    }

    /// The first clock value inside `bounds` in trace `trace` (`None`: the stream has
    /// no clock).
    fn first<A: Analysis>(&mut self, a: &A, set: &TraceSet, trace: usize, stream_class: u64, bounds: (i64, i64)) -> Option<u64> {
        self.of(a, set, trace, stream_class, bounds).first
    }

    #[inline(never)]
    fn refresh<A: Analysis>(&mut self, a: &A, set: &TraceSet, trace: usize, stream_class: u64, bounds: (i64, i64)) {
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
    fn new<A: Analysis>(a: &A, set: &TraceSet, trace: usize, stream_class: u64, clock: Option<(ClockConv, (u64, u64))>) -> Option<Filter> {
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
fn cycle_window(set: &TraceSet, trace: usize, stream_class: u64, bounds: (i64, i64)) -> Option<(ClockConv, (u64, u64))> {
    let t = set.traces.get(trace)?;
    let conv = *t.clocks.get(t.plan.stream(stream_class)?.clock?)?;
    let window = if bounds.0 <= bounds.1 { conv.cycle_window(bounds.0, bounds.1).unwrap_or((1, 0)) } else { (1, 0) };
    Some((conv, window))
}

impl<'t> Head<'t> {
    fn new(set: &'t TraceSet, stream: usize, packets: Range<usize>, s: &Slice, range: (i64, i64)) -> Self {
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
    fn in_bounds(&self, k: i64) -> bool {
        k >= self.bounds.0 && k <= self.bounds.1
    }

    /// Moves to the next item the analysis reads, passing over events it has no
    /// interest in (their span inside the bounds is kept in `skipped`); false at the end
    /// of the chunk. Events read ahead are taken first.
    #[inline(always)]
    fn advance<A: Analysis>(&mut self, a: &A) -> Result<bool, EngineError> {
        if self.next_ahead() {
            return Ok(true);
        }
        self.advance_general(a)
    }

    /// Takes the next event read ahead as the current item (see [`Head::taken`]);
    /// false when none is left.
    #[inline(always)]
    fn next_ahead(&mut self) -> bool {
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
    /// copy request ([`Analysis::copies`]) and that was read ahead, or, when `ENTERED`,
    /// entered by word loads ([`ctf::stream::StreamCursor::copied_current`]).
    #[inline(always)]
    fn copied<const ENTERED: bool>(&self) -> Option<ctf::stream::Copied<'_>> {
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
    fn current(&mut self) -> Item<'_, 't> {
        self.enter_taken();
        self.cur.current()
    }

    /// [`Head::advance`] once the events read ahead are taken: reads ahead again where
    /// the cursor can ([`StreamCursor::read_ahead`]) and the analysis wants most events,
    /// else takes the next item from the cursor.
    #[inline(always)]
    fn advance_general<A: Analysis>(&mut self, a: &A) -> Result<bool, EngineError> {
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

    /// [`Head::advance_general`], out of line (see [`deliver_and_advance`]).
    #[inline(never)]
    fn read_on<A: Analysis>(&mut self, a: &A) -> Result<bool, EngineError> {
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
    fn out_of_bounds<A: Analysis>(&mut self, a: &A) -> bool {
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
    fn flush_skipped<A: Analysis>(&mut self, a: &A, st: &mut A::State) {
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
fn widen(span: &mut (i64, i64), first: i64, last: i64) {
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
fn went_back(span: &mut (i64, i64), prev: i64, k: i64) {
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

/// Hands the current item of `h` to the analysis when it is inside the slice and range;
/// false when the head has nothing more to deliver ([`Head::out_of_bounds`]). (The span
/// of events passed over is reported when the head ends: [`Analysis::on_skipped`] is
/// order-free.) Copied fields are offered for events read ahead, and when `ENTERED` for
/// events entered by word loads too. The time-merge passes false: offering them there
/// cost io 19 M instructions more on a 2 M-event trace (2.7 %) and saved none.
#[inline(always)]
fn deliver<A: Analysis, const ENTERED: bool>(a: &A, st: &mut A::State, h: &mut Head<'_>) -> bool {
    if !h.in_bounds(h.key) {
        return h.out_of_bounds(a);
    }
    let ctx = Ctx { stream: h.stream, order: h.order };
    if let Some(c) = h.copied::<ENTERED>() {
        if a.on_copied(st, &c, h.key, &ctx) {
            // (Read ahead, or entered: then its timestamp is its key.)
            widen(&mut h.copied_span, h.key, h.key);
            return true;
        }
    }
    match h.current() {
        Item::Event(ev) => a.on_event(st, &ev, &ctx),
        Item::Discarded(n) => a.on_notice(st, NoticeKind::Discarded, &n, &ctx),
        Item::LostPackets(n) => a.on_notice(st, NoticeKind::LostPackets, &n, &ctx),
    }
    true
}

/// [`deliver`], then [`Head::advance`] when the head has more to deliver: whether it
/// has. (Out of line: kept apart from the time-merge's loop over events read ahead.)
#[inline(never)]
fn deliver_and_advance<A: Analysis>(a: &A, st: &mut A::State, h: &mut Head<'_>) -> Result<bool, EngineError> {
    Ok(deliver::<A, false>(a, st, h) && h.advance(a)?)
}

/// Delivers the current item of `h`, an event read ahead and not yet entered
/// ([`Head::taken`]), and the events read ahead after it for as long as they keep the
/// lead (`until`), as [`deliver`] and [`Head::next_ahead`] would one by one: true when
/// one is left that lost the lead (it is then the current item), false when every event
/// read ahead is delivered (the head is to read on: [`Head::advance_general`]). Events
/// read ahead lie inside the head's bounds (their clock values inside its window), so no
/// event checks that.
#[inline(always)]
fn deliver_ahead<A: Analysis>(a: &A, st: &mut A::State, h: &mut Head<'_>, until: Lead) -> bool {
    let Head { cur, ahead, ahead_at, interest, stream, order, key, unentered, copied_span, .. } = h;
    // (Events are read ahead through the filter of the trace last seen: there is one.)
    let Some(Filter { wanted, .. }) = interest.filter.as_ref() else { return deliver_ahead_uncopied(a, st, h, until) };
    let mut i = *ahead_at - 1;
    let mut ord = *order;
    let mut e = &ahead[i];
    loop {
        debug_assert!(e.ts() >= h.bounds.0 && e.ts() <= h.bounds.1);
        let ctx = Ctx { stream: *stream, order: ord };
        let copied = cur.copied(e, wanted).is_some_and(|c| a.on_copied(st, &c, e.ts(), &ctx));
        if !copied {
            cur.enter_ahead(e);
            if let Item::Event(ev) = cur.current() {
                a.on_event(st, &ev, &ctx);
            }
        }
        i += 1;
        let Some(next) = ahead.get(i) else {
            (*ahead_at, *order, *unentered) = (i, ord, false);
            return false;
        };
        let k = next.ts();
        if k >= ord {
            ord = k;
        } else {
            // (Below the order key: maybe below the event before.)
            went_back(copied_span, e.ts(), k);
        }
        if !until.admits(k) {
            (*ahead_at, *order, *key) = (i + 1, ord, k);
            return true;
        }
        e = next;
    }
}

/// [`deliver_ahead`] for a head without a filter (events are read ahead through one, so
/// this is never expected): one event at a time, as [`deliver`] and
/// [`Head::next_ahead`] take them, none with copies.
#[cold]
#[inline(never)]
fn deliver_ahead_uncopied<A: Analysis>(a: &A, st: &mut A::State, h: &mut Head<'_>, until: Lead) -> bool {
    loop {
        deliver::<A, false>(a, st, h);
        if !h.next_ahead() {
            return false;
        }
        if !until.admits(h.key) {
            return true;
        }
    }
}

/// Processes one slice: items outside `[lo, hi)` and the global `range` skipped. With
/// [`StreamOrder::Merged`] the streams are merged by time (ties: lower stream index
/// first); with [`StreamOrder::PerStream`] each stream is read to its end in turn.
pub fn process_slice<A: Analysis>(a: &A, set: &TraceSet, s: &Slice, range: (i64, i64)) -> Result<A::State, EngineError> {
    process_slice_from(a, set, s, range, a.new_state())
}

/// [`process_slice`] continuing state `st` (a fresh chunk state, or the state of
/// everything before the slice: see [`Analysis::folds_in_place`]).
pub fn process_slice_from<A: Analysis>(a: &A, set: &TraceSet, s: &Slice, range: (i64, i64), st: A::State) -> Result<A::State, EngineError> {
    process_slice_taking_over(a, set, s, range, st, || None)
}

/// [`process_slice_from`] of a fresh chunk state `st` whose analysis folds in place
/// ([`Analysis::folds_in_place`]), asking `take_over` between runs of the time-merge
/// for the state of everything before the slice: once it gives it, the items read so
/// far are merged into it (`merge(before, st)`) and the rest of the slice is read into
/// the result, as the slice would be read into it from its start. (`|| None`: plain
/// [`process_slice_from`].)
pub fn process_slice_taking_over<A: Analysis>(
    a: &A,
    set: &TraceSet,
    s: &Slice,
    range: (i64, i64),
    st: A::State,
    mut take_over: impl FnMut() -> Option<A::State>,
) -> Result<A::State, EngineError> {
    let mut st = st;
    let mut awaits_take_over = true;
    a.reserve(&mut st, s.bytes(set));
    let mut heads: Vec<Head<'_>> = s
        .chunks
        .iter()
        .map(|(si, r)| Head::new(set, *si, r.clone(), s, range))
        .collect();
    if a.stream_order() == StreamOrder::PerStream {
        let mut buf = Vec::new();
        for h in heads.iter_mut() {
            run_stream(a, set, s, range, h, &mut st, &mut buf)?;
        }
        return Ok(st);
    }
    // Time-merge. Streams are few: find the earliest head and the runner-up by a
    // branch-free scan of their time keys (kept side by side, apart from the large
    // heads: which stream comes next is data, a branch on it mispredicts), then consume
    // the earliest stream for as long as it stays ahead of the runner-up. `live` stays
    // in stream order, so that among equal keys the first position is the lower stream.
    let mut live: Vec<(i64, usize)> = Vec::with_capacity(heads.len());
    for (i, h) in heads.iter_mut().enumerate() {
        if h.advance(a)? {
            live.push((h.key, i));
        } else {
            h.flush_skipped(a, &mut st);
        }
    }
    while !live.is_empty() {
        if awaits_take_over {
            if let Some(before) = take_over() {
                st = a.merge(before, st);
                awaits_take_over = false;
            }
        }
        let (best, until) = earliest(&live);
        // (One bounds check of `live` for the run.)
        let (lead_key, i) = &mut live[best];
        let h = &mut heads[*i];
        loop {
            let more = if h.unentered {
                if deliver_ahead(a, &mut st, h, until) {
                    *lead_key = h.key;
                    break;
                }
                h.read_on(a)?
            } else {
                deliver_and_advance(a, &mut st, h)?
            };
            if !more {
                h.flush_skipped(a, &mut st);
                live.remove(best);
                break;
            }
            if !until.admits(h.key) {
                *lead_key = h.key;
                break;
            }
        }
    }
    Ok(st)
}

/// How long the earliest head of the time-merge keeps the lead: while its keys are at
/// most `last`, the runner-up's key, less one unless the earliest head wins ties (it is
/// the lower stream). (When it does not, the runner-up's key is above its own: `last`
/// does not overflow.)
#[derive(Debug, Clone, Copy)]
struct Lead {
    last: i64,
}

impl Lead {
    /// No runner-up: every item keeps the lead (a lone head, or one stream read in turn).
    const ALONE: Lead = Lead { last: i64::MAX };

    /// Whether the earliest head's next item, of time key `k`, still comes first.
    #[inline(always)]
    fn admits(self, k: i64) -> bool {
        k <= self.last
    }
}

/// The position in `live` (time keys and heads, in stream order) of the head whose
/// item comes first in the time-merge (the lowest key, then the lower stream), and how
/// long it keeps the lead over the runner-up. Branch-free, with strict comparisons:
/// among equal keys the earlier position (the lower stream) wins.
#[inline(always)]
fn earliest(live: &[(i64, usize)]) -> (usize, Lead) {
    let Some(&(k1, _)) = live.get(1) else {
        return (0, Lead::ALONE);
    };
    let k0 = live[0].0;
    // (`select_unpredictable`: a conditional move, where the compiler would otherwise
    // branch on which stream is earlier, data that mispredicts.)
    use std::hint::select_unpredictable as pick;
    let swap = k1 < k0;
    let (mut best, mut best_key) = (usize::from(swap), pick(swap, k1, k0));
    let (mut second, mut second_key) = (usize::from(!swap), pick(swap, k0, k1));
    for (j, &(k, _)) in live.iter().enumerate().skip(2) {
        let earlier = k < best_key;
        let before_second = k < second_key;
        second = pick(earlier, best, pick(before_second, j, second));
        second_key = pick(earlier, best_key, pick(before_second, k, second_key));
        best = pick(earlier, j, best);
        best_key = pick(earlier, k, best_key);
    }
    // (`best > second` with equal keys cannot be: the earlier position wins.)
    (best, Lead { last: second_key - i64::from(best > second) })
}

/// Whether packet `j` of `pk` implies no notice (the cursor's rules, from the index):
/// then its events may be counted without being delivered.
fn packet_countable(pk: &[PacketRef], j: usize) -> bool {
    let p = &pk[j];
    let prev = j.checked_sub(1).map(|i| &pk[i]);
    if let (Some(q), Some(c)) = (prev.and_then(|q| q.info.seq), p.info.seq) {
        if c > q.wrapping_add(1) && c > q {
            return false;
        }
    }
    if let Some(d) = p.info.discarded {
        match prev {
            Some(q) if q.info.discarded == Some(d) => {}
            None if d == 0 => {}
            _ => return false,
        }
    }
    true
}

/// Reads one stream of a slice for a [`StreamOrder::PerStream`] analysis: packets that
/// imply no notice are counted when the analysis accepts it ([`Analysis::packet_counts`]),
/// only their events inside the slice and range (by clock value: see
/// [`ClockConv::cycle_window`]), two in one loop where two such packets follow each
/// other and lie wholly inside ([`StreamCursor::count_pair`]); the others are delivered
/// event by event. The packets read are the head's ([`Head::packets`]).
fn run_stream<'t, A: Analysis>(
    a: &A,
    set: &TraceSet,
    s: &Slice,
    range: (i64, i64),
    h: &mut Head<'t>,
    st: &mut A::State,
    buf: &mut Vec<u64>,
) -> Result<(), EngineError> {
    let r = h.packets.clone();
    let stream = &set.streams[h.stream];
    let pk = &stream.packets[..];
    let class_id = stream.class_id;
    let whole = s.lo == i64::MIN && s.hi == i64::MAX && range == (i64::MIN, i64::MAX);
    let bounds = h.bounds;
    // Of the last trace asked about: (trace, counts accepted, clock values to count).
    type Accepted = (u32, bool, Option<(u64, u64)>);
    let mut accepted: Option<Accepted> = None;
    let mut countable = |j: usize| -> Option<(u64, u64)> {
        if j >= r.end || j >= pk.len() {
            return None;
        }
        let t = pk[j].trace;
        let (yes, window) = match accepted {
            Some((x, y, w)) if x == t => (y, w),
            _ => {
                let y = a.packet_counts(t as usize, class_id);
                let w = if whole { Some((0, u64::MAX)) } else { cycle_window(set, t as usize, class_id, bounds).map(|(_, w)| w) };
                accepted = Some((t, y, w));
                (y, w)
            }
        };
        if yes && packet_countable(pk, j) { window } else { None }
    };
    // Trace whose class indexes `buf` counts.
    let mut buf_trace: Option<u32> = None;
    let flush = |a: &A, st: &mut A::State, buf: &mut Vec<u64>, t: Option<u32>| {
        if let Some(t) = t {
            if buf.iter().any(|n| *n != 0) {
                a.on_class_counts(st, t as usize, class_id, buf);
            }
            buf.iter_mut().for_each(|n| *n = 0);
        }
    };
    // Has `buf` count the classes of packet `j`'s trace.
    let count_into = |a: &A, st: &mut A::State, j: usize, buf: &mut Vec<u64>, buf_trace: &mut Option<u32>| {
        let t = pk[j].trace;
        if *buf_trace != Some(t) {
            flush(a, st, buf, *buf_trace);
            *buf_trace = Some(t);
            let n = set.traces[t as usize].plan.stream(class_id).map_or(0, |sp| sp.events.len());
            buf.clear();
            buf.resize(n, 0);
        }
    };
    // Hands the count `pc` of the packet `cur` has open to the analysis.
    let counted = |a: &A, st: &mut A::State, h: &mut Head<'_>, cur: Option<&StreamCursor<'_>>, pc: &PacketCount| {
        if let Some(ns) = pc.last_cycles.and_then(|c| h.cur.cycles_to_ns(c)) {
            h.key = ns;
        }
        h.order = h.order.max(h.key);
        let ctx = Ctx { stream: h.stream, order: h.order };
        a.on_packet(st, cur.unwrap_or(&h.cur), pc, &ctx);
    };
    // Counts the (rest of the) packet `j`, which the cursor opens or has open, inside
    // `window`.
    let count = |a: &A, st: &mut A::State, h: &mut Head<'_>, j: usize, window: (u64, u64), buf: &mut Vec<u64>, buf_trace: &mut Option<u32>| -> Result<(), EngineError> {
        count_into(a, st, j, buf, buf_trace);
        let pc = h.cur.count_packet_in(buf, window).map_err(|source| EngineError::Decode { stream: h.stream, source })?;
        if let Some(pc) = pc {
            counted(a, st, h, None, &pc);
        }
        Ok(())
    };
    // Counts packets `j` and `j + 1` in one loop ([`StreamCursor::count_pair`]) when
    // both are counted whole in `window`, the second read by `twin`; false where that
    // does not apply (nothing read).
    let count_pair = |a: &A, st: &mut A::State, h: &mut Head<'t>, twin: &mut StreamCursor<'t>, j: usize, window: (u64, u64), buf: &mut Vec<u64>, buf_trace: &mut Option<u32>| -> Result<bool, EngineError> {
        count_into(a, st, j, buf, buf_trace);
        let stream = h.stream;
        let decode = |source| EngineError::Decode { stream, source };
        let Some((first, second)) = h.cur.count_pair(twin, buf, window).map_err(decode)? else { return Ok(false) };
        counted(a, st, h, None, &first);
        counted(a, st, h, Some(twin), &second.map_err(decode)?);
        Ok(true)
    };
    // The cursor that reads the second packet of a pair, made at the first pair.
    let mut twin: Option<StreamCursor<'t>> = None;
    let ident = |p: Option<&PacketRef>| p.map(|p| (p.trace, p.file, p.info.offset));
    // Index of the next packet the cursor will open; identity of the open packet.
    let mut next = r.start;
    let mut open = None;
    let mut between = true;
    loop {
        if let Some(w) = countable(next).filter(|_| between) {
            // Two packets at once where the next one is counted whole too.
            let tw = if countable(next + 1) == Some(w) { Some(twin.get_or_insert_with(|| h.cur.twin())) } else { None };
            let paired = match tw {
                Some(tw) => count_pair(a, st, h, tw, next, w, buf, &mut buf_trace)?.then(|| ident(tw.packet())),
                None => None,
            };
            if let Some(second) = paired {
                open = second;
                next += 2;
            } else {
                count(a, st, h, next, w, buf, &mut buf_trace)?;
                open = ident(h.cur.packet());
                next += 1;
            }
            // Past the range's end, where nothing left comes earlier: done.
            if h.cur.clock_ns().is_some_and(|t| t > bounds.1) && h.cur.rest_after(bounds.1) {
                break;
            }
            continue;
        }
        if !h.advance(a)? {
            break;
        }
        between = false;
        let id = ident(h.cur.packet());
        if id != open {
            open = id;
            // Packets without items (empty) were skipped by the cursor.
            while next < r.end && ident(Some(&pk[next])) != id {
                next += 1;
            }
            let j = next;
            next += 1;
            let is_event = matches!(h.current(), Item::Event(_));
            if !deliver::<A, true>(a, st, h) {
                break;
            }
            if let Some(w) = countable(j).filter(|_| is_event) {
                count(a, st, h, j, w, buf, &mut buf_trace)?;
                between = true;
            }
            continue;
        }
        // A run of events read ahead in the open packet: delivered in one loop (the
        // next `advance` reads on).
        if h.unentered {
            deliver_ahead(a, st, h, Lead::ALONE);
            continue;
        }
        if !deliver::<A, true>(a, st, h) {
            break;
        }
    }
    h.flush_skipped(a, st);
    flush(a, st, buf, buf_trace);
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    proptest! {
        /// `earliest` picks what a sort by (key, stream) puts first, and its lead admits
        /// exactly the keys that still sort before the runner-up.
        #[test]
        fn earliest_is_the_sorted_first(keys in proptest::collection::vec(prop_oneof![-3i64..3, Just(i64::MIN), Just(i64::MAX)], 1..7), probe in prop_oneof![-4i64..4, Just(i64::MIN), Just(i64::MAX)]) {
            let live: Vec<(i64, usize)> = keys.iter().enumerate().map(|(i, k)| (*k, i)).collect();
            let mut order: Vec<usize> = (0..live.len()).collect();
            order.sort_by_key(|&i| (live[i].0, i));
            let (best, lead) = earliest(&live);
            prop_assert_eq!(best, order[0]);
            let before_runner_up = order.get(1).is_none_or(|&r| (probe, best) < (live[r].0, r));
            prop_assert_eq!(lead.admits(probe), before_runner_up);
        }
    }

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
