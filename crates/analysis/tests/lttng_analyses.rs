//! Agreement with lttng-analyses 0.6.1 (`lttng-cputop`, `lttng-iousagetop` MI output)
//! on the real kernel traces under `shared/traces` (skipped when absent).

use std::collections::BTreeMap;

use analysis::{run, AnalysisKind, HeadPolicy, Report, RunOptions};
use serde_json::Value;

/// An expected output of lttng-analyses, or `None` (after `testkit::skip`, which fails
/// in CI) when `../shared` lacks it.
fn load(name: &str) -> Option<Value> {
    let p = testkit::shared_path("lttng_analyses", &format!("expected/lttng-analyses/{name}"))?;
    let text = std::fs::read_to_string(&p).unwrap_or_else(|e| panic!("{}: {e}", p.display()));
    Some(serde_json::from_str(&text).unwrap_or_else(|e| panic!("{}: {e}", p.display())))
}

fn opts(head: HeadPolicy) -> RunOptions {
    RunOptions { threads: 2, chunk_size: 256 << 10, head, ..Default::default() }
}

/// Analysis `kind` of shared trace `trace` (2 threads, 256 KiB chunks), when the trace is
/// present.
fn report(trace: &str, kind: AnalysisKind, head: HeadPolicy) -> Option<Report> {
    let dir = testkit::shared_trace("lttng_analyses", trace)?;
    let set = ctf::trace::TraceSet::open(&dir).unwrap();
    Some(run(&set, kind, &opts(head)).unwrap())
}

/// Compares cputop; returns the number of mismatches (printed).
fn check_cpu(trace: &str, head: HeadPolicy) -> Option<usize> {
    let exp = load(&format!("{trace}.cputop-full-mi.json"))?;
    let Report::Cpu(r) = report(trace, AnalysisKind::Cpu, head)? else { unreachable!() };
    let mut bad = 0;
    let mut checked = 0;
    let ours: BTreeMap<i64, f64> = r.threads.iter().map(|t| (t.tid as i64, t.usage)).collect();
    let cpus: BTreeMap<i64, f64> = r.cpus.iter().map(|c| (c.cpu as i64, c.usage)).collect();
    for res in exp["results"].as_array().unwrap() {
        let class = res["class"].as_str().unwrap_or("");
        for row in res["data"].as_array().unwrap() {
            let (key, exp_v, got) = match class {
                "per-process" => {
                    let tid = row[0]["tid"].as_i64().unwrap();
                    if tid == 0 {
                        // lttng-analyses lists the idle task on flipping-endianness
                        // (0.12 %); tracecube never counts idle as a thread.
                        continue;
                    }
                    (format!("tid {tid}"), row[3]["value"].as_f64().unwrap(), ours.get(&tid).copied().unwrap_or(0.0))
                }
                "per-cpu" => {
                    let c = row[0]["id"].as_i64().unwrap();
                    (format!("cpu {c}"), row[1]["value"].as_f64().unwrap(), cpus.get(&c).copied().unwrap_or(0.0))
                }
                _ => continue,
            };
            checked += 1;
            if (exp_v - got).abs() > 0.0005 {
                bad += 1;
                if bad < 10 {
                    eprintln!("{trace} cpu {head:?}: {key}: expected {exp_v}, got {got}");
                }
            }
        }
    }
    eprintln!("{trace} cpu {head:?}: {bad} mismatches of {checked}");
    Some(bad)
}

fn check_io(trace: &str, head: HeadPolicy) -> Option<usize> {
    let exp = load(&format!("{trace}.iousagetop-full-mi.json"))?;
    let Report::Io(r) = report(trace, AnalysisKind::Io, head)? else { unreachable!() };
    let threads: BTreeMap<i64, (u64, u64)> = r.threads.iter().map(|t| (t.tid as i64, (t.read_bytes, t.write_bytes))).collect();
    let files: BTreeMap<&str, (u64, u64)> = r.files.iter().map(|f| (f.path.as_str(), (f.read_bytes, f.write_bytes))).collect();
    let mut bad = 0;
    let mut checked = 0;
    for res in exp["results"].as_array().unwrap() {
        let title = res["class"]["title"].as_str().unwrap_or("");
        let read = title.contains("[read]");
        for row in res["data"].as_array().unwrap() {
            let (key, e, g) = if title.starts_with("Per-process") {
                let tid = row[0]["tid"].as_i64().unwrap();
                let g = threads.get(&tid).copied().unwrap_or_default();
                (format!("tid {tid}"), row[1]["value"].as_u64().unwrap(), if read { g.0 } else { g.1 })
            } else if title.starts_with("Per-file") {
                let p = row[0]["path"].as_str().unwrap();
                if !p.starts_with('/') {
                    continue;
                }
                let g = files.get(p).copied().unwrap_or_default();
                (format!("file {p}"), row[1]["value"].as_u64().unwrap(), if read { g.0 } else { g.1 })
            } else {
                continue;
            };
            checked += 1;
            if e != g {
                bad += 1;
                if bad < 15 {
                    eprintln!("{trace} io {head:?} {title}: {key}: expected {e}, got {g}");
                }
            }
        }
    }
    eprintln!("{trace} io {head:?}: {bad} mismatches of {checked}");
    Some(bad)
}

const TRACES: [&str; 4] = ["many-threads", "bug446190-arm", "scimark2-all-events-cpu3", "flipping-endianness"];

#[test]
fn cputop_agrees() {
    for t in TRACES {
        check_cpu(t, HeadPolicy::Ignore);
        if let Some(bad) = check_cpu(t, HeadPolicy::FromStart) {
            assert_eq!(bad, 0, "{t}");
        }
    }
}

#[test]
fn iousagetop_agrees() {
    for t in TRACES {
        check_io(t, HeadPolicy::Ignore);
        if let Some(bad) = check_io(t, HeadPolicy::FromStart) {
            assert_eq!(bad, 0, "{t}");
        }
    }
}

/// The cpu and io reports of `trace`, when it is present.
fn reports(trace: &str) -> Option<(analysis::cpu::CpuReport, analysis::io::IoReport)> {
    let Report::Cpu(c) = report(trace, AnalysisKind::Cpu, HeadPolicy::FromStart)? else { unreachable!() };
    let Report::Io(i) = report(trace, AnalysisKind::Io, HeadPolicy::FromStart)? else { unreachable!() };
    Some((c, i))
}

/// A thread's name is the latest the trace gives it (README.md), where lttng-cputop keeps
/// the first and lttng-iousagetop the one at the last I/O: threads that renamed
/// themselves or ran `exec` are named as they ended. Both analyses name a thread alike.
#[test]
fn names_are_the_latest_the_trace_gives() {
    // (tid, its latest name, the name lttng-cputop gives it)
    let cases = [
        // Renamed itself (prctl) right after its first switch.
        ("many-threads", 4726, "fluffy", "multithread"),
        // Ran `exec`.
        ("many-threads", 10705, "lttng", "sudo"),
        ("bug446190-arm", 526, "lttng", "sh"),
        ("scimark2-all-events-cpu3", 5215, "ps", "sh"),
    ];
    for (trace, tid, latest, peers) in cases {
        let Some((cpu, io)) = reports(trace) else { continue };
        let ours = cpu.threads.iter().find(|t| t.tid == tid).map(|t| t.comm.as_str());
        assert_eq!(ours, Some(latest), "{trace} tid {tid}");
        // What lttng-cputop printed for it, so that the case stays a real difference.
        if let Some(exp) = load(&format!("{trace}.cputop-full-mi.json")) {
            let name = exp["results"]
                .as_array()
                .unwrap()
                .iter()
                .flat_map(|r| r["data"].as_array().unwrap())
                .map(|row| &row[0])
                .find(|p| p["tid"].as_i64() == Some(tid.into()))
                .and_then(|p| p["name"].as_str());
            assert_eq!(name, Some(peers), "{trace} tid {tid} in lttng-cputop");
        }
        let names: BTreeMap<i32, &str> = cpu.threads.iter().map(|t| (t.tid, t.comm.as_str())).collect();
        for t in &io.threads {
            if let Some(n) = names.get(&t.tid) {
                assert_eq!(*n, t.comm, "{trace} tid {}: cpu and io name it differently", t.tid);
            }
        }
    }
}
