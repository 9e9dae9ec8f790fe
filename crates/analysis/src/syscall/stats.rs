//! What the syscall latency accumulates from the calls the kernel's replay completes
//! ([`kernel::replay::Sink::completed`], through io's sink): per thread, in the
//! thread's slot, each call name's durations and return values ([`ThreadCalls`]);
//! beside, the longest calls (and every one, when kept: [`CallStats`]).

use std::cmp::Reverse;

use kernel::fdtable::Ended;
use kernel::latency::{elapsed, CallId};
use kernel::replay::Completed;

use crate::latency::{Durations, LatencyOptions, Sink};

/// Statistics of one call name of one thread.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct CallAcc {
    pub d: Durations,
    pub rets: Rets,
}

impl CallAcc {
    /// Adds every count of `o`.
    pub fn merge(&mut self, o: &CallAcc) {
        self.d.merge(&o.d);
        self.rets.merge(&o.rets);
    }
}

/// Return values tallied: every value ≥ 0 (success) as one count (a read's byte counts
/// would otherwise make one entry each), and each error with its count (few per call
/// name: a list, no map, nothing allocated while calls succeed).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct Rets {
    ok: u64,
    errs: Vec<(i64, u64)>,
}

impl Rets {
    /// `n` calls returned `ret`.
    #[inline]
    fn add(&mut self, ret: i64, n: u64) {
        if ret >= 0 {
            self.ok += n;
            return;
        }
        match self.errs.iter_mut().find(|(r, _)| *r == ret) {
            Some(e) => e.1 += n,
            None => self.errs.push((ret, n)),
        }
    }
    /// Adds every count of `o`.
    fn merge(&mut self, o: &Rets) {
        self.ok += o.ok;
        for &(r, n) in &o.errs {
            self.add(r, n);
        }
    }
    /// `(value, count)`: 0 for the successes, then the errors.
    pub fn iter(&self) -> impl Iterator<Item = (i64, u64)> + '_ {
        (self.ok > 0).then_some((0, self.ok)).into_iter().chain(self.errs.iter().copied())
    }
}

/// A completed call, ordered by duration (longest first), then earliest, then tid.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub(crate) struct Long {
    pub dur: u64,
    pub begin: Reverse<i64>,
    pub tid: Reverse<i32>,
    pub call: Reverse<CallId>,
    pub ret: i64,
    /// The exit's time (`begin + dur` unless time went back).
    pub end: i64,
    /// What it worked on (file ids of the replay).
    pub ended: Option<Ended>,
}

/// One thread's calls, per name: the names apart from their statistics, so that
/// finding a name reads one cache line (a thread calls few names).
#[derive(Debug, Clone, Default)]
pub(crate) struct ThreadCalls {
    names: Vec<CallId>,
    accs: Vec<CallAcc>,
}

impl ThreadCalls {
    /// The statistics of `call`, made empty if new.
    #[inline]
    fn of(&mut self, call: CallId) -> &mut CallAcc {
        let i = match self.names.iter().position(|c| *c == call) {
            Some(i) => i,
            None => {
                self.names.push(call);
                self.accs.push(CallAcc::default());
                self.names.len() - 1
            }
        };
        &mut self.accs[i]
    }

    /// Whether no call completed.
    pub fn is_empty(&self) -> bool {
        self.names.is_empty()
    }

    /// `(name, statistics)` of each call name.
    pub fn iter(&self) -> impl Iterator<Item = (CallId, &CallAcc)> + '_ {
        self.names.iter().copied().zip(&self.accs)
    }
}

/// The syscall statistics beside the threads': the options and the longest calls.
#[derive(Debug, Clone, Default)]
pub(crate) struct CallStats {
    lat: LatencyOptions,
    /// The longest calls (and every one, when kept).
    pub top: Sink<Long>,
}

impl CallStats {
    /// Empty statistics keeping what `lat` asks.
    pub fn new(lat: LatencyOptions) -> CallStats {
        CallStats { lat, top: Sink::new(&lat) }
    }

    /// Thread `tid` (its calls `calls`) completed `c`. (The idle task, tid 0, issues
    /// no call: events on a CPU running it are not counted.)
    #[inline]
    pub fn add(&mut self, tid: i32, calls: &mut ThreadCalls, c: Completed) {
        let dur = elapsed(c.begin, c.end);
        if tid == 0 || !self.lat.keeps(dur) {
            return;
        }
        let acc = calls.of(c.name);
        acc.d.add(dur);
        acc.rets.add(c.ret, 1);
        self.top.offer(Long { dur, begin: Reverse(c.begin), tid: Reverse(tid), call: Reverse(c.name), ret: c.ret, end: c.end, ended: c.ended });
    }
}
