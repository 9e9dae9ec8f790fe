//! Output formats of a [`Report`].
//!
//! - `json` (ours, stable): the report structs serialized as they are documented in
//!   [`crate::count::CountReport`], [`crate::cpu::CpuReport`], [`crate::io::IoReport`]:
//!   `{"analysis":"count","events":N,"discarded":N,"by_name":{..},"by_cpu":{"CPU":N},"begin_ns":T,"end_ns":T}`,
//!   `{"analysis":"cpu","begin_ns","end_ns","cpus":[{"cpu","busy_ns","usage"}],"threads":[{"tid","pid","comm","cpu_ns","usage","migrations"}],"total_usage"}`,
//!   `{"analysis":"io","begin_ns","end_ns","threads":[{"tid","pid","comm","read_bytes","write_bytes"}],"processes":[..],"files":[{"path","read_bytes","write_bytes"}]}`.
//! - `lami`: LAMI 1.0 results as lttng-analyses' `-mi` writes them (`{"results":[{"class",
//!   "time-range","data"}]}`), so Trace Compass can chart them.
//! - `text`: readable tables in the manner of lttng-analyses.

use serde_json::{json, Value};

use crate::text::TextStyle;
use crate::Report;

/// Our JSON.
pub fn to_json(r: &Report) -> Value {
    match r {
        Report::Count(c) => serde_json::to_value(c),
        Report::Cpu(c) => serde_json::to_value(c),
        Report::Io(c) => serde_json::to_value(c),
        Report::Syscall(c) => serde_json::to_value(c),
        Report::Irq(c) => serde_json::to_value(c),
        Report::Sched(c) => serde_json::to_value(c),
        Report::Block(c) => serde_json::to_value(c),
    }
    .unwrap_or(Value::Null)
}

/// Our JSON as pretty-printed text, written to `w`: the same text as `to_json` gives,
/// written straight from the report (no intermediate `Value`, a few percent of a whole
/// `cpu` run; no intermediate string either, whose growth would touch twice the
/// output's size in fresh memory). The report structs declare their fields in
/// alphabetical order so that their keys come out sorted, as a `Value`'s do.
pub fn write_json(r: &Report, w: impl std::io::Write) -> serde_json::Result<()> {
    match r {
        Report::Count(c) => serde_json::to_writer_pretty(w, c),
        Report::Cpu(c) => serde_json::to_writer_pretty(w, c),
        Report::Io(c) => serde_json::to_writer_pretty(w, c),
        Report::Syscall(c) => serde_json::to_writer_pretty(w, c),
        Report::Irq(c) => serde_json::to_writer_pretty(w, c),
        Report::Sched(c) => serde_json::to_writer_pretty(w, c),
        Report::Block(c) => serde_json::to_writer_pretty(w, c),
    }
}

/// [`write_json`]'s text as a string.
pub fn to_json_string(r: &Report) -> serde_json::Result<String> {
    let mut out = Vec::new();
    write_json(r, &mut out)?;
    // serde_json writes UTF-8 only: no copy is made.
    Ok(String::from_utf8(out).unwrap_or_else(|e| String::from_utf8_lossy(e.as_bytes()).into_owned()))
}

pub(crate) fn range(b: Option<i64>, e: Option<i64>) -> Value {
    json!({"class":"time-range","begin":{"class":"timestamp","value":b},"end":{"class":"timestamp","value":e}})
}

/// LAMI 1.0 results.
pub fn to_lami(r: &Report) -> Value {
    let results = match r {
        Report::Syscall(c) => crate::syscall::lami(c),
        Report::Irq(c) => crate::irq::lami(c),
        Report::Sched(c) => crate::sched::lami(c),
        Report::Block(c) => crate::block::lami(c),
        Report::Count(c) => {
            let tr = range(c.begin_ns, c.end_ns);
            let data: Vec<Value> = c.by_name.iter().map(|(n, v)| json!([{"class":"string","value":n},{"class":"number","value":v}])).collect();
            vec![json!({"class":{"inherit":"event-count","title":"Event count per name"},"time-range":tr,"data":data})]
        }
        Report::Cpu(c) => {
            let tr = range(c.begin_ns, c.end_ns);
            let procs: Vec<Value> = c
                .threads
                .iter()
                .map(|t| json!([{"class":"process","name":t.comm,"tid":t.tid},{"class":"number","value":t.migrations},{"class":"string","value":"[]"},{"class":"ratio","value":t.usage}]))
                .collect();
            let cpus: Vec<Value> = c.cpus.iter().map(|x| json!([{"class":"cpu","id":x.cpu},{"class":"ratio","value":x.usage}])).collect();
            vec![
                json!({"class":"per-process","time-range":tr,"data":procs}),
                json!({"class":"per-cpu","time-range":tr,"data":cpus}),
                json!({"class":"total","time-range":tr,"data":[[{"class":"ratio","value":c.total_usage}]]}),
            ]
        }
        Report::Io(c) => {
            let tr = range(c.begin_ns, c.end_ns);
            let mut out = Vec::new();
            for (read, word) in [(true, "read"), (false, "written")] {
                let mut th: Vec<_> = c.threads.iter().collect();
                th.sort_by_key(|t| std::cmp::Reverse(if read { t.read_bytes } else { t.write_bytes }));
                let data: Vec<Value> = th
                    .iter()
                    .map(|t| {
                        let v = if read { t.read_bytes } else { t.write_bytes };
                        let mut p = json!({"class":"process","name":t.comm,"tid":t.tid});
                        if let Some(pid) = t.pid {
                            p["pid"] = json!(pid);
                        }
                        json!([p, {"class":"size","value":v}])
                    })
                    .collect();
                out.push(json!({"class":{"inherit":"per-process-top","title":format!("Per-process top I/O operations [{word}]")},"time-range":tr,"data":data}));
            }
            for (read, word) in [(true, "read"), (false, "written")] {
                let mut fs: Vec<_> = c.files.iter().collect();
                fs.sort_by_key(|f| std::cmp::Reverse(if read { f.read_bytes } else { f.write_bytes }));
                let data: Vec<Value> = fs
                    .iter()
                    .map(|f| json!([{"class":"path","path":f.path},{"class":"size","value":if read { f.read_bytes } else { f.write_bytes }}]))
                    .collect();
                out.push(json!({"class":{"inherit":"per-file-top","title":format!("Per-file top I/O operations [{word}]")},"time-range":tr,"data":data}));
            }
            out
        }
    };
    json!({ "results": results })
}

/// Readable tables in the manner of lttng-analyses ([`crate::text`] for count, cpu
/// and io), written to `w`.
pub fn write_text(r: &Report, w: &mut impl std::fmt::Write, style: TextStyle) -> std::fmt::Result {
    match r {
        Report::Syscall(c) => crate::syscall::write_text(c, w)?,
        Report::Irq(c) => crate::irq::write_text(c, w)?,
        Report::Sched(c) => crate::sched::write_text(c, w)?,
        Report::Block(c) => crate::block::write_text(c, w)?,
        Report::Count(c) => crate::text::write_count(w, c, style)?,
        Report::Cpu(c) => crate::text::write_cpu(w, c, style)?,
        Report::Io(c) => crate::text::write_io(w, c, style)?,
    }
    Ok(())
}

/// A latency histogram (`--freq`) as text, µs, when there is one.
pub(crate) fn write_freq(w: &mut impl std::fmt::Write, freq: &[crate::latency::Bucket]) -> std::fmt::Result {
    if freq.is_empty() {
        return Ok(());
    }
    writeln!(w, "\nLatency distribution (usec)")?;
    let most = freq.iter().map(|b| b.count).max().unwrap_or(0).max(1);
    for b in freq {
        let bar = "#".repeat((b.count * 40 / most) as usize);
        writeln!(w, "{:>14.3} {:>14.3} {:>10}  {bar}", b.lo_ns / 1000.0, b.hi_ns / 1000.0, b.count)?;
    }
    Ok(())
}

/// [`write_text`]'s text written to `w` as it is made, a line at a time (no string
/// of the whole text: a large trace's runs to tens of megabytes of fresh memory).
pub fn write_text_io(r: &Report, w: impl std::io::Write, style: TextStyle) -> std::io::Result<()> {
    /// A `fmt::Write` over an `io::Write`, keeping the first error.
    struct Adapter<W> {
        w: W,
        error: Option<std::io::Error>,
    }
    impl<W: std::io::Write> std::fmt::Write for Adapter<W> {
        fn write_str(&mut self, s: &str) -> std::fmt::Result {
            self.w.write_all(s.as_bytes()).map_err(|e| {
                self.error = Some(e);
                std::fmt::Error
            })
        }
    }
    let mut a = Adapter { w, error: None };
    match write_text(r, &mut a, style) {
        Ok(()) => Ok(()),
        Err(_) => Err(a.error.unwrap_or_else(|| std::io::Error::other("formatting failed"))),
    }
}

/// [`write_text`]'s text as a string.
/// (`analyze` writes its text with [`write_text_io`] instead, a line at a time.)
pub fn to_text(r: &Report) -> String {
    let mut out = String::new();
    // Writing into a string cannot fail.
    let _ = write_text(r, &mut out, TextStyle::default());
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Text written to an `io::Write` is the text [`to_text`] makes; a writer that
    /// fails gives its error back.
    #[test]
    fn text_written_to_a_writer_is_the_string_and_errors_come_back() {
        use crate::io::{FileIoRow, IoReport, ProcessIoRow, ThreadIoRow};
        let r = Report::Io(IoReport {
            analysis: "io",
            begin_ns: Some(1),
            end_ns: Some(9),
            files: vec![FileIoRow { path: "/tmp/é".into(), read_bytes: 5, write_bytes: 0 }],
            processes: vec![ProcessIoRow {
                pid: 7,
                comm: "a".into(),
                read_bytes: 5,
                write_bytes: 3,
                disk_read_bytes: 5,
                disk_write_bytes: 0,
                net_read_bytes: 0,
                net_write_bytes: 3,
                other_read_bytes: 0,
                other_write_bytes: 0,
            }],
            threads: vec![ThreadIoRow { tid: 8, pid: Some(7), comm: "a".into(), read_bytes: 5, write_bytes: 3 }],
            transfers: Vec::new(),
        });
        let mut out = Vec::new();
        write_text_io(&r, &mut out, TextStyle::default()).expect("writes");
        assert_eq!(String::from_utf8(out).expect("UTF-8"), to_text(&r));
        assert!(to_text(&r).contains("  5 B      3 B  ████████████████████  a (8)           7\n"), "{}", to_text(&r));
        struct Full;
        impl std::io::Write for Full {
            fn write(&mut self, _: &[u8]) -> std::io::Result<usize> {
                Err(std::io::Error::new(std::io::ErrorKind::StorageFull, "full"))
            }
            fn flush(&mut self) -> std::io::Result<()> {
                Ok(())
            }
        }
        assert_eq!(write_text_io(&r, Full, TextStyle::default()).map_err(|e| e.kind()), Err(std::io::ErrorKind::StorageFull));
    }
}
