//! `tracecube info`: what a trace holds — traces, metadata, env, clocks, streams,
//! packets, event counts, time range, discarded events and lost packets.

use std::path::PathBuf;

use ::cube::time::{instant_forms, TimeBase, Zone};
use analysis::text;
use anyhow::Result;
use ctf::ir::{EnvValue, MetadataFormat};
use ctf::stream::{Item, StreamCursor};

/// Arguments of `info`.
#[derive(clap::Args)]
pub struct InfoArgs {
    /// Trace directory.
    pub trace: PathBuf,
    /// Show dates and times of day in UTC, not local time.
    #[arg(long)]
    pub gmt: bool,
}

#[derive(Default)]
struct StreamStats {
    events: u64,
    discarded: u64,
    lost: u64,
    first: Option<i64>,
    last: Option<i64>,
}

/// Runs `info`.
pub fn run(a: InfoArgs) -> Result<()> {
    let set = super::open_traces(&a.trace)?;
    for t in &set.traces {
        let format = match t.format {
            MetadataFormat::TsdlText => "CTF 1.8 TSDL, plain text",
            MetadataFormat::TsdlPacketized => "CTF 1.8 TSDL, packetized",
            MetadataFormat::Ctf2Json => "CTF 2 JSON text sequence",
        };
        let classes: usize = t.class.streams.iter().map(|s| s.event_classes.len()).sum();
        println!("trace {}", t.dir.display());
        println!("  metadata: {format}; byte order {:?}; {} stream class(es), {classes} event class(es)", t.class.byte_order, t.class.streams.len());
        if let Some(u) = t.class.uuid {
            println!("  uuid: {}", uuid_text(&u));
        }
        for (k, v) in &t.class.env {
            match v {
                EnvValue::Int(i) => println!("  env {k} = {i}"),
                EnvValue::Str(s) => println!("  env {k} = {s:?}"),
            }
        }
        for c in &t.class.clocks {
            println!(
                "  clock {}: freq {} Hz, offset {} s + {} cycles{}",
                c.name,
                c.freq,
                c.offset_s,
                c.offset_cycles,
                if c.absolute { ", absolute" } else { "" }
            );
        }
        for w in &t.class.warnings {
            println!("  warning: {w}");
        }
    }
    let mut total = StreamStats::default();
    let mut errors = Vec::new();
    let mut rows = Vec::new();
    for (i, s) in set.streams.iter().enumerate() {
        let mut st = StreamStats::default();
        let mut c = StreamCursor::new(&set, i);
        let err = loop {
            match c.next() {
                Ok(Some(Item::Event(e))) => {
                    st.events += 1;
                    if let Some(ts) = e.ts() {
                        st.first.get_or_insert(ts);
                        st.last = Some(ts);
                    }
                }
                Ok(Some(Item::Discarded(n))) => st.discarded += n.count,
                Ok(Some(Item::LostPackets(n))) => st.lost += n.count,
                Ok(None) => break None,
                Err(e) => break Some(e),
            }
        };
        let files: Vec<String> = {
            let mut f: Vec<String> =
                s.packets.iter().map(|p| set.packet_file(p).1.path.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default()).collect();
            f.dedup();
            f
        };
        let indexed = s.packets.first().is_some_and(|p| set.packet_file(p).1.from_index);
        rows.push((i, s.class_id, s.instance, s.packets.len(), indexed, files.join(","), st.events, st.discarded, st.lost, st.first, st.last));
        if let Some(e) = err {
            errors.push((i, e));
        }
        total.events += st.events;
        total.discarded += st.discarded;
        total.lost += st.lost;
        total.first = match (total.first, st.first) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        };
        total.last = total.last.max(st.last);
    }
    // The stream table: times as offsets from the first event (the origin of `+OFFSET`).
    let origin = total.first.unwrap_or(0);
    let offset = |t: Option<i64>| t.map_or("-".to_string(), |t| format!("+{:.9}s", (t - origin) as f64 / 1e9));
    let mut t = text::table(
        &["stream", "class", "instance", "packets", "files", "events", "discarded", "lost packets", "first", "last", "length"],
        &[0, 1, 2, 3, 5, 6, 7, 8, 9, 10],
    );
    for (i, class, instance, packets, indexed, files, events, discarded, lost, first, last) in rows {
        let length = match (first, last) {
            (Some(a), Some(b)) => text::duration((b - a).max(0) as u64),
            _ => "-".into(),
        };
        t.add_row(vec![
            i.to_string(),
            class.to_string(),
            instance.map_or("-".to_string(), |v| v.to_string()),
            if indexed { format!("{packets} (index)") } else { packets.to_string() },
            files,
            text::count(events),
            text::count(discarded),
            text::count(lost),
            offset(first),
            offset(last),
            length,
        ]);
    }
    let mut out = String::new();
    text::section(&mut out, &format!("streams: {}", set.streams.len()), t)?;
    print!("{out}");
    for (i, e) in &errors {
        println!("stream {i}: error: {e}");
    }
    println!("packets: {}", text::count(set.packet_count() as u64));
    println!("events: {}", text::count(total.events));
    println!("discarded events: {}", text::count(total.discarded));
    println!("lost packets: {}", text::count(total.lost));
    println!("time range: {}", range_text(total.first, total.last));
    if let (Some(first), Some(last)) = (total.first, total.last) {
        // The origin of `+OFFSET`s in every command, and the range in each form
        // `--begin`/`--end`/`--range` read.
        let base = TimeBase { origin_ns: first, zone: if a.gmt { Zone::Utc } else { Zone::Local } };
        println!("  first event (origin of +OFFSET): {}", instant_forms(first, base));
        println!("  last event:                      {}", instant_forms(last, base));
    }
    let errors: Vec<_> = errors.into_iter().map(|(_, e)| e).collect();
    super::fail_on_stream_errors(&errors)
}

fn range_text(first: Option<i64>, last: Option<i64>) -> String {
    match (first, last) {
        (Some(a), Some(b)) => format!("[{a}, {b}] ns ({})", text::duration((b - a).max(0) as u64)),
        _ => "-".into(),
    }
}

fn uuid_text(u: &[u8; 16]) -> String {
    let h: String = u.iter().map(|b| format!("{b:02x}")).collect();
    format!("{}-{}-{}-{}-{}", &h[0..8], &h[8..12], &h[12..16], &h[16..20], &h[20..32])
}
