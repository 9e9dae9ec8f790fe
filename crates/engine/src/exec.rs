//! Workers and the ordered, pipelined merge (B3).

use std::cmp::Reverse;
use std::collections::{BTreeMap, BinaryHeap};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{mpsc, Condvar, Mutex};

use ctf::stream::{Item, StreamCursor};
use ctf::trace::TraceSet;

use crate::partition::{partition, Slice};
use crate::{Analysis, EngineOptions, NoticeKind};

/// What an analysis is told about the item it receives.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Ctx {
    /// Index of the stream in the set.
    pub stream: usize,
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
fn key(item: &Item<'_, '_>) -> Option<i64> {
    match item {
        Item::Event(e) => e.ts(),
        Item::Discarded(n) | Item::LostPackets(n) => n.begin_ns.or(n.end_ns),
    }
}

/// Processes one slice: its streams merged by time, items outside `[lo, hi)` and the
/// global `range` skipped.
pub fn process_slice<A: Analysis>(a: &A, set: &TraceSet, s: &Slice, range: (i64, i64)) -> Result<A::State, EngineError> {
    let mut st = a.new_state();
    let mut cursors: Vec<(usize, StreamCursor<'_>, i64)> =
        s.chunks.iter().map(|(si, r)| (*si, StreamCursor::with_packets(set, *si, r.clone()), i64::MIN)).collect();
    let mut heap = BinaryHeap::with_capacity(cursors.len());
    let advance = |c: &mut (usize, StreamCursor<'_>, i64)| -> Result<Option<i64>, EngineError> {
        let (si, cur, last) = c;
        match cur.next() {
            Ok(None) => Ok(None),
            Ok(Some(item)) => {
                let k = key(&item).unwrap_or(*last);
                *last = k;
                Ok(Some(k))
            }
            Err(source) => Err(EngineError::Decode { stream: *si, source }),
        }
    };
    for (i, c) in cursors.iter_mut().enumerate() {
        if let Some(k) = advance(c)? {
            heap.push(Reverse((k, c.0, i)));
        }
    }
    while let Some(Reverse((k, si, i))) = heap.pop() {
        if s.contains(k) && k >= range.0 && k <= range.1 {
            let ctx = Ctx { stream: si };
            match cursors[i].1.current() {
                Item::Event(ev) => a.on_event(&mut st, &ev, &ctx),
                Item::Discarded(n) => a.on_notice(&mut st, NoticeKind::Discarded, &n, &ctx),
                Item::LostPackets(n) => a.on_notice(&mut st, NoticeKind::LostPackets, &n, &ctx),
            }
        }
        if let Some(k) = advance(&mut cursors[i])? {
            heap.push(Reverse((k, si, i)));
        }
    }
    Ok(st)
}
