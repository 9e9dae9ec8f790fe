//! Per-process file descriptor tables: which file each fd names, and the kernel rules
//! that change them. One set of rules for every consumer (the io analysis, the cube's
//! kernel feed). Each rule and the kernel behaviour it follows:
//!
//! * a successful syscall returning a new fd overwrites that slot (`fd_install` replaces
//!   whatever the number named: the kernel hands out the lowest free number, so a
//!   number reused by another call names the new object): open/openat/creat with their
//!   path; socket, accept/accept4, eventfd/2, epoll_create/1, inotify_init/1,
//!   timerfd_create, signalfd/4 (when `ufd` is -1), memfd_create, perf_event_open,
//!   userfaultfd, fanotify_init with the object's kind, as `/proc/PID/fd` names it
//!   ([`Sc::fd_kind`]); pipe/pipe2/socketpair set both fds of their exit's array;
//! * close(fd) that returns 0 frees the slot;
//! * dup/dup2/dup3 and fcntl(F_DUPFD, F_DUPFD_CLOEXEC) make the new fd name the file the
//!   old one named at entry (the kernel resolves the fd then); dup2 onto itself changes
//!   nothing;
//! * close-on-exec is set by `O_CLOEXEC` (or the call's own flag, [`Sc::cloexec_bit`]),
//!   dup3's and F_DUPFD_CLOEXEC's flag, and set or cleared by fcntl(fd, F_SETFD, arg)
//!   (`arg & FD_CLOEXEC`), as the kernel keeps it in the fd table's `close_on_exec`
//!   bitmap;
//! * close_range(first, last, flags) returning 0 closes the fds of the range, or marks
//!   them close-on-exec with `CLOSE_RANGE_CLOEXEC`;
//! * exec (`sched_process_exec`, or a successful execve/execveat exit when the trace
//!   lacks that event) closes the close-on-exec fds (`do_close_on_exec`); doing it twice
//!   for one exec changes nothing;
//! * fork copies the parent's table (`dup_fd`); threads share their process's table;
//! * the statedump lists the fds open when tracing began ([`FdTables::dump`]): bytes
//!   moved on such an fd before the statedump named it are held on a placeholder file
//!   (named `unknown (fd N)` by the consumer, [`FileNames::held`]) and given to the
//!   statedump's file if nothing touched that fd in between (an fd opened before
//!   tracing already named that file); otherwise they stay `unknown (fd N)`;
//! * a thread whose process is learnt late kept its fds under its own tid: they are
//!   brought into its process's table ([`FdTables::adopt`]), since threads share one
//!   table.

use crate::latency::CallId;
use crate::layout::Sc;
use crate::model::FxMap;

/// `fcntl` commands that duplicate a descriptor.
const F_DUPFD: i32 = 0;
const F_DUPFD_CLOEXEC: i32 = 1030;
/// `fcntl` command that sets the fd flags (`FD_CLOEXEC` = 1).
const F_SETFD: i32 = 2;
/// `close_range` flag: mark close-on-exec instead of closing.
const CLOSE_RANGE_CLOEXEC: i32 = 1 << 2;

#[derive(Debug, Clone, Copy)]
struct Fd {
    /// Interned file id (the caller's numbering).
    file: u32,
    cloexec: bool,
    /// `file` is a placeholder holding bytes for the statedump ([`FileNames::held`]).
    held: bool,
}

/// The consumer's file numbering, which the rules ask for names.
pub trait FileNames {
    /// The file id of `name` (a path or an fd kind such as `socket`), interned.
    fn named(&mut self, name: &str) -> u32;
    /// A new file id, a placeholder for bytes moved on fd `fd` of a process whose
    /// table knows nothing of it: named `unknown (fd N)` until the statedump names the
    /// fd ([`FdTables::dump`] then returns it).
    fn held(&mut self, fd: i32) -> u32;
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
/// names, the file its fd named at entry (the kernel looks it up then), and which call
/// it is by name and when it entered (for the latency of calls: the one pending-call
/// state, which io and the syscall latency both read).
#[derive(Debug, Clone, Copy)]
pub struct PendingCall {
    /// The call ([`Sc::Other`] for a call the model does not interpret).
    pub call: Call,
    /// The call's name (its entry's event class, or a raw syscall number).
    pub name: CallId,
    /// The time of its entry.
    pub at: i64,
    /// Open: the interned path argument.
    pub path: Option<u32>,
    /// Calls on an fd argument (read/write, dup, fcntl, close, [`Sc::OnFd`],
    /// [`Sc::FdToFd`]'s fd read): the fd's file at entry.
    pub file: Option<u32>,
    /// [`Sc::FdToFd`]: the file of the fd written (`a1`) at entry.
    pub out: Option<u32>,
}

/// What a call ended worked on (for [`crate::replay::Sink::completed`]): the fd and its
/// file, as lttng-iolatencytop's `Filename (fd=N)` column shows them.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub struct Ended {
    /// The fd: the fd argument of a call that takes one (read/write families, fcntl,
    /// close, a failed dup), or the fd an open, a dup or a call making one returned
    /// (dups as lttng-iolatencytop: the new fd).
    pub fd: i32,
    /// The file that fd named when the call entered (a placeholder from
    /// [`FileNames::held`] when bytes moved on an fd nothing names), the path an open
    /// named, or the kind of object a call made (`socket` …); `None`: unknown.
    pub file: Option<u32>,
    /// A call from one fd to another ([`Sc::FdToFd`]): the fd written and its file
    /// (`fd` and `file` are the fd read and its file).
    pub out: Option<(i32, Option<u32>)>,
}

impl Ended {
    /// A call that worked on `fd` alone, which named `file`.
    #[inline(always)]
    pub fn on(fd: i32, file: Option<u32>) -> Ended {
        Ended { fd, file, out: None }
    }
}

impl PendingCall {
    /// A call the model does not interpret ([`Sc::Other`]), named `name`, entered at
    /// `at`.
    #[inline(always)]
    pub fn other((name, at): (CallId, i64)) -> PendingCall {
        PendingCall { call: Call { sc: Sc::Other, a0: -1, a1: -1, a2: -1 }, name, at, path: None, file: None, out: None }
    }

    /// What this call worked on, ended by an exit returning `ret`: `None` for calls that
    /// work on no single fd (pipes, socketpairs, close_range, exec, failed opens) and
    /// for [`Sc::OnFd`] calls on a negative fd (mmap's -1: anonymous memory).
    pub fn ended(&self, ret: i64, names: &mut impl FileNames) -> Option<Ended> {
        let (sc, a0) = (self.call.sc, self.call.a0);
        match sc {
            Sc::Dup | Sc::Dup2 | Sc::Dup3 if ret >= 0 && i32::try_from(ret).is_ok() => return Some(Ended::on(ret as i32, self.file)),
            Sc::OnFd if a0 < 0 => return None,
            Sc::FdToFd => return Some(Ended { fd: a0, file: self.file, out: Some((self.call.a1, self.out)) }),
            _ if takes_fd(sc) => return Some(Ended::on(a0, self.file)),
            _ => {}
        }
        let fd = i32::try_from(ret).ok().filter(|r| *r >= 0)?;
        match sc {
            Sc::Open => Some(Ended::on(fd, self.path)),
            Sc::Pipe | Sc::Socketpair => None,
            Sc::Signalfd if a0 != -1 => Some(Ended::on(a0, None)),
            _ => sc.fd_kind().map(|k| Ended::on(fd, Some(names.named(k)))),
        }
    }
}

/// Bytes a read or write moved, as its exit reports them.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Transfer {
    /// True for the read family.
    pub read: bool,
    /// Bytes (`ret > 0`).
    pub bytes: u64,
    /// The file (a placeholder from [`FileNames::held`] when its fd was unknown).
    pub file: Option<u32>,
    /// The fd it was moved on.
    pub fd: i32,
}

/// What a file is, as lttng-iousagetop's per-process columns split I/O: disk (a path,
/// as open/openat/creat or the statedump name a file), net (a socket), other (pipes,
/// anonymous inodes, fds nothing is known about).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FileClass {
    /// A file with a path.
    Disk = 0,
    /// A socket.
    Net = 1,
    /// Anything else.
    Other = 2,
}

impl FileClass {
    /// The class of a file named `name` (a path, `socket`, `socket:[N]`, `pipe:[N]` …).
    /// lttng-analyses 0.6.1 calls a file disk only when an open in the trace made it,
    /// and a statedump's fd unknown: a path from the statedump is a file all the same.
    pub fn of(name: &str) -> FileClass {
        if name.starts_with("socket") {
            FileClass::Net
        } else if name.starts_with('/') {
            FileClass::Disk
        } else {
            FileClass::Other
        }
    }
}

/// Whether `flags` (an argument, -1 when absent) has close-on-exec bit `bit`.
#[inline]
fn has_cloexec(flags: i32, bit: i64) -> bool {
    flags != -1 && i64::from(flags) & bit != 0
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

    /// Calls `f` on every open fd.
    fn each_mut(&mut self, mut f: impl FnMut(&mut Fd)) {
        self.dense.iter_mut().flatten().for_each(&mut f);
        self.sparse.values_mut().for_each(f);
    }

    #[inline]
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

    /// The file bytes moved on `fd` in table `t` go to: the file it names, else a new
    /// placeholder from `names` that the fd then names (so that later bytes join it,
    /// and the statedump may name it, see [`FdTables::dump`]).
    #[inline]
    pub fn io_file(&mut self, t: TableId, fd: i64, names: &mut impl FileNames) -> u32 {
        match self.file_in(t, fd) {
            Some(f) => f,
            None => self.hold(t, fd as i32, names),
        }
    }

    #[cold]
    #[inline(never)]
    fn hold(&mut self, t: TableId, fd: i32, names: &mut impl FileNames) -> u32 {
        let file = names.held(fd);
        self.tables[t.0 as usize].set(fd.into(), Some(Fd { file, cloexec: false, held: true }));
        file
    }

    /// The file a syscall's fd argument names when it enters (the kernel resolves it
    /// then): for read/write-family, dup-family, fcntl and close calls; `None` otherwise.
    #[inline]
    pub fn file_at_entry(&self, pid: i32, sc: Sc, a0: i64) -> Option<u32> {
        if takes_fd(sc) {
            self.file(pid, a0)
        } else {
            None
        }
    }

    /// Records that `fd` of `pid` names `file`.
    #[inline]
    pub fn insert(&mut self, pid: i32, fd: i32, file: u32, cloexec: bool) {
        let t = self.table(pid);
        self.tables[t.0 as usize].set(i64::from(fd), Some(Fd { file, cloexec, held: false }));
    }

    /// The statedump says `fd` of `pid` names `file`: recorded, and when the fd held
    /// bytes on a placeholder (I/O before the statedump, nothing done to the fd since),
    /// that placeholder is returned, its bytes now `file`'s, and every fd naming it
    /// (copies by fork or dup) names `file` instead.
    pub fn dump(&mut self, pid: i32, fd: i32, file: u32, cloexec: bool) -> Option<u32> {
        let t = self.table(pid);
        let before = self.tables[t.0 as usize].get(fd.into());
        self.insert(pid, fd, file, cloexec);
        let held = before.filter(|f| f.held)?.file;
        for t in &mut self.tables {
            t.each_mut(|f| {
                if f.file == held {
                    *f = Fd { file, cloexec: f.cloexec, held: false };
                }
            });
        }
        Some(held)
    }

    /// A forked process starts with a copy of its parent's table.
    pub fn fork(&mut self, parent: i32, child: i32) {
        if parent != child {
            let copy = self.ids.get(&parent).map(|t| self.tables[t.0 as usize].clone()).unwrap_or_default();
            let t = self.table(child);
            self.tables[t.0 as usize] = copy;
        }
    }

    /// Exec closes the descriptors marked close-on-exec.
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

    /// Thread `tid`, whose process was unknown (its fds kept under its own id), belongs
    /// to process `pid`: the fds it set are brought into `pid`'s table (they win over
    /// what that table says of the same numbers: the thread's are the later facts).
    pub fn adopt(&mut self, tid: i32, pid: i32) {
        if tid == pid {
            return;
        }
        let Some(&from) = self.ids.get(&tid) else { return };
        let moved = std::mem::take(&mut self.tables[from.0 as usize]);
        let into = self.table(pid);
        let t = &mut self.tables[into.0 as usize];
        for (fd, f) in moved.dense.into_iter().enumerate() {
            if f.is_some() {
                t.set(fd as i64, f);
            }
        }
        for (fd, f) in moved.sparse {
            t.set(fd.into(), Some(f));
        }
    }

    /// The entry of `call` (with an open's interned `path`; named `name`, at time
    /// `at`) by a thread of `pid`.
    #[inline]
    pub fn enter(&self, pid: i32, call: Call, path: Option<u32>, (name, at): (CallId, i64)) -> PendingCall {
        match self.ids.get(&pid) {
            Some(&t) => self.enter_in(t, call, path, (name, at)),
            None => PendingCall { call, name, at, path, file: None, out: None },
        }
    }

    /// [`FdTables::enter`] by a thread whose process has table `t`.
    #[inline]
    pub fn enter_in(&self, t: TableId, call: Call, path: Option<u32>, (name, at): (CallId, i64)) -> PendingCall {
        let file = if takes_fd(call.sc) { self.file_in(t, call.a0.into()) } else { None };
        let out = if call.sc == Sc::FdToFd { self.file_in(t, call.a1.into()) } else { None };
        PendingCall { call, name, at, path, file, out }
    }

    /// The exit returning `ret` (and `fds`, a pipe or socketpair exit's array) of a call
    /// entered by [`FdTables::enter`] whose exit names syscall `sc` (`None`: a generic
    /// exit): a mismatched exit is ignored; a read or write that moved bytes is
    /// returned (its file a placeholder when its fd was unknown); other calls update
    /// the tables.
    pub fn exit(&mut self, pid: i32, p: PendingCall, sc: Option<Sc>, ret: i64, fds: Option<[i32; 2]>, names: &mut impl FileNames) -> Option<Transfer> {
        if sc.is_some_and(|s| s != p.call.sc) {
            return None;
        }
        match p.call.sc {
            Sc::Read | Sc::Write if ret > 0 => {
                let file = match p.file {
                    Some(f) => f,
                    None => {
                        let t = self.table(pid);
                        self.io_file(t, p.call.a0.into(), names)
                    }
                };
                Some(Transfer { read: p.call.sc == Sc::Read, bytes: ret as u64, file: Some(file), fd: p.call.a0 })
            }
            Sc::Read | Sc::Write => None,
            _ => {
                self.on_exit(pid, p, ret, fds, names);
                None
            }
        }
    }

    /// The table changes of the exit returning `ret` of pending call `p` (not a read or
    /// write): see the module documentation for the rules.
    pub fn on_exit(&mut self, pid: i32, p: PendingCall, ret: i64, fds: Option<[i32; 2]>, names: &mut impl FileNames) {
        let PendingCall { call, path, file: from, .. } = p;
        let sc = call.sc;
        let cloexec = has_cloexec(call.a2, sc.cloexec_bit());
        match sc {
            Sc::Open if ret >= 0 => {
                let file = path.unwrap_or_else(|| names.named("unknown"));
                self.insert(pid, ret as i32, file, cloexec);
            }
            Sc::Close if ret == 0 => self.set(pid, call.a0.into(), None),
            Sc::Dup if ret >= 0 => self.dup(pid, from, ret, false),
            Sc::Dup2 if ret >= 0 && ret != i64::from(call.a0) => self.dup(pid, from, ret, false),
            Sc::Dup3 if ret >= 0 => self.dup(pid, from, ret, cloexec),
            Sc::Fcntl if ret >= 0 && (call.a1 == F_DUPFD || call.a1 == F_DUPFD_CLOEXEC) => self.dup(pid, from, ret, call.a1 == F_DUPFD_CLOEXEC),
            Sc::Fcntl if ret == 0 && call.a1 == F_SETFD => {
                let t = self.table(pid);
                let t = &mut self.tables[t.0 as usize];
                if let Some(f) = t.get(call.a0.into()) {
                    t.set(call.a0.into(), Some(Fd { cloexec: call.a2 & 1 != 0, ..f }));
                }
            }
            // signalfd on an existing fd (`ufd` given) changes that fd's mask only.
            Sc::Signalfd if call.a0 != -1 => {}
            Sc::Pipe | Sc::Socketpair if ret == 0 => {
                if let (Some(fds), Some(kind)) = (fds, sc.fd_kind()) {
                    let file = names.named(kind);
                    for fd in fds {
                        self.insert(pid, fd, file, cloexec);
                    }
                }
            }
            Sc::CloseRange if ret == 0 => self.close_range(pid, call.a0 as u32, call.a1 as u32, call.a2 != -1 && call.a2 & CLOSE_RANGE_CLOEXEC != 0),
            Sc::Execve if ret == 0 => self.exec(pid),
            _ if ret >= 0 => {
                if let Some(kind) = sc.fd_kind() {
                    let file = names.named(kind);
                    self.insert(pid, ret as i32, file, cloexec);
                }
            }
            _ => {}
        }
    }

    /// Sets (or frees, `None`) `fd` of `pid`.
    fn set(&mut self, pid: i32, fd: i64, v: Option<Fd>) {
        if let Some(t) = self.ids.get(&pid) {
            self.tables[t.0 as usize].set(fd, v);
        }
    }

    /// close_range: the fds `first..=last` (unsigned) are closed, or marked
    /// close-on-exec.
    fn close_range(&mut self, pid: i32, first: u32, last: u32, mark: bool) {
        let Some(t) = self.ids.get(&pid) else { return };
        let t = &mut self.tables[t.0 as usize];
        let inside = |fd: i32| (first..=last).contains(&(fd as u32));
        let apply = |f: &mut Option<Fd>| {
            if mark {
                if let Some(x) = f {
                    x.cloexec = true;
                }
            } else {
                *f = None;
            }
        };
        for (fd, f) in t.dense.iter_mut().enumerate() {
            if inside(fd as i32) {
                apply(f);
            }
        }
        if mark {
            t.sparse.iter_mut().filter(|(fd, _)| inside(**fd)).for_each(|(_, f)| f.cloexec = true);
        } else {
            t.sparse.retain(|fd, _| !inside(*fd));
        }
    }

    /// `to` now names what the source fd named (or nothing, if that was unknown).
    #[inline]
    fn dup(&mut self, pid: i32, from: Option<u32>, to: i64, cloexec: bool) {
        let t = self.table(pid);
        self.tables[t.0 as usize].set(to, from.map(|file| Fd { file, cloexec, held: false }));
    }
}

/// Whether the kernel resolves the first argument of `sc` as an fd at entry.
#[inline]
fn takes_fd(sc: Sc) -> bool {
    matches!(sc, Sc::Read | Sc::Write | Sc::Dup | Sc::Dup2 | Sc::Dup3 | Sc::Fcntl | Sc::Close | Sc::OnFd | Sc::FdToFd)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::layout::O_CLOEXEC;

    /// Names as ids: `named` interns, `held` makes a new placeholder each time.
    #[derive(Default)]
    struct Names(Vec<String>);

    impl FileNames for Names {
        fn named(&mut self, name: &str) -> u32 {
            match self.0.iter().position(|n| n == name) {
                Some(i) => i as u32,
                None => {
                    self.0.push(name.into());
                    self.0.len() as u32 - 1
                }
            }
        }
        fn held(&mut self, fd: i32) -> u32 {
            self.0.push(format!("unknown (fd {fd})"));
            self.0.len() as u32 - 1
        }
    }

    /// Runs `call` by `pid` to its exit returning `ret`.
    #[allow(clippy::too_many_arguments)] // a syscall as the tests spell it
    fn run(t: &mut FdTables, n: &mut Names, pid: i32, sc: Sc, [a0, a1, a2]: [i64; 3], path: Option<&str>, ret: i64, fds: Option<[i32; 2]>) -> Option<Transfer> {
        let path = path.map(|p| n.named(p));
        let p = t.enter(pid, Call::new(sc, a0, a1, a2), path, (0, 0));
        t.exit(pid, p, Some(sc), ret, fds, n)
    }

    fn name(t: &FdTables, n: &Names, pid: i32, fd: i64) -> Option<String> {
        t.file(pid, fd).map(|f| n.0[f as usize].clone())
    }

    #[test]
    fn open_dup_close_fork_exec() {
        let (mut t, mut n) = (FdTables::default(), Names::default());
        run(&mut t, &mut n, 10, Sc::Open, [0, 0, O_CLOEXEC], Some("/a"), 3, None);
        run(&mut t, &mut n, 10, Sc::Open, [0, 0, 0], Some("/b"), 4, None);
        run(&mut t, &mut n, 10, Sc::Dup2, [4, 5, 0], None, 5, None);
        assert_eq!(name(&t, &n, 10, 5).as_deref(), Some("/b"));
        t.fork(10, 20);
        run(&mut t, &mut n, 10, Sc::Close, [4, -1, -1], None, 0, None);
        assert_eq!(t.file(10, 4), None);
        assert_eq!(name(&t, &n, 20, 4).as_deref(), Some("/b"), "the child kept its copy");
        t.exec(20);
        assert_eq!(t.file(20, 3), None, "O_CLOEXEC closed on exec");
        assert_eq!(name(&t, &n, 20, 5).as_deref(), Some("/b"));
        run(&mut t, &mut n, 20, Sc::Fcntl, [5, F_DUPFD_CLOEXEC.into(), 0], None, 9, None);
        t.exec(20);
        assert_eq!(t.file(20, 9), None);
        run(&mut t, &mut n, 20, Sc::Close, [5, -1, -1], None, -9, None);
        assert_eq!(name(&t, &n, 20, 5).as_deref(), Some("/b"), "a failed close changes nothing");
        run(&mut t, &mut n, 20, Sc::Open, [-1, -1, -1], None, 6, None);
        t.exec(20);
        assert_eq!(name(&t, &n, 20, 6).as_deref(), Some("unknown"), "creat (no flags argument) is not close-on-exec");
    }

    #[test]
    fn fcntl_setfd_sets_and_clears_close_on_exec() {
        let (mut t, mut n) = (FdTables::default(), Names::default());
        run(&mut t, &mut n, 1, Sc::Open, [0, 0, 0], Some("/a"), 3, None);
        run(&mut t, &mut n, 1, Sc::Open, [0, 0, O_CLOEXEC], Some("/b"), 4, None);
        run(&mut t, &mut n, 1, Sc::Fcntl, [3, F_SETFD.into(), 1], None, 0, None);
        run(&mut t, &mut n, 1, Sc::Fcntl, [4, F_SETFD.into(), 0], None, 0, None);
        t.exec(1);
        assert_eq!(t.file(1, 3), None);
        assert_eq!(name(&t, &n, 1, 4).as_deref(), Some("/b"));
    }

    #[test]
    fn new_fds_overwrite_their_slot_by_kind() {
        let (mut t, mut n) = (FdTables::default(), Names::default());
        run(&mut t, &mut n, 1, Sc::Open, [0, 0, 0], Some("/a"), 3, None);
        // (The table missed the close of fd 3: the new socket overwrites it.)
        run(&mut t, &mut n, 1, Sc::Socket, [-1, -1, 1], None, 3, None);
        assert_eq!(name(&t, &n, 1, 3).as_deref(), Some("socket"));
        run(&mut t, &mut n, 1, Sc::Eventfd, [-1, -1, O_CLOEXEC], None, 4, None);
        assert_eq!(name(&t, &n, 1, 4).as_deref(), Some("anon_inode:[eventfd]"));
        run(&mut t, &mut n, 1, Sc::Pipe, [-1, -1, -1], None, 0, Some([5, 6]));
        assert_eq!((name(&t, &n, 1, 5).as_deref(), name(&t, &n, 1, 6).as_deref()), (Some("pipe"), Some("pipe")));
        run(&mut t, &mut n, 1, Sc::Signalfd, [4, -1, -1], None, 4, None);
        assert_eq!(name(&t, &n, 1, 4).as_deref(), Some("anon_inode:[eventfd]"), "signalfd on an existing fd makes none");
        t.exec(1);
        assert_eq!(t.file(1, 4), None, "EFD_CLOEXEC");
        run(&mut t, &mut n, 1, Sc::MemfdCreate, [-1, -1, 1], None, 7, None);
        run(&mut t, &mut n, 1, Sc::CloseRange, [5, 6, CLOSE_RANGE_CLOEXEC.into()], None, 0, None);
        assert!(t.file(1, 5).is_some());
        t.exec(1);
        assert_eq!((t.file(1, 5), t.file(1, 6), t.file(1, 7)), (None, None, None), "marked by close_range, MFD_CLOEXEC");
        run(&mut t, &mut n, 1, Sc::Open, [0, 0, 0], Some("/c"), 2000, None);
        run(&mut t, &mut n, 1, Sc::CloseRange, [3, u32::MAX.into(), 0], None, 0, None);
        assert_eq!((t.file(1, 3), t.file(1, 2000)), (None, None));
        run(&mut t, &mut n, 1, Sc::Open, [0, 0, O_CLOEXEC], Some("/d"), 8, None);
        run(&mut t, &mut n, 1, Sc::Execve, [-1, -1, -1], None, 0, None);
        assert_eq!(t.file(1, 8), None, "a successful execve exit is an exec");
    }

    #[test]
    fn bytes_before_the_statedump_are_held_for_its_path() {
        let (mut t, mut n) = (FdTables::default(), Names::default());
        let x = run(&mut t, &mut n, 1, Sc::Read, [3, -1, -1], None, 100, None).unwrap();
        let held = x.file.unwrap();
        assert_eq!(n.0[held as usize], "unknown (fd 3)");
        t.fork(1, 2);
        let y = run(&mut t, &mut n, 2, Sc::Write, [3, -1, -1], None, 5, None).unwrap();
        assert_eq!(y.file, Some(held), "the child's copy holds on the same placeholder");
        let f = n.named("/var/log/x");
        assert_eq!(t.dump(1, 3, f, false), Some(held));
        assert_eq!((t.file(1, 3), t.file(2, 3)), (Some(f), Some(f)));
        // Touched in between: not given.
        run(&mut t, &mut n, 1, Sc::Read, [4, -1, -1], None, 1, None);
        run(&mut t, &mut n, 1, Sc::Close, [4, -1, -1], None, 0, None);
        assert_eq!(t.dump(1, 4, f, false), None);
    }

    #[test]
    fn file_classes_follow_the_name() {
        for (name, class) in [
            ("/etc/passwd", FileClass::Disk),
            ("/dev/pts/0", FileClass::Disk),
            ("socket", FileClass::Net),
            ("socket:[22410]", FileClass::Net),
            ("pipe", FileClass::Other),
            ("pipe:[27864]", FileClass::Other),
            ("anon_inode:[eventfd]", FileClass::Other),
            ("unknown (fd 4)", FileClass::Other),
        ] {
            assert_eq!(FileClass::of(name), class, "{name}");
        }
    }

    #[test]
    fn a_late_known_thread_brings_its_fds() {
        let (mut t, mut n) = (FdTables::default(), Names::default());
        run(&mut t, &mut n, 7, Sc::Open, [0, 0, 0], Some("/a"), 5, None);
        t.adopt(7, 3);
        assert_eq!(name(&t, &n, 3, 5).as_deref(), Some("/a"));
        assert_eq!(t.file(7, 5), None);
    }
}
