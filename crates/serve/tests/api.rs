//! The API over a real cube (built from a synthetic kernel trace), through a real
//! server on a loopback port: every endpoint, answers equal to `tracecube query`'s
//! (both go through `cube::cli::QueryArgs`), and bad inputs refused with a message.

use std::net::{SocketAddr, TcpStream};
use std::sync::{Arc, OnceLock, RwLock};

use cube::cli::QueryArgs;
use serde_json::Value;
use serve::{ServerHandle, SharedCube};

struct Fixture {
    cube: SharedCube,
    server: ServerHandle,
    _dir: tempfile::TempDir,
}

/// One cube and one server for the whole file: building the cube is the slow part.
fn fixture() -> &'static Fixture {
    static F: OnceLock<Fixture> = OnceLock::new();
    F.get_or_init(|| {
        let dir = tempfile::tempdir().unwrap();
        let cfg = synth::SynthConfig { cpus: 2, events: 30_000, seed: 7, ..Default::default() };
        let s = synth::generate(&cfg, dir.path()).unwrap();
        let (c, _) =
            cube_feed::build_from_trace(&s.trace_dir, &cube_feed::BuildOptions { config: cube::CubeConfig::fine(), threads: 1, ..Default::default() }).unwrap();
        let cube = Arc::new(RwLock::new(c));
        let server = serve::spawn("127.0.0.1:0".parse().unwrap(), cube.clone(), false).unwrap();
        Fixture { cube, server, _dir: dir }
    })
}

/// One HTTP/1.1 request; returns (status, content type, body).
fn request(addr: SocketAddr, method: &str, target: &str) -> (u16, String, String) {
    let a = testkit::http::request(addr, method, target, None);
    (a.status, a.content_type, a.body)
}

fn get(target: &str) -> (u16, Value) {
    let (status, ct, body) = request(fixture().server.local_addr(), "GET", target);
    assert!(ct.starts_with("application/json"), "{target}: content type {ct:?}");
    (status, serde_json::from_str(&body).unwrap_or_else(|e| panic!("{target}: {e}: {body}")))
}

fn ok(target: &str) -> Value {
    let (status, v) = get(target);
    assert_eq!(status, 200, "{target}: {v}");
    v
}

/// A 400 whose message contains `says`.
fn bad(target: &str, says: &str) {
    let (status, v) = get(target);
    assert_eq!(status, 400, "{target}: {v}");
    let msg = v["error"].as_str().unwrap_or_default();
    assert!(msg.contains(says), "{target}: message {msg:?} should say {says:?}");
}

/// What `tracecube query --format json` computes for these arguments.
fn cli(args: QueryArgs) -> Value {
    let c = fixture().cube.read().unwrap();
    c.query(&args.to_request(&c).unwrap()).unwrap().to_json()
}

fn args(metric: &str) -> QueryArgs {
    QueryArgs { metric: metric.into(), ..Default::default() }
}

#[test]
fn query_answers_equal_the_command_s() {
    let origin = fixture().cube.read().unwrap().span().unwrap().0;
    let cases: Vec<(&str, QueryArgs)> = vec![
        ("metric=cpu_time", args("cpu_time")),
        ("metric=cpu_time&by=process:tid&top=5", QueryArgs { by: vec!["process:tid".into()], top: Some(5), ..args("cpu_time") }),
        ("metric=cpu_time&by=process:name", QueryArgs { by: vec!["process:name".into()], ..args("cpu_time") }),
        ("metric=events&at=%2B50ms&by=operation:kind", QueryArgs { at: Some("+50ms".into()), by: vec!["operation:kind".into()], ..args("events") }),
        ("metric=events&range=%2B10ms..%2B80ms&by=cpu", QueryArgs { range: Some("+10ms..+80ms".into()), by: vec!["cpu".into()], ..args("events") }),
        (
            &*Box::leak(format!("metric=events&range={}..{}", origin + 5_000_000, origin + 40_000_000).into_boxed_str()),
            QueryArgs { range: Some(format!("{}..{}", origin + 5_000_000, origin + 40_000_000)), ..args("events") },
        ),
        ("metric=bytes_written&last=50ms&by=file:d1", QueryArgs { last: Some("50ms".into()), by: vec!["file:d1".into()], ..args("bytes_written") }),
        ("metric=events&every=20ms&by=operation:kind", QueryArgs { every: Some("20ms".into()), by: vec!["operation:kind".into()], ..args("events") }),
        (
            "metric=cpu_time&by=process:tid&by=cpu&where=cpu=0",
            QueryArgs { by: vec!["process:tid".into(), "cpu".into()], filters: vec!["cpu=0".into()], ..args("cpu_time") },
        ),
        (
            "metric=events&by=operation:name&where=operation:kind=syscall,sched&top=3",
            QueryArgs { by: vec!["operation:name".into()], filters: vec!["operation:kind=syscall,sched".into()], top: Some(3), ..args("events") },
        ),
        ("metric=bytes_read&agg=avg&by=process:name", QueryArgs { agg: Some("avg".into()), by: vec!["process:name".into()], ..args("bytes_read") }),
        ("metric=bytes_read&agg=max&by=file:d1", QueryArgs { agg: Some("max".into()), by: vec!["file:d1".into()], ..args("bytes_read") }),
        ("metric=bytes_written&agg=count", QueryArgs { agg: Some("count".into()), ..args("bytes_written") }),
    ];
    for (q, a) in cases {
        let got = ok(&format!("/api/query?{q}"));
        let want = cli(a);
        assert!(!want["windows"].as_array().unwrap().is_empty(), "{q}");
        assert_eq!(got, want, "{q}");
    }
    // Roll-up is the sum of drill-downs: the API says so too.
    let fine = ok("/api/query?metric=cpu_time&by=process:tid");
    let coarse = ok("/api/query?metric=cpu_time");
    let sum: f64 = fine["windows"][0]["rows"].as_array().unwrap().iter().map(|r| r["value"].as_f64().unwrap()).sum();
    assert_eq!(sum, coarse["windows"][0]["rows"][0]["value"].as_f64().unwrap());
    assert!(sum > 0.0);
}

#[test]
fn bad_queries_get_400_saying_what_is_wrong() {
    bad("/api/query", "\"metric\" is required");
    bad("/api/query?metric=", "\"metric\" is empty");
    bad("/api/query?metric=nope", "no metric \"nope\"");
    bad("/api/query?metric=cpu_time&range=%2B2s..%2B1s", "is after end");
    bad("/api/query?metric=cpu_time&range=5..3", "is after end");
    bad("/api/query?metric=cpu_time&range=3", "expected T1..T2");
    bad("/api/query?metric=cpu_time&top=1000000", "top=1000000");
    bad("/api/query?metric=cpu_time&top=0", "top=0");
    bad("/api/query?metric=cpu_time&top=many", "top=\"many\"");
    bad("/api/query?metric=cpu_time&top=99999999999999999999999", "top=");
    bad("/api/query?metric=cpu_time&at=yesterday", "bad time \"yesterday\": expected ns since the epoch");
    bad("/api/query?metric=cpu_time&at=2024-13-45T99:00:00Z", "bad time");
    bad("/api/query?metric=cpu_time&last=3parsecs", "bad time \"3parsecs\": expected a duration");
    bad("/api/query?metric=cpu_time&at=%2B1s&last=1s", "one of --at, --range, --last");
    bad("/api/query?metric=cpu_time&every=1ns", "windows");
    bad("/api/query?metric=cpu_time&every=0", "must be positive");
    bad("/api/query?metric=cpu_time&by=process:shoe", "no level \"shoe\"");
    bad("/api/query?metric=cpu_time&by=galaxy", "no dimension \"galaxy\"");
    bad("/api/query?metric=cpu_time&by=file", "has no dimension file");
    bad("/api/query?metric=cpu_time&where=process:tid", "expected DIM[:LEVEL]=MEMBER");
    bad("/api/query?metric=cpu_time&agg=median", "unknown aggregate");
    bad("/api/query?metric=cpu_time&agg=max", "keeps no min / max");
    bad("/api/query?metric=cpu_time&colour=red", "unknown parameter \"colour\"");
    bad("/api/query?metric=cpu_time&at=1&at=2", "more than once");
    bad("/api/members", "\"dim\" is required");
    bad("/api/members?dim=galaxy", "no dimension \"galaxy\"");
    bad("/api/members?dim=process&level=shoe", "no level \"shoe\"");
    bad("/api/members?dim=process&within=nothing", "expected LEVEL=LABEL");
    bad("/api/members?dim=process&level=name&within=tid=1", "level tid is below level name");
    bad("/api/metrics?x=1", "unknown parameter");
}

#[test]
fn hostile_input_never_brings_the_server_down() {
    let addr = fixture().server.local_addr();
    for q in [
        "metric=%FF%FE%00&by=%00",
        "metric=cpu_time&at=99999999999-01-01T00:00:00Z",
        "metric=cpu_time&at=%2B99999999999999999999w",
        "metric=cpu_time&range=..",
        "metric=cpu_time&range=18446744073709551615..18446744073709551615",
        "metric=cpu_time&every=0.0000000001ns",
        "metric=cpu_time&by=process:tid&where=process:tid=&top=1",
        "metric=cpu_time&last=18446744073709551615",
        "&&&==&metric=cpu_time&=",
    ] {
        let (status, _, body) = request(addr, "GET", &format!("/api/query?{q}"));
        assert!(status == 200 || status == 400, "{q}: {status} {body}");
        assert!(serde_json::from_str::<Value>(&body).is_ok(), "{q}: JSON answer: {body}");
    }
    let long = format!("/api/query?metric={}", "x".repeat(20_000));
    let (status, _, _) = request(addr, "GET", &long);
    assert!((400..500).contains(&status), "{status}");
    assert_eq!(request(addr, "POST", "/api/query?metric=cpu_time").0, 405);
    assert_eq!(request(addr, "GET", "/api/nothing").0, 404);
    // Still serving.
    assert_eq!(ok("/api/info")["live"], false);
}

#[test]
fn metrics_dimensions_members_and_info() {
    let m = ok("/api/metrics");
    let cpu = m["metrics"].as_array().unwrap().iter().find(|x| x["name"] == "cpu_time").unwrap();
    assert_eq!(cpu["by"], serde_json::json!(["process:tid", "cpu:cpu", "machine:host"]));
    assert_eq!(cpu["aggs"], serde_json::json!(["sum"]));
    let br = m["metrics"].as_array().unwrap().iter().find(|x| x["name"] == "bytes_read").unwrap();
    assert_eq!(br["aggs"], serde_json::json!(["sum", "count", "avg", "min", "max"]));

    let d = ok("/api/dimensions");
    let process = d["dimensions"].as_array().unwrap().iter().find(|x| x["name"] == "process").unwrap();
    assert_eq!(process["levels"], serde_json::json!(["all", "group", "name", "pid", "tid"]));
    let tids = process["members"][4].as_u64().unwrap();
    assert!(tids > 1);

    let all = ok("/api/members?dim=process");
    assert_eq!(all["level"], "tid");
    assert_eq!(all["members"].as_array().unwrap().len() as u64, tids);
    // The tree: a process's threads are the tids whose path goes through it, and
    // they are the rows of the drill-down.
    let pid = &all["members"][0]["path"][2].as_str().unwrap().to_string();
    let threads = ok(&format!("/api/members?dim=process&level=tid&within=pid={pid}"));
    let labels: Vec<&str> = threads["members"].as_array().unwrap().iter().map(|x| x["label"].as_str().unwrap()).collect();
    assert!(!labels.is_empty());
    assert!(threads["members"].as_array().unwrap().iter().all(|x| x["path"][2] == pid.as_str()));
    let names = ok("/api/members?dim=process&level=name");
    assert!(names["members"].as_array().unwrap().iter().all(|x| x["path"].as_array().unwrap().len() == 2));

    let info = ok("/api/info");
    let c = fixture().cube.read().unwrap();
    assert_eq!(info["now_ns"].as_u64().unwrap(), c.now());
    assert_eq!(info["origin_ns"].as_u64().unwrap(), c.span().unwrap().0);
    assert_eq!(info["levels"].as_array().unwrap().len(), c.config.levels.len());
}

#[test]
fn openapi_describes_every_route_and_each_answers() {
    let doc = ok("/api/openapi.json");
    assert_eq!(doc["openapi"], "3.0.3");
    let paths = doc["paths"].as_object().unwrap();
    for route in ["/", "/assets/{file}", "/api/openapi.json", "/api/query", "/api/metrics", "/api/dimensions", "/api/members", "/api/info", "/api/sql"] {
        assert!(paths.contains_key(route), "{route} missing from the OpenAPI document");
    }
    let q: Vec<&str> = doc["paths"]["/api/query"]["get"]["parameters"].as_array().unwrap().iter().map(|p| p["name"].as_str().unwrap()).collect();
    assert_eq!(q, ["metric", "agg", "at", "range", "last", "by", "where", "top", "every"]);
    for (p, ops) in paths {
        if ops.get("get").is_none() {
            // POST /api/sql, on a server given no trace: a 404 that says how to give one.
            let (status, _, body) = request(fixture().server.local_addr(), "POST", p);
            assert_eq!((status, body.contains("--trace")), (404, true), "{p}: {body}");
            continue;
        }
        let target = p.replace("{file}", "app.js").replace("/api/query", "/api/query?metric=events").replace("/api/members", "/api/members?dim=cpu");
        let (status, _, _) = request(fixture().server.local_addr(), "GET", &target);
        assert_eq!(status, 200, "{target}");
    }
}

#[test]
fn page_and_assets_are_embedded() {
    let addr = fixture().server.local_addr();
    let (status, ct, html) = request(addr, "GET", "/");
    assert_eq!(status, 200);
    assert!(ct.starts_with("text/html"));
    assert!(html.contains("data-live=\"false\"") && html.contains("/assets/uPlot.iife.min.js"));
    for (file, ct_want, has) in [
        ("app.js", "text/javascript", "/api/query"),
        ("uPlot.iife.min.js", "text/javascript", "uPlot"),
        ("uPlot.min.css", "text/css", ".uplot"),
        ("uPlot.LICENSE", "text/plain", "MIT"),
    ] {
        let (status, ct, body) = request(addr, "GET", &format!("/assets/{file}"));
        assert_eq!(status, 200, "{file}");
        assert!(ct.starts_with(ct_want), "{file}: {ct}");
        assert!(body.contains(has), "{file}");
    }
    assert_eq!(request(addr, "GET", "/assets/secret.txt").0, 404);
    assert_eq!(request(addr, "GET", "/assets/..%2FCargo.toml").0, 404);
}

#[test]
fn live_server_sees_updates_and_shuts_down() {
    let mut c = cube::Cube::new(cube::CubeConfig::fine()).unwrap();
    let m = c.schema.metric("events").unwrap();
    let op = c.schema.dims[4].member(&["syscall", "syscall_entry_read"]);
    let cpu = c.schema.dims[1].member(&["0"]);
    let cell = c.cell(m, &[op, cpu]);
    c.add(1_000_000, cell, 1).unwrap();
    c.flush().unwrap();
    let shared: SharedCube = Arc::new(RwLock::new(c));
    let server = serve::spawn("127.0.0.1:0".parse().unwrap(), shared.clone(), true).unwrap();
    let addr = server.local_addr();
    assert_ne!(addr.port(), 0);
    let total = |addr| {
        let (_, _, body) = request(addr, "GET", "/api/query?metric=events");
        let v: Value = serde_json::from_str(&body).unwrap();
        v["windows"][0]["rows"].as_array().unwrap().iter().map(|r| r["value"].as_f64().unwrap()).sum::<f64>()
    };
    let before = total(addr);
    {
        let mut c = shared.write().unwrap();
        for t in 2..50u64 {
            c.add(t * 1_000_000, cell, 1).unwrap();
        }
        c.finish().unwrap();
    }
    assert_eq!(total(addr), 49.0);
    assert!(before < 49.0);
    let (_, _, html) = request(addr, "GET", "/");
    assert!(html.contains("data-live=\"true\""));
    server.shutdown().unwrap();
    assert!(TcpStream::connect(addr).is_err(), "closed after shutdown");
}

#[test]
fn an_empty_cube_answers_too() {
    // A live cube before its first event.
    let shared: SharedCube = Arc::new(RwLock::new(cube::Cube::new(cube::CubeConfig::fine()).unwrap()));
    let server = serve::spawn("127.0.0.1:0".parse().unwrap(), shared, true).unwrap();
    let addr = server.local_addr();
    let (status, _, body) = request(addr, "GET", "/api/info");
    assert_eq!(status, 200);
    let info: Value = serde_json::from_str(&body).unwrap();
    assert!(info["span"].is_null());
    for q in ["metric=events", "metric=events&by=cpu&top=3", "metric=events&range=0..18446744073709551615&every=1000000000000000000", "metric=events&last=5s"] {
        let (status, _, body) = request(addr, "GET", &format!("/api/query?{q}"));
        assert_eq!(status, 200, "{q}: {body}");
        let v: Value = serde_json::from_str(&body).unwrap();
        assert!(v["windows"].as_array().unwrap().iter().all(|w| w["rows"].as_array().unwrap().is_empty()), "{q}: {body}");
    }
    server.shutdown().unwrap();
}
