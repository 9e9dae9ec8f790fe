//! The `tracecube` binary as a black box: commands, outputs and exit codes.

use std::path::PathBuf;
use std::process::Command;

use crate::support;
use support::bin;

/// `../shared` beside the repository, when present (CI and developer machines).
fn shared() -> Option<PathBuf> {
    testkit::shared("cli")
}

#[test]
fn demo_runs_and_agrees_with_truth() {
    let out = bin().args(["demo", "--events", "20000"]).output().unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let text = String::from_utf8(out.stdout).unwrap();
    assert!(text.contains("identical"), "{text}");
}

#[test]
fn synth_then_dump_round_trips_event_count() {
    let dir = tempfile::tempdir().unwrap();
    let out = bin().args(["synth", "--cpus", "2", "--events", "5000", "--seed", "3", "-o"]).arg(dir.path()).output().unwrap();
    assert!(out.status.success());
    let truth: serde_json::Value = serde_json::from_slice(&std::fs::read(dir.path().join("truth.json")).unwrap()).unwrap();
    let out = bin().arg("dump").arg(dir.path()).output().unwrap();
    assert!(out.status.success());
    let lines: Vec<serde_json::Value> = out.stdout.split(|b| *b == b'\n').filter(|l| !l.is_empty()).map(|l| serde_json::from_slice(l).unwrap()).collect();
    assert_eq!(lines.len() as u64, truth["events_total"].as_u64().unwrap());
    // Time order across streams.
    let ts: Vec<i64> = lines.iter().map(|l| l["ts"].as_i64().unwrap()).collect();
    assert!(ts.windows(2).all(|w| w[0] <= w[1]));
}

#[test]
fn bench_analyze_tables_the_chosen_analyses_per_thread_count() {
    let dir = tempfile::tempdir().unwrap();
    let out = bin().args(["synth", "--cpus", "2", "--events", "3000", "--seed", "5", "-o"]).arg(dir.path()).output().unwrap();
    assert!(out.status.success());
    let out = bin().args(["bench", "analyze"]).arg(dir.path()).args(["--max-threads", "2", "--reps", "2", "-a", "io", "-a", "cpu"]).output().unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let text = String::from_utf8(out.stdout).unwrap();
    let rows: Vec<Vec<&str>> = text.lines().skip(1).map(|l| l.split_whitespace().collect()).collect();
    let keys: Vec<(&str, &str)> = rows.iter().map(|r| (r[0], r[1])).collect();
    assert_eq!(keys, vec![("io", "1"), ("io", "2"), ("cpu", "1"), ("cpu", "2")], "{text}");
    let out = bin().args(["bench", "analyze"]).arg(dir.path()).args(["-a", "nope"]).output().unwrap();
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("unknown analysis"));
}

#[test]
fn missing_trace_is_a_clean_error() {
    let dir = tempfile::tempdir().unwrap();
    let out = bin().arg("dump").arg(dir.path()).output().unwrap();
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("no CTF trace found"), "{err}");
}

#[test]
fn damaged_stream_keeps_earlier_events_and_names_file_and_offset() {
    let dir = tempfile::tempdir().unwrap();
    assert!(bin().args(["synth", "--cpus", "1", "--events", "3000", "-o"]).arg(dir.path()).status().unwrap().success());
    let stream = dir.path().join("kernel/channel0_0");
    let mut bytes = std::fs::read(&stream).unwrap();
    let cut = bytes.len() / 2;
    bytes.truncate(cut);
    std::fs::write(&stream, &bytes).unwrap();
    std::fs::remove_dir_all(dir.path().join("kernel/index")).unwrap();
    let out = bin().arg("dump").arg(dir.path()).output().unwrap();
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("channel0_0") && err.contains("offset"), "{err}");
    assert!(out.stdout.split(|b| *b == b'\n').filter(|l| !l.is_empty()).count() > 100, "events before the damage are printed");
}

#[test]
fn invalid_traces_get_one_clean_error_each() {
    let Some(shared) = shared() else { return };
    let mut n = 0;
    for e in std::fs::read_dir(shared.join("traces/invalid")).unwrap() {
        let dir = e.unwrap().path();
        // Every command that reads events says the same, once: exit 2, no panic, and
        // an error naming a file of this trace and where in it (the audit of the
        // decoder's error paths through the commands, over the 78 invalid traces).
        let cube = tempfile::tempdir().unwrap();
        let commands: [&[&str]; 5] = [&["dump"], &["info"], &["count"], &["analyze", "-a", "io"], &["cube", "build", "-o"]];
        for args in commands {
            let mut cmd = bin();
            cmd.args(args);
            if args[0] == "cube" {
                cmd.arg(cube.path().join("c"));
            }
            let out = cmd.arg(&dir).output().unwrap();
            let err = String::from_utf8_lossy(&out.stderr);
            let what = format!("{} {}", args.join(" "), dir.display());
            assert_eq!(out.status.code(), Some(2), "{what}: {err}");
            assert!(!err.contains("panicked"), "{what}: {err}");
            if args[0] == "dump" {
                assert_eq!(err.lines().count(), 1, "{what}: one line, the error: {err}");
            }
            let errors: Vec<&str> = err.lines().filter(|l| l.starts_with("tracecube: error:")).collect();
            assert_eq!(errors.len(), 1, "{what}: one error: {err}");
            assert!(errors[0].contains(&*dir.to_string_lossy()), "{what}: names a file of the trace: {err}");
            let located = ["offset ", "metadata line ", "not a regular file"].iter().any(|w| errors[0].contains(w));
            assert!(located, "{what}: says where in the file: {err}");
        }
        n += 1;
    }
    assert!(n >= 70);
    println!("{n} invalid traces rejected cleanly by dump, info, count, analyze and cube build");
}

#[test]
fn info_reports_discarded_events_like_lttng_status() {
    let Some(shared) = shared() else { return };
    let out = bin().arg("info").arg(shared.join("traces/lttng-recorded/ust-discard")).output().unwrap();
    let text = String::from_utf8(out.stdout).unwrap();
    // `lttng status` reported 113,133 discarded events for this session.
    assert!(text.contains("discarded events: 113,133"), "{text}");
    assert!(text.contains("\nevents: 29,991"), "{text}");
}

#[test]
fn ctf2_and_ctf18_synth_traces_dump_identically() {
    let a = tempfile::tempdir().unwrap();
    let b = tempfile::tempdir().unwrap();
    for (dir, extra) in [(&a, None), (&b, Some("--ctf2"))] {
        let mut c = bin();
        c.args(["synth", "--cpus", "2", "--events", "4000", "--seed", "11", "-o"]).arg(dir.path());
        if let Some(x) = extra {
            c.arg(x);
        }
        assert!(c.status().unwrap().success());
    }
    let info = bin().arg("info").arg(b.path()).output().unwrap();
    assert!(String::from_utf8_lossy(&info.stdout).contains("CTF 2 JSON"));
    let da = bin().arg("dump").arg(a.path()).output().unwrap();
    let db = bin().arg("dump").arg(b.path()).output().unwrap();
    assert!(da.status.success() && db.status.success());
    assert!(!da.stdout.is_empty());
    assert_eq!(da.stdout, db.stdout);
}

#[test]
fn large_real_metadata_files_parse() {
    let Some(shared) = shared() else { return };
    let mut n = 0;
    for e in std::fs::read_dir(shared.join("traces/metadata-only")).unwrap() {
        let dir = e.unwrap().path();
        let out = bin().arg("info").arg(&dir).output().unwrap();
        assert!(out.status.success(), "{}: {}", dir.display(), String::from_utf8_lossy(&out.stderr));
        let text = String::from_utf8(out.stdout).unwrap();
        assert!(text.contains("events: 0") && text.contains("event class(es)"), "{text}");
        n += 1;
    }
    assert_eq!(n, 6);
}

/// The text view is Babeltrace 2's own text output, line for line (TZ=UTC).
#[test]
fn text_view_equals_babeltrace2_text() {
    let Some(shared) = shared() else { return };
    for t in ["ust-small", "lttng-recorded/kemu-small", "lttng-recorded/ust-perpid-discard", "lttng-recorded/ust-discard"] {
        let name = t.rsplit('/').next().unwrap();
        let theirs = testkit::gunzip(&shared.join(format!("expected/babeltrace/{name}.bt2.txt.gz")));
        let out = bin().arg("print").arg(shared.join("traces").join(t)).env("TZ", "UTC").output().unwrap();
        assert!(out.status.success());
        let ours = String::from_utf8_lossy(&out.stdout);
        assert!(!theirs.is_empty());
        if let Some((i, (a, b))) = ours.lines().zip(theirs.lines()).enumerate().find(|(_, (a, b))| a != b) {
            panic!("{t}: line {}:\n ours:   {a}\n theirs: {b}", i + 1);
        }
        assert_eq!(ours.lines().count(), theirs.lines().count(), "{t}");
    }
}

/// An analysis that finds nothing says why on stderr, in one line, instead of printing
/// silent empty tables: CPU usage of a user-space trace, I/O of a kernel trace recorded
/// without system calls, a range holding no event.
#[test]
fn analyses_say_when_nothing_relevant_is_there() {
    let Some(shared) = shared() else { return };
    let note = |args: &[&str], trace: &str| {
        let out = bin().arg("analyze").arg(shared.join("traces").join(trace)).args(args).output().unwrap();
        assert!(out.status.success(), "{args:?} {trace}: {}", String::from_utf8_lossy(&out.stderr));
        String::from_utf8_lossy(&out.stderr).lines().filter(|l| l.starts_with("note: ")).map(str::to_string).collect::<Vec<_>>()
    };
    let ust = note(&["-a", "cpu"], "ust-cyg-profile-glxgears");
    assert!(ust.len() == 1 && ust[0].contains("no sched_switch event"), "{ust:?}");
    let no_syscalls = note(&["-a", "io"], "flipping-endianness");
    assert!(no_syscalls.len() == 1 && no_syscalls[0].contains("no system call events"), "{no_syscalls:?}");
    let empty_range = note(&["-a", "io", "--begin", "1", "--end", "2"], "many-threads");
    assert!(empty_range.len() == 1 && empty_range[0].contains("in the range analysed"), "{empty_range:?}");
    assert!(note(&["-a", "io"], "many-threads").is_empty(), "a trace with I/O gets no note");
}

/// The LAMI 1.0 handshake Trace Compass's external-analysis runner performs: `--mi-version`
/// prints the version, `--metadata` the analysis's metadata object with the fields the
/// LAMI 1.0 specification requires, and every result table then uses a declared table
/// class (directly or by `inherit`), with one cell per declared column, each of the
/// declared column's class.
#[test]
fn lami_handshake_and_results_agree_with_the_metadata() {
    let dir = tempfile::tempdir().unwrap();
    assert!(bin().args(["synth", "--cpus", "2", "--events", "20000", "--seed", "4", "--background", "50", "-o"]).arg(dir.path()).status().unwrap().success());
    let run = |args: &[&str]| {
        let out = bin().arg("analyze").args(args).output().unwrap();
        assert!(out.status.success(), "{args:?}: {}", String::from_utf8_lossy(&out.stderr));
        String::from_utf8(out.stdout).unwrap()
    };
    for a in ["count", "cpu", "io", "syscall", "irq", "sched", "block"] {
        assert_eq!(run(&["-a", a, "--format", "lami", "--mi-version"]).trim(), "1.0");
        let meta: serde_json::Value = serde_json::from_str(&run(&["-a", a, "--format", "lami", "--metadata"])).unwrap();
        assert_eq!(meta["mi-version"], serde_json::json!({"major": 1, "minor": 0}), "{a}");
        for field in ["version", "title", "authors", "description", "url", "tags"] {
            assert!(!meta[field].is_null(), "{a}: metadata without {field}");
        }
        let classes = meta["table-classes"].as_object().unwrap_or_else(|| panic!("{a}: no table-classes"));
        let trace = dir.path().to_str().unwrap();
        let results: serde_json::Value = serde_json::from_str(&run(&["-a", a, "--format", "lami", "--output-progress", trace])).unwrap();
        let tables = results["results"].as_array().unwrap();
        assert!(!tables.is_empty(), "{a}");
        for t in tables {
            let class = t["class"].as_str().or(t["class"]["inherit"].as_str()).unwrap_or_else(|| panic!("{a}: table without class: {t}"));
            let cols = classes[class]["column-descriptions"].as_array().unwrap_or_else(|| panic!("{a}: class {class} not declared"));
            assert_eq!(t["time-range"]["class"], "time-range", "{a}");
            for row in t["data"].as_array().unwrap() {
                let cells = row.as_array().unwrap();
                assert_eq!(cells.len(), cols.len(), "{a} {class}: {row}");
                for (cell, col) in cells.iter().zip(cols) {
                    // (LAMI's `unknown` value may stand in any column.)
                    assert!(cell["class"] == col["class"] || cell["class"] == "unknown", "{a} {class}: {row}");
                }
            }
        }
    }
}

/// One time syntax, one origin (the first event), in every command: each form of the
/// same instant gives the same `analyze` count, the same first `print` line and the
/// same `query` value. kemu-small's first event is 2026-11-22T03:12:06.096664128Z; the
/// instant is 200 ms later. The local forms are read with TZ=Europe/Paris (UTC+1).
#[test]
fn every_time_form_means_the_same_instant_everywhere() {
    let Some(shared) = shared() else { return };
    let t = shared.join("traces/lttng-recorded/kemu-small");
    let forms: [(&str, &[&str]); 8] = [
        ("1795317126296664128", &[]),
        ("+200ms", &[]),
        ("+0.2s", &[]),
        ("03:12:06.296664128", &["--gmt"]),
        ("04:12:06.296664128", &[]),
        ("2026-11-22T03:12:06.296664128Z", &[]),
        ("2026-11-22 04:12:06.296664128", &[]),
        ("2026-11-22T04:12:06.296664128+01:00", &["--gmt"]),
    ];
    let run = |args: &[&str]| {
        let out = bin().env("TZ", "Europe/Paris").args(args).output().unwrap();
        assert!(out.status.success(), "{args:?}: {}", String::from_utf8_lossy(&out.stderr));
        String::from_utf8(out.stdout).unwrap()
    };
    let dir = tempfile::tempdir().unwrap();
    let cube = dir.path().join("c.cube");
    run(&["cube", "build", t.to_str().unwrap(), "-o", cube.to_str().unwrap()]);
    let mut seen: Option<(String, String, String)> = None;
    for (form, extra) in forms {
        let count = run(&[&["analyze", t.to_str().unwrap(), "-a", "count", "--begin", form][..], extra].concat());
        let print_gmt: &[&str] = if extra.is_empty() { &[] } else { &["--clock-gmt"] };
        let first_line = run(&[&["print", t.to_str().unwrap(), "--begin", form][..], print_gmt].concat()).lines().next().unwrap_or_default().to_string();
        // (print shows local or UTC times as asked: compare from the event's name on.)
        let first_line = first_line.split_once(") ").map_or(first_line.clone(), |x| x.1.to_string());
        let value = run(&[&["query", cube.to_str().unwrap(), "--metric", "events", "--at", form][..], extra].concat());
        let got = (count.lines().find(|l| l.starts_with("Events:")).unwrap_or_default().to_string(), first_line, value);
        match &seen {
            None => seen = Some(got),
            Some(s) => assert_eq!(&got, s, "{form} {extra:?}"),
        }
    }
    let (count, _, _) = seen.unwrap();
    assert!(count.starts_with("Events: ") && !count.starts_with("Events: 0 "), "{count}");
}

/// The live summary reads as `analyze` prints: counts with separators, sizes in binary
/// units, durations, threads as `name (tid)`, the range answered as dates (#54).
#[test]
fn live_summary_is_readable() {
    let dir = tempfile::tempdir().unwrap();
    let out = bin().args(["synth", "--cpus", "2", "--events", "20000", "--seed", "7", "-o"]).arg(dir.path()).output().unwrap();
    assert!(out.status.success());
    let out = bin().args(["replay", "--speed", "0", "--summary-every", "0", "--gmt", "--top", "2"]).arg(dir.path()).output().unwrap();
    let err = String::from_utf8(out.stderr).unwrap();
    assert!(out.status.success(), "{err}");
    let lines: Vec<&str> = err.lines().collect();
    assert_eq!(lines[0], "--- end");
    assert_eq!(
        lines[1],
        "events: 20,000 (last at 2024-01-01 01:00:00.196247881) | packets: 3 (768.00 KiB) | dropped: 0 events (0 packets) | late: 0 | tracer discarded: 0 | lost packets: 0"
    );
    // Lag and backlog depend on the machine.
    assert!(lines[2].starts_with("lag: ") && lines[2].contains(" | backlog max: ") && lines[2].ends_with(" | slow batches: 0"), "{}", lines[2]);
    let tables = "
Timerange: [2024-01-01 01:00:00.000000000, 2024-01-01 01:00:01.000000000] (1.000 s)

Top CPU time (last 10 s)
 Thread            CPU time
 python3 (1017)   31.875 ms
 postgres (1013)  24.489 ms

Top bytes read (last 10 s)
 Thread                  Read
 postgres (1013)     1.22 MiB
 backup (1025)    1013.33 KiB

Top bytes written (last 10 s)
 Thread              Written
 backup (1025)      1.67 MiB
 postgres (1013)  968.66 KiB

Top events (last 10 s)
 Event               Count
 sched_switch        2,614
 syscall_entry_read  2,547
";
    assert_eq!(lines[3..lines.len() - 1].join("\n"), tables);
    assert!(lines[lines.len() - 1].starts_with("replay: 3 packets (768.00 KiB), "), "{err}");
}

/// The minimum Rust version is one number: README's equals Cargo.toml's
/// `rust-version`, and the toolchain running this test (the one CI builds with) is
/// that version or newer (cargo refuses older ones).
#[test]
fn the_minimum_rust_version_is_one_number() {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let cargo = std::fs::read_to_string(root.join("Cargo.toml")).unwrap();
    let declared = cargo.lines().find_map(|l| l.strip_prefix("rust-version = ")).map(|v| v.trim_matches('"').to_string()).expect("rust-version in Cargo.toml");
    let readme = std::fs::read_to_string(root.join("README.md")).unwrap();
    assert!(readme.contains(&format!("A Rust toolchain ({declared} or newer")), "README names rust-version {declared}");
    let rustc = Command::new(std::env::var("RUSTC").unwrap_or_else(|_| "rustc".into())).arg("--version").output().unwrap();
    let version = String::from_utf8_lossy(&rustc.stdout).split_whitespace().nth(1).unwrap_or("").to_string();
    let parse = |v: &str| v.split('.').take(2).map(|x| x.parse::<u32>().unwrap_or(0)).collect::<Vec<_>>();
    assert!(parse(&version) >= parse(&declared), "rustc {version} is at least rust-version {declared}");
}
