//! Conversion of clock cycles into nanoseconds from the clock's origin.
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
    /// `offset_ns` when the clock runs at 1 GHz and the offset fits an `i64`: then
    /// [`ClockConv::to_ns`] is one saturating add.
    ns_offset_1ghz: Option<i64>,
    /// See [`ClockConv::last_in_range`].
    last_in_range: Option<u64>,
}

impl ClockConv {
    /// Prepares a clock class.
    pub fn new(c: &ClockClass) -> Self {
        let freq = c.freq.max(1);
        let extra_s = c.offset_cycles.div_euclid(freq as i64);
        let cycles = c.offset_cycles.rem_euclid(freq as i64) as u64;
        let offset_ns = (c.offset_s as i128 + extra_s as i128) * 1_000_000_000 + cycles_to_ns(freq, cycles) as i128;
        let ns_offset_1ghz = if freq == 1_000_000_000 { i64::try_from(offset_ns).ok() } else { None };
        let mut conv = ClockConv { offset_ns, freq, ns_offset_1ghz, last_in_range: None };
        conv.last_in_range = conv.find_last_in_range();
        conv
    }

    /// The last clock value whose time from origin fits an `i64` of nanoseconds
    /// (`u64::MAX` where every value's does); `None` where the offset alone does not,
    /// so that no value's does. (Babeltrace 2 likewise fails to convert a clock value
    /// to nanoseconds from origin past that range.)
    #[inline]
    pub fn last_in_range(&self) -> Option<u64> {
        self.last_in_range
    }

    /// [`ClockConv::last_in_range`], found by bisection: `to_ns_wide` never decreases
    /// as cycles grow (see [`ClockConv::cycle_window`]).
    fn find_last_in_range(&self) -> Option<u64> {
        let fits = |c: u64| self.to_ns_wide(c) <= i128::from(i64::MAX);
        if i64::try_from(self.offset_ns).is_err() {
            return None;
        }
        if fits(u64::MAX) {
            return Some(u64::MAX);
        }
        // fits(ok), !fits(over)
        let (mut ok, mut over) = (0u64, u64::MAX);
        while over - ok > 1 {
            let mid = ok + (over - ok) / 2;
            if fits(mid) {
                ok = mid
            } else {
                over = mid
            }
        }
        Some(ok)
    }

    /// Nanoseconds from origin of a clock value, full width.
    #[inline]
    pub fn to_ns_wide(&self, cycles: u64) -> i128 {
        self.offset_ns + cycles_to_ns(self.freq, cycles) as i128
    }

    /// Nanoseconds from origin of a clock value, saturated to the `i64` range.
    #[inline]
    pub fn to_ns(&self, cycles: u64) -> i64 {
        if let Some(o) = self.ns_offset_1ghz {
            // offset + cycles ≥ i64::MIN: only the upper end saturates.
            return o.saturating_add_unsigned(cycles);
        }
        self.to_ns_wide(cycles).clamp(i64::MIN as i128, i64::MAX as i128) as i64
    }

    /// For a 1 GHz clock whose offset fits an `i64`: that offset `o`, and the largest
    /// clock value `m` for which no timestamp saturates: every clock value `c ≤ m` has
    /// the timestamp ([`ClockConv::to_ns`]) `o + c`. `None` for other clocks.
    #[inline]
    pub fn plain_offset(&self) -> Option<(i64, u64)> {
        self.ns_offset_1ghz.map(|o| (o, i64::MAX.abs_diff(o)))
    }

    /// The clock values whose timestamps ([`ClockConv::to_ns`]) lie in `[lo, hi]`, as an
    /// inclusive range of cycles; `None` when there are none. Exact: `to_ns` never
    /// decreases as cycles grow (each step of the conversion is monotonic, rounding
    /// included), so the values mapping inside form one range, found by bisection.
    pub fn cycle_window(&self, lo: i64, hi: i64) -> Option<(u64, u64)> {
        let first = self.first_at_or_after(lo)?;
        let last = if hi == i64::MAX {
            u64::MAX
        } else {
            match self.first_at_or_after(hi + 1) {
                Some(0) => return None,
                Some(c) => c - 1,
                None => u64::MAX,
            }
        };
        (first <= last).then_some((first, last))
    }

    /// The smallest clock value whose timestamp is at least `ns`.
    fn first_at_or_after(&self, ns: i64) -> Option<u64> {
        if self.to_ns(0) >= ns {
            return Some(0);
        }
        if self.to_ns(u64::MAX) < ns {
            return None;
        }
        // to_ns(below) < ns <= to_ns(at)
        let (mut below, mut at) = (0u64, u64::MAX);
        while at - below > 1 {
            let mid = below + (at - below) / 2;
            if self.to_ns(mid) >= ns {
                at = mid
            } else {
                below = mid
            }
        }
        Some(at)
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
        if d >= u64::MAX as f64 {
            u64::MAX
        } else {
            d as u64
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn clock(freq: u64, offset_s: i64, offset_cycles: i64) -> ClockClass {
        ClockClass { name: "c".into(), freq, offset_s, offset_cycles, precision: 0, absolute: false, uuid: None, description: None }
    }

    #[test]
    fn the_last_value_in_range_is_the_last_whose_time_fits_64_bits() {
        for (freq, offset_s) in
            [(1_000_000_000, 0), (1_000_000_000, 1_700_000_000), (1_000_000_000, -5), (3_000_000, 1_700_000_000), (2_500_000_000, 9_000_000_000)]
        {
            let c = ClockConv::new(&clock(freq, offset_s, 7));
            let last = c.last_in_range().expect("the offset fits");
            assert!(c.to_ns_wide(last) <= i128::from(i64::MAX), "{freq} {offset_s}");
            assert_eq!(c.to_ns(last), c.to_ns_wide(last) as i64);
            if last < u64::MAX {
                assert!(c.to_ns_wide(last + 1) > i128::from(i64::MAX), "{freq} {offset_s}");
            }
        }
        // 1 GHz from the epoch: i64::MAX ns, in 2262.
        assert_eq!(ClockConv::new(&clock(1_000_000_000, 0, 0)).last_in_range(), Some(i64::MAX as u64));
        // A 10 GHz clock from the epoch: every value's time fits.
        assert_eq!(ClockConv::new(&clock(10_000_000_000, 0, 0)).last_in_range(), Some(u64::MAX));
        // An offset of 300 years before the epoch: none does.
        assert_eq!(ClockConv::new(&clock(1_000_000_000, -300 * 365 * 86_400, 0)).last_in_range(), None);
    }

    #[test]
    fn one_gigahertz_is_exact() {
        let c = ClockConv::new(&clock(1_000_000_000, 10, 5));
        assert_eq!(c.to_ns(7), 10_000_000_012);
    }

    proptest::proptest! {
        #[test]
        fn to_ns_is_the_saturated_wide_value(
            freq in proptest::prop_oneof![proptest::strategy::Just(1_000_000_000u64), 1u64..5_000_000_000],
            offset_s in proptest::prop_oneof![proptest::num::i64::ANY, -20_000_000_000i64..20_000_000_000],
            offset_cycles in proptest::num::i64::ANY,
            cycles in proptest::prop_oneof![proptest::num::u64::ANY, u64::MAX - 1000..=u64::MAX, 0u64..1000],
        ) {
            let c = ClockConv::new(&clock(freq, offset_s, offset_cycles));
            let wide = c.to_ns_wide(cycles).clamp(i64::MIN as i128, i64::MAX as i128) as i64;
            proptest::prop_assert_eq!(c.to_ns(cycles), wide);
            if let Some((o, m)) = c.plain_offset() {
                proptest::prop_assert_eq!(o.checked_add_unsigned(cycles), (cycles <= m).then_some(wide));
            }
        }

        #[test]
        fn cycle_window_is_exactly_the_preimage(
            freq in proptest::prop_oneof![proptest::strategy::Just(1_000_000_000u64), 1u64..5_000_000_000],
            offset_s in -5i64..5_000_000_000, lo_c in 0u64..1 << 40, len in 0u64..1 << 20, probes in proptest::collection::vec(0u64..1 << 41, 1..40),
        ) {
            let c = ClockConv::new(&clock(freq, offset_s, 0));
            let (lo, hi) = (c.to_ns(lo_c), c.to_ns(lo_c + len));
            let w = c.cycle_window(lo, hi);
            for p in probes.into_iter().chain([lo_c, lo_c + len, lo_c.saturating_sub(1), lo_c + len + 1]) {
                let inside = (lo..=hi).contains(&c.to_ns(p));
                proptest::prop_assert_eq!(inside, w.is_some_and(|(a, b)| (a..=b).contains(&p)), "cycles {} window {:?}", p, w);
            }
        }
    }

    #[test]
    fn cycle_window_edges() {
        let c = ClockConv::new(&clock(1_000_000_000, 0, 0));
        assert_eq!(c.cycle_window(i64::MIN, i64::MAX), Some((0, u64::MAX)));
        assert_eq!(c.cycle_window(10, 20), Some((10, 20)));
        assert_eq!(c.cycle_window(20, 10), None);
        assert_eq!(c.cycle_window(i64::MIN, -1), None);
        let c = ClockConv::new(&clock(3, 0, 0));
        assert_eq!(c.cycle_window(1, 333_333_333), Some((1, 1)));
        assert_eq!(c.cycle_window(1, 333_333_332), None);
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
