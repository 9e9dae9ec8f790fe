//! Wires the simulation to per-CPU CTF stream writers and writes truth.json.

use std::path::Path;

use ctf_writer::{write_metadata, Cycles, MetadataFormat, StreamClassId, StreamOptions, StreamWriter};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

use crate::error::{Result, SynthError};
use crate::events::{comm_str, KEvent, EVENT_NAMES};
use crate::kernel::{kernel_schema, write_kevent, KernelTraceInfo};
use crate::sim::{EventSink, Sim, SimParams, Tally};
use crate::truth::{CpuTruth, FileTruth, ProcessTruth, ThreadTruth, Truth, DEFINITIONS};
use crate::{MetadataKind, Summary, SynthConfig};

/// Epoch time of the machine's boot (2024-01-01T00:00:00Z), the monotonic clock's offset.
const CLOCK_OFFSET_NS: u64 = 1_704_067_200_000_000_000;
/// Monotonic clock value when tracing starts (one hour of uptime).
const START_NS: u64 = 3_600_000_000_000;

struct CtfSink {
    streams: Vec<StreamWriter>,
}

impl EventSink for CtfSink {
    fn event(&mut self, cpu: u32, ts: u64, ev: &KEvent) -> Result<()> {
        Ok(write_kevent(&mut self.streams[cpu as usize], ts, ev)?)
    }
}

pub(crate) fn generate(cfg: &SynthConfig, out_dir: &Path) -> Result<Summary> {
    let trace_dir = out_dir.join("kernel");
    std::fs::create_dir_all(&trace_dir).map_err(|source| SynthError::Io { path: trace_dir.clone(), source })?;
    let mut ids = ChaCha8Rng::seed_from_u64(cfg.seed ^ 0x5EED_CAFE_F00D_0001);
    let mut uuid = || {
        let mut u: [u8; 16] = ids.gen();
        u[6] = (u[6] & 0x0f) | 0x40;
        u[8] = (u[8] & 0x3f) | 0x80;
        u
    };
    let info = KernelTraceInfo {
        uuid: uuid(),
        clock_uuid: uuid(),
        clock_offset_ns: CLOCK_OFFSET_NS,
        hostname: cfg.hostname.clone(),
        header: cfg.header,
        background: cfg.background > 0,
    };
    let schema = kernel_schema(&info);
    let format = match cfg.metadata {
        MetadataKind::Ctf18 => MetadataFormat::Packetized { packet_len: 4096 },
        MetadataKind::Ctf2 => MetadataFormat::Ctf2Json,
    };
    write_metadata(&trace_dir, &schema, format)?;
    let mut streams = Vec::with_capacity(cfg.cpus as usize);
    for cpu in 0..cfg.cpus {
        let opts = StreamOptions {
            packet_size: cfg.packet_size,
            write_index: true,
            instance_id: u64::from(cpu),
            extra_context: vec![("cpu_id".into(), u64::from(cpu))],
        };
        streams.push(StreamWriter::create(&trace_dir, &format!("channel0_{cpu}"), &schema, StreamClassId(0), opts)?);
    }
    for w in &mut streams {
        w.begin_packet_at(Cycles(START_NS))?;
    }
    let mut sink = CtfSink { streams };
    let tally = Sim::new(sim_params(cfg), &mut sink).run()?;
    let (mut packets, mut bytes, mut events) = (0, 0, 0);
    for w in sink.streams {
        let s = w.finish(Cycles(tally.end))?;
        packets += s.packets;
        bytes += s.bytes;
        events += s.events;
    }
    let truth = build_truth(cfg, &tally);
    let truth_path = out_dir.join("truth.json");
    truth.save(&truth_path)?;
    Ok(Summary { trace_dir, truth_path, events, packets, bytes, truth })
}

/// The simulation parameters of a configuration.
pub(crate) fn sim_params(cfg: &SynthConfig) -> SimParams {
    SimParams {
        cpus: cfg.cpus,
        events: cfg.events,
        seed: cfg.seed,
        threads: cfg.threads.unwrap_or((6 * cfg.cpus).max(16)),
        start_ns: START_NS,
        background: cfg.background,
    }
}

/// Turns the simulation's tally into a [`Truth`].
pub(crate) fn build_truth(cfg: &SynthConfig, t: &Tally) -> Truth {
    let mut truth = Truth {
        version: 1,
        definitions: DEFINITIONS.to_string(),
        seed: cfg.seed,
        cpus_count: cfg.cpus,
        clock_offset_ns: CLOCK_OFFSET_NS,
        begin_ns: t.begin,
        end_ns: t.end,
        events_total: t.events.iter().sum(),
        ..Default::default()
    };
    for (i, &n) in t.events.iter().enumerate() {
        if n > 0 {
            truth.events.insert(EVENT_NAMES[i].to_string(), n);
        }
    }
    truth.cpus = (0..cfg.cpus as usize).map(|c| CpuTruth { cpu: c as u32, busy_ns: t.cpu_busy[c], events: t.cpu_events[c] }).collect();
    for (&tid, &(cpu_ns, rd, wr)) in &t.tid {
        let (pid, name) = t.tid_info.get(&tid).map(|(p, c)| (*p, comm_str(c))).unwrap_or((tid, String::new()));
        truth.threads.insert(tid, ThreadTruth { pid, comm: name.clone(), cpu_ns, read_bytes: rd, write_bytes: wr });
        let p = truth.processes.entry(pid).or_insert_with(|| ProcessTruth { comm: name.clone(), ..Default::default() });
        if tid == pid {
            p.comm = name;
        }
        p.cpu_ns += cpu_ns;
        p.read_bytes += rd;
        p.write_bytes += wr;
    }
    for (path, &(rd, wr)) in &t.files {
        truth.files.insert(path.to_string(), FileTruth { read_bytes: rd, write_bytes: wr });
    }
    truth
}
