//! The text view of events, line for line as Babeltrace 2's `sink.text.pretty` writes
//! it (`babeltrace2 TRACE`), and the fast writing of the canonical JSON dump.
//!
//! Speed: each event class's scopes are compiled once into programs of literal text and
//! value reads ([`prog`]); the header of a line (host, name, ...) is built once per event
//! class, the packet context once per packet, the time of day once per second, an
//! enumeration's labels once per value. Nothing is allocated per event. Scopes with
//! variable shapes go through the [`Visitor`](crate::decode::Visitor) path ([`visit`]).
//!
//! Parts: [`num`] formats numbers and dates, [`prog`] compiles and runs scope
//! programs, [`line`](mod@line) writes whole lines (the [`TextWriter`]), [`visit`] is the
//! general path.

pub mod line;
pub mod num;
pub mod prog;
pub mod visit;

use std::collections::HashMap;

use crate::plan::Plan;

pub use line::{Fields, Names, TextOptions, TextWriter, TimeFormat};

/// Which output a program writes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Style {
    /// Babeltrace 2's text.
    Text,
    /// The canonical JSON dump.
    Json,
}

/// Appends `s` quoted and escaped as Babeltrace 2 does (`print_escape_string`):
/// backslash, quotes and `?` escaped, control characters as C escapes or `\xNN`, other
/// bytes (UTF-8 included) as they are.
#[inline]
pub fn push_escaped(out: &mut Vec<u8>, s: &[u8]) {
    out.push(b'"');
    let plain = |b: u8| b >= 0x20 && b != 0x7F && !matches!(b, b'\\' | b'\'' | b'"' | b'?');
    if s.iter().all(|&b| plain(b)) {
        out.extend_from_slice(s);
    } else {
        for &b in s {
            if plain(b) {
                out.push(b);
                continue;
            }
            let esc: &[u8] = match b {
                b'\\' => b"\\\\",
                b'\'' => b"\\'",
                b'"' => b"\\\"",
                b'?' => b"\\?",
                0 => b"\\0",
                7 => b"\\a",
                8 => b"\\b",
                0x1B => b"\\e",
                0x0C => b"\\f",
                b'\n' => b"\\n",
                b'\r' => b"\\r",
                b'\t' => b"\\t",
                0x0B => b"\\v",
                _ => {
                    const HEX: &[u8; 16] = b"0123456789abcdef";
                    out.extend_from_slice(&[b'\\', b'x', HEX[(b >> 4) as usize], HEX[(b & 15) as usize]]);
                    continue;
                }
            };
            out.extend_from_slice(esc);
        }
    }
    out.push(b'"');
}

/// Enumeration labels by (enumeration, value), formatted once: the text before the
/// value (`( "A", "B" : container = `) or the JSON after it (`,"labels":["A"]}`).
#[derive(Debug, Default)]
pub struct EnumCache {
    text: HashMap<(u32, u64), Box<[u8]>>,
    json: HashMap<(u32, u64), Box<[u8]>>,
}

impl EnumCache {
    /// Appends enumeration `e`'s value `v` (sign-extended when `signed`) with its
    /// labels, the value shown in `is`.
    #[allow(clippy::too_many_arguments)]
    #[inline]
    pub fn push(&mut self, plan: &Plan, style: Style, e: u32, signed: bool, is: num::IntStyle, v: u64, out: &mut Vec<u8>) {
        let value: i128 = if signed { v as i64 as i128 } else { v as i128 };
        match style {
            Style::Text => {
                let pre = self.text.entry((e, v)).or_insert_with(|| {
                    let mut s = b"( ".to_vec();
                    let mut seen: Vec<&str> = Vec::new();
                    for m in plan.enums[e as usize].iter().filter(|m| m.lo <= value && value <= m.hi) {
                        if !seen.contains(&m.label.as_str()) {
                            seen.push(&m.label);
                        }
                    }
                    if seen.is_empty() {
                        s.extend_from_slice(b"<unknown>");
                    }
                    for (i, l) in seen.iter().enumerate() {
                        if i > 0 {
                            s.extend_from_slice(b", ");
                        }
                        push_escaped(&mut s, l.as_bytes());
                    }
                    s.extend_from_slice(b" : container = ");
                    s.into_boxed_slice()
                });
                out.extend_from_slice(pre);
                is.push(out, v);
                out.extend_from_slice(b" )");
            }
            Style::Json => {
                out.extend_from_slice(b"{\"enum\":");
                is.push(out, v);
                let post = self.json.entry((e, v)).or_insert_with(|| {
                    let mut s = b",\"labels\":[".to_vec();
                    for (i, l) in crate::dump::enum_labels(plan, e, value).iter().enumerate() {
                        if i > 0 {
                            s.push(b',');
                        }
                        crate::dump::json_str(&mut s, l.as_bytes());
                    }
                    s.extend_from_slice(b"]}");
                    s.into_boxed_slice()
                });
                out.extend_from_slice(post);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn babeltrace_escapes() {
        let mut out = Vec::new();
        push_escaped(&mut out, b"a\"b\\c'?\n\x01\x7f\xc3\xa9");
        assert_eq!(out, b"\"a\\\"b\\\\c\\'\\?\\n\\x01\\x7f\xc3\xa9\"".to_vec());
    }
}
