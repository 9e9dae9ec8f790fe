//! Reading for `print` and `dump`: the items of a slice of the trace merged by time
//! (ties by stream index, as [`ctf::merge::Merger`]), trimmed to a time range through
//! the packet index, with events of unwanted classes passed over by their sizes, and
//! the slices formatted on N threads and written in order.

use std::cmp::Reverse;
use std::collections::BinaryHeap;
use std::ops::Range;

use ctf::stream::{Item, Passed, StreamCursor, Wanted};
use ctf::trace::{PacketRef, TraceSet};

/// What is read: a time range and, per stream, the classes wanted (`None`: all) or the
/// stream left out.
pub struct Filter {
    /// Inclusive range of timestamps (ns from origin).
    pub range: (i64, i64),
    /// Per stream: `None` to leave it out, else the classes wanted (`None`: all).
    pub streams: Vec<Option<Option<Wanted>>>,
}

/// One stream of a slice being read.
struct Head<'t> {
    cur: StreamCursor<'t>,
    stream: usize,
    trace: usize,
    key: i64,
}

impl Head<'_> {
    /// Moves to the next item; its time key, `None` at the end.
    fn advance(&mut self, wanted: Option<&Wanted>) -> Result<Option<i64>, ctf::error::Error> {
        let item = match wanted {
            None => self.cur.next()?,
            Some(w) => self.cur.next_wanted(w, self.trace, (1, 0), true, &mut Passed::default())?,
        };
        let key = match item {
            None => return Ok(None),
            Some(Item::Event(e)) => e.ts(),
            Some(Item::Discarded(n)) | Some(Item::LostPackets(n)) => n.begin_ns.or(n.end_ns),
        };
        self.key = key.unwrap_or(self.key);
        Ok(Some(self.key))
    }
}

/// Reads the items of `chunks` (per stream, a packet range) whose time keys lie in
/// `[lo, hi)` (`hi == i64::MAX`: no end) and in the filter's range, in time order,
/// handing each to `sink` with its stream index and packet. A stream that fails (its
/// cursor, or the sink answering `Ok(false)` for a field that does not decode) ends
/// there, its error pushed to `errors`; the other streams are read on. An error of the
/// sink (`Err`) stops the reading.
pub fn read_slice<E>(
    set: &TraceSet,
    chunks: &[(usize, Range<usize>)],
    (lo, hi): (i64, i64),
    filter: &Filter,
    errors: &mut Vec<(usize, ctf::error::Error)>,
    mut sink: impl FnMut(usize, &mut Item<'_, '_>, Option<PacketRef>) -> Result<bool, E>,
) -> Result<(), E> {
    let range = filter.range;
    let first = lo.max(range.0);
    let last = if hi == i64::MAX { range.1 } else { (hi - 1).min(range.1) };
    let mut heads: Vec<Head<'_>> = Vec::new();
    let mut heap = BinaryHeap::new();
    for (stream, packets) in chunks {
        let Some(Some(wanted)) = filter.streams.get(*stream) else { continue };
        let packets = if first > i64::MIN { StreamCursor::first_needed(set, *stream, packets.clone(), first)..packets.end } else { packets.clone() };
        let cur = StreamCursor::with_packets(set, *stream, packets);
        let trace = cur.trace_index();
        let mut h = Head { cur, stream: *stream, trace, key: i64::MIN };
        let i = heads.len();
        match h.advance(wanted.as_ref()) {
            Ok(Some(k)) => heap.push(Reverse((k, h.stream, i))),
            Ok(None) => {}
            Err(e) => errors.push((h.stream, e)),
        }
        heads.push(h);
    }
    let mut next = heap.pop().map(|Reverse(x)| x);
    while let Some((k, _, i)) = next {
        let wanted = filter.streams[heads[i].stream].as_ref().and_then(|w| w.as_ref());
        if k > last {
            // Past the end: this stream is done when nothing it has left comes earlier.
            if heads[i].cur.rest_after(last) {
                next = heap.pop().map(|Reverse(x)| x);
                continue;
            }
        } else if k >= first {
            let h = &mut heads[i];
            let packet = h.cur.packet().copied();
            let mut item = h.cur.current();
            if !sink(h.stream, &mut item, packet)? {
                // The sink recorded why this stream ends here.
                next = heap.pop().map(|Reverse(x)| x);
                continue;
            }
        }
        let h = &mut heads[i];
        let advanced = match h.advance(wanted) {
            Ok(a) => a,
            Err(e) => {
                errors.push((h.stream, e));
                None
            }
        };
        next = match advanced {
            // Most of the time the same stream stays first: no heap traffic then.
            Some(k) if heap.peek().is_none_or(|Reverse(top)| (k, h.stream, i) < *top) => Some((k, h.stream, i)),
            // Another stream comes first: it takes this one's place at the top, and one
            // sift down puts this one where it belongs (not a push and a pop).
            Some(k) => heap.peek_mut().map(|mut top| std::mem::replace(&mut *top, Reverse((k, h.stream, i))).0),
            None => heap.pop().map(|Reverse(x)| x),
        };
    }
    Ok(())
}
