//! Conversion of clock cycles into nanoseconds from the clock's origin (A5).
//!
//! `ns = offset_s·10⁹ + ns(offset) + ns(cycles)`, where `ns(c) = c` for a 1 GHz clock
//! (every LTTng clock): exact integer arithmetic, 128 bits wide. For other frequencies
//! Babeltrace 2 (and 1) compute `ns(c) = ⌊10⁹·c / freq⌋` in double precision, which can
//! differ from the exact quotient by a nanosecond; we use the same formula so that
//! timestamps stay identical to theirs (`exact_ns` gives the exact value).
//! An `offset` of a second or more is folded into `offset_s` first, as Babeltrace does.

use crate::ir::ClockClass;

/// A clock class prepared for fast conversion.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ClockConv {
    /// Nanoseconds of the offset (seconds and cycles parts).
    pub offset_ns: i128,
    /// Frequency in Hz.
    pub freq: u64,
}

impl ClockConv {
    /// Prepares a clock class.
    pub fn new(c: &ClockClass) -> Self {
        let freq = c.freq.max(1);
        let extra_s = c.offset_cycles.div_euclid(freq as i64);
        let cycles = c.offset_cycles.rem_euclid(freq as i64) as u64;
        let offset_ns = (c.offset_s as i128 + extra_s as i128) * 1_000_000_000 + cycles_to_ns(freq, cycles) as i128;
        ClockConv { offset_ns, freq }
    }

    /// Nanoseconds from origin of a clock value, full width.
    #[inline]
    pub fn to_ns_wide(&self, cycles: u64) -> i128 {
        self.offset_ns + cycles_to_ns(self.freq, cycles) as i128
    }

    /// Nanoseconds from origin of a clock value, saturated to the `i64` range.
    #[inline]
    pub fn to_ns(&self, cycles: u64) -> i64 {
        self.to_ns_wide(cycles).clamp(i64::MIN as i128, i64::MAX as i128) as i64
    }

    /// The exact nanoseconds of `cycles` (no floating point at any frequency).
    pub fn exact_ns(&self, cycles: u64) -> i128 {
        self.offset_ns + cycles as i128 * 1_000_000_000 / self.freq as i128
    }
}

/// Cycles to nanoseconds as Babeltrace computes it (see the module docs).
#[inline]
fn cycles_to_ns(freq: u64, cycles: u64) -> u64 {
    if freq == 1_000_000_000 {
        cycles
    } else {
        let d = 1e9 * cycles as f64 / freq as f64;
        if d >= u64::MAX as f64 { u64::MAX } else { d as u64 }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn clock(freq: u64, offset_s: i64, offset_cycles: i64) -> ClockClass {
        ClockClass { name: "c".into(), freq, offset_s, offset_cycles, precision: 0, absolute: false, uuid: None, description: None }
    }

    #[test]
    fn one_gigahertz_is_exact() {
        let c = ClockConv::new(&clock(1_000_000_000, 10, 5));
        assert_eq!(c.to_ns(7), 10_000_000_012);
    }

    #[test]
    fn other_frequencies_floor() {
        let c = ClockConv::new(&clock(3, 0, 0));
        assert_eq!(c.to_ns(1), 333_333_333);
        let c = ClockConv::new(&clock(2_100_000_000, 1, 2_100_000_000));
        assert_eq!(c.to_ns(21), 2_000_000_010);
        assert_eq!(c.exact_ns(21), 2_000_000_010);
        let c = ClockConv::new(&clock(1_000, -1, -500));
        assert_eq!(c.to_ns(0), -1_500_000_000);
    }
}
