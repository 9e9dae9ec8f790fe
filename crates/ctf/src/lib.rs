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
//!    marked skippable, and LTTng's event headers get a compiled fast path.
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
pub mod ctf2;
pub mod decode;
pub mod dump;
pub mod error;
pub mod index;
pub mod ir;
pub mod merge;
pub mod metadata;
pub mod plan;
pub mod stream;
pub mod text;
pub mod trace;
pub mod tsdl;
