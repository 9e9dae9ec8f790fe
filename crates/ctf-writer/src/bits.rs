//! A bit-addressed packet buffer: aligned integer and byte writes into a zeroed buffer.
//!
//! Invariant: every bit at or after `pos` is zero, so writes may OR bits in place. After a
//! packet is flushed, [`PacketBuf::clear`] zeroes the used part again.

use crate::schema::ByteOrder;

/// Writing past the packet's capacity; the caller rolls back and opens a new packet.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Full;

/// A saved cursor position (see [`PacketBuf::mark`]).
#[derive(Debug, Clone, Copy)]
pub struct Mark {
    pos: u64,
    first: u8,
}

/// A fixed-capacity packet buffer with a bit cursor.
#[derive(Debug)]
pub struct PacketBuf {
    buf: Vec<u8>,
    pos: u64,
}

impl PacketBuf {
    /// A zeroed buffer of `bytes` bytes.
    pub fn new(bytes: usize) -> Self {
        PacketBuf { buf: vec![0; bytes], pos: 0 }
    }
    /// Current position, in bits.
    pub fn pos(&self) -> u64 {
        self.pos
    }
    /// Capacity, in bits.
    pub fn capacity_bits(&self) -> u64 {
        self.buf.len() as u64 * 8
    }
    /// The whole buffer (used part plus zero padding).
    pub fn bytes(&self) -> &[u8] {
        &self.buf
    }
    /// Zeroes everything written and moves back to bit 0.
    pub fn clear(&mut self) {
        let used = self.pos.div_ceil(8) as usize;
        self.buf[..used].fill(0);
        self.pos = 0;
    }
    /// A rollback point at the cursor.
    pub fn mark(&self) -> Mark {
        let at = (self.pos / 8) as usize;
        Mark { pos: self.pos, first: self.buf.get(at).copied().unwrap_or(0) }
    }
    /// Zeroes everything written since `mark` and moves the cursor back there.
    pub fn rollback(&mut self, mark: Mark) {
        let start = (mark.pos / 8) as usize;
        let end = (self.pos.div_ceil(8) as usize).min(self.buf.len());
        if start < end {
            self.buf[start..end].fill(0);
            // Restore the bits written before the mark in its first byte.
            self.buf[start] = mark.first;
        }
        self.pos = mark.pos;
    }
    /// Moves the cursor to the next multiple of `align` bits.
    pub fn align(&mut self, align: u32) -> Result<(), Full> {
        let a = u64::from(align.max(1));
        let p = self.pos.div_ceil(a) * a;
        if p > self.capacity_bits() {
            return Err(Full);
        }
        self.pos = p;
        Ok(())
    }
    /// Writes the low `size` bits of `v` after aligning to `align` bits.
    #[inline]
    pub fn write_int(&mut self, v: u64, size: u32, align: u32, order: ByteOrder) -> Result<(), Full> {
        if align > 1 {
            self.align(align)?;
        }
        let end = self.pos + u64::from(size);
        if end > self.capacity_bits() {
            return Err(Full);
        }
        if self.pos.is_multiple_of(8) && size.is_multiple_of(8) {
            let at = (self.pos / 8) as usize;
            let n = (size / 8) as usize;
            match order {
                ByteOrder::Little => self.buf[at..at + n].copy_from_slice(&v.to_le_bytes()[..n]),
                ByteOrder::Big => self.buf[at..at + n].copy_from_slice(&v.to_be_bytes()[8 - n..]),
            }
        } else {
            let v = if size == 64 { v } else { v & ((1u64 << size) - 1) };
            match order {
                ByteOrder::Little => self.or_bits_le(v, size),
                ByteOrder::Big => self.or_bits_be(v, size),
            }
        }
        self.pos = end;
        Ok(())
    }
    /// Writes raw bytes at the current (byte-aligned) position.
    #[inline]
    pub fn write_bytes(&mut self, b: &[u8]) -> Result<(), Full> {
        self.align(8)?;
        let at = (self.pos / 8) as usize;
        if at + b.len() > self.buf.len() {
            return Err(Full);
        }
        self.buf[at..at + b.len()].copy_from_slice(b);
        self.pos += b.len() as u64 * 8;
        Ok(())
    }
    /// Writes `n` zero bytes (the buffer is already zero there).
    pub fn skip_bytes(&mut self, n: usize) -> Result<(), Full> {
        self.align(8)?;
        let end = self.pos + n as u64 * 8;
        if end > self.capacity_bits() {
            return Err(Full);
        }
        self.pos = end;
        Ok(())
    }
    /// Overwrites an integer at an earlier position (used for packet context patching).
    pub fn patch_int(&mut self, at: u64, v: u64, size: u32, order: ByteOrder) {
        let saved = self.pos;
        self.pos = at;
        // The patched fields were written as zero, so OR-ing is an overwrite.
        let _ = self.write_int(v, size, 1, order);
        self.pos = saved;
    }
    /// CTF little-endian bit fields: bit 0 of the value goes to the lowest free bit.
    fn or_bits_le(&mut self, mut v: u64, size: u32) {
        let mut pos = self.pos;
        let mut left = size;
        while left > 0 {
            let byte = (pos / 8) as usize;
            let shift = (pos % 8) as u32;
            let n = (8 - shift).min(left);
            let mask = ((1u16 << n) - 1) as u64;
            self.buf[byte] |= ((v & mask) << shift) as u8;
            v >>= n;
            left -= n;
            pos += u64::from(n);
        }
    }
    /// CTF big-endian bit fields: the value's most significant bit goes to the highest free bit.
    fn or_bits_be(&mut self, v: u64, size: u32) {
        for i in 0..size {
            if (v >> (size - 1 - i)) & 1 == 1 {
                let k = self.pos + u64::from(i);
                self.buf[(k / 8) as usize] |= 0x80 >> (k % 8);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn compact_header_bits_le() {
        // 5-bit id 3, then 27-bit timestamp 0x123_4567: one 32-bit LE word (ts << 5 | id).
        let mut p = PacketBuf::new(8);
        p.write_int(3, 5, 1, ByteOrder::Little).unwrap();
        p.write_int(0x123_4567, 27, 1, ByteOrder::Little).unwrap();
        let word = (0x123_4567u32 << 5) | 3;
        assert_eq!(&p.bytes()[..4], &word.to_le_bytes());
    }

    #[test]
    fn be_bitfields_msb_first() {
        let mut p = PacketBuf::new(4);
        p.write_int(0b101, 3, 1, ByteOrder::Big).unwrap();
        p.write_int(0x1f, 5, 1, ByteOrder::Big).unwrap();
        assert_eq!(p.bytes()[0], 0b1011_1111);
    }

    #[test]
    fn aligned_writes_and_full() {
        let mut p = PacketBuf::new(8);
        p.write_int(1, 8, 8, ByteOrder::Little).unwrap();
        p.write_int(0x0203, 16, 16, ByteOrder::Big).unwrap();
        assert_eq!(&p.bytes()[..4], &[1, 0, 2, 3]);
        assert_eq!(p.write_int(0, 64, 8, ByteOrder::Little), Err(Full));
    }

    #[test]
    fn rollback_restores_zeroes() {
        let mut q = PacketBuf::new(8);
        q.write_int(0x7, 3, 1, ByteOrder::Little).unwrap();
        let m = q.mark();
        q.write_int(0x1f, 5, 1, ByteOrder::Little).unwrap();
        q.write_int(0xff, 8, 8, ByteOrder::Little).unwrap();
        q.rollback(m);
        assert_eq!(q.bytes(), &[0x7, 0, 0, 0, 0, 0, 0, 0]);
        assert_eq!(q.pos(), 3);
        q.clear();
        assert!(q.bytes().iter().all(|&b| b == 0));
    }
}
