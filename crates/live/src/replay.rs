//! Trace directories as live sources: a finished trace replayed at its own pace
//! (or `speed` times faster, or as fast as possible), and a growing directory followed
//! while a tracer writes it.
//!
//! Both send whole packets in the order a tracer would have closed them (by end
//! time), and, after each packet, a beacon at the beginning of the stream's next
//! packet, so that the pipeline can order events across streams at once.

use std::collections::HashMap;
use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant, SystemTime};

use crossbeam_channel::Sender;
use ctf::trace::TraceSet;

use crate::error::{LiveError, Result};
use crate::msg::Msg;

fn open(path: &Path) -> Result<TraceSet> {
    TraceSet::open(path).map_err(|e| LiveError::Decode { source_name: path.display().to_string(), msg: e.to_string() })
}

fn closed(path: &Path) -> LiveError {
    LiveError::Decode { source_name: path.display().to_string(), msg: "the pipeline stopped".into() }
}

/// What a replay sent.
#[derive(Debug, Clone, Default, serde::Serialize)]
pub struct ReplayReport {
    /// Packets sent.
    pub packets: u64,
    /// Bytes sent.
    pub bytes: u64,
    /// Stream time covered, s.
    pub stream_seconds: f64,
    /// Wall time taken, s.
    pub wall_seconds: f64,
}

/// Replays the trace (set) at `path`: packets in end-time order, paced so that stream
/// time runs `speed` times faster than wall time (`speed <= 0`: no pacing).
pub fn replay(path: &Path, speed: f64, tx: &Sender<Msg>, stop: &AtomicBool) -> Result<ReplayReport> {
    let set = open(path)?;
    let t_wall = Instant::now();
    let mut rep = ReplayReport::default();
    for (ti, t) in set.traces.iter().enumerate() {
        tx.send(Msg::Trace { trace: ti as u64, dir: t.dir.display().to_string() }).map_err(|_| closed(path))?;
        let bytes = std::fs::read(t.dir.join("metadata"))
            .map_err(|source| LiveError::Output { what: format!("reading {}", t.dir.join("metadata").display()), source })?;
        tx.send(Msg::Metadata { trace: ti as u64, bytes }).map_err(|_| closed(path))?;
    }
    // Every packet of every stream, by end time (cycles → ns through its trace's clock).
    let mut all = Vec::new();
    for (si, s) in set.streams.iter().enumerate() {
        let trace = s.packets.first().map(|p| p.trace).unwrap_or(0);
        // Named by its file where it has one (errors then name the file the offsets are
        // in), else by its index.
        let file = |p: &ctf::trace::PacketRef| (p.trace, p.file);
        let one_file = s.packets.first().filter(|f| s.packets.iter().all(|p| file(p) == file(f)));
        let name =
            one_file.and_then(|p| set.packet_file(p).1.path.file_name().map(|n| n.to_string_lossy().into_owned())).unwrap_or_else(|| format!("stream{si}"));
        tx.send(Msg::Stream { stream: si as u64, trace: trace as u64, name }).map_err(|_| closed(path))?;
        for (k, p) in s.packets.iter().enumerate() {
            let conv = set.traces[p.trace as usize].clocks.first().copied();
            let ns = |c: Option<u64>| conv.zip(c).map(|(v, c)| v.to_ns(c));
            all.push((ns(p.info.ts_end).unwrap_or(i64::MIN), si, k));
        }
    }
    all.sort();
    let t0 = all.iter().map(|a| a.0).find(|&t| t != i64::MIN).unwrap_or(0);
    let wall0 = SystemTime::now();
    tx.send(Msg::Pace { t0_ns: t0, wall0, speed }).map_err(|_| closed(path))?;
    // Each stream is known up to its first packet's beginning.
    for (si, s) in set.streams.iter().enumerate() {
        match s.packets.first().and_then(|p| p.info.ts_begin) {
            Some(b) => tx.send(Msg::Beacon { stream: si as u64, ts: b }),
            None if s.packets.is_empty() => tx.send(Msg::StreamEnd { stream: si as u64 }),
            None => Ok(()),
        }
        .map_err(|_| closed(path))?;
    }
    let start = Instant::now();
    for &(t, si, k) in &all {
        if stop.load(Ordering::Relaxed) {
            break;
        }
        if speed > 0.0 && t != i64::MIN {
            let due = Duration::from_secs_f64(((t - t0).max(0) as f64 / 1e9) / speed);
            let el = start.elapsed();
            if due > el {
                std::thread::sleep(due - el);
            }
        }
        let s = &set.streams[si];
        let p = &s.packets[k];
        let (_, file) = set.packet_file(p);
        let a = p.info.offset as usize;
        let b = (a + (p.info.total_bits / 8) as usize).min(file.bytes.len());
        let bytes = file.bytes[a..b].to_vec();
        rep.packets += 1;
        rep.bytes += bytes.len() as u64;
        tx.send(Msg::Packet { stream: si as u64, bytes, ts_end: p.info.ts_end }).map_err(|_| closed(path))?;
        match s.packets.get(k + 1) {
            Some(n) => {
                if let Some(b) = n.info.ts_begin {
                    tx.send(Msg::Beacon { stream: si as u64, ts: b }).map_err(|_| closed(path))?;
                }
            }
            None => tx.send(Msg::StreamEnd { stream: si as u64 }).map_err(|_| closed(path))?,
        }
        rep.stream_seconds = (t - t0).max(0) as f64 / 1e9;
    }
    tx.send(Msg::End).map_err(|_| closed(path))?;
    rep.wall_seconds = t_wall.elapsed().as_secs_f64();
    Ok(rep)
}

/// Options of [`follow_dir`].
#[derive(Debug, Clone)]
pub struct FollowOptions {
    /// How often to look for new packets.
    pub poll: Duration,
    /// End after the directory has not grown for this long (`None`: never).
    pub until_idle: Option<Duration>,
    /// After this long without growth, every stream is taken as caught up.
    pub quiet: Duration,
}

/// Follows a trace directory that a tracer is writing: sends each new complete packet,
/// and new metadata. When nothing grew for `quiet`, every stream is taken as known
/// up to the latest packet end seen (a stream that later delivers older data has those
/// events counted as late).
pub fn follow_dir(path: &Path, opts: &FollowOptions, tx: &Sender<Msg>, stop: &AtomicBool) -> Result<ReplayReport> {
    let t_wall = Instant::now();
    let mut rep = ReplayReport::default();
    // Per trace dir: our id and metadata bytes sent; per stream file: id, bytes sent.
    let mut traces: HashMap<std::path::PathBuf, (u64, usize)> = HashMap::new();
    let mut files: HashMap<std::path::PathBuf, (u64, u64)> = HashMap::new();
    let mut last_growth = Instant::now();
    let mut latest_end: HashMap<u64, u64> = HashMap::new();
    loop {
        if stop.load(Ordering::Relaxed) {
            break;
        }
        let mut grew = false;
        // A directory without metadata yet is waited for.
        if let Ok(set) = TraceSet::open(path) {
            for t in &set.traces {
                let n = traces.len() as u64;
                let e = traces.entry(t.dir.clone()).or_insert_with(|| {
                    let _ = tx.send(Msg::Trace { trace: n, dir: t.dir.display().to_string() });
                    (n, 0)
                });
                let md = std::fs::read(t.dir.join("metadata")).unwrap_or_default();
                if md.len() > e.1 {
                    tx.send(Msg::Metadata { trace: e.0, bytes: md[e.1..].to_vec() }).map_err(|_| closed(path))?;
                    e.1 = md.len();
                    grew = true;
                }
            }
            for t in &set.traces {
                let tid = traces[&t.dir].0;
                let conv = t.clocks.first().copied();
                for f in &t.files {
                    let n = files.len() as u64;
                    let e = files.entry(f.path.clone()).or_insert_with(|| {
                        let name = f.path.file_name().map(|s| s.to_string_lossy().into_owned()).unwrap_or_default();
                        let _ = tx.send(Msg::Stream { stream: n, trace: tid, name });
                        (n, 0)
                    });
                    for p in &f.packets {
                        let end = p.offset + p.total_bits / 8;
                        if p.offset < e.1 || end > f.bytes.len() as u64 {
                            continue;
                        }
                        let bytes = f.bytes[p.offset as usize..end as usize].to_vec();
                        rep.packets += 1;
                        rep.bytes += bytes.len() as u64;
                        tx.send(Msg::Packet { stream: e.0, bytes, ts_end: p.ts_end }).map_err(|_| closed(path))?;
                        e.1 = end;
                        grew = true;
                        if let Some(c) = p.ts_end {
                            latest_end.insert(e.0, c);
                        }
                        let _ = conv;
                    }
                }
            }
        }
        if grew {
            last_growth = Instant::now();
        } else if last_growth.elapsed() >= opts.quiet {
            // Quiet: every stream is taken as caught up to the latest end seen.
            if let Some(&mx) = latest_end.values().max() {
                for &(id, _) in files.values() {
                    tx.send(Msg::Beacon { stream: id, ts: mx }).map_err(|_| closed(path))?;
                }
            }
            if opts.until_idle.is_some_and(|d| last_growth.elapsed() >= d) {
                break;
            }
        }
        std::thread::sleep(opts.poll);
    }
    for &(id, _) in files.values() {
        let _ = tx.send(Msg::StreamEnd { stream: id });
    }
    let _ = tx.send(Msg::End);
    rep.wall_seconds = t_wall.elapsed().as_secs_f64();
    Ok(rep)
}
