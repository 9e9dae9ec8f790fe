//! The syscall report: its rows, and how they are made from the replay's statistics.

use std::collections::BTreeMap;

use kernel::latency::{call_name, CallId};
use kernel::model::{FxMap, Info};
use serde::Serialize;

use super::stats::{CallAcc, Long};
use crate::filter::Filter;
use crate::io::{IoState, Replay};
use crate::latency::{return_key, Bucket, DurationRow};

/// Per-call statistics of the result.
/// (Fields in alphabetical order: see [`crate::output::write_json`].)
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct CallRow {
    /// Durations.
    pub latency: DurationRow,
    /// Syscall name (`read`, `openat` …).
    pub name: String,
    /// Return values: `success` (≥ 0) and each error by name (`ENOENT` …).
    pub returns: BTreeMap<String, u64>,
}

/// One thread or process of the result.
/// (Fields in alphabetical order: see [`crate::output::write_json`].)
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct SyscallOwnerRow {
    /// Per syscall, by decreasing count then name.
    pub calls: Vec<CallRow>,
    /// Command name.
    pub comm: String,
    /// Calls in all.
    pub count: u64,
    /// Process id, when known.
    pub pid: Option<i32>,
    /// Thread id (`None` for a process row).
    pub tid: Option<i32>,
}

/// One of the longest calls.
/// (Fields in alphabetical order: see [`crate::output::write_json`].)
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct LongCallRow {
    /// Entry, ns from origin.
    pub begin_ns: i64,
    /// Command name of the thread.
    pub comm: String,
    /// Duration, ns.
    pub duration_ns: u64,
    /// Exit, ns from origin.
    pub end_ns: i64,
    /// The fd it worked on (its fd argument, or the fd an open returned), when it
    /// worked on one that the kernel model follows.
    pub fd: Option<i32>,
    /// Syscall name.
    pub name: String,
    /// A call from one fd to another (sendfile, splice, tee, copy_file_range): the fd
    /// written (`fd` is the fd read).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub out_fd: Option<i32>,
    /// The file `out_fd` named, when known.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub out_path: Option<String>,
    /// The file that fd named (the path an open named), when known.
    pub path: Option<String>,
    /// Process id of the thread, when known (as in the per-thread table).
    pub pid: Option<i32>,
    /// Return value.
    pub ret: i64,
    /// Thread id.
    pub tid: i32,
}

/// Result of [`super::Syscall`].
/// (Fields in alphabetical order: see [`crate::output::write_json`].)
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct SyscallReport {
    /// Always `"syscall"`.
    pub analysis: &'static str,
    /// First event timestamp.
    pub begin_ns: Option<i64>,
    /// Calls in all.
    pub count: u64,
    /// Last event timestamp.
    pub end_ns: Option<i64>,
    /// Latency histogram (`--freq`; else empty).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub freq: Vec<Bucket>,
    /// Every call, by entry time (`--log`; else empty).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub log: Vec<LongCallRow>,
    /// The longest calls, longest first.
    pub longest: Vec<LongCallRow>,
    /// Per process (pid, or the tid when unknown), by decreasing count then pid.
    pub processes: Vec<SyscallOwnerRow>,
    /// Per thread, by decreasing count then tid.
    pub threads: Vec<SyscallOwnerRow>,
}

/// The report of the whole trace's io state `st`, completed (every record replayed)
/// with the calls kept; `names` names the calls, `filter` selects the threads.
pub(super) fn report(mut st: IoState, names: &[Box<str>], filter: &Filter) -> SyscallReport {
    let name = |c: CallId| call_name(names, c);
    let mut top = st.replay.take_calls().map(|c| c.top).unwrap_or_default();
    let info: &Info = &st.info;
    // Each call's name, made once (threads are many, names few).
    let mut named: FxMap<CallId, String> = FxMap::default();
    for (_, calls) in st.replay.thread_calls() {
        for (c, _) in calls.iter() {
            named.entry(c).or_insert_with(|| name(c));
        }
    }
    let row = |calls: &mut dyn Iterator<Item = (CallId, &CallAcc)>| {
        let mut by_name: BTreeMap<&str, CallAcc> = BTreeMap::new();
        for (c, acc) in calls {
            by_name.entry(named[&c].as_str()).or_default().merge(acc);
        }
        let mut rows: Vec<CallRow> = by_name
            .into_iter()
            .map(|(name, acc)| {
                let name = name.to_string();
                let mut returns = BTreeMap::new();
                for (r, n) in acc.rets.iter() {
                    *returns.entry(return_key(r)).or_insert(0) += n;
                }
                CallRow { latency: acc.d.row(), name, returns }
            })
            .collect();
        rows.sort_by(|x, y| y.latency.count.cmp(&x.latency.count).then_with(|| x.name.cmp(&y.name)));
        rows
    };
    let selected = |tid: i32| {
        let (pid, comm) = info.pid_and_comm(tid);
        filter.thread(tid, pid, comm)
    };
    if filter.selects_threads() {
        top.retain(|l| selected(l.tid.0));
    }
    let mut threads = Vec::new();
    let mut procs: BTreeMap<i32, Vec<(CallId, &CallAcc)>> = BTreeMap::new();
    for (tid, calls) in st.replay.thread_calls() {
        if calls.is_empty() || !selected(tid) {
            continue;
        }
        let (pid, comm) = info.pid_and_comm(tid);
        procs.entry(pid.unwrap_or(tid)).or_default().extend(calls.iter());
        let calls = row(&mut calls.iter());
        let count = calls.iter().map(|c| c.latency.count).sum();
        threads.push(SyscallOwnerRow { calls, comm: comm.to_string(), count, pid, tid: Some(tid) });
    }
    threads.sort_by(|x, y| y.count.cmp(&x.count).then(x.tid.cmp(&y.tid)));
    let mut processes: Vec<SyscallOwnerRow> = procs
        .into_iter()
        .map(|(pid, calls)| {
            let calls = row(&mut calls.into_iter());
            let count = calls.iter().map(|c| c.latency.count).sum();
            SyscallOwnerRow { calls, comm: info.comm_of(pid).to_string(), count, pid: Some(pid), tid: None }
        })
        .collect();
    processes.sort_by(|x, y| y.count.cmp(&x.count).then(x.pid.cmp(&y.pid)));
    let (longest, all) = top.finish(log_order);
    let call_row = |l: Long| call_row(l, info, &st.replay, &name);
    let longest = longest.into_iter().map(call_row).collect();
    let log = all.into_iter().map(call_row).collect();
    let count = threads.iter().map(|t| t.count).sum();
    SyscallReport { analysis: "syscall", begin_ns: st.span.begin(), count, end_ns: st.span.end(), freq: Vec::new(), log, longest, processes, threads }
}

/// The order of the log: by entry, then tid, call, duration and return value.
pub(super) fn log_order(l: &Long) -> (i64, i32, CallId, u64, i64) {
    (l.begin.0, l.tid.0, l.call.0, l.dur, l.ret)
}

/// The row of call `l`: its thread named by `info`, its files by `replay`, its call
/// by `name`.
pub(super) fn call_row(l: Long, info: &Info, replay: &Replay, name: &dyn Fn(CallId) -> String) -> LongCallRow {
    let (pid, comm) = info.pid_and_comm(l.tid.0);
    let f = l.ended;
    let path = |file| replay.file_name(file).map(str::to_string);
    let (out_fd, out_path) = f.and_then(|f| f.out).map_or((None, None), |(fd, p)| (Some(fd), path(p)));
    LongCallRow {
        begin_ns: l.begin.0,
        comm: comm.to_string(),
        duration_ns: l.dur,
        end_ns: l.begin.0 + l.dur as i64,
        fd: f.map(|f| f.fd),
        name: name(l.call.0),
        out_fd,
        out_path,
        path: f.and_then(|f| path(f.file)),
        pid,
        ret: l.ret,
        tid: l.tid.0,
    }
}
