//! The same synthesized trace written with CTF 1.8 (packetized TSDL) and CTF 2 (JSON)
//! metadata: identical data streams, and the `ctf` reader decodes both to the same
//! canonical dump, the same `info`-level facts, the same payload field classes and the
//! same analysis reports.

use std::path::Path;

use ctf::ir::{EnvValue, MetadataFormat};
use ctf::stream::{Item, StreamCursor};
use ctf::trace::TraceSet;
use synth::{MetadataKind, SynthConfig};

fn canonical_dump(set: &TraceSet) -> Vec<u8> {
    let mut out = Vec::new();
    let mut merger = ctf::merge::Merger::new(set);
    while let Some(mut m) = merger.next().unwrap() {
        ctf::dump::write_json(&mut out, &mut m.item).unwrap();
    }
    out
}

/// Per stream: (class, instance, events, discarded, lost packets, first ts, last ts).
type StreamFacts = (u64, Option<u64>, u64, u64, u64, Option<i64>, Option<i64>);

fn info_facts(set: &TraceSet) -> Vec<StreamFacts> {
    (0..set.streams.len())
        .map(|i| {
            let s = &set.streams[i];
            let mut f: StreamFacts = (s.class_id, s.instance, 0, 0, 0, None, None);
            let mut c = StreamCursor::new(set, i);
            while let Some(item) = c.next().unwrap() {
                match item {
                    Item::Event(e) => {
                        f.2 += 1;
                        if let Some(ts) = e.ts() {
                            f.5.get_or_insert(ts);
                            f.6 = Some(ts);
                        }
                    }
                    Item::Discarded(n) => f.3 += n.count,
                    Item::LostPackets(n) => f.4 += n.count,
                }
            }
            f
        })
        .collect()
}

fn files(dir: &Path) -> Vec<(String, Vec<u8>)> {
    let mut out = Vec::new();
    for sub in ["", "index"] {
        for e in std::fs::read_dir(dir.join(sub)).unwrap() {
            let p = e.unwrap().path();
            if p.is_file() && p.file_name().unwrap() != "metadata" {
                out.push((format!("{sub}/{}", p.file_name().unwrap().to_string_lossy()), std::fs::read(&p).unwrap()));
            }
        }
    }
    out.sort();
    out
}

fn sorted_env(env: &[(String, EnvValue)]) -> Vec<String> {
    let mut v: Vec<String> = env.iter().map(|(k, v)| format!("{k}={v:?}")).collect();
    v.sort();
    v
}

#[test]
fn ctf18_and_ctf2_metadata_decode_identically() {
    let base = SynthConfig { cpus: 3, events: 30_000, seed: 77, packet_size: 16 * 1024, ..Default::default() };
    let d18 = tempfile::tempdir().unwrap();
    let d2 = tempfile::tempdir().unwrap();
    let s18 = synth::generate(&SynthConfig { metadata: MetadataKind::Ctf18, ..base.clone() }, d18.path()).unwrap();
    let s2 = synth::generate(&SynthConfig { metadata: MetadataKind::Ctf2, ..base }, d2.path()).unwrap();
    assert_eq!((s18.events, s18.packets, s18.bytes), (s2.events, s2.packets, s2.bytes));

    // Same data streams and indexes, byte for byte; only the metadata differs.
    let (f18, f2) = (files(&s18.trace_dir), files(&s2.trace_dir));
    assert!(f18.len() >= 6);
    assert!(f18 == f2, "data stream or index files differ");
    let m2 = std::fs::read(s2.trace_dir.join("metadata")).unwrap();
    assert_eq!(m2[0], 0x1E, "CTF 2 metadata starts with a record separator");

    let set18 = TraceSet::open(&s18.trace_dir).unwrap();
    let set2 = TraceSet::open(&s2.trace_dir).unwrap();
    assert_eq!(set18.traces[0].format, MetadataFormat::TsdlPacketized);
    assert_eq!(set2.traces[0].format, MetadataFormat::Ctf2Json);

    // Metadata facts.
    let (c18, c2) = (&set18.traces[0].class, &set2.traces[0].class);
    assert_eq!(c18.uuid, c2.uuid);
    assert_eq!(c18.byte_order, c2.byte_order);
    assert_eq!(sorted_env(&c18.env), sorted_env(&c2.env));
    assert_eq!(c18.clocks.len(), 1);
    let (k18, k2) = (&c18.clocks[0], &c2.clocks[0]);
    assert_eq!((&k18.name, k18.freq, k18.uuid, &k18.description, k18.absolute), (&k2.name, k2.freq, k2.uuid, &k2.description, k2.absolute));
    let off = |k: &ctf::ir::ClockClass| i128::from(k.offset_s) * i128::from(k.freq) + i128::from(k.offset_cycles);
    assert_eq!(off(k18), off(k2));
    assert!(c2.warnings.is_empty(), "{:?}", c2.warnings);
    assert_eq!(c18.streams.len(), c2.streams.len());
    for (a, b) in c18.streams.iter().zip(&c2.streams) {
        assert_eq!((a.id, &a.default_clock), (b.id, &b.default_clock));
        assert_eq!(a.packet_context, b.packet_context, "packet context field classes");
        assert_eq!(a.event_classes.len(), b.event_classes.len());
        for (x, y) in a.event_classes.iter().zip(&b.event_classes) {
            assert_eq!((x.id, &x.name, x.loglevel), (y.id, &y.name, y.loglevel));
            assert_eq!(x.payload, y.payload, "payload field classes of {}", x.name);
        }
    }

    // `tracecube info` facts, per stream.
    let (i18, i2) = (info_facts(&set18), info_facts(&set2));
    assert_eq!(i18, i2);
    assert_eq!(i18.iter().map(|f| f.2).sum::<u64>(), s18.events);

    // Canonical dumps.
    let (dump18, dump2) = (canonical_dump(&set18), canonical_dump(&set2));
    assert!(dump18.iter().filter(|b| **b == b'\n').count() as u64 >= s18.events);
    assert!(String::from_utf8_lossy(&dump2).contains("\"filename\":"), "CTF 2 names drop TSDL's underscore");
    assert!(dump18 == dump2, "canonical dumps differ");

    // Analyses.
    let opts = analysis::RunOptions::default();
    for kind in [analysis::AnalysisKind::Count, analysis::AnalysisKind::Cpu, analysis::AnalysisKind::Io] {
        let r18 = analysis::run(&set18, kind, &opts).unwrap();
        let r2 = analysis::run(&set2, kind, &opts).unwrap();
        assert_eq!(r18, r2, "{kind:?} reports differ");
    }
}
