//! lttng-analyses' process and CPU filters (`--tid`, `--pid`, `--procname`, `--cpu`),
//! applied by each analysis as it accumulates, so that every table (threads,
//! processes, files, CPUs, totals) counts only what the selection did.
//!
//! As lttng-analyses' `Analysis._filter_process` and `_filter_cpu`
//! (`core/analysis.py`): each list that is given must match (a thread passes when its
//! tid is in `--tid` *and* its name in `--procname`), an empty list matches everything.
//! Deliberate differences, each said where it applies:
//! - `--pid` is ours (lttng-analyses has none): a thread's process is its pid, or its
//!   own tid when no pid is known (as the per-process tables count it).
//! - `--procname` matches the thread's *latest* command name, the one its row shows,
//!   rather than the name it had at each event (lttng-analyses checks the name at each
//!   `sched_switch`, so a thread that `exec`s is split between two names): a thread is
//!   then counted whole or not at all, whichever chunk saw its `exec`.
//! - `--cpu` also applies to `io` (lttng-iousagetop warns that it ignores it): see
//!   [`crate::io`].

use ctf::stream::EventRef;
use kernel::layout::{cpu_of, Layout};

/// A selection of threads and CPUs (every list empty: everything).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Filter {
    /// Only these thread ids.
    pub tids: Vec<i32>,
    /// Only threads of these processes.
    pub pids: Vec<i32>,
    /// Only threads with one of these command names.
    pub procnames: Vec<String>,
    /// Only what happened on these CPUs (`cpu_id`).
    pub cpus: Vec<u32>,
}

impl Filter {
    /// Whether this filter selects everything.
    pub fn is_empty(&self) -> bool {
        !self.selects_threads() && self.cpus.is_empty()
    }

    /// Whether this filter selects threads (a tid, pid or name list is given).
    pub fn selects_threads(&self) -> bool {
        !(self.tids.is_empty() && self.pids.is_empty() && self.procnames.is_empty())
    }

    /// Whether thread `tid` of process `pid` (`None`: unknown, the thread then counts
    /// as its own process) named `comm` is selected.
    pub fn thread(&self, tid: i32, pid: Option<i32>, comm: &str) -> bool {
        (self.tids.is_empty() || self.tids.contains(&tid))
            && (self.pids.is_empty() || self.pids.contains(&pid.unwrap_or(tid)))
            && (self.procnames.is_empty() || self.procnames.iter().any(|n| n == comm))
    }

    /// Whether CPU `cpu` is selected (a CPU id with the high bit set, a stream whose CPU
    /// is unknown, is selected only by an empty list).
    pub fn cpu(&self, cpu: u32) -> bool {
        self.cpus.is_empty() || self.cpus.contains(&cpu)
    }

    /// Whether event `ev` of stream `stream` happened on a selected CPU (its packet's
    /// `cpu_id`, as [`cpu_of`]); an event of a class `layout` does not know counts as on
    /// no CPU.
    #[inline]
    pub fn on_cpu(&self, layout: &Layout, ev: &EventRef<'_, '_>, stream: usize) -> bool {
        self.cpus.is_empty() || layout.class(ev).is_some_and(|c| self.cpu(cpu_of(ev, c, stream)))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_given_list_must_match() {
        let all = Filter::default();
        assert!(all.is_empty() && all.thread(5, None, "x") && all.cpu(3));
        let f = Filter { tids: vec![5, 6], procnames: vec!["bash".into()], ..Default::default() };
        assert!(f.thread(5, Some(1), "bash"));
        assert!(!f.thread(5, Some(1), "ls"), "name must match too");
        assert!(!f.thread(7, Some(1), "bash"), "tid must match too");
        let p = Filter { pids: vec![10], ..Default::default() };
        assert!(p.thread(11, Some(10), "a") && p.thread(10, None, "a"));
        assert!(!p.thread(11, None, "a") && !p.thread(10, Some(3), "a"));
        let c = Filter { cpus: vec![1], ..Default::default() };
        assert!(!c.selects_threads() && !c.is_empty() && c.cpu(1) && !c.cpu(0));
    }
}
