//! The LAMI 1.0 handshake of an analysis (the protocol of lttng-analyses' `*-mi`
//! commands, which Trace Compass's external-analysis runner speaks): the MI version an
//! analysis speaks, and its metadata, which declares the table classes its results
//! ([`crate::output::to_lami`]) use, with the class of every column.
//!
//! Trace Compass calls the command with `--mi-version`, then `--metadata`, then with
//! `--begin NS --end NS [--limit N] TRACE` for the results. The table classes and
//! column classes are those of lttng-analyses 0.6.1 where an analysis has a twin there
//! (`cputop`, `iousagetop`), so that views made for those results show ours.

use serde_json::{json, Value};

use crate::AnalysisKind;

/// What `--mi-version` prints: the LAMI version, as lttng-analyses prints it.
pub const MI_VERSION: &str = "1.0";

/// A column of a table class: its title, its LAMI class and an optional unit.
fn col(title: &str, class: &str) -> Value {
    json!({"title": title, "class": class})
}

/// A number column with a unit.
fn number(title: &str, unit: &str) -> Value {
    json!({"title": title, "class": "number", "unit": unit})
}

/// The table classes of `kind`'s results, by name.
fn table_classes(kind: AnalysisKind) -> Value {
    match kind {
        AnalysisKind::Count => json!({
            "event-count": {"title": "Event count per name", "column-descriptions": [col("Event name", "string"), number("Count", "events")]},
        }),
        AnalysisKind::Cpu => json!({
            "per-process": {"title": "Per-TID top CPU usage", "column-descriptions": [
                col("Process", "process"), number("Migration count", "migrations"), col("Chronological priorities", "string"), col("CPU usage", "ratio")]},
            "per-cpu": {"title": "Per-CPU top CPU usage", "column-descriptions": [col("CPU", "cpu"), col("CPU usage", "ratio")]},
            "total": {"title": "Total CPU usage", "column-descriptions": [col("CPU usage", "ratio")]},
        }),
        AnalysisKind::Io => json!({
            "per-process-top": {"title": "Per-process top I/O operations", "column-descriptions": [col("Process", "process"), col("Total operations size", "size")]},
            "per-file-top": {"title": "Per-file top I/O operations", "column-descriptions": [col("File path/info", "path"), col("Operations size", "size")]},
        }),
        AnalysisKind::Syscall => json!({
            "per-tid": {"title": "System call statistics", "column-descriptions": latency_columns(col("System call", "syscall"), "calls", &[col("Return values", "string")])},
            "total": {"title": "Per-TID system call statistics", "column-descriptions": [col("Process", "process"), number("Count", "calls")]},
            "top-syscall": {"title": "Top system call latencies", "column-descriptions": [
                col("Call time range", "time-range"), col("Call duration", "duration"), col("System call", "syscall"), col("Process", "process"),
                col("File path", "path"), col("File descriptor", "fd"), col("Return value", "number")]},
        }),
        AnalysisKind::Irq => {
            let raise = [
                number("Raise count", "raises"),
                col("Minimum raise latency", "duration"),
                col("Average raise latency", "duration"),
                col("Maximum raise latency", "duration"),
                col("Raise latency standard deviation", "duration"),
            ];
            json!({
                "hard-stats": {"title": "Hardware interrupt statistics", "column-descriptions": latency_columns(col("IRQ", "irq"), "interrupts", &[])},
                "soft-stats": {"title": "Software interrupt statistics", "column-descriptions": latency_columns(col("IRQ", "irq"), "interrupts", &raise)},
            })
        }
        AnalysisKind::Sched => json!({
            "per_tid_stats": {"title": "Per-TID wake-up latency statistics", "column-descriptions": latency_columns(col("Process", "process"), "wake-ups", &[col("Priorities", "string")])},
        }),
        AnalysisKind::Block => json!({
            "block-latency-stats": {"title": "Block request latency statistics", "column-descriptions": latency_columns(col("Disk or process", "string"), "requests",
                &[col("Read size", "size"), col("Written size", "size")])},
        }),
    }
}

/// The columns of a latency statistics row: what is measured (`key`), count (in
/// `unit`), minimum, mean, maximum and standard deviation, then `rest`.
fn latency_columns(key: Value, unit: &str, rest: &[Value]) -> Vec<Value> {
    let mut cols =
        vec![key, number("Count", unit), col("Minimum duration", "duration"), col("Average duration", "duration"), col("Maximum duration", "duration")];
    cols.push(col("Duration standard deviation", "duration"));
    cols.extend_from_slice(rest);
    cols
}

/// The title, description and tags of `kind`.
fn about(kind: AnalysisKind) -> (&'static str, &'static str, &'static [&'static str]) {
    match kind {
        AnalysisKind::Count => ("Event count", "Events per name over the time range", &["count"]),
        AnalysisKind::Cpu => ("Top CPU usage", "Per-TID, per-CPU, and total top CPU usage", &["linux-kernel", "cpu", "top"]),
        AnalysisKind::Io => ("I/O usage", "Per-process and per-file top I/O usage by read and write system calls", &["linux-kernel", "io", "top"]),
        AnalysisKind::Syscall => ("System call statistics", "Per-TID and global system call statistics", &["linux-kernel", "syscall", "stats"]),
        AnalysisKind::Irq => ("Interrupt statistics", "Hardware and software interrupt durations and raise latencies", &["linux-kernel", "irq", "stats"]),
        AnalysisKind::Sched => ("Scheduling statistics", "Wake-up latency statistics per thread", &["linux-kernel", "sched", "stats"]),
        AnalysisKind::Block => ("Block I/O latency", "Block request latency per disk and per process", &["linux-kernel", "io", "block", "stats"]),
    }
}

/// What `--metadata` prints for `kind`: the LAMI 1.0 metadata object.
pub fn metadata(kind: AnalysisKind) -> Value {
    let (title, description, tags) = about(kind);
    let mut version = env!("CARGO_PKG_VERSION").split('.').map(|p| p.parse::<u64>().unwrap_or(0));
    json!({
        "mi-version": {"major": 1, "minor": 0},
        "version": {"major": version.next(), "minor": version.next(), "patch": version.next(), "extra": ""},
        "title": format!("tracecube: {title}"),
        "description": description,
        "authors": ["The tracecube developers"],
        "url": env!("CARGO_PKG_REPOSITORY"),
        "tags": tags.iter().copied().chain(["tracecube"]).collect::<Vec<_>>(),
        "table-classes": table_classes(kind),
    })
}
