//! Helpers shared by the reader's integration tests.

use ctf::stream::{Item, StreamCursor};
use ctf::trace::TraceSet;

/// A compact fingerprint of every item of packets `range` of stream `stream`:
/// (kind, ts, JSON dump).
pub fn items(set: &TraceSet, stream: usize, range: std::ops::Range<usize>) -> Vec<(u8, Option<i64>, String)> {
    let mut out = Vec::new();
    let mut c = StreamCursor::with_packets(set, stream, range);
    while let Some(mut item) = c.next().expect("valid trace") {
        let mut json = Vec::new();
        ctf::dump::write_json(&mut json, &mut item).expect("decodes");
        let (kind, ts) = match &item {
            Item::Event(e) => (0, e.ts()),
            Item::Discarded(n) => (1, n.end_ns),
            Item::LostPackets(n) => (2, n.end_ns),
        };
        out.push((kind, ts, String::from_utf8(json).unwrap()));
    }
    out
}

/// The directories of the shared real traces, the invalid ones too; `None` (said on
/// stderr) when `../shared` is absent.
pub fn shared_trace_dirs() -> Option<Vec<std::path::PathBuf>> {
    let root = testkit::shared("shared_trace_dirs")?.join("traces");
    let entries = std::fs::read_dir(&root).unwrap_or_else(|e| panic!("{}: {e}", root.display()));
    let mut dirs: Vec<_> = entries.flatten().map(|e| e.path()).filter(|p| p.is_dir()).collect();
    if let Ok(inv) = std::fs::read_dir(root.join("invalid")) {
        dirs.extend(inv.flatten().map(|e| e.path()).filter(|p| p.is_dir()));
    }
    Some(dirs)
}
