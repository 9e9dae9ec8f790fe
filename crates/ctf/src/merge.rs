//! Merging all streams of a [`TraceSet`] by time.
//!
//! Order: by timestamp, ties broken by stream order (deterministic). Each stream keeps
//! its own order even where its packets overlap in time (old LTTng): the merge never
//! needs a stream's timestamps to be monotonic, so it never aborts on them.
//! Notices are ordered by the beginning of the interval they cover.
//!
//! # Damage
//!
//! A stream that cannot be read on (a decoding error in a packet, a packet index that
//! ends early, a first packet that is unreadable) is retired at that point: its error
//! is returned once, when the stream's turn comes (right after its last good item, or
//! at the start for a stream that yields nothing), and the merge goes on with the other
//! streams. So every intact stream is delivered whole and a damaged one up to its
//! damage (a prefix of what it holds). [`Merger::next_collecting`] gathers the errors
//! for the caller to report at the end (and to exit non-zero on).

use std::cmp::Reverse;
use std::collections::{BinaryHeap, VecDeque};

use crate::error::{Error, Result};
use crate::stream::{Item, StreamCursor};
use crate::trace::TraceSet;

/// Merges the streams of a trace set into one time-ordered sequence.
pub struct Merger<'t> {
    cursors: Vec<StreamCursor<'t>>,
    heap: BinaryHeap<Reverse<(i64, usize)>>,
    /// Stream whose item was returned last (advanced on the next call).
    last: Option<usize>,
    /// Last key of each stream (for keying errors and clock-less items).
    keys: Vec<i64>,
    started: bool,
    /// Errors of streams (by index) met while starting, returned before anything else.
    failed: VecDeque<(usize, Error)>,
}

/// What the merger yields, with the index of the stream it comes from.
pub struct Merged<'c, 't> {
    /// Index of the stream in the set.
    pub stream: usize,
    /// The item.
    pub item: Item<'c, 't>,
}

impl<'t> Merger<'t> {
    /// A merger over every stream of `set`.
    pub fn new(set: &'t TraceSet) -> Self {
        let cursors: Vec<_> = (0..set.streams.len()).map(|i| StreamCursor::new(set, i)).collect();
        let n = cursors.len();
        Merger { cursors, heap: BinaryHeap::new(), last: None, keys: vec![i64::MIN; n], started: false, failed: VecDeque::new() }
    }

    /// A merger over the given cursors (one per stream, in stream order), each
    /// possibly limited to a range of packets or already advanced: the merge starts
    /// from each cursor's next item.
    pub fn from_cursors(cursors: Vec<StreamCursor<'t>>) -> Self {
        let n = cursors.len();
        Merger { cursors, heap: BinaryHeap::new(), last: None, keys: vec![i64::MIN; n], started: false, failed: VecDeque::new() }
    }

    /// The cursor of stream `i` (e.g. to see which packet the last item came from).
    pub fn cursor(&self, i: usize) -> &StreamCursor<'t> {
        &self.cursors[i]
    }

    /// Key of a stream's current item, after advancing it. `None` when exhausted.
    fn advance(&mut self, i: usize) -> Result<Option<i64>> {
        let key = match self.cursors[i].next()? {
            None => return Ok(None),
            Some(Item::Event(e)) => e.ts(),
            Some(Item::Discarded(n)) | Some(Item::LostPackets(n)) => n.begin_ns.or(n.end_ns),
        };
        let k = key.unwrap_or(self.keys[i]);
        self.keys[i] = k;
        Ok(Some(k))
    }

    /// The next item in time order, or `None` at the end. A stream's decoding error is
    /// returned when that stream's turn comes (items before it were all delivered);
    /// that stream is then retired and the next call goes on with the others.
    #[allow(clippy::should_implement_trait)]
    pub fn next(&mut self) -> Result<Option<Merged<'_, 't>>> {
        Ok(self.step().map_err(|(_, e)| e)?.map(|i| Merged { stream: i, item: self.cursors[i].current() }))
    }

    /// [`Merger::next`] that puts each stream's error into `errors` and goes on: the
    /// next item of the streams still readable, `None` at the end.
    pub fn next_collecting(&mut self, errors: &mut Vec<Error>) -> Option<Merged<'_, 't>> {
        let i = loop {
            match self.step() {
                Ok(i) => break i?,
                Err((_, e)) => errors.push(e),
            }
        };
        Some(Merged { stream: i, item: self.cursors[i].current() })
    }

    /// [`Merger::next_collecting`] that also says which stream (by index) each error
    /// ended.
    pub fn next_collecting_streams(&mut self, errors: &mut Vec<(usize, Error)>) -> Option<Merged<'_, 't>> {
        let i = loop {
            match self.step() {
                Ok(i) => break i?,
                Err(e) => errors.push(e),
            }
        };
        Some(Merged { stream: i, item: self.cursors[i].current() })
    }

    /// Retires stream `i`, whose item was returned last, as if its cursor had ended
    /// there (a caller that failed on its item: the other streams go on).
    pub fn retire(&mut self, i: usize) {
        if self.last == Some(i) {
            self.last = None;
        }
    }

    /// Advances the merge: the stream whose cursor holds the next item.
    fn step(&mut self) -> std::result::Result<Option<usize>, (usize, Error)> {
        if !self.started {
            self.started = true;
            for i in 0..self.cursors.len() {
                match self.advance(i) {
                    Ok(Some(k)) => self.heap.push(Reverse((k, i))),
                    Ok(None) => {}
                    Err(e) => self.failed.push_back((i, e)),
                }
            }
        } else if let Some(i) = self.last.take() {
            if let Some(k) = self.advance(i).map_err(|e| (i, e))? {
                // Most of the time the same stream stays first: no heap traffic then.
                let ahead = self.heap.peek().is_none_or(|Reverse(top)| (k, i) < *top);
                if ahead {
                    self.last = Some(i);
                    return Ok(Some(i));
                }
                self.heap.push(Reverse((k, i)));
            }
        }
        if let Some(e) = self.failed.pop_front() {
            return Err(e);
        }
        let Some(Reverse((_, i))) = self.heap.pop() else { return Ok(None) };
        self.last = Some(i);
        Ok(Some(i))
    }
}
