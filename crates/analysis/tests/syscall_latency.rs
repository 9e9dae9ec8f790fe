//! `syscall` against lttng-syscallstats (lttng-analyses 0.6.1, MI output) on the shared
//! kernel traces, and its exactness under any chunking.
//!
//! Rule on which lttng-analyses 0.6.1 is wrong, and what tracecube does instead:
//! * *return values*: `cli/syscallstats.py` sets a new key's tally to 1 and then adds 1
//!   (`return_count[k] = 1` followed by `return_count[k] += 1`), so every key it prints
//!   is one above the number of calls that returned it (kemu-small's nginx 2001 `write`:
//!   3664 calls, `{'success': 3665}`). tracecube counts each call once: the test expects
//!   lttng-analyses' tally minus one per key, and checks that the tallies then sum to
//!   the count.

use std::collections::BTreeMap;

use analysis::{run, AnalysisKind, HeadPolicy, Partition, Report, RunOptions};

use crate::common;

fn syscall(set: &ctf::trace::TraceSet, opts: &RunOptions) -> analysis::SyscallReport {
    let Report::Syscall(r) = run(set, AnalysisKind::Syscall, opts).unwrap() else { unreachable!() };
    r
}

/// `{'success': 3665, 'EAGAIN': 61}` as a map.
fn parse_returns(s: &str) -> BTreeMap<String, u64> {
    s.trim_matches(|c| c == '{' || c == '}')
        .split(", ")
        .filter(|p| !p.is_empty())
        .map(|p| {
            let (k, v) = p.split_once(": ").unwrap();
            (k.trim_matches('\'').to_string(), v.parse().unwrap())
        })
        .collect()
}

#[test]
fn syscallstats_agrees_with_lttng_analyses() {
    let mut traces = 0;
    for (trace, set, exp) in common::with_expected("syscallstats") {
        traces += 1;
        // lttng-analyses knows no thread on a CPU before its first switch.
        let r = syscall(&set, &RunOptions { threads: 2, chunk_size: 64 << 10, head: HeadPolicy::Ignore, ..Default::default() });
        let ours: BTreeMap<i32, &analysis::syscall::SyscallOwnerRow> = r.threads.iter().map(|t| (t.tid.unwrap(), t)).collect();
        let mut rows = 0;
        let mut tids = 0;
        for res in exp["results"].as_array().unwrap() {
            if res["class"] == "total" {
                let total: u64 = res["data"].as_array().unwrap().iter().map(|row| row[1]["value"].as_u64().unwrap()).sum();
                assert_eq!(r.count, total, "{trace}: total calls");
                continue;
            }
            let title = res["class"]["title"].as_str().unwrap();
            let tid: i32 = title.rsplit("TID: ").next().unwrap().trim_end_matches(")]").parse().unwrap();
            let t = ours.get(&tid).unwrap_or_else(|| panic!("{trace}: tid {tid} missing"));
            tids += 1;
            let data = res["data"].as_array().unwrap();
            assert_eq!(t.calls.len(), data.len(), "{trace} tid {tid}: syscalls");
            for row in data {
                let name = row[0]["name"].as_str().unwrap();
                let c = t.calls.iter().find(|c| c.name == name).unwrap_or_else(|| panic!("{trace} tid {tid}: {name} missing"));
                let l = &c.latency;
                let count = row[1]["value"].as_u64().unwrap();
                let at = format!("{trace} tid {tid} {name}");
                assert_eq!(l.count, count, "{at}: count");
                assert_eq!(l.min_ns, row[2]["value"].as_u64().unwrap(), "{at}: min");
                assert_eq!(l.max_ns, row[4]["value"].as_u64().unwrap(), "{at}: max");
                // The total, from lttng-analyses' mean (total / count as a float).
                let total = (row[3]["value"].as_f64().unwrap() * count as f64).round() as u64;
                assert_eq!(l.total_ns, total, "{at}: total");
                let rets: BTreeMap<String, u64> = parse_returns(row[6]["value"].as_str().unwrap()).into_iter().map(|(k, n)| (k, n - 1)).collect();
                assert_eq!(c.returns, rets, "{at}: return values (lttng-analyses' tallies minus one)");
                assert_eq!(c.returns.values().sum::<u64>(), count, "{at}: tallies sum to the count");
                rows += 1;
            }
        }
        assert_eq!(tids, r.threads.len(), "{trace}: threads listed");
        eprintln!("{trace}: {tids} threads, {rows} syscall rows equal");
    }
    eprintln!("{traces} traces compared");
}

/// A synthesized trace (syscalls on 3 CPUs; with background irqs and wake-ups).
fn synth_trace(events: u64, seed: u64, background: u8) -> (tempfile::TempDir, ctf::trace::TraceSet) {
    let dir = tempfile::tempdir().unwrap();
    let cfg = synth::SynthConfig { cpus: 3, events, seed, packet_size: 4096, background, ..Default::default() };
    let s = synth::generate(&cfg, dir.path()).unwrap();
    let set = ctf::trace::TraceSet::open(&s.trace_dir).unwrap();
    (dir, set)
}

#[test]
fn any_chunking_equals_serial() {
    for (seed, background) in [(1, 0), (2, 60)] {
        let (_d, set) = synth_trace(8_000, seed, background);
        for head in [HeadPolicy::FromStart, HeadPolicy::Ignore] {
            // With every call logged and a histogram: those are exact too.
            let freq = Some(analysis::latency::FreqOptions { buckets: 8, min: None, max: None, linear: seed == 2 });
            let serial = syscall(&set, &RunOptions { threads: 1, chunk_size: u64::MAX, head, log: true, freq, ..Default::default() });
            assert!(serial.count > 100, "seed {seed}: {} calls", serial.count);
            assert_eq!(serial.log.len() as u64, serial.count, "seed {seed}: one log row per call");
            assert_eq!(serial.freq.iter().map(|b| b.count).sum::<u64>(), serial.count, "seed {seed}: the histogram holds every call");
            assert!(serial.log.windows(2).all(|w| w[0].begin_ns <= w[1].begin_ns), "log in time order");
            for (threads, chunk, partition) in
                [(2, 1, Partition::Hybrid), (3, 4 << 10, Partition::Time), (4, 2 << 10, Partition::Stream), (2, 16 << 10, Partition::Hybrid)]
            {
                let par = syscall(&set, &RunOptions { threads, chunk_size: chunk, partition, head, log: true, freq, ..Default::default() });
                assert_eq!(par, serial, "seed {seed} {head:?} -j {threads} chunk {chunk} {partition:?}");
            }
        }
    }
}
