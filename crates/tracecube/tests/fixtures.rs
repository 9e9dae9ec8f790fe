//! The binary's core on the committed fixture traces (`crates/testkit/fixtures`, always
//! there, so none of this ever skips): `print`, `dump`, `analyze -a count|cpu|io` and
//! `cube build` + `query`. Expected values: Babeltrace 2's text and canonical dump of
//! each trace (committed beside it, `TZ=UTC babeltrace2 TRACE`), and the truth `synth`
//! wrote with the kernel trace (`kernel.truth.json`: CPU time and bytes per thread,
//! process and file, events per name).

use std::collections::BTreeMap;

use serde_json::Value;

use crate::support::bin;

/// The fixtures: name and number of events (`babeltrace2 TRACE | wc -l`).
const FIXTURES: [(&str, u64); 2] = [("kernel", 4000), ("ust", 1644)];

/// `tracecube ARGS` on fixture `name` (its path first), in UTC: its stdout.
fn run(name: &str, args: &[&str]) -> String {
    let out = bin().arg(args[0]).arg(testkit::fixture(name)).args(&args[1..]).env("TZ", "UTC").output().unwrap();
    assert!(out.status.success(), "{args:?} {name}: {}", String::from_utf8_lossy(&out.stderr));
    String::from_utf8(out.stdout).unwrap()
}

/// `analyze -a ANALYSIS --format json` on fixture `name`, with `extra` arguments.
fn analyze(name: &str, analysis: &str, extra: &[&str]) -> Value {
    serde_json::from_str(&run(name, &[&["analyze", "-a", analysis, "--format", "json"][..], extra].concat())).unwrap()
}

/// A committed expected output of fixture `name` (`NAME.SUFFIX`, gzip-compressed).
fn expected(name: &str, suffix: &str) -> String {
    testkit::gunzip(&testkit::fixture(&format!("{name}.{suffix}.gz")))
}

/// Asserts two texts equal line by line, naming the first differing line.
fn same_lines(what: &str, ours: &str, theirs: &str) {
    if let Some((i, (a, b))) = ours.lines().zip(theirs.lines()).enumerate().find(|(_, (a, b))| a != b) {
        panic!("{what}: line {}:\n ours:   {a}\n theirs: {b}", i + 1);
    }
    assert_eq!(ours.lines().count(), theirs.lines().count(), "{what}: lines");
}

/// The kernel fixture's truth (`synth`'s).
fn truth() -> Value {
    serde_json::from_slice(&std::fs::read(testkit::fixture("kernel.truth.json")).unwrap()).unwrap()
}

#[test]
fn print_is_babeltrace2s_text_and_dump_its_canonical_dump() {
    for (name, events) in FIXTURES {
        let text = expected(name, "bt2.txt");
        assert_eq!(text.lines().count() as u64, events, "{name}");
        same_lines(&format!("print {name}"), &run(name, &["print"]), &text);
        same_lines(&format!("dump {name}"), &run(name, &["dump"]), &expected(name, "bt2.jsonl"));
    }
}

#[test]
fn counts_are_babeltrace2s_at_every_partitioning() {
    for (name, events) in FIXTURES {
        // Babeltrace 2's text: `[time] (+delta) host NAME: { ... }`.
        let mut by_name: BTreeMap<String, u64> = BTreeMap::new();
        for line in expected(name, "bt2.txt").lines() {
            let field = line.split_whitespace().nth(3).unwrap();
            *by_name.entry(field.trim_end_matches(':').to_string()).or_default() += 1;
        }
        for extra in [&[][..], &["-j", "2", "--chunk-size", "4K"], &["-j", "3", "--chunk-size", "8K", "--partition", "stream"]] {
            let r = analyze(name, "count", extra);
            assert_eq!(r["events"], events, "{name} {extra:?}");
            let ours: BTreeMap<String, u64> = r["by_name"].as_object().unwrap().iter().map(|(k, v)| (k.clone(), v.as_u64().unwrap())).collect();
            assert_eq!(ours, by_name, "{name} {extra:?}");
        }
    }
    let t = truth();
    let r = analyze("kernel", "count", &[]);
    assert_eq!(r["by_name"], t["events"]);
}

/// `report[table]`'s rows as `row[key] → row[field]`.
fn column(report: &Value, table: &str, key: &str, field: &str) -> BTreeMap<String, u64> {
    report[table].as_array().unwrap().iter().map(|r| (r[key].to_string().trim_matches('"').to_string(), r[field].as_u64().unwrap())).collect()
}

/// The truth's `table` (an object keyed by id) as `id → row[field]`, rows with a
/// non-zero value only.
fn truth_column(t: &Value, table: &str, field: &str) -> BTreeMap<String, u64> {
    t[table].as_object().unwrap().iter().map(|(k, v)| (k.clone(), v[field].as_u64().unwrap())).filter(|(_, v)| *v > 0).collect()
}

/// Without the zero rows.
fn nonzero(m: BTreeMap<String, u64>) -> BTreeMap<String, u64> {
    m.into_iter().filter(|(_, v)| *v > 0).collect()
}

#[test]
fn cpu_and_io_are_the_kernel_traces_truth() {
    let t = truth();
    for extra in [&[][..], &["-j", "2", "--chunk-size", "4K"]] {
        let cpu = analyze("kernel", "cpu", extra);
        assert_eq!(nonzero(column(&cpu, "threads", "tid", "cpu_ns")), truth_column(&t, "threads", "cpu_ns"), "cpu {extra:?}");
        assert_eq!(
            column(&cpu, "cpus", "cpu", "busy_ns"),
            t["cpus"].as_array().unwrap().iter().map(|c| (c["cpu"].to_string(), c["busy_ns"].as_u64().unwrap())).collect(),
            "cpu {extra:?}"
        );
        let io = analyze("kernel", "io", extra);
        for field in ["read_bytes", "write_bytes"] {
            assert_eq!(nonzero(column(&io, "threads", "tid", field)), truth_column(&t, "threads", field), "io threads {field} {extra:?}");
            assert_eq!(nonzero(column(&io, "processes", "pid", field)), truth_column(&t, "processes", field), "io processes {field} {extra:?}");
            assert_eq!(nonzero(column(&io, "files", "path", field)), truth_column(&t, "files", field), "io files {field} {extra:?}");
        }
    }
}

#[test]
fn cube_answers_are_the_kernel_traces_truth() {
    let dir = tempfile::tempdir().unwrap();
    let cube = dir.path().join("k.cube");
    let out = bin().args(["cube", "build"]).arg(testkit::fixture("kernel")).arg("-o").arg(&cube).output().unwrap();
    assert!(out.status.success(), "cube build: {}", String::from_utf8_lossy(&out.stderr));
    let query = |metric: &str, by: &[&str]| -> BTreeMap<String, u64> {
        let by: Vec<&str> = by.iter().flat_map(|b| ["--by", b]).collect();
        let out = bin().arg("query").arg(&cube).args(["--metric", metric, "--format", "json"]).args(by).output().unwrap();
        assert!(out.status.success(), "query {metric}: {}", String::from_utf8_lossy(&out.stderr));
        let v: Value = serde_json::from_slice(&out.stdout).unwrap();
        let rows = v["windows"][0]["rows"].as_array().unwrap();
        rows.iter()
            .map(|r| (r["group"].as_array().unwrap().iter().map(|g| g.as_str().unwrap()).collect::<Vec<_>>().join("/"), r["value"].as_f64().unwrap() as u64))
            .collect()
    };
    let t = truth();
    assert_eq!(query("events", &[]), BTreeMap::from([(String::new(), 4000)]));
    assert_eq!(nonzero(query("cpu_time", &["process:tid"])), truth_column(&t, "threads", "cpu_ns"));
    assert_eq!(nonzero(query("bytes_read", &["process:pid"])), truth_column(&t, "processes", "read_bytes"));
    assert_eq!(nonzero(query("bytes_written", &["process:pid"])), truth_column(&t, "processes", "write_bytes"));
}
