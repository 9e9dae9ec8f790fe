//! A blocking client of the relay daemon's viewer endpoint: one TCP connection, one
//! method per command. It knows nothing of CTF beyond packet bytes and indexes.

use std::io::{Read, Write};
use std::net::{TcpStream, ToSocketAddrs};
use std::time::Duration;

use crate::error::{LiveError, Result};
use crate::proto::{self, Command, Index, Rd, SessionInfo, StreamInfo};

/// Largest reply payload accepted (a packet or a metadata chunk), bytes.
pub const MAX_REPLY: u64 = 256 << 20;
/// Most records accepted in one list reply (sessions or streams).
pub const MAX_RECORDS: u32 = 1 << 16;

/// Result of `ATTACH_SESSION`.
#[derive(Debug, Clone)]
pub struct Attached {
    /// The session's streams.
    pub streams: Vec<StreamInfo>,
}

/// What `GET_METADATA` gave.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Metadata {
    /// New bytes to append.
    Data(Vec<u8>),
    /// Nothing new.
    NoNew,
    /// The session is gone.
    Hup,
    /// The relay no longer knows the stream (closed: all its metadata was sent).
    Closed,
}

/// What `GET_PACKET` gave.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Packet {
    /// The bytes.
    Data(Vec<u8>),
    /// Not available yet.
    Retry,
    /// The stream ended.
    Eof,
    /// The relay needs us to fetch metadata or streams first (flags).
    Flags(u32),
}

/// What `GET_NEW_STREAMS` gave.
#[derive(Debug, Clone)]
pub enum NewStreams {
    /// Streams added.
    Streams(Vec<StreamInfo>),
    /// None added.
    NoNew,
    /// The session is closed.
    Hup,
}

/// A command connection to a relay daemon.
pub struct Client {
    sock: TcpStream,
    peer: String,
    /// Viewer session id assigned by the relay.
    pub viewer_session: u64,
    /// Protocol minor version agreed.
    pub minor: u32,
}

impl Client {
    /// Connects to `host:port` and performs the handshake.
    pub fn connect(host: &str, port: u16, timeout: Duration) -> Result<Client> {
        let peer = format!("{host}:{port}");
        let io = |source| LiveError::Io { peer: peer.clone(), cmd: "connect", source };
        let addrs: Vec<_> = (host, port).to_socket_addrs().map_err(io)?.collect();
        let mut last = None;
        let mut sock = None;
        for a in addrs {
            match TcpStream::connect_timeout(&a, timeout) {
                Ok(s) => {
                    sock = Some(s);
                    break;
                }
                Err(e) => last = Some(e),
            }
        }
        let sock = sock.ok_or_else(|| io(last.unwrap_or_else(|| std::io::Error::new(std::io::ErrorKind::NotFound, "no address"))))?;
        sock.set_nodelay(true).ok();
        sock.set_read_timeout(Some(timeout)).ok();
        sock.set_write_timeout(Some(timeout)).ok();
        let mut c = Client { sock, peer, viewer_session: 0, minor: proto::MINOR };
        let mut p = Vec::with_capacity(20);
        p.extend_from_slice(&0u64.to_be_bytes());
        p.extend_from_slice(&proto::MAJOR.to_be_bytes());
        p.extend_from_slice(&proto::MINOR.to_be_bytes());
        p.extend_from_slice(&proto::CLIENT_COMMAND.to_be_bytes());
        c.send(Command::Connect, &p)?;
        let r = c.recv(Command::Connect, 20)?;
        let mut rd = Rd::new(&r);
        c.viewer_session = rd.u64();
        let major = rd.u32();
        let minor = rd.u32();
        if major != proto::MAJOR {
            return Err(c.protocol(Command::Connect, format!("relay speaks protocol {major}.{minor}, we speak {}.{}", proto::MAJOR, proto::MINOR)));
        }
        c.minor = minor.min(proto::MINOR);
        Ok(c)
    }

    /// The peer, `host:port`.
    pub fn peer(&self) -> &str {
        &self.peer
    }

    fn protocol(&self, cmd: Command, msg: String) -> LiveError {
        LiveError::Protocol { peer: self.peer.clone(), cmd: cmd.name(), msg }
    }

    fn send(&mut self, cmd: Command, payload: &[u8]) -> Result<()> {
        let v = proto::command(cmd, payload);
        self.sock.write_all(&v).map_err(|source| LiveError::Io { peer: self.peer.clone(), cmd: cmd.name(), source })
    }

    fn recv(&mut self, cmd: Command, n: usize) -> Result<Vec<u8>> {
        let mut b = vec![0u8; n];
        self.read_into(cmd, &mut b)?;
        Ok(b)
    }

    fn read_into(&mut self, cmd: Command, b: &mut [u8]) -> Result<()> {
        self.sock.read_exact(b).map_err(|source| LiveError::Io { peer: self.peer.clone(), cmd: cmd.name(), source })
    }

    fn records(&mut self, cmd: Command, count: u32, len: usize) -> Result<Vec<Vec<u8>>> {
        if count > MAX_RECORDS {
            return Err(self.protocol(cmd, format!("{count} records announced (at most {MAX_RECORDS} accepted)")));
        }
        (0..count).map(|_| self.recv(cmd, len)).collect()
    }

    /// The relay's sessions.
    pub fn list_sessions(&mut self) -> Result<Vec<SessionInfo>> {
        self.send(Command::ListSessions, &[])?;
        let n = u32::from_be_bytes(self.recv(Command::ListSessions, 4)?.try_into().unwrap_or_default());
        Ok(self.records(Command::ListSessions, n, proto::SESSION_LEN)?.iter().map(|b| SessionInfo::decode(b)).collect())
    }

    /// Creates the viewer session (needed before attaching).
    pub fn create_viewer_session(&mut self) -> Result<()> {
        self.send(Command::CreateSession, &[])?;
        let st = u32::from_be_bytes(self.recv(Command::CreateSession, 4)?.try_into().unwrap_or_default());
        if st != 1 {
            return Err(self.protocol(Command::CreateSession, format!("status {st}")));
        }
        Ok(())
    }

    /// Attaches to session `id`, from the beginning of its data.
    pub fn attach(&mut self, id: u64) -> Result<Attached> {
        let mut p = Vec::with_capacity(20);
        p.extend_from_slice(&id.to_be_bytes());
        p.extend_from_slice(&0u64.to_be_bytes());
        p.extend_from_slice(&proto::SEEK_BEGINNING.to_be_bytes());
        self.send(Command::AttachSession, &p)?;
        let r = self.recv(Command::AttachSession, 8)?;
        let mut rd = Rd::new(&r);
        let (status, count) = (rd.u32(), rd.u32());
        let streams = self.records(Command::AttachSession, count, proto::STREAM_LEN)?.iter().map(|b| StreamInfo::decode(b)).collect();
        let why = match status {
            1 => return Ok(Attached { streams }),
            2 => return Err(LiveError::Busy { peer: self.peer.clone(), session: id }),
            3 => "unknown session id",
            4 => "the session is not live",
            5 => "seek error",
            6 => "no viewer session",
            _ => "unknown status",
        };
        Err(self.protocol(Command::AttachSession, format!("session {id}: status {status} ({why})")))
    }

    /// Streams added to session `id` since the last call.
    pub fn new_streams(&mut self, id: u64) -> Result<NewStreams> {
        self.send(Command::GetNewStreams, &id.to_be_bytes())?;
        let r = self.recv(Command::GetNewStreams, 8)?;
        let mut rd = Rd::new(&r);
        let (status, count) = (rd.u32(), rd.u32());
        let streams: Vec<StreamInfo> = self.records(Command::GetNewStreams, count, proto::STREAM_LEN)?.iter().map(|b| StreamInfo::decode(b)).collect();
        match status {
            1 => Ok(NewStreams::Streams(streams)),
            2 => Ok(NewStreams::NoNew),
            4 => Ok(NewStreams::Hup),
            s => Err(self.protocol(Command::GetNewStreams, format!("session {id}: status {s}"))),
        }
    }

    /// New metadata of metadata stream `stream`.
    pub fn metadata(&mut self, stream: u64) -> Result<Metadata> {
        self.send(Command::GetMetadata, &stream.to_be_bytes())?;
        let r = self.recv(Command::GetMetadata, 12)?;
        let mut rd = Rd::new(&r);
        let (len, status) = (rd.u64(), rd.u32());
        match status {
            1 => {
                if len > MAX_REPLY {
                    return Err(self.protocol(Command::GetMetadata, format!("stream {stream}: {len} bytes announced")));
                }
                Ok(Metadata::Data(self.recv(Command::GetMetadata, len as usize)?))
            }
            2 => Ok(Metadata::NoNew),
            3 => Ok(Metadata::Closed),
            4 => Ok(Metadata::Hup),
            s => Err(self.protocol(Command::GetMetadata, format!("stream {stream}: status {s}"))),
        }
    }

    /// The next index of data stream `stream`.
    pub fn next_index(&mut self, stream: u64) -> Result<Index> {
        self.send(Command::GetNextIndex, &stream.to_be_bytes())?;
        let r = self.recv(Command::GetNextIndex, proto::INDEX_LEN)?;
        let i = Index::decode(&r);
        let bad = !i.packet_bits.is_multiple_of(8) || i.content_bits > i.packet_bits || i.packet_bits / 8 > MAX_REPLY || i.packet_bits == 0;
        if bad && i.status == proto::IndexStatus::Ok {
            return Err(self.protocol(Command::GetNextIndex, format!("stream {stream}: bad packet sizes {} / {} bits", i.content_bits, i.packet_bits)));
        }
        Ok(i)
    }

    /// The packet of `stream` at byte `offset`, `len` bytes.
    pub fn packet(&mut self, stream: u64, offset: u64, len: u32) -> Result<Packet> {
        let mut p = Vec::with_capacity(20);
        p.extend_from_slice(&stream.to_be_bytes());
        p.extend_from_slice(&offset.to_be_bytes());
        p.extend_from_slice(&len.to_be_bytes());
        self.send(Command::GetPacket, &p)?;
        let r = self.recv(Command::GetPacket, 12)?;
        let mut rd = Rd::new(&r);
        let (status, n, flags) = (rd.u32(), rd.u32(), rd.u32());
        match status {
            1 => {
                if n != len {
                    return Err(self.protocol(Command::GetPacket, format!("stream {stream} offset {offset}: {n} bytes sent, {len} asked")));
                }
                Ok(Packet::Data(self.recv(Command::GetPacket, n as usize)?))
            }
            2 => Ok(Packet::Retry),
            3 if flags & (proto::FLAG_NEW_METADATA | proto::FLAG_NEW_STREAM) != 0 => Ok(Packet::Flags(flags)),
            4 => Ok(Packet::Eof),
            s => Err(self.protocol(Command::GetPacket, format!("stream {stream} offset {offset}: status {s}"))),
        }
    }
}
