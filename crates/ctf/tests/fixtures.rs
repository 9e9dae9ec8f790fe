//! The committed fixture traces (`crates/testkit/fixtures`, always there): a kernel
//! trace of the lttng-modules layout written by `synth` and a UST trace recorded by
//! LTTng 2.13. Every event decodes as Babeltrace 2 decodes it (its canonical dump is
//! committed beside each trace), and every fast path reads what the general decoder
//! reads.

use ctf::crosscheck::fast_paths_agree;
use ctf::merge::Merger;
use ctf::trace::TraceSet;

/// The fixtures: name and number of events (`babeltrace2 TRACE | wc -l`).
const FIXTURES: [(&str, usize); 2] = [("kernel", 4000), ("ust", 1644)];

/// The canonical JSON lines of every item of fixture `name`, merged in time order.
fn dump(name: &str) -> String {
    let set = TraceSet::open(&testkit::fixture(name)).unwrap_or_else(|e| panic!("{name}: {e}"));
    let mut m = Merger::new(&set);
    let mut out = Vec::new();
    while let Some(mut x) = m.next().unwrap_or_else(|e| panic!("{name}: {e}")) {
        ctf::dump::write_json(&mut out, &mut x.item).unwrap_or_else(|e| panic!("{name}: {e:?}"));
    }
    String::from_utf8(out).unwrap()
}

#[test]
fn fixtures_decode_as_babeltrace2_decodes_them() {
    for (name, events) in FIXTURES {
        let theirs = testkit::gunzip(&testkit::fixture(&format!("{name}.bt2.jsonl.gz")));
        assert_eq!(theirs.lines().count(), events, "{name}: Babeltrace 2's canonical dump");
        let ours = dump(name);
        if let Some((i, (a, b))) = ours.lines().zip(theirs.lines()).enumerate().find(|(_, (a, b))| a != b) {
            panic!("{name}: event {}:\n ours:   {a}\n theirs: {b}", i + 1);
        }
        assert_eq!(ours.lines().count(), events, "{name}");
    }
}

#[test]
fn fixtures_fast_paths_equal_the_general_decoder() {
    for (name, _) in FIXTURES {
        let fast = TraceSet::open(&testkit::fixture(name)).unwrap();
        let slow = TraceSet::open(&testkit::fixture(name)).unwrap().without_compiled_headers();
        for mask in [u64::MAX, 0x5555_5555_5555_5555, 0b1001] {
            if let Err(e) = fast_paths_agree(&fast, &slow, mask, &[0, 1, 2, 3, 1, 0, 2]) {
                panic!("{name}, mask {mask:#x}: {e}");
            }
        }
    }
}
