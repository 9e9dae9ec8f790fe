//! The occurrence logs of the analyses (`--log`) handed over as a run goes, in
//! bounded memory: after each merge of the engine's ordered merge
//! ([`engine::run_draining`]), the occurrences that ended in the slices merged so far
//! are final, and leave the state as rows, instead of piling up until the end of the
//! run. Rows name threads and disks as the report does (by the names the whole trace
//! gives them last), which a state learns only at the end: a first, cheaper pass reads
//! those facts of the trace's end ([`TraceEnd::read`]) for them.
//!
//! Streamed: `cpu`'s executions, `sched`'s wake-ups, `irq`'s handler runs,
//! `syscall`'s calls, `io`'s transfers and `block`'s requests. A call or transfer on a
//! placeholder file (bytes held for a statedump that has not named the fd yet) waits
//! until the trace's last statedump fd has been read, or the end: the statedump may
//! name it until then. The other analyses, and a run with a thread filter or a
//! histogram (`--freq`, which needs every occurrence at the end), give their log in
//! the report as [`crate::run`] does.

use std::ops::ControlFlow;

use ctf::trace::TraceSet;

use crate::block::LongRequestRow;
use crate::cpu::ExecutionRow;
use crate::io::TransferRow;
use crate::irq::LongIrqRow;
use crate::sched::LongWakeupRow;
use crate::syscall::LongCallRow;
use crate::trace_end::TraceEnd;
use crate::{AnalysisError, AnalysisKind, EngineError, Report, RunOptions};

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
    /// Block requests (`block --log`).
    Requests(Vec<LongRequestRow>),
}

/// Whether [`run_streaming`] hands over the log of `which` as it goes (with `opts`).
pub fn streams(which: AnalysisKind, opts: &RunOptions) -> bool {
    opts.log && opts.freq.is_none() && !opts.filter.selects_threads() && which != AnalysisKind::Count
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
    let end = TraceEnd::read(set, which, opts)?;
    let e = opts.engine();
    let mut report = match which {
        AnalysisKind::Cpu => {
            let a = opts.cpu(set);
            let mut drain = |st: &mut _| a.drain_executions(st, &end.threads, PIECE, &mut |rows| out(Occurrences::Executions(rows)));
            Report::Cpu(engine::run_draining(&a, set, &e, &mut drain)?)
        }
        AnalysisKind::Sched => {
            let a = opts.sched(set);
            let mut drain = |st: &mut _| a.drain_log(st, &end.threads, PIECE, &mut |rows| out(Occurrences::Wakeups(rows)));
            Report::Sched(engine::run_draining(&a, set, &e, &mut drain)?)
        }
        AnalysisKind::Irq => {
            let a = opts.irq(set);
            let mut drain = |st: &mut _| a.drain_log(st, PIECE, &mut |rows| out(Occurrences::Irqs(rows)));
            Report::Irq(engine::run_draining(&a, set, &e, &mut drain)?)
        }
        AnalysisKind::Syscall => {
            let a = opts.syscall(set);
            let mut drain = |st: &mut _| a.drain_log(st, &end, PIECE, &mut |rows| out(Occurrences::Calls(rows)));
            Report::Syscall(engine::run_draining(&a, set, &e, &mut drain)?)
        }
        AnalysisKind::Io => {
            let a = opts.io(set);
            let mut drain = |st: &mut _| a.drain_transfers(st, &end, PIECE, &mut |rows| out(Occurrences::Transfers(rows)));
            Report::Io(engine::run_draining(&a, set, &e, &mut drain)?)
        }
        AnalysisKind::Block => {
            let a = opts.block(set);
            let mut drain = |st: &mut _| a.drain_log(st, &end, PIECE, &mut |rows| out(Occurrences::Requests(rows)));
            Report::Block(engine::run_draining(&a, set, &e, &mut drain)?)
        }
        AnalysisKind::Count => return Err(AnalysisError::Engine(EngineError::Internal("count has no log to stream"))),
    };
    if let Some(n) = opts.limit {
        report.limit(n);
    }
    Ok(report)
}
