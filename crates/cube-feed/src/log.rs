//! The worker side of the build: a slice's events → a [`SliceLog`].
//!
//! A log is what a chunk of the trace contributes, in the time-merged order of the
//! slice, without knowing anything that happened before it:
//! * a *partial history* of the state-free measure (event counts): per finest frame
//!   touched by the slice, the count of each `(event name, stream)` slot;
//! * the *facts* whose effect depends on the kernel state at the slice's start
//!   (scheduling, process and fd events, syscall entries and exits), with the field
//!   values they need copied out of the packets, so that applying them in time order
//!   ([`crate::apply::Applier`]) needs no decoding;
//! * a [`Fact::Frame`] mark at the first event of every finest frame, which carries
//!   the timestamp of the log's previous event (the serial feed credits running
//!   threads up to the last event before each frame boundary).
//!
//! Logs of adjacent slices concatenate ([`SliceLog::append`]): the merge is
//! associative, and applying the concatenation equals applying the parts in order.

use ctf::plan::FieldHandle;
use ctf::stream::EventRef;
use ctf::trace::TraceSet;
use kernel::events::{EvKind, EventLayout};
use kernel::latency::{raw_call, CallId};
use kernel::layout::{cpu_of, fd_pair, i32_of, unknown_entry, EvClass, Kind, Layout, Sc};
use kernel::model::FxMap;

/// What the feed needs to know of every event class: the kernel model's layout and
/// the latency events'.
#[derive(Debug, Clone)]
pub struct FeedLayout {
    /// Scheduling, process, fd and syscall events.
    pub model: Layout,
    /// Wake-ups, interrupts, block requests.
    pub events: EventLayout,
}

impl FeedLayout {
    /// Resolves every event class of `set`.
    pub fn new(set: &TraceSet) -> FeedLayout {
        FeedLayout { model: Layout::new(set), events: EventLayout::new(set) }
    }
}

/// A byte string in a log's arena: `(offset, length)`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Str(u32, u32);

/// One state-dependent event (or a frame mark), in time order. Fields: `t` the
/// timestamp, `s` the stream index, the rest the event's fields of the same names.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[allow(missing_docs)]
pub enum Fact {
    /// The first event of a finest frame: `prev` is the timestamp of the log's event
    /// just before it (`None` at the log's first event); `block` indexes the frame's
    /// event counts in [`SliceLog::blocks`].
    Frame { t: i64, prev: Option<i64>, block: u32 },
    /// `sched_switch` on stream `s`, whose CPU id is `cpu`.
    Switch { t: i64, s: u32, cpu: u32, prev: Option<i64>, next: Option<i64>, prev_comm: Option<Str>, next_comm: Option<Str> },
    /// `sched_process_fork`.
    Fork { t: i64, child_tid: i32, child_pid: Option<i32>, parent_tid: Option<i32>, parent_pid: Option<i32>, child_comm: Option<Str> },
    /// `sched_process_exec` on stream `s`.
    Exec { t: i64, s: u32, tid: Option<i32>, filename: Option<Str> },
    /// `lttng_statedump_process_state`.
    ProcState { t: i64, tid: i32, pid: Option<i32>, name: Option<Str> },
    /// `lttng_statedump_file_descriptor` (`flags` -1 when absent).
    FdDump { t: i64, pid: i32, fd: i32, filename: Option<Str>, flags: i64 },
    /// Entry of a syscall the model follows (arguments -1 when absent), named `call`.
    Entry { t: i64, s: u32, call: CallId, sc: Sc, a0: i64, a1: i64, a2: i64, path: Option<Str> },
    /// Entry of any other syscall, named `call`: forgets the pending one.
    OtherEntry { t: i64, s: u32, call: CallId },
    /// A syscall exit (`sc` `None`: generic or unknown; `ret` -1 when absent; `fds` a
    /// pipe or socketpair exit's two new fds).
    Exit { t: i64, s: u32, sc: Option<Sc>, ret: i64, fds: Option<[i32; 2]> },
    /// A wake-up of `tid` (`sched_waking`, `sched_wakeup`, `sched_wakeup_new`).
    Wakeup { t: i64, s: u32, tid: i32 },
    /// An interrupt handler event on stream `s` (IRQ number or softirq vector `id`;
    /// `name` the hard IRQ entry's handler name).
    Irq { t: i64, s: u32, what: IrqEvent, id: u32, name: Option<Str> },
    /// A block request event (`tid`: the issuing thread, on issues).
    Block { t: i64, s: u32, what: BlockEvent, dev: u64, sector: u64, nr: u64, tid: Option<i32> },
    /// `lttng_statedump_block_device`: disk `dev` is called `name`.
    BlockDevice { t: i64, dev: u64, name: Str },
}

/// Which interrupt event a [`Fact::Irq`] is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[allow(missing_docs)] // the tracepoints of the same names
pub enum IrqEvent {
    HardEntry,
    HardExit,
    SoftRaise,
    SoftEntry,
    SoftExit,
}

/// Which block request event a [`Fact::Block`] is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[allow(missing_docs)] // `block_rq_insert`, `block_rq_issue`, `block_rq_complete`
pub enum BlockEvent {
    Insert,
    Issue,
    Complete,
}

impl Fact {
    /// The fact's timestamp.
    pub fn t(&self) -> i64 {
        match *self {
            Fact::Frame { t, .. }
            | Fact::Switch { t, .. }
            | Fact::Fork { t, .. }
            | Fact::Exec { t, .. }
            | Fact::ProcState { t, .. }
            | Fact::FdDump { t, .. }
            | Fact::Entry { t, .. }
            | Fact::OtherEntry { t, .. }
            | Fact::Exit { t, .. }
            | Fact::Wakeup { t, .. }
            | Fact::Irq { t, .. }
            | Fact::Block { t, .. }
            | Fact::BlockDevice { t, .. } => t,
        }
    }
}

/// The event counts of one frame (or of the slice's part of it).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Block {
    /// Range of [`SliceLog::counts`].
    pub start: u32,
    /// End of the range.
    pub end: u32,
    /// Timestamp of the frame's first event in this log.
    pub first: i64,
    /// Timestamp of the frame's last event in this log.
    pub last: i64,
}

/// What a slice contributes (see the module docs).
#[derive(Debug, Clone, Default)]
pub struct SliceLog {
    /// Facts in time-merged order.
    pub facts: Vec<Fact>,
    /// Per frame: its counts.
    pub blocks: Vec<Block>,
    /// `(slot, events)`: slot = name index × streams + stream.
    pub counts: Vec<(u32, u32)>,
    /// Per slot first met in this log: the CPU id of its first event.
    pub slot_cpu: FxMap<u32, u32>,
    /// Bytes of the strings of the facts.
    pub arena: Vec<u8>,
    /// Events with a timestamp.
    pub events: u64,
    /// Timestamp of the last event.
    pub last: Option<i64>,
    // Builder state (not part of the value).
    g0: i64,
    streams: usize,
    frame_end: i64,
    /// Whether the last block still takes counts.
    block_open: bool,
    open: Vec<u32>,
    dirty: Vec<u32>,
}

impl SliceLog {
    /// An empty log for frames of `g0` ns over a set of `streams` streams with
    /// `names` event names.
    pub fn new(g0: i64, streams: usize, names: usize) -> SliceLog {
        SliceLog { g0: g0.max(1), streams: streams.max(1), frame_end: i64::MIN, open: vec![0; names * streams.max(1)], ..Default::default() }
    }

    /// The bytes of `s`.
    pub fn str(&self, s: Str) -> &[u8] {
        &self.arena[s.0 as usize..(s.0 + s.1) as usize]
    }

    fn keep(&mut self, ev: &EventRef<'_, '_>, h: Option<FieldHandle>) -> Option<Str> {
        let b = ev.bytes(h?)?;
        let s = Str(self.arena.len() as u32, b.len() as u32);
        self.arena.extend_from_slice(b);
        Some(s)
    }

    /// Closes the open frame's counts.
    fn close_block(&mut self) {
        if !std::mem::take(&mut self.block_open) {
            return;
        }
        if let Some(b) = self.blocks.last_mut() {
            if !self.dirty.is_empty() {
                self.dirty.sort_unstable();
                for &slot in &self.dirty {
                    let n = std::mem::take(&mut self.open[slot as usize]);
                    self.counts.push((slot, n));
                }
                self.dirty.clear();
                b.end = self.counts.len() as u32;
            }
        }
    }

    /// Ends the log (closes the last frame's counts).
    pub fn seal(&mut self) {
        self.close_block();
    }

    /// Records event `ev` of stream `s` (events in time-merged order).
    pub fn push_event(&mut self, layout: &FeedLayout, ev: &EventRef<'_, '_>, s: usize) {
        let Some(t) = ev.ts() else { return };
        self.events += 1;
        if t >= self.frame_end || !self.block_open {
            self.close_block();
            self.block_open = true;
            self.facts.push(Fact::Frame { t, prev: self.last, block: self.blocks.len() as u32 });
            let start = self.counts.len() as u32;
            self.blocks.push(Block { start, end: start, first: t, last: t });
            self.frame_end = t.div_euclid(self.g0).saturating_mul(self.g0).saturating_add(self.g0);
        }
        self.last = Some(t);
        if let Some(b) = self.blocks.last_mut() {
            b.last = t;
        }
        let Some(c) = layout.model.class(ev).copied() else { return };
        let slot = c.name as usize * self.streams + s;
        if let Some(n) = self.open.get_mut(slot) {
            if *n == 0 {
                self.dirty.push(slot as u32);
            }
            *n += 1;
            self.slot_cpu.entry(slot as u32).or_insert_with(|| cpu_of(ev, &c, s));
        }
        match c.kind {
            Kind::Other => self.push_latency_fact(&layout.events, ev, s as u32, t),
            _ => self.push_fact(ev, &c, s as u32, t),
        }
    }

    /// Records a wake-up, interrupt or block event.
    fn push_latency_fact(&mut self, events: &EventLayout, ev: &EventRef<'_, '_>, s: u32, t: i64) {
        let u = |h: FieldHandle| ev.uint(h).or_else(|| ev.int(h).map(|v| v as u64));
        let id = |h: FieldHandle| u(h).map(|v| v as u32);
        let irq = |what, h: FieldHandle, name| id(h).map(|id| Fact::Irq { t, s, what, id, name });
        let f = match events.kind(ev) {
            EvKind::Wakeup { tid } => i32_of(ev, Some(tid)).map(|tid| Fact::Wakeup { t, s, tid }),
            EvKind::HardEntry { irq: h, name } => {
                let name = self.keep(ev, name);
                irq(IrqEvent::HardEntry, h, name)
            }
            EvKind::HardExit { irq: h } => irq(IrqEvent::HardExit, h, None),
            EvKind::SoftRaise { vec } => irq(IrqEvent::SoftRaise, vec, None),
            EvKind::SoftEntry { vec } => irq(IrqEvent::SoftEntry, vec, None),
            EvKind::SoftExit { vec } => irq(IrqEvent::SoftExit, vec, None),
            EvKind::Block { insert, complete, dev, sector, nr_sector, tid, .. } => {
                let what = match (insert, complete) {
                    (true, _) => BlockEvent::Insert,
                    (_, true) => BlockEvent::Complete,
                    _ => BlockEvent::Issue,
                };
                let (dev, sector, nr) = (u(dev).unwrap_or(0), u(sector).unwrap_or(0), u(nr_sector).unwrap_or(0));
                Some(Fact::Block { t, s, what, dev, sector, nr, tid: i32_of(ev, tid) })
            }
            EvKind::BlockDevice { dev, name } => {
                let dev = u(dev).unwrap_or(0);
                self.keep(ev, Some(name)).map(|name| Fact::BlockDevice { t, dev, name })
            }
            EvKind::Other | EvKind::Switch { .. } => None,
        };
        self.facts.extend(f);
    }

    fn push_fact(&mut self, ev: &EventRef<'_, '_>, c: &EvClass, s: u32, t: i64) {
        let g = |h: Option<FieldHandle>| h.and_then(|h| ev.int(h)).unwrap_or(-1);
        let f = match c.kind {
            Kind::Other | Kind::Migrate { .. } => return,
            Kind::Switch { prev_tid, next_tid, prev_comm, next_comm } => {
                let (prev_comm, next_comm) = (self.keep(ev, prev_comm), self.keep(ev, next_comm));
                Fact::Switch { t, s, cpu: cpu_of(ev, c, s as usize), prev: ev.int(prev_tid), next: ev.int(next_tid), prev_comm, next_comm }
            }
            Kind::Fork { parent_tid, parent_pid, child_tid, child_pid, child_comm } => {
                let Some(ct) = i32_of(ev, Some(child_tid)) else { return };
                let child_comm = self.keep(ev, child_comm);
                Fact::Fork {
                    t,
                    child_tid: ct,
                    child_pid: i32_of(ev, child_pid),
                    parent_tid: i32_of(ev, parent_tid),
                    parent_pid: i32_of(ev, parent_pid),
                    child_comm,
                }
            }
            Kind::Exec { tid, filename } => {
                let filename = self.keep(ev, filename);
                Fact::Exec { t, s, tid: i32_of(ev, tid), filename }
            }
            Kind::ProcState { tid, pid, name } => {
                let Some(tt) = i32_of(ev, Some(tid)) else { return };
                let name = self.keep(ev, name);
                Fact::ProcState { t, tid: tt, pid: i32_of(ev, pid), name }
            }
            Kind::FdDump { pid, fd, filename, flags } => {
                let (Some(pid), Some(fd)) = (i32_of(ev, Some(pid)), i32_of(ev, Some(fd))) else { return };
                let filename = self.keep(ev, filename);
                Fact::FdDump { t, pid, fd, filename, flags: g(flags) }
            }
            Kind::Entry { sc, a0, a1, a2, path } => {
                let path = self.keep(ev, path);
                Fact::Entry { t, s, call: c.name, sc, a0: g(a0), a1: g(a1), a2: g(a2), path }
            }
            Kind::OtherEntry => Fact::OtherEntry { t, s, call: c.name },
            Kind::RawEntry { id } => Fact::OtherEntry { t, s, call: raw_call(ev.uint(id).unwrap_or(0)) },
            Kind::UnknownEntry { id, args } => match unknown_entry(ev, id, args) {
                Some((sc, [a0, a1, a2])) => Fact::Entry { t, s, call: c.name, sc, a0, a1, a2, path: None },
                None => Fact::OtherEntry { t, s, call: c.name },
            },
            Kind::Exit { sc, ret, fds } => Fact::Exit { t, s, sc, ret: g(ret), fds: fd_pair(ev, fds) },
            Kind::RawExit { id, ret, arch } => Fact::Exit { t, s, sc: ev.uint(id).and_then(|nr| Sc::from_raw(arch, nr)), ret: g(ret), fds: None },
        };
        self.facts.push(f);
    }

    /// Empties the log (keeping its buffers) for the events that follow it.
    pub fn clear(&mut self) {
        self.seal();
        self.facts.clear();
        self.blocks.clear();
        self.counts.clear();
        self.slot_cpu.clear();
        self.arena.clear();
        self.events = 0;
        self.last = None;
    }

    /// Appends the log of the slice just after this one.
    pub fn append(&mut self, mut later: SliceLog) {
        self.seal();
        later.seal();
        let (facts0, blocks0, counts0, arena0) = (self.facts.len(), self.blocks.len() as u32, self.counts.len() as u32, self.arena.len() as u32);
        let shift = |s: Option<Str>| s.map(|Str(o, l)| Str(o + arena0, l));
        self.facts.extend(later.facts);
        for f in &mut self.facts[facts0..] {
            match f {
                Fact::Frame { prev, block, .. } => {
                    *block += blocks0;
                    if prev.is_none() {
                        *prev = self.last;
                    }
                }
                Fact::Switch { prev_comm, next_comm, .. } => (*prev_comm, *next_comm) = (shift(*prev_comm), shift(*next_comm)),
                Fact::Fork { child_comm: s, .. }
                | Fact::Exec { filename: s, .. }
                | Fact::ProcState { name: s, .. }
                | Fact::FdDump { filename: s, .. }
                | Fact::Entry { path: s, .. }
                | Fact::Irq { name: s, .. } => *s = shift(*s),
                Fact::BlockDevice { name, .. } => *name = shift(Some(*name)).unwrap_or(*name),
                Fact::OtherEntry { .. } | Fact::Exit { .. } | Fact::Wakeup { .. } | Fact::Block { .. } => {}
            }
        }
        self.blocks.extend(later.blocks.iter().map(|b| Block { start: b.start + counts0, end: b.end + counts0, ..*b }));
        self.counts.extend(later.counts);
        for (slot, cpu) in later.slot_cpu {
            self.slot_cpu.entry(slot).or_insert(cpu);
        }
        self.arena.extend(later.arena);
        self.events += later.events;
        self.last = later.last.or(self.last);
        self.frame_end = later.frame_end.max(self.frame_end);
    }
}
