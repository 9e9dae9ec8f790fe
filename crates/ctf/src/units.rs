//! The reader's three units, as types that do not mix: a bit position inside a packet
//! ([`BitPos`]), a byte offset inside a packet ([`ByteOffset`]) and a clock value
//! ([`Cycles`]). Each conversion between them is a named method, so that a `* 8` or a
//! `/ 8` in the reader says which way it goes and what it drops.
//!
//! All three are `Copy` wrappers of one integer (`#[repr(transparent)]`, every method
//! `#[inline(always)]`): the hot loops compile to the same code with them as without.
//! Sizes stay plain integers: a number of bits (`u64`, what [`BitPos::add_bits`]
//! takes and [`BitPos::bits_to`] gives), a number of bytes (`usize`).

/// A position inside a packet, in bits from its first bit.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Default)]
#[repr(transparent)]
pub struct BitPos(u64);

impl BitPos {
    /// The packet's first bit.
    pub const ZERO: BitPos = BitPos(0);

    /// The position `bits` bits from the packet's first bit.
    #[inline(always)]
    pub const fn new(bits: u64) -> BitPos {
        BitPos(bits)
    }

    /// The position in bits from the packet's first bit.
    #[inline(always)]
    pub const fn bits(self) -> u64 {
        self.0
    }

    /// The byte this bit lies in (the bits before it in that byte dropped).
    #[inline(always)]
    pub const fn bytes_floor(self) -> ByteOffset {
        ByteOffset((self.0 >> 3) as usize)
    }

    /// The bit's place in its byte (0 to 7).
    #[inline(always)]
    pub const fn bit_in_byte(self) -> u32 {
        (self.0 & 7) as u32
    }

    /// Whether the position is a byte's first bit.
    #[inline(always)]
    pub const fn is_byte_aligned(self) -> bool {
        self.0 & 7 == 0
    }

    /// The byte that starts here, where the position is a byte's first bit.
    #[inline(always)]
    pub const fn bytes_exact(self) -> Option<ByteOffset> {
        if self.is_byte_aligned() {
            Some(self.bytes_floor())
        } else {
            None
        }
    }

    /// The position `bits` bits further.
    #[inline(always)]
    #[must_use]
    pub const fn add_bits(self, bits: u64) -> BitPos {
        BitPos(self.0 + bits)
    }

    /// The position `bits` bits before (`bits` not past the packet's first bit).
    #[inline(always)]
    #[must_use]
    pub const fn sub_bits(self, bits: u64) -> BitPos {
        BitPos(self.0 - bits)
    }

    /// The position `bytes` whole bytes further.
    #[inline(always)]
    #[must_use]
    pub const fn add_bytes(self, bytes: u64) -> BitPos {
        BitPos(self.0 + bytes * 8)
    }

    /// The bits from here to `end` (`end` not before `self`).
    #[inline(always)]
    pub const fn bits_to(self, end: BitPos) -> u64 {
        end.0 - self.0
    }

    /// The first position from here on that is a multiple of `align` bits (a power of
    /// two).
    #[inline(always)]
    #[must_use]
    pub const fn align_up(self, align: u64) -> BitPos {
        BitPos((self.0 + align - 1) & !(align - 1))
    }
}

/// A position inside a packet, in bytes from its first byte (an index into its bytes).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Default)]
#[repr(transparent)]
pub struct ByteOffset(usize);

impl ByteOffset {
    /// The byte `bytes` bytes from the packet's first byte.
    #[inline(always)]
    pub const fn new(bytes: usize) -> ByteOffset {
        ByteOffset(bytes)
    }

    /// The index of this byte in the packet's bytes.
    #[inline(always)]
    pub const fn get(self) -> usize {
        self.0
    }

    /// The position of this byte's first bit.
    #[inline(always)]
    pub const fn to_bits(self) -> BitPos {
        BitPos(self.0 as u64 * 8)
    }

    /// The byte `bytes` bytes further.
    #[inline(always)]
    #[must_use]
    pub const fn add(self, bytes: usize) -> ByteOffset {
        ByteOffset(self.0 + bytes)
    }

    /// The bytes from here to `end` (`end` not before `self`).
    #[inline(always)]
    pub const fn bytes_to(self, end: ByteOffset) -> usize {
        end.0 - self.0
    }
}

/// A value of a stream's clock, in cycles of that clock (the full 64-bit value that the
/// headers' timestamps give the low bits of).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Default)]
#[repr(transparent)]
pub struct Cycles(pub u64);

impl Cycles {
    /// The value after a field holding its low bits (those of `mask`, all ones for a
    /// 64-bit field) read `new_low`, assuming at most one wrap-around of those bits
    /// since this value (CTF 1.8 section 8): this value moved on by how far its low
    /// bits must go, forward and modulo the field's range, to become `new_low`; no
    /// branch. (`new_low` lies within `mask`, as a field's value does.)
    #[inline(always)]
    #[must_use]
    pub fn extended(self, new_low: u64, mask: u64) -> Cycles {
        if mask == u64::MAX {
            // (The same value, told apart so that a 64-bit field's costs nothing more.)
            return Cycles(new_low);
        }
        Cycles(self.0.wrapping_add(new_low.wrapping_sub(self.0) & mask))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    proptest::proptest! {
        /// The clock's high bits with the new low bits, plus one wrap-around when
        /// those are below the old ones.
        #[test]
        fn clock_extension_is_high_bits_and_one_wrap(cur in proptest::num::u64::ANY, new in proptest::num::u64::ANY, bits in 1u32..=64) {
            let mask = u64::MAX >> (64 - bits);
            let new_low = new & mask;
            let mut want = (cur & !mask) | new_low;
            if new_low < (cur & mask) {
                want = want.wrapping_add(mask.wrapping_add(1));
            }
            proptest::prop_assert_eq!(Cycles(cur).extended(new_low, mask), Cycles(want));
        }
    }

    #[test]
    fn clock_extension_wraps_once() {
        assert_eq!(Cycles(0x1_0000_00F0).extended(0x10, 0xff), Cycles(0x1_0000_0110));
        assert_eq!(Cycles(0x1_0000_0010).extended(0x20, 0xff), Cycles(0x1_0000_0020));
        assert_eq!(Cycles(5).extended(99, u64::MAX), Cycles(99));
        assert_eq!(Cycles(0x7FF_FFFF).extended(0, (1 << 27) - 1), Cycles(0x800_0000));
    }

    #[test]
    fn conversions_name_their_direction() {
        let p = BitPos::new(8 * 5 + 3);
        assert_eq!(p.bytes_floor(), ByteOffset::new(5));
        assert_eq!(p.bit_in_byte(), 3);
        assert_eq!(p.bytes_exact(), None);
        assert_eq!(p.align_up(8), BitPos::new(48));
        assert_eq!(ByteOffset::new(6).to_bits(), BitPos::new(48));
        assert_eq!(BitPos::new(48).bytes_exact(), Some(ByteOffset::new(6)));
        assert_eq!(p.bits_to(p.add_bits(9)), 9);
        assert_eq!(p.add_bytes(2), BitPos::new(8 * 7 + 3));
        assert_eq!(ByteOffset::new(2).bytes_to(ByteOffset::new(2).add(7)), 7);
    }
}
