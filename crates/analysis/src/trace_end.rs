//! What only the end of a trace knows, read by a first, cheap pass before an analysis
//! that hands its occurrences over as it goes ([`crate::occurrences`]): an occurrence
//! that ends early in the trace is named as the report names it, by facts the rest of
//! the trace may still change:
//! - each thread's latest name and pid (a later switch, exec or statedump renames it);
//! - each disk's name, the last the statedump gives it;
//! - when the statedump last names an fd: until then a placeholder file (bytes moved
//!   on an fd the trace never saw opened) may still be named, and after it never is.
//!
//! The pass reads only the event classes that tell these (switches, forks, execs and
//! the statedump), with the engine's partitioning and merge, so its facts are those
//! the analysis's own state has once every chunk is merged: the same events, the same
//! rules.

use std::collections::BTreeMap;

use ctf::stream::EventRef;
use ctf::trace::TraceSet;
use engine::{Analysis, ChunkPolicy, Ctx, Selective, Tally};
use kernel::events::{EvKind, EventLayout};
use kernel::layout::{Kind, Layout};
use kernel::model::Info;

use crate::threads::names_threads;
use crate::{AnalysisError, AnalysisKind, RunOptions};

/// The facts of a trace's end (see the module documentation).
#[derive(Debug, Clone, Default)]
pub struct TraceEnd {
    /// The thread table at the end: each thread's pid and latest name.
    pub threads: Info,
    /// Each disk's name by device number, the last the statedump gives it.
    pub disks: BTreeMap<u64, String>,
    /// The time of the last `lttng_statedump_file_descriptor` (ns from origin);
    /// `None`: the trace has none.
    pub last_fd_dump_ns: Option<i64>,
}

impl TraceEnd {
    /// Reads the facts of `set`'s end that analysis `which` names its occurrences
    /// with, with `opts`' engine options (its filter and limit do not apply): threads
    /// for all but `irq` and `block`, disks for `block`, the statedump's last fd for
    /// `io` and `syscall`. Of a damaged trace, the facts of what could be read (the
    /// analysis that uses them meets the damage and reports it).
    pub fn read(set: &TraceSet, which: AnalysisKind, opts: &RunOptions) -> Result<TraceEnd, AnalysisError> {
        let wants = Wants {
            threads: !matches!(which, AnalysisKind::Irq | AnalysisKind::Block),
            disks: which == AnalysisKind::Block,
            fd_dumps: matches!(which, AnalysisKind::Io | AnalysisKind::Syscall),
        };
        if !(wants.threads || wants.disks || wants.fd_dumps) {
            return Ok(TraceEnd::default());
        }
        let pass = EndPass { layout: Layout::new(set), events: EventLayout::new(set), wants };
        Ok(engine::run_reporting(&pass, set, &opts.engine(), None)?.output)
    }

    /// The name of disk `dev`: the statedump's, else `major:minor`.
    pub fn disk_name(&self, dev: u64) -> String {
        disk_name(&self.disks, dev)
    }

    /// Whether a placeholder file can no longer be named by the statedump once the
    /// trace is read up to `now` (ns from origin): the statedump named its last fd
    /// before `now`, or names none.
    pub fn placeholders_final_at(&self, now: i64) -> bool {
        self.last_fd_dump_ns.is_none_or(|t| t < now)
    }
}

/// The name of disk `dev` among `names` (the statedump's), else `major:minor`.
pub(crate) fn disk_name(names: &BTreeMap<u64, String>, dev: u64) -> String {
    names.get(&dev).cloned().unwrap_or_else(|| kernel::events::dev_name(dev))
}

/// The disk `ev` names, with its name, when it is an `lttng_statedump_block_device`
/// of fields `dev` and `name`.
pub(crate) fn named_disk(ev: &EventRef<'_, '_>, dev: ctf::plan::FieldHandle, name: ctf::plan::FieldHandle) -> Option<(u64, String)> {
    let dev = ev.uint(dev).or_else(|| ev.int(dev).map(|v| v as u64)).unwrap_or(0);
    Some((dev, kernel::model::text_of(ev.bytes(name)?).into_owned()))
}

/// Which facts a pass reads.
#[derive(Debug, Clone, Copy)]
struct Wants {
    threads: bool,
    disks: bool,
    fd_dumps: bool,
}

/// The pass that reads a [`TraceEnd`].
struct EndPass {
    layout: Layout,
    events: EventLayout,
    wants: Wants,
}

impl Analysis for EndPass {
    type State = TraceEnd;
    type Output = TraceEnd;

    fn new_state(&self) -> TraceEnd {
        TraceEnd::default()
    }

    fn on_event(&self, st: &mut TraceEnd, ev: &EventRef<'_, '_>, ctx: &Ctx) {
        let Some(c) = self.layout.class(ev) else { return };
        match c.kind {
            Kind::FdDump { .. } if self.wants.fd_dumps => st.last_fd_dump_ns = st.last_fd_dump_ns.max(ev.ts()),
            Kind::Other if self.wants.disks => {
                if let EvKind::BlockDevice { dev, name } = self.events.kind(ev) {
                    st.disks.extend(named_disk(ev, dev, name));
                }
            }
            ref k if self.wants.threads && names_threads(k) => st.threads.on_event(ev, c, (ctx.order, ctx.stream)),
            _ => {}
        }
    }

    fn merge(&self, mut earlier: TraceEnd, later: TraceEnd) -> TraceEnd {
        earlier.threads = earlier.threads.merge(later.threads);
        earlier.disks.extend(later.disks);
        earlier.last_fd_dump_ns = earlier.last_fd_dump_ns.max(later.last_fd_dump_ns);
        earlier
    }

    fn finish(&self, st: TraceEnd) -> TraceEnd {
        st
    }
}

impl Selective for EndPass {
    fn interest(&self, trace: usize, stream_class: u64) -> Option<Vec<bool>> {
        let Wants { threads, disks, fd_dumps } = self.wants;
        let model = self.layout.mask(trace, stream_class, |k| (threads && names_threads(k)) || (fd_dumps && matches!(k, Kind::FdDump { .. })))?;
        let block = self.events.mask(trace, stream_class, |k| disks && matches!(k, EvKind::BlockDevice { .. }))?;
        Some(model.into_iter().zip(block).map(|(a, b)| a || b).collect())
    }
}

impl Tally for EndPass {}
impl ChunkPolicy for EndPass {}
