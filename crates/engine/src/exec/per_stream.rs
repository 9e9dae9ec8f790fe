//! Reading one stream of a slice in turn, for a [`StreamOrder::PerStream`](crate::StreamOrder) analysis,
//! whole packets counted where the analysis accepts counts.

use ctf::stream::{CountError, Item, PacketCount, StreamCursor};
use ctf::trace::{PacketRef, TraceSet};

use super::head::{cycle_window, Head};
use super::slice::{deliver, deliver_ahead, Lead};
use super::{Ctx, EngineError};
use crate::partition::Slice;
use crate::Runnable;

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

/// Reads one stream of a slice for a [`StreamOrder::PerStream`](crate::StreamOrder) analysis: packets that
/// imply no notice are counted when the analysis accepts it ([`Tally::packet_counts`](crate::Tally::packet_counts)),
/// only their events inside the slice and range (by clock value: see
/// [`ClockConv::cycle_window`](ctf::clock::ClockConv::cycle_window)), two in one loop where two such packets follow each
/// other and lie wholly inside ([`StreamCursor::count_pair`]); the others are delivered
/// event by event. The packets read are the head's ([`Head::packets`]).
pub(super) fn run_stream<'t, A: Runnable>(
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
        if yes && packet_countable(pk, j) {
            window
        } else {
            None
        }
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
    // Hands what counting read of the packet `cur` (the head's cursor where `None`) has
    // open to the analysis: its count, whole or up to the error it met (the events
    // before the damage, which `buf` holds); then that error.
    let hand_over = |a: &A,
                     st: &mut A::State,
                     h: &mut Head<'_>,
                     cur: Option<&StreamCursor<'_>>,
                     read: Result<Option<PacketCount>, CountError>|
     -> Result<(), EngineError> {
        let (pc, error) = match read {
            Ok(pc) => (pc, None),
            Err(CountError { before, error }) => (before.map(|b| *b), Some(error)),
        };
        if let Some(pc) = pc {
            if let Some(ns) = pc.last_cycles.and_then(|c| h.cur.cycles_to_ns(c)) {
                h.key = ns;
            }
            h.order = h.order.max(h.key);
            let ctx = Ctx { stream: h.stream, order: h.order };
            a.on_packet(st, cur.unwrap_or(&h.cur), &pc, &ctx);
        }
        error.map_or(Ok(()), |source| Err(EngineError::Decode { stream: h.stream, source }))
    };
    // Counts the (rest of the) packet `j`, which the cursor opens or has open, inside
    // `window`.
    let count = |a: &A,
                 st: &mut A::State,
                 h: &mut Head<'_>,
                 j: usize,
                 window: (u64, u64),
                 buf: &mut Vec<u64>,
                 buf_trace: &mut Option<u32>|
     -> Result<(), EngineError> {
        count_into(a, st, j, buf, buf_trace);
        let read = h.cur.count_packet_in(buf, window);
        hand_over(a, st, h, None, read)
    };
    // Counts packets `j` and `j + 1` in one loop ([`StreamCursor::count_pair`]) when
    // both are counted whole in `window`, the second read by `twin`; false where that
    // does not apply (nothing read).
    let count_pair = |a: &A,
                      st: &mut A::State,
                      h: &mut Head<'t>,
                      twin: &mut StreamCursor<'t>,
                      j: usize,
                      window: (u64, u64),
                      buf: &mut Vec<u64>,
                      buf_trace: &mut Option<u32>|
     -> Result<bool, EngineError> {
        count_into(a, st, j, buf, buf_trace);
        let (first, second) = match h.cur.count_pair(twin, buf, window) {
            Ok(None) => return Ok(false),
            Ok(Some((first, second))) => (Ok(Some(first)), Some(second)),
            Err(e) => (Err(e), None),
        };
        hand_over(a, st, h, None, first)?;
        if let Some(second) = second {
            hand_over(a, st, h, Some(twin), second.map(Some))?;
        }
        Ok(true)
    };
    // The cursor that reads the second packet of a pair, made at the first pair.
    let mut twin: Option<StreamCursor<'t>> = None;
    let ident = |p: Option<&PacketRef>| p.map(|p| (p.trace, p.file, p.info.offset));
    // Index of the next packet the cursor will open; identity of the open packet.
    let mut next = r.start;
    let mut open = None;
    let mut between = true;
    // (What was counted and passed over before an error is handed over too: the
    // stream's items up to its damage.)
    let read = (|| -> Result<(), EngineError> {
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
        Ok(())
    })();
    h.flush_skipped(a, st);
    flush(a, st, buf, buf_trace);
    read
}
