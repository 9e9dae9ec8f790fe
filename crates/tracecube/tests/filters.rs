//! `analyze`'s filters (`--tid`, `--pid`, `--procname`, `--cpu`, as lttng-analyses'):
//! every table (threads, processes, files, CPUs, totals) counts only what the
//! selection did. The expectation is computed here from the events themselves, read
//! with `tracecube dump` one CPU at a time and replayed in time order by a small model
//! written for this test (who runs on each CPU, which fd names which file), not by the
//! analyses; each filtered run is also repeated at several chunkings, which must not
//! change a byte. Where lttng-analyses agrees it is compared too; where it does not,
//! the comment says, from the events, why.

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::path::Path;

use serde_json::Value;

use crate::support;
use support::bin;

/// `tracecube analyze TRACE -a ANALYSIS --format json --limit 0 ARGS`, at three
/// chunkings that must agree; the report.
fn analyze(trace: &Path, analysis: &str, args: &[&str]) -> Value {
    let mut first: Option<Value> = None;
    for chunking in [&["-j", "1", "--chunk-size", "1G"][..], &["-j", "2", "--chunk-size", "64K"], &["-j", "3", "--chunk-size", "300K", "--partition", "time"]] {
        let out = bin().arg("analyze").arg(trace).args(["-a", analysis, "--format", "json", "--limit", "0"]).args(chunking).args(args).output().unwrap();
        assert!(out.status.success(), "{args:?}: {}", String::from_utf8_lossy(&out.stderr));
        let v: Value = serde_json::from_slice(&out.stdout).unwrap();
        match &first {
            None => first = Some(v),
            Some(f) => assert_eq!(f, &v, "{analysis} {args:?}: {chunking:?} changed the report"),
        }
    }
    first.unwrap()
}

/// One event of the dump, with the CPU whose stream holds it.
struct Ev {
    ts: i64,
    cpu: u32,
    name: String,
    p: Value,
}

/// The events the model needs, of CPUs `0..cpus`, in time order (stable: a CPU's own
/// order is kept).
fn events(trace: &Path, cpus: u32) -> Vec<Ev> {
    let mut all = Vec::new();
    for cpu in 0..cpus {
        let out = bin()
            .arg("dump")
            .arg(trace)
            .args(["--cpu", &cpu.to_string()])
            .args(["--name", "sched_switch", "--name", "sched_process_fork", "--name", "lttng_statedump_process_state", "--name", "syscall_*"])
            .output()
            .unwrap();
        assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
        for line in String::from_utf8(out.stdout).unwrap().lines() {
            let v: Value = serde_json::from_str(line).unwrap();
            all.push(Ev { ts: v["ts"].as_i64().unwrap(), cpu, name: v["name"].as_str().unwrap().to_string(), p: v["p"].clone() });
        }
    }
    all.sort_by_key(|e| e.ts);
    all
}

const READS: [&str; 6] = ["read", "pread64", "readv", "preadv", "recvfrom", "recvmsg"];
const WRITES: [&str; 6] = ["write", "pwrite64", "writev", "pwritev", "sendto", "sendmsg"];

/// What the events say, replayed serially: CPU time per (tid, cpu), bytes per (tid,
/// entry cpu, file), each thread's pid and names.
#[derive(Default)]
struct Truth {
    cpu_ns: BTreeMap<(i64, u32), u64>,
    /// `(tid, cpu of the entry, path) → [read, written]`.
    bytes: BTreeMap<(i64, u32, String), [u64; 2]>,
    pid: HashMap<i64, i64>,
    names: HashMap<i64, BTreeSet<String>>,
    /// Each thread's latest name (its last `sched_switch`'s).
    latest: HashMap<i64, String>,
    /// Per CPU, its first switch `(ts, prev_tid)`.
    first: HashMap<u32, (i64, i64)>,
    /// The trace's first and last events.
    range: (i64, i64),
}

impl Truth {
    /// The model: a CPU runs the last `sched_switch`'s `next_tid` (before its first
    /// switch, that switch's `prev_tid`, from `begin`); the task still running at `end`
    /// runs until then. A syscall is its CPU's task's; a read or write moves its exit's
    /// `ret` when > 0 bytes of the file its fd names in the process (open/openat, socket;
    /// otherwise `unknown (fd N)`).
    fn replay(evs: &[Ev], begin: i64, end: i64) -> Truth {
        let mut t = Truth { range: (begin, end), ..Default::default() };
        for e in evs.iter().filter(|e| e.name == "sched_switch") {
            t.first.entry(e.cpu).or_insert((e.ts, e.p["prev_tid"].as_i64().unwrap()));
        }
        let mut cur: HashMap<u32, (i64, i64)> = t.first.iter().map(|(&c, &(_, p))| (c, (p, begin))).collect();
        let mut pending: HashMap<i64, (String, u32, Value)> = HashMap::new();
        let mut fds: HashMap<i64, HashMap<i64, String>> = HashMap::new();
        for e in evs {
            let p = &e.p;
            match e.name.as_str() {
                "sched_switch" => {
                    let (prev, next) = (p["prev_tid"].as_i64().unwrap(), p["next_tid"].as_i64().unwrap());
                    if let Some((tid, since)) = cur.insert(e.cpu, (next, e.ts)) {
                        if tid != 0 {
                            *t.cpu_ns.entry((tid, e.cpu)).or_default() += (e.ts - since) as u64;
                        }
                    }
                    for (tid, comm) in [(prev, &p["prev_comm"]), (next, &p["next_comm"])] {
                        let comm = comm.as_str().unwrap().to_string();
                        t.names.entry(tid).or_default().insert(comm.clone());
                        t.latest.insert(tid, comm);
                    }
                }
                "sched_process_fork" => {
                    let (ppid, child) = (p["parent_pid"].as_i64().unwrap(), p["child_tid"].as_i64().unwrap());
                    let cpid = p["child_pid"].as_i64().unwrap();
                    t.pid.insert(child, cpid);
                    if cpid != ppid {
                        let copy = fds.get(&ppid).cloned().unwrap_or_default();
                        fds.insert(cpid, copy);
                    }
                }
                "lttng_statedump_process_state" => {
                    t.pid.insert(p["tid"].as_i64().unwrap(), p["pid"].as_i64().unwrap());
                }
                name => {
                    let Some(&(tid, _)) = cur.get(&e.cpu) else { continue };
                    if tid == 0 {
                        continue;
                    }
                    let pid = t.pid.get(&tid).copied().unwrap_or(tid);
                    if let Some(call) = name.strip_prefix("syscall_entry_") {
                        if call == "close" {
                            fds.entry(pid).or_default().remove(&p["fd"].as_i64().unwrap());
                        }
                        pending.insert(tid, (call.to_string(), e.cpu, p.clone()));
                    } else if let Some(call) = name.strip_prefix("syscall_exit_") {
                        let Some((entered, cpu, args)) = pending.remove(&tid).filter(|(c, ..)| c == call) else { continue };
                        let ret = p["ret"].as_i64().unwrap();
                        let table = fds.entry(pid).or_default();
                        match entered.as_str() {
                            "open" | "openat" if ret >= 0 => {
                                table.insert(ret, args["filename"].as_str().unwrap().to_string());
                            }
                            "socket" if ret >= 0 => {
                                table.insert(ret, "socket".into());
                            }
                            c if ret > 0 && (READS.contains(&c) || WRITES.contains(&c)) => {
                                let fd = args["fd"].as_i64().unwrap();
                                let path = table.get(&fd).cloned().unwrap_or_else(|| format!("unknown (fd {fd})"));
                                t.bytes.entry((tid, cpu, path)).or_default()[usize::from(WRITES.contains(&c))] += ret as u64;
                            }
                            _ => {}
                        }
                    }
                }
            }
        }
        for (cpu, (tid, since)) in cur {
            if tid != 0 {
                *t.cpu_ns.entry((tid, cpu)).or_default() += (end - since) as u64;
            }
        }
        t
    }

    fn pid_of(&self, tid: i64) -> i64 {
        self.pid.get(&tid).copied().unwrap_or(tid)
    }

    /// The expected cpu report's numbers for the threads `keep` selects on the CPUs
    /// `cpus` selects: per thread, per CPU.
    fn cpu(&self, keep: impl Fn(i64) -> bool, cpus: impl Fn(u32) -> bool) -> (BTreeMap<i64, u64>, BTreeMap<u32, u64>) {
        let (mut threads, mut per_cpu) = (BTreeMap::new(), BTreeMap::new());
        for (&(tid, cpu), &ns) in &self.cpu_ns {
            if keep(tid) && cpus(cpu) && ns > 0 {
                *threads.entry(tid).or_default() += ns;
                *per_cpu.entry(cpu).or_default() += ns;
            }
        }
        (threads, per_cpu)
    }

    /// The expected io report's tables `(threads, processes, files)` as `id → [read,
    /// written]`.
    #[allow(clippy::type_complexity)]
    fn io(&self, keep: impl Fn(i64) -> bool, cpus: impl Fn(u32) -> bool) -> (BTreeMap<i64, [u64; 2]>, BTreeMap<i64, [u64; 2]>, BTreeMap<String, [u64; 2]>) {
        let (mut th, mut pr, mut fi) = (BTreeMap::new(), BTreeMap::new(), BTreeMap::new());
        for ((tid, cpu, path), b) in &self.bytes {
            if keep(*tid) && cpus(*cpu) {
                for (m, k) in [(&mut th, *tid), (&mut pr, self.pid_of(*tid))] {
                    let e: &mut [u64; 2] = m.entry(k).or_default();
                    e[0] += b[0];
                    e[1] += b[1];
                }
                let e: &mut [u64; 2] = fi.entry(path.clone()).or_default();
                e[0] += b[0];
                e[1] += b[1];
            }
        }
        (th, pr, fi)
    }
}

/// `report[table]` as `key → [read, written]`.
fn io_table<K: Ord>(report: &Value, table: &str, key: impl Fn(&Value) -> K) -> BTreeMap<K, [u64; 2]> {
    report[table].as_array().unwrap().iter().map(|r| (key(r), [r["read_bytes"].as_u64().unwrap(), r["write_bytes"].as_u64().unwrap()])).collect()
}

/// Checks the cpu report `r` against the truth for the selection.
fn check_cpu(r: &Value, truth: &Truth, keep: impl Fn(i64) -> bool, cpus: impl Fn(u32) -> bool, what: &str) {
    let (threads, per_cpu) = truth.cpu(keep, &cpus);
    let got: BTreeMap<i64, u64> = r["threads"].as_array().unwrap().iter().map(|t| (t["tid"].as_i64().unwrap(), t["cpu_ns"].as_u64().unwrap())).collect();
    assert_eq!(got, threads, "{what}: per-thread CPU time");
    // Every selected CPU has a row (0 when the selection did not run there).
    let got: BTreeMap<u32, u64> =
        r["cpus"].as_array().unwrap().iter().map(|c| (c.get("cpu").unwrap().as_u64().unwrap() as u32, c["busy_ns"].as_u64().unwrap())).collect();
    let want: BTreeMap<u32, u64> = (0..8).filter(|c| cpus(*c)).map(|c| (c, per_cpu.get(&c).copied().unwrap_or(0))).collect();
    assert_eq!(got, want, "{what}: per-CPU busy time");
    let mean = r["cpus"].as_array().unwrap().iter().map(|c| c["usage"].as_f64().unwrap()).sum::<f64>() / want.len() as f64;
    assert!((r["total_usage"].as_f64().unwrap() - mean).abs() < 1e-12, "{what}: total is the mean over the selected CPUs");
}

/// Checks the io report `r` against the truth for the selection.
fn check_io(r: &Value, truth: &Truth, keep: impl Fn(i64) -> bool, cpus: impl Fn(u32) -> bool, what: &str) {
    let (threads, processes, files) = truth.io(keep, cpus);
    assert!(!threads.is_empty(), "{what}: the selection did I/O");
    assert_eq!(io_table(r, "threads", |t| t["tid"].as_i64().unwrap()), threads, "{what}: per-thread I/O");
    assert_eq!(io_table(r, "processes", |p| p["pid"].as_i64().unwrap()), processes, "{what}: per-process I/O");
    assert_eq!(io_table(r, "files", |f| f["path"].as_str().unwrap().to_string()), files, "{what}: per-file I/O");
}

/// The expected count report's `(events, by_name, by_cpu)` for the threads `keep`
/// selects: every event of CPU `c` is the task's that `c`'s last `sched_switch` ran (a
/// switch is its `prev_tid`'s; before the first, that switch's `prev_tid`), read from
/// `dump --cpu c` (each CPU's events depend only on that CPU's switches).
fn count_truth(trace: &Path, keep: impl Fn(i64) -> bool) -> (u64, BTreeMap<String, u64>, BTreeMap<String, u64>) {
    let (mut events, mut by_name, mut by_cpu) = (0, BTreeMap::new(), BTreeMap::new());
    for cpu in 0..8 {
        let out = bin().arg("dump").arg(trace).args(["--cpu", &cpu.to_string()]).output().unwrap();
        assert!(out.status.success());
        let evs: Vec<Value> = String::from_utf8(out.stdout).unwrap().lines().map(|l| serde_json::from_str(l).unwrap()).collect();
        let switch = |e: &Value| e["name"] == "sched_switch";
        let mut cur = evs.iter().find(|e| switch(e)).map(|e| e["p"]["prev_tid"].as_i64().unwrap());
        for e in &evs {
            if cur.is_some_and(&keep) {
                events += 1;
                *by_name.entry(e["name"].as_str().unwrap().to_string()).or_default() += 1;
                *by_cpu.entry(cpu.to_string()).or_default() += 1;
            }
            if switch(e) {
                cur = e["p"]["next_tid"].as_i64();
            }
        }
    }
    (events, by_name, by_cpu)
}

/// Checks the count report `r` against [`count_truth`].
fn check_count(r: &Value, want: (u64, BTreeMap<String, u64>, BTreeMap<String, u64>), what: &str) {
    assert!(want.0 > 0, "{what}: the selection has events");
    assert_eq!(r["events"].as_u64().unwrap(), want.0, "{what}: events");
    assert_eq!(serde_json::from_value::<BTreeMap<String, u64>>(r["by_name"].clone()).unwrap(), want.1, "{what}: per name");
    assert_eq!(serde_json::from_value::<BTreeMap<String, u64>>(r["by_cpu"].clone()).unwrap(), want.2, "{what}: per CPU");
}

/// The shared trace, its truth, and its unfiltered begin/end.
fn setup(test: &str) -> Option<(std::path::PathBuf, Truth)> {
    let trace = testkit::shared_trace(test, "many-threads")?;
    let all = analyze(&trace, "cpu", &[]);
    let (begin, end) = (all["begin_ns"].as_i64().unwrap(), all["end_ns"].as_i64().unwrap());
    assert_eq!(all["cpus"].as_array().unwrap().len(), 8);
    let truth = Truth::replay(&events(&trace, 8), begin, end);
    // The model is the analyses' own, unfiltered: a check of the model itself.
    check_cpu(&all, &truth, |_| true, |_| true, "unfiltered");
    Some((trace, truth))
}

#[test]
fn tid_filters_every_table() {
    let Some((trace, truth)) = setup("tid_filters_every_table") else { return };
    // vlc (1382), lttng-consumerd (4298); multithread (2673), the one doing disk I/O.
    let tids = [1382, 4298, 2673];
    let keep = |t: i64| tids.contains(&t);
    check_cpu(&analyze(&trace, "cpu", &["--tid", "1382,4298", "--tid", "2673"]), &truth, keep, |_| true, "cpu --tid");
    check_count(&analyze(&trace, "count", &["--tid", "1382,4298,2673"]), count_truth(&trace, keep), "count --tid");
    let io = analyze(&trace, "io", &["--tid", "1382,4298,2673"]);
    check_io(&io, &truth, keep, |_| true, "io --tid");
    // Before the filter reached the file table, `-a io --tid` listed every file.
    assert!(io["files"].as_array().unwrap().len() < analyze(&trace, "io", &[])["files"].as_array().unwrap().len());
    // A filter that selects nothing says so.
    let out = bin().arg("analyze").arg(&trace).args(["-a", "cpu", "--tid", "999999"]).output().unwrap();
    assert!(out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("nothing in the range analysed matches --tid"), "{}", String::from_utf8_lossy(&out.stderr));
}

#[test]
fn pid_filters_every_table() {
    let Some((trace, truth)) = setup("pid_filters_every_table") else { return };
    // vlc's threads (process 1365) and multithread's (2673, which creates thousands).
    let keep = |t: i64| [1365, 2673].contains(&truth.pid_of(t));
    assert!(truth.cpu_ns.keys().filter(|(t, _)| keep(*t)).map(|(t, _)| t).collect::<BTreeSet<_>>().len() > 10);
    check_cpu(&analyze(&trace, "cpu", &["--pid", "1365,2673"]), &truth, keep, |_| true, "cpu --pid");
    check_io(&analyze(&trace, "io", &["--pid", "1365", "--pid", "2673"]), &truth, keep, |_| true, "io --pid");
    check_count(&analyze(&trace, "count", &["--pid", "1365,2673"]), count_truth(&trace, keep), "count --pid");
}

#[test]
fn procname_filters_every_table() {
    let Some((trace, truth)) = setup("procname_filters_every_table") else { return };
    // Threads whose latest name is `vlc` or `sudo`. Thread 10705 is `sudo` until it
    // execs `lttng`: it is not selected (a thread is selected by the name its row shows),
    // where lttng-cputop would count its time as `sudo` before the exec.
    let names = ["vlc", "sudo"];
    let keep = |t: i64| truth.latest.get(&t).is_some_and(|n| names.contains(&n.as_str()));
    assert!(truth.names[&10705].contains("sudo") && !keep(10705));
    check_cpu(&analyze(&trace, "cpu", &["--procname", "vlc,sudo"]), &truth, keep, |_| true, "cpu --procname");
    check_io(&analyze(&trace, "io", &["--procname", "vlc", "--procname", "sudo"]), &truth, keep, |_| true, "io --procname");
    // vlc's threads keep their one name: there lttng-cputop selects the same threads.
    let vlc = |t: i64| truth.latest.get(&t).is_some_and(|n| n == "vlc");
    assert!(truth.names.iter().filter(|(t, _)| vlc(**t)).all(|(_, n)| n.len() == 1));
    compare_cputop(&trace, &["--procname", "vlc"], &analyze(&trace, "cpu", &["--procname", "vlc"]), &truth, vlc, |_| true);
}

#[test]
fn cpu_filters_every_table() {
    let Some((trace, truth)) = setup("cpu_filters_every_table") else { return };
    let cpus = |c: u32| c == 1 || c == 3;
    let cpu = analyze(&trace, "cpu", &["--cpu", "1,3"]);
    check_cpu(&cpu, &truth, |_| true, cpus, "cpu --cpu");
    // io counts the reads and writes entered on the selected CPUs. (No peer here:
    // lttng-iousagetop ignores --cpu, with a warning, and refuses --tid and --procname.)
    check_io(&analyze(&trace, "io", &["--cpu", "1", "--cpu", "3"]), &truth, |_| true, cpus, "io --cpu");
    // count: the events of those CPUs' streams, as `dump --cpu` gives them.
    let count = analyze(&trace, "count", &["--cpu", "1,3"]);
    let by_cpu: BTreeMap<String, u64> = serde_json::from_value(count["by_cpu"].clone()).unwrap();
    assert_eq!(by_cpu.keys().map(String::as_str).collect::<Vec<_>>(), ["1", "3"]);
    let all = analyze(&trace, "count", &[]);
    for c in ["1", "3"] {
        assert_eq!(by_cpu[c], all["by_cpu"][c].as_u64().unwrap());
    }
    assert_eq!(count["events"].as_u64().unwrap(), by_cpu.values().sum::<u64>());
    compare_cputop(&trace, &["--cpu", "1,3"], &cpu, &truth, |_| true, cpus);
}

/// Compares the per-CPU usage of our cpu report `ours` with `lttng-cputop-mi ARGS`
/// (when installed) on the selected CPUs (`keep`, `cpus`: the selection ARGS makes).
///
/// They differ by one known amount, which the events prove lttng-cputop wrong about:
/// it starts every CPU's busy time at the trace's first event
/// (`current_task_start_ts = period_begin_ts` in `core/cputop.py`) whoever ran there,
/// even the idle task or a thread the filter leaves out, where tracecube credits that
/// head to the first switch's `prev_tid` only when it is selected (and not idle). So
/// each CPU must read exactly ours plus, when its first switch's `prev_tid` is 0 or not
/// selected, the time from the first event to that switch. (Its per-thread table is
/// not compared: with a thread filter, `_process_sched_switch_per_tid` gives a row to
/// every thread switched out before it filters, so it lists threads the filter leaves
/// out, most at 98 %.)
fn compare_cputop(trace: &Path, args: &[&str], ours: &Value, truth: &Truth, keep: impl Fn(i64) -> bool, cpus: impl Fn(u32) -> bool) {
    if !testkit::require_commands("filters_vs_lttng_cputop", &["lttng-cputop-mi"], "apt-get install python3-lttnganalyses") {
        return;
    }
    // lttng-analyses reads the tracer version from a directory named `kernel`.
    let dir = tempfile::tempdir().unwrap();
    let kernel = dir.path().join("kernel");
    std::os::unix::fs::symlink(trace, &kernel).unwrap();
    let out = std::process::Command::new("/usr/bin/python3").arg("/usr/bin/lttng-cputop-mi").args(args).arg(&kernel).output().unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let mi: Value = serde_json::from_slice(&out.stdout).unwrap();
    let theirs: BTreeMap<u32, f64> = mi["results"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|r| r["class"] == "per-cpu")
        .flat_map(|r| r["data"].as_array().unwrap().iter().map(|row| (row[0]["id"].as_u64().unwrap() as u32, row[1]["value"].as_f64().unwrap())))
        .collect();
    let mine: BTreeMap<u32, u64> =
        ours["cpus"].as_array().unwrap().iter().map(|c| (c["cpu"].as_u64().unwrap() as u32, c["busy_ns"].as_u64().unwrap())).collect();
    assert_eq!(theirs.keys().collect::<Vec<_>>(), mine.keys().collect::<Vec<_>>(), "the same CPUs listed");
    assert!(theirs.keys().all(|c| cpus(*c)));
    let (begin, end) = truth.range;
    let (mut same, mut head) = (0, 0);
    for (c, v) in &theirs {
        let (first, prev) = truth.first[c];
        let credited = prev != 0 && keep(prev);
        let want = mine[c] + if credited { 0 } else { (first - begin) as u64 };
        assert!((v - want as f64 / (end - begin) as f64).abs() < 1e-9, "cpu {c}: lttng-cputop {v}, ours {} ns, head {} ns", mine[c], first - begin);
        if credited || first == begin {
            same += 1;
        } else {
            head += 1;
        }
    }
    eprintln!("{args:?}: lttng-cputop agrees on {same} CPUs, adds the head on {head}");
}

/// The rows of `report[table]` keyed by `tid`.
fn by_tid(report: &Value, table: &str) -> BTreeMap<i64, Value> {
    report[table].as_array().unwrap().iter().map(|r| (r["tid"].as_i64().unwrap(), r.clone())).collect()
}

/// `rows` (occurrences with a `tid` and a duration field `dur`) of the threads `keep`
/// selects, the `n` longest first (then the earliest, then the smallest tid: the
/// analyses' order).
fn longest(rows: &Value, keep: impl Fn(i64) -> bool, dur: &str, at: &str, n: usize) -> Vec<Value> {
    let mut v: Vec<Value> = rows.as_array().unwrap().iter().filter(|r| keep(r["tid"].as_i64().unwrap())).cloned().collect();
    v.sort_by_key(|r| (std::cmp::Reverse(r[dur].as_u64().unwrap()), r[at].as_i64().unwrap(), r["tid"].as_i64().unwrap()));
    v.truncate(n);
    v
}

#[test]
fn latency_analyses_filter_every_table() {
    let Some(trace) = testkit::shared_trace("latency_analyses_filter_every_table", "many-threads") else { return };
    let keep = |t: i64| [4042, 2673, 1382].contains(&t);
    for (analysis, dur, at) in [("syscall", "duration_ns", "begin_ns"), ("sched", "latency_ns", "wakeup_ns")] {
        let all = analyze(&trace, analysis, &["--log"]);
        let some = analyze(&trace, analysis, &["--tid", "4042,2673,1382", "--log"]);
        // The threads' rows are theirs, whole; the processes only theirs.
        let want: BTreeMap<i64, Value> = by_tid(&all, "threads").into_iter().filter(|(t, _)| keep(*t)).collect();
        assert_eq!(by_tid(&some, "threads"), want, "{analysis} --tid: threads");
        let count = |r: &Value| r["latency"]["count"].as_u64().or(r["count"].as_u64()).unwrap();
        let procs: u64 = some["processes"].as_array().unwrap().iter().map(count).sum();
        assert_eq!(procs, want.values().map(count).sum::<u64>(), "{analysis} --tid: processes sum the threads");
        // Every occurrence, and the longest among the selected threads'.
        assert_eq!(some["log"].as_array().unwrap().len(), all["log"].as_array().unwrap().iter().filter(|r| keep(r["tid"].as_i64().unwrap())).count());
        assert_eq!(some["longest"].as_array().unwrap(), &longest(&all["log"], keep, dur, at, 10), "{analysis} --tid: longest");
    }
    compare_syscallstats(&trace, &analyze(&trace, "syscall", &["--tid", "4042,2673,1382"]));
    // --cpu partitions: each CPU's counts add up to the whole (syscalls by their exit's
    // CPU, wake-up latencies by the switch's, interrupts by their CPU).
    let total = |r: &Value, a: &str| -> u64 {
        match a {
            "syscall" => r["count"].as_u64().unwrap(),
            "sched" => r["total"]["count"].as_u64().unwrap(),
            _ => ["hard", "soft"].iter().flat_map(|t| r[t].as_array().unwrap()).map(|x| x["latency"]["count"].as_u64().unwrap()).sum(),
        }
    };
    for a in ["syscall", "sched", "irq"] {
        let whole = total(&analyze(&trace, a, &[]), a);
        let parts: Vec<u64> = (0..8).map(|c| total(&analyze(&trace, a, &["--cpu", &c.to_string()]), a)).collect();
        assert!(parts.iter().filter(|n| **n > 0).count() > 1, "{a}: {parts:?}");
        assert_eq!(parts.iter().sum::<u64>(), whole, "{a} --cpu: {parts:?}");
    }
}

/// Compares the per-thread call counts of our syscall report `ours` (`--tid
/// 4042,2673,1382`) with `lttng-syscallstats-mi --tid 4042,2673,1382` (when installed):
/// the same threads, calls and counts.
fn compare_syscallstats(trace: &Path, ours: &Value) {
    if !testkit::require_commands("filters_vs_lttng_syscallstats", &["lttng-syscallstats-mi"], "apt-get install python3-lttnganalyses") {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let kernel = dir.path().join("kernel");
    std::os::unix::fs::symlink(trace, &kernel).unwrap();
    let out =
        std::process::Command::new("/usr/bin/python3").arg("/usr/bin/lttng-syscallstats-mi").args(["--tid", "4042,2673,1382"]).arg(&kernel).output().unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let mi: Value = serde_json::from_slice(&out.stdout).unwrap();
    // (tid, call) → count; lttng-syscallstats titles each per-tid table "... TID: N)]".
    let mut theirs: BTreeMap<(i64, String), u64> = BTreeMap::new();
    for r in mi["results"].as_array().unwrap().iter().filter(|r| r["class"]["inherit"] == "per-tid") {
        let title = r["class"]["title"].as_str().unwrap();
        let tid: i64 = title.rsplit("TID: ").next().unwrap().trim_end_matches(")]").parse().unwrap();
        for row in r["data"].as_array().unwrap() {
            theirs.insert((tid, row[0]["name"].as_str().unwrap().to_string()), row[1]["value"].as_u64().unwrap());
        }
    }
    let mine: BTreeMap<(i64, String), u64> = ours["threads"]
        .as_array()
        .unwrap()
        .iter()
        .flat_map(|t| {
            t["calls"]
                .as_array()
                .unwrap()
                .iter()
                .map(move |c| ((t["tid"].as_i64().unwrap(), c["name"].as_str().unwrap().to_string()), c["latency"]["count"].as_u64().unwrap()))
        })
        .collect();
    assert!(theirs.len() > 10);
    assert_eq!(mine, theirs, "syscall --tid against lttng-syscallstats");
}
