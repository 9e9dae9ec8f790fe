//! The columns of the trace tables (`events`, `ev_<name>`): what each holds, its Arrow
//! type, how its value is read from an event, and the builders a scan fills.

use std::sync::Arc;

use ctf::plan::{EventPlan, FieldHandle, Node, Plan, StreamPlan};
use ctf::stream::EventRef;
use datafusion::arrow::array::{ArrayRef, BooleanBuilder, Float64Builder, Int64Builder, StringBuilder, UInt32Builder, UInt64Builder};
use datafusion::arrow::datatypes::{DataType, Field};

/// The type of an event field's column.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub enum Kind {
    /// Signed integers, enumerations (their integer value) and unsigned integers of
    /// fewer than 64 bits: `Int64`.
    Int,
    /// Unsigned 64-bit integers: `UInt64`.
    UInt,
    /// Floating point numbers: `Float64`.
    Float,
    /// Strings and character arrays or sequences: `Utf8`.
    Str,
    /// Booleans: `Boolean`.
    Bool,
}

impl Kind {
    /// The Arrow type of a column of this kind.
    pub fn data_type(self) -> DataType {
        match self {
            Kind::Int => DataType::Int64,
            Kind::UInt => DataType::UInt64,
            Kind::Float => DataType::Float64,
            Kind::Str => DataType::Utf8,
            Kind::Bool => DataType::Boolean,
        }
    }

    /// The kind of the field at `node`, `None` for what has no scalar column
    /// (structures, variants, arrays and sequences of non-characters).
    pub fn of(plan: &Plan, node: ctf::plan::NodeId) -> Option<Kind> {
        Some(match *plan.node(node) {
            Node::Int { boolean: true, .. } => Kind::Bool,
            Node::Int { bits: 64, signed: false, enum_idx: None, .. } => Kind::UInt,
            Node::Int { .. } | Node::VarInt { .. } => Kind::Int,
            Node::Float { .. } => Kind::Float,
            Node::Str { .. } | Node::Array { text: true, .. } | Node::Seq { text: true, .. } => Kind::Str,
            _ => return None,
        })
    }
}

/// What a column of a trace table holds.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub enum Col {
    /// The trace's name (`env.hostname`, else its directory's name).
    Trace,
    /// Timestamp, ns from the clock's origin.
    Ts,
    /// The packet's `cpu_id`.
    Cpu,
    /// The stream's index in its trace set.
    Stream,
    /// The event class's name.
    Name,
    /// Every scalar field of the event's scopes, as a JSON object.
    Fields,
    /// One field of the event's scopes, by name.
    Field(Box<str>, Kind),
}

impl Col {
    /// The Arrow field of this column, named `name`.
    pub fn arrow_field(&self, name: &str) -> Field {
        let (ty, nullable) = match self {
            Col::Trace | Col::Name => (DataType::Utf8, false),
            Col::Fields => (DataType::Utf8, false),
            Col::Ts => (DataType::Int64, true),
            Col::Cpu => (DataType::UInt32, true),
            Col::Stream => (DataType::UInt32, false),
            Col::Field(_, k) => (k.data_type(), true),
        };
        Field::new(name, ty, nullable)
    }
}

/// The columns every trace table starts with.
pub fn common_columns() -> Vec<(String, Col)> {
    vec![("trace".into(), Col::Trace), ("ts".into(), Col::Ts), ("cpu".into(), Col::Cpu), ("stream".into(), Col::Stream), ("name".into(), Col::Name)]
}

/// A resolved field of one event class: how to read it.
#[derive(Debug, Clone, Copy)]
pub struct Handle {
    /// The reader's handle.
    pub h: FieldHandle,
    /// Its kind.
    pub kind: Kind,
    /// A 32-bit float (else 64-bit).
    pub f32: bool,
}

/// The scalar fields of the events of class `ev` (payload, then specific context,
/// then common context; a name met again is the first one's), with their handles.
pub fn scalar_fields(plan: &Plan, sp: &StreamPlan, ev: &EventPlan) -> Vec<(Box<str>, Handle)> {
    let mut out: Vec<(Box<str>, Handle)> = Vec::new();
    for root in [ev.payload, ev.context, sp.common_context].into_iter().flatten() {
        let Node::Struct { first, count, .. } = *plan.node(root) else { continue };
        for m in plan.struct_members(first, count) {
            if out.iter().any(|(n, _)| *n == m.name) {
                continue;
            }
            if let Some(h) = resolve(plan, sp, ev, &m.name, None) {
                out.push((m.name.clone(), h));
            }
        }
    }
    out
}

/// The handle of field `name` of class `ev` when it is a scalar (of kind `want`, when
/// given).
pub fn resolve(plan: &Plan, sp: &StreamPlan, ev: &EventPlan, name: &str, want: Option<Kind>) -> Option<Handle> {
    let h = plan.event_field(sp, ev, &[name])?;
    if h.packet_level {
        return None;
    }
    let kind = Kind::of(plan, h.node)?;
    if want.is_some_and(|w| w != kind && !(w == Kind::Int && kind == Kind::UInt)) {
        return None;
    }
    let f32 = matches!(plan.node(h.node), Node::Float { bits: 32, .. });
    Some(Handle { h, kind: want.unwrap_or(kind), f32 })
}

/// A field's value as an `i64` (unsigned 64-bit values wrap).
fn read_int(ev: &EventRef<'_, '_>, h: &Handle) -> Option<i64> {
    ev.int(h.h)
}

/// A field's value as an `f64`.
fn read_float(ev: &EventRef<'_, '_>, h: &Handle) -> Option<f64> {
    let raw = ev.uint(h.h)?;
    Some(if h.f32 { f64::from(f32::from_bits(raw as u32)) } else { f64::from_bits(raw) })
}

/// A string field's value (invalid UTF-8 replaced).
fn read_str<'c>(ev: &EventRef<'c, '_>, h: &Handle) -> Option<std::borrow::Cow<'c, str>> {
    ev.bytes(h.h).map(String::from_utf8_lossy)
}

/// Appends the JSON object of `fields` of `ev` to `out`.
pub fn write_fields_json(out: &mut Vec<u8>, ev: &EventRef<'_, '_>, fields: &[(Box<str>, Handle)]) {
    use std::io::Write;
    out.push(b'{');
    for (i, (name, h)) in fields.iter().enumerate() {
        if i > 0 {
            out.push(b',');
        }
        ctf::dump::json_str(out, name.as_bytes());
        out.push(b':');
        let written = match h.kind {
            Kind::Int => read_int(ev, h).map(|v| write!(out, "{v}")),
            Kind::UInt => ev.uint(h.h).map(|v| write!(out, "{v}")),
            Kind::Bool => ev.uint(h.h).map(|v| write!(out, "{}", v != 0)),
            Kind::Float => read_float(ev, h).filter(|v| v.is_finite()).map(|v| write!(out, "{v:?}")),
            Kind::Str => ev.bytes(h.h).map(|b| {
                ctf::dump::json_str(out, b);
                Ok(())
            }),
        };
        if written.is_none() {
            out.extend_from_slice(b"null");
        }
    }
    out.push(b'}');
}

/// The builder of one column of a batch.
pub enum Builder {
    /// `Utf8`.
    Str(StringBuilder),
    /// `Int64`.
    Int(Int64Builder),
    /// `UInt64`.
    UInt(UInt64Builder),
    /// `UInt32`.
    U32(UInt32Builder),
    /// `Float64`.
    Float(Float64Builder),
    /// `Boolean`.
    Bool(BooleanBuilder),
}

impl Builder {
    /// An empty builder for `col`.
    pub fn for_col(col: &Col) -> Builder {
        match col {
            Col::Trace | Col::Name | Col::Fields | Col::Field(_, Kind::Str) => Builder::Str(StringBuilder::new()),
            Col::Ts | Col::Field(_, Kind::Int) => Builder::Int(Int64Builder::new()),
            Col::Cpu | Col::Stream => Builder::U32(UInt32Builder::new()),
            Col::Field(_, Kind::UInt) => Builder::UInt(UInt64Builder::new()),
            Col::Field(_, Kind::Float) => Builder::Float(Float64Builder::new()),
            Col::Field(_, Kind::Bool) => Builder::Bool(BooleanBuilder::new()),
        }
    }

    /// Appends field `h` of `ev` (null when the event lacks it or `h` is `None`).
    pub fn push_field(&mut self, ev: &EventRef<'_, '_>, h: Option<&Handle>) {
        match self {
            Builder::Str(b) => b.append_option(h.and_then(|h| read_str(ev, h))),
            Builder::Int(b) => b.append_option(h.and_then(|h| read_int(ev, h))),
            Builder::UInt(b) => b.append_option(h.and_then(|h| ev.uint(h.h))),
            Builder::Float(b) => b.append_option(h.and_then(|h| read_float(ev, h))),
            Builder::Bool(b) => b.append_option(h.and_then(|h| ev.uint(h.h)).map(|v| v != 0)),
            Builder::U32(b) => b.append_null(),
        }
    }

    /// The column built so far (the builder is emptied).
    pub fn finish(&mut self) -> ArrayRef {
        match self {
            Builder::Str(b) => Arc::new(b.finish()),
            Builder::Int(b) => Arc::new(b.finish()),
            Builder::UInt(b) => Arc::new(b.finish()),
            Builder::U32(b) => Arc::new(b.finish()),
            Builder::Float(b) => Arc::new(b.finish()),
            Builder::Bool(b) => Arc::new(b.finish()),
        }
    }
}

/// The table name of event class `name`: `ev_` and the name, each character other
/// than a letter, a digit or `_` made `_`, in lower case.
pub fn class_table_name(name: &str) -> String {
    let mut s = String::from("ev_");
    s.extend(name.chars().map(|c| if c.is_ascii_alphanumeric() || c == '_' { c.to_ascii_lowercase() } else { '_' }));
    s
}
