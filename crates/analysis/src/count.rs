//! `count`: events in total, per name, per CPU; discarded events (B5).

use std::collections::BTreeMap;

use ctf::stream::{EventRef, Notice};
use ctf::trace::TraceSet;
use engine::{Analysis, Ctx, NoticeKind, StreamOrder};
use serde::Serialize;

use crate::kernel::{cpu_of, Layout};
use crate::model::Span;

/// The count analysis.
pub struct Count {
    layout: Layout,
}

/// Chunk state of [`Count`].
#[derive(Debug, Clone, Default)]
pub struct CountState {
    events: u64,
    discarded: u64,
    by_name: Vec<u64>,
    by_cpu: BTreeMap<u32, u64>,
    /// Per CPU, small CPU numbers (the common case) without a map look-up.
    by_cpu_small: Vec<u64>,
    span: Span,
}

/// Result of [`Count`] (its JSON form is the `count` output format).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct CountReport {
    /// Always `"count"`.
    pub analysis: &'static str,
    /// Events.
    pub events: u64,
    /// Events discarded by the tracer.
    pub discarded: u64,
    /// Events per name (names with no event omitted).
    pub by_name: BTreeMap<String, u64>,
    /// Events per CPU (`cpu_id`, as a string key).
    pub by_cpu: BTreeMap<String, u64>,
    /// First event timestamp (ns from origin).
    pub begin_ns: Option<i64>,
    /// Last event timestamp.
    pub end_ns: Option<i64>,
}

impl Count {
    /// Prepares the count analysis for `set`.
    pub fn new(set: &TraceSet) -> Count {
        Count { layout: Layout::new(set) }
    }
}

impl Analysis for Count {
    type State = CountState;
    type Output = CountReport;

    fn stream_order(&self) -> StreamOrder {
        StreamOrder::PerStream
    }

    fn new_state(&self) -> CountState {
        CountState { by_name: vec![0; self.layout.names.len()], ..Default::default() }
    }

    #[inline]
    fn on_event(&self, st: &mut CountState, ev: &EventRef<'_, '_>, ctx: &Ctx) {
        st.events += 1;
        st.span.see(ev.ts());
        let Some(c) = self.layout.class(ev) else { return };
        st.by_name[c.name as usize] += 1;
        if c.cpu.is_some() {
            let cpu = cpu_of(ev, c, ctx.stream);
            if (cpu as usize) < 1024 {
                if st.by_cpu_small.len() <= cpu as usize {
                    st.by_cpu_small.resize(cpu as usize + 1, 0);
                }
                st.by_cpu_small[cpu as usize] += 1;
            } else {
                *st.by_cpu.entry(cpu).or_default() += 1;
            }
        }
    }

    fn on_notice(&self, st: &mut CountState, kind: NoticeKind, n: &Notice, _ctx: &Ctx) {
        if kind == NoticeKind::Discarded {
            st.discarded += n.count;
        }
    }

    fn merge(&self, mut a: CountState, b: CountState) -> CountState {
        a.events += b.events;
        a.discarded += b.discarded;
        for (x, y) in a.by_name.iter_mut().zip(&b.by_name) {
            *x += y;
        }
        if a.by_cpu_small.len() < b.by_cpu_small.len() {
            a.by_cpu_small.resize(b.by_cpu_small.len(), 0);
        }
        for (x, y) in a.by_cpu_small.iter_mut().zip(&b.by_cpu_small) {
            *x += y;
        }
        for (k, v) in b.by_cpu {
            *a.by_cpu.entry(k).or_default() += v;
        }
        a.span = a.span.merge(b.span);
        a
    }

    fn finish(&self, st: CountState) -> CountReport {
        let mut by_cpu: BTreeMap<u32, u64> = st.by_cpu;
        for (i, n) in st.by_cpu_small.iter().enumerate() {
            if *n > 0 {
                *by_cpu.entry(i as u32).or_default() += n;
            }
        }
        CountReport {
            analysis: "count",
            events: st.events,
            discarded: st.discarded,
            by_name: self.layout.names.iter().zip(&st.by_name).filter(|(_, n)| **n > 0).map(|(k, n)| (k.to_string(), *n)).collect(),
            by_cpu: by_cpu.into_iter().map(|(k, v)| (k.to_string(), v)).collect(),
            begin_ns: st.span.begin,
            end_ns: st.span.end,
        }
    }
}
