//! Readable text for count, cpu and io, and the table helpers of the latency
//! analyses' text: sizes in binary units, durations in
//! s / ms / µs, CPU time as a share and a time, the time range analysed as dates
//! (lttng-analyses' `Timerange`), a bar per row, and tables laid out by `comfy-table`
//! whatever the width of a name or path. JSON, LAMI and Parquet keep exact integers.

use std::fmt::Write;

use comfy_table::{presets, CellAlignment, Table};

use crate::count::CountReport;
use crate::cpu::CpuReport;
use crate::io::IoReport;
use crate::latency::DurationRow;

/// How text shows times of day.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct TextStyle {
    /// Dates and times of day in UTC (`--gmt`) rather than the local time zone.
    pub gmt: bool,
}

/// `bytes` in binary units: `512 B`, `1.17 MiB`.
pub fn bytes(v: u64) -> String {
    const UNITS: [&str; 6] = ["B", "KiB", "MiB", "GiB", "TiB", "PiB"];
    let (mut x, mut i) = (v as f64, 0);
    while x >= 1024.0 && i < UNITS.len() - 1 {
        x /= 1024.0;
        i += 1;
    }
    if i == 0 {
        format!("{v} B")
    } else {
        format!("{x:.2} {}", UNITS[i])
    }
}

/// A duration in the unit that reads best: `1.234 s`, `56.789 ms`, `12.345 µs`, `89 ns`.
pub fn duration(ns: u64) -> String {
    let x = ns as f64;
    match ns {
        0..1_000 => format!("{ns} ns"),
        1_000..1_000_000 => format!("{:.3} µs", x / 1e3),
        1_000_000..1_000_000_000 => format!("{:.3} ms", x / 1e6),
        _ => format!("{:.3} s", x / 1e9),
    }
}

/// A bar of up to `width` blocks for `v` out of `max`, as lttng-analyses draws them.
pub fn bar(v: f64, max: f64, width: usize) -> String {
    let n = if max > 0.0 { ((v / max) * width as f64).round() as usize } else { 0 };
    "█".repeat(n.min(width))
}

/// `ns` since the epoch as a date and time of day with nanoseconds.
pub fn date_time(ns: i64, style: TextStyle) -> String {
    let t = chrono::DateTime::from_timestamp_nanos(ns);
    if style.gmt {
        t.format("%Y-%m-%d %H:%M:%S%.9f").to_string()
    } else {
        t.with_timezone(&chrono::Local).format("%Y-%m-%d %H:%M:%S%.9f").to_string()
    }
}

/// The `Timerange: [begin, end] (length)` line, when the range is known.
pub fn time_range(w: &mut impl Write, begin: Option<i64>, end: Option<i64>, style: TextStyle) -> std::fmt::Result {
    if let (Some(b), Some(e)) = (begin, end) {
        writeln!(w, "Timerange: [{}, {}] ({})", date_time(b, style), date_time(e, style), duration(e.saturating_sub(b).max(0) as u64))?;
    }
    Ok(())
}

/// `n` with thousands separators: `28,325`.
pub fn count(n: u64) -> String {
    let digits = n.to_string();
    let mut s = String::with_capacity(digits.len() + digits.len() / 3);
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            s.push(',');
        }
        s.push(c);
    }
    s
}

/// A table with a header, no borders, numeric columns (those in `right`) aligned right.
pub fn table(header: &[&str], right: &[usize]) -> Table {
    let mut t = Table::new();
    t.load_preset(presets::NOTHING).set_header(header.to_vec());
    for &c in right {
        if let Some(col) = t.column_mut(c) {
            col.set_cell_alignment(CellAlignment::Right);
        }
    }
    t
}

/// The columns of [`duration_cells`].
pub const DURATION_COLUMNS: [&str; 5] = ["Count", "Min", "Avg", "Max", "Stdev"];

/// A latency row's cells: the count, then the shortest, mean, longest and standard
/// deviation in µs with three decimals (`?` for the deviation of fewer than two).
pub fn duration_cells(l: &DurationRow) -> [String; 5] {
    let us = |ns: f64| format!("{:.3}", ns / 1000.0);
    [l.count.to_string(), us(l.min_ns as f64), us(l.mean_ns), us(l.max_ns as f64), l.stdev_ns.map_or_else(|| "?".into(), us)]
}

/// A latency row of a [`duration_table`]: `label`, then [`duration_cells`].
pub fn duration_row(label: String, l: &DurationRow) -> Vec<String> {
    let mut cells = vec![label];
    cells.extend(duration_cells(l));
    cells
}

/// A table of latency rows: the column `label`, the [`DURATION_COLUMNS`], then the
/// columns `more` (all but `label` aligned right).
pub fn duration_table(label: &str, more: &[&str]) -> Table {
    let mut header = vec![label];
    header.extend(DURATION_COLUMNS);
    header.extend(more);
    let right: Vec<usize> = (1..header.len()).collect();
    table(&header, &right)
}

/// A list of occurrences (`--log`, the longest ones): the columns `Begin (ns)` and
/// `Duration (us)` aligned right, then `more`, filled by `row` for each item.
pub fn write_occurrences<T>(w: &mut impl Write, title: &str, items: &[T], more: &[&str], row: impl Fn(&T) -> (i64, u64, Vec<String>)) -> std::fmt::Result {
    if items.is_empty() {
        return Ok(());
    }
    let mut header = vec!["Begin (ns)", "Duration (us)"];
    header.extend(more);
    let mut t = table(&header, &[0, 1]);
    for it in items {
        let (begin, ns, rest) = row(it);
        let mut cells = vec![begin.to_string(), format!("{:.3}", ns as f64 / 1000.0)];
        cells.extend(rest);
        t.add_row(cells);
    }
    section(w, title, t)
}

/// Writes `t` (when it has rows) under `title`, then a blank line.
pub fn section(w: &mut impl Write, title: &str, t: Table) -> std::fmt::Result {
    if t.row_count() == 0 {
        return writeln!(w, "{title}: (none)\n");
    }
    // (No terminal width is set: a long path widens the table, never wraps.)
    writeln!(w, "{title}")?;
    for line in t.lines() {
        writeln!(w, "{}", line.trim_end())?;
    }
    writeln!(w)
}

/// Event counts per name and per CPU.
pub fn write_count(w: &mut impl Write, c: &CountReport, style: TextStyle) -> std::fmt::Result {
    time_range(w, c.begin_ns, c.end_ns, style)?;
    writeln!(w, "Events: {}   Discarded: {}\n", c.events, c.discarded)?;
    let mut names: Vec<(&String, &u64)> = c.by_name.iter().collect();
    names.sort_by(|a, b| b.1.cmp(a.1).then(a.0.cmp(b.0)));
    let max = names.first().map_or(0, |x| *x.1) as f64;
    let mut t = table(&["Count", "", "Event"], &[0]);
    for (n, v) in names {
        t.add_row(vec![v.to_string(), bar(*v as f64, max, 20), n.clone()]);
    }
    section(w, "Per event name", t)?;
    let max = c.by_cpu.values().copied().max().unwrap_or(0) as f64;
    let mut t = table(&["CPU", "Count", ""], &[0, 1]);
    let mut cpus: Vec<(&String, &u64)> = c.by_cpu.iter().collect();
    cpus.sort_by_key(|(k, _)| k.parse::<u64>().unwrap_or(u64::MAX));
    for (k, v) in cpus {
        t.add_row(vec![k.clone(), v.to_string(), bar(*v as f64, max, 20)]);
    }
    section(w, "Per CPU", t)
}

/// CPU usage per thread and per CPU, as lttng-cputop: a share of the range, and time.
pub fn write_cpu(w: &mut impl Write, c: &CpuReport, style: TextStyle) -> std::fmt::Result {
    time_range(w, c.begin_ns, c.end_ns, style)?;
    writeln!(w)?;
    let max = c.threads.iter().map(|t| t.usage).fold(0.0, f64::max);
    let mut t = table(&["Usage", "", "CPU time", "Process (tid)", "pid", "Migrations"], &[0, 2, 4, 5]);
    for x in &c.threads {
        let pid = x.pid.map_or_else(|| "?".to_string(), |p| p.to_string());
        t.add_row(vec![
            format!("{:.2} %", x.usage * 100.0),
            bar(x.usage, max, 20),
            duration(x.cpu_ns),
            format!("{} ({})", x.comm, x.tid),
            pid,
            x.migrations.to_string(),
        ]);
    }
    section(w, "Per-thread CPU usage", t)?;
    let mut t = table(&["CPU", "Usage", "", "Busy"], &[0, 1, 3]);
    for x in &c.cpus {
        t.add_row(vec![x.cpu.to_string(), format!("{:.2} %", x.usage * 100.0), bar(x.usage, 1.0, 20), duration(x.busy_ns)]);
    }
    section(w, "Per-CPU usage", t)?;
    writeln!(w, "Total CPU usage: {:.2} %", c.total_usage * 100.0)
}

/// I/O per thread, process (disk / net / other, as lttng-iousagetop) and file.
pub fn write_io(w: &mut impl Write, c: &IoReport, style: TextStyle) -> std::fmt::Result {
    time_range(w, c.begin_ns, c.end_ns, style)?;
    writeln!(w)?;
    let max = c.threads.iter().map(|t| t.read_bytes + t.write_bytes).max().unwrap_or(0) as f64;
    let mut t = table(&["Read", "Written", "", "Thread (tid)", "pid"], &[0, 1, 4]);
    for x in &c.threads {
        let pid = x.pid.map_or_else(|| "?".to_string(), |p| p.to_string());
        t.add_row(vec![bytes(x.read_bytes), bytes(x.write_bytes), bar((x.read_bytes + x.write_bytes) as f64, max, 20), format!("{} ({})", x.comm, x.tid), pid]);
    }
    section(w, "Per-thread I/O", t)?;
    let mut t = table(
        &["Read", "Written", "Disk read", "Disk written", "Net read", "Net written", "Other read", "Other written", "Process (pid)"],
        &[0, 1, 2, 3, 4, 5, 6, 7],
    );
    for p in &c.processes {
        let mut row: Vec<String> =
            [p.read_bytes, p.write_bytes, p.disk_read_bytes, p.disk_write_bytes, p.net_read_bytes, p.net_write_bytes, p.other_read_bytes, p.other_write_bytes]
                .into_iter()
                .map(bytes)
                .collect();
        row.push(format!("{} ({})", p.comm, p.pid));
        t.add_row(row);
    }
    section(w, "Per-process I/O", t)?;
    let max = c.files.iter().map(|f| f.read_bytes + f.write_bytes).max().unwrap_or(0) as f64;
    let mut t = table(&["Read", "Written", "", "File"], &[0, 1]);
    for f in &c.files {
        t.add_row(vec![bytes(f.read_bytes), bytes(f.write_bytes), bar((f.read_bytes + f.write_bytes) as f64, max, 20), f.path.clone()]);
    }
    section(w, "Per-file I/O", t)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn units_read_as_people_write_them() {
        assert_eq!(bytes(512), "512 B");
        assert_eq!(bytes(1_226_833), "1.17 MiB");
        assert_eq!(bytes(3 << 30), "3.00 GiB");
        assert_eq!(duration(89), "89 ns");
        assert_eq!(duration(12_345), "12.345 µs");
        assert_eq!(duration(56_789_000), "56.789 ms");
        assert_eq!(duration(1_234_000_000), "1.234 s");
        assert_eq!(bar(5.0, 10.0, 20).chars().count(), 10);
        assert_eq!(bar(1.0, 0.0, 20), "");
        assert_eq!(count(0), "0");
        assert_eq!(count(999), "999");
        assert_eq!(count(28_325), "28,325");
        assert_eq!(count(1_234_567), "1,234,567");
    }

    #[test]
    fn latency_tables_stay_aligned_whatever_the_label() {
        let l = DurationRow { count: 3, max_ns: 12_345_678, mean_ns: 2_000.5, min_ns: 1, stdev_ns: None, total_ns: 0 };
        let mut t = duration_table("Process", &["B/s"]);
        t.add_row(["a (1)".to_string()].into_iter().chain(duration_cells(&l)).chain(["7".into()]).collect::<Vec<_>>());
        t.add_row(
            ["a-process-with-a-name-longer-than-any-column (2)".to_string()].into_iter().chain(duration_cells(&l)).chain(["7".into()]).collect::<Vec<_>>(),
        );
        let mut s = String::new();
        section(&mut s, "Per process (usec)", t).unwrap();
        let lines: Vec<&str> = s.lines().collect();
        assert_eq!(lines[0], "Per process (usec)");
        assert!(lines[1].contains("Count") && lines[1].contains("Stdev") && lines[1].ends_with("B/s"), "{s}");
        // The max column (µs, 3 decimals) and the last column end at the same place.
        let end = |l: &str, what: &str| l.find(what).map(|i| i + what.len());
        assert_eq!(end(lines[2], "12345.678"), end(lines[3], "12345.678"), "{s}");
        assert_eq!(lines[2].len(), lines[3].len(), "{s}");
        assert!(lines[2].contains(" ? "), "a deviation of fewer than two is `?`: {s}");
        let mut none = String::new();
        write_occurrences(&mut none, "Log", &[] as &[u8], &[], |_| (0, 0, vec![])).unwrap();
        assert!(none.is_empty());
    }

    #[test]
    fn tables_stay_aligned_whatever_the_path() {
        let mut c =
            IoReport { analysis: "io", begin_ns: None, end_ns: None, files: Vec::new(), processes: Vec::new(), threads: Vec::new(), transfers: Vec::new() };
        for (p, r) in [("/a", 1u64), ("/a/very/long/path/that/is/much/longer/than/any/column/width/you/would/expect/in/a/table", 2 << 20)] {
            c.files.push(crate::io::FileIoRow { path: p.into(), read_bytes: r, write_bytes: 0 });
        }
        let mut s = String::new();
        write_io(&mut s, &c, TextStyle { gmt: true }).unwrap();
        let rows: Vec<&str> = s.lines().skip_while(|l| !l.starts_with("Per-file")).skip(2).take(2).collect();
        // The "Written" column ends at the same place on both rows.
        let end = |l: &str| l.find("0 B").map(|i| i + 3);
        assert_eq!(end(rows[0]), end(rows[1]), "{s}");
        assert!(s.contains("2.00 MiB") && s.contains("1 B"), "{s}");
    }
}
