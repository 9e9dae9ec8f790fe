//! Reading one slice: delivering a head's items, and the time-merge of its streams.

use ctf::stream::Item;
use ctf::trace::TraceSet;

use super::head::{went_back, widen, Filter, Head};
use super::per_stream::run_stream;
use super::{Ctx, EngineError};
use crate::partition::Slice;
use crate::{NoticeKind, Runnable, StreamOrder};

/// Hands the current item of `h` to the analysis when it is inside the slice and range;
/// false when the head has nothing more to deliver ([`Head::out_of_bounds`]). (The span
/// of events passed over is reported when the head ends: [`Selective::on_skipped`](crate::Selective::on_skipped) is
/// order-free.) Copied fields are offered for events read ahead, and when `ENTERED` for
/// events entered by word loads too. The time-merge passes false: offering them there
/// cost io 19 M instructions more on a 2 M-event trace (2.7 %) and saved none.
#[inline(always)]
pub(super) fn deliver<A: Runnable, const ENTERED: bool>(a: &A, st: &mut A::State, h: &mut Head<'_>) -> bool {
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
fn deliver_and_advance<A: Runnable>(a: &A, st: &mut A::State, h: &mut Head<'_>) -> Result<bool, EngineError> {
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
pub(super) fn deliver_ahead<A: Runnable>(a: &A, st: &mut A::State, h: &mut Head<'_>, until: Lead) -> bool {
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
fn deliver_ahead_uncopied<A: Runnable>(a: &A, st: &mut A::State, h: &mut Head<'_>, until: Lead) -> bool {
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
pub fn process_slice<A: Runnable>(a: &A, set: &TraceSet, s: &Slice, range: (i64, i64)) -> Result<A::State, EngineError> {
    process_slice_from(a, set, s, range, a.new_state())
}

/// [`process_slice`] continuing state `st` (a fresh chunk state, or the state of
/// everything before the slice: see [`ChunkPolicy::folds_in_place`](crate::ChunkPolicy::folds_in_place)).
pub fn process_slice_from<A: Runnable>(a: &A, set: &TraceSet, s: &Slice, range: (i64, i64), st: A::State) -> Result<A::State, EngineError> {
    process_slice_taking_over(a, set, s, range, st, || None)
}

/// [`process_slice_from`] of a fresh chunk state `st` whose analysis folds in place
/// ([`ChunkPolicy::folds_in_place`](crate::ChunkPolicy::folds_in_place)), asking `take_over` between runs of the time-merge
/// for the state of everything before the slice: once it gives it, the items read so
/// far are merged into it (`merge(before, st)`) and the rest of the slice is read into
/// the result, as the slice would be read into it from its start. (`|| None`: plain
/// [`process_slice_from`].)
pub fn process_slice_taking_over<A: Runnable>(
    a: &A,
    set: &TraceSet,
    s: &Slice,
    range: (i64, i64),
    st: A::State,
    take_over: impl FnMut() -> Option<A::State>,
) -> Result<A::State, EngineError> {
    let mut faults = Vec::new();
    let st = read_slice(a, set, s, range, st, take_over, &mut faults);
    match faults.into_iter().next() {
        Some(e) => Err(e),
        None => Ok(st),
    }
}

/// [`process_slice_taking_over`] that reads on past a stream's error: the stream's
/// part of the slice ends there (its items before it delivered), the error goes to
/// `faults`, and the other streams are read to their ends.
pub(super) fn read_slice<A: Runnable>(
    a: &A,
    set: &TraceSet,
    s: &Slice,
    range: (i64, i64),
    st: A::State,
    mut take_over: impl FnMut() -> Option<A::State>,
    faults: &mut Vec<EngineError>,
) -> A::State {
    let mut st = st;
    let mut awaits_take_over = true;
    a.reserve(&mut st, s.bytes(set));
    let mut heads: Vec<Head<'_>> = s.chunks.iter().map(|(si, r)| Head::new(set, *si, r.clone(), s, range)).collect();
    if a.stream_order() == StreamOrder::PerStream {
        let mut buf = Vec::new();
        for h in heads.iter_mut() {
            if let Err(e) = run_stream(a, set, s, range, h, &mut st, &mut buf) {
                faults.push(e);
            }
        }
        return st;
    }
    // Time-merge. Streams are few: find the earliest head and the runner-up by a
    // branch-free scan of their time keys (kept side by side, apart from the large
    // heads: which stream comes next is data, a branch on it mispredicts), then consume
    // the earliest stream for as long as it stays ahead of the runner-up. `live` stays
    // in stream order, so that among equal keys the first position is the lower stream.
    // A stream whose reading fails leaves `live` there, its error in `faults`.
    let mut live: Vec<(i64, usize)> = Vec::with_capacity(heads.len());
    for (i, h) in heads.iter_mut().enumerate() {
        match h.advance(a) {
            Ok(true) => live.push((h.key, i)),
            Ok(false) => h.flush_skipped(a, &mut st),
            Err(e) => {
                faults.push(e);
                h.flush_skipped(a, &mut st);
            }
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
                h.read_on(a)
            } else {
                deliver_and_advance(a, &mut st, h)
            };
            let more = more.unwrap_or_else(|e| {
                faults.push(e);
                false
            });
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
    st
}

/// How long the earliest head of the time-merge keeps the lead: while its keys are at
/// most `last`, the runner-up's key, less one unless the earliest head wins ties (it is
/// the lower stream). (When it does not, the runner-up's key is above its own: `last`
/// does not overflow.)
#[derive(Debug, Clone, Copy)]
pub(super) struct Lead {
    last: i64,
}

impl Lead {
    /// No runner-up: every item keeps the lead (a lone head, or one stream read in turn).
    pub(super) const ALONE: Lead = Lead { last: i64::MAX };

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
}
