//! The LTTng viewer ("live") protocol spoken by `lttng-relayd`, version 2.4: message
//! layouts and codes. Learned from lttng-tools' documentation of the ABI; the code is
//! our own.
//!
//! Every message is a packed C struct; every integer is big-endian. A command is a
//! 16-byte header followed by `data_size` bytes of payload:
//!
//! ```text
//! command header   u64 data_size | u32 cmd | u32 cmd_version
//! CONNECT          u64 viewer_session_id | u32 major | u32 minor | u32 type   (20 B, reply alike)
//! LIST_SESSIONS    -                       reply: u32 count, count × session (339 B)
//! session          u64 id | u32 live_timer | u32 clients | u32 streams | char host[64] | char name[255]
//! CREATE_SESSION   -                       reply: u32 status
//! ATTACH_SESSION   u64 session_id | u64 offset | u32 seek   reply: u32 status | u32 count, count × stream
//! stream           u64 id | u64 ctf_trace_id | u32 metadata_flag | char path[4096] | char channel[255]
//! GET_NEXT_INDEX   u64 stream_id           reply: index (64 B)
//! index            u64 offset | u64 packet_size | u64 content_size | u64 ts_begin | u64 ts_end
//!                  | u64 events_discarded | u64 stream_id | u32 status | u32 flags
//! GET_PACKET       u64 stream_id | u64 offset | u32 len   reply: u32 status | u32 len | u32 flags, len bytes
//! GET_METADATA     u64 stream_id           reply: u64 len | u32 status, len bytes
//! GET_NEW_STREAMS  u64 session_id          reply: u32 status | u32 count, count × stream
//! ```
//!
//! Index sizes (`packet_size`, `content_size`) are in bits; timestamps are in cycles of
//! the stream's clock. An `INACTIVE` index is a beacon: the stream has nothing before
//! `ts_end`.

/// Protocol major version we speak.
pub const MAJOR: u32 = 2;
/// Protocol minor version we speak.
pub const MINOR: u32 = 4;
/// Default TCP port of the relay daemon's live (viewer) endpoint.
pub const DEFAULT_PORT: u16 = 5344;

/// Size of a `host` field.
pub const HOST_NAME_MAX: usize = 64;
/// Size of a name field.
pub const NAME_MAX: usize = 255;
/// Size of a path field.
pub const PATH_MAX: usize = 4096;
/// Size of a session record.
pub const SESSION_LEN: usize = 8 + 4 + 4 + 4 + HOST_NAME_MAX + NAME_MAX;
/// Size of a stream record.
pub const STREAM_LEN: usize = 8 + 8 + 4 + PATH_MAX + NAME_MAX;
/// Size of an index reply.
pub const INDEX_LEN: usize = 7 * 8 + 4 + 4;

/// Commands.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[repr(u32)]
pub enum Command {
    /// Handshake.
    Connect = 1,
    /// List the relay's sessions.
    ListSessions = 2,
    /// Attach to a session.
    AttachSession = 3,
    /// Next packet index of a stream.
    GetNextIndex = 4,
    /// A packet's bytes.
    GetPacket = 5,
    /// New metadata bytes.
    GetMetadata = 6,
    /// Streams added since the last call.
    GetNewStreams = 7,
    /// Create the viewer session (before attaching).
    CreateSession = 8,
}

impl Command {
    /// The command's name, for errors.
    pub fn name(self) -> &'static str {
        match self {
            Command::Connect => "CONNECT",
            Command::ListSessions => "LIST_SESSIONS",
            Command::AttachSession => "ATTACH_SESSION",
            Command::GetNextIndex => "GET_NEXT_INDEX",
            Command::GetPacket => "GET_PACKET",
            Command::GetMetadata => "GET_METADATA",
            Command::GetNewStreams => "GET_NEW_STREAMS",
            Command::CreateSession => "CREATE_SESSION",
        }
    }
}

/// Index flag: new metadata is needed to read this packet.
pub const FLAG_NEW_METADATA: u32 = 1;
/// Index flag: streams were added to the session.
pub const FLAG_NEW_STREAM: u32 = 2;
/// Connection type of a command connection.
pub const CLIENT_COMMAND: u32 = 1;
/// Attach: read from the beginning.
pub const SEEK_BEGINNING: u32 = 1;
/// Attach: read from now.
pub const SEEK_LAST: u32 = 2;

/// Status of an index reply.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum IndexStatus {
    /// A packet is available.
    Ok,
    /// Nothing yet: ask again later.
    Retry,
    /// The stream is closed (the session was destroyed).
    Hup,
    /// Error.
    Err,
    /// Beacon of an inactive stream.
    Inactive,
    /// End of the stream.
    Eof,
    /// A code we do not know.
    Unknown(u32),
}

impl IndexStatus {
    /// From the wire.
    pub fn from_u32(v: u32) -> Self {
        match v {
            1 => Self::Ok,
            2 => Self::Retry,
            3 => Self::Hup,
            4 => Self::Err,
            5 => Self::Inactive,
            6 => Self::Eof,
            v => Self::Unknown(v),
        }
    }
}

/// Reads big-endian integers from a reply buffer; never panics (short buffers are
/// checked by the caller's fixed lengths, out-of-range reads give 0).
pub struct Rd<'a> {
    b: &'a [u8],
    pos: usize,
}

impl<'a> Rd<'a> {
    /// A reader at the start of `b`.
    pub fn new(b: &'a [u8]) -> Self {
        Rd { b, pos: 0 }
    }
    fn take(&mut self, n: usize) -> &'a [u8] {
        let s = self.b.get(self.pos..self.pos + n).unwrap_or(&[]);
        self.pos += n;
        s
    }
    /// A u32.
    pub fn u32(&mut self) -> u32 {
        self.take(4).try_into().map(u32::from_be_bytes).unwrap_or(0)
    }
    /// A u64.
    pub fn u64(&mut self) -> u64 {
        self.take(8).try_into().map(u64::from_be_bytes).unwrap_or(0)
    }
    /// A NUL-padded fixed-size string field.
    pub fn str(&mut self, n: usize) -> String {
        let s = self.take(n);
        let end = s.iter().position(|&c| c == 0).unwrap_or(s.len());
        String::from_utf8_lossy(&s[..end]).into_owned()
    }
}

/// A command header followed by its payload, ready to send.
pub fn command(cmd: Command, payload: &[u8]) -> Vec<u8> {
    let mut v = Vec::with_capacity(16 + payload.len());
    v.extend_from_slice(&(payload.len() as u64).to_be_bytes());
    v.extend_from_slice(&(cmd as u32).to_be_bytes());
    v.extend_from_slice(&0u32.to_be_bytes());
    v.extend_from_slice(payload);
    v
}

/// A session of the relay daemon.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct SessionInfo {
    /// Relay-side id.
    pub id: u64,
    /// Live timer period, µs.
    pub live_timer_us: u32,
    /// Viewers attached.
    pub clients: u32,
    /// Streams.
    pub streams: u32,
    /// Host the session traces.
    pub hostname: String,
    /// Session name.
    pub name: String,
}

impl SessionInfo {
    /// Decodes a session record ([`SESSION_LEN`] bytes).
    pub fn decode(b: &[u8]) -> Self {
        let mut r = Rd::new(b);
        SessionInfo { id: r.u64(), live_timer_us: r.u32(), clients: r.u32(), streams: r.u32(), hostname: r.str(HOST_NAME_MAX), name: r.str(NAME_MAX) }
    }
}

/// A stream of an attached session.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StreamInfo {
    /// Relay-side id.
    pub id: u64,
    /// Trace the stream belongs to (its metadata stream has the same value).
    pub ctf_trace_id: u64,
    /// Whether this is a metadata stream.
    pub metadata: bool,
    /// Path of the trace on the relay (e.g. `host/session-date/ust/uid/0/64-bit`).
    pub path: String,
    /// Channel (file) name, e.g. `chan0_1`.
    pub channel: String,
}

impl StreamInfo {
    /// Decodes a stream record ([`STREAM_LEN`] bytes).
    pub fn decode(b: &[u8]) -> Self {
        let mut r = Rd::new(b);
        StreamInfo { id: r.u64(), ctf_trace_id: r.u64(), metadata: r.u32() != 0, path: r.str(PATH_MAX), channel: r.str(NAME_MAX) }
    }
}

/// A reply to `GET_NEXT_INDEX`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Index {
    /// Byte offset of the packet in the stream.
    pub offset: u64,
    /// Packet size, bits.
    pub packet_bits: u64,
    /// Content size, bits.
    pub content_bits: u64,
    /// First timestamp, cycles.
    pub ts_begin: u64,
    /// Last timestamp (or the beacon's time), cycles.
    pub ts_end: u64,
    /// Discarded-events counter.
    pub events_discarded: u64,
    /// Stream id (or the stream instance id for beacons).
    pub stream_id: u64,
    /// Status.
    pub status: IndexStatus,
    /// `FLAG_*` bits.
    pub flags: u32,
}

impl Index {
    /// Decodes an index reply ([`INDEX_LEN`] bytes).
    pub fn decode(b: &[u8]) -> Self {
        let mut r = Rd::new(b);
        Index {
            offset: r.u64(),
            packet_bits: r.u64(),
            content_bits: r.u64(),
            ts_begin: r.u64(),
            ts_end: r.u64(),
            events_discarded: r.u64(),
            stream_id: r.u64(),
            status: IndexStatus::from_u32(r.u32()),
            flags: r.u32(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn command_header_is_big_endian_and_sized() {
        let v = command(Command::GetNextIndex, &7u64.to_be_bytes());
        assert_eq!(v.len(), 24);
        assert_eq!(&v[..8], &8u64.to_be_bytes());
        assert_eq!(&v[8..12], &4u32.to_be_bytes());
        assert_eq!(&v[16..], &7u64.to_be_bytes());
    }

    #[test]
    fn records_decode_and_short_input_does_not_panic() {
        let mut b = Vec::new();
        b.extend_from_slice(&42u64.to_be_bytes());
        b.extend_from_slice(&1_000_000u32.to_be_bytes());
        b.extend_from_slice(&0u32.to_be_bytes());
        b.extend_from_slice(&9u32.to_be_bytes());
        let mut host = [0u8; HOST_NAME_MAX];
        host[..4].copy_from_slice(b"box1");
        b.extend_from_slice(&host);
        let mut name = [0u8; NAME_MAX];
        name[..2].copy_from_slice(b"s1");
        b.extend_from_slice(&name);
        assert_eq!(b.len(), SESSION_LEN);
        let s = SessionInfo::decode(&b);
        assert_eq!((s.id, s.live_timer_us, s.streams, s.hostname.as_str(), s.name.as_str()), (42, 1_000_000, 9, "box1", "s1"));
        let short = SessionInfo::decode(&b[..10]);
        assert_eq!(short.hostname, "");
        let i = Index::decode(&[0xff; 3]);
        assert_eq!(i.status, IndexStatus::Unknown(0));
    }
}
