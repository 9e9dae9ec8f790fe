//! The processing side of the live pipeline: messages from a source's
//! bounded ring buffer → time-ordered events → the live cube (and an optional
//! canonical dump).
//!
//! # Ordering without waiting forever
//!
//! Each stream is known up to a time: the end of its last packet, or its last
//! inactivity beacon. Events before the smallest of these times over the open streams
//! (the *safe time*) can no longer be preceded by anything, so each batch merges the
//! received packets of every stream and consumes events strictly before the safe time;
//! the rest waits. A stream's state between batches is the packets not yet fully
//! consumed, how many notices and events of the first one were consumed, and the last
//! consumed packet (kept so that discarded-event and lost-packet notices are computed
//! from the previous packet's counters, as for a trace on disk).
//!
//! # Overload
//!
//! When a batch starts with more than 3/4 of the ring buffer's capacity in packets
//! waiting (in the ring, or taken from it and not yet fed):
//! - [`Overload::Wait`] takes everything waiting into one larger batch: the cube is
//!   updated less often and lag grows, nothing is lost (counted as `slow_batches`);
//! - [`Overload::Drop`] counts the events of every packet received so far and drops
//!   them (`dropped_events`, `dropped_packets`): lag stays bounded, the loss is exact.
//!
//! Memory is bounded by the ring buffer's capacity plus one batch: at most a buffer's
//! worth of packets, or [`MAX_BATCH_BYTES`], is taken from the ring before a batch.

use std::collections::HashMap;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, RwLock};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use crossbeam_channel::{Receiver, RecvTimeoutError};
use ctf::clock::ClockConv;
use ctf::merge::Merger;
use ctf::stream::{Item, StreamCursor};
use ctf::trace::TraceSet;
use cube::Cube;
use cube_feed::KernelFeed;

use crate::error::{LiveError, Result};
use crate::msg::Msg;

/// A batch stops taking packets from the ring buffer beyond this many bytes waiting.
pub const MAX_BATCH_BYTES: usize = 8 << 20;

/// The live cube, shared with query threads (and `--serve`).
pub type SharedCube = Arc<RwLock<Cube>>;

/// What to do when the processor falls behind.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, serde::Serialize)]
pub enum Overload {
    /// Update the cube less often (bigger batches); nothing is lost, lag grows.
    #[default]
    Wait,
    /// Drop (and count) the events waiting.
    Drop,
}

impl std::str::FromStr for Overload {
    type Err = String;
    fn from_str(s: &str) -> std::result::Result<Self, String> {
        match s {
            "wait" => Ok(Overload::Wait),
            "drop" => Ok(Overload::Drop),
            _ => Err(format!("unknown overload policy {s:?} (wait or drop)")),
        }
    }
}

/// Options of the processor.
#[derive(Debug, Clone)]
pub struct PipelineOptions {
    /// Overload policy.
    pub overload: Overload,
    /// Ring buffer capacity, messages (mostly packets).
    pub capacity: usize,
    /// Longest time between two batches when data is waiting.
    pub interval: Duration,
    /// Test and benchmark knob: extra time spent per packet fed to the cube (simulates
    /// a slow consumer; dropping packets costs no such time).
    pub consumer_delay: Duration,
}

impl Default for PipelineOptions {
    fn default() -> Self {
        PipelineOptions { overload: Overload::Wait, capacity: 1024, interval: Duration::from_millis(50), consumer_delay: Duration::ZERO }
    }
}

/// Counters of a live run, readable while it runs.
#[derive(Debug, Clone, Default, serde::Serialize)]
pub struct Stats {
    /// Events fed to the cube.
    pub events: u64,
    /// Events dropped by the overload policy.
    pub dropped_events: u64,
    /// Packets dropped by the overload policy.
    pub dropped_packets: u64,
    /// Events older than events already fed (a directory source's late stream), dropped.
    pub late_events: u64,
    /// Events the tracer discarded (from packet contexts).
    pub discarded_events: u64,
    /// Packets the tracer lost (from sequence numbers).
    pub lost_packets: u64,
    /// Packets received.
    pub packets: u64,
    /// Bytes of packets received.
    pub bytes: u64,
    /// Batches processed.
    pub batches: u64,
    /// Batches started with the ring buffer over the high-water mark.
    pub slow_batches: u64,
    /// Largest number of messages seen waiting in the ring buffer.
    pub max_backlog: usize,
    /// Lag of the last batch's oldest event, s (arrival in the cube − event time).
    pub lag_last_s: f64,
    /// Largest lag seen, s.
    pub lag_max_s: f64,
    /// Sum of per-batch lags (for the mean), s.
    pub lag_sum_s: f64,
    /// Batches whose lag was measured.
    pub lag_batches: u64,
    /// Timestamp of the last event fed, ns from origin.
    pub last_ts: Option<i64>,
    /// Source notices (connection losses, what was lost).
    pub notices: Vec<String>,
    /// Whether the source ended.
    pub ended: bool,
    /// The errors that ended streams (each naming its file, offset and cause), one per
    /// stream: a damaged stream's events are fed up to its damage, the other streams'
    /// all.
    pub stream_errors: Vec<String>,
}

impl Stats {
    /// Mean per-batch lag, s.
    pub fn lag_mean_s(&self) -> f64 {
        if self.lag_batches == 0 {
            0.0
        } else {
            self.lag_sum_s / self.lag_batches as f64
        }
    }
}

/// Stats shared with the summary thread.
pub type SharedStats = Arc<Mutex<Stats>>;

/// One stream as the processor sees it.
struct LStream {
    name: String,
    trace: usize,
    /// Packets received, not fully consumed.
    pending: Vec<Vec<u8>>,
    /// Last fully consumed packet.
    prev: Option<Vec<u8>>,
    /// Notices and events of `pending[0]` already consumed.
    skip: (u64, u64),
    /// Known up to (cycles of the trace's clock): nothing unsent before it.
    known: Option<u64>,
    ended: bool,
    /// Whether the stream met an error: its packets are no longer kept nor read, and
    /// it no longer holds back the others.
    failed: bool,
}

struct LTrace {
    dir: String,
    /// Index in the set, once the metadata parsed.
    index: Option<usize>,
    metadata: Vec<u8>,
    /// Metadata parsed up to this length.
    parsed_len: usize,
    streams: Vec<usize>,
    clock: Option<ClockConv>,
}

/// Turns a source's messages into cube updates.
pub struct Processor {
    name: String,
    set: TraceSet,
    traces: Vec<LTrace>,
    trace_ids: HashMap<u64, usize>,
    streams: Vec<LStream>,
    stream_ids: HashMap<u64, usize>,
    cube: SharedCube,
    stats: SharedStats,
    feed: Option<KernelFeed>,
    feed_streams: usize,
    relayout: bool,
    dump: Option<Box<dyn Write + Send>>,
    pace: Option<(i64, SystemTime, f64)>,
    last_fed: i64,
    opts: PipelineOptions,
    pending_bytes: usize,
}

fn now_ns() -> i128 {
    SystemTime::now().duration_since(UNIX_EPOCH).map(|d| d.as_nanos() as i128).unwrap_or(0)
}

impl Processor {
    /// A processor named `name` (in errors) feeding `cube`, optionally writing the
    /// canonical dump of every event fed to `dump`.
    pub fn new(name: &str, cube: SharedCube, stats: SharedStats, dump: Option<Box<dyn Write + Send>>, opts: PipelineOptions) -> Processor {
        Processor {
            name: name.into(),
            set: TraceSet::in_memory(Path::new(name)),
            traces: Vec::new(),
            trace_ids: HashMap::new(),
            streams: Vec::new(),
            stream_ids: HashMap::new(),
            cube,
            stats,
            feed: None,
            feed_streams: 0,
            relayout: false,
            dump,
            pace: None,
            last_fed: i64::MIN,
            opts,
            pending_bytes: 0,
        }
    }

    fn decode_err(&self, msg: String) -> LiveError {
        LiveError::Decode { source_name: self.name.clone(), msg }
    }

    /// Runs until the source ends (or its sender is dropped): receives, batches,
    /// feeds. Returns the final stats; the cube is finished.
    pub fn run(mut self, rx: Receiver<Msg>) -> Result<Stats> {
        let high_water = (self.opts.capacity * 3 / 4).max(1);
        let mut last_batch = Instant::now();
        let mut ended = false;
        let mut stalled = false;
        while !ended {
            let full = self.is_full() && !stalled;
            // How far behind we are: packets waiting in the ring buffer and taken but
            // not yet fed.
            let backlog = rx.len() + self.pending_packets();
            if !full {
                match rx.recv_timeout(self.opts.interval) {
                    Ok(m) => ended |= self.handle(m)?,
                    Err(RecvTimeoutError::Timeout) => {}
                    Err(RecvTimeoutError::Disconnected) => ended = true,
                }
                // Take what is waiting, at most one buffer's worth per batch (unless the
                // last batch could consume nothing: what unblocks it, a beacon or a
                // packet of a stream we wait for, may be behind in the buffer).
                let mut taken = 0;
                while !ended && taken < self.opts.capacity && (stalled || !self.is_full()) {
                    match rx.try_recv() {
                        Ok(m) => ended |= self.handle(m)?,
                        Err(_) => break,
                    }
                    taken += 1;
                }
            }
            if ended || full || self.is_full() || last_batch.elapsed() >= self.opts.interval {
                let overloaded = backlog >= high_water;
                {
                    let mut st = self.stats.lock().unwrap_or_else(|e| e.into_inner());
                    st.max_backlog = st.max_backlog.max(backlog);
                    if overloaded {
                        st.slow_batches += 1;
                    }
                }
                if overloaded && self.opts.overload == Overload::Drop && !ended {
                    self.drop_pending()?;
                } else {
                    let before = self.pending_bytes;
                    self.batch(ended)?;
                    stalled = self.pending_bytes > 0 && self.pending_bytes == before;
                }
                last_batch = Instant::now();
            }
        }
        {
            let mut cube = self.cube.write().unwrap_or_else(|e| e.into_inner());
            match &mut self.feed {
                Some(f) => f.finish(&mut cube)?,
                None => cube.finish()?,
            }
        }
        if let Some(d) = &mut self.dump {
            d.flush().map_err(|source| LiveError::Output { what: "dump".into(), source })?;
        }
        let mut st = self.stats.lock().unwrap_or_else(|e| e.into_inner());
        st.ended = true;
        Ok(st.clone())
    }

    /// Packets taken from the ring buffer and not yet fed.
    fn pending_packets(&self) -> usize {
        self.streams.iter().map(|s| s.pending.len()).sum()
    }

    /// Whether a batch must run before taking more: a buffer's worth of packets, or
    /// [`MAX_BATCH_BYTES`], is waiting.
    fn is_full(&self) -> bool {
        self.pending_bytes >= MAX_BATCH_BYTES || self.pending_packets() >= self.opts.capacity
    }

    /// Handles one message; true at the end.
    fn handle(&mut self, m: Msg) -> Result<bool> {
        match m {
            Msg::Trace { trace, dir } => {
                if !self.trace_ids.contains_key(&trace) {
                    self.trace_ids.insert(trace, self.traces.len());
                    self.traces.push(LTrace { dir, index: None, metadata: Vec::new(), parsed_len: 0, streams: Vec::new(), clock: None });
                }
            }
            Msg::Metadata { trace, bytes } => {
                let t = self.trace_of(trace)?;
                self.traces[t].metadata.extend_from_slice(&bytes);
            }
            Msg::Stream { stream, trace, name } => {
                let t = self.trace_of(trace)?;
                let i = self.streams.len();
                self.stream_ids.insert(stream, i);
                self.traces[t].streams.push(i);
                self.streams.push(LStream { name, trace: t, pending: Vec::new(), prev: None, skip: (0, 0), known: None, ended: false, failed: false });
                self.relayout = true;
            }
            Msg::Packet { stream, bytes, ts_end } => {
                let s = self.stream_of(stream)?;
                {
                    let mut st = self.stats.lock().unwrap_or_else(|e| e.into_inner());
                    st.packets += 1;
                    st.bytes += bytes.len() as u64;
                }
                if !self.streams[s].failed {
                    self.pending_bytes += bytes.len();
                    self.streams[s].pending.push(bytes);
                }
                if let Some(c) = ts_end {
                    self.known(s, c);
                }
            }
            Msg::Beacon { stream, ts } => {
                let s = self.stream_of(stream)?;
                self.known(s, ts);
            }
            Msg::StreamEnd { stream } => {
                let s = self.stream_of(stream)?;
                self.streams[s].ended = true;
            }
            Msg::Notice(n) => {
                eprintln!("tracecube live: {n}");
                self.stats.lock().unwrap_or_else(|e| e.into_inner()).notices.push(n);
            }
            Msg::Pace { t0_ns, wall0, speed } => self.pace = Some((t0_ns, wall0, speed)),
            Msg::End => return Ok(true),
        }
        Ok(false)
    }

    fn trace_of(&self, id: u64) -> Result<usize> {
        self.trace_ids.get(&id).copied().ok_or_else(|| self.decode_err(format!("message for unknown trace {id}")))
    }

    fn stream_of(&self, id: u64) -> Result<usize> {
        self.stream_ids.get(&id).copied().ok_or_else(|| self.decode_err(format!("message for unknown stream {id}")))
    }

    fn known(&mut self, s: usize, cycles: u64) {
        let k = &mut self.streams[s].known;
        *k = Some(k.map_or(cycles, |v| v.max(cycles)));
    }

    /// Parses metadata that grew. Incomplete metadata (a chunk cut mid-declaration)
    /// is retried when more arrives; at the end of the source it is an error.
    fn update_metadata(&mut self, last: bool) -> Result<()> {
        for t in 0..self.traces.len() {
            let tr = &self.traces[t];
            if tr.metadata.len() == tr.parsed_len || tr.metadata.is_empty() {
                continue;
            }
            let dir = PathBuf::from(&tr.dir);
            let r = match tr.index {
                None => self.set.add_memory_trace(&dir, &tr.metadata).map(Some),
                Some(i) => self.set.replace_metadata(i, &tr.metadata).map(|_| None),
            };
            match r {
                Ok(idx) => {
                    let tr = &mut self.traces[t];
                    if let Some(i) = idx {
                        tr.index = Some(i);
                    }
                    tr.parsed_len = tr.metadata.len();
                    let st = &self.set.traces[tr.index.expect("set")];
                    tr.clock = st.clocks.first().copied();
                    self.relayout = true;
                }
                Err(e) if last => return Err(self.decode_err(format!("metadata of {}: {e}", self.traces[t].dir))),
                Err(_) => {}
            }
        }
        Ok(())
    }

    /// The safe time: events strictly before it can be consumed.
    fn safe_limit(&self, flush: bool) -> i64 {
        if flush {
            return i64::MAX;
        }
        let mut limit = i64::MAX;
        for s in &self.streams {
            if s.ended || s.failed {
                continue;
            }
            let ns = match (s.known, self.traces[s.trace].clock) {
                (Some(c), Some(conv)) => conv.to_ns(c),
                _ => i64::MIN,
            };
            limit = limit.min(ns);
        }
        limit
    }

    /// Puts every ready trace's stream bytes in the set: per stream, the previous
    /// packet (if any) then the pending ones. Returns, per set stream, our stream
    /// index and the first packet index to read.
    fn load_set(&mut self) -> Vec<(usize, usize)> {
        let mut order = Vec::new();
        for t in &self.traces {
            let Some(ti) = t.index else { continue };
            let mut files = Vec::new();
            for &s in &t.streams {
                let ls = &self.streams[s];
                let mut b = Vec::with_capacity(ls.prev.as_ref().map_or(0, |p| p.len()) + ls.pending.iter().map(|p| p.len()).sum::<usize>());
                if let Some(p) = &ls.prev {
                    b.extend_from_slice(p);
                }
                for p in &ls.pending {
                    b.extend_from_slice(p);
                }
                files.push((PathBuf::from(format!("{}/{}", t.dir, ls.name)), b));
                order.push((s, ls.prev.is_some() as usize));
            }
            self.set.set_memory_files(ti, files);
        }
        order
    }

    fn ensure_feed(&mut self) -> Result<()> {
        let mut cube = self.cube.write().unwrap_or_else(|e| e.into_inner());
        match &mut self.feed {
            None => {
                self.feed = Some(KernelFeed::new(&self.set, &mut cube));
            }
            Some(f) if self.relayout || self.feed_streams != self.set.streams.len() => f.relayout(&mut cube, &self.set)?,
            Some(_) => {}
        }
        self.feed_streams = self.set.streams.len();
        self.relayout = false;
        Ok(())
    }

    /// Consumes what can be consumed (everything when `flush`).
    fn batch(&mut self, flush: bool) -> Result<()> {
        self.update_metadata(flush)?;
        if self.streams.iter().all(|s| s.pending.is_empty()) {
            return Ok(());
        }
        let limit = self.safe_limit(flush);
        let order = self.load_set();
        if order.is_empty() {
            return Ok(());
        }
        if self.feed.is_none() || self.relayout || self.feed_streams != self.set.streams.len() {
            self.ensure_feed()?;
        }
        let set = &self.set;
        // Per set stream: (packet index being consumed, notices, events consumed in it).
        let mut progress: Vec<(usize, u64, u64)> = Vec::with_capacity(order.len());
        let mut cursors = Vec::with_capacity(order.len());
        // The errors that ended streams (by set stream index) in this batch.
        let mut failed: Vec<(usize, ctf::error::Error)> = Vec::new();
        for (i, &(s, start)) in order.iter().enumerate() {
            let n = set.streams[i].packets.len();
            let mut c = StreamCursor::with_packets(set, i, start.min(n)..n);
            let (sn, se) = self.streams[s].skip;
            let (mut dn, mut de) = (0, 0);
            while dn < sn || de < se {
                match c.next() {
                    Ok(Some(Item::Event(_))) => de += 1,
                    Ok(Some(_)) => dn += 1,
                    Ok(None) => break,
                    Err(e) => {
                        failed.push((i, e));
                        break;
                    }
                }
            }
            progress.push((start, sn, se));
            cursors.push(c);
        }
        let mut merger = Merger::from_cursors(cursors);
        let mut cube = self.cube.write().unwrap_or_else(|e| e.into_inner());
        let feed = self.feed.as_mut().expect("feed made above");
        let (mut fed, mut late, mut discarded, mut lost) = (0u64, 0u64, 0u64, 0u64);
        let mut first_ts: Option<i64> = None;
        let mut buf = Vec::new();
        let mut last_fed = self.last_fed;
        // A stream's error ends that stream; the others go on.
        while let Some(mut m) = merger.next_collecting_streams(&mut failed) {
            let key = match &m.item {
                Item::Event(e) => e.ts(),
                Item::Discarded(n) | Item::LostPackets(n) => n.begin_ns.or(n.end_ns),
            };
            if key.is_some_and(|k| k >= limit) {
                break;
            }
            let s = m.stream;
            let is_event = matches!(m.item, Item::Event(_));
            if let Item::Event(ev) = &m.item {
                let pidx = packet_index(set, s, ev.packet().info.offset);
                let p = &mut progress[s];
                if p.0 != pidx {
                    *p = (pidx, 0, 0);
                }
                p.2 += 1;
                let ts = ev.ts().unwrap_or(last_fed);
                if ts < last_fed {
                    late += 1;
                    continue;
                }
            }
            if let Some(d) = &mut self.dump {
                let mark = buf.len();
                if let Err(e) = ctf::dump::write_json(&mut buf, &mut m.item) {
                    // A field that does not decode ends its stream there (the half-written
                    // line taken back), before the event is fed.
                    buf.truncate(mark);
                    let p = merger.cursor(s).packet().copied();
                    let path = p.map(|p| set.packet_file(&p).1.path.clone()).unwrap_or_default();
                    let offset = p.map_or(0, |p| p.info.offset) + e.bit_pos / 8;
                    failed.push((s, ctf::error::Error::Stream { path, offset, kind: e.kind }));
                    merger.retire(s);
                    continue;
                }
                if buf.len() > 1 << 16 {
                    d.write_all(&buf).map_err(|source| LiveError::Output { what: "dump".into(), source })?;
                    buf.clear();
                }
            }
            match &m.item {
                Item::Event(ev) => {
                    let ts = ev.ts().unwrap_or(last_fed);
                    last_fed = ts;
                    first_ts.get_or_insert(ts);
                    feed.on_event(&mut cube, ev, s)?;
                    fed += 1;
                }
                Item::Discarded(n) => discarded += n.count,
                Item::LostPackets(n) => lost += n.count,
            }
            if !is_event {
                // Notices come when a packet opens: the cursor is on that packet.
                let off = merger.cursor(s).packet().map(|p| p.info.offset).unwrap_or(0);
                let pidx = packet_index(set, s, off);
                let p = &mut progress[s];
                if p.0 != pidx {
                    *p = (pidx, 0, 0);
                }
                p.1 += 1;
            }
        }
        drop(merger);
        // Make what was fed visible to queries.
        feed.flush(&mut cube)?;
        if let Some(d) = &mut self.dump {
            d.write_all(&buf).map_err(|source| LiveError::Output { what: "dump".into(), source })?;
        }
        drop(cube);
        self.last_fed = last_fed;
        // Keep, per stream, the packets not fully consumed and the one before them.
        let mut packets_done = 0usize;
        for (i, &(s, start)) in order.iter().enumerate() {
            let (pidx, n, e) = progress[i];
            let ls = &mut self.streams[s];
            if let Some((_, err)) = failed.iter().find(|(f, _)| *f == i) {
                // Nothing of a failed stream is kept nor read again; its error is
                // reported once.
                ls.failed = true;
                let bytes: usize = ls.pending.iter().map(|p| p.len()).sum();
                self.pending_bytes = self.pending_bytes.saturating_sub(bytes);
                packets_done += ls.pending.len();
                (ls.pending, ls.prev, ls.skip) = (Vec::new(), None, (0, 0));
                let msg = err.to_string();
                eprintln!("tracecube live: error: {msg} (the stream's later packets are left out)");
                self.stats.lock().unwrap_or_else(|e| e.into_inner()).stream_errors.push(msg);
                continue;
            }
            let consumed = pidx.saturating_sub(start).min(ls.pending.len());
            packets_done += consumed;
            if consumed > 0 {
                let mut rest = ls.pending.split_off(consumed);
                std::mem::swap(&mut rest, &mut ls.pending);
                self.pending_bytes = self.pending_bytes.saturating_sub(rest.iter().map(|p| p.len()).sum());
                ls.prev = rest.pop();
            }
            ls.skip = (n, e);
        }
        if !self.opts.consumer_delay.is_zero() {
            std::thread::sleep(self.opts.consumer_delay * packets_done as u32);
        }
        let lag = first_ts.and_then(|t| self.lag_s(t));
        let mut st = self.stats.lock().unwrap_or_else(|e| e.into_inner());
        st.events += fed;
        st.late_events += late;
        st.discarded_events += discarded;
        st.lost_packets += lost;
        st.batches += 1;
        if lag.is_some() {
            st.lag_batches += 1;
        }
        if last_fed != i64::MIN {
            st.last_ts = Some(last_fed);
        }
        if let Some(l) = lag {
            st.lag_last_s = l;
            st.lag_max_s = st.lag_max_s.max(l);
            st.lag_sum_s += l;
        }
        Ok(())
    }

    /// Lag now of an event at `ts` (ns from origin), s; `None` for an unpaced replay
    /// (`speed` 0), where event times say nothing of when they were sent.
    fn lag_s(&self, ts: i64) -> Option<f64> {
        let emitted = match self.pace {
            Some((t0, wall0, speed)) if speed > 0.0 => {
                wall0.duration_since(UNIX_EPOCH).map(|d| d.as_nanos() as i128).unwrap_or(0) + ((ts - t0) as f64 / speed) as i128
            }
            Some(_) => return None,
            None => ts as i128,
        };
        Some(((now_ns() - emitted) as f64 / 1e9).max(0.0))
    }

    /// Overload with the drop policy: counts and drops every packet received.
    fn drop_pending(&mut self) -> Result<()> {
        self.update_metadata(false)?;
        let order = self.load_set();
        let set = &self.set;
        let (mut events, mut packets) = (0u64, 0u64);
        for (i, &(s, start)) in order.iter().enumerate() {
            let n = set.streams[i].packets.len();
            if start >= n {
                continue;
            }
            let mut c = StreamCursor::with_packets(set, i, start..n);
            let classes = set.streams[i]
                .packets
                .first()
                .map(|p| set.traces[p.trace as usize].plan.streams.iter().map(|sp| sp.events.len()).max().unwrap_or(0))
                .unwrap_or(0);
            let mut per_class = vec![0u64; classes.max(1)];
            c.count(&mut per_class).map_err(|e| LiveError::Decode { source_name: self.name.clone(), msg: e.to_string() })?;
            let total: u64 = per_class.iter().sum();
            events += total.saturating_sub(self.streams[s].skip.1);
            packets += (n - start) as u64;
        }
        for &(s, _) in &order {
            let ls = &mut self.streams[s];
            self.pending_bytes = self.pending_bytes.saturating_sub(ls.pending.iter().map(|p| p.len()).sum());
            if let Some(last) = ls.pending.pop() {
                ls.prev = Some(last);
            }
            ls.pending.clear();
            ls.skip = (0, 0);
        }
        let mut st = self.stats.lock().unwrap_or_else(|e| e.into_inner());
        st.dropped_events += events;
        st.dropped_packets += packets;
        Ok(())
    }
}

/// Index of the packet at byte `offset` of set stream `s`.
fn packet_index(set: &TraceSet, s: usize, offset: u64) -> usize {
    let p = &set.streams[s].packets;
    p.binary_search_by_key(&offset, |r| r.info.offset).unwrap_or_else(|i| i.min(p.len().saturating_sub(1)))
}
