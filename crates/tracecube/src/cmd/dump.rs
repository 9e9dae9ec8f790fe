//! `tracecube dump` and `tracecube print`.

use std::io::Write;
use std::path::PathBuf;

use anyhow::{Context, Result};
use ctf::dump::{write_json, write_text};
use ctf::merge::Merger;
use ctf::trace::TraceSet;

/// Arguments of `dump`.
#[derive(clap::Args)]
pub struct DumpArgs {
    /// Trace directory (searched recursively for `metadata` files).
    pub trace: PathBuf,
    /// Human-readable text instead of JSON lines (same as `--format text`).
    #[arg(long)]
    pub text: bool,
    /// Output format: json (JSON lines, default), text, or parquet (one table per
    /// event class in the `--output` directory, for DuckDB and friends).
    #[arg(long, default_value = "json")]
    pub format: String,
    /// Output directory of `--format parquet`.
    #[arg(short, long)]
    pub output: Option<PathBuf>,
}

/// Arguments of `print`.
#[derive(clap::Args)]
pub struct PrintArgs {
    /// Trace directory.
    pub trace: PathBuf,
}

impl From<PrintArgs> for DumpArgs {
    fn from(p: PrintArgs) -> Self {
        DumpArgs { trace: p.trace, text: true, format: "text".into(), output: None }
    }
}

/// Runs `dump`: every item in time order to stdout. A stream's decoding error ends
/// that stream there; the others are written to their ends, then the errors are
/// printed and the command fails.
pub fn run(mut a: DumpArgs) -> Result<()> {
    match a.format.as_str() {
        "json" => {}
        "text" => a.text = true,
        "parquet" => return parquet(&a),
        f => anyhow::bail!("unknown format {f:?} (json, text or parquet)"),
    }
    let set = super::open_traces(&a.trace)?;
    let stdout = std::io::stdout();
    let mut w = std::io::BufWriter::with_capacity(1 << 16, stdout.lock());
    let mut merger = Merger::new(&set);
    let mut buf = Vec::with_capacity(1 << 16);
    let mut text = String::new();
    let mut prev = None;
    let mut errors: Vec<ctf::error::Error> = Vec::new();
    let hosts: Vec<Option<String>> = set.traces.iter().map(|t| ctf::dump::host_label(&t.class)).collect();
    let result = (|| -> Result<()> {
        while let Some(mut m) = merger.next_collecting(&mut errors) {
            let stream = m.stream;
            let host = set.streams[stream].packets.first().and_then(|p| hosts[p.trace as usize].as_deref());
            // (An item that fails half-written is taken back: no partial line.)
            let mark = buf.len();
            let r = if a.text {
                if let Some(w) = notice_warning(&set, stream, &m.item) {
                    eprintln!("{w}");
                    continue;
                }
                text.clear();
                let r = write_text(&mut text, &mut m.item, &mut prev, host);
                buf.extend_from_slice(text.as_bytes());
                r
            } else {
                write_json(&mut buf, &mut m.item)
            };
            if let Err(e) = r {
                // A field that does not decode ends its stream there; the others go on.
                buf.truncate(mark);
                drop(m);
                let at = merger.cursor(stream).packet().copied();
                merger.retire(stream);
                let path = at.map(|p| set.packet_file(&p).1.path.clone()).unwrap_or_default();
                errors.push(ctf::error::Error::Stream { path, offset: at.map_or(0, |p| p.info.offset) + e.bit_pos / 8, kind: e.kind });
            }
            if buf.len() > 1 << 15 {
                w.write_all(&buf).context("writing output")?;
                buf.clear();
            }
        }
        Ok(())
    })();
    w.write_all(&buf).context("writing output")?;
    w.flush().context("writing output")?;
    result?;
    super::fail_on_stream_errors(&errors)
}

/// `dump --format parquet`: one Parquet file per event class.
fn parquet(a: &DumpArgs) -> Result<()> {
    let dir = a.output.as_ref().ok_or_else(|| anyhow::anyhow!("--format parquet needs --output DIR (one file per event class)"))?;
    let set = super::open_traces(&a.trace)?;
    let rep = export::events::export_events(&set, dir, export::Format::Parquet)?;
    for (name, path, rows) in &rep.tables {
        eprintln!("{rows:>9} rows  {name}  {}", path.display());
    }
    if rep.lost_values > 0 {
        eprintln!("warning: {} values did not fit their column's type and are null", rep.lost_values);
    }
    Ok(())
}

/// Babeltrace's warning for a discarded-events or lost-packets notice (the text view
/// writes them to stderr, as Babeltrace does).
fn notice_warning(set: &TraceSet, stream: usize, item: &ctf::stream::Item<'_, '_>) -> Option<String> {
    use ctf::dump::clock_text;
    use ctf::stream::Item;
    let (n, what) = match item {
        Item::Discarded(n) => (n, if n.count == 1 { "event" } else { "events" }),
        Item::LostPackets(n) => (n, if n.count == 1 { "packet" } else { "packets" }),
        Item::Event(_) => return None,
    };
    let s = &set.streams[stream];
    let path = s.packets.first().map(|p| set.packet_file(p).1.path.display().to_string()).unwrap_or_default();
    let when = match (n.begin_ns, n.end_ns) {
        (Some(b), Some(e)) => format!(" between [{}] and [{}]", clock_text(b), clock_text(e)),
        _ => String::new(),
    };
    Some(format!(
        "WARNING: Tracer discarded {} {what}{when} within stream \"{path}\" (stream class ID: {}, stream ID: {}).",
        n.count,
        s.class_id,
        s.instance.map_or("-".to_string(), |i| i.to_string())
    ))
}
