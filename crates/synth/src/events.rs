//! The kernel events the workload produces, as typed values (before CTF encoding).

use std::sync::Arc;

/// A task name (`comm`), 16 bytes, NUL-padded like the kernel's `TASK_COMM_LEN`.
pub type Comm = [u8; 16];

/// Builds a [`Comm`] from a name (truncated to 15 bytes).
pub fn comm(name: &str) -> Comm {
    let mut c = [0u8; 16];
    let b = name.as_bytes();
    let n = b.len().min(15);
    c[..n].copy_from_slice(&b[..n]);
    c
}

/// The text of a [`Comm`].
pub fn comm_str(c: &Comm) -> String {
    let n = c.iter().position(|&b| b == 0).unwrap_or(16);
    String::from_utf8_lossy(&c[..n]).into_owned()
}

/// The I/O and file syscalls the workload uses.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Syscall {
    /// `read(fd, buf, count)`.
    Read,
    /// `write(fd, buf, count)`.
    Write,
    /// `pread64(fd, buf, count, pos)`.
    Pread64,
    /// `pwrite64(fd, buf, count, pos)`.
    Pwrite64,
    /// `readv(fd, vec, vlen)`.
    Readv,
    /// `writev(fd, vec, vlen)`.
    Writev,
    /// `openat(dfd, filename, flags, mode)`.
    Openat,
    /// `close(fd)`.
    Close,
    /// `dup(fildes)`.
    Dup,
    /// `dup2(oldfd, newfd)`.
    Dup2,
}

impl Syscall {
    /// All syscalls, in event-id order.
    pub const ALL: [Syscall; 10] = [
        Syscall::Read,
        Syscall::Write,
        Syscall::Pread64,
        Syscall::Pwrite64,
        Syscall::Readv,
        Syscall::Writev,
        Syscall::Openat,
        Syscall::Close,
        Syscall::Dup,
        Syscall::Dup2,
    ];
    /// The syscall's name (`read`, `openat`, ...).
    pub fn name(self) -> &'static str {
        match self {
            Syscall::Read => "read",
            Syscall::Write => "write",
            Syscall::Pread64 => "pread64",
            Syscall::Pwrite64 => "pwrite64",
            Syscall::Readv => "readv",
            Syscall::Writev => "writev",
            Syscall::Openat => "openat",
            Syscall::Close => "close",
            Syscall::Dup => "dup",
            Syscall::Dup2 => "dup2",
        }
    }
    /// Position in [`Syscall::ALL`].
    pub fn index(self) -> usize {
        self as usize
    }
    /// Reads bytes from a file (bytes = exit `ret` when >= 0).
    pub fn is_read(self) -> bool {
        matches!(self, Syscall::Read | Syscall::Pread64 | Syscall::Readv)
    }
    /// Writes bytes to a file (bytes = exit `ret` when >= 0).
    pub fn is_write(self) -> bool {
        matches!(self, Syscall::Write | Syscall::Pwrite64 | Syscall::Writev)
    }
}

/// The arguments of a syscall entry, as lttng-modules records them.
#[derive(Debug, Clone, PartialEq)]
pub enum SyscallArgs {
    /// read / pread64 (`pos` for pread64) / readv (`count` is `vlen`, `buf` is `vec`).
    Read {
        /// File descriptor.
        fd: i32,
        /// User buffer (or iovec array) address.
        buf: u64,
        /// Byte count (or `vlen`).
        count: u64,
        /// File position (pread64 only).
        pos: i64,
    },
    /// write / pwrite64 / writev, same conventions as `Read`.
    Write {
        /// File descriptor.
        fd: i32,
        /// User buffer (or iovec array) address.
        buf: u64,
        /// Byte count (or `vlen`).
        count: u64,
        /// File position (pwrite64 only).
        pos: i64,
    },
    /// openat.
    Openat {
        /// Directory fd (`AT_FDCWD` = -100).
        dfd: i32,
        /// Path.
        filename: Arc<str>,
        /// Open flags.
        flags: i32,
        /// Creation mode.
        mode: u16,
    },
    /// close.
    Close {
        /// File descriptor.
        fd: i32,
    },
    /// dup.
    Dup {
        /// Duplicated fd.
        fildes: i32,
    },
    /// dup2.
    Dup2 {
        /// Duplicated fd.
        oldfd: i32,
        /// Target fd.
        newfd: i32,
    },
}

/// One kernel event, with the payload lttng-modules records for it.
#[derive(Debug, Clone, PartialEq)]
pub enum KEvent {
    /// `lttng_statedump_start`.
    StatedumpStart,
    /// `lttng_statedump_end`.
    StatedumpEnd,
    /// `lttng_statedump_process_state`.
    StatedumpProcess {
        /// Thread id.
        tid: i32,
        /// Process id.
        pid: i32,
        /// Parent process id.
        ppid: i32,
        /// Thread name.
        name: Comm,
        /// 1 for a kernel thread, 0 for a user thread.
        kernel_thread: bool,
        /// LTTng process status (5 = wait, 6 = run).
        status: i32,
    },
    /// `lttng_statedump_file_descriptor`.
    StatedumpFd {
        /// Process id.
        pid: i32,
        /// File descriptor.
        fd: i32,
        /// Path.
        filename: Arc<str>,
    },
    /// `sched_switch`.
    SchedSwitch {
        /// Switched-out task name.
        prev_comm: Comm,
        /// Switched-out tid (0 = idle).
        prev_tid: i32,
        /// Its priority.
        prev_prio: i32,
        /// Its state (0 runnable, 1 interruptible sleep, 0x80 dead).
        prev_state: i64,
        /// Switched-in task name.
        next_comm: Comm,
        /// Switched-in tid (0 = idle).
        next_tid: i32,
        /// Its priority.
        next_prio: i32,
    },
    /// `sched_process_fork`.
    Fork {
        /// Parent name.
        parent_comm: Comm,
        /// Parent tid.
        parent_tid: i32,
        /// Parent pid.
        parent_pid: i32,
        /// Child name.
        child_comm: Comm,
        /// Child tid.
        child_tid: i32,
        /// Child pid (the parent's pid for a new thread).
        child_pid: i32,
    },
    /// `sched_process_exec`.
    Exec {
        /// Executed file.
        filename: Arc<str>,
        /// Thread id.
        tid: i32,
        /// Thread id before exec (same here).
        old_tid: i32,
    },
    /// `sched_process_exit`.
    Exit {
        /// Name.
        comm: Comm,
        /// Thread id.
        tid: i32,
        /// Priority.
        prio: i32,
    },
    /// `syscall_entry_<name>`.
    SyscallEntry(Syscall, SyscallArgs),
    /// Background kernel activity (irqs, softirqs, timers, allocations, wake-ups),
    /// which neither the workload's truth nor the cpu and io analyses depend on.
    Background(Background),
    /// `syscall_exit_<name>`.
    SyscallExit {
        /// Which syscall.
        call: Syscall,
        /// Return value.
        ret: i64,
        /// Output buffer address (read-family exits record it).
        buf: u64,
    },
}

/// Kernel activity besides the workload's syscalls and scheduling, as a real kernel
/// session records it (see [`crate::SynthConfig::background`]).
#[derive(Debug, Clone, PartialEq)]
pub enum Background {
    /// `irq_handler_entry`.
    IrqEntry {
        /// Interrupt line.
        irq: i32,
        /// Handler name.
        name: &'static str,
    },
    /// `irq_handler_exit`.
    IrqExit {
        /// Interrupt line.
        irq: i32,
        /// 1: handled.
        ret: i32,
    },
    /// `softirq_entry`.
    SoftirqEntry {
        /// Softirq vector.
        vec: u32,
    },
    /// `softirq_exit`.
    SoftirqExit {
        /// Softirq vector.
        vec: u32,
    },
    /// `timer_hrtimer_expire_entry`.
    HrtimerEntry {
        /// Timer address.
        hrtimer: u64,
        /// Expiry time (ns).
        now: i64,
        /// Callback address.
        function: u64,
    },
    /// `timer_hrtimer_expire_exit`.
    HrtimerExit {
        /// Timer address.
        hrtimer: u64,
    },
    /// `kmem_kmalloc`.
    Kmalloc {
        /// Caller address.
        call_site: u64,
        /// Block address.
        ptr: u64,
        /// Bytes asked for.
        bytes_req: u64,
        /// Bytes given.
        bytes_alloc: u64,
    },
    /// `kmem_kfree`.
    Kfree {
        /// Caller address.
        call_site: u64,
        /// Block address.
        ptr: u64,
    },
    /// `sched_wakeup`.
    Wakeup {
        /// Woken task's name.
        comm: Comm,
        /// Its tid.
        tid: i32,
        /// Its priority.
        prio: i32,
        /// CPU it is queued on.
        target_cpu: i32,
    },
}

impl Background {
    /// Index of this event's name in [`EVENT_NAMES`].
    pub fn name_index(&self) -> usize {
        WORKLOAD_EVENTS
            + match self {
                Background::IrqEntry { .. } => 0,
                Background::IrqExit { .. } => 1,
                Background::SoftirqEntry { .. } => 2,
                Background::SoftirqExit { .. } => 3,
                Background::HrtimerEntry { .. } => 4,
                Background::HrtimerExit { .. } => 5,
                Background::Kmalloc { .. } => 6,
                Background::Kfree { .. } => 7,
                Background::Wakeup { .. } => 8,
            }
    }
}

/// The workload's event classes: the first entries of [`EVENT_NAMES`], always declared
/// (the others, [`Background`]'s, only in traces that have background activity).
pub const WORKLOAD_EVENTS: usize = 28;

/// Names of all event classes, in the order of [`KEvent::name_index`].
pub const EVENT_NAMES: [&str; 37] = [
    "lttng_statedump_start",
    "lttng_statedump_end",
    "lttng_statedump_process_state",
    "lttng_statedump_file_descriptor",
    "syscall_entry_read",
    "syscall_entry_write",
    "syscall_entry_pread64",
    "syscall_entry_pwrite64",
    "syscall_entry_readv",
    "syscall_entry_writev",
    "syscall_entry_openat",
    "syscall_entry_close",
    "syscall_entry_dup",
    "syscall_entry_dup2",
    "syscall_exit_read",
    "syscall_exit_write",
    "syscall_exit_pread64",
    "syscall_exit_pwrite64",
    "syscall_exit_readv",
    "syscall_exit_writev",
    "syscall_exit_openat",
    "syscall_exit_close",
    "syscall_exit_dup",
    "syscall_exit_dup2",
    "sched_switch",
    "sched_process_fork",
    "sched_process_exec",
    "sched_process_exit",
    "irq_handler_entry",
    "irq_handler_exit",
    "softirq_entry",
    "softirq_exit",
    "timer_hrtimer_expire_entry",
    "timer_hrtimer_expire_exit",
    "kmem_kmalloc",
    "kmem_kfree",
    "sched_wakeup",
];

impl KEvent {
    /// Index of this event's name in [`EVENT_NAMES`].
    pub fn name_index(&self) -> usize {
        match self {
            KEvent::StatedumpStart => 0,
            KEvent::StatedumpEnd => 1,
            KEvent::StatedumpProcess { .. } => 2,
            KEvent::StatedumpFd { .. } => 3,
            KEvent::SyscallEntry(s, _) => 4 + s.index(),
            KEvent::SyscallExit { call, .. } => 14 + call.index(),
            KEvent::SchedSwitch { .. } => 24,
            KEvent::Fork { .. } => 25,
            KEvent::Exec { .. } => 26,
            KEvent::Exit { .. } => 27,
            KEvent::Background(b) => b.name_index(),
        }
    }
    /// The event name.
    pub fn name(&self) -> &'static str {
        EVENT_NAMES[self.name_index()]
    }
}
