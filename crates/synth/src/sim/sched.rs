//! Scheduling: switches, run queues, wake-ups, what a CPU does next.

use rand::Rng;

use crate::error::Result;
use crate::events::KEvent;

use super::{Cpu, EventSink, Sim, State, IDLE, TASK_RUNNING};

impl<'s, S: EventSink> Sim<'s, S> {
    /// Switches `c` from its current thread to `next` at `t`; returns the event time.
    fn switch(&mut self, c: usize, t: u64, next: i32, prev_state: i64) -> Result<u64> {
        let prev = self.cpus[c].cur;
        let t = if next != IDLE { t.max(self.threads[&next].ready_at) } else { t };
        let swapper = self.swappers[c];
        let (prev_comm, prev_prio) = if prev == IDLE { (swapper, 20) } else { (self.threads[&prev].comm, self.threads[&prev].prio) };
        let (next_comm, next_prio) = if next == IDLE { (swapper, 20) } else { (self.threads[&next].comm, self.threads[&next].prio) };
        let ev = KEvent::SchedSwitch { prev_comm, prev_tid: prev, prev_prio, prev_state, next_comm, next_tid: next, next_prio };
        let ts = self.emit(c, t, ev)?;
        if prev != IDLE {
            let d = ts - self.cpus[c].run_start;
            self.credit(c, prev, d);
        }
        let cpu = &mut self.cpus[c];
        cpu.cur = next;
        cpu.run_start = ts;
        cpu.switched = true;
        if next != IDLE {
            let th = self.threads.get_mut(&next).expect("runnable thread exists");
            th.state = State::Running;
            th.last_cpu = c;
        }
        Ok(ts)
    }

    /// The next thread for `c`: its queue head, else one stolen from the longest queue.
    fn pick_next(&mut self, c: usize) -> i32 {
        if let Some(t) = self.cpus[c].rq.pop_front() {
            return t;
        }
        let victim = (0..self.cpus.len()).filter(|&o| o != c).max_by_key(|&o| (self.cpus[o].rq.len(), usize::MAX - o));
        match victim {
            Some(o) if !self.cpus[o].rq.is_empty() && self.rng.gen_bool(0.8) => self.cpus[o].rq.pop_back().unwrap_or(IDLE),
            _ => IDLE,
        }
    }

    /// After a switch at `ts`, plans the CPU's next action.
    pub(super) fn plan(&mut self, c: usize, ts: u64) {
        let cur = self.cpus[c].cur;
        if cur == IDLE {
            if !self.cpus[c].rq.is_empty() {
                let d = self.rng.gen_range(1_000..5_000);
                self.schedule_cpu(c, ts + d);
            }
            return;
        }
        let d = if self.threads[&cur].pending.is_some() { self.rng.gen_range(500..3_000) } else { self.burst(cur) };
        self.schedule_cpu(c, ts + d);
    }

    /// Makes `tid` runnable at `t` and queues it on a CPU.
    pub(super) fn make_runnable(&mut self, tid: i32, t: u64) {
        let last = {
            let th = self.threads.get_mut(&tid).expect("thread exists");
            th.state = State::Runnable;
            th.ready_at = t + 1;
            th.last_cpu
        };
        let is_idle = |c: &Cpu| c.cur == IDLE && c.rq.is_empty();
        let n_idle = self.cpus.iter().filter(|c| is_idle(c)).count();
        let target = if is_idle(&self.cpus[last]) {
            last
        } else if n_idle > 0 {
            let k = self.rng.gen_range(0..n_idle);
            self.cpus.iter().enumerate().filter(|(_, c)| is_idle(c)).nth(k).map(|(i, _)| i).unwrap_or(last)
        } else if self.rng.gen_bool(0.75) {
            last
        } else {
            self.rng.gen_range(0..self.cpus.len())
        };
        self.cpus[target].rq.push_back(tid);
        if self.cpus[target].cur == IDLE && !self.cpus[target].scheduled {
            let at = t.max(self.cpus[target].now) + self.rng.gen_range(1_000..15_000);
            self.schedule_cpu(target, at);
        }
    }

    pub(super) fn wake(&mut self, tid: i32, t: u64) {
        if self.threads.get(&tid).map(|th| th.state) == Some(State::Blocked) {
            self.make_runnable(tid, t);
        }
    }

    pub(super) fn cpu_action(&mut self, c: usize, t: u64) -> Result<()> {
        let cur = self.cpus[c].cur;
        if cur == IDLE {
            let next = self.pick_next(c);
            if next != IDLE {
                let ts = self.switch(c, t, next, TASK_RUNNING)?;
                self.plan(c, ts);
            }
            return Ok(());
        }
        if let Some(p) = self.threads.get_mut(&cur).and_then(|th| th.pending.take()) {
            let ts = self.exit_syscall(c, t, cur, p)?;
            self.plan(c, ts);
            return Ok(());
        }
        if !self.cpus[c].switched && !self.cpus[c].rq.is_empty() {
            // The first event of every CPU's workload is a switch, so that tools learn
            // which thread runs there before any syscall.
            return self.preempt(c, t);
        }
        let r: f64 = self.rng.gen();
        let target = self.p.threads.max(2 * self.p.cpus);
        let single = self.procs[&self.threads[&cur].pid].threads.len() == 1;
        if r < 0.004 && self.live > target / 2 && cur != 1 {
            self.exit_thread(c, t, cur)
        } else if r < 0.008 && self.live < target + target / 2 {
            self.fork(c, t, cur)
        } else if r < 0.0095 && single && cur != 1 {
            self.exec(c, t, cur)
        } else if r < 0.15 && !self.cpus[c].rq.is_empty() {
            self.preempt(c, t)
        } else {
            self.syscall(c, t, cur)
        }
    }

    fn preempt(&mut self, c: usize, t: u64) -> Result<()> {
        let prev = self.cpus[c].cur;
        let next = self.pick_next(c);
        let ts = self.switch(c, t, next, TASK_RUNNING)?;
        self.make_runnable(prev, ts);
        self.plan(c, ts);
        Ok(())
    }

    /// Switches the current thread out (blocked or dead) and runs the next one.
    pub(super) fn switch_away(&mut self, c: usize, t: u64, state: i64) -> Result<u64> {
        let next = self.pick_next(c);
        let ts = self.switch(c, t, next, state)?;
        self.plan(c, ts);
        Ok(ts)
    }
}
