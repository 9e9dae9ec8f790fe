//! A fleet on a Ballista cluster: a scheduler and two executors as separate
//! processes on 127.0.0.1 answer `tracecube sql --cluster` exactly as `tracecube sql`
//! answers on one machine, over eight synthesized hosts' traces; and still exactly
//! when an executor is killed during a query (the scheduler notices the missing
//! heartbeats and the other executor, asking for work, runs the lost tasks again).
//! A host whose trace is damaged fails the query as on one machine, with the file,
//! offset and cause, and the cluster stays up. A fleet cube built on the cluster
//! (`cube build --cluster`) is byte for byte the local `cube build` of the same
//! traces, also when an executor is killed during the build.

use std::net::{SocketAddr, TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

use crate::support::{bin, Server};

/// Hosts of the fleet.
const HOSTS: u64 = 8;

/// The queries of the comparison: every table kind (the events table, a class table
/// with a pushed-down filter, analysis tables), aggregations that shuffle, and a join.
const QUERIES: [&str; 5] = [
    "SELECT trace, count(*) AS n, min(ts) AS first, max(ts) AS last FROM events GROUP BY trace ORDER BY trace",
    "SELECT trace, name, count(*) AS n FROM events WHERE name IN ('sched_switch', 'syscall_entry_read') GROUP BY trace, name ORDER BY trace, name",
    "SELECT comm, sum(cpu_ns) AS cpu_ns FROM cpu_usage GROUP BY comm ORDER BY cpu_ns DESC, comm LIMIT 10",
    "SELECT trace, name, sum(count) AS calls, max(max_ns) AS longest FROM syscall_stats GROUP BY trace, name ORDER BY trace, name",
    "SELECT s.trace, s.next_comm, count(*) AS runs, max(u.cpu_ns) AS cpu_ns FROM ev_sched_switch s JOIN cpu_usage u ON s.trace = u.trace AND s.next_tid = u.tid \
     WHERE s.ts > 0 GROUP BY s.trace, s.next_comm ORDER BY s.trace, runs DESC, s.next_comm",
];

/// A port `p` with `p` and `p + 1` free on 127.0.0.1 (an executor takes both).
fn free_port_pair() -> u16 {
    loop {
        let p = TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
        if p < u16::MAX && TcpListener::bind(("127.0.0.1", p)).is_ok() && TcpListener::bind(("127.0.0.1", p + 1)).is_ok() {
            return p;
        }
    }
}

/// Waits until something listens on `addr`.
fn wait_listening(addr: SocketAddr, what: &str, child: &mut Server) {
    let start = Instant::now();
    while TcpStream::connect_timeout(&addr, Duration::from_millis(200)).is_err() {
        if let Ok(Some(st)) = child.0.try_wait() {
            panic!("{what} exited with {st} before listening on {addr}");
        }
        assert!(start.elapsed() < Duration::from_secs(60), "{what} does not listen on {addr}");
        std::thread::sleep(Duration::from_millis(100));
    }
}

/// `tracecube synth` of a host called `name` with `seed` into `dir/name`: its trace.
fn synth_host(dir: &Path, name: &str, seed: u64, events: u64) -> PathBuf {
    let out = dir.join(name);
    let st = bin()
        .args(["synth", "--events", &events.to_string(), "--cpus", "2", "--background", "30", "--seed", &seed.to_string(), "--hostname", name, "-o"])
        .arg(&out)
        .stdout(Stdio::null())
        .status()
        .unwrap();
    assert!(st.success());
    out.join("kernel")
}

/// Eight hosts' traces, each `tracecube synth` with its seed and host name.
fn fleet(dir: &Path, events: u64) -> Vec<PathBuf> {
    (1..=HOSTS).map(|h| synth_host(dir, &format!("host{h}"), h, events)).collect()
}

/// A ninth host whose first stream file is damaged where its second packet begins
/// (the packet magic overwritten): readable metadata and index, so the client plans
/// the query and the executor that reads the packet meets the damage.
fn damaged_host(dir: &Path) -> (PathBuf, PathBuf) {
    let out = dir.join("damaged");
    let st = bin()
        .args(["synth", "--events", "40000", "--cpus", "2", "--seed", "99", "--hostname", "damaged", "-o"])
        .arg(&out)
        .stdout(Stdio::null())
        .status()
        .unwrap();
    assert!(st.success());
    let stream = out.join("kernel").join("channel0_0");
    let mut bytes = std::fs::read(&stream).unwrap();
    let second_packet = 262_144; // synth's default packet size
    assert!(bytes.len() > second_packet + 4, "the stream has a second packet");
    bytes[second_packet..second_packet + 4].copy_from_slice(&[0xff; 4]);
    std::fs::write(&stream, bytes).unwrap();
    (out.join("kernel"), stream)
}

/// `tracecube sql TRACES -e QUERY --format csv` (on the cluster at `cluster`, if any).
fn sql(traces: &[PathBuf], query: &str, cluster: Option<&str>) -> Command {
    let mut c = bin();
    c.arg("sql").args(traces).args(["--format", "csv", "-e", query]);
    if let Some(url) = cluster {
        c.args(["--cluster", url]);
    }
    c
}

fn stdout_of(o: Output, what: &str) -> String {
    assert!(o.status.success(), "{what} failed: {}", String::from_utf8_lossy(&o.stderr));
    String::from_utf8(o.stdout).unwrap()
}

/// A scheduler and executors on 127.0.0.1.
struct Cluster {
    url: String,
    scheduler: Server,
    executors: Vec<(Server, PathBuf)>,
}

impl Cluster {
    fn start(dir: &Path, executors: usize) -> Cluster {
        let sched: SocketAddr = format!("127.0.0.1:{}", free_port_pair()).parse().unwrap();
        let mut scheduler =
            Server(bin().args(["cluster", "scheduler", "--bind", &sched.to_string(), "--executor-timeout", "3"]).stderr(Stdio::null()).spawn().unwrap());
        wait_listening(sched, "the scheduler", &mut scheduler);
        let executors = (0..executors)
            .map(|k| {
                let bind: SocketAddr = format!("127.0.0.1:{}", free_port_pair()).parse().unwrap();
                let work = dir.join(format!("executor{k}"));
                std::fs::create_dir_all(&work).unwrap();
                let mut e = Server(
                    bin()
                        .args([
                            "cluster",
                            "executor",
                            "--scheduler",
                            &sched.to_string(),
                            "--bind",
                            &bind.to_string(),
                            "--concurrent-tasks",
                            "2",
                            "--heartbeat",
                            "1",
                            "--work-dir",
                        ])
                        .arg(&work)
                        .stderr(Stdio::null())
                        .spawn()
                        .unwrap(),
                );
                wait_listening(bind, "an executor", &mut e);
                (e, work)
            })
            .collect();
        // Executors register with their first heartbeat.
        std::thread::sleep(Duration::from_secs(2));
        Cluster { url: format!("df://{sched}"), scheduler, executors }
    }

    /// Runs `client` (a command that uses the cluster: `what`) and kills executor `k`
    /// as soon as it has written a task's output of that job (a new entry with files
    /// in its work directory), while the client still runs; then the client's output.
    fn kill_during(&mut self, k: usize, mut client: Command, what: &str) -> Output {
        let (victim, work) = &mut self.executors[k];
        let earlier = entries(work);
        let mut running = client.stdout(Stdio::piped()).stderr(Stdio::piped()).spawn().unwrap();
        let start = Instant::now();
        while !entries(work).iter().any(|e| !earlier.contains(e) && has_files(e)) {
            assert!(start.elapsed() < Duration::from_secs(120), "executor {k} never wrote a task's output of {what}");
            std::thread::sleep(Duration::from_millis(20));
        }
        assert!(running.try_wait().unwrap().is_none(), "{what} was still running when the executor was killed");
        victim.0.kill().unwrap();
        victim.0.wait().unwrap();
        running.wait_with_output().unwrap()
    }
}

/// Whether anything was written below `dir`.
fn has_files(dir: &Path) -> bool {
    std::fs::read_dir(dir).map(|rd| rd.flatten().any(|e| e.path().is_file() || has_files(&e.path()))).unwrap_or(false)
}

/// The entries of `dir` (an executor's work directory: one per job, and scratch).
fn entries(dir: &Path) -> Vec<PathBuf> {
    std::fs::read_dir(dir).map(|rd| rd.flatten().map(|e| e.path()).collect()).unwrap_or_default()
}

#[test]
fn a_cluster_answers_as_one_machine_and_survives_a_killed_executor() {
    let dir = tempfile::tempdir().unwrap();
    let traces = fleet(dir.path(), 40_000);
    let mut cluster = Cluster::start(dir.path(), 2);
    for q in QUERIES {
        let local = stdout_of(sql(&traces, q, None).output().unwrap(), "the local query");
        assert!(local.lines().count() > 2, "the query selects rows: {q}\n{local}");
        let remote = stdout_of(sql(&traces, q, Some(&cluster.url)).output().unwrap(), "the cluster query");
        assert_eq!(remote, local, "{q}");
    }
    // Every host is in the answer, by its own name.
    let per_host = stdout_of(sql(&traces, QUERIES[0], Some(&cluster.url)).output().unwrap(), "the cluster query");
    for h in 1..=HOSTS {
        assert!(per_host.contains(&format!("host{h},")), "{per_host}");
    }
    // A damaged host: the query fails as it fails on one machine (exit 2), naming
    // the file, the offset and the cause, and the cluster stays up for the next one.
    let (damaged, stream) = damaged_host(dir.path());
    let with_damage: Vec<PathBuf> = traces.iter().cloned().chain([damaged]).collect();
    let count = "SELECT trace, count(*) AS n FROM events GROUP BY trace ORDER BY trace";
    for cluster_url in [None, Some(cluster.url.as_str())] {
        let o = sql(&with_damage, count, cluster_url).output().unwrap();
        let err = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(2), "{cluster_url:?}: {err}");
        let cause = format!("{}: offset 262144: bad packet magic 0xffffffff", stream.display());
        assert!(err.contains(&cause), "{cluster_url:?}: {err}");
    }
    assert!(cluster.scheduler.0.try_wait().unwrap().is_none(), "the scheduler is still up");
    // Both executors took tasks: each wrote shuffle outputs in its work directory.
    for (k, (e, work)) in cluster.executors.iter_mut().enumerate() {
        assert!(e.0.try_wait().unwrap().is_none(), "executor {k} is still up");
        assert!(std::fs::read_dir(work).unwrap().next().is_some(), "executor {k} ran no task");
    }

    // A query long enough to be cut: every event's fields, hashed per host. One
    // executor is killed as soon as it has written a task's output of this query.
    let q = "SELECT trace, count(*) AS n, sum(length(fields)) AS text, count(DISTINCT fields) AS kinds FROM events GROUP BY trace ORDER BY trace";
    let local = stdout_of(sql(&traces, q, None).output().unwrap(), "the local query");
    let running = sql(&traces, q, Some(&cluster.url));
    let out = cluster.kill_during(0, running, "the query");
    assert_eq!(stdout_of(out, "the query during the kill"), local, "the answer after an executor was killed");
}

#[test]
fn an_unreachable_scheduler_is_a_clear_error() {
    let port = free_port_pair();
    let dir = tempfile::tempdir().unwrap();
    let traces = fleet(dir.path(), 2_000);
    let o = sql(&traces[..1], "SELECT count(*) FROM events", Some(&format!("df://127.0.0.1:{port}"))).output().unwrap();
    assert_eq!(o.status.code(), Some(2));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(err.contains(&format!("127.0.0.1:{port}")), "{err}");
}

/// `tracecube cube build TRACE -o OUT [ARGS]`.
fn cube_build(trace: &Path, out: &Path, args: &[&str]) -> Output {
    bin().args(["cube", "build"]).arg(trace).arg("-o").arg(out).args(args).output().unwrap()
}

/// `tracecube query CUBE ARGS`'s answer.
fn query(cube: &Path, args: &[&str]) -> String {
    stdout_of(bin().arg("query").arg(cube).args(args).output().unwrap(), "the query")
}

#[test]
fn a_fleet_cube_built_on_the_cluster_is_the_local_one() {
    let dir = tempfile::tempdir().unwrap();
    let hosts = dir.path().join("fleet");
    let traces = fleet(&hosts, 20_000);
    let mut cluster = Cluster::start(dir.path(), 2);
    let (local, remote) = (dir.path().join("local.cube"), dir.path().join("remote.cube"));
    // Small slices: many tasks, spread over both executors. (The same chunk size cuts
    // the same slices: then even the catalog's count of updates, which depends on
    // where slices are cut, is the same.)
    let o = cube_build(&hosts, &local, &["--chunk-size", "256K"]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let o = cube_build(&hosts, &remote, &["--cluster", &cluster.url, "--chunk-size", "256K"]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let (r, l) = (testkit::cube_files(&remote), testkit::cube_files(&local));
    assert_eq!(r.len(), 3, "CURRENT, the catalog, the history");
    for ((p, a), (q, b)) in r.iter().zip(&l) {
        assert!(p == q && a == b, "{p} differs from {q}: the cluster's cube is the local one, byte for byte");
    }
    // Queried as one machine's: every host a Machine member; a host drilled into.
    let by_machine = ["--metric", "events", "--by", "machine"];
    let answer = query(&remote, &by_machine);
    assert_eq!(answer, query(&local, &by_machine));
    for h in 1..=HOSTS {
        assert!(answer.contains(&format!("host{h}")), "{answer}");
    }
    let drill = ["--metric", "cpu_time", "--where", "machine=host3", "--by", "process"];
    let host3 = query(&remote, &drill);
    assert!(host3.lines().count() > 2, "{host3}");
    assert_eq!(host3, query(&local, &drill));
    assert_eq!(traces.len(), HOSTS as usize);

    // A damaged host among good ones: an error naming the host and the file, exit 2.
    let bad = dir.path().join("bad");
    synth_host(&bad, "good", 5, 20_000);
    let (_, stream) = damaged_host(&bad);
    let o = cube_build(&bad, &dir.path().join("bad.cube"), &["--cluster", &cluster.url]);
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(2), "{err}");
    let cause = format!("host damaged: {}: offset 262144: bad packet magic 0xffffffff", stream.display());
    assert!(err.contains(&cause), "{err}");

    // An executor killed as soon as it has written a slice's log: the other one logs
    // the lost slices again, and the cube is still the local one, byte for byte.
    // (Small slices, so that the build is still running at the kill.)
    let small = ["--chunk-size", "32K"];
    let (local, remote) = (dir.path().join("local32.cube"), dir.path().join("killed.cube"));
    let o = cube_build(&hosts, &local, &small);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let mut build = bin();
    build.args(["cube", "build"]).arg(&hosts).arg("-o").arg(&remote).args(["--cluster", &cluster.url]).args(small);
    let o = cluster.kill_during(0, build, "the fleet cube build");
    assert!(o.status.success(), "the build during the kill: {}", String::from_utf8_lossy(&o.stderr));
    assert!(testkit::cube_files(&remote) == testkit::cube_files(&local), "the cube built during the kill is the local one");
}
