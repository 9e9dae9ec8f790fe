//! The periodic terminal summary of a live run: top threads by CPU and by I/O over the
//! last N seconds, busiest event names, and the pipeline's counters (events, drops,
//! lag). Read from the live cube under its read lock.

use cube::cli::QueryArgs;
use cube::Cube;

use crate::pipeline::Stats;

/// The top `k` rows of `metric` by `by` over the last `last_s` s, and the span the
/// cube answered for (the tilted frame's precision for that age), s.
fn top(cube: &Cube, metric: &str, by: &str, last_s: u64, k: usize) -> (Vec<(String, f64)>, f64) {
    let a = QueryArgs { metric: metric.into(), last: Some(format!("{last_s}s")), by: vec![by.into()], top: Some(k), ..Default::default() };
    let Ok(req) = a.to_request(cube) else { return (Vec::new(), 0.0) };
    let Ok(r) = cube.query(&req) else { return (Vec::new(), 0.0) };
    let Some(w) = r.windows.first() else { return (Vec::new(), 0.0) };
    (w.rows.iter().filter(|r| r.value != 0.0).map(|r| (r.group.join("/"), r.value)).collect(), w.end_ns.saturating_sub(w.begin_ns) as f64 / 1e9)
}

/// The summary text: pipeline counters, then the top `k` rows of CPU time, bytes read
/// and written (by thread) and events (by name) over the last `last_s` seconds of
/// stream time. Metrics the cube lacks or that are empty are left out.
pub fn render(cube: &Cube, st: &Stats, last_s: u64, k: usize) -> String {
    let mut s = format!(
        "events {} | dropped {} ({} packets) | late {} | tracer discarded {} lost packets {} | lag {:.3} s (max {:.3}) | backlog max {} | slow batches {}\n",
        st.events,
        st.dropped_events,
        st.dropped_packets,
        st.late_events,
        st.discarded_events,
        st.lost_packets,
        st.lag_last_s,
        st.lag_max_s,
        st.max_backlog,
        st.slow_batches
    );
    for (title, metric, by, unit) in [
        ("CPU time", "cpu_time", "process:tid", 1e-9),
        ("bytes read", "bytes_read", "process:tid", 1.0),
        ("bytes written", "bytes_written", "process:tid", 1.0),
        ("events", "events", "operation:name", 1.0),
    ] {
        let (rows, span) = top(cube, metric, by, last_s, k);
        if rows.is_empty() {
            continue;
        }
        s += &format!("  top {title} (last {last_s} s, answered over {span:.0} s):");
        for (g, v) in rows {
            if unit < 1.0 {
                s += &format!("  {g} {:.3}s", v * unit);
            } else {
                s += &format!("  {g} {v}");
            }
        }
        s.push('\n');
    }
    s
}
