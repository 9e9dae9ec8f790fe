//! The occurrence logs of the analyses (`--log`) handed over as a run goes, in
//! bounded memory: after each merge of the engine's ordered merge
//! ([`engine::run_draining`]), the occurrences that ended in the slices merged so far
//! are final, and leave the state as rows, instead of piling up until the end of the
//! run. Rows name threads as the report does (by their latest name and pid in the
//! whole trace), which a state learns only at the end: a first, cheaper pass reads the
//! trace's thread table ([`crate::threads::latest`]) for them.
//!
//! Streamed: `cpu`'s executions, `sched`'s wake-ups, `irq`'s handler runs, `syscall`'s
//! calls and `io`'s transfers (a call or transfer on a placeholder file, bytes held for
//! a statedump that has not named the fd yet, waits for the end: the statedump may
//! name it later). Not `block`'s requests: a row names its disk as the report does, by
//! the name the trace gives it last, which only the end knows. The other
//! analyses, and a run with a thread filter or a histogram (`--freq`, which needs
//! every occurrence at the end), give their log in the report as [`crate::run`] does.

use std::ops::ControlFlow;

use ctf::trace::TraceSet;

use crate::cpu::{Cpu, ExecutionRow};
use crate::io::{Io, TransferRow};
use crate::irq::{Irq, LongIrqRow};
use crate::sched::{LongWakeupRow, Sched};
use crate::syscall::{LongCallRow, Syscall, SyscallOptions};
use crate::{threads, AnalysisError, AnalysisKind, EngineError, Report, RunOptions};

/// The most rows in one piece handed over.
pub const PIECE: usize = 8192;

/// Some rows of an analysis's log, each piece sorted as the report's log is.
#[derive(Debug, Clone, PartialEq)]
pub enum Occurrences {
    /// Executions of threads on CPUs (`cpu --log`).
    Executions(Vec<ExecutionRow>),
    /// Wake-up latencies (`sched --log`).
    Wakeups(Vec<LongWakeupRow>),
    /// Interrupt handler runs (`irq --log`).
    Irqs(Vec<LongIrqRow>),
    /// System calls (`syscall --log`).
    Calls(Vec<LongCallRow>),
    /// Reads and writes that moved bytes (`io --log`).
    Transfers(Vec<TransferRow>),
}

/// Whether [`run_streaming`] hands over the log of `which` as it goes (with `opts`).
pub fn streams(which: AnalysisKind, opts: &RunOptions) -> bool {
    opts.log
        && opts.freq.is_none()
        && !opts.filter.selects_threads()
        && matches!(which, AnalysisKind::Cpu | AnalysisKind::Sched | AnalysisKind::Irq | AnalysisKind::Syscall | AnalysisKind::Io)
}

/// Runs analysis `which` over `set` as [`crate::run`] does, giving `out` the rows of
/// its log as the run goes when it [`streams`]: the report then holds in its log only
/// the rows not handed over (those the end of the trace settles). `out` returning
/// `Break` stops the run: it then fails with [`EngineError::Stopped`].
pub fn run_streaming(
    set: &TraceSet,
    which: AnalysisKind,
    opts: &RunOptions,
    out: &mut dyn FnMut(Occurrences) -> ControlFlow<()>,
) -> Result<Report, AnalysisError> {
    if !streams(which, opts) {
        return crate::run(set, which, opts);
    }
    let e = opts.engine();
    let mut report = match which {
        AnalysisKind::Cpu => {
            let names = threads::latest(set, opts)?;
            let a = Cpu::new(set, opts.head).with_filter(opts.filter.clone()).with_executions(true);
            let mut drain = |st: &mut _| a.drain_executions(st, &names, PIECE, &mut |rows| out(Occurrences::Executions(rows)));
            Report::Cpu(engine::run_draining(&a, set, &e, &mut drain)?)
        }
        AnalysisKind::Sched => {
            let names = threads::latest(set, opts)?;
            let a = Sched::new(set, opts.latency()).with_filter(opts.filter.clone());
            let mut drain = |st: &mut _| a.drain_log(st, &names, PIECE, &mut |rows| out(Occurrences::Wakeups(rows)));
            Report::Sched(engine::run_draining(&a, set, &e, &mut drain)?)
        }
        AnalysisKind::Irq => {
            let a = Irq::new(set, opts.latency()).with_filter(set, opts.filter.clone());
            let mut drain = |st: &mut _| a.drain_log(st, PIECE, &mut |rows| out(Occurrences::Irqs(rows)));
            Report::Irq(engine::run_draining(&a, set, &e, &mut drain)?)
        }
        AnalysisKind::Syscall => {
            let names = threads::latest(set, opts)?;
            let a = Syscall::new(set, SyscallOptions { head: opts.head, lat: opts.latency() }).with_filter(opts.filter.clone());
            let mut drain = |st: &mut _| a.drain_log(st, &names, PIECE, &mut |rows| out(Occurrences::Calls(rows)));
            Report::Syscall(engine::run_draining(&a, set, &e, &mut drain)?)
        }
        AnalysisKind::Io => {
            let names = threads::latest(set, opts)?;
            let a = Io::new(set, opts.head).with_workers(e.worker_count()).with_filter(opts.filter.clone()).with_transfers(true);
            let mut drain = |st: &mut _| a.drain_transfers(st, &names, PIECE, &mut |rows| out(Occurrences::Transfers(rows)));
            Report::Io(engine::run_draining(&a, set, &e, &mut drain)?)
        }
        _ => return Err(AnalysisError::Engine(EngineError::Internal("an analysis that does not stream its log"))),
    };
    if let Some(n) = opts.limit {
        report.limit(n);
    }
    Ok(report)
}
