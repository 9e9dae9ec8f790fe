//! The latency measures of the applier, over the kernel crate's replayed latency state
//! ([`kernel::latency::replay::Latencies`], the rules of `analyze -a
//! syscall|sched|irq|block`, which keeps who runs on each CPU, the pending wake-ups,
//! each CPU's interrupt handlers and the pending block requests): each
//! completed wait or run is one update, at the time it ends, of
//! * `syscall_ns` by thread and system call (the Operation member `syscall > NAME`),
//!   from the calls the kernel's replay completes ([`kernel::replay::Completed`]: the
//!   one pending-call state, as `analyze -a syscall` reads it); a call belongs to the
//!   task running on its CPU (before the CPU's first switch, that switch's
//!   `prev_tid`, as the other measures);
//! * `wakeup_ns` by woken thread and the CPU that runs it;
//! * `irq_ns` by handler (`irq > N NAME`, `softirq > VECTOR`) and CPU;
//! * `block_ns` by issuing thread and disk (`block > DISK`: the statedump's name, else
//!   `major:minor` until the statedump names it).

use cube::dims::NodeId;
use cube::schema::Schema;
use cube::{Cube, MetricId, Result};
use kernel::events::{dev_name, softirq_name};
use kernel::latency::replay::{self, Latencies as Kernel};
use kernel::latency::{call_name, elapsed, CallId, Handled, Issued, Wait};
use kernel::model::FxMap;
use kernel::replay::Completed;

use super::{Applier, Delta, OPERATION};
use crate::log::{Record, SliceLog, Str};
use kernel::log::{BlockRec, IrqEvent, Rec};

/// The latency state beside the applier's (see the module documentation).
#[derive(Debug, Default)]
pub(super) struct Latencies {
    m_syscall: Vec<MetricId>,
    m_wakeup: Vec<MetricId>,
    m_irq: Vec<MetricId>,
    m_block: Vec<MetricId>,
    /// Operation member per call name (renumbered with the layout).
    call_nodes: FxMap<CallId, NodeId>,
    /// The kernel's latency state.
    kernel: Kernel,
    /// Per hard IRQ: the handler name its first entry gave.
    irq_names: FxMap<u32, Box<str>>,
    /// Operation member per `(hard, IRQ or vector)`.
    irq_nodes: FxMap<(bool, u32), NodeId>,
    /// Disk names from the statedump.
    disks: FxMap<u64, Box<str>>,
    disk_nodes: FxMap<u64, NodeId>,
}

impl Latencies {
    /// The state for the metrics of `schema`.
    pub(super) fn new(schema: &Schema) -> Latencies {
        Latencies {
            m_syscall: schema.metrics_of("syscall_ns"),
            m_wakeup: schema.metrics_of("wakeup_ns"),
            m_irq: schema.metrics_of("irq_ns"),
            m_block: schema.metrics_of("block_ns"),
            ..Default::default()
        }
    }

    /// Whether `syscall_ns` is measured (the replay then tells the calls completed).
    pub(super) fn wants_calls(&self) -> bool {
        !self.m_syscall.is_empty()
    }

    /// The event names were renumbered (a live session's new metadata).
    pub(super) fn relayout(&mut self) {
        self.call_nodes.clear();
    }
}

/// What one step of the kernel's replay completed, for the applier to measure after
/// it (the measure needs the applier, which holds the replay).
#[derive(Default)]
struct Told {
    woken: Option<Wait>,
    handled: Option<Handled>,
    served: Option<(Issued<BlockRec>, u64)>,
}

impl replay::Sink for Told {
    fn woken(&mut self, _tid: i32, _cpu: u32, _prio: i32, w: Wait) {
        self.woken = Some(w);
    }

    fn handled(&mut self, _hard: bool, h: Handled) {
        self.handled = Some(h);
    }

    fn served(&mut self, issued: &Issued<BlockRec>, _complete: &BlockRec, latency: u64) {
        self.served = Some((*issued, latency));
    }
}

/// One update of a duration `d`.
fn once(d: u64) -> Delta {
    let d = d.min(i64::MAX as u64) as i64;
    Delta { sum: d, updates: 1, each: d }
}

impl Applier {
    /// Entry of system call `call` on stream `s`: its Operation member is made now
    /// (members appear as the stream reveals them); the call is pending in the
    /// kernel's replay, which completes it ([`Applier::call_completed`]).
    pub(super) fn call_entry(&mut self, cube: &mut Cube, s: usize, call: CallId) {
        if self.lat.wants_calls() && self.who(s).is_some_and(|t| t != 0) {
            self.call_node(cube, call);
        }
    }

    /// The Operation member of call `call` (made when new).
    fn call_node(&mut self, cube: &mut Cube, call: CallId) -> NodeId {
        if let Some(&n) = self.lat.call_nodes.get(&call) {
            return n;
        }
        let n = cube.schema.dims[OPERATION].member(&["syscall", &call_name(&self.names, call)]);
        self.lat.call_nodes.insert(call, n);
        n
    }

    /// Thread `tid`, running on stream `s`, completed call `c` (the swapper's calls
    /// are not measured).
    pub(super) fn call_completed(&mut self, cube: &mut Cube, s: usize, tid: i32, c: Completed) -> Result<()> {
        if tid == 0 || !self.lat.wants_calls() {
            return Ok(());
        }
        let op = self.call_node(cube, c.name);
        let p = self.process_node(cube, tid);
        self.update(cube, c.end, |a| &mut a.lat.m_syscall, [self.machine(s), 0, p.0, 0, op.0], once(elapsed(c.begin, c.end)))
    }

    /// A wake-up of `tid` on stream `s` at `t`.
    pub(super) fn wakeup(&mut self, s: usize, t: i64, tid: i32) {
        if !self.lat.m_wakeup.is_empty() {
            self.lat.kernel.wakeup(t, s as u32, tid);
        }
    }

    /// Stream `s` (CPU id `cpu`) switched to `next` (priority `prio`) at `t`: ends its
    /// wait.
    pub(super) fn switched_in(&mut self, cube: &mut Cube, s: usize, cpu: u32, t: i64, next: i32, prio: i32) -> Result<()> {
        let mut told = Told::default();
        self.lat.kernel.switch(t, s as u32, cpu, next, prio, &mut told);
        let Some(w) = told.woken else { return Ok(()) };
        let cpu = self.cpus.get(s).copied().flatten().map_or(0, |n| n.0);
        let p = self.process_node(cube, next);
        self.update(cube, t, |a| &mut a.lat.m_wakeup, [self.machine(s), cpu, p.0, 0, 0], once(w.latency))
    }

    /// An interrupt event ([`Rec::Irq`]) at `t`.
    pub(super) fn irq(&mut self, cube: &mut Cube, log: &SliceLog, r: &Record, t: i64) -> Result<()> {
        let Rec::Irq { s, what, id, name } = *r else { return Ok(()) };
        let s = s as usize;
        if self.lat.m_irq.is_empty() {
            return Ok(());
        }
        if let (IrqEvent::HardEntry, Some(n)) = (what, name) {
            self.lat.irq_names.entry(id).or_insert_with(|| String::from_utf8_lossy(log.str(n)).into());
        }
        let mut told = Told::default();
        self.lat.kernel.irq(t, s as u32, what, id, &mut told);
        let Some(h) = told.handled else { return Ok(()) };
        let hard = what == IrqEvent::HardExit;
        let op = match self.lat.irq_nodes.get(&(hard, id)) {
            Some(&n) => n,
            None => {
                let path = if hard {
                    ["irq".to_string(), self.lat.irq_names.get(&id).map_or_else(|| id.to_string(), |n| format!("{id} {n}"))]
                } else {
                    ["softirq".to_string(), softirq_name(id)]
                };
                let n = cube.schema.dims[OPERATION].member(&[&path[0], &path[1]]);
                self.lat.irq_nodes.insert((hard, id), n);
                n
            }
        };
        let cpu = self.cpus.get(s).copied().flatten().map_or(0, |n| n.0);
        self.update(cube, t, |a| &mut a.lat.m_irq, [self.machine(s), cpu, 0, 0, op.0], once(h.duration))
    }

    /// A block request event at `t`.
    pub(super) fn block(&mut self, cube: &mut Cube, b: &BlockRec, t: i64) -> Result<()> {
        let (s, dev) = (b.s as usize, b.dev);
        if self.lat.m_block.is_empty() {
            return Ok(());
        }
        let mut told = Told::default();
        self.lat.kernel.block(t, b, &mut told);
        let Some((issued, d)) = told.served else { return Ok(()) };
        let op = match self.lat.disk_nodes.get(&dev) {
            Some(&n) => n,
            None => {
                let name = self.lat.disks.get(&dev).map_or_else(|| dev_name(dev), |n| n.to_string());
                let n = cube.schema.dims[OPERATION].member(&["block", &name]);
                self.lat.disk_nodes.insert(dev, n);
                n
            }
        };
        let p = self.process_node(cube, issued.data.tid.unwrap_or(0));
        self.update(cube, t, |a| &mut a.lat.m_block, [self.machine(s), 0, p.0, 0, op.0], once(d))
    }

    /// The statedump names disk `dev`.
    pub(super) fn block_device(&mut self, log: &SliceLog, dev: u64, name: Str) {
        self.lat.disks.entry(dev).or_insert_with(|| String::from_utf8_lossy(log.str(name)).into());
    }
}
