//! Lowering of the top-level TSDL blocks (`trace`, `env`, `clock`, `stream`, `event`)
//! into a [`TraceClass`], with the reserved-name roles and clock auto-mapping that
//! Babeltrace applies.

use std::rc::Rc;

use super::ast::*;
use super::types::{bool_value, byte_order_value, int_value, uint_value, LResult, TypeLowerer};
use crate::ir::*;

/// Parses TSDL text into a trace class. Errors are `(line, message)`.
pub fn parse_tsdl(text: &str) -> Result<TraceClass, (u32, String)> {
    check_signature(text)?;
    let tops = super::parser::parse(text)?;
    lower(tops)
}

/// A `/* CTF x.y` signature at the start of plain-text metadata must say 1.8.
fn check_signature(text: &str) -> Result<(), (u32, String)> {
    let t = text.trim_start_matches('\u{feff}');
    let Some(rest) = t.strip_prefix("/* CTF ") else { return Ok(()) };
    let ver: String = rest.chars().take_while(|c| c.is_ascii_digit() || *c == '.').collect();
    if ver != "1.8" {
        return Err((1, format!("metadata signature says CTF version {ver:?}: only 1.8 is supported")));
    }
    Ok(())
}

struct PendingStream {
    id: Option<u64>,
    packet_context: Option<(TypeSpec, u32)>,
    event_header: Option<(TypeSpec, u32)>,
    event_context: Option<(TypeSpec, u32)>,
    line: u32,
}

struct PendingEvent {
    id: Option<u64>,
    stream_id: Option<u64>,
    name: Option<String>,
    loglevel: Option<i64>,
    emf_uri: Option<String>,
    context: Option<(TypeSpec, u32)>,
    fields: Option<(TypeSpec, u32)>,
    line: u32,
}

fn lower(tops: Vec<Top>) -> LResult<TraceClass> {
    // The trace's byte order is needed before any `native` type is lowered.
    let mut byte_order = ByteOrder::Little;
    for t in &tops {
        if let Top::Block { kind, items, .. } = t {
            if kind == "trace" {
                for it in items {
                    if let Item::Attr(a) = it {
                        if a.name == "byte_order" {
                            byte_order = byte_order_value(&a.value, a.line, ByteOrder::Little)?;
                        }
                    }
                }
            }
        }
    }
    let mut lw = TypeLowerer::new(byte_order);
    let mut tc = TraceClass { byte_order, uuid: None, packet_header: None, clocks: Vec::new(), streams: Vec::new(), env: Vec::new(), warnings: Vec::new() };
    let mut header_spec = None;
    let mut streams = Vec::new();
    let mut events = Vec::new();
    let mut saw_trace = false;
    for t in tops {
        match t {
            Top::Decl(d) => lw.register(&d)?,
            Top::Block { kind, items, line } => {
                // Declarations inside blocks are visible globally (as Babeltrace treats them).
                for it in &items {
                    if let Item::Decl(d) = it {
                        lw.register(d)?;
                    }
                }
                let attrs = items.iter().filter_map(|i| match i {
                    Item::Attr(a) => Some(a),
                    _ => None,
                });
                match kind.as_str() {
                    "trace" => {
                        saw_trace = true;
                        trace_block(&mut tc, &mut header_spec, &mut lw, attrs)?
                    }
                    "env" => {
                        for a in attrs {
                            let v = match &a.value {
                                Value::Int(i) => EnvValue::Int(int_value(&Value::Int(*i), a.line, "env value")?),
                                Value::Str(s) => EnvValue::Str(s.clone()),
                                Value::Path(p) => EnvValue::Str(p.join(".")),
                                Value::Type(_) => return Err((a.line, "env values must be constants".into())),
                            };
                            tc.env.push((a.name.clone(), v));
                        }
                    }
                    "clock" => tc.clocks.push(clock_block(attrs, line, &mut lw)?),
                    // (Their types are taken out of the syntax tree rather than copied.)
                    "stream" => streams.push(stream_block(owned_attrs(items), line, &mut lw)?),
                    "event" => events.push(event_block(owned_attrs(items), line, &mut lw)?),
                    _ => {} // callsite: informational only
                }
            }
        }
    }
    if !saw_trace {
        return Err((0, "no `trace` block in the metadata".into()));
    }
    if let Some((spec, line)) = header_spec {
        let mut fc = lw.lower_root(Scope::PacketHeader, &spec, Vec::new(), line)?;
        set_roles(&mut fc, &[("magic", Role::PacketMagic), ("stream_id", Role::StreamClassId), ("stream_instance_id", Role::StreamInstanceId)]);
        tc.packet_header = Some(fc);
    }
    if streams.is_empty() {
        streams.push(PendingStream { id: None, packet_context: None, event_header: None, event_context: None, line: 0 });
    }
    let single_stream = streams.len() == 1;
    let packet_header = tc.packet_header.clone().map(Rc::new);
    // Per stream class, the root scopes an event class's relative paths may refer to
    // (latest first), shared by its event classes.
    let mut stream_roots: Vec<Vec<(Scope, Rc<FieldClass>)>> = Vec::new();
    for ps in streams {
        let id = match ps.id {
            Some(id) => id,
            None if single_stream => 0,
            None => return Err((ps.line, "stream block without `id` in a trace with several streams".into())),
        };
        if tc.streams.iter().any(|s| s.id == id) {
            return Err((ps.line, format!("duplicate stream class id {id}")));
        }
        let mut outer: Vec<(Scope, Rc<FieldClass>)> = packet_header.iter().map(|h| (Scope::PacketHeader, h.clone())).collect();
        // Lowers a root scope, gives its members their roles and adds it to `outer`.
        let root = |lw: &mut TypeLowerer,
                    spec: Option<(TypeSpec, u32)>,
                    scope: Scope,
                    roles: &[(&str, Role)],
                    outer: &mut Vec<(Scope, Rc<FieldClass>)>|
         -> LResult<Option<FieldClass>> {
            let Some((spec, line)) = spec else { return Ok(None) };
            let mut fc = lw.lower_root(scope, &spec, outer.clone(), line)?;
            set_roles(&mut fc, roles);
            outer.insert(0, (scope, Rc::new(fc.clone())));
            Ok(Some(fc))
        };
        let packet_roles = [
            ("timestamp_begin", Role::PacketBeginTimestamp),
            ("timestamp_end", Role::PacketEndTimestamp),
            ("content_size", Role::PacketContentSize),
            ("packet_size", Role::PacketTotalSize),
            ("events_discarded", Role::DiscardedEventCounter),
            ("packet_seq_num", Role::PacketSequenceNumber),
        ];
        let packet_context = root(&mut lw, ps.packet_context, Scope::PacketContext, &packet_roles, &mut outer)?;
        let event_header = root(&mut lw, ps.event_header, Scope::EventHeader, &[("id", Role::EventClassId)], &mut outer)?;
        let event_common_context = root(&mut lw, ps.event_context, Scope::EventCommonContext, &[], &mut outer)?;
        tc.streams.push(StreamClass { id, packet_context, event_header, event_common_context, event_classes: Vec::new(), default_clock: None });
        stream_roots.push(outer);
    }
    // Event class ids taken, per stream class (a kernel trace has thousands of classes).
    let mut taken: std::collections::HashSet<(usize, u64)> = std::collections::HashSet::with_capacity(events.len());
    for pe in events {
        let sid = match pe.stream_id {
            Some(s) => s,
            None if tc.streams.len() == 1 => tc.streams[0].id,
            None => return Err((pe.line, "event without `stream_id` in a trace with several streams".into())),
        };
        let si = tc.streams.iter().position(|s| s.id == sid).ok_or((pe.line, format!("event refers to undeclared stream class {sid}")))?;
        let id = pe.id.unwrap_or(0);
        if !taken.insert((si, id)) {
            return Err((pe.line, format!("duplicate event class id {id} in stream class {sid}")));
        }
        let mut outer = stream_roots[si].clone();
        let context = match pe.context {
            Some((spec, line)) => {
                let fc = Rc::new(lw.lower_root(Scope::EventSpecificContext, &spec, outer.clone(), line)?);
                outer.insert(0, (Scope::EventSpecificContext, fc.clone()));
                Some(fc)
            }
            None => None,
        };
        let payload = match pe.fields {
            Some((spec, line)) => Some(lw.lower_root(Scope::EventPayload, &spec, std::mem::take(&mut outer), line)?),
            None => None,
        };
        // (`lower_root` let go of its copy of the roots: the context is unshared again.)
        drop(outer);
        let context = context.map(|fc| Rc::try_unwrap(fc).unwrap_or_else(|fc| (*fc).clone()));
        let name = pe.name.ok_or((pe.line, "event without `name`".to_string()))?;
        tc.streams[si].event_classes.push(EventClass { id, name, loglevel: pe.loglevel, emf_uri: pe.emf_uri, context, payload });
    }
    auto_map_clocks(&mut tc);
    strip_member_underscores(&mut tc);
    tc.warnings.append(&mut lw.warnings);
    Ok(tc)
}

/// CTF 1.8 (section 4.2): a member name's leading underscore only escapes keywords and is
/// not part of the name. Strips it from structure members and from the paths that name
/// them, unless that would make two members of one structure clash.
fn strip_member_underscores(tc: &mut TraceClass) {
    fn fix_path(root: Option<&FieldClass>, path: &mut [String]) {
        let mut fc = root;
        for name in path.iter_mut() {
            let Some(mut cur) = fc else { return };
            while let FieldClass::Array(_) | FieldClass::Sequence(_) = cur {
                cur = match cur {
                    FieldClass::Array(a) => &a.elem,
                    FieldClass::Sequence(s) => &s.elem,
                    _ => unreachable!(),
                };
            }
            fc = match cur {
                FieldClass::Struct(s) => {
                    let next = s.members.iter().find(|(n, _)| n == name).map(|(_, c)| c);
                    if let Some(stripped) = strippable(s, name) {
                        *name = stripped;
                    }
                    next
                }
                FieldClass::Variant(v) => v.options.iter().find(|(n, _)| n == name).map(|(_, c)| c),
                _ => None,
            };
        }
    }
    fn strippable(s: &StructClass, name: &str) -> Option<String> {
        let stripped = name.strip_prefix('_')?;
        let clash = s.members.iter().filter(|(n, _)| n == stripped || n.strip_prefix('_') == Some(stripped)).count() > 1;
        (!clash).then(|| stripped.to_string())
    }
    fn fix_paths(fc: &mut FieldClass, roots: &[(Scope, Option<FieldClass>)]) {
        let root_of = |s: Scope| roots.iter().find(|(r, _)| *r == s).and_then(|(_, f)| f.as_ref());
        match fc {
            FieldClass::Struct(s) => s.members.iter_mut().for_each(|(_, m)| fix_paths(m, roots)),
            FieldClass::Variant(v) => {
                fix_path(root_of(v.tag.scope), &mut v.tag.path);
                v.options.iter_mut().for_each(|(_, m)| fix_paths(m, roots));
            }
            FieldClass::Array(a) => fix_paths(&mut a.elem, roots),
            FieldClass::Sequence(q) => {
                fix_path(root_of(q.length.scope), &mut q.length.path);
                fix_paths(&mut q.elem, roots);
            }
            _ => {}
        }
    }
    fn rename(fc: &mut FieldClass) {
        match fc {
            FieldClass::Struct(s) => {
                let new: Vec<Option<String>> = s.members.iter().map(|(n, _)| strippable(s, n)).collect();
                for ((n, m), new) in s.members.iter_mut().zip(new) {
                    if let Some(new) = new {
                        *n = new;
                    }
                    rename(m);
                }
            }
            FieldClass::Variant(v) => v.options.iter_mut().for_each(|(_, m)| rename(m)),
            FieldClass::Array(a) => rename(&mut a.elem),
            FieldClass::Sequence(q) => rename(&mut q.elem),
            _ => {}
        }
    }
    // Paths are fixed against the original (unrenamed) trees first, then trees renamed.
    let header = tc.packet_header.clone();
    for s in tc.streams.iter_mut() {
        let mut roots = vec![
            (Scope::PacketHeader, header.clone()),
            (Scope::PacketContext, s.packet_context.clone()),
            (Scope::EventHeader, s.event_header.clone()),
            (Scope::EventCommonContext, s.event_common_context.clone()),
        ];
        for fc in [&mut s.packet_context, &mut s.event_header, &mut s.event_common_context].into_iter().flatten() {
            fix_paths(fc, &roots);
        }
        for ec in s.event_classes.iter_mut() {
            roots.truncate(4);
            roots.push((Scope::EventSpecificContext, ec.context.clone()));
            roots.push((Scope::EventPayload, ec.payload.clone()));
            for fc in [&mut ec.context, &mut ec.payload].into_iter().flatten() {
                fix_paths(fc, &roots);
                rename(fc);
            }
        }
        for fc in [&mut s.packet_context, &mut s.event_header, &mut s.event_common_context].into_iter().flatten() {
            rename(fc);
        }
    }
    if let Some(h) = tc.packet_header.as_mut() {
        fix_paths(h, &[(Scope::PacketHeader, header.clone())]);
        rename(h);
    }
}

fn trace_block<'a>(tc: &mut TraceClass, header: &mut Option<(TypeSpec, u32)>, lw: &mut TypeLowerer, attrs: impl Iterator<Item = &'a Attr>) -> LResult<()> {
    let (mut major, mut minor) = (None, None);
    for a in attrs {
        match a.name.as_str() {
            "major" => major = Some((uint_value(&a.value, a.line, "major")?, a.line)),
            "minor" => minor = Some((uint_value(&a.value, a.line, "minor")?, a.line)),
            "uuid" => tc.uuid = Some(uuid_value(&a.value, a.line)?),
            "byte_order" => {}
            "packet.header" => match &a.value {
                Value::Type(t) => *header = Some(((**t).clone(), a.line)),
                _ => return Err((a.line, "`packet.header` must be assigned a type with `:=`".into())),
            },
            other => lw.warnings.push(format!("line {}: unknown trace attribute `{other}` ignored", a.line)),
        }
    }
    if let Some((m, line)) = major {
        if m != 1 {
            return Err((line, format!("trace `major` = {m}: expecting 1")));
        }
    }
    if let Some((m, line)) = minor {
        if m != 8 {
            return Err((line, format!("trace `minor` = {m}: expecting 8")));
        }
    }
    Ok(())
}

fn uuid_value(v: &Value, line: u32) -> LResult<[u8; 16]> {
    let bad = || (line, "invalid UUID (expecting \"xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx\")".to_string());
    let Value::Str(s) = v else { return Err(bad()) };
    let hex: String = s.chars().filter(|c| *c != '-').collect();
    if s.len() != 36 || hex.len() != 32 || !hex.chars().all(|c| c.is_ascii_hexdigit()) {
        return Err(bad());
    }
    let mut out = [0u8; 16];
    for (i, b) in out.iter_mut().enumerate() {
        *b = u8::from_str_radix(&hex[2 * i..2 * i + 2], 16).map_err(|_| bad())?;
    }
    Ok(out)
}

fn string_or_ident(v: &Value, line: u32, what: &str) -> LResult<String> {
    match v {
        Value::Str(s) => Ok(s.clone()),
        Value::Path(p) => Ok(p.join(".")),
        _ => Err((line, format!("`{what}` must be a string or identifier"))),
    }
}

fn clock_block<'a>(attrs: impl Iterator<Item = &'a Attr>, line: u32, lw: &mut TypeLowerer) -> LResult<ClockClass> {
    let mut c = ClockClass::new_1ghz("");
    let mut named = false;
    for a in attrs {
        match a.name.as_str() {
            "name" => {
                c.name = string_or_ident(&a.value, a.line, "name")?;
                named = true;
            }
            "freq" => {
                c.freq = uint_value(&a.value, a.line, "freq")?;
                if c.freq == 0 {
                    return Err((a.line, "clock `freq` must be positive".into()));
                }
            }
            "offset_s" => c.offset_s = int_value(&a.value, a.line, "offset_s")?,
            "offset" => c.offset_cycles = int_value(&a.value, a.line, "offset")?,
            "precision" => c.precision = uint_value(&a.value, a.line, "precision")?,
            "absolute" => c.absolute = bool_value(&a.value, a.line, "absolute")?,
            "uuid" => c.uuid = Some(uuid_value(&a.value, a.line)?),
            "description" => c.description = Some(string_or_ident(&a.value, a.line, "description")?),
            other => lw.warnings.push(format!("line {}: unknown clock attribute `{other}` ignored", a.line)),
        }
    }
    if !named {
        return Err((line, "clock without `name`".into()));
    }
    Ok(c)
}

/// The attributes among a block's items, taken out of them.
fn owned_attrs(items: Vec<Item>) -> impl Iterator<Item = Attr> {
    items.into_iter().filter_map(|i| match i {
        Item::Attr(a) => Some(a),
        _ => None,
    })
}

fn type_attr(a: Attr) -> LResult<(TypeSpec, u32)> {
    match a.value {
        Value::Type(t) => Ok((*t, a.line)),
        _ => Err((a.line, format!("`{}` must be assigned a type with `:=`", a.name))),
    }
}

fn stream_block(attrs: impl Iterator<Item = Attr>, line: u32, lw: &mut TypeLowerer) -> LResult<PendingStream> {
    let mut s = PendingStream { id: None, packet_context: None, event_header: None, event_context: None, line };
    for a in attrs {
        match a.name.as_str() {
            "id" => s.id = Some(uint_value(&a.value, a.line, "id")?),
            "packet.context" => s.packet_context = Some(type_attr(a)?),
            "event.header" => s.event_header = Some(type_attr(a)?),
            "event.context" => s.event_context = Some(type_attr(a)?),
            other => lw.warnings.push(format!("line {}: unknown stream attribute `{other}` ignored", a.line)),
        }
    }
    Ok(s)
}

fn event_block(attrs: impl Iterator<Item = Attr>, line: u32, lw: &mut TypeLowerer) -> LResult<PendingEvent> {
    let mut e = PendingEvent { id: None, stream_id: None, name: None, loglevel: None, emf_uri: None, context: None, fields: None, line };
    for a in attrs {
        match a.name.as_str() {
            "name" => e.name = Some(string_or_ident(&a.value, a.line, "name")?),
            "id" => e.id = Some(uint_value(&a.value, a.line, "id")?),
            "stream_id" => e.stream_id = Some(uint_value(&a.value, a.line, "stream_id")?),
            "loglevel" => e.loglevel = Some(int_value(&a.value, a.line, "loglevel")?),
            "model.emf.uri" => e.emf_uri = Some(string_or_ident(&a.value, a.line, "model.emf.uri")?),
            "context" => e.context = Some(type_attr(a)?),
            "fields" => e.fields = Some(type_attr(a)?),
            other => lw.warnings.push(format!("line {}: unknown event attribute `{other}` ignored", a.line)),
        }
    }
    Ok(e)
}

/// Gives `role` to every integer or enumeration member named `name` in `fc`, at any depth.
fn set_roles(fc: &mut FieldClass, table: &[(&str, Role)]) {
    fn visit(fc: &mut FieldClass, name: Option<&str>, table: &[(&str, Role)]) {
        let role = name.and_then(|n| table.iter().find(|(t, _)| *t == n).map(|(_, r)| *r));
        match fc {
            FieldClass::Int(i) => i.role = role.or(i.role),
            FieldClass::Enum(e) => e.int.role = role.or(e.int.role),
            FieldClass::Struct(s) => s.members.iter_mut().for_each(|(n, m)| visit(m, Some(n), table)),
            FieldClass::Variant(v) => v.options.iter_mut().for_each(|(_, m)| visit(m, None, table)),
            FieldClass::Array(a) => visit(&mut a.elem, None, table),
            FieldClass::Sequence(s) => visit(&mut s.elem, None, table),
            _ => {}
        }
    }
    visit(fc, None, table)
}

/// Maps unmapped `timestamp` (event header) and `timestamp_begin`/`timestamp_end`
/// (packet context) integers to the trace's only clock, creating a 1 GHz clock when the
/// trace has none, as Babeltrace does; then records each stream's default clock.
fn auto_map_clocks(tc: &mut TraceClass) {
    /// Whether `fc` holds, in its structures and variants (an LTTng event header keeps
    /// `timestamp` inside the variant of its compact or extended form), an unsigned
    /// integer named one of `names` mapped to no clock; maps them to `clock` if given.
    fn map(fc: &mut FieldClass, names: &[&str], clock: Option<&str>) -> bool {
        let members = match fc {
            FieldClass::Struct(s) => &mut s.members,
            FieldClass::Variant(v) => &mut v.options,
            _ => return false,
        };
        let mut any = false;
        for (n, m) in members.iter_mut() {
            match m {
                FieldClass::Int(i) if names.contains(&n.as_str()) && i.mapped_clock.is_none() && !i.signed => {
                    any = true;
                    if let Some(c) = clock {
                        i.mapped_clock = Some(c.to_string());
                    }
                }
                FieldClass::Struct(_) | FieldClass::Variant(_) => any |= map(m, names, clock),
                _ => {}
            }
        }
        any
    }
    let needs = tc.streams.iter_mut().any(|s| {
        s.event_header.as_mut().is_some_and(|h| map(h, &["timestamp"], None))
            || s.packet_context.as_mut().is_some_and(|c| map(c, &["timestamp_begin", "timestamp_end"], None))
    });
    if needs && tc.clocks.len() <= 1 {
        if tc.clocks.is_empty() {
            tc.clocks.push(ClockClass::new_1ghz("default"));
        }
        let name = tc.clocks[0].name.clone();
        for s in tc.streams.iter_mut() {
            if let Some(h) = s.event_header.as_mut() {
                map(h, &["timestamp"], Some(&name));
            }
            if let Some(c) = s.packet_context.as_mut() {
                map(c, &["timestamp_begin", "timestamp_end"], Some(&name));
            }
        }
    }
    for s in tc.streams.iter_mut() {
        let mut found = None;
        for fc in [&s.event_header, &s.packet_context, &s.event_common_context].into_iter().flatten() {
            if found.is_none() {
                found = first_mapped_clock(fc);
            }
        }
        if found.is_none() {
            for ec in &s.event_classes {
                for fc in [&ec.context, &ec.payload].into_iter().flatten() {
                    if found.is_none() {
                        found = first_mapped_clock(fc);
                    }
                }
            }
        }
        s.default_clock = found;
    }
}

fn first_mapped_clock(fc: &FieldClass) -> Option<String> {
    match fc {
        FieldClass::Int(i) => i.mapped_clock.clone(),
        FieldClass::Enum(e) => e.int.mapped_clock.clone(),
        FieldClass::Struct(s) => s.members.iter().find_map(|(_, m)| first_mapped_clock(m)),
        FieldClass::Variant(v) => v.options.iter().find_map(|(_, m)| first_mapped_clock(m)),
        FieldClass::Array(a) => first_mapped_clock(&a.elem),
        FieldClass::Sequence(s) => first_mapped_clock(&s.elem),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const SMALL: &str = r#"/* CTF 1.8 */
typealias integer { size = 8; align = 8; signed = false; } := uint8_t;
typealias integer { size = 32; align = 32; signed = false; base = hex; } := uint32_t;
typealias integer { size = 64; align = 8; signed = false; map = clock.mono.value; } := uint64_clock_t;
trace { major = 1; minor = 8; byte_order = be; packet.header := struct { uint32_t magic; uint8_t uuid[16]; }; };
clock { name = mono; freq = 1000; offset_s = -3; };
stream { event.header := struct { uint8_t id; uint64_clock_t timestamp; }; };
event { name = "a"; id = 1; fields := struct { uint8_t len; string s[len]; enum : uint8_t { A, B = 5 ... 7, C } e; variant <e> { uint8_t A; uint32_t B; string C; } v; }; };
"#;

    #[test]
    fn lowers_a_small_trace() {
        let tc = parse_tsdl(SMALL).unwrap();
        assert_eq!(tc.byte_order, ByteOrder::Big);
        assert_eq!(tc.clocks[0].offset_s, -3);
        let s = &tc.streams[0];
        assert_eq!(s.default_clock.as_deref(), Some("mono"));
        let ev = &s.event_classes[0];
        let p = ev.payload.as_ref().unwrap();
        match p.member("s").unwrap() {
            FieldClass::Sequence(seq) => assert_eq!(seq.length, FieldPath { scope: Scope::EventPayload, path: vec!["len".into()] }),
            other => panic!("{other:?}"),
        }
        match p.member("e").unwrap() {
            FieldClass::Enum(e) => {
                assert_eq!(e.mappings[1].lo, 5);
                assert_eq!(e.mappings[2].lo, 8);
            }
            other => panic!("{other:?}"),
        }
        match s.event_header.as_ref().unwrap().member("id").unwrap() {
            FieldClass::Int(i) => assert_eq!(i.role, Some(Role::EventClassId)),
            other => panic!("{other:?}"),
        }
    }

    /// Two stream classes, each with event classes whose sequences take their lengths
    /// from every enclosing scope, relatively and absolutely: each resolves to its own
    /// stream class's scopes (the scopes are shared among a stream class's event classes).
    #[test]
    fn sequence_lengths_resolve_into_enclosing_scopes() {
        let text = r#"/* CTF 1.8 */
typealias integer { size = 8; align = 8; signed = false; } := uint8_t;
trace { major = 1; minor = 8; byte_order = le; packet.header := struct { uint8_t stream_id; uint8_t hn; }; };
stream { id = 0; packet.context := struct { uint8_t pn; }; event.header := struct { uint8_t id; uint8_t en; }; event.context := struct { uint8_t cn; }; };
stream { id = 1; event.header := struct { uint8_t id; }; };
event { name = "a"; id = 0; stream_id = 0; context := struct { uint8_t xn; }; fields := struct { uint8_t h[hn]; uint8_t p[pn]; uint8_t e[en]; uint8_t c[cn]; uint8_t x[xn]; uint8_t ax[stream.event.context.cn]; }; };
event { name = "b"; id = 1; stream_id = 0; fields := struct { uint8_t c[cn]; uint8_t ap[stream.packet.context.pn]; uint8_t at[trace.packet.header.hn]; }; };
event { name = "c"; id = 0; stream_id = 1; context := struct { uint8_t xn; }; fields := struct { uint8_t x[xn]; uint8_t h[hn]; }; };
"#;
        let tc = parse_tsdl(text).unwrap();
        let length = |stream: usize, event: usize, member: &str| match tc.streams[stream].event_classes[event].payload.as_ref().unwrap().member(member) {
            Some(FieldClass::Sequence(seq)) => (seq.length.scope, seq.length.path.join(".")),
            other => panic!("{member}: {other:?}"),
        };
        assert_eq!(length(0, 0, "h"), (Scope::PacketHeader, "hn".into()));
        assert_eq!(length(0, 0, "p"), (Scope::PacketContext, "pn".into()));
        assert_eq!(length(0, 0, "e"), (Scope::EventHeader, "en".into()));
        assert_eq!(length(0, 0, "c"), (Scope::EventCommonContext, "cn".into()));
        assert_eq!(length(0, 0, "x"), (Scope::EventSpecificContext, "xn".into()));
        assert_eq!(length(0, 0, "ax"), (Scope::EventCommonContext, "cn".into()));
        assert_eq!(length(0, 1, "c"), (Scope::EventCommonContext, "cn".into()));
        assert_eq!(length(0, 1, "ap"), (Scope::PacketContext, "pn".into()));
        assert_eq!(length(0, 1, "at"), (Scope::PacketHeader, "hn".into()));
        assert_eq!(length(1, 0, "x"), (Scope::EventSpecificContext, "xn".into()));
        assert_eq!(length(1, 0, "h"), (Scope::PacketHeader, "hn".into()));
        // Each event class keeps its own context; stream 1 has none of stream 0's scopes.
        assert!(tc.streams[0].event_classes[0].context.as_ref().unwrap().member("xn").is_some());
        assert!(tc.streams[0].event_classes[1].context.is_none());
        let bad = text.replace("uint8_t h[hn]; };", "uint8_t h[cn]; };");
        assert!(parse_tsdl(&bad).unwrap_err().1.contains("cn"));
    }

    #[test]
    fn errors_name_lines() {
        let bad = SMALL.replace("uint8_t len; string s[len];", "uint8_t len; string s[nope];");
        let (line, msg) = parse_tsdl(&bad).unwrap_err();
        assert_eq!(line, 8);
        assert!(msg.contains("nope"), "{msg}");
        assert!(parse_tsdl(&SMALL.replace("minor = 8", "minor = 9")).is_err());
        assert!(parse_tsdl(&SMALL.replace("/* CTF 1.8", "/* CTF 1.9")).is_err());
        assert!(parse_tsdl(&SMALL.replace("variant <e>", "variant <len>")).is_err());
        // Event class ids are unique within a stream class.
        let twice = format!("{SMALL}event {{ name = \"b\"; id = 2; }};\nevent {{ name = \"c\"; id = 1; }};\n");
        let (line, msg) = parse_tsdl(&twice).unwrap_err();
        assert_eq!((line, msg.as_str()), (10, "duplicate event class id 1 in stream class 0"));
        assert_eq!(parse_tsdl(&twice.replace("id = 1; }", "id = 3; }")).unwrap().streams[0].event_classes.len(), 3);
    }
}
