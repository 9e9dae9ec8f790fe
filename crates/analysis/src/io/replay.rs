//! The interpreted I/O state of a complete prefix of the trace: threads, fd tables,
//! files and their bytes. Threads and files live in dense tables; a thread's slot is
//! found by tid in a direct table (the caller also caches the slot of the task running
//! on each stream), and a thread remembers its process's fd table, so a read or write
//! costs no hash look-up.

use std::sync::Arc;

use crate::io::log::{LRec, Rec, Who};
use kernel::fdtable::{Call, FdTables, FileClass, FileNames, PendingCall, TableId};
use kernel::layout::Sc;
use kernel::model::FxMap;

/// What the replay knows of one thread.
#[derive(Debug, Clone, Default)]
struct ThreadSlot {
    tid: i32,
    pid: Option<i32>,
    /// Its process's fd table, once looked up (forgotten when `pid` changes).
    table: Option<TableId>,
    pending: Option<PendingCall>,
    /// Bytes read and written ([`rw_index`]), by [`FileClass`] of the file (the
    /// totals are their sums: one add per credit, not two).
    split: Split,
    /// Whether bytes were credited (a read or write exit with `ret > 0`).
    io: bool,
}

impl ThreadSlot {
    /// Its pid (its tid when unknown).
    #[inline(always)]
    fn pid(&self) -> i32 {
        self.pid.unwrap_or(self.tid)
    }
}

/// Bytes `[read, written]` by [`FileClass`] (disk, net, other).
pub type Split = [[u64; 2]; 3];

/// A thread's slot cached for a stream: `(tid, slot)` of the task last seen there, or
/// [`NO_CACHE`] (a plain pair, its slot read with one load).
pub type SlotCache = (i32, u32);

/// An empty [`SlotCache`] (its slot is [`NO_SLOT`]).
pub const NO_CACHE: SlotCache = (0, NO_SLOT);

/// Tids below this are looked up in [`Replay`]'s direct table (Linux's `pid_max` is at
/// most 2^22); others, in its map.
const DIRECT_TIDS: usize = 1 << 22;

/// No slot, in [`Replay`]'s direct table and in a [`SlotCache`].
pub const NO_SLOT: u32 = u32::MAX;

/// The index of `tid` in [`Replay`]'s direct table, when it has one there.
#[inline(always)]
fn direct_index(tid: i32) -> Option<usize> {
    usize::try_from(tid).ok().filter(|&t| t < DIRECT_TIDS)
}

/// The interpreted state (see the module documentation).
#[derive(Debug, Clone, Default)]
pub struct Replay {
    /// Slot of each tid in `0..DIRECT_TIDS` (or [`NO_SLOT`]), by tid: grown to the
    /// largest tid seen, so at most 16 MiB. (Flat, not paged as a
    /// [`kernel::tid_index::TidIndex`]: only the one complete state has a replay, and a
    /// look-up is then one load, not two: 2 % of io's time on syn2m, measured.)
    by_tid: Vec<u32>,
    /// Slots of other tids.
    tids: FxMap<i32, u32>,
    slots: Vec<ThreadSlot>,
    /// Fd tables; files are indexes into `files.rows`.
    fds: FdTables,
    files: Files,
}

/// The files: interned names, and placeholders for bytes held for the statedump
/// ([`FileNames::held`]), each with its bytes read and written ([`rw_index`]).
#[derive(Debug, Clone, Default)]
struct Files {
    ids: FxMap<Arc<str>, u32>,
    rows: Vec<Row>,
    /// Bytes credited to a placeholder, by (placeholder, tid): a thread's share moves
    /// from [`FileClass::Other`] to the class of the file the statedump names.
    held_by: FxMap<(u32, i32), [u64; 2]>,
}

/// A file: its name, bytes `[read, written]`, class, and whether it is a placeholder
/// ([`FileNames::held`]).
type Row = (Arc<str>, [u64; 2], FileClass, bool);

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
        let b = std::mem::take(&mut self.rows[held as usize].1);
        let f = &mut self.rows[file as usize].1;
        f[0] += b[0];
        f[1] += b[1];
        let mut shares: Vec<(i32, [u64; 2])> = self.held_by.iter().filter(|((h, _), _)| *h == held).map(|(&(_, t), &b)| (t, b)).collect();
        self.held_by.retain(|(h, _), _| *h != held);
        shares.sort_unstable();
        shares
    }
}

impl Replay {
    /// The slot of `tid` (created if new).
    #[inline]
    pub fn slot(&mut self, tid: i32) -> usize {
        match self.find(tid) {
            Some(i) => i,
            None => self.new_slot(tid),
        }
    }

    /// Gives `tid`, which has none, a slot.
    #[cold]
    #[inline(never)]
    fn new_slot(&mut self, tid: i32) -> usize {
        let i = self.slots.len();
        self.slots.push(ThreadSlot { tid, ..Default::default() });
        match direct_index(tid) {
            Some(t) => {
                if self.by_tid.len() <= t {
                    self.by_tid.resize((t + 1).next_power_of_two().min(DIRECT_TIDS), NO_SLOT);
                }
                self.by_tid[t] = i as u32;
            }
            None => {
                self.tids.insert(tid, i as u32);
            }
        }
        i
    }

    /// The slot of `tid`, if it has one.
    #[inline(always)]
    fn find(&self, tid: i32) -> Option<usize> {
        match direct_index(tid) {
            Some(t) => self.by_tid.get(t).copied().filter(|&i| i != NO_SLOT).map(|i| i as usize),
            None => self.tids.get(&tid).map(|&i| i as usize),
        }
    }

    /// The slot of `tid`, through `cache` (updated).
    #[inline(always)]
    pub fn slot_cached(&mut self, cache: &mut SlotCache, tid: i32) -> usize {
        match *cache {
            (t, i) if i != NO_SLOT && t == tid => i as usize,
            _ => {
                let i = self.slot(tid);
                *cache = (tid, i as u32);
                i
            }
        }
    }

    fn key(&self, tid: i32) -> i32 {
        self.find(tid).and_then(|i| self.slots[i].pid).unwrap_or(tid)
    }

    /// The pid of slot `i` (its tid when unknown).
    #[inline(always)]
    fn pid(&self, i: usize) -> i32 {
        self.slots[i].pid()
    }

    fn set_pid(&mut self, tid: i32, pid: i32) {
        let i = self.slot(tid);
        let s = &mut self.slots[i];
        if s.pid != Some(pid) {
            if s.pid.is_none() {
                // Its fds were kept under its tid: they are its process's.
                self.fds.adopt(tid, pid);
            }
            s.pid = Some(pid);
            s.table = None;
        }
    }

    /// Credits `n` bytes read (`read`) or written to slot `i` and to `file`.
    #[inline(always)]
    fn credit(&mut self, i: usize, read: bool, n: u64, file: Option<u32>) {
        credit(&mut self.slots[i], &mut self.files, read, n, file);
    }

    /// The thread of slot `i` enters `call` (`path`: an open's interned path).
    #[inline(always)]
    pub fn enter(&mut self, i: usize, call: Call, path: Option<u32>) {
        let slot = &mut self.slots[i];
        let table = table_of(slot, &mut self.fds);
        slot.pending = Some(self.fds.enter_in(table, call, path));
    }

    /// [`Replay::enter`] of a read or write `sc` of `fd`, its other arguments absent
    /// (it takes an fd: no check of which call it is).
    #[inline(always)]
    pub fn enter_rw(&mut self, i: usize, sc: Sc, fd: i64) {
        let slot = &mut self.slots[i];
        let table = table_of(slot, &mut self.fds);
        let call = Call::new(sc, fd, -1, -1);
        slot.pending = Some(PendingCall { call, path: None, file: self.fds.file_in(table, call.a0.into()) });
    }

    /// The thread of slot `i` enters a syscall the analysis does not interpret.
    #[inline(always)]
    pub fn other_entry(&mut self, i: usize) {
        self.slots[i].pending = None;
    }

    /// The thread of slot `i` exits syscall `sc` (`None`: a generic exit) with `ret`.
    #[inline(always)]
    pub fn exit(&mut self, i: usize, sc: Option<Sc>, ret: i64) {
        let slot = &mut self.slots[i];
        let Some(e) = &slot.pending else { return };
        if let Sc::Read | Sc::Write = e.call.sc {
            // The common case, without the tables' general exit (and without copying
            // the pending call out): as there, an exit of another call ends the
            // pending one and credits nothing.
            let (read, file, fd) = (e.call.sc == Sc::Read, e.file, e.call.a0);
            let matches = sc.is_none_or(|s| s == e.call.sc);
            slot.pending = None;
            if matches && ret > 0 {
                let file = match file {
                    Some(f) => f,
                    None => self.held_file(i, fd.into()),
                };
                credit(&mut self.slots[i], &mut self.files, read, ret as u64, Some(file));
            }
            return;
        }
        self.exit_other(i, sc, ret, None);
    }

    /// The file of bytes moved on `fd` by the thread of slot `i`, whose fd table does
    /// not know `fd`: a placeholder ([`FdTables::io_file`]).
    #[cold]
    #[inline(never)]
    fn held_file(&mut self, i: usize, fd: i64) -> u32 {
        let table = table_of(&mut self.slots[i], &mut self.fds);
        self.fds.io_file(table, fd, &mut self.files)
    }

    /// [`Replay::exit`] of a call other than a read or write (`fds`: a pipe or
    /// socketpair exit's).
    #[inline(never)]
    fn exit_other(&mut self, i: usize, sc: Option<Sc>, ret: i64, fds: Option<[i32; 2]>) {
        let Some(e) = self.slots[i].pending.take() else { return };
        let pid = self.pid(i);
        if let Some(x) = self.fds.exit(pid, e, sc, ret, fds, &mut self.files) {
            self.credit(i, x.read, x.bytes, x.file);
        }
    }

    /// Interprets one record of a chunk's log.
    #[inline(always)]
    pub fn apply_l(&mut self, r: LRec) {
        match r {
            LRec::R(r) => self.apply(r, None),
            LRec::Rw { t, sc, fd, ret, exited } => {
                let i = self.slot(t);
                self.apply_rw(i, sc, fd, exited.then_some(ret));
            }
        }
    }

    /// Interprets [`LRec::Rw`]`{ t, sc, fd, .. }` of the thread of slot `i` (`t`'s), `ret`
    /// its exit's return value once it exited.
    #[inline(always)]
    pub fn apply_rw(&mut self, i: usize, sc: Sc, fd: i32, ret: Option<i64>) {
        match ret {
            // The entry and its exit: the call ends; bytes moved are credited to the
            // file the fd named at entry. (Nothing else happened in between: the
            // table is looked up only when there are bytes to credit, looking it up
            // changing nothing seen.)
            Some(ret) => {
                let slot = &mut self.slots[i];
                slot.pending = None;
                if ret > 0 {
                    let table = table_of(slot, &mut self.fds);
                    let file = self.fds.io_file(table, fd.into(), &mut self.files);
                    credit(slot, &mut self.files, sc == Sc::Read, ret as u64, Some(file));
                }
            }
            // (A read or write uses only its fd: the other arguments as if absent.)
            None => self.enter_rw(i, sc, fd.into()),
        }
    }

    /// Interprets one record; `slot` is the slot of the thread it names, when the
    /// caller knows it. Records naming the unknown task of a stream change nothing.
    #[inline(always)]
    pub fn apply<P: AsRef<str>>(&mut self, r: Rec<P>, slot: Option<usize>) {
        let slot_of = |me: &mut Replay, t: i32| slot.unwrap_or_else(|| me.slot(t));
        match r {
            Rec::Entry { who: Who::Tid(t), sc, a0, a1, a2, path } => {
                let i = slot_of(self, t);
                let path = path.map(|p| self.files.named(p.as_ref()));
                self.enter(i, Call { sc, a0, a1, a2 }, path);
            }
            Rec::OtherEntry { who: Who::Tid(t) } => {
                if let Some(i) = slot.or_else(|| self.find(t)) {
                    self.other_entry(i);
                }
            }
            Rec::Exit { who: Who::Tid(t), sc, ret } => {
                if let Some(i) = slot.or_else(|| self.find(t)) {
                    self.exit(i, sc, ret);
                }
            }
            Rec::Pair { who: Who::Tid(t), sc, fds } => {
                if let Some(i) = slot.or_else(|| self.find(t)) {
                    self.exit_other(i, sc, 0, Some(fds));
                }
            }
            Rec::Entry { who: Who::Head(_), .. }
            | Rec::OtherEntry { who: Who::Head(_) }
            | Rec::Exit { who: Who::Head(_), .. }
            | Rec::Pair { who: Who::Head(_), .. } => {}
            Rec::Fork { parent_tid, parent_pid, child_tid, child_pid } => {
                let child_pid = child_pid.unwrap_or(child_tid);
                self.set_pid(child_tid, child_pid);
                let parent = parent_pid.or_else(|| parent_tid.map(|t| self.key(t)));
                if let Some(parent) = parent {
                    self.fds.fork(parent, child_pid);
                }
            }
            Rec::Exec { tid } => {
                let pid = self.key(tid);
                self.fds.exec(pid);
            }
            Rec::ProcState { tid, pid } => self.set_pid(tid, pid),
            Rec::FdDump { pid, fd, path, cloexec } => {
                let file = self.files.named(path.as_ref());
                if let Some(held) = self.fds.dump(pid, fd, file, cloexec) {
                    let class = self.files.rows[file as usize].2 as usize;
                    for (tid, b) in self.files.give(held, file) {
                        let i = self.slot(tid);
                        let split = &mut self.slots[i].split;
                        for k in 0..2 {
                            split[FileClass::Other as usize][k] -= b[k];
                            split[class][k] += b[k];
                        }
                    }
                }
            }
        }
    }

    /// Per-thread `(tid, read, written, by file class)` of threads with I/O.
    pub fn threads(&self) -> impl Iterator<Item = (i32, u64, u64, Split)> + '_ {
        self.slots.iter().filter(|s| s.io).map(|s| {
            let total = |k: usize| s.split.iter().map(|c| c[k]).sum();
            (s.tid, total(0), total(1), s.split)
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
}

/// The fd table in `fds` of `slot`'s process (looked up once, then kept in the slot).
#[inline(always)]
fn table_of(slot: &mut ThreadSlot, fds: &mut FdTables) -> TableId {
    match slot.table {
        Some(t) => t,
        None => {
            let t = fds.table(slot.pid());
            slot.table = Some(t);
            t
        }
    }
}

/// Where bytes read (`read`), else written, are kept in a `[read, written]` pair: an
/// index, so that crediting one or the other takes no branch (which of the two a
/// syscall is, is data).
#[inline(always)]
fn rw_index(read: bool) -> usize {
    usize::from(!read)
}

/// Credits `n` bytes read (`read`) or written to `slot` and to `file` (an index into
/// `paths`).
#[inline(always)]
fn credit(slot: &mut ThreadSlot, files: &mut Files, read: bool, n: u64, file: Option<u32>) {
    let k = rw_index(read);
    slot.io = true;
    let Some(f) = file else {
        slot.split[FileClass::Other as usize][k] += n;
        return;
    };
    let Some(x) = files.rows.get_mut(f as usize) else { return };
    x.1[k] += n;
    slot.split[x.2 as usize][k] += n;
    if x.3 {
        files.held_by.entry((f, slot.tid)).or_default()[k] += n;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_tid_keeps_one_slot_in_the_direct_table_and_beyond_it() {
        let mut r = Replay::default();
        let tids = [0, 1, 7, 4096, 1 << 20, (DIRECT_TIDS - 1) as i32, DIRECT_TIDS as i32, i32::MAX, -1, i32::MIN];
        let slots: Vec<usize> = tids.iter().map(|&t| r.slot(t)).collect();
        // New tids get new slots, in order; asking again finds the same ones.
        assert_eq!(slots, (0..tids.len()).collect::<Vec<_>>());
        for (&t, &i) in tids.iter().zip(&slots) {
            assert_eq!(r.find(t), Some(i), "tid {t}");
            assert_eq!(r.slot(t), i, "tid {t}");
            assert_eq!(r.slots[i].tid, t);
        }
        assert_eq!(r.find(2), None);
        assert_eq!(r.find(DIRECT_TIDS as i32 + 1), None);
        // The direct table covers tids below DIRECT_TIDS only, and never grows past it.
        assert_eq!(r.by_tid.len(), DIRECT_TIDS);
        assert_eq!(r.tids.len(), 4);
    }
}
