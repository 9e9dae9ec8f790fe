//! The Linux kernel model's event layouts: for every (trace, stream class, event class)
//! what the event means and the handles of the fields we read, resolved once from the
//! metadata (no name comparison per event). Covers the three LTTng naming generations:
//! `sys_*` entries with a generic `exit_syscall` (lttng-modules < 2.6),
//! `syscall_entry_*`/`syscall_exit_*` (>= 2.6), raw `sys_enter`/`sys_exit` with x86-64
//! syscall numbers.

use std::collections::BTreeMap;

use ctf::plan::{EventPlan, FieldHandle, Plan, StreamPlan};
use ctf::stream::EventRef;
use ctf::trace::TraceSet;

/// The syscalls the kernel model follows: those that move bytes, and those that
/// change a process's fd table.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[repr(u8)]
pub enum Sc {
    /// read-family: read, pread64, readv, preadv, recvfrom, recvmsg.
    Read,
    /// write-family: write, pwrite64, writev, pwritev, sendto, sendmsg.
    Write,
    /// open, openat, creat: a new fd (exit `ret`) for a path.
    Open,
    /// close(fd).
    Close,
    /// dup(oldfd) → ret.
    Dup,
    /// dup2(oldfd, newfd).
    Dup2,
    /// dup3(oldfd, newfd, flags).
    Dup3,
    /// fcntl(fd, cmd, arg): F_DUPFD / F_DUPFD_CLOEXEC duplicate, F_SETFD sets
    /// close-on-exec.
    Fcntl,
    /// socket(family, type, protocol) → a new socket fd.
    Socket,
    /// accept(fd, …) / accept4(fd, …, flags) → a new socket fd.
    Accept,
    /// eventfd(count) / eventfd2(count, flags).
    Eventfd,
    /// epoll_create(size) / epoll_create1(flags).
    EpollCreate,
    /// inotify_init() / inotify_init1(flags).
    InotifyInit,
    /// timerfd_create(clockid, flags).
    TimerfdCreate,
    /// signalfd(ufd, …) / signalfd4(ufd, …, flags): a new fd when `ufd` is -1.
    Signalfd,
    /// memfd_create(uname, flags).
    MemfdCreate,
    /// perf_event_open(attr, pid, cpu, group_fd, flags).
    PerfEventOpen,
    /// userfaultfd(flags).
    Userfaultfd,
    /// fanotify_init(flags, event_f_flags).
    FanotifyInit,
    /// pipe(fildes) / pipe2(fildes, flags): two new fds, in the exit's array.
    Pipe,
    /// socketpair(family, type, protocol, usockvec): two new fds, in the exit's array.
    Socketpair,
    /// close_range(first, last, flags).
    CloseRange,
    /// execve / execveat: a successful exit is an exec.
    Execve,
    /// A call that works on the file of its fd argument and changes no fd table:
    /// fsync, fdatasync, sync_file_range, syncfs, lseek, fstat, fstatfs, ftruncate,
    /// fallocate, fadvise64, readahead, ioctl, flock, fchmod, fchown, fchdir, getdents,
    /// the `f*xattr` calls, mmap (its `fd`, -1 for anonymous memory), the socket calls
    /// on an fd (bind, connect, listen, shutdown, get/setsockopt, getsockname,
    /// getpeername) and epoll_ctl/epoll_wait (their `epfd`).
    OnFd,
    /// A call from one fd to another, changing no fd table: sendfile/sendfile64(out_fd,
    /// in_fd), splice(fd_in, …, fd_out), tee(fdin, fdout), copy_file_range(fd_in, …,
    /// fd_out); `a0` is the fd read, `a1` the fd written.
    FdToFd,
    /// A call the model does not interpret (every other syscall, raw entries): pending
    /// from its entry to its exit like any other, for the latency of calls
    /// ([`crate::fdtable::PendingCall`]), changing no fd table.
    Other,
}

/// x86-64 number of `close_range` (436 on every architecture since Linux 5.9's unified
/// numbering: x86-64, arm and arm64 alike), the one syscall LTTng versions older than
/// it report as `syscall_entry_unknown` that the model needs.
pub const NR_CLOSE_RANGE: u64 = 436;

impl Sc {
    /// Every syscall, in declaration order (`Sc::ALL[sc as usize] == sc`).
    pub const ALL: [Sc; 26] = [
        Sc::Read,
        Sc::Write,
        Sc::Open,
        Sc::Close,
        Sc::Dup,
        Sc::Dup2,
        Sc::Dup3,
        Sc::Fcntl,
        Sc::Socket,
        Sc::Accept,
        Sc::Eventfd,
        Sc::EpollCreate,
        Sc::InotifyInit,
        Sc::TimerfdCreate,
        Sc::Signalfd,
        Sc::MemfdCreate,
        Sc::PerfEventOpen,
        Sc::Userfaultfd,
        Sc::FanotifyInit,
        Sc::Pipe,
        Sc::Socketpair,
        Sc::CloseRange,
        Sc::Execve,
        Sc::OnFd,
        Sc::FdToFd,
        Sc::Other,
    ];

    /// The syscall of index `i` in declaration order (`Sc::ALL[i]`), `None` past the
    /// last: a range check, no table load (`sc as u32` is its index).
    #[inline(always)]
    pub fn from_index(i: u32) -> Option<Sc> {
        Some(match i {
            0 => Sc::Read,
            1 => Sc::Write,
            2 => Sc::Open,
            3 => Sc::Close,
            4 => Sc::Dup,
            5 => Sc::Dup2,
            6 => Sc::Dup3,
            7 => Sc::Fcntl,
            8 => Sc::Socket,
            9 => Sc::Accept,
            10 => Sc::Eventfd,
            11 => Sc::EpollCreate,
            12 => Sc::InotifyInit,
            13 => Sc::TimerfdCreate,
            14 => Sc::Signalfd,
            15 => Sc::MemfdCreate,
            16 => Sc::PerfEventOpen,
            17 => Sc::Userfaultfd,
            18 => Sc::FanotifyInit,
            19 => Sc::Pipe,
            20 => Sc::Socketpair,
            21 => Sc::CloseRange,
            22 => Sc::Execve,
            23 => Sc::OnFd,
            24 => Sc::FdToFd,
            25 => Sc::Other,
            _ => return None,
        })
    }

    /// The syscall of a bare name (`read`, `openat` …).
    pub fn from_name(n: &str) -> Option<Sc> {
        Some(match n {
            "read" | "pread64" | "readv" | "preadv" | "recvfrom" | "recvmsg" => Sc::Read,
            "write" | "pwrite64" | "writev" | "pwritev" | "sendto" | "sendmsg" => Sc::Write,
            "open" | "openat" | "creat" => Sc::Open,
            "close" => Sc::Close,
            "dup" => Sc::Dup,
            "dup2" => Sc::Dup2,
            "dup3" => Sc::Dup3,
            "fcntl" | "fcntl64" => Sc::Fcntl,
            "socket" => Sc::Socket,
            "accept" | "accept4" => Sc::Accept,
            "eventfd" | "eventfd2" => Sc::Eventfd,
            "epoll_create" | "epoll_create1" => Sc::EpollCreate,
            "inotify_init" | "inotify_init1" => Sc::InotifyInit,
            "timerfd_create" => Sc::TimerfdCreate,
            "signalfd" | "signalfd4" => Sc::Signalfd,
            "memfd_create" => Sc::MemfdCreate,
            "perf_event_open" => Sc::PerfEventOpen,
            "userfaultfd" => Sc::Userfaultfd,
            "fanotify_init" => Sc::FanotifyInit,
            "pipe" | "pipe2" => Sc::Pipe,
            "socketpair" => Sc::Socketpair,
            "close_range" => Sc::CloseRange,
            "execve" | "execveat" => Sc::Execve,
            "fsync" | "fdatasync" | "sync_file_range" | "sync_file_range2" | "syncfs" | "lseek" | "llseek" | "_llseek" | "fstat" | "newfstat" | "fstat64"
            | "fstatfs" | "fstatfs64" | "ftruncate" | "ftruncate64" | "fallocate" | "fadvise64" | "fadvise64_64" | "readahead" | "ioctl" | "flock"
            | "fchmod" | "fchown" | "fchdir" | "getdents" | "getdents64" | "fgetxattr" | "fsetxattr" | "flistxattr" | "fremovexattr" | "mmap" | "mmap2"
            | "bind" | "connect" | "listen" | "shutdown" | "getsockopt" | "setsockopt" | "getsockname" | "getpeername" | "epoll_ctl" | "epoll_wait"
            | "epoll_pwait" => Sc::OnFd,
            "sendfile" | "sendfile64" | "splice" | "tee" | "copy_file_range" => Sc::FdToFd,
            _ => return None,
        })
    }

    /// The syscall of a raw syscall number of architecture `arch`.
    #[inline]
    pub fn from_raw(arch: Arch, nr: u64) -> Option<Sc> {
        match arch {
            Arch::X86_64 => Sc::from_x86_64(nr),
            Arch::Arm64 => Sc::from_arm64(nr),
            Arch::Arm => Sc::from_arm(nr),
        }
    }

    /// The syscall of an x86-64 syscall number (arch/x86/entry/syscalls/syscall_64.tbl).
    pub fn from_x86_64(nr: u64) -> Option<Sc> {
        Some(match nr {
            0 | 17 | 19 | 45 | 47 | 295 => Sc::Read,
            1 | 18 | 20 | 44 | 46 | 296 => Sc::Write,
            2 | 85 | 257 => Sc::Open,
            3 => Sc::Close,
            32 => Sc::Dup,
            33 => Sc::Dup2,
            292 => Sc::Dup3,
            72 => Sc::Fcntl,
            41 => Sc::Socket,
            43 | 288 => Sc::Accept,
            284 | 290 => Sc::Eventfd,
            213 | 291 => Sc::EpollCreate,
            253 | 294 => Sc::InotifyInit,
            283 => Sc::TimerfdCreate,
            282 | 289 => Sc::Signalfd,
            319 => Sc::MemfdCreate,
            298 => Sc::PerfEventOpen,
            323 => Sc::Userfaultfd,
            300 => Sc::FanotifyInit,
            22 | 293 => Sc::Pipe,
            53 => Sc::Socketpair,
            436 => Sc::CloseRange,
            59 | 322 => Sc::Execve,
            // fstat, lseek, ioctl, connect, shutdown, bind, listen, getsockname,
            // getpeername, setsockopt, getsockopt, flock, fsync, fdatasync, ftruncate,
            // getdents, fchdir, fchmod, fchown, fstatfs, readahead, fsetxattr,
            // fgetxattr, flistxattr, fremovexattr, getdents64, fadvise64, epoll_wait,
            // epoll_ctl, sync_file_range, epoll_pwait, fallocate, syncfs.
            5
            | 8
            | 16
            | 42
            | 48..=52
            | 54
            | 55
            | 73..=75
            | 77
            | 78
            | 81
            | 91
            | 93
            | 138
            | 187
            | 190
            | 193
            | 196
            | 199
            | 217
            | 221
            | 232
            | 233
            | 277
            | 281
            | 285
            | 306 => Sc::OnFd,
            _ => return None,
        })
    }

    /// The syscall of an arm64 syscall number (the generic table,
    /// include/uapi/asm-generic/unistd.h; arm64 has no open, dup2, pipe, eventfd,
    /// epoll_create, inotify_init, signalfd).
    pub fn from_arm64(nr: u64) -> Option<Sc> {
        Some(match nr {
            63 | 67 | 65 | 69 | 207 | 212 => Sc::Read,
            64 | 68 | 66 | 70 | 206 | 211 => Sc::Write,
            56 => Sc::Open,
            57 => Sc::Close,
            23 => Sc::Dup,
            24 => Sc::Dup3,
            25 => Sc::Fcntl,
            198 => Sc::Socket,
            202 | 242 => Sc::Accept,
            19 => Sc::Eventfd,
            20 => Sc::EpollCreate,
            26 => Sc::InotifyInit,
            85 => Sc::TimerfdCreate,
            74 => Sc::Signalfd,
            279 => Sc::MemfdCreate,
            241 => Sc::PerfEventOpen,
            282 => Sc::Userfaultfd,
            262 => Sc::FanotifyInit,
            59 => Sc::Pipe,
            199 => Sc::Socketpair,
            436 => Sc::CloseRange,
            221 | 281 => Sc::Execve,
            // fsetxattr, fgetxattr, flistxattr, fremovexattr, epoll_ctl, epoll_pwait,
            // ioctl, flock, fstatfs, ftruncate, fallocate, fchdir, fchmod, fchown,
            // getdents64, lseek, fstat, fsync, fdatasync, sync_file_range, bind,
            // listen, connect, getsockname, getpeername, setsockopt, getsockopt,
            // shutdown, readahead, fadvise64, syncfs.
            7
            | 10
            | 13
            | 16
            | 21
            | 22
            | 29
            | 32
            | 44
            | 46
            | 47
            | 50
            | 52
            | 55
            | 61
            | 62
            | 80
            | 82..=84
            | 200
            | 201
            | 203..=205
            | 208..=210
            | 213
            | 223
            | 267 => Sc::OnFd,
            _ => return None,
        })
    }

    /// The syscall of a 32-bit arm (EABI) syscall number
    /// (arch/arm/tools/syscall.tbl).
    pub fn from_arm(nr: u64) -> Option<Sc> {
        Some(match nr {
            3 | 180 | 145 | 361 | 292 | 297 => Sc::Read,
            4 | 181 | 146 | 362 | 290 | 296 => Sc::Write,
            5 | 8 | 322 => Sc::Open,
            6 => Sc::Close,
            41 => Sc::Dup,
            63 => Sc::Dup2,
            358 => Sc::Dup3,
            55 | 221 => Sc::Fcntl,
            281 => Sc::Socket,
            285 | 366 => Sc::Accept,
            351 | 356 => Sc::Eventfd,
            250 | 357 => Sc::EpollCreate,
            316 | 360 => Sc::InotifyInit,
            350 => Sc::TimerfdCreate,
            349 | 355 => Sc::Signalfd,
            385 => Sc::MemfdCreate,
            364 => Sc::PerfEventOpen,
            388 => Sc::Userfaultfd,
            367 => Sc::FanotifyInit,
            42 | 359 => Sc::Pipe,
            288 => Sc::Socketpair,
            436 => Sc::CloseRange,
            11 | 387 => Sc::Execve,
            // lseek, ioctl, ftruncate, fchmod, fchown, fstatfs, fstat, fsync, fchdir,
            // _llseek, getdents, flock, fdatasync, ftruncate64, fstat64,
            // fchown32, getdents64, readahead, fsetxattr, fgetxattr, flistxattr,
            // fremovexattr, epoll_ctl, epoll_wait, fstatfs64, arm_fadvise64_64, bind,
            // connect, listen, getsockname, getpeername, shutdown, setsockopt,
            // getsockopt, sync_file_range2, epoll_pwait, fallocate, syncfs.
            19
            | 54
            | 93..=95
            | 100
            | 108
            | 118
            | 133
            | 140
            | 141
            | 143
            | 148
            | 194
            | 197
            | 207
            | 217
            | 225
            | 228
            | 231
            | 234
            | 237
            | 251
            | 252
            | 267
            | 270
            | 282..=284
            | 286
            | 287
            | 293..=295
            | 341
            | 346
            | 352
            | 373 => Sc::OnFd,
            _ => return None,
        })
    }

    /// How many of its first arguments the model reads from a raw `sys_enter`'s
    /// array ([`raw_entry`]), in order (as `a0`, `a1`, `a2`): those of the calls
    /// whose first argument is an fd and whose arguments the model reads sit in the
    /// same places as in the named events; 0 for the others (an open's path, a
    /// socket's type are not in a raw event: the call stays one the model does not
    /// interpret).
    pub fn raw_args(self) -> u64 {
        match self {
            Sc::Read | Sc::Write | Sc::Close | Sc::Dup | Sc::OnFd => 1,
            Sc::Dup2 => 2,
            Sc::Dup3 | Sc::Fcntl => 3,
            _ => 0,
        }
    }

    /// What a new fd made by this syscall names when no path does (as
    /// `/proc/PID/fd` shows it), for the syscalls that make one without a path.
    pub fn fd_kind(self) -> Option<&'static str> {
        Some(match self {
            Sc::Socket | Sc::Accept | Sc::Socketpair => "socket",
            Sc::Pipe => "pipe",
            Sc::Eventfd => "anon_inode:[eventfd]",
            Sc::EpollCreate => "anon_inode:[eventpoll]",
            Sc::InotifyInit => "anon_inode:inotify",
            Sc::TimerfdCreate => "anon_inode:[timerfd]",
            Sc::Signalfd => "anon_inode:[signalfd]",
            Sc::MemfdCreate => "memfd",
            Sc::PerfEventOpen => "anon_inode:[perf_event]",
            Sc::Userfaultfd => "anon_inode:[userfaultfd]",
            Sc::FanotifyInit => "anon_inode:[fanotify]",
            _ => return None,
        })
    }

    /// The bit of the flags argument (`Call::a2`) that makes the new fd close-on-exec,
    /// for the syscalls that make one: `O_CLOEXEC` for most (`SOCK_CLOEXEC`,
    /// `EFD_CLOEXEC`, `EPOLL_CLOEXEC`, `IN_CLOEXEC`, `TFD_CLOEXEC`, `SFD_CLOEXEC` are
    /// all defined as it), `MFD_CLOEXEC` = 1, `FAN_CLOEXEC` = 1,
    /// `PERF_FLAG_FD_CLOEXEC` = 8.
    pub fn cloexec_bit(self) -> i64 {
        match self {
            Sc::MemfdCreate | Sc::FanotifyInit => 1,
            Sc::PerfEventOpen => 8,
            _ => O_CLOEXEC,
        }
    }
}

/// The architecture whose numbers raw `sys_enter`/`sys_exit` events carry.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Arch {
    /// x86-64 (the default: LTTng's raw syscall events are mostly seen there).
    #[default]
    X86_64 = 0,
    /// arm64 (aarch64).
    Arm64 = 1,
    /// 32-bit arm, EABI.
    Arm = 2,
}

impl Arch {
    /// The architecture a trace's environment names (`arch`, or a `kernel_release`
    /// ending in an architecture, as Debian's do), x86-64 when none does.
    pub fn of_env(arch: Option<&str>, release: Option<&str>) -> Arch {
        let word = |s: &str| -> Option<Arch> {
            let s = s.to_ascii_lowercase();
            if s.ends_with("aarch64") || s.ends_with("arm64") {
                Some(Arch::Arm64)
            } else if s.ends_with("armhf") || s.ends_with("armel") || s.ends_with("armv7l") || s.ends_with("armmp") || s == "arm" {
                Some(Arch::Arm)
            } else {
                None
            }
        };
        arch.and_then(word).or_else(|| release.and_then(word)).unwrap_or_default()
    }

    /// The architecture of `trace`, from its metadata's environment (`arch`,
    /// `kernel_release`: [`Arch::of_env`]).
    pub fn of_trace(trace: &ctf::trace::Trace) -> Arch {
        let s = |k: &str| match trace.class.env(k) {
            Some(ctf::ir::EnvValue::Str(s)) => Some(s.as_str()),
            _ => None,
        };
        Arch::of_env(s("arch"), s("kernel_release"))
    }

    /// A small number for the architecture ([`Arch::from_index`] reads it back).
    pub fn index(self) -> u32 {
        self as u32
    }

    /// The architecture of [`Arch::index`] `i` (x86-64 for an unknown one).
    pub fn from_index(i: u32) -> Arch {
        match i {
            1 => Arch::Arm64,
            2 => Arch::Arm,
            _ => Arch::X86_64,
        }
    }
}

/// What an event class means to the kernel model, with its field handles.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[allow(missing_docs)] // variant fields are the handles of the tracepoint fields they are named after
pub enum Kind {
    /// Not used by the model.
    Other,
    /// `sched_switch`.
    Switch { prev_tid: FieldHandle, next_tid: FieldHandle, prev_comm: Option<FieldHandle>, next_comm: Option<FieldHandle>, prev_state: Option<FieldHandle> },
    /// `sched_process_fork`.
    Fork {
        parent_tid: Option<FieldHandle>,
        parent_pid: Option<FieldHandle>,
        child_tid: FieldHandle,
        child_pid: Option<FieldHandle>,
        child_comm: Option<FieldHandle>,
    },
    /// `sched_process_exec`.
    Exec { tid: Option<FieldHandle>, filename: Option<FieldHandle> },
    /// `sched_migrate_task`.
    Migrate { tid: FieldHandle },
    /// `lttng_statedump_process_state`.
    ProcState { tid: FieldHandle, pid: Option<FieldHandle>, name: Option<FieldHandle> },
    /// `lttng_statedump_file_descriptor`.
    FdDump { pid: FieldHandle, fd: FieldHandle, filename: Option<FieldHandle>, flags: Option<FieldHandle> },
    /// A syscall entry we understand; `a0..a2` are its fd-ish arguments.
    Entry { sc: Sc, a0: Option<FieldHandle>, a1: Option<FieldHandle>, a2: Option<FieldHandle>, path: Option<FieldHandle> },
    /// Entry of any other syscall (it still pairs with a generic exit).
    OtherEntry,
    /// `syscall_entry_unknown`: a syscall the tracer has no name for, by number, with
    /// its raw arguments (the model reads `close_range`'s, [`NR_CLOSE_RANGE`]).
    UnknownEntry { id: FieldHandle, args: Option<FieldHandle> },
    /// A syscall exit; `sc` is `None` for the generic `exit_syscall`; `fds` the
    /// two-fd array of pipe, pipe2 and socketpair exits.
    Exit { sc: Option<Sc>, ret: Option<FieldHandle>, fds: Option<FieldHandle> },
    /// Raw `sys_enter`: a syscall by number of architecture `arch`, with its raw
    /// arguments (the model reads those of the calls whose first argument is an fd:
    /// [`raw_entry`]).
    RawEntry { id: FieldHandle, args: Option<FieldHandle>, arch: Arch },
    /// Raw `sys_exit` (x86-64 numbers).
    RawExit { id: FieldHandle, ret: Option<FieldHandle>, arch: Arch },
}

/// One event class: its global name index, its `cpu_id` handle, its meaning.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct EvClass {
    /// Index into [`Layout::names`].
    pub name: u32,
    /// Handle of the packet context's `cpu_id`.
    pub cpu: Option<FieldHandle>,
    /// Meaning.
    pub kind: Kind,
}

/// Dispatch tables for a whole trace set.
#[derive(Debug, Clone, Default)]
pub struct Layout {
    /// Per trace: per stream class, in the order of the trace plan's streams
    /// ([`StreamPlan::index`](ctf::plan::StreamPlan)), `(id, classes by class index)`.
    traces: Vec<Vec<(u64, Vec<EvClass>)>>,
    /// Distinct event names, sorted.
    pub names: Vec<Box<str>>,
}

fn kind_of(plan: &Plan, sp: &StreamPlan, ev: &EventPlan, arch: Arch) -> Kind {
    let h = |n: &str| plan.event_field(sp, ev, &[n]);
    let name: &str = &ev.name;
    // `a2` is the flags argument of every call that makes an fd (see
    // `Sc::cloexec_bit`); fds are `fd`, `fildes`, `oldfd` or signalfd's `ufd`.
    let args = |sc: Sc| {
        let a0 = || h("fd").or_else(|| h("fildes")).or_else(|| h("oldfd"));
        let (a0, a1, a2) = match sc {
            Sc::Dup2 | Sc::Dup3 => (a0(), h("newfd"), h("flags")),
            Sc::Fcntl => (a0(), h("cmd"), h("arg")),
            Sc::Socket | Sc::Socketpair => (None, None, h("type")),
            Sc::CloseRange => (h("fd"), h("max_fd"), h("flags")),
            Sc::Signalfd => (h("ufd"), None, h("flags")),
            Sc::Read | Sc::Write | Sc::Close | Sc::Dup => (a0(), None, None),
            Sc::Execve => (None, None, None),
            Sc::OnFd => (h("fd").or_else(|| h("epfd")), None, None),
            Sc::FdToFd => (h("in_fd").or_else(|| h("fd_in")).or_else(|| h("fdin")), h("out_fd").or_else(|| h("fd_out")).or_else(|| h("fdout")), None),
            _ => (None, None, h("flags")),
        };
        Kind::Entry { sc, a0, a1, a2, path: if sc == Sc::Open { h("filename").or_else(|| h("pathname")) } else { None } }
    };
    let exit = |sc: Option<Sc>| {
        let fds = match sc {
            Some(Sc::Pipe) => h("fildes"),
            Some(Sc::Socketpair) => h("usockvec"),
            _ => None,
        };
        Kind::Exit { sc, ret: h("ret"), fds }
    };
    match name {
        "sched_switch" => match (h("prev_tid"), h("next_tid")) {
            (Some(prev_tid), Some(next_tid)) => {
                Kind::Switch { prev_tid, next_tid, prev_comm: h("prev_comm"), next_comm: h("next_comm"), prev_state: h("prev_state") }
            }
            _ => Kind::Other,
        },
        "sched_process_fork" => match h("child_tid") {
            Some(child_tid) => {
                Kind::Fork { parent_tid: h("parent_tid"), parent_pid: h("parent_pid"), child_tid, child_pid: h("child_pid"), child_comm: h("child_comm") }
            }
            None => Kind::Other,
        },
        "sched_process_exec" => Kind::Exec { tid: h("tid"), filename: h("filename") },
        "sched_migrate_task" => h("tid").map_or(Kind::Other, |tid| Kind::Migrate { tid }),
        "lttng_statedump_process_state" => h("tid").map_or(Kind::Other, |tid| Kind::ProcState { tid, pid: h("pid"), name: h("name") }),
        "lttng_statedump_file_descriptor" => match (h("pid"), h("fd")) {
            (Some(pid), Some(fd)) => Kind::FdDump { pid, fd, filename: h("filename"), flags: h("flags") },
            _ => Kind::Other,
        },
        "exit_syscall" => exit(None),
        "syscall_entry_unknown" => h("id").map_or(Kind::OtherEntry, |id| Kind::UnknownEntry { id, args: h("args") }),
        "sys_enter" | "raw_syscalls_sys_enter" => h("id").map_or(Kind::Other, |id| Kind::RawEntry { id, args: h("args"), arch }),
        "sys_exit" | "raw_syscalls_sys_exit" => h("id").map_or(Kind::Other, |id| Kind::RawExit { id, ret: h("ret"), arch }),
        _ => {
            if let Some(n) = name.strip_prefix("syscall_entry_") {
                Sc::from_name(n).map_or(Kind::OtherEntry, args)
            } else if let Some(n) = name.strip_prefix("syscall_exit_") {
                exit(Sc::from_name(n))
            } else if let Some(n) = name.strip_prefix("sys_") {
                Sc::from_name(n).map_or(Kind::OtherEntry, args)
            } else {
                Kind::Other
            }
        }
    }
}

impl Layout {
    /// Resolves every event class of every trace of `set`.
    pub fn new(set: &TraceSet) -> Layout {
        let mut names: BTreeMap<&str, u32> = BTreeMap::new();
        for t in &set.traces {
            for sp in &t.plan.streams {
                for ev in &sp.events {
                    names.insert(&ev.name, 0);
                }
            }
        }
        for (i, v) in names.values_mut().enumerate() {
            *v = i as u32;
        }
        let arch: Vec<Arch> = set.traces.iter().map(Arch::of_trace).collect();
        let traces = per_class(set, |t, plan, sp, ev| EvClass {
            name: names[&*ev.name],
            cpu: plan.event_field(sp, ev, &["cpu_id"]),
            kind: kind_of(plan, sp, ev, arch[t]),
        });
        Layout { traces, names: names.keys().map(|n| Box::from(*n)).collect() }
    }

    /// The classes of stream class `id` of trace `trace`, by class index.
    pub fn stream_classes(&self, trace: usize, id: u64) -> Option<&[EvClass]> {
        self.traces.get(trace)?.iter().find(|(i, _)| *i == id).map(|(_, v)| &v[..])
    }

    /// A mask over the event classes of stream class `id` of trace `trace`: true where
    /// `keep` accepts the class's kind (for the engine's `Selective::interest`).
    pub fn mask(&self, trace: usize, id: u64, keep: impl Fn(&Kind) -> bool) -> Option<Vec<bool>> {
        Some(self.stream_classes(trace, id)?.iter().map(|c| keep(&c.kind)).collect())
    }

    /// The kernel meaning of an event's class.
    #[inline]
    pub fn class(&self, ev: &EventRef<'_, '_>) -> Option<&EvClass> {
        // `traces[t]` lists the plan's stream classes in the plan's order.
        let (_, v) = self.traces.get(ev.trace_index())?.get(ev.stream_plan().index)?;
        v.get(ev.class_index())
    }
}

/// The CPU of an event: its packet's `cpu_id`, else a key derived from the stream.
#[inline]
pub fn cpu_of(ev: &EventRef<'_, '_>, c: &EvClass, stream: usize) -> u32 {
    c.cpu.and_then(|h| ev.uint(h)).map(|v| v.min(u32::MAX as u64 >> 1) as u32).unwrap_or(0x8000_0000 | (stream as u32 & 0x7fff_ffff))
}

/// How a kernel's `sched_switch` writes `prev_state`, the state of the task it
/// switches out: LTTng writes what the kernel's own tracepoint would, which changed
/// with Linux 4.14.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum StateEncoding {
    /// Linux 4.14 and later (`task_state_index`): 0 for a runnable task, `1 << (index
    /// - 1)` for the others (1 S, 2 D, 4 T, 8 t, 16 X, 32 Z, 64 P, 128 I), and
    /// `TASK_REPORT_MAX` (256) for a task preempted while runnable.
    #[default]
    Report,
    /// Earlier kernels: the `task_struct` state bits (1 S, 2 D, 4 T, 8 t, 16 X, 32 Z,
    /// 64 `TASK_DEAD`, 512 P; 128 `TASK_WAKEKILL`, 256 `TASK_WAKING` and 1024
    /// `TASK_NOLOAD` are flags on them), or for a task preempted while runnable, only
    /// the `TASK_STATE_MAX` bit (1024 or 2048).
    Raw,
}

impl StateEncoding {
    /// The encoding of a trace whose environment says `kernel_release` (`4.4.0-1-amd64`):
    /// [`StateEncoding::Raw`] before 4.14; [`StateEncoding::Report`] otherwise, and
    /// when it is not known.
    pub fn of_release(release: Option<&str>) -> StateEncoding {
        let mut parts = release.unwrap_or("").split(|c: char| !c.is_ascii_digit()).map(str::parse::<u32>);
        match (parts.next(), parts.next()) {
            (Some(Ok(major)), Some(Ok(minor))) if (major, minor) < (4, 14) => StateEncoding::Raw,
            _ => StateEncoding::Report,
        }
    }

    /// The encoding of `trace`, from its metadata's `kernel_release`.
    pub fn of_trace(trace: &ctf::trace::Trace) -> StateEncoding {
        match trace.class.env("kernel_release") {
            Some(ctf::ir::EnvValue::Str(s)) => StateEncoding::of_release(Some(s)),
            _ => StateEncoding::default(),
        }
    }

    /// `prev_state` as `ps` letters: `R` runnable, `R+` preempted, `S` sleeping, `D`
    /// uninterruptible (waiting on I/O), `T` stopped, `t` traced, `X` dead, `Z` zombie,
    /// `P` parked, `I` idle; a value that is none of these as its number.
    pub fn name(self, prev_state: i64) -> String {
        let letter = match (self, prev_state) {
            (_, 0) => Some("R"),
            (StateEncoding::Report, v) => match v {
                1 => Some("S"),
                2 => Some("D"),
                4 => Some("T"),
                8 => Some("t"),
                16 => Some("X"),
                32 => Some("Z"),
                64 => Some("P"),
                128 => Some("I"),
                256 => Some("R+"),
                _ => None,
            },
            (StateEncoding::Raw, v) if v >= 0x400 && v & 0x3ff == 0 => Some("R+"),
            (StateEncoding::Raw, v) => {
                [(1, "S"), (2, "D"), (4, "T"), (8, "t"), (16, "X"), (32, "Z"), (64, "X"), (512, "P")].into_iter().find(|(bit, _)| v & bit != 0).map(|(_, l)| l)
            }
        };
        letter.map_or_else(|| prev_state.to_string(), str::to_string)
    }
}

/// A signed integer field as i32 (tids, pids, fds), if present.
#[inline]
pub fn i32_of(ev: &EventRef<'_, '_>, h: Option<FieldHandle>) -> Option<i32> {
    h.and_then(|h| ev.int(h)).map(|v| v as i32)
}

/// The two fds of a pipe, pipe2 or socketpair exit (`fds` of [`Kind::Exit`]), when the
/// event has them.
#[inline]
pub fn fd_pair(ev: &EventRef<'_, '_>, fds: Option<FieldHandle>) -> Option<[i32; 2]> {
    let h = fds?;
    Some([ev.int_elem(h, 0)? as i32, ev.int_elem(h, 1)? as i32])
}

/// The syscall and first three arguments (-1 when absent) of a `syscall_entry_unknown`
/// event ([`Kind::UnknownEntry`]) when the model follows it (`close_range`, by its
/// number [`NR_CLOSE_RANGE`], the same on every architecture); `None` otherwise.
#[inline]
pub fn unknown_entry(ev: &EventRef<'_, '_>, id: FieldHandle, args: Option<FieldHandle>) -> Option<(Sc, [i64; 3])> {
    if ev.uint(id)? != NR_CLOSE_RANGE {
        return None;
    }
    let arg = |i: u64| args.and_then(|h| ev.int_elem(h, i)).map_or(-1, |v| v as i64);
    Some((Sc::CloseRange, [arg(0), arg(1), arg(2)]))
}

/// The syscall and first three arguments (-1 where the model reads none) of a raw
/// `sys_enter` event ([`Kind::RawEntry`]) when its number is, in the architecture's
/// table, a call whose first argument is an fd ([`Sc::raw_args`]: reads, writes,
/// close, dup, fcntl, the calls on an fd such as fsync); `None` otherwise (the call is
/// pending, and names no fd).
#[inline]
pub fn raw_entry(ev: &EventRef<'_, '_>, id: FieldHandle, args: Option<FieldHandle>, arch: Arch) -> Option<(Sc, [i64; 3])> {
    let h = args?;
    let sc = Sc::from_raw(arch, ev.uint(id)?)?;
    let n = sc.raw_args();
    if n == 0 {
        return None;
    }
    let arg = |i: u64| if i < n { ev.int_elem(h, i).map_or(-1, |v| v as i64) } else { -1 };
    Some((sc, [arg(0), arg(1), arg(2)]))
}

/// Linux `O_CLOEXEC` (same value on x86 and arm).
pub const O_CLOEXEC: i64 = 0o2000000;

/// The command name a kernel gives a program: the file name's last component, at most
/// 15 bytes.
pub fn comm_of_path(p: &[u8]) -> &[u8] {
    let base = p.rsplit(|b| *b == b'/').next().unwrap_or(p);
    &base[..base.len().min(15)]
}

/// `f` of every event class of `set`: per trace, per stream class (with its id), per
/// class index, as the kernel's tables by class are laid out.
pub(crate) fn per_class<T>(set: &TraceSet, f: impl Fn(usize, &Plan, &StreamPlan, &EventPlan) -> T) -> Vec<Vec<(u64, Vec<T>)>> {
    set.traces
        .iter()
        .enumerate()
        .map(|(i, t)| t.plan.streams.iter().map(|sp| (sp.id, sp.events.iter().map(|ev| f(i, &t.plan, sp, ev)).collect())).collect())
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `Sc::from_index` spells out `Sc::ALL` (by a match, for speed): the two agree at
    /// every index, and each syscall's index is its `as u32`.
    #[test]
    fn sc_from_index_is_sc_all() {
        for i in 0..=u8::MAX as u32 {
            assert_eq!(Sc::from_index(i), Sc::ALL.get(i as usize).copied(), "index {i}");
        }
        for sc in Sc::ALL {
            assert_eq!(Sc::from_index(sc as u32), Some(sc));
        }
    }

    /// The states of the shared traces' kernels (3.2 to 4.4, raw) and of kernels since
    /// 4.14 (report): 130 is `TASK_KILLABLE` (uninterruptible, `D`, with the wake-kill
    /// flag), 64 an exiting task before 4.14 and a parked one after, 1024 or 2048 alone
    /// a preemption before 4.14 (`TASK_STATE_MAX`), 256 one after.
    #[test]
    fn switch_states_are_read_by_the_kernel_release() {
        let raw = StateEncoding::of_release(Some("4.4.0-1-amd64"));
        let report = StateEncoding::of_release(Some("5.15.0-91-generic"));
        assert_eq!((raw, report), (StateEncoding::Raw, StateEncoding::Report));
        assert_eq!(StateEncoding::of_release(Some("3.10.31-ltsi")), StateEncoding::Raw);
        assert_eq!(StateEncoding::of_release(Some("4.14.0")), StateEncoding::Report);
        assert_eq!(StateEncoding::of_release(None), StateEncoding::Report);
        let names = |e: StateEncoding, vs: &[i64]| vs.iter().map(|&v| e.name(v)).collect::<Vec<_>>();
        assert_eq!(names(raw, &[0, 1, 2, 130, 64, 1024, 2048, 512, 1026, 4096 + 3]), ["R", "S", "D", "D", "X", "R+", "R+", "P", "D", "S"]);
        assert_eq!(names(report, &[0, 1, 2, 32, 64, 128, 256, 130]), ["R", "S", "D", "Z", "P", "I", "R+", "130"]);
    }
}
