//! The web page in a real headless browser: `tracecube serve` on
//! the demo's cube (`tracecube demo --cube DIR`), driven by `scripts/browser_test.py`
//! (Chromium through the DevTools protocol): the chart has data, brushing a range makes the top-k table the
//! API's answer, clicking a process shows its threads, the breadcrumb rolls up. The
//! screenshot goes to `target/ci-artifacts/serve.png`.
//!
//! Needs Chromium (`apt-get install chromium`) and Python's `websocket-client`.
//! Without them the test is skipped with a reason, unless
//! `TRACECUBE_REQUIRE_BROWSER=1` (set by `.ci/run`), which makes it fail instead.

use std::io::{BufRead, BufReader};
use std::path::Path;
use std::process::{Command, Stdio};

use crate::browser_support;

use crate::support;
use support::{bin, Server};

#[test]
fn page_charts_brushes_and_drills_down_in_chromium() {
    let Some(chrome) = browser_support::chromium_or_skip() else { return };
    // The demo's cube (millisecond levels), on a smaller demo trace.
    let dir = tempfile::tempdir().unwrap();
    let cube = dir.path().join("demo.cube");
    let out = bin().args(["demo", "--events", "100000", "--cube"]).arg(&cube).output().unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    assert!(cube::file::is_cube(&cube));

    // A trace for the page's SQL box (`serve --trace`).
    let trace = dir.path().join("trace");
    assert!(bin().args(["synth", "--cpus", "2", "--events", "20000", "--seed", "4", "-o"]).arg(&trace).status().unwrap().success());

    let mut child = bin().arg("serve").arg(&cube).args(["--addr", "127.0.0.1:0", "--trace"]).arg(&trace).stdout(Stdio::piped()).spawn().unwrap();
    let stdout = child.stdout.take().unwrap();
    let server = Server(child);
    let mut line = String::new();
    BufReader::new(stdout).read_line(&mut line).unwrap();
    let url = line.split_whitespace().find(|w| w.starts_with("http://")).unwrap_or_else(|| panic!("no URL in {line:?}")).to_string();

    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let shot = root.join("target/ci-artifacts/serve.png");
    let _ = std::fs::remove_file(&shot);
    let out = Command::new("python3").arg(root.join("scripts/browser_test.py")).arg(&url).arg(&shot).arg(chrome).output().unwrap();
    drop(server);
    let report = String::from_utf8_lossy(&out.stdout);
    println!("{report}{}", String::from_utf8_lossy(&out.stderr));
    assert!(out.status.success(), "browser test failed:\n{report}");
    assert!(report.contains("ok: brushed table is the API's answer"), "{report}");
    assert!(report.contains("ok: threads of process"), "{report}");
    assert!(std::fs::metadata(&shot).is_ok_and(|m| m.len() > 10_000), "screenshot at {}", shot.display());
}
