//! Kernel facts shared by the analyses, as mergeable pieces: what a thread is called
//! and which process it belongs to (last writer wins, in time order), and the time span
//! of the events seen; and a fast hasher for small integer keys.

use std::collections::HashMap;
use std::hash::{BuildHasherDefault, Hasher};

use ctf::stream::EventRef;

use crate::kernel::{comm_of_path, i32_of, EvClass, Kind};

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

/// A `HashMap` with [`FxHasher`].
pub type FxMap<K, V> = HashMap<K, V, BuildHasherDefault<FxHasher>>;

/// First and last event timestamps (ns from origin).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Span {
    /// First timestamp.
    pub begin: Option<i64>,
    /// Last timestamp.
    pub end: Option<i64>,
}

impl Span {
    /// Widens the span to `t`.
    #[inline]
    pub fn see(&mut self, t: Option<i64>) {
        if let Some(t) = t {
            self.begin = Some(self.begin.map_or(t, |b| b.min(t)));
            self.end = Some(self.end.map_or(t, |e| e.max(t)));
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
        let mut s = self;
        s.see(o.begin);
        s.see(o.end);
        s
    }
}

/// Where an item falls in the time-merged order of its slice: `(order, stream)` of
/// [`engine::Ctx`]. Items of one stream with equal versions come in stream order.
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
}

/// tid → [`ThreadInfo`], from `sched_switch`, `sched_process_fork`/`exec` and
/// `lttng_statedump_process_state`. Inside a chunk the event with the latest
/// [`Version`] wins, whatever order the streams were read in; merge: the later chunk's
/// values win.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Info {
    /// By tid.
    pub threads: FxMap<i32, ThreadInfo>,
}

impl Info {
    fn comm(&mut self, tid: i32, b: &[u8], v: Version) {
        let t = self.threads.entry(tid).or_default();
        if t.comm.is_none() || v >= t.at.1 {
            t.at.1 = v;
            if t.comm.as_deref().map(str::as_bytes) != Some(b) {
                t.comm = Some(String::from_utf8_lossy(b).into_owned());
            }
        }
    }
    fn pid(&mut self, tid: i32, pid: i32, v: Version) {
        let t = self.threads.entry(tid).or_default();
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
            Kind::Switch { prev_tid, next_tid, prev_comm, next_comm } => {
                for (t, n) in [(prev_tid, prev_comm), (next_tid, next_comm)] {
                    if let (Some(t), Some(b)) = (ev.int(t), n.and_then(|n| ev.bytes(n))) {
                        if t != 0 {
                            self.comm(t as i32, b, v);
                        }
                    }
                }
            }
            Kind::Fork { child_tid, child_pid, child_comm, .. } => {
                if let Some(t) = ev.int(child_tid) {
                    if let Some(p) = i32_of(ev, child_pid) {
                        self.pid(t as i32, p, v);
                    }
                    if let Some(b) = child_comm.and_then(|n| ev.bytes(n)) {
                        self.comm(t as i32, b, v);
                    }
                }
            }
            Kind::Exec { tid: Some(tid), filename: Some(f) } => {
                if let (Some(t), Some(b)) = (ev.int(tid), ev.bytes(f)) {
                    self.comm(t as i32, comm_of_path(b), v);
                }
            }
            Kind::ProcState { tid, pid, name } => {
                if let Some(t) = ev.int(tid) {
                    if let Some(p) = i32_of(ev, pid) {
                        self.pid(t as i32, p, v);
                    }
                    if let Some(b) = name.and_then(|n| ev.bytes(n)) {
                        self.comm(t as i32, b, v);
                    }
                }
            }
            _ => {}
        }
    }

    /// Joins `later` into `self` (earlier): later values win.
    pub fn merge(mut self, later: Info) -> Info {
        if self.threads.len() < later.threads.len() && self.threads.is_empty() {
            return later;
        }
        for (t, i) in later.threads {
            let e = self.threads.entry(t).or_default();
            if i.pid.is_some() {
                e.pid = i.pid;
            }
            if i.comm.is_some() {
                e.comm = i.comm;
            }
        }
        self
    }

    /// The pid of `tid`, if known.
    pub fn pid_of(&self, tid: i32) -> Option<i32> {
        self.threads.get(&tid).and_then(|i| i.pid)
    }
    /// The name of `tid`, or `""`.
    pub fn comm_of(&self, tid: i32) -> &str {
        self.threads.get(&tid).and_then(|i| i.comm.as_deref()).unwrap_or("")
    }
}
