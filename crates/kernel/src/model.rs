//! Kernel facts shared by the analyses, as mergeable pieces: what a thread is called
//! and which process it belongs to (last writer wins, in time order), optionally every
//! name it took and from when ([`Info::with_names`]), and the time span of the events
//! seen; and a fast hasher for small integer keys.

use std::collections::HashMap;
use std::hash::{BuildHasherDefault, Hasher};

use ctf::plan::FieldHandle;
use ctf::stream::{Copied, CopyRequest, EventRef};

use crate::layout::{comm_of_path, i32_of, EvClass, Kind};
use crate::tid_index::TidIndex;

/// A multiply-rotate hasher (as rustc's FxHash) for tids, pids and fds: keys come from
/// the trace, not from an adversary, and SipHash costs more than the rest of the work.
#[derive(Debug, Clone, Copy, Default)]
pub struct FxHasher(u64);

const FX_K: u64 = 0x517c_c1b7_2722_0a95;

impl Hasher for FxHasher {
    #[inline]
    fn write(&mut self, bytes: &[u8]) {
        for chunk in bytes.chunks(8) {
            let mut b = [0u8; 8];
            b[..chunk.len()].copy_from_slice(chunk);
            self.write_u64(u64::from_le_bytes(b));
        }
    }
    #[inline]
    fn write_u64(&mut self, v: u64) {
        self.0 = (self.0.rotate_left(5) ^ v).wrapping_mul(FX_K);
    }
    #[inline]
    fn write_u32(&mut self, v: u32) {
        self.write_u64(u64::from(v));
    }
    #[inline]
    fn write_i32(&mut self, v: i32) {
        self.write_u64(u64::from(v as u32));
    }
    #[inline]
    fn write_usize(&mut self, v: usize) {
        self.write_u64(v as u64);
    }
    #[inline]
    fn finish(&self) -> u64 {
        self.0
    }
}

/// Bytes as text, invalid UTF-8 replaced (as [`String::from_utf8_lossy`] gives it; valid
/// text, the common case, is checked by the faster [`std::str::from_utf8`]).
#[inline]
pub fn text_of(b: &[u8]) -> std::borrow::Cow<'_, str> {
    match std::str::from_utf8(b) {
        Ok(s) => std::borrow::Cow::Borrowed(s),
        Err(_) => String::from_utf8_lossy(b),
    }
}

/// A `HashMap` with [`FxHasher`].
pub type FxMap<K, V> = HashMap<K, V, BuildHasherDefault<FxHasher>>;

/// First and last event timestamps (ns from origin).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Span {
    /// First and last timestamp seen; `lo > hi` while none is.
    lo: i64,
    hi: i64,
}

impl Default for Span {
    fn default() -> Self {
        Span { lo: i64::MAX, hi: i64::MIN }
    }
}

impl Span {
    /// First timestamp.
    #[inline]
    pub fn begin(&self) -> Option<i64> {
        (self.lo <= self.hi).then_some(self.lo)
    }
    /// Last timestamp.
    #[inline]
    pub fn end(&self) -> Option<i64> {
        (self.lo <= self.hi).then_some(self.hi)
    }
    /// Widens the span to `t` (called event by event: branches, predicted, as time
    /// mostly moves forward).
    #[inline]
    pub fn see(&mut self, t: Option<i64>) {
        if let Some(t) = t {
            if t > self.hi {
                self.hi = t;
            }
            if t < self.lo {
                self.lo = t;
            }
        }
    }
    /// Widens the span to `[first, last]`.
    #[inline]
    pub fn see_range(&mut self, first: i64, last: i64) {
        self.see(Some(first));
        self.see(Some(last));
    }
    /// Union of two spans.
    pub fn merge(self, o: Span) -> Span {
        Span { lo: self.lo.min(o.lo), hi: self.hi.max(o.hi) }
    }
}

/// Where an item falls in the time-merged order of its slice: `(order, stream)` of
/// the engine's `Ctx`. Items of one stream with equal versions come in stream order.
pub type Version = (i64, usize);

/// What is known of a thread.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ThreadInfo {
    /// Process id.
    pub pid: Option<i32>,
    /// Command name (the latest seen).
    pub comm: Option<String>,
    /// Versions of the events that set `pid` and `comm` (meaningful inside one chunk).
    at: (Version, Version),
    /// The raw `char[16]` array `comm` was last decoded from, when it was: a switch
    /// naming the thread with the same array changes nothing but the version.
    raw: Option<[u8; 16]>,
}

/// A thread name as an event gives it.
#[derive(Debug, Clone, Copy)]
pub enum Name<'a> {
    /// Bytes of a string (up to its end or first zero byte).
    Bytes(&'a [u8]),
    /// A raw `char[16]` (the name is up to its first zero byte): a thread last named
    /// from the same array keeps its name without a decode.
    Raw(&'a [u8; 16]),
}

/// A name a thread took ([`Info::names_of`]): from the first event of a run of events
/// that gave it the same name.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Named {
    /// Timestamp (ns from origin, the event's [`Version`] order) of that first event.
    pub since: i64,
    /// Whether the name begins at that event: a fork naming its child or an exec. Else
    /// (a switch or the statedump showing it) the thread may have had it before.
    pub starts: bool,
    /// The name.
    pub name: String,
}

/// tid → [`ThreadInfo`], from `sched_switch`, `sched_process_fork`/`exec` and
/// `lttng_statedump_process_state`. Inside a chunk the event with the latest
/// [`Version`] wins, whatever order the streams were read in; merge: the later chunk's
/// values win.
///
/// With [`Info::with_names`] it also keeps each thread's name history: a name is
/// noted when it differs from the thread's last noted one (or begins: a fork, an
/// exec), and a merge appends the later chunk's history, dropping its first name
/// where it only repeats the earlier chunk's last (the same rule at the boundary, so
/// the merge is associative and the history equals a serial run's). This needs the
/// events of a chunk in time order (the engine's default, merged order): a run of
/// equal names is kept as its first event.
///
/// Threads live in a slab indexed by a tid map; each stream remembers the last thread
/// named there, since the `prev_tid` of a stream's switch is usually the `next_tid`
/// of its previous one.
#[derive(Debug, Clone, Default)]
pub struct Info {
    /// tid → index in `threads`.
    slots: TidIndex,
    /// The threads, in the order first seen.
    threads: Vec<(i32, ThreadInfo)>,
    /// Per stream: the tid last named there and its index (`i32::MIN`: none).
    recent: Vec<(i32, u32)>,
    /// Whether names are kept ([`Info::with_names`]).
    keep_names: bool,
    /// With `keep_names`: per slot, the names in time order (empty otherwise).
    names: Vec<Vec<Named>>,
}

impl PartialEq for Info {
    fn eq(&self, o: &Info) -> bool {
        self.threads.len() == o.threads.len() && self.threads.iter().all(|(t, i)| o.get(*t) == Some(i))
    }
}
impl Eq for Info {}

impl Info {
    /// An empty table that also keeps every thread's names ([`Info::names_of`]; see
    /// the type's documentation: events must come in time order).
    pub fn with_names() -> Info {
        Info { keep_names: true, ..Info::default() }
    }

    /// The slot of `tid` (its index in the slab, stable for the life of this state),
    /// added when new. Analyses may keep per-thread data in vectors indexed by slot
    /// (see [`Info::merge_mapped`]).
    #[inline]
    pub fn slot(&mut self, tid: i32) -> usize {
        if let Some(i) = self.slots.get(tid) {
            return i as usize;
        }
        let i = self.threads.len();
        self.slots.insert(tid, i as u32);
        self.threads.push((tid, ThreadInfo::default()));
        i
    }
    /// [`Info::slot`] of `tid`, seen on stream `stream` (cached per stream: the
    /// `prev_tid` of a stream's switch is usually the `next_tid` of its previous one).
    #[inline(always)]
    pub fn slot_on(&mut self, tid: i32, stream: usize) -> usize {
        if let Some(&(t, i)) = self.recent.get(stream) {
            if t == tid {
                return i as usize;
            }
        }
        self.slot_on_missed(tid, stream)
    }
    /// [`Info::slot_on`] when the stream's cache holds another thread.
    #[inline(never)]
    fn slot_on_missed(&mut self, tid: i32, stream: usize) -> usize {
        let i = self.slot(tid);
        if stream >= self.recent.len() {
            self.recent.resize(stream + 1, (i32::MIN, 0));
        }
        self.recent[stream] = (tid, i as u32);
        i
    }
    /// The tid of slot `i`.
    pub fn tid_of_slot(&self, i: usize) -> i32 {
        self.threads[i].0
    }
    fn get(&self, tid: i32) -> Option<&ThreadInfo> {
        self.slots.get(tid).map(|i| &self.threads[i as usize].1)
    }
    /// Names `tid` at version `v`, unless a later event named it already; `starts`:
    /// the name begins there (a fork's child, an exec: see [`Named::starts`]).
    #[inline(never)]
    fn comm(&mut self, tid: i32, name: Name<'_>, v: Version, starts: bool) {
        let i = self.slot_on(tid, v.1);
        if self.keep_names {
            self.note(i, name, v.0, starts);
        }
        self.comm_at(i, name, v);
    }
    /// Notes name `name` of the thread of slot `i` at `since` in its history, unless
    /// it repeats the last noted name (and does not begin there).
    #[cold]
    fn note(&mut self, i: usize, name: Name<'_>, since: i64, starts: bool) {
        let b = match &name {
            Name::Bytes(b) => b,
            Name::Raw(r) => r.iter().position(|&c| c == 0).map_or(&r[..], |n| &r[..n]),
        };
        if self.names.len() <= i {
            self.names.resize(i + 1, Vec::new());
        }
        let h = &mut self.names[i];
        if !starts && h.last().is_some_and(|l| l.name.as_bytes() == b) {
            return;
        }
        h.push(Named { since, starts, name: text_of(b).into_owned() });
    }
    /// The names of `tid` in time order (empty unless [`Info::with_names`]).
    pub fn names_of(&self, tid: i32) -> &[Named] {
        self.slots.get(tid).and_then(|i| self.names.get(i as usize)).map_or(&[], Vec::as_slice)
    }
    /// Every thread `(tid, pid, names)`, in the order first seen (names empty unless
    /// [`Info::with_names`]).
    pub fn threads(&self) -> impl Iterator<Item = (i32, Option<i32>, &[Named])> + '_ {
        self.threads.iter().enumerate().map(|(i, (tid, t))| (*tid, t.pid, self.names.get(i).map_or(&[][..], Vec::as_slice)))
    }
    /// [`Info::comm`] of the thread in slot `i`.
    #[inline(never)]
    fn comm_at(&mut self, i: usize, name: Name<'_>, v: Version) {
        let t = &mut self.threads[i].1;
        if t.comm.is_some() && v < t.at.1 {
            return;
        }
        t.at.1 = v;
        // (A raw array equal to `t.raw` never comes here: `switch` handles it.)
        let raw = match name {
            Name::Raw(r) => Some(*r),
            Name::Bytes(_) => None,
        };
        let b = match &name {
            Name::Bytes(b) => b,
            Name::Raw(r) => r.iter().position(|&c| c == 0).map_or(&r[..], |n| &r[..n]),
        };
        if t.comm.as_deref().map(str::as_bytes) != Some(b) {
            t.comm = Some(text_of(b).into_owned());
        }
        t.raw = raw;
    }
    /// Gives `tid` process `pid` at version `v`, unless a later event did.
    pub fn pid(&mut self, tid: i32, pid: i32, v: Version) {
        let i = self.slot_on(tid, v.1);
        let t = &mut self.threads[i].1;
        if t.pid.is_none() || v >= t.at.0 {
            t.at.0 = v;
            t.pid = Some(pid);
        }
    }

    /// Learns from one event at version `v` (only the kinds that name threads; no
    /// allocation unless a name changes).
    #[inline]
    pub fn on_event(&mut self, ev: &EventRef<'_, '_>, c: &EvClass, v: Version) {
        match c.kind {
            Kind::Switch { prev_tid, next_tid, prev_comm, next_comm, .. } => {
                if let (Some(prev), Some(next)) = (ev.int(prev_tid), ev.int(next_tid)) {
                    self.switch(ev, [(prev as i32, prev_comm), (next as i32, next_comm)], v);
                }
            }
            Kind::Fork { child_tid, child_pid, child_comm, .. } => {
                if let Some(t) = ev.int(child_tid) {
                    if let Some(p) = i32_of(ev, child_pid) {
                        self.pid(t as i32, p, v);
                    }
                    if let Some(b) = child_comm.and_then(|n| ev.bytes(n)) {
                        self.comm(t as i32, Name::Bytes(b), v, true);
                    }
                }
            }
            Kind::Exec { tid: Some(tid), filename: Some(f) } => {
                if let (Some(t), Some(b)) = (ev.int(tid), ev.bytes(f)) {
                    self.comm(t as i32, Name::Bytes(comm_of_path(b)), v, true);
                }
            }
            Kind::ProcState { tid, pid, name } => {
                if let Some(t) = ev.int(tid) {
                    if let Some(p) = i32_of(ev, pid) {
                        self.pid(t as i32, p, v);
                    }
                    if let Some(b) = name.and_then(|n| ev.bytes(n)) {
                        self.comm(t as i32, Name::Bytes(b), v, false);
                    }
                }
            }
            _ => {}
        }
    }

    /// Learns from a `sched_switch` at version `v` whose tids the caller read:
    /// `[(prev_tid, prev_comm), (next_tid, next_comm)]`. Returns the threads' slots
    /// (`None` for tid 0, the idle task, never named); the per-stream cache then holds
    /// `next_tid`. A name given as the same `char[16]` as last time costs a compare.
    #[inline(always)]
    pub fn switch(&mut self, ev: &EventRef<'_, '_>, names: [(i32, Option<FieldHandle>); 2], v: Version) -> [Option<usize>; 2] {
        let name = |k: usize| {
            let h = names[k].1?;
            match ev.array_bytes(h).and_then(|a| <&[u8; 16]>::try_from(a).ok()) {
                Some(raw) => Some(Name::Raw(raw)),
                None => ev.bytes(h).map(Name::Bytes),
            }
        };
        self.switch_with([names[0].0, names[1].0], name, v)
    }

    /// [`Info::switch`] of a `sched_switch` whose fields were copied by the request of
    /// [`switch_request`]: its `[prev_tid, next_tid]` and their slots.
    #[inline(always)]
    pub fn switch_copied(&mut self, c: &Copied<'_>, v: Version) -> ([i32; 2], [Option<usize>; 2]) {
        // Names as `Info::switch` reads them: a `char[16]` is a raw name (the request
        // copies no text array of another length).
        let raw = |k: usize| c.array::<16>(k + 2).map(Name::Raw);
        let tids = [c.get(0) as i32, c.get(1) as i32];
        (tids, self.switch_with(tids, raw, v))
    }

    /// [`Info::switch`] of `[prev_tid, next_tid]` with their names read by `name(0)`
    /// and `name(1)` (only for threads other than the idle task): a `char[16]` array
    /// as [`Name::Raw`].
    #[inline(always)]
    pub fn switch_with<'n>(&mut self, tids: [i32; 2], name: impl Fn(usize) -> Option<Name<'n>>, v: Version) -> [Option<usize>; 2] {
        let mut slots = [None; 2];
        for (k, tid) in tids.into_iter().enumerate() {
            if tid == 0 {
                continue;
            }
            let i = self.slot_on(tid, v.1);
            slots[k] = Some(i);
            match name(k) {
                Some(Name::Raw(raw)) => {
                    let t = &mut self.threads[i].1;
                    if t.raw.as_ref() == Some(raw) {
                        // Named (`raw` is only kept with a name) from the same array.
                        if v >= t.at.1 {
                            t.at.1 = v;
                        }
                        continue;
                    }
                    if self.keep_names {
                        self.note(i, Name::Raw(raw), v.0, false);
                    }
                    self.comm_at(i, Name::Raw(raw), v);
                }
                Some(b @ Name::Bytes(_)) => {
                    if self.keep_names {
                        self.note(i, b, v.0, false);
                    }
                    self.comm_at(i, b, v)
                }
                None => {}
            }
        }
        slots
    }

    /// Joins `later` into `self` (earlier): later values win.
    pub fn merge(self, later: Info) -> Info {
        self.merge_mapped(later).0
    }

    /// [`Info::merge`], also returning where each slot of `later` went: `map[i]` is
    /// the merged slot of `later`'s slot `i`.
    pub fn merge_mapped(mut self, later: Info) -> (Info, Vec<u32>) {
        if self.threads.is_empty() {
            let map = (0..later.threads.len() as u32).collect();
            return (later, map);
        }
        let mut map = Vec::with_capacity(later.threads.len());
        let mut later_names = later.names.into_iter();
        for (t, i) in later.threads {
            let k = self.slot(t);
            map.push(k as u32);
            if let Some(names) = later_names.next().filter(|n| !n.is_empty()) {
                self.append_names(k, names);
            }
            let e = &mut self.threads[k].1;
            if i.pid.is_some() {
                e.pid = i.pid;
            }
            if i.comm.is_some() {
                e.comm = i.comm;
                e.raw = i.raw;
            }
        }
        (self, map)
    }

    /// Appends `later`, the names of a later chunk, to the history of slot `k`: its
    /// first name is dropped where it repeats the last one (as [`Info::note`] would).
    fn append_names(&mut self, k: usize, later: Vec<Named>) {
        self.keep_names = true;
        if self.names.len() <= k {
            self.names.resize(k + 1, Vec::new());
        }
        let h = &mut self.names[k];
        let mut later = later.into_iter().peekable();
        if let (Some(last), Some(first)) = (h.last(), later.peek()) {
            if !first.starts && first.name == last.name {
                later.next();
            }
        }
        h.extend(later);
    }

    /// The pid of `tid`, if known.
    pub fn pid_of(&self, tid: i32) -> Option<i32> {
        self.get(tid).and_then(|i| i.pid)
    }
    /// [`Info::pid_of`] and [`Info::comm_of`] of `tid`, with one look-up.
    pub fn pid_and_comm(&self, tid: i32) -> (Option<i32>, &str) {
        self.slots.get(tid).map_or((None, ""), |i| self.pid_and_comm_of_slot(i as usize))
    }
    /// [`Info::pid_and_comm`] of the thread in slot `i` (no look-up).
    pub fn pid_and_comm_of_slot(&self, i: usize) -> (Option<i32>, &str) {
        let t = &self.threads[i].1;
        (t.pid, t.comm.as_deref().unwrap_or(""))
    }
    /// The name of `tid`, or `""`.
    pub fn comm_of(&self, tid: i32) -> &str {
        self.get(tid).and_then(|i| i.comm.as_deref()).unwrap_or("")
    }
}

/// The copy request, under `label`, of a `sched_switch` class of kind `kind` (`None`
/// for other kinds), as [`Info::switch_copied`] reads it back: `[prev_tid, next_tid,
/// prev_comm, next_comm]`. Names are read in place as `char[16]`: a class whose names
/// are text arrays of another length gets none (its events take the general path, as
/// [`Info::switch`] reads them).
pub fn switch_request(kind: &Kind, label: u32) -> Option<CopyRequest> {
    let Kind::Switch { prev_tid, next_tid, prev_comm, next_comm, .. } = *kind else { return None };
    let other_length = |h: &FieldHandle| h.lazy.is_some_and(|l| l.int.is_none() && l.bytes > 0 && l.bytes != 16);
    if [prev_comm, next_comm].iter().flatten().any(other_length) {
        return None;
    }
    Some(CopyRequest { label, fields: vec![Some(prev_tid), Some(next_tid), prev_comm, next_comm] })
}
