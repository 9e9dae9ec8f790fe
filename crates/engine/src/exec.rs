//! Workers and the ordered, pipelined merge (B3).

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{mpsc, Condvar, Mutex};

use ctf::stream::{Item, StreamCursor};
use ctf::trace::TraceSet;

use crate::partition::{partition, Slice};
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

/// Runs `a` over `set` with `opts`: partitions, processes slices on workers, merges in
/// time order, finishes.
pub fn run<A: Analysis>(a: &A, set: &TraceSet, opts: &EngineOptions) -> Result<A::Output, EngineError> {
    let slices = partition(set, opts.partition, opts.chunk_size);
    let st = run_slices(a, set, &slices, opts)?;
    Ok(a.finish(st))
}

/// Processes given slices (time-ordered) and returns the merged state, before `finish`.
pub fn run_slices<A: Analysis>(a: &A, set: &TraceSet, slices: &[Slice], opts: &EngineOptions) -> Result<A::State, EngineError> {
    let workers = opts.worker_count().min(slices.len()).max(1);
    let range = (opts.begin.unwrap_or(i64::MIN), opts.end.unwrap_or(i64::MAX));
    if workers == 1 {
        let mut acc = a.initial_state();
        for s in slices {
            let st = process_slice(a, set, s, range)?;
            acc = a.merge(acc, st);
        }
        return Ok(acc);
    }
    let window = 2 * workers;
    let next = AtomicUsize::new(0);
    let abort = AtomicBool::new(false);
    // Index of the next slice to merge; workers may not run more than `window` ahead.
    let merged = (Mutex::new(0usize), Condvar::new());
    let (tx, rx) = mpsc::channel::<(usize, Result<A::State, EngineError>)>();
    std::thread::scope(|scope| {
        for _ in 0..workers {
            let tx = tx.clone();
            let (next, abort, merged) = (&next, &abort, &merged);
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
                let r = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| process_slice(a, set, &slices[k], range)));
                let r = r.unwrap_or(Err(EngineError::WorkerPanicked));
                if tx.send((k, r)).is_err() {
                    break;
                }
            });
        }
        drop(tx);
        let mut acc = Some(a.initial_state());
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
                let prev = acc.take().expect("accumulator present");
                acc = Some(a.merge(prev, st));
                want += 1;
                *merged.0.lock().unwrap_or_else(|e| e.into_inner()) = want;
                merged.1.notify_all();
            }
        }
        match err {
            Some(e) => Err(e),
            None => Ok(acc.expect("accumulator present")),
        }
    })
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
    stream: usize,
    cur: StreamCursor<'t>,
    /// Time key of the current item.
    key: i64,
    /// Running maximum of the keys (see [`Ctx::order`]).
    order: i64,
}

impl Head<'_> {
    /// Moves to the next item; false at the end of the chunk.
    #[inline]
    fn advance(&mut self) -> Result<bool, EngineError> {
        match self.cur.next() {
            Ok(None) => Ok(false),
            Ok(Some(item)) => {
                if let Some(k) = key(&item) {
                    self.key = k;
                }
                self.order = self.order.max(self.key);
                Ok(true)
            }
            Err(source) => Err(EngineError::Decode { stream: self.stream, source }),
        }
    }
}

/// Hands the current item of `h` to the analysis when it is inside the slice and range.
#[inline(always)]
fn deliver<A: Analysis>(a: &A, st: &mut A::State, s: &Slice, range: (i64, i64), h: &mut Head<'_>) {
    let k = h.key;
    if s.contains(k) && k >= range.0 && k <= range.1 {
        let ctx = Ctx { stream: h.stream, order: h.order };
        match h.cur.current() {
            Item::Event(ev) => a.on_event(st, &ev, &ctx),
            Item::Discarded(n) => a.on_notice(st, NoticeKind::Discarded, &n, &ctx),
            Item::LostPackets(n) => a.on_notice(st, NoticeKind::LostPackets, &n, &ctx),
        }
    }
}

/// Processes one slice: items outside `[lo, hi)` and the global `range` skipped. With
/// [`StreamOrder::Merged`] the streams are merged by time (ties: lower stream index
/// first); with [`StreamOrder::PerStream`] each stream is read to its end in turn.
pub fn process_slice<A: Analysis>(a: &A, set: &TraceSet, s: &Slice, range: (i64, i64)) -> Result<A::State, EngineError> {
    let mut st = a.new_state();
    let mut heads: Vec<Head<'_>> = s
        .chunks
        .iter()
        .map(|(si, r)| Head { stream: *si, cur: StreamCursor::with_packets(set, *si, r.clone()), key: i64::MIN, order: i64::MIN })
        .collect();
    if a.stream_order() == StreamOrder::PerStream {
        for h in &mut heads {
            while h.advance()? {
                deliver(a, &mut st, s, range, h);
            }
        }
        return Ok(st);
    }
    // Time-merge. Streams are few: find the earliest head and the runner-up by a linear
    // scan, then consume the earliest stream for as long as it stays ahead of the
    // runner-up (runs are long, so most items cost one comparison).
    let mut live: Vec<usize> = Vec::with_capacity(heads.len());
    for (i, h) in heads.iter_mut().enumerate() {
        if h.advance()? {
            live.push(i);
        }
    }
    while !live.is_empty() {
        let (mut best, mut second) = (0usize, None::<(i64, usize)>);
        for j in 1..live.len() {
            let (kb, kj) = ((heads[live[best]].key, heads[live[best]].stream), (heads[live[j]].key, heads[live[j]].stream));
            if kj < kb {
                second = Some(second.map_or(kb, |x| x.min(kb)));
                best = j;
            } else {
                second = Some(second.map_or(kj, |x| x.min(kj)));
            }
        }
        let bound = second.unwrap_or((i64::MAX, usize::MAX));
        let h = &mut heads[live[best]];
        loop {
            deliver(a, &mut st, s, range, h);
            if !h.advance()? {
                live.swap_remove(best);
                break;
            }
            if (h.key, h.stream) > bound {
                break;
            }
        }
    }
    Ok(st)
}
