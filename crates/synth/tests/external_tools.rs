//! Synthesized traces checked by the reference tools, when installed (CI installs them):
//! Babeltrace 2 reads them without a warning, the canonical-dump oracle decodes every event,
//! and lttng-analyses' cputop / iousagetop agree with truth.json. Without its tool a test
//! says so and passes on a developer's machine, and fails in CI (`testkit::skip`).

use std::path::Path;
use std::process::Command;

/// A synthesized trace with `background` percent of background kernel events.
fn synth(dir: &Path, cpus: u32, events: u64, seed: u64, background: u8) -> synth::Summary {
    let cfg = synth::SynthConfig { cpus, events, seed, packet_size: 64 * 1024, background, ..Default::default() };
    synth::generate(&cfg, dir).expect("generate")
}

#[test]
fn babeltrace2_reads_silently_and_counts_match() {
    if !testkit::require_commands("babeltrace2_reads_silently", &["babeltrace2"], "apt-get install babeltrace2") {
        return;
    }
    for (cpus, seed, background) in [(1, 1, 0), (4, 2, 0), (3, 3, 0), (4, 4, 70)] {
        let d = tempfile::tempdir().unwrap();
        let s = synth(d.path(), cpus, 30_000, seed, background);
        assert!(s.packets > u64::from(cpus), "want several packets per stream");
        let out = Command::new("babeltrace2").arg(&s.trace_dir).output().unwrap();
        assert!(out.status.success());
        assert!(out.stderr.is_empty(), "babeltrace2 printed: {}", String::from_utf8_lossy(&out.stderr));
        let lines = out.stdout.iter().filter(|&&b| b == b'\n').count() as u64;
        assert_eq!(lines, s.events);
    }
}

#[test]
fn canonical_dump_oracle_decodes_every_event() {
    let oracle = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../../shared/oracle/bt2_canonical.py");
    let ok = Command::new("/usr/bin/python3").args(["-c", "import bt2"]).output().map(|o| o.status.success()).unwrap_or(false);
    if !ok || !oracle.exists() {
        testkit::skip("canonical_dump_oracle", &format!("python3-bt2 or {} missing", oracle.display()));
        return;
    }
    for background in [0, 60] {
        let d = tempfile::tempdir().unwrap();
        let s = synth(d.path(), 2, 20_000, 7, background);
        let out = Command::new("/usr/bin/python3").arg(&oracle).arg(&s.trace_dir).output().unwrap();
        assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
        let text = String::from_utf8(out.stdout).unwrap();
        assert_eq!(text.lines().count() as u64, s.events);
        assert!(!text.contains("\"discarded\"") && !text.contains("\"lost_packets\""));
        for name in ["sched_switch", "irq_handler_entry", "kmem_kfree", "sched_wakeup"] {
            let n = text.lines().filter(|l| l.contains(&format!("\"name\":\"{name}\""))).count() as u64;
            assert_eq!(n, s.truth.events.get(name).copied().unwrap_or(0), "{name}");
        }
    }
}

#[test]
fn lttng_analyses_agree_with_truth() {
    if !testkit::require_commands("lttng_analyses_agree_with_truth", &["lttng-cputop-mi", "lttng-iousagetop-mi"], "apt-get install python3-lttnganalyses") {
        return;
    }
    // Background activity (irqs, timers, allocations, wake-ups) changes none of it.
    for background in [0, 60] {
        let d = tempfile::tempdir().unwrap();
        synth(d.path(), 4, 20_000, 21, background);
        let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/lttng_analyses_check.py");
        let out = Command::new("/usr/bin/python3").arg(script).arg(d.path()).output().unwrap();
        let text = String::from_utf8_lossy(&out.stdout);
        assert!(out.status.success(), "lttng-analyses disagree ({background}% background):\n{text}{}", String::from_utf8_lossy(&out.stderr));
        assert!(text.contains("AGREE"));
    }
}
