//! The live pipeline on replayed traces (no LTTng needed): what comes out equals an
//! offline decode and an offline cube build; overload drops are counted exactly.

use std::io::Write;
use std::sync::atomic::AtomicBool;
use std::sync::{Arc, Mutex, RwLock};
use std::time::Duration;

use ctf::merge::Merger;
use ctf::trace::TraceSet;
use cube::cli::QueryArgs;
use cube::{Cube, CubeConfig};
use live::{Overload, PipelineOptions, Processor};

#[derive(Clone, Default)]
struct Shared(Arc<Mutex<Vec<u8>>>);
impl Write for Shared {
    fn write(&mut self, b: &[u8]) -> std::io::Result<usize> {
        self.0.lock().unwrap().extend_from_slice(b);
        Ok(b.len())
    }
    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

fn offline_dump(set: &TraceSet) -> Vec<u8> {
    let mut m = Merger::new(set);
    let mut out = Vec::new();
    while let Some(mut x) = m.next().unwrap() {
        ctf::dump::write_json(&mut out, &mut x.item).unwrap();
    }
    out
}

fn config() -> CubeConfig {
    CubeConfig {
        levels: vec![
            cube::LevelSpec { granularity_ns: 1_000_000, span_ns: 50_000_000 },
            cube::LevelSpec { granularity_ns: 10_000_000, span_ns: 10_000_000_000 },
        ],
        ..Default::default()
    }
}

fn run_replay(trace: &std::path::Path, opts: PipelineOptions, speed: f64) -> (Cube, live::Stats, Vec<u8>) {
    let cube = Arc::new(RwLock::new(Cube::new(config()).unwrap()));
    let stats = Arc::new(Mutex::new(live::Stats::default()));
    let dump = Shared::default();
    let cap = opts.capacity;
    let p = Processor::new("replay", cube.clone(), stats, Some(Box::new(dump.clone())), opts);
    let path = trace.to_path_buf();
    let (st, rep) = live::run(p, cap, Arc::new(AtomicBool::new(false)), move |tx, stop| live::replay::replay(&path, speed, tx, stop)).unwrap();
    assert!(rep.packets > 0);
    let c = Arc::try_unwrap(cube).ok().unwrap().into_inner().unwrap();
    let d = dump.0.lock().unwrap().clone();
    (c, st, d)
}

fn answers(c: &Cube) -> Vec<cube::Response> {
    let qs = [
        QueryArgs { metric: "events".into(), by: vec!["operation:name".into()], ..Default::default() },
        QueryArgs { metric: "events".into(), by: vec!["cpu:cpu".into()], every: Some("7ms".into()), ..Default::default() },
        QueryArgs { metric: "cpu_time".into(), by: vec!["process:tid".into()], ..Default::default() },
        QueryArgs { metric: "bytes_written".into(), by: vec!["file:path".into()], ..Default::default() },
    ];
    qs.iter().map(|q| c.query(&q.to_request(c).unwrap()).unwrap()).collect()
}

#[test]
fn replay_equals_offline_decode_and_cube() {
    let dir = tempfile::tempdir().unwrap();
    let cfg = synth::SynthConfig { cpus: 3, events: 60_000, seed: 7, packet_size: 4096, ..Default::default() };
    let s = synth::generate(&cfg, dir.path()).unwrap();
    let set = TraceSet::open(&s.trace_dir).unwrap();
    let want = offline_dump(&set);
    let opts = PipelineOptions { capacity: 8, interval: Duration::from_millis(1), ..Default::default() };
    let (live_cube, st, got) = run_replay(&s.trace_dir, opts, 0.0);
    assert_eq!(st.dropped_events, 0);
    assert!(st.batches > 1, "several batches: {}", st.batches);
    let (w, g) = (String::from_utf8_lossy(&want), String::from_utf8_lossy(&got));
    assert_eq!(w.lines().count(), g.lines().count());
    assert!(w == g, "live dump differs from the offline dump");
    let (offline, rep) = cube_feed::build_from_set(&set, &cube_feed::BuildOptions { config: config(), threads: 1, ..Default::default() }).unwrap();
    assert_eq!(st.events, rep.events);
    assert_eq!(answers(&live_cube), answers(&offline));
}

#[test]
fn overloaded_consumer_drops_are_counted_exactly() {
    let dir = tempfile::tempdir().unwrap();
    let cfg = synth::SynthConfig { cpus: 2, events: 40_000, seed: 3, packet_size: 4096, ..Default::default() };
    let s = synth::generate(&cfg, dir.path()).unwrap();
    let set = TraceSet::open(&s.trace_dir).unwrap();
    let total = offline_dump(&set).split(|b| *b == b'\n').filter(|l| l.starts_with(b"{\"ts\"")).count() as u64;
    let opts = PipelineOptions { capacity: 4, interval: Duration::from_millis(1), overload: Overload::Drop, consumer_delay: Duration::from_millis(2) };
    let (_, st, got) = run_replay(&s.trace_dir, opts, 0.0);
    let fed_lines = got.split(|b| *b == b'\n').filter(|l| l.starts_with(b"{\"ts\"")).count() as u64;
    assert!(st.dropped_events > 0, "the consumer was overloaded: {st:?}");
    assert_eq!(fed_lines, st.events);
    assert_eq!(st.events + st.dropped_events, total, "fed + dropped = every event of the trace");
}

/// A trace written packet by packet while it is followed: the same events as the
/// finished trace, in the same order.
#[test]
fn growing_directory_is_followed() {
    let dir = tempfile::tempdir().unwrap();
    let cfg = synth::SynthConfig { cpus: 2, events: 20_000, seed: 5, packet_size: 4096, ..Default::default() };
    let s = synth::generate(&cfg, dir.path()).unwrap();
    let set = TraceSet::open(&s.trace_dir).unwrap();
    let want = offline_dump(&set);
    // The packets of every stream, in the order a tracer closes them.
    let mut packets: Vec<(u64, std::path::PathBuf, Vec<u8>)> = Vec::new();
    for st in &set.streams {
        for p in &st.packets {
            let (_, f) = set.packet_file(p);
            let a = p.info.offset as usize;
            packets.push((p.info.ts_end.unwrap(), f.path.file_name().unwrap().into(), f.bytes[a..a + (p.info.total_bits / 8) as usize].to_vec()));
        }
    }
    packets.sort_by_key(|p| p.0);
    let out = tempfile::tempdir().unwrap();
    let grow = out.path().to_path_buf();
    let metadata = std::fs::read(s.trace_dir.join("metadata")).unwrap();
    let writer = std::thread::spawn(move || {
        std::fs::write(grow.join("metadata"), &metadata).unwrap();
        for (_, name, bytes) in packets {
            let mut f = std::fs::OpenOptions::new().create(true).append(true).open(grow.join(name)).unwrap();
            f.write_all(&bytes).unwrap();
            std::thread::sleep(Duration::from_millis(2));
        }
    });
    let cube = Arc::new(RwLock::new(Cube::new(config()).unwrap()));
    let stats = Arc::new(Mutex::new(live::Stats::default()));
    let dump = Shared::default();
    let p = Processor::new("dir", cube, stats, Some(Box::new(dump.clone())), PipelineOptions::default());
    let path = out.path().to_path_buf();
    let opts =
        live::replay::FollowOptions { poll: Duration::from_millis(20), until_idle: Some(Duration::from_millis(1500)), quiet: Duration::from_millis(500) };
    let (st, rep) = live::run(p, 64, Arc::new(AtomicBool::new(false)), move |tx, stop| live::replay::follow_dir(&path, &opts, tx, stop)).unwrap();
    writer.join().unwrap();
    assert_eq!(rep.packets as usize, set.packet_count());
    assert_eq!(st.late_events, 0);
    let got = dump.0.lock().unwrap().clone();
    assert!(got == want, "followed dump differs ({} vs {} bytes)", got.len(), want.len());
}
