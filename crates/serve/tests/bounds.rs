//! The server bounds its work (issue 54 item 10): a query over the cost bound is
//! refused at once; a query whose client goes away stops; a client that sends no
//! headers, or leaves its connection idle, is disconnected. The server's CPU time is
//! read from `/proc/self/stat` (it runs in this process), so this file holds one test
//! alone: no other test's work shows in it.

use std::io::{Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::sync::{Arc, RwLock};
use std::time::{Duration, Instant};

use serde_json::Value;

/// CPU time of this process (all threads), from `/proc/self/stat`, in seconds.
fn cpu_seconds() -> f64 {
    let stat = std::fs::read_to_string("/proc/self/stat").unwrap();
    // Fields after the command name (which may hold spaces) in parentheses.
    let rest = &stat[stat.rfind(')').unwrap() + 2..];
    let f: Vec<&str> = rest.split(' ').collect();
    // utime and stime are fields 14 and 15 of the line, 11 and 12 after the name.
    let ticks: u64 = f[11].parse::<u64>().unwrap() + f[12].parse::<u64>().unwrap();
    ticks as f64 / 100.0
}

/// Sends `GET target` and reads the whole answer: (status, body).
fn get(addr: SocketAddr, target: &str) -> (u16, String) {
    let a = testkit::http::get(addr, target);
    (a.status, a.body)
}

/// How long until the server closes `s` (reads until end of stream), at most `limit`.
fn closed_after(mut s: TcpStream, limit: Duration) -> Duration {
    let t = Instant::now();
    s.set_read_timeout(Some(limit)).unwrap();
    let mut buf = [0u8; 4096];
    loop {
        match s.read(&mut buf) {
            Ok(0) | Err(_) => return t.elapsed(),
            Ok(_) => {}
        }
    }
}

#[test]
fn the_server_bounds_its_work() {
    let dir = tempfile::tempdir().unwrap();
    let cfg = synth::SynthConfig { cpus: 2, events: 30_000, seed: 7, ..Default::default() };
    let s = synth::generate(&cfg, dir.path()).unwrap();
    let config = cube::CubeConfig::fine();
    let (c, _) = cube_feed::build_from_trace(&s.trace_dir, &cube_feed::BuildOptions { config, threads: 1, ..Default::default() }).unwrap();
    let (first, last) = c.span().unwrap();
    // A heavy query: windows over the finest cells, as many as make it run about 3 s on
    // this machine (timed on 2,000 windows first), within the window limit.
    let query = |windows: u64| {
        let every = (last - first).div_ceil(windows).max(1);
        let args = cube::cli::QueryArgs {
            metric: "events".into(),
            by: vec!["cpu".into(), "operation:name".into()],
            every: Some(format!("{every}ns")),
            ..Default::default()
        };
        (args.to_request(&c).unwrap(), format!("/api/query?metric=events&by=cpu&by=operation:name&every={every}ns"))
    };
    let t = Instant::now();
    c.query(&query(2_000).0).unwrap();
    let per_window = t.elapsed().as_secs_f64() / 2_000.0;
    let windows = ((3.0 / per_window) as u64).clamp(2_000, 99_000);
    let (req, heavy) = query(windows);
    // Run to its end, it would take this long: the test cannot pass vacuously.
    let whole = Duration::from_secs_f64(per_window * windows as f64);
    assert!(whole > Duration::from_millis(1500), "the heavy query takes only {whole:?} ({windows} windows): make it heavier");
    let cost = c.query_cost(&req).unwrap();
    let cube = Arc::new(RwLock::new(c));

    // 1. Over the bound: refused before it runs, with the reason.
    let limits = serve::Limits { header_timeout: Duration::from_millis(600), max_query_cost: cost - 1, max_connections: 8, ..Default::default() };
    let server = serve::spawn_with("127.0.0.1:0".parse().unwrap(), cube.clone(), false, limits).unwrap();
    let t = Instant::now();
    let (status, body) = get(server.local_addr(), &heavy);
    assert_eq!(status, 400, "{body}");
    let v: Value = serde_json::from_str(&body).unwrap();
    assert!(v["error"].as_str().unwrap().contains("over the server's limit"), "{v}");
    assert!(t.elapsed() < Duration::from_secs(1), "refused in {:?}", t.elapsed());
    server.shutdown().unwrap();

    // 2. Under the bound, the client leaves: the query stops (run to its end, it would
    // take `whole`, about 3 s).
    let limits = serve::Limits { max_query_cost: u64::MAX, ..limits };
    let server = serve::spawn_with("127.0.0.1:0".parse().unwrap(), cube.clone(), false, limits).unwrap();
    let addr = server.local_addr();
    let mut s = TcpStream::connect(addr).unwrap();
    write!(s, "GET {heavy} HTTP/1.1\r\nHost: localhost\r\n\r\n").unwrap();
    std::thread::sleep(Duration::from_millis(200));
    drop(s);
    std::thread::sleep(Duration::from_millis(300));
    let (cpu0, t0) = (cpu_seconds(), Instant::now());
    std::thread::sleep(Duration::from_millis(1000));
    let busy = (cpu_seconds() - cpu0) / t0.elapsed().as_secs_f64();
    assert!(busy < 0.3, "the server still works for a client gone ({busy:.2} CPU), query alone {whole:?}");

    // 3. Headers that never come, and an idle keep-alive connection: closed after the
    // header timeout (0.6 s here), not minutes later.
    let mut silent = TcpStream::connect(addr).unwrap();
    silent.write_all(b"GET /api/info HTTP/1.1\r\nHost: loc").unwrap();
    let d = closed_after(silent, Duration::from_secs(10));
    assert!(d >= Duration::from_millis(500) && d < Duration::from_secs(3), "half-sent headers: closed after {d:?}");
    let mut idle = TcpStream::connect(addr).unwrap();
    write!(idle, "GET /api/info HTTP/1.1\r\nHost: localhost\r\n\r\n").unwrap();
    let d = closed_after(idle, Duration::from_secs(10));
    assert!(d < Duration::from_secs(3), "idle keep-alive connection: closed after {d:?}");

    // 4. The server still answers, and its memory stayed bounded.
    let (status, body) = get(addr, "/api/info");
    assert_eq!(status, 200, "{body}");
    let rss_kb: u64 = std::fs::read_to_string("/proc/self/status")
        .unwrap()
        .lines()
        .find_map(|l| l.strip_prefix("VmRSS:").map(|v| v.trim().trim_end_matches(" kB").parse().unwrap()))
        .unwrap();
    assert!(rss_kb < 512 * 1024, "resident memory {rss_kb} kB");
    server.shutdown().unwrap();
}
