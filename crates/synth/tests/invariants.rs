//! Consistency invariants of the simulated workload, checked on the event stream of several
//! seeds, and truth.json recomputed independently from the events.

use std::collections::{BTreeMap, HashMap};

use synth::events::{comm_str, KEvent, Syscall, SyscallArgs};
use synth::sim::EventSink;
use synth::{SynthConfig, Truth};

#[derive(Default)]
struct Recorder {
    events: Vec<(u32, u64, KEvent)>,
}

impl EventSink for Recorder {
    fn event(&mut self, cpu: u32, ts: u64, ev: &KEvent) -> synth::Result<()> {
        self.events.push((cpu, ts, ev.clone()));
        Ok(())
    }
}

fn run(cpus: u32, events: u64, seed: u64) -> (Vec<(u32, u64, KEvent)>, Truth) {
    run_with(SynthConfig { cpus, events, seed, ..Default::default() })
}

fn run_with(cfg: SynthConfig) -> (Vec<(u32, u64, KEvent)>, Truth) {
    let mut r = Recorder::default();
    let truth = synth::simulate(&cfg, &mut r).expect("simulation runs");
    (r.events, truth)
}

/// Replays the events, asserting the invariants, and recomputes the truth.
fn check(cpus: u32, events: &[(u32, u64, KEvent)], truth: &Truth) {
    let n = cpus as usize;
    // In the order a trace reader delivers them (timestamp, then CPU), not the order the
    // simulation produced them: an effect must not be visible before its event.
    let mut events = events.to_vec();
    events.sort_by_key(|e| (e.1, e.0));
    let events = &events[..];
    let begin = events.iter().map(|e| e.1).min().unwrap();
    let end = events.iter().map(|e| e.1).max().unwrap();
    assert_eq!((truth.begin_ns, truth.end_ns), (begin, end));
    let mut last_ts = vec![0u64; n];
    let mut cur: Vec<Option<i32>> = vec![None; n];
    let mut since = vec![begin; n];
    let mut running_initially: Vec<i32> = Vec::new();
    let mut pid_of: HashMap<i32, i32> = HashMap::new();
    let mut fds: HashMap<i32, BTreeMap<i64, String>> = HashMap::new();
    let mut in_syscall: HashMap<i32, (Syscall, SyscallArgs)> = HashMap::new();
    let mut cpu_ns: BTreeMap<i32, u64> = BTreeMap::new();
    let mut busy = vec![0u64; n];
    let mut rd: BTreeMap<i32, u64> = BTreeMap::new();
    let mut wr: BTreeMap<i32, u64> = BTreeMap::new();
    let mut files: BTreeMap<String, (u64, u64)> = BTreeMap::new();
    let mut per_name: BTreeMap<String, u64> = BTreeMap::new();
    let mut cpus_of: HashMap<i32, std::collections::BTreeSet<usize>> = HashMap::new();
    for (cpu, ts, ev) in events {
        let c = *cpu as usize;
        assert!(*ts >= last_ts[c], "time goes back on cpu {c}");
        last_ts[c] = *ts;
        *per_name.entry(ev.name().to_string()).or_default() += 1;
        match ev {
            KEvent::StatedumpProcess { tid, pid, status, .. } => {
                pid_of.insert(*tid, *pid);
                if *status == 6 {
                    running_initially.push(*tid);
                }
            }
            KEvent::StatedumpFd { pid, fd, filename } => {
                fds.entry(*pid).or_default().insert(i64::from(*fd), filename.to_string());
            }
            KEvent::SchedSwitch { prev_tid, next_tid, prev_comm, next_comm, .. } => {
                match cur[c] {
                    Some(t) => assert_eq!(*prev_tid, t, "cpu {c}: switched out a thread that is not running"),
                    None => {
                        // First switch on this CPU: the thread running when tracing started.
                        let i = running_initially.iter().position(|t| t == prev_tid).expect("initially running");
                        running_initially.remove(i);
                    }
                }
                if *prev_tid == 0 {
                    assert_eq!(comm_str(prev_comm), format!("swapper/{c}"));
                }
                if *next_tid == 0 {
                    assert_eq!(comm_str(next_comm), format!("swapper/{c}"));
                } else {
                    assert!(!cur.contains(&Some(*next_tid)), "tid {next_tid} runs on two CPUs");
                    cpus_of.entry(*next_tid).or_default().insert(c);
                }
                if *prev_tid != 0 {
                    *cpu_ns.entry(*prev_tid).or_default() += ts - since[c];
                    busy[c] += ts - since[c];
                }
                cur[c] = Some(*next_tid);
                since[c] = *ts;
            }
            KEvent::Fork { parent_tid, parent_pid, child_tid, child_pid, .. } => {
                assert_eq!(cur[c], Some(*parent_tid));
                assert_eq!(pid_of[parent_tid], *parent_pid);
                pid_of.insert(*child_tid, *child_pid);
                if child_pid != parent_pid {
                    let copy = fds.get(parent_pid).cloned().unwrap_or_default();
                    fds.insert(*child_pid, copy);
                }
            }
            KEvent::Exec { tid, .. } | KEvent::Exit { tid, .. } => assert_eq!(cur[c], Some(*tid)),
            KEvent::SyscallEntry(call, args) => {
                let tid = cur[c].expect("syscall before the CPU's first switch");
                assert_ne!(tid, 0, "idle does not make syscalls");
                assert!(in_syscall.insert(tid, (*call, args.clone())).is_none(), "nested syscall on {tid}");
                let table = fds.get(&pid_of[&tid]).unwrap_or_else(|| panic!("no fd table: tid {tid} pid {} at {ts} cpu {c}", pid_of[&tid]));
                let used = match args {
                    SyscallArgs::Read { fd, .. } | SyscallArgs::Write { fd, .. } | SyscallArgs::Close { fd } => Some(*fd),
                    SyscallArgs::Dup { fildes } => Some(*fildes),
                    SyscallArgs::Dup2 { oldfd, .. } => Some(*oldfd),
                    SyscallArgs::Openat { .. } => None,
                };
                if let Some(fd) = used {
                    assert!(table.contains_key(&i64::from(fd)), "tid {tid} uses fd {fd} that is not open");
                }
            }
            KEvent::SyscallExit { call, ret, .. } => {
                let tid = cur[c].expect("exit before the CPU's first switch");
                let (entry, args) = in_syscall.remove(&tid).expect("exit without entry on the running thread");
                assert_eq!(entry, *call);
                let table = fds.get_mut(&pid_of[&tid]).unwrap();
                match args {
                    SyscallArgs::Openat { filename, .. } if *ret >= 0 => {
                        assert!(table.insert(*ret, filename.to_string()).is_none(), "openat returned an open fd");
                    }
                    SyscallArgs::Close { fd } => assert!(table.remove(&i64::from(fd)).is_some()),
                    SyscallArgs::Dup { fildes } => {
                        let f = table[&i64::from(fildes)].clone();
                        assert!(table.insert(*ret, f).is_none());
                    }
                    SyscallArgs::Dup2 { oldfd, newfd } => {
                        assert_eq!(*ret, i64::from(newfd));
                        let f = table[&i64::from(oldfd)].clone();
                        table.insert(*ret, f);
                    }
                    SyscallArgs::Read { fd, .. } if *ret > 0 => {
                        *rd.entry(tid).or_default() += *ret as u64;
                        files.entry(table[&i64::from(fd)].clone()).or_default().0 += *ret as u64;
                    }
                    SyscallArgs::Write { fd, .. } if *ret > 0 => {
                        assert!(table.contains_key(&i64::from(fd)), "tid {tid} pid {} fd {fd} closed during write at {ts}", pid_of[&tid]);
                        *wr.entry(tid).or_default() += *ret as u64;
                        files.entry(table[&i64::from(fd)].clone()).or_default().1 += *ret as u64;
                    }
                    _ => {}
                }
            }
            _ => {}
        }
    }
    assert!(running_initially.is_empty() || cur.iter().all(|t| t.is_some()));
    for c in 0..n {
        if let Some(t) = cur[c] {
            if t != 0 {
                *cpu_ns.entry(t).or_default() += end - since[c];
                busy[c] += end - since[c];
            }
        }
    }
    // Truth recomputed from the events.
    assert_eq!(truth.events, per_name);
    assert_eq!(truth.events_total, events.len() as u64);
    for (c, b) in busy.iter().enumerate().take(n) {
        assert_eq!(truth.cpus[c].busy_ns, *b, "cpu {c} busy time");
    }
    for (tid, t) in &truth.threads {
        assert_eq!(t.cpu_ns, cpu_ns.get(tid).copied().unwrap_or(0), "tid {tid} cpu time");
        assert_eq!(t.read_bytes, rd.get(tid).copied().unwrap_or(0), "tid {tid} read");
        assert_eq!(t.write_bytes, wr.get(tid).copied().unwrap_or(0), "tid {tid} written");
    }
    let tf: BTreeMap<String, (u64, u64)> = truth.files.iter().map(|(k, v)| (k.clone(), (v.read_bytes, v.write_bytes))).collect();
    assert_eq!(tf, files);
    let pr: u64 = truth.processes.values().map(|p| p.read_bytes).sum();
    assert_eq!(pr, rd.values().sum::<u64>());
    // Realism: threads migrate, processes have several threads, all syscall kinds occur.
    assert!(cpus_of.values().any(|s| s.len() > 1) || n == 1, "no migration");
    assert!(truth.processes.len() < truth.threads.len(), "no multi-threaded process");
    for name in ["sched_switch", "syscall_entry_openat", "syscall_exit_close", "syscall_entry_read", "syscall_entry_writev"] {
        assert!(per_name.get(name).copied().unwrap_or(0) > 0, "no {name}");
    }
}

#[test]
fn invariants_hold_for_several_seeds() {
    for (cpus, seed) in [(1, 1), (2, 2), (4, 3), (8, 4), (3, 99)] {
        let (events, truth) = run(cpus, 40_000, seed);
        check(cpus, &events, &truth);
    }
}

/// Background activity takes its share of the events, in whole pieces (every irq,
/// softirq and timer entry has its exit, every allocation its free), and the workload
/// stays what the invariants check.
#[test]
fn background_activity_keeps_the_invariants() {
    for (cpus, seed, pct) in [(4, 3, 70u8), (2, 8, 30), (1, 5, 90)] {
        let (events, truth) = run_with(SynthConfig { cpus, events: 40_000, seed, background: pct, ..Default::default() });
        check(cpus, &events, &truth);
        let bg = events.iter().filter(|e| matches!(e.2, KEvent::Background(_))).count() as f64;
        let share = 100.0 * bg / events.len() as f64;
        assert!((share - f64::from(pct)).abs() < 5.0, "{pct}% asked, {share:.1}% made");
        let n = |name: &str| truth.events.get(name).copied().unwrap_or(0);
        for (entry, exit) in [
            ("irq_handler_entry", "irq_handler_exit"),
            ("softirq_entry", "softirq_exit"),
            ("timer_hrtimer_expire_entry", "timer_hrtimer_expire_exit"),
            ("kmem_kmalloc", "kmem_kfree"),
        ] {
            assert!(n(entry) > 0 && n(entry) == n(exit), "{entry} {} vs {exit} {}", n(entry), n(exit));
        }
        assert!(n("sched_wakeup") > 0);
    }
}

#[test]
fn process_life_cycle_events_occur() {
    let (events, truth) = run(4, 150_000, 5);
    check(4, &events, &truth);
    for name in ["sched_process_fork", "sched_process_exec", "sched_process_exit", "syscall_entry_dup", "syscall_entry_dup2"] {
        assert!(truth.events.get(name).copied().unwrap_or(0) > 0, "no {name}");
    }
}

#[test]
fn same_seed_same_trace_other_seed_other_trace() {
    let a = tempfile::tempdir().unwrap();
    let b = tempfile::tempdir().unwrap();
    let cfg = SynthConfig { cpus: 2, events: 20_000, seed: 11, ..Default::default() };
    synth::generate(&cfg, a.path()).unwrap();
    synth::generate(&cfg, b.path()).unwrap();
    for f in ["kernel/metadata", "kernel/channel0_0", "kernel/channel0_1", "kernel/index/channel0_1.idx", "truth.json"] {
        assert_eq!(std::fs::read(a.path().join(f)).unwrap(), std::fs::read(b.path().join(f)).unwrap(), "{f} differs");
    }
    let (e1, _) = run(2, 5_000, 11);
    let (e2, _) = run(2, 5_000, 12);
    assert_ne!(e1, e2);
}

#[test]
fn truth_round_trips_and_matches_summary() {
    let d = tempfile::tempdir().unwrap();
    let cfg = SynthConfig { cpus: 3, events: 10_000, seed: 8, ..Default::default() };
    let s = synth::generate(&cfg, d.path()).unwrap();
    let t = Truth::load(&s.truth_path).unwrap();
    assert_eq!(t, s.truth);
    assert_eq!(t.events_total, s.events);
    assert_eq!(t.cpus.iter().map(|c| c.events).sum::<u64>(), s.events);
}

#[test]
fn bad_config_is_an_error() {
    let d = tempfile::tempdir().unwrap();
    for cfg in [
        SynthConfig { cpus: 0, ..Default::default() },
        SynthConfig { events: 0, ..Default::default() },
        SynthConfig { packet_size: 5000, ..Default::default() },
        SynthConfig { threads: Some(0), ..Default::default() },
    ] {
        assert!(matches!(synth::generate(&cfg, d.path()), Err(synth::SynthError::Config(_))));
    }
}
