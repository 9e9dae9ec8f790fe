//! CPU time rolled up to process names does not depend on the frame size (issue 48
//! item 6): a rename or exec credits the thread's CPU time so far to its old name
//! first, so frame boundaries (which credit running threads) move nothing between
//! names.

use crate::common;

use std::collections::BTreeMap;

use cube::{Cube, CubeConfig, LevelSpec, Request, When};
use cube_feed::{build_from_set, BuildOptions};

fn by_name(c: &Cube) -> BTreeMap<String, i64> {
    let mut r = Request::new("cpu_time", When::At(u64::MAX));
    r.by = vec!["process:name".into()];
    c.query(&r).unwrap().windows[0].rows.iter().map(|r| (r.group[0].clone(), r.value as i64)).collect()
}

fn build(set: &ctf::trace::TraceSet, g: u64) -> Cube {
    let config = CubeConfig { levels: vec![LevelSpec { granularity_ns: g, span_ns: g * 100_000_000 }], ..CubeConfig::default() };
    build_from_set(set, &BuildOptions { config, threads: 1, ..Default::default() }).unwrap().0
}

#[test]
fn process_names_do_not_depend_on_the_frame_size() {
    let dir = tempfile::tempdir().unwrap();
    let cfg = synth::SynthConfig { cpus: 3, events: 40_000, seed: 5, packet_size: 4096, ..Default::default() };
    let s = synth::generate(&cfg, dir.path()).unwrap();
    let mut sets = vec![ctf::trace::TraceSet::open(&s.trace_dir).unwrap()];
    if let Some(many) = testkit::shared_trace("process_names_do_not_depend_on_the_frame_size", "many-threads") {
        sets.push(ctf::trace::TraceSet::open(&many).unwrap());
    }
    for set in &sets {
        let coarse = by_name(&build(set, 1_000_000_000));
        assert!(!coarse.is_empty());
        for g in [1_000, 1_000_000] {
            assert_eq!(by_name(&build(set, g)), coarse, "{g} ns frames vs 1 s frames");
        }
    }
}

/// Machine is the trace's host (`env.hostname`), one member per host when several
/// traces are built into one cube, and every built-in metric has it.
#[test]
fn machine_is_the_host_of_each_trace() {
    let dir = tempfile::tempdir().unwrap();
    let mut events = 0;
    for (sub, seed) in [("a", 1), ("b", 2)] {
        let cfg = synth::SynthConfig { cpus: 2, events: 5_000, seed, packet_size: 4096, ..Default::default() };
        let s = synth::generate(&cfg, &dir.path().join(sub)).unwrap();
        events += s.events;
        if sub == "b" {
            let meta = s.trace_dir.join("metadata");
            // Same length: packetized metadata keeps its packet sizes.
            let mut bytes = std::fs::read(&meta).unwrap();
            let (from, to) = (b"hostname = \"synth\"", b"hostname = \"other\"");
            let at = bytes.windows(from.len()).position(|w| w == from).expect("the synth host in the metadata");
            bytes[at..at + from.len()].copy_from_slice(to);
            std::fs::write(&meta, bytes).unwrap();
        }
    }
    let set = ctf::trace::TraceSet::open(dir.path()).unwrap();
    assert_eq!(set.traces.len(), 2);
    let c = build_from_set(&set, &BuildOptions { config: common::config(), ..Default::default() }).unwrap().0;
    for metric in ["events", "cpu_time", "bytes_read", "bytes_written"] {
        let mut r = Request::new(metric, When::At(u64::MAX));
        r.by = vec!["machine".into()];
        let hosts: Vec<String> = c.query(&r).unwrap().windows[0].rows.iter().map(|r| r.group[0].clone()).collect();
        assert!(hosts.iter().all(|h| h == "synth" || h == "other"), "{metric}: {hosts:?}");
        if metric != "bytes_read" && metric != "bytes_written" {
            let mut sorted = hosts.clone();
            sorted.sort();
            assert_eq!(sorted, ["other", "synth"], "{metric}");
        }
    }
    let mut r = Request::new("events", When::At(u64::MAX));
    r.by = vec!["machine".into()];
    let total: f64 = c.query(&r).unwrap().windows[0].rows.iter().map(|r| r.value).sum();
    assert_eq!(total as u64, events);
}
