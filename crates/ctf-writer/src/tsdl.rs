//! Renders a [`TraceSchema`] as CTF 1.8 TSDL text, laid out like lttng-modules writes it.

use std::fmt::Write;

use crate::schema::{uuid_string, ByteOrder, Encoding, EnvValue, EventHeaderKind, FieldType, IntType, PacketContextField, StructType, TraceSchema};

/// The TSDL text of a schema (without the `/* CTF 1.8 */` plain-text signature).
pub fn to_tsdl(schema: &TraceSchema) -> String {
    let mut o = String::with_capacity(4096 + schema.events.len() * 512);
    o.push_str(PRELUDE);
    let order = match schema.byte_order {
        ByteOrder::Little => "le",
        ByteOrder::Big => "be",
    };
    let _ = write!(
        o,
        "trace {{\n\tmajor = 1;\n\tminor = 8;\n\tuuid = \"{}\";\n\tbyte_order = {order};\n\tpacket.header := struct {{\n\t\tuint32_t magic;\n\t\tuint8_t  uuid[16];\n\t\tuint32_t stream_id;\n\t\tuint64_t stream_instance_id;\n\t}};\n}};\n\n",
        uuid_string(&schema.uuid)
    );
    o.push_str("env {\n");
    for (k, v) in &schema.env {
        match v {
            EnvValue::Int(i) => {
                let _ = writeln!(o, "\t{k} = {i};");
            }
            EnvValue::Str(s) => {
                let _ = writeln!(o, "\t{k} = \"{}\";", escape(s));
            }
        }
    }
    o.push_str("};\n\n");
    let c = &schema.clock;
    let _ = write!(
        o,
        "clock {{\n\tname = \"{}\";\n\tuuid = \"{}\";\n\tdescription = \"{}\";\n\tfreq = {}; /* Frequency, in Hz */\n\t/* clock value offset from Epoch is: offset * (1/freq) */\n\toffset = {};\n}};\n\n",
        c.name,
        uuid_string(&c.uuid),
        escape(&c.description),
        c.freq,
        c.offset
    );
    for (size, align) in [(27, 1), (32, 8), (64, 8)] {
        let _ = write!(
            o,
            "typealias integer {{\n\tsize = {size}; align = {align}; signed = false;\n\tmap = clock.{}.value;\n}} := uint{size}_clock_{}_t;\n\n",
            c.name, c.name
        );
    }
    for s in &schema.streams {
        let _ = writeln!(o, "struct packet_context_{} {{", s.id.0);
        for f in &s.packet_context {
            let ty = match f {
                PacketContextField::TimestampBegin | PacketContextField::TimestampEnd => {
                    format!("uint64_clock_{}_t", c.name)
                }
                PacketContextField::EventsDiscarded => "unsigned long".to_string(),
                PacketContextField::Extra { ty, .. } => int_decl(ty),
                _ => "uint64_t".to_string(),
            };
            let _ = writeln!(o, "\t{ty} {};", f.name());
        }
        o.push_str("};\n\n");
    }
    let _ = write!(o, "{}", header_structs(&c.name));
    for s in &schema.streams {
        let h = match s.event_header {
            EventHeaderKind::Compact => "event_header_compact",
            EventHeaderKind::Large => "event_header_large",
        };
        let _ = write!(o, "stream {{\n\tid = {};\n\tevent.header := struct {h};\n\tpacket.context := struct packet_context_{};\n}};\n\n", s.id.0, s.id.0);
    }
    for e in &schema.events {
        let _ = write!(o, "event {{\n\tname = \"{}\";\n\tid = {};\n\tstream_id = {};\n", escape(&e.name), e.id.0, e.stream.0);
        if let Some(l) = e.loglevel {
            let _ = writeln!(o, "\tloglevel = {l};");
        }
        o.push_str("\tfields := struct {\n");
        struct_body(&mut o, &e.fields, 2);
        o.push_str("\t};\n};\n\n");
    }
    o
}

const PRELUDE: &str = "typealias integer { size = 8; align = 8; signed = false; } := uint8_t;
typealias integer { size = 16; align = 8; signed = false; } := uint16_t;
typealias integer { size = 32; align = 8; signed = false; } := uint32_t;
typealias integer { size = 64; align = 8; signed = false; } := uint64_t;
typealias integer { size = 64; align = 8; signed = false; } := unsigned long;
typealias integer { size = 5; align = 1; signed = false; } := uint5_t;
typealias integer { size = 27; align = 1; signed = false; } := uint27_t;

";

fn header_structs(clock: &str) -> String {
    format!(
        "struct event_header_compact {{
\tenum : uint5_t {{ compact = 0 ... 30, extended = 31 }} id;
\tvariant <id> {{
\t\tstruct {{
\t\t\tuint27_clock_{clock}_t timestamp;
\t\t}} compact;
\t\tstruct {{
\t\t\tuint32_t id;
\t\t\tuint64_clock_{clock}_t timestamp;
\t\t}} extended;
\t}} v;
}} align(8);

struct event_header_large {{
\tenum : uint16_t {{ compact = 0 ... 65534, extended = 65535 }} id;
\tvariant <id> {{
\t\tstruct {{
\t\t\tuint32_clock_{clock}_t timestamp;
\t\t}} compact;
\t\tstruct {{
\t\t\tuint32_t id;
\t\t\tuint64_clock_{clock}_t timestamp;
\t\t}} extended;
\t}} v;
}} align(8);

"
    )
}

/// An inline `integer { ... }` declaration.
fn int_decl(i: &IntType) -> String {
    let mut s = format!(
        "integer {{ size = {}; align = {}; signed = {}; encoding = {}; base = {};",
        i.size,
        i.align,
        u8::from(i.signed),
        match i.encoding {
            Encoding::None => "none",
            Encoding::Utf8 => "UTF8",
        },
        i.base
    );
    if let Some(bo) = i.byte_order {
        s.push_str(match bo {
            ByteOrder::Little => " byte_order = le;",
            ByteOrder::Big => " byte_order = be;",
        });
    }
    if let Some(c) = &i.map_clock {
        let _ = write!(s, " map = clock.{c}.value;");
    }
    s.push_str(" }");
    s
}

/// The declaration prefix of a type and the suffix after the field name (array lengths).
fn type_decl(ty: &FieldType, depth: usize) -> (String, String) {
    match ty {
        FieldType::Int(i) => (int_decl(i), String::new()),
        FieldType::Enum { int, mappings } => {
            let mut s = format!("enum : {} {{ ", int_decl(int));
            for (k, m) in mappings.iter().enumerate() {
                if k > 0 {
                    s.push_str(", ");
                }
                if m.start == m.end {
                    let _ = write!(s, "\"{}\" = {}", escape(&m.label), m.start);
                } else {
                    let _ = write!(s, "\"{}\" = {} ... {}", escape(&m.label), m.start, m.end);
                }
            }
            s.push_str(" }");
            (s, String::new())
        }
        FieldType::String => ("string".to_string(), String::new()),
        FieldType::Array { elem, len } => {
            let (p, suf) = type_decl(elem, depth);
            (p, format!("[{len}]{suf}"))
        }
        FieldType::Sequence { elem, length_field } => {
            let (p, suf) = type_decl(elem, depth);
            (p, format!("[ {length_field} ]{suf}"))
        }
        FieldType::Struct(st) => {
            let mut s = String::from("struct {\n");
            struct_body(&mut s, st, depth + 1);
            s.push_str(&"\t".repeat(depth));
            let _ = write!(s, "}} align({})", st.alignment());
            (s, String::new())
        }
    }
}

fn struct_body(o: &mut String, st: &StructType, depth: usize) {
    for f in &st.fields {
        let (p, suf) = type_decl(&f.ty, depth);
        let _ = writeln!(o, "{}{p} {}{suf};", "\t".repeat(depth), f.name);
    }
}

fn escape(s: &str) -> String {
    s.replace('\\', "\\\\").replace('"', "\\\"").replace('\n', "\\n")
}
