//! The syscall report as LAMI tables and as readable text.

use std::collections::BTreeMap;

use super::{SyscallOwnerRow, SyscallReport};

/// The `returns` map as lttng-analyses prints it: `{'success': N, 'EAGAIN': M}`.
fn returns_text(r: &BTreeMap<String, u64>) -> String {
    let parts: Vec<String> = r.iter().map(|(k, n)| format!("'{k}': {n}")).collect();
    format!("{{{}}}", parts.join(", "))
}

/// The file column of a call, as lttng-iolatencytop writes it: `/etc/passwd (fd=3)`,
/// `unknown (fd=4)` when the fd's file is not known, empty when the call worked on no
/// fd; a call from one fd to another: `/a (fd=3) -> socket (fd=4)`.
fn file_text(l: &super::LongCallRow) -> String {
    let one = |p: &Option<String>, fd: Option<i32>| match (p, fd) {
        (p, Some(fd)) => format!("{} (fd={fd})", p.as_deref().unwrap_or("unknown")),
        (Some(p), None) => p.clone(),
        (None, None) => String::new(),
    };
    match l.out_fd {
        Some(_) => format!("{} -> {}", one(&l.path, l.fd), one(&l.out_path, l.out_fd)),
        None => one(&l.path, l.fd),
    }
}

/// LAMI 1.0 results in the manner of `lttng-syscallstats-mi`: one per-tid table per
/// thread, then the total per thread, then the longest calls (`top-syscall`).
pub fn lami(r: &SyscallReport) -> Vec<serde_json::Value> {
    use serde_json::json;
    let tr = crate::output::range(r.begin_ns, r.end_ns);
    let dur = |v: f64| json!({"class":"duration","value":v});
    let mut out: Vec<serde_json::Value> = r
        .threads
        .iter()
        .map(|t| {
            let tid = t.tid.unwrap_or(0);
            let title = format!("System call statistics [{} ({}, TID: {tid})]", t.comm, t.pid.unwrap_or(tid));
            let data: Vec<_> = t
                .calls
                .iter()
                .map(|c| {
                    let l = &c.latency;
                    json!([{"class":"syscall","name":c.name},{"class":"number","value":l.count},dur(l.min_ns as f64),dur(l.mean_ns),dur(l.max_ns as f64),
                        l.stdev_ns.map_or(json!({"class":"unknown"}), dur),{"class":"string","value":returns_text(&c.returns)}])
                })
                .collect();
            json!({"class":{"inherit":"per-tid","title":title},"time-range":tr,"data":data})
        })
        .collect();
    let total: Vec<_> =
        r.threads.iter().map(|t| json!([{"class":"process","name":t.comm,"pid":t.pid,"tid":t.tid},{"class":"number","value":t.count}])).collect();
    out.push(json!({"class":"total","time-range":tr,"data":total}));
    // The longest calls, as lttng-iolatencytop-mi's `top-syscall` table (its size
    // column apart; path and fd `unknown` where the call worked on no known file or fd),
    // with the return value.
    let unknown = json!({"class":"unknown"});
    let top: Vec<_> = r
        .longest
        .iter()
        .map(|l| {
            json!([crate::output::range(Some(l.begin_ns), Some(l.end_ns)),dur(l.duration_ns as f64),{"class":"syscall","name":l.name},
                {"class":"process","name":l.comm,"pid":l.pid,"tid":l.tid},
                l.path.as_ref().map_or(unknown.clone(), |p| json!({"class":"path","path":p})),l.fd.map_or(unknown.clone(), |fd| json!({"class":"fd","fd":fd})),
                {"class":"number","value":l.ret}])
        })
        .collect();
    out.push(json!({"class":"top-syscall","time-range":tr,"data":top}));
    out
}

/// Readable tables in the manner of `lttng-syscallstats` (durations in µs), per thread
/// then per process, and the longest calls.
pub fn write_text(r: &SyscallReport, w: &mut impl std::fmt::Write) -> std::fmt::Result {
    let us = |ns: f64| ns / 1000.0;
    let owners = |w: &mut dyn std::fmt::Write, title: &str, rows: &[SyscallOwnerRow]| -> std::fmt::Result {
        writeln!(w, "{title} (usec)")?;
        for o in rows {
            let who = match o.tid {
                Some(t) => format!("{} ({}, TID: {t})", o.comm, o.pid.unwrap_or(t)),
                None => format!("{} (PID: {})", o.comm, o.pid.unwrap_or(0)),
            };
            writeln!(w, "{who:<40} {:>12} {:>14} {:>14} {:>14} {:>10}  Return values", "Count", "Min", "Average", "Max", "Stdev")?;
            for c in &o.calls {
                let l = &c.latency;
                let sd = l.stdev_ns.map_or("?".to_string(), |s| format!("{:.3}", us(s)));
                let name = format!(" - {}", c.name);
                writeln!(
                    w,
                    "{name:<40} {:>12} {:>14.3} {:>14.3} {:>14.3} {sd:>10}  {}",
                    l.count,
                    us(l.min_ns as f64),
                    us(l.mean_ns),
                    us(l.max_ns as f64),
                    returns_text(&c.returns)
                )?;
            }
            writeln!(w, "{:<40} {:>12}", "Total:", o.count)?;
            writeln!(w, "{}", "-".repeat(113))?;
        }
        Ok(())
    };
    owners(w, "Per-TID syscalls statistics", &r.threads)?;
    owners(w, "\nPer-process syscalls statistics", &r.processes)?;
    writeln!(w, "\nTotal syscalls: {}", r.count)?;
    for (title, rows) in [("Longest syscalls", &r.longest), ("Log", &r.log)] {
        if rows.is_empty() {
            continue;
        }
        writeln!(w, "\n{title} (usec)\n{:<20} {:<40} {:>14}  {:<20} {:>8}  File", "Begin (ns)", "Thread", "Duration", "Syscall", "Return")?;
        for l in rows.iter() {
            let who = format!("{} ({}, TID: {})", l.comm, l.pid.unwrap_or(l.tid), l.tid);
            let line = format!("{:<20} {who:<40} {:>14.3}  {:<20} {:>8}  {}", l.begin_ns, us(l.duration_ns as f64), l.name, l.ret, file_text(l));
            writeln!(w, "{}", line.trim_end())?;
        }
    }
    crate::output::write_freq(w, &r.freq)
}
