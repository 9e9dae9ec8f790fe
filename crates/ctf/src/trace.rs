//! Finding traces on disk and assembling their data streams.
//!
//! Every directory below the root that holds a file named `metadata` is a trace; the
//! other regular files beside it (not hidden) are its data stream files. Files of one
//! stream (tracefile rotation `chan_0_0`, `chan_0_1`; session-rotation chunks of traces
//! that share a UUID) are grouped by stream class and stream instance id, ordered by
//! their first packet's beginning timestamp, as Babeltrace 2 does.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use crate::clock::ClockConv;
use crate::error::{Error, Result};
use crate::index::{read_index_file, scan_packets, PacketInfo};
use crate::ir::{MetadataFormat, TraceClass};
use crate::plan::Plan;

mod discover;
pub use discover::MAX_DEPTH;

/// The bytes of a file: memory-mapped, or read when mapping is impossible (empty files).
///
/// Safety argument for mapping: trace files are opened read-only and tracecube never
/// writes them; a tracer that truncates a file while we read it could make the mapping
/// fault (SIGBUS), the documented risk of every mmap-based reader (ripgrep, Babeltrace).
pub enum FileBytes {
    /// A read-only mapping.
    Mapped(memmap2::Mmap),
    /// Owned bytes.
    Owned(Vec<u8>),
}

impl std::ops::Deref for FileBytes {
    type Target = [u8];
    fn deref(&self) -> &[u8] {
        match self {
            FileBytes::Mapped(m) => m,
            FileBytes::Owned(v) => v,
        }
    }
}

impl FileBytes {
    /// Maps (or reads) a file.
    pub fn open(path: &Path) -> Result<FileBytes> {
        let io = |err| Error::Io { path: path.into(), err };
        let f = std::fs::File::open(path).map_err(io)?;
        let len = f.metadata().map_err(io)?.len();
        if len == 0 {
            return Ok(FileBytes::Owned(std::fs::read(path).map_err(io)?));
        }
        // SAFETY: read-only mapping of a file we do not modify; see the type's docs.
        match unsafe { memmap2::Mmap::map(&f) } {
            Ok(m) => {
                // Where the kernel reads these pages in (a trace not in the page cache),
                // it may then keep them in 2 MiB folios, which this and every later run
                // map in a step each rather than 512 (BENCHMARKS.md, session 33). Only a
                // hint: without transparent huge pages it fails and changes nothing.
                #[cfg(target_os = "linux")]
                let _ = m.advise(memmap2::Advice::HugePage);
                Ok(FileBytes::Mapped(m))
            }
            Err(_) => Ok(FileBytes::Owned(std::fs::read(path).map_err(io)?)),
        }
    }

    /// Asks the kernel to map in, now and at once, the pages of bytes `range` of a
    /// mapped file (`MADV_POPULATE_READ`, Linux 5.14 on), before they are read: one call
    /// instead of a page fault every few pages. Only a hint: where it fails (an older
    /// kernel, another system) the pages are faulted in as they are read.
    pub fn populate(&self, range: std::ops::Range<usize>) {
        #[cfg(target_os = "linux")]
        if let FileBytes::Mapped(m) = self {
            let end = range.end.min(m.len());
            if range.start < end {
                let _ = m.advise_range(memmap2::Advice::PopulateRead, range.start, end - range.start);
            }
        }
        #[cfg(not(target_os = "linux"))]
        let _ = range;
    }
}

impl FileBytes {
    /// Tells the kernel that this process no longer needs the pages of bytes `range`
    /// of a mapped file (`MADV_DONTNEED`), in whole blocks of 64 KiB: from the block
    /// holding `range.start` to the last block ending by `range.end` (so that a reader
    /// releasing packets smaller than a block, one after the other, releases each
    /// block once it is past it). They leave its resident set but stay in the page
    /// cache, and a later read maps them in again, unchanged. A reader that releases
    /// what it went past keeps its resident memory to what it reads now, whatever the
    /// trace's size. Only a hint: where it fails (another system) nothing changes.
    pub fn release(&self, range: std::ops::Range<usize>) {
        #[cfg(target_os = "linux")]
        if let FileBytes::Mapped(m) = self {
            // Aligned for any page size up to 64 KiB (an unaligned start fails).
            const ALIGN: usize = 64 << 10;
            let start = range.start / ALIGN * ALIGN;
            let end = range.end.min(m.len()) / ALIGN * ALIGN;
            if start < end {
                // SAFETY: a read-only shared mapping of a file nobody writes (see the
                // type's docs): dropping its pages only unmaps them, and a read maps the
                // file's same bytes in again, so no byte borrowed from it changes.
                let _ = unsafe { m.unchecked_advise_range(memmap2::UncheckedAdvice::DontNeed, start, end - start) };
            }
        }
        #[cfg(not(target_os = "linux"))]
        let _ = range;
    }
}

/// One data stream file.
pub struct StreamFile {
    /// Path.
    pub path: PathBuf,
    /// Contents.
    pub bytes: FileBytes,
    /// Packets of the file.
    pub packets: Vec<PacketInfo>,
    /// Whether `packets` came from an `index/*.idx` file.
    pub from_index: bool,
    /// Error met while indexing (after the good packets).
    pub error: Option<Error>,
}

/// One trace: a metadata file and its data stream files.
pub struct Trace {
    /// Directory holding `metadata`.
    pub dir: PathBuf,
    /// The metadata.
    pub class: TraceClass,
    /// How the metadata was written.
    pub format: MetadataFormat,
    /// The compiled decoding plan.
    pub plan: Plan,
    /// Clock converters, by clock index.
    pub clocks: Vec<ClockConv>,
    /// Data stream files.
    pub files: Vec<StreamFile>,
}

/// A packet of a stream: which trace and file it is in, and its description.
#[derive(Debug, Clone, Copy, Default)]
pub struct PacketRef {
    /// Trace index in the set.
    pub trace: u32,
    /// File index in the trace.
    pub file: u32,
    /// The packet.
    pub info: PacketInfo,
}

/// A data stream: the packets of one or more files, in order.
pub struct Stream {
    /// Stream class id.
    pub class_id: u64,
    /// Stream instance id, if known.
    pub instance: Option<u64>,
    /// Packets in stream order.
    pub packets: Vec<PacketRef>,
    /// Index of the trace whose error (if any) ends this stream, and the file.
    pub error: Option<(u32, u32)>,
}

/// All traces found below a path, and their streams.
pub struct TraceSet {
    /// The path given.
    pub root: PathBuf,
    /// Traces, sorted by directory.
    pub traces: Vec<Trace>,
    /// Streams, in a deterministic order.
    pub streams: Vec<Stream>,
    /// What was found but not read, and why (a FIFO among the stream files, a file
    /// claiming a stream another file holds): for the reader to print.
    pub warnings: Vec<String>,
}

/// The directories of the traces below `root` (or of the trace `root` is), sorted, as
/// [`TraceSet::open`] finds them (links followed, loops detected).
pub fn trace_dirs(root: &Path) -> Result<Vec<PathBuf>> {
    let mut found = discover::find_traces(root)?;
    found.dirs.sort();
    Ok(found.dirs)
}

impl TraceSet {
    /// Opens every trace below `root` (or the trace `root` is).
    /// Symbolic links are followed (loops detected); only regular files are opened;
    /// what is left out is in [`TraceSet::warnings`].
    pub fn open(root: &Path) -> Result<TraceSet> {
        let mut found = discover::find_traces(root)?;
        found.dirs.sort();
        if found.dirs.is_empty() {
            return Err(discover::no_trace(root, &found));
        }
        let mut warnings = std::mem::take(&mut found.warnings);
        let mut traces = Vec::new();
        for dir in &found.dirs {
            traces.push(open_trace(dir, &mut warnings)?);
        }
        let streams = group_streams(&traces, &mut warnings);
        Ok(TraceSet { root: root.into(), traces, streams, warnings })
    }

    /// The trace, file and packet of a stream's packet.
    pub fn packet_file(&self, p: &PacketRef) -> (&Trace, &StreamFile) {
        let t = &self.traces[p.trace as usize];
        (t, &t.files[p.file as usize])
    }

    /// The error that ends `stream`, if one does.
    pub fn stream_error(&self, s: &Stream) -> Option<&Error> {
        s.error.and_then(|(t, f)| self.traces[t as usize].files[f as usize].error.as_ref())
    }

    /// The value of the unsigned packet-context field `name` (LTTng's `cpu_id`) of each
    /// of packets `range` of stream `stream`: `None` for a packet whose stream class
    /// has no such field, or whose header cannot be read. Reads the packets' headers
    /// only (the index does not keep their contexts).
    pub fn packet_context_uints(&self, stream: usize, range: std::ops::Range<usize>, name: &str) -> Vec<Option<u64>> {
        let Some(s) = self.streams.get(stream) else { return Vec::new() };
        let Some(packets) = s.packets.get(range) else { return Vec::new() };
        // (A stream's packets are those of one trace, as its cursor reads them.)
        let Some(t) = packets.first().and_then(|p| self.traces.get(p.trace as usize)) else { return Vec::new() };
        let Some(node) = t.plan.stream(s.class_id).and_then(|sp| sp.packet_context).and_then(|c| t.plan.find(c, &[name])) else {
            return vec![None; packets.len()];
        };
        let (i, mut dec) = (node.0 as usize, crate::decode::Decoder::new(&t.plan));
        packets
            .iter()
            .map(|p| {
                let data: &[u8] = &t.files.get(p.file as usize)?.bytes;
                crate::index::read_packet_header(&t.plan, &mut dec, data, p.info.offset).ok()?;
                (dec.stamps.get(i) == Some(&dec.epoch)).then(|| dec.slots[i])
            })
            .collect()
    }

    /// The time (ns from origin) of clock value `cycles` of packet `p`'s stream, by the
    /// default clock of its stream class in `p`'s trace (`None` without a clock or a
    /// value): for judging packets by their index times.
    pub fn packet_ns(&self, p: &PacketRef, cycles: Option<u64>) -> Option<i64> {
        let t = self.traces.get(p.trace as usize)?;
        let conv = t.clocks.get(t.plan.stream(p.info.stream_class)?.clock?)?;
        Some(conv.to_ns(cycles?))
    }

    /// Total number of packets.
    pub fn packet_count(&self) -> usize {
        self.streams.iter().map(|s| s.packets.len()).sum()
    }

    /// The set with its compiled LTTng event headers turned off: every event header
    /// then goes through the general decoder (to measure the compiled path, and as
    /// the oracle of [`crate::crosscheck`]).
    pub fn without_compiled_headers(mut self) -> TraceSet {
        for t in &mut self.traces {
            for sp in &mut t.plan.streams {
                sp.fast_header = None;
            }
        }
        self
    }
}

/// In-memory traces (live sources): a trace is built from metadata bytes, then given
/// owned stream bytes batch after batch. Unlike [`TraceSet::open`], every file is its own
/// stream, in the order given, so that stream indices stay stable while files are
/// appended: stream `i` of the set is the `i`-th file, counting the files of trace 0
/// first, then those of trace 1, and so on.
impl TraceSet {
    /// An empty set (no traces yet); `root` only names it in errors and reports.
    pub fn in_memory(root: &Path) -> TraceSet {
        TraceSet { root: root.into(), traces: Vec::new(), streams: Vec::new(), warnings: Vec::new() }
    }

    /// Adds a trace described by the metadata `bytes` (TSDL plain or packetized, or
    /// CTF 2), without files; `dir` names it (errors, host labels). Returns its index.
    pub fn add_memory_trace(&mut self, dir: &Path, bytes: &[u8]) -> Result<usize> {
        let (class, format, plan) = compile_metadata(dir, bytes)?;
        let clocks = class.clocks.iter().map(ClockConv::new).collect();
        self.traces.push(Trace { dir: dir.into(), class, format, plan, clocks, files: Vec::new() });
        Ok(self.traces.len() - 1)
    }

    /// Replaces the metadata of trace `index` (it grew: new event classes); the
    /// decoding plan is compiled again. On error the trace is left unchanged.
    pub fn replace_metadata(&mut self, index: usize, bytes: &[u8]) -> Result<()> {
        let t = &mut self.traces[index];
        let (class, format, plan) = compile_metadata(&t.dir, bytes)?;
        t.clocks = class.clocks.iter().map(ClockConv::new).collect();
        t.class = class;
        t.format = format;
        t.plan = plan;
        Ok(())
    }

    /// Sets the stream files of trace `index` to `files` (name and whole packets,
    /// concatenated), indexing their packets by reading packet headers, and rebuilds
    /// the set's streams one per file (see the `impl` docs).
    pub fn set_memory_files(&mut self, index: usize, files: Vec<(PathBuf, Vec<u8>)>) {
        let t = &mut self.traces[index];
        t.files = files
            .into_iter()
            .map(|(path, bytes)| {
                let (packets, error) = scan_packets(&t.plan, &bytes, &path);
                StreamFile { path, bytes: FileBytes::Owned(bytes), packets, from_index: false, error }
            })
            .collect();
        self.streams = one_stream_per_file(&self.traces);
    }

    /// Takes the files of trace `index` back (their bytes), leaving it without files.
    /// The set's streams are rebuilt.
    pub fn take_memory_files(&mut self, index: usize) -> Vec<(PathBuf, FileBytes)> {
        let files = std::mem::take(&mut self.traces[index].files);
        self.streams = one_stream_per_file(&self.traces);
        files.into_iter().map(|f| (f.path, f.bytes)).collect()
    }
}

fn compile_metadata(dir: &Path, bytes: &[u8]) -> Result<(TraceClass, MetadataFormat, Plan)> {
    let mpath = dir.join("metadata");
    let (class, format) = crate::metadata::parse_metadata(bytes, &mpath)?;
    let plan = Plan::compile(&class).map_err(|e| Error::Metadata { path: mpath, line: 0, msg: e.0 })?;
    Ok((class, format, plan))
}

fn one_stream_per_file(traces: &[Trace]) -> Vec<Stream> {
    let mut out = Vec::new();
    for (ti, t) in traces.iter().enumerate() {
        for (fi, f) in t.files.iter().enumerate() {
            let first = f.packets.first();
            out.push(Stream {
                class_id: first.map(|p| p.stream_class).unwrap_or(0),
                instance: first.and_then(|p| p.instance),
                packets: f.packets.iter().map(|&info| PacketRef { trace: ti as u32, file: fi as u32, info }).collect(),
                error: f.error.is_some().then_some((ti as u32, fi as u32)),
            });
        }
    }
    out
}

fn open_trace(dir: &Path, warnings: &mut Vec<String>) -> Result<Trace> {
    let mpath = dir.join("metadata");
    let (class, format) = crate::metadata::load_metadata(&mpath)?;
    let plan = Plan::compile(&class).map_err(|e| Error::Metadata { path: mpath.clone(), line: 0, msg: e.0 })?;
    let clocks = class.clocks.iter().map(ClockConv::new).collect();
    let names = discover::stream_names(dir, warnings)?;
    let mut files = Vec::new();
    for name in names {
        let path = dir.join(&name);
        let bytes = FileBytes::open(&path)?;
        let mut idx = PathBuf::from(dir);
        idx.push("index");
        idx.push(format!("{}.idx", name.to_string_lossy()));
        let (packets, error, from_index) = match read_index_file(&idx, bytes.len() as u64) {
            Some(p) if index_agrees(&plan, &bytes, &p) => (p, None, true),
            _ => {
                let (p, e) = scan_packets(&plan, &bytes, &path);
                (p, e, false)
            }
        };
        files.push(StreamFile { path, bytes, packets, from_index, error });
    }
    Ok(Trace { dir: dir.into(), class, format, plan, clocks, files })
}

/// An index is trusted when its first packet's header agrees with the data file.
fn index_agrees(plan: &Plan, data: &[u8], packets: &[PacketInfo]) -> bool {
    let Some(first) = packets.first() else { return data.is_empty() };
    let mut dec = crate::decode::Decoder::new(plan);
    match crate::index::read_packet_header(plan, &mut dec, data, first.offset) {
        Ok((p, None)) => p.total_bits == first.total_bits && p.content_bits == first.content_bits && p.stream_class == first.stream_class,
        _ => false,
    }
}

/// Groups files into streams. Files of one stream (same trace UUID, stream class and
/// instance) follow each other in time; a file whose first packet begins before the
/// stream's files so far end (a backup copy, two files claiming one stream) is left out
/// with a warning rather than counted twice.
fn group_streams(traces: &[Trace], warnings: &mut Vec<String>) -> Vec<Stream> {
    // Key: (uuid, stream class, instance) when both are known; else unique per file.
    type Key = (Option<[u8; 16]>, u64, Option<u64>, usize);
    let mut groups: BTreeMap<Key, Vec<(u32, u32)>> = BTreeMap::new();
    let mut order: Vec<Key> = Vec::new();
    let mut unique = 0usize;
    for (ti, t) in traces.iter().enumerate() {
        // First packets seen in this trace: a second file starting with the same
        // packet, byte for byte (a copy), claims a stream already held, whatever its ids.
        // (By stream class, first and last clock values, total and content sizes.)
        type FirstPacket = (u64, Option<u64>, Option<u64>, u64, u64);
        let mut firsts: BTreeMap<FirstPacket, usize> = BTreeMap::new();
        for (fi, f) in t.files.iter().enumerate() {
            let first = f.packets.first();
            if let Some(p) = first.filter(|p| p.ts_begin.is_some()) {
                fn bytes<'a>(f: &'a StreamFile, p: &PacketInfo) -> Option<&'a [u8]> {
                    f.bytes.get(p.offset as usize..p.offset.saturating_add(p.total_bits / 8) as usize)
                }
                let held = firsts.get(&(p.stream_class, p.ts_begin, p.ts_end, p.total_bits, p.content_bits)).copied();
                if let Some(held) = held.filter(|&h| bytes(&t.files[h], p) == bytes(f, p)) {
                    warnings.push(format!("{}: begins with the same packet as {} (a copy?): not read", f.path.display(), t.files[held].path.display()));
                    continue;
                }
                firsts.insert((p.stream_class, p.ts_begin, p.ts_end, p.total_bits, p.content_bits), fi);
            }
            let class = first.map(|p| p.stream_class).unwrap_or(0);
            let instance = first.and_then(|p| p.instance);
            let key = match (t.class.uuid, instance) {
                (Some(u), Some(i)) => (Some(u), class, Some(i), 0),
                _ => {
                    unique += 1;
                    (None, class, instance, unique)
                }
            };
            if !groups.contains_key(&key) {
                order.push(key);
            }
            groups.entry(key).or_default().push((ti as u32, fi as u32));
        }
    }
    let mut streams = Vec::new();
    for key in order {
        let mut files = groups.remove(&key).unwrap_or_default();
        files.sort_by_key(|&(t, f)| {
            let file = &traces[t as usize].files[f as usize];
            (file.packets.first().and_then(|p| p.ts_begin).unwrap_or(0), t, f)
        });
        let mut packets: Vec<PacketRef> = Vec::new();
        let mut error = None;
        for &(t, f) in &files {
            let file = &traces[t as usize].files[f as usize];
            let end = packets.last().and_then(|p| p.info.ts_end.filter(|_| p.trace == t));
            if let (Some(end), Some(begin)) = (end, file.packets.first().and_then(|p| p.ts_begin)) {
                if begin < end {
                    let held = packets.last().map(|p| traces[p.trace as usize].files[p.file as usize].path.display().to_string()).unwrap_or_default();
                    warnings.push(format!(
                        "{}: claims stream {} (class {}) from {held}, whose time it overlaps (a copy?): not read",
                        file.path.display(),
                        key.2.map_or("-".into(), |i| i.to_string()),
                        key.1
                    ));
                    continue;
                }
            }
            packets.extend(file.packets.iter().map(|&info| PacketRef { trace: t, file: f, info }));
            if file.error.is_some() {
                error = Some((t, f));
                break;
            }
        }
        streams.push(Stream { class_id: key.1, instance: key.2, packets, error });
    }
    streams
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Populating is a hint: any range, inside the file, past its end, empty or
    /// reversed, leaves the bytes as they are, and nothing panics.
    #[test]
    fn populate_takes_any_range_and_changes_no_byte() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("stream");
        let data: Vec<u8> = (0..3 * 4096 + 17).map(|i| (i * 7 % 251) as u8).collect();
        std::fs::write(&path, &data).unwrap();
        let bytes = FileBytes::open(&path).unwrap();
        assert!(matches!(bytes, FileBytes::Mapped(_)), "a non-empty file is mapped");
        let n = data.len();
        #[allow(clippy::reversed_empty_ranges)]
        for r in [0..n, 5..4100, 4096..n + 100, n..n + 1, n + 1..n + 9000, 9..9, 100..50, 0..usize::MAX] {
            bytes.populate(r);
        }
        assert_eq!(&bytes[..], &data[..]);
    }

    /// Releasing pages is a hint too, and exact: the bytes read after it, faulted in
    /// again from the file, are the same, for any range.
    #[test]
    fn release_takes_any_range_and_changes_no_byte() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("stream");
        let data: Vec<u8> = (0..5 * 65536 + 17).map(|i| (i * 7 % 251) as u8).collect();
        std::fs::write(&path, &data).unwrap();
        let bytes = FileBytes::open(&path).unwrap();
        let n = data.len();
        #[allow(clippy::reversed_empty_ranges)]
        for r in [0..n, 5..70000, 65536..n + 100, n..n + 1, n + 1..n + 9000, 9..9, 100..50, 0..usize::MAX] {
            assert_eq!(&bytes[..], &data[..]);
            bytes.release(r);
            assert_eq!(&bytes[..], &data[..]);
        }
    }
}
