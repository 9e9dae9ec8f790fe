//! Output of decoded events: the canonical JSON-lines dump of
//! `shared/oracle/bt2_canonical.py` (the text view like Babeltrace 2's, and the fast
//! writer of both, are in [`crate::text`]).
//!
//! JSON records, one per line:
//! - event: `{"ts":NS|null,"name":S,"sec":{..},"ec":{..},"p":{..}}` (empty scopes omitted);
//! - discarded events: `{"discarded":N,"ts":END_NS|null}`;
//! - lost packets: `{"lost_packets":N,"ts":END_NS|null}`.
//!
//! Values: integers as numbers, enumerations as `{"enum":V,"labels":[sorted]}`, floats as
//! numbers (`NaN`, `Infinity` as Python writes them), strings and character arrays as
//! strings, structures as objects, arrays and sequences as lists, variants as the value
//! of their selected option.
//!
//! Strings are written as the trace's bytes hold them, an empty string as `""`
//! (Babeltrace 2.0.4 may show an empty string field as an older value of a recycled
//! event object; the oracle reads every string by its true length, and so do we).

use crate::decode::Visitor;
use crate::error::DecodeError;

use crate::plan::{Node, NodeId, Plan};
use crate::stream::{EventRef, EventScope, Item};

/// Writes a JSON string literal.
pub fn json_str(out: &mut Vec<u8>, bytes: &[u8]) {
    // The common case, printable ASCII without quotes or backslashes, as it is.
    if bytes.iter().all(|&b| (0x20..0x7F).contains(&b) && b != b'"' && b != b'\\') {
        out.push(b'"');
        out.extend_from_slice(bytes);
        out.push(b'"');
        return;
    }
    let s = String::from_utf8_lossy(bytes);
    out.push(b'"');
    for c in s.chars() {
        match c {
            '"' => out.extend_from_slice(b"\\\""),
            '\\' => out.extend_from_slice(b"\\\\"),
            '\n' => out.extend_from_slice(b"\\n"),
            '\r' => out.extend_from_slice(b"\\r"),
            '\t' => out.extend_from_slice(b"\\t"),
            c if (c as u32) < 0x20 => out.extend_from_slice(format!("\\u{:04x}", c as u32).as_bytes()),
            c => {
                let mut b = [0u8; 4];
                out.extend_from_slice(c.encode_utf8(&mut b).as_bytes());
            }
        }
    }
    out.push(b'"');
}

pub(crate) fn json_float(out: &mut Vec<u8>, v: f64) {
    use std::io::Write;
    if v.is_nan() {
        out.extend_from_slice(b"NaN");
    } else if v.is_infinite() {
        out.extend_from_slice(if v > 0.0 { b"Infinity" } else { b"-Infinity" });
    } else {
        let _ = write!(out, "{v:?}");
    }
}

/// Labels of an enumeration's mappings that contain `value`, sorted and unique.
pub fn enum_labels(plan: &Plan, enum_idx: u32, value: i128) -> Vec<&str> {
    let mut l: Vec<&str> = plan.enums[enum_idx as usize].iter().filter(|m| m.lo <= value && value <= m.hi).map(|m| m.label.as_str()).collect();
    l.sort_unstable();
    l.dedup();
    l
}

/// UTF-16 or UTF-32 code units (without terminator) as a UTF-8 string.
pub fn decode_wide(bytes: &[u8], unit: u32, be: bool) -> String {
    if unit == 2 {
        let units = bytes.chunks_exact(2).map(|c| if be { u16::from_be_bytes([c[0], c[1]]) } else { u16::from_le_bytes([c[0], c[1]]) });
        char::decode_utf16(units).map(|c| c.unwrap_or(char::REPLACEMENT_CHARACTER)).collect()
    } else {
        bytes
            .chunks_exact(4)
            .map(|c| {
                let a = [c[0], c[1], c[2], c[3]];
                char::from_u32(if be { u32::from_be_bytes(a) } else { u32::from_le_bytes(a) }).unwrap_or(char::REPLACEMENT_CHARACTER)
            })
            .collect()
    }
}

/// Builds the JSON value of a scope.
struct JsonVisitor<'o> {
    out: &'o mut Vec<u8>,
    plan: &'o Plan,
    /// Open containers: (is_array, elements written).
    stack: Vec<(bool, u32)>,
}

impl JsonVisitor<'_> {
    /// Writes the separator a value needs inside an array (object members get theirs
    /// from [`Visitor::member`]).
    fn before_value(&mut self) {
        if let Some((true, n)) = self.stack.last_mut() {
            if *n > 0 {
                self.out.push(b',');
            }
            *n += 1;
        }
    }
}

impl Visitor for JsonVisitor<'_> {
    fn int(&mut self, plan: &Plan, node: &Node, raw: u64) {
        use std::io::Write;
        let (signed, enum_idx) = match *node {
            Node::Int { boolean: true, .. } => {
                self.before_value();
                self.out.extend_from_slice(if raw != 0 { b"true" } else { b"false" });
                return;
            }
            Node::Int { signed, enum_idx, .. } => (signed, enum_idx),
            Node::VarInt { signed, .. } => (signed, None),
            _ => return,
        };
        self.before_value();
        let value: i128 = if signed { raw as i64 as i128 } else { raw as i128 };
        match enum_idx {
            Some(e) => {
                let _ = write!(self.out, "{{\"enum\":{value},\"labels\":[");
                for (i, l) in enum_labels(plan, e, value).iter().enumerate() {
                    if i > 0 {
                        self.out.push(b',');
                    }
                    json_str(self.out, l.as_bytes());
                }
                self.out.extend_from_slice(b"]}");
            }
            None => {
                let _ = write!(self.out, "{value}");
            }
        }
    }
    fn float(&mut self, v: f64) {
        self.before_value();
        json_float(self.out, v);
    }
    fn null(&mut self) {
        self.before_value();
        self.out.extend_from_slice(b"null");
    }
    fn string(&mut self, node: NodeId, bytes: &[u8]) {
        self.before_value();
        let wide;
        let bytes = match self.plan.node(node) {
            Node::Str { unit, be, .. } if *unit > 1 => {
                wide = decode_wide(bytes, *unit, *be);
                wide.as_bytes()
            }
            _ => bytes,
        };
        json_str(self.out, bytes);
    }
    fn begin_struct(&mut self) {
        self.before_value();
        self.out.push(b'{');
        self.stack.push((false, 0));
    }
    fn member(&mut self, name: &str) {
        if let Some((false, n)) = self.stack.last_mut() {
            if *n > 0 {
                self.out.push(b',');
            }
            *n += 1;
        }
        json_str(self.out, name.as_bytes());
        self.out.push(b':');
    }
    fn end_struct(&mut self) {
        self.stack.pop();
        self.out.push(b'}');
    }
    fn begin_array(&mut self) {
        self.before_value();
        self.out.push(b'[');
        self.stack.push((true, 0));
    }
    fn end_array(&mut self) {
        self.stack.pop();
        self.out.push(b']');
    }
}

fn opt_i64(out: &mut Vec<u8>, v: Option<i64>) {
    use std::io::Write;
    match v {
        Some(v) => {
            let _ = write!(out, "{v}");
        }
        None => out.extend_from_slice(b"null"),
    }
}

/// Appends the canonical JSON line (with `\n`) of an item to `out`.
pub fn write_json(out: &mut Vec<u8>, item: &mut Item<'_, '_>) -> Result<(), DecodeError> {
    use std::io::Write;
    match item {
        Item::Discarded(n) => {
            let _ = write!(out, "{{\"discarded\":{},\"ts\":", n.count);
            opt_i64(out, n.end_ns);
            out.extend_from_slice(b"}\n");
        }
        Item::LostPackets(n) => {
            let _ = write!(out, "{{\"lost_packets\":{},\"ts\":", n.count);
            opt_i64(out, n.end_ns);
            out.extend_from_slice(b"}\n");
        }
        Item::Event(e) => write_event_json(out, e)?,
    }
    Ok(())
}

/// Appends the canonical JSON line of an event.
pub fn write_event_json(out: &mut Vec<u8>, e: &mut EventRef<'_, '_>) -> Result<(), DecodeError> {
    use std::io::Write;
    out.extend_from_slice(b"{\"ts\":");
    match e.ts_wide() {
        // Beyond 64 bits of nanoseconds: modulo 2^64, as Babeltrace 1 prints it.
        Some(w) if w > i64::MAX as i128 => {
            let _ = write!(out, "{}", w as u64);
        }
        _ => opt_i64(out, e.ts()),
    }
    out.extend_from_slice(b",\"name\":");
    json_str(out, e.name().as_bytes());
    for (key, scope) in [("sec", EventScope::CommonContext), ("ec", EventScope::SpecificContext), ("p", EventScope::Payload)] {
        let mark = out.len();
        out.extend_from_slice(b",\"");
        out.extend_from_slice(key.as_bytes());
        out.extend_from_slice(b"\":");
        let body = out.len();
        let plan = e.plan();
        let had = e.visit(scope, &mut JsonVisitor { out, plan, stack: Vec::new() })?;
        if !had || &out[body..] == b"{}" {
            out.truncate(mark);
        }
    }
    out.extend_from_slice(b"}\n");
    Ok(())
}

/// Appends `key` and the JSON value of one scope of `e` through the interpreter,
/// nothing when the event has no such scope or it is an empty structure.
pub(crate) fn push_json_scope(out: &mut Vec<u8>, e: &mut EventRef<'_, '_>, scope: EventScope, key: &[u8]) -> Result<(), DecodeError> {
    let mark = out.len();
    out.extend_from_slice(key);
    let body = out.len();
    let plan = e.plan();
    let had = e.visit(scope, &mut JsonVisitor { out, plan, stack: Vec::new() })?;
    if !had || &out[body..] == b"{}" {
        out.truncate(mark);
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn json_strings_escape() {
        let mut out = Vec::new();
        json_str(&mut out, b"a\"b\\\n\x01");
        assert_eq!(out, br#""a\"b\\\n\u0001""#);
    }
}
