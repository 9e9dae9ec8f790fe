//! The worker side of the build: a slice's events → a [`SliceLog`].
//!
//! A log is what a chunk of the trace contributes, in the time-merged order of the
//! slice, without knowing anything that happened before it:
//! * a *partial history* of the state-free measure (event counts): per finest frame
//!   touched by the slice, the count of each `(event name, stream)` slot;
//! * the kernel model's records ([`kernel::log::Rec`], the one chunk-local record
//!   type) of the events whose effect depends on the kernel state at the slice's start
//!   (scheduling, process and fd events, syscall entries and exits, and what the
//!   latency measures need), each stamped with its event's time, with the field values
//!   they need copied out of the packets, so that applying them in time order
//!   ([`crate::apply::Applier`]) needs no decoding. A syscall record names its issuer
//!   by its stream ([`Who::Stream`]): the applier knows who runs there. Names and
//!   paths are [`Str`]s, ranges of the log's own bytes;
//! * a [`Rec::Frame`] mark at the first event of every finest frame, which carries
//!   the timestamp of the log's previous event (the serial feed credits running
//!   threads up to the last event before each frame boundary).
//!
//! Logs of adjacent slices concatenate ([`SliceLog::append`]): the merge is
//! associative, and applying the concatenation equals applying the parts in order.

use ctf::plan::FieldHandle;
use ctf::stream::EventRef;
use ctf::trace::TraceSet;
use kernel::events::{EvKind, EventLayout};
use kernel::latency::raw_call;
use kernel::layout::{comm_of_path, cpu_of, fd_pair, i32_of, raw_entry, unknown_entry, EvClass, Kind, Layout, Sc, O_CLOEXEC};
use kernel::log::{BlockEvent, BlockRec, IrqEvent, Rec, Who};
use kernel::model::FxMap;

pub mod wire;

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

/// A byte string in a log's arena: `(offset, length)` (the form of names and paths in
/// the log's records).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Str(u32, u32);

/// A record of a [`SliceLog`].
pub type Record = Rec<Str>;

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
    /// Records in time-merged order.
    pub recs: Vec<Record>,
    /// The time of each record's event.
    pub stamps: Vec<i64>,
    /// Per frame: its counts.
    pub blocks: Vec<Block>,
    /// `(slot, events)`: slot = name index × streams + stream.
    pub counts: Vec<(u32, u32)>,
    /// Per slot first met in this log: the CPU id of its first event.
    pub slot_cpu: FxMap<u32, u32>,
    /// Bytes of the names and paths of the records.
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
    /// Per thread: the name its last [`Rec::Name`] of this log gave it. A name equal
    /// to it is not logged again: applied in order, it would change nothing (every
    /// rename is a `Name` record, and nothing comes between this log's records).
    named: FxMap<i32, Str>,
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

    /// `b`, kept in the arena.
    fn keep_bytes(&mut self, b: &[u8]) -> Str {
        let s = Str(self.arena.len() as u32, b.len() as u32);
        self.arena.extend_from_slice(b);
        s
    }

    fn keep(&mut self, ev: &EventRef<'_, '_>, h: Option<FieldHandle>) -> Option<Str> {
        Some(self.keep_bytes(ev.bytes(h?)?))
    }

    /// Appends `r`, at `t`.
    #[inline(always)]
    fn put(&mut self, t: i64, r: Record) {
        self.recs.push(r);
        self.stamps.push(t);
    }

    /// Logs that `tid` is called `b` at `t` (unless this log named it so last).
    fn name(&mut self, t: i64, tid: i32, b: &[u8]) {
        if self.named.get(&tid).is_some_and(|&n| self.str(n) == b) {
            return;
        }
        let name = self.keep_bytes(b);
        self.named.insert(tid, name);
        self.put(t, Rec::Name { tid, name });
    }

    /// [`SliceLog::name`] of the name in field `h` of `ev`, if any.
    fn name_field(&mut self, ev: &EventRef<'_, '_>, t: i64, tid: i32, h: Option<FieldHandle>) {
        if let Some(b) = h.and_then(|h| ev.bytes(h)) {
            self.name(t, tid, b);
        }
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
            let block = self.blocks.len() as u32;
            self.put(t, Rec::Frame { prev: self.last, block });
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
            Kind::Other => self.push_latency(&layout.events, ev, &c, s as u32, t),
            _ => self.push_model(&layout.events, ev, &c, s as u32, t),
        }
    }

    /// Records a wake-up, interrupt or block event.
    fn push_latency(&mut self, events: &EventLayout, ev: &EventRef<'_, '_>, c: &EvClass, s: u32, t: i64) {
        let u = |h: FieldHandle| ev.uint(h).or_else(|| ev.int(h).map(|v| v as u64));
        let id = |h: FieldHandle| u(h).map(|v| v as u32);
        let irq = |what, h: FieldHandle, name| id(h).map(|id| Rec::Irq { s, what, id, name });
        let r = match events.kind(ev) {
            EvKind::Wakeup { tid } => i32_of(ev, Some(tid)).map(|tid| Rec::Wakeup { s, tid }),
            EvKind::HardEntry { irq: h, name } => {
                let name = self.keep(ev, name);
                irq(IrqEvent::HardEntry, h, name)
            }
            EvKind::HardExit { irq: h } => irq(IrqEvent::HardExit, h, None),
            EvKind::SoftRaise { vec } => irq(IrqEvent::SoftRaise, vec, None),
            EvKind::SoftEntry { vec } => irq(IrqEvent::SoftEntry, vec, None),
            EvKind::SoftExit { vec } => irq(IrqEvent::SoftExit, vec, None),
            EvKind::Block { insert, complete, dev, sector, nr_sector, tid, rwbs } => {
                let what = match (insert, complete) {
                    (true, _) => BlockEvent::Insert,
                    (_, true) => BlockEvent::Complete,
                    _ => BlockEvent::Issue,
                };
                let (dev, sector, nr) = (u(dev).unwrap_or(0), u(sector).unwrap_or(0), u(nr_sector).unwrap_or(0));
                let (cpu, write) = (cpu_of(ev, c, s as usize), rwbs.and_then(u).is_some_and(|w| w & 1 == 1));
                Some(Rec::Block(Box::new(BlockRec { s, cpu, what, dev, sector, nr, tid: i32_of(ev, tid), write })))
            }
            EvKind::BlockDevice { dev, name } => {
                let dev = u(dev).unwrap_or(0);
                self.keep(ev, Some(name)).map(|name| Rec::BlockDevice { dev, name })
            }
            EvKind::Other | EvKind::Switch { .. } => None,
        };
        if let Some(r) = r {
            self.put(t, r);
        }
    }

    /// Records a scheduling, process, fd or syscall event.
    fn push_model(&mut self, events: &EventLayout, ev: &EventRef<'_, '_>, c: &EvClass, s: u32, t: i64) {
        let g = |h: Option<FieldHandle>| h.and_then(|h| ev.int(h)).unwrap_or(-1);
        let who = Who::Stream(s);
        let r = match c.kind {
            Kind::Other | Kind::Migrate { .. } => return,
            Kind::Switch { prev_tid, next_tid, prev_comm, next_comm, .. } => {
                let (prev, next) = (ev.int(prev_tid), ev.int(next_tid));
                for (tid, h) in [(prev, prev_comm), (next, next_comm)] {
                    if let Some(tid) = tid.filter(|&t| t != 0) {
                        self.name_field(ev, t, tid as i32, h);
                    }
                }
                let (Some(prev), Some(next)) = (prev, next) else { return };
                let prio = match events.kind(ev) {
                    EvKind::Switch { next_prio } => i32_of(ev, next_prio).unwrap_or(0),
                    _ => 0,
                };
                Rec::Switch { s, cpu: cpu_of(ev, c, s as usize), prev: prev as i32, next: next as i32, prio }
            }
            Kind::Fork { parent_tid, parent_pid, child_tid, child_pid, child_comm } => {
                let Some(ct) = i32_of(ev, Some(child_tid)) else { return };
                self.name_field(ev, t, ct, child_comm);
                Rec::Fork { child_tid: ct, child_pid: i32_of(ev, child_pid), parent_tid: i32_of(ev, parent_tid), parent_pid: i32_of(ev, parent_pid) }
            }
            Kind::Exec { tid, filename } => {
                let tid = i32_of(ev, tid);
                if let (Some(tt), Some(f)) = (tid, filename.and_then(|h| ev.bytes(h))) {
                    self.name(t, tt, comm_of_path(f));
                }
                Rec::Exec { who: tid.map_or(who, Who::Tid) }
            }
            Kind::ProcState { tid, pid, name } => {
                let Some(tt) = i32_of(ev, Some(tid)) else { return };
                self.name_field(ev, t, tt, name);
                let Some(pid) = i32_of(ev, pid) else { return };
                Rec::ProcState { tid: tt, pid }
            }
            Kind::FdDump { pid, fd, filename, flags } => {
                let (Some(pid), Some(fd)) = (i32_of(ev, Some(pid)), i32_of(ev, Some(fd))) else { return };
                let path = match self.keep(ev, filename) {
                    Some(p) => p,
                    None => self.keep_bytes(b"unknown"),
                };
                let flags = g(flags);
                Rec::FdDump { pid, fd, path, cloexec: flags >= 0 && flags & O_CLOEXEC != 0 }
            }
            Kind::Entry { sc, a0, a1, a2, path } => {
                self.put(t, Rec::Call { who, call: c.name });
                let path = self.keep(ev, path);
                Rec::Entry { who, sc, a0: g(a0) as i32, a1: g(a1) as i32, a2: g(a2) as i32, path }
            }
            Kind::OtherEntry => {
                self.put(t, Rec::Call { who, call: c.name });
                Rec::OtherEntry { who }
            }
            Kind::RawEntry { id, args, arch } => {
                self.put(t, Rec::Call { who, call: raw_call(ev.uint(id).unwrap_or(0)) });
                match raw_entry(ev, id, args, arch) {
                    Some((sc, [a0, a1, a2])) => Rec::Entry { who, sc, a0: a0 as i32, a1: a1 as i32, a2: a2 as i32, path: None },
                    None => Rec::OtherEntry { who },
                }
            }
            Kind::UnknownEntry { id, args } => {
                self.put(t, Rec::Call { who, call: c.name });
                match unknown_entry(ev, id, args) {
                    Some((sc, [a0, a1, a2])) => Rec::Entry { who, sc, a0: a0 as i32, a1: a1 as i32, a2: a2 as i32, path: None },
                    None => Rec::OtherEntry { who },
                }
            }
            Kind::Exit { sc, ret, fds } => match (g(ret), fd_pair(ev, fds)) {
                (0, Some(fds)) => Rec::Pair { who, sc, fds },
                (ret, _) => Rec::Exit { who, sc, ret },
            },
            Kind::RawExit { id, ret, arch } => Rec::Exit { who, sc: ev.uint(id).and_then(|nr| Sc::from_raw(arch, nr)), ret: g(ret) },
        };
        self.put(t, r);
    }

    /// Empties the log (keeping its buffers) for the events that follow it.
    pub fn clear(&mut self) {
        self.seal();
        self.recs.clear();
        self.stamps.clear();
        self.blocks.clear();
        self.counts.clear();
        self.slot_cpu.clear();
        self.arena.clear();
        self.named.clear();
        self.events = 0;
        self.last = None;
    }

    /// Appends the log of the slice just after this one.
    pub fn append(&mut self, mut later: SliceLog) {
        self.seal();
        later.seal();
        self.named.clear();
        let (recs0, blocks0, counts0, arena0) = (self.recs.len(), self.blocks.len() as u32, self.counts.len() as u32, self.arena.len() as u32);
        self.recs.extend(later.recs);
        self.stamps.extend(later.stamps);
        for r in &mut self.recs[recs0..] {
            if let Rec::Frame { prev, block } = r {
                *block += blocks0;
                if prev.is_none() {
                    *prev = self.last;
                }
            } else if let Some(Str(o, _)) = r.path_mut() {
                *o += arena0;
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
