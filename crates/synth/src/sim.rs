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
use crate::events::{comm, Background, Comm, KEvent, Syscall};
use crate::workload::{PROGRAMS, TTY};

mod lifecycle;
mod sched;
mod syscalls;

use syscalls::lowest_free_fd;

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
        let fds: Vec<(i32, i32, Arc<str>)> = self.procs.iter().flat_map(|(&pid, p)| p.fds.iter().map(move |(&fd, f)| (pid, fd, f.clone()))).collect();
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
}
