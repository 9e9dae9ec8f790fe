//! `tracecube export`, `dump --format parquet` and `sql --format parquet`: files read
//! back by independent
//! readers (serde_json, a CSV split, pyarrow through `scripts/parquet_sums.py`) hold
//! what the analyses, the cube and `count --by-name` say.
//!
//! The Parquet read-backs need Python's pyarrow; without it they are skipped with a
//! reason, unless `TRACECUBE_REQUIRE_PYARROW=1` (set by `.ci/run`).

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use serde_json::Value;

use crate::support;
use support::bin;

fn run(cmd: &mut Command) -> Vec<u8> {
    let out = cmd.output().unwrap();
    assert!(out.status.success(), "{cmd:?}: {}", String::from_utf8_lossy(&out.stderr));
    out.stdout
}

fn synth(dir: &Path) -> PathBuf {
    let t = dir.join("trace");
    run(bin().args(["synth", "--cpus", "2", "--events", "30000", "--seed", "9", "-o"]).arg(&t));
    t
}

fn analyze(trace: &Path, a: &str) -> Value {
    serde_json::from_slice(&run(bin().arg("analyze").arg(trace).args(["-a", a, "--format", "json"]))).unwrap()
}

fn sum(v: &Value, list: &str, field: &str) -> u64 {
    v[list].as_array().unwrap().iter().map(|x| x[field].as_u64().unwrap()).sum()
}

/// pyarrow's reading of a directory of Parquet files, or None (skipped) without it.
fn pyarrow_sums(dir: &Path) -> Option<Value> {
    let has = Command::new("python3").args(["-c", "import pyarrow"]).stderr(Stdio::null()).status().is_ok_and(|s| s.success());
    if !has {
        assert!(std::env::var("TRACECUBE_REQUIRE_PYARROW").map_or(true, |v| v != "1"), "TRACECUBE_REQUIRE_PYARROW=1 but python3 cannot import pyarrow");
        testkit::skip("pyarrow", "python3 has no pyarrow (pip install pyarrow)");
        return None;
    }
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../scripts/parquet_sums.py");
    Some(serde_json::from_slice(&run(Command::new("python3").arg(script).arg(dir))).unwrap())
}

#[test]
fn analysis_exports_in_json_and_csv_hold_the_analyses_sums() {
    let dir = tempfile::tempdir().unwrap();
    let trace = synth(dir.path());
    let (cpu, io) = (analyze(&trace, "cpu"), analyze(&trace, "io"));
    let out = dir.path().join("json");
    run(bin().arg("export").arg(&trace).args(["--to", "json", "-o"]).arg(&out));
    let threads: Value = serde_json::from_slice(&std::fs::read(out.join("cpu_threads.json")).unwrap()).unwrap();
    assert_eq!(threads, cpu["threads"], "the rows are the analysis's, field for field");
    let procs: Value = serde_json::from_slice(&std::fs::read(out.join("io_processes.json")).unwrap()).unwrap();
    assert_eq!(procs, io["processes"]);

    let out = dir.path().join("csv");
    run(bin().arg("export").arg(&trace).args(["--to", "csv", "--analysis", "io", "-o"]).arg(&out));
    let text = std::fs::read_to_string(out.join("io_files.csv")).unwrap();
    let mut lines = text.lines();
    let header: Vec<&str> = lines.next().unwrap().split(',').collect();
    let col = header.iter().position(|h| *h == "write_bytes").unwrap();
    // Paths have no commas in synthetic traces, so a plain split reads the rows.
    let written: u64 = lines.map(|l| l.split(',').nth(col).unwrap().parse::<u64>().unwrap()).sum();
    assert_eq!(written, sum(&io, "files", "write_bytes"));
    assert!(written > 0);
    assert!(!out.join("cpu_threads.csv").exists(), "--analysis io exports only io");
}

#[test]
fn cube_series_add_up_to_the_cube_s_totals() {
    let dir = tempfile::tempdir().unwrap();
    let trace = synth(dir.path());
    let cube = dir.path().join("c.cube");
    let config = dir.path().join("fine.toml");
    std::fs::write(&config, "[[level]]\ngranularity = \"1ms\"\nspan = \"10s\"\n").unwrap();
    run(bin().args(["cube", "build"]).arg(&trace).arg("-o").arg(&cube).arg("--config").arg(&config));
    let out = dir.path().join("csv");
    run(bin().arg("export").arg(&cube).args(["--to", "csv", "--metric", "cpu_time", "--by", "process:name", "--every", "100ms", "-o"]).arg(&out));
    let text = std::fs::read_to_string(out.join("series_cpu_time.csv")).unwrap();
    let mut lines = text.lines();
    assert_eq!(lines.next(), Some("begin_ns,end_ns,name,value"));
    let mut per_name: BTreeMap<String, i64> = BTreeMap::new();
    let mut buckets = std::collections::BTreeSet::new();
    for l in lines {
        let f: Vec<&str> = l.split(',').collect();
        buckets.insert(f[0].to_string());
        *per_name.entry(f[2].to_string()).or_default() += f[3].parse::<i64>().unwrap();
    }
    assert!(buckets.len() > 1, "several time buckets");
    // Adjacent windows telescope: their sum is the whole history's value.
    let whole: Value =
        serde_json::from_slice(&run(bin().arg("query").arg(&cube).args(["--metric", "cpu_time", "--by", "process:name", "--format", "json"]))).unwrap();
    let want: BTreeMap<String, i64> = whole["windows"][0]["rows"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| (r["group"][0].as_str().unwrap().to_string(), r["value"].as_f64().unwrap() as i64))
        .collect();
    assert_eq!(per_name, want);

    // Every metric by default, each dimension at its finest level.
    let all = dir.path().join("all");
    run(bin().arg("export").arg(&cube).args(["--to", "json", "-o"]).arg(&all));
    for m in ["events", "cpu_time", "bytes_read", "bytes_written"] {
        let v: Value = serde_json::from_slice(&std::fs::read(all.join(format!("series_{m}.json"))).unwrap()).unwrap();
        assert!(!v.as_array().unwrap().is_empty(), "{m}");
    }
    let bad = bin().arg("export").arg(&cube).args(["--to", "json", "--metric", "nope", "-o"]).arg(&all).output().unwrap();
    assert_eq!(bad.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&bad.stderr).contains("no metric \"nope\""));
    let bad = bin().arg("export").arg(&cube).args(["--to", "xlsx", "-o"]).arg(&all).output().unwrap();
    assert!(String::from_utf8_lossy(&bad.stderr).contains("unknown format \"xlsx\""));
}

#[test]
fn parquet_analysis_exports_read_back_with_pyarrow_equal_the_analyses() {
    let dir = tempfile::tempdir().unwrap();
    let trace = synth(dir.path());
    let out = dir.path().join("pq");
    run(bin().arg("export").arg(&trace).args(["--to", "parquet", "-o"]).arg(&out));
    let Some(got) = pyarrow_sums(&out) else { return };
    let (count, cpu, io) = (analyze(&trace, "count"), analyze(&trace, "cpu"), analyze(&trace, "io"));
    let s = |table: &str, col: &str| got[table]["sums"][col].as_u64().unwrap_or_else(|| panic!("{table}.{col}: {}", got[table]));
    assert_eq!(s("cpu_threads", "cpu_ns"), sum(&cpu, "threads", "cpu_ns"));
    assert_eq!(s("cpu_cpus", "busy_ns"), sum(&cpu, "cpus", "busy_ns"));
    assert_eq!(got["cpu_threads"]["rows"].as_u64().unwrap() as usize, cpu["threads"].as_array().unwrap().len());
    for (table, list) in [("io_threads", "threads"), ("io_processes", "processes"), ("io_files", "files")] {
        for col in ["read_bytes", "write_bytes"] {
            assert_eq!(s(table, col), sum(&io, list, col), "{table}.{col}");
        }
    }
    assert!(s("io_files", "write_bytes") > 0);
    let by_name: u64 = count["by_name"].as_object().unwrap().values().map(|v| v.as_u64().unwrap()).sum();
    assert_eq!(s("count_by_name", "value"), by_name);
    assert_eq!(s("count_summary", "events"), count["events"].as_u64().unwrap());
    assert_eq!(got["cpu_threads"]["types"]["cpu_ns"], "uint64");
    assert_eq!(got["cpu_threads"]["types"]["comm"], "string");
}

#[test]
fn sql_parquet_reads_back_with_pyarrow_equal_to_the_analysis() {
    let dir = tempfile::tempdir().unwrap();
    let trace = synth(dir.path());
    let out = dir.path().join("pq");
    std::fs::create_dir(&out).unwrap();
    // An extension other than .parquet is kept as given.
    let file = out.join("threads.pq");
    let q = "SELECT tid, comm, cpu_ns, usage, cpu_ns > 0 AS ran FROM cpu_usage";
    let o = bin().arg("sql").arg(&trace).args(["-j", "2", "--format", "parquet", "-e", q, "-o"]).arg(&file).output().unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    assert!(file.exists() && !out.join("threads.parquet").exists());
    std::fs::rename(&file, out.join("threads.parquet")).unwrap();
    let Some(got) = pyarrow_sums(&out) else { return };
    let cpu = analyze(&trace, "cpu");
    assert_eq!(got["threads"]["rows"].as_u64().unwrap() as usize, cpu["threads"].as_array().unwrap().len());
    assert_eq!(got["threads"]["sums"]["cpu_ns"].as_u64().unwrap(), sum(&cpu, "threads", "cpu_ns"));
    assert_eq!(got["threads"]["sums"]["tid"].as_i64().unwrap(), cpu["threads"].as_array().unwrap().iter().map(|t| t["tid"].as_i64().unwrap()).sum::<i64>());
    for (col, ty) in [("tid", "int64"), ("comm", "string"), ("cpu_ns", "uint64"), ("usage", "double"), ("ran", "bool")] {
        assert_eq!(got["threads"]["types"][col], ty, "{col}");
    }
    // Parquet needs a file and one query.
    let bad = bin().arg("sql").arg(&trace).args(["--format", "parquet", "-e", "SELECT 1"]).output().unwrap();
    assert!(!bad.status.success() && String::from_utf8_lossy(&bad.stderr).contains("-o FILE"), "{}", String::from_utf8_lossy(&bad.stderr));
    let bad = bin().arg("sql").arg(&trace).args(["--format", "parquet", "-e", "SELECT 1; SELECT 2", "-o"]).arg(out.join("x.parquet")).output().unwrap();
    assert!(!bad.status.success() && String::from_utf8_lossy(&bad.stderr).contains("one statement"));
}

/// Event names and counts from `tracecube count --by-name`.
fn counts_by_name(trace: &Path) -> BTreeMap<String, u64> {
    let text = String::from_utf8(run(bin().arg("count").arg(trace).arg("--by-name"))).unwrap();
    text.lines()
        .filter_map(|l| {
            let mut it = l.split_whitespace();
            let n = it.next()?.parse().ok()?;
            Some((it.next()?.to_string(), n))
        })
        .collect()
}

#[test]
fn dump_parquet_has_one_table_per_event_class_with_count_s_rows() {
    let dir = tempfile::tempdir().unwrap();
    let mut traces = vec![synth(dir.path())];
    for t in ["lttng-recorded/kemu-small", "ust-small"] {
        traces.extend(testkit::shared_trace("dump_parquet on shared traces", t));
    }
    for (i, trace) in traces.iter().enumerate() {
        let out = dir.path().join(format!("dump{i}"));
        let o = bin().arg("dump").arg(trace).args(["--format", "parquet", "-o"]).arg(&out).output().unwrap();
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
        let want = counts_by_name(trace);
        assert!(want.len() > 3, "{}", trace.display());
        // Our writer's own report, one line per table: `N rows  NAME  PATH`.
        let said: BTreeMap<String, u64> = String::from_utf8_lossy(&o.stderr)
            .lines()
            .filter_map(|l| match l.split_whitespace().collect::<Vec<_>>()[..] {
                [rows, "rows", name, _path] => Some((name.to_string(), rows.parse().ok()?)),
                _ => None,
            })
            .collect();
        assert_eq!(said, want, "{}", trace.display());
        let Some(got) = pyarrow_sums(&out) else { continue };
        let files = got.as_object().unwrap();
        assert_eq!(files.len(), want.len(), "{}: one file per event class", trace.display());
        let rows: u64 = files.values().map(|f| f["rows"].as_u64().unwrap()).sum();
        assert_eq!(rows, want.values().sum::<u64>(), "{}", trace.display());
        for (name, n) in &want {
            let stem: String = name.chars().map(|c| if c.is_ascii_alphanumeric() || "_-.".contains(c) { c } else { '_' }).collect();
            assert_eq!(files[&stem]["rows"].as_u64(), Some(*n), "{}: {name}", trace.display());
        }
    }
}
