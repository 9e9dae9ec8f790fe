//! The follower against a scripted relay: streams that come back after a cut
//! connection, a relay that closes for good, a restarted relay (with and without the
//! session re-created), new streams and metadata appearing mid-session, a session
//! that ends. The relay behaves as lttng-relayd towards a viewer: a new connection is
//! sent every index and the metadata again from their beginning.

use std::cell::RefCell;
use std::collections::{HashMap, HashSet};
use std::rc::Rc;
use std::sync::atomic::AtomicBool;
use std::time::{Duration, Instant};

use super::{Connect, Follower, RelayOptions, RelayReport, Viewer};
use crate::client::{Attached, Metadata, NewStreams, Packet};
use crate::error::{LiveError, Result};
use crate::msg::Msg;
use crate::proto::{Index, IndexStatus, SessionInfo, StreamInfo, FLAG_NEW_METADATA, FLAG_NEW_STREAM};
use crate::url::LiveUrl;

/// A stream of the scripted relay.
struct Stream {
    info: StreamInfo,
    /// Packets (bytes, end timestamp); offsets follow each other.
    packets: Vec<(Vec<u8>, u64)>,
    closed: bool,
}

struct Session {
    id: u64,
    name: String,
    streams: Vec<Stream>,
    /// Metadata per trace path.
    metadata: HashMap<String, Vec<u8>>,
    ended: bool,
}

type Step = Box<dyn FnOnce(&mut World)>;

/// The relay's state, shared by its connections.
#[derive(Default)]
struct World {
    sessions: Vec<Session>,
    next_id: u64,
    /// Connections opened since the last cut are alive.
    epoch: u64,
    /// Connection attempts to refuse (the relay is down).
    down_for: u32,
    /// The relay is down for good.
    closed: bool,
    /// `ATTACH_SESSION`s to answer "another viewer is attached".
    busy: u32,
    packets_served: usize,
    /// Run after the N-th packet served.
    script: Vec<(usize, Step)>,
    commands: usize,
}

impl World {
    fn new_id(&mut self) -> u64 {
        self.next_id += 1;
        self.next_id
    }

    /// Adds session `name` with trace `ust/t` (metadata `meta`) and `channels`, each with
    /// `packets` packets, still open.
    fn add_session(&mut self, name: &str, meta: &str, channels: &[&str], packets: usize) {
        let id = self.new_id();
        let mut s = Session { id, name: name.into(), streams: Vec::new(), metadata: HashMap::from([("ust/t".into(), meta.as_bytes().to_vec())]), ended: false };
        let mid = self.new_id();
        s.streams.push(Stream { info: info(mid, "metadata", true), packets: Vec::new(), closed: false });
        self.sessions.push(s);
        for c in channels {
            self.add_stream(name, c, packets);
        }
    }

    fn session(&mut self, name: &str) -> &mut Session {
        self.sessions.iter_mut().find(|s| s.name == name).expect("a scripted session")
    }

    fn add_stream(&mut self, session: &str, channel: &str, packets: usize) {
        let id = self.new_id();
        let stream = Stream { info: info(id, channel, false), packets: (0..packets).map(|i| packet(channel, i)).collect(), closed: false };
        self.session(session).streams.push(stream);
    }

    /// Ends the session: its streams close once their packets are sent.
    fn end(&mut self, session: &str) {
        let s = self.session(session);
        s.ended = true;
        s.streams.iter_mut().for_each(|st| st.closed = true);
    }

    /// Cuts every open connection.
    fn cut(&mut self) {
        self.epoch += 1;
    }

    /// Kills the relay: connections cut, sessions forgotten, down for `attempts`
    /// connection attempts.
    fn restart(&mut self, attempts: u32) {
        self.cut();
        self.sessions.clear();
        self.down_for = attempts;
    }

    fn stream(&self, id: u64) -> Option<(&Session, &Stream)> {
        self.sessions.iter().find_map(|s| s.streams.iter().find(|st| st.info.id == id).map(|st| (s, st)))
    }
}

fn info(id: u64, channel: &str, metadata: bool) -> StreamInfo {
    StreamInfo { id, ctf_trace_id: 1, metadata, path: "ust/t".into(), channel: channel.into() }
}

/// Packet `i` of `channel`: its name, ending at clock value `100 * (i + 1)`.
fn packet(channel: &str, i: usize) -> (Vec<u8>, u64) {
    (format!("{channel}#{i}").into_bytes(), 100 * (i as u64 + 1))
}

struct Relay(Rc<RefCell<World>>);

impl Connect for Relay {
    type Viewer = Conn;
    fn connect(&mut self) -> Result<Conn> {
        let mut w = self.0.borrow_mut();
        if w.closed || w.down_for > 0 {
            w.down_for = w.down_for.saturating_sub(1);
            return Err(io("connect"));
        }
        Ok(Conn { world: self.0.clone(), epoch: w.epoch, next: HashMap::new(), meta_sent: HashMap::new(), seen: HashSet::new() })
    }
}

/// One viewer connection: per stream, the next index and the metadata sent.
struct Conn {
    world: Rc<RefCell<World>>,
    epoch: u64,
    next: HashMap<u64, usize>,
    meta_sent: HashMap<u64, usize>,
    seen: HashSet<u64>,
}

fn io(cmd: &'static str) -> LiveError {
    LiveError::Io { peer: "relay:5344".into(), cmd, source: std::io::Error::from(std::io::ErrorKind::ConnectionReset) }
}

/// The relay's state for command `cmd` of a connection opened in `epoch`, once the
/// connection is checked alive.
fn alive<'w>(world: &'w RefCell<World>, epoch: u64, cmd: &'static str) -> Result<std::cell::RefMut<'w, World>> {
    let mut w = world.borrow_mut();
    w.commands += 1;
    assert!(w.commands < 100_000, "the follower never ends");
    if w.epoch != epoch {
        return Err(io(cmd));
    }
    Ok(w)
}

impl Viewer for Conn {
    fn peer(&self) -> &str {
        "relay:5344"
    }
    fn list_sessions(&mut self) -> Result<Vec<SessionInfo>> {
        let w = alive(&self.world, self.epoch, "LIST_SESSIONS")?;
        Ok(w.sessions.iter().map(|s| SessionInfo { id: s.id, live_timer_us: 0, clients: 0, streams: 0, hostname: "h".into(), name: s.name.clone() }).collect())
    }
    fn create_viewer_session(&mut self) -> Result<()> {
        alive(&self.world, self.epoch, "CREATE_SESSION").map(drop)
    }
    fn attach(&mut self, id: u64) -> Result<Attached> {
        let mut w = alive(&self.world, self.epoch, "ATTACH_SESSION")?;
        if w.busy > 0 {
            w.busy -= 1;
            return Err(LiveError::Busy { peer: "relay:5344".into(), session: id });
        }
        let s = w.sessions.iter().find(|s| s.id == id).expect("attach to a listed session");
        self.seen.extend(s.streams.iter().map(|st| st.info.id));
        Ok(Attached { streams: s.streams.iter().map(|st| st.info.clone()).collect() })
    }
    fn new_streams(&mut self, id: u64) -> Result<NewStreams> {
        let w = alive(&self.world, self.epoch, "GET_NEW_STREAMS")?;
        let s = w.sessions.iter().find(|s| s.id == id).expect("a known session");
        let new: Vec<StreamInfo> = s.streams.iter().filter(|st| !self.seen.contains(&st.info.id)).map(|st| st.info.clone()).collect();
        self.seen.extend(new.iter().map(|st| st.id));
        Ok(match (new.is_empty(), s.ended) {
            (false, _) => NewStreams::Streams(new),
            (true, false) => NewStreams::NoNew,
            (true, true) => NewStreams::Hup,
        })
    }
    fn metadata(&mut self, stream: u64) -> Result<Metadata> {
        let w = alive(&self.world, self.epoch, "GET_METADATA")?;
        let (s, st) = w.stream(stream).expect("a metadata stream");
        let all = &s.metadata[&st.info.path];
        let sent = self.meta_sent.entry(stream).or_default();
        if *sent < all.len() {
            let b = all[*sent..].to_vec();
            *sent = all.len();
            return Ok(Metadata::Data(b));
        }
        Ok(if s.ended { Metadata::Hup } else { Metadata::NoNew })
    }
    fn next_index(&mut self, stream: u64) -> Result<Index> {
        let w = alive(&self.world, self.epoch, "GET_NEXT_INDEX")?;
        let (s, st) = w.stream(stream).expect("a data stream");
        // As lttng-relayd: flags for streams this viewer was not told of, and for
        // metadata it was not sent.
        let new_stream = s.streams.iter().any(|o| !self.seen.contains(&o.info.id));
        let new_metadata = s.streams.iter().filter(|o| o.info.metadata).any(|m| *self.meta_sent.get(&m.info.id).unwrap_or(&0) < s.metadata[&m.info.path].len());
        let flags = if new_stream { FLAG_NEW_STREAM } else { 0 } | if new_metadata { FLAG_NEW_METADATA } else { 0 };
        let i = *self.next.get(&stream).unwrap_or(&0);
        let blank =
            Index { offset: 0, packet_bits: 0, content_bits: 0, ts_begin: 0, ts_end: 0, events_discarded: 0, stream_id: 0, status: IndexStatus::Retry, flags };
        let Some((bytes, ts_end)) = st.packets.get(i) else {
            return Ok(Index { status: if st.closed { IndexStatus::Hup } else { IndexStatus::Retry }, ..blank });
        };
        let offset = st.packets[..i].iter().map(|p| p.0.len() as u64).sum();
        let bits = bytes.len() as u64 * 8;
        self.next.insert(stream, i + 1);
        Ok(Index { offset, packet_bits: bits, content_bits: bits, ts_end: *ts_end, status: IndexStatus::Ok, ..blank })
    }
    fn packet(&mut self, stream: u64, offset: u64, len: u32) -> Result<Packet> {
        let mut w = alive(&self.world, self.epoch, "GET_PACKET")?;
        let (_, st) = w.stream(stream).expect("a data stream");
        let mut at = 0;
        let found = st.packets.iter().find(|p| {
            let here = at;
            at += p.0.len() as u64;
            here == offset
        });
        let bytes = found.expect("a packet at an indexed offset").0.clone();
        assert_eq!(bytes.len(), len as usize);
        w.packets_served += 1;
        let n = w.packets_served;
        while let Some(i) = w.script.iter().position(|(at, _)| *at == n) {
            let (_, step) = w.script.remove(i);
            step(&mut w);
        }
        Ok(Packet::Data(bytes))
    }
}

/// What the pipeline was sent, in words.
fn describe(m: &Msg) -> String {
    match m {
        Msg::Trace { trace, dir } => format!("trace {trace} {dir}"),
        Msg::Metadata { trace, bytes } => format!("metadata {trace} {}", String::from_utf8_lossy(bytes)),
        Msg::Stream { stream, trace, name } => format!("stream {stream} of {trace}: {name}"),
        Msg::Packet { stream, bytes, .. } => format!("packet {stream} {}", String::from_utf8_lossy(bytes)),
        Msg::Beacon { stream, ts } => format!("beacon {stream} {ts}"),
        Msg::StreamEnd { stream } => format!("stream end {stream}"),
        Msg::Notice(n) => format!("notice {n}"),
        Msg::Pace { .. } => "pace".into(),
        Msg::End => "end".into(),
    }
}

/// Follows session `s` of `world`: what the pipeline was sent, and the report.
fn follow(world: World, reconnect_for: Duration) -> (Result<RelayReport>, Vec<String>) {
    let mut opts = RelayOptions::new(LiveUrl::parse("net://relay/host/h/s").unwrap());
    opts.poll = Duration::from_millis(1);
    opts.reconnect_for = reconnect_for;
    let (tx, rx) = crossbeam_channel::unbounded();
    let stop = AtomicBool::new(false);
    let r = Follower::new(&opts, &tx, &stop).run(&mut Relay(Rc::new(RefCell::new(world))));
    (r, rx.try_iter().map(|m| describe(&m)).collect())
}

fn with(msgs: &[String], prefix: &str) -> Vec<String> {
    msgs.iter().filter(|m| m.starts_with(prefix)).cloned().collect()
}

/// Session `s`: channels `a` and `b` with `packets` packets each, metadata `M1`.
fn world(packets: usize) -> World {
    let mut w = World::default();
    w.add_session("s", "M1", &["a", "b"], packets);
    w
}

fn every_packet(streams: &[(u64, &str)], packets: usize) -> Vec<String> {
    streams.iter().flat_map(|(id, c)| (0..packets).map(move |i| format!("packet {id} {c}#{i}"))).collect()
}

#[test]
fn a_session_that_ends() {
    let mut w = world(3);
    w.end("s");
    let (r, msgs) = follow(w, Duration::from_secs(5));
    let r = r.unwrap();
    assert_eq!(&msgs[..4], ["trace 0 ust/t", "stream 0 of 0: a", "stream 1 of 0: b", "metadata 0 M1"]);
    let mut packets = with(&msgs, "packet");
    packets.sort();
    assert_eq!(packets, every_packet(&[(0, "a"), (1, "b")], 3));
    assert_eq!(&msgs[msgs.len() - 3..], ["stream end 0", "stream end 1", "end"]);
    assert_eq!((r.packets, r.reconnections, r.duplicates_skipped, r.losses.len()), (6, 0, 0, 0));
}

#[test]
fn a_session_without_streams_ends_when_the_relay_says_so() {
    let mut w = World::default();
    w.add_session("s", "M1", &[], 0);
    w.end("s");
    let (r, msgs) = follow(w, Duration::from_secs(5));
    assert_eq!(r.unwrap().packets, 0);
    assert_eq!(msgs, ["trace 0 ust/t", "metadata 0 M1", "end"]);
}

#[test]
fn new_streams_and_metadata_appear_mid_session() {
    let mut w = world(2);
    w.script.push((
        2,
        Box::new(|w: &mut World| {
            w.session("s").metadata.get_mut("ust/t").unwrap().extend_from_slice(b"+M2");
            w.add_stream("s", "c", 2);
        }),
    ));
    w.script.push((6, Box::new(|w: &mut World| w.end("s"))));
    let (r, msgs) = follow(w, Duration::from_secs(5));
    assert_eq!(r.unwrap().packets, 6);
    assert!(msgs.contains(&"stream 2 of 0: c".to_string()), "{msgs:?}");
    assert_eq!(with(&msgs, "metadata"), ["metadata 0 M1", "metadata 0 +M2"]);
    let mut packets = with(&msgs, "packet");
    packets.sort();
    assert_eq!(packets, every_packet(&[(0, "a"), (1, "b"), (2, "c")], 2));
    assert_eq!(msgs.last().unwrap(), "end");
}

#[test]
fn streams_that_come_back_resume_after_their_last_packet() {
    let mut w = world(4);
    // The connection is cut after 3 packets; the relay stays up but still counts the
    // old viewer as attached for two attempts.
    w.script.push((
        3,
        Box::new(|w: &mut World| {
            w.cut();
            w.busy = 2;
        }),
    ));
    w.script.push((8, Box::new(|w: &mut World| w.end("s"))));
    let (r, msgs) = follow(w, Duration::from_secs(5));
    let r = r.unwrap();
    assert_eq!((r.packets, r.reconnections, r.duplicates_skipped), (8, 1, 3), "{msgs:?}");
    let mut packets = with(&msgs, "packet");
    packets.sort();
    assert_eq!(packets, every_packet(&[(0, "a"), (1, "b")], 4), "each packet once");
    assert_eq!(with(&msgs, "metadata"), ["metadata 0 M1"], "the metadata resent is not forwarded again");
    assert_eq!(with(&msgs, "trace").len() + with(&msgs, "stream ").len() - with(&msgs, "stream end").len(), 3, "no new trace or stream");
    assert_eq!(r.losses.len(), 1);
    assert!(r.losses[0].starts_with("relay relay:5344: connection lost during GET_"), "{}", r.losses[0]);
    assert!(r.losses[0].contains("reconnected after") && r.losses[0].contains("0:ust/t/a: 2 packets, 0:ust/t/b: 1 packets"), "{}", r.losses[0]);
    assert_eq!(msgs.last().unwrap(), "end");
}

#[test]
fn a_relay_that_closes_ends_every_stream_after_the_reconnection_time() {
    let mut w = world(4);
    w.script.push((
        3,
        Box::new(|w: &mut World| {
            w.cut();
            w.closed = true;
        }),
    ));
    let t0 = Instant::now();
    let (r, msgs) = follow(w, Duration::from_millis(300));
    let r = r.unwrap();
    assert!(t0.elapsed() < Duration::from_secs(3), "gave up in {:?}", t0.elapsed());
    assert_eq!((r.packets, r.reconnections), (3, 0));
    assert_eq!(r.losses.len(), 1);
    assert!(r.losses[0].ends_with("; gave up after 0 s"), "{}", r.losses[0]);
    assert_eq!(&msgs[msgs.len() - 3..], ["stream end 0", "stream end 1", "end"]);
}

#[test]
fn a_restarted_relay_with_the_session_recreated_starts_a_new_generation() {
    let mut w = world(4);
    w.script.push((
        3,
        Box::new(|w: &mut World| {
            w.restart(2);
            // The session is traced again under the same name, paths and channels.
            w.add_session("s", "N1", &["a", "b"], 2);
            w.end("s");
        }),
    ));
    let (r, msgs) = follow(w, Duration::from_secs(5));
    let r = r.unwrap();
    assert_eq!((r.packets, r.reconnections, r.duplicates_skipped), (7, 1, 0), "{msgs:?}");
    assert!(msgs.contains(&"trace 1 ust/t".to_string()) && msgs.contains(&"metadata 1 N1".to_string()), "{msgs:?}");
    assert!(msgs.contains(&"stream 2 of 1: a".to_string()) && msgs.contains(&"stream 3 of 1: b".to_string()), "{msgs:?}");
    let mut packets = with(&msgs, "packet");
    packets.sort();
    let mut want = [(0, "a"), (1, "b")].iter().flat_map(|&(id, c)| (0..4).map(move |i| format!("packet {id} {c}#{i}"))).collect::<Vec<_>>();
    want.retain(|p| ["packet 0 a#0", "packet 0 a#1", "packet 1 b#0"].contains(&p.as_str()));
    want.extend(every_packet(&[(2, "a"), (3, "b")], 2));
    want.sort();
    assert_eq!(packets, want);
    let gone = r.losses.iter().find(|l| l.contains("did not come back")).expect("the old streams are reported");
    assert!(
        gone.ends_with(
            "lost: 0:ust/t/a: 2 packets received, everything after clock value 200 lost; 0:ust/t/b: 1 packets received, everything after clock value 100 lost"
        ),
        "{gone}"
    );
    let ends = with(&msgs, "stream end");
    assert_eq!(ends.len(), 4, "{ends:?}");
    assert_eq!(msgs.last().unwrap(), "end");
}

#[test]
fn a_restarted_relay_without_the_session_reports_the_loss() {
    let mut w = world(4);
    w.script.push((3, Box::new(|w: &mut World| w.restart(1))));
    let (r, msgs) = follow(w, Duration::from_millis(300));
    let r = r.unwrap();
    assert_eq!(r.reconnections, 1);
    let gone = r.losses.last().unwrap();
    assert!(gone.starts_with("relay relay:5344: session h/s is gone after the reconnection (sessions now: ); lost: 0:ust/t/a: 2 packets"), "{gone}");
    assert_eq!(&msgs[msgs.len() - 3..], ["stream end 0", "stream end 1", "end"]);
}

#[test]
fn no_session_at_the_first_connection_is_an_error() {
    let mut w = World::default();
    w.add_session("other", "M1", &["a"], 1);
    let (r, msgs) = follow(w, Duration::from_secs(5));
    let e = r.unwrap_err().to_string();
    assert_eq!(e, "relay relay:5344: no live session h/s (sessions: h/other)");
    assert!(msgs.is_empty(), "{msgs:?}");
}
