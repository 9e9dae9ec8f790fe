//! The parallel build gives the serial build's cube for every thread count,
//! chunk size and partition scheme (compared through query answers, which name
//! members by label: cell numbering may differ with the chunking).

use crate::common;

use std::sync::OnceLock;

use cube::{Cube, Request, Response, When};
use cube_feed::{build_from_set, BuildOptions};
use engine::Partition;
use proptest::prelude::*;

use common::{config, MS};

struct Fixture {
    _dir: tempfile::TempDir,
    set: ctf::trace::TraceSet,
    serial: Vec<Response>,
}

fn answers(c: &Cube) -> Vec<Response> {
    let (first, last) = c.span().expect("the cube has data");
    let whole = When::Range(0, last + MS);
    let mut out = Vec::new();
    for (metric, by) in [
        ("events", "operation:name"),
        ("events", "cpu:cpu"),
        ("cpu_time", "process:tid"),
        ("cpu_time", "cpu:cpu"),
        ("bytes_read", "process:tid"),
        ("bytes_written", "file:path"),
        ("bytes_read.count", "process:name"),
        ("bytes_written.max", "process:pid"),
    ] {
        let mut r = Request::new(metric, whole);
        r.by = vec![by.into()];
        out.push(c.query(&r).expect("query"));
        let mut w = Request::new(metric, When::Range(first / MS * MS, last + MS));
        w.by = vec![by.into()];
        w.every = Some(7 * MS);
        out.push(c.query(&w).expect("windowed query"));
    }
    out
}

fn fixture() -> &'static Fixture {
    static F: OnceLock<Fixture> = OnceLock::new();
    F.get_or_init(|| {
        let dir = tempfile::tempdir().unwrap();
        let cfg = synth::SynthConfig { cpus: 3, events: 30_000, seed: 21, packet_size: 4096, ..Default::default() };
        let s = synth::generate(&cfg, dir.path()).unwrap();
        let set = ctf::trace::TraceSet::open(&s.trace_dir).unwrap();
        let (c, rep) = build_from_set(&set, &BuildOptions { config: config(), threads: 1, chunk_size: u64::MAX, ..Default::default() }).unwrap();
        assert!(rep.events >= 30_000, "{rep:?}");
        let serial = answers(&c);
        Fixture { _dir: dir, set, serial }
    })
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 24, ..ProptestConfig::default() })]

    #[test]
    fn any_chunking_gives_the_serial_cube(threads in prop::sample::select(vec![1usize, 2, 3, 8]), chunk in 1u64..200_000, scheme in 0..3u8) {
        let f = fixture();
        let partition = [Partition::Hybrid, Partition::Time, Partition::Stream][scheme as usize];
        let (c, rep) = build_from_set(&f.set, &BuildOptions { config: config(), threads, chunk_size: chunk, partition, spill: None }).unwrap();
        prop_assert!(rep.events >= 30_000);
        let got = answers(&c);
        for (a, b) in got.iter().zip(&f.serial) {
            prop_assert_eq!(a, b, "threads {} chunk {} {:?}", threads, chunk, partition);
        }
    }
}

#[test]
fn slice_logs_concatenate() {
    // merge(log, log) is concatenation: applying [a ++ b] equals applying a then b.
    let f = fixture();
    let opts = BuildOptions { config: config(), threads: 2, chunk_size: 8192, ..Default::default() };
    let (c, _) = build_from_set(&f.set, &opts).unwrap();
    assert_eq!(answers(&c), f.serial);
    let slices = engine::partition(&f.set, Partition::Hybrid, 8192);
    assert!(slices.len() > 4, "several slices: {}", slices.len());
    let b = cube_feed::CubeBuild::new(&f.set, config()).unwrap();
    use engine::{Analysis, ChunkPolicy};
    let logs: Vec<_> = slices.iter().map(|s| engine::exec::process_slice(&b, &f.set, s, (i64::MIN, i64::MAX)).unwrap()).collect();
    let mut it = logs.into_iter();
    let first = it.next().unwrap();
    let joined = it.fold(first, |a, l| b.merge(a, l));
    let acc = b.merge(b.initial_state(), joined);
    let (_, c2) = b.finish(acc).unwrap();
    assert_eq!(answers(&c2), f.serial);
}

#[test]
fn real_kernel_traces_any_chunking() {
    let Some(traces) = common::shared_kernel_traces("real_kernel_traces_any_chunking") else { return };
    for t in traces {
        let set = ctf::trace::TraceSet::open(&t).unwrap();
        let (c, _) = build_from_set(&set, &BuildOptions { config: config(), threads: 1, chunk_size: u64::MAX, ..Default::default() }).unwrap();
        let serial = answers(&c);
        for (threads, chunk, partition) in [(2, 1, Partition::Hybrid), (3, 20_000, Partition::Time), (2, 50_000, Partition::Stream)] {
            let (c, _) = build_from_set(&set, &BuildOptions { config: config(), threads, chunk_size: chunk, partition, spill: None }).unwrap();
            assert_eq!(answers(&c), serial, "{}: threads {threads} chunk {chunk} {partition:?}", t.display());
        }
    }
}

#[test]
fn event_at_a_time_feed_gives_the_built_cube() {
    // The live path: events in merged order, applied in batches flushed at odd times.
    let f = fixture();
    let mut c = Cube::new(config()).unwrap();
    let mut feed = cube_feed::KernelFeed::new(&f.set, &mut c);
    let mut m = ctf::merge::Merger::new(&f.set);
    let mut n = 0u64;
    while let Some(x) = m.next().unwrap() {
        if let ctf::stream::Item::Event(ev) = x.item {
            feed.on_event(&mut c, &ev, x.stream).unwrap();
            n += 1;
            if n.is_multiple_of(97) {
                feed.flush(&mut c).unwrap();
            }
        }
    }
    feed.finish(&mut c).unwrap();
    assert_eq!(feed.events(), n);
    assert_eq!(answers(&c), f.serial);
}
