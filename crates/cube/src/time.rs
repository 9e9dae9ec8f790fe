//! Durations and instants as users write them: `2.5s`, `5min`, absolute ns,
//! ISO-8601 (`2024-03-01T14:02:00.5Z`) and offsets from the trace start (`+2.5s`).

use crate::error::{CubeError, Result};

/// Parses a duration: a decimal number and a unit among `ns`, `us`, `ms`, `s`,
/// `min`, `h`, `d`, `w` (a bare number is nanoseconds). Returns nanoseconds.
pub fn parse_duration(s: &str) -> Result<u64> {
    let s = s.trim();
    let split = s.find(|c: char| !(c.is_ascii_digit() || c == '.')).unwrap_or(s.len());
    let (num, unit) = s.split_at(split);
    let mult: u64 = match unit.trim() {
        "" | "ns" => 1,
        "us" | "µs" => 1_000,
        "ms" => 1_000_000,
        "s" => 1_000_000_000,
        "m" | "min" => 60_000_000_000,
        "h" => 3_600_000_000_000,
        "d" => 86_400_000_000_000,
        "w" => 7 * 86_400_000_000_000,
        _ => return Err(CubeError::Time(s.into())),
    };
    if num.is_empty() {
        return Err(CubeError::Time(s.into()));
    }
    // Exact integer arithmetic on the decimal digits (no float rounding).
    let (int, frac) = num.split_once('.').unwrap_or((num, ""));
    let bad = || CubeError::Time(s.into());
    let int: u64 = if int.is_empty() { 0 } else { int.parse().map_err(|_| bad())? };
    let mut v = int.checked_mul(mult).ok_or_else(bad)?;
    let mut scale = mult;
    for d in frac.chars() {
        let d = d.to_digit(10).ok_or_else(bad)? as u64;
        scale /= 10;
        v = v.checked_add(d * scale).ok_or_else(bad)?;
    }
    Ok(v)
}

/// Days from 1970-01-01 to the civil date `y-m-d` (proleptic Gregorian).
fn days_from_civil(y: i64, m: u32, d: u32) -> i64 {
    let y = if m <= 2 { y - 1 } else { y };
    let era = if y >= 0 { y } else { y - 399 } / 400;
    let yoe = y - era * 400;
    let mp = (i64::from(m) + 9) % 12;
    let doy = (153 * mp + 2) / 5 + i64::from(d) - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146_097 + doe - 719_468
}

/// Parses `YYYY-MM-DDTHH:MM:SS[.fff][Z]` (UTC) into ns since the Epoch.
pub fn parse_iso8601(s: &str) -> Result<u64> {
    let bad = || CubeError::Time(s.into());
    let t = s.trim().trim_end_matches('Z');
    let (date, time) = t.split_once(['T', ' ']).unwrap_or((t, "00:00:00"));
    let mut dp = date.split('-');
    let y: i64 = dp.next().ok_or_else(bad)?.parse().map_err(|_| bad())?;
    let m: u32 = dp.next().ok_or_else(bad)?.parse().map_err(|_| bad())?;
    let d: u32 = dp.next().ok_or_else(bad)?.parse().map_err(|_| bad())?;
    if !(1..=12).contains(&m) || !(1..=31).contains(&d) {
        return Err(bad());
    }
    let mut tp = time.split(':');
    let hh: u64 = tp.next().ok_or_else(bad)?.parse().map_err(|_| bad())?;
    let mm: u64 = tp.next().unwrap_or("0").parse().map_err(|_| bad())?;
    let sec = parse_duration(&format!("{}s", tp.next().unwrap_or("0")))?;
    // Years past 9999 are typos; the arithmetic below is checked all the same (u64
    // nanoseconds end in 2554).
    if !(1..=9999).contains(&y) || hh > 23 || mm > 59 || sec > 60_999_999_999 {
        return Err(bad());
    }
    let days = days_from_civil(y, m, d);
    if days < 0 {
        return Err(bad());
    }
    (days as u64).checked_mul(86_400_000_000_000).and_then(|v| v.checked_add(hh * 3_600_000_000_000 + mm * 60_000_000_000 + sec)).ok_or_else(bad)
}

/// Parses an instant: absolute ns (`1700000000000000000`), ISO-8601, or an offset
/// from `origin` (the trace start) written `+DUR`.
pub fn parse_instant(s: &str, origin: u64) -> Result<u64> {
    let s = s.trim();
    if let Some(off) = s.strip_prefix('+') {
        return Ok(origin.saturating_add(parse_duration(off)?));
    }
    if s.bytes().all(|b| b.is_ascii_digit()) && !s.is_empty() {
        return s.parse().map_err(|_| CubeError::Time(s.into()));
    }
    parse_iso8601(s)
}

/// Formats a duration in the largest unit that divides it (`300s` → `5min`).
pub fn format_duration(ns: u64) -> String {
    for (u, m) in [
        ("w", 7 * 86_400_000_000_000u64),
        ("d", 86_400_000_000_000),
        ("h", 3_600_000_000_000),
        ("min", 60_000_000_000),
        ("s", 1_000_000_000),
        ("ms", 1_000_000),
        ("us", 1_000),
    ] {
        if ns >= m && ns.is_multiple_of(m) {
            return format!("{}{u}", ns / m);
        }
    }
    format!("{ns}ns")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn durations() {
        assert_eq!(parse_duration("2.5s").unwrap(), 2_500_000_000);
        assert_eq!(parse_duration("5min").unwrap(), 300_000_000_000);
        assert_eq!(parse_duration("75d").unwrap(), 75 * 86_400_000_000_000);
        assert_eq!(parse_duration("10").unwrap(), 10);
        assert!(parse_duration("3 parsecs").is_err());
        assert_eq!(format_duration(300_000_000_000), "5min");
    }

    #[test]
    fn instants() {
        assert_eq!(parse_instant("+2.5s", 100).unwrap(), 2_500_000_100);
        assert_eq!(parse_instant("42", 100).unwrap(), 42);
        assert_eq!(parse_instant("1970-01-02T00:00:01.5Z", 0).unwrap(), 86_401_500_000_000);
        assert_eq!(parse_iso8601("2000-03-01T00:00:00Z").unwrap() / 1_000_000_000, 951_868_800);
        // Out of range: an error, not an overflow.
        assert!(parse_iso8601("9999-01-01T00:00:00Z").is_err());
        assert!(parse_iso8601("99999999999-01-01T00:00:00Z").is_err());
        assert!(parse_iso8601("2024-01-01T25:00:00Z").is_err());
    }
}
