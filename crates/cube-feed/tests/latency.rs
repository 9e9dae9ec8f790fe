//! The cube's latency metrics equal the latency analyses: over the whole of every
//! shared kernel trace, `syscall_latency`, `sched_latency`, `irq_time` and
//! `block_latency` summed, counted and maximised per member are what `analyze -a
//! syscall|sched|irq|block` print per thread, call, handler kind and disk (the same
//! rules, `kernel::latency`, fed in time order instead of chunk by chunk).

use crate::common;

use std::collections::BTreeMap;

use analysis::{run, AnalysisKind, Report, RunOptions};
use cube::{Agg, Cube, Request, When};
use cube_feed::{build_from_set, BuildOptions};

type Table = BTreeMap<String, (i64, i64, i64)>;

/// Per member of `dim`: (sum, count, max) of `metric` over the whole cube (to the
/// finest boundary after the last event: range ends round to the nearest boundary).
fn cube_table(c: &Cube, metric: &str, dim: &str) -> Table {
    let (_, last) = c.span().unwrap();
    let end = last / common::MS * common::MS + common::MS;
    let mut out = Table::new();
    for (i, agg) in [Agg::Sum, Agg::Count, Agg::Max].into_iter().enumerate() {
        let mut r = Request::new(metric, When::Range(0, end));
        r.by = vec![dim.into()];
        r.agg = agg;
        for row in &c.query(&r).unwrap().windows[0].rows {
            let e = out.entry(row.group[0].clone()).or_default();
            let v = row.value as i64;
            match i {
                0 => e.0 = v,
                1 => e.1 = v,
                _ => e.2 = v,
            }
        }
    }
    out.retain(|_, v| v.1 != 0);
    out
}

/// Asserts `got == want`, naming the first members that differ.
fn same(got: Table, want: Table, what: &str) {
    let keys: std::collections::BTreeSet<&String> = got.keys().chain(want.keys()).collect();
    let diff: Vec<String> =
        keys.into_iter().filter(|k| got.get(*k) != want.get(*k)).take(8).map(|k| format!("{k}: cube {:?}, analysis {:?}", got.get(k), want.get(k))).collect();
    assert!(diff.is_empty(), "{what} (of {} members; (sum, count, max)): {diff:#?}", want.len());
}

fn analyze(set: &ctf::trace::TraceSet, k: AnalysisKind) -> Report {
    run(set, k, &RunOptions { threads: 1, ..Default::default() }).unwrap()
}

fn add(t: &mut Table, k: String, total: u64, count: u64, max: u64) {
    let e = t.entry(k).or_default();
    e.0 += total as i64;
    e.1 += count as i64;
    e.2 = e.2.max(max as i64);
}

/// Compares the four metrics on `set`; returns how many members each had.
fn check(set: &ctf::trace::TraceSet, what: &str) -> [usize; 4] {
    let (cube, _) = build_from_set(set, &BuildOptions { config: common::config(), threads: 1, ..Default::default() }).unwrap();
    let Report::Syscall(sc) = analyze(set, AnalysisKind::Syscall) else { unreachable!() };
    let (mut per_tid, mut per_call) = (Table::new(), Table::new());
    for t in &sc.threads {
        for c in &t.calls {
            let l = &c.latency;
            add(&mut per_tid, t.tid.unwrap().to_string(), l.total_ns, l.count, l.max_ns);
            add(&mut per_call, c.name.clone(), l.total_ns, l.count, l.max_ns);
        }
    }
    same(cube_table(&cube, "syscall_latency", "process:tid"), per_tid.clone(), &format!("{what}: syscall latency per thread"));
    same(cube_table(&cube, "syscall_latency", "operation:name"), per_call.clone(), &format!("{what}: syscall latency per call"));
    let calls = per_call.len();

    let Report::Sched(sd) = analyze(set, AnalysisKind::Sched) else { unreachable!() };
    let mut per_tid = Table::new();
    for t in &sd.threads {
        add(&mut per_tid, t.tid.unwrap().to_string(), t.latency.total_ns, t.latency.count, t.latency.max_ns);
    }
    same(cube_table(&cube, "sched_latency", "process:tid"), per_tid.clone(), &format!("{what}: wake-up latency per thread"));
    let woken = per_tid.len();

    let Report::Irq(iq) = analyze(set, AnalysisKind::Irq) else { unreachable!() };
    let mut per_kind = Table::new();
    for h in &iq.hard {
        add(&mut per_kind, "irq".into(), h.latency.total_ns, h.latency.count, h.latency.max_ns);
    }
    for s in &iq.soft {
        add(&mut per_kind, "softirq".into(), s.latency.total_ns, s.latency.count, s.latency.max_ns);
    }
    per_kind.retain(|_, v| v.1 != 0);
    same(cube_table(&cube, "irq_time", "operation:kind"), per_kind.clone(), &format!("{what}: handler time per kind"));
    let handlers = per_kind.len();

    let Report::Block(bk) = analyze(set, AnalysisKind::Block) else { unreachable!() };
    let mut per_disk = Table::new();
    for d in &bk.disks {
        add(&mut per_disk, d.name.clone(), d.latency.total_ns, d.latency.count, d.latency.max_ns);
    }
    per_disk.retain(|_, v| v.1 != 0);
    same(cube_table(&cube, "block_latency", "operation:name"), per_disk.clone(), &format!("{what}: block latency per disk"));
    [calls, woken, handlers, per_disk.len()]
}

#[test]
fn latency_metrics_equal_the_latency_analyses_on_real_traces() {
    let Some(traces) = common::shared_kernel_traces("latency_metrics_equal_the_latency_analyses_on_real_traces") else { return };
    let mut measured = [0; 4];
    for t in traces {
        let set = ctf::trace::TraceSet::open(&t).unwrap();
        let m = check(&set, &t.display().to_string());
        eprintln!("{}: members compared (calls, woken threads, handler kinds, disks): {m:?}", t.display());
        measured = std::array::from_fn(|i| measured[i] + m[i]);
    }
    assert!(measured.iter().all(|&n| n > 0), "the traces have each kind of latency to compare: {measured:?}");
}
