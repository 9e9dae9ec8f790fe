//! `tracecube count`: events per name, counted without merging streams.

use std::collections::BTreeMap;
use std::path::PathBuf;

use anyhow::Result;
use ctf::stream::{Item, StreamCursor};
use ctf::trace::TraceSet;

/// Arguments of `count`.
#[derive(clap::Args)]
pub struct CountArgs {
    /// Trace directory.
    pub trace: PathBuf,
    /// Print counts per event name too.
    #[arg(long)]
    pub by_name: bool,
    /// Count through the time-ordered merge of all streams (as Babeltrace does).
    #[arg(long)]
    pub merged: bool,
    /// Decode nothing: only read every byte of the stream files from memory (the
    /// physical limit that decoding is measured against).
    #[arg(long)]
    pub scan_only: bool,
}

/// Runs `count`.
pub fn run(a: CountArgs) -> Result<()> {
    let set = super::open_traces(&a.trace)?;
    if a.scan_only {
        return scan_only(&set);
    }
    if a.merged {
        return merged(&set);
    }
    let mut total = 0u64;
    let mut discarded = 0u64;
    let mut names: BTreeMap<&str, u64> = BTreeMap::new();
    let mut errors = Vec::new();
    for i in 0..set.streams.len() {
        let mut c = StreamCursor::new(&set, i);
        let mut per_class: Vec<u64> = vec![0; c.stream_plan().events.len()];
        // (A damaged stream counts up to its damage.)
        let (d, _lost) = c.count(&mut per_class).unwrap_or_else(|e| {
            errors.push(e);
            (0, 0)
        });
        discarded += d;
        total += per_class.iter().sum::<u64>();
        for (k, n) in per_class.iter().enumerate() {
            if *n > 0 {
                *names.entry(&c.stream_plan().events[k].name).or_default() += n;
            }
        }
    }
    println!("events: {total}");
    println!("discarded: {discarded}");
    if a.by_name {
        for (n, c) in names {
            println!("{c:>12} {n}");
        }
    }
    super::fail_on_stream_errors(&errors)
}

/// Reads every byte of every stream file (summing 8-byte words so the reads happen).
fn scan_only(set: &TraceSet) -> Result<()> {
    let mut sum = 0u64;
    let mut bytes = 0usize;
    for t in &set.traces {
        for f in &t.files {
            let b: &[u8] = &f.bytes;
            bytes += b.len();
            let (words, rest) = b.split_at(b.len() / 8 * 8);
            sum = words.chunks_exact(8).fold(sum, |s, w| s.wrapping_add(u64::from_le_bytes(w.try_into().unwrap_or_default())));
            sum = rest.iter().fold(sum, |s, x| s.wrapping_add(*x as u64));
        }
    }
    println!("bytes: {bytes} (checksum {sum:x})");
    Ok(())
}

/// Counts events through the merger (time order across streams).
fn merged(set: &TraceSet) -> Result<()> {
    let mut m = ctf::merge::Merger::new(set);
    let (mut events, mut discarded) = (0u64, 0u64);
    let mut errors = Vec::new();
    while let Some(x) = m.next_collecting(&mut errors) {
        match x.item {
            Item::Event(_) => events += 1,
            Item::Discarded(n) => discarded += n.count,
            Item::LostPackets(_) => {}
        }
    }
    println!("events: {events}");
    println!("discarded: {discarded}");
    super::fail_on_stream_errors(&errors)
}
