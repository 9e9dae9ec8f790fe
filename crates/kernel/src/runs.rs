//! Who ran on a stream (a CPU) and when, as a chunk sees it: the kernel runs one task
//! at a time per CPU and changes it only through `sched_switch`, so a task's time on a
//! CPU is the sum of its *executions*, from the switch that switches it in to the next
//! switch on that CPU. An execution is local to one stream: a chunk can credit every
//! execution between two of its switches at once, and keeps only its first switch
//! (whose previous task started before the chunk) and its last one (whose next task
//! runs past the chunk), which merging joins with the neighbours' ([`Runs::append`]).
//!
//! A statistic receives resolved facts, "thread `slot` ran on this CPU from `start` to
//! `end`, and left it in state `state`", through a callback (`credit(slot, start, end,
//! state)`: the `prev_state` of the switch that ended the execution, `None` for one
//! that runs to the trace's end or a switch without the field), and only accumulates. The idle task (tid 0) is never
//! credited; threads are named by the slot the caller gives them (as
//! [`crate::model::Info::slot`]).
//!
//! A consumer that reads a whole trace in time order (the cube's applier) keeps the
//! executions in progress instead ([`Clock`]): it credits them up to any time (the
//! cube: at each finest-frame boundary, and before a thread is renamed) while they go
//! on.

use crate::log::Who;
use crate::running::Running;

/// One stream's executions in a chunk (see the module documentation).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Runs {
    /// The stream's CPU id, once read (a stream's packets all name one CPU in LTTng
    /// kernel traces).
    pub cpu: Option<u32>,
    /// First switch of the chunk: `(ts, prev_tid, prev_state)`.
    first: Option<(i64, i32, Option<i64>)>,
    /// Last switch of the chunk: `(ts, slot of next_tid)` (slot `None`: tid 0).
    last: Option<(i64, Option<u32>)>,
}

/// What an ended execution is told to: `credit(slot, start, end, state)`.
pub trait Credit: FnMut(u32, i64, i64, Option<i64>) {}
impl<F: FnMut(u32, i64, i64, Option<i64>)> Credit for F {}

/// Calls `credit(slot, start, end, state)` when `slot` is a thread (not idle) and the
/// execution is not empty.
#[inline(always)]
fn give(slot: Option<u32>, start: i64, end: i64, state: Option<i64>, mut credit: impl Credit) {
    if let (Some(i), true) = (slot, end > start) {
        credit(i, start, end, state);
    }
}

impl Runs {
    /// A `sched_switch` at `t` from `prev`, left in state `prev_state`, to the thread
    /// of slot `next` (`None`: tid 0): ends the execution the last switch began
    /// (credited), or is the chunk's first.
    #[inline(always)]
    pub fn switch(&mut self, t: i64, prev: i32, prev_state: Option<i64>, next: Option<usize>, credit: impl Credit) {
        match self.last {
            Some((t0, slot)) => give(slot, t0, t, prev_state, credit),
            None => {
                if self.first.is_none() {
                    self.first = Some((t, prev, prev_state));
                }
            }
        }
        self.last = Some((t, next.map(|n| n as u32)));
    }

    /// Joins the same stream's executions of the chunk just after this one, whose
    /// slots `remap` renumbers as this chunk's: the execution running at this chunk's
    /// end ends at the later chunk's first switch.
    pub fn append(&mut self, later: Runs, remap: impl Fn(u32) -> u32, credit: impl Credit) {
        self.cpu = self.cpu.or(later.cpu);
        if let (Some((t0, slot)), Some((t, _, state))) = (self.last, later.first) {
            give(slot, t0, t, state, credit);
        }
        self.first = self.first.or(later.first);
        self.last = later.last.map(|(t, slot)| (t, slot.map(&remap))).or(self.last);
    }

    /// The trace's ends, `begin` and `end` (its first and last events): the task still
    /// running at the end runs until `end`; with `head`, the task running before the
    /// stream's first switch (its slot given by `slot_of(prev_tid)`) ran from `begin`.
    pub fn finish(&self, begin: i64, end: i64, head: bool, slot_of: impl FnOnce(i32) -> u32, mut credit: impl Credit) {
        if let (Some((t, prev, state)), true) = (self.first, head) {
            give((prev != 0).then(|| slot_of(prev)), begin, t, state, &mut credit);
        }
        if let Some((t0, slot)) = self.last {
            give(slot, t0, end, None, credit);
        }
    }
}

/// The executions in progress on each stream of a state read in time order: who runs
/// on each stream and since when. Before a stream's first switch its task is that
/// switch's `prev_tid` when the reader knows it ([`Clock::new`]: a prescan), which ran
/// from the trace's first event (the kernel ran it since before tracing began).
#[derive(Debug, Clone, Default)]
pub struct Clock {
    /// The task running on each stream (its last switch's `next_tid`).
    running: Running,
    /// The first switch's `prev_tid` of each stream, from the prescan.
    first: Running,
    /// Per stream: since when its running task is not credited.
    since: Vec<i64>,
}

impl Clock {
    /// Nothing run yet on `first_prev.len()` streams, whose first switches switch out
    /// `first_prev` (`None`: unknown, or none).
    pub fn new(first_prev: &[Option<i32>]) -> Clock {
        let mut first = Running::new(first_prev.len());
        for (s, p) in first_prev.iter().enumerate() {
            if let Some(p) = *p {
                first.switched(s, p, p);
            }
        }
        Clock { running: Running::new(first_prev.len()), first, since: vec![0; first_prev.len()] }
    }

    /// Streams known.
    pub fn streams(&self) -> usize {
        self.since.len()
    }

    /// Keeps at least `streams` streams (new ones appended, with nothing known).
    pub fn grow(&mut self, streams: usize) {
        if self.since.len() < streams {
            self.since.resize(streams, 0);
            self.running.grow(streams);
            self.first.grow(streams);
        }
    }

    /// The task running on each stream, by its last switch.
    #[inline]
    pub fn running(&self) -> &Running {
        &self.running
    }

    /// The task running on stream `s` (before its first switch: that switch's
    /// `prev_tid`, when known).
    #[inline(always)]
    pub fn who(&self, s: usize) -> Option<i32> {
        match Running::resolve(Who::Head(s as u32), &self.running, &self.first, true) {
            Who::Tid(t) => Some(t),
            _ => None,
        }
    }

    /// A `sched_switch` on stream `s` at `t` from `prev` to `next`: returns the
    /// execution it ends, `(tid, start)`: the running task's since its switch in (or
    /// its last credit), or before the stream's first switch, `prev`'s from `begin`.
    #[inline]
    pub fn switch(&mut self, s: usize, t: i64, prev: i32, next: i32, begin: i64) -> (i32, i64) {
        self.grow(s + 1);
        let ended = match self.running.running(s) {
            Some(tid) => (tid, self.since[s]),
            None => (prev, begin),
        };
        self.running.switched(s, prev, next);
        self.since[s] = t;
        ended
    }

    /// Credits the task running on each stream (or only on those that run `only`) up
    /// to `t`, `credit(stream, tid, since)`, and restarts their executions at `t`
    /// (streams whose execution began at `t` or later are left alone).
    pub fn credit_until(&mut self, t: i64, only: Option<i32>, mut credit: impl FnMut(usize, i32, i64)) {
        for (s, since) in self.since.iter_mut().enumerate() {
            if let Some(tid) = self.running.running(s) {
                if t > *since && only.is_none_or(|o| o == tid) {
                    credit(s, tid, *since);
                    *since = t;
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn executions_are_credited_within_and_across_chunks() {
        let mut got = Vec::new();
        // Chunk 1: thread 5 (slot 0) runs from 10 to 30, when it goes to sleep (state
        // 1), then idle.
        let mut a = Runs::default();
        a.switch(10, 4, Some(2), Some(0), |i, a, b, s| got.push((i, a, b, s)));
        a.switch(30, 5, Some(1), None, |i, a, b, s| got.push((i, a, b, s)));
        a.switch(40, 0, Some(0), Some(1), |i, a, b, s| got.push((i, a, b, s)));
        assert_eq!(got, vec![(0, 10, 30, Some(1))]);
        // Chunk 2: its slot 0 is chunk 1's slot 1; its first switch at 70, preempting
        // 6 (state 256), ends the execution chunk 1 began at 40.
        let mut b = Runs::default();
        b.switch(70, 6, Some(256), Some(0), |i, a, b, s| got.push((i, a, b, s)));
        a.append(b, |i| i + 1, |i, a, b, s| got.push((i, a, b, s)));
        assert_eq!(got, vec![(0, 10, 30, Some(1)), (1, 40, 70, Some(256))]);
        // The ends: the head (tid 4, slot 9) from 0 to 10, left waiting on I/O (state 2)
        // by the first switch; the tail from 70 to 100, still running.
        a.finish(0, 100, true, |_| 9, |i, a, b, s| got.push((i, a, b, s)));
        assert_eq!(got, vec![(0, 10, 30, Some(1)), (1, 40, 70, Some(256)), (9, 0, 10, Some(2)), (1, 70, 100, None)]);
    }

    #[test]
    fn a_clock_credits_executions_up_to_any_time() {
        // Stream 0's first switch switches out 4 (prescanned); stream 1's is unknown.
        let mut c = Clock::new(&[Some(4), None]);
        assert_eq!((c.who(0), c.who(1)), (Some(4), None));
        // Before the first switch, 4 ran from the trace's beginning.
        assert_eq!(c.switch(0, 10, 4, 5, 0), (4, 0));
        assert_eq!((c.who(0), c.running().running(0)), (Some(5), Some(5)));
        let mut got = Vec::new();
        c.credit_until(15, None, |s, tid, since| got.push((s, tid, since)));
        // A rename of 7 credits nothing (7 runs nowhere); credited again only after.
        c.credit_until(15, Some(7), |s, tid, since| got.push((s, tid, since)));
        c.credit_until(15, None, |s, tid, since| got.push((s, tid, since)));
        assert_eq!(got, vec![(0, 5, 10)]);
        // The switch ends 5's execution where the credit left it.
        assert_eq!(c.switch(0, 30, 5, 0, 0), (5, 15));
        c.grow(3);
        assert_eq!((c.streams(), c.who(2)), (3, None));
    }
}
