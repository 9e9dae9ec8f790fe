//! What the follower keeps across connections, by typed key, and the decisions it takes
//! when it reconnects: is it the same relay session (resume each stream after its last
//! packet) or a restarted relay's new session of the same name (a new generation whose
//! traces and streams are new even where their paths repeat); which streams did not
//! come back; which metadata bytes are new; what to report as lost.

use std::collections::{HashMap, HashSet};
use std::fmt;

use crate::proto::StreamInfo;

/// A trace of the followed session: the session's generation and the trace's path on
/// the relay.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub(super) struct TraceKey {
    /// 0 for the session first attached, one more for each new session of the same
    /// name found after a reconnection.
    pub generation: u64,
    /// The trace's path on the relay.
    pub path: String,
}

/// A data stream of the followed session: its trace and channel (stream file) name.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub(super) struct StreamKey {
    /// The stream's trace.
    pub trace: TraceKey,
    /// The channel's stream file, `chan0_1`.
    pub channel: String,
}

/// `GENERATION:PATH`, as notices name a trace.
impl fmt::Display for TraceKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}:{}", self.generation, self.path)
    }
}

/// `GENERATION:PATH/CHANNEL`, as notices name a stream.
impl fmt::Display for StreamKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}/{}", self.trace, self.channel)
    }
}

/// The relay's ids of a stream on the last connection: its stream and its session.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash)]
pub(super) struct RelayIds {
    /// The relay's stream id.
    pub stream: u64,
    /// The relay's session id.
    pub session: u64,
}

/// Per stream, what was delivered to the pipeline.
#[derive(Debug, Clone, Default)]
pub(super) struct Delivered {
    /// Our stream id (stable across reconnections).
    pub id: u64,
    /// Byte offset just after the last packet delivered.
    pub next_offset: u64,
    /// Packets delivered.
    pub packets: u64,
    /// End timestamp (cycles) of the last packet delivered.
    pub last_ts_end: Option<u64>,
    /// The pipeline was told the stream ended.
    pub ended: bool,
    /// The relay's ids on the last connection.
    pub relay: RelayIds,
}

impl Delivered {
    /// Whether the packet at byte `offset` was already delivered (a relay resending
    /// from the beginning after a reconnection).
    pub fn already_has(&self, offset: u64) -> bool {
        offset < self.next_offset
    }

    /// Records the delivery of the `len` bytes at `offset`, ending at `ts_end`.
    pub fn record(&mut self, offset: u64, len: u64, ts_end: u64) {
        self.next_offset = offset + len;
        self.packets += 1;
        self.last_ts_end = Some(ts_end);
    }
}

/// What survives reconnections: our ids of traces and streams, what each stream
/// delivered, and the metadata forwarded per trace.
#[derive(Debug, Default)]
pub(super) struct Known {
    /// The current generation (see [`TraceKey::generation`]).
    pub generation: u64,
    traces: HashMap<TraceKey, u64>,
    /// Every data stream ever seen.
    pub streams: HashMap<StreamKey, Delivered>,
    metadata: HashMap<TraceKey, Vec<u8>>,
}

impl Known {
    /// The key of the trace at `path` in the current generation.
    pub fn trace_key(&self, path: &str) -> TraceKey {
        TraceKey { generation: self.generation, path: path.to_string() }
    }

    /// The key of data stream `s` in the current generation.
    pub fn stream_key(&self, s: &StreamInfo) -> StreamKey {
        StreamKey { trace: self.trace_key(&s.path), channel: s.channel.clone() }
    }

    /// Our id of the trace at `path`, and whether it is new (registered now).
    pub fn trace(&mut self, path: &str) -> (u64, bool) {
        let next = self.traces.len() as u64;
        let mut new = false;
        let id = *self.traces.entry(self.trace_key(path)).or_insert_with(|| {
            new = true;
            next
        });
        (id, new)
    }

    /// Our id of a known trace.
    pub fn trace_id(&self, key: &TraceKey) -> Option<u64> {
        self.traces.get(key).copied()
    }

    /// Registers data stream `s` of relay session `session` (on this connection): its
    /// key, our id, and whether it is new.
    pub fn stream(&mut self, s: &StreamInfo, session: u64) -> (StreamKey, u64, bool) {
        let key = self.stream_key(s);
        let n = self.streams.len() as u64;
        let new = !self.streams.contains_key(&key);
        let d = self.streams.entry(key.clone()).or_insert_with(|| Delivered { id: n, ..Default::default() });
        d.relay = RelayIds { stream: s.id, session };
        (key, d.id, new)
    }

    /// After a reconnection, whether relay session `session` with `streams` is the
    /// session followed before (the relay stayed up) rather than a restarted relay's
    /// session of the same name. `resent` holds the metadata each metadata stream
    /// sent on this connection: the same session resends the metadata we have. When
    /// nothing was resent (a relay that keeps what it sent per trace), the same
    /// session still has the relay ids of our streams that had not ended, and no
    /// stream of the current generation under another id.
    pub fn same_session(&self, session: u64, streams: &[StreamInfo], resent: &HashMap<u64, Vec<u8>>) -> bool {
        let metadata = || streams.iter().filter(|s| s.metadata);
        if !resent.values().all(|b| b.is_empty()) {
            let same_as_ours = |m: &StreamInfo| {
                let buf = resent.get(&m.id).map(Vec::as_slice).unwrap_or_default();
                self.metadata.get(&self.trace_key(&m.path)).is_some_and(|o| {
                    let n = o.len().min(buf.len());
                    n > 0 && o[..n] == buf[..n]
                })
            };
            return metadata().next().is_some() && metadata().all(same_as_ours);
        }
        let live: HashSet<RelayIds> = self.streams.values().filter(|d| !d.ended).map(|d| d.relay).collect();
        let ours = |s: &StreamInfo| live.contains(&RelayIds { stream: s.id, session });
        let data = || streams.iter().filter(|s| !s.metadata);
        data().any(ours) && data().all(|s| ours(s) || !self.streams.contains_key(&self.stream_key(s)))
    }

    /// The streams not ended for which `present` is false (after a reconnection: the
    /// streams that did not come back), sorted.
    pub fn gone(&self, present: impl Fn(&StreamKey) -> bool) -> Vec<StreamKey> {
        let mut v: Vec<StreamKey> = self.streams.iter().filter(|(k, d)| !d.ended && !present(k)).map(|(k, _)| k.clone()).collect();
        v.sort();
        v
    }

    /// Of `chunk`, received on a connection that had received `*here` metadata bytes of
    /// `trace` before it, the bytes beyond those already forwarded (a relay resends the
    /// metadata from its beginning to a new connection); they are recorded as
    /// forwarded. Advances `*here`.
    pub fn new_metadata<'c>(&mut self, trace: &TraceKey, here: &mut u64, chunk: &'c [u8]) -> Option<&'c [u8]> {
        let store = self.metadata.entry(trace.clone()).or_default();
        let start = *here as usize;
        *here += chunk.len() as u64;
        if *here as usize <= store.len() {
            return None;
        }
        let new = &chunk[store.len().saturating_sub(start)..];
        store.extend_from_slice(new);
        Some(new)
    }

    /// Our ids of the streams not ended, in order.
    pub fn open_streams(&self) -> Vec<u64> {
        let mut v: Vec<u64> = self.streams.values().filter(|d| !d.ended).map(|d| d.id).collect();
        v.sort_unstable();
        v
    }

    /// `KEY: N packets, …` for every stream, sorted.
    pub fn received(&self) -> String {
        let mut v: Vec<String> = self.streams.iter().map(|(k, d)| format!("{k}: {} packets", d.packets)).collect();
        v.sort();
        v.join(", ")
    }

    /// `lost: KEY: N packets received, everything after clock value T lost; …` for the
    /// streams of `keys` (all streams when `None`), sorted.
    pub fn lost_after(&self, keys: Option<&[StreamKey]>) -> String {
        let mut v: Vec<String> = self
            .streams
            .iter()
            .filter(|(k, _)| keys.is_none_or(|keys| keys.contains(k)))
            .map(|(k, d)| match d.last_ts_end {
                Some(t) => format!("{k}: {} packets received, everything after clock value {t} lost", d.packets),
                None => format!("{k}: nothing received, everything lost"),
            })
            .collect();
        v.sort();
        format!("lost: {}", v.join("; "))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn info(id: u64, path: &str, channel: &str, metadata: bool) -> StreamInfo {
        StreamInfo { id, ctf_trace_id: 1, metadata, path: path.into(), channel: channel.into() }
    }

    /// A follower that received two streams of `ust/t` from session 7 (metadata `META`).
    fn known() -> Known {
        let mut k = Known::default();
        assert_eq!(k.trace("ust/t"), (0, true));
        assert_eq!(k.trace("ust/t"), (0, false));
        let (key, id, new) = k.stream(&info(10, "ust/t", "chan_0", false), 7);
        assert_eq!((key.to_string(), id, new), ("0:ust/t/chan_0".to_string(), 0, true));
        assert_eq!(k.stream(&info(11, "ust/t", "chan_1", false), 7).1, 1);
        let mut here = 0;
        assert_eq!(k.new_metadata(&k.trace_key("ust/t"), &mut here, b"META"), Some(&b"META"[..]));
        k
    }

    #[test]
    fn metadata_resent_from_its_beginning_is_forwarded_once() {
        let mut k = known();
        let t = k.trace_key("ust/t");
        // A new connection resends "ME", "TA" (known), then "+more" across the boundary.
        let mut here = 0;
        assert_eq!(k.new_metadata(&t, &mut here, b"ME"), None);
        assert_eq!(k.new_metadata(&t, &mut here, b"TA+m"), Some(&b"+m"[..]));
        assert_eq!(k.new_metadata(&t, &mut here, b"ore"), Some(&b"ore"[..]));
        assert_eq!(here, 9);
        // The next connection resends all of it at once: nothing new.
        assert_eq!(k.new_metadata(&t, &mut 0, b"META+more"), None);
    }

    #[test]
    fn the_same_session_resends_our_metadata() {
        let k = known();
        let streams = [info(1, "ust/t", "metadata", true), info(10, "ust/t", "chan_0", false)];
        let resent = |b: &[u8]| HashMap::from([(1u64, b.to_vec())]);
        assert!(k.same_session(7, &streams, &resent(b"META")));
        assert!(k.same_session(7, &streams, &resent(b"ME")), "a prefix of ours");
        assert!(!k.same_session(7, &streams, &resent(b"OTHER")), "a restarted relay's session with other metadata");
        // A trace we never saw.
        let other = [info(1, "ust/u", "metadata", true)];
        assert!(!k.same_session(7, &other, &resent(b"META")));
    }

    #[test]
    fn without_metadata_resent_the_relay_ids_tell() {
        let mut k = known();
        let none = HashMap::from([(1u64, Vec::new())]);
        let meta = info(1, "ust/t", "metadata", true);
        assert!(k.same_session(7, &[meta.clone(), info(10, "ust/t", "chan_0", false)], &none));
        assert!(k.same_session(7, &[info(10, "ust/t", "chan_0", false), info(12, "ust/t", "chan_2", false)], &none), "plus a new stream");
        assert!(!k.same_session(8, &[info(10, "ust/t", "chan_0", false)], &none), "another session id");
        assert!(!k.same_session(7, &[info(10, "ust/t", "chan_0", false), info(20, "ust/t", "chan_1", false)], &none), "a known stream under a new id");
        assert!(!k.same_session(7, &[meta], &none), "no data stream of ours");
        // A stream that ended does not count as ours any more.
        k.streams.values_mut().for_each(|d| d.ended = true);
        assert!(!k.same_session(7, &[info(10, "ust/t", "chan_0", false)], &none));
    }

    #[test]
    fn a_new_generation_has_new_traces_and_streams_under_the_same_paths() {
        let mut k = known();
        k.generation += 1;
        assert_eq!(k.trace("ust/t"), (1, true));
        let (key, id, new) = k.stream(&info(10, "ust/t", "chan_0", false), 9);
        assert_eq!((key.to_string(), id, new), ("1:ust/t/chan_0".to_string(), 2, true));
        // The old generation's streams are gone unless they came back.
        assert_eq!(k.gone(|s| s.trace.generation == 1).iter().map(|s| s.to_string()).collect::<Vec<_>>(), ["0:ust/t/chan_0", "0:ust/t/chan_1"]);
    }

    #[test]
    fn losses_name_each_stream_and_its_last_clock_value() {
        let mut k = known();
        let key = k.stream_key(&info(10, "ust/t", "chan_0", false));
        let d = k.streams.get_mut(&key).unwrap();
        d.record(0, 4096, 1500);
        assert!(d.already_has(0) && !d.already_has(4096));
        assert_eq!(k.received(), "0:ust/t/chan_0: 1 packets, 0:ust/t/chan_1: 0 packets");
        assert_eq!(
            k.lost_after(None),
            "lost: 0:ust/t/chan_0: 1 packets received, everything after clock value 1500 lost; 0:ust/t/chan_1: nothing received, everything lost"
        );
        assert_eq!(k.lost_after(Some(&[key])), "lost: 0:ust/t/chan_0: 1 packets received, everything after clock value 1500 lost");
    }
}
