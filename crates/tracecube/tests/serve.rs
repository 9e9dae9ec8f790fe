//! `tracecube serve` answers what `tracecube query --format json` prints, and
//! refuses bad queries with a 400 and a message.

use std::io::{BufRead, BufReader};
use std::process::Stdio;

use crate::support;
use support::{bin, Server};

/// `GET target` → (status, body); small answers come whole (not chunked).
fn get(addr: &str, target: &str) -> (u16, String) {
    let a = testkit::http::get(addr, target);
    assert!(!a.chunked, "small answers come whole");
    (a.status, a.body)
}

#[test]
fn serve_answers_equal_query_command() {
    let dir = tempfile::tempdir().unwrap();
    let trace = dir.path().join("trace");
    assert!(bin().args(["synth", "--cpus", "2", "--events", "20000", "--seed", "5", "-o"]).arg(&trace).status().unwrap().success());
    let cube = dir.path().join("c.cube");
    let out = bin().args(["cube", "build"]).arg(&trace).arg("-o").arg(&cube).output().unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let (_server, addr) = start(&cube, "127.0.0.1:0", &[]);

    for (query, args) in [
        ("metric=cpu_time&by=process:tid&top=5", &["--metric", "cpu_time", "--by", "process:tid", "--top", "5"][..]),
        ("metric=events&by=operation:kind&every=100ms", &["--metric", "events", "--by", "operation:kind", "--every", "100ms"]),
        (
            "metric=bytes_read&by=file:d1&where=process:name=rustc,python3&range=%2B0s..%2B1s",
            &["--metric", "bytes_read", "--by", "file:d1", "--where", "process:name=rustc,python3", "--range", "+0s..+1s"],
        ),
        ("metric=bytes_written&agg=avg&last=500ms", &["--metric", "bytes_written", "--agg", "avg", "--last", "500ms"]),
    ] {
        let out = bin().arg("query").arg(&cube).args(args).args(["--format", "json"]).output().unwrap();
        assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
        let want: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
        let (status, body) = get(&addr, &format!("/api/query?{query}"));
        assert_eq!(status, 200, "{query}: {body}");
        let got: serde_json::Value = serde_json::from_str(&body).unwrap();
        assert_eq!(got, want, "{query}");
        let rows: usize = want["windows"].as_array().unwrap().iter().map(|w| w["rows"].as_array().unwrap().len()).sum();
        assert!(rows > 0 || query.contains("where"), "{query}: some rows");
    }
    let (status, body) = get(&addr, "/api/query?metric=cpu_tme");
    assert_eq!(status, 400);
    assert!(body.contains("no metric \\\"cpu_tme\\\""), "{body}");
}

/// `tracecube query` refuses what the API refuses, with the API's message; the server
/// listens on a host name (`localhost:0`) as well as on an IP.
#[test]
fn query_command_validates_like_the_api() {
    let dir = tempfile::tempdir().unwrap();
    let trace = dir.path().join("trace");
    assert!(bin().args(["synth", "--cpus", "2", "--events", "5000", "--seed", "3", "-o"]).arg(&trace).status().unwrap().success());
    let cube = dir.path().join("c.cube");
    assert!(bin().args(["cube", "build"]).arg(&trace).arg("-o").arg(&cube).output().unwrap().status.success());
    let (_server, addr) = start(&cube, "localhost:0", &[]);
    for (query, args, message) in [
        ("metric=events&top=0", &["--metric", "events", "--top", "0"][..], "top=0: expected a whole number from 1 to 100000"),
        ("metric=events&every=0s", &["--metric", "events", "--every", "0s"], "every: the window length must be positive"),
        ("metric=events&range=%2B2s..%2B1s", &["--metric", "events", "--range", "+2s..+1s"], "is after end"),
    ] {
        let out = bin().arg("query").arg(&cube).args(args).output().unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(!out.status.success() && err.contains(message), "{args:?}: {err}");
        let (status, body) = get(&addr, &format!("/api/query?{query}"));
        assert_eq!(status, 400, "{query}: {body}");
        assert!(body.contains(message), "{query}: {body}");
    }
}

/// A `where` member the cube does not know is an error (exit 1, a 400 from the API)
/// that names it, never an empty answer.
#[test]
fn unknown_where_member_is_an_error() {
    let dir = tempfile::tempdir().unwrap();
    let trace = dir.path().join("trace");
    assert!(bin().args(["synth", "--cpus", "2", "--events", "5000", "--seed", "3", "-o"]).arg(&trace).status().unwrap().success());
    let cube = dir.path().join("c.cube");
    assert!(bin().args(["cube", "build"]).arg(&trace).arg("-o").arg(&cube).output().unwrap().status.success());
    let out = bin().arg("query").arg(&cube).args(["--metric", "cpu_time", "--where", "process:name=no-such-program"]).output().unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success() && err.contains("process:name=no-such-program: no such member"), "{err}");
    let ok = bin().arg("query").arg(&cube).args(["--metric", "cpu_time", "--where", "cpu:cpu=0"]).output().unwrap();
    assert!(ok.status.success(), "a known member answers: {}", String::from_utf8_lossy(&ok.stderr));
}

/// `query --help` names the metrics a default cube really has.
#[test]
fn query_help_names_the_built_in_metrics() {
    let out = bin().args(["query", "--help"]).output().unwrap();
    let help = String::from_utf8_lossy(&out.stdout);
    for m in cube::CubeConfig::default().metrics {
        assert!(help.contains(&format!("`{}`", m.name)), "query --help does not name {}: {help}", m.name);
    }
}

/// `POST target` with a JSON body → (status, body).
fn post(addr: &str, target: &str, body: &str) -> (u16, String) {
    let a = testkit::http::post_json(addr, target, body);
    (a.status, a.body)
}

/// Starts `tracecube serve CUBE --addr ADDR args...` and returns the address it
/// listens on.
fn start(cube: &std::path::Path, addr: &str, args: &[&std::ffi::OsStr]) -> (Server, String) {
    let mut child = bin().arg("serve").arg(cube).args(["--addr", addr]).args(args).stdout(Stdio::piped()).spawn().unwrap();
    let stdout = child.stdout.take().unwrap();
    let server = Server(child);
    let mut line = String::new();
    BufReader::new(stdout).read_line(&mut line).unwrap();
    let addr = line.split("http://").nth(1).and_then(|s| s.split('/').next()).unwrap_or_else(|| panic!("{line}")).to_string();
    (server, addr)
}

/// `POST /api/sql` answers what `tracecube sql --format json` prints, refuses what
/// would change anything (DDL, DML, COPY TO a file), cuts long answers at its row
/// bound and says so, and is a 404 on a server given no trace.
#[test]
fn sql_endpoint_answers_like_the_sql_command_and_only_reads() {
    let dir = tempfile::tempdir().unwrap();
    let trace = dir.path().join("trace");
    assert!(bin().args(["synth", "--cpus", "2", "--events", "20000", "--seed", "7", "-o"]).arg(&trace).status().unwrap().success());
    let cube = dir.path().join("c.cube");
    assert!(bin().args(["cube", "build"]).arg(&trace).arg("-o").arg(&cube).output().unwrap().status.success());
    let (_server, addr) = start(&cube, "127.0.0.1:0", &[std::ffi::OsStr::new("--trace"), trace.as_os_str()]);

    let q = "SELECT name, count(*) AS n FROM events GROUP BY name ORDER BY n DESC, name LIMIT 6";
    let out = bin().arg("sql").arg(&trace).args(["--format", "json", "-e", q]).output().unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let want: Vec<serde_json::Value> = out.stdout.split(|&b| b == b'\n').filter(|l| !l.is_empty()).map(|l| serde_json::from_slice(l).unwrap()).collect();
    assert_eq!(want.len(), 6);
    let (status, body) = post(&addr, "/api/sql", &serde_json::json!({ "query": q }).to_string());
    assert_eq!(status, 200, "{body}");
    let got: serde_json::Value = serde_json::from_str(&body).unwrap();
    assert_eq!(got["columns"], serde_json::json!(["name", "n"]));
    assert_eq!(got["rows"].as_array().unwrap(), &want);
    assert_eq!(got["truncated"], false);

    // 20,000 events: more than the 10,000 rows an answer holds.
    let (status, body) = post(&addr, "/api/sql", r#"{"query": "SELECT ts FROM events"}"#);
    assert_eq!(status, 200, "{body}");
    let got: serde_json::Value = serde_json::from_str(&body).unwrap();
    assert_eq!((got["rows"].as_array().unwrap().len(), got["truncated"].as_bool()), (10_000, Some(true)));

    let written = dir.path().join("out.csv");
    for q in ["CREATE TABLE t AS SELECT 1", "INSERT INTO events VALUES (1)", &format!("COPY (SELECT 1) TO '{}'", written.display()), "SET x = 1"] {
        let (status, body) = post(&addr, "/api/sql", &serde_json::json!({ "query": q }).to_string());
        assert_eq!(status, 400, "{q}: {body}");
        assert!(body.contains("error"), "{q}: {body}");
    }
    assert!(!written.exists(), "COPY TO wrote a file");
    let (status, body) = post(&addr, "/api/sql", r#"{"query": "SELEC 1"}"#);
    assert_eq!(status, 400, "{body}");

    // `cube_series` over the served cube: its total equals `/api/query`'s.
    let (status, body) = post(&addr, "/api/sql", r#"{"query": "SELECT sum(value) AS n FROM cube_series('events', NULL)"}"#);
    assert_eq!(status, 200, "{body}");
    let got: serde_json::Value = serde_json::from_str(&body).unwrap();
    let (status, q) = get(&addr, "/api/query?metric=events");
    assert_eq!(status, 200, "{q}");
    let q: serde_json::Value = serde_json::from_str(&q).unwrap();
    assert_eq!(got["rows"][0]["n"].as_i64(), q["windows"][0]["rows"][0]["value"].as_f64().map(|v| v as i64), "{got} vs {q}");
    assert_eq!(got["rows"][0]["n"].as_i64(), Some(20_000));

    let (_plain, addr) = start(&cube, "127.0.0.1:0", &[]);
    let (status, body) = post(&addr, "/api/sql", r#"{"query": "SELECT 1"}"#);
    assert_eq!(status, 404, "{body}");
    assert!(body.contains("--trace"), "{body}");
}
