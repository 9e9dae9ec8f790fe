//! Whole outputs, in the manner of ripgrep's CLI tests: `info`, `analyze -a
//! count|cpu|io` in text, json and lami (20 rows), `query` on a cube, and `sql` in
//! table, csv and json, on two shared traces,
//! each equal byte for byte to its file in `tests/golden/` (TZ=UTC, the trace's path
//! written `TRACE`). The numbers are checked against lttng-analyses elsewhere
//! (`crates/analysis/tests`); these files pin how they are shown, so that any change
//! of the output is a visible diff in review. `TRACECUBE_UPDATE_GOLDEN=1` rewrites them.

use std::path::{Path, PathBuf};

use crate::support;
use support::bin;

fn golden_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/golden")
}

/// Runs `tracecube args` (TZ=UTC), with `trace` written `TRACE` and `cube` `CUBE` in
/// the output, and compares it with (or, when updating, writes) `golden/name`.
fn check(name: &str, args: &[&str], trace: &Path, cube: &Path, failures: &mut Vec<String>) {
    let out = bin().args(args).env("TZ", "UTC").output().unwrap();
    assert!(out.status.success(), "{args:?}: {}", String::from_utf8_lossy(&out.stderr));
    let text = String::from_utf8(out.stdout).unwrap().replace(cube.to_str().unwrap(), "CUBE").replace(trace.to_str().unwrap(), "TRACE");
    let path = golden_dir().join(name);
    if std::env::var_os("TRACECUBE_UPDATE_GOLDEN").is_some() {
        std::fs::write(&path, &text).unwrap();
        return;
    }
    match std::fs::read_to_string(&path) {
        Ok(want) if want == text => {}
        Ok(want) => {
            let line = want.lines().zip(text.lines()).position(|(a, b)| a != b).unwrap_or(want.lines().count().min(text.lines().count()));
            failures.push(format!(
                "{name} ({args:?}) differs from line {}:\n  want: {:?}\n  got:  {:?}",
                line + 1,
                want.lines().nth(line),
                text.lines().nth(line)
            ));
        }
        Err(e) => failures.push(format!("{}: {e} (TRACECUBE_UPDATE_GOLDEN=1 writes it)", path.display())),
    }
}

#[test]
fn outputs_equal_their_golden_files() {
    let mut failures = Vec::new();
    for name in ["many-threads", "lttng-recorded/kemu-small"] {
        let Some(trace) = testkit::shared_trace("golden", name) else { return };
        let short = name.rsplit('/').next().unwrap();
        let dir = tempfile::tempdir().unwrap();
        let cube = dir.path().join("c.cube");
        let (t, c) = (trace.to_str().unwrap(), cube.to_str().unwrap());
        check(&format!("{short}.info.txt"), &["info", t], &trace, &cube, &mut failures);
        for a in ["count", "cpu", "io"] {
            for (format, ext) in [("text", "txt"), ("json", "json"), ("lami", "lami.json")] {
                // (json and lami list every thread by default: 20 rows keep the files small.)
                check(&format!("{short}.{a}.{ext}"), &["analyze", t, "-a", a, "--format", format, "--limit", "20"], &trace, &cube, &mut failures);
            }
        }
        for (format, ext) in [("text", "txt"), ("json", "json"), ("lami", "lami.json")] {
            // (Per-thread tables of every call: 5 threads, and the 10 longest calls with
            // their files.)
            let args = ["analyze", t, "-a", "syscall", "--format", format, "--limit", "5", "--top", "10"];
            check(&format!("{short}.syscall.{ext}"), &args, &trace, &cube, &mut failures);
        }
        let out = bin().args(["cube", "build", t, "-o", c]).output().unwrap();
        assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
        check(&format!("{short}.query.txt"), &["query", c, "--metric", "cpu_time", "--by", "process:tid", "--top", "5"], &trace, &cube, &mut failures);
        check(&format!("{short}.query-bytes.txt"), &["query", c, "--metric", "bytes_read", "--by", "process:pid", "--top", "5"], &trace, &cube, &mut failures);
        check(&format!("{short}.query-events.txt"), &["query", c, "--metric", "events", "--by", "operation:name", "--top", "3"], &trace, &cube, &mut failures);
        let queries = "SELECT name, count(*) AS n FROM events GROUP BY name ORDER BY n DESC, name LIMIT 5; \
                       SELECT name, count(*) AS calls, max(duration_ns) AS longest_ns FROM syscalls GROUP BY name ORDER BY calls DESC, name LIMIT 5";
        for (format, ext) in [("table", "txt"), ("csv", "csv"), ("json", "json")] {
            check(&format!("{short}.sql.{ext}"), &["sql", t, "-j", "3", "--format", format, "-e", queries], &trace, &cube, &mut failures);
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}
