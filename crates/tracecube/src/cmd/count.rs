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
}

/// Runs `count`.
pub fn run(a: CountArgs) -> Result<()> {
    let set = TraceSet::open(&a.trace)?;
    let mut total = 0u64;
    let mut discarded = 0u64;
    let mut names: BTreeMap<&str, u64> = BTreeMap::new();
    for i in 0..set.streams.len() {
        let mut c = StreamCursor::new(&set, i);
        let mut per_class: Vec<u64> = vec![0; c.stream_plan().events.len()];
        while let Some(item) = c.next()? {
            match item {
                Item::Event(e) => {
                    total += 1;
                    if a.by_name {
                        let idx = e.class() as *const _ as usize;
                        let base = e.stream_plan().events.as_ptr() as usize;
                        per_class[(idx - base) / std::mem::size_of::<ctf::plan::EventPlan>()] += 1;
                    }
                }
                Item::Discarded(n) => discarded += n.count,
                Item::LostPackets(_) => {}
            }
        }
        for (k, n) in per_class.iter().enumerate() {
            if *n > 0 {
                *names.entry(&c.stream_plan().events[k].name).or_default() += n;
            }
        }
    }
    println!("events: {total}");
    println!("discarded: {discarded}");
    for (n, c) in names {
        println!("{c:>12} {n}");
    }
    Ok(())
}
