//! The [`Follower`]: one connection to the relay after another, each attached to the
//! followed session and polled until the session ends, the follower is stopped, or the
//! connection is lost (then it waits for the relay, reconnects and reports what may
//! have been lost).

use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use crossbeam_channel::{SendError, Sender};

use super::state::{Known, StreamKey};
use super::{Connect, RelayOptions, RelayReport, Viewer};
use crate::client::{Metadata, NewStreams, Packet};
use crate::error::{LiveError, Result};
use crate::msg::Msg;
use crate::proto::{Index, IndexStatus, SessionInfo, StreamInfo, FLAG_NEW_METADATA, FLAG_NEW_STREAM};

/// Pause between two attempts to reach the relay after the connection was lost.
const RECONNECT_PAUSE: Duration = Duration::from_millis(200);
/// Pause between two looks for the session, or two attempts to attach while the relay
/// still counts our previous connection as attached.
const ATTACH_PAUSE: Duration = Duration::from_millis(100);
/// How long the relay may ask for metadata it does not send before we reconnect.
const STUCK_FOR: Duration = Duration::from_millis(500);

/// Follows one relay session into a pipeline, across reconnections (see the module
/// documentation of [`crate::relay`]).
pub struct Follower<'a> {
    opts: &'a RelayOptions,
    tx: &'a Sender<Msg>,
    stop: &'a AtomicBool,
    report: RelayReport,
    known: Known,
}

/// How following a connection ended without an error.
enum Outcome {
    /// The session ended (the pipeline was told).
    Ended,
    /// `stop` was set.
    Stopped,
}

/// A data stream followed on the current connection.
struct Followed {
    info: StreamInfo,
    key: StreamKey,
    /// An index set aside until metadata or streams are fetched.
    pending: Option<Index>,
    /// The stream ended.
    done: bool,
}

/// One connection, attached to the session.
struct Link<V> {
    conn: V,
    peer: String,
    /// The relay's id of the session.
    session: u64,
    meta: Vec<StreamInfo>,
    data: Vec<Followed>,
    /// Metadata bytes received on this connection, per trace.
    meta_here: HashMap<super::state::TraceKey, u64>,
    /// Metadata fetched while attaching (to tell the session), by metadata stream id.
    prefetched: HashMap<u64, Vec<u8>>,
    /// `GET_NEW_STREAMS` said the session is closed.
    session_hup: bool,
}

/// What the relay asked for while the streams were polled.
#[derive(Default)]
struct Round {
    /// A packet was delivered.
    progressed: bool,
    /// An index said "retry, and fetch new metadata".
    wants_metadata: bool,
    need_meta: bool,
    need_streams: bool,
}

/// The error for a pipeline that no longer receives.
fn closed(peer: &str) -> impl Fn(SendError<Msg>) -> LiveError + '_ {
    move |_| LiveError::Protocol { peer: peer.to_string(), cmd: "pipeline", msg: "the pipeline stopped".into() }
}

impl<'a> Follower<'a> {
    /// A follower of the session of `opts.url` that sends what it receives to `tx`
    /// and stops when `stop` is set.
    pub fn new(opts: &'a RelayOptions, tx: &'a Sender<Msg>, stop: &'a AtomicBool) -> Self {
        Follower { opts, tx, stop, report: RelayReport::default(), known: Known::default() }
    }

    /// Follows the session until it ends (or `stop` is set), connecting through
    /// `relay`; a lost connection is retried for `opts.reconnect_for`.
    pub fn run<C: Connect>(mut self, relay: &mut C) -> Result<RelayReport> {
        let mut first = true;
        loop {
            let r = self.connect(relay, first).and_then(|mut link| self.follow_link(&mut link));
            match r {
                Ok(Outcome::Ended | Outcome::Stopped) => return Ok(self.report),
                Err(LiveError::Io { peer, cmd, source }) => {
                    let what = format!("relay {peer}: connection lost during {cmd} ({source})");
                    if !self.reconnect(relay, &what) {
                        return Ok(self.report);
                    }
                }
                Err(LiveError::NoSession { peer, host, name, known }) if !first => {
                    // The relay came back without the session (a restarted relay forgets
                    // its sessions): what the session traced after the loss is gone.
                    let lost = self.known.lost_after(None);
                    self.notice(format!("relay {peer}: session {host}/{name} is gone after the reconnection (sessions now: {known}); {lost}"));
                    self.finish();
                    return Ok(self.report);
                }
                Err(e) => return Err(e),
            }
            first = false;
        }
    }

    /// Records a loss and tells the pipeline (which may be gone: the loss stays in
    /// the report).
    fn notice(&mut self, msg: String) {
        self.report.losses.push(msg.clone());
        let _ = self.tx.send(Msg::Notice(msg));
    }

    /// Ends every stream still open, then the source (so that the pipeline flushes what
    /// it has).
    fn finish(&mut self) {
        for id in self.known.open_streams() {
            let _ = self.tx.send(Msg::StreamEnd { stream: id });
        }
        self.known.streams.values_mut().for_each(|d| d.ended = true);
        let _ = self.tx.send(Msg::End);
    }

    /// After the connection was lost (`what`): waits until the relay answers again, for
    /// at most `opts.reconnect_for`. False when it gave up (the streams and the source
    /// are ended) or was stopped.
    fn reconnect<C: Connect>(&mut self, relay: &mut C, what: &str) -> bool {
        let since = Instant::now();
        let _ = self.tx.send(Msg::Notice(what.to_string()));
        loop {
            if self.stop.load(Ordering::Relaxed) {
                return false;
            }
            if since.elapsed() > self.opts.reconnect_for {
                self.notice(format!("{what}; gave up after {:.0} s", self.opts.reconnect_for.as_secs_f64()));
                self.finish();
                return false;
            }
            std::thread::sleep(RECONNECT_PAUSE);
            if relay.connect().is_ok() {
                break;
            }
        }
        self.report.reconnections += 1;
        self.notice(format!(
            "{what}; reconnected after {:.1} s. Received before the loss: {}. Packets the relay had not yet sent us are lost if the relay restarted (its new sessions start afresh).",
            since.elapsed().as_secs_f64(),
            self.known.received()
        ));
        true
    }

    /// The newest session of the URL's host and name; after a reconnection it may take
    /// up to `wait` to be announced again.
    fn find_session<V: Viewer>(&self, c: &mut V, wait: Duration) -> Result<SessionInfo> {
        let url = &self.opts.url;
        let (host, name) = url.session.clone().ok_or_else(|| LiveError::Url {
            url: format!("net://{}:{}", url.host, url.port),
            msg: "no session given (net://HOST/host/HOSTNAME/SESSION)".into(),
        })?;
        let t0 = Instant::now();
        loop {
            let list = c.list_sessions()?;
            if let Some(s) = list.iter().filter(|s| s.hostname == host && s.name == name).max_by_key(|s| s.id) {
                return Ok(s.clone());
            }
            if t0.elapsed() >= wait || self.stop.load(Ordering::Relaxed) {
                let known = list.iter().map(|s| format!("{}/{}", s.hostname, s.name)).collect::<Vec<_>>().join(", ");
                return Err(LiveError::NoSession { peer: c.peer().into(), host, name, known });
            }
            std::thread::sleep(ATTACH_PAUSE);
        }
    }

    /// Connects and attaches to the session. After a reconnection, tells whether it is
    /// the session followed before (else a new generation starts) and ends the streams
    /// that did not come back.
    fn connect<C: Connect>(&mut self, relay: &mut C, first: bool) -> Result<Link<C::Viewer>> {
        let mut c = relay.connect()?;
        let wait = if first { Duration::ZERO } else { self.opts.reconnect_for };
        let session = self.find_session(&mut c, wait)?;
        c.create_viewer_session()?;
        let t0 = Instant::now();
        let attached = loop {
            match c.attach(session.id) {
                // Our previous connection may not be closed on the relay's side yet.
                Err(LiveError::Busy { .. }) if !first && t0.elapsed() < self.opts.reconnect_for && !self.stop.load(Ordering::Relaxed) => {
                    std::thread::sleep(ATTACH_PAUSE);
                }
                r => break r?,
            }
        };
        let peer = c.peer().to_string();
        let mut link = Link {
            conn: c,
            peer,
            session: session.id,
            meta: Vec::new(),
            data: Vec::new(),
            meta_here: HashMap::new(),
            prefetched: HashMap::new(),
            session_hup: false,
        };
        if !first {
            for m in attached.streams.iter().filter(|s| s.metadata) {
                let mut buf = Vec::new();
                while let Metadata::Data(b) = link.conn.metadata(m.id)? {
                    if b.is_empty() {
                        break;
                    }
                    buf.extend_from_slice(&b);
                }
                link.prefetched.insert(m.id, buf);
            }
            if !self.known.same_session(session.id, &attached.streams, &link.prefetched) {
                self.known.generation += 1;
            }
        }
        self.add_streams(&mut link, attached.streams)?;
        if !first {
            // Streams of the previous connection that did not come back are over; what
            // they traced after their last packet received is lost.
            let gone = self.known.gone(|k| link.data.iter().any(|s| &s.key == k));
            if !gone.is_empty() {
                let msg = format!("relay {}: streams of the previous connection did not come back; {}", link.peer, self.known.lost_after(Some(&gone)));
                self.report.losses.push(msg.clone());
                self.tx.send(Msg::Notice(msg)).map_err(closed(&link.peer))?;
                for k in gone {
                    let d = self.known.streams.get_mut(&k).expect("listed");
                    d.ended = true;
                    self.tx.send(Msg::StreamEnd { stream: d.id }).map_err(closed(&link.peer))?;
                }
            }
        }
        Ok(link)
    }

    /// Takes streams announced by the relay: their traces and data streams are told to
    /// the pipeline the first time they are seen.
    fn add_streams<V>(&mut self, link: &mut Link<V>, streams: Vec<StreamInfo>) -> Result<()> {
        for s in streams {
            let (trace, new) = self.known.trace(&s.path);
            if new {
                let _ = self.tx.send(Msg::Trace { trace, dir: s.path.clone() });
            }
            if s.metadata {
                link.meta.push(s);
                continue;
            }
            let (key, id, new) = self.known.stream(&s, link.session);
            if new {
                self.tx.send(Msg::Stream { stream: id, trace, name: s.channel.clone() }).map_err(closed(&link.peer))?;
            }
            link.data.push(Followed { info: s, key, pending: None, done: false });
        }
        Ok(())
    }

    /// Fetches the metadata of every trace and forwards what is new; drops the metadata
    /// streams the relay closed.
    fn fetch_metadata<V: Viewer>(&mut self, link: &mut Link<V>) -> Result<()> {
        let mut gone = Vec::new();
        for (mi, m) in link.meta.iter().enumerate() {
            let tkey = self.known.trace_key(&m.path);
            let trace = self.known.trace_id(&tkey).expect("metadata streams are registered with their trace");
            let mut chunks: Vec<Vec<u8>> = link.prefetched.remove(&m.id).into_iter().collect();
            loop {
                let chunk = match chunks.pop() {
                    Some(b) => b,
                    None => {
                        let r = link.conn.metadata(m.id)?;
                        if self.opts.debug {
                            let what = match &r {
                                Metadata::Data(b) => format!("{} bytes", b.len()),
                                o => format!("{o:?}"),
                            };
                            eprintln!("[live] metadata stream {}: {what}", m.id);
                        }
                        match r {
                            Metadata::Data(b) if !b.is_empty() => b,
                            Metadata::Closed | Metadata::Hup => {
                                gone.push(mi);
                                break;
                            }
                            _ => break,
                        }
                    }
                };
                let here = link.meta_here.entry(tkey.clone()).or_default();
                if let Some(new) = self.known.new_metadata(&tkey, here, &chunk) {
                    self.tx.send(Msg::Metadata { trace, bytes: new.to_vec() }).map_err(closed(&link.peer))?;
                }
            }
        }
        for mi in gone.into_iter().rev() {
            link.meta.remove(mi);
        }
        Ok(())
    }

    /// Asks each open stream for its next index and fetches the packet it names, until
    /// a stream needs metadata first.
    fn poll_streams<V: Viewer>(&mut self, link: &mut Link<V>, round: &mut Round) -> Result<()> {
        let closed = closed(&link.peer);
        for s in link.data.iter_mut().filter(|s| !s.done) {
            let idx = match s.pending.take() {
                // Its flags were acted upon when it was set aside.
                Some(i) => Index { flags: 0, ..i },
                None => link.conn.next_index(s.info.id)?,
            };
            round.need_streams |= idx.flags & FLAG_NEW_STREAM != 0;
            if self.opts.debug {
                eprintln!("[live] stream {} {}: index {:?}", s.info.id, s.key, idx);
            }
            let d = self.known.streams.get_mut(&s.key).expect("followed streams are registered");
            match idx.status {
                IndexStatus::Ok => {
                    if idx.flags & FLAG_NEW_METADATA != 0 {
                        // The packet needs metadata we do not have: fetch it first.
                        s.pending = Some(idx);
                        round.need_meta = true;
                        break;
                    }
                    if d.already_has(idx.offset) {
                        self.report.duplicates_skipped += 1;
                        continue;
                    }
                    let len = (idx.packet_bits / 8) as u32;
                    match link.conn.packet(s.info.id, idx.offset, len)? {
                        Packet::Data(bytes) => {
                            self.report.packets += 1;
                            self.report.bytes += bytes.len() as u64;
                            d.record(idx.offset, len as u64, idx.ts_end);
                            self.tx.send(Msg::Packet { stream: d.id, bytes, ts_end: Some(idx.ts_end) }).map_err(&closed)?;
                            round.progressed = true;
                        }
                        Packet::Flags(f) => {
                            s.pending = Some(idx);
                            round.need_meta |= f & FLAG_NEW_METADATA != 0;
                            round.need_streams |= f & FLAG_NEW_STREAM != 0;
                            break;
                        }
                        Packet::Retry => s.pending = Some(idx),
                        Packet::Eof => {
                            s.done = true;
                            d.ended = true;
                            self.tx.send(Msg::StreamEnd { stream: d.id }).map_err(&closed)?;
                        }
                    }
                }
                IndexStatus::Retry => round.wants_metadata |= idx.flags & FLAG_NEW_METADATA != 0,
                IndexStatus::Inactive => {
                    self.report.beacons += 1;
                    self.tx.send(Msg::Beacon { stream: d.id, ts: idx.ts_end }).map_err(&closed)?;
                }
                IndexStatus::Hup | IndexStatus::Eof => {
                    s.done = true;
                    d.ended = true;
                    self.tx.send(Msg::StreamEnd { stream: d.id }).map_err(&closed)?;
                }
                IndexStatus::Err | IndexStatus::Unknown(_) => {
                    return Err(LiveError::Protocol {
                        peer: link.peer.clone(),
                        cmd: "GET_NEXT_INDEX",
                        msg: format!("stream {} ({}): status {:?}", s.info.id, s.key, idx.status),
                    });
                }
            }
        }
        Ok(())
    }

    /// Polls the attached session until it ends, `stop` is set or the connection fails.
    fn follow_link<V: Viewer>(&mut self, link: &mut Link<V>) -> Result<Outcome> {
        let mut need_meta = true;
        let mut need_streams = link.data.is_empty();
        let mut stuck_since: Option<Instant> = None;
        loop {
            if self.stop.load(Ordering::Relaxed) {
                return Ok(Outcome::Stopped);
            }
            if need_streams {
                need_streams = false;
                match link.conn.new_streams(link.session)? {
                    NewStreams::Streams(v) => {
                        need_meta |= v.iter().any(|s| s.metadata);
                        self.add_streams(link, v)?;
                    }
                    NewStreams::NoNew => {}
                    NewStreams::Hup => link.session_hup = true,
                }
            }
            if need_meta {
                self.fetch_metadata(link)?;
            }
            let mut round = Round::default();
            self.poll_streams(link, &mut round)?;
            (need_meta, need_streams) = (round.need_meta, need_streams || round.need_streams);
            if !link.data.is_empty() && link.data.iter().all(|s| s.done) {
                // Every stream is closed: the session is over unless new streams came.
                match link.conn.new_streams(link.session)? {
                    NewStreams::Streams(v) if !v.is_empty() => {
                        need_meta = true;
                        self.add_streams(link, v)?;
                        continue;
                    }
                    _ => return self.end(link),
                }
            }
            if link.data.is_empty() && link.session_hup {
                return self.end(link);
            }
            // lttng-relayd 2.13 can be left, after a viewer's connection was cut, asking
            // for new metadata (index RETRY + NEW_METADATA) while it has none to give:
            // after a while in that state, connect again (a fresh viewer session).
            if round.wants_metadata && !round.progressed {
                let since = *stuck_since.get_or_insert_with(Instant::now);
                if since.elapsed() > STUCK_FOR {
                    return Err(LiveError::Io {
                        peer: link.peer.clone(),
                        cmd: "GET_NEXT_INDEX",
                        source: std::io::Error::other("the relay asks for metadata it does not send (stuck viewer state)"),
                    });
                }
                need_meta = true;
                std::thread::sleep(self.opts.poll);
            } else {
                stuck_since = None;
            }
            if !round.progressed && !need_meta && !need_streams {
                need_streams = link.data.is_empty();
                std::thread::sleep(self.opts.poll);
            }
        }
    }

    /// The session ended: tells the pipeline.
    fn end<V>(&self, link: &Link<V>) -> Result<Outcome> {
        self.tx.send(Msg::End).map_err(closed(&link.peer))?;
        Ok(Outcome::Ended)
    }
}
