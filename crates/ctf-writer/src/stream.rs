//! [`StreamWriter`]: encodes events into fixed-size packets and streams them to a file.
//!
//! One packet is buffered in memory at a time. When an event does not fit, the packet is
//! closed: its context (`timestamp_end`, `content_size`, `packet_size`, `packet_seq_num`,
//! `events_discarded`) is patched, the whole packet (content plus zero padding up to the
//! power-of-two packet size) is written, and an index entry is appended.
//!
//! Event headers follow LTTng: the compact header (5-bit id, 27-bit timestamp) is used when
//! the id is below 31 and the timestamp advanced by less than 2^27 cycles since the
//! previous timestamp of the stream (the packet's `timestamp_begin` for its first event);
//! otherwise the extended form (32-bit id, 64-bit timestamp). The large header works the
//! same way with a 16-bit id (65535 = extended) and a 32-bit timestamp.

use std::collections::HashMap;
use std::fs::File;
use std::io::{BufWriter, Write};
use std::path::{Path, PathBuf};

use crate::bits::PacketBuf;
use crate::error::{io_err, Result, WriterError};
use crate::ids::{Bits, Cycles, EventClassId, FileOffset, StreamClassId};
use crate::index::{IndexEntry, IndexWriter};
use crate::layout::{Layout, Value};
use crate::schema::{ByteOrder, EventHeaderKind, IntType, PacketContextField, TraceSchema};

/// Magic number at the start of every data packet.
pub const PACKET_MAGIC: u32 = 0xC1FC_1FC1;

/// Options of a stream writer.
#[derive(Debug, Clone)]
pub struct StreamOptions {
    /// Packet size in bytes: a power of two, at least 4096 (LTTng sub-buffer size).
    pub packet_size: usize,
    /// Also write `index/<file>.idx`.
    pub write_index: bool,
    /// Stream instance id written in every packet header (LTTng: the CPU).
    pub instance_id: u64,
    /// Values of the `Extra` packet context fields, by name (e.g. `("cpu_id", 3)`).
    pub extra_context: Vec<(String, u64)>,
}

impl Default for StreamOptions {
    fn default() -> Self {
        StreamOptions { packet_size: 256 * 1024, write_index: true, instance_id: 0, extra_context: Vec::new() }
    }
}

/// Counters of a finished stream.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct StreamStats {
    /// Events written.
    pub events: u64,
    /// Packets written.
    pub packets: u64,
    /// Bytes written to the stream file.
    pub bytes: u64,
    /// Events that used an extended header.
    pub extended_headers: u64,
}

#[derive(Debug, Clone, Copy)]
enum Role {
    Begin,
    End,
    Content,
    Size,
    Seq,
    Discarded,
}

/// Writes one data stream file (e.g. one CPU's `channel0_3`).
#[derive(Debug)]
pub struct StreamWriter {
    out: BufWriter<File>,
    path: PathBuf,
    index: Option<IndexWriter>,
    buf: PacketBuf,
    order: ByteOrder,
    uuid: [u8; 16],
    stream_id: StreamClassId,
    instance: u64,
    header: EventHeaderKind,
    context: Vec<(Option<Role>, IntType, u64)>,
    patches: Vec<(Role, u64)>,
    layouts: HashMap<u32, Layout>,
    open: bool,
    packet_events: u64,
    packet_begin: Cycles,
    last_ts: Cycles,
    seq: u64,
    discarded: u64,
    offset: FileOffset,
    stats: StreamStats,
}

impl StreamWriter {
    /// Creates `dir/file_name` (and `dir/index/file_name.idx` when asked) for a stream of
    /// class `stream_id` of `schema`.
    pub fn create(dir: &Path, file_name: &str, schema: &TraceSchema, stream_id: StreamClassId, opts: StreamOptions) -> Result<Self> {
        schema.validate()?;
        let sc = schema.stream(stream_id).ok_or_else(|| WriterError::Schema(format!("unknown stream class {}", stream_id.0)))?;
        if !opts.packet_size.is_power_of_two() || opts.packet_size < 4096 {
            return Err(WriterError::Option(format!("packet size {} is not a power of two >= 4096", opts.packet_size)));
        }
        let mut context = Vec::new();
        for f in &sc.packet_context {
            let (role, ty, v) = match f {
                PacketContextField::TimestampBegin => (Some(Role::Begin), IntType::unsigned(64), 0),
                PacketContextField::TimestampEnd => (Some(Role::End), IntType::unsigned(64), 0),
                PacketContextField::ContentSize => (Some(Role::Content), IntType::unsigned(64), 0),
                PacketContextField::PacketSize => (Some(Role::Size), IntType::unsigned(64), 0),
                PacketContextField::PacketSeqNum => (Some(Role::Seq), IntType::unsigned(64), 0),
                PacketContextField::EventsDiscarded => (Some(Role::Discarded), IntType::unsigned(64), 0),
                PacketContextField::Extra { name, ty } => {
                    let v = opts
                        .extra_context
                        .iter()
                        .find(|(n, _)| n == name)
                        .map(|(_, v)| *v)
                        .ok_or_else(|| WriterError::Option(format!("no value given for packet context field {name:?}")))?;
                    (None, ty.clone(), v)
                }
            };
            context.push((role, ty, v));
        }
        let mut layouts = HashMap::new();
        for e in schema.events.iter().filter(|e| e.stream == stream_id) {
            layouts.insert(e.id.0, Layout::compile(&e.name, &e.fields, schema.byte_order)?);
        }
        let path = dir.join(file_name);
        let f = File::create(&path).map_err(io_err(&path))?;
        let index = if opts.write_index { Some(IndexWriter::create(&dir.join("index").join(format!("{file_name}.idx")))?) } else { None };
        Ok(StreamWriter {
            out: BufWriter::with_capacity(opts.packet_size.max(1 << 20), f),
            path,
            index,
            buf: PacketBuf::new(opts.packet_size),
            order: schema.byte_order,
            uuid: schema.uuid,
            stream_id,
            instance: opts.instance_id,
            header: sc.event_header,
            context,
            patches: Vec::new(),
            layouts,
            open: false,
            packet_events: 0,
            packet_begin: Cycles(0),
            last_ts: Cycles(0),
            seq: 0,
            discarded: 0,
            offset: FileOffset(0),
            stats: StreamStats::default(),
        })
    }

    /// Encodes one event at time `ts` (not before the previous event of this stream).
    pub fn write_event(&mut self, ts: Cycles, id: EventClassId, values: &[Value<'_>]) -> Result<()> {
        if ts < self.last_ts {
            return Err(WriterError::TimestampBackwards { ts: ts.0, prev: self.last_ts.0 });
        }
        if !self.layouts.contains_key(&id.0) {
            return Err(WriterError::UnknownEventClass(id.0));
        }
        if !self.open {
            self.open_packet(ts)?;
        }
        for attempt in 0..2 {
            let mark = self.buf.mark();
            let ext = self.extended(ts, id);
            let fits = self.write_header(ts, id, ext).is_ok() && {
                let layout = &self.layouts[&id.0];
                layout.encode(&mut self.buf, values)?.is_ok()
            };
            if fits {
                self.last_ts = ts;
                self.packet_events += 1;
                self.stats.events += 1;
                self.stats.extended_headers += u64::from(ext);
                return Ok(());
            }
            self.buf.rollback(mark);
            if attempt == 0 && self.packet_events > 0 {
                self.close_packet()?;
                self.open_packet(ts)?;
            } else {
                break;
            }
        }
        let capacity = self.buf.capacity_bits() - self.buf.pos();
        Err(WriterError::EventTooLarge { bits: capacity + 1, capacity })
    }

    /// Opens a packet at `ts` if none is open, so that the stream's `timestamp_begin` is `ts`
    /// even if its first event comes later (LTTng opens every per-CPU buffer when tracing
    /// starts).
    pub fn begin_packet_at(&mut self, ts: Cycles) -> Result<()> {
        if ts < self.last_ts {
            return Err(WriterError::TimestampBackwards { ts: ts.0, prev: self.last_ts.0 });
        }
        if !self.open {
            self.open_packet(ts)?;
        }
        Ok(())
    }

    /// Counts `n` events as lost; the next packet's `events_discarded` includes them.
    pub fn discard_events(&mut self, n: u64) {
        self.discarded += n;
    }

    /// Timestamp of the last event written (or of the last packet bound).
    pub fn last_timestamp(&self) -> Cycles {
        self.last_ts
    }

    /// Closes the open packet with `timestamp_end` = max(`end`, last event), flushes the file
    /// and the index, and returns the counters. A stream that received no event gets one
    /// empty packet.
    pub fn finish(mut self, end: Cycles) -> Result<StreamStats> {
        if !self.open && self.stats.packets == 0 {
            self.open_packet(end.max(self.last_ts))?;
        }
        if self.open {
            // Like LTTng at session stop: the last packet ends at the stop time.
            self.last_ts = self.last_ts.max(end);
            self.close_packet()?;
        }
        self.out.flush().map_err(io_err(&self.path))?;
        if let Some(ix) = self.index.take() {
            ix.finish()?;
        }
        Ok(self.stats)
    }

    fn extended(&self, ts: Cycles, id: EventClassId) -> bool {
        let delta = ts.0 - self.last_ts.0;
        match self.header {
            EventHeaderKind::Compact => id.0 >= 31 || delta >> 27 != 0,
            EventHeaderKind::Large => id.0 >= 65535 || delta >> 32 != 0,
        }
    }

    fn write_header(&mut self, ts: Cycles, id: EventClassId, ext: bool) -> std::result::Result<(), crate::bits::Full> {
        let o = self.order;
        let b = &mut self.buf;
        b.align(8)?;
        let (id_bits, id_align, ext_id, ts_bits) = match self.header {
            EventHeaderKind::Compact => (5, 1, 31, 27),
            EventHeaderKind::Large => (16, 8, 65535, 32),
        };
        if ext {
            b.write_int(ext_id, id_bits, id_align, o)?;
            b.write_int(u64::from(id.0), 32, 8, o)?;
            b.write_int(ts.0, 64, 8, o)
        } else {
            b.write_int(u64::from(id.0), id_bits, id_align, o)?;
            b.write_int(ts.0, ts_bits, if ts_bits == 32 { 8 } else { 1 }, o)
        }
    }

    fn open_packet(&mut self, ts: Cycles) -> Result<()> {
        let o = self.order;
        let too_small = || WriterError::Option("packet too small for its header and context".into());
        let b = &mut self.buf;
        b.write_int(u64::from(PACKET_MAGIC), 32, 8, o).map_err(|_| too_small())?;
        b.write_bytes(&self.uuid).map_err(|_| too_small())?;
        b.write_int(u64::from(self.stream_id.0), 32, 8, o).map_err(|_| too_small())?;
        b.write_int(self.instance, 64, 8, o).map_err(|_| too_small())?;
        self.patches.clear();
        for (role, ty, v) in &self.context {
            b.align(ty.align).map_err(|_| too_small())?;
            if let Some(r) = role {
                self.patches.push((*r, b.pos()));
            }
            b.write_int(*v, ty.size, 1, ty.byte_order.unwrap_or(o)).map_err(|_| too_small())?;
        }
        self.open = true;
        self.packet_events = 0;
        self.packet_begin = ts;
        self.last_ts = ts;
        Ok(())
    }

    fn close_packet(&mut self) -> Result<()> {
        let content = Bits(self.buf.pos());
        let size = Bits(self.buf.capacity_bits());
        let o = self.order;
        for &(role, at) in &self.patches {
            let v = match role {
                Role::Begin => self.packet_begin.0,
                Role::End => self.last_ts.0,
                Role::Content => content.0,
                Role::Size => size.0,
                Role::Seq => self.seq,
                Role::Discarded => self.discarded,
            };
            self.buf.patch_int(at, v, 64, o);
        }
        self.out.write_all(self.buf.bytes()).map_err(io_err(&self.path))?;
        if let Some(ix) = &mut self.index {
            ix.push(&IndexEntry {
                offset: self.offset.0,
                packet_size: size.0,
                content_size: content.0,
                timestamp_begin: self.packet_begin.0,
                timestamp_end: self.last_ts.0,
                events_discarded: self.discarded,
                stream_id: u64::from(self.stream_id.0),
                stream_instance_id: self.instance,
                packet_seq_num: self.seq,
            })?;
        }
        self.offset.0 += size.bytes_ceil();
        self.stats.bytes += size.bytes_ceil();
        self.stats.packets += 1;
        self.seq += 1;
        self.buf.clear();
        self.open = false;
        Ok(())
    }
}
