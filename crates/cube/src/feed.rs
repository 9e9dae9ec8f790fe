//! The kernel adapter: Linux kernel events → cube updates, with the semantics of
//! `analysis`'s `count`, `cpu` and `io` (so that a cube range equals the analyses'
//! difference of prefixes, see `tests/exactness.rs`).
//!
//! Measures fed: `events` (1 per event, by operation and CPU), `cpu_ns` (time a
//! non-idle thread was switched in, by thread and CPU), `bytes_read` /
//! `bytes_written` (exit `ret > 0` of read- and write-family syscalls whose entry
//! was seen, by thread and file). Members appear as the stream reveals them: thread
//! names and pids from `sched_switch`, `sched_process_fork`/`exec` and the statedump,
//! fd → path from open/dup/close/fcntl, fork, exec (`O_CLOEXEC`) and the statedump.
//!
//! CPU time is credited at events, as the analyses do: at a `sched_switch`, the
//! switched-out thread gets the time since it was switched in; when the stream
//! crosses a finest-frame boundary, every running thread is credited up to the last
//! event before the boundary (what `analyze --end B-1` credits as the trace's tail);
//! the thread running before a CPU's first switch gets the time from the trace's
//! first event at that switch (`HeadPolicy::FromStart`). Syscalls issued before a
//! CPU's first switch belong to that switch's previous thread, found by a pre-scan.
//! Events are consumed in the time-merged order of `ctf::merge::Merger`.

use std::collections::HashMap;
use std::sync::Arc;

use analysis::fdtable::{Call, FdTables};
use analysis::kernel::{comm_of_path, cpu_of, i32_of, Kind, Layout, Sc, O_CLOEXEC};
use analysis::model::FxMap;
use ctf::stream::{EventRef, Item, StreamCursor};
use ctf::trace::TraceSet;

use crate::cube::Cube;
use crate::dims::{file_path_labels, operation_kind, NodeId};
use crate::error::Result;
use crate::schema::MetricId;

const MACHINE: usize = 0;
const CPU: usize = 1;
const PROCESS: usize = 2;
const FILE: usize = 3;
const OPERATION: usize = 4;

#[derive(Debug, Clone, Copy)]
struct Pending {
    sc: Sc,
    a0: i64,
    a1: i64,
    a2: i64,
    path: Option<u32>,
    file: Option<u32>,
}

#[derive(Debug, Default)]
struct Thread {
    pid: Option<i32>,
    comm: Option<String>,
    node: Option<NodeId>,
    pending: Option<Pending>,
}

#[derive(Debug, Clone, Copy, Default)]
struct StreamState {
    cur: Option<i32>,
    since: i64,
    first_prev: Option<i32>,
    switched: bool,
    cpu: Option<NodeId>,
}

/// Kernel events → cube updates (serial, in time order).
pub struct KernelFeed {
    layout: Layout,
    streams: Vec<StreamState>,
    threads: FxMap<i32, Thread>,
    fds: FdTables,
    path_ids: HashMap<Arc<str>, u32>,
    paths: Vec<NodeId>,
    machine: NodeId,
    m_events: Vec<MetricId>,
    m_cpu: Vec<MetricId>,
    m_read: Vec<MetricId>,
    m_write: Vec<MetricId>,
    cells: FxMap<(u16, [u32; 5]), u32>,
    /// Per (event name, stream): the CPU node and operation node.
    ev_nodes: Vec<Option<(NodeId, NodeId)>>,
    first_ts: Option<i64>,
    last_ts: i64,
    next_boundary: i64,
    g0: i64,
    /// Events consumed.
    pub events: u64,
}

/// The `prev_tid` of each stream's first `sched_switch` (who ran before it).
pub fn prescan_first_switch(set: &TraceSet, layout: &Layout) -> Vec<Option<i32>> {
    (0..set.streams.len())
        .map(|i| {
            let mut cur = StreamCursor::new(set, i);
            while let Ok(Some(item)) = cur.next() {
                if let Item::Event(ev) = item {
                    if let Some(Kind::Switch { prev_tid, .. }) = layout.class(&ev).map(|c| c.kind) {
                        return ev.int(prev_tid).map(|v| v as i32);
                    }
                }
            }
            None
        })
        .collect()
}

impl KernelFeed {
    /// A feed for `set` into `cube` (whose metrics decide what is updated).
    pub fn new(set: &TraceSet, cube: &mut Cube) -> KernelFeed {
        let layout = Layout::new(set);
        let first = prescan_first_switch(set, &layout);
        let streams = first.iter().map(|&f| StreamState { first_prev: f, ..Default::default() }).collect();
        let host = set.traces.first().and_then(|t| t.dir.parent()).and_then(|p| p.file_name()).map(|s| s.to_string_lossy().into_owned()).unwrap_or_else(|| "localhost".into());
        let machine = cube.schema.dims[MACHINE].member(&[&host]);
        let s = &cube.schema;
        let n = layout.names.len() * set.streams.len().max(1);
        KernelFeed {
            streams,
            threads: FxMap::default(),
            fds: FdTables::default(),
            path_ids: HashMap::new(),
            paths: Vec::new(),
            machine,
            m_events: s.metrics_of("events"),
            m_cpu: s.metrics_of("cpu_ns"),
            m_read: s.metrics_of("bytes_read"),
            m_write: s.metrics_of("bytes_written"),
            cells: FxMap::default(),
            ev_nodes: vec![None; n],
            layout,
            first_ts: None,
            last_ts: 0,
            next_boundary: i64::MIN,
            g0: cube.config.levels[0].granularity_ns as i64,
            events: 0,
        }
    }

    /// Adapts the feed to a set whose metadata or streams changed (a live session:
    /// new event classes, new streams appended after the existing ones). Per-stream
    /// state is kept by stream index; stream `i` must still be the same stream.
    pub fn relayout(&mut self, set: &TraceSet) {
        self.layout = Layout::new(set);
        if self.streams.len() < set.streams.len() {
            self.streams.resize(set.streams.len(), StreamState::default());
        }
        self.ev_nodes = vec![None; self.layout.names.len() * self.streams.len().max(1)];
    }

    /// Streams the feed keeps state for.
    pub fn stream_count(&self) -> usize {
        self.streams.len()
    }

    fn update(&mut self, cube: &mut Cube, t: i64, metrics: &[MetricId], ctx: [u32; 5], delta: i64) -> Result<()> {
        for &m in metrics {
            let metric = &cube.schema.metrics[m.0 as usize];
            let count = metric.count;
            let extremes = metric.extremes;
            let mut key = [0u32; 5];
            for &d in &metric.dims {
                key[d as usize] = ctx[d as usize];
            }
            let cell = match self.cells.get(&(m.0, key)) {
                Some(&c) => c,
                None => {
                    let nodes: Vec<NodeId> = metric.dims.iter().zip(&metric.leaf).map(|(&d, &l)| cube.schema.dims[d as usize].ancestor(NodeId(key[d as usize]), l)).collect();
                    let c = cube.cell(m, &nodes).0;
                    for cm in count.into_iter().chain(extremes.into_iter().flat_map(|(a, b)| [a, b])) {
                        let cc = cube.cell(cm, &nodes).0;
                        self.cells.insert((cm.0, key), cc);
                    }
                    self.cells.insert((m.0, key), c);
                    c
                }
            };
            cube.add(t as u64, crate::schema::CellId(cell), delta)?;
            if let Some(cm) = count {
                let cc = self.cells[&(cm.0, key)];
                cube.add(t as u64, crate::schema::CellId(cc), 1)?;
            }
            if let Some((lo, hi)) = extremes {
                for x in [lo, hi] {
                    let cx = self.cells[&(x.0, key)];
                    cube.add(t as u64, crate::schema::CellId(cx), delta)?;
                }
            }
        }
        Ok(())
    }

    fn thread(&mut self, tid: i32) -> &mut Thread {
        self.threads.entry(tid).or_default()
    }

    fn set_comm(&mut self, tid: i32, b: &[u8]) {
        let t = self.thread(tid);
        if t.comm.as_deref().map(str::as_bytes) != Some(b) {
            t.comm = Some(String::from_utf8_lossy(b).into_owned());
            t.node = None;
        }
    }

    fn set_pid(&mut self, tid: i32, pid: i32) {
        let t = self.thread(tid);
        if t.pid != Some(pid) {
            t.pid = Some(pid);
            t.node = None;
        }
    }

    fn process_node(&mut self, cube: &mut Cube, tid: i32) -> NodeId {
        if let Some(n) = self.threads.get(&tid).and_then(|t| t.node) {
            return n;
        }
        let t = self.threads.entry(tid).or_default();
        let comm = t.comm.clone().unwrap_or_else(|| "?".into());
        let pid = t.pid.unwrap_or(tid).to_string();
        let group = cube.config.group_of(&comm).to_string();
        let n = cube.schema.dims[PROCESS].member(&[&group, &comm, &pid, &tid.to_string()]);
        t.node = Some(n);
        n
    }

    fn intern(&mut self, cube: &mut Cube, p: &str) -> u32 {
        if let Some(&i) = self.path_ids.get(p) {
            return i;
        }
        let labels = file_path_labels(p);
        let refs: Vec<&str> = labels.iter().map(String::as_str).collect();
        let n = cube.schema.dims[FILE].member(&refs);
        let i = self.paths.len() as u32;
        self.paths.push(n);
        self.path_ids.insert(Arc::from(p), i);
        i
    }

    fn credit_cpu(&mut self, cube: &mut Cube, s: usize, tid: i32, d: i64, t: i64) -> Result<()> {
        if tid == 0 || d <= 0 || self.m_cpu.is_empty() {
            return Ok(());
        }
        let Some(cpu) = self.streams[s].cpu else { return Ok(()) };
        let p = self.process_node(cube, tid);
        let ms = std::mem::take(&mut self.m_cpu);
        let r = self.update(cube, t, &ms, [self.machine.0, cpu.0, p.0, 0, 0], d);
        self.m_cpu = ms;
        r
    }

    /// Credits every running thread up to the last event (a frame boundary is crossed).
    fn cross_boundary(&mut self, cube: &mut Cube) -> Result<()> {
        let last = self.last_ts;
        for s in 0..self.streams.len() {
            let st = self.streams[s];
            if let (Some(tid), true) = (st.cur, st.switched) {
                if last > st.since {
                    self.credit_cpu(cube, s, tid, last - st.since, last)?;
                    self.streams[s].since = last;
                }
            }
        }
        Ok(())
    }

    /// Consumes one event of stream `s` (events in time-merged order).
    pub fn on_event(&mut self, cube: &mut Cube, ev: &EventRef<'_, '_>, s: usize) -> Result<()> {
        let Some(t) = ev.ts() else { return Ok(()) };
        self.events += 1;
        if self.first_ts.is_none() {
            self.first_ts = Some(t);
        }
        if t >= self.next_boundary {
            if self.next_boundary != i64::MIN {
                self.cross_boundary(cube)?;
            }
            self.next_boundary = t.div_euclid(self.g0) * self.g0 + self.g0;
        }
        self.last_ts = t;
        let Some(c) = self.layout.class(ev).copied() else { return Ok(()) };
        // Event count by (operation, cpu).
        if !self.m_events.is_empty() {
            let slot = c.name as usize * self.streams.len() + s;
            let (cpu, op) = match self.ev_nodes.get(slot).copied().flatten() {
                Some(x) => x,
                None => {
                    let cpu_id = cpu_of(ev, &c, s);
                    let label = if cpu_id & 0x8000_0000 == 0 { cpu_id.to_string() } else { format!("stream{s}") };
                    let cpu = cube.schema.dims[CPU].member(&[&label]);
                    let name = &self.layout.names[c.name as usize];
                    let op = cube.schema.dims[OPERATION].member(&[operation_kind(name), name]);
                    if slot < self.ev_nodes.len() {
                        self.ev_nodes[slot] = Some((cpu, op));
                    }
                    (cpu, op)
                }
            };
            let ms = std::mem::take(&mut self.m_events);
            let r = self.update(cube, t, &ms, [self.machine.0, cpu.0, 0, 0, op.0], 1);
            self.m_events = ms;
            r?;
        }
        self.kernel(cube, ev, &c, s, t)
    }

    fn who(&self, s: usize) -> Option<i32> {
        let st = &self.streams[s];
        if st.switched { st.cur } else { st.first_prev }
    }

    fn kernel(&mut self, cube: &mut Cube, ev: &EventRef<'_, '_>, c: &analysis::kernel::EvClass, s: usize, t: i64) -> Result<()> {
        let g = |h: Option<ctf::plan::FieldHandle>| h.and_then(|h| ev.int(h)).unwrap_or(-1);
        match c.kind {
            Kind::Other | Kind::Migrate { .. } => {}
            Kind::Switch { prev_tid, next_tid, prev_comm, next_comm } => {
                for (tid, n) in [(prev_tid, prev_comm), (next_tid, next_comm)] {
                    if let (Some(tid), Some(b)) = (ev.int(tid), n.and_then(|n| ev.bytes(n))) {
                        if tid != 0 {
                            self.set_comm(tid as i32, b);
                        }
                    }
                }
                let (Some(prev), Some(next)) = (ev.int(prev_tid), ev.int(next_tid)) else { return Ok(()) };
                let cpu_id = cpu_of(ev, c, s);
                if self.streams[s].cpu.is_none() {
                    let label = if cpu_id & 0x8000_0000 == 0 { cpu_id.to_string() } else { format!("stream{s}") };
                    self.streams[s].cpu = Some(cube.schema.dims[CPU].member(&[&label]));
                }
                let st = self.streams[s];
                if st.switched {
                    if let Some(tid) = st.cur {
                        self.credit_cpu(cube, s, tid, t - st.since, t)?;
                    }
                } else {
                    self.streams[s].switched = true;
                    let head = self.first_ts.unwrap_or(t);
                    self.credit_cpu(cube, s, prev as i32, t - head, t)?;
                }
                self.streams[s].cur = Some(next as i32);
                self.streams[s].since = t;
            }
            Kind::Fork { parent_tid, parent_pid, child_tid, child_pid, child_comm } => {
                let Some(ct) = i32_of(ev, Some(child_tid)) else { return Ok(()) };
                if let Some(b) = child_comm.and_then(|n| ev.bytes(n)) {
                    self.set_comm(ct, b);
                }
                let cp = i32_of(ev, child_pid).unwrap_or(ct);
                self.set_pid(ct, cp);
                let parent = i32_of(ev, parent_pid).or_else(|| i32_of(ev, parent_tid).map(|pt| self.threads.get(&pt).and_then(|x| x.pid).unwrap_or(pt)));
                if let Some(parent) = parent {
                    self.fds.fork(parent, cp);
                }
            }
            Kind::Exec { tid, filename } => {
                if let (Some(tt), Some(b)) = (i32_of(ev, tid), filename.and_then(|f| ev.bytes(f))) {
                    self.set_comm(tt, comm_of_path(b));
                }
                let who = i32_of(ev, tid).or(if self.streams[s].switched { self.streams[s].cur } else { None });
                if let Some(tt) = who {
                    let pid = self.threads.get(&tt).and_then(|x| x.pid).unwrap_or(tt);
                    self.fds.exec(pid);
                }
            }
            Kind::ProcState { tid, pid, name } => {
                let Some(tt) = i32_of(ev, Some(tid)) else { return Ok(()) };
                if let Some(b) = name.and_then(|n| ev.bytes(n)) {
                    self.set_comm(tt, b);
                }
                if let Some(p) = i32_of(ev, pid) {
                    self.set_pid(tt, p);
                }
            }
            Kind::FdDump { pid, fd, filename, flags } => {
                let (Some(pid), Some(fd)) = (i32_of(ev, Some(pid)), i32_of(ev, Some(fd))) else { return Ok(()) };
                let path = filename.and_then(|h| ev.bytes(h)).map(|b| String::from_utf8_lossy(b).into_owned()).unwrap_or_else(|| "unknown".into());
                let file = self.intern(cube, &path);
                let cloexec = g(flags) & O_CLOEXEC != 0 && g(flags) >= 0;
                self.fds.insert(pid, fd, file, cloexec);
            }
            Kind::Entry { sc, a0, a1, a2, path } => {
                let Some(tid) = self.who(s) else { return Ok(()) };
                let path = path.and_then(|h| ev.bytes(h)).map(|b| self.intern(cube, &String::from_utf8_lossy(b)));
                let (a0, a1, a2) = (g(a0), g(a1), g(a2));
                let pid = self.threads.get(&tid).and_then(|x| x.pid).unwrap_or(tid);
                let file = self.fds.file_at_entry(pid, sc, a0);
                self.thread(tid).pending = Some(Pending { sc, a0, a1, a2, path, file });
            }
            Kind::OtherEntry | Kind::RawEntry { .. } => {
                if let Some(tid) = self.who(s) {
                    if let Some(x) = self.threads.get_mut(&tid) {
                        x.pending = None;
                    }
                }
            }
            Kind::Exit { sc, ret } => self.exit(cube, s, t, sc, g(ret))?,
            Kind::RawExit { id, ret } => self.exit(cube, s, t, ev.uint(id).and_then(Sc::from_x86_64), g(ret))?,
        }
        Ok(())
    }

    fn exit(&mut self, cube: &mut Cube, s: usize, t: i64, sc: Option<Sc>, ret: i64) -> Result<()> {
        let Some(tid) = self.who(s) else { return Ok(()) };
        let Some(x) = self.threads.get_mut(&tid) else { return Ok(()) };
        let Some(e) = x.pending.take() else { return Ok(()) };
        if sc.is_some_and(|s| s != e.sc) {
            return Ok(());
        }
        let pid = x.pid.unwrap_or(tid);
        match e.sc {
            Sc::Read | Sc::Write if ret > 0 => {
                let p = self.process_node(cube, tid);
                let f = match e.file {
                    Some(f) => self.paths[f as usize],
                    None => cube.schema.dims[FILE].member(&["?", "?", "?", "?"]),
                };
                let ms = std::mem::take(if e.sc == Sc::Read { &mut self.m_read } else { &mut self.m_write });
                let r = self.update(cube, t, &ms, [self.machine.0, 0, p.0, f.0, 0], ret);
                *(if e.sc == Sc::Read { &mut self.m_read } else { &mut self.m_write }) = ms;
                r?;
            }
            sc => {
                let opened = (sc == Sc::Open && ret >= 0).then(|| e.path.unwrap_or_else(|| self.intern(cube, "unknown")));
                self.fds.on_exit(pid, Call { sc, a0: e.a0, a1: e.a1, a2: e.a2 }, ret, opened, e.file);
            }
        }
        Ok(())
    }

    /// Credits the running threads up to the last event (end of the trace).
    pub fn finish(&mut self, cube: &mut Cube) -> Result<()> {
        self.cross_boundary(cube)
    }
}
