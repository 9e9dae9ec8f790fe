//! The events of the latency analyses that [`crate::layout`] does not follow:
//! `irq_handler_entry`/`irq_handler_exit` (hard IRQs), `softirq_raise`/`softirq_entry`/
//! `softirq_exit`, the wake-ups (`sched_waking`, `sched_wakeup`, `sched_wakeup_new`)
//! `sched_switch`'s `next_prio`, the block requests (`block_rq_insert`/`issue`/
//! `complete`) and the statedump's block devices, resolved once per class (the same for every LTTng
//! generation that has them); and the softirq vector names.

use ctf::plan::FieldHandle;
use ctf::stream::EventRef;
use ctf::trace::TraceSet;

/// What an event class means to the latency analyses, with its field handles.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[allow(missing_docs)] // variant fields are the handles of the tracepoint fields they are named after
pub enum EvKind {
    /// Not an interrupt event.
    Other,
    /// `irq_handler_entry(irq, name)`.
    HardEntry { irq: FieldHandle, name: Option<FieldHandle> },
    /// `irq_handler_exit(irq, ret)`.
    HardExit { irq: FieldHandle },
    /// `softirq_raise(vec)`.
    SoftRaise { vec: FieldHandle },
    /// `softirq_entry(vec)`.
    SoftEntry { vec: FieldHandle },
    /// `softirq_exit(vec)`.
    SoftExit { vec: FieldHandle },
    /// `sched_waking(tid)`, `sched_wakeup(tid)`, `sched_wakeup_new(tid)`.
    Wakeup { tid: FieldHandle },
    /// `sched_switch`: its `next_prio` (the rest is [`crate::layout::Kind::Switch`]).
    Switch { next_prio: Option<FieldHandle> },
    /// `block_rq_insert`, `block_rq_issue` (`insert` false) or `block_rq_complete`
    /// (`complete`): a block request of `dev` at `sector`, `nr_sector` long; `tid`
    /// and `rwbs` (bit 0: write) on insert and issue.
    Block { insert: bool, complete: bool, dev: FieldHandle, sector: FieldHandle, nr_sector: FieldHandle, tid: Option<FieldHandle>, rwbs: Option<FieldHandle> },
    /// `lttng_statedump_block_device(dev, diskname)`.
    BlockDevice { dev: FieldHandle, name: FieldHandle },
}

/// [`EvKind`] of every event class of a trace set.
#[derive(Debug, Clone, Default)]
pub struct EventLayout {
    /// Per trace, per stream class (in the plan's order), by class index.
    traces: Vec<Vec<(u64, Vec<EvKind>)>>,
}

impl EventLayout {
    /// Resolves every event class of `set`.
    pub fn new(set: &TraceSet) -> EventLayout {
        let traces = crate::layout::per_class(set, |_, plan, sp, ev| {
            let h = |n: &str| plan.event_field(sp, ev, &[n]);
            let k = match &*ev.name {
                "irq_handler_entry" => h("irq").map(|irq| EvKind::HardEntry { irq, name: h("name") }),
                "irq_handler_exit" => h("irq").map(|irq| EvKind::HardExit { irq }),
                "softirq_raise" => h("vec").map(|vec| EvKind::SoftRaise { vec }),
                "softirq_entry" => h("vec").map(|vec| EvKind::SoftEntry { vec }),
                "softirq_exit" => h("vec").map(|vec| EvKind::SoftExit { vec }),
                "sched_waking" | "sched_wakeup" | "sched_wakeup_new" => h("tid").map(|tid| EvKind::Wakeup { tid }),
                "sched_switch" => Some(EvKind::Switch { next_prio: h("next_prio") }),
                "block_rq_insert" | "block_rq_issue" | "block_rq_complete" => match (h("dev"), h("sector"), h("nr_sector")) {
                    (Some(dev), Some(sector), Some(nr_sector)) => Some(EvKind::Block {
                        insert: &*ev.name == "block_rq_insert",
                        complete: &*ev.name == "block_rq_complete",
                        dev,
                        sector,
                        nr_sector,
                        tid: h("tid"),
                        rwbs: h("rwbs"),
                    }),
                    _ => None,
                },
                "lttng_statedump_block_device" => match (h("dev"), h("diskname")) {
                    (Some(dev), Some(name)) => Some(EvKind::BlockDevice { dev, name }),
                    _ => None,
                },
                _ => None,
            };
            k.unwrap_or(EvKind::Other)
        });
        EventLayout { traces }
    }

    /// A mask over the classes of stream class `id` of trace `trace`: true where `keep`
    /// accepts the kind (for the engine's `Selective::interest`).
    pub fn mask(&self, trace: usize, id: u64, keep: impl Fn(&EvKind) -> bool) -> Option<Vec<bool>> {
        let v = self.traces.get(trace)?.iter().find(|(i, _)| *i == id)?;
        Some(v.1.iter().map(keep).collect())
    }

    /// The meaning of an event's class.
    #[inline]
    pub fn kind(&self, ev: &EventRef<'_, '_>) -> EvKind {
        let k = self.traces.get(ev.trace_index()).and_then(|t| t.get(ev.stream_plan().index)).and_then(|(_, v)| v.get(ev.class_index()));
        k.copied().unwrap_or(EvKind::Other)
    }
}

/// The name of softirq vector `vec` (include/linux/interrupt.h).
pub fn softirq_name(vec: u32) -> String {
    const NAMES: [&str; 10] = [
        "HI_SOFTIRQ",
        "TIMER_SOFTIRQ",
        "NET_TX_SOFTIRQ",
        "NET_RX_SOFTIRQ",
        "BLOCK_SOFTIRQ",
        "IRQ_POLL_SOFTIRQ",
        "TASKLET_SOFTIRQ",
        "SCHED_SOFTIRQ",
        "HRTIMER_SOFTIRQ",
        "RCU_SOFTIRQ",
    ];
    NAMES.get(vec as usize).map_or_else(|| format!("softirq {vec}"), |n| n.to_string())
}

/// `major:minor` of a kernel `dev_t` as LTTng writes it (`MKDEV`: 12-bit major above
/// a 20-bit minor), the name of a disk the statedump did not name.
pub fn dev_name(dev: u64) -> String {
    format!("{}:{}", dev >> 20, dev & 0xf_ffff)
}
