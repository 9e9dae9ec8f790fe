//! Number and time formatting into byte buffers, without allocation: decimal by
//! two-digit table, Babeltrace's hexadecimal, octal and binary forms, C's `%g`, and the
//! civil date of a day count.

const PAIRS: &[u8; 200] = b"0001020304050607080910111213141516171819\
2021222324252627282930313233343536373839\
4041424344454647484950515253545556575859\
6061626364656667686970717273747576777879\
8081828384858687888990919293949596979899";

/// Appends `len` bytes of `src`, copying a fixed 32 bytes (one or two vector moves
/// instead of a call to `memmove`): `src` must hold at least 32 bytes from its start,
/// of which the first `len` (at most 32) are the text.
#[inline(always)]
pub fn put_short(out: &mut Vec<u8>, src: &[u8], len: usize) {
    let src: &[u8; 32] = src.get(..32).and_then(|s| s.try_into().ok()).expect("32 readable bytes");
    assert!(len <= 32);
    out.reserve(32);
    // SAFETY: `reserve` made room for 32 more bytes; the first `len` of them are
    // initialised by the copy before the length covers them.
    unsafe {
        std::ptr::copy_nonoverlapping(src.as_ptr(), out.as_mut_ptr().add(out.len()), 32);
        out.set_len(out.len() + len);
    }
}

/// Number of decimal digits of `v` (from its bit length: no loop).
#[inline(always)]
fn digits(v: u64) -> usize {
    const POW10: [u64; 20] = {
        let mut p = [1u64; 20];
        let mut i = 1;
        while i < 20 {
            p[i] = p[i - 1] * 10;
            i += 1;
        }
        p
    };
    let t = (((64 - (v | 1).leading_zeros()) * 1233) >> 12) as usize;
    (t + 1 - usize::from(v < POW10[t])).max(1)
}

/// Writes the `width` low decimal digits of `v`, zero-padded, at `p`.
///
/// # Safety
/// `p` must be valid for writes of `width` bytes.
#[inline(always)]
unsafe fn write_digits(p: *mut u8, mut v: u64, width: usize) {
    let mut i = width;
    while i >= 2 {
        let r = (v % 100) as usize * 2;
        v /= 100;
        i -= 2;
        // SAFETY: `i + 2 <= width`, within what the caller made writable.
        unsafe { std::ptr::copy_nonoverlapping(PAIRS.as_ptr().add(r), p.add(i), 2) };
    }
    if i == 1 {
        // SAFETY: `width >= 1`.
        unsafe { *p = b'0' + (v % 10) as u8 };
    }
}

/// Writes the `width` low decimal digits of `v` at the end of `out`, zero-padded.
#[inline(always)]
fn put_digits(out: &mut Vec<u8>, v: u64, width: usize) {
    out.reserve(width);
    let base = out.len();
    // SAFETY: `reserve` made room for `width` more bytes, all written before the
    // length covers them.
    unsafe {
        write_digits(out.as_mut_ptr().add(base), v, width);
        out.set_len(base + width);
    }
}

/// Appends nanoseconds `v` as seconds, `S.nnnnnnnnn` (one capacity check, not four).
#[inline]
pub fn push_seconds(out: &mut Vec<u8>, v: u64) {
    let (s, ns) = (v / 1_000_000_000, v % 1_000_000_000);
    let sd = digits(s);
    out.reserve(sd + 10);
    let base = out.len();
    // SAFETY: `reserve` made room for the `sd + 10` bytes written below, before the
    // length covers them.
    unsafe {
        let p = out.as_mut_ptr().add(base);
        write_digits(p, s, sd);
        *p.add(sd) = b'.';
        write_digits(p.add(sd + 1), ns, 9);
        out.set_len(base + sd + 10);
    }
}

/// Appends the first `len` bytes of `head` (a cached time of day, at most 24 bytes)
/// and then `ns < 10^9` as 9 digits, with one capacity check.
#[inline]
pub fn push_head_and_nanos(out: &mut Vec<u8>, head: &[u8; 24], len: usize, ns: u64) {
    assert!(len <= 24);
    out.reserve(24 + 9);
    let base = out.len();
    // SAFETY: `reserve` made room for 33 bytes: the 24 copied (of which `len` are
    // kept) and the 9 digits written after the kept ones, before the length covers them.
    unsafe {
        let p = out.as_mut_ptr().add(base);
        std::ptr::copy_nonoverlapping(head.as_ptr(), p, 24);
        write_digits(p.add(len), ns, 9);
        out.set_len(base + len + 9);
    }
}

/// Appends `v` in decimal.
#[inline]
pub fn push_u64(out: &mut Vec<u8>, v: u64) {
    put_digits(out, v, digits(v));
}

/// Appends `v` in decimal, with its sign.
#[inline]
pub fn push_i64(out: &mut Vec<u8>, v: i64) {
    if v < 0 {
        out.push(b'-');
    }
    push_u64(out, v.unsigned_abs());
}

/// Appends `v` as exactly `width` decimal digits, zero-padded (`v < 10^width`).
#[inline]
pub fn push_padded(out: &mut Vec<u8>, v: u64, width: usize) {
    put_digits(out, v, width.min(20));
}

/// Appends `v` in upper-case hexadecimal digits, without prefix.
#[inline]
pub fn push_hex(out: &mut Vec<u8>, v: u64) {
    const HEX: &[u8; 16] = b"0123456789ABCDEF";
    let digits = (64 - v.leading_zeros()).div_ceil(4).max(1) as usize;
    let mut buf = [0u8; 16];
    for (k, b) in buf[..digits].iter_mut().enumerate() {
        *b = HEX[((v >> (4 * (digits - 1 - k))) & 0xF) as usize];
    }
    out.extend_from_slice(&buf[..digits]);
}

/// How Babeltrace 2 shows an integer of a given display base and size.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum IntStyle {
    /// Decimal, unsigned.
    Unsigned,
    /// Decimal, signed (the raw value is sign-extended).
    Signed,
    /// `0x` and upper-case digits of the value masked to whole nibbles of the size.
    Hex(u64),
    /// `0` and octal digits (signed values masked to whole triplets of the size).
    Oct(u64),
    /// `0b` and exactly this many binary digits.
    Bin(u32),
}

impl IntStyle {
    /// The style of an integer of `bits` bits, `signed`, in display `base`.
    pub fn new(bits: u32, signed: bool, base: u32) -> IntStyle {
        let mask = |round: u32| if round >= 64 { u64::MAX } else { (1u64 << round) - 1 };
        match base {
            16 => IntStyle::Hex(mask((bits + 3) & !3)),
            8 => IntStyle::Oct(if signed { mask((bits.max(1) - 1) / 3 * 3 + 3) } else { u64::MAX }),
            2 => IntStyle::Bin(bits),
            _ if signed => IntStyle::Signed,
            _ => IntStyle::Unsigned,
        }
    }

    /// Appends `raw` (sign-extended when signed) in this style.
    #[inline]
    pub fn push(self, out: &mut Vec<u8>, raw: u64) {
        match self {
            IntStyle::Unsigned => push_u64(out, raw),
            IntStyle::Signed => push_i64(out, raw as i64),
            IntStyle::Hex(mask) => {
                out.extend_from_slice(b"0x");
                push_hex(out, raw & mask);
            }
            IntStyle::Oct(mask) => {
                let v = raw & mask;
                out.push(b'0');
                let digits = (64 - v.leading_zeros()).div_ceil(3).max(1);
                for k in (0..digits).rev() {
                    out.push(b'0' + ((v >> (3 * k)) & 7) as u8);
                }
            }
            IntStyle::Bin(len) => {
                out.extend_from_slice(b"0b");
                for k in (0..len.min(64)).rev() {
                    out.push(b'0' + ((raw >> k) & 1) as u8);
                }
            }
        }
    }
}

/// Appends a float like C's `printf("%g")`: 6 significant digits, trailing zeros
/// removed, exponent form below 1e-4 and from 1e6 (Babeltrace's text output).
pub fn push_g(out: &mut Vec<u8>, v: f64) {
    use std::io::Write;
    if v.is_nan() {
        out.extend_from_slice(if v.is_sign_negative() { b"-nan" } else { b"nan" });
        return;
    }
    if v.is_infinite() {
        out.extend_from_slice(if v > 0.0 { b"inf" } else { b"-inf" });
        return;
    }
    if v == 0.0 {
        out.extend_from_slice(if v.is_sign_negative() { b"-0" } else { b"0" });
        return;
    }
    let mut sci = [0u8; 32];
    let n = {
        let mut c = std::io::Cursor::new(&mut sci[..]);
        let _ = write!(c, "{v:.5e}"); // d.ddddde[-]x, rounded to 6 significant digits
        c.position() as usize
    };
    let sci = std::str::from_utf8(&sci[..n]).unwrap_or("0e0");
    let (mant, exp) = sci.split_once('e').unwrap_or((sci, "0"));
    let exp: i32 = exp.parse().unwrap_or(0);
    let trim = |s: &str| -> String {
        if s.contains('.') {
            s.trim_end_matches('0').trim_end_matches('.').to_string()
        } else {
            s.to_string()
        }
    };
    if !(-4..6).contains(&exp) {
        let _ = write!(out, "{}e{}{:02}", trim(mant), if exp < 0 { '-' } else { '+' }, exp.abs());
    } else {
        let decimals = (5 - exp).max(0) as usize;
        out.extend_from_slice(trim(&format!("{v:.decimals$}")).as_bytes());
    }
}

/// `(year, month, day)` of day `days` since 1970-01-01 (proleptic Gregorian).
pub fn civil_from_days(days: i64) -> (i64, u32, u32) {
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = (doy - (153 * mp + 2) / 5 + 1) as u32;
    let m = if mp < 10 { mp + 3 } else { mp - 9 } as u32;
    (yoe + era * 400 + i64::from(m <= 2), m, d)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Day count since 1970-01-01 of a civil date (proleptic Gregorian).
    fn days_from_civil(y: i64, m: u32, d: u32) -> i64 {
        let y = if m <= 2 { y - 1 } else { y };
        let era = y.div_euclid(400);
        let yoe = y.rem_euclid(400);
        let mp = i64::from((m + 9) % 12);
        let doy = (153 * mp + 2) / 5 + i64::from(d) - 1;
        let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
        era * 146_097 + doe - 719_468
    }

    fn s(f: impl FnOnce(&mut Vec<u8>)) -> String {
        let mut v = Vec::new();
        f(&mut v);
        String::from_utf8(v).unwrap()
    }

    #[test]
    fn decimal_and_padding() {
        for v in [0u64, 7, 10, 99, 100, 12345, u64::MAX] {
            assert_eq!(s(|o| push_u64(o, v)), v.to_string());
        }
        assert_eq!(s(|o| push_i64(o, i64::MIN)), i64::MIN.to_string());
        assert_eq!(s(|o| push_padded(o, 6186, 9)), "000006186");
        assert_eq!(s(|o| push_padded(o, 0, 2)), "00");
    }

    #[test]
    fn babeltrace_bases() {
        assert_eq!(s(|o| IntStyle::new(8, false, 16).push(o, 0x8)), "0x8");
        assert_eq!(s(|o| IntStyle::new(64, false, 16).push(o, 0x7F8093366000)), "0x7F8093366000");
        assert_eq!(s(|o| IntStyle::new(8, true, 16).push(o, -1i64 as u64)), "0xFF");
        assert_eq!(s(|o| IntStyle::new(4, false, 2).push(o, 5)), "0b0101");
        assert_eq!(s(|o| IntStyle::new(32, false, 8).push(o, 8)), "010");
        assert_eq!(s(|o| IntStyle::new(8, true, 8).push(o, -1i64 as u64)), "0777");
        assert_eq!(s(|o| IntStyle::new(32, true, 10).push(o, -5i64 as u64)), "-5");
    }

    #[test]
    fn printf_g() {
        for (v, want) in [
            (0.5, "0.5"),
            (1.0 / 3.0, "0.333333"),
            (3.0, "3"),
            (1e-5, "1e-05"),
            (123456.0, "123456"),
            (1234567.0, "1.23457e+06"),
            (-2.5e-7, "-2.5e-07"),
            (999999.5, "1e+06"),
        ] {
            assert_eq!(s(|o| push_g(o, v)), want, "{v}");
        }
    }

    #[test]
    fn dates() {
        assert_eq!(civil_from_days(0), (1970, 1, 1));
        assert_eq!(civil_from_days(20_779), (2026, 11, 22));
        assert_eq!(civil_from_days(-1), (1969, 12, 31));
        for d in [-800_000i64, -1, 0, 59, 20_779, 1_000_000] {
            let (y, m, day) = civil_from_days(d);
            assert_eq!(days_from_civil(y, m, day), d);
        }
    }
}
