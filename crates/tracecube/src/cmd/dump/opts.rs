//! Options of `print` as Babeltrace 2 takes them: `--names`, `--fields`, the clock's
//! display, the time zone, and the `--begin`/`--end` forms.

use anyhow::{bail, Result};
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
    fn names_and_fields() {
        assert_eq!(parse_names("payload").unwrap(), Names { header: false, scope: false, context: false, payload: true });
        assert_eq!(parse_names("all").unwrap(), Names { header: true, scope: true, context: true, payload: true });
        assert!(parse_fields("loglevel").unwrap().loglevel);
        assert!(!parse_fields("loglevel").unwrap().hostname);
        assert!(parse_names("bogus").is_err());
    }
}
