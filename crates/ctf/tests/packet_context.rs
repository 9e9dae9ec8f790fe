//! Packet contexts read from the packets' headers alone ([`TraceSet::packet_context_uints`]):
//! the `cpu_id` of every packet of a stream is the one its events report when they
//! are decoded, on the shared kernel traces; a field no context has is `None`.

use ctf::stream::{Item, StreamCursor};
use ctf::trace::TraceSet;

#[test]
fn packet_cpu_ids_are_those_their_events_report() {
    let mut packets = 0;
    for name in ["many-threads", "bug446190-arm"] {
        let Some(dir) = testkit::shared_trace("packet_cpu_ids", name) else { return };
        let set = TraceSet::open(&dir).unwrap();
        for s in 0..set.streams.len() {
            let n = set.streams[s].packets.len();
            let mut seen = std::collections::BTreeSet::new();
            let mut cur = StreamCursor::new(&set, s);
            while let Some(item) = cur.next().unwrap() {
                if let Item::Event(ev) = item {
                    seen.insert(ev.packet_cpu_id());
                }
            }
            let ids = set.packet_context_uints(s, 0..n, "cpu_id");
            assert_eq!(ids.len(), n, "{name} stream {s}");
            let ids: std::collections::BTreeSet<Option<u64>> = ids.into_iter().collect();
            assert_eq!(ids.len(), 1, "{name} stream {s}: one CPU per stream, {ids:?}");
            assert!(ids.iter().all(|c| c.is_some() && seen.contains(c)), "{name} stream {s}: {ids:?} against its events' {seen:?}");
            assert_eq!(set.packet_context_uints(s, 0..n, "no_such_field"), vec![None; n]);
            packets += n;
        }
    }
    assert!(packets > 10, "{packets} packets");
}
