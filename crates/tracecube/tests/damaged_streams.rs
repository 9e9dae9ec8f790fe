//! A stream cut in the middle of a packet (issue 46, item 5) in the commands that read
//! every event outside `dump`/`print`/`analyze`: `dump --format parquet` (the export of
//! decoded events) and the live pipeline (`replay`, which `live` shares). Each delivers
//! every intact stream's events and the damaged stream's up to the damage, the same
//! events `dump` prints, then reports the error (file, offset, cause) and exits 2.

use std::collections::BTreeMap;
use std::path::Path;
use std::process::{Command, Output};

fn tracecube(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_tracecube")).args(args).output().unwrap()
}

/// The JSON lines of events in `b`, sorted (the live pipeline feeds events in time
/// order across batches; ties may come in another order).
fn sorted_events(b: &[u8]) -> Vec<String> {
    let mut v: Vec<String> = String::from_utf8_lossy(b).lines().filter(|l| l.contains("\"name\"")).map(str::to_owned).collect();
    v.sort();
    v
}

/// A 3-CPU synthetic kernel trace of `events` events written under `root`, and its
/// events as `dump` prints them (sorted).
fn synth_trace(root: &Path, events: &str, seed: &str) -> (std::path::PathBuf, Vec<String>) {
    let out = tracecube(&["synth", "--events", events, "--cpus", "3", "--seed", seed, "-o", root.to_str().unwrap()]);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let trace = root.join("kernel");
    let intact = tracecube(&["dump", trace.to_str().unwrap()]);
    assert!(intact.status.success());
    (trace, sorted_events(&intact.stdout))
}

#[test]
fn parquet_and_live_deliver_the_intact_streams_and_the_damaged_one_up_to_its_damage() {
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path();
    let (trace, all) = synth_trace(root, "60000", "4");
    // Stream 1 cut inside a packet past its first (its index goes too: it would say
    // more than the file holds).
    let file = trace.join("channel0_1");
    let len = std::fs::metadata(&file).unwrap().len();
    let cut = len / 2 + 1234;
    std::fs::OpenOptions::new().write(true).open(&file).unwrap().set_len(cut).unwrap();
    std::fs::remove_dir_all(trace.join("index")).unwrap();
    let t = trace.to_str().unwrap();

    let dump = tracecube(&["dump", t]);
    assert_eq!(dump.status.code(), Some(2));
    let want = sorted_events(&dump.stdout);
    assert!(want.len() > all.len() / 2 && want.len() < all.len(), "{} of {} events", want.len(), all.len());
    let located = |err: &str| err.contains("channel0_1: offset ") && err.contains("runs past the end");

    // Parquet: the rows of every table add up to the events dump printed.
    let pq = root.join("pq");
    let out = tracecube(&["dump", "--format", "parquet", "-o", pq.to_str().unwrap(), t]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(located(&err), "{err}");
    let rows: usize = err.lines().filter(|l| l.contains(" rows ")).filter_map(|l| l.split_whitespace().next()?.parse::<usize>().ok()).sum();
    assert_eq!(rows, want.len(), "{err}");
    assert!(Path::new(&pq).join("sched_switch.parquet").exists());

    // The live pipeline: the events it fed (its canonical dump) are dump's.
    let fed = root.join("fed.json");
    let out = tracecube(&["replay", "--speed", "0", "--summary-every", "0", "--dump", fed.to_str().unwrap(), t]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(located(&err), "{err}");
    assert_eq!(sorted_events(&std::fs::read(&fed).unwrap()), want);
}

/// A packet in the middle of one stream damaged: its magic flipped, its index kept
/// (the later packets stay listed and intact); or a bit of its `timestamp_begin`
/// flipped (2^36 ns later: it begins after its own end), without an index (the
/// partitioning then places it by its own times, after the later packets of its
/// stream). Whatever the partitioning, the analyses see that stream up to its damage
/// only — the events `dump` prints (issue 46, item 5: every stream a prefix of the
/// intact trace's). Several slices are read in parallel before the error is known;
/// the engine then reads again without the packets after the damage.
#[test]
fn a_damaged_stream_is_a_prefix_at_every_partitioning() {
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path();
    let (trace, all) = synth_trace(root, "200000", "5");
    let all = all.len();
    // The first packet of channel0_1 whose start lies past a third of the file.
    let bytes = std::fs::read(trace.join("channel0_1")).unwrap();
    let starts = packet_starts(&bytes);
    let at = *starts.iter().find(|&&i| i > bytes.len() / 3).unwrap();
    // (The packet header is 32 bytes, then `timestamp_begin`, little-endian.)
    for (what, byte, mask, keep_index) in [("magic", at, 0xff, true), ("timestamp_begin", at + 32 + 4, 0x10, false)] {
        let copy = root.join(what);
        copy_trace(&trace, &copy, keep_index);
        let mut damaged = bytes.clone();
        damaged[byte] ^= mask;
        std::fs::write(copy.join("channel0_1"), &damaged).unwrap();
        let t = copy.to_str().unwrap();

        let dump = tracecube(&["dump", t]);
        assert_eq!(dump.status.code(), Some(2), "{what}: {}", String::from_utf8_lossy(&dump.stderr));
        let want = sorted_events(&dump.stdout).len();
        assert!(want > all / 2 && want < all, "{what}: {want} of {all} events");
        assert_counts_at_every_partitioning(t, &dump.stdout, what);
    }
}

/// Where the packets of stream file `bytes` start (its packet magics, either byte
/// order); more than six.
fn packet_starts(bytes: &[u8]) -> Vec<usize> {
    let magic = [0xc1, 0x1f, 0xfc, 0xc1];
    let starts: Vec<usize> = (0..bytes.len() - 4).filter(|&i| bytes[i..i + 4] == magic || bytes[i..i + 4] == [0xc1, 0xfc, 0x1f, 0xc1]).collect();
    assert!(starts.len() > 6, "packets: {}", starts.len());
    starts
}

/// Copies the files of trace `from` into a new folder `to`, and its index with
/// `keep_index`.
fn copy_trace(from: &Path, to: &Path, keep_index: bool) {
    std::fs::create_dir(to).unwrap();
    for e in std::fs::read_dir(from).unwrap() {
        let e = e.unwrap();
        if e.file_type().unwrap().is_file() {
            std::fs::copy(e.path(), to.join(e.file_name())).unwrap();
        }
    }
    if keep_index {
        std::fs::create_dir(to.join("index")).unwrap();
        for e in std::fs::read_dir(from.join("index")).unwrap() {
            let e = e.unwrap();
            std::fs::copy(e.path(), to.join("index").join(e.file_name())).unwrap();
        }
    }
}

/// The events of `dump`'s output `b`, per name.
fn per_name(b: &[u8]) -> BTreeMap<String, u64> {
    let mut names = BTreeMap::new();
    for line in String::from_utf8_lossy(b).lines().filter(|l| l.contains("\"name\"")) {
        let v: serde_json::Value = serde_json::from_str(line).unwrap();
        *names.entry(v["name"].as_str().unwrap().to_owned()).or_default() += 1;
    }
    names
}

/// `analyze -a count` on damaged trace `t`, at several partitionings: exit 2, the
/// error names channel0_1, and the events counted, in all, per CPU and per name, are
/// the events `dump` printed (its output `dump`).
fn assert_counts_at_every_partitioning(t: &str, dump: &[u8], what: &str) {
    let names = per_name(dump);
    let want = names.values().sum::<u64>();
    for args in [
        &["-j", "1"][..],
        &["-j", "2", "--chunk-size", "64K"],
        &["-j", "2", "--chunk-size", "16K"],
        &["-j", "2", "--chunk-size", "16K", "--partition", "stream"],
    ] {
        let mut cmd = vec!["analyze", "-a", "count", "--format", "json"];
        cmd.extend_from_slice(args);
        cmd.push(t);
        let out = tracecube(&cmd);
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{what} {args:?}: {err}");
        assert!(err.contains("channel0_1"), "{what} {args:?}: the error names the file: {err}");
        let json: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
        assert_eq!(json["events"].as_u64(), Some(want), "{what} {args:?}: count equals the events dump printed");
        let sum = |key: &str| json[key].as_object().unwrap().values().map(|v| v.as_u64().unwrap()).sum::<u64>();
        assert_eq!(sum("by_cpu"), want, "{what} {args:?}: per CPU");
        let by_name: BTreeMap<String, u64> = serde_json::from_value(json["by_name"].clone()).unwrap();
        assert_eq!(by_name, names, "{what} {args:?}: per name");
    }
}

/// A stream cut inside a packet, without an index: the analyses that take whole
/// packets as counts count that packet's events up to the cut, in every total (they
/// had its events per name, but not in the packet's count: the event total and the
/// per-CPU counts were short of the packet's events before the damage, while the
/// per-name counts had them).
#[test]
fn a_packet_cut_short_is_counted_up_to_the_cut() {
    let tmp = tempfile::tempdir().unwrap();
    let (trace, all) = synth_trace(tmp.path(), "200000", "6");
    let file = trace.join("channel0_1");
    let len = std::fs::metadata(&file).unwrap().len();
    std::fs::OpenOptions::new().write(true).open(&file).unwrap().set_len(len / 2 + 1234).unwrap();
    std::fs::remove_dir_all(trace.join("index")).unwrap();
    let t = trace.to_str().unwrap();
    let dump = tracecube(&["dump", t]);
    assert_eq!(dump.status.code(), Some(2), "{}", String::from_utf8_lossy(&dump.stderr));
    let want = sorted_events(&dump.stdout).len();
    assert!(want > all.len() / 2 && want < all.len(), "{want} of {} events", all.len());
    assert_counts_at_every_partitioning(t, &dump.stdout, "cut");
}

/// A packet of channel0_1 damaged in its first quarter (48 bytes of ones: an extended
/// header naming no event class), its index kept: the first of two packets that
/// counting passes over side by side, or the second. `count --by-name` and
/// `analyze -a count` at every partitioning count, per name, the events `dump` prints
/// before the error. (`count` had also counted the events of the packet after the
/// damaged one, passed over side by side with it, past the damage: with the fifth
/// packet damaged, 178,787 events where `dump` printed 176,310.)
#[test]
fn per_name_counts_stop_at_damage_in_either_packet_of_a_pair() {
    let tmp = tempfile::tempdir().unwrap();
    let (trace, all) = synth_trace(tmp.path(), "200000", "7");
    let bytes = std::fs::read(trace.join("channel0_1")).unwrap();
    let starts = packet_starts(&bytes);
    // `count` reads a stream's packets in pairs from its first: (0, 1), (2, 3), (4, 5).
    for k in [4, 5] {
        let what = format!("packet {k}");
        let copy = tmp.path().join(&what);
        copy_trace(&trace, &copy, true);
        let mut damaged = bytes.clone();
        let at = starts[k] + (starts[k + 1] - starts[k]) / 4;
        damaged[at..at + 48].fill(0xff);
        std::fs::write(copy.join("channel0_1"), &damaged).unwrap();
        let t = copy.to_str().unwrap();
        let dump = tracecube(&["dump", t]);
        let err = String::from_utf8_lossy(&dump.stderr);
        assert_eq!(dump.status.code(), Some(2), "{what}: {err}");
        assert!(err.contains("channel0_1: offset ") && err.contains("no event class"), "{what}: {err}");
        let names = per_name(&dump.stdout);
        let want = names.values().sum::<u64>();
        assert!(want > all.len() as u64 / 2 && want < all.len() as u64, "{what}: {want} of {} events", all.len());

        let count = tracecube(&["count", "--by-name", t]);
        assert_eq!(count.status.code(), Some(2), "{what}: {}", String::from_utf8_lossy(&count.stderr));
        let out = String::from_utf8_lossy(&count.stdout);
        assert!(out.starts_with(&format!("events: {want}\n")), "{what}: {out}");
        let counted: BTreeMap<String, u64> = out
            .lines()
            .skip(2)
            .map(|l| {
                let (n, name) = l.trim().split_once(' ').unwrap();
                (name.to_owned(), n.parse().unwrap())
            })
            .collect();
        assert_eq!(counted, names, "{what}: count --by-name");
        assert_counts_at_every_partitioning(t, &dump.stdout, &what);
    }
}
