//! The current task per stream (per CPU: one stream per CPU and channel in LTTng kernel
//! traces), as a chunk knows it: the `prev_tid` of the stream's first `sched_switch`
//! in the chunk (the task that ran when the chunk began) and the `next_tid` of its last
//! (the task running at the chunk's end). The kernel runs one task at a time per CPU,
//! switching only through `sched_switch`: so a syscall event's issuer is the last
//! switch's `next_tid`, and before the chunk's first switch it is the task running
//! at the chunk's start, which the chunk before it knows ([`Running::resolve`]).

use crate::log::Who;

/// Per stream: `(prev_tid of the first switch, next_tid of the last switch)` of a chunk
/// (see the module documentation). Merging is associative ([`Running::append`]).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Running {
    cur: Vec<(Option<i32>, Option<i32>)>,
}

impl Running {
    /// Nothing known of `streams` streams.
    pub fn new(streams: usize) -> Running {
        Running { cur: vec![(None, None); streams] }
    }

    /// Stream `stream` switched from `prev` to `next`.
    #[inline(always)]
    pub fn switched(&mut self, stream: usize, prev: i32, next: i32) {
        if let Some(cur) = self.cur.get_mut(stream) {
            if cur.1.is_none() && cur.0.is_none() {
                cur.0 = Some(prev);
            }
            cur.1 = Some(next);
        }
    }

    /// The task running on `stream` is now `next` (a replay of switches that needs not
    /// the first switch's `prev_tid`: [`Running::first_prev`] stays unknown).
    #[inline(always)]
    pub fn set(&mut self, stream: usize, next: i32) {
        if let Some(cur) = self.cur.get_mut(stream) {
            cur.1 = Some(next);
        }
    }

    /// Whether some stream runs `tid` (by its last switch).
    #[inline]
    pub fn runs_anywhere(&self, tid: i32) -> bool {
        self.cur.iter().any(|c| c.1 == Some(tid))
    }

    /// The task running on `stream` (its last switch's `next_tid`), when known.
    #[inline(always)]
    pub fn running(&self, stream: usize) -> Option<i32> {
        self.cur.get(stream).and_then(|c| c.1)
    }

    /// The task that ran on `stream` before its first switch (that switch's
    /// `prev_tid`), when the stream switched.
    #[inline(always)]
    pub fn first_prev(&self, stream: usize) -> Option<i32> {
        self.cur.get(stream).and_then(|c| c.0)
    }

    /// Whether `stream` has not switched yet.
    #[inline(always)]
    pub fn unswitched(&self, stream: usize) -> bool {
        self.cur.get(stream).is_some_and(|c| c.0.is_none() && c.1.is_none())
    }

    /// Makes room for `streams` streams; the new ones know nothing yet.
    #[inline]
    pub fn grow(&mut self, streams: usize) {
        if self.cur.len() < streams {
            self.cur.resize(streams, (None, None));
        }
    }

    /// Joins the chunk just after this one.
    pub fn append(&mut self, later: &Running) {
        self.grow(later.cur.len());
        for (x, y) in self.cur.iter_mut().zip(&later.cur) {
            x.0 = x.0.or(y.0);
            x.1 = y.1.or(x.1);
        }
    }

    /// The issuer `who` of a record of a chunk whose predecessor's tasks are
    /// `earlier`: the task running on the stream at the predecessor's end. When the
    /// predecessor never switched there and `head_from_later` (the predecessor starts
    /// at the trace's beginning, and the task running before a CPU's first switch is
    /// that switch's `prev_tid`), the chunk's own first `prev_tid` (`later`); else
    /// still unknown.
    #[inline]
    pub fn resolve(who: Who, earlier: &Running, later: &Running, head_from_later: bool) -> Who {
        match who {
            Who::Head(s) => {
                let s = s as usize;
                match earlier.running(s) {
                    Some(t) => Who::Tid(t),
                    None if head_from_later => later.first_prev(s).map_or(who, Who::Tid),
                    None => who,
                }
            }
            w => w,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_chunk_knows_its_first_prev_and_last_next_and_merges_in_order() {
        let mut a = Running::new(2);
        assert!(a.unswitched(0));
        a.switched(0, 5, 6);
        a.switched(0, 6, 7);
        assert_eq!((a.first_prev(0), a.running(0)), (Some(5), Some(7)));
        let mut b = Running::new(2);
        b.switched(1, 8, 9);
        // Records of `b` before its first switch on stream 0 ran on `a`'s last task.
        assert_eq!(Running::resolve(Who::Head(0), &a, &b, false), Who::Tid(7));
        // Stream 1 never switched in `a`: known only from `b`'s first switch, when `a`
        // starts the trace.
        assert_eq!(Running::resolve(Who::Head(1), &a, &b, false), Who::Head(1));
        assert_eq!(Running::resolve(Who::Head(1), &a, &b, true), Who::Tid(8));
        assert_eq!(Running::resolve(Who::Tid(3), &a, &b, true), Who::Tid(3));
        a.append(&b);
        assert_eq!((a.first_prev(0), a.running(0), a.first_prev(1), a.running(1)), (Some(5), Some(7), Some(8), Some(9)));
        // A replay that only follows who runs: `set` keeps the first `prev_tid` unknown.
        let mut r = Running::new(2);
        r.set(1, 4);
        assert_eq!((r.first_prev(1), r.running(1), r.runs_anywhere(4), r.runs_anywhere(7)), (None, Some(4), true, false));
    }
}
