//! `irq` against lttng-irqstats and `sched` against lttng-schedstats (lttng-analyses
//! 0.6.1, MI output) on the shared kernel traces, and their exactness under any
//! chunking.

use std::collections::BTreeMap;

use analysis::{run, AnalysisKind, HeadPolicy, IrqReport, Partition, Report, RunOptions, SchedReport};
use serde_json::Value;

use crate::common;

fn opts() -> RunOptions {
    RunOptions { threads: 2, chunk_size: 64 << 10, head: HeadPolicy::Ignore, ..Default::default() }
}

fn irq(set: &ctf::trace::TraceSet, o: &RunOptions) -> IrqReport {
    let Report::Irq(r) = run(set, AnalysisKind::Irq, o).unwrap() else { unreachable!() };
    r
}

fn sched(set: &ctf::trace::TraceSet, o: &RunOptions) -> SchedReport {
    let Report::Sched(r) = run(set, AnalysisKind::Sched, o).unwrap() else { unreachable!() };
    r
}

/// Checks `(count, min, max, total)` of `got` against an MI row's
/// `[count, min, avg, max, …]` starting at `row[at]`.
fn check(what: &str, got: &analysis::latency::DurationRow, row: &[Value], at: usize) {
    let count = row[at]["value"].as_u64().unwrap();
    assert_eq!(got.count, count, "{what}: count");
    if count == 0 {
        return;
    }
    assert_eq!(got.min_ns, row[at + 1]["value"].as_u64().unwrap(), "{what}: min");
    assert_eq!(got.max_ns, row[at + 3]["value"].as_u64().unwrap(), "{what}: max");
    let total = (row[at + 2]["value"].as_f64().unwrap() * count as f64).round() as u64;
    assert_eq!(got.total_ns, total, "{what}: total (from the mean)");
}

#[test]
fn irqstats_agrees_with_lttng_analyses() {
    for (trace, set, exp) in common::with_expected("irqstats") {
        let r = irq(&set, &opts());
        let hard: BTreeMap<u64, _> = r.hard.iter().map(|h| (u64::from(h.irq), h)).collect();
        let soft: BTreeMap<u64, _> = r.soft.iter().map(|s| (u64::from(s.vec), s)).collect();
        let (mut nh, mut ns) = (0, 0);
        for res in exp["results"].as_array().unwrap() {
            for row in res["data"].as_array().unwrap() {
                let row = row.as_array().unwrap();
                let nr = row[0]["nr"].as_u64().unwrap();
                match res["class"].as_str().unwrap() {
                    "hard-stats" => {
                        let h = hard.get(&nr).unwrap_or_else(|| panic!("{trace}: IRQ {nr} missing"));
                        check(&format!("{trace} IRQ {nr}"), &h.latency, row, 1);
                        assert_eq!(h.name, row[0]["name"].as_str().unwrap(), "{trace} IRQ {nr}: name");
                        nh += 1;
                    }
                    "soft-stats" => {
                        let s = soft.get(&nr).unwrap_or_else(|| panic!("{trace}: softirq {nr} missing"));
                        check(&format!("{trace} softirq {nr}"), &s.latency, row, 1);
                        check(&format!("{trace} softirq {nr} raise"), &s.raise, row, 6);
                        ns += 1;
                    }
                    c => panic!("unexpected class {c}"),
                }
            }
        }
        assert_eq!((nh, ns), (r.hard.len(), r.soft.len()), "{trace}: rows");
        eprintln!("{trace}: {nh} hard IRQs, {ns} softirqs equal");
    }
}

#[test]
fn schedstats_agrees_with_lttng_analyses() {
    for (trace, set, exp) in common::with_expected("schedstats") {
        let r = sched(&set, &opts());
        let ours: BTreeMap<i64, _> = r.threads.iter().map(|t| (i64::from(t.tid.unwrap()), t)).collect();
        let mut n = 0;
        for res in exp["results"].as_array().unwrap() {
            for row in res["data"].as_array().unwrap() {
                let row = row.as_array().unwrap();
                let tid = row[0]["tid"].as_i64().unwrap();
                if row[1]["value"].as_u64() == Some(0) {
                    // A waker listed without latencies of its own.
                    assert!(!ours.contains_key(&tid), "{trace}: tid {tid} has none in lttng-analyses");
                    continue;
                }
                let t = ours.get(&tid).unwrap_or_else(|| panic!("{trace}: tid {tid} missing"));
                check(&format!("{trace} tid {tid}"), &t.latency, row, 1);
                n += 1;
            }
        }
        assert_eq!(n, r.threads.len(), "{trace}: threads");
        eprintln!("{trace}: {n} threads equal");
    }
}

#[test]
fn any_chunking_equals_serial() {
    for (seed, background) in [(3, 70), (4, 40)] {
        let dir = tempfile::tempdir().unwrap();
        let cfg = synth::SynthConfig { cpus: 3, events: 8_000, seed, packet_size: 4096, background, ..Default::default() };
        let s = synth::generate(&cfg, dir.path()).unwrap();
        let set = ctf::trace::TraceSet::open(&s.trace_dir).unwrap();
        let freq = Some(analysis::latency::FreqOptions { buckets: 6, min: None, max: None, linear: false });
        let serial_o = RunOptions { threads: 1, chunk_size: u64::MAX, log: true, freq, ..Default::default() };
        let (si, ss) = (irq(&set, &serial_o), sched(&set, &serial_o));
        let irqs: u64 = si.hard.iter().map(|h| h.latency.count).sum::<u64>() + si.soft.iter().map(|s| s.latency.count).sum::<u64>();
        assert_eq!(si.log.len() as u64, irqs, "seed {seed}: one log row per interrupt");
        assert_eq!(ss.log.len() as u64, ss.total.count, "seed {seed}: one log row per wake-up");
        assert_eq!(ss.freq.iter().map(|b| b.count).sum::<u64>(), ss.total.count, "seed {seed}: histogram");
        assert!(si.hard.iter().map(|h| h.latency.count).sum::<u64>() > 10, "seed {seed}: hard IRQs");
        assert!(ss.total.count > 10, "seed {seed}: wake-ups {}", ss.total.count);
        for (threads, chunk, partition) in
            [(2, 1, Partition::Hybrid), (3, 4 << 10, Partition::Time), (4, 2 << 10, Partition::Stream), (2, 16 << 10, Partition::Hybrid)]
        {
            let o = RunOptions { threads, chunk_size: chunk, partition, log: true, freq, ..Default::default() };
            assert_eq!(irq(&set, &o), si, "irq seed {seed} -j {threads} chunk {chunk} {partition:?}");
            assert_eq!(sched(&set, &o), ss, "sched seed {seed} -j {threads} chunk {chunk} {partition:?}");
        }
    }
}
