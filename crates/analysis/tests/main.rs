//! The crate's integration tests, one binary (one link) for all of them: each
//! file of `tests/` is a module here, and its tests are named `FILE::TEST`.

mod chunking;
mod common;
mod fd_rules;
mod irq_sched_latency;
mod latency_cases;
mod lttng_analyses;
mod raw_syscalls;
mod streaming;
mod syscall_latency;
