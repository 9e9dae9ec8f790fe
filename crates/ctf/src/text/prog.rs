//! Compiled scope programs: a scope's field classes turned once into literal text (the
//! braces, separators and member names) interleaved with value reads, so that an event
//! is written by copying literals and formatting numbers, without walking the plan's
//! tree or dispatching on its nodes. Scopes holding variable shapes (variants,
//! non-text arrays and sequences, optional fields, variable-length integers, wide
//! strings) have no program and are written through the [`crate::decode::Visitor`]
//! path instead.

use crate::bits::sign_extend;
use crate::decode::{node_align, Cursor};
use crate::error::{DecodeError, DecodeErrorKind};
use crate::plan::{Node, NodeId, Plan};

use super::num::{push_g, put_short, IntStyle};
use super::{push_escaped, EnumCache, Style};

/// One step of a program.
#[derive(Debug, Clone, Copy)]
enum Op {
    /// Copy `lits[from..to]`.
    Lit(u32, u32),
    /// Align the cursor.
    Align(u32),
    /// Read and show an integer (an enumeration's value and labels when `en` is set).
    Int { align: u32, bits: u32, be: bool, signed: bool, style: IntStyle, en: Option<u32> },
    /// Read and show an integer as `true`/`false`.
    Bool { align: u32, bits: u32, be: bool },
    /// Read an integer that is not shown (Babeltrace 2 keeps clock values and fields
    /// with a special meaning out of its trace IR).
    Skip { align: u32, bits: u32 },
    /// Read and show a binary32/binary64 float.
    Float { align: u32, bits: u32, be: bool },
    /// Read and show a NUL-terminated string of bytes.
    CStr,
    /// Read a byte array of `len` bytes and show it as a string up to its first NUL.
    Chars { align: u32, len: u32 },
}

/// A compiled scope.
#[derive(Debug, Clone, Default)]
pub struct Prog {
    ops: Vec<Op>,
    lits: Vec<u8>,
}

/// How a program is compiled.
#[derive(Debug, Clone, Copy)]
pub struct Shape {
    /// Text or JSON.
    pub style: Style,
    /// Whether member names are shown (text; JSON always has them).
    pub names: bool,
}

struct Builder<'p> {
    plan: &'p Plan,
    shape: Shape,
    prog: Prog,
}

impl Builder<'_> {
    fn lit(&mut self, s: &[u8]) {
        let from = self.prog.lits.len() as u32;
        self.prog.lits.extend_from_slice(s);
        let to = self.prog.lits.len() as u32;
        // Adjacent literals are merged into one copy.
        if let Some(Op::Lit(_, end)) = self.prog.ops.last_mut() {
            if *end == from {
                *end = to;
                return;
            }
        }
        self.prog.ops.push(Op::Lit(from, to));
    }

    /// Whether Babeltrace 2 shows a member of this node (integers mapped to a clock or
    /// with a role are left out of its trace IR; the JSON dump keeps them).
    fn shown(&self, id: NodeId) -> bool {
        match (self.shape.style, self.plan.node(id)) {
            (Style::Text, Node::Int { role, clock, .. }) => role.is_none() && !*clock,
            _ => true,
        }
    }

    /// Compiles node `id`; false when the node has no program form.
    fn node(&mut self, id: NodeId) -> bool {
        let node = self.plan.node(id).clone();
        match node {
            Node::Int { align, bits, signed, be, base, enum_idx, boolean, .. } => {
                self.prog.ops.push(if boolean {
                    Op::Bool { align, bits, be }
                } else {
                    let base = if self.shape.style == Style::Json { 10 } else { base };
                    Op::Int { align, bits, be, signed, style: IntStyle::new(bits, signed, base), en: enum_idx }
                });
                true
            }
            Node::Float { align, bits, be } => {
                self.prog.ops.push(Op::Float { align, bits, be });
                true
            }
            Node::Str { unit: 1, .. } => {
                self.prog.ops.push(Op::CStr);
                true
            }
            Node::Array { align, len, text: true, .. } if len <= u64::from(u32::MAX / 8) => {
                self.prog.ops.push(Op::Chars { align, len: len as u32 });
                true
            }
            Node::Struct { first, count, .. } => {
                self.prog.ops.push(Op::Align(node_align(self.plan.node(id))));
                let (open, close): (&[u8], &[u8]) = match self.shape.style {
                    Style::Text => (b"{", b" }"),
                    Style::Json => (b"{", b"}"),
                };
                self.lit(open);
                let mut shown = 0;
                for i in first..first + count {
                    let m = self.plan.members[i as usize].clone();
                    if !self.shown(m.node) {
                        let Node::Int { align, bits, .. } = *self.plan.node(m.node) else { return false };
                        self.prog.ops.push(Op::Skip { align, bits });
                        continue;
                    }
                    match self.shape.style {
                        Style::Text => {
                            self.lit(if shown > 0 { b", " } else { b" " });
                            if self.shape.names {
                                self.lit(m.name.as_bytes());
                                self.lit(b" = ");
                            }
                        }
                        Style::Json => {
                            if shown > 0 {
                                self.lit(b",");
                            }
                            let mut s = Vec::new();
                            crate::dump::json_str(&mut s, m.name.as_bytes());
                            s.push(b':');
                            self.lit(&s);
                        }
                    }
                    shown += 1;
                    if !self.node(m.node) {
                        return false;
                    }
                }
                self.lit(close);
                true
            }
            _ => false,
        }
    }
}

/// The program of the scope rooted at `root`, or `None` when it has no program form.
pub fn compile(plan: &Plan, root: NodeId, shape: Shape) -> Option<Prog> {
    let mut b = Builder { plan, shape, prog: Prog::default() };
    if !b.node(root) {
        return None;
    }
    // Room for the fixed 32-byte copies of short literals (`put_short`).
    b.prog.lits.extend_from_slice(&[0; 32]);
    Some(b.prog)
}

impl Prog {
    /// Whether the program shows an empty structure (`{ }` / `{}`) and nothing else.
    pub fn is_empty_struct(&self) -> bool {
        let lits: Vec<&[u8]> = self.ops.iter().filter_map(|o| if let Op::Lit(a, b) = o { Some(&self.lits[*a as usize..*b as usize]) } else { None }).collect();
        self.ops.iter().all(|o| matches!(o, Op::Lit(..) | Op::Align(_) | Op::Skip { .. })) && matches!(lits.concat().as_slice(), b"{ }" | b"{}")
    }

    /// Reads the scope at `cur` and appends its text to `out`.
    #[inline]
    pub fn run(&self, plan: &Plan, style: Style, cur: &mut Cursor<'_>, out: &mut Vec<u8>, enums: &mut EnumCache) -> Result<(), DecodeError> {
        for op in &self.ops {
            match *op {
                Op::Lit(a, b) if b - a <= 32 => put_short(out, &self.lits[a as usize..], (b - a) as usize),
                Op::Lit(a, b) => out.extend_from_slice(&self.lits[a as usize..b as usize]),
                Op::Align(a) => cur.align(a)?,
                Op::Int { align, bits, be, signed, style: is, en } => {
                    let raw = cur.read_uint(align, bits, be)?;
                    let v = if signed { sign_extend(raw, bits) as u64 } else { raw };
                    match en {
                        None => is.push(out, v),
                        Some(e) => enums.push(plan, style, e, signed, is, v, out),
                    }
                }
                Op::Bool { align, bits, be } => {
                    let raw = cur.read_uint(align, bits, be)?;
                    out.extend_from_slice(if raw != 0 { b"true" } else { b"false" });
                }
                Op::Skip { align, bits } => cur.skip(align, u64::from(bits))?,
                Op::Float { align, bits, be } => {
                    let raw = cur.read_uint(align, bits, be)?;
                    let v = if bits == 32 { f64::from(f32::from_bits(raw as u32)) } else { f64::from_bits(raw) };
                    match style {
                        Style::Text => push_g(out, v),
                        Style::Json => crate::dump::json_float(out, v),
                    }
                }
                Op::CStr => {
                    let s = cur.read_cstr()?;
                    push_string(style, out, s);
                }
                Op::Chars { align, len } => {
                    cur.align(align)?;
                    let bits = u64::from(len) * 8;
                    if cur.left() < bits {
                        return Err(DecodeError::new(cur.pos, DecodeErrorKind::OutOfBounds { needed: bits, available: cur.left() }));
                    }
                    let start = cur.pos.bytes_floor().get();
                    let bytes = &cur.buf[start..start + len as usize];
                    cur.pos = cur.pos.add_bits(bits);
                    push_string(style, out, memchr::memchr(0, bytes).map_or(bytes, |z| &bytes[..z]));
                }
            }
        }
        Ok(())
    }
}

/// Appends a string value in the style's quoting.
#[inline]
pub fn push_string(style: Style, out: &mut Vec<u8>, s: &[u8]) {
    match style {
        Style::Text => push_escaped(out, s),
        Style::Json => crate::dump::json_str(out, s),
    }
}
