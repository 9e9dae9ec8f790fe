//! Shared by the decoding targets: an in-memory `TraceSet` of one trace with one data
//! stream file (no index), built by the crate's own in-memory assembly
//! (`TraceSet::add_memory_trace`, `set_memory_files`), then every item read and rendered as JSON.
use std::path::{Path, PathBuf};

pub fn decode_all(metadata: &[u8], data: &[u8]) {
    let mut set = ctf::trace::TraceSet::in_memory(Path::new("."));
    if set.add_memory_trace(Path::new("."), metadata).is_err() {
        return;
    }
    set.set_memory_files(0, vec![(PathBuf::from("stream"), data.to_vec())]);
    if set.traces[0].plan.streams.is_empty() || set.streams.is_empty() {
        return; // StreamCursor needs a stream class.
    }
    let _ = set.stream_error(&set.streams[0]);
    let mut c = ctf::stream::StreamCursor::new(&set, 0);
    let mut json = Vec::new();
    while let Ok(Some(mut item)) = c.next() {
        json.clear();
        let _ = ctf::dump::write_json(&mut json, &mut item);
    }
}
