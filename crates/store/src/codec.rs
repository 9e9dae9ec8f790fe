//! Primitive encodings: LEB128 varints, zigzag, value deltas, and the one
//! bounded [`Cursor`] through which every stored byte is read.
//!
//! Every read returns a `Result`; a cursor never reads past its slice, so a
//! damaged file ends in [`DecodeError`], never in a panic.

#[cfg(test)]
use crate::types::Value;
use crate::types::ValueKind;

/// Why bytes could not be decoded. Callers add the offset (see `Corruption`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DecodeError {
    /// The bytes ended inside a field.
    Truncated,
    /// A varint was longer than 10 bytes or overflowed 64 bits.
    VarintOverflow,
}

/// Appends `v` as an unsigned LEB128 varint (1 to 10 bytes).
#[inline]
pub fn put_varint(out: &mut Vec<u8>, mut v: u64) {
    while v >= 0x80 {
        out.push((v as u8) | 0x80);
        v >>= 7;
    }
    out.push(v as u8);
}

/// Maps signed to unsigned so that small magnitudes give small varints.
#[inline]
pub fn zigzag(v: i64) -> u64 {
    ((v << 1) ^ (v >> 63)) as u64
}

/// Inverse of [`zigzag`].
#[inline]
pub fn unzigzag(v: u64) -> i64 {
    ((v >> 1) as i64) ^ -((v & 1) as i64)
}

/// Appends the change from `prev` to `next` (same kind).
///
/// Integers: zigzag varint of the wrapping difference. Floats: the difference
/// of the bit patterns, zigzagged, stored as one byte of trailing-zero count
/// then the remaining bits as a varint (integral float counters have long
/// trailing zero runs). `tz = 64` means "no change" and has no varint.
#[inline]
pub fn put_value_delta(out: &mut Vec<u8>, kind: ValueKind, prev: u64, next: u64) {
    let d = zigzag(next.wrapping_sub(prev) as i64);
    match kind {
        ValueKind::F64 => {
            let tz = d.trailing_zeros();
            out.push(tz as u8);
            if tz < 64 {
                put_varint(out, d >> tz);
            }
        }
        _ => put_varint(out, d),
    }
}

/// A bounded reader over borrowed bytes.
#[derive(Debug, Clone)]
pub struct Cursor<'a> {
    bytes: &'a [u8],
    pos: usize,
}

impl<'a> Cursor<'a> {
    /// A cursor at the start of `bytes`.
    pub fn new(bytes: &'a [u8]) -> Self {
        Cursor { bytes, pos: 0 }
    }

    /// Bytes left.
    pub fn remaining(&self) -> usize {
        self.bytes.len() - self.pos
    }

    /// Reads one byte.
    #[inline]
    pub fn u8(&mut self) -> Result<u8, DecodeError> {
        let b = *self.bytes.get(self.pos).ok_or(DecodeError::Truncated)?;
        self.pos += 1;
        Ok(b)
    }

    /// Reads `n` bytes.
    pub fn bytes(&mut self, n: usize) -> Result<&'a [u8], DecodeError> {
        if self.remaining() < n {
            return Err(DecodeError::Truncated);
        }
        let s = &self.bytes[self.pos..self.pos + n];
        self.pos += n;
        Ok(s)
    }

    /// Reads a little-endian u32.
    pub fn u32_le(&mut self) -> Result<u32, DecodeError> {
        let b = self.bytes(4)?;
        Ok(u32::from_le_bytes([b[0], b[1], b[2], b[3]]))
    }

    /// Reads a little-endian u64.
    pub fn u64_le(&mut self) -> Result<u64, DecodeError> {
        let mut a = [0u8; 8];
        a.copy_from_slice(self.bytes(8)?);
        Ok(u64::from_le_bytes(a))
    }

    /// Reads an unsigned LEB128 varint of at most 10 bytes.
    #[inline]
    pub fn varint(&mut self) -> Result<u64, DecodeError> {
        let mut v = 0u64;
        // Bounded: at most 10 iterations (70 bits > 64).
        for i in 0..10 {
            let b = self.u8()?;
            let part = u64::from(b & 0x7f);
            if i == 9 && part > 1 {
                return Err(DecodeError::VarintOverflow);
            }
            v |= part << (7 * i);
            if b & 0x80 == 0 {
                return Ok(v);
            }
        }
        Err(DecodeError::VarintOverflow)
    }

    /// Reads a value change written by [`put_value_delta`]; returns the new bits.
    #[inline]
    pub fn value_delta(&mut self, kind: ValueKind, prev: u64) -> Result<u64, DecodeError> {
        let d = match kind {
            ValueKind::F64 => {
                let tz = self.u8()?;
                match tz {
                    64 => 0,
                    0..=63 => self.varint()?.checked_shl(u32::from(tz)).unwrap_or(0),
                    _ => return Err(DecodeError::VarintOverflow),
                }
            }
            _ => self.varint()?,
        };
        Ok(prev.wrapping_add(unzigzag(d) as u64))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn varint_round_trip_and_sizes() {
        for &(v, len) in &[(0u64, 1usize), (127, 1), (128, 2), (16383, 2), (16384, 3), (u64::MAX, 10)] {
            let mut out = Vec::new();
            put_varint(&mut out, v);
            assert_eq!(out.len(), len, "{v}");
            assert_eq!(Cursor::new(&out).varint(), Ok(v));
        }
    }

    #[test]
    fn varint_rejects_overlong_and_truncated() {
        assert_eq!(Cursor::new(&[0x80; 11]).varint(), Err(DecodeError::VarintOverflow));
        assert_eq!(Cursor::new(&[0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x02]).varint(), Err(DecodeError::VarintOverflow));
        assert_eq!(Cursor::new(&[0x80, 0x80]).varint(), Err(DecodeError::Truncated));
    }

    #[test]
    fn zigzag_is_an_involution() {
        for v in [0i64, 1, -1, 63, -64, i64::MAX, i64::MIN] {
            assert_eq!(unzigzag(zigzag(v)), v);
        }
        assert_eq!(zigzag(-1), 1);
        assert_eq!(zigzag(1), 2);
    }

    #[test]
    fn value_deltas_round_trip() {
        let cases = [
            (ValueKind::I64, Value::I64(-5).to_bits(), Value::I64(i64::MAX).to_bits()),
            (ValueKind::U64, 10, 3),
            (ValueKind::U64, 0, u64::MAX),
            (ValueKind::F64, 0f64.to_bits(), 1234.0f64.to_bits()),
            (ValueKind::F64, 1.5f64.to_bits(), 1.5f64.to_bits()),
            (ValueKind::F64, 1.0f64.to_bits(), f64::NAN.to_bits()),
        ];
        for (kind, prev, next) in cases {
            let mut out = Vec::new();
            put_value_delta(&mut out, kind, prev, next);
            assert_eq!(Cursor::new(&out).value_delta(kind, prev), Ok(next));
        }
        // An integral float counter step costs few bytes.
        let mut out = Vec::new();
        put_value_delta(&mut out, ValueKind::F64, 1000.0f64.to_bits(), 1001.0f64.to_bits());
        assert!(out.len() <= 3, "{}", out.len());
    }
}
