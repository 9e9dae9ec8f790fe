//! The discrete-event simulation of the workload.
//!
//! Per-CPU state: the running tid (0 = `swapper/N`), a run queue and the CPU's clock. A
//! global heap orders CPU actions and thread wake-ups by time. Threads alternate CPU bursts
//! and syscalls; some syscalls block (the thread is switched out with `prev_state` 1 and
//! exits the syscall when it runs again, possibly on another CPU); runnable threads are
//! placed on an idle CPU if there is one, else mostly on their last CPU; idle CPUs steal
//! queued threads. Every `sched_switch` switches out the tid switched in last on that CPU.
//! Everything draws from one ChaCha8 stream seeded by the configuration, so a seed gives
//! the same trace byte for byte.

use std::cmp::Reverse;
use std::collections::{BTreeMap, BTreeSet, BinaryHeap, VecDeque};
use std::sync::Arc;

use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

use crate::error::Result;
use crate::events::{comm, Background, Comm, KEvent, Syscall, SyscallArgs};
use crate::workload::{PROGRAMS, TTY};

/// The percentage of pieces of background activity that are pairs of events (an entry
/// and its exit, an allocation and its free); the others are single events.
const PAIRED_PERCENT: u32 = 90;

/// Receives the events of the simulation, per CPU, in time order on each CPU.
pub trait EventSink {
    /// One event at `ts` (ns) on `cpu`.
    fn event(&mut self, cpu: u32, ts: u64, ev: &KEvent) -> Result<()>;
}

/// Workload knobs.
#[derive(Debug, Clone)]
pub struct SimParams {
    /// CPUs.
    pub cpus: u32,
    /// Events to produce (the simulation stops at the first event beyond it).
    pub events: u64,
    /// Seed.
    pub seed: u64,
    /// Target number of live threads.
    pub threads: u32,
    /// Time of the first event (ns, without clock offset).
    pub start_ns: u64,
    /// Percentage of background events ([`crate::SynthConfig::background`]).
    pub background: u8,
}

const IDLE: i32 = 0;
const TASK_RUNNING: i64 = 0;
const TASK_INTERRUPTIBLE: i64 = 1;
const TASK_DEAD: i64 = 0x80;
const AT_FDCWD: i32 = -100;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum State {
    Running,
    Runnable,
    Blocked,
    Dead,
}

/// What a syscall does when it exits.
#[derive(Debug, Clone)]
enum Effect {
    Bytes { file: Arc<str>, read: bool },
    Open { file: Arc<str> },
    Close { fd: i32 },
    Dup { file: Arc<str> },
    Dup2 { newfd: i32, file: Arc<str> },
    Fail,
}

#[derive(Debug, Clone)]
struct Pending {
    /// The fd this syscall uses (read/write/dup source), counted in its process's
    /// `inflight` until the exit: it may not be closed or replaced meanwhile.
    uses: Option<i32>,
    /// The fd this syscall closes or replaces (close, dup2 target), in its process's
    /// `closing` until the exit: nobody starts using it meanwhile.
    closes: Option<i32>,
    call: Syscall,
    ret: i64,
    buf: u64,
    effect: Effect,
}

#[derive(Debug, Clone)]
struct Thread {
    pid: i32,
    comm: Comm,
    prio: i32,
    state: State,
    last_cpu: usize,
    ready_at: u64,
    pending: Option<Pending>,
    burst_ns: u64,
}

#[derive(Debug, Clone)]
struct Process {
    program: usize,
    threads: Vec<i32>,
    fds: BTreeMap<i32, Arc<str>>,
    inflight: BTreeMap<i32, u32>,
    closing: BTreeSet<i32>,
}

#[derive(Debug, Clone, Default)]
struct Cpu {
    cur: i32,
    rq: VecDeque<i32>,
    now: u64,
    run_start: u64,
    gen: u64,
    scheduled: bool,
    switched: bool,
}

/// Accumulated truth, filled while events are produced.
#[derive(Debug, Default, Clone)]
pub struct Tally {
    /// Events per name index.
    pub events: Vec<u64>,
    /// Events per CPU.
    pub cpu_events: Vec<u64>,
    /// Busy ns per CPU.
    pub cpu_busy: Vec<u64>,
    /// Per tid: (cpu ns, read bytes, write bytes).
    pub tid: BTreeMap<i32, (u64, u64, u64)>,
    /// Per tid: (pid, final comm).
    pub tid_info: BTreeMap<i32, (i32, Comm)>,
    /// Per path: (read, written).
    pub files: BTreeMap<Arc<str>, (u64, u64)>,
    /// First and last event timestamps.
    pub begin: u64,
    /// Last event timestamp.
    pub end: u64,
}

/// The simulation state.
pub struct Sim<'s, S: EventSink> {
    rng: ChaCha8Rng,
    p: SimParams,
    sink: &'s mut S,
    threads: BTreeMap<i32, Thread>,
    procs: BTreeMap<i32, Process>,
    cpus: Vec<Cpu>,
    heap: BinaryHeap<Reverse<(u64, u64, Action)>>,
    seq: u64,
    next_tid: i32,
    live: u32,
    emitted: u64,
    swappers: Vec<Comm>,
    /// The truth gathered so far.
    pub tally: Tally,
}

/// A scheduled happening: a CPU's next action (valid while its generation is current) or
/// a blocked thread's wake-up.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
enum Action {
    Cpu { cpu: usize, gen: u64 },
    Wake { tid: i32 },
}

impl<'s, S: EventSink> Sim<'s, S> {
    /// A fresh simulation writing to `sink`.
    pub fn new(p: SimParams, sink: &'s mut S) -> Self {
        let n = p.cpus as usize;
        let tally = Tally { events: vec![0; crate::events::EVENT_NAMES.len()], cpu_events: vec![0; n], cpu_busy: vec![0; n], ..Default::default() };
        Sim {
            rng: ChaCha8Rng::seed_from_u64(p.seed),
            cpus: vec![Cpu::default(); n],
            p,
            sink,
            threads: BTreeMap::new(),
            procs: BTreeMap::new(),
            heap: BinaryHeap::new(),
            seq: 0,
            next_tid: 1000,
            live: 0,
            emitted: 0,
            swappers: (0..n).map(|c| comm(&format!("swapper/{c}"))).collect(),
            tally,
        }
    }

    /// Runs until the event target is reached, then closes the books.
    pub fn run(mut self) -> Result<Tally> {
        self.populate();
        self.statedump()?;
        while self.emitted < self.p.events {
            let Some(Reverse((t, _, action))) = self.heap.pop() else { break };
            match action {
                Action::Wake { tid } => self.wake(tid, t),
                Action::Cpu { cpu, gen } => {
                    if gen != self.cpus[cpu].gen {
                        continue;
                    }
                    self.cpus[cpu].scheduled = false;
                    self.cpu_action(cpu, t)?;
                }
            }
        }
        self.finish();
        Ok(self.tally)
    }

    // ---- bookkeeping -------------------------------------------------------------------

    fn emit(&mut self, c: usize, ts: u64, ev: KEvent) -> Result<u64> {
        if self.p.background > 0 {
            self.background(c, ts)?;
        }
        self.emit_at(c, ts, ev)
    }

    /// Emits background activity on `c` in the gap before its next event, at `ts` (no
    /// gap when `ts` is not after the CPU's last event): a
    /// geometric number of pieces of activity, so that about `b` percent of all events
    /// are background ones, spread evenly over the gap and before its end, so that the
    /// workload's own times do not change.
    fn background(&mut self, c: usize, ts: u64) -> Result<()> {
        // Background events per workload event, then pieces of activity (of
        // `EVENTS_PER_PIECE` events on average: of `background_activity`'s pieces, the
        // `PAIRED_PERCENT` are pairs, the others single events) per workload event: the
        // mean `r` of the geometric draw, whose success probability is `r / (1 + r)`.
        const EVENTS_PER_PIECE: f64 = (2 * PAIRED_PERCENT + (100 - PAIRED_PERCENT)) as f64 / 100.0;
        let b = f64::from(self.p.background) / 100.0;
        let r = b / (1.0 - b) / EVENTS_PER_PIECE;
        let gap = ts.saturating_sub(self.cpus[c].now);
        let mut pieces = 0u64;
        while pieces < gap / 4 && self.rng.gen_bool(r / (1.0 + r)) {
            pieces += 1;
        }
        if pieces == 0 {
            return Ok(());
        }
        // At most two events a piece: `2 * pieces` times strictly inside the gap.
        let from = self.cpus[c].now;
        let at = |i: u64| from + (i + 1) * gap / (2 * pieces + 1);
        let mut k = 0;
        for _ in 0..pieces {
            let (first, second) = self.background_activity(c);
            for ev in std::iter::once(first).chain(second) {
                self.emit_at(c, at(k), KEvent::Background(ev))?;
                k += 1;
            }
        }
        Ok(())
    }

    /// One piece of background activity on `c`, one or two events: an interrupt, a
    /// softirq or a timer (entry and exit), an allocation and its free, or a wake-up.
    fn background_activity(&mut self, c: usize) -> (Background, Option<Background>) {
        // (Draws below `PAIRED_PERCENT` are pairs.)
        const IRQS: [(i32, &str); 3] = [(16, "eth0"), (24, "nvme0q1"), (1, "i8042")];
        let r: u32 = self.rng.gen_range(0..100);
        let addr = |rng: &mut ChaCha8Rng| 0xffff_8880_0000_0000u64 | (rng.gen_range(0..1u64 << 28) << 4);
        match r {
            0..25 => {
                let (irq, name) = IRQS[self.rng.gen_range(0..IRQS.len())];
                (Background::IrqEntry { irq, name }, Some(Background::IrqExit { irq, ret: 1 }))
            }
            25..45 => {
                let vec = [1u32, 3, 7, 9][self.rng.gen_range(0..4)];
                (Background::SoftirqEntry { vec }, Some(Background::SoftirqExit { vec }))
            }
            45..65 => {
                let hrtimer = addr(&mut self.rng);
                let now = self.cpus[c].now as i64;
                (Background::HrtimerEntry { hrtimer, now, function: 0xffff_ffff_8110_0000 }, Some(Background::HrtimerExit { hrtimer }))
            }
            65..PAIRED_PERCENT => {
                let (call_site, ptr) = (0xffff_ffff_8120_0000 | (self.rng.gen_range(0..256u64) << 4), addr(&mut self.rng));
                let bytes_req = self.rng.gen_range(8..4096);
                (Background::Kmalloc { call_site, ptr, bytes_req, bytes_alloc: bytes_req.next_power_of_two() }, Some(Background::Kfree { call_site, ptr }))
            }
            _ => {
                let k = self.rng.gen_range(0..self.threads.len());
                let (&tid, th) = self.threads.iter().nth(k).expect("k < len");
                (Background::Wakeup { comm: th.comm, tid, prio: th.prio, target_cpu: th.last_cpu as i32 }, None)
            }
        }
    }

    /// Emits `ev` at `ts` (not before the CPU's last event) on `c`.
    fn emit_at(&mut self, c: usize, ts: u64, ev: KEvent) -> Result<u64> {
        let ts = ts.max(self.cpus[c].now);
        self.cpus[c].now = ts;
        if self.emitted == 0 {
            self.tally.begin = ts;
        }
        self.tally.end = self.tally.end.max(ts);
        self.emitted += 1;
        self.tally.events[ev.name_index()] += 1;
        self.tally.cpu_events[c] += 1;
        self.sink.event(c as u32, ts, &ev)?;
        Ok(ts)
    }

    fn schedule_cpu(&mut self, c: usize, t: u64) {
        let cpu = &mut self.cpus[c];
        cpu.gen += 1;
        cpu.scheduled = true;
        self.seq += 1;
        self.heap.push(Reverse((t, self.seq, Action::Cpu { cpu: c, gen: cpu.gen })));
    }

    fn schedule_wake(&mut self, tid: i32, t: u64) {
        self.seq += 1;
        self.heap.push(Reverse((t, self.seq, Action::Wake { tid })));
    }

    fn burst(&mut self, tid: i32) -> u64 {
        let mean = self.threads[&tid].burst_ns as f64;
        let u: f64 = self.rng.gen_range(1e-6..1.0);
        ((-u.ln() * mean) as u64).clamp(500, 20 * mean as u64)
    }

    fn new_thread(&mut self, pid: i32, program: usize, name: Comm) -> i32 {
        let tid = if pid == 1 && !self.threads.contains_key(&1) { 1 } else { self.next_tid };
        if tid != 1 {
            self.next_tid += 1;
        }
        let burst = PROGRAMS[program].burst_ns;
        let prio = if self.rng.gen_bool(0.9) { 20 } else { self.rng.gen_range(10..30) };
        let t = Thread { pid, comm: name, prio, state: State::Runnable, last_cpu: 0, ready_at: 0, pending: None, burst_ns: burst };
        self.threads.insert(tid, t);
        self.tally.tid.entry(tid).or_default();
        self.tally.tid_info.insert(tid, (pid, name));
        self.live += 1;
        tid
    }

    fn new_process(&mut self, program: usize, pid_hint: Option<i32>) -> i32 {
        let name = comm(PROGRAMS[program].name);
        let pid = pid_hint.unwrap_or(self.next_tid);
        let mut fds = BTreeMap::new();
        for fd in 0..3 {
            fds.insert(fd, Arc::<str>::from(TTY));
        }
        self.procs.insert(pid, Process { program, threads: Vec::new(), fds, inflight: BTreeMap::new(), closing: BTreeSet::new() });
        let tid = self.new_thread(pid, program, name);
        if let Some(p) = self.procs.get_mut(&pid) {
            p.threads.push(tid);
        }
        pid
    }

    // ---- start of trace ----------------------------------------------------------------

    fn populate(&mut self) {
        let target = self.p.threads.max(2 * self.p.cpus);
        self.new_process(PROGRAMS.len() - 1, Some(1));
        while self.live < target {
            let prog = self.rng.gen_range(0..PROGRAMS.len() - 1);
            let pid = self.new_process(prog, None);
            let extra = self.rng.gen_range(0..PROGRAMS[prog].max_threads);
            for _ in 0..extra {
                let tid = self.new_thread(pid, prog, comm(PROGRAMS[prog].name));
                if let Some(p) = self.procs.get_mut(&pid) {
                    p.threads.push(tid);
                }
            }
            // A few files open before tracing started (reported by the statedump).
            let n = self.rng.gen_range(0..3);
            for _ in 0..n {
                let f = self.pick_file(prog);
                let p = self.procs.get_mut(&pid).expect("just created");
                let fd = lowest_free_fd(&p.fds);
                p.fds.insert(fd, f);
            }
        }
        let start = self.p.start_ns;
        let tids: Vec<i32> = self.threads.keys().copied().collect();
        let n = self.cpus.len();
        for (i, &tid) in tids.iter().enumerate() {
            let th = self.threads.get_mut(&tid).expect("listed");
            th.last_cpu = i % n;
            if i < n {
                th.state = State::Running;
                self.cpus[i].cur = tid;
                self.cpus[i].run_start = start;
                self.cpus[i].now = start;
            } else if i < 2 * n || self.rng.gen_bool(0.6) {
                th.state = State::Runnable;
                self.cpus[i % n].rq.push_back(tid);
            } else {
                th.state = State::Blocked;
                let at = start + self.rng.gen_range(10_000..3_000_000);
                self.schedule_wake(tid, at);
            }
        }
    }

    fn statedump(&mut self) -> Result<()> {
        let mut t = self.p.start_ns;
        self.emit(0, t, KEvent::StatedumpStart)?;
        let tids: Vec<(i32, i32, Comm, State)> = self.threads.iter().map(|(&k, v)| (k, v.pid, v.comm, v.state)).collect();
        for (tid, pid, name, state) in tids {
            t += self.rng.gen_range(200..2_000);
            let ppid = if pid == 1 { 0 } else { 1 };
            let status = if state == State::Running { 6 } else { 5 };
            self.emit(0, t, KEvent::StatedumpProcess { tid, pid, ppid, name, kernel_thread: false, status })?;
        }
        let fds: Vec<(i32, i32, Arc<str>)> =
            self.procs.iter().flat_map(|(&pid, p)| p.fds.iter().map(move |(&fd, f)| (pid, fd, f.clone()))).collect();
        for (pid, fd, filename) in fds {
            t += self.rng.gen_range(200..2_000);
            self.emit(0, t, KEvent::StatedumpFd { pid, fd, filename })?;
        }
        t += self.rng.gen_range(200..2_000);
        let end = self.emit(0, t, KEvent::StatedumpEnd)?;
        let at = end + self.rng.gen_range(1_000..20_000);
        self.schedule_cpu(0, at);
        // The other CPUs start working once the statedump has listed every process and
        // fd, so that no syscall uses an fd (or a thread) the trace has not described yet.
        for c in 1..self.cpus.len() {
            let at = end + self.rng.gen_range(2_000..60_000);
            self.schedule_cpu(c, at);
        }
        Ok(())
    }

    fn finish(&mut self) {
        let end = self.tally.end;
        for c in 0..self.cpus.len() {
            let cur = self.cpus[c].cur;
            if cur != IDLE {
                let d = end.saturating_sub(self.cpus[c].run_start);
                self.credit(c, cur, d);
            }
        }
        for (tid, th) in &self.threads {
            self.tally.tid_info.insert(*tid, (th.pid, th.comm));
        }
    }

    fn credit(&mut self, c: usize, tid: i32, d: u64) {
        self.tally.cpu_busy[c] += d;
        self.tally.tid.entry(tid).or_default().0 += d;
    }

    // ---- scheduling --------------------------------------------------------------------

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
    fn plan(&mut self, c: usize, ts: u64) {
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
    fn make_runnable(&mut self, tid: i32, t: u64) {
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

    fn wake(&mut self, tid: i32, t: u64) {
        if self.threads.get(&tid).map(|th| th.state) == Some(State::Blocked) {
            self.make_runnable(tid, t);
        }
    }

    fn cpu_action(&mut self, c: usize, t: u64) -> Result<()> {
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
    fn switch_away(&mut self, c: usize, t: u64, state: i64) -> Result<u64> {
        let next = self.pick_next(c);
        let ts = self.switch(c, t, next, state)?;
        self.plan(c, ts);
        Ok(ts)
    }

    // ---- process life cycle ------------------------------------------------------------

    fn fork(&mut self, c: usize, t: u64, parent: i32) -> Result<()> {
        let (ppid, pcomm) = (self.threads[&parent].pid, self.threads[&parent].comm);
        let prog = self.procs[&ppid].program;
        let as_thread = (self.procs[&ppid].threads.len() as u32) < PROGRAMS[prog].max_threads && self.rng.gen_bool(0.6);
        let child = if as_thread {
            let tid = self.new_thread(ppid, prog, pcomm);
            if let Some(p) = self.procs.get_mut(&ppid) {
                p.threads.push(tid);
            }
            tid
        } else {
            let pid = self.new_process(prog, None);
            let fds = self.procs[&ppid].fds.clone();
            let p = self.procs.get_mut(&pid).expect("just created");
            p.fds = fds;
            let tid = p.threads[0];
            if let Some(th) = self.threads.get_mut(&tid) {
                th.comm = pcomm;
            }
            tid
        };
        let cpid = self.threads[&child].pid;
        if let Some(th) = self.threads.get_mut(&child) {
            th.last_cpu = c;
        }
        let ev = KEvent::Fork { parent_comm: pcomm, parent_tid: parent, parent_pid: ppid, child_comm: pcomm, child_tid: child, child_pid: cpid };
        let ts = self.emit(c, t, ev)?;
        self.make_runnable(child, ts);
        self.plan(c, ts);
        Ok(())
    }

    fn exec(&mut self, c: usize, t: u64, tid: i32) -> Result<()> {
        let prog = self.rng.gen_range(0..PROGRAMS.len() - 3);
        let filename: Arc<str> = Arc::from(format!("/usr/bin/{}", PROGRAMS[prog].name));
        let ts = self.emit(c, t, KEvent::Exec { filename, tid, old_tid: tid })?;
        let pid = self.threads[&tid].pid;
        if let Some(p) = self.procs.get_mut(&pid) {
            p.program = prog;
        }
        if let Some(th) = self.threads.get_mut(&tid) {
            th.comm = comm(PROGRAMS[prog].name);
            th.burst_ns = PROGRAMS[prog].burst_ns;
        }
        self.plan(c, ts);
        Ok(())
    }

    fn exit_thread(&mut self, c: usize, t: u64, tid: i32) -> Result<()> {
        let (pid, name, prio) = (self.threads[&tid].pid, self.threads[&tid].comm, self.threads[&tid].prio);
        let ts = self.emit(c, t, KEvent::Exit { comm: name, tid, prio })?;
        if let Some(th) = self.threads.get_mut(&tid) {
            th.state = State::Dead;
        }
        self.tally.tid_info.insert(tid, (pid, name));
        self.live -= 1;
        let empty = self.procs.get_mut(&pid).map(|p| {
            p.threads.retain(|&x| x != tid);
            p.threads.is_empty()
        });
        let d = self.rng.gen_range(1_000..8_000);
        self.switch_away(c, ts + d, TASK_DEAD)?;
        self.threads.remove(&tid);
        if empty == Some(true) {
            self.procs.remove(&pid);
        }
        Ok(())
    }

    // ---- syscalls ----------------------------------------------------------------------

    fn pick_file(&mut self, prog: usize) -> Arc<str> {
        let files = PROGRAMS[prog].files;
        Arc::from(files[self.rng.gen_range(0..files.len())])
    }

    fn syscall(&mut self, c: usize, t: u64, tid: i32) -> Result<()> {
        let pid = self.threads[&tid].pid;
        let proc_ = &self.procs[&pid];
        let n_user = proc_.fds.range(3..).count();
        // Keep fd tables small and stable: open more when few are open, close more when many.
        let (p_open, p_close) = match n_user {
            0 => (0.5, 0.0),
            1..=5 => (0.05, 0.04),
            6..=10 => (0.03, 0.06),
            _ => (0.01, 0.15),
        };
        let r: f64 = self.rng.gen();
        let pick_user = |rng: &mut ChaCha8Rng, p: &Process| -> i32 {
            let k = rng.gen_range(0..n_user.max(1));
            p.fds.range(3..).nth(k).map(|(&fd, _)| fd).unwrap_or(0)
        };
        let (call, args, pending, may_block) = if r < p_open {
            let file = self.pick_file(self.procs[&pid].program);
            let fail = self.rng.gen_bool(0.03);
            let flags = if self.rng.gen_bool(0.5) { 0 } else { 0o1101 };
            let args = SyscallArgs::Openat { dfd: AT_FDCWD, filename: file.clone(), flags, mode: 0o644 };
            let effect = if fail { Effect::Fail } else { Effect::Open { file } };
            (Syscall::Openat, args, Pending { uses: None, closes: None, call: Syscall::Openat, ret: -2, buf: 0, effect }, false)
        } else if r < p_open + p_close {
            let fd = pick_user(&mut self.rng, &self.procs[&pid]);
            if self.procs[&pid].busy(fd) {
                return self.compute(c, t, tid);
            }
            (Syscall::Close, SyscallArgs::Close { fd }, Pending { uses: None, closes: Some(fd), call: Syscall::Close, ret: 0, buf: 0, effect: Effect::Close { fd } }, false)
        } else if r < p_open + p_close + 0.02 && (1..=10).contains(&n_user) {
            let fd = pick_user(&mut self.rng, &self.procs[&pid]);
            let file = self.procs[&pid].fds[&fd].clone();
            if self.procs[&pid].closing.contains(&fd) {
                return self.compute(c, t, tid);
            }
            if self.rng.gen_bool(0.5) {
                (Syscall::Dup, SyscallArgs::Dup { fildes: fd }, Pending { uses: Some(fd), closes: None, call: Syscall::Dup, ret: 0, buf: 0, effect: Effect::Dup { file } }, false)
            } else {
                let newfd = self.rng.gen_range(3..12);
                if newfd == fd || self.procs[&pid].busy(newfd) {
                    return self.compute(c, t, tid);
                }
                let p = Pending { uses: Some(fd), closes: Some(newfd), call: Syscall::Dup2, ret: i64::from(newfd), buf: 0, effect: Effect::Dup2 { newfd, file } };
                (Syscall::Dup2, SyscallArgs::Dup2 { oldfd: fd, newfd }, p, false)
            }
        } else {
            // Read or write on an open fd (stdio included).
            let p = &self.procs[&pid];
            let fd = if n_user == 0 || self.rng.gen_bool(0.1) {
                let k = self.rng.gen_range(0..p.fds.len());
                p.fds.keys().nth(k).copied().unwrap_or(0)
            } else {
                pick_user(&mut self.rng, p)
            };
            if p.closing.contains(&fd) {
                return self.compute(c, t, tid);
            }
            let file = p.fds[&fd].clone();
            let (read_pct, io_size) = (PROGRAMS[p.program].read_pct, PROGRAMS[p.program].io_size);
            let read = self.rng.gen_range(0..100) < read_pct;
            let count = (io_size >> self.rng.gen_range(0..4)).max(1) * self.rng.gen_range(1..3);
            let buf = 0x7f00_0000_0000 + (self.rng.gen_range(0..1u64 << 30) & !0xfff);
            let kind = self.rng.gen_range(0..10);
            let (call, vlen) = match (read, kind) {
                (true, 0..=5) => (Syscall::Read, count),
                (true, 6..=8) => (Syscall::Pread64, count),
                (true, _) => (Syscall::Readv, self.rng.gen_range(1..4)),
                (false, 0..=5) => (Syscall::Write, count),
                (false, 6..=8) => (Syscall::Pwrite64, count),
                (false, _) => (Syscall::Writev, self.rng.gen_range(1..4)),
            };
            let pos = if matches!(call, Syscall::Pread64 | Syscall::Pwrite64) { self.rng.gen_range(0..1i64 << 30) & !0xfff } else { 0 };
            let args = if read { SyscallArgs::Read { fd, buf, count: vlen, pos } } else { SyscallArgs::Write { fd, buf, count: vlen, pos } };
            let o = self.rng.gen_range(0..100);
            let ret = match o {
                0..=1 => -11,
                2..=4 if read => 0,
                5..=14 => (count / 3) as i64,
                _ => count as i64,
            };
            let effect = Effect::Bytes { file, read };
            (call, args, Pending { uses: Some(fd), closes: None, call, ret, buf, effect }, true)
        };
        let ts = self.emit(c, t, KEvent::SyscallEntry(call, args))?;
        {
            let p = self.procs.get_mut(&pid).expect("live");
            if let Some(fd) = pending.uses {
                *p.inflight.entry(fd).or_insert(0) += 1;
            }
            if let Some(fd) = pending.closes {
                p.closing.insert(fd);
            }
        }
        let block_p = match call {
            Syscall::Read | Syscall::Pread64 | Syscall::Readv => 0.25,
            _ => 0.08,
        };
        if may_block && self.rng.gen_bool(block_p) {
            if let Some(th) = self.threads.get_mut(&tid) {
                th.pending = Some(pending);
                th.state = State::Blocked;
            }
            let d = self.rng.gen_range(1_000..4_000);
            let out = self.switch_away(c, ts + d, TASK_INTERRUPTIBLE)?;
            let sleep = self.rng.gen_range(20_000..3_000_000);
            self.schedule_wake(tid, out + sleep);
        } else {
            // The exit happens later in simulated time, like any other action: its
            // effects (a new fd, a closed one) must not be visible to the other CPUs
            // before its timestamp.
            let d = self.rng.gen_range(300..15_000);
            if let Some(th) = self.threads.get_mut(&tid) {
                th.pending = Some(pending);
            }
            self.schedule_cpu(c, ts + d);
        }
        Ok(())
    }

    /// A burst without a syscall (used when a chosen syscall would be unsafe).
    fn compute(&mut self, c: usize, t: u64, _tid: i32) -> Result<()> {
        self.plan(c, t);
        Ok(())
    }

    fn exit_syscall(&mut self, c: usize, t: u64, tid: i32, p: Pending) -> Result<u64> {
        let pid = self.threads[&tid].pid;
        let proc_ = self.procs.get_mut(&pid).expect("live thread has a process");
        let mut ret = p.ret;
        if let Some(fd) = p.uses {
            if let Some(n) = proc_.inflight.get_mut(&fd) {
                *n = n.saturating_sub(1);
            }
        }
        if let Some(fd) = p.closes {
            proc_.closing.remove(&fd);
        }
        match &p.effect {
            Effect::Open { file } | Effect::Dup { file } => {
                let fd = lowest_free_fd(&proc_.fds);
                proc_.fds.insert(fd, file.clone());
                ret = i64::from(fd);
            }
            Effect::Close { fd } => {
                proc_.fds.remove(fd);
            }
            Effect::Dup2 { newfd, file } => {
                proc_.fds.insert(*newfd, file.clone());
            }
            Effect::Bytes { .. } | Effect::Fail => {}
        }
        let ts = self.emit(c, t, KEvent::SyscallExit { call: p.call, ret, buf: p.buf })?;
        if let Effect::Bytes { file, read, .. } = p.effect {
            if ret > 0 {
                let n = ret as u64;
                let e = self.tally.tid.entry(tid).or_default();
                let f = self.tally.files.entry(file).or_default();
                if read {
                    e.1 += n;
                    f.0 += n;
                } else {
                    e.2 += n;
                    f.1 += n;
                }
            }
        }
        Ok(ts)
    }
}

impl Process {
    /// Whether `fd` is in use by a pending syscall or about to be closed or replaced.
    fn busy(&self, fd: i32) -> bool {
        self.inflight.get(&fd).copied().unwrap_or(0) > 0 || self.closing.contains(&fd)
    }
}

fn lowest_free_fd(fds: &BTreeMap<i32, Arc<str>>) -> i32 {
    (3..).find(|fd| !fds.contains_key(fd)).unwrap_or(3)
}
