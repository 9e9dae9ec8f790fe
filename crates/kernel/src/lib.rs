//! The Linux kernel model, shared by every statistic (`analysis`'s count, cpu, io and
//! latency analyses, `cube-feed` and so `live`): no other crate keeps kernel state
//! (threads, the current task per CPU, fd tables, pending syscalls, pending wake-ups,
//! interrupt handlers, block requests) or defines kernel log records.
//!
//! Where it sits: above `ctf` (it reads events through resolved field handles), below
//! `analysis` and `cube-feed`; it knows nothing of the engine. Modules:
//! * [`layout`]: what each event class means, for the three LTTng naming generations
//!   (`sys_*` + `exit_syscall`, `syscall_entry_*`/`syscall_exit_*`, raw
//!   `sys_enter`/`sys_exit`), resolved once per class, and the syscall tables;
//! * [`model`]: the thread table (tid → pid, name) and the time span;
//! * [`fdtable`]: the fd tables per process and the kernel rules that change them;
//! * [`log`]: the one chunk-local log record type ([`log::Rec`]) and io's chunk log,
//!   whose records name the issuing thread, or the unknown task running on a stream
//!   when the chunk began (resolved when chunks merge, [`running::Running`]); the
//!   cube's feed logs the same records (with what its measures need beside the model:
//!   thread names, switches, syscall names, wake-ups, interrupts, block requests,
//!   frame marks), naming issuers by stream ([`log::Who::Stream`]); the sched, irq
//!   and block analyses log their switches, wake-ups, interrupts and block requests
//!   in the same [`log::Log`], stamped with their times;
//! * [`running`]: the current task per stream (CPU) of a chunk, and its merge;
//! * [`runs`]: the executions per stream (who ran on a CPU, from when to when), as
//!   CPU time credited to threads: chunk by chunk ([`runs::Runs`]), or in progress
//!   for a reader in time order, credited up to any time ([`runs::Clock`]);
//! * [`replay`]: the replayed state (threads with their pids and names, pending
//!   syscalls, fd tables) that a log is interpreted against, telling a statistic's
//!   [`replay::Sink`] the resolved facts: bytes moved, and each call completed
//!   ([`replay::Completed`]: name, entry and exit times, return value, fd and file).
//!   A thread's pending call ([`fdtable::PendingCall`]: the call and its arguments,
//!   its fd's file at entry, its name and entry time) is the one pending-call state:
//!   io reads its file, the syscall latency (`analyze -a syscall` and the cube's
//!   `syscall_ns`) its name and times, from the same entry/exit pairing;
//! * [`tid_index`]: tid → slot, for per-thread tables;
//! * [`events`]: the events of the latency analyses (IRQs, softirqs, wake-ups);
//! * [`latency`]: the state machines of the latency statistics (wake-up waits,
//!   interrupt handlers, block requests) and system call names; their replayed state
//!   ([`latency::replay::Latencies`]: who runs on each CPU, pending wake-ups, each
//!   CPU's handlers, pending requests), which interprets a log's switches, wake-ups,
//!   interrupts and block requests and tells a statistic's
//!   [`latency::replay::Sink`] what completed (`analysis`'s sched, irq and block, and
//!   the cube's applier).
//!
//! Which rule comes from which kernel behaviour is said where the rule is written
//! ([`fdtable`]'s module documentation lists them).

pub mod events;
pub mod fdtable;
pub mod latency;
pub mod layout;
pub mod log;
pub mod model;
pub mod replay;
pub mod running;
pub mod runs;
pub mod tid_index;
