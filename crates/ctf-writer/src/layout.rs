//! Event payload layouts compiled from field types, and the values that fill them.
//!
//! A [`Layout`] is the flat list of encoding steps of a structure; the caller passes one
//! [`Value`] per leaf field, in declaration order (nested structures are flattened).

use crate::bits::{Full, PacketBuf};
use crate::error::{Result, WriterError};
use crate::schema::{ByteOrder, Encoding, FieldType, IntType, StructType};

/// One field value, borrowed from the caller.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Value<'a> {
    /// An unsigned integer (or the bits of any integer/enum).
    U(u64),
    /// A signed integer.
    I(i64),
    /// A string, or the text of a character array/sequence.
    Str(&'a str),
    /// Raw bytes of a character array/sequence (zero-padded or truncated to the array length).
    Bytes(&'a [u8]),
    /// Elements of an array or sequence of integers.
    List(&'a [Value<'a>]),
}

#[derive(Debug, Clone)]
struct IntOp {
    size: u32,
    align: u32,
    order: ByteOrder,
}

#[derive(Debug, Clone)]
enum Op {
    Align(u32),
    Int(IntOp),
    Str,
    Text { len: usize },
    IntArray { len: usize, elem: IntOp },
    TextSeq { len_index: usize },
    IntSeq { len_index: usize, elem: IntOp },
}

/// The compiled encoding of one structure (an event payload).
#[derive(Debug, Clone)]
pub struct Layout {
    name: String,
    ops: Vec<Op>,
    n_values: usize,
}

impl Layout {
    /// Compiles `st` for a trace of byte order `order`; `name` is used in error messages.
    pub fn compile(name: &str, st: &StructType, order: ByteOrder) -> Result<Self> {
        let mut l = Layout { name: name.to_string(), ops: Vec::new(), n_values: 0 };
        let mut names = Vec::new();
        l.push_struct(st, order, &mut names)?;
        Ok(l)
    }

    /// Number of values an event of this layout takes.
    pub fn n_values(&self) -> usize {
        self.n_values
    }

    fn int_op(i: &IntType, order: ByteOrder) -> IntOp {
        IntOp { size: i.size, align: i.align, order: i.byte_order.unwrap_or(order) }
    }

    fn push_struct(&mut self, st: &StructType, order: ByteOrder, names: &mut Vec<String>) -> Result<()> {
        self.ops.push(Op::Align(st.alignment()));
        for f in &st.fields {
            let unsupported = |what: &str| WriterError::Schema(format!("{}: field {:?}: {what} not supported", self.name, f.name));
            match &f.ty {
                FieldType::Int(i) | FieldType::Enum { int: i, .. } => self.ops.push(Op::Int(Self::int_op(i, order))),
                FieldType::String => self.ops.push(Op::Str),
                FieldType::Array { elem, len } => match elem.as_ref() {
                    FieldType::Int(i) if i.size == 8 && i.encoding == Encoding::Utf8 => {
                        self.ops.push(Op::Align(i.align));
                        self.ops.push(Op::Text { len: *len as usize });
                    }
                    FieldType::Int(i) => self.ops.push(Op::IntArray { len: *len as usize, elem: Self::int_op(i, order) }),
                    _ => return Err(unsupported("array of non-integers")),
                },
                FieldType::Sequence { elem, length_field } => {
                    let len_index = names
                        .iter()
                        .rposition(|n| n == length_field)
                        .ok_or_else(|| WriterError::Schema(format!("{}: unknown sequence length {length_field:?}", self.name)))?;
                    match elem.as_ref() {
                        FieldType::Int(i) if i.size == 8 && i.encoding == Encoding::Utf8 => {
                            self.ops.push(Op::Align(i.align));
                            self.ops.push(Op::TextSeq { len_index });
                        }
                        FieldType::Int(i) => self.ops.push(Op::IntSeq { len_index, elem: Self::int_op(i, order) }),
                        _ => return Err(unsupported("sequence of non-integers")),
                    }
                }
                FieldType::Struct(inner) => {
                    self.push_struct(inner, order, names)?;
                    continue;
                }
            }
            names.push(f.name.clone());
            self.n_values += 1;
        }
        Ok(())
    }

    fn mismatch(&self, reason: String) -> WriterError {
        WriterError::ValueMismatch { event: self.name.clone(), reason }
    }

    /// Encodes `values` at the buffer's cursor. `Ok(Err(Full))` means the packet is full.
    pub(crate) fn encode(&self, buf: &mut PacketBuf, values: &[Value<'_>]) -> Result<std::result::Result<(), Full>> {
        if values.len() != self.n_values {
            return Err(self.mismatch(format!("{} values given, {} fields declared", values.len(), self.n_values)));
        }
        let mut vi = 0;
        for op in &self.ops {
            let r = match op {
                Op::Align(a) => buf.align(*a),
                Op::Int(i) => {
                    let v = int_bits(&values[vi]).ok_or_else(|| self.mismatch(format!("value {vi}: integer expected")))?;
                    vi += 1;
                    buf.write_int(v, i.size, i.align, i.order)
                }
                Op::Str => {
                    let s = match values[vi] {
                        Value::Str(s) => s.as_bytes(),
                        Value::Bytes(b) => b,
                        _ => return Err(self.mismatch(format!("value {vi}: string expected"))),
                    };
                    vi += 1;
                    if s.contains(&0) {
                        return Err(self.mismatch(format!("value {vi}: string contains a NUL byte")));
                    }
                    buf.write_bytes(s).and_then(|()| buf.write_bytes(&[0]))
                }
                Op::Text { len } => {
                    let b = text_bytes(&values[vi]).ok_or_else(|| self.mismatch(format!("value {vi}: text expected")))?;
                    vi += 1;
                    let n = b.len().min(*len);
                    buf.write_bytes(&b[..n]).and_then(|()| buf.skip_bytes(len - n))
                }
                Op::IntArray { len, elem } => {
                    let Value::List(items) = values[vi] else {
                        return Err(self.mismatch(format!("value {vi}: list expected")));
                    };
                    vi += 1;
                    if items.len() != *len {
                        return Err(self.mismatch(format!("array of {len} given {} items", items.len())));
                    }
                    self.write_ints(buf, items, elem)?
                }
                Op::TextSeq { len_index } => {
                    let want = int_bits(&values[*len_index]).unwrap_or(0) as usize;
                    let b = text_bytes(&values[vi]).ok_or_else(|| self.mismatch(format!("value {vi}: text expected")))?;
                    vi += 1;
                    if b.len() != want {
                        return Err(self.mismatch(format!("sequence length {want} but {} bytes given", b.len())));
                    }
                    buf.write_bytes(b)
                }
                Op::IntSeq { len_index, elem } => {
                    let want = int_bits(&values[*len_index]).unwrap_or(0) as usize;
                    let Value::List(items) = values[vi] else {
                        return Err(self.mismatch(format!("value {vi}: list expected")));
                    };
                    vi += 1;
                    if items.len() != want {
                        return Err(self.mismatch(format!("sequence length {want} but {} items given", items.len())));
                    }
                    self.write_ints(buf, items, elem)?
                }
            };
            if r.is_err() {
                return Ok(Err(Full));
            }
        }
        Ok(Ok(()))
    }

    fn write_ints(&self, buf: &mut PacketBuf, items: &[Value<'_>], elem: &IntOp) -> Result<std::result::Result<(), Full>> {
        for (k, it) in items.iter().enumerate() {
            let v = int_bits(it).ok_or_else(|| self.mismatch(format!("item {k}: integer expected")))?;
            if buf.write_int(v, elem.size, elem.align, elem.order).is_err() {
                return Ok(Err(Full));
            }
        }
        Ok(Ok(()))
    }
}

fn int_bits(v: &Value<'_>) -> Option<u64> {
    match *v {
        Value::U(u) => Some(u),
        Value::I(i) => Some(i as u64),
        _ => None,
    }
}

fn text_bytes<'a>(v: &Value<'a>) -> Option<&'a [u8]> {
    match *v {
        Value::Str(s) => Some(s.as_bytes()),
        Value::Bytes(b) => Some(b),
        _ => None,
    }
}
