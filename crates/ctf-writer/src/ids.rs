//! Newtypes for ids and units, so that they cannot be mixed up.

/// Id of a stream class (`stream_id` in the packet header).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct StreamClassId(pub u32);

/// Id of an event class, unique within its stream class.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct EventClassId(pub u32);

/// A clock value in cycles of the trace clock (nanoseconds when `freq` is 1 GHz).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Default)]
pub struct Cycles(pub u64);

/// A size or position in bits inside a packet.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Default)]
pub struct Bits(pub u64);

/// A byte offset inside a data stream file.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Default)]
pub struct FileOffset(pub u64);

impl Bits {
    /// The size in whole bytes, rounded up.
    pub fn bytes_ceil(self) -> u64 {
        self.0.div_ceil(8)
    }
}
