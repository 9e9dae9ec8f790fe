//! io's statistic over the kernel's replay ([`kernel::replay::Replay`]): the files
//! (interned names, each with its bytes read and written) and, per thread, the bytes
//! by class of file, and optionally each transfer. The replay resolves which thread
//! moved how many bytes on which file; this module only accumulates ([`Sink`]). With
//! the syscall latency on ([`Replay::keep_calls`]), each call the replay completes
//! (from the kernel's one pending-call state) goes to the syscall statistics
//! ([`crate::syscall::stats`]): per thread in its slot, the longest in the sink.

use std::sync::Arc;

use kernel::fdtable::{Call, FileClass, FileNames, Transfer};
use kernel::latency::CallId;
use kernel::layout::Sc;
use kernel::log::{LRec, Rec};
use kernel::model::{FxMap, Info};
use kernel::replay::{self, Completed, Sink, SlotCache};

use crate::syscall::stats::{CallStats, ThreadCalls};
use crate::trace_end::TraceEnd;

/// Bytes `[read, written]` by [`FileClass`] (disk, net, other).
pub type Split = [[u64; 2]; 3];

/// What io keeps per thread, in the replay's thread slot.
#[derive(Debug, Clone, Default)]
pub struct ThreadIo {
    /// Bytes read and written ([`rw_index`]), by [`FileClass`] of the file (the
    /// totals are their sums: one add per credit, not two).
    split: Split,
    /// Whether bytes were credited (a read or write exit with `ret > 0`).
    io: bool,
    /// With [`Replay::keep_calls`]: the thread's calls completed, per name.
    pub(crate) calls: ThreadCalls,
}

/// The interpreted state: the kernel's replay and io's files.
#[derive(Debug, Clone, Default)]
pub struct Replay {
    kernel: replay::Replay<ThreadIo>,
    files: Files,
}

/// The files: interned names, and placeholders for bytes held for the statedump
/// ([`FileNames::held`]), each with its bytes read and written ([`rw_index`]).
#[derive(Debug, Clone, Default)]
struct Files {
    ids: FxMap<Arc<str>, u32>,
    rows: Vec<Row>,
    /// Bytes credited to a placeholder, by (placeholder, tid): a thread's share moves
    /// from [`FileClass::Other`] to the class of the file the statedump names. With
    /// `by_thread`, bytes credited to every file, by (file, tid).
    held_by: FxMap<(u32, i32), [u64; 2]>,
    /// Whether `held_by` keeps every file's bytes per thread (for a thread filter:
    /// [`Replay::files_of`]).
    by_thread: bool,
    /// The time of the record or event being replayed ([`Replay::at`]).
    now: i64,
    /// With [`Replay::keep_transfers`]: every transfer, in replay order.
    transfers: Option<Vec<Moved>>,
    /// Whether the last transfer kept is the call being completed (its entry is told
    /// next, by [`Sink::completed`]).
    moving: bool,
    /// With `transfers` or `calls`: placeholder → the file the statedump named it as.
    named_as: FxMap<u32, u32>,
    /// With [`Replay::keep_calls`]: the syscall statistics beyond the threads'.
    calls: Option<CallStats>,
}

/// One transfer as the replay told it ([`Replay::keep_transfers`]).
#[derive(Debug, Clone, Copy)]
struct Moved {
    /// The time of the exit that moved the bytes.
    at: i64,
    tid: i32,
    pid: Option<i32>,
    t: Transfer,
    /// Its call's entry time and name.
    entry: Option<(i64, CallId)>,
}

/// A file: its name, bytes `[read, written]`, class, and whether it is a placeholder
/// ([`FileNames::held`]).
type Row = (Arc<str>, [u64; 2], FileClass, bool);

impl Sink for Files {
    type Thread = ThreadIo;

    #[inline(always)]
    fn moved(&mut self, tid: i32, pid: Option<i32>, data: &mut ThreadIo, t: Transfer) {
        credit(tid, data, self, t.read, t.bytes, t.file);
        if let Some(v) = &mut self.transfers {
            v.push(Moved { at: self.now, tid, pid, t, entry: None });
            self.moving = true;
        }
    }

    #[inline(always)]
    fn wants_calls(&self) -> bool {
        self.calls.is_some() || self.transfers.is_some()
    }

    #[inline(always)]
    fn completed(&mut self, tid: i32, data: &mut ThreadIo, c: Completed) {
        if std::mem::take(&mut self.moving) {
            if let Some(m) = self.transfers.as_mut().and_then(|v| v.last_mut()).filter(|m| m.tid == tid) {
                m.entry = Some((c.begin, c.name));
            }
        }
        if let Some(calls) = &mut self.calls {
            calls.add(tid, &mut data.calls, c);
        }
    }
}

impl FileNames for Files {
    fn named(&mut self, p: &str) -> u32 {
        if let Some(&i) = self.ids.get(p) {
            return i;
        }
        let i = self.rows.len() as u32;
        let p: Arc<str> = Arc::from(p);
        self.ids.insert(p.clone(), i);
        self.rows.push((p.clone(), [0; 2], FileClass::of(&p), false));
        i
    }

    fn held(&mut self, fd: i32) -> u32 {
        self.rows.push((Arc::from(format!("unknown (fd {fd})")), [0; 2], FileClass::Other, true));
        self.rows.len() as u32 - 1
    }
}

impl Files {
    /// The bytes of placeholder `held` are `file`'s (the statedump named its fd):
    /// returns each thread's share `(tid, [read, written])`.
    fn give(&mut self, held: u32, file: u32) -> Vec<(i32, [u64; 2])> {
        if self.transfers.is_some() || self.calls.is_some() {
            self.named_as.insert(held, file);
        }
        let b = std::mem::take(&mut self.rows[held as usize].1);
        let f = &mut self.rows[file as usize].1;
        f[0] += b[0];
        f[1] += b[1];
        let mut shares: Vec<(i32, [u64; 2])> = self.held_by.iter().filter(|((h, _), _)| *h == held).map(|(&(_, t), &b)| (t, b)).collect();
        self.held_by.retain(|(h, _), _| *h != held);
        shares.sort_unstable();
        if self.by_thread {
            for &(t, b) in &shares {
                let e = self.held_by.entry((file, t)).or_default();
                e[0] += b[0];
                e[1] += b[1];
            }
        }
        shares
    }
}

impl Replay {
    /// Keeps every file's bytes per thread too, for [`Replay::files_of`].
    pub fn keep_files_by_thread(&mut self) {
        self.files.by_thread = true;
    }

    /// Keeps every transfer, for [`Replay::transfer_rows`].
    pub fn keep_transfers(&mut self) {
        self.files.transfers = Some(Vec::new());
    }

    /// Keeps the syscall statistics `calls` of every call completed (the syscall
    /// latency: [`crate::syscall`]).
    pub(crate) fn keep_calls(&mut self, calls: CallStats) {
        self.files.calls = Some(calls);
    }

    /// The syscall statistics beyond the threads' ([`Replay::keep_calls`]), taken out.
    pub(crate) fn take_calls(&mut self) -> Option<CallStats> {
        self.files.calls.take()
    }

    /// `(tid, calls)` of every thread, in slot order ([`Replay::keep_calls`]).
    pub(crate) fn thread_calls(&self) -> impl Iterator<Item = (i32, &ThreadCalls)> + '_ {
        self.kernel.threads().map(|(tid, _, s)| (tid, &s.calls))
    }

    /// The name of file `file` (an id the replay gave a call's [`kernel::fdtable::Ended`])
    /// as [`Replay::files`] names it: a placeholder the statedump named, that file; one
    /// it did not, `None`.
    pub(crate) fn file_name(&self, file: Option<u32>) -> Option<&str> {
        let file = file.map(|f| self.files.named_as.get(&f).copied().unwrap_or(f));
        file.and_then(|f| self.files.rows.get(f as usize)).filter(|r| !r.3).map(|r| &*r.0)
    }

    /// The records or events replayed next are at `ts`, with tag `tag`
    /// ([`replay::Replay::at`]).
    #[inline(always)]
    pub fn at(&mut self, ts: i64, tag: u32) {
        self.files.now = ts;
        self.kernel.at(ts, tag);
    }

    /// The transfers kept ([`Replay::keep_transfers`]) of the threads `keep(tid, pid,
    /// name)` selects, by time (then replay order), each on the file its fd named (a
    /// placeholder: the file the statedump named it as, as [`Replay::files`] counts
    /// it); pids not known at the time and names as `info` knows them last; each
    /// with its call's entry time and name (`name_of`).
    pub fn transfer_rows(&self, info: &Info, keep: impl Fn(i32, Option<i32>, &str) -> bool, name_of: impl Fn(CallId) -> String) -> Vec<super::TransferRow> {
        let Some(moved) = &self.files.transfers else { return Vec::new() };
        self.rows_of(moved, info, keep, name_of)
    }

    /// Takes out the transfers kept so far whose rows are final, and gives their rows
    /// as [`Replay::transfer_rows`] (every thread) with the facts of the trace's end
    /// `end` (its final thread table): those on a placeholder the statedump may still
    /// name stay, and so does the last while its call's entry is still to be told.
    pub fn drain_transfer_rows(&mut self, end: &TraceEnd, name_of: impl Fn(CallId) -> String) -> Vec<super::TransferRow> {
        let Some(moved) = self.files.transfers.take() else { return Vec::new() };
        let last = moved.len().saturating_sub(usize::from(self.files.moving));
        let (ready, mut held): (Vec<Moved>, Vec<Moved>) = moved[..last].iter().partition(|m| self.file_settled(m.t.file, end));
        held.extend_from_slice(&moved[last..]);
        self.files.transfers = Some(held);
        self.rows_of(&ready, &end.threads, |_, _, _| true, name_of)
    }

    /// Whether the name of file `file` ([`Replay::file_name`]) is final, the replay
    /// having reached its time: not a placeholder that the statedump may still name
    /// (one it has not named yet, while `end` says the trace has a statedump fd
    /// still to come).
    pub(crate) fn file_settled(&self, file: Option<u32>, end: &TraceEnd) -> bool {
        let placeholder = |f: u32| !self.files.named_as.contains_key(&f) && self.files.rows.get(f as usize).is_some_and(|r| r.3);
        file.is_none_or(|f| !placeholder(f) || end.placeholders_final_at(self.files.now))
    }

    /// The rows of transfers `moved` (see [`Replay::transfer_rows`]).
    fn rows_of(
        &self,
        moved: &[Moved],
        info: &Info,
        keep: impl Fn(i32, Option<i32>, &str) -> bool,
        name_of: impl Fn(CallId) -> String,
    ) -> Vec<super::TransferRow> {
        let mut rows: Vec<super::TransferRow> = moved
            .iter()
            .filter_map(|m| {
                let (pid, comm) = info.pid_and_comm(m.tid);
                let pid = m.pid.or(pid);
                if !keep(m.tid, pid, comm) {
                    return None;
                }
                let file = m.t.file.map(|f| self.files.named_as.get(&f).copied().unwrap_or(f));
                Some(super::TransferRow {
                    bytes: m.t.bytes,
                    comm: comm.to_string(),
                    exit_ns: m.at,
                    fd: m.t.fd,
                    kind: if m.t.read { "read" } else { "write" },
                    path: file.and_then(|f| self.files.rows.get(f as usize)).map(|r| r.0.to_string()),
                    pid,
                    tid: m.tid,
                    entry_ns: m.entry.map(|e| e.0),
                    name: m.entry.map(|e| name_of(e.1)),
                })
            })
            .collect();
        rows.sort_by_key(|r| (r.exit_ns, r.tid));
        rows
    }

    /// The slot of `tid`, through `cache` (updated).
    #[inline(always)]
    pub fn slot_cached(&mut self, cache: &mut SlotCache, tid: i32) -> usize {
        self.kernel.slot_cached(cache, tid)
    }

    /// The thread of slot `i` enters `call` (no path).
    #[inline(always)]
    pub fn enter(&mut self, i: usize, call: Call) {
        self.kernel.enter(i, call, None);
    }

    /// [`replay::Replay::enter_rw`].
    #[inline(always)]
    pub fn enter_rw(&mut self, i: usize, sc: Sc, fd: i64) {
        self.kernel.enter_rw(i, sc, fd);
    }

    /// [`replay::Replay::other_entry`].
    #[inline(always)]
    pub fn other_entry(&mut self, i: usize) {
        self.kernel.other_entry(i);
    }

    /// [`replay::Replay::exit`].
    #[inline(always)]
    pub fn exit(&mut self, i: usize, sc: Option<Sc>, ret: i64) {
        self.kernel.exit(i, sc, ret, &mut self.files);
    }

    /// Interprets one record of a chunk's log.
    #[inline(always)]
    pub fn apply_l(&mut self, r: LRec) {
        if let Some((held, file)) = self.kernel.apply_l(r, &mut self.files) {
            self.give(held, file);
        }
    }

    /// [`replay::Replay::apply_rw`].
    #[inline(always)]
    pub fn apply_rw(&mut self, i: usize, sc: Sc, fd: i32, ret: Option<i64>) {
        self.kernel.apply_rw(i, sc, fd, ret, &mut self.files);
    }

    /// Interprets one record; `slot` is the slot of the thread it names, when the
    /// caller knows it.
    #[inline(always)]
    pub fn apply<P: AsRef<str>>(&mut self, r: Rec<P>, slot: Option<usize>) {
        if let Some((held, file)) = self.kernel.apply(r, slot, &mut self.files) {
            self.give(held, file);
        }
    }

    /// The statedump named `file` the fd whose bytes placeholder `held` holds: each
    /// thread's share moves from [`FileClass::Other`] to `file`'s class.
    #[cold]
    fn give(&mut self, held: u32, file: u32) {
        let class = self.files.rows[file as usize].2 as usize;
        for (tid, b) in self.files.give(held, file) {
            let i = self.kernel.slot(tid);
            let split = &mut self.kernel.data_mut(i).split;
            for k in 0..2 {
                split[FileClass::Other as usize][k] -= b[k];
                split[class][k] += b[k];
            }
        }
    }

    /// Per-thread `(tid, read, written, by file class)` of threads with I/O.
    pub fn threads(&self) -> impl Iterator<Item = (i32, u64, u64, Split)> + '_ {
        self.kernel.threads().filter(|(_, _, s)| s.io).map(|(tid, _, s)| {
            let total = |k: usize| s.split.iter().map(|c| c[k]).sum();
            (tid, total(0), total(1), s.split)
        })
    }

    /// Per-file `(path, read, written)` of files with I/O, one per name (the
    /// placeholders of one fd number share `unknown (fd N)`).
    pub fn files(&self) -> impl Iterator<Item = (&str, u64, u64)> + '_ {
        let mut by_name: std::collections::BTreeMap<&str, [u64; 2]> = Default::default();
        for (p, [r, w], ..) in self.files.rows.iter().filter(|p| p.1[0] + p.1[1] > 0) {
            let e = by_name.entry(&**p).or_default();
            e[0] += r;
            e[1] += w;
        }
        by_name.into_iter().map(|(p, [r, w])| (p, r, w))
    }

    /// [`Replay::files`], counting only the bytes of the threads `keep` selects (needs
    /// [`Replay::keep_files_by_thread`] from the start).
    pub fn files_of(&self, keep: impl Fn(i32) -> bool) -> impl Iterator<Item = (&str, u64, u64)> + '_ {
        let mut by_name: std::collections::BTreeMap<&str, [u64; 2]> = Default::default();
        for (&(f, t), b) in &self.files.held_by {
            if b[0] + b[1] > 0 && keep(t) {
                let e = by_name.entry(&*self.files.rows[f as usize].0).or_default();
                e[0] += b[0];
                e[1] += b[1];
            }
        }
        by_name.into_iter().map(|(p, [r, w])| (p, r, w))
    }
}

/// Where bytes read (`read`), else written, are kept in a `[read, written]` pair: an
/// index, so that crediting one or the other takes no branch (which of the two a
/// syscall is, is data).
#[inline(always)]
fn rw_index(read: bool) -> usize {
    usize::from(!read)
}

/// Credits `n` bytes read (`read`) or written to thread `tid` (its data `slot`) and to
/// `file` (an index into `files.rows`).
#[inline(always)]
fn credit(tid: i32, slot: &mut ThreadIo, files: &mut Files, read: bool, n: u64, file: Option<u32>) {
    let k = rw_index(read);
    slot.io = true;
    let Some(f) = file else {
        slot.split[FileClass::Other as usize][k] += n;
        return;
    };
    let Some(x) = files.rows.get_mut(f as usize) else { return };
    x.1[k] += n;
    slot.split[x.2 as usize][k] += n;
    if x.3 || files.by_thread {
        files.held_by.entry((f, tid)).or_default()[k] += n;
    }
}
