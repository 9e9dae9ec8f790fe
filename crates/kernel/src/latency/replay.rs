//! The replayed state of the latency records of a log ([`Rec::Switch`],
//! [`Rec::Wakeup`], [`Rec::Irq`], [`Rec::Block`]): the task running on each stream
//! (CPU), the pending wake-ups, the interrupt handlers of each CPU and the pending
//! block requests, interpreted by the rules of [`crate::latency`]. As
//! [`crate::replay::Replay`] does for syscalls, it tells a statistic's [`Sink`] what
//! completed (a wait ended by a switch, a handler run, a block request served) and the
//! statistic only accumulates.
//!
//! Records come in time order, or at least in time order per stream for the records
//! whose state is per CPU (interrupts); a log of a chunk is replayed once the state
//! before it is known (the state of a complete prefix of the trace), so every chunking
//! gives the same facts.

use super::{BlockRequests, Handled, IrqMachine, Issued, Wait, WakeupWaits};
use crate::log::{BlockEvent, BlockRec, IrqEvent, LRec, Rec};
use crate::running::Running;

/// What a latency statistic does with the facts of a [`Latencies`] replay; each fact
/// defaults to nothing.
pub trait Sink {
    /// A switch on a CPU with id `cpu` ran `tid` with priority `prio`, ending its wait
    /// `w`.
    #[inline(always)]
    fn woken(&mut self, _tid: i32, _cpu: u32, _prio: i32, _w: Wait) {}

    /// A hard IRQ handler (`hard`) or a softirq completed its run `h`.
    #[inline(always)]
    fn handled(&mut self, _hard: bool, _h: Handled) {}

    /// Block request `issue` was issued after `queued` ns in the queue (its insert
    /// was seen).
    #[inline(always)]
    fn queued(&mut self, _issue: &BlockRec, _queued: u64) {}

    /// The request issued as `issued` (its issue event `issued.data`) was completed by
    /// `complete`, `latency` ns after its issue.
    #[inline(always)]
    fn served(&mut self, _issued: &Issued<BlockRec>, _complete: &BlockRec, _latency: u64) {}
}

/// The replayed latency state (see the module documentation).
#[derive(Debug, Clone, Default)]
pub struct Latencies {
    /// The task running on each stream, by its last switch.
    running: Running,
    waits: WakeupWaits,
    /// Per stream (CPU).
    irqs: Vec<IrqMachine>,
    blocks: BlockRequests<BlockRec>,
}

impl Latencies {
    /// Nothing known yet of `streams` streams (more are added as records name them).
    pub fn new(streams: usize) -> Latencies {
        Latencies { running: Running::new(streams), irqs: vec![IrqMachine::default(); streams], ..Latencies::default() }
    }

    /// `sched_switch` at `ts` on stream `s` (CPU id `cpu`) to `next`, which runs with
    /// priority `prio`: ends `next`'s wait.
    #[inline]
    pub fn switch(&mut self, ts: i64, s: u32, cpu: u32, next: i32, prio: i32, sink: &mut impl Sink) {
        let s = s as usize;
        self.running.grow(s + 1);
        self.running.set(s, next);
        if let Some(w) = self.waits.switch_in(ts, next) {
            sink.woken(next, cpu, prio, w);
        }
    }

    /// A wake-up of `tid` at `ts` on stream `s`.
    #[inline]
    pub fn wakeup(&mut self, ts: i64, s: u32, tid: i32) {
        self.waits.wakeup(ts, tid, s as usize, &self.running);
    }

    /// Interrupt event `what` of IRQ or vector `id` at `ts` on stream `s`.
    #[inline]
    pub fn irq(&mut self, ts: i64, s: u32, what: IrqEvent, id: u32, sink: &mut impl Sink) {
        let s = s as usize;
        if self.irqs.len() <= s {
            self.irqs.resize(s + 1, IrqMachine::default());
        }
        let m = &mut self.irqs[s];
        let done = match what {
            IrqEvent::HardEntry => return m.hard_entry(ts, id),
            IrqEvent::SoftRaise => return m.raise(ts, id),
            IrqEvent::SoftEntry => return m.soft_entry(ts, id),
            IrqEvent::HardExit => m.hard_exit(ts, id),
            IrqEvent::SoftExit => m.soft_exit(ts, id),
        };
        if let Some(h) = done {
            sink.handled(what == IrqEvent::HardExit, h);
        }
    }

    /// Block request event `b` at `ts`.
    #[inline]
    pub fn block(&mut self, ts: i64, b: &BlockRec, sink: &mut impl Sink) {
        match b.what {
            BlockEvent::Insert => self.blocks.insert(ts, b.dev, b.sector, b.nr),
            BlockEvent::Issue => {
                if let Some(Some(q)) = self.blocks.issue(ts, b.dev, b.sector, b.nr, *b) {
                    sink.queued(b, q);
                }
            }
            BlockEvent::Complete => {
                if let Some((issued, d)) = self.blocks.complete(ts, b.dev, b.sector, b.nr) {
                    sink.served(&issued, b, d);
                }
            }
        }
    }

    /// Interprets record `r` at `ts`; other records than the latency ones change
    /// nothing.
    #[inline]
    pub fn apply<P>(&mut self, ts: i64, r: &Rec<P>, sink: &mut impl Sink) {
        match *r {
            Rec::Switch { s, cpu, next, prio, .. } => self.switch(ts, s, cpu, next, prio, sink),
            Rec::Wakeup { s, tid } => self.wakeup(ts, s, tid),
            Rec::Irq { s, what, id, .. } => self.irq(ts, s, what, id, sink),
            Rec::Block(ref b) => self.block(ts, b, sink),
            _ => {}
        }
    }

    /// Interprets the records of a chunk's log, `recs` stamped with `stamps` (see
    /// [`Latencies::apply`]).
    pub fn apply_all(&mut self, recs: &[LRec], stamps: &[i64], sink: &mut impl Sink) {
        for (r, &ts) in recs.iter().zip(stamps) {
            if let LRec::R(r) = r {
                self.apply(ts, r, sink);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every fact told, in order.
    #[derive(Default)]
    struct Facts(Vec<String>);

    impl Sink for Facts {
        fn woken(&mut self, tid: i32, cpu: u32, prio: i32, w: Wait) {
            self.0.push(format!("woken {tid} cpu {cpu} prio {prio} after {} by {:?}", w.latency, w.waker));
        }
        fn handled(&mut self, hard: bool, h: Handled) {
            self.0.push(format!("handled {hard} {} for {}", h.id, h.duration));
        }
        fn queued(&mut self, issue: &BlockRec, queued: u64) {
            self.0.push(format!("queued {} for {queued}", issue.sector));
        }
        fn served(&mut self, issued: &Issued<BlockRec>, complete: &BlockRec, latency: u64) {
            self.0.push(format!("served {} of {:?} in {latency}", complete.sector, issued.data.tid));
        }
    }

    #[test]
    fn a_log_replayed_tells_each_completed_wait_handler_and_request() {
        let block = |what, tid| Rec::<String>::Block(Box::new(BlockRec { s: 0, cpu: 0, what, dev: 8, sector: 100, nr: 8, tid, write: false }));
        let recs = [
            (1, Rec::Switch { s: 0, cpu: 4, prev: 0, next: 7, prio: 20 }),
            (2, Rec::Wakeup { s: 0, tid: 9 }),
            // A wake-up of a running task is ignored.
            (3, Rec::Wakeup { s: 1, tid: 7 }),
            (4, Rec::Irq { s: 1, what: IrqEvent::HardEntry, id: 19, name: None }),
            (5, block(BlockEvent::Insert, Some(7))),
            (6, block(BlockEvent::Issue, Some(7))),
            (9, Rec::Irq { s: 1, what: IrqEvent::HardExit, id: 19, name: None }),
            (10, Rec::Switch { s: 0, cpu: 4, prev: 7, next: 9, prio: 120 }),
            (11, Rec::Switch { s: 1, cpu: 5, prev: 0, next: 7, prio: 20 }),
            (16, block(BlockEvent::Complete, None)),
            (17, Rec::Exec { who: crate::log::Who::Tid(7) }),
        ];
        let mut l = Latencies::new(1);
        let mut f = Facts::default();
        for (ts, r) in &recs {
            l.apply(*ts, r, &mut f);
        }
        assert_eq!(f.0, ["queued 100 for 1", "handled true 19 for 5", "woken 9 cpu 4 prio 120 after 8 by Some(7)", "served 100 of Some(7) in 10"]);
    }
}
