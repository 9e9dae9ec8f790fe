//! A zero-copy reader of Common Trace Format traces: CTF 1.8 (TSDL metadata, plain or
//! packetized, either byte order) and CTF 2 (JSON text sequence metadata).
//!
//! Where it sits: the first stage of tracecube's data flow (read → decode → analyse →
//! store → query). It knows nothing of kernels, analyses or cubes.
//!
//! # Layers, raw before cooked
//!
//! 1. Metadata front ends — [`tsdl`] (CTF 1.8) and [`ctf2`] (CTF 2), chosen by
//!    [`metadata`] from the file's first bytes — produce one intermediate form, [`ir`].
//! 2. [`plan`] compiles the IR once into a flat arena of decoding nodes: field
//!    references become node ids, event classes are found by id, fixed-layout scopes are
//!    marked skippable, and LTTng's event headers get a compiled fast path: their
//!    layouts, read by [`event_header`]'s one reader, which every loop that passes over
//!    events inlines. The reader counts in [`units`]: bit positions, byte offsets and
//!    clock values as types that do not mix.
//! 3. [`trace`] finds traces under a directory (LTTng session layouts, rotation,
//!    several traces), maps each stream file once, and indexes packets ([`index`]:
//!    `index/*.idx` when consistent, else packet headers).
//! 4. [`stream`] reads one stream in order (optionally a chunk of its packets) and
//!    yields events as [`stream::EventRef`]s borrowing the mapped bytes; fields are read
//!    by [`plan::FieldHandle`]s resolved once. [`merge`] orders all streams by time.
//! 5. [`dump`] writes the canonical JSON lines of `shared/oracle/` and a text view.
//!
//! Timestamps are nanoseconds from the clock's origin ([`clock`]); errors carry the
//! file and the byte offset ([`error`]); hostile input never panics, hangs or
//! allocates without bound (bounds are checked before every read and every loop).
//!
//! # Tolerated deviations
//!
//! - Packets whose time ranges overlap (old LTTng) are read in stream order; merging
//!   never requires monotonic packet bounds.
//! - A packet whose size runs past the end of its file is read up to the end, then the
//!   error is reported (events before the damage are delivered).
//! - Metadata: unknown attributes are warnings; unused declarations are still checked.
//! - Clock-less LTTng 2.0-era metadata (no `clock` block, no integer mapped to a clock):
//!   the event header's `timestamp` (also inside its compact/extended variant) and the
//!   packet context's `timestamp_begin`/`timestamp_end` get an implicit 1 GHz clock of
//!   origin 0, as Babeltrace 1 reads them.
//!
//! # What happens on damage
//!
//! Nothing is invented and nothing is hidden:
//!
//! - Discovery ([`trace`]) follows symbolic links (a folder of links reads as the trace
//!   it points to; loops are detected and reported), opens regular files only (a FIFO
//!   among the stream files or in `index/` is left out, never read), and reports what it
//!   leaves out in [`trace::TraceSet::warnings`]: non-regular entries, and a file that
//!   begins with the same packet as another (a backup copy) or whose time overlaps the
//!   files of the stream it claims. A `metadata` that is not a regular file, or a trace
//!   deeper than [`trace::MAX_DEPTH`], is an error saying so.
//! - A stream file is indexed up to its first unreadable packet; the error is kept
//!   ([`trace::StreamFile::error`]) and reported by every reader that reaches the end of
//!   that stream, also when no packet at all could be read (then the stream is empty
//!   but still reported).
//! - A stream's reader ([`stream::StreamCursor`]) stops at its first error, after every
//!   item before it. Besides decoding errors, time going back is an error: a packet
//!   beginning after its own end, before the stream's last event (beyond the overlap
//!   old LTTng versions write, [`stream::OVERLAP_NS`]) or well before the previous
//!   packet's end, an event whose clock value is earlier than the one before it
//!   (beyond the same overlap: a full-width timestamp that is lower, or an N-bit one
//!   that carries the 64-bit clock past 2^64 cycles, where it wraps), compared as
//!   exact nanoseconds (never saturated), and an `index/*.idx` entry that gives another size
//!   or time than the packet itself. So is a time that would be delivered (an event's,
//!   a packet's beginning, a notice's) past the range of 64-bit nanoseconds from the
//!   clock's origin, as in Babeltrace 2: an `i64` timestamp never saturates (but for
//!   a clock whose offset alone lies past that range, read as before). Every reading path (skimming, packets read in
//!   pairs, read-ahead, counting) yields the same events and the same error as the
//!   general decoder ([`crosscheck`], also the oracle of the fuzz target `fast_paths`).
//! - The time-merge ([`merge::Merger`]) retires a stream at its error and goes on with
//!   the others: intact streams are delivered whole, a damaged one up to its damage.
//!   The errors are returned (each naming the file and byte offset), and the commands
//!   exit non-zero after printing everything they could read.
//!
//! # Example
//!
//! ```
//! # fn main() -> Result<(), Box<dyn std::error::Error>> {
//! let dir = tempfile::tempdir()?;
//! std::fs::write(dir.path().join("metadata"), r#"/* CTF 1.8 */
//! typealias integer { size = 8; align = 8; signed = false; } := uint8_t;
//! trace { major = 1; minor = 8; byte_order = le; };
//! event { name = "hello"; fields := struct { uint8_t n; string who; }; };
//! "#)?;
//! std::fs::write(dir.path().join("stream"), b"\x01world\0\x02you\0")?;
//!
//! let set = ctf::trace::TraceSet::open(dir.path())?;
//! let mut cursor = ctf::stream::StreamCursor::new(&set, 0);
//! let sp = cursor.stream_plan();
//! let n = set.traces[0].plan.event_field(sp, &sp.events[0], &["n"]).unwrap();
//! let who = set.traces[0].plan.event_field(sp, &sp.events[0], &["who"]).unwrap();
//! let mut seen = Vec::new();
//! while let Some(item) = cursor.next()? {
//!     if let ctf::stream::Item::Event(e) = item {
//!         seen.push((e.name().to_string(), e.uint(n), e.bytes(who).map(|b| b.to_vec())));
//!     }
//! }
//! assert_eq!(seen[1], ("hello".to_string(), Some(2), Some(b"you".to_vec())));
//! # Ok(()) }
//! ```

#![warn(missing_docs)]

pub mod bits;
pub mod clock;
pub mod crosscheck;
pub mod ctf2;
pub mod decode;
pub mod dump;
pub mod error;
pub mod event_header;
pub mod index;
pub mod ir;
pub mod merge;
pub mod metadata;
pub mod plan;
pub mod stream;
pub mod text;
pub mod trace;
pub mod tsdl;
pub mod units;
