//! `tracecube sql --cube DIR`: `cube_series` prints what `tracecube query --every
//! --format json` prints for the same question, on a cube built by `cube build`;
//! mistakes are clean errors.

use std::path::Path;
use std::process::Output;

use serde_json::Value;

use crate::support::bin;

fn ok(out: Output) -> Vec<u8> {
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    out.stdout
}

/// `(begin_ns, end_ns, tid, value)` of each row of `query --format json`.
fn query_rows(cube: &Path, every: &str) -> Vec<(u64, u64, String, i64)> {
    let v: Value = serde_json::from_slice(&ok(bin()
        .arg("query")
        .arg(cube)
        .args(["--metric", "cpu_time", "--by", "process:tid", "--every", every, "--format", "json"])
        .output()
        .unwrap()))
    .unwrap();
    let mut out = Vec::new();
    for w in v["windows"].as_array().unwrap() {
        for r in w["rows"].as_array().unwrap() {
            let tid = r["group"][0].as_str().unwrap().to_string();
            out.push((w["begin_ns"].as_u64().unwrap(), w["end_ns"].as_u64().unwrap(), tid, r["value"].as_f64().unwrap() as i64));
        }
    }
    out
}

#[test]
fn cube_series_prints_what_query_prints() {
    let dir = tempfile::tempdir().unwrap();
    let (trace, cube) = (dir.path().join("trace"), dir.path().join("cube"));
    ok(bin().args(["synth", "--cpus", "2", "--events", "20000", "--seed", "12", "-o"]).arg(&trace).output().unwrap());
    ok(bin().args(["cube", "build"]).arg(&trace).arg("-o").arg(&cube).output().unwrap());
    let want = query_rows(&cube, "100ms");
    assert!(want.len() > 10 && want.first().unwrap().0 != want.last().unwrap().0, "several windows and threads: {want:?}");
    // Without a trace, and beside one (the trace tables and the cube in one session).
    for traces in [vec![], vec![trace.clone()]] {
        let q = "SELECT * FROM cube_series('cpu_time', '100ms', 'process:tid')";
        let out = ok(bin().arg("sql").args(&traces).arg("--cube").arg(&cube).args(["--format", "json", "-e", q]).output().unwrap());
        let got: Vec<(u64, u64, String, i64)> = String::from_utf8(out)
            .unwrap()
            .lines()
            .map(|l| {
                let r: Value = serde_json::from_str(l).unwrap();
                (r["begin_ns"].as_u64().unwrap(), r["end_ns"].as_u64().unwrap(), r["tid"].as_str().unwrap().to_string(), r["value"].as_i64().unwrap())
            })
            .collect();
        assert_eq!(got, want, "with traces {traces:?}");
    }
    // Mistakes: an unknown metric, the cube given as a trace, no cube at --cube.
    let out = bin().arg("sql").arg("--cube").arg(&cube).args(["-e", "SELECT * FROM cube_series('cpu', '1s')"]).output().unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success() && err.contains("no metric \"cpu\"") && err.contains("cpu_time"), "{err}");
    let out = bin().arg("sql").arg(&cube).args(["-e", "SELECT 1"]).output().unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success() && err.contains("is a cube directory") && err.contains("--cube"), "{err}");
    let out = bin().arg("sql").arg("--cube").arg(&trace).args(["-e", "SELECT 1"]).output().unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success() && err.contains("cannot open cube"), "{err}");
}
