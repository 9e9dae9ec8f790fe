//! The engine's time-merge delivers exactly the wanted events of every stream,
//! each once, in `(timestamp, stream)` order, with their own class, position, clock,
//! order key and header fields, whatever the chunking, the thread count, the time range
//! and the classes wanted; the events passed over are reported by their span. The
//! reference is a brute-force merge of every stream read alone by the general cursor
//! (`StreamCursor::next`), so the engine's read-ahead path is checked against it.
//! Events an analysis takes as copied fields (`Selective::on_copied`) or declines come
//! in the same order, with the values the events give.

use ctf::plan::FieldHandle;
use std::sync::atomic::{AtomicUsize, Ordering};

use ctf::stream::{Copied, CopyRequest, EventRef, Item, StreamCursor};
use ctf::trace::TraceSet;
use engine::{Analysis, ChunkPolicy, Ctx, EngineOptions, Partition, Selective, Tally};
use proptest::prelude::*;
use proptest::test_runner::TestCaseError;

/// One delivered event: (ts, stream, class index, bit offset, cycles, order key, header
/// tag).
type Seen = (i64, usize, usize, u64, u64, i64, Option<u64>);

/// Records what it is given; wants the classes of `mask` (by class index).
struct Recorder {
    mask: Vec<bool>,
    /// Per class index: a handle on the event header's `id` field (its tag).
    header_id: Vec<Option<FieldHandle>>,
    /// Per class index: its id, and a handle on the extended header's id field.
    class_ids: Vec<(u64, Option<FieldHandle>)>,
    /// Per class index: handles on the short and extended headers' timestamp fields.
    stamps: Vec<[Option<FieldHandle>; 2]>,
    /// The tags of the short header form, and its and the extended form's timestamp
    /// sizes in bits.
    short_tags: (u64, u64),
    ts_bits: [u32; 2],
}

#[derive(Default)]
struct Record {
    seen: Vec<Seen>,
    /// Span of the timestamps passed over.
    skipped: Option<(i64, i64)>,
    /// Events delivered before an earlier one of the same slice (by `(ts, stream)`).
    out_of_order: usize,
}

/// 1 when an event of `(ts, stream)` `next` comes before the one delivered last in its
/// slice (`last`), else 0: inside a slice, events come in `(ts, stream)` order.
fn out_of_order(last: Option<(i64, usize)>, next: (i64, usize)) -> usize {
    usize::from(last.is_some_and(|l| l > next))
}

impl Recorder {
    fn new(set: &TraceSet, mask: Vec<bool>) -> Recorder {
        let plan = &set.traces[0].plan;
        let sp = &plan.streams[0];
        let header_id = sp.events.iter().map(|e| plan.event_field(sp, e, &["id"])).collect();
        let class_ids = sp.events.iter().map(|e| (e.id, plan.event_field(sp, e, &["v", "extended", "id"]))).collect();
        let stamps =
            sp.events.iter().map(|e| [&["v", "compact", "timestamp"][..], &["v", "extended", "timestamp"]].map(|p| plan.event_field(sp, e, p))).collect();
        let fh = sp.fast_header.as_ref().expect("LTTng header");
        Recorder { mask, header_id, class_ids, stamps, short_tags: fh.short_range, ts_bits: [fh.short_ts.bits, fh.ext_ts.bits] }
    }

    /// Checks the header fields read through handles against the event: a short
    /// form's tag is the class id, an extended form's id field is; the form's timestamp
    /// field holds the clock value's low bits.
    fn check_header(&self, ev: &EventRef<'_, '_>, tag: Option<u64>) {
        let c = ev.class_index();
        let (Some(tag), Some(&(id, ext_id)), Some(stamps)) = (tag, self.class_ids.get(c), self.stamps.get(c)) else { return };
        let form = if (self.short_tags.0..=self.short_tags.1).contains(&tag) {
            assert_eq!(tag, id, "short header tag of a class-{id} event");
            0
        } else {
            assert_eq!(ext_id.and_then(|h| ev.uint(h)), Some(id), "extended header id (tag {tag})");
            1
        };
        let bits = self.ts_bits[form];
        let low = if bits >= 64 { ev.cycles() } else { ev.cycles() & ((1 << bits) - 1) };
        assert_eq!(stamps[form].and_then(|h| ev.uint(h)), Some(low), "header timestamp (form {form})");
    }

    fn seen(&self, ev: &EventRef<'_, '_>, stream: usize, order: i64) -> Seen {
        let c = ev.class_index();
        let tag = self.header_id.get(c).copied().flatten().and_then(|h| ev.uint(h));
        if !self.class_ids.is_empty() {
            self.check_header(ev, tag);
        }
        (ev.ts().expect("clock"), stream, c, ev.bit_offset(), ev.cycles(), order, tag)
    }
}

impl Analysis for Recorder {
    type State = Record;
    type Output = Record;

    fn new_state(&self) -> Record {
        Record::default()
    }

    fn on_event(&self, st: &mut Record, ev: &EventRef<'_, '_>, ctx: &Ctx) {
        assert!(self.mask.get(ev.class_index()).copied().unwrap_or(true), "only wanted classes are delivered");
        let seen = self.seen(ev, ctx.stream, ctx.order);
        st.out_of_order += out_of_order(st.seen.last().map(|l| (l.0, l.1)), (seen.0, seen.1));
        st.seen.push(seen);
    }

    fn merge(&self, mut earlier: Record, later: Record) -> Record {
        earlier.seen.extend(later.seen);
        // Slices of the stream scheme are not in time order across streams (inside
        // each slice, `out_of_order` checks the order).
        earlier.seen.sort_by_key(|s| (s.0, s.1));
        earlier.out_of_order += later.out_of_order;
        if let Some((f, l)) = later.skipped {
            self.on_skipped(&mut earlier, f, l);
        }
        earlier
    }

    fn finish(&self, st: Record) -> Record {
        st
    }
}

impl Selective for Recorder {
    fn interest(&self, _trace: usize, _stream_class: u64) -> Option<Vec<bool>> {
        Some(self.mask.clone())
    }

    fn on_skipped(&self, st: &mut Record, first: i64, last: i64) {
        st.skipped = Some(st.skipped.map_or((first, last), |(f, l)| (f.min(first), l.max(last))));
    }
}

impl Tally for Recorder {}
impl ChunkPolicy for Recorder {}

/// The reference: every event of every stream read alone, those in `[begin, end]`
/// merged by `(ts, stream)`; the wanted ones as delivered (the order key of an event of
/// a stream with a clock is its timestamp), and the span of the others.
fn brute_force(set: &TraceSet, r: &Recorder, range: (i64, i64)) -> Record {
    let mut out = Record::default();
    each_event(set, range, |ev, s, ts| {
        if r.mask.get(ev.class_index()).copied().unwrap_or(true) {
            out.seen.push(r.seen(ev, s, ts));
        } else {
            out.skipped = Some(out.skipped.map_or((ts, ts), |(f, l)| (f.min(ts), l.max(ts))));
        }
    });
    out.seen.sort_by_key(|s| (s.0, s.1));
    out
}

/// Calls `f(event, stream, ts)` for every event of `[begin, end]` of every stream, each
/// stream read alone by the general cursor, in stream order.
fn each_event(set: &TraceSet, (begin, end): (i64, i64), mut f: impl FnMut(&EventRef<'_, '_>, usize, i64)) {
    for s in 0..set.streams.len() {
        let mut c = StreamCursor::new(set, s);
        while let Some(item) = c.next().expect("valid trace") {
            let Item::Event(ev) = item else { continue };
            let ts = ev.ts().expect("clock");
            if (begin..=end).contains(&ts) {
                f(&ev, s, ts);
            }
        }
    }
}

/// The engine options a proptest draws, before they are resolved against a trace
/// ([`RunDraw::options`]).
#[derive(Debug, Clone)]
struct RunDraw {
    threads: usize,
    /// Slice size in packets of 4 KiB.
    chunk: u64,
    /// One of the three partitions.
    scheme: u8,
    /// The time range as fractions of the trace's span (its first and last timestamps).
    range: Option<(f64, f64)>,
}

prop_compose! {
    /// Thread count, chunk size, partition and time range, as both proptests draw them.
    fn run_draw()(threads in 1usize..4, chunk in 1u64..40, scheme in 0u8..3, range in proptest::option::of((0.0f64..1.0, 0.0f64..1.0))) -> RunDraw {
        RunDraw { threads, chunk, scheme, range }
    }
}

impl RunDraw {
    /// The engine options of this draw for `set`.
    fn options(&self, set: &TraceSet) -> EngineOptions {
        let (mut lo, mut hi) = (i64::MAX, i64::MIN);
        each_event(set, (i64::MIN, i64::MAX), |_, _, ts| (lo, hi) = (lo.min(ts), hi.max(ts)));
        let (begin, end) = match self.range {
            Some((a, b)) => {
                let at = |x: f64| lo + ((hi - lo) as f64 * x) as i64;
                (Some(at(a.min(b))), Some(at(a.max(b))))
            }
            None => (None, None),
        };
        let partition = [Partition::Hybrid, Partition::Time, Partition::Stream][self.scheme as usize];
        EngineOptions { threads: self.threads, chunk_size: self.chunk * 4096, partition, begin, end }
    }
}

fn synth_trace(dir: &std::path::Path, seed: u64) -> TraceSet {
    let header = if seed.is_multiple_of(2) { synth::EventHeaderKind::Compact } else { synth::EventHeaderKind::Large };
    let cfg = synth::SynthConfig { cpus: 3, events: 8_000, seed, packet_size: 4096, header, ..Default::default() };
    let s = synth::generate(&cfg, dir).expect("synthesize");
    TraceSet::open(&s.trace_dir).expect("open")
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 24, .. ProptestConfig::default() })]
    #[test]
    fn merge_delivers_the_brute_force_merge(
        seed in 0u64..1000,
        draws in proptest::collection::vec(0u8..10, 40),
        density in 1u8..10,
        draw in run_draw(),
    ) {
        let dir = tempfile::tempdir().unwrap();
        let set = synth_trace(dir.path(), seed);
        // From a tenth of the classes wanted (the cursor skims) to nine tenths (the
        // engine reads ahead).
        let r = Recorder::new(&set, draws.iter().map(|&d| d < density).collect());
        let opts = draw.options(&set);
        let got = engine::run(&r, &set, &opts).expect("runs");
        let want = brute_force(&set, &r, opts.range());
        prop_assert_eq!(got.seen.len(), want.seen.len());
        prop_assert!(got.seen == want.seen, "first difference: {:?}", got.seen.iter().zip(&want.seen).find(|(g, w)| g != w));
        prop_assert_eq!(got.skipped, want.skipped);
        prop_assert_eq!(got.out_of_order, 0);
        // The header's tag was read (from the decoder's slots) for every event.
        prop_assert!(got.seen.iter().all(|s| s.6.is_some()));
    }
}

/// Fields a copy may name in the synthesized classes: integers, and `char[16]` names.
const COPY_FIELDS: [&str; 10] = ["fd", "count", "ret", "prev_tid", "next_tid", "child_tid", "pid", "tid", "prev_comm", "next_comm"];

/// One event as [`Copier`] records it, whichever way it came: (ts, stream, class index,
/// order key, the requested fields' values and bytes).
type Got = (i64, usize, usize, i64, Vec<(u64, Option<Vec<u8>>)>);

/// Asks for copies of the classes of `requests` and takes their events by copies,
/// except those of the classes of `decline`, whose events it declines (they must then
/// come to `on_event`, with the state as it was). Every event is recorded with the
/// same fields whichever way it came, so the engine's output is comparable with the
/// brute-force merge.
struct Copier {
    mask: Vec<bool>,
    /// Per class index: the request (its label is the class index).
    requests: Vec<Option<CopyRequest>>,
    decline: Vec<bool>,
    /// Events taken by copies, and declined.
    by_copy: AtomicUsize,
    declined: AtomicUsize,
}

#[derive(Default)]
struct Copies {
    got: Vec<Got>,
    /// Events delivered before an earlier one of the same slice (by `(ts, stream)`).
    out_of_order: usize,
    /// Span of the events taken by copies, and the spans told by `on_copied_span`.
    taken: Option<(i64, i64)>,
    told: Option<(i64, i64)>,
}

/// `span` widened to `[first, last]`.
fn widened(span: Option<(i64, i64)>, first: i64, last: i64) -> Option<(i64, i64)> {
    Some(span.map_or((first, last), |(f, l)| (f.min(first), l.max(last))))
}

impl Copies {
    /// Records `g`, delivered after those recorded.
    fn push(&mut self, g: Got) {
        self.out_of_order += out_of_order(self.got.last().map(|l| (l.0, l.1)), (g.0, g.1));
        self.got.push(g);
    }
}

impl Copier {
    fn new(set: &TraceSet, mask: Vec<bool>, picks: &[Vec<usize>], decline: Vec<bool>) -> Copier {
        let plan = &set.traces[0].plan;
        let sp = &plan.streams[0];
        let requests = sp
            .events
            .iter()
            .enumerate()
            .map(|(i, ev)| {
                let own: Vec<_> = COPY_FIELDS.iter().filter_map(|n| plan.event_field(sp, ev, &[n])).collect();
                let pick = &picks[i % picks.len()];
                // An empty pick: no request for the class.
                (!pick.is_empty()).then(|| CopyRequest { label: i as u32, fields: pick.iter().map(|&k| own.get(k % (own.len() + 1)).copied()).collect() })
            })
            .collect();
        Copier { mask, requests, decline, by_copy: AtomicUsize::new(0), declined: AtomicUsize::new(0) }
    }

    /// The fields of the class's request, as the event gives them.
    fn fields_of(&self, ev: &EventRef<'_, '_>) -> Vec<(u64, Option<Vec<u8>>)> {
        let Some(Some(req)) = self.requests.get(ev.class_index()) else { return vec![] };
        req.fields.iter().map(|h| (h.and_then(|h| ev.uint(h)).unwrap_or(u64::MAX), h.and_then(|h| ev.array_bytes(h)).map(<[u8]>::to_vec))).collect()
    }

    fn got(&self, ev: &EventRef<'_, '_>, stream: usize, order: i64) -> Got {
        (ev.ts().expect("clock"), stream, ev.class_index(), order, self.fields_of(ev))
    }
}

impl Analysis for Copier {
    type State = Copies;
    type Output = Copies;

    fn new_state(&self) -> Copies {
        Copies::default()
    }

    fn on_event(&self, st: &mut Copies, ev: &EventRef<'_, '_>, ctx: &Ctx) {
        assert!(self.mask.get(ev.class_index()).copied().unwrap_or(true), "only wanted classes are delivered");
        st.push(self.got(ev, ctx.stream, ctx.order));
    }

    fn merge(&self, mut earlier: Copies, later: Copies) -> Copies {
        earlier.got.extend(later.got);
        // Slices of the stream scheme are not in time order across streams (inside
        // each slice, `out_of_order` checks the order).
        earlier.got.sort_by_key(|g| (g.0, g.1));
        earlier.out_of_order += later.out_of_order;
        if let Some((f, l)) = later.taken {
            earlier.taken = widened(earlier.taken, f, l);
        }
        if let Some((f, l)) = later.told {
            earlier.told = widened(earlier.told, f, l);
        }
        earlier
    }

    fn finish(&self, st: Copies) -> Copies {
        st
    }
}

impl Selective for Copier {
    fn interest(&self, _trace: usize, _stream_class: u64) -> Option<Vec<bool>> {
        Some(self.mask.clone())
    }

    fn copies(&self, _trace: usize, _stream_class: u64) -> Option<Vec<Option<CopyRequest>>> {
        Some(self.requests.clone())
    }

    fn on_copied(&self, st: &mut Copies, c: &Copied<'_>, ts: i64, ctx: &Ctx) -> bool {
        let class = c.label() as usize;
        assert!(self.mask.get(class).copied().unwrap_or(true), "only wanted classes are delivered");
        let Some(Some(req)) = self.requests.get(class) else { panic!("copies of class {class}, which asked for none") };
        if self.decline.get(class).copied().unwrap_or(false) {
            self.declined.fetch_add(1, Ordering::Relaxed);
            return false;
        }
        self.by_copy.fetch_add(1, Ordering::Relaxed);
        let fields = (0..req.fields.len()).map(|i| (c.get(i), c.bytes(i).map(<[u8]>::to_vec))).collect();
        st.push((ts, ctx.stream, class, ctx.order, fields));
        st.taken = widened(st.taken, ts, ts);
        true
    }

    fn on_copied_span(&self, st: &mut Copies, first: i64, last: i64) {
        st.told = widened(st.told, first, last);
    }
}

impl Tally for Copier {}
impl ChunkPolicy for Copier {}

/// [`brute_force`] for a [`Copier`]: the wanted events of `[begin, end]`, by `(ts, stream)`.
fn brute_force_copies(set: &TraceSet, c: &Copier, range: (i64, i64)) -> Vec<Got> {
    let mut out = Vec::new();
    each_event(set, range, |ev, s, ts| {
        if c.mask.get(ev.class_index()).copied().unwrap_or(true) {
            out.push(c.got(ev, s, ts));
        }
    });
    out.sort_by_key(|g| (g.0, g.1));
    out
}

/// A run on `set` with `opts` delivers the brute-force merge through `c`.
fn check_copies(set: &TraceSet, c: &Copier, opts: &EngineOptions) -> Result<(), TestCaseError> {
    let out = engine::run(c, set, opts).expect("runs");
    prop_assert_eq!(out.out_of_order, 0);
    // The span told covers the events taken by copies, and only delivered events.
    let delivered = out.got.iter().fold(None, |s, g| widened(s, g.0, g.0));
    if let Some((f, l)) = out.taken {
        prop_assert!(out.told.is_some_and(|(tf, tl)| tf <= f && l <= tl), "taken {:?}, told {:?}", out.taken, out.told);
    }
    if let Some((f, l)) = out.told {
        prop_assert!(delivered.is_some_and(|(df, dl)| df <= f && l <= dl), "told {:?}, delivered {:?}", out.told, delivered);
    }
    let got = out.got;
    let want = brute_force_copies(set, c, opts.range());
    prop_assert_eq!(got.len(), want.len());
    prop_assert!(got == want, "first difference: {:?}", got.iter().zip(&want).find(|(g, w)| g != w));
    Ok(())
}

/// Every class but one wanted (the reader reads ahead only for an analysis that passes
/// over some), asked for copies, a third of them declined: on a serial run, events come
/// both ways and declined ones still arrive, in order, with their fields.
#[test]
fn copies_taken_and_declined_keep_the_merge_order() {
    let dir = tempfile::tempdir().unwrap();
    let set = synth_trace(dir.path(), 4);
    let n = set.traces[0].plan.streams[0].events.len();
    let picks: Vec<Vec<usize>> = (0..n).map(|i| (0..1 + i % 4).map(|k| i + k).collect()).collect();
    let c = Copier::new(&set, (0..n).map(|i| i + 1 < n).collect(), &picks, (0..n).map(|i| i % 3 == 0).collect());
    check_copies(&set, &c, &EngineOptions { threads: 1, ..EngineOptions::default() }).unwrap();
    assert!(c.by_copy.load(Ordering::Relaxed) > 1000, "events taken by copies: {}", c.by_copy.load(Ordering::Relaxed));
    assert!(c.declined.load(Ordering::Relaxed) > 100, "events declined: {}", c.declined.load(Ordering::Relaxed));
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 16, .. ProptestConfig::default() })]
    /// Whatever the classes copied and declined, the chunking, the thread count and the
    /// time range, events come in the brute-force merge's order with the values the
    /// events give, by copies or not.
    #[test]
    fn copies_deliver_the_brute_force_merge(
        seed in 0u64..1000,
        picks in proptest::collection::vec(proptest::collection::vec(0usize..12, 0..=ctf::stream::MAX_COPIES), 40),
        draws in proptest::collection::vec(0u8..10, 40),
        declines in proptest::collection::vec(any::<bool>(), 40),
        density in 1u8..=10,
        draw in run_draw(),
    ) {
        let dir = tempfile::tempdir().unwrap();
        let set = synth_trace(dir.path(), seed);
        let n = set.traces[0].plan.streams[0].events.len();
        let mask = (0..n).map(|i| draws[i % draws.len()] < density).collect();
        let c = Copier::new(&set, mask, &picks, (0..n).map(|i| declines[i % declines.len()]).collect());
        check_copies(&set, &c, &draw.options(&set))?;
    }
}
