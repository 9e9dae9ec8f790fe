//! Synthesized traces checked by the reference tools, when installed (CI installs them):
//! Babeltrace 2 reads them without a warning, the canonical-dump oracle decodes every event,
//! and lttng-analyses' cputop / iousagetop agree with truth.json. Each test prints a notice
//! and passes when its tool is missing.

use std::path::Path;
use std::process::Command;

fn have(tool: &str) -> bool {
    Command::new("sh").arg("-c").arg(format!("command -v {tool}")).output().map(|o| o.status.success()).unwrap_or(false)
}

fn synth(dir: &Path, cpus: u32, events: u64, seed: u64) -> synth::Summary {
    let cfg = synth::SynthConfig { cpus, events, seed, packet_size: 64 * 1024, ..Default::default() };
    synth::generate(&cfg, dir).expect("generate")
}

#[test]
fn babeltrace2_reads_silently_and_counts_match() {
    if !have("babeltrace2") {
        eprintln!("notice: babeltrace2 not installed; test skipped");
        return;
    }
    for (cpus, seed) in [(1, 1), (4, 2), (3, 3)] {
        let d = tempfile::tempdir().unwrap();
        let s = synth(d.path(), cpus, 30_000, seed);
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
        eprintln!("notice: python3-bt2 or {} missing; test skipped", oracle.display());
        return;
    }
    let d = tempfile::tempdir().unwrap();
    let s = synth(d.path(), 2, 20_000, 7);
    let out = Command::new("/usr/bin/python3").arg(&oracle).arg(&s.trace_dir).output().unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let text = String::from_utf8(out.stdout).unwrap();
    assert_eq!(text.lines().count() as u64, s.events);
    assert!(!text.contains("\"discarded\"") && !text.contains("\"lost_packets\""));
    let switches = text.lines().filter(|l| l.contains("\"name\":\"sched_switch\"")).count() as u64;
    assert_eq!(switches, s.truth.events["sched_switch"]);
}

#[test]
fn lttng_analyses_agree_with_truth() {
    if !have("lttng-cputop-mi") || !have("lttng-iousagetop-mi") {
        eprintln!("notice: lttng-analyses (python3-lttnganalyses) not installed; test skipped");
        return;
    }
    let d = tempfile::tempdir().unwrap();
    synth(d.path(), 4, 20_000, 21);
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/lttng_analyses_check.py");
    let out = Command::new("/usr/bin/python3").arg(script).arg(d.path()).output().unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "lttng-analyses disagree:\n{text}{}", String::from_utf8_lossy(&out.stderr));
    assert!(text.contains("AGREE"));
}
