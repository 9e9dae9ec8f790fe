//! Reading a stream as any sequence of packet chunks gives exactly what reading it
//! whole gives (the property parallel analysis relies on), and hostile bytes never
//! panic the decoder.

use crate::common;

use std::path::Path;

use common::{items, shared_trace_dirs};
use ctf::stream::{CountError, Item, Passed, StreamCursor, Wanted};
use ctf::trace::TraceSet;
use proptest::prelude::*;

fn synth_trace(dir: &Path, seed: u64) -> TraceSet {
    let cfg = synth::SynthConfig { cpus: 2, events: 20_000, seed, packet_size: 4096, ..Default::default() };
    synth::generate(&cfg, dir).expect("synthesize");
    TraceSet::open(dir).expect("open")
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 12, .. ProptestConfig::default() })]
    #[test]
    fn any_chunking_equals_whole_stream(seed in 0u64..1000, cuts in proptest::collection::vec(0.0f64..1.0, 0..6)) {
        let dir = tempfile::tempdir().unwrap();
        let set = synth_trace(dir.path(), seed);
        for s in 0..set.streams.len() {
            let n = set.streams[s].packets.len();
            prop_assert!(n > 3, "the trace should have several packets per stream");
            let whole = items(&set, s, 0..n);
            let mut bounds: Vec<usize> = cuts.iter().map(|c| (c * n as f64) as usize).collect();
            bounds.push(0);
            bounds.push(n);
            bounds.sort_unstable();
            bounds.dedup();
            let mut chunked = Vec::new();
            for w in bounds.windows(2) {
                chunked.extend(items(&set, s, w[0]..w[1]));
            }
            prop_assert_eq!(whole, chunked);
        }
    }

    #[test]
    fn corrupted_streams_never_panic(seed in 0u64..50, flips in proptest::collection::vec((0usize..1 << 16, any::<u8>()), 1..40)) {
        let dir = tempfile::tempdir().unwrap();
        let cfg = synth::SynthConfig { cpus: 1, events: 2_000, seed, packet_size: 4096, ..Default::default() };
        synth::generate(&cfg, dir.path()).unwrap();
        let stream = dir.path().join("kernel/channel0_0");
        let mut bytes = std::fs::read(&stream).unwrap();
        for (pos, v) in &flips {
            let len = bytes.len();
            bytes[pos % len] ^= v;
        }
        std::fs::write(&stream, &bytes).unwrap();
        std::fs::remove_dir_all(dir.path().join("kernel/index")).unwrap();
        if let Ok(set) = TraceSet::open(dir.path()) {
            let mut m = ctf::merge::Merger::new(&set);
            let mut n = 0;
            while let Ok(Some(mut item)) = m.next() {
                let mut json = Vec::new();
                let _ = ctf::dump::write_json(&mut json, &mut item.item);
                n += 1;
                prop_assert!(n < 10_000_000);
            }
        }
    }

    #[test]
    fn arbitrary_metadata_never_panics(text in "[a-z_{}\\[\\]<>;:=.,0-9 \"\n-]{0,400}") {
        let _ = ctf::metadata::parse_metadata(text.as_bytes(), Path::new("fuzz"));
        let with_header = format!("/* CTF 1.8 */ typealias integer {{ size = 8; }} := u8; trace {{ major = 1; minor = 8; byte_order = le; }}; {text}");
        if let Ok((tc, _)) = ctf::metadata::parse_metadata(with_header.as_bytes(), Path::new("fuzz")) {
            let _ = ctf::plan::Plan::compile(&tc);
        }
    }
}

#[test]
fn truncated_metadata_packets_are_errors() {
    let dir = tempfile::tempdir().unwrap();
    synth_trace(dir.path(), 1);
    let meta = std::fs::read(dir.path().join("kernel/metadata")).unwrap();
    // Metadata packets are 4096 bytes: cut inside headers and inside the last packet's content.
    for cut in [10, 37, 100, meta.len() - 4096 + 40] {
        let r = ctf::metadata::parse_metadata(&meta[..cut], Path::new("m"));
        assert!(r.is_err(), "cut at {cut} should fail");
    }
    assert!(ctf::metadata::parse_metadata(&meta, Path::new("m")).is_ok());
}

#[test]
fn count_packet_agrees_with_items() {
    let dir = tempfile::tempdir().unwrap();
    let set = synth_trace(dir.path(), 3);
    for s in 0..set.streams.len() {
        let mut a = StreamCursor::new(&set, s);
        let n = a.stream_plan().events.len();
        let (mut per_a, mut per_b) = (vec![0u64; n], vec![0u64; n]);
        let (mut events, mut packets) = (0, 0);
        while let Some(pc) = a.count_packet(&mut per_a).unwrap() {
            events += pc.events;
            packets += 1;
            assert!(pc.first_cycles <= pc.last_cycles);
        }
        assert_eq!(packets, set.streams[s].packets.len());
        let mut b = StreamCursor::new(&set, s);
        while let Some(item) = b.next().unwrap() {
            if let Item::Event(e) = item {
                per_b[e.class_index()] += 1;
            }
        }
        assert_eq!(per_a, per_b);
        assert_eq!(events, per_b.iter().sum::<u64>());
    }
}

/// Per stream of `set`: per-class counts and whether an error ended the stream, by
/// counting packets (skimming events: header and sizes) and by decoding every item.
/// Per-class counts of one stream and whether its reading failed.
type StreamCounts = (Vec<u64>, bool);

fn counts_both_ways(set: &TraceSet) -> Vec<(StreamCounts, StreamCounts)> {
    (0..set.streams.len())
        .map(|s| {
            let n = StreamCursor::new(set, s).stream_plan().events.len();
            let mut a = StreamCursor::new(set, s);
            let mut per_a = vec![0u64; n];
            let failed_a = loop {
                match a.count_packet(&mut per_a) {
                    Ok(Some(_)) => {}
                    Ok(None) => break false,
                    Err(_) => break true,
                }
            };
            let mut b = StreamCursor::new(set, s);
            let mut per_b = vec![0u64; n];
            let failed_b = loop {
                match b.next() {
                    Ok(Some(Item::Event(e))) => per_b[e.class_index()] += 1,
                    Ok(Some(_)) => {}
                    Ok(None) => break false,
                    Err(_) => break true,
                }
            };
            ((per_a, failed_a), (per_b, failed_b))
        })
        .collect()
}

/// Skimming (one-load headers of both forms, strings passed over by size) counts what
/// full decoding yields on every real trace, and fails where it fails (a packet's
/// events are counted only when the whole packet decodes).
#[test]
fn skimming_counts_what_decoding_yields_on_shared_traces() {
    let Some(dirs) = shared_trace_dirs() else { return };
    let mut checked = 0;
    for dir in dirs {
        let Ok(set) = TraceSet::open(&dir) else { continue };
        for (s, ((per_a, failed_a), (per_b, failed_b))) in counts_both_ways(&set).into_iter().enumerate() {
            assert_eq!(failed_a, failed_b, "{} stream {s}: error in one way only", dir.display());
            if !failed_a {
                assert_eq!(per_a, per_b, "{} stream {s}", dir.display());
            }
        }
        checked += 1;
    }
    assert!(checked > 10, "only {checked} traces opened");
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 12, .. ProptestConfig::default() })]
    /// The packet index lets a reader of a time range skip what lies outside it, exactly:
    /// the packets [`StreamCursor::first_needed`] passes over hold only items before the
    /// range's beginning (and on a well-formed trace it passes over all but at most one
    /// of the packets that start before it); once a cursor has read past the range's
    /// end, [`StreamCursor::rest_after`] says so (on a well-formed trace, always) and
    /// every item left then lies past the end.
    #[test]
    fn range_bounds_skip_only_what_lies_outside(seed in 0u64..1000, f in 0.0f64..1.0) {
        let dir = tempfile::tempdir().unwrap();
        let set = synth_trace(dir.path(), seed);
        for s in 0..set.streams.len() {
            let n = set.streams[s].packets.len();
            let whole = items(&set, s, 0..n);
            let (t0, t1) = (whole.first().and_then(|i| i.1).unwrap(), whole.last().and_then(|i| i.1).unwrap());
            let ns = t0 + ((t1 - t0) as f64 * f) as i64;
            let j = StreamCursor::first_needed(&set, s, 0..n, ns);
            prop_assert!(items(&set, s, 0..j).iter().all(|i| i.1.unwrap() < ns), "packets before {} hold an item at or after {}", j, ns);
            let starting_before = (0..n).filter(|&k| items(&set, s, k..k + 1).first().is_some_and(|i| i.1.unwrap() < ns)).count();
            prop_assert!(j + 2 >= starting_before, "only {} of {} packets starting before the range skipped", j, starting_before);
            let mut c = StreamCursor::with_packets(&set, s, 0..n);
            let mut read = 0;
            while let Some(item) = c.next().unwrap() {
                read += 1;
                if let Item::Event(e) = item {
                    if e.ts().unwrap() > ns {
                        break;
                    }
                }
            }
            if read < whole.len() || whole.last().unwrap().1.unwrap() > ns {
                prop_assert!(c.rest_after(ns), "past {} at item {} of {}", ns, read, whole.len());
                prop_assert!(whole[read..].iter().all(|i| i.1.unwrap() > ns));
            }
        }
    }
}

/// A stream whose indexing met an error keeps it reported at its end: a reader past the
/// time it wants is not told that it may stop there (`bt-invalid-packet-size`: its one
/// packet claims more bytes than the file holds), so a time range ending at its first
/// event still ends on that error.
#[test]
fn a_stream_error_is_not_passed_over_by_a_range() {
    let Some(dir) = testkit::shared_trace("bt-invalid-packet-size", "invalid/bt-invalid-packet-size") else { return };
    let set = TraceSet::open(&dir).expect("the index holds the good part");
    let s = (0..set.streams.len()).find(|&s| set.stream_error(&set.streams[s]).is_some()).expect("a stream with an error");
    let mut c = StreamCursor::new(&set, s);
    let first = loop {
        match c.next().expect("the first events decode") {
            Some(Item::Event(e)) => break e.ts().unwrap(),
            Some(_) => {}
            None => panic!("no event"),
        }
    };
    assert!(matches!(c.next(), Ok(Some(Item::Event(e))) if e.ts().unwrap() > first), "a second event, past the first");
    assert!(!c.rest_after(first), "the stream's error is still to be reported");
    let mut end = Ok(None);
    for _ in 0..1000 {
        end = c.next().map(|i| i.map(|_| ()));
        if !matches!(end, Ok(Some(()))) {
            break;
        }
    }
    assert!(end.is_err(), "the stream ends on its error");
}

/// What counting a stream packet by packet gives: per-class counts, each packet's count
/// (events, first and last clock values, discarded events, lost packets; last, what
/// was counted of the packet that met an error), and the error that ended it, if any.
type PacketCounts = (Vec<u64>, Vec<(u64, Option<u64>, Option<u64>, u64, u64)>, Option<String>);

/// Counts stream `s` of `set` inside `window` with [`StreamCursor::count_packet_in`],
/// and with `pairs` two packets at once by [`StreamCursor::count_pair`] wherever it
/// applies.
fn count_by_packets(set: &TraceSet, s: usize, window: (u64, u64), pairs: bool) -> PacketCounts {
    let mut c = StreamCursor::new(set, s);
    let mut twin = c.twin();
    let mut per = vec![0u64; c.stream_plan().events.len()];
    let mut out = Vec::new();
    let row = |pc: &ctf::stream::PacketCount| (pc.events, pc.first_cycles, pc.last_cycles, pc.discarded, pc.lost);
    let failed = |e: CountError, out: &mut Vec<_>| {
        out.extend(e.before.as_deref().map(row));
        Some(e.to_string())
    };
    let err = loop {
        if pairs {
            match c.count_pair(&mut twin, &mut per, window) {
                Ok(Some((first, second))) => {
                    out.push(row(&first));
                    match second {
                        Ok(second) => out.push(row(&second)),
                        Err(e) => break failed(e, &mut out),
                    }
                    continue;
                }
                Ok(None) => {}
                Err(e) => break failed(e, &mut out),
            }
        }
        match c.count_packet_in(&mut per, window) {
            Ok(Some(pc)) => out.push(row(&pc)),
            Ok(None) => break None,
            Err(e) => break failed(e, &mut out),
        }
    };
    (per, out, err)
}

/// Counting two packets at once gives what counting them in turn gives, packet by
/// packet, on every real trace (those whose packets fail too, with the same error),
/// and so does [`StreamCursor::count`], which counts in pairs.
#[test]
fn counting_in_pairs_equals_counting_in_turn_on_shared_traces() {
    let Some(dirs) = shared_trace_dirs() else { return };
    let (mut checked, mut paired) = (0, 0);
    for dir in dirs {
        let Ok(set) = TraceSet::open(&dir) else { continue };
        for s in 0..set.streams.len() {
            let in_turn = count_by_packets(&set, s, (0, u64::MAX), false);
            let in_pairs = count_by_packets(&set, s, (0, u64::MAX), true);
            assert_eq!(in_pairs, in_turn, "{} stream {s}", dir.display());
            let mut c = StreamCursor::new(&set, s);
            let mut per = vec![0u64; c.stream_plan().events.len()];
            match c.count(&mut per) {
                Ok((discarded, lost)) => {
                    assert_eq!(in_turn.2, None, "{} stream {s}", dir.display());
                    assert_eq!(per, in_turn.0, "{} stream {s}", dir.display());
                    assert_eq!(discarded, in_turn.1.iter().map(|r| r.3).sum::<u64>(), "{} stream {s}", dir.display());
                    assert_eq!(lost, in_turn.1.iter().map(|r| r.4).sum::<u64>(), "{} stream {s}", dir.display());
                }
                Err(e) => assert_eq!(Some(e.to_string()), in_turn.2, "{} stream {s}", dir.display()),
            }
            let mut c = StreamCursor::new(&set, s);
            let mut twin = c.twin();
            paired += usize::from(matches!(c.count_pair(&mut twin, &mut per, (0, u64::MAX)), Ok(Some(_))));
        }
        checked += 1;
    }
    assert!(checked > 10, "only {checked} traces opened");
    assert!(paired > 10, "only {paired} streams counted in pairs");
}

/// A packet damaged in its middle (48 bytes of ones: an extended header naming no
/// event class), counted in a pair as its first or its second packet: counting in
/// pairs gives what counting in turn gives (each packet's count, what was counted of
/// the damaged one, and the per-class counts), and the per-class counts are those of
/// the events the general decoder reads before the error. (Counting in pairs had
/// counted the second packet's events, passed over side by side with the first's,
/// past an error in the first.)
#[test]
fn a_damaged_packet_counts_the_same_in_pairs_and_in_turn() {
    for j in [2, 3, 4, 5] {
        let dir = tempfile::tempdir().unwrap();
        let set = synth_trace(dir.path(), 7);
        let p = set.streams[0].packets[j];
        assert!(set.streams[0].packets.len() > 8);
        let path = set.packet_file(&p).1.path.clone();
        let at = (p.info.offset + p.info.content_bits / 16) as usize;
        drop(set);
        let mut bytes = std::fs::read(&path).unwrap();
        bytes[at..at + 48].fill(0xff);
        std::fs::write(&path, bytes).unwrap();
        let set = TraceSet::open(dir.path()).unwrap();
        let in_turn = count_by_packets(&set, 0, (0, u64::MAX), false);
        let in_pairs = count_by_packets(&set, 0, (0, u64::MAX), true);
        assert_eq!(in_pairs, in_turn, "packet {j}");
        let e = in_turn.2.clone().expect("an error");
        assert_eq!(in_turn.1.len(), j + 1, "packet {j}: the packets before it, and what was counted of it: {e}");
        let general = ctf::crosscheck::read_general(&TraceSet::open(dir.path()).unwrap().without_compiled_headers(), 0, u64::MAX);
        let mut per = vec![0u64; in_turn.0.len()];
        for item in &general.items {
            if let ctf::crosscheck::Seen::Event(class, ..) = item {
                per[*class] += 1;
            }
        }
        assert_eq!((in_turn.0, Some(e)), (per, general.error), "packet {j}");
    }
}

/// What skimming stream `s` of `set` yields with the classes of `mask` wanted: each
/// item as (class index or `usize::MAX` for a notice, clock value, what was passed over
/// before it), and the error that ended it, if any; with `pairs`, whole packets read in
/// pairs ([`StreamCursor::read_in_pairs`]). Also returns whether a pair was read.
fn skimmed(set: &TraceSet, s: usize, mask: &[bool], pairs: bool) -> (Vec<(usize, u64, Passed)>, Option<String>, bool) {
    let mut c = StreamCursor::new(set, s);
    c.read_in_pairs(pairs);
    let wanted = Wanted::new(c.stream_plan(), mask.to_vec());
    let trace = c.trace_index();
    let (mut out, mut paired) = (Vec::new(), false);
    let err = loop {
        let mut passed = Passed::default();
        match c.next_wanted(&wanted, trace, (0, u64::MAX), true, &mut passed) {
            Ok(None) => break None,
            Ok(Some(Item::Event(e))) => out.push((e.class_index(), e.cycles(), passed)),
            Ok(Some(_)) => out.push((usize::MAX, 0, passed)),
            Err(e) => break Some(e.to_string()),
        }
        paired |= c.replaying();
    };
    (out, err, paired)
}

/// Skimming whole packets in pairs (their wanted events found side by side, then
/// delivered) yields what skimming them in turn yields, item by item with the same
/// events passed over, on every real trace (those whose packets fail too, with the
/// same error after the same items), for sparse and dense choices of classes.
#[test]
fn skimming_in_pairs_equals_skimming_in_turn_on_shared_traces() {
    let Some(dirs) = shared_trace_dirs() else { return };
    let (mut checked, mut paired) = (0, 0);
    for dir in dirs {
        let Ok(set) = TraceSet::open(&dir) else { continue };
        for s in 0..set.streams.len() {
            for m in [2, 5, 40] {
                let mask: Vec<bool> = (0..4096).map(|i| i % m == 1).collect();
                let in_turn = skimmed(&set, s, &mask, false);
                let in_pairs = skimmed(&set, s, &mask, true);
                assert!(!in_turn.2, "pairs read where they are off");
                assert_eq!((&in_pairs.0, &in_pairs.1), (&in_turn.0, &in_turn.1), "{} stream {s}, every {m}th class", dir.display());
                paired += usize::from(in_pairs.2);
            }
        }
        checked += 1;
    }
    assert!(checked > 10, "only {checked} traces opened");
    assert!(paired > 10, "only {paired} streams skimmed in pairs");
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 24, .. ProptestConfig::default() })]
    /// On synthesized traces of small packets, with either LTTng header and with or
    /// without background events (some with a string), counting in pairs equals
    /// counting in turn for any window of clock values (packets the window cuts are
    /// counted one by one, the others in pairs where two follow each other).
    #[test]
    fn counting_in_pairs_equals_counting_in_turn_in_any_window(seed in 0u64..1000, large in any::<bool>(), background in prop_oneof![Just(0u8), Just(60)], lo in 0.0f64..1.0, len in 0.0f64..1.2) {
        let dir = tempfile::tempdir().unwrap();
        let header = if large { synth::EventHeaderKind::Large } else { synth::EventHeaderKind::Compact };
        let cfg = synth::SynthConfig { cpus: 2, events: 20_000, seed, packet_size: 4096, header, background, ..Default::default() };
        synth::generate(&cfg, dir.path()).expect("synthesize");
        let set = TraceSet::open(dir.path()).expect("open");
        for s in 0..set.streams.len() {
            let pk = &set.streams[s].packets;
            let (first, last) = (pk[0].info.ts_begin.unwrap(), pk[pk.len() - 1].info.ts_end.unwrap());
            let span = (last - first) as f64;
            let w0 = first + (span * lo) as u64;
            let window = (w0, w0.saturating_add((span * len) as u64));
            for w in [window, (0, u64::MAX)] {
                prop_assert_eq!(count_by_packets(&set, s, w, true), count_by_packets(&set, s, w, false));
            }
        }
    }
}
