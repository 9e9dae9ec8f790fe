//! Merging all streams of a [`TraceSet`] by time (A6).
//!
//! Order: by timestamp, ties broken by stream order (deterministic). Each stream keeps
//! its own order even where its packets overlap in time (old LTTng): the merge never
//! needs a stream's timestamps to be monotonic, so it never aborts on them.
//! Notices are ordered by the beginning of the interval they cover.

use std::cmp::Reverse;
use std::collections::BinaryHeap;

use crate::error::Result;
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
        Merger { cursors, heap: BinaryHeap::new(), last: None, keys: vec![i64::MIN; n], started: false }
    }

    /// A merger over the given cursors (one per stream, in stream order), each
    /// possibly limited to a range of packets or already advanced: the merge starts
    /// from each cursor's next item.
    pub fn from_cursors(cursors: Vec<StreamCursor<'t>>) -> Self {
        let n = cursors.len();
        Merger { cursors, heap: BinaryHeap::new(), last: None, keys: vec![i64::MIN; n], started: false }
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
    /// returned when that stream's turn comes; items before it were all delivered.
    #[allow(clippy::should_implement_trait)]
    pub fn next(&mut self) -> Result<Option<Merged<'_, 't>>> {
        if !self.started {
            self.started = true;
            for i in 0..self.cursors.len() {
                if let Some(k) = self.peek_first(i)? {
                    self.heap.push(Reverse((k, i)));
                }
            }
        } else if let Some(i) = self.last.take() {
            if let Some(k) = self.advance(i)? {
                // Most of the time the same stream stays first: no heap traffic then.
                let ahead = self.heap.peek().is_none_or(|Reverse(top)| (k, i) < *top);
                if ahead {
                    self.last = Some(i);
                    return Ok(Some(Merged { stream: i, item: self.cursors[i].current() }));
                }
                self.heap.push(Reverse((k, i)));
            }
        }
        let Some(Reverse((_, i))) = self.heap.pop() else { return Ok(None) };
        self.last = Some(i);
        Ok(Some(Merged { stream: i, item: self.cursors[i].current() }))
    }

    fn peek_first(&mut self, i: usize) -> Result<Option<i64>> {
        self.advance(i)
    }
}
