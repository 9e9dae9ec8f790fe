//! End-to-end test of `tracecube live` against a real LTTng relay daemon.
//!
//! A multi-threaded instrumented program (`tests/ustapp`, compiled here) is traced in a
//! live session sent to an `lttng-relayd` we start on free ports; `tracecube live`
//! follows it. Checked:
//! 1. what `tracecube live` fed to its cube is exactly what is in the relay daemon's
//!    on-disk copy: same canonical dump as `tracecube dump` of the copy, as many events
//!    as Babeltrace 2 prints, and (when `../shared/oracle` and python3-bt2 are there)
//!    the same records as Babeltrace 2's canonical dump; the cube answers equal those
//!    of `tracecube cube build` on the copy. A second program registers its event
//!    classes mid-session (metadata grows);
//! 2. the relay daemon killed and restarted mid-session (the session re-created on it):
//!    tracecube reconnects, receives all of the new session, and its loss report is
//!    right: every event of the old copy it did not receive is after the reported point;
//!    And the connection cut twice mid-session (a proxy; the relay stays up):
//!    tracecube reconnects and its dump still equals the relay's copy exactly (nothing
//!    twice, nothing missing);
//! 3. an overloaded consumer with the drop policy: drops counted, equal to the
//!    difference with the on-disk copy.
//!
//! Needs lttng-tools, liblttng-ust-dev and a C compiler. Without them the test is
//! skipped with the reason printed, unless `TRACECUBE_REQUIRE_LIVE=1` (then it fails).
//! Every daemon it starts is stopped by its pid, also on failure (guards).

use std::net::TcpListener;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

const BIN: &str = env!("CARGO_BIN_EXE_tracecube");

/// A child process stopped (SIGTERM to its pid, so that a session daemon takes its
/// consumer daemons down with it; SIGKILL after 5 s) and reaped when dropped.
struct Guard(Child);

impl Guard {
    /// SIGKILL now (a daemon that dies without warning).
    fn kill9(mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

impl Drop for Guard {
    fn drop(&mut self) {
        if let Ok(Some(_)) = self.0.try_wait() {
            return;
        }
        // SAFETY: signalling our own child by its pid; it is not reaped yet.
        unsafe {
            libc::kill(self.0.id() as libc::pid_t, libc::SIGTERM);
        }
        let t0 = Instant::now();
        while t0.elapsed() < Duration::from_secs(5) {
            if let Ok(Some(_)) = self.0.try_wait() {
                return;
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

fn have(cmd: &str) -> bool {
    Command::new(cmd).arg("--version").stdout(Stdio::null()).stderr(Stdio::null()).status().map(|s| s.success()).unwrap_or(false)
}

fn skip(reason: &str) {
    if std::env::var("TRACECUBE_REQUIRE_LIVE").as_deref() == Ok("1") {
        panic!("live test required (TRACECUBE_REQUIRE_LIVE=1) but: {reason}");
    }
    testkit::skip("live_lttng", reason);
    // Written to stderr directly, past the test harness's capture, so that logs show it.
    use std::io::Write;
    let _ = writeln!(std::io::stderr(), "SKIPPED live_lttng: {reason}");
}

fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0").and_then(|l| l.local_addr()).map(|a| a.port()).expect("a free port")
}

fn sh(cmd: &mut Command) -> (bool, String) {
    match cmd.output() {
        Ok(o) => (o.status.success(), format!("{}{}", String::from_utf8_lossy(&o.stdout), String::from_utf8_lossy(&o.stderr))),
        Err(e) => (false, e.to_string()),
    }
}

fn lttng(args: &[&str]) {
    let (ok, out) = sh(Command::new("lttng").args(args));
    assert!(ok, "lttng {args:?}: {out}");
}

struct Relay {
    _guard: Guard,
    ports: [u16; 3],
    out: PathBuf,
}

fn start_relay(ports: [u16; 3], out: &Path) -> Relay {
    std::fs::create_dir_all(out).unwrap();
    let child = Command::new("lttng-relayd")
        .arg("-o")
        .arg(out)
        .args(["-C", &format!("tcp://127.0.0.1:{}", ports[0]), "-D", &format!("tcp://127.0.0.1:{}", ports[1]), "-L", &format!("tcp://127.0.0.1:{}", ports[2])])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .expect("lttng-relayd starts");
    let guard = Guard(child);
    let t0 = Instant::now();
    while std::net::TcpStream::connect(("127.0.0.1", ports[2])).is_err() {
        assert!(t0.elapsed() < Duration::from_secs(10), "lttng-relayd did not listen");
        std::thread::sleep(Duration::from_millis(50));
    }
    Relay { _guard: guard, ports, out: out.into() }
}

fn create_session(name: &str, r: &Relay, subbuf: &str) {
    lttng(&["create", name, "--live=100000", &format!("--set-url=net://127.0.0.1:{}:{}", r.ports[0], r.ports[1])]);
    lttng(&["enable-channel", "-u", "-s", name, &format!("--subbuf-size={subbuf}"), "--num-subbuf=8", "--blocking-timeout=inf", "chan0"]);
    lttng(&["enable-event", "-u", "-s", name, "-c", "chan0", "tclive*"]);
    lttng(&["add-context", "-u", "-s", name, "-c", "chan0", "-t", "vtid", "-t", "procname"]);
    lttng(&["start", name]);
}

fn end_session(name: &str) {
    let _ = sh(Command::new("lttng").args(["stop", name]));
    let _ = sh(Command::new("lttng").args(["destroy", name]));
}

fn app(bin: &Path, threads: u32, iters: u32, pause_us: u32) -> Child {
    Command::new(bin).args([threads.to_string(), iters.to_string(), pause_us.to_string()]).env("LTTNG_UST_ALLOW_BLOCKING", "1").spawn().expect("the app runs")
}

fn wait_for(child: &mut Child, limit: Duration, what: &str) {
    let t0 = Instant::now();
    loop {
        if let Ok(Some(s)) = child.try_wait() {
            assert!(s.success(), "{what} failed: {s}");
            return;
        }
        if t0.elapsed() > limit {
            let _ = child.kill();
            let _ = child.wait();
            panic!("{what} did not finish in {limit:?}");
        }
        std::thread::sleep(Duration::from_millis(50));
    }
}

fn hostname() -> String {
    std::fs::read_to_string("/proc/sys/kernel/hostname").map(|s| s.trim().to_string()).unwrap_or_else(|_| "localhost".into())
}

fn tracecube_live(r: &Relay, session: &str, dir: &Path, extra: &[&str]) -> Guard {
    tracecube_live_at(r.ports[2], session, dir, extra)
}

fn tracecube_live_at(port: u16, session: &str, dir: &Path, extra: &[&str]) -> Guard {
    let url = format!("net://127.0.0.1:{port}/host/{}/{session}", hostname());
    let child = Command::new(BIN)
        .args(["live", &url, "--summary-every", "0"])
        .arg("--dump")
        .arg(dir.join("live.jsonl"))
        .arg("--cube-out")
        .arg(dir.join("live.cube"))
        .arg("--report")
        .arg(dir.join("report.json"))
        .args(extra)
        .stderr(std::fs::File::create(dir.join("live.err")).unwrap())
        .spawn()
        .expect("tracecube live starts");
    Guard(child)
}

/// Waits until a viewer is attached to `session` on the relay's live `port` (else a
/// short session could end before tracecube attached, and be gone).
fn wait_viewer(port: u16, session: &str) {
    let t0 = Instant::now();
    loop {
        let (_, out) = sh(Command::new(BIN).args(["live", "--list", &format!("net://127.0.0.1:{port}")]));
        if out.lines().any(|l| l.contains(&format!("/{session} ")) && l.contains(" 1 viewers")) {
            return;
        }
        assert!(t0.elapsed() < Duration::from_secs(30), "tracecube did not attach to {session}: {out}");
        std::thread::sleep(Duration::from_millis(50));
    }
}

fn lines(p: &Path) -> Vec<String> {
    std::fs::read_to_string(p).unwrap_or_default().lines().filter(|l| l.starts_with("{\"ts\"")).map(str::to_string).collect()
}

fn dump_of(trace: &Path) -> Vec<String> {
    let o = Command::new(BIN).arg("dump").arg(trace).output().unwrap();
    assert!(o.status.success(), "dump {}: {}", trace.display(), String::from_utf8_lossy(&o.stderr));
    String::from_utf8_lossy(&o.stdout).lines().filter(|l| l.starts_with("{\"ts\"")).map(str::to_string).collect()
}

fn report(dir: &Path) -> serde_json::Value {
    serde_json::from_str(&std::fs::read_to_string(dir.join("report.json")).expect("report written")).unwrap()
}

fn sorted(mut v: Vec<String>) -> Vec<String> {
    v.sort();
    v
}

struct Setup {
    _sessiond: Option<Guard>,
    apps: [PathBuf; 2],
    tmp: tempfile::TempDir,
}

fn setup() -> Option<Setup> {
    for t in ["lttng", "lttng-sessiond", "lttng-relayd", "cc"] {
        if !have(t) {
            skip(&format!("`{t}` not found (install lttng-tools, liblttng-ust-dev and a C compiler)"));
            return None;
        }
    }
    let tmp = tempfile::tempdir().unwrap();
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/ustapp");
    let mut apps = Vec::new();
    for p in ["a", "b"] {
        let bin = tmp.path().join(format!("app_{p}"));
        let (ok, out) =
            sh(Command::new("cc").args(["-O2", &format!("-DPROVIDER=tclive_{p}"), "-I"]).arg(&src).arg("-o").arg(&bin).arg(src.join("app.c")).args([
                "-llttng-ust",
                "-ldl",
                "-lpthread",
            ]));
        if !ok {
            skip(&format!("cannot build the instrumented program (liblttng-ust-dev?): {out}"));
            return None;
        }
        apps.push(bin);
    }
    // A session daemon: the one running, or ours.
    let sessiond = if sh(Command::new("lttng").arg("list")).0 {
        None
    } else {
        let child = Command::new("lttng-sessiond").arg("--no-kernel").stdout(Stdio::null()).stderr(Stdio::null()).spawn().expect("lttng-sessiond starts");
        let g = Guard(child);
        let t0 = Instant::now();
        while !sh(Command::new("lttng").arg("list")).0 {
            if t0.elapsed() > Duration::from_secs(15) {
                skip("lttng-sessiond did not come up");
                return None;
            }
            std::thread::sleep(Duration::from_millis(100));
        }
        Some(g)
    };
    Some(Setup { _sessiond: sessiond, apps: [apps[0].clone(), apps[1].clone()], tmp })
}

fn query_json(cube: &Path, q: &[&str]) -> String {
    let o = Command::new(BIN).arg("query").arg(cube).args(q).args(["--format", "json"]).output().unwrap();
    assert!(o.status.success(), "query {q:?}: {}", String::from_utf8_lossy(&o.stderr));
    String::from_utf8_lossy(&o.stdout).into_owned()
}

/// 1: exactly what the relay daemon wrote, as Babeltrace 2 reads it; same cube.
fn exact(s: &Setup) {
    let dir = s.tmp.path().join("exact");
    std::fs::create_dir_all(&dir).unwrap();
    let relay = start_relay([free_port(), free_port(), free_port()], &dir.join("relay"));
    let name = format!("tc-exact-{}", std::process::id());
    create_session(&name, &relay, "16K");
    let mut tc = tracecube_live(&relay, &name, &dir, &[]);
    wait_viewer(relay.ports[2], &name);
    let mut a = app(&s.apps[0], 4, 3000, 2000);
    wait_for(&mut a, Duration::from_secs(60), "app a");
    // A second program: its event classes reach the metadata mid-session.
    let mut b = app(&s.apps[1], 2, 1000, 2000);
    wait_for(&mut b, Duration::from_secs(60), "app b");
    end_session(&name);
    wait_for(&mut tc.0, Duration::from_secs(60), "tracecube live (end of session)");
    let got = lines(&dir.join("live.jsonl"));
    let want = dump_of(&relay.out);
    assert_eq!(got.len(), 4 * 3600 + 2 * 1200, "every event the programs emitted");
    // The same records, and in time order (events of different streams with equal
    // timestamps may come in another order than the offline merge's).
    let ts = |l: &String| -> i64 { l[6..].split([',', '}']).next().unwrap().parse().unwrap() };
    assert!(got.windows(2).all(|w| ts(&w[0]) <= ts(&w[1])), "live dump in time order");
    let (gs, ws) = (sorted(got.clone()), sorted(want.clone()));
    if let Some(i) = (0..gs.len().min(ws.len())).find(|&i| gs[i] != ws[i]) {
        panic!("live dump differs from the dump of the relay's copy ({} / {} records), first difference:\n{}\n{}", gs.len(), ws.len(), gs[i], ws[i]);
    }
    assert_eq!(gs.len(), ws.len(), "live dump vs the dump of the relay's copy");
    assert!(got.iter().any(|l| l.contains("tclive_b:note")), "late event classes decoded");
    if testkit::require_commands("live_lttng's Babeltrace 2 count", &["babeltrace2"], "apt-get install babeltrace2") {
        let o = Command::new("babeltrace2").arg(&relay.out).output().unwrap();
        let n = String::from_utf8_lossy(&o.stdout).lines().count();
        assert_eq!(n, got.len(), "Babeltrace 2 prints as many events");
    }
    let shared = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../../shared/oracle");
    if shared.join("bt2_canonical.py").exists() && sh(Command::new("/usr/bin/python3").args(["-c", "import bt2"])).0 {
        let o = Command::new("/usr/bin/python3").arg(shared.join("bt2_canonical.py")).arg(&relay.out).output().unwrap();
        std::fs::write(dir.join("bt2.jsonl"), &o.stdout).unwrap();
        let (ok, out) = sh(Command::new("python3").arg(shared.join("compare.py")).arg(dir.join("bt2.jsonl")).arg(dir.join("live.jsonl")));
        assert!(ok, "Babeltrace 2's canonical dump of the relay's copy differs: {out}");
    } else {
        testkit::skip("live_lttng's canonical comparison", "../shared/oracle or python3-bt2 absent (event count compared)");
    }
    // The live cube's levels (the defaults), not the ones fitted to the trace's span.
    let levels = "[[level]]\ngranularity = \"1s\"\nspan = \"5min\"\n[[level]]\ngranularity = \"5min\"\nspan = \"24h\"\n\
                  [[level]]\ngranularity = \"1h\"\nspan = \"2w\"\n[[level]]\ngranularity = \"6h\"\nspan = \"75d\"\n";
    std::fs::write(dir.join("cube.toml"), levels).unwrap();
    let (ok, out) =
        sh(Command::new(BIN).arg("cube").arg("build").arg(&relay.out).arg("-o").arg(dir.join("off.cube")).arg("--config").arg(dir.join("cube.toml")));
    assert!(ok, "cube build: {out}");
    // Answers compared without `origin_ns` (the first update's time, which depends on
    // where the feed flushed), over the whole history and absolute ranges.
    let first: i64 = got[0][6..].split([',', '}']).next().unwrap().parse().unwrap();
    let (a, b) = (first / 1_000_000_000 * 1_000_000_000, first / 1_000_000_000 * 1_000_000_000 + 3_000_000_000);
    let range = format!("{a}..{b}");
    let q1: &[&str] = &["--metric", "events", "--by", "operation:name"];
    let q2: &[&str] = &["--metric", "events", "--by", "cpu:cpu"];
    let q3: &[&str] = &["--metric", "events", "--by", "operation:name", "--range", &range];
    for q in [q1, q2, q3] {
        let strip = |s: String| {
            let mut v: serde_json::Value = serde_json::from_str(&s).unwrap();
            v.as_object_mut().unwrap().remove("origin_ns");
            v
        };
        assert_eq!(strip(query_json(&dir.join("live.cube"), q)), strip(query_json(&dir.join("off.cube"), q)), "query {q:?}");
    }
    let r = report(&dir);
    assert_eq!(r["stats"]["dropped_events"], 0);
    assert_eq!(r["stats"]["events"], got.len() as u64);
}

/// 2: the relay daemon killed and restarted mid-session.
fn restart(s: &Setup) {
    let dir = s.tmp.path().join("restart");
    std::fs::create_dir_all(&dir).unwrap();
    let ports = [free_port(), free_port(), free_port()];
    let relay = start_relay(ports, &dir.join("relay1"));
    let name = format!("tc-restart-{}", std::process::id());
    create_session(&name, &relay, "16K");
    let mut tc = tracecube_live(&relay, &name, &dir, &["--reconnect-for", "30"]);
    wait_viewer(relay.ports[2], &name);
    let mut a = app(&s.apps[0], 2, 4000, 20000);
    std::thread::sleep(Duration::from_millis(700));
    relay._guard.kill9(); // mid-session, without warning
    std::thread::sleep(Duration::from_millis(300));
    let relay2 = start_relay(ports, &dir.join("relay2"));
    wait_for(&mut a, Duration::from_secs(60), "app a");
    end_session(&name);
    create_session(&name, &relay2, "16K");
    wait_viewer(relay2.ports[2], &name);
    let mut b = app(&s.apps[1], 2, 1000, 2000);
    wait_for(&mut b, Duration::from_secs(60), "app b");
    end_session(&name);
    wait_for(&mut tc.0, Duration::from_secs(90), "tracecube live after the restart");
    let got = sorted(lines(&dir.join("live.jsonl")));
    let old = sorted(dump_of(&dir.join("relay1")));
    let new = sorted(dump_of(&dir.join("relay2")));
    let r = report(&dir);
    assert!(r["source"]["reconnections"].as_u64().unwrap() >= 1, "reconnected: {r}");
    // Every event of the new session was received, and nothing else but old ones.
    let (from_new, from_old): (Vec<_>, Vec<_>) = got.iter().cloned().partition(|l| l.contains("tclive_b"));
    assert_eq!(from_new, new, "all of the session re-created on the restarted relay");
    let old_set: std::collections::HashSet<&String> = old.iter().collect();
    assert!(from_old.iter().all(|l| old_set.contains(l)), "received only what the old relay had");
    // The loss report: per stream, everything after a clock value is lost. Every event
    // of the old copy not received is after the earliest of these points.
    let losses: Vec<String> = r["source"]["losses"].as_array().unwrap().iter().map(|v| v.as_str().unwrap().to_string()).collect();
    assert!(losses.iter().any(|l| l.contains("lost")), "loss reported: {losses:?}");
    let mut points: Vec<u64> = Vec::new();
    for l in &losses {
        for part in l.split("clock value ").skip(1) {
            points.push(part.split_whitespace().next().unwrap().parse().unwrap());
        }
    }
    let set = ctf::trace::TraceSet::open(&dir.join("relay1")).unwrap();
    let conv = set.traces[0].clocks[0];
    let got_set: std::collections::HashSet<&String> = from_old.iter().collect();
    let missing: Vec<&String> = old.iter().filter(|l| !got_set.contains(l)).collect();
    if let Some(&p) = points.iter().min() {
        let p_ns = conv.to_ns(p);
        for m in &missing {
            let ts: i64 = m[6..].split([',', '}']).next().unwrap().parse().unwrap();
            assert!(ts > p_ns, "an event before the reported loss point was lost: {m}");
        }
    } else {
        assert!(missing.is_empty(), "events lost without a reported point: {}", missing.len());
    }
    eprintln!(
        "live_lttng restart: received {} of the old copy's {} events, {} lost as reported; {} of the new session",
        from_old.len(),
        old.len(),
        missing.len(),
        from_new.len()
    );
}

/// A TCP proxy in front of the relay's live port whose connections the test can cut.
struct Proxy {
    port: u16,
    conns: std::sync::Arc<std::sync::Mutex<Vec<std::net::TcpStream>>>,
}

impl Proxy {
    fn start(to: u16) -> Proxy {
        let l = TcpListener::bind("127.0.0.1:0").unwrap();
        let port = l.local_addr().unwrap().port();
        let conns: std::sync::Arc<std::sync::Mutex<Vec<std::net::TcpStream>>> = Default::default();
        let c2 = conns.clone();
        std::thread::spawn(move || {
            for client in l.incoming().flatten() {
                let Ok(server) = std::net::TcpStream::connect(("127.0.0.1", to)) else { continue };
                let mut list = c2.lock().unwrap();
                for (a, b) in [(&client, &server), (&server, &client)] {
                    let (mut r, mut w) = (a.try_clone().unwrap(), b.try_clone().unwrap());
                    std::thread::spawn(move || {
                        let _ = std::io::copy(&mut r, &mut w);
                        let _ = w.shutdown(std::net::Shutdown::Both);
                    });
                }
                list.push(client);
                list.push(server);
            }
        });
        Proxy { port, conns }
    }

    /// Cuts every connection (the viewer sees the relay go away).
    fn cut(&self) {
        for c in self.conns.lock().unwrap().drain(..) {
            let _ = c.shutdown(std::net::Shutdown::Both);
        }
    }
}

/// 2b: the connection to the relay lost twice mid-session (the relay stays up): after
/// each reconnection nothing is received twice and nothing is missing.
fn connection_cuts(s: &Setup) {
    let dir = s.tmp.path().join("cuts");
    std::fs::create_dir_all(&dir).unwrap();
    let relay = start_relay([free_port(), free_port(), free_port()], &dir.join("relay"));
    let proxy = Proxy::start(relay.ports[2]);
    let name = format!("tc-cuts-{}", std::process::id());
    create_session(&name, &relay, "16K");
    let mut tc = tracecube_live_at(proxy.port, &name, &dir, &["--reconnect-for", "30"]);
    wait_viewer(relay.ports[2], &name);
    let mut a = app(&s.apps[0], 2, 10000, 20000);
    for _ in 0..2 {
        std::thread::sleep(Duration::from_millis(400));
        proxy.cut();
    }
    wait_for(&mut a, Duration::from_secs(60), "app a");
    end_session(&name);
    wait_for(&mut tc.0, Duration::from_secs(90), "tracecube live after the cuts");
    let r = report(&dir);
    assert!(r["source"]["reconnections"].as_u64().unwrap() >= 2, "reconnected twice: {r}");
    let got = lines(&dir.join("live.jsonl"));
    let want = dump_of(&relay.out);
    let err = std::fs::read_to_string(dir.join("live.err")).unwrap_or_default();
    assert_eq!(got.len(), 2 * 12000, "every event once; tracecube said: {err}");
    assert!(sorted(got) == sorted(want), "the live dump differs from the relay's copy after reconnections");
    eprintln!("live_lttng cuts: {} reconnections, {} packets already received skipped", r["source"]["reconnections"], r["source"]["duplicates_skipped"]);
}

/// 3: an overloaded consumer with the drop policy.
fn overload(s: &Setup) {
    let dir = s.tmp.path().join("overload");
    std::fs::create_dir_all(&dir).unwrap();
    let relay = start_relay([free_port(), free_port(), free_port()], &dir.join("relay"));
    let name = format!("tc-overload-{}", std::process::id());
    create_session(&name, &relay, "4K");
    let mut tc = tracecube_live(&relay, &name, &dir, &["--overload", "drop", "--buffer", "4", "--interval-ms", "1", "--consumer-delay-us", "20000"]);
    let mut a = app(&s.apps[0], 4, 20000, 0);
    wait_for(&mut a, Duration::from_secs(60), "app a");
    end_session(&name);
    wait_for(&mut tc.0, Duration::from_secs(90), "tracecube live (overloaded)");
    let on_disk = dump_of(&relay.out).len() as u64;
    let r = report(&dir);
    let (ev, dropped) = (r["stats"]["events"].as_u64().unwrap(), r["stats"]["dropped_events"].as_u64().unwrap());
    assert!(dropped > 0, "the consumer was overloaded: {r}");
    assert_eq!(lines(&dir.join("live.jsonl")).len() as u64, ev);
    assert_eq!(ev + dropped, on_disk, "drops = the difference with the on-disk copy");
}

#[test]
fn live_session_from_a_relay_daemon() {
    let Some(s) = setup() else { return };
    exact(&s);
    restart(&s);
    connection_cuts(&s);
    overload(&s);
}
