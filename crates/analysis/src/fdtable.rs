//! Per-process file descriptor tables: which file each fd names, and how open, close,
//! dup/dup2/dup3, fcntl(F_DUPFD, F_DUPFD_CLOEXEC), fork and exec change that. One set of
//! rules shared by the io analysis and the cube's kernel feed.

use crate::kernel::{Sc, O_CLOEXEC};
use crate::model::FxMap;

/// `fcntl` commands that duplicate a descriptor.
const F_DUPFD: i32 = 0;
const F_DUPFD_CLOEXEC: i32 = 1030;

#[derive(Debug, Clone, Copy)]
struct Fd {
    /// Interned file id (the caller's numbering).
    file: u32,
    cloexec: bool,
}

/// A syscall as its entry gave it: which one and its first three arguments, as the
/// kernel takes them: 32-bit (fds, `fcntl` commands and open flags are `int` or
/// `unsigned int`; wider trace fields are truncated as the kernel truncates them).
#[derive(Debug, Clone, Copy)]
pub struct Call {
    /// The syscall.
    pub sc: Sc,
    /// First argument (the fd, for fd syscalls).
    pub a0: i32,
    /// Second argument.
    pub a1: i32,
    /// Third argument (open flags for openat/dup3's flags).
    pub a2: i32,
}

impl Call {
    /// The call of `sc` with arguments as the trace gives them (truncated to 32 bits).
    #[inline]
    pub fn new(sc: Sc, a0: i64, a1: i64, a2: i64) -> Call {
        Call { sc, a0: a0 as i32, a1: a1 as i32, a2: a2 as i32 }
    }
}

/// A syscall between its entry and its exit: the call, the interned path an open
/// names, and the file its fd named at entry (the kernel looks it up then).
#[derive(Debug, Clone, Copy)]
pub struct PendingCall {
    /// The call.
    pub call: Call,
    /// Open: the interned path argument.
    pub path: Option<u32>,
    /// Read/write/dup: the fd's file at entry.
    pub file: Option<u32>,
}

/// Bytes a read or write moved, as its exit reports them.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Transfer {
    /// True for the read family.
    pub read: bool,
    /// Bytes (`ret > 0`).
    pub bytes: u64,
    /// The file, when its fd was known.
    pub file: Option<u32>,
}

/// Fds below this are kept in a vector indexed by fd; others (rare) in a map.
const DENSE_FDS: i32 = 1024;

/// One process's descriptors.
#[derive(Debug, Clone, Default)]
struct Table {
    /// By fd, for fds in `0..DENSE_FDS`.
    dense: Vec<Option<Fd>>,
    /// Fds outside that range.
    sparse: FxMap<i32, Fd>,
}

/// Fds are C `int`s: an argument is taken modulo 2^32 (as the kernel does).
impl Table {
    #[inline]
    fn get(&self, fd: i64) -> Option<Fd> {
        let fd = fd as i32;
        // `dense` holds fds below `DENSE_FDS` only (a negative fd is past its end).
        match self.dense.get(fd as u32 as usize) {
            Some(f) => *f,
            None if (0..DENSE_FDS).contains(&fd) => None,
            None => self.sparse.get(&fd).copied(),
        }
    }

    fn set(&mut self, fd: i64, v: Option<Fd>) {
        let fd = fd as i32;
        if (0..DENSE_FDS).contains(&fd) {
            let i = fd as usize;
            if i >= self.dense.len() {
                if v.is_none() {
                    return;
                }
                self.dense.resize(i + 1, None);
            }
            self.dense[i] = v;
        } else {
            match v {
                Some(f) => self.sparse.insert(fd, f),
                None => self.sparse.remove(&fd),
            };
        }
    }
}

/// A process's fd table in [`FdTables`] (stable for the tables' life: a pid keeps its
/// table, whose content fork replaces).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TableId(u32);

/// The fd tables of every process, by pid.
#[derive(Debug, Clone, Default)]
pub struct FdTables {
    ids: FxMap<i32, TableId>,
    tables: Vec<Table>,
}

impl FdTables {
    /// The table of process `pid` (created empty if new).
    #[inline]
    pub fn table(&mut self, pid: i32) -> TableId {
        let n = TableId(self.tables.len() as u32);
        let id = *self.ids.entry(pid).or_insert(n);
        if id == n {
            self.tables.push(Table::default());
        }
        id
    }

    /// The file `fd` names in table `t`, if known.
    #[inline]
    pub fn file_in(&self, t: TableId, fd: i64) -> Option<u32> {
        self.tables[t.0 as usize].get(fd).map(|f| f.file)
    }

    /// The file `fd` of process `pid` names, if known.
    #[inline]
    pub fn file(&self, pid: i32, fd: i64) -> Option<u32> {
        let t = *self.ids.get(&pid)?;
        self.file_in(t, fd)
    }

    /// The file a syscall's fd argument names when it enters (the kernel resolves it
    /// then): for read/write-family and dup-family calls; `None` otherwise.
    #[inline]
    pub fn file_at_entry(&self, pid: i32, sc: Sc, a0: i64) -> Option<u32> {
        if takes_fd(sc) {
            self.file(pid, a0)
        } else {
            None
        }
    }

    /// Records that `fd` of `pid` names `file` (statedump).
    pub fn insert(&mut self, pid: i32, fd: i32, file: u32, cloexec: bool) {
        let t = self.table(pid);
        self.tables[t.0 as usize].set(i64::from(fd), Some(Fd { file, cloexec }));
    }

    /// A forked process starts with a copy of its parent's table.
    pub fn fork(&mut self, parent: i32, child: i32) {
        if parent != child {
            let copy = self.ids.get(&parent).map(|t| self.tables[t.0 as usize].clone()).unwrap_or_default();
            let t = self.table(child);
            self.tables[t.0 as usize] = copy;
        }
    }

    /// Exec closes the descriptors opened with `O_CLOEXEC`.
    pub fn exec(&mut self, pid: i32) {
        if let Some(t) = self.ids.get(&pid) {
            let t = &mut self.tables[t.0 as usize];
            t.dense.iter_mut().for_each(|f| {
                if f.is_some_and(|f| f.cloexec) {
                    *f = None;
                }
            });
            t.sparse.retain(|_, f| !f.cloexec);
        }
    }

    /// The entry of `call` (with an open's interned `path`) by a thread of `pid`.
    #[inline]
    pub fn enter(&self, pid: i32, call: Call, path: Option<u32>) -> PendingCall {
        PendingCall { call, path, file: self.file_at_entry(pid, call.sc, call.a0.into()) }
    }

    /// [`FdTables::enter`] by a thread whose process has table `t`.
    #[inline]
    pub fn enter_in(&self, t: TableId, call: Call, path: Option<u32>) -> PendingCall {
        PendingCall { call, path, file: if takes_fd(call.sc) { self.file_in(t, call.a0.into()) } else { None } }
    }

    /// The exit returning `ret` of a call entered by [`FdTables::enter`] whose exit
    /// names syscall `sc` (`None`: a generic exit): a mismatched exit is ignored; a read
    /// or write that moved bytes is returned; other calls update the tables (a
    /// successful open without a path argument names `unknown()`).
    pub fn exit(&mut self, pid: i32, p: PendingCall, sc: Option<Sc>, ret: i64, unknown: impl FnOnce() -> u32) -> Option<Transfer> {
        if sc.is_some_and(|s| s != p.call.sc) {
            return None;
        }
        match p.call.sc {
            Sc::Read | Sc::Write if ret > 0 => Some(Transfer { read: p.call.sc == Sc::Read, bytes: ret as u64, file: p.file }),
            Sc::Read | Sc::Write => None,
            sc => {
                let opened = (sc == Sc::Open && ret >= 0).then(|| p.path.unwrap_or_else(unknown));
                self.on_exit(pid, p.call, ret, opened, p.file);
                None
            }
        }
    }

    /// The table changes of a syscall's exit returning `ret`: `opened` is the file an
    /// open names (used only for a successful open); `from` is the file the duplicated
    /// fd named at entry ([`FdTables::file_at_entry`]). Read/write calls change nothing.
    pub fn on_exit(&mut self, pid: i32, call: Call, ret: i64, opened: Option<u32>, from: Option<u32>) {
        let cloexec = |flags: i32| i64::from(flags) & O_CLOEXEC != 0;
        match call.sc {
            Sc::Open if ret >= 0 => {
                if let Some(file) = opened {
                    self.insert(pid, ret as i32, file, cloexec(call.a2));
                }
            }
            Sc::Close if ret == 0 => {
                if let Some(t) = self.ids.get(&pid) {
                    self.tables[t.0 as usize].set(call.a0.into(), None);
                }
            }
            Sc::Dup if ret >= 0 => self.dup(pid, from, ret, false),
            Sc::Dup2 if ret >= 0 && ret != i64::from(call.a0) => self.dup(pid, from, ret, false),
            Sc::Dup3 if ret >= 0 => self.dup(pid, from, ret, cloexec(call.a2)),
            Sc::Fcntl if ret >= 0 && (call.a1 == F_DUPFD || call.a1 == F_DUPFD_CLOEXEC) => self.dup(pid, from, ret, call.a1 == F_DUPFD_CLOEXEC),
            _ => {}
        }
    }

    /// `to` now names what the source fd named (or nothing, if that was unknown).
    fn dup(&mut self, pid: i32, from: Option<u32>, to: i64, cloexec: bool) {
        let t = self.table(pid);
        self.tables[t.0 as usize].set(to, from.map(|file| Fd { file, cloexec }));
    }
}

/// Whether the kernel resolves the first argument of `sc` as an fd at entry.
#[inline]
fn takes_fd(sc: Sc) -> bool {
    matches!(sc, Sc::Read | Sc::Write | Sc::Dup | Sc::Dup2 | Sc::Dup3 | Sc::Fcntl)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn call(sc: Sc, a0: i64, a1: i64, a2: i64) -> Call {
        Call::new(sc, a0, a1, a2)
    }

    #[test]
    fn open_dup_close_fork_exec() {
        let mut t = FdTables::default();
        t.on_exit(10, call(Sc::Open, 0, 0, O_CLOEXEC), 3, Some(7), None);
        t.on_exit(10, call(Sc::Open, 0, 0, 0), 4, Some(8), None);
        let from = t.file_at_entry(10, Sc::Dup2, 4);
        t.on_exit(10, call(Sc::Dup2, 4, 5, 0), 5, None, from);
        assert_eq!(t.file(10, 5), Some(8));
        t.fork(10, 20);
        t.on_exit(10, call(Sc::Close, 4, 0, 0), 0, None, None);
        assert_eq!(t.file(10, 4), None);
        assert_eq!(t.file(20, 4), Some(8), "the child kept its copy");
        t.exec(20);
        assert_eq!(t.file(20, 3), None, "O_CLOEXEC closed on exec");
        assert_eq!(t.file(20, 5), Some(8));
        t.on_exit(20, call(Sc::Fcntl, 5, F_DUPFD_CLOEXEC.into(), 0), 9, None, t.file_at_entry(20, Sc::Fcntl, 5));
        t.exec(20);
        assert_eq!(t.file(20, 9), None);
        t.on_exit(20, call(Sc::Close, 5, 0, 0), -9, None, None);
        assert_eq!(t.file(20, 5), Some(8), "a failed close changes nothing");
    }
}
