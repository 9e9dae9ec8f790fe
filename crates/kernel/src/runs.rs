//! Who ran on a stream (a CPU) and when, as a chunk sees it: the kernel runs one task
//! at a time per CPU and changes it only through `sched_switch`, so a task's time on a
//! CPU is the sum of its *executions*, from the switch that switches it in to the next
//! switch on that CPU. An execution is local to one stream: a chunk can credit every
//! execution between two of its switches at once, and keeps only its first switch
//! (whose previous task started before the chunk) and its last one (whose next task
//! runs past the chunk), which merging joins with the neighbours' ([`Runs::append`]).
//!
//! A statistic receives resolved facts, "thread `slot` ran on this CPU from `start` to
//! `end`", through a callback (`credit(slot, start, end)`), and only accumulates. The idle task (tid 0) is never
//! credited; threads are named by the slot the caller gives them (as
//! [`crate::model::Info::slot`]).

/// One stream's executions in a chunk (see the module documentation).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Runs {
    /// The stream's CPU id, once read (a stream's packets all name one CPU in LTTng
    /// kernel traces).
    pub cpu: Option<u32>,
    /// First switch of the chunk: `(ts, prev_tid)`.
    first: Option<(i64, i32)>,
    /// Last switch of the chunk: `(ts, slot of next_tid)` (slot `None`: tid 0).
    last: Option<(i64, Option<u32>)>,
}

/// Calls `credit(slot, start, end)` when `slot` is a thread (not idle) and the
/// execution is not empty.
#[inline(always)]
fn give(slot: Option<u32>, start: i64, end: i64, mut credit: impl FnMut(u32, i64, i64)) {
    if let (Some(i), true) = (slot, end > start) {
        credit(i, start, end);
    }
}

impl Runs {
    /// A `sched_switch` at `t` from `prev` to the thread of slot `next` (`None`: tid 0):
    /// ends the execution the last switch began (credited), or is the chunk's first.
    #[inline(always)]
    pub fn switch(&mut self, t: i64, prev: i32, next: Option<usize>, credit: impl FnMut(u32, i64, i64)) {
        match self.last {
            Some((t0, slot)) => give(slot, t0, t, credit),
            None => {
                if self.first.is_none() {
                    self.first = Some((t, prev));
                }
            }
        }
        self.last = Some((t, next.map(|n| n as u32)));
    }

    /// Joins the same stream's executions of the chunk just after this one, whose
    /// slots `remap` renumbers as this chunk's: the execution running at this chunk's
    /// end ends at the later chunk's first switch.
    pub fn append(&mut self, later: Runs, remap: impl Fn(u32) -> u32, credit: impl FnMut(u32, i64, i64)) {
        self.cpu = self.cpu.or(later.cpu);
        if let (Some((t0, slot)), Some((t, _))) = (self.last, later.first) {
            give(slot, t0, t, credit);
        }
        self.first = self.first.or(later.first);
        self.last = later.last.map(|(t, slot)| (t, slot.map(&remap))).or(self.last);
    }

    /// The trace's ends, `begin` and `end` (its first and last events): the task still
    /// running at the end runs until `end`; with `head`, the task running before the
    /// stream's first switch (its slot given by `slot_of(prev_tid)`) ran from `begin`.
    pub fn finish(&self, begin: i64, end: i64, head: bool, slot_of: impl FnOnce(i32) -> u32, mut credit: impl FnMut(u32, i64, i64)) {
        if let (Some((t, prev)), true) = (self.first, head) {
            give((prev != 0).then(|| slot_of(prev)), begin, t, &mut credit);
        }
        if let Some((t0, slot)) = self.last {
            give(slot, t0, end, credit);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn executions_are_credited_within_and_across_chunks() {
        let mut got = Vec::new();
        // Chunk 1: thread 5 (slot 0) runs from 10 to 30, then idle.
        let mut a = Runs::default();
        a.switch(10, 4, Some(0), |i, a, b| got.push((i, a, b)));
        a.switch(30, 5, None, |i, a, b| got.push((i, a, b)));
        a.switch(40, 0, Some(1), |i, a, b| got.push((i, a, b)));
        assert_eq!(got, vec![(0, 10, 30)]);
        // Chunk 2: its slot 0 is chunk 1's slot 1; its first switch at 70 ends the
        // execution chunk 1 began at 40.
        let mut b = Runs::default();
        b.switch(70, 6, Some(0), |i, a, b| got.push((i, a, b)));
        a.append(b, |i| i + 1, |i, a, b| got.push((i, a, b)));
        assert_eq!(got, vec![(0, 10, 30), (1, 40, 70)]);
        // The ends: the head (tid 4, slot 9) from 0 to 10, the tail from 70 to 100.
        a.finish(0, 100, true, |_| 9, |i, a, b| got.push((i, a, b)));
        assert_eq!(got, vec![(0, 10, 30), (1, 40, 70), (9, 0, 10), (1, 70, 100)]);
    }
}
