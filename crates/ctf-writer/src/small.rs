//! Small traces in one call, for tests: event classes named and laid out by the
//! caller, one stream per CPU (LTTng's `channel0_<cpu>` files, `cpu_id` in the packet
//! context), a 1 GHz clock of origin 0, and events given as `(time, cpu, class name,
//! field values)`.
//!
//! ```
//! use ctf_writer::{small::{SmallTrace, TimedEvent}, IntType, StructType, Value};
//! let dir = tempfile::tempdir().unwrap();
//! let trace = SmallTrace::new([("tick", StructType::new().int("_n", IntType::unsigned(32)))]).cpus(2);
//! let events = [TimedEvent::new(1_000, 0, "tick", vec![Value::U(1)]), TimedEvent::new(1_500, 1, "tick", vec![Value::U(2)])];
//! trace.write(dir.path(), &events).unwrap();
//! assert!(dir.path().join("channel0_1").exists());
//! ```

use std::path::Path;

use crate::{
    write_metadata, ByteOrder, ClockClass, Cycles, EnvValue, EventClass, EventClassId, EventHeaderKind, MetadataFormat, PacketContextField, Result,
    StreamClass, StreamClassId, StreamOptions, StreamWriter, StructType, TraceSchema, Value, WriterError,
};

/// One event of a [`SmallTrace`]: its time (ns), the CPU whose stream holds it, its
/// class's name and its field values in declaration order.
#[derive(Debug, Clone)]
pub struct TimedEvent<'a> {
    /// Time in ns (= clock cycles: the clock runs at 1 GHz).
    pub ns: u64,
    /// The CPU, that is the stream, it is written to.
    pub cpu: u32,
    /// The event class's name.
    pub class: &'a str,
    /// Field values, in the class's declaration order.
    pub values: Vec<Value<'a>>,
}

impl<'a> TimedEvent<'a> {
    /// An event at `ns` on `cpu`.
    pub fn new(ns: u64, cpu: u32, class: &'a str, values: Vec<Value<'a>>) -> Self {
        TimedEvent { ns, cpu, class, values }
    }
}

/// The description of a small trace; [`SmallTrace::write`] writes it. Defaults: large
/// (LTTng "extended") event headers, environment `domain = "kernel"` and `tracer_name
/// = "lttng-modules"`, packetized metadata, 4 KiB packets, one CPU.
#[derive(Debug, Clone)]
pub struct SmallTrace {
    classes: Vec<(String, StructType)>,
    header: EventHeaderKind,
    env: Vec<(String, EnvValue)>,
    metadata: MetadataFormat,
    packet_size: usize,
    cpus: u32,
}

impl SmallTrace {
    /// A trace declaring `classes` (ids in the given order).
    pub fn new<'n>(classes: impl IntoIterator<Item = (&'n str, StructType)>) -> Self {
        SmallTrace {
            classes: classes.into_iter().map(|(n, f)| (n.to_string(), f)).collect(),
            header: EventHeaderKind::Large,
            env: vec![("domain".into(), EnvValue::Str("kernel".into())), ("tracer_name".into(), EnvValue::Str("lttng-modules".into()))],
            metadata: MetadataFormat::Packetized { packet_len: 4096 },
            packet_size: 4096,
            cpus: 1,
        }
    }

    /// The event header layout of the stream class.
    pub fn header(mut self, header: EventHeaderKind) -> Self {
        self.header = header;
        self
    }

    /// Adds (or replaces) a string entry of the metadata's `env` block.
    pub fn env(mut self, key: &str, value: &str) -> Self {
        self.env.retain(|(k, _)| k != key);
        self.env.push((key.into(), EnvValue::Str(value.into())));
        self
    }

    /// How the metadata file is written.
    pub fn metadata(mut self, format: MetadataFormat) -> Self {
        self.metadata = format;
        self
    }

    /// The packet size in bytes (a power of two, at least 4096).
    pub fn packet_size(mut self, bytes: usize) -> Self {
        self.packet_size = bytes;
        self
    }

    /// How many CPUs, that is streams, the trace has.
    pub fn cpus(mut self, cpus: u32) -> Self {
        self.cpus = cpus;
        self
    }

    /// The schema this trace is written with.
    pub fn schema(&self) -> TraceSchema {
        TraceSchema {
            uuid: [3; 16],
            byte_order: ByteOrder::Little,
            env: self.env.clone(),
            clock: ClockClass { name: "monotonic".into(), uuid: [4; 16], description: "Monotonic Clock".into(), freq: 1_000_000_000, offset: 0 },
            streams: vec![StreamClass { id: StreamClassId(0), event_header: self.header, packet_context: PacketContextField::lttng_kernel() }],
            events: self
                .classes
                .iter()
                .enumerate()
                .map(|(i, (n, f))| EventClass { id: EventClassId(i as u32), name: n.clone(), stream: StreamClassId(0), loglevel: None, fields: f.clone() })
                .collect(),
        }
    }

    /// Writes the metadata and one stream per CPU into `dir`: each CPU's events in the
    /// order given (their times must not go back), each stream ending 1 ns after its
    /// last event. An event naming an undeclared class or CPU is an error.
    pub fn write(&self, dir: &Path, events: &[TimedEvent<'_>]) -> Result<()> {
        let schema = self.schema();
        write_metadata(dir, &schema, self.metadata)?;
        if let Some(e) = events.iter().find(|e| e.cpu >= self.cpus) {
            return Err(WriterError::Schema(format!("event {} on CPU {} of a {}-CPU trace", e.class, e.cpu, self.cpus)));
        }
        for cpu in 0..self.cpus {
            let opts = StreamOptions {
                packet_size: self.packet_size,
                instance_id: u64::from(cpu),
                extra_context: vec![("cpu_id".into(), u64::from(cpu))],
                ..Default::default()
            };
            let mut w = StreamWriter::create(dir, &format!("channel0_{cpu}"), &schema, StreamClassId(0), opts)?;
            let mut last = 0;
            for e in events.iter().filter(|e| e.cpu == cpu) {
                let id = self.classes.iter().position(|(n, _)| n == e.class).ok_or_else(|| WriterError::Schema(format!("no event class {}", e.class)))?;
                w.write_event(Cycles(e.ns), EventClassId(id as u32), &e.values)?;
                last = e.ns;
            }
            w.finish(Cycles(last + 1))?;
        }
        Ok(())
    }
}
