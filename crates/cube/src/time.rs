//! Durations and instants as users write them, one syntax for every command and the
//! API: `2.5s`, `5min`, absolute ns, ISO-8601 (`2024-03-01T14:02:00.5Z`), a time of
//! day on the trace's first day (`17:55:08`) and offsets from the first event (`+2.5s`).

use crate::error::{CubeError, Result};

/// Parses a duration: a decimal number and a unit among `ns`, `us`, `ms`, `s`,
/// `min`, `h`, `d`, `w` (a bare number is nanoseconds). Returns nanoseconds.
pub fn parse_duration(s: &str) -> Result<u64> {
    let s = s.trim();
    let bad = || CubeError::Time(format!("{s:?}: expected a duration, a number and a unit among ns, us, ms, s, min, h, d, w (2.5s, 5min)"));
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
        _ => return Err(bad()),
    };
    if num.is_empty() {
        return Err(bad());
    }
    // Exact integer arithmetic on the decimal digits (no float rounding).
    let (int, frac) = num.split_once('.').unwrap_or((num, ""));
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

/// The time zone of civil times written without an offset (`HH:MM:SS`,
/// `YYYY-MM-DD HH:MM:SS`): the local one (`TZ`, as Babeltrace and lttng-analyses
/// read them) unless asked for UTC (`--gmt`, `--clock-gmt`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Zone {
    /// The local time zone.
    #[default]
    Local,
    /// UTC.
    Utc,
}

/// What an instant is read against: the origin of `+OFFSET`s (the first event) and
/// the zone of civil times.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TimeBase {
    /// ns since the epoch of the first event: `+OFFSET` counts from it, and a bare
    /// `HH:MM:SS` is on its day.
    pub origin_ns: i64,
    /// The zone of civil times without an offset.
    pub zone: Zone,
}

/// The forms an instant may take, for messages and `--help`.
pub const TIME_SYNTAX: &str = "ns since the epoch, +OFFSET from the first event (+2.5s, +10ms, +1min), HH:MM:SS[.fraction] on the first event's day, \
     or YYYY-MM-DD[ |T]HH:MM:SS[.fraction][Z|+HH:MM]";

/// Parses an instant (one syntax for every command and the API; the date arithmetic
/// is chrono's): ns since the epoch, `+DUR` from `base.origin_ns`,
/// `HH:MM:SS[.fraction]` on the origin's day, or an ISO-8601 date and time (with an
/// offset or `Z`, or else in `base.zone`). Returns ns since the epoch.
pub fn parse_instant(s: &str, base: TimeBase) -> Result<i64> {
    use chrono::{DateTime, NaiveDate, NaiveDateTime, NaiveTime};
    let s = s.trim();
    let bad = || CubeError::Time(format!("{s:?}: expected {TIME_SYNTAX}"));
    if let Some(off) = s.strip_prefix('+') {
        let d = i64::try_from(parse_duration(off).map_err(|_| bad())?).map_err(|_| bad())?;
        return base.origin_ns.checked_add(d).ok_or_else(bad);
    }
    if !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit()) {
        return s.parse().map_err(|_| bad());
    }
    let iso = s.replacen(' ', "T", 1);
    if let Ok(t) = DateTime::parse_from_rfc3339(&iso) {
        return t.timestamp_nanos_opt().ok_or_else(bad);
    }
    let civil = if let Ok(dt) = NaiveDateTime::parse_from_str(&iso, "%Y-%m-%dT%H:%M:%S%.f") {
        dt
    } else if let Ok(d) = NaiveDate::parse_from_str(s, "%Y-%m-%d") {
        d.and_time(NaiveTime::MIN)
    } else if let Ok(t) = NaiveTime::parse_from_str(s, "%H:%M:%S%.f") {
        date_of(base.origin_ns, base.zone).and_time(t)
    } else {
        return Err(bad());
    };
    in_zone(civil, base.zone).ok_or_else(bad)
}

/// The civil date of `ns` (since the epoch) in `zone`.
fn date_of(ns: i64, zone: Zone) -> chrono::NaiveDate {
    let utc = chrono::DateTime::from_timestamp_nanos(ns);
    match zone {
        Zone::Utc => utc.date_naive(),
        Zone::Local => utc.with_timezone(&chrono::Local).date_naive(),
    }
}

/// ns since the epoch of a civil time in `zone` (the earlier of two, in a repeated
/// hour; `None` in a skipped one or out of range).
fn in_zone(t: chrono::NaiveDateTime, zone: Zone) -> Option<i64> {
    use chrono::TimeZone;
    match zone {
        Zone::Utc => t.and_utc().timestamp_nanos_opt(),
        Zone::Local => chrono::Local.from_local_datetime(&t).earliest()?.timestamp_nanos_opt(),
    }
}

/// An instant in the three forms [`parse_instant`] reads: ns since the epoch, the
/// date and time in `base.zone` (ISO-8601 with its offset), and the offset from the
/// origin (`+1.5s`).
pub fn instant_forms(ns: i64, base: TimeBase) -> String {
    let utc = chrono::DateTime::from_timestamp_nanos(ns);
    let civil = match base.zone {
        Zone::Utc => utc.format("%Y-%m-%dT%H:%M:%S%.9fZ").to_string(),
        Zone::Local => utc.with_timezone(&chrono::Local).format("%Y-%m-%dT%H:%M:%S%.9f%:z").to_string(),
    };
    let off = ns - base.origin_ns;
    let sign = if off < 0 { "-" } else { "+" };
    let a = off.unsigned_abs();
    format!("{ns} ns = {civil} = {sign}{}.{:09}s", a / 1_000_000_000, a % 1_000_000_000)
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

    const UTC: TimeBase = TimeBase { origin_ns: 100, zone: Zone::Utc };

    #[test]
    fn instants() {
        assert_eq!(parse_instant("+2.5s", UTC).unwrap(), 2_500_000_100);
        assert_eq!(parse_instant("+1min", UTC).unwrap(), 60_000_000_100);
        assert_eq!(parse_instant("42", UTC).unwrap(), 42);
        assert_eq!(parse_instant("1970-01-02T00:00:01.5Z", UTC).unwrap(), 86_401_500_000_000);
        assert_eq!(parse_instant("1970-01-02 00:00:01.5", UTC).unwrap(), 86_401_500_000_000);
        assert_eq!(parse_instant("1970-01-02T01:00:01.5+01:00", UTC).unwrap(), 86_401_500_000_000);
        assert_eq!(parse_instant("2000-03-01", UTC).unwrap() / 1_000_000_000, 951_868_800);
        // On the origin's day (lttng-analyses' `--begin 17:55:08`).
        let base = TimeBase { origin_ns: 1_795_317_000_000_000_000, zone: Zone::Utc };
        assert_eq!(parse_instant("03:12:07", base).unwrap(), 1_795_317_127_000_000_000);
        assert_eq!(parse_instant("03:12:07.25", base).unwrap(), 1_795_317_127_250_000_000);
        assert_eq!(parse_instant("2026-11-22 03:12:06.5", base).unwrap(), 1_795_317_126_500_000_000);
        for bad in ["soon", "03:12", "2024-01-01T25:00:00Z", "99999999999-01-01T00:00:00Z", "+3 parsecs", "+", "", "2024-13-01"] {
            let e = parse_instant(bad, base).unwrap_err().to_string();
            assert!(e.contains("HH:MM:SS"), "{bad}: {e}");
        }
    }

    #[test]
    fn forms_read_back() {
        let base = TimeBase { origin_ns: 1_795_317_000_000_000_000, zone: Zone::Utc };
        let t = 1_795_317_127_250_000_001;
        let f = instant_forms(t, base);
        assert_eq!(f, "1795317127250000001 ns = 2026-11-22T03:12:07.250000001Z = +127.250000001s");
        for part in f.split(" = ") {
            assert_eq!(parse_instant(part.trim_end_matches(" ns"), base).unwrap(), t, "{part}");
        }
    }
}
