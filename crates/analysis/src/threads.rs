//! `threads`: every name each thread took and when, from the kernel model's thread
//! table with its name history ([`Info::with_names`]): a fork names its child, an exec
//! renames the thread after its file, a `sched_switch` and the statedump show the name a
//! thread has (a name changed without an exec, by `prctl(PR_SET_NAME)`, is seen first
//! there). Chunks keep their own histories and the merge appends them, so the result
//! equals a serial run's at any partitioning (events come in time order inside a slice:
//! the engine's merged order).

use ctf::stream::EventRef;
use ctf::trace::TraceSet;
use engine::{Analysis, ChunkPolicy, Ctx, Selective, Tally};
use serde::Serialize;

use crate::{AnalysisError, RunOptions};
use kernel::layout::{Kind, Layout};
use kernel::model::Info;

/// One name of one thread and its validity range.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct ThreadNameRow {
    /// Thread id.
    pub tid: i32,
    /// Its process id (the latest known), when known.
    pub pid: Option<i32>,
    /// The name.
    pub name: String,
    /// When the thread took the name (ns from origin): the fork or exec that gave it,
    /// else the first event that showed it; `None` for a first name that the thread may
    /// have had before (first shown by a switch or the statedump).
    pub valid_from_ns: Option<i64>,
    /// When the next name was taken; `None`: it was still the name at the trace's end.
    pub valid_to_ns: Option<i64>,
}

/// The thread names of a trace, by tid then time.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct ThreadsReport {
    /// Always `"threads"`.
    pub analysis: &'static str,
    /// The rows, by tid then `valid_from_ns`.
    pub threads: Vec<ThreadNameRow>,
}

/// The threads analysis.
pub struct Threads {
    layout: Layout,
}

impl Threads {
    /// Prepares the analysis for `set`.
    pub fn new(set: &TraceSet) -> Threads {
        Threads { layout: Layout::new(set) }
    }
}

/// Whether events of kind `k` name threads.
pub(crate) fn names_threads(k: &Kind) -> bool {
    matches!(k, Kind::Switch { .. } | Kind::Fork { .. } | Kind::Exec { .. } | Kind::ProcState { .. })
}

impl Analysis for Threads {
    type State = Info;
    type Output = ThreadsReport;

    fn new_state(&self) -> Info {
        Info::with_names()
    }

    fn on_event(&self, st: &mut Info, ev: &EventRef<'_, '_>, ctx: &Ctx) {
        if let Some(c) = self.layout.class(ev) {
            st.on_event(ev, c, (ctx.order, ctx.stream));
        }
    }

    fn merge(&self, earlier: Info, later: Info) -> Info {
        earlier.merge(later)
    }

    fn finish(&self, st: Info) -> ThreadsReport {
        let mut threads = Vec::new();
        for (tid, pid, names) in st.threads() {
            for (k, n) in names.iter().enumerate() {
                threads.push(ThreadNameRow {
                    tid,
                    pid,
                    name: n.name.clone(),
                    valid_from_ns: (k > 0 || n.starts).then_some(n.since),
                    valid_to_ns: names.get(k + 1).map(|m| m.since),
                });
            }
        }
        threads.sort_by_key(|r| (r.tid, r.valid_from_ns));
        ThreadsReport { analysis: "threads", threads }
    }
}

impl Selective for Threads {
    fn interest(&self, trace: usize, stream_class: u64) -> Option<Vec<bool>> {
        self.layout.mask(trace, stream_class, names_threads)
    }
}

impl Tally for Threads {}
impl ChunkPolicy for Threads {}

/// Runs [`Threads`] over `set` with `opts`' engine options (its filter and limit do
/// not apply: every thread is listed).
pub fn run(set: &TraceSet, opts: &RunOptions) -> Result<ThreadsReport, AnalysisError> {
    Ok(engine::run(&Threads::new(set), set, &opts.engine())?)
}
