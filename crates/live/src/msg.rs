//! What a live source sends to the pipeline through the bounded ring buffer.
//!
//! Ids (`trace`, `stream`) are the source's own; the pipeline maps them. Timestamps
//! are raw cycles of the trace's clock (the pipeline converts them with the metadata).

use std::time::SystemTime;

/// One message from a source.
#[derive(Debug)]
pub enum Msg {
    /// A trace appeared; `dir` names it (the relay's path, or the directory).
    Trace {
        /// Source id of the trace.
        trace: u64,
        /// Its name.
        dir: String,
    },
    /// More metadata bytes of a trace (appended to what came before).
    Metadata {
        /// Source id of the trace.
        trace: u64,
        /// The bytes.
        bytes: Vec<u8>,
    },
    /// A data stream appeared.
    Stream {
        /// Source id of the stream.
        stream: u64,
        /// Its trace.
        trace: u64,
        /// Its name (channel / file name).
        name: String,
    },
    /// A whole packet of a stream.
    Packet {
        /// Source id of the stream.
        stream: u64,
        /// The packet's bytes.
        bytes: Vec<u8>,
        /// End timestamp of the packet (cycles): the stream has nothing before it left.
        ts_end: Option<u64>,
    },
    /// The stream has nothing before `ts` (cycles) that it has not sent.
    Beacon {
        /// Source id of the stream.
        stream: u64,
        /// Cycles.
        ts: u64,
    },
    /// The stream ended.
    StreamEnd {
        /// Source id of the stream.
        stream: u64,
    },
    /// The source lost data or its connection (reported, never silent).
    Notice(String),
    /// Events are emitted at a replay's pace: stream time `t0_ns` was at `wall0`, and
    /// stream time runs `speed` times faster than wall time (lag is measured from it).
    Pace {
        /// Stream time, ns from origin.
        t0_ns: i64,
        /// Wall time then.
        wall0: SystemTime,
        /// Speed factor (0: as fast as possible; lag is then measured from arrival).
        speed: f64,
    },
    /// The source is done.
    End,
}

impl Msg {
    /// Payload bytes carried (for buffer accounting).
    pub fn bytes(&self) -> usize {
        match self {
            Msg::Packet { bytes, .. } | Msg::Metadata { bytes, .. } => bytes.len(),
            _ => 0,
        }
    }
}
