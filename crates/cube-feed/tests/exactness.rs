//! Exactness (issue 6, acceptance 1): on synthesized and real kernel traces, for random ranges
//! aligned to the finest granularity, cube answers equal `tracecube analyze`:
//! event counts per name equal `analyze --begin B1 --end B2-1`; CPU time per thread and
//! per CPU and bytes per thread, process and file equal `analyze --end B2-1` minus
//! `analyze --end B1-1` (a restricted run cannot know fd paths or pids from before its
//! begin, so its bytes per file are not the bytes of the range; prefixes are exact).

use crate::common;

use std::collections::BTreeMap;

use analysis::{run, AnalysisKind, Report, RunOptions};
use cube::{Cube, Request, When};
use cube_feed::{build_from_set, BuildOptions};
use rand::{Rng, SeedableRng};

use common::MS;

fn analyze(set: &ctf::trace::TraceSet, k: AnalysisKind, begin: Option<u64>, end: Option<u64>) -> Report {
    let o = RunOptions { threads: 1, chunk_size: u64::MAX, begin: begin.map(|b| b as i64), end: end.map(|e| e as i64), ..Default::default() };
    run(set, k, &o).unwrap()
}

fn by(c: &Cube, metric: &str, dim: &str, b1: u64, b2: u64) -> BTreeMap<String, i64> {
    let mut r = Request::new(metric, When::Range(b1, b2));
    r.by = vec![dim.into()];
    let resp = c.query(&r).unwrap();
    let w = &resp.windows[0];
    // A range starting before the data is stated from the data's first boundary.
    assert_eq!((w.begin_ns, w.end_ns), (b1.max(c.data_begin()), b2), "the answer covers the asked range");
    w.rows.iter().map(|r| (r.group[0].clone(), r.value as i64)).collect()
}

fn diff(a: BTreeMap<String, i64>, b: BTreeMap<String, i64>) -> BTreeMap<String, i64> {
    let mut out = a;
    for (k, v) in b {
        *out.entry(k).or_default() -= v;
    }
    out.retain(|_, v| *v != 0);
    out
}

struct Prefix {
    cpu_tid: BTreeMap<String, i64>,
    cpu_cpu: BTreeMap<String, i64>,
    read_tid: BTreeMap<String, i64>,
    write_tid: BTreeMap<String, i64>,
    read_pid: BTreeMap<String, i64>,
    write_file: BTreeMap<String, i64>,
    /// tid → pid as the io analysis knows it at the prefix's end.
    pid_of: BTreeMap<i32, Option<i32>>,
}

fn prefix(set: &ctf::trace::TraceSet, end: u64) -> Prefix {
    let Report::Cpu(c) = analyze(set, AnalysisKind::Cpu, None, Some(end - 1)) else { unreachable!() };
    let Report::Io(io) = analyze(set, AnalysisKind::Io, None, Some(end - 1)) else { unreachable!() };
    Prefix {
        cpu_tid: c.threads.iter().map(|t| (t.tid.to_string(), t.cpu_ns as i64)).collect(),
        cpu_cpu: c.cpus.iter().map(|x| (x.cpu.to_string(), x.busy_ns as i64)).collect(),
        read_tid: io.threads.iter().map(|t| (t.tid.to_string(), t.read_bytes as i64)).collect(),
        write_tid: io.threads.iter().map(|t| (t.tid.to_string(), t.write_bytes as i64)).collect(),
        read_pid: io.processes.iter().map(|p| (p.pid.to_string(), p.read_bytes as i64)).collect(),
        write_file: io.files.iter().map(|f| (f.path.clone(), f.write_bytes as i64)).collect(),
        pid_of: io.threads.iter().map(|t| (t.tid, t.pid)).collect(),
    }
}

fn nz(m: BTreeMap<String, i64>) -> BTreeMap<String, i64> {
    m.into_iter().filter(|(k, v)| *v != 0 && k != "?").collect()
}

/// Checks the whole trace and `rounds` random aligned ranges of `set`.
fn check(set: &ctf::trace::TraceSet, rounds: usize, what: &str) {
    let (cube, rep) = build_from_set(set, &BuildOptions { config: common::config(), threads: 1, ..Default::default() }).unwrap();
    assert!(rep.events > 0, "{what}: events");
    let (first, last) = cube.span().unwrap();
    let Report::Count(all) = analyze(set, AnalysisKind::Count, None, None) else { unreachable!() };
    assert_eq!((Some(first as i64), Some(last as i64)), (all.begin_ns, all.end_ns), "{what}: the cube's span is the events' span");
    // Whole trace: the cube equals the analyses.
    let end = last / MS * MS + MS;
    let full = prefix(set, last + 1);
    assert_eq!(nz(by(&cube, "cpu_time", "process:tid", 0, end)), nz(full.cpu_tid.clone()), "{what}: cpu per tid");
    assert_eq!(nz(by(&cube, "bytes_read", "process:tid", 0, end)), nz(full.read_tid.clone()), "{what}: read per tid");
    assert_eq!(nz(by(&cube, "bytes_written", "file:path", 0, end)), nz(full.write_file.clone()), "{what}: written per file");
    let lo = first.div_ceil(MS) * MS + 5 * MS;
    let hi = last / MS * MS;
    if hi <= lo + 10 * MS {
        assert!(rounds == 0 || what != "synth", "trace long enough: {} ms", hi.saturating_sub(lo) / MS);
        return;
    }
    let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(5);
    for _ in 0..rounds {
        let a = rng.gen_range(lo / MS..hi / MS);
        let b = rng.gen_range(a + 1..=hi / MS);
        let (b1, b2) = (a * MS, b * MS);
        let Report::Count(cnt) = analyze(set, AnalysisKind::Count, Some(b1), Some(b2 - 1)) else { unreachable!() };
        let want: BTreeMap<String, i64> = cnt.by_name.iter().map(|(k, v)| (k.clone(), *v as i64)).collect();
        assert_eq!(by(&cube, "events", "operation:name", b1, b2), want, "{what}: events per name in [{b1}, {b2})");
        let (p1, p2) = (prefix(set, b1), prefix(set, b2));
        assert_eq!(nz(by(&cube, "cpu_time", "process:tid", b1, b2)), nz(diff(p2.cpu_tid, p1.cpu_tid)), "{what}: cpu per tid");
        assert_eq!(nz(by(&cube, "cpu_time", "cpu:cpu", b1, b2)), nz(diff(p2.cpu_cpu, p1.cpu_cpu)), "{what}: cpu per cpu");
        assert_eq!(nz(by(&cube, "bytes_read", "process:tid", b1, b2)), nz(diff(p2.read_tid, p1.read_tid)), "{what}: read per tid");
        assert_eq!(nz(by(&cube, "bytes_written", "process:tid", b1, b2)), nz(diff(p2.write_tid, p1.write_tid)), "{what}: written per tid");
        // Per pid, a difference of prefixes is an oracle only while the analyses' tid →
        // pid map stays the same (the cube files bytes under the pid known at the time
        // of the I/O; a prefix files all of a thread's bytes under the pid it knows at its
        // end, e.g. a pid learnt from a later fork or statedump).
        if p1.pid_of.iter().all(|(t, p)| p2.pid_of.get(t).is_none_or(|q| q == p)) {
            assert_eq!(nz(by(&cube, "bytes_read", "process:pid", b1, b2)), nz(diff(p2.read_pid, p1.read_pid)), "{what}: read per pid");
        }
        assert_eq!(nz(by(&cube, "bytes_written", "file:path", b1, b2)), nz(diff(p2.write_file, p1.write_file)), "{what}: written per file");
    }
}

#[test]
fn cube_ranges_equal_analyze() {
    let dir = tempfile::tempdir().unwrap();
    let cfg = synth::SynthConfig { cpus: 3, events: 40_000, seed: 11, packet_size: 4096, ..Default::default() };
    let s = synth::generate(&cfg, dir.path()).unwrap();
    let set = ctf::trace::TraceSet::open(&s.trace_dir).unwrap();
    check(&set, 6, "synth");
}

#[test]
fn real_kernel_traces_ranges_equal_analyze() {
    let Some(traces) = common::shared_kernel_traces("real_kernel_traces_ranges_equal_analyze") else { return };
    for t in traces {
        let set = ctf::trace::TraceSet::open(&t).unwrap();
        check(&set, 4, &t.display().to_string());
    }
}

#[test]
fn demo_cli_and_file_on_a_trace() {
    let dir = tempfile::tempdir().unwrap();
    let cfg = synth::SynthConfig { cpus: 2, events: 10_000, seed: 3, packet_size: 4096, ..Default::default() };
    let s = synth::generate(&cfg, dir.path()).unwrap();
    let (mut c, _) = cube_feed::build_from_trace(&s.trace_dir, &BuildOptions { config: common::config(), threads: 1, ..Default::default() }).unwrap();
    let text = cube::cli::demo_queries(&c).unwrap();
    assert!(text.contains("cpu_time") && text.contains("precision"), "{text}");
    let out = dir.path().join("t.cube");
    cube::save(&mut c, &out).unwrap();
    let d = cube::open(&out).unwrap();
    let a = cube::cli::QueryArgs {
        metric: "bytes_read".into(),
        agg: Some("avg".into()),
        range: Some("+1ms..+50ms".into()),
        by: vec!["process:name".into()],
        ..Default::default()
    };
    assert_eq!(c.query(&a.to_request(&c).unwrap()).unwrap(), d.query(&a.to_request(&d).unwrap()).unwrap());
    let bad = cube::cli::QueryArgs { metric: "nope".into(), ..Default::default() };
    assert!(d.query(&bad.to_request(&d).unwrap()).is_err());
}
