//! Identifiers, times and values: the vocabulary of the store.
//!
//! Each kind of number has its own type: a metric [`Key`], a
//! [`Timestamp`] in nanoseconds, a [`LogOffset`] into the data region and a
//! [`BlockId`]. Mixing them does not compile.

use std::fmt;

/// Identifier of one metric history (the cube's metric id). Opaque to the store.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Default)]
pub struct Key(pub u64);

/// A point in time, in nanoseconds from the trace clock's origin.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Default)]
pub struct Timestamp(pub u64);

/// Byte offset inside the data region of a store (0 = first byte of block 0).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Default)]
pub struct LogOffset(pub u64);

/// Index of a fixed-size block of the data region.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Default)]
pub struct BlockId(pub u64);

impl LogOffset {
    /// The block holding this offset, for blocks of `block_size` bytes.
    pub fn block(self, block_size: u32) -> BlockId {
        BlockId(self.0 / u64::from(block_size))
    }

    /// Position of this offset inside its block.
    pub fn in_block(self, block_size: u32) -> usize {
        // The remainder is < block_size <= u32::MAX, so it fits a usize.
        (self.0 % u64::from(block_size)) as usize
    }
}

impl BlockId {
    /// Offset of the first byte of this block.
    pub fn start(self, block_size: u32) -> LogOffset {
        LogOffset(self.0 * u64::from(block_size))
    }
}

impl fmt::Display for Key {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "key {}", self.0)
    }
}

impl fmt::Display for Timestamp {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} ns", self.0)
    }
}

impl fmt::Display for LogOffset {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "log offset {:#x}", self.0)
    }
}

/// The kind of a key's values; fixed by the key's first record.
///
/// The tag values are part of the file format (see DESIGN.md); 0 and 4..=255 are
/// reserved for future kinds.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum ValueKind {
    /// Signed 64-bit integer.
    I64 = 1,
    /// Unsigned 64-bit integer.
    U64 = 2,
    /// IEEE 754 double.
    F64 = 3,
}

impl ValueKind {
    /// The on-disk tag of this kind.
    pub fn tag(self) -> u8 {
        self as u8
    }

    /// The kind with on-disk tag `tag`, if known.
    pub fn from_tag(tag: u8) -> Option<Self> {
        match tag {
            1 => Some(Self::I64),
            2 => Some(Self::U64),
            3 => Some(Self::F64),
            _ => None,
        }
    }
}

/// A cumulative value. Before a key's first record its value is [`Value::zero`].
#[derive(Debug, Clone, Copy, PartialEq)]
#[non_exhaustive]
pub enum Value {
    /// Signed 64-bit integer.
    I64(i64),
    /// Unsigned 64-bit integer.
    U64(u64),
    /// IEEE 754 double.
    F64(f64),
}

impl Value {
    /// The kind of this value.
    pub fn kind(self) -> ValueKind {
        match self {
            Value::I64(_) => ValueKind::I64,
            Value::U64(_) => ValueKind::U64,
            Value::F64(_) => ValueKind::F64,
        }
    }

    /// The value of a key of kind `kind` before its first record.
    pub fn zero(kind: ValueKind) -> Self {
        match kind {
            ValueKind::I64 => Value::I64(0),
            ValueKind::U64 => Value::U64(0),
            ValueKind::F64 => Value::F64(0.0),
        }
    }

    /// The 64 raw bits of the value (two's complement or IEEE 754).
    pub fn to_bits(self) -> u64 {
        match self {
            Value::I64(v) => v as u64,
            Value::U64(v) => v,
            Value::F64(v) => v.to_bits(),
        }
    }

    /// Rebuilds a value of `kind` from [`Value::to_bits`].
    pub fn from_bits(kind: ValueKind, bits: u64) -> Self {
        match kind {
            ValueKind::I64 => Value::I64(bits as i64),
            ValueKind::U64 => Value::U64(bits),
            ValueKind::F64 => Value::F64(f64::from_bits(bits)),
        }
    }

    /// `self - earlier`, the amount accumulated between two points; `None` when
    /// the kinds differ. Integers wrap (a counter that wrapped still gives the
    /// right difference); floats subtract.
    pub fn minus(self, earlier: Value) -> Option<Value> {
        match (self, earlier) {
            (Value::I64(a), Value::I64(b)) => Some(Value::I64(a.wrapping_sub(b))),
            (Value::U64(a), Value::U64(b)) => Some(Value::U64(a.wrapping_sub(b))),
            (Value::F64(a), Value::F64(b)) => Some(Value::F64(a - b)),
            _ => None,
        }
    }

    /// Equality of the raw bits (so a NaN equals itself; used for "no change").
    pub fn same_as(self, other: Value) -> bool {
        self.kind() == other.kind() && self.to_bits() == other.to_bits()
    }
}

impl fmt::Display for Value {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Value::I64(v) => write!(f, "{v}"),
            Value::U64(v) => write!(f, "{v}"),
            Value::F64(v) => write!(f, "{v}"),
        }
    }
}

/// One stored interval: `value` held by `key` over `[start, end)`.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Record {
    /// The metric this record belongs to.
    pub key: Key,
    /// The cumulative value over the interval.
    pub value: Value,
    /// First instant of the interval (inclusive).
    pub start: Timestamp,
    /// End of the interval (exclusive).
    pub end: Timestamp,
}

/// What the store knows about one key without reading a block.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct KeyInfo {
    /// Kind of the key's values.
    pub kind: ValueKind,
    /// Start of the key's first record (its first occurrence).
    pub first_start: Timestamp,
    /// Start of the key's last record.
    pub last_start: Timestamp,
    /// End of the key's last record (its last occurrence).
    pub last_end: Timestamp,
    /// Value of the key's last record: its value at and after `last_start`.
    pub last_value: Value,
    /// Number of records of the key.
    pub records: u64,
}
