//! The general path of the text view: a scope written through the
//! [`Visitor`] callbacks of the plan interpreter, for the shapes compiled programs
//! leave out (variants, arrays and sequences of values, optional fields,
//! variable-length integers, wide strings).

use crate::decode::Visitor;
use crate::dump::decode_wide;
use crate::plan::{Node, NodeId, Plan};

use super::num::{push_g, push_u64, IntStyle};
use super::{push_escaped, EnumCache, Style};

/// Writes a scope as Babeltrace 2 does, with or without member names and array indexes.
pub struct TextVisitor<'o> {
    /// Where the text goes.
    pub out: &'o mut Vec<u8>,
    /// The plan of the event's trace.
    pub plan: &'o Plan,
    /// Whether names (and array indexes) are shown.
    pub names: bool,
    /// Enumeration labels.
    pub enums: &'o mut EnumCache,
    /// Open containers: (is an array, elements written, output length where a hidden
    /// member began, to be cut when the next member or the end comes).
    stack: Vec<(bool, u32, Option<usize>)>,
}

impl<'o> TextVisitor<'o> {
    /// A visitor appending to `out`.
    pub fn new(out: &'o mut Vec<u8>, plan: &'o Plan, names: bool, enums: &'o mut EnumCache) -> Self {
        TextVisitor { out, plan, names, enums, stack: Vec::new() }
    }

    /// Array elements are shown as `[i] = value`.
    fn before_value(&mut self) {
        if let Some((true, n, _)) = self.stack.last_mut() {
            let i = *n;
            *n += 1;
            self.out.extend_from_slice(if i > 0 { b", " } else { b" " });
            if self.names {
                self.out.push(b'[');
                push_u64(self.out, u64::from(i));
                self.out.extend_from_slice(b"] = ");
            }
        }
    }

    /// Cuts the text of a hidden member that just ended.
    fn end_member(&mut self) {
        if let Some((false, _, cut)) = self.stack.last_mut() {
            if let Some(at) = cut.take() {
                self.out.truncate(at);
            }
        }
    }
}

impl Visitor for TextVisitor<'_> {
    fn int(&mut self, plan: &Plan, node: &Node, raw: u64) {
        let (bits, signed, enum_idx, base) = match *node {
            Node::Int { boolean: true, .. } => {
                self.before_value();
                self.out.extend_from_slice(if raw != 0 { b"true" } else { b"false" });
                return;
            }
            Node::Int { bits, signed, enum_idx, base, .. } => (bits, signed, enum_idx, base),
            Node::VarInt { signed, .. } => (64, signed, None, 10),
            _ => return,
        };
        self.before_value();
        let is = IntStyle::new(bits, signed, base);
        match enum_idx {
            Some(e) => self.enums.push(plan, Style::Text, e, signed, is, raw, self.out),
            None => is.push(self.out, raw),
        }
    }
    fn float(&mut self, v: f64) {
        self.before_value();
        push_g(self.out, v);
    }
    fn null(&mut self) {
        self.before_value();
        self.out.extend_from_slice(b"null");
    }
    fn string(&mut self, node: NodeId, bytes: &[u8]) {
        self.before_value();
        match self.plan.node(node) {
            Node::Str { unit, be, .. } if *unit > 1 => push_escaped(self.out, decode_wide(bytes, *unit, *be).as_bytes()),
            _ => push_escaped(self.out, bytes),
        }
    }
    fn begin_struct(&mut self) {
        self.before_value();
        self.out.push(b'{');
        self.stack.push((false, 0, None));
    }
    fn member_node(&mut self, name: &str, node: NodeId) {
        self.end_member();
        let hidden = matches!(self.plan.node(node), Node::Int { role: Some(_), .. } | Node::Int { clock: true, .. });
        let at = self.out.len();
        if let Some((false, n, cut)) = self.stack.last_mut() {
            if hidden {
                *cut = Some(at);
            } else {
                self.out.extend_from_slice(if *n > 0 { b", " } else { b" " });
                *n += 1;
            }
        }
        if self.names {
            self.out.extend_from_slice(name.as_bytes());
            self.out.extend_from_slice(b" = ");
        }
    }
    fn end_struct(&mut self) {
        self.end_member();
        self.stack.pop();
        self.out.extend_from_slice(b" }");
    }
    fn begin_array(&mut self) {
        self.before_value();
        self.out.push(b'[');
        self.stack.push((true, 0, None));
    }
    fn end_array(&mut self) {
        self.stack.pop();
        self.out.extend_from_slice(b" ]");
    }
    fn begin_variant(&mut self, _name: &str) {
        self.before_value();
        self.out.extend_from_slice(b"{ ");
        // The option's value is not an array element of its own.
        self.stack.push((false, 1, None));
    }
    fn end_variant(&mut self) {
        self.stack.pop();
        self.out.extend_from_slice(b" }");
    }
}
