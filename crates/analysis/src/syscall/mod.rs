//! `syscall`: system call latency (entry → exit) per thread, per process and per
//! syscall, with return values tallied and the longest calls (lttng-syscallstats,
//! the top-N of lttng-iolatencytop).
//!
//! Semantics (as lttng-analyses 0.6.1): a syscall event belongs to the task its CPU
//! last switched to (`sched_switch`'s `next_tid`; the idle task issues none); an entry
//! becomes its thread's pending call (replacing one left without exit); an exit
//! completes the pending call (its name is the entry's), an exit without one is
//! dropped. Before a CPU's first `sched_switch` its task is known only from that
//! switch's `prev_tid`: with [`HeadPolicy::FromStart`] its events are that task's,
//! with [`HeadPolicy::Ignore`] (lttng-analyses) they are dropped.
//!
//! How: this is the io analysis ([`crate::io`]) with the calls kept
//! (`Io::with_calls`). The pending call of each thread lives once, in the kernel
//! model's replay ([`kernel::replay`]: the call, its fd's file, its name and entry
//! time), which io's chunk logs feed in trace order whatever the chunking (named logs,
//! [`kernel::log::Log::named`]: each record with its event's time and the entry's
//! call name); each exit completes the call there, and the statistics of
//! the `stats` module accumulate it in the thread's slot. So the pairing is io's, exact at any
//! `-j`, chunk size and partition, and a call costs no look-up of its own.
//!
//! Filters ([`Filter`], as lttng-syscallstats' `--tid`, `--procname`, `--cpu`): a call
//! counts when its exit is on a selected CPU (the event's `cpu_id`, as lttng-analyses
//! tests it; another exit leaves the call pending, [`kernel::replay::UNCOUNTED`]), in
//! every table; threads are selected in `finish` by their tid, pid and latest name
//! (see [`crate::filter`]), so the per-process table and the total sum only their
//! calls, and the longest calls are chosen among theirs (every call is then kept until
//! `finish`: [`crate::RunOptions::latency`]).
//!
//! Files: each of the longest calls (and of the log) names the fd it worked on and that
//! fd's file, as lttng-iolatencytop's `Filename (fd=N)`, from the pending call
//! ([`kernel::fdtable::PendingCall::ended`]). A call on an fd argument names the file
//! the fd named at entry (the calls that change no fd table too: fsync, lseek, fstat,
//! ioctl, mmap …, `kernel::layout::Sc::OnFd`; sendfile, splice, tee and
//! copy_file_range name the fd read and the fd written); an open, dup or call making
//! an fd names the fd it returned and the path or kind of object; other calls
//! (`poll`, `select`, `*at` calls …) name none.

use std::ops::ControlFlow;

use ctf::stream::{Copied, CopyRequest, EventRef};
use ctf::trace::TraceSet;
use engine::{Analysis, ChunkPolicy, Ctx, Selective, Tally};

mod output;
mod report;
pub(crate) mod stats;

pub use output::{lami, write_text};
pub use report::{CallRow, LongCallRow, SyscallOwnerRow, SyscallReport};

use crate::cpu::HeadPolicy;
use crate::filter::Filter;
use crate::io::{Io, IoState};
use crate::latency::{hand_over, LatencyOptions};
use crate::trace_end::TraceEnd;
use kernel::latency::call_name;
use kernel::layout::Layout;

/// Options of [`Syscall`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct SyscallOptions {
    /// Events before a CPU's first `sched_switch`.
    pub head: HeadPolicy,
    /// The longest listed, the filter, every call kept.
    pub lat: LatencyOptions,
}

/// The syscall analysis.
pub struct Syscall {
    /// Call names.
    layout: Layout,
    opts: SyscallOptions,
    filter: Filter,
    /// The io analysis with the calls kept (see the module documentation).
    io: Io,
}

impl Syscall {
    /// Prepares the syscall analysis for `set`.
    pub fn new(set: &TraceSet, opts: SyscallOptions) -> Syscall {
        let io = Io::new(set, opts.head).with_calls(opts.lat, Filter::default());
        Syscall { layout: Layout::new(set), opts, filter: Filter::default(), io }
    }

    /// Counts only what `filter` selects (see the module documentation).
    pub fn with_filter(self, filter: Filter) -> Self {
        // (io takes the CPUs, `finish` the threads.)
        let Syscall { layout, opts, io, .. } = self;
        Syscall { io: io.with_calls(opts.lat, filter.clone()), layout, opts, filter }
    }
}

impl Syscall {
    /// Takes the calls completed so far out of `st`, the running state of a run (see
    /// [`engine::run_draining`]; with [`LatencyOptions::keep_all`]), and gives `out`
    /// their rows, as [`Analysis::finish`] would log them: named by `end`, the facts
    /// of the trace's end ([`TraceEnd::read`]), in pieces of at most `piece` rows, each
    /// by entry time. Not with a thread filter (`finish` chooses the longest again
    /// among the calls kept then). A call on a placeholder file the statedump may
    /// still name stays in `st`. Stops at `out`'s `Break`.
    pub fn drain_log(&self, st: &mut IoState, end: &TraceEnd, piece: usize, out: &mut dyn FnMut(Vec<LongCallRow>) -> ControlFlow<()>) -> ControlFlow<()> {
        let replay = &mut st.replay;
        let Some(mut calls) = replay.take_calls() else { return ControlFlow::Continue(()) };
        let settled = |f| replay.file_settled(f, end);
        let taken = calls.top.drain_where(|l| l.ended.is_none_or(|e| settled(e.file) && e.out.is_none_or(|(_, f)| settled(f))));
        replay.keep_calls(calls);
        let name = |c| call_name(&self.layout.names, c);
        hand_over(taken, report::log_order, piece, |l| report::call_row(*l, &end.threads, replay, &name), out)
    }
}

impl Analysis for Syscall {
    type State = IoState;
    type Output = SyscallReport;

    fn new_state(&self) -> IoState {
        self.io.new_state()
    }

    #[inline(always)]
    fn on_event(&self, st: &mut IoState, ev: &EventRef<'_, '_>, ctx: &Ctx) {
        self.io.on_event(st, ev, ctx);
    }

    fn merge(&self, a: IoState, b: IoState) -> IoState {
        self.io.merge(a, b)
    }

    fn finish(&self, st: IoState) -> SyscallReport {
        report::report(self.io.completed(st), &self.layout.names, &self.filter)
    }
}

impl Selective for Syscall {
    fn interest(&self, trace: usize, stream_class: u64) -> Option<Vec<bool>> {
        self.io.interest(trace, stream_class)
    }

    fn copies(&self, trace: usize, stream_class: u64) -> Option<Vec<Option<CopyRequest>>> {
        self.io.copies(trace, stream_class)
    }

    #[inline(always)]
    fn on_copied(&self, st: &mut IoState, c: &Copied<'_>, ts: i64, ctx: &Ctx) -> bool {
        self.io.on_copied(st, c, ts, ctx)
    }

    fn on_skipped(&self, st: &mut IoState, first: i64, last: i64) {
        self.io.on_skipped(st, first, last);
    }

    fn on_copied_span(&self, st: &mut IoState, first: i64, last: i64) {
        self.io.on_copied_span(st, first, last);
    }
}

impl Tally for Syscall {}

impl ChunkPolicy for Syscall {
    fn initial_state(&self) -> IoState {
        self.io.initial_state()
    }

    fn reserve(&self, st: &mut IoState, bytes: u64) {
        self.io.reserve(st, bytes);
    }

    fn max_auto_slice_bytes(&self) -> u64 {
        self.io.max_auto_slice_bytes()
    }

    fn folds_in_place(&self) -> bool {
        self.io.folds_in_place()
    }
}
