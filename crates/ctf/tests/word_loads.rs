//! The reader's word-load paths (LTTng event headers read by 8-byte loads, fixed-size
//! events passed over by a loop on locals) give exactly what the general decoder gives:
//! same items, same field values, same counts, same events passed over.

use crate::common;

use std::path::Path;

use ctf::plan::{HeaderLayout, StringSkim};
use ctf::stream::{AheadBuf, CopyRequest, Item, Passed, StreamCursor, Wanted, COPY_WINDOW, MAX_COPIES};
use ctf::trace::TraceSet;
use proptest::prelude::*;

/// Every item of every stream as (kind, ts, JSON dump).
fn dump(set: &TraceSet) -> Vec<(u8, Option<i64>, String)> {
    (0..set.streams.len()).flat_map(|s| common::items(set, s, 0..set.streams[s].packets.len())).collect()
}

/// One packet's `(events, first_cycles, last_cycles)` as `count_packet_in` counts them.
type PacketTally = (u64, Option<u64>, Option<u64>);

/// Per stream: the per-class counts of `StreamCursor::count`, and the packet counts of
/// `count_packet_in` with `window`.
fn counts(set: &TraceSet, window: (u64, u64)) -> Vec<(Vec<u64>, Vec<PacketTally>)> {
    (0..set.streams.len())
        .map(|s| {
            let n = set.traces[0].plan.stream(set.streams[s].class_id).map_or(0, |sp| sp.events.len());
            let mut whole = vec![0; n];
            StreamCursor::new(set, s).count(&mut whole).expect("counts");
            let mut c = StreamCursor::new(set, s);
            let mut per = vec![0; n];
            let mut packets = Vec::new();
            while let Some(pc) = c.count_packet_in(&mut per, window).expect("counts") {
                packets.push((pc.events, pc.first_cycles, pc.last_cycles));
            }
            whole.extend(per);
            (whole, packets)
        })
        .collect()
}

/// Per stream: (class, clock, passed) of each event `next_wanted` yields with `mask`.
fn wanted(set: &TraceSet, mask: &[bool], window: (u64, u64)) -> Vec<Vec<(usize, u64, Passed)>> {
    (0..set.streams.len())
        .map(|s| {
            let mut c = StreamCursor::new(set, s);
            let wanted = Wanted::new(set.traces[0].plan.stream(set.streams[s].class_id).expect("stream class"), mask.to_vec());
            let mut out = Vec::new();
            loop {
                let mut passed = Passed::default();
                match c.next_wanted(&wanted, 0, window, true, &mut passed).expect("reads") {
                    None => break,
                    Some(Item::Event(e)) => out.push((e.class_index(), e.cycles(), passed)),
                    Some(_) => out.push((usize::MAX, 0, passed)),
                }
            }
            out
        })
        .collect()
}

fn synth_trace(dir: &Path, seed: u64) -> TraceSet {
    let header = if seed.is_multiple_of(2) { synth::EventHeaderKind::Compact } else { synth::EventHeaderKind::Large };
    // Background activity brings classes with a string (`irq_handler_entry`'s name),
    // passed over by their sizes and a search for the NUL.
    let background = (seed % 3) as u8 * 30;
    let cfg = synth::SynthConfig { cpus: 2, events: 6_000, seed, packet_size: 4096, header, background, ..Default::default() };
    synth::generate(&cfg, dir).expect("synthesize");
    TraceSet::open(dir).expect("open")
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 10, .. ProptestConfig::default() })]
    #[test]
    fn word_loads_equal_the_general_decoder(seed in 0u64..1000, mask in proptest::collection::vec(any::<bool>(), 64), w in (0u64..4_000_000, 0u64..4_000_000)) {
        let dir = tempfile::tempdir().unwrap();
        let fast = synth_trace(dir.path(), seed);
        // LTTng headers are compiled, to the layouts with loops of their own.
        let layouts: Vec<_> = fast.traces[0].plan.streams.iter().map(|sp| sp.fast_header.as_ref().map(|h| h.layout)).collect();
        let want = if seed.is_multiple_of(2) { HeaderLayout::LttngCompactLe } else { HeaderLayout::LttngLargeLe };
        prop_assert!(layouts.iter().all(|l| *l == Some(want)), "{:?}", layouts);
        let slow = TraceSet::open(dir.path()).unwrap().without_compiled_headers();
        prop_assert_eq!(dump(&fast), dump(&slow));
        let lo = fast.streams.iter().flat_map(|s| s.packets.first()).filter_map(|p| p.info.ts_begin).min().unwrap_or(0);
        let window = (lo + w.0.min(w.1), lo + w.0.max(w.1));
        for win in [(0, u64::MAX), window] {
            prop_assert_eq!(counts(&fast, win), counts(&slow, win));
            prop_assert_eq!(wanted(&fast, &mask, win), wanted(&slow, &mask, win));
        }
    }
}

/// An event as (offset of its packet, class index, clock value, passed over by the
/// skimming loop: of fixed size or with one string among fields of whole bytes).
type EventKey = (u64, usize, u64, bool);

/// Every event of stream `s` as an [`EventKey`], read with `next`. With `lo`,
/// `pass_before(lo)` is called once after the first item, and its answer is returned
/// too.
fn events_after(set: &TraceSet, s: usize, lo: Option<u64>) -> (Vec<EventKey>, Option<u64>) {
    let mut c = StreamCursor::new(set, s);
    let mut out = Vec::new();
    let mut answer = None;
    let mut first = true;
    while let Some(item) = c.next().expect("reads") {
        if let Item::Event(e) = item {
            let class = e.class_index() as u64;
            let skimmed = e.stream_plan().skim_by_id.iter().any(|&x| !x.is_stop() && u64::from(x.class()) == class);
            out.push((e.packet().info.offset, e.class_index(), e.cycles(), skimmed));
        }
        if first {
            first = false;
            if let Some(lo) = lo {
                answer = c.pass_before(lo);
            }
        }
    }
    (out, answer)
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 12, .. ProptestConfig::default() })]
    #[test]
    fn pass_before_skips_exactly_the_skimmable_events_before_the_clock(seed in 0u64..1000, at in 0.0f64..1.2) {
        let dir = tempfile::tempdir().unwrap();
        let set = synth_trace(dir.path(), seed);
        for s in 0..set.streams.len() {
            let (all, _) = events_after(&set, s, None);
            let (first, last) = (all[0], all[all.len() - 1]);
            let lo = first.2 + ((last.2 - first.2) as f64 * at / 4.0) as u64;
            let (rest, answer) = events_after(&set, s, Some(lo));
            // What follows is a suffix of the stream after its first event.
            prop_assert!(!rest.is_empty() && rest.len() <= all.len());
            prop_assert_eq!(rest[0], all[0]);
            let skipped = &all[1..all.len() - rest.len() + 1];
            prop_assert_eq!(&rest[1..], &all[1 + skipped.len()..]);
            // Only events of the first packet, skimmable, before `lo`; the answer
            // is the clock of the last one.
            prop_assert!(skipped.iter().all(|e| e.0 == first.0 && e.3 && e.2 < lo));
            prop_assert_eq!(answer, skipped.last().map(|e| e.2));
            // It stopped at the packet's end, at `lo`, or before an event of another kind.
            if let Some(next) = all.get(1 + skipped.len()) {
                prop_assert!(next.0 != first.0 || next.2 >= lo || !next.3, "stopped early at {next:?} (lo {lo})");
            }
        }
    }
}

#[test]
fn in_last_packet_only_in_the_last_packet_of_a_range_that_ends_before_the_stream() {
    let dir = tempfile::tempdir().unwrap();
    let set = synth_trace(dir.path(), 4);
    let n = set.streams[0].packets.len();
    assert!(n >= 3, "packets: {n}");
    for (range, last_open) in [(0..2, Some(1)), (1..n, None)] {
        let mut c = StreamCursor::with_packets(&set, 0, range.clone());
        assert!(!c.in_last_packet(), "nothing open yet");
        while let Some(item) = c.next().expect("reads") {
            let off = match item {
                Item::Event(e) => e.packet().info.offset,
                _ => continue,
            };
            let is_last = last_open.is_some_and(|k| off == set.streams[0].packets[k].info.offset);
            assert_eq!(c.in_last_packet(), is_last, "range {range:?}, packet at {off}");
        }
    }
}

/// The real traces of `../shared` (when present), both byte orders and header kinds.
#[test]
fn word_loads_equal_the_general_decoder_on_real_traces() {
    let test = "word_loads on shared traces";
    for name in ["many-threads", "lttng-modules-2.0.0-ref", "flipping-endianness", "ust-small", "bug446190-arm"] {
        let Some(dir) = testkit::shared_trace(test, name) else { continue };
        let fast = TraceSet::open(&dir).unwrap_or_else(|e| panic!("{name}: {e}"));
        let slow = TraceSet::open(&dir).unwrap().without_compiled_headers();
        // LTTng's little-endian headers get the loops compiled for their layouts.
        let layouts: Vec<_> = fast.traces[0].plan.streams.iter().filter_map(|sp| sp.fast_header.as_ref().map(|h| h.layout)).collect();
        let want = match name {
            "many-threads" => vec![HeaderLayout::LttngCompactLe],
            "lttng-modules-2.0.0-ref" | "ust-small" => vec![HeaderLayout::LttngLargeLe],
            _ => layouts.clone(),
        };
        assert_eq!(layouts, want, "{name}");
        assert_eq!(dump(&fast), dump(&slow), "{name}");
        assert_eq!(counts(&fast, (0, u64::MAX)), counts(&slow, (0, u64::MAX)), "{name}");
        // Passing over most classes: the skimming loop's clock (compact timestamps wrap
        // every 2^27 cycles) shows in the clocks of the events yielded after it.
        for m in [3, 7] {
            let mask: Vec<bool> = (0..4096).map(|i| i % m == 0).collect();
            assert_eq!(wanted(&fast, &mask, (0, u64::MAX)), wanted(&slow, &mask, (0, u64::MAX)), "{name}");
        }
    }
}

/// Integer and `char[16]` payload fields of the synthesized kernel events, by name.
const FIELDS: [&str; 28] = [
    "buf",
    "child_pid",
    "child_tid",
    "count",
    "dfd",
    "fd",
    "fildes",
    "flags",
    "mode",
    "newfd",
    "next_prio",
    "next_tid",
    "oldfd",
    "parent_pid",
    "parent_tid",
    "pid",
    "pos",
    "prev_prio",
    "prev_state",
    "prev_tid",
    "ret",
    "tid",
    "vlen",
    "vpid",
    "prev_comm",
    "next_comm",
    "child_comm",
    "parent_comm",
];

proptest! {
    #![proptest_config(ProptestConfig { cases: 10, .. ProptestConfig::default() })]
    /// The fields copied out of events read ahead ([`StreamCursor::copied`]) are the
    /// values the event gives once made current (text arrays: their bytes), for any
    /// choice of fields (absent ones read as `u64::MAX`), and every class of fixed size
    /// gets its copies (but in the last [`COPY_WINDOW`] bytes of a file); so are those
    /// of events entered by word loads ([`StreamCursor::copied_current`]).
    #[test]
    fn copied_fields_equal_the_event_fields(seed in 0u64..1000, picks in proptest::collection::vec(proptest::collection::vec(0usize..30, 0..=MAX_COPIES), 64), mask in proptest::collection::vec(any::<bool>(), 64)) {
        let dir = tempfile::tempdir().unwrap();
        let set = synth_trace(dir.path(), seed);
        let plan = &set.traces[0].plan;
        let (mut copied, mut entered) = (0usize, 0usize);
        for s in 0..set.streams.len() {
            let sp = plan.stream(set.streams[s].class_id).expect("stream class");
            // Per class: the picked fields (indexes past the class's own fields: absent).
            let requests: Vec<Option<CopyRequest>> = sp
                .events
                .iter()
                .enumerate()
                .map(|(i, ev)| {
                    let own: Vec<_> = FIELDS.iter().filter_map(|n| plan.event_field(sp, ev, &[n])).collect();
                    let fields = picks[i % picks.len()].iter().map(|&k| own.get(k % (own.len() + 2)).copied()).collect();
                    Some(CopyRequest { label: i as u32 * 7, fields })
                })
                .collect();
            let wanted = Wanted::with_copies(sp, mask.clone(), &requests);
            let mut c = StreamCursor::new(&set, s);
            loop {
                let (mut passed, mut out) = (Passed::default(), AheadBuf::new());
                c.read_ahead(&wanted, 0, (0, u64::MAX), &mut passed, &mut out, 16);
                if out.is_empty() {
                    // Read without reading ahead (skimming or not): where the event was
                    // entered by word loads, its copies are its fields all the same.
                    let skim = seed % 2 == 0;
                    let Some(item) = c.next_wanted(&wanted, 0, (0, u64::MAX), skim, &mut passed).expect("reads") else { break };
                    if matches!(item, Item::Event(_)) {
                        if let Some(got) = c.copied_current(&wanted).map(|v| (v.label(), (0..MAX_COPIES + 1).map(|i| (v.get(i), v.bytes(i).map(<[u8]>::to_vec))).collect::<Vec<_>>())) {
                            let Item::Event(ev) = c.current() else { unreachable!() };
                            let req = requests[ev.class_index()].as_ref().expect("every class has a request");
                            let mut want: Vec<(u64, Option<Vec<u8>>)> =
                                req.fields.iter().map(|h| (h.and_then(|h| ev.uint(h)).unwrap_or(u64::MAX), h.and_then(|h| ev.array_bytes(h)).map(<[u8]>::to_vec))).collect();
                            want.resize(MAX_COPIES + 1, (u64::MAX, None));
                            prop_assert_eq!(got, (req.label, want), "class {}", ev.name());
                            entered += 1;
                        }
                    }
                    continue;
                }
                for e in out.iter() {
                    let class = e.class_index();
                    let got = c.copied(e, &wanted).map(|v| (v.label(), (0..MAX_COPIES + 1).map(|i| (v.get(i), v.bytes(i).map(<[u8]>::to_vec))).collect::<Vec<_>>()));
                    // A text array of a known length reads as its bytes.
                    if let Some(v) = c.copied(e, &wanted) {
                        for i in 0..MAX_COPIES + 1 {
                            prop_assert_eq!(v.array::<16>(i).map(|a| &a[..]), v.bytes(i).filter(|b| b.len() == 16));
                        }
                    }
                    c.enter_ahead(e);
                    let Item::Event(ev) = c.current() else { panic!("an event read ahead is an event") };
                    let req = requests[class].as_ref().expect("every class has a request");
                    let mut want: Vec<(u64, Option<Vec<u8>>)> =
                        req.fields.iter().map(|h| (h.and_then(|h| ev.uint(h)).unwrap_or(u64::MAX), h.and_then(|h| ev.array_bytes(h)).map(<[u8]>::to_vec))).collect();
                    want.resize(MAX_COPIES + 1, (u64::MAX, None));
                    // (Headers are less than 64 bytes.)
                    let p = ev.packet();
                    let at = p.info.offset as usize + (ev.bit_offset() / 8) as usize;
                    let near_end = at + COPY_WINDOW + 64 > set.traces[p.trace as usize].files[p.file as usize].bytes.len();
                    if got.is_none() && near_end {
                        continue;
                    }
                    prop_assert_eq!(got, Some((req.label, want)), "class {}", ev.name());
                    copied += 1;
                }
            }
        }
        prop_assert!(copied > 0);
        prop_assert!(entered > 0);
    }
}

/// Classes with one string among fields of whole bytes get a [`StringSkim`] entry with
/// the bytes around the string; wanted or of fixed size, they keep their other forms.
#[test]
fn string_classes_are_skimmed_by_their_sizes_around_the_nul() {
    let dir = tempfile::tempdir().unwrap();
    let set = synth_trace(dir.path(), 2);
    let sp = &set.traces[0].plan.streams[0];
    let layout = |name: &str| {
        let class = sp.events.iter().position(|e| &*e.name == name).unwrap_or_else(|| panic!("{name} declared"));
        let id = sp.events[class].id as usize;
        let e = sp.skim_by_id[id];
        assert_eq!(e.class(), class as u32, "{name}: the entry names its class");
        e.is_string().then(|| e.string_layout())
    };
    // `irq_handler_entry`: `int32 irq`, then `name`.
    assert_eq!(layout("irq_handler_entry"), Some(StringSkim { prefix: 4, suffix: 0 }));
    // `sched_process_exec`: `filename`, then `int32 tid, old_tid`.
    assert_eq!(layout("sched_process_exec"), Some(StringSkim { prefix: 0, suffix: 8 }));
    // Of fixed size: its size, as `fixed_by_id`.
    assert_eq!(layout("sched_switch"), None);
    let switch = sp.events.iter().find(|e| &*e.name == "sched_switch").map(|e| e.id as usize).unwrap();
    assert_eq!(sp.skim_by_id[switch], sp.fixed_by_id[switch]);
}

/// The events of stream `s` a reader takes, as (class index, timestamp) (notices:
/// `usize::MAX`), turning at each item to the way `turns` gives, in turn: 0 and 1
/// skim ([`StreamCursor::next_wanted`] with `skim`, which reads whole packets in
/// pairs), 2 decodes every event, 3 reads up to 4 events ahead. Returns whether the
/// cursor read packets in pairs.
fn taken_turning(set: &TraceSet, s: usize, mask: &[bool], turns: &[u8]) -> (Vec<(usize, Option<i64>)>, bool) {
    let wanted = Wanted::new(set.traces[0].plan.stream(set.streams[s].class_id).expect("stream class"), mask.to_vec());
    let mut c = StreamCursor::new(set, s);
    let (mut out, mut paired) = (Vec::new(), false);
    for i in 0.. {
        let (mut passed, mut ahead) = (Passed::default(), AheadBuf::new());
        let turn = turns.get(i % turns.len().max(1)).copied().unwrap_or(0);
        if turn == 3 {
            c.read_ahead(&wanted, 0, (0, u64::MAX), &mut passed, &mut ahead, 4);
            if !ahead.is_empty() {
                out.extend(ahead.iter().map(|e| (e.class_index(), Some(e.ts()))));
                continue;
            }
        }
        match c.next_wanted(&wanted, 0, (0, u64::MAX), turn != 2, &mut passed).expect("reads") {
            None => break,
            Some(Item::Event(e)) => out.push((e.class_index(), e.ts())),
            Some(_) => out.push((usize::MAX, None)),
        }
        paired |= c.replaying();
    }
    (out, paired)
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 16, .. ProptestConfig::default() })]
    /// A reader that turns from skimming (packets read in pairs, the events found
    /// delivered one by one) to decoding every event or reading ahead, and back, at any
    /// item, takes the events the general decoder yields, in order, each once.
    #[test]
    fn turning_between_ways_of_reading_loses_and_repeats_nothing(seed in 0u64..1000, mask in proptest::collection::vec(any::<bool>(), 64), turns in proptest::collection::vec(prop_oneof![4 => 0u8..2, 1 => 2u8..4], 0..40)) {
        let dir = tempfile::tempdir().unwrap();
        let fast = synth_trace(dir.path(), seed);
        let slow = TraceSet::open(dir.path()).unwrap().without_compiled_headers();
        let mut paired = false;
        for s in 0..fast.streams.len() {
            let (want, _) = taken_turning(&slow, s, &mask, &[2]);
            let (got, p) = taken_turning(&fast, s, &mask, &turns);
            prop_assert_eq!(got, want, "stream {}", s);
            paired |= p;
        }
        // (Skimming only: whole packets are read in pairs.)
        prop_assert!(paired || !turns.iter().all(|&t| t < 2) || mask.iter().all(|&m| m), "no pair read");
    }
}

/// `set` with the flat decoding of scopes turned off: every scope the interpreter
/// decodes walks its tree.
fn tree_decoded(mut set: TraceSet) -> TraceSet {
    for t in &mut set.traces {
        for sp in &mut t.plan.streams {
            for ev in &mut sp.events {
                ev.flat = Default::default();
            }
        }
    }
    set
}

/// Scopes decoded by their flat steps (`EventPlan::flat`: events of variable size, such
/// as `openat` and its path) read as the tree walk reads them: every top-level field of
/// the specific context and the payload of every event of every shared trace (the
/// invalid ones too) has the same integer value and the same bytes, and both ways
/// fail at the same item with the same error.
#[test]
fn flat_decoding_equals_the_tree_decoder_on_shared_traces() {
    let Some(dirs) = common::shared_trace_dirs() else { return };
    let mut flat_events = 0;
    for dir in dirs {
        let (Ok(flat), Ok(tree)) = (TraceSet::open(&dir), TraceSet::open(&dir)) else { continue };
        let tree = tree_decoded(tree);
        for s in 0..flat.streams.len() {
            let n = flat.streams[s].packets.len();
            let (mut a, mut b) = (StreamCursor::with_packets(&flat, s, 0..n), StreamCursor::with_packets(&tree, s, 0..n));
            loop {
                let (x, y) = (a.next(), b.next());
                let (x, y) = match (x, y) {
                    (Ok(Some(x)), Ok(Some(y))) => (x, y),
                    (Ok(None), Ok(None)) => break,
                    (Err(e), Err(f)) => {
                        assert_eq!(e.to_string(), f.to_string(), "{}", dir.display());
                        break;
                    }
                    (x, y) => panic!("{}: {:?} against {:?}", dir.display(), x.map(|i| i.is_some()), y.map(|i| i.is_some())),
                };
                let (Item::Event(x), Item::Event(y)) = (x, y) else { continue };
                let plan = x.plan();
                let (sp, ev) = (x.stream_plan(), &x.stream_plan().events[x.class_index()]);
                flat_events += usize::from(ev.flat.iter().any(Option::is_some));
                for root in [ev.context, ev.payload].into_iter().flatten() {
                    let ctf::plan::Node::Struct { first, count, .. } = *plan.node(root) else { continue };
                    for m in plan.struct_members(first, count) {
                        let Some(h) = plan.event_field(sp, ev, &[&m.name]) else { continue };
                        assert_eq!((x.uint(h), x.bytes(h)), (y.uint(h), y.bytes(h)), "{}: {} of {}", dir.display(), m.name, ev.name);
                    }
                }
            }
        }
    }
    // (The kernel traces' `openat`, `execve`, statedump and `irq_handler_entry` events.)
    assert!(flat_events > 1000, "{flat_events} events decoded flat");
}

/// A skimming table's entry gives back what it was made of: a fixed entry its class and
/// size, a string entry its class and layout, a taken one stops the loop with its class
/// and size kept, and out-of-range classes or suffixes make no entry.
#[test]
fn skim_entries_keep_their_class_and_size() {
    use ctf::plan::SkimEntry;
    let f = SkimEntry::fixed(7, 24).expect("fits");
    assert_eq!((f.class(), f.bytes(), f.stops(), f.is_string(), f.is_stop()), (7, 24, false, false, false));
    let t = f.taken();
    assert_eq!((t.class(), t.bytes(), t.stops(), t.is_stop()), (7, 24, true, false));
    let layout = StringSkim { prefix: 4, suffix: 0x7fff };
    let s = SkimEntry::string((1 << 31) - 1, layout).expect("fits");
    assert_eq!((s.class(), s.is_string(), s.string_layout(), s.stops()), ((1 << 31) - 1, true, layout, false));
    assert!(SkimEntry::STOP.stops() && SkimEntry::STOP.is_stop());
    assert_eq!(SkimEntry::fixed(1 << 31, 8), None);
    assert_eq!(SkimEntry::fixed(0, 1 << 31), None);
    assert_eq!(SkimEntry::string(0, StringSkim { prefix: 0, suffix: 0x8000 }), None);
}
