//! Shared by the decoding targets: an in-memory `TraceSet` of one trace with one data
//! stream file (no index), assembled as `TraceSet::open` does from a directory, then
//! every item read and rendered.
use ctf::ir::{MetadataFormat, TraceClass};
use ctf::plan::Plan;
use ctf::trace::{FileBytes, PacketRef, Stream, StreamFile, Trace, TraceSet};
use std::path::PathBuf;

pub fn decode_all(class: TraceClass, format: MetadataFormat, plan: Plan, data: &[u8]) {
    let path = PathBuf::from("stream");
    let (packets, error) = ctf::index::scan_packets(&plan, data, &path);
    let clocks = class.clocks.iter().map(ctf::clock::ClockConv::new).collect();
    let first = packets.first();
    let (class_id, instance) = (first.map_or(0, |p| p.stream_class), first.and_then(|p| p.instance));
    let refs = packets.iter().map(|&info| PacketRef { trace: 0, file: 0, info }).collect();
    let stream = Stream { class_id, instance, packets: refs, error: error.is_some().then_some((0, 0)) };
    let file = StreamFile { path, bytes: FileBytes::Owned(data.to_vec()), packets, from_index: false, error };
    let trace = Trace { dir: PathBuf::from("."), class, format, plan, clocks, files: vec![file] };
    let set = TraceSet { root: PathBuf::from("."), traces: vec![trace], streams: vec![stream] };
    let _ = set.stream_error(&set.streams[0]);
    if set.traces[0].plan.streams.is_empty() {
        return; // StreamCursor needs a stream class.
    }
    let mut c = ctf::stream::StreamCursor::new(&set, 0);
    let (mut json, mut text, mut prev) = (Vec::new(), String::new(), None);
    while let Ok(Some(mut item)) = c.next() {
        json.clear();
        text.clear();
        let _ = ctf::dump::write_json(&mut json, &mut item);
        let _ = ctf::dump::write_text(&mut text, &mut item, &mut prev, Some("host"));
    }
}
