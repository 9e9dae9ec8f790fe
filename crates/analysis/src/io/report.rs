//! io's result: its rows, and how they are made from the threads' totals.

use std::cmp::Reverse;

use serde::Serialize;

use kernel::model::Info;

use super::replay::Split;
use kernel::tid_index::TidIndex;

/// One thread of the result.
/// (Fields in alphabetical order: see [`crate::output::write_json`].)
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct ThreadIoRow {
    /// Latest command name.
    pub comm: String,
    /// Process id, when known.
    pub pid: Option<i32>,
    /// Bytes read.
    pub read_bytes: u64,
    /// Thread id.
    pub tid: i32,
    /// Bytes written.
    pub write_bytes: u64,
}

/// One process of the result.
/// (Fields in alphabetical order: see [`crate::output::write_json`].)
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct ProcessIoRow {
    /// Name of its main thread (or of any thread).
    pub comm: String,
    /// Bytes read from files with a path (lttng-iousagetop's Disk column).
    pub disk_read_bytes: u64,
    /// Bytes written to files with a path.
    pub disk_write_bytes: u64,
    /// Bytes read from sockets (lttng-iousagetop's Net column).
    pub net_read_bytes: u64,
    /// Bytes written to sockets.
    pub net_write_bytes: u64,
    /// Bytes read from other fds: pipes, anonymous inodes, unknown fds (lttng-iousagetop's
    /// Unknown column).
    pub other_read_bytes: u64,
    /// Bytes written to other fds.
    pub other_write_bytes: u64,
    /// Process id (the tid when unknown).
    pub pid: i32,
    /// Bytes read.
    pub read_bytes: u64,
    /// Bytes written.
    pub write_bytes: u64,
}

/// One file of the result.
/// (Fields in alphabetical order: see [`crate::output::write_json`].)
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct FileIoRow {
    /// Path.
    pub path: String,
    /// Bytes read.
    pub read_bytes: u64,
    /// Bytes written.
    pub write_bytes: u64,
}

/// Result of [`Io`](super::Io) (its JSON form is the `io` output format).
/// (Fields in alphabetical order: see [`crate::output::write_json`].)
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct IoReport {
    /// Always `"io"`.
    pub analysis: &'static str,
    /// First event timestamp.
    pub begin_ns: Option<i64>,
    /// Last event timestamp.
    pub end_ns: Option<i64>,
    /// Files with I/O, same order: every byte of a thread is in one row (fds that are
    /// not files by kind, `socket`, `pipe`, `anon_inode:[eventfd]` …, or the
    /// statedump's name such as `socket:[22410]`; an fd nothing is known about as
    /// `unknown (fd N)`).
    pub files: Vec<FileIoRow>,
    /// Processes with I/O, same order.
    pub processes: Vec<ProcessIoRow>,
    /// Threads with I/O, by decreasing total bytes then tid.
    pub threads: Vec<ThreadIoRow>,
    /// With `--log` ([`Io::with_transfers`](super::Io::with_transfers)): every read or
    /// write that moved bytes, by exit time; absent from the JSON when empty.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub transfers: Vec<TransferRow>,
}

/// One read or write that moved bytes (a syscall of the read or write family whose
/// entry was seen and whose exit returned `ret > 0`).
/// (Fields in alphabetical order: see [`crate::output::write_json`].)
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct TransferRow {
    /// Bytes moved (the exit's `ret`).
    pub bytes: u64,
    /// The thread's latest name.
    pub comm: String,
    /// Time of the exit (ns from origin).
    pub exit_ns: i64,
    /// The fd.
    pub fd: i32,
    /// `"read"` or `"write"` (the syscall's family).
    pub kind: &'static str,
    /// The file the fd named at entry, as [`IoReport::files`] names it.
    pub path: Option<String>,
    /// Process id (when the transfer happened, else the latest known).
    pub pid: Option<i32>,
    /// Thread id.
    pub tid: i32,
    /// The entry time of its system call (for the SQL `io` table; not in the JSON,
    /// whose form `analyze -a io --log` keeps).
    #[serde(skip)]
    pub entry_ns: Option<i64>,
    /// The name of its system call (`read`, `pread64` …; likewise).
    #[serde(skip)]
    pub name: Option<String>,
}

/// Reports with fewer threads than this make their rows on one thread.
pub(super) const PARALLEL_ROWS: usize = 1 << 14;

/// A thread's numbers and names, as its rows need them: `(tid, read, written, pid,
/// name)`.
type ThreadIo<'i> = (i32, u64, u64, Option<i32>, &'i str, Split);

/// The [`ThreadIo`] of each thread `(tid, read, written, split)` of `threads`, in their
/// order.
pub(super) fn thread_io<'i>(threads: impl Iterator<Item = (i32, u64, u64, Split)>, info: &'i Info) -> Vec<ThreadIo<'i>> {
    threads
        .map(|(tid, r, w, split)| {
            let (pid, comm) = info.pid_and_comm(tid);
            (tid, r, w, pid, comm, split)
        })
        .collect()
}

/// The thread rows and process rows of the threads `raw` lists (in row order): with
/// `side_by_side`, made on two threads.
pub(super) fn rows(raw: &[ThreadIo<'_>], info: &Info, side_by_side: bool) -> (Vec<ThreadIoRow>, Vec<ProcessIoRow>) {
    let procs = || process_rows(raw.iter().map(|&(tid, r, w, pid, _, split)| (pid.unwrap_or(tid), r, w, split)), info);
    if !side_by_side {
        return (thread_rows(raw), procs());
    }
    std::thread::scope(|s| {
        let procs = s.spawn(procs);
        let threads = thread_rows(raw);
        (threads, procs.join().unwrap_or_else(|p| std::panic::resume_unwind(p)))
    })
}

/// The rows of the threads `raw` lists (in row order).
fn thread_rows(raw: &[ThreadIo<'_>]) -> Vec<ThreadIoRow> {
    raw.iter().map(|&(tid, r, w, pid, comm, _)| ThreadIoRow { tid, pid, comm: comm.to_string(), read_bytes: r, write_bytes: w }).collect()
}

/// The rows of the processes of threads given as `(process, read, written)` (a
/// thread's process: its pid, its tid when unknown), each summing its threads' bytes,
/// by decreasing total bytes then pid.
fn process_rows(threads: impl Iterator<Item = (i32, u64, u64, Split)>, info: &Info) -> Vec<ProcessIoRow> {
    // (Pids are tids: indexed as tids are.)
    let mut procs: Vec<(i32, u64, u64, Split)> = Vec::new();
    let mut proc_of = TidIndex::default();
    for (pid, r, w, split) in threads {
        let i = match proc_of.get(pid) {
            Some(i) => i as usize,
            None => {
                proc_of.insert(pid, procs.len() as u32);
                procs.push((pid, 0, 0, Split::default()));
                procs.len() - 1
            }
        };
        let p = &mut procs[i];
        p.1 += r;
        p.2 += w;
        for (a, b) in p.3.iter_mut().flatten().zip(split.iter().flatten()) {
            *a += b;
        }
    }
    procs.sort_unstable_by_key(|&(pid, r, w, _)| (Reverse(r + w), pid));
    procs
        .into_iter()
        .map(|(pid, r, w, [disk, net, other])| ProcessIoRow {
            pid,
            comm: info.comm_of(pid).to_string(),
            read_bytes: r,
            write_bytes: w,
            disk_read_bytes: disk[0],
            disk_write_bytes: disk[1],
            net_read_bytes: net[0],
            net_write_bytes: net[1],
            other_read_bytes: other[0],
            other_write_bytes: other[1],
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rows_side_by_side_equal_rows_made_in_turn() {
        // 40 k threads of 3 k processes (some with no known pid), bytes that tie.
        let mut info = Info::default();
        let raw: Vec<(i32, u64, u64, Split)> =
            (1..=40_000).map(|t| (t, (t % 7) as u64 * 100, (t % 5) as u64, [[(t % 7) as u64 * 100, 0], [0, (t % 5) as u64], [0, 0]])).collect();
        for &(t, ..) in &raw {
            if t % 11 != 0 {
                info.pid(t, 1 + t % 3000, (0, 0));
            }
        }
        let gathered = thread_io(raw.iter().copied(), &info);
        let serial = rows(&gathered, &info, false);
        assert_eq!(rows(&gathered, &info, true), serial);
        // Processes sum their threads, each counted once, in the documented order.
        let total = |r: &[(i32, u64, u64, Split)]| r.iter().map(|x| x.1 + x.2).sum::<u64>();
        assert_eq!(serial.1.iter().map(|p| p.read_bytes + p.write_bytes).sum::<u64>(), total(&raw));
        assert!(serial.1.windows(2).all(|w| (Reverse(w[0].read_bytes + w[0].write_bytes), w[0].pid) < (Reverse(w[1].read_bytes + w[1].write_bytes), w[1].pid)));
        let keys: std::collections::HashSet<i32> = raw.iter().map(|&(t, ..)| info.pid_of(t).unwrap_or(t)).collect();
        assert_eq!(serial.1.len(), keys.len());
    }
}
