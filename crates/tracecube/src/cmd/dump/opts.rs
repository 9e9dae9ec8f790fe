//! Options of `print` as Babeltrace 2 takes them: `--names`, `--fields`, the clock's
//! display, the time zone, and the `--begin`/`--end` forms.

use anyhow::{bail, Context, Result};
use ctf::text::num::{civil_from_days, days_from_civil};
use ctf::text::{Fields, Names, TimeFormat};

/// `--names`: which names are shown (Babeltrace 2's forms: `payload` (`args`, `arg`),
/// `context` (`ctx`), `scope`, `header`, `all`, `none`). Listing some hides the others.
pub fn parse_names(s: &str) -> Result<Names> {
    let mut n = Names { header: false, scope: false, context: false, payload: false };
    for part in s.split(',').map(str::trim) {
        match part {
            "payload" | "args" | "arg" => n.payload = true,
            "context" | "ctx" => n.context = true,
            "scope" => n.scope = true,
            "header" => n.header = true,
            "all" => n = Names { header: true, scope: true, context: true, payload: true },
            "none" => n = Names { header: false, scope: false, context: false, payload: false },
            _ => bail!("unknown name {part:?} in --names (payload, context, scope, header, all or none)"),
        }
    }
    Ok(n)
}

/// `--fields`: which header fields are shown (`trace`, `trace:hostname`,
/// `trace:domain`, `trace:procname`, `trace:vpid`, `loglevel`, `emf`, `callsite`,
/// `all`). Listing some hides the others.
pub fn parse_fields(s: &str) -> Result<Fields> {
    let none = Fields { trace: false, hostname: false, domain: false, procname: false, vpid: false, loglevel: false, emf: false };
    let mut f = none;
    for part in s.split(',').map(str::trim) {
        match part {
            "trace" => f.trace = true,
            "trace:hostname" => f.hostname = true,
            "trace:domain" => f.domain = true,
            "trace:procname" => f.procname = true,
            "trace:vpid" => f.vpid = true,
            "loglevel" => f.loglevel = true,
            "emf" => f.emf = true,
            // (No call sites in CTF 1.8 traces: nothing to show.)
            "callsite" => {}
            "all" => f = Fields { trace: true, hostname: true, domain: true, procname: true, vpid: true, loglevel: true, emf: true },
            _ => bail!("unknown field {part:?} in --fields (trace, trace:hostname, trace:domain, trace:procname, trace:vpid, loglevel, emf, callsite or all)"),
        }
    }
    Ok(f)
}

extern "C" {
    fn tzset();
}

/// The local time zone's offset from UTC, in seconds, at `sec` seconds since the
/// epoch (the `TZ` environment variable honoured, as by `localtime_r`).
pub fn local_offset(sec: i64) -> i64 {
    // SAFETY: localtime_r writes only into `tm`, which is ours.
    unsafe {
        let t = sec as libc::time_t;
        let mut tm: libc::tm = std::mem::zeroed();
        if libc::localtime_r(&t, &mut tm).is_null() {
            0
        } else {
            tm.tm_gmtoff as i64
        }
    }
}

/// The time format of the clock options (local time unless `gmt`).
pub fn time_format(seconds: bool, gmt: bool, date: bool) -> TimeFormat {
    if seconds {
        return TimeFormat::Seconds;
    }
    if !gmt {
        // SAFETY: reads TZ once, before any thread is started.
        unsafe { tzset() };
    }
    TimeFormat::Wall { date, utc_offset: if gmt { None } else { Some(local_offset) } }
}

/// A `--begin`/`--end` time: what `analyze` takes (ns from origin, `+OFFSET` from the
/// trace's start), or Babeltrace's `HH:MM:SS[.ns]` (on the day the trace starts) and
/// `YYYY-MM-DD HH:MM:SS[.ns]`, in the time zone the text is shown in (`offset`: `None`
/// for UTC).
pub fn parse_time(s: &str, start: i64, offset: Option<fn(i64) -> i64>) -> Result<i64> {
    let s = s.trim();
    if !s.contains(':') {
        return super::super::analyze::parse_time(s, start);
    }
    let bad = || format!("bad time {s:?}: ns from origin, +OFFSET, HH:MM:SS[.ns] or YYYY-MM-DD HH:MM:SS[.ns]");
    let (date, clock) = match s.split_once(' ') {
        Some((d, c)) => (Some(d), c.trim()),
        None => (None, s),
    };
    let (hms, frac) = clock.split_once('.').unwrap_or((clock, ""));
    let parts: Vec<i64> = hms.split(':').map(|p| p.parse::<i64>()).collect::<std::result::Result<_, _>>().with_context(bad)?;
    let [h, m, sec] = parts[..] else { bail!(bad()) };
    if frac.len() > 9 || !frac.bytes().all(|b| b.is_ascii_digit()) {
        bail!(bad());
    }
    let ns: i64 = if frac.is_empty() { 0 } else { format!("{frac:0<9}").parse().with_context(bad)? };
    let off = |t: i64| offset.map_or(0, |f| f(t));
    let days = match date {
        Some(d) => {
            let ymd: Vec<i64> = d.split('-').map(|p| p.parse::<i64>()).collect::<std::result::Result<_, _>>().with_context(bad)?;
            let [y, mo, da] = ymd[..] else { bail!(bad()) };
            if !(1..=12).contains(&mo) || !(1..=31).contains(&da) {
                bail!(bad());
            }
            days_from_civil(y, mo as u32, da as u32)
        }
        None => {
            let first = start.div_euclid(1_000_000_000);
            let (y, mo, da) = civil_from_days((first + off(first)).div_euclid(86_400));
            days_from_civil(y, mo, da)
        }
    };
    let local = days * 86_400 + h * 3600 + m * 60 + sec;
    let utc = local - off(local - off(local));
    Ok(utc * 1_000_000_000 + ns)
}

/// Whether `name` matches glob `pat` (`*`: any run, `?`: any one character).
pub fn glob(pat: &str, name: &str) -> bool {
    let (p, n): (Vec<char>, Vec<char>) = (pat.chars().collect(), name.chars().collect());
    let (mut pi, mut ni, mut star, mut mark) = (0, 0, None, 0);
    while ni < n.len() {
        if pi < p.len() && (p[pi] == '?' || p[pi] == n[ni]) {
            pi += 1;
            ni += 1;
        } else if pi < p.len() && p[pi] == '*' {
            star = Some(pi);
            mark = ni;
            pi += 1;
        } else if let Some(s) = star {
            pi = s + 1;
            mark += 1;
            ni = mark;
        } else {
            return false;
        }
    }
    p[pi..].iter().all(|c| *c == '*')
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn globs() {
        assert!(glob("sched_*", "sched_switch"));
        assert!(glob("*switch", "sched_switch"));
        assert!(glob("s?hed*", "sched_switch"));
        assert!(!glob("sched_*", "irq_handler_entry"));
        assert!(glob("*", ""));
    }

    #[test]
    fn babeltrace_times() {
        // 2026-11-22 03:12:06 UTC.
        let start = 1_795_317_126_096_664_128;
        assert_eq!(parse_time("03:12:07", start, None).unwrap(), 1_795_317_127_000_000_000);
        assert_eq!(parse_time("2026-11-22 03:12:06.5", start, None).unwrap(), 1_795_317_126_500_000_000);
        assert_eq!(parse_time("+1s", start, None).unwrap(), start + 1_000_000_000);
        assert_eq!(parse_time("42", start, None).unwrap(), 42);
        assert!(parse_time("03:12", start, None).is_err());
    }

    #[test]
    fn names_and_fields() {
        assert_eq!(parse_names("payload").unwrap(), Names { header: false, scope: false, context: false, payload: true });
        assert_eq!(parse_names("all").unwrap(), Names { header: true, scope: true, context: true, payload: true });
        assert!(parse_fields("loglevel").unwrap().loglevel);
        assert!(!parse_fields("loglevel").unwrap().hostname);
        assert!(parse_names("bogus").is_err());
    }
}
