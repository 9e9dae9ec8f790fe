//! Workers and the ordered, pipelined merge.
//!
//! This module runs slices on workers and merges their states in time order, lending
//! the running state to the worker of the next slice to merge. Reading one slice is in
//! `slice` (delivery to the analysis, the time-merge of its streams) and `per_stream`
//! (a stream read in turn, whole packets counted); `head` is one stream of a slice being
//! read (what the analysis passes over, reading ahead, the spans of events passed over).

mod head;
mod per_stream;
mod slice;

use std::borrow::Cow;
use std::collections::BTreeMap;
use std::ops::ControlFlow;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{mpsc, Condvar, Mutex};

use ctf::trace::TraceSet;

use crate::partition::{clip, partition, Slice};
use crate::{EngineOptions, Runnable};

use slice::read_slice;
pub use slice::{process_slice, process_slice_from, process_slice_taking_over};

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
    /// A state the caller's contract rules out was met (a bug; reported rather than
    /// answered with less data).
    #[error("internal error: {0}")]
    Internal(&'static str),
    /// The caller's drain ([`run_draining`]) asked the run to stop (its consumer went
    /// away).
    #[error("the run was stopped by its consumer")]
    Stopped,
}

/// What a run made of everything it could read, and the errors of the streams it
/// could not read to their end (see the crate docs, "Damage").
#[derive(Debug)]
pub struct Outcome<T> {
    /// The result (or state) of every item delivered.
    pub output: T,
    /// One [`EngineError::Decode`] per stream error met, in time order of the slices,
    /// then the indexing errors of streams no slice reached the end of.
    pub faults: Vec<EngineError>,
}

impl<T> Outcome<T> {
    /// The output, or the first fault when there is one.
    pub fn strict(self) -> Result<T, EngineError> {
        match self.faults.into_iter().next() {
            Some(e) => Err(e),
            None => Ok(self.output),
        }
    }
}

/// Runs `a` over `set` with `opts`: partitions, drops what lies outside the time range
/// ([`clip`]), processes slices on workers, merges in time order, finishes.
pub fn run<A: Runnable>(a: &A, set: &TraceSet, opts: &EngineOptions) -> Result<A::Output, EngineError> {
    run_with_progress(a, set, opts, None)
}

/// Processes given slices (time-ordered) and returns the merged state, before `finish`.
/// The slices are read as given: [`clip`] them to the time range first, as [`run`] does.
pub fn run_slices<A: Runnable>(a: &A, set: &TraceSet, slices: &[Slice], opts: &EngineOptions) -> Result<A::State, EngineError> {
    run_slices_with_progress(a, set, slices, opts, None)
}

/// [`run`], calling `progress(bytes merged, bytes in all)` after each slice is merged
/// (for a progress bar; bytes are the slices' packet bytes).
pub fn run_with_progress<A: Runnable>(a: &A, set: &TraceSet, opts: &EngineOptions, progress: Option<&dyn Fn(u64, u64)>) -> Result<A::Output, EngineError> {
    run_reporting(a, set, opts, progress)?.strict()
}

/// [`run_with_progress`] that reads every stream it can to its end: a stream's error
/// ends that stream's part of its slice only, and comes back in [`Outcome::faults`].
/// `Err` only when a worker panicked.
pub fn run_reporting<A: Runnable>(a: &A, set: &TraceSet, opts: &EngineOptions, progress: Option<&dyn Fn(u64, u64)>) -> Result<Outcome<A::Output>, EngineError> {
    let slices = slices_of(a, set, opts);
    let Outcome { output, faults } = run_slices_reporting(a, set, &slices, opts, progress)?;
    Ok(Outcome { output: a.finish(output), faults })
}

/// What [`run_draining`] hands the running state to after each merge: `Break` stops
/// the run.
pub type Drain<'d, S> = &'d mut dyn FnMut(&mut S) -> ControlFlow<()>;

/// [`run`] that hands `drain` the running state (of every slice merged so far, in
/// time order) after each merge, on the merging thread, before the next slice is
/// merged into it: what the analysis knows to be final there (an occurrence that
/// ended before the merged slices' end) can be taken out of the state and passed on
/// at once, so that the run holds such results for the slices in flight only. The
/// merge waits while `drain` runs (a consumer that is slow holds the workers back,
/// at most `2 × workers` slices ahead); `drain` returning `Break` stops the run, which
/// then fails with [`EngineError::Stopped`]. A damaged trace fails as with [`run`]
/// (its first fault), whatever was drained before.
pub fn run_draining<A: Runnable>(a: &A, set: &TraceSet, opts: &EngineOptions, drain: Drain<'_, A::State>) -> Result<A::Output, EngineError> {
    let slices = slices_of(a, set, opts);
    let mut faults = Vec::new();
    let st = run_collecting(a, set, &slices, opts, None, Some(drain), &mut faults)?;
    if faults.is_empty() && set.streams.iter().all(|s| set.stream_error(s).is_none()) {
        return Ok(a.finish(st));
    }
    // The fault `run` reports, from the reading `run` makes (damaged traces only).
    match run_slices_reporting(a, set, &slices, opts, None)?.strict() {
        Err(e) => Err(e),
        Ok(_) => Err(EngineError::Internal("a reading met faults that a second reading did not meet")),
    }
}

/// The slices `run` reads of `set` for `a`: partitioned (`a`'s bound on slice size
/// applied when the size is automatic) and clipped to the time range.
fn slices_of<A: Runnable>(a: &A, set: &TraceSet, opts: &EngineOptions) -> Vec<Slice> {
    let mut bytes = opts.slice_bytes(set);
    if opts.chunk_size == 0 && opts.worker_count() > 1 {
        bytes = bytes.min(a.max_auto_slice_bytes());
    }
    clip(&partition(set, opts.partition, bytes), opts.range())
}

/// [`run_slices`] with a progress callback (see [`run_with_progress`]).
pub fn run_slices_with_progress<A: Runnable>(
    a: &A,
    set: &TraceSet,
    slices: &[Slice],
    opts: &EngineOptions,
    progress: Option<&dyn Fn(u64, u64)>,
) -> Result<A::State, EngineError> {
    run_slices_reporting(a, set, slices, opts, progress)?.strict()
}

/// [`run_slices_with_progress`] that reads on past stream errors, as [`run_reporting`].
pub fn run_slices_reporting<A: Runnable>(
    a: &A,
    set: &TraceSet,
    slices: &[Slice],
    opts: &EngineOptions,
    progress: Option<&dyn Fn(u64, u64)>,
) -> Result<Outcome<A::State>, EngineError> {
    let mut slices = Cow::Borrowed(slices);
    let mut progress = progress;
    let (output, mut faults) = loop {
        let mut faults = Vec::new();
        let output = run_collecting(a, set, &slices, opts, progress, None, &mut faults)?;
        match without_packets_after_damage(set, &slices, &faults) {
            // Later slices read packets of a stream after its damage: read again
            // without them (only damaged traces pay this second reading).
            Some(trimmed) => {
                slices = Cow::Owned(trimmed);
                progress = None;
            }
            // (Slices that hold parts of a damaged packet may each meet its error:
            // the first, in time order, is the stream's.)
            None => break (output, first_fault_per_stream(faults)),
        }
    };
    // Streams whose indexing error no slice reported (a stream without a readable
    // packet is in no slice; a time range may leave out a stream's end).
    for (i, s) in set.streams.iter().enumerate() {
        let reported = faults.iter().any(|f| matches!(f, EngineError::Decode { stream, .. } if *stream == i));
        if let (Some(e), false) = (set.stream_error(s), reported) {
            faults.push(EngineError::Decode { stream: i, source: e.duplicate() });
        }
    }
    Ok(Outcome { output, faults })
}

/// `slices` less the packets of a damaged stream that lie after its damage (a stream
/// is read up to its damage only, whatever the partitioning); `None` when no slice
/// holds any. Where the error lies in one of the stream's packets, every packet after
/// that one goes (a damaged packet's times can place it in a later slice than the
/// packets after it, or an earlier one than those before it: a flipped bit in its
/// `timestamp_begin`), and that one stays in every slice that holds a part of it: a
/// slice that counts its part of a packet passes over the whole packet, and so meets
/// the damage even where it lies in a later slice's part, whose events before the
/// damage still count there. Otherwise every packet of the slices after the one
/// where the error was met goes.
fn without_packets_after_damage(set: &TraceSet, slices: &[Slice], faults: &[(usize, EngineError)]) -> Option<Vec<Slice>> {
    // (stream, slice where its first error was met, the packet that error lies in)
    let mut damaged: Vec<(usize, usize, Option<usize>)> = Vec::new();
    for (k, f) in faults {
        if let EngineError::Decode { stream, source } = f {
            if !damaged.iter().any(|(s, ..)| s == stream) {
                damaged.push((*stream, *k, damaged_packet(set, *stream, source)));
            }
        }
    }
    // The part of slice `j`'s packets `r` of stream `si` read.
    let kept = |j: usize, si: usize, r: &std::ops::Range<usize>| match damaged.iter().find(|d| d.0 == si) {
        Some(&(_, _, Some(p))) => Some(r.start..r.end.min(p + 1)).filter(|r| !r.is_empty()),
        Some(&(_, k, None)) if j > k => None,
        _ => Some(r.clone()),
    };
    let trimmed: Vec<Slice> = slices
        .iter()
        .enumerate()
        .map(|(j, s)| Slice { chunks: s.chunks.iter().filter_map(|(si, r)| Some((*si, kept(j, *si, r)?))).collect(), ..s.clone() })
        .collect();
    (trimmed != slices).then_some(trimmed)
}

/// `faults` (with the slice each was met in, in slice order) less those of a stream
/// that already had one: a stream is read up to its first error.
fn first_fault_per_stream(faults: Vec<(usize, EngineError)>) -> Vec<EngineError> {
    let mut seen = Vec::new();
    let mut out = Vec::new();
    for (_, f) in faults {
        if let EngineError::Decode { stream, .. } = f {
            if seen.contains(&stream) {
                continue;
            }
            seen.push(stream);
        }
        out.push(f);
    }
    out
}

/// The index of the packet of stream `s` that error `e` names a byte of, if any.
fn damaged_packet(set: &TraceSet, s: usize, e: &ctf::error::Error) -> Option<usize> {
    let ctf::error::Error::Stream { path, offset, .. } = e else { return None };
    set.streams[s].packets.iter().position(|p| {
        let (_, file) = set.packet_file(p);
        file.path == *path && (p.info.offset..p.info.offset + p.info.total_bits / 8).contains(offset)
    })
}

/// The engine's loop: slices read on workers (or inline), states merged in order,
/// stream errors gathered into `faults` with the index of their slice, in slice order;
/// `drain` given the running state after each merge (see [`run_draining`]).
fn run_collecting<A: Runnable>(
    a: &A,
    set: &TraceSet,
    slices: &[Slice],
    opts: &EngineOptions,
    progress: Option<&dyn Fn(u64, u64)>,
    mut drain: Option<Drain<'_, A::State>>,
    faults: &mut Vec<(usize, EngineError)>,
) -> Result<A::State, EngineError> {
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
        for (k, s) in slices.iter().enumerate() {
            let mut met = Vec::new();
            acc = if in_place {
                read_slice(a, set, s, range, acc, || None, &mut met)
            } else {
                let st = read_slice(a, set, s, range, a.new_state(), || None, &mut met);
                a.merge(acc, st)
            };
            faults.extend(met.into_iter().map(|f| (k, f)));
            tick(s);
            if let Some(d) = drain.as_mut() {
                if d(&mut acc).is_break() {
                    return Err(EngineError::Stopped);
                }
            }
        }
        return Ok(acc);
    }
    let window = 2 * workers;
    let next = AtomicUsize::new(0);
    let abort = AtomicBool::new(false);
    // Index of the next slice to merge; workers may not run more than `window` ahead.
    let merged = (Mutex::new(0usize), Condvar::new());
    type Read<S> = Result<(S, Vec<EngineError>), EngineError>;
    let (tx, rx) = mpsc::channel::<(usize, Read<A::State>)>();
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
                let r = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
                    let mut faults = Vec::new();
                    let st = read_slice(a, set, &slices[k], range, start, take_over, &mut faults);
                    (st, faults)
                }));
                let r = r.map_err(|_| EngineError::WorkerPanicked);
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
            if err.is_some() && drain.is_some() {
                // Stopped or failed: what workers still send is not merged.
                continue;
            }
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
            while let Some((st, slice_faults)) = pending.remove(&want) {
                faults.extend(slice_faults.into_iter().map(|f| (want, f)));
                // The running state, if lent to this slice and not taken (else `st`
                // holds it: it is the state of everything up to this slice's end).
                if let Some(lent) = handoff.take_back() {
                    acc = Some(lent);
                }
                let next_state = match acc.take() {
                    Some(prev) => a.merge(prev, st),
                    None => st,
                };
                let merged_state = acc.insert(next_state);
                if let Some(d) = drain.as_mut() {
                    if err.is_none() && d(merged_state).is_break() {
                        err = Some(EngineError::Stopped);
                        abort.store(true, Ordering::SeqCst);
                        merged.1.notify_all();
                    }
                }
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
/// slice to merge, when the analysis folds in place ([`ChunkPolicy::folds_in_place`](crate::ChunkPolicy::folds_in_place)):
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
