//! Parallel execution of mergeable trace analyses.
//!
//! Where it sits: above `ctf` (it reads streams through [`ctf::stream::StreamCursor`]),
//! below `analysis` (which implements [`Analysis`] for the Linux kernel). It knows
//! nothing of kernels.
//!
//! # Model
//! An [`Analysis`] has a chunk-local `State` that starts empty
//! ([`Analysis::new_state`]), consumes the items of one *slice* of the trace in time
//! order, and an associative [`Analysis::merge`] that joins two adjacent states in time
//! order (`earlier`, `later`), resolving what the later one could not know.
//!
//! # Partitioning
//! A [`Slice`] is a half-open time range `[lo, hi)` together with, for every stream,
//! the range of packets that may hold events of that range. Slices cut the *whole* trace
//! at the same instants on every stream (the hybrid scheme of the paper): slice `k` of
//! every stream covers time range `k`, so slices are totally ordered in time and merging
//! them left to right reproduces the serial order. Inside a slice the streams are merged
//! by timestamp (ties broken by stream index, exactly as [`ctf::merge::Merger`]) unless
//! the analysis asks for [`StreamOrder::PerStream`] (then each stream is read in turn,
//! and [`Ctx::order`] tells where each item falls in the merged order), and
//! items outside `[lo, hi)` are skipped, so each item belongs to exactly one slice even
//! when a packet straddles a boundary (that packet is decoded by both slices).
//! [`Partition`] chooses where the instants are: from the packet index so that each
//! slice holds about `chunk_size` bytes (hybrid, default), evenly in time (time), or at
//! the packet cuts of the largest stream only (stream). With a time range
//! (`--begin`/`--end`), [`run`] first drops ([`clip`]) the slices that do not meet it:
//! none of their items would be delivered, so a range costs what the slices meeting it
//! cost, not the whole trace. Inside a slice that the range's beginning cuts, a stream
//! starts at the last packet whose first event lies before it
//! ([`ctf::stream::StreamCursor::first_needed`]); past the range's end, a stream stops
//! where the packet index shows that nothing it has left comes earlier
//! ([`ctf::stream::StreamCursor::rest_after`]). Both rest on a stream's clock only
//! growing, not on the index's packet times alone (tracers write events outside them).
//!
//! # What is decoded
//! An analysis that reads only some event classes says so ([`Selective::interest`]):
//! events of the other classes are then passed over by their sizes and never
//! delivered, only their time span ([`Selective::on_skipped`]). An analysis that counts
//! ([`Tally::packet_counts`]) gets packets as per-class counts, a packet cut by a
//! slice edge or the time range counted in part: exactly the events whose clock value
//! maps inside ([`ctf::clock::ClockConv::cycle_window`]). An analysis that needs only
//! a few integer fields of some classes names them ([`Selective::copies`]): events of
//! those classes that the reader reads ahead in runs come to [`Selective::on_copied`]
//! as those fields, read in place by offsets resolved once per class, and are never
//! made the cursor's current event.
//!
//! # Execution
//! [`run`] starts N workers that take slices in order; the calling thread merges their
//! states in slice order as soon as they arrive (pipelined), holding at most
//! `2 × N` finished or running slices (memory is bounded by chunks in flight). Stream
//! files are mapped once by [`ctf::trace::TraceSet`], which is shared by reference.
//! With one worker the same code runs inline: serial is the one-worker engine.
//! [`run_draining`] hands the running state to the caller after each merge, so that
//! results final there (occurrences that ended) leave the state as the run goes
//! rather than piling up until its end.
//!
//! The state of everything before a slice is known for the first slice (the initial
//! state) and, with one worker, for every slice (the running state). An analysis that
//! can use it ([`ChunkPolicy::folds_in_place`]) then reads those slices straight into it
//! instead of into a fresh chunk state merged afterwards: `io` interprets syscalls at
//! once there rather than logging them for a replay.

//!
//! # Damage
//!
//! A stream that cannot be read on (a decoding error, a packet index that ends early,
//! no readable packet at all) does not stop the run: its part of the slice ends at the
//! error, after every item before it was delivered, and the other streams are read to
//! their ends. [`run_reporting`] returns what was made of everything read together with
//! the errors ([`Outcome::faults`], each naming the file and byte offset); [`run`]
//! returns the first error instead. Streams that no slice holds (their first packet is
//! unreadable, so the index has none) and streams whose end lies outside the time
//! range still have their indexing error reported. A damaged stream's events are a
//! prefix of it whatever the partitioning, as the serial reader ([`ctf::merge::Merger`])
//! delivers them: when later slices hold packets of a stream after its damage (the
//! index still lists them), the run is read again without those packets (slices are
//! read in parallel before their errors are known; only damaged traces pay the second
//! reading, and an analysis's [`ChunkPolicy::initial_state`] starts each reading afresh).

pub mod exec;
pub mod partition;

pub use exec::{
    run, run_draining, run_reporting, run_slices, run_slices_reporting, run_slices_with_progress, run_with_progress, Ctx, Drain, EngineError, Outcome,
};
pub use partition::{auto_chunk_size, chunk_size_for, clip, partition, Partition, PartitionError, Slice};

use ctf::stream::{Copied, CopyRequest, EventRef, Notice, PacketCount, StreamCursor};

/// Which kind of notice a stream produced.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum NoticeKind {
    /// Events discarded by the tracer (`events_discarded` grew).
    Discarded,
    /// Packets lost (`packet_seq_num` skipped).
    LostPackets,
}

/// In which order an analysis needs the items of a slice.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum StreamOrder {
    /// All streams merged by time (ties: lower stream index first): the serial order.
    #[default]
    Merged,
    /// Each stream in its own order, streams one after the other. For analyses whose
    /// state depends on the order of items of one stream only, or that compare
    /// [`Ctx::order`] to resolve cross-stream "last writer wins" (much cheaper: no merge).
    PerStream,
}

/// A trace analysis as a mergeable chunk state: the core every analysis writes.
/// The engine reads the trace in slices, folds each slice's events into a fresh state
/// ([`Analysis::new_state`], [`Analysis::on_event`]), merges adjacent states in time
/// order ([`Analysis::merge`], associative) and turns the whole trace's state into the
/// result ([`Analysis::finish`]).
///
/// What an analysis may add, each in its own trait whose methods all have defaults (an
/// analysis that needs none writes `impl Selective for A {}`, `impl Tally for A {}` and
/// `impl ChunkPolicy for A {}`):
/// * [`Selective`]: it reads only some event classes, possibly as copied fields;
/// * [`Tally`]: it takes whole packets as counts, and notices of lost events;
/// * [`ChunkPolicy`]: the order of a slice's items, the state before the trace, folding
///   in place, and how large its slices may be.
///
/// The engine runs any type with all four ([`Runnable`]).
pub trait Analysis: Sync {
    /// Chunk-local state.
    type State: Send;
    /// Final result.
    type Output;

    /// An empty state for a slice whose earlier history is unknown.
    fn new_state(&self) -> Self::State;

    /// Consumes one event of the slice (events come in time order).
    fn on_event(&self, st: &mut Self::State, ev: &EventRef<'_, '_>, ctx: &Ctx);

    /// Joins two adjacent states, `earlier` covering the time just before `later`.
    /// Must be associative.
    fn merge(&self, earlier: Self::State, later: Self::State) -> Self::State;

    /// Turns the merged state of the whole trace into the result.
    fn finish(&self, st: Self::State) -> Self::Output;
}

/// An analysis that reads only some event classes (the others are decoded as little
/// as their timestamps need), possibly as fields copied out as the reader reads ahead.
pub trait Selective: Analysis {
    /// Which event classes of stream class `stream_class` of trace `trace` the analysis
    /// reads: `Some(mask)` with `mask[class_index]` (see [`EventRef::class_index`]);
    /// events of other classes are decoded but not delivered, their timestamps only
    /// reach [`Selective::on_skipped`]. `None` (default): every event. Ignored where
    /// [`Tally::packet_counts`] accepts the stream class.
    fn interest(&self, _trace: usize, _stream_class: u64) -> Option<Vec<bool>> {
        None
    }

    /// Fields to copy out of the events of stream class `stream_class` of trace
    /// `trace` as they are read, by class index: events of a class with a request may
    /// then come to [`Selective::on_copied`] with those values instead of to
    /// [`Analysis::on_event`]. (Only events the reader reads ahead come that way, which
    /// it does only for an analysis that passes over some classes
    /// ([`Selective::interest`]) and wants most; each class's events only when its
    /// fields can be read in place: see [`ctf::stream::Wanted::with_copies`]. The others
    /// still come as events.) `None` (default): no copies.
    fn copies(&self, _trace: usize, _stream_class: u64) -> Option<Vec<Option<CopyRequest>>> {
        None
    }

    /// Consumes an event given as the fields [`Selective::copies`] asked for (in the
    /// order of events, as [`Analysis::on_event`]), and its timestamp; returns false,
    /// with `st` unchanged, to have the same event delivered to
    /// [`Analysis::on_event`] instead. Default: false.
    fn on_copied(&self, _st: &mut Self::State, _c: &Copied<'_>, _ts: i64, _ctx: &Ctx) -> bool {
        false
    }

    /// Timestamps of events of the slice that were not delivered (see
    /// [`Selective::interest`]): all lie within `[first, last]`. Calls come per stream
    /// of the slice, when its last item was delivered, not in time order with the
    /// delivered items, so this suits order-free uses such as the span of the events.
    fn on_skipped(&self, _st: &mut Self::State, _first: i64, _last: i64) {}

    /// Timestamps of the events of the slice that [`Selective::on_copied`] took, and of
    /// other events delivered (those the reader read ahead, which came to `on_copied`
    /// or to [`Analysis::on_event`]): `first` and `last` are the smallest and the
    /// largest of them (the span is exact, also where a timestamp goes back). Calls
    /// come as those of [`Selective::on_skipped`], per stream of the slice when its
    /// last item was delivered, so this suits the same order-free uses: with it,
    /// `on_copied` need not widen the span of the events one by one. Default: nothing.
    fn on_copied_span(&self, _st: &mut Self::State, _first: i64, _last: i64) {}
}

/// An analysis that tallies events it is not given one by one: whole packets as
/// counts, and the tracer's notices of events it discarded or packets it lost.
pub trait Tally: Analysis {
    /// Whether whole packets of stream class `stream_class` of trace `trace` may be
    /// handed over as counts ([`Tally::on_packet`] and [`Tally::on_class_counts`])
    /// instead of event by event. Only with [`StreamOrder::PerStream`]; the engine does
    /// so for packets that lie wholly inside the slice and the time range and imply no
    /// discarded-events or lost-packets notice (known from the packet index); packets
    /// at boundaries still come event by event. Default: never.
    fn packet_counts(&self, _trace: usize, _stream_class: u64) -> bool {
        false
    }

    /// Consumes the events of one packet (or of the rest of it) as a count; the
    /// cursor's packet is that packet (see [`StreamCursor::packet_uint`]). `pc.events`
    /// may be 0.
    fn on_packet(&self, _st: &mut Self::State, _cur: &StreamCursor<'_>, _pc: &PacketCount, _ctx: &Ctx) {}

    /// Consumes per-class event counts of packets given to [`Tally::on_packet`]:
    /// `per_class[i]` events of class index `i` of stream class `stream_class` of
    /// trace `trace`.
    fn on_class_counts(&self, _st: &mut Self::State, _trace: usize, _stream_class: u64, _per_class: &[u64]) {}

    /// Consumes a discarded-events or lost-packets notice. Default: nothing.
    fn on_notice(&self, _st: &mut Self::State, _kind: NoticeKind, _n: &Notice, _ctx: &Ctx) {}
}

/// How an analysis's slices are read and its states started and sized.
pub trait ChunkPolicy: Analysis {
    /// The order in which this analysis needs a slice's items (default: merged by
    /// time).
    fn stream_order(&self) -> StreamOrder {
        StreamOrder::Merged
    }

    /// The state before the first event of the trace (nothing earlier exists). The
    /// engine folds slices starting from it; by default the empty state.
    fn initial_state(&self) -> Self::State {
        self.new_state()
    }

    /// Prepares state `st` for a slice of about `bytes` bytes of stream data, before
    /// its items: a hint (e.g. to reserve room for what the slice will record at once
    /// rather than by repeated growth). Default: nothing.
    fn reserve(&self, _st: &mut Self::State, _bytes: u64) {}

    /// Whether [`Analysis::on_event`] (and the other item callbacks) may be applied to
    /// the state of everything before a slice when that state is known, that is to
    /// [`ChunkPolicy::initial_state`] and to what it became: then
    /// `fold(items, initial)` must equal `merge(initial, fold(items, new_state()))`.
    /// The engine then reads the first slice into the initial state, and every slice
    /// into the running state when it runs on one thread, instead of merging fresh
    /// chunk states (cheaper for analyses that log what they cannot yet interpret). On
    /// several threads, it lends the running state to the worker of the next slice to
    /// merge, which merges what it has read so far into it and reads the rest of its
    /// slice into it ([`exec::process_slice_taking_over`]). Default: false.
    fn folds_in_place(&self) -> bool {
        false
    }

    /// The most bytes of stream data per slice when the engine picks the chunk size
    /// ([`EngineOptions::chunk_size`] of 0) for several workers: an analysis whose
    /// chunk states grow with their slice (a log of what they cannot yet interpret)
    /// keeps them in the caches with smaller slices. Default: no bound.
    fn max_auto_slice_bytes(&self) -> u64 {
        u64::MAX
    }
}

/// What the engine runs: an [`Analysis`] with its [`Selective`], [`Tally`] and
/// [`ChunkPolicy`] capabilities (implemented for every such type).
pub trait Runnable: Selective + Tally + ChunkPolicy {}

impl<T: Selective + Tally + ChunkPolicy> Runnable for T {}

/// Options of one engine run.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct EngineOptions {
    /// Worker threads (0 = all cores).
    pub threads: usize,
    /// Approximate bytes of stream data per slice; 0: chosen from the trace size and the
    /// workers ([`partition::auto_chunk_size`]).
    pub chunk_size: u64,
    /// Where slices are cut.
    pub partition: Partition,
    /// Items before this timestamp (ns from origin) are skipped.
    pub begin: Option<i64>,
    /// Items after this timestamp (ns from origin, inclusive) are skipped.
    pub end: Option<i64>,
}

impl Default for EngineOptions {
    fn default() -> Self {
        EngineOptions { threads: 0, chunk_size: 0, partition: Partition::Hybrid, begin: None, end: None }
    }
}

impl EngineOptions {
    /// The time range `(begin, end)`, inclusive, in ns from origin: unbounded where not
    /// given.
    pub fn range(&self) -> (i64, i64) {
        (self.begin.unwrap_or(i64::MIN), self.end.unwrap_or(i64::MAX))
    }

    /// The chunk size for `set` (0 resolved by [`partition::auto_chunk_size`]).
    pub fn slice_bytes(&self, set: &ctf::trace::TraceSet) -> u64 {
        match self.chunk_size {
            0 => partition::auto_chunk_size(set, self.worker_count()),
            n => n,
        }
    }

    /// The number of workers these options ask for (0 resolved to the core count).
    pub fn worker_count(&self) -> usize {
        if self.threads == 0 {
            std::thread::available_parallelism().map(|n| n.get()).unwrap_or(1)
        } else {
            self.threads
        }
    }
}
