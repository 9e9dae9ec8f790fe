//! The CTF 2 metadata front end (CTF2-SPEC-2.0, layout CTF2-FS-1.0): a JSON text
//! sequence (fragments separated by the record separator 0x1E) → the same
//! [`TraceClass`] as the TSDL front end, so that decoding and everything above it
//! work unchanged.
//!
//! Supported: preamble (version 2; any extension in it is required, so an unknown one
//! is an error), trace class (environment, packet header), clock classes, data stream
//! classes, event record classes, field class aliases, and the field classes
//! fixed-length integers/enumerations/booleans/floats, variable-length (LEB128)
//! integers, null-terminated/static/dynamic strings, static/dynamic BLOBs and arrays,
//! structures and variants (with selector ranges). Roles replace TSDL's reserved
//! names. Field locations may be the 2.0 object form `{"origin": ..., "path": [...]}`
//! or the earlier draft's array form `[origin, name, ...]` (Babeltrace's test traces).
//! Attributes and unknown properties are ignored. Also: optional fields (boolean or
//! integer selector), booleans (shown as true/false), relative field locations (without
//! origin; `null` goes up a structure), UTF-16/32 null-terminated strings.
//! Not yet: UTF-16/32 static/dynamic-length strings (read as bytes).

use std::collections::HashMap;

use serde_json::Value;

use crate::ir::*;

/// Record separator between fragments.
pub const RS: u8 = 0x1E;

/// An error: fragment index (1-based) and message.
pub type Ctf2Error = (u32, String);
type R<T> = Result<T, Ctf2Error>;

/// Whether metadata bytes are a CTF 2 JSON text sequence.
pub fn is_ctf2(text: &[u8]) -> bool {
    text.iter().find(|b| !b.is_ascii_whitespace()) == Some(&RS)
}

/// Parses CTF 2 metadata text.
pub fn parse_ctf2(text: &[u8]) -> R<TraceClass> {
    let mut p = Parser { frag: 0, aliases: HashMap::new(), clock: None, in_packet_context: false, scope: Scope::PacketHeader, path: Default::default() };
    let mut tc = TraceClass {
        byte_order: ByteOrder::Little,
        uuid: None,
        packet_header: None,
        clocks: Vec::new(),
        streams: Vec::new(),
        env: Vec::new(),
        warnings: Vec::new(),
    };
    let mut saw_preamble = false;
    let mut pending_events: Vec<(u32, Value)> = Vec::new();
    for chunk in text.split(|b| *b == RS) {
        if chunk.iter().all(|b| b.is_ascii_whitespace()) {
            continue;
        }
        p.frag += 1;
        let v: Value = serde_json::from_slice(chunk).map_err(|e| (p.frag, format!("invalid JSON: {e}")))?;
        let ty = p.str_prop(&v, "type")?;
        if !saw_preamble && ty != "preamble" {
            return Err((p.frag, "the first fragment must be the preamble".into()));
        }
        match ty {
            "preamble" => {
                saw_preamble = true;
                let ver = v.get("version").and_then(Value::as_u64).ok_or((p.frag, "preamble without `version`".to_string()))?;
                if ver != 2 {
                    return Err((p.frag, format!("CTF version {ver}: expecting 2")));
                }
                if let Some(ext) = v.get("extensions").and_then(Value::as_object) {
                    if let Some((ns, _)) = ext.iter().next() {
                        return Err((p.frag, format!("the trace requires the unsupported extension namespace `{ns}`")));
                    }
                }
                tc.uuid = p.uuid(v.get("uuid"))?;
            }
            "trace-class" => {
                if let Some(u) = p.uuid(v.get("uuid"))? {
                    tc.uuid = Some(u);
                }
                if let Some(env) = v.get("environment").and_then(Value::as_object) {
                    for (k, val) in env {
                        let ev = match val {
                            Value::String(s) => EnvValue::Str(s.clone()),
                            Value::Number(n) => EnvValue::Int(n.as_i64().ok_or((p.frag, format!("environment `{k}`: integer out of range")))?),
                            _ => return Err((p.frag, format!("environment `{k}`: expecting a string or an integer"))),
                        };
                        tc.env.push((k.clone(), ev));
                    }
                }
                if let Some(h) = v.get("packet-header-field-class") {
                    p.clock = None;
                    p.scope = Scope::PacketHeader;
                    let fc = p.field_class(h, 0)?;
                    // The trace's "native" byte order, for display: its first integer's.
                    if let Some(FieldClass::Int(i)) = fc.member("magic").or(match &fc {
                        FieldClass::Struct(s) => s.members.first().map(|(_, m)| m),
                        _ => None,
                    }) {
                        tc.byte_order = i.byte_order;
                    }
                    tc.packet_header = Some(fc);
                }
            }
            "field-class-alias" => {
                let name = p.str_prop(&v, "name")?.to_string();
                let fc = v.get("field-class").ok_or((p.frag, "alias without `field-class`".to_string()))?.clone();
                p.aliases.insert(name, fc);
            }
            "clock-class" => tc.clocks.push(p.clock_class(&v)?),
            "data-stream-class" => {
                let id = v.get("id").and_then(Value::as_u64).unwrap_or(tc.streams.len() as u64);
                let clock = v.get("default-clock-class-id").or(v.get("default-clock-class-name")).and_then(Value::as_str).map(str::to_string);
                if let Some(c) = &clock {
                    if !tc.clocks.iter().any(|k| &k.name == c) {
                        return Err((p.frag, format!("data stream class {id}: unknown clock class `{c}`")));
                    }
                }
                p.clock = clock.clone();
                p.in_packet_context = true;
                p.scope = Scope::PacketContext;
                let packet_context = v.get("packet-context-field-class").map(|f| p.field_class(f, 0)).transpose();
                p.in_packet_context = false;
                let packet_context = packet_context?;
                p.scope = Scope::EventHeader;
                let event_header = v.get("event-record-header-field-class").map(|f| p.field_class(f, 0)).transpose()?;
                p.scope = Scope::EventCommonContext;
                let event_common_context = v.get("event-record-common-context-field-class").map(|f| p.field_class(f, 0)).transpose()?;
                if tc.streams.iter().any(|s| s.id == id) {
                    return Err((p.frag, format!("duplicate data stream class id {id}")));
                }
                tc.streams.push(StreamClass { id, packet_context, event_header, event_common_context, event_classes: Vec::new(), default_clock: clock });
            }
            "event-record-class" => pending_events.push((p.frag, v)),
            other => return Err((p.frag, format!("unknown fragment type `{other}`"))),
        }
    }
    if !saw_preamble {
        return Err((0, "empty CTF 2 metadata".into()));
    }
    if tc.streams.is_empty() {
        tc.streams.push(StreamClass {
            id: 0,
            packet_context: None,
            event_header: None,
            event_common_context: None,
            event_classes: Vec::new(),
            default_clock: None,
        });
    }
    for (frag, v) in pending_events {
        p.frag = frag;
        let sid = v.get("data-stream-class-id").and_then(Value::as_u64).unwrap_or(tc.streams[0].id);
        let si = tc.streams.iter().position(|s| s.id == sid).ok_or((frag, format!("unknown data stream class {sid}")))?;
        p.clock = tc.streams[si].default_clock.clone();
        let id = v.get("id").and_then(Value::as_u64).unwrap_or(tc.streams[si].event_classes.len() as u64);
        if tc.streams[si].event_classes.iter().any(|e| e.id == id) {
            return Err((frag, format!("duplicate event record class id {id} in data stream class {sid}")));
        }
        let name = v.get("name").and_then(Value::as_str).unwrap_or_default().to_string();
        p.scope = Scope::EventSpecificContext;
        let context = v.get("specific-context-field-class").map(|f| p.field_class(f, 0)).transpose()?;
        p.scope = Scope::EventPayload;
        let payload = v.get("payload-field-class").map(|f| p.field_class(f, 0)).transpose()?;
        let loglevel = log_level(&v);
        tc.streams[si].event_classes.push(EventClass { id, name, loglevel, emf_uri: None, context, payload });
    }
    Ok(tc)
}

/// An event record class's log level: a `log-level` property, or LTTng's
/// (`lttng.org,2009`) or Babeltrace's (`babeltrace.org,2020`) attribute, numeric or
/// one of LTTng's level names.
fn log_level(v: &Value) -> Option<i64> {
    const NAMES: [&str; 15] = [
        "emergency",
        "alert",
        "critical",
        "error",
        "warning",
        "notice",
        "info",
        "debug-system",
        "debug-program",
        "debug-process",
        "debug-module",
        "debug-unit",
        "debug-function",
        "debug-line",
        "debug",
    ];
    let attr = |key: &str| ["attributes", "user-attributes"].iter().find_map(|a| v.get(*a)?.get(key)?.get("log-level"));
    let l = v.get("log-level").or_else(|| attr("lttng.org,2009")).or_else(|| attr("babeltrace.org,2020"))?;
    l.as_i64().or_else(|| NAMES.iter().position(|n| Some(*n) == l.as_str()).map(|i| i as i64))
}

struct Parser {
    frag: u32,
    aliases: HashMap<String, Value>,
    /// Default clock of the data stream class being read.
    clock: Option<String>,
    /// Reading a packet context (a default-clock timestamp there marks its beginning).
    in_packet_context: bool,
    /// Root scope being read, and member names from it to the field being read (for
    /// relative field locations).
    scope: Scope,
    path: std::cell::RefCell<Vec<String>>,
}

const MAX_DEPTH: usize = 48;

impl Parser {
    fn str_prop<'v>(&self, v: &'v Value, key: &str) -> R<&'v str> {
        v.get(key).and_then(Value::as_str).ok_or((self.frag, format!("missing or non-string property `{key}`")))
    }

    fn uuid(&self, v: Option<&Value>) -> R<Option<[u8; 16]>> {
        let Some(v) = v else { return Ok(None) };
        let bad = || (self.frag, "a UUID must be an array of 16 bytes".to_string());
        let a = v.as_array().filter(|a| a.len() == 16).ok_or_else(bad)?;
        let mut out = [0u8; 16];
        for (o, x) in out.iter_mut().zip(a) {
            *o = x.as_u64().filter(|b| *b < 256).ok_or_else(bad)? as u8;
        }
        Ok(Some(out))
    }

    fn clock_class(&self, v: &Value) -> R<ClockClass> {
        let name = v.get("id").or(v.get("name")).and_then(Value::as_str).ok_or((self.frag, "clock class without `id`".to_string()))?;
        let freq = v.get("frequency").and_then(Value::as_u64).filter(|f| *f > 0).ok_or((self.frag, "clock class needs a positive `frequency`".to_string()))?;
        let off = v.get("offset-from-origin");
        let offset_s = off.and_then(|o| o.get("seconds")).and_then(Value::as_i64).unwrap_or(0);
        let offset_cycles = off.and_then(|o| o.get("cycles")).and_then(Value::as_u64).unwrap_or(0);
        let offset_cycles = i64::try_from(offset_cycles).map_err(|_| (self.frag, "clock offset cycles out of range".to_string()))?;
        Ok(ClockClass {
            name: name.to_string(),
            freq,
            offset_s,
            offset_cycles,
            precision: v.get("precision").and_then(Value::as_u64).unwrap_or(0),
            absolute: v.get("origin").is_some_and(|o| o.as_str() == Some("unix-epoch") || o.is_object()),
            uuid: self.uuid(v.get("uuid"))?,
            description: v.get("description").and_then(Value::as_str).map(str::to_string),
        })
    }

    fn byte_order(&self, v: &Value) -> R<ByteOrder> {
        match v.get("byte-order").and_then(Value::as_str) {
            None | Some("little-endian") => Ok(ByteOrder::Little),
            Some("big-endian") => Ok(ByteOrder::Big),
            Some(o) => Err((self.frag, format!("unknown byte order `{o}`"))),
        }
    }

    fn alignment(&self, v: &Value, default: u64) -> R<u32> {
        let a = v.get("alignment").and_then(Value::as_u64).unwrap_or(default);
        if a == 0 || !a.is_power_of_two() || a > 1 << 20 {
            return Err((self.frag, format!("alignment {a} is not a power of two")));
        }
        Ok(a as u32)
    }

    /// The role of an integer field and the clock it updates.
    fn role(&self, v: &Value) -> R<(Option<Role>, Option<String>)> {
        let mut role = None;
        let mut clock = None;
        for r in v.get("roles").and_then(Value::as_array).into_iter().flatten() {
            let r = r.as_str().ok_or((self.frag, "roles must be strings".to_string()))?;
            match r {
                "packet-magic-number" => role = Some(Role::PacketMagic),
                "data-stream-class-id" => role = Some(Role::StreamClassId),
                "data-stream-id" => role = Some(Role::StreamInstanceId),
                "packet-total-length" => role = Some(Role::PacketTotalSize),
                "packet-content-length" => role = Some(Role::PacketContentSize),
                "packet-sequence-number" => role = Some(Role::PacketSequenceNumber),
                "discarded-event-record-counter-snapshot" => role = Some(Role::DiscardedEventCounter),
                "event-record-class-id" => role = Some(Role::EventClassId),
                "default-clock-timestamp" => {
                    if self.in_packet_context {
                        role = Some(Role::PacketBeginTimestamp);
                    }
                    clock = Some(self.clock.clone().ok_or((self.frag, "a default-clock-timestamp field needs a default clock class".to_string()))?);
                }
                "packet-end-default-clock-timestamp" => {
                    role = Some(Role::PacketEndTimestamp);
                    clock = Some(self.clock.clone().ok_or((self.frag, "a packet-end timestamp needs a default clock class".to_string()))?);
                }
                _ => {} // metadata-stream-uuid and unknown roles: informational.
            }
        }
        Ok((role, clock))
    }

    fn field_location(&self, v: &Value) -> R<FieldPath> {
        let (origin, path): (&str, Vec<&Value>) = match v {
            Value::Array(a) if !a.is_empty() => (a[0].as_str().unwrap_or_default(), a[1..].iter().collect()),
            Value::Object(o) => match o.get("origin").and_then(Value::as_str) {
                Some(origin) => (origin, o.get("path").and_then(Value::as_array).map(|p| p.iter().collect()).unwrap_or_default()),
                None => return self.relative_location(o.get("path")),
            },
            _ => return Err((self.frag, "bad field location".into())),
        };
        let scope = match origin {
            "packet-header" => Scope::PacketHeader,
            "packet-context" => Scope::PacketContext,
            "event-record-header" => Scope::EventHeader,
            "event-record-common-context" => Scope::EventCommonContext,
            "event-record-specific-context" => Scope::EventSpecificContext,
            "event-record-payload" => Scope::EventPayload,
            o => return Err((self.frag, format!("unknown field location origin `{o}`"))),
        };
        let path = path
            .into_iter()
            .map(|x| x.as_str().map(str::to_string).ok_or((self.frag, "field location path elements must be strings".to_string())))
            .collect::<R<Vec<_>>>()?;
        Ok(FieldPath { scope, path })
    }

    /// A location without origin: relative to the structure holding the field being
    /// read; each `null` goes up one structure (CTF2-SPEC-2.0, field locations).
    fn relative_location(&self, path: Option<&Value>) -> R<FieldPath> {
        let bad = || (self.frag, "a relative field location needs a `path` of names and nulls".to_string());
        let elems = path.and_then(Value::as_array).filter(|a| !a.is_empty()).ok_or_else(bad)?;
        let mut base = self.path.borrow().clone();
        base.pop(); // the field itself
        for e in elems {
            match e {
                Value::Null => {
                    base.pop().ok_or((self.frag, "relative field location goes above its root scope".to_string()))?;
                }
                Value::String(n) => base.push(n.clone()),
                _ => return Err(bad()),
            }
        }
        Ok(FieldPath { scope: self.scope, path: base })
    }

    fn ranges(&self, v: Option<&Value>) -> R<Vec<(i128, i128)>> {
        let bad = || (self.frag, "an integer range set must be a list of [lower, upper] pairs".to_string());
        let mut out = Vec::new();
        for r in v.and_then(Value::as_array).ok_or_else(bad)? {
            let pair = r.as_array().filter(|a| a.len() == 2).ok_or_else(bad)?;
            let num = |x: &Value| x.as_i64().map(|i| i as i128).or(x.as_u64().map(|u| u as i128)).ok_or_else(bad);
            let (lo, hi) = (num(&pair[0])?, num(&pair[1])?);
            out.push((lo.min(hi), lo.max(hi)));
        }
        Ok(out)
    }

    fn field_class(&self, v: &Value, depth: usize) -> R<FieldClass> {
        if depth > MAX_DEPTH {
            return Err((self.frag, format!("field classes nested deeper than {MAX_DEPTH}")));
        }
        if let Value::String(alias) = v {
            let target = self.aliases.get(alias).ok_or((self.frag, format!("unknown field class alias `{alias}`")))?;
            return self.field_class(target, depth + 1);
        }
        let ty = self.str_prop(v, "type")?;
        let int = |signed: bool| -> R<IntClass> {
            let size = v.get("length").and_then(Value::as_u64).ok_or((self.frag, format!("`{ty}` without `length`")))?;
            if size == 0 || size > 64 {
                return Err((self.frag, format!("integer length {size}: 1 to 64 bits are supported")));
            }
            let (role, mapped_clock) = self.role(v)?;
            Ok(IntClass {
                size: size as u32,
                align: self.alignment(v, 1)?,
                signed,
                byte_order: self.byte_order(v)?,
                base: v.get("preferred-display-base").and_then(Value::as_u64).unwrap_or(10) as u32,
                encoding: Encoding::None,
                mapped_clock,
                role,
            })
        };
        let elem = |key: &str| -> R<FieldClass> { self.field_class(v.get(key).ok_or((self.frag, format!("`{ty}` without `{key}`")))?, depth + 1) };
        let byte =
            || IntClass { size: 8, align: 8, signed: false, byte_order: ByteOrder::Little, base: 10, encoding: Encoding::None, mapped_clock: None, role: None };
        let len = || v.get("length").and_then(Value::as_u64).ok_or((self.frag, format!("`{ty}` without `length`")));
        let len_loc = || self.field_location(v.get("length-field-location").ok_or((self.frag, format!("`{ty}` without `length-field-location`")))?);
        Ok(match ty {
            "fixed-length-unsigned-integer" | "fixed-length-bit-array" | "fixed-length-bit-map" => FieldClass::Int(int(false)?),
            "fixed-length-boolean" => FieldClass::Bool(int(false)?),
            "optional" => {
                let selector =
                    self.field_location(v.get("selector-field-location").ok_or((self.frag, "optional without `selector-field-location`".to_string()))?)?;
                let ranges = v.get("selector-field-ranges").map(|r| self.ranges(Some(r))).transpose()?;
                FieldClass::Optional(Box::new(OptionalClass { fc: elem("field-class")?, selector, ranges }))
            }
            "fixed-length-signed-integer" => FieldClass::Int(int(true)?),
            "fixed-length-unsigned-enumeration" | "fixed-length-signed-enumeration" => {
                let i = int(ty.contains("signed-enum") && !ty.contains("unsigned"))?;
                let mut mappings = Vec::new();
                for (label, rs) in v.get("mappings").and_then(Value::as_object).ok_or((self.frag, "enumeration without `mappings`".to_string()))? {
                    for (lo, hi) in self.ranges(Some(rs))? {
                        mappings.push(EnumMapping { label: label.clone(), lo, hi });
                    }
                }
                FieldClass::Enum(Box::new(EnumClass { int: i, mappings }))
            }
            "fixed-length-floating-point-number" => {
                let bits = len()?;
                let (exp_dig, mant_dig) = match bits {
                    32 => (8, 24),
                    64 => (11, 53),
                    b => return Err((self.frag, format!("floating point numbers of {b} bits are not supported"))),
                };
                FieldClass::Float(FloatClass { exp_dig, mant_dig, align: self.alignment(v, 1)?, byte_order: self.byte_order(v)? })
            }
            "variable-length-unsigned-integer" | "variable-length-signed-integer" => {
                FieldClass::VarInt(VarIntClass { signed: ty.contains("signed-integer") && !ty.contains("unsigned"), role: self.role(v)?.0 })
            }
            "null-terminated-string" => {
                let encoding = match v.get("encoding").and_then(Value::as_str) {
                    None | Some("utf-8") => Encoding::Utf8,
                    Some("utf-16be") => Encoding::Utf16Be,
                    Some("utf-16le") => Encoding::Utf16Le,
                    Some("utf-32be") => Encoding::Utf32Be,
                    Some("utf-32le") => Encoding::Utf32Le,
                    Some(e) => return Err((self.frag, format!("unknown string encoding `{e}`"))),
                };
                FieldClass::String(StringClass { encoding })
            }
            "static-length-string" => {
                FieldClass::Array(Box::new(ArrayClass { elem: FieldClass::Int(IntClass { encoding: Encoding::Utf8, ..byte() }), len: len()? }))
            }
            "dynamic-length-string" => {
                FieldClass::Sequence(Box::new(SequenceClass { elem: FieldClass::Int(IntClass { encoding: Encoding::Utf8, ..byte() }), length: len_loc()? }))
            }
            "static-length-blob" => FieldClass::Array(Box::new(ArrayClass { elem: FieldClass::Int(byte()), len: len()? })),
            "dynamic-length-blob" => FieldClass::Sequence(Box::new(SequenceClass { elem: FieldClass::Int(byte()), length: len_loc()? })),
            "static-length-array" => FieldClass::Array(Box::new(ArrayClass { elem: elem("element-field-class")?, len: len()? })),
            "dynamic-length-array" => FieldClass::Sequence(Box::new(SequenceClass { elem: elem("element-field-class")?, length: len_loc()? })),
            "structure" => {
                let mut members = Vec::new();
                for m in v.get("member-classes").and_then(Value::as_array).into_iter().flatten() {
                    let name = self.str_prop(m, "name")?.to_string();
                    if members.iter().any(|(n, _)| *n == name) {
                        return Err((self.frag, format!("duplicate structure member `{name}`")));
                    }
                    self.path.borrow_mut().push(name.clone());
                    let fc =
                        m.get("field-class").ok_or((self.frag, format!("member `{name}` without `field-class`"))).and_then(|f| self.field_class(f, depth + 1));
                    self.path.borrow_mut().pop();
                    members.push((name, fc?));
                }
                let min_align = v.get("minimum-alignment").and_then(Value::as_u64).unwrap_or(1);
                if min_align == 0 || !min_align.is_power_of_two() {
                    return Err((self.frag, format!("minimum-alignment {min_align} is not a power of two")));
                }
                FieldClass::Struct(Box::new(StructClass { min_align: min_align as u32, members }))
            }
            "variant" => {
                let tag = self.field_location(v.get("selector-field-location").ok_or((self.frag, "variant without `selector-field-location`".to_string()))?)?;
                let mut options = Vec::new();
                let mut ranges = Vec::new();
                for (i, o) in v.get("options").and_then(Value::as_array).ok_or((self.frag, "variant without `options`".to_string()))?.iter().enumerate() {
                    let name = o.get("name").and_then(Value::as_str).map(str::to_string).unwrap_or_else(|| format!("option{i}"));
                    let fc = self.field_class(o.get("field-class").ok_or((self.frag, format!("variant option `{name}` without `field-class`")))?, depth + 1)?;
                    ranges.push(self.ranges(o.get("selector-field-ranges"))?);
                    options.push((name, fc));
                }
                FieldClass::Variant(Box::new(VariantClass { tag, options, selector_ranges: Some(ranges) }))
            }
            other => return Err((self.frag, format!("unsupported field class type `{other}`"))),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn seq(frags: &[&str]) -> Vec<u8> {
        frags.iter().flat_map(|f| std::iter::once(RS).chain(f.bytes())).collect()
    }

    const PRE: &str = r#"{"type":"preamble","version":2}"#;

    #[test]
    fn minimal_trace() {
        let m = seq(&[
            PRE,
            r#"{"type":"trace-class","environment":{"a":"b","n":3}}"#,
            r#"{"type":"event-record-class","name":"e","payload-field-class":{"type":"structure","member-classes":[{"name":"x","field-class":{"type":"variable-length-signed-integer"}}]}}"#,
        ]);
        assert!(is_ctf2(&m));
        let tc = parse_ctf2(&m).unwrap();
        assert_eq!(tc.env.len(), 2);
        assert!(matches!(tc.streams[0].event_classes[0].payload.as_ref().unwrap().member("x"), Some(FieldClass::VarInt(VarIntClass { signed: true, .. }))));
    }

    #[test]
    fn optional_bool_and_relative_locations() {
        let ev = r#"{"type":"event-record-class","name":"e","payload-field-class":{"type":"structure","member-classes":[
            {"name":"has","field-class":{"type":"fixed-length-boolean","length":8,"alignment":8}},
            {"name":"n","field-class":{"type":"fixed-length-unsigned-integer","length":8,"alignment":8}},
            {"name":"inner","field-class":{"type":"structure","member-classes":[
                {"name":"o","field-class":{"type":"optional","selector-field-location":{"path":[null,"has"]},"field-class":{"type":"null-terminated-string","encoding":"utf-16le"}}},
                {"name":"a","field-class":{"type":"dynamic-length-array","length-field-location":{"path":[null,"n"]},"element-field-class":{"type":"fixed-length-unsigned-integer","length":8}}}]}}]}}"#;
        let tc = parse_ctf2(&seq(&[PRE, ev])).unwrap();
        let p = tc.streams[0].event_classes[0].payload.as_ref().unwrap();
        let FieldClass::Struct(inner) = p.member("inner").unwrap() else { panic!() };
        let FieldClass::Optional(o) = &inner.members[0].1 else { panic!() };
        assert_eq!(o.selector, FieldPath { scope: Scope::EventPayload, path: vec!["has".into()] });
        let FieldClass::Sequence(q) = &inner.members[1].1 else { panic!() };
        assert_eq!(q.length.path, vec!["n".to_string()]);
        assert!(matches!(p.member("has"), Some(FieldClass::Bool(_))));
        let up_too_far = ev.replace(r#"[null,"n"]"#, r#"[null,null,"n"]"#);
        assert!(parse_ctf2(&seq(&[PRE, &up_too_far])).is_err());
    }

    #[test]
    fn log_levels_from_attributes() {
        let ev = |attrs: &str| seq(&[PRE, &format!(r#"{{"type":"event-record-class","name":"e",{attrs}}}"#)]);
        let level = |m: Vec<u8>| parse_ctf2(&m).unwrap().streams[0].event_classes[0].loglevel;
        assert_eq!(level(ev(r#""attributes":{"lttng.org,2009":{"log-level":13}}"#)), Some(13));
        assert_eq!(level(ev(r#""user-attributes":{"babeltrace.org,2020":{"log-level":"warning"}}"#)), Some(4));
        assert_eq!(level(ev(r#""id":3"#)), None);
    }

    #[test]
    fn errors() {
        assert!(parse_ctf2(&seq(&["{not json"])).unwrap_err().1.contains("invalid JSON"));
        assert!(parse_ctf2(&seq(&[r#"{"type":"preamble"}"#])).unwrap_err().1.contains("version"));
        assert!(parse_ctf2(&seq(&[r#"{"type":"preamble","version":2,"extensions":{"acme":{"x":{}}}}"#])).unwrap_err().1.contains("acme"));
        assert!(parse_ctf2(&seq(&[r#"{"type":"trace-class"}"#])).unwrap_err().1.contains("preamble"));
        let bad_member = r#"{"type":"event-record-class","payload-field-class":{"type":"structure","member-classes":[{"name":"x"}]}}"#;
        assert_eq!(parse_ctf2(&seq(&[PRE, bad_member])).unwrap_err().0, 2);
        let unknown = r#"{"type":"event-record-class","payload-field-class":{"type":"wat"}}"#;
        assert!(parse_ctf2(&seq(&[PRE, unknown])).unwrap_err().1.contains("wat"));
    }
}
