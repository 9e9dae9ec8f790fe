//! Formatting slices of the trace and writing them in order: on the calling thread
//! (`-j 1`), or on N workers whose slices are written as they complete, in slice order,
//! with the delta of each slice's first event fixed against the slice before it.

use std::collections::BTreeMap;
use std::io::Write;
use std::ops::Range;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{mpsc, Condvar, Mutex};

use anyhow::{Context, Result};
use ctf::stream::Item;
use ctf::text::TextWriter;
use ctf::trace::TraceSet;

use super::read::{read_slice, Filter};

/// A slice to format: per stream, a packet range; and its `[lo, hi)` time keys.
pub type SliceSpec = (Vec<(usize, Range<usize>)>, (i64, i64));

/// Output buffers are written out once they hold this much.
const FLUSH: usize = 1 << 20;

/// What each slice is turned into.
pub struct Job<'a> {
    /// The trace set.
    pub set: &'a TraceSet,
    /// What is read.
    pub filter: &'a Filter,
    /// Makes a writer (one per worker).
    pub writer: &'a (dyn Fn() -> TextWriter<'a> + Sync),
    /// Whether notices become Babeltrace's warnings on stderr (text) rather than
    /// JSON lines.
    pub text: bool,
    /// The errors that ended streams, with their stream index (any slice, any thread).
    pub errors: Mutex<Vec<(usize, ctf::error::Error)>>,
}

/// One slice formatted.
#[derive(Default)]
struct Chunk {
    out: Vec<u8>,
    err: Vec<u8>,
    /// Where the first event's line starts, and that event's timestamp.
    first: Option<(usize, Option<i64>)>,
    last_ts: Option<i64>,
    error: Option<anyhow::Error>,
}

/// Formats the items of one slice into `c`, calling `flush` when its buffer is large.
fn format_slice(
    job: &Job<'_>,
    w: &mut TextWriter<'_>,
    chunks: &[(usize, Range<usize>)],
    bounds: (i64, i64),
    c: &mut Chunk,
    flush: &mut dyn FnMut(&mut Chunk) -> Result<()>,
) -> Result<()> {
    let mut errors = Vec::new();
    let r = read_slice::<anyhow::Error>(job.set, chunks, bounds, job.filter, &mut errors, |stream, item, packet| {
        match item {
            Item::Event(e) => {
                let mark = c.out.len();
                if let Err(d) = w.write_event(&mut c.out, e) {
                    // A field that does not decode ends its stream there (the half-written
                    // line taken back); the other streams go on.
                    c.out.truncate(mark);
                    let at = packet;
                    let path = at.map(|p| job.set.packet_file(&p).1.path.clone()).unwrap_or_default();
                    let offset = at.map_or(0, |p| p.info.offset) + d.bit_pos / 8;
                    job.errors.lock().unwrap_or_else(|e| e.into_inner()).push((stream, ctf::error::Error::Stream { path, offset, kind: d.kind }));
                    return Ok(false);
                }
                if c.first.is_none() {
                    c.first = Some((mark, e.ts()));
                }
                c.last_ts = e.ts().or(c.last_ts);
            }
            n if job.text => {
                w.write_notice(&mut c.err, stream, n);
            }
            n => {
                let _ = ctf::dump::write_json(&mut c.out, n);
            }
        }
        if c.out.len() >= FLUSH {
            flush(c)?;
        }
        Ok(true)
    });
    job.errors.lock().unwrap_or_else(|e| e.into_inner()).extend(errors);
    r
}

/// Writes a chunk's text, its first event's delta taken from `prev` (the timestamp of
/// the event before it, in the slice before). Returns the timestamp of its last event.
fn emit(out: &mut dyn Write, c: &Chunk, prev: Option<i64>, text: bool) -> std::io::Result<Option<i64>> {
    std::io::stderr().write_all(&c.err)?;
    const UNKNOWN: &[u8] = b"+?.?????????";
    match c.first {
        Some((at, Some(ts))) if text && prev.is_some() => {
            let line_end = c.out[at..].iter().position(|b| *b == b'\n').map_or(c.out.len(), |n| at + n);
            match c.out[at..line_end].windows(UNKNOWN.len()).position(|w| w == UNKNOWN) {
                Some(p) => {
                    out.write_all(&c.out[..at + p])?;
                    let mut d = Vec::with_capacity(24);
                    TextWriter::push_delta(&mut d, prev, ts);
                    out.write_all(&d)?;
                    out.write_all(&c.out[at + p + UNKNOWN.len()..])?;
                }
                None => out.write_all(&c.out)?,
            }
        }
        _ => out.write_all(&c.out)?,
    }
    Ok(c.last_ts.or(prev))
}

/// Runs `job` over `slices` (each: per-stream packet ranges and `[lo, hi)`) on the
/// calling thread, writing to `out` as it goes.
pub fn serial(job: &Job<'_>, slices: &[SliceSpec], out: &mut dyn Write) -> Result<()> {
    let mut w = (job.writer)();
    let mut c = Chunk { out: Vec::with_capacity(FLUSH + (1 << 16)), ..Chunk::default() };
    for (chunks, bounds) in slices {
        let mut flush = |c: &mut Chunk| -> Result<()> {
            out.write_all(&c.out).context("writing output")?;
            std::io::stderr().write_all(&c.err).context("writing warnings")?;
            c.out.clear();
            c.err.clear();
            Ok(())
        };
        let r = format_slice(job, &mut w, chunks, *bounds, &mut c, &mut flush);
        flush(&mut c)?;
        r?;
    }
    Ok(())
}

/// Runs `job` over `slices` on `workers` threads, writing the slices to `out` in order
/// as they complete; at most `2 × workers` slices are formatted or waiting at a time.
pub fn parallel(job: &Job<'_>, slices: &[SliceSpec], workers: usize, out: &mut dyn Write) -> Result<()> {
    let window = 2 * workers;
    let next = AtomicUsize::new(0);
    let abort = AtomicBool::new(false);
    let written = (Mutex::new(0usize), Condvar::new());
    let (tx, rx) = mpsc::channel::<(usize, Chunk)>();
    std::thread::scope(|scope| -> Result<()> {
        for _ in 0..workers {
            let tx = tx.clone();
            let (next, abort, written) = (&next, &abort, &written);
            scope.spawn(move || {
                let mut w = (job.writer)();
                loop {
                    let i = next.fetch_add(1, Ordering::Relaxed);
                    if i >= slices.len() || abort.load(Ordering::Relaxed) {
                        return;
                    }
                    {
                        let (m, cv) = written;
                        let mut done = m.lock().unwrap_or_else(|e| e.into_inner());
                        while i >= *done + window && !abort.load(Ordering::Relaxed) {
                            done = cv.wait(done).unwrap_or_else(|e| e.into_inner());
                        }
                    }
                    let (chunks, bounds) = &slices[i];
                    let mut c = Chunk::default();
                    // A fresh slice knows no previous event: its first delta is fixed when written.
                    w.set_prev_ts(None);
                    if let Err(e) = format_slice(job, &mut w, chunks, *bounds, &mut c, &mut |_| Ok(())) {
                        c.error = Some(e);
                    }
                    if tx.send((i, c)).is_err() {
                        return;
                    }
                }
            });
        }
        drop(tx);
        let mut pending = BTreeMap::new();
        let mut want = 0;
        let mut prev = None;
        let result = (|| -> Result<()> {
            for (i, c) in rx.iter() {
                pending.insert(i, c);
                while let Some(c) = pending.remove(&want) {
                    prev = emit(out, &c, prev, job.text).context("writing output")?;
                    if let Some(e) = c.error {
                        return Err(e);
                    }
                    want += 1;
                    let (m, cv) = &written;
                    *m.lock().unwrap_or_else(|e| e.into_inner()) = want;
                    cv.notify_all();
                }
            }
            Ok(())
        })();
        if result.is_err() {
            abort.store(true, Ordering::Relaxed);
            written.1.notify_all();
        }
        result
    })
}
