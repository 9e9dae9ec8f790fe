//! Cutting a trace set into time slices. See the crate docs for the scheme.

use std::ops::Range;

use ctf::trace::TraceSet;

/// Where slice boundaries are placed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Partition {
    /// Walk all streams' packet indexes in time order, cutting every ~`chunk_size`
    /// bytes (default; the paper's hybrid packet-based scheme).
    #[default]
    Hybrid,
    /// Equal time ranges, as many as `total bytes / chunk_size`.
    Time,
    /// Cuts at the packet boundaries of the largest stream only (its chunks are whole
    /// packet ranges; other streams are clipped to the same instants).
    Stream,
}

impl std::str::FromStr for Partition {
    type Err = PartitionError;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s {
            "hybrid" | "packet" => Ok(Partition::Hybrid),
            "time" => Ok(Partition::Time),
            "stream" => Ok(Partition::Stream),
            _ => Err(PartitionError::Unknown(s.to_string())),
        }
    }
}

/// An invalid partition name.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum PartitionError {
    /// Not one of `hybrid`, `time`, `stream`.
    #[error("unknown partition scheme {0:?} (expected hybrid, time or stream)")]
    Unknown(String),
}

/// One unit of work: a time range and, per stream, the packets that may hold it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Slice {
    /// First timestamp included (ns from origin).
    pub lo: i64,
    /// First timestamp excluded (`i64::MAX`: none; then items at `i64::MAX` are included).
    pub hi: i64,
    /// `(stream index, packet range)`, non-empty ranges only, by stream index.
    pub chunks: Vec<(usize, Range<usize>)>,
}

impl Slice {
    /// Whether timestamp `t` belongs to this slice.
    #[inline]
    pub fn contains(&self, t: i64) -> bool {
        t >= self.lo && (t < self.hi || self.hi == i64::MAX)
    }
    /// Bytes of the packets of this slice.
    pub fn bytes(&self, set: &TraceSet) -> u64 {
        self.chunks.iter().map(|(s, r)| set.streams[*s].packets[r.clone()].iter().map(|p| p.info.total_bits / 8).sum::<u64>()).sum()
    }
}

/// Packet time bounds in ns, per stream; `None` when some packet lacks them.
fn packet_times(set: &TraceSet) -> Option<Vec<Vec<(i64, i64, u64)>>> {
    let mut out = Vec::with_capacity(set.streams.len());
    for s in &set.streams {
        let mut v = Vec::with_capacity(s.packets.len());
        for p in &s.packets {
            let (b, e) = (set.packet_ns(p, p.info.ts_begin)?, set.packet_ns(p, p.info.ts_end)?);
            v.push((b, e.max(b), p.info.total_bits / 8));
        }
        out.push(v);
    }
    Some(out)
}

/// `slices` without those that lie wholly outside `range` (ns, inclusive): a slice
/// delivers only the items whose timestamps are inside both its `[lo, hi)` and the
/// range, so one that does not meet the range delivers nothing, whatever its packets
/// hold. So a range costs what the slices meeting it cost, not the whole trace. (Packets
/// are not trimmed one by one: their index times are the tracer's word, and real
/// tracers write events before their packet's beginning (barectf) or after its end
/// (lttng-ust 2.10, crash-recovered packets).)
pub fn clip(slices: &[Slice], range: (i64, i64)) -> Vec<Slice> {
    let meets = |s: &Slice| s.lo <= range.1 && (s.hi == i64::MAX || s.hi > range.0);
    slices.iter().filter(|s| meets(s)).cloned().collect()
}

/// One slice holding everything.
fn whole(set: &TraceSet) -> Vec<Slice> {
    let chunks = set.streams.iter().enumerate().filter(|(_, s)| !s.packets.is_empty()).map(|(i, s)| (i, 0..s.packets.len())).collect();
    vec![Slice { lo: i64::MIN, hi: i64::MAX, chunks }]
}

/// The chunk size the engine picks when none is given ([`EngineOptions::chunk_size`]
/// of 0) for `workers` workers: about 8 slices per worker, so that workers stay
/// balanced however unevenly the trace's activity is spread, but at least 4 MiB, so
/// that each slice's fixed costs stay small (every cut opens one packet per stream on
/// both sides: the part before the cut is decoded by one slice and passed over by its
/// event headers by the other), and at most 64 MiB, so that memory stays bounded by the
/// slices in flight rather than by the trace size. One worker has nothing to balance
/// and folds each slice as soon as it is read: it gets the largest slices, so that a
/// serial run cuts the trace as little as possible.
///
/// [`EngineOptions::chunk_size`]: crate::EngineOptions::chunk_size
pub fn auto_chunk_size(set: &TraceSet, workers: usize) -> u64 {
    let total: u64 = set.streams.iter().flat_map(|s| &s.packets).map(|p| p.info.total_bits / 8).sum();
    chunk_size_for(total, workers)
}

/// [`auto_chunk_size`] for `total` bytes of packets.
pub fn chunk_size_for(total: u64, workers: usize) -> u64 {
    if workers <= 1 {
        return AUTO_MAX;
    }
    (total / (8 * workers as u64)).clamp(AUTO_MIN, AUTO_MAX)
}

/// Bounds of [`auto_chunk_size`].
const AUTO_MIN: u64 = 4 << 20;
const AUTO_MAX: u64 = 64 << 20;

/// Cuts `set` into time-ordered slices of about `chunk_size` bytes. Falls back to a
/// single slice when a packet lacks timestamps or a stream lacks a clock.
pub fn partition(set: &TraceSet, scheme: Partition, chunk_size: u64) -> Vec<Slice> {
    let chunk_size = chunk_size.max(1);
    let Some(times) = packet_times(set) else { return whole(set) };
    let mut cuts: Vec<i64> = Vec::new();
    match scheme {
        Partition::Hybrid => {
            let mut all: Vec<(i64, u64)> = times.iter().flatten().map(|&(b, _, n)| (b, n)).collect();
            all.sort_unstable();
            let mut acc = 0u64;
            for (b, n) in all {
                if acc >= chunk_size {
                    cuts.push(b);
                    acc = 0;
                }
                acc += n;
            }
        }
        Partition::Time => {
            let total: u64 = times.iter().flatten().map(|t| t.2).sum();
            let lo = times.iter().flatten().map(|t| t.0).min();
            let hi = times.iter().flatten().map(|t| t.1).max();
            if let (Some(lo), Some(hi)) = (lo, hi) {
                let n = total.div_ceil(chunk_size).clamp(1, 1 << 20) as i128;
                let span = (hi as i128 - lo as i128).max(1);
                for k in 1..n {
                    cuts.push((lo as i128 + span * k / n) as i64);
                }
            }
        }
        Partition::Stream => {
            if let Some(big) = times.iter().max_by_key(|v| v.iter().map(|t| t.2).sum::<u64>()) {
                let mut acc = 0u64;
                for &(b, _, n) in big {
                    if acc >= chunk_size {
                        cuts.push(b);
                        acc = 0;
                    }
                    acc += n;
                }
            }
        }
    }
    cuts.sort_unstable();
    cuts.dedup();
    let mut bounds = Vec::with_capacity(cuts.len() + 2);
    bounds.push(i64::MIN);
    bounds.extend(cuts.into_iter().filter(|&c| c != i64::MIN && c != i64::MAX));
    bounds.push(i64::MAX);
    let mut slices = Vec::with_capacity(bounds.len() - 1);
    for w in bounds.windows(2) {
        let (lo, hi) = (w[0], w[1]);
        let mut chunks = Vec::new();
        for (si, v) in times.iter().enumerate() {
            // Packets whose [begin, end] meets [lo, hi); a contiguous range even when
            // old tracers make neighbouring packets overlap slightly.
            let hit = |&(b, e, _): &(i64, i64, u64)| b < hi && e >= lo || (hi == i64::MAX && b >= lo);
            let first = v.iter().position(hit);
            let last = v.iter().rposition(hit);
            if let (Some(f), Some(l)) = (first, last) {
                chunks.push((si, f..l + 1));
            }
        }
        slices.push(Slice { lo, hi, chunks });
    }
    slices
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn auto_chunk_size_gives_eight_slices_per_worker_within_bounds() {
        const MIB: u64 = 1 << 20;
        // Small traces: the floor.
        assert_eq!(chunk_size_for(0, 2), 4 * MIB);
        assert_eq!(chunk_size_for(5 * MIB, 2), 4 * MIB);
        // In between: total / (8 × workers).
        assert_eq!(chunk_size_for(256 * MIB, 2), 16 * MIB);
        assert_eq!(chunk_size_for(256 * MIB, 4), 8 * MIB);
        // One worker (or 0 asked for): the largest slices, whatever the size.
        assert_eq!(chunk_size_for(0, 1), 64 * MIB);
        assert_eq!(chunk_size_for(256 * MIB, 1), 64 * MIB);
        // Large traces: the ceiling (memory stays bounded by the slices in flight).
        assert_eq!(chunk_size_for(3 << 30, 2), 64 * MIB);
        assert_eq!(chunk_size_for(u64::MAX, 0), 64 * MIB);
        // Never larger with more workers, never smaller with more bytes.
        for total in (0..64).map(|k| k * 37 * MIB) {
            for w in 1..20 {
                assert!(chunk_size_for(total, w + 1) <= chunk_size_for(total, w));
                assert!(chunk_size_for(total + MIB, w) >= chunk_size_for(total, w));
            }
        }
    }
}
