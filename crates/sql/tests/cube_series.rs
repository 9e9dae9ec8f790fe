//! `cube_series` answers what the cube answers to `tracecube query --every` (the
//! `cube` crate's own query), row for row, on a cube built from the committed kernel
//! fixture; bad calls are errors that say what is wrong.

use std::path::{Path, PathBuf};

use cube::cli::QueryArgs;
use cube::Cube;
use sql::arrow::array::{Array, AsArray};
use sql::arrow::datatypes::{DataType, Float64Type, Int64Type};
use sql::arrow::record_batch::RecordBatch;
use sql::SqlSession;

/// The fixture's cube, saved to a temporary directory, and the same cube read back.
fn cube() -> (tempfile::TempDir, PathBuf, Cube) {
    let opts = cube_feed::BuildOptions { config: cube::CubeConfig::fine(), threads: 2, ..Default::default() };
    let (mut c, _) = cube_feed::build_from_trace(&testkit::fixture("kernel"), &opts).unwrap();
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("cube");
    cube::save(&mut c, &dir).unwrap();
    let c = cube::open(&dir).unwrap();
    (tmp, dir, c)
}

/// A session over no trace, with the cube at `dir`.
fn session(dir: &Path) -> SqlSession {
    let s = SqlSession::open(&[], 2).unwrap();
    s.add_cube(dir).unwrap();
    s
}

/// One row as text: `begin end group… value`.
type Line = Vec<String>;

/// The rows of a `cube_series` result, as text.
fn lines(batches: &[RecordBatch]) -> Vec<Line> {
    let mut out = Vec::new();
    for b in batches {
        for i in 0..b.num_rows() {
            let line = b
                .columns()
                .iter()
                .map(|c| match c.data_type() {
                    DataType::Int64 => c.as_primitive::<Int64Type>().value(i).to_string(),
                    DataType::Float64 => c.as_primitive::<Float64Type>().value(i).to_string(),
                    DataType::Utf8 => c.as_string::<i32>().value(i).to_string(),
                    t => panic!("unexpected column type {t}"),
                })
                .collect();
            out.push(line);
        }
    }
    out
}

/// The cube's own answer to `--metric metric --every every --by by --agg agg`, as
/// [`lines`] writes it.
fn truth(c: &Cube, metric: &str, every: Option<&str>, by: &[&str], agg: Option<&str>) -> Vec<Line> {
    let args = QueryArgs {
        metric: metric.into(),
        every: every.map(str::to_string),
        by: by.iter().map(|b| b.to_string()).collect(),
        agg: agg.map(str::to_string),
        ..Default::default()
    };
    let resp = c.query(&args.to_request(c).unwrap()).unwrap();
    let avg = agg == Some("avg");
    let mut out = Vec::new();
    for w in &resp.windows {
        for r in &w.rows {
            let mut line = vec![w.begin_ns.to_string(), w.end_ns.to_string()];
            line.extend(r.group.iter().cloned());
            line.push(if avg { r.value.to_string() } else { (r.value as i64).to_string() });
            out.push(line);
        }
    }
    out
}

/// A question: metric, every, by, agg.
type Case<'a> = (&'a str, Option<&'a str>, &'a [&'a str], Option<&'a str>);

/// About a tenth of the cube's span, in whole ms (its finest level).
fn every_ns(c: &Cube) -> u64 {
    let (a, b) = c.span().unwrap();
    ((b - a) / 10).div_ceil(1_000_000).max(1) * 1_000_000
}

#[test]
fn cube_series_equals_the_cubes_answers_row_for_row() {
    let (_tmp, dir, c) = cube();
    let s = session(&dir);
    let e = every_ns(&c);
    let every = format!("{}ms", e / 1_000_000);
    let cases: [Case; 5] = [
        ("cpu_time", Some(&every), &["process:tid"], None),
        ("events", Some(&every), &["operation:name", "cpu"], None),
        ("syscall_latency", Some(&every), &["process:tid"], Some("avg")),
        ("bytes_read", None, &[], None),
        ("sched_latency", Some(&every), &["cpu"], Some("max")),
    ];
    for (metric, every, by, agg) in cases {
        let sql_every = every.map_or("NULL".to_string(), |e| format!("'{e}'"));
        let q = format!("SELECT * FROM cube_series('{metric}', {sql_every}, '{}', {})", by.join(","), agg.map_or("NULL".into(), |a| format!("'{a}'")));
        let got = lines(&s.query(&q).unwrap());
        let want = truth(&c, metric, every, by, agg);
        assert!(!want.is_empty(), "{q}: the fixture gives rows");
        assert_eq!(got, want, "{q}");
        if every.is_some() {
            let windows: std::collections::BTreeSet<&String> = want.iter().map(|l| &l[0]).collect();
            assert!(windows.len() > 1, "{q}: several windows");
        }
    }
    // The columns: the level names of `by`, a double for avg.
    let b = s.query(&format!("SELECT * FROM cube_series('syscall_latency', '{every}', 'process:tid,operation', 'avg') LIMIT 1")).unwrap();
    let schema = b[0].schema();
    let names: Vec<&str> = schema.fields().iter().map(|f| f.name().as_str()).collect();
    assert_eq!(names, ["begin_ns", "end_ns", "tid", "name", "value"]);
    assert_eq!(schema.field(4).data_type(), &DataType::Float64);
}

#[test]
fn every_may_be_ns_an_interval_or_a_duration_and_sql_works_on_the_series() {
    let (_tmp, dir, c) = cube();
    let s = session(&dir);
    let e = every_ns(&c);
    let want = truth(&c, "cpu_time", Some(&format!("{e}ns")), &["process:tid"], None);
    for every in [format!("{e}"), format!("'{}ms'", e / 1_000_000), format!("INTERVAL '{} milliseconds'", e / 1_000_000)] {
        let got = lines(&s.query(&format!("SELECT * FROM cube_series('cpu_time', {every}, 'process:tid')")).unwrap());
        assert_eq!(got, want, "every = {every}");
    }
    // SQL over the series: per thread, the windows' sum; a window is [begin, end).
    let per_tid = s.query(&format!("SELECT tid, sum(value) FROM cube_series('cpu_time', {e}, 'process:tid') GROUP BY tid ORDER BY tid")).unwrap();
    let mut sums = std::collections::BTreeMap::new();
    for l in &want {
        *sums.entry(l[2].clone()).or_insert(0i64) += l[3].parse::<i64>().unwrap();
    }
    let mut got = std::collections::BTreeMap::new();
    for b in &per_tid {
        for i in 0..b.num_rows() {
            got.insert(b.column(0).as_string::<i32>().value(i).to_string(), b.column(1).as_primitive::<Int64Type>().value(i));
        }
    }
    assert_eq!(got, sums);
    let bad = s.query("SELECT count(*) FROM cube_series('cpu_time', '1ms') WHERE end_ns <= begin_ns").unwrap();
    assert_eq!(bad[0].column(0).as_primitive::<Int64Type>().value(0), 0);
}

#[test]
fn bad_calls_say_what_is_wrong() {
    let (_tmp, dir, _c) = cube();
    let s = session(&dir);
    let err = |q: &str| s.query(q).expect_err(q).to_string();
    let e = err("SELECT * FROM cube_series('nope', '1s')");
    assert!(e.contains("no metric \"nope\"") && e.contains("cpu_time"), "{e}");
    let e = err("SELECT * FROM cube_series('cpu_time', '1s', 'galaxy')");
    assert!(e.contains("no dimension \"galaxy\"") && e.contains("process"), "{e}");
    let e = err("SELECT * FROM cube_series('cpu_time', '1s', 'process:planet')");
    assert!(e.contains("no level \"planet\"") && e.contains("tid"), "{e}");
    let e = err("SELECT * FROM cube_series('cpu_time', '1s', 'file')");
    assert!(e.contains("has no dimension file"), "{e}");
    let e = err("SELECT * FROM cube_series('cpu_time', '1s', NULL, 'median')");
    assert!(e.contains("unknown aggregate"), "{e}");
    let e = err("SELECT * FROM cube_series('cpu_time', 'soon')");
    assert!(e.contains("expected a duration"), "{e}");
    let e = err("SELECT * FROM cube_series('cpu_time', 0)");
    assert!(e.contains("every must be positive"), "{e}");
    let e = err("SELECT * FROM cube_series('cpu_time')");
    assert!(e.contains("cube_series(metric, every [, by [, agg]]): 1 arguments"), "{e}");
    let e = err("SELECT * FROM cube_series(42, '1s')");
    assert!(e.contains("metric must be text"), "{e}");
    // Under a cost bound (a server's), a question that reads too much is refused
    // before it runs; one within the bound is answered.
    let bounded = SqlSession::open(&[], 1).unwrap();
    bounded.add_cube_bounded(&dir, 1).unwrap();
    let e = bounded.query("SELECT * FROM cube_series('cpu_time', '1ms', 'process')").expect_err("over the bound").to_string();
    assert!(e.contains("cell values, over the limit of 1"), "{e}");
    bounded.add_cube_bounded(&dir, u64::MAX).unwrap();
    assert!(!bounded.query("SELECT * FROM cube_series('cpu_time', '1ms', 'process')").unwrap().is_empty());
    assert!(bounded.function_names().iter().any(|f| f == sql::cube_series::NAME));
    assert!(!SqlSession::open(&[], 1).unwrap().function_names().iter().any(|f| f == sql::cube_series::NAME));
    // A directory that holds no cube names it.
    let empty = tempfile::tempdir().unwrap();
    let e = SqlSession::open(&[], 1).unwrap().add_cube(empty.path()).unwrap_err().to_string();
    assert!(e.starts_with("cannot open cube ") && e.contains(&empty.path().display().to_string()), "{e}");
}
