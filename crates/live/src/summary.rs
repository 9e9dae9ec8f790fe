//! The periodic terminal summary of a live run: the pipeline's counters (events, drops,
//! lag), then top threads by CPU and by I/O and the busiest event names over the last
//! N seconds, each table under the time range it covers. Read from the live cube under
//! its read lock. Numbers read as `analyze` and `info` print them (the `analysis`
//! crate's `text` helpers): counts with thousands separators, durations in s / ms /
//! µs, sizes in binary units, times as dates and times of day.

use std::fmt::Write;

use analysis::text::{self, TextStyle};
use cube::cli::QueryArgs;
use cube::Cube;

use crate::pipeline::Stats;

/// A table of the summary: what it ranks, the metric and dimension asked of the cube,
/// the column headers, and how a value reads.
struct Top {
    title: &'static str,
    metric: &'static str,
    by: &'static [&'static str],
    header: [&'static str; 2],
    value: fn(f64) -> String,
}

/// The tables, in the order printed.
const TOPS: [Top; 4] = [
    Top { title: "CPU time", metric: "cpu_time", by: &["process:name", "process:tid"], header: ["Thread", "CPU time"], value: |v| text::duration(v as u64) },
    Top { title: "bytes read", metric: "bytes_read", by: &["process:name", "process:tid"], header: ["Thread", "Read"], value: |v| text::bytes(v as u64) },
    Top {
        title: "bytes written",
        metric: "bytes_written",
        by: &["process:name", "process:tid"],
        header: ["Thread", "Written"],
        value: |v| text::bytes(v as u64),
    },
    Top { title: "events", metric: "events", by: &["operation:name"], header: ["Event", "Count"], value: |v| text::count(v as u64) },
];

/// Rows of a top list (label, value), and the range the cube answered for, ns.
type Answer = (Vec<(String, f64)>, u64, u64);

/// The non-zero top `k` rows of `metric` by `by` over the last `last_s` s, and the
/// range the cube answered for (the tilted frame's precision for that age), ns.
fn top(cube: &Cube, metric: &str, by: &[&str], last_s: u64, k: usize) -> Option<Answer> {
    let by = by.iter().map(|b| b.to_string()).collect();
    let a = QueryArgs { metric: metric.into(), last: Some(format!("{last_s}s")), by, top: Some(k), ..Default::default() };
    let r = cube.query(&a.to_request(cube).ok()?).ok()?;
    let w = r.windows.first()?;
    let rows: Vec<(String, f64)> = w.rows.iter().filter(|r| r.value != 0.0).map(|r| (label(&r.group), r.value)).collect();
    (!rows.is_empty()).then_some((rows, w.begin_ns, w.end_ns))
}

/// A group as a row label: a thread as `name (tid)`, as `analyze` shows it.
fn label(group: &[String]) -> String {
    match group {
        [name, tid] => format!("{name} ({tid})"),
        _ => group.join("/"),
    }
}

/// A lag in seconds as a duration (a negative lag, from clocks apart, keeps its sign).
fn lag(s: f64) -> String {
    let d = text::duration((s.abs() * 1e9).round() as u64);
    if s < 0.0 {
        format!("-{d}")
    } else {
        d
    }
}

/// The summary text: pipeline counters, then the top `k` rows of CPU time, bytes read
/// and written (by thread) and events (by name) over the last `last_s` seconds of
/// stream time. Metrics the cube lacks or that are empty are left out.
pub fn render(cube: &Cube, st: &Stats, last_s: u64, k: usize, style: TextStyle) -> String {
    let mut s = String::new();
    // (Writing to a String cannot fail.)
    let _ = write_summary(&mut s, cube, st, last_s, k, style);
    s
}

fn write_summary(w: &mut String, cube: &Cube, st: &Stats, last_s: u64, k: usize, style: TextStyle) -> std::fmt::Result {
    let last = st.last_ts.map_or_else(|| "-".to_string(), |t| text::date_time(t, style));
    writeln!(
        w,
        "events: {} (last at {last}) | packets: {} ({}) | dropped: {} events ({} packets) | late: {} | tracer discarded: {} | lost packets: {}",
        text::count(st.events),
        text::count(st.packets),
        text::bytes(st.bytes),
        text::count(st.dropped_events),
        text::count(st.dropped_packets),
        text::count(st.late_events),
        text::count(st.discarded_events),
        text::count(st.lost_packets),
    )?;
    writeln!(
        w,
        "lag: {} (max {}) | backlog max: {} messages | slow batches: {}",
        lag(st.lag_last_s),
        lag(st.lag_max_s),
        text::count(st.max_backlog as u64),
        text::count(st.slow_batches)
    )?;
    writeln!(w)?;
    let mut range = None;
    for t in &TOPS {
        let Some((rows, begin, end)) = top(cube, t.metric, t.by, last_s, k) else { continue };
        // The range the cube answered for (`Timerange`, as `analyze` prints it), when
        // it is not the one of the table above.
        if range.replace((begin, end)) != Some((begin, end)) {
            text::time_range(w, Some(begin as i64), Some(end as i64), style)?;
            writeln!(w)?;
        }
        let mut table = text::table(&t.header, &[1]);
        for (g, v) in rows {
            table.add_row(vec![g, (t.value)(v)]);
        }
        text::section(w, &format!("Top {} (last {last_s} s)", t.title), table)?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The summary of a synthetic kernel trace's cube, with set counters, exactly.
    #[test]
    fn summary_reads_as_analyze_prints() {
        let dir = tempfile::tempdir().unwrap();
        let cfg = synth::SynthConfig { cpus: 2, events: 20_000, seed: 7, packet_size: 4096, ..Default::default() };
        let s = synth::generate(&cfg, dir.path()).unwrap();
        let opts = cube_feed::BuildOptions { threads: 1, ..Default::default() };
        let (cube, _) = cube_feed::build_from_trace(&s.trace_dir, &opts).unwrap();
        let st = Stats {
            events: 1_234_567,
            packets: 2_048,
            bytes: 8 << 20,
            dropped_events: 12_000,
            dropped_packets: 3,
            discarded_events: 1_500,
            lost_packets: 2,
            lag_last_s: 0.012_345_678,
            lag_max_s: 1.5,
            max_backlog: 1_024,
            slow_batches: 7,
            last_ts: Some(1_704_070_801_123_456_789),
            ..Default::default()
        };
        let got = render(&cube, &st, 10, 3, TextStyle { gmt: true });
        assert_eq!(got, GOLDEN, "got:\n{got}");
    }

    const GOLDEN: &str = "\
events: 1,234,567 (last at 2024-01-01 01:00:01.123456789) | packets: 2,048 (8.00 MiB) | dropped: 12,000 events (3 packets) | late: 0 | tracer discarded: 1,500 | lost packets: 2
lag: 12.346 ms (max 1.500 s) | backlog max: 1,024 messages | slow batches: 7

Timerange: [2024-01-01 01:00:00.000000000, 2024-01-01 01:00:01.000000000] (1.000 s)

Top CPU time (last 10 s)
 Thread            CPU time
 python3 (1017)   31.875 ms
 postgres (1013)  24.489 ms
 python3 (1001)   22.359 ms

Top bytes read (last 10 s)
 Thread                  Read
 postgres (1013)     1.22 MiB
 backup (1025)    1013.33 KiB
 postgres (1000)   954.99 KiB

Top bytes written (last 10 s)
 Thread              Written
 backup (1025)      1.67 MiB
 postgres (1013)  968.66 KiB
 nginx (1002)     781.33 KiB

Top events (last 10 s)
 Event               Count
 sched_switch        2,614
 syscall_entry_read  2,547
 syscall_exit_read   2,539

";

    #[test]
    fn a_negative_lag_keeps_its_sign() {
        assert_eq!(lag(-0.0025), "-2.500 ms");
        assert_eq!(lag(90.0), "90.000 s");
    }
}
