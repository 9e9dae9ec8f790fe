//! A [`SliceLog`] as bytes, so that a slice logged on a cluster's executor is applied
//! by the client of a fleet cube build (`tracecube cube build --cluster`).
//!
//! The records travel in `kernel`'s wire form ([`kernel::log::wire`]), their names and
//! paths as [`Str`] ranges of the log's arena, which travels whole; the stamps as
//! differences from the previous stamp. Decoding checks what applying a log relies on
//! (every range inside the arena and the counts, every frame mark naming a block,
//! every stream and slot inside the trace set's), so that damaged bytes are an error,
//! never a panic or an allocation they ask for.

use kernel::log::wire::{put_bytes, put_i64, put_rec, put_u64, Reader, WireError};
use kernel::log::Rec;

use super::{Block, SliceLog, Str};

/// The version byte of a slice log's bytes (the records inside carry `kernel`'s).
pub const VERSION: u8 = 1;

impl SliceLog {
    /// The bytes of this log (sealed first: its last frame's counts closed).
    pub fn encode(&mut self) -> Vec<u8> {
        self.seal();
        let mut out = Vec::with_capacity(16 + self.arena.len() + self.recs.len() * 6 + self.counts.len() * 4);
        out.push(VERSION);
        out.push(kernel::log::wire::VERSION);
        put_u64(&mut out, self.events);
        match self.last {
            None => out.push(0),
            Some(t) => {
                out.push(1);
                put_i64(&mut out, t);
            }
        }
        put_bytes(&mut out, &self.arena);
        put_u64(&mut out, self.recs.len() as u64);
        let mut prev = 0i64;
        for (r, &t) in self.recs.iter().zip(&self.stamps) {
            put_i64(&mut out, t.wrapping_sub(prev));
            prev = t;
            put_rec(&mut out, r, |out, s| {
                put_u64(out, s.0.into());
                put_u64(out, s.1.into());
            });
        }
        put_u64(&mut out, self.blocks.len() as u64);
        for b in &self.blocks {
            put_u64(&mut out, b.start.into());
            put_u64(&mut out, b.end.into());
            put_i64(&mut out, b.first);
            put_i64(&mut out, b.last);
        }
        put_u64(&mut out, self.counts.len() as u64);
        for &(slot, n) in &self.counts {
            put_u64(&mut out, slot.into());
            put_u64(&mut out, n.into());
        }
        let mut cpus: Vec<(u32, u32)> = self.slot_cpu.iter().map(|(&s, &c)| (s, c)).collect();
        cpus.sort_unstable();
        put_u64(&mut out, cpus.len() as u64);
        for (slot, cpu) in cpus {
            put_u64(&mut out, slot.into());
            put_u64(&mut out, cpu.into());
        }
        out
    }

    /// The log that [`SliceLog::encode`] wrote, for a set of `streams` streams and
    /// `names` event names (as [`SliceLog::new`]; its records and slots must lie inside
    /// them).
    pub fn decode(buf: &[u8], g0: i64, streams: usize, names: usize) -> Result<SliceLog, WireError> {
        let streams = streams.max(1);
        // (Not `SliceLog::new`: a decoded log is applied, never written to, and needs
        // no table of open counts.)
        let mut log = SliceLog { g0: g0.max(1), streams, frame_end: i64::MIN, ..SliceLog::default() };
        let mut r = Reader::new(buf);
        r.version(VERSION, "a slice log")?;
        r.version(kernel::log::wire::VERSION, "a log")?;
        log.events = r.u64()?;
        log.last = if r.flag()? { Some(r.i64()?) } else { None };
        log.arena = r.bytes()?.to_vec();
        let arena = log.arena.len() as u64;
        let n = r.count(3)?;
        log.recs.reserve(n);
        log.stamps.reserve(n);
        let mut t = 0i64;
        for _ in 0..n {
            t = t.wrapping_add(r.i64()?);
            let at = r.offset();
            let rec = r.rec(|r| {
                let at = r.offset();
                let (o, len) = (r.u32()?, r.u32()?);
                if u64::from(o) + u64::from(len) > arena {
                    return Err(WireError { offset: at, cause: format!("a name at {o}+{len} outside the {arena} bytes of names") });
                }
                Ok(Str(o, len))
            })?;
            if let Some(s) = stream_of(&rec).filter(|&s| s as usize >= streams) {
                return Err(WireError { offset: at, cause: format!("a record of stream {s} in a set of {streams} streams") });
            }
            log.recs.push(rec);
            log.stamps.push(t);
        }
        let n = r.count(4)?;
        for _ in 0..n {
            let b = Block { start: r.u32()?, end: r.u32()?, first: r.i64()?, last: r.i64()? };
            log.blocks.push(b);
        }
        let n = r.count(2)?;
        log.counts.reserve(n);
        let slots = (names * streams) as u64;
        for _ in 0..n {
            let at = r.offset();
            let slot = r.u32()?;
            if u64::from(slot) >= slots {
                return Err(WireError { offset: at, cause: format!("event slot {slot} of {slots}") });
            }
            log.counts.push((slot, r.u32()?));
        }
        let n = r.count(2)?;
        for _ in 0..n {
            let (slot, cpu) = (r.u32()?, r.u32()?);
            log.slot_cpu.insert(slot, cpu);
        }
        if !r.at_end() {
            return Err(r.error("bytes after the slice log"));
        }
        let counts = log.counts.len() as u32;
        if let Some((i, b)) = log.blocks.iter().enumerate().find(|(_, b)| b.start > b.end || b.end > counts) {
            return Err(WireError { offset: buf.len(), cause: format!("block {i} counts {}..{} of {counts}", b.start, b.end) });
        }
        let blocks = log.blocks.len();
        if let Some(b) = log.recs.iter().find_map(|r| match r {
            Rec::Frame { block, .. } if *block as usize >= blocks => Some(*block),
            _ => None,
        }) {
            return Err(WireError { offset: buf.len(), cause: format!("a frame mark of block {b} of {blocks}") });
        }
        Ok(log)
    }
}

/// The stream a record names, if any.
fn stream_of(r: &super::Record) -> Option<u32> {
    use kernel::log::Who;
    match r {
        Rec::Switch { s, .. } | Rec::Wakeup { s, .. } | Rec::Irq { s, .. } => Some(*s),
        Rec::Block(b) => Some(b.s),
        _ => match r.who() {
            Some(Who::Stream(s) | Who::Head(s)) => Some(s),
            _ => None,
        },
    }
}

#[cfg(test)]
mod tests {

    use ctf::trace::TraceSet;

    use super::*;
    use crate::log::FeedLayout;
    use crate::BuildOptions;

    #[test]
    fn logs_through_bytes_build_the_local_cube_and_damage_is_an_error() {
        let set = TraceSet::open(&testkit::fixture("kernel")).unwrap();
        // Small slices, so that the logs cross frames and stream switches; the local
        // build of the same options cuts the same slices (`crate::slices`).
        let opts = BuildOptions { chunk_size: 8 << 10, threads: 2, ..BuildOptions::default() };
        let g0 = opts.config.levels[0].granularity_ns as i64;
        let (streams, names) = (set.streams.len(), FeedLayout::new(&set).model.names.len());
        let slices = crate::slices(&set, &opts);
        assert!(slices.len() > 3, "several slices: {}", slices.len());
        let mut logs = Vec::new();
        for s in &slices {
            let mut log = crate::log_slice(&set, g0, s).unwrap();
            let bytes = log.encode();
            let back = SliceLog::decode(&bytes, g0, streams, names).unwrap();
            assert_eq!((&back.recs, &back.stamps, &back.blocks, &back.counts), (&log.recs, &log.stamps, &log.blocks, &log.counts));
            assert_eq!((&back.slot_cpu, &back.arena, back.events, back.last), (&log.slot_cpu, &log.arena, log.events, log.last));
            // Cut short: an error; a byte changed: an error or a log, never a panic.
            for n in [0, 1, bytes.len() / 2, bytes.len() - 1] {
                assert!(SliceLog::decode(&bytes[..n], g0, streams, names).is_err(), "{n} of {} bytes", bytes.len());
            }
            for i in (0..bytes.len()).step_by(7) {
                let mut bad = bytes.clone();
                bad[i] ^= 0x5a;
                let _ = SliceLog::decode(&bad, g0, streams, names);
            }
            logs.push(bytes);
        }
        assert!(logs.iter().any(|b| b.len() > 100), "the slices log something");
        // A record naming a stream the set does not have is refused.
        assert!(SliceLog::decode(&logs[1], g0, 1, names).is_err() || streams == 1);
        let (mut local, _) = crate::build_from_set(&set, &opts).unwrap();
        let decoded = logs.iter().map(|b| SliceLog::decode(b, g0, streams, names).map_err(|e| cube::CubeError::Trace(e.to_string())));
        let (mut remote, rep) = crate::build_from_logs(&set, &opts, decoded, 1).unwrap();
        assert_eq!(rep.events, logs.iter().map(|b| SliceLog::decode(b, g0, streams, names).unwrap().events).sum::<u64>());
        let dir = tempfile::tempdir().unwrap();
        cube::save(&mut local, &dir.path().join("local")).unwrap();
        cube::save(&mut remote, &dir.path().join("remote")).unwrap();
        let (remote, local) = (testkit::cube_files(&dir.path().join("remote")), testkit::cube_files(&dir.path().join("local")));
        assert_eq!(remote.len(), 3, "CURRENT, the catalog, the history");
        for ((p, r), (q, l)) in remote.iter().zip(&local) {
            assert!(p == q && r == l, "{p} differs from {q} (the saved cubes are byte-identical)");
        }
    }
}
