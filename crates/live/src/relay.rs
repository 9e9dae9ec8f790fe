//! Following one session of a relay daemon (D1, F4): attach, fetch metadata and its
//! updates, pick up new streams, follow each stream's packet index, fetch packets,
//! pass inactivity beacons on, detect the end of the session; when the relay goes
//! away, reconnect and say what may have been lost.
//!
//! Packets already received are never sent twice: after a reconnection to the same
//! relay session, each stream resumes after the last packet offset it delivered.

use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use crossbeam_channel::Sender;

use crate::client::{Client, Metadata, NewStreams, Packet};
use crate::error::{LiveError, Result};
use crate::msg::Msg;
use crate::proto::{IndexStatus, SessionInfo, StreamInfo, FLAG_NEW_METADATA, FLAG_NEW_STREAM};
use crate::url::LiveUrl;

/// Options of [`follow`].
#[derive(Debug, Clone)]
pub struct RelayOptions {
    /// The relay and session.
    pub url: LiveUrl,
    /// Pause when no stream had data.
    pub poll: Duration,
    /// How long to keep trying to reconnect after the relay went away.
    pub reconnect_for: Duration,
    /// Socket timeout.
    pub timeout: Duration,
}

impl RelayOptions {
    /// Defaults for `url`: 10 ms poll, 60 s of reconnection attempts, 10 s timeout.
    pub fn new(url: LiveUrl) -> Self {
        RelayOptions { url, poll: Duration::from_millis(10), reconnect_for: Duration::from_secs(60), timeout: Duration::from_secs(10) }
    }
}

/// What following a session did.
#[derive(Debug, Clone, Default, serde::Serialize)]
pub struct RelayReport {
    /// Packets received.
    pub packets: u64,
    /// Bytes of packets received.
    pub bytes: u64,
    /// Beacons received.
    pub beacons: u64,
    /// Times the connection was lost and re-established.
    pub reconnections: u64,
    /// Packets skipped because they had already been received (after a reconnection).
    pub duplicates_skipped: u64,
    /// Reports of what may have been lost, one per reconnection.
    pub losses: Vec<String>,
}

/// Lists the sessions of the relay at `url`.
pub fn list_sessions(url: &LiveUrl, timeout: Duration) -> Result<Vec<SessionInfo>> {
    Client::connect(&url.host, url.port, timeout)?.list_sessions()
}

/// Per stream, what was delivered (kept across reconnections).
#[derive(Debug, Clone, Default)]
struct Delivered {
    /// Our stream id (stable across reconnections).
    id: u64,
    /// Byte offset just after the last packet delivered.
    next_offset: u64,
    packets: u64,
    last_ts_end: Option<u64>,
    /// The pipeline was told the stream ended.
    ended: bool,
    /// The relay's id of the stream, and of its session, on the last connection.
    relay_ids: (u64, u64),
}

struct Followed {
    info: StreamInfo,
    key: String,
    pending: Option<crate::proto::Index>,
    done: bool,
}

enum Outcome {
    Ended,
    Stopped,
}

/// Follows the session named by `opts.url` until it ends (or `stop` is set), sending
/// what it receives to `tx`. A lost connection is retried for `reconnect_for`.
pub fn follow(opts: &RelayOptions, tx: &Sender<Msg>, stop: &AtomicBool) -> Result<RelayReport> {
    let mut rep = RelayReport::default();
    let mut delivered: HashMap<String, Delivered> = HashMap::new();
    let mut traces: HashMap<String, u64> = HashMap::new();
    let mut meta_store: HashMap<String, Vec<u8>> = HashMap::new();
    let mut generation = 0u64;
    let mut first = true;
    loop {
        let r = attach_and_follow(opts, tx, stop, &mut rep, &mut delivered, &mut traces, &mut meta_store, &mut generation, first);
        first = false;
        match r {
            Ok(Outcome::Ended) | Ok(Outcome::Stopped) => return Ok(rep),
            Err(LiveError::Io { peer, cmd, source }) => {
                let since = Instant::now();
                let what = format!("relay {peer}: connection lost during {cmd} ({source})");
                let _ = tx.send(Msg::Notice(what.clone()));
                // Wait for the relay to come back.
                loop {
                    if stop.load(Ordering::Relaxed) {
                        return Ok(rep);
                    }
                    if since.elapsed() > opts.reconnect_for {
                        let msg = format!("{what}; gave up after {:.0} s", opts.reconnect_for.as_secs_f64());
                        rep.losses.push(msg.clone());
                        let _ = tx.send(Msg::Notice(msg));
                        // Close every stream so that the pipeline flushes what it has.
                        for d in delivered.values() {
                            let _ = tx.send(Msg::StreamEnd { stream: d.id });
                        }
                        let _ = tx.send(Msg::End);
                        return Ok(rep);
                    }
                    std::thread::sleep(Duration::from_millis(200));
                    if Client::connect(&opts.url.host, opts.url.port, opts.timeout).is_ok() {
                        break;
                    }
                }
                rep.reconnections += 1;
                let got: Vec<String> = {
                    let mut v: Vec<_> = delivered.iter().map(|(k, d)| format!("{k}: {} packets", d.packets)).collect();
                    v.sort();
                    v
                };
                let msg = format!(
                    "{what}; reconnected after {:.1} s. Received before the loss: {}. Packets the relay had not yet sent us are lost if the relay restarted (its new sessions start afresh).",
                    since.elapsed().as_secs_f64(),
                    got.join(", ")
                );
                rep.losses.push(msg.clone());
                let _ = tx.send(Msg::Notice(msg));
            }
            Err(LiveError::NoSession { peer, host, name, known }) if !first => {
                // The relay came back without the session (a restarted relay forgets
                // its sessions): what the session traced after the loss is gone.
                let msg = format!("relay {peer}: session {host}/{name} is gone after the reconnection (sessions now: {known}); {}", lost_after(&delivered));
                rep.losses.push(msg.clone());
                let _ = tx.send(Msg::Notice(msg));
                for d in delivered.values_mut().filter(|d| !d.ended) {
                    d.ended = true;
                    let _ = tx.send(Msg::StreamEnd { stream: d.id });
                }
                let _ = tx.send(Msg::End);
                return Ok(rep);
            }
            Err(e) => return Err(e),
        }
    }
}

fn find_session(c: &mut Client, url: &LiveUrl, wait: Duration, stop: &AtomicBool) -> Result<SessionInfo> {
    let (host, name) = url
        .session
        .clone()
        .ok_or_else(|| LiveError::Url { url: format!("net://{}:{}", url.host, url.port), msg: "no session given (net://HOST/host/HOSTNAME/SESSION)".into() })?;
    let t0 = Instant::now();
    loop {
        let list = c.list_sessions()?;
        if let Some(s) = list.iter().filter(|s| s.hostname == host && s.name == name).max_by_key(|s| s.id) {
            return Ok(s.clone());
        }
        if t0.elapsed() >= wait || stop.load(Ordering::Relaxed) {
            let known = list.iter().map(|s| format!("{}/{}", s.hostname, s.name)).collect::<Vec<_>>().join(", ");
            return Err(LiveError::NoSession { peer: c.peer().into(), host, name, known });
        }
        std::thread::sleep(Duration::from_millis(100));
    }
}

#[allow(clippy::too_many_arguments)]
fn attach_and_follow(
    opts: &RelayOptions,
    tx: &Sender<Msg>,
    stop: &AtomicBool,
    rep: &mut RelayReport,
    delivered: &mut HashMap<String, Delivered>,
    traces: &mut HashMap<String, u64>,
    meta_store: &mut HashMap<String, Vec<u8>>,
    generation: &mut u64,
    first: bool,
) -> Result<Outcome> {
    // Metadata bytes received on this connection, per trace: after a reconnection to
    // the same session the relay sends the metadata again from its beginning.
    let mut meta_here: HashMap<String, u64> = HashMap::new();
    let mut c = Client::connect(&opts.url.host, opts.url.port, opts.timeout)?;
    // After a reconnection the session may take a moment to be announced again.
    let wait = if first { Duration::ZERO } else { opts.reconnect_for };
    let session = find_session(&mut c, &opts.url, wait, stop)?;
    c.create_viewer_session()?;
    let t0 = Instant::now();
    let attached = loop {
        match c.attach(session.id) {
            // Our previous connection may not be closed on the relay's side yet.
            Err(LiveError::Busy { .. }) if !first && t0.elapsed() < opts.reconnect_for && !stop.load(Ordering::Relaxed) => {
                std::thread::sleep(Duration::from_millis(100));
            }
            r => break r?,
        }
    };
    let peer = c.peer().to_string();
    // After a reconnection: the same session (the relay stayed up) resends metadata
    // we already have; a restarted relay's session with the same name is another
    // session, whose traces and streams are new even where their paths repeat.
    let mut prefetched: HashMap<u64, Vec<u8>> = HashMap::new();
    if !first {
        let mut same = attached.streams.iter().any(|s| s.metadata);
        for m in attached.streams.iter().filter(|s| s.metadata) {
            let mut buf = Vec::new();
            while let Metadata::Data(b) = c.metadata(m.id)? {
                if b.is_empty() {
                    break;
                }
                buf.extend_from_slice(&b);
            }
            let old = meta_store.get(&format!("{generation}:{}", m.path));
            same &= old.is_some_and(|o| {
                let n = o.len().min(buf.len());
                n > 0 && o[..n] == buf[..n]
            });
            prefetched.insert(m.id, buf);
        }
        if prefetched.values().all(|b| b.is_empty()) {
            // Nothing resent (the relay keeps what it sent per trace): the same
            // session has the same session and stream ids for the streams we know.
            let known: std::collections::HashSet<(u64, u64)> = delivered.values().filter(|d| !d.ended).map(|d| d.relay_ids).collect();
            let data = || attached.streams.iter().filter(|s| !s.metadata);
            same = data().any(|s| known.contains(&(s.id, session.id)))
                && data().all(|s| known.contains(&(s.id, session.id)) || !delivered.contains_key(&format!("{generation}:{}/{}", s.path, s.channel)));
        }
        if !same {
            *generation += 1;
        }
    }
    let gen = *generation;
    let session_id = session.id;
    let closed = |_: crossbeam_channel::SendError<Msg>| LiveError::Protocol { peer: peer.clone(), cmd: "pipeline", msg: "the pipeline stopped".into() };
    let mut meta: Vec<StreamInfo> = Vec::new();
    let mut data: Vec<Followed> = Vec::new();
    let mut session_hup = false;
    let add = |v: Vec<StreamInfo>,
               meta: &mut Vec<StreamInfo>,
               data: &mut Vec<Followed>,
               traces: &mut HashMap<String, u64>,
               delivered: &mut HashMap<String, Delivered>|
     -> Result<()> {
        for s in v {
            let tkey = format!("{gen}:{}", s.path);
            let next_trace = traces.len() as u64;
            let tid = *traces.entry(tkey.clone()).or_insert_with(|| {
                let _ = tx.send(Msg::Trace { trace: next_trace, dir: s.path.clone() });
                next_trace
            });
            if s.metadata {
                meta.push(s);
                continue;
            }
            let key = format!("{gen}:{}/{}", s.path, s.channel);
            let n = delivered.len() as u64;
            if !delivered.contains_key(&key) {
                delivered.insert(key.clone(), Delivered { id: n, ..Default::default() });
                tx.send(Msg::Stream { stream: n, trace: tid, name: s.channel.clone() }).map_err(closed)?;
            }
            if let Some(d) = delivered.get_mut(&key) {
                d.relay_ids = (s.id, session_id);
            }
            data.push(Followed { info: s, key, pending: None, done: false });
        }
        Ok(())
    };
    add(attached.streams, &mut meta, &mut data, traces, delivered)?;
    if !first {
        // Streams of the previous connection that did not come back are over; what
        // they traced after their last packet received is lost.
        let gone: Vec<String> = delivered.iter().filter(|(k, d)| !d.ended && !data.iter().any(|s| &s.key == *k)).map(|(k, _)| k.clone()).collect();
        if !gone.is_empty() {
            let sub: HashMap<String, Delivered> = gone.iter().map(|k| (k.clone(), delivered[k].clone())).collect();
            let msg = format!("relay {peer}: streams of the previous connection did not come back; {}", lost_after(&sub));
            rep.losses.push(msg.clone());
            tx.send(Msg::Notice(msg)).map_err(closed)?;
            for k in gone {
                let d = delivered.get_mut(&k).expect("listed");
                d.ended = true;
                tx.send(Msg::StreamEnd { stream: d.id }).map_err(closed)?;
            }
        }
    }
    let mut need_meta = true;
    let mut need_streams = data.is_empty();
    let mut stuck_since: Option<Instant> = None;
    loop {
        if stop.load(Ordering::Relaxed) {
            return Ok(Outcome::Stopped);
        }
        if need_streams {
            need_streams = false;
            match c.new_streams(session.id)? {
                NewStreams::Streams(v) => {
                    if v.iter().any(|s| s.metadata) {
                        need_meta = true;
                    }
                    add(v, &mut meta, &mut data, traces, delivered)?;
                }
                NewStreams::NoNew => {}
                NewStreams::Hup => session_hup = true,
            }
        }
        if need_meta {
            need_meta = false;
            let mut gone = Vec::new();
            for (mi, m) in meta.iter().enumerate() {
                let tkey = format!("{gen}:{}", m.path);
                let tid = traces[&tkey];
                let mut chunks: Vec<Vec<u8>> = prefetched.remove(&m.id).into_iter().collect();
                loop {
                    let chunk = match chunks.pop() {
                        Some(b) => b,
                        None => {
                            let r = c.metadata(m.id)?;
                            if debug() {
                                eprintln!(
                                    "[live] metadata stream {}: {:?}",
                                    m.id,
                                    match &r {
                                        Metadata::Data(b) => format!("{} bytes", b.len()),
                                        o => format!("{o:?}"),
                                    }
                                );
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
                    // Forward only what goes beyond what was already sent.
                    let here = meta_here.entry(tkey.clone()).or_default();
                    let store = meta_store.entry(tkey.clone()).or_default();
                    let start = *here as usize;
                    *here += chunk.len() as u64;
                    if *here as usize > store.len() {
                        let skip = store.len().saturating_sub(start);
                        store.extend_from_slice(&chunk[skip..]);
                        tx.send(Msg::Metadata { trace: tid, bytes: chunk[skip..].to_vec() }).map_err(closed)?;
                    }
                }
            }
            for mi in gone.into_iter().rev() {
                meta.remove(mi);
            }
        }
        let mut progressed = false;
        let mut wants_metadata = false;
        for s in data.iter_mut().filter(|s| !s.done) {
            let idx = match s.pending.take() {
                // Its flags were acted upon when it was set aside.
                Some(i) => crate::proto::Index { flags: 0, ..i },
                None => c.next_index(s.info.id)?,
            };
            if idx.flags & FLAG_NEW_STREAM != 0 {
                need_streams = true;
            }
            if debug() {
                eprintln!("[live] stream {} {}: index {:?}", s.info.id, s.key, idx);
            }
            let d = delivered.get_mut(&s.key).expect("registered");
            match idx.status {
                IndexStatus::Ok => {
                    if idx.flags & FLAG_NEW_METADATA != 0 {
                        // The packet needs metadata we do not have: fetch it first.
                        s.pending = Some(idx);
                        need_meta = true;
                        break;
                    }
                    if idx.offset < d.next_offset {
                        rep.duplicates_skipped += 1;
                        continue;
                    }
                    let len = (idx.packet_bits / 8) as u32;
                    match c.packet(s.info.id, idx.offset, len)? {
                        Packet::Data(bytes) => {
                            rep.packets += 1;
                            rep.bytes += bytes.len() as u64;
                            d.next_offset = idx.offset + len as u64;
                            d.packets += 1;
                            d.last_ts_end = Some(idx.ts_end);
                            tx.send(Msg::Packet { stream: d.id, bytes, ts_end: Some(idx.ts_end) }).map_err(closed)?;
                            progressed = true;
                        }
                        Packet::Flags(f) => {
                            s.pending = Some(idx);
                            need_meta |= f & FLAG_NEW_METADATA != 0;
                            need_streams |= f & FLAG_NEW_STREAM != 0;
                            break;
                        }
                        Packet::Retry => s.pending = Some(idx),
                        Packet::Eof => {
                            s.done = true;
                            d.ended = true;
                            tx.send(Msg::StreamEnd { stream: d.id }).map_err(closed)?;
                        }
                    }
                }
                IndexStatus::Retry => wants_metadata |= idx.flags & FLAG_NEW_METADATA != 0,
                IndexStatus::Inactive => {
                    rep.beacons += 1;
                    tx.send(Msg::Beacon { stream: d.id, ts: idx.ts_end }).map_err(closed)?;
                }
                IndexStatus::Hup | IndexStatus::Eof => {
                    s.done = true;
                    d.ended = true;
                    tx.send(Msg::StreamEnd { stream: d.id }).map_err(closed)?;
                }
                IndexStatus::Err | IndexStatus::Unknown(_) => {
                    return Err(LiveError::Protocol {
                        peer: c.peer().into(),
                        cmd: "GET_NEXT_INDEX",
                        msg: format!("stream {} ({}): status {:?}", s.info.id, s.key, idx.status),
                    });
                }
            }
        }
        if !data.is_empty() && data.iter().all(|s| s.done) {
            // Every stream is closed: the session is over unless new streams came.
            match c.new_streams(session.id)? {
                NewStreams::Streams(v) if !v.is_empty() => {
                    need_meta = true;
                    add(v, &mut meta, &mut data, traces, delivered)?;
                    continue;
                }
                _ => {
                    tx.send(Msg::End).map_err(closed)?;
                    return Ok(Outcome::Ended);
                }
            }
        }
        if data.is_empty() && session_hup {
            tx.send(Msg::End).map_err(closed)?;
            return Ok(Outcome::Ended);
        }
        // lttng-relayd 2.13 can be left, after a viewer's connection was cut, asking
        // for new metadata (index RETRY + NEW_METADATA) while it has none to give:
        // after a while in that state, connect again (a fresh viewer session).
        if wants_metadata && !progressed {
            let since = *stuck_since.get_or_insert_with(Instant::now);
            if since.elapsed() > Duration::from_millis(500) {
                return Err(LiveError::Io {
                    peer: c.peer().into(),
                    cmd: "GET_NEXT_INDEX",
                    source: std::io::Error::other("the relay asks for metadata it does not send (stuck viewer state)"),
                });
            }
            need_meta = true;
            std::thread::sleep(opts.poll);
        } else {
            stuck_since = None;
        }
        if !progressed && !need_meta && !need_streams {
            if data.is_empty() {
                need_streams = true;
            }
            std::thread::sleep(opts.poll);
        }
    }
}

/// Protocol tracing on stderr when `TRACECUBE_LIVE_DEBUG` is set.
fn debug() -> bool {
    static ON: std::sync::OnceLock<bool> = std::sync::OnceLock::new();
    *ON.get_or_init(|| std::env::var_os("TRACECUBE_LIVE_DEBUG").is_some())
}

/// "lost: everything after …" per stream, from what was delivered.
fn lost_after(delivered: &HashMap<String, Delivered>) -> String {
    let mut v: Vec<String> = delivered
        .iter()
        .map(|(k, d)| match d.last_ts_end {
            Some(t) => format!("{k}: {} packets received, everything after clock value {t} lost", d.packets),
            None => format!("{k}: nothing received, everything lost"),
        })
        .collect();
    v.sort();
    format!("lost: {}", v.join("; "))
}
