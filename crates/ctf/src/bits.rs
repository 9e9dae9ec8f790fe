//! Bit-level reads of integers from packet bytes, in either byte order, at any bit
//! position — the one primitive every field read goes through.

use crate::units::BitPos;

/// Reads `bits` (1..=64) bits at bit offset `pos` of `buf`, little-endian bit order
/// (bits fill from the least significant bit of each byte). The caller guarantees
/// `pos + bits <= buf.len() * 8`.
#[inline(always)]
pub fn read_le(buf: &[u8], pos: BitPos, bits: u32) -> u64 {
    let (byte, shift) = (pos.bytes_floor().get(), pos.bit_in_byte());
    if shift + bits <= 64 {
        if let Some(s) = buf.get(byte..byte + 8) {
            let w = u64::from_le_bytes(s.try_into().unwrap_or_default()) >> shift;
            return if bits == 64 { w } else { w & ((1u64 << bits) - 1) };
        }
    }
    let need = ((shift + bits + 7) >> 3) as usize;
    let w = load_le(buf, byte, need);
    let v = w >> shift;
    if bits == 64 {
        v as u64
    } else {
        (v as u64) & ((1u64 << bits) - 1)
    }
}

/// Reads `bits` (1..=64) bits at bit offset `pos` of `buf`, big-endian bit order (bits
/// fill from the most significant bit of each byte). Same bounds contract as [`read_le`].
#[inline(always)]
pub fn read_be(buf: &[u8], pos: BitPos, bits: u32) -> u64 {
    let (byte, shift) = (pos.bytes_floor().get(), pos.bit_in_byte());
    if shift + bits <= 64 {
        if let Some(s) = buf.get(byte..byte + 8) {
            let w = u64::from_be_bytes(s.try_into().unwrap_or_default()) >> (64 - shift - bits);
            return if bits == 64 { w } else { w & ((1u64 << bits) - 1) };
        }
    }
    let need = ((shift + bits + 7) >> 3) as usize;
    let w = load_be(buf, byte, need);
    let total = (need * 8) as u32;
    let v = w >> (total - shift - bits);
    if bits == 64 {
        v as u64
    } else {
        (v as u64) & ((1u64 << bits) - 1)
    }
}

#[inline(always)]
fn load_le(buf: &[u8], byte: usize, need: usize) -> u128 {
    if let Some(s) = buf.get(byte..byte + 16) {
        let w = u128::from_le_bytes(s.try_into().unwrap_or_default());
        if need == 16 {
            w
        } else {
            w & ((1u128 << (need * 8)) - 1)
        }
    } else {
        let mut tmp = [0u8; 16];
        let s = &buf[byte..byte + need];
        tmp[..need].copy_from_slice(s);
        u128::from_le_bytes(tmp)
    }
}

#[inline]
fn load_be(buf: &[u8], byte: usize, need: usize) -> u128 {
    let mut tmp = [0u8; 16];
    tmp[16 - need..].copy_from_slice(&buf[byte..byte + need]);
    u128::from_be_bytes(tmp)
}

/// Reads an integer of `bits` (1..=64) bits at bit offset `pos` of `buf` in the given
/// byte order, sign-extended when `signed` (as raw `u64` bits). The common case (little
/// endian, the field inside the 8 bytes from its first byte) is a load and two shifts
/// that mask and sign-extend at once; same bounds contract as [`read_le`].
#[inline(always)]
pub fn read_int(buf: &[u8], pos: BitPos, bits: u32, signed: bool, be: bool) -> u64 {
    let (byte, shift) = (pos.bytes_floor().get(), pos.bit_in_byte());
    if !be && shift + bits <= 64 {
        if let Some(s) = buf.get(byte..byte + 8) {
            // The field's bits moved to the top of the word, then back down.
            let unused = 64 - bits;
            let top = (u64::from_le_bytes(s.try_into().unwrap_or_default()) >> shift) << unused;
            return if signed { ((top as i64) >> unused) as u64 } else { top >> unused };
        }
    }
    let raw = if be { read_be(buf, pos, bits) } else { read_le(buf, pos, bits) };
    if signed {
        sign_extend(raw, bits) as u64
    } else {
        raw
    }
}

/// Sign-extends the low `bits` bits of `v`.
#[inline]
pub fn sign_extend(v: u64, bits: u32) -> i64 {
    if bits >= 64 {
        v as i64
    } else {
        let s = 64 - bits;
        ((v << s) as i64) >> s
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// Reference: one bit at a time.
    fn slow(buf: &[u8], pos: u64, bits: u32, be: bool) -> u64 {
        let mut v = 0u64;
        for i in 0..bits as u64 {
            let p = pos + i;
            let byte = buf[(p / 8) as usize];
            if be {
                let bit = (byte >> (7 - (p % 8))) & 1;
                v = (v << 1) | bit as u64;
            } else {
                let bit = (byte >> (p % 8)) & 1;
                v |= (bit as u64) << i;
            }
        }
        v
    }

    proptest! {
        #[test]
        fn matches_bit_by_bit(buf in proptest::collection::vec(any::<u8>(), 9..40), pos in 0u64..64, bits in 1u32..=64) {
            prop_assume!(pos + bits as u64 <= buf.len() as u64 * 8);
            let at = BitPos::new(pos);
            prop_assert_eq!(read_le(&buf, at, bits), slow(&buf, pos, bits, false));
            prop_assert_eq!(read_be(&buf, at, bits), slow(&buf, pos, bits, true));
            for be in [false, true] {
                let raw = slow(&buf, pos, bits, be);
                prop_assert_eq!(read_int(&buf, at, bits, false, be), raw);
                prop_assert_eq!(read_int(&buf, at, bits, true, be), sign_extend(raw, bits) as u64);
            }
        }
    }

    #[test]
    fn known_values() {
        assert_eq!(read_le(&[0x34, 0x12], BitPos::new(0), 16), 0x1234);
        assert_eq!(read_be(&[0x12, 0x34], BitPos::new(0), 16), 0x1234);
        assert_eq!(read_le(&[0b1110_0000], BitPos::new(5), 3), 0b111);
        assert_eq!(read_be(&[0b0000_0111], BitPos::new(5), 3), 0b111);
        assert_eq!(sign_extend(0b11111, 5), -1);
        assert_eq!(read_le(&[0xff; 9], BitPos::new(3), 64), u64::MAX);
    }
}
