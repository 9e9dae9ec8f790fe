//! Live mode in a real headless browser: the page of a server started with
//! `live: true` refreshes on its own when the cube grows. Driven by
//! `scripts/browser_test.py --live` (Chromium through the DevTools protocol).
//!
//! Needs Chromium and Python's `websocket-client`; skipped with a reason without
//! them, unless `TRACECUBE_REQUIRE_BROWSER=1` (set by `.ci/run`).

use std::io::{BufRead, BufReader, Read};
use std::path::Path;
use std::process::{Command, Stdio};
use std::sync::{Arc, RwLock};

use cube::{CellId, Cube, CubeConfig};

use crate::support;

/// The `cpu_time` cell of thread `tid` of process `pid` on CPU 0.
fn thread_cell(c: &mut Cube, pid: &str, tid: &str) -> CellId {
    let m = c.schema.metric("cpu_time").unwrap();
    let p = c.schema.dims[2].member(&["other", "app", pid, tid]);
    let cpu = c.schema.dims[1].member(&["0"]);
    c.cell(m, &[p, cpu])
}

#[test]
fn live_page_refreshes_on_its_own() {
    let Some(chrome) = support::browser::chromium_or_skip() else { return };
    let ms = 1_000_000u64;
    let mut c = Cube::new(CubeConfig::fine()).unwrap();
    let a = thread_cell(&mut c, "10", "11");
    for t in 1..50 {
        c.add(t * ms, a, 500_000).unwrap();
    }
    c.flush().unwrap();
    let shared = Arc::new(RwLock::new(c));
    let server = serve::spawn("127.0.0.1:0".parse().unwrap(), shared.clone(), true).unwrap();
    let url = format!("http://{}/", server.local_addr());

    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../scripts/browser_test.py");
    let mut child = Command::new("python3").arg(script).arg("--live").arg(&url).arg(chrome).stdout(Stdio::piped()).stderr(Stdio::piped()).spawn().unwrap();
    let mut out = BufReader::new(child.stdout.take().unwrap());
    let mut seen = String::new();
    loop {
        let mut line = String::new();
        if out.read_line(&mut line).unwrap() == 0 {
            let mut err = String::new();
            child.stderr.take().unwrap().read_to_string(&mut err).unwrap();
            panic!("the script ended before the page loaded:\n{seen}{err}");
        }
        seen += &line;
        if line.starts_with("ok: live page loaded") {
            break;
        }
    }
    {
        // A new, busier process appears.
        let mut c = shared.write().unwrap();
        let b = thread_cell(&mut c, "20", "21");
        for t in 50..200 {
            c.add(t * ms, b, 900_000).unwrap();
        }
        c.flush().unwrap();
    }
    out.read_to_string(&mut seen).unwrap();
    let status = child.wait().unwrap();
    println!("{seen}");
    assert!(status.success(), "live browser test failed:\n{seen}");
    assert!(seen.contains("ok: live page refreshed") && seen.contains("'20'"), "{seen}");
    server.shutdown().unwrap();
}
