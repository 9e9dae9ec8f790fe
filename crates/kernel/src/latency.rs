//! The serial state machines of the latency statistics: wake-up → switch waits,
//! interrupt handlers per CPU, block requests, and the names of system calls. One
//! place for each rule, used by [`replay::Latencies`] (the replayed state of the
//! latency records of a log, which `analysis`'s `sched`, `irq` and `block` keep, and
//! `cube-feed`'s applier, which feeds the cube's latency metrics in time order) and by
//! `analysis`'s `syscall` and the cube (the names of system calls).
//!
//! The rules are lttng-analyses 0.6.1's, which follow the kernel's:
//! * **Wake-ups** ([`WakeupWaits`]): `sched_waking`/`sched_wakeup`/`sched_wakeup_new`
//!   of a task that some CPU runs is ignored (it is not waiting); otherwise the first
//!   wake-up since the task last ran is kept, with its waker (the task running on the
//!   waking CPU); the `sched_switch` that runs the task ends the wait (a switch to it
//!   always forgets a pending wake-up).
//! * **Hard IRQs** ([`IrqMachine`], one per CPU): a CPU runs one hard handler at a time
//!   (`irq_handler_entry` replaces one left without exit); `irq_handler_exit` of the
//!   same IRQ completes it, any exit clears it.
//! * **Softirqs**: queued per CPU and vector. `softirq_raise` queues one unless the
//!   first queued one has not started (the kernel sets a pending bit: raising it twice
//!   before it runs runs it once); `softirq_entry` starts the first queued one (or an
//!   unraised one); `softirq_exit` completes and removes it, its raise → entry latency
//!   known when it was raised.
//! * **Block requests** ([`BlockRequests`]): keyed by device and sector; a request of 0
//!   sectors is ignored; an issue replaces a pending request of the same key; a
//!   completion of the same key and length completes it (another length leaves it
//!   pending); an insert before the issue gives the time queued.
//!
//! Durations are `end − begin`, clamped at 0 (out-of-order timestamps of different
//! CPUs never give negative latencies).

use std::collections::VecDeque;

use crate::model::FxMap;
use crate::running::Running;

pub mod replay;

/// `end − begin` in ns, 0 when `end` is earlier.
#[inline]
pub fn elapsed(begin: i64, end: i64) -> u64 {
    end.saturating_sub(begin).max(0) as u64
}

/// A wait that ended: the task was woken at `since` by `waker` and ran `latency` ns
/// later.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Wait {
    /// Time of the wake-up.
    pub since: i64,
    /// The task running on the waking CPU (not the idle task), when known.
    pub waker: Option<i32>,
    /// Wake-up → switch, ns.
    pub latency: u64,
}

/// The pending wake-ups (see the module documentation).
#[derive(Debug, Clone, Default)]
pub struct WakeupWaits {
    pending: FxMap<i32, (i64, Option<i32>)>,
}

impl WakeupWaits {
    /// A wake-up of `tid` at `ts` on stream `stream`, where `running` holds every
    /// stream's current task.
    pub fn wakeup(&mut self, ts: i64, tid: i32, stream: usize, running: &Running) {
        if (tid != 0 && running.runs_anywhere(tid)) || self.pending.contains_key(&tid) {
            return;
        }
        let waker = running.running(stream).filter(|&t| t != 0);
        self.pending.insert(tid, (ts, waker));
    }

    /// A `sched_switch` at `ts` runs `next`: the wait it ends, if `next` was woken.
    pub fn switch_in(&mut self, ts: i64, next: i32) -> Option<Wait> {
        let (since, waker) = self.pending.remove(&next)?;
        Some(Wait { since, waker, latency: elapsed(since, ts) })
    }
}

/// A handler run that completed: IRQ number or softirq vector `id`, entered at `begin`,
/// `duration` ns long; a softirq's raise time when it was raised.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Handled {
    /// IRQ number (hard) or vector (soft).
    pub id: u32,
    /// Entry time.
    pub begin: i64,
    /// Entry → exit, ns.
    pub duration: u64,
    /// Softirqs: the raise that queued it, when seen.
    pub raised: Option<i64>,
}

/// A CPU's queued softirqs of one vector: `(raise ts, entry ts)`.
type SoftQueue = VecDeque<(Option<i64>, Option<i64>)>;

/// The interrupt handlers of one CPU (see the module documentation).
#[derive(Debug, Clone, Default)]
pub struct IrqMachine {
    /// Current hard IRQ `(irq, entry ts)`.
    hard: Option<(u32, i64)>,
    /// Per vector: queued softirqs.
    soft: FxMap<u32, SoftQueue>,
}

impl IrqMachine {
    /// `irq_handler_entry(irq)` at `ts`.
    pub fn hard_entry(&mut self, ts: i64, irq: u32) {
        self.hard = Some((irq, ts));
    }

    /// `irq_handler_exit(irq)` at `ts`: the handler it completes.
    pub fn hard_exit(&mut self, ts: i64, irq: u32) -> Option<Handled> {
        let (id, begin) = self.hard.take().filter(|(i, _)| *i == irq)?;
        Some(Handled { id, begin, duration: elapsed(begin, ts), raised: None })
    }

    /// `softirq_raise(vec)` at `ts`.
    pub fn raise(&mut self, ts: i64, vec: u32) {
        let q = self.soft.entry(vec).or_default();
        if q.front().is_some_and(|f| f.1.is_none()) {
            return;
        }
        q.push_back((Some(ts), None));
    }

    /// `softirq_entry(vec)` at `ts`.
    pub fn soft_entry(&mut self, ts: i64, vec: u32) {
        let q = self.soft.entry(vec).or_default();
        match q.front_mut() {
            Some(f) => f.1 = Some(ts),
            None => q.push_back((None, Some(ts))),
        }
    }

    /// `softirq_exit(vec)` at `ts`: the run it completes.
    pub fn soft_exit(&mut self, ts: i64, vec: u32) -> Option<Handled> {
        let (raised, Some(begin)) = self.soft.get_mut(&vec)?.pop_front()? else { return None };
        Some(Handled { id: vec, begin, duration: elapsed(begin, ts), raised })
    }
}

/// An issued block request and what its user keeps with it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Issued<T> {
    /// Issue time.
    pub ts: i64,
    /// Length in 512-byte sectors.
    pub nr: u64,
    /// The user's data (issuing thread, direction…).
    pub data: T,
}

/// The pending block requests (see the module documentation).
#[derive(Debug, Clone)]
pub struct BlockRequests<T> {
    inserted: FxMap<(u64, u64), i64>,
    pending: FxMap<(u64, u64), Issued<T>>,
}

impl<T> Default for BlockRequests<T> {
    fn default() -> Self {
        BlockRequests { inserted: FxMap::default(), pending: FxMap::default() }
    }
}

impl<T: Copy> BlockRequests<T> {
    /// `block_rq_insert` of `nr` sectors at `(dev, sector)` at `ts`.
    pub fn insert(&mut self, ts: i64, dev: u64, sector: u64, nr: u64) {
        if nr != 0 {
            self.inserted.insert((dev, sector), ts);
        }
    }

    /// `block_rq_issue` at `ts`: `Some(time queued)` when an insert of the key came
    /// first, `Some(None)` otherwise; `None` when ignored (0 sectors).
    pub fn issue(&mut self, ts: i64, dev: u64, sector: u64, nr: u64, data: T) -> Option<Option<u64>> {
        if nr == 0 {
            return None;
        }
        let key = (dev, sector);
        let queued = self.inserted.remove(&key).map(|t| elapsed(t, ts));
        self.pending.insert(key, Issued { ts, nr, data });
        Some(queued)
    }

    /// `block_rq_complete` at `ts`: the request it completes and its latency (issue →
    /// completion, ns).
    pub fn complete(&mut self, ts: i64, dev: u64, sector: u64, nr: u64) -> Option<(Issued<T>, u64)> {
        if nr == 0 {
            return None;
        }
        let key = (dev, sector);
        let p = self.pending.get(&key).copied().filter(|p| p.nr == nr)?;
        self.pending.remove(&key);
        Some((p, elapsed(p.ts, ts)))
    }
}

/// A system call's name: an index into [`Layout::names`](crate::layout::Layout::names) (its entry event's), or
/// [`RAW_CALL`]` | nr` for a raw `sys_enter`.
pub type CallId = u32;

/// The flag of a [`CallId`] that holds a raw syscall number.
pub const RAW_CALL: CallId = 0x8000_0000;

/// The [`CallId`] of a raw `sys_enter` of syscall number `nr`.
#[inline]
pub fn raw_call(nr: u64) -> CallId {
    RAW_CALL | nr.min(u64::from(!RAW_CALL)) as u32
}

/// The name of call `c` (`openat` for `syscall_entry_openat` or `sys_openat`,
/// `syscall_N` for a raw number);
/// `names` are [`Layout::names`](crate::layout::Layout::names).
pub fn call_name(names: &[Box<str>], c: CallId) -> String {
    if c & RAW_CALL != 0 {
        return format!("syscall_{}", c & !RAW_CALL);
    }
    let n: &str = names.get(c as usize).map_or("?", |n| n);
    n.strip_prefix("syscall_entry_").or_else(|| n.strip_prefix("sys_")).unwrap_or(n).to_string()
}

/// The [`CallId`] that call `c` of event names `old` has among event names `new` (a
/// live session's new metadata renumbers them; both sorted, as
/// [`Layout::names`](crate::layout::Layout::names) are); a raw number, or a name `new`
/// lacks, keeps its id.
pub fn renumbered(old: &[Box<str>], new: &[Box<str>], c: CallId) -> CallId {
    if c & RAW_CALL != 0 {
        return c;
    }
    old.get(c as usize).and_then(|n| new.binary_search(n).ok()).map_or(c, |i| i as CallId)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_call_keeps_its_name_when_new_metadata_renumbers_the_events() {
        let names = |v: &[&str]| v.iter().map(|&n| Box::from(n)).collect::<Vec<Box<str>>>();
        let old = names(&["sched_switch", "syscall_entry_read"]);
        let new = names(&["sched_switch", "syscall_entry_close", "syscall_entry_read"]);
        assert_eq!(renumbered(&old, &new, 1), 2);
        assert_eq!(call_name(&new, renumbered(&old, &new, 1)), "read");
        assert_eq!(renumbered(&old, &new, raw_call(3)), raw_call(3));
        // An id the old names lack keeps its value.
        assert_eq!(renumbered(&old, &new, 9), 9);
    }

    #[test]
    fn wakeup_of_a_running_task_is_ignored_and_the_first_is_kept() {
        let mut r = Running::new(2);
        r.set(0, 7);
        let mut w = WakeupWaits::default();
        w.wakeup(10, 7, 1, &r);
        assert_eq!(w.switch_in(20, 7), None, "7 runs on stream 0: not waiting");
        w.wakeup(10, 8, 0, &r);
        w.wakeup(15, 8, 1, &r);
        assert_eq!(w.switch_in(30, 8), Some(Wait { since: 10, waker: Some(7), latency: 20 }));
        assert_eq!(w.switch_in(40, 8), None, "a switch forgets the wake-up");
    }

    #[test]
    fn softirq_raised_twice_before_running_runs_once() {
        let mut m = IrqMachine::default();
        m.raise(1, 3);
        m.raise(2, 3);
        m.soft_entry(5, 3);
        assert_eq!(m.soft_exit(9, 3), Some(Handled { id: 3, begin: 5, duration: 4, raised: Some(1) }));
        assert_eq!(m.soft_exit(10, 3), None);
        m.hard_entry(20, 19);
        assert_eq!(m.hard_exit(25, 18), None, "another IRQ's exit clears the handler");
        assert_eq!(m.hard_exit(26, 19), None);
    }

    #[test]
    fn block_completion_of_another_length_leaves_the_request_pending() {
        let mut b = BlockRequests::default();
        b.insert(1, 8, 100, 8);
        assert_eq!(b.issue(3, 8, 100, 8, 'r'), Some(Some(2)));
        assert_eq!(b.issue(4, 8, 200, 0, 'r'), None);
        assert_eq!(b.complete(5, 8, 100, 16), None);
        assert_eq!(b.complete(9, 8, 100, 8), Some((Issued { ts: 3, nr: 8, data: 'r' }, 6)));
        assert_eq!(elapsed(10, 4), 0);
    }
}
