//! The serial side of the build: [`SliceLog`]s (records of [`kernel::log::Rec`])
//! applied to a cube in time order, over the kernel model's state: the running task
//! per CPU and since when it runs ([`kernel::runs::Clock`]), and the threads' pids,
//! fd tables and pending syscalls ([`kernel::replay::Replay`], which interprets the
//! model's records and resolves the bytes each read or write moved and on which
//! file, completes each call, and knows each thread's name); the applier keeps only
//! what the cube needs beside (its members, and bytes held for the statedump).
//!
//! Semantics, as `analysis`'s `count`, `cpu` and `io` (so that a cube range equals the
//! analyses' difference of prefixes, see `tests/exactness.rs`):
//! * `events`: 1 per event, by operation and CPU — added per frame from the log's
//!   counts (at the frame's first event; the cube's span is the events' span);
//! * `cpu_ns`: time a non-idle thread was switched in, by thread and CPU. At a
//!   `sched_switch` the switched-out thread gets the time since it was switched in;
//!   when the stream crosses a finest-frame boundary, every running thread is credited
//!   up to the last event before the boundary (what `analyze --end B-1` credits as the
//!   trace's tail); the thread running before a CPU's first switch gets the time from
//!   the trace's first event at that switch (`HeadPolicy::FromStart`), and syscalls
//!   before that switch belong to it (found by [`prescan_first_switch`]); the
//!   [`kernel::runs::Clock`] keeps who runs since when;
//! * `bytes_read` / `bytes_written`: exit `ret > 0` of read- and write-family syscalls
//!   whose entry was seen, by thread and file;
//! * the latencies (`syscall_ns`, `wakeup_ns`, `irq_ns`, `block_ns`), as `analyze -a
//!   syscall|sched|irq|block` measure them (`apply/latency.rs`).
//!
//! Members appear as the stream reveals them: thread names and pids from
//! `sched_switch`, `sched_process_fork`/`exec` and the statedump; fd → path from
//! open/dup/close/fcntl, fork, exec (`O_CLOEXEC`) and the statedump.

use std::collections::HashMap;
use std::sync::Arc;

use ctf::stream::{Item, StreamCursor};
use ctf::trace::TraceSet;
use cube::dims::{file_path_labels, operation_kind, NodeId};
use cube::{CellId, Cube, MetricId, Result};
use kernel::fdtable::{FileNames, Transfer};
use kernel::latency::renumbered;
use kernel::layout::{Kind, Layout};
use kernel::log::{Rec, Who};
use kernel::model::{text_of, FxMap};
use kernel::replay::{Completed, Replay, Sink};
use kernel::runs::Clock;

use crate::log::{Record, SliceLog};

mod latency;

const MACHINE: usize = 0;
const CPU: usize = 1;
const PROCESS: usize = 2;
const FILE: usize = 3;
const OPERATION: usize = 4;

/// What the cube keeps per thread, beside the kernel's replay (which knows its pid and
/// name): its Process member, made again when its name or pid changes.
#[derive(Debug, Clone, Default)]
struct Thread {
    node: Option<NodeId>,
}

/// How one update combines into a metric's cells: the measure's sum, the number of
/// updates it stands for, and the value each of them had (for min / max).
#[derive(Debug, Clone, Copy)]
struct Delta {
    sum: i64,
    updates: i64,
    each: i64,
}

/// A metric's finest cell for some members, with the cells of its companions (count,
/// min and max) for the same members: one look-up per update.
#[derive(Debug, Clone, Copy)]
struct Cells {
    sum: CellId,
    count: Option<CellId>,
    extremes: Option<(CellId, CellId)>,
}

/// Bytes credited to a placeholder file (I/O on an fd before the statedump named it):
/// `(process member, read, bytes, machine member)` per credit, moved to the file the
/// statedump names.
type Held = FxMap<u32, Vec<(NodeId, bool, i64, u32)>>;

/// The id of path `p` (its File member created if new).
fn intern_path(path_ids: &mut HashMap<Arc<str>, u32>, paths: &mut Vec<NodeId>, cube: &mut Cube, p: &str) -> u32 {
    if let Some(&i) = path_ids.get(p) {
        return i;
    }
    let labels = file_path_labels(p);
    let refs: Vec<&str> = labels.iter().map(String::as_str).collect();
    let n = cube.schema.dims[FILE].member(&refs);
    let i = paths.len() as u32;
    paths.push(n);
    path_ids.insert(Arc::from(p), i);
    i
}

/// The `prev_tid` of each stream's first `sched_switch` (who ran before it).
pub fn prescan_first_switch(set: &TraceSet, layout: &Layout) -> Vec<Option<i32>> {
    (0..set.streams.len())
        .map(|i| {
            let mut cur = StreamCursor::new(set, i);
            while let Ok(Some(item)) = cur.next() {
                if let Item::Event(ev) = item {
                    if let Some(Kind::Switch { prev_tid, .. }) = layout.class(&ev).map(|c| c.kind) {
                        return ev.int(prev_tid).map(|v| v as i32);
                    }
                }
            }
            None
        })
        .collect()
}

/// The applier's file numbering, as the fd rules ask for it: files are cube members;
/// and what a replayed record resolved, kept for the applier to add to the cube.
struct CubeFiles<'a> {
    path_ids: &'a mut HashMap<Arc<str>, u32>,
    paths: &'a mut Vec<NodeId>,
    held: &'a mut Held,
    cube: &'a mut Cube,
    /// Whether the calls completed are wanted (`syscall_ns` is measured).
    calls: bool,
    out: Replayed,
}

/// What the replay of one record resolved ([`Applier::replay`]).
#[derive(Debug, Default)]
struct Replayed {
    /// The bytes a read or write moved.
    moved: Option<Transfer>,
    /// The call an exit completed.
    completed: Option<Completed>,
    /// The placeholder whose bytes the statedump gave to a file, with that file.
    held: Option<(u32, u32)>,
}

impl Sink for CubeFiles<'_> {
    type Thread = Thread;

    fn moved(&mut self, _tid: i32, _pid: Option<i32>, _data: &mut Thread, t: Transfer) {
        self.out.moved = Some(t);
    }

    fn wants_calls(&self) -> bool {
        self.calls
    }

    /// (The latency needs a call's name and times only; naming what it worked on would
    /// make File members.)
    fn wants_ended(&self) -> bool {
        false
    }

    fn completed(&mut self, _tid: i32, _data: &mut Thread, c: Completed) {
        self.out.completed = Some(c);
    }
}

impl FileNames for CubeFiles<'_> {
    fn named(&mut self, name: &str) -> u32 {
        intern_path(self.path_ids, self.paths, self.cube, name)
    }

    fn held(&mut self, fd: i32) -> u32 {
        // A new id (each placeholder is its own) for the one member of that name.
        let named = intern_path(self.path_ids, self.paths, self.cube, &format!("unknown (fd {fd})"));
        self.paths.push(self.paths[named as usize]);
        let id = self.paths.len() as u32 - 1;
        self.held.insert(id, Vec::new());
        id
    }
}

/// The metric list of bytes read (`read`) or written.
fn bytes_metric(read: bool) -> fn(&mut Applier) -> &mut Vec<MetricId> {
    if read {
        |a| &mut a.m_read
    } else {
        |a| &mut a.m_write
    }
}

/// The kernel model's state; it feeds the cube given to [`Applier::apply`].
pub struct Applier {
    names: Vec<Box<str>>,
    /// Per stream: its CPU member, once its first switch named its CPU.
    cpus: Vec<Option<NodeId>>,
    /// Who runs on each stream, since when.
    clock: Clock,
    /// The CPU time due to running threads ([`Applier::credit_running`]'s buffer).
    due: Vec<(usize, i32, i64)>,
    /// Threads, fd tables, pending syscalls.
    kernel: Replay<Thread>,
    held: Held,
    path_ids: HashMap<Arc<str>, u32>,
    paths: Vec<NodeId>,
    /// Per stream: the Machine member of its trace's host.
    machines: Vec<NodeId>,
    m_events: Vec<MetricId>,
    m_cpu: Vec<MetricId>,
    m_read: Vec<MetricId>,
    m_write: Vec<MetricId>,
    /// The latency measures' state.
    lat: latency::Latencies,
    /// Per metric and members: its finest cell and its companions'.
    cells: FxMap<(u16, [u32; 5]), Cells>,
    /// Per slot (name × streams + stream): the CPU and operation nodes.
    ev_nodes: Vec<Option<(NodeId, NodeId)>>,
    first_ts: Option<i64>,
    last_ts: i64,
    next_boundary: i64,
    g0: i64,
    /// Events consumed.
    pub events: u64,
}

impl Applier {
    /// A model with no history, for `cube`; `first_switch` from
    /// [`prescan_first_switch`]; `hosts` names the Machine member of each stream.
    pub fn new(cube: &mut Cube, layout: &Layout, first_switch: &[Option<i32>], hosts: &[String]) -> Applier {
        let machines = hosts.iter().map(|h| cube.schema.dims[MACHINE].member(&[h])).collect();
        let s = &cube.schema;
        let (m_events, m_cpu, m_read, m_write) = (s.metrics_of("events"), s.metrics_of("cpu_ns"), s.metrics_of("bytes_read"), s.metrics_of("bytes_written"));
        let g0 = cube.config.levels[0].granularity_ns as i64;
        let lat = latency::Latencies::new(&cube.schema);
        Applier {
            ev_nodes: vec![None; layout.names.len() * first_switch.len().max(1)],
            names: layout.names.clone(),
            cpus: vec![None; first_switch.len()],
            clock: Clock::new(first_switch),
            due: Vec::new(),
            kernel: Replay::default(),
            held: Held::default(),
            path_ids: HashMap::new(),
            paths: Vec::new(),
            machines,
            m_events,
            m_cpu,
            m_read,
            m_write,
            lat,
            cells: FxMap::default(),
            first_ts: None,
            last_ts: 0,
            next_boundary: i64::MIN,
            g0,
            events: 0,
        }
    }

    /// Adapts to a new layout (event names renumbered) and at least `streams` streams
    /// (new ones appended; existing ones keep their state).
    pub fn relayout(&mut self, layout: &Layout, streams: usize) {
        if self.cpus.len() < streams {
            self.cpus.resize(streams, None);
            self.clock.grow(streams);
        }
        let (old, new) = (&self.names, &layout.names);
        self.kernel.rename_calls(|c| renumbered(old, new, c));
        self.names = layout.names.clone();
        self.lat.relayout();
        self.ev_nodes = vec![None; self.names.len() * self.cpus.len().max(1)];
    }

    /// Sets the host of each stream (the Machine member of its updates).
    pub fn set_hosts(&mut self, cube: &mut Cube, hosts: &[String]) {
        self.machines = hosts.iter().map(|h| cube.schema.dims[MACHINE].member(&[h])).collect();
    }

    /// The Machine member of stream `s`.
    fn machine(&self, s: usize) -> u32 {
        self.machines.get(s).or(self.machines.first()).map_or(0, |n| n.0)
    }

    /// Streams the model keeps state for.
    pub fn stream_count(&self) -> usize {
        self.cpus.len()
    }

    /// The finest granularity, ns.
    pub fn g0(&self) -> i64 {
        self.g0
    }

    fn update(&mut self, cube: &mut Cube, t: i64, which: fn(&mut Applier) -> &mut Vec<MetricId>, ctx: [u32; 5], d: Delta) -> Result<()> {
        let metrics = std::mem::take(which(self));
        let r = self.update_metrics(cube, t, &metrics, ctx, d, true);
        *which(self) = metrics;
        r
    }

    /// Adds `sum` to the sum cells of `metrics` only (not their count or extremes).
    fn update_sum(&mut self, cube: &mut Cube, t: i64, metrics: &[MetricId], ctx: [u32; 5], sum: i64) -> Result<()> {
        for &m in metrics {
            self.update_metrics(cube, t, &[m], ctx, Delta { sum, updates: 0, each: 0 }, false)?;
        }
        Ok(())
    }

    fn update_metrics(&mut self, cube: &mut Cube, t: i64, metrics: &[MetricId], ctx: [u32; 5], d: Delta, extremes_too: bool) -> Result<()> {
        for &m in metrics {
            let metric = &cube.schema.metrics[m.0 as usize];
            let (count, extremes) = (metric.count, metric.extremes);
            let mut key = [0u32; 5];
            for &dim in &metric.dims {
                key[dim as usize] = ctx[dim as usize];
            }
            let cells = match self.cells.get(&(m.0, key)) {
                Some(&c) => c,
                None => {
                    let nodes: Vec<NodeId> =
                        metric.dims.iter().zip(&metric.leaf).map(|(&dim, &l)| cube.schema.dims[dim as usize].ancestor(NodeId(key[dim as usize]), l)).collect();
                    let mut cell = |m: MetricId| cube.cell(m, &nodes);
                    let c = Cells { sum: cell(m), count: count.map(&mut cell), extremes: extremes.map(|(lo, hi)| (cell(lo), cell(hi))) };
                    self.cells.insert((m.0, key), c);
                    c
                }
            };
            cube.add(t as u64, cells.sum, d.sum)?;
            if !extremes_too {
                continue;
            }
            if let Some(c) = cells.count {
                cube.add(t as u64, c, d.updates)?;
            }
            if let Some((lo, hi)) = cells.extremes {
                cube.add(t as u64, lo, d.each)?;
                cube.add(t as u64, hi, d.each)?;
            }
        }
        Ok(())
    }

    /// Renames thread `tid` at `t` (its process member changes), crediting its CPU
    /// time so far to the old member first, so that roll-ups to process names do not
    /// depend on where frame boundaries fall.
    fn set_comm(&mut self, cube: &mut Cube, tid: i32, b: &[u8], t: i64) -> Result<()> {
        let old = self.kernel.find(tid).map(|i| self.kernel.name(i).map(str::as_bytes));
        if old == Some(Some(b)) {
            return Ok(());
        }
        if old.is_some_and(|o| o.is_some()) {
            self.credit_running(cube, t, Some(tid))?;
        }
        let i = self.kernel.slot(tid);
        self.kernel.set_name(i, &String::from_utf8_lossy(b));
        self.kernel.data_mut(i).node = None;
        Ok(())
    }

    /// Before `tid` gets process `pid` at `t`: when that changes its known pid, credits
    /// its CPU time so far (as a rename) and forgets its member. False when `pid` is
    /// already its pid.
    fn pid_changes(&mut self, cube: &mut Cube, tid: i32, pid: i32, t: i64) -> Result<bool> {
        let old = self.kernel.find(tid).map(|i| self.kernel.slot_pid(i));
        if old == Some(Some(pid)) {
            return Ok(false);
        }
        if old.is_some_and(|o| o.is_some()) {
            self.credit_running(cube, t, Some(tid))?;
        }
        let i = self.kernel.slot(tid);
        self.kernel.data_mut(i).node = None;
        Ok(true)
    }

    /// Sets the pid of `tid` at `t` (crediting its CPU time so far first, as a rename).
    fn set_pid(&mut self, cube: &mut Cube, tid: i32, pid: i32, t: i64) -> Result<()> {
        if self.pid_changes(cube, tid, pid, t)? {
            self.kernel.set_pid(tid, pid);
        }
        Ok(())
    }

    fn process_node(&mut self, cube: &mut Cube, tid: i32) -> NodeId {
        let i = self.kernel.slot(tid);
        if let Some(n) = self.kernel.data(i).node {
            return n;
        }
        let pid = self.kernel.slot_pid(i).unwrap_or(tid).to_string();
        let comm = self.kernel.name(i).unwrap_or("?");
        let group = cube.config.group_of(comm);
        let n = cube.schema.dims[PROCESS].member(&[group, comm, &pid, &tid.to_string()]);
        self.kernel.data_mut(i).node = Some(n);
        n
    }

    fn cpu_node(cube: &mut Cube, cpu_id: u32, s: usize) -> NodeId {
        let label = if cpu_id & 0x8000_0000 == 0 { cpu_id.to_string() } else { format!("stream{s}") };
        cube.schema.dims[CPU].member(&[&label])
    }

    fn credit_cpu(&mut self, cube: &mut Cube, s: usize, tid: i32, d: i64, t: i64) -> Result<()> {
        if tid == 0 || d <= 0 || self.m_cpu.is_empty() {
            return Ok(());
        }
        let Some(cpu) = self.cpus.get(s).copied().flatten() else { return Ok(()) };
        let p = self.process_node(cube, tid);
        self.update(cube, t, |a| &mut a.m_cpu, [self.machine(s), cpu.0, p.0, 0, 0], Delta { sum: d, updates: 1, each: d })
    }

    /// Credits every running thread up to the last event (a frame boundary is crossed).
    fn cross_boundary(&mut self, cube: &mut Cube) -> Result<()> {
        self.credit_running(cube, self.last_ts, None)
    }

    /// Credits the running threads (or only `only`) with their CPU time up to `t`.
    fn credit_running(&mut self, cube: &mut Cube, t: i64, only: Option<i32>) -> Result<()> {
        let mut due = std::mem::take(&mut self.due);
        self.clock.credit_until(t, only, |s, tid, since| due.push((s, tid, since)));
        let mut r = Ok(());
        for &(s, tid, since) in &due {
            r = r.and_then(|()| self.credit_cpu(cube, s, tid, t - since, t));
        }
        due.clear();
        self.due = due;
        r
    }

    /// Applies the log of the slice that follows everything applied so far.
    pub fn apply(&mut self, cube: &mut Cube, log: &SliceLog) -> Result<()> {
        self.events += log.events;
        for (r, &t) in log.recs.iter().zip(&log.stamps) {
            self.record(cube, log, r, t)?;
        }
        if let Some(t) = log.last {
            self.last_ts = t;
        }
        Ok(())
    }

    /// The task running on stream `s` (before its first switch: that switch's
    /// `prev_tid`).
    fn who(&self, s: usize) -> Option<i32> {
        self.clock.who(s)
    }

    /// The thread a syscall record of stream `s` names, with its slot: the thread
    /// running there (see [`Applier::who`]); `new`: a slot is made for a thread that
    /// has none (else `None`).
    fn issuer(&mut self, s: u32, new: bool) -> Option<(i32, usize)> {
        let tid = self.who(s as usize)?;
        let i = if new { Some(self.kernel.slot(tid)) } else { self.kernel.find(tid) };
        i.map(|i| (tid, i))
    }

    fn record(&mut self, cube: &mut Cube, log: &SliceLog, r: &Record, t: i64) -> Result<()> {
        match *r {
            Rec::Frame { prev, block } => {
                if let Some(p) = prev {
                    self.last_ts = p;
                }
                if self.first_ts.is_none() {
                    self.first_ts = Some(t);
                }
                if t >= self.next_boundary {
                    if self.next_boundary != i64::MIN {
                        self.cross_boundary(cube)?;
                    }
                    self.next_boundary = t.div_euclid(self.g0) * self.g0 + self.g0;
                }
                self.frame_counts(cube, log, block as usize)?;
            }
            Rec::Name { tid, name } => self.set_comm(cube, tid, log.str(name), t)?,
            Rec::Switch { s, cpu, prev, next, prio } => {
                let s = s as usize;
                if self.cpus.len() <= s {
                    self.cpus.resize(s + 1, None);
                }
                if self.cpus[s].is_none() {
                    self.cpus[s] = Some(Self::cpu_node(cube, cpu, s));
                }
                let (tid, since) = self.clock.switch(s, t, prev, next, self.first_ts.unwrap_or(t));
                self.credit_cpu(cube, s, tid, t - since, t)?;
                self.switched_in(cube, s, cpu, t, next, prio)?;
            }
            Rec::Fork { child_tid, child_pid, .. } => {
                self.pid_changes(cube, child_tid, child_pid.unwrap_or(child_tid), t)?;
                self.replay(cube, r.clone().map_path(|_| ""), None);
            }
            Rec::Exec { who } => {
                // (An exec that names no thread is the last switched-in task's: before
                // the stream's first switch, none, as `analyze` has it.)
                let tid = match who {
                    Who::Stream(s) => self.clock.running().running(s as usize),
                    Who::Tid(t) => Some(t),
                    Who::Head(_) => None,
                };
                if let Some(tid) = tid {
                    self.kernel.exec(tid);
                }
            }
            Rec::ProcState { tid, pid } => self.set_pid(cube, tid, pid, t)?,
            Rec::FdDump { path, .. } => {
                let path = text_of(log.str(path));
                if let Some((held, file)) = self.replay(cube, r.clone().map_path(|_| path), None).held {
                    self.give_held(cube, t, held, file)?;
                }
            }
            Rec::Call { who: Who::Stream(s), call } => {
                // The entry that follows is of `call`, at `t`.
                self.kernel.at(t, call);
                self.call_entry(cube, s as usize, call);
            }
            Rec::Entry { who: Who::Stream(s), path, .. } => {
                let Some((tid, i)) = self.issuer(s, true) else { return Ok(()) };
                let path = path.map(|p| text_of(log.str(p)));
                self.replay(cube, r.clone().map_path(|_| path.unwrap_or_default()).with_who(Who::Tid(tid)), Some(i));
            }
            Rec::OtherEntry { who: Who::Stream(s) } => {
                // (Pending for the syscall latency: a thread seen first here gets its
                // slot, as at any entry.)
                if let Some((tid, i)) = self.issuer(s, true) {
                    self.replay(cube, Rec::<&str>::OtherEntry { who: Who::Tid(tid) }, Some(i));
                }
            }
            Rec::Exit { who: Who::Stream(s), .. } | Rec::Pair { who: Who::Stream(s), .. } => {
                let Some((tid, i)) = self.issuer(s, false) else { return Ok(()) };
                self.kernel.at(t, 0);
                let done = self.replay(cube, r.clone().map_path(|_| "").with_who(Who::Tid(tid)), Some(i));
                if let Some(c) = done.completed {
                    self.call_completed(cube, s as usize, tid, c)?;
                }
                if let Some(m) = done.moved {
                    self.moved(cube, s as usize, t, tid, m)?;
                }
            }
            Rec::Wakeup { s, tid } => self.wakeup(s as usize, t, tid),
            Rec::Irq { .. } => self.irq(cube, log, r, t)?,
            Rec::Block(ref b) => self.block(cube, b, t)?,
            Rec::BlockDevice { dev, name } => self.block_device(log, dev, name),
            // The cube's log names the issuers of syscalls by stream only.
            Rec::Call { .. } | Rec::Entry { .. } | Rec::OtherEntry { .. } | Rec::Exit { .. } | Rec::Pair { .. } => {}
        }
        self.last_ts = t;
        Ok(())
    }

    /// Interprets the model's record `r` (its issuer resolved, in `slot` when given)
    /// through the kernel's replay: returns what it resolved.
    fn replay<P: AsRef<str>>(&mut self, cube: &mut Cube, r: Rec<P>, slot: Option<usize>) -> Replayed {
        let calls = self.lat.wants_calls();
        let mut files = CubeFiles { path_ids: &mut self.path_ids, paths: &mut self.paths, held: &mut self.held, cube, calls, out: Replayed::default() };
        files.out.held = self.kernel.apply(r, slot, &mut files);
        files.out
    }

    /// Adds a frame's event counts at the frame's first event, and extends the cube's
    /// span to its last (so that the cube's span is the events' span however the
    /// events were cut into logs).
    fn frame_counts(&mut self, cube: &mut Cube, log: &SliceLog, block: usize) -> Result<()> {
        let b = log.blocks[block];
        let r = self.add_counts(cube, log, b);
        cube.observe(b.last as u64)?;
        r
    }

    fn add_counts(&mut self, cube: &mut Cube, log: &SliceLog, b: crate::log::Block) -> Result<()> {
        if self.m_events.is_empty() {
            return Ok(());
        }
        let n_streams = self.cpus.len().max(1);
        for &(slot, n) in &log.counts[b.start as usize..b.end as usize] {
            let (cpu, op) = match self.ev_nodes.get(slot as usize).copied().flatten() {
                Some(x) => x,
                None => {
                    let s = slot as usize % n_streams;
                    let cpu_id = log.slot_cpu.get(&slot).copied().unwrap_or(0x8000_0000 | s as u32);
                    let cpu = Self::cpu_node(cube, cpu_id, s);
                    let name = &self.names[slot as usize / n_streams];
                    let op = cube.schema.dims[OPERATION].member(&[operation_kind(name), name]);
                    if let Some(e) = self.ev_nodes.get_mut(slot as usize) {
                        *e = Some((cpu, op));
                    }
                    (cpu, op)
                }
            };
            self.update(
                cube,
                b.first,
                |a| &mut a.m_events,
                [self.machine(slot as usize % n_streams), cpu.0, 0, 0, op.0],
                Delta { sum: i64::from(n), updates: i64::from(n), each: 1 },
            )?;
        }
        Ok(())
    }

    /// Thread `tid` on stream `s` moved `m` at `t`.
    fn moved(&mut self, cube: &mut Cube, s: usize, t: i64, tid: i32, m: Transfer) -> Result<()> {
        let p = self.process_node(cube, tid);
        let n = m.bytes as i64;
        let f = match m.file {
            Some(f) => {
                let machine = self.machine(s);
                if let Some(h) = self.held.get_mut(&f) {
                    h.push((p, m.read, n, machine));
                }
                self.paths[f as usize]
            }
            None => cube.schema.dims[FILE].member(&["?", "?", "?", "?"]),
        };
        self.update(cube, t, bytes_metric(m.read), [self.machine(s), 0, p.0, f.0, 0], Delta { sum: n, updates: 1, each: n })
    }

    /// The statedump at `t` named the fd whose bytes placeholder `held` holds: they move
    /// to `file` at `t` (as `analyze` of a prefix ending after `t` gives them to `file`,
    /// and of one ending before to the placeholder). The move is a sum only: no update
    /// is counted, no extreme changes.
    fn give_held(&mut self, cube: &mut Cube, t: i64, held: u32, file: u32) -> Result<()> {
        let (from, to) = (self.paths[held as usize], self.paths[file as usize]);
        for (p, read, n, machine) in self.held.remove(&held).unwrap_or_default() {
            let metrics = std::mem::take(bytes_metric(read)(self));
            let mut r = Ok(());
            for (f, sum) in [(from, -n), (to, n)] {
                r = r.and(self.update_sum(cube, t, &metrics, [machine, 0, p.0, f.0, 0], sum));
            }
            *bytes_metric(read)(self) = metrics;
            r?;
        }
        Ok(())
    }

    /// Credits the running threads up to the last event (end of the trace) and closes
    /// the cube's frames.
    pub fn finish(&mut self, cube: &mut Cube) -> Result<()> {
        self.cross_boundary(cube)?;
        cube.finish()
    }
}
