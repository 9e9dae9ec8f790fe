//! A sparse synthetic trace spanning a long stream time (e.g. a whole day), to test
//! `tracecube replay` on a day of stream in minutes: memory must stay bounded while
//! the stream runs (the cube's tilted time frame, the bounded ring buffer).
//!
//! The trace is CTF 1.8 with plain-text TSDL metadata in the layout of an LTTng-UST
//! per-CPU channel: one stream per CPU, 4 KiB packets with `timestamp_begin/end`,
//! `content_size`, `packet_size`, `packet_seq_num`, `events_discarded` and `cpu_id`,
//! and two event classes, `day:tick` and `day:io` (`tid`, `value`). Events are spread
//! evenly over the span with a deterministic jitter.

use std::io::Write;
use std::path::Path;

/// What to write.
#[derive(Debug, Clone)]
pub struct DayTrace {
    /// Stream time covered, s.
    pub seconds: u64,
    /// Events per second, over all CPUs.
    pub rate: u64,
    /// CPUs (streams).
    pub cpus: u32,
    /// Seed of the jitter.
    pub seed: u64,
}

const PACKET: usize = 4096;
const HEADER: usize = 8 + 8 * 6 + 4;
const EVENT: usize = 4 + 8 + 4 + 4;
/// 2024-01-01T00:00:00Z, the clock's offset.
const ORIGIN_S: u64 = 1_704_067_200;

const METADATA: &str = r#"/* CTF 1.8 */
typealias integer { size = 32; align = 8; signed = false; } := uint32_t;
typealias integer { size = 64; align = 8; signed = false; } := uint64_t;
typealias integer { size = 64; align = 8; signed = false; map = clock.monotonic.value; } := uint64_clock_monotonic_t;
trace {
	major = 1; minor = 8; byte_order = le;
	packet.header := struct { uint32_t magic; uint32_t stream_id; };
};
env { hostname = "day"; domain = "ust"; };
clock { name = "monotonic"; freq = 1000000000; offset_s = 1704067200; offset = 0; };
stream {
	id = 0;
	packet.context := struct {
		uint64_clock_monotonic_t timestamp_begin;
		uint64_clock_monotonic_t timestamp_end;
		uint64_t content_size;
		uint64_t packet_size;
		uint64_t packet_seq_num;
		uint64_t events_discarded;
		uint32_t cpu_id;
	};
	event.header := struct { uint32_t id; uint64_clock_monotonic_t timestamp; };
};
event { name = "day:tick"; id = 0; stream_id = 0; fields := struct { uint32_t tid; uint32_t value; }; };
event { name = "day:io"; id = 1; stream_id = 0; fields := struct { uint32_t tid; uint32_t value; }; };
"#;

fn lcg(x: &mut u64) -> u64 {
    *x = x.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
    *x >> 33
}

/// Writes the trace to `dir` (created); returns the number of events written.
pub fn write(dir: &Path, cfg: &DayTrace) -> std::io::Result<u64> {
    std::fs::create_dir_all(dir)?;
    std::fs::write(dir.join("metadata"), METADATA)?;
    let _ = ORIGIN_S;
    let cpus = cfg.cpus.max(1) as u64;
    let per_cpu = cfg.seconds * cfg.rate / cpus;
    let step = (cfg.seconds * 1_000_000_000) / per_cpu.max(1);
    let mut total = 0;
    for cpu in 0..cpus {
        let mut f = std::io::BufWriter::new(std::fs::File::create(dir.join(format!("chan0_{cpu}")))?);
        let mut rng = cfg.seed ^ (cpu + 1).wrapping_mul(0x9E37_79B9_7F4A_7C15);
        let mut seq = 0u64;
        let mut k = 0u64;
        let per_packet = ((PACKET - HEADER) / EVENT) as u64;
        while k < per_cpu {
            let n = per_packet.min(per_cpu - k);
            let ts: Vec<u64> = (k..k + n).map(|i| i * step + cpu * 1000 + lcg(&mut rng) % (step / 2).max(1)).collect();
            let mut p = Vec::with_capacity(PACKET);
            p.extend_from_slice(&0xC1FC_1FC1u32.to_le_bytes());
            p.extend_from_slice(&0u32.to_le_bytes());
            p.extend_from_slice(&ts[0].to_le_bytes());
            p.extend_from_slice(&ts[ts.len() - 1].to_le_bytes());
            p.extend_from_slice(&(((HEADER + EVENT * n as usize) * 8) as u64).to_le_bytes());
            p.extend_from_slice(&((PACKET * 8) as u64).to_le_bytes());
            p.extend_from_slice(&seq.to_le_bytes());
            p.extend_from_slice(&0u64.to_le_bytes());
            p.extend_from_slice(&(cpu as u32).to_le_bytes());
            for &t in &ts {
                let r = lcg(&mut rng);
                p.extend_from_slice(&(r.is_multiple_of(8) as u32).to_le_bytes());
                p.extend_from_slice(&t.to_le_bytes());
                p.extend_from_slice(&(1000 + (r % 16) as u32).to_le_bytes());
                p.extend_from_slice(&((r >> 8) as u32 % 65536).to_le_bytes());
            }
            p.resize(PACKET, 0);
            f.write_all(&p)?;
            seq += 1;
            k += n;
        }
        f.flush()?;
        total += per_cpu;
    }
    Ok(total)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn day_trace_decodes_with_its_span() {
        let d = tempfile::tempdir().unwrap();
        let n = write(d.path(), &DayTrace { seconds: 3600, rate: 10, cpus: 2, seed: 1 }).unwrap();
        assert_eq!(n, 36_000);
        let set = ctf::trace::TraceSet::open(d.path()).unwrap();
        let mut m = ctf::merge::Merger::new(&set);
        let (mut count, mut first, mut last) = (0u64, i64::MAX, i64::MIN);
        while let Some(x) = m.next().unwrap() {
            if let ctf::stream::Item::Event(e) = x.item {
                let t = e.ts().unwrap();
                first = first.min(t);
                last = last.max(t);
                count += 1;
            }
        }
        assert_eq!(count, n);
        let span = (last - first) as f64 / 1e9;
        assert!(span > 3590.0 && span < 3600.0, "span {span}");
    }
}
