//! Renders a [`TraceSchema`] as CTF 2 metadata (CTF2-SPEC-2.0): a JSON text sequence,
//! each fragment preceded by the record separator `0x1E` and followed by a newline.
//!
//! Fragments, in order: preamble (with the trace UUID, which packet headers repeat in
//! their `metadata-stream-uuid` blob), trace class (environment, LTTng packet header),
//! the clock class, one data stream class per [`crate::StreamClass`], one event record
//! class per [`crate::EventClass`].
//!
//! The data streams are the same as with TSDL metadata: every field class has the same
//! size, alignment and byte order as its TSDL counterpart, and the reserved TSDL names
//! (`timestamp_begin`, `id`, `stream_id`, ...) become roles. Member names follow CTF 2,
//! which has no leading-underscore escape: one leading underscore is dropped, unless that
//! would make two members of one structure share a name (what CTF 1.8 readers show for
//! the TSDL text), so TSDL `_filename` is `filename` here.
//!
//! Mapping of the model:
//! - integers: `fixed-length-(un)signed-integer`, with explicit `byte-order` (the
//!   trace's when the integer has none) and `alignment`; the `map_clock` of a payload
//!   integer has no CTF 2 equivalent and is dropped (only header and packet-context
//!   timestamps update the clock, through their roles);
//! - arrays and sequences of 8-bit, byte-aligned UTF-8 integers (`char comm[16]`):
//!   `static-length-string` / `dynamic-length-string`; other arrays and sequences:
//!   `static-length-array` / `dynamic-length-array`; a sequence's length is an absolute
//!   `event-record-payload` field location;
//! - enumerations: `fixed-length-(un)signed-enumeration`, labels with several ranges
//!   grouped under one key;
//! - nested structures: `minimum-alignment` = their alignment (TSDL's `align(N)`);
//! - event log levels: the LTTng attribute `{"lttng.org,2009": {"log-level": N}}`;
//! - the clock: `offset-from-origin` with whole seconds and the remaining cycles, no
//!   `origin` (the TSDL clock is not declared `absolute` either).

use serde_json::{json, Map, Value};

use crate::schema::{
    ByteOrder, ClockClass, EnvValue, EventClass, EventHeaderKind, FieldType, IntType, PacketContextField, StreamClass, StructType, TraceSchema,
};

/// The record separator that precedes each fragment.
pub const RS: u8 = 0x1E;

/// The CTF 2 metadata bytes of a schema: the JSON text sequence, ready to be written as
/// the `metadata` file.
pub fn to_ctf2(schema: &TraceSchema) -> Vec<u8> {
    let mut out = Vec::with_capacity(4096 + schema.events.len() * 768);
    for frag in fragments(schema) {
        out.push(RS);
        // Serializing a `Value` cannot fail.
        out.extend_from_slice(serde_json::to_string(&frag).unwrap_or_default().as_bytes());
        out.push(b'\n');
    }
    out
}

/// The fragments of a schema's CTF 2 metadata, in order, as JSON values.
pub fn fragments(schema: &TraceSchema) -> Vec<Value> {
    let cx = Cx { order: schema.byte_order };
    let mut out = Vec::with_capacity(3 + schema.streams.len() + schema.events.len());
    out.push(json!({ "type": "preamble", "version": 2, "uuid": schema.uuid.to_vec() }));
    let mut env = Map::new();
    for (k, v) in &schema.env {
        env.insert(
            k.clone(),
            match v {
                EnvValue::Int(i) => json!(i),
                EnvValue::Str(s) => json!(s),
            },
        );
    }
    out.push(json!({
        "type": "trace-class",
        "environment": env,
        "packet-header-field-class": cx.packet_header(),
    }));
    out.push(clock_class(&schema.clock));
    for s in &schema.streams {
        out.push(cx.stream_class(s, &schema.clock.name));
    }
    for e in &schema.events {
        out.push(cx.event_class(e));
    }
    out
}

/// The CTF 2 name of member `name` of a structure whose members are `siblings` (all the
/// names, `name` included): one leading underscore dropped unless two members would
/// then share a name.
pub fn member_name<'a>(siblings: impl IntoIterator<Item = &'a str>, name: &str) -> String {
    let Some(stripped) = name.strip_prefix('_') else { return name.to_string() };
    let clash = siblings.into_iter().filter(|n| *n == stripped || n.strip_prefix('_') == Some(stripped)).count() > 1;
    if clash {
        name.to_string()
    } else {
        stripped.to_string()
    }
}

fn clock_class(c: &ClockClass) -> Value {
    json!({
        "type": "clock-class",
        "id": c.name,
        "name": c.name,
        "frequency": c.freq,
        "offset-from-origin": { "seconds": c.offset / c.freq, "cycles": c.offset % c.freq },
        "precision": 0,
        "description": c.description,
        "uuid": c.uuid.to_vec(),
    })
}

fn byte_order_str(o: ByteOrder) -> &'static str {
    match o {
        ByteOrder::Little => "little-endian",
        ByteOrder::Big => "big-endian",
    }
}

fn member(name: impl Into<String>, fc: Value) -> Value {
    json!({ "name": name.into(), "field-class": fc })
}

fn structure(members: Vec<Value>, min_align: Option<u32>) -> Value {
    let mut v = json!({ "type": "structure", "member-classes": members });
    if let Some(a) = min_align.filter(|a| *a > 1) {
        v["minimum-alignment"] = json!(a);
    }
    v
}

/// Conversion context: the trace's default byte order.
struct Cx {
    order: ByteOrder,
}

impl Cx {
    /// A fixed-length integer (or the integer part of an enumeration) with its roles.
    fn int(&self, i: &IntType, roles: &[&str]) -> Value {
        let mut v = json!({
            "type": if i.signed { "fixed-length-signed-integer" } else { "fixed-length-unsigned-integer" },
            "length": i.size,
            "byte-order": byte_order_str(i.byte_order.unwrap_or(self.order)),
            "alignment": i.align,
        });
        if i.base != 10 {
            v["preferred-display-base"] = json!(i.base);
        }
        if !roles.is_empty() {
            v["roles"] = json!(roles);
        }
        v
    }

    /// An unsigned integer of the trace byte order with roles.
    fn uint(&self, size: u32, align: u32, roles: &[&str]) -> Value {
        self.int(&IntType::unsigned(size).with_align(align), roles)
    }

    fn packet_header(&self) -> Value {
        structure(
            vec![
                member("magic", self.uint(32, 8, &["packet-magic-number"])),
                member("uuid", json!({ "type": "static-length-blob", "length": 16, "roles": ["metadata-stream-uuid"] })),
                member("stream_id", self.uint(32, 8, &["data-stream-class-id"])),
                member("stream_instance_id", self.uint(64, 8, &["data-stream-id"])),
            ],
            None,
        )
    }

    fn packet_context(&self, fields: &[PacketContextField]) -> Value {
        let names: Vec<&str> = fields.iter().map(PacketContextField::name).collect();
        let members = fields
            .iter()
            .map(|f| {
                let fc = match f {
                    PacketContextField::TimestampBegin => self.uint(64, 8, &["default-clock-timestamp"]),
                    PacketContextField::TimestampEnd => self.uint(64, 8, &["packet-end-default-clock-timestamp"]),
                    PacketContextField::ContentSize => self.uint(64, 8, &["packet-content-length"]),
                    PacketContextField::PacketSize => self.uint(64, 8, &["packet-total-length"]),
                    PacketContextField::PacketSeqNum => self.uint(64, 8, &["packet-sequence-number"]),
                    PacketContextField::EventsDiscarded => self.uint(64, 8, &["discarded-event-record-counter-snapshot"]),
                    PacketContextField::Extra { ty, .. } => self.int(ty, &[]),
                };
                member(member_name(names.iter().copied(), f.name()), fc)
            })
            .collect();
        structure(members, None)
    }

    /// LTTng's compact or large event header: an enumeration `id` (its last value means
    /// "extended") and a variant `v` selected by it.
    fn event_header(&self, kind: EventHeaderKind) -> Value {
        let (id_size, id_align, ts_size, ts_align) = match kind {
            EventHeaderKind::Compact => (5u32, 1u32, 27u32, 1u32),
            EventHeaderKind::Large => (16, 8, 32, 8),
        };
        let ext = (1u64 << id_size) - 1;
        let compact = json!([[0, ext - 1]]);
        let extended = json!([[ext, ext]]);
        let mut id = self.uint(id_size, id_align, &["event-record-class-id"]);
        id["type"] = json!("fixed-length-unsigned-enumeration");
        id["mappings"] = json!({ "compact": compact, "extended": extended });
        let ts = ["default-clock-timestamp"];
        let variant = json!({
            "type": "variant",
            "selector-field-location": { "origin": "event-record-header", "path": ["id"] },
            "options": [
                {
                    "name": "compact",
                    "selector-field-ranges": compact,
                    "field-class": structure(vec![member("timestamp", self.uint(ts_size, ts_align, &ts))], None),
                },
                {
                    "name": "extended",
                    "selector-field-ranges": extended,
                    "field-class": structure(vec![
                        member("id", self.uint(32, 8, &["event-record-class-id"])),
                        member("timestamp", self.uint(64, 8, &ts)),
                    ], None),
                },
            ],
        });
        structure(vec![member("id", id), member("v", variant)], Some(8))
    }

    fn stream_class(&self, s: &StreamClass, clock: &str) -> Value {
        json!({
            "type": "data-stream-class",
            "id": s.id.0,
            "default-clock-class-id": clock,
            "packet-context-field-class": self.packet_context(&s.packet_context),
            "event-record-header-field-class": self.event_header(s.event_header),
        })
    }

    fn event_class(&self, e: &EventClass) -> Value {
        let mut v = json!({
            "type": "event-record-class",
            "id": e.id.0,
            "data-stream-class-id": e.stream.0,
            "name": e.name,
            "payload-field-class": self.structure(&e.fields, &mut Vec::new(), None),
        });
        if let Some(l) = e.loglevel {
            v["attributes"] = json!({ "lttng.org,2009": { "log-level": l } });
        }
        v
    }

    /// A structure at `path` (CTF 2 member names from the payload root).
    fn structure(&self, st: &StructType, path: &mut Vec<String>, min_align: Option<u32>) -> Value {
        let names = || st.fields.iter().map(|f| f.name.as_str());
        let members = st
            .fields
            .iter()
            .map(|f| {
                let name = member_name(names(), &f.name);
                path.push(name.clone());
                let fc = self.field(&f.ty, st, path);
                path.pop();
                member(name, fc)
            })
            .collect();
        structure(members, min_align)
    }

    /// The field class of a member of `parent` located at `path`.
    fn field(&self, ty: &FieldType, parent: &StructType, path: &mut Vec<String>) -> Value {
        match ty {
            FieldType::Int(i) => self.int(i, &[]),
            FieldType::Enum { int, mappings } => {
                let mut v = self.int(int, &[]);
                v["type"] = json!(if int.signed { "fixed-length-signed-enumeration" } else { "fixed-length-unsigned-enumeration" });
                let mut m = Map::new();
                for em in mappings {
                    let ranges = m.entry(em.label.clone()).or_insert_with(|| json!([]));
                    if let Value::Array(a) = ranges {
                        a.push(json!([em.start, em.end]));
                    }
                }
                v["mappings"] = Value::Object(m);
                v
            }
            FieldType::String => json!({ "type": "null-terminated-string" }),
            FieldType::Array { elem, len } => {
                if is_text_byte(elem) {
                    json!({ "type": "static-length-string", "length": len, "encoding": "utf-8" })
                } else {
                    json!({ "type": "static-length-array", "length": len, "element-field-class": self.field(elem, parent, path) })
                }
            }
            FieldType::Sequence { elem, length_field } => {
                let mut len_path: Vec<String> = path[..path.len() - 1].to_vec();
                len_path.push(member_name(parent.fields.iter().map(|f| f.name.as_str()), length_field));
                let loc = json!({ "origin": "event-record-payload", "path": len_path });
                if is_text_byte(elem) {
                    json!({ "type": "dynamic-length-string", "length-field-location": loc, "encoding": "utf-8" })
                } else {
                    json!({
                        "type": "dynamic-length-array",
                        "length-field-location": loc,
                        "element-field-class": self.field(elem, parent, path),
                    })
                }
            }
            FieldType::Struct(st) => self.structure(st, path, Some(st.alignment())),
        }
    }
}

/// Whether an array element is a TSDL `char`: an 8-bit, byte-aligned UTF-8 integer.
fn is_text_byte(elem: &FieldType) -> bool {
    matches!(elem, FieldType::Int(i) if i.encoding == crate::schema::Encoding::Utf8 && i.size == 8 && i.align == 8)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn member_names_drop_one_underscore_without_clashes() {
        assert_eq!(member_name(["_a", "b"], "_a"), "a");
        assert_eq!(member_name(["__len", "_x"], "__len"), "_len");
        assert_eq!(member_name(["_a", "a"], "_a"), "_a");
        assert_eq!(member_name(["_a", "a"], "a"), "a");
        assert_eq!(member_name(["x"], "x"), "x");
    }
}
