//! Following one session of a relay daemon: attach, fetch metadata and its
//! updates, pick up new streams, follow each stream's packet index, fetch packets,
//! pass inactivity beacons on, detect the end of the session; when the relay goes
//! away, reconnect and say what may have been lost.
//!
//! Packets already received are never sent twice: after a reconnection to the same
//! relay session, each stream resumes after the last packet offset it delivered.
//!
//! - [`Follower`] (`follower.rs`) drives one connection after another;
//! - `state.rs` holds what survives a reconnection (streams and traces by typed key,
//!   metadata forwarded, packets delivered) and the decisions taken on reconnecting
//!   (same session or a new one, streams that did not come back, what was lost);
//! - the [`Viewer`] and [`Connect`] traits are the relay as the follower sees it:
//!   [`Client`] over TCP, a scripted relay in the unit tests.

use std::sync::atomic::AtomicBool;
use std::time::Duration;

use crossbeam_channel::Sender;

use crate::client::{Attached, Client, Metadata, NewStreams, Packet};
use crate::error::Result;
use crate::msg::Msg;
use crate::proto::{Index, SessionInfo};
use crate::url::LiveUrl;

mod follower;
mod state;
#[cfg(test)]
mod tests;

pub use follower::Follower;

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
    /// Print every metadata reply and stream index received on stderr (protocol
    /// tracing, `tracecube live --debug-protocol`).
    pub debug: bool,
}

impl RelayOptions {
    /// Defaults for `url`: 10 ms poll, 60 s of reconnection attempts, 10 s timeout, no
    /// protocol tracing.
    pub fn new(url: LiveUrl) -> Self {
        RelayOptions { url, poll: Duration::from_millis(10), reconnect_for: Duration::from_secs(60), timeout: Duration::from_secs(10), debug: false }
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

/// Follows the session named by `opts.url` until it ends (or `stop` is set), sending
/// what it receives to `tx`. A lost connection is retried for `reconnect_for`.
pub fn follow(opts: &RelayOptions, tx: &Sender<Msg>, stop: &AtomicBool) -> Result<RelayReport> {
    Follower::new(opts, tx, stop).run(&mut Tcp(opts))
}

/// The viewer commands the follower sends on one connection: [`Client`] over TCP (see
/// its methods for each command's meaning), a scripted relay in the unit tests.
pub trait Viewer {
    /// The peer, `host:port`, named in errors and notices.
    fn peer(&self) -> &str;
    /// The relay's sessions.
    fn list_sessions(&mut self) -> Result<Vec<SessionInfo>>;
    /// Creates the viewer session (needed before attaching).
    fn create_viewer_session(&mut self) -> Result<()>;
    /// Attaches to session `id`, from the beginning of its data.
    fn attach(&mut self, id: u64) -> Result<Attached>;
    /// Streams added to session `id` since the last call.
    fn new_streams(&mut self, id: u64) -> Result<NewStreams>;
    /// New metadata of metadata stream `stream`.
    fn metadata(&mut self, stream: u64) -> Result<Metadata>;
    /// The next index of data stream `stream`.
    fn next_index(&mut self, stream: u64) -> Result<Index>;
    /// The packet of `stream` at byte `offset`, `len` bytes.
    fn packet(&mut self, stream: u64, offset: u64, len: u32) -> Result<Packet>;
}

/// Opens a connection to the relay: once at the start, again after one was lost.
pub trait Connect {
    /// The connection.
    type Viewer: Viewer;
    /// Connects (and performs the handshake).
    fn connect(&mut self) -> Result<Self::Viewer>;
}

impl Viewer for Client {
    fn peer(&self) -> &str {
        Client::peer(self)
    }
    fn list_sessions(&mut self) -> Result<Vec<SessionInfo>> {
        Client::list_sessions(self)
    }
    fn create_viewer_session(&mut self) -> Result<()> {
        Client::create_viewer_session(self)
    }
    fn attach(&mut self, id: u64) -> Result<Attached> {
        Client::attach(self, id)
    }
    fn new_streams(&mut self, id: u64) -> Result<NewStreams> {
        Client::new_streams(self, id)
    }
    fn metadata(&mut self, stream: u64) -> Result<Metadata> {
        Client::metadata(self, stream)
    }
    fn next_index(&mut self, stream: u64) -> Result<Index> {
        Client::next_index(self, stream)
    }
    fn packet(&mut self, stream: u64, offset: u64, len: u32) -> Result<Packet> {
        Client::packet(self, stream, offset, len)
    }
}

/// TCP connections to the relay of `RelayOptions::url`.
struct Tcp<'a>(&'a RelayOptions);

impl Connect for Tcp<'_> {
    type Viewer = Client;
    fn connect(&mut self) -> Result<Client> {
        Client::connect(&self.0.url.host, self.0.url.port, self.0.timeout)
    }
}
