//! Kernel facts shared by the analyses, as mergeable pieces: what a thread is called
//! and which process it belongs to (last writer wins, in time order), and the time span
//! of the events seen.

use std::collections::HashMap;

use ctf::stream::EventRef;

use crate::kernel::{comm_of_path, i32_of, EvClass, Kind};

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
    /// Union of two spans.
    pub fn merge(self, o: Span) -> Span {
        let mut s = self;
        s.see(o.begin);
        s.see(o.end);
        s
    }
}

/// What is known of a thread.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ThreadInfo {
    /// Process id.
    pub pid: Option<i32>,
    /// Command name (the latest seen).
    pub comm: Option<String>,
}

/// tid → [`ThreadInfo`], from `sched_switch`, `sched_process_fork`/`exec` and
/// `lttng_statedump_process_state`. Merge: the later chunk's values win.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Info {
    /// By tid.
    pub threads: HashMap<i32, ThreadInfo>,
}

fn set_comm(slot: &mut Option<String>, b: &[u8]) {
    if slot.as_deref().map(str::as_bytes) != Some(b) {
        *slot = Some(String::from_utf8_lossy(b).into_owned());
    }
}

impl Info {
    fn comm(&mut self, tid: i32, b: &[u8]) {
        set_comm(&mut self.threads.entry(tid).or_default().comm, b);
    }
    fn pid(&mut self, tid: i32, pid: i32) {
        self.threads.entry(tid).or_default().pid = Some(pid);
    }

    /// Learns from one event (only the kinds that name threads; no allocation unless a
    /// name changes).
    #[inline]
    pub fn on_event(&mut self, ev: &EventRef<'_, '_>, c: &EvClass) {
        match c.kind {
            Kind::Switch { prev_tid, next_tid, prev_comm, next_comm } => {
                for (t, n) in [(prev_tid, prev_comm), (next_tid, next_comm)] {
                    if let (Some(t), Some(b)) = (ev.int(t), n.and_then(|n| ev.bytes(n))) {
                        if t != 0 {
                            self.comm(t as i32, b);
                        }
                    }
                }
            }
            Kind::Fork { child_tid, child_pid, child_comm, .. } => {
                if let Some(t) = ev.int(child_tid) {
                    if let Some(p) = i32_of(ev, child_pid) {
                        self.pid(t as i32, p);
                    }
                    if let Some(b) = child_comm.and_then(|n| ev.bytes(n)) {
                        self.comm(t as i32, b);
                    }
                }
            }
            Kind::Exec { tid: Some(tid), filename: Some(f) } => {
                if let (Some(t), Some(b)) = (ev.int(tid), ev.bytes(f)) {
                    self.comm(t as i32, comm_of_path(b));
                }
            }
            Kind::ProcState { tid, pid, name } => {
                if let Some(t) = ev.int(tid) {
                    if let Some(p) = i32_of(ev, pid) {
                        self.pid(t as i32, p);
                    }
                    if let Some(b) = name.and_then(|n| ev.bytes(n)) {
                        self.comm(t as i32, b);
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
