//! Lowering of TSDL type specifiers into IR field classes: the scoped type namespace,
//! attribute checking, and the resolution of relative field paths (sequence lengths,
//! variant tags) into absolute [`FieldPath`]s.

use std::borrow::Cow;
use std::collections::HashMap;
use std::rc::Rc;

use super::ast::*;
use crate::ir::*;

/// A lowering error: line and message.
pub type LowerError = (u32, String);
pub(crate) type LResult<T> = Result<T, LowerError>;

const MAX_DEPTH: usize = 48;

/// Names visible at one lexical level.
#[derive(Default)]
pub(crate) struct Names {
    aliases: HashMap<String, (TypeSpec, Vec<Dim>)>,
    structs: HashMap<String, (Vec<Decl>, Option<u64>)>,
    variants: HashMap<String, Vec<Decl>>,
    enums: HashMap<String, (Option<Box<TypeSpec>>, Vec<Enumerator>)>,
}

/// One structure being built: its path from the root and the members so far.
struct Level {
    prefix: Vec<String>,
    members: Vec<(String, FieldClass)>,
}

/// The lowering context of type specifiers.
pub(crate) struct TypeLowerer {
    env: Vec<Names>,
    /// The trace's byte order (`native`).
    pub byte_order: ByteOrder,
    /// Non-fatal remarks.
    pub warnings: Vec<String>,
    /// Root scope being lowered.
    root: Scope,
    /// Stack of structures under construction (innermost last).
    levels: Vec<Level>,
    /// Root scopes already lowered that relative paths may refer to (latest first);
    /// shared, as every event class of a stream class refers to the same ones.
    outer_roots: Vec<(Scope, Rc<FieldClass>)>,
    /// Name of the member whose type is being lowered at the innermost level.
    pending_member: Option<String>,
    /// Checking a declaration out of context: unresolvable references are not errors.
    validating: bool,
    /// Named structures being lowered (to refuse a structure that contains itself).
    in_progress: Vec<String>,
    depth: usize,
}

impl TypeLowerer {
    /// A lowerer with an empty global namespace.
    pub fn new(byte_order: ByteOrder) -> Self {
        TypeLowerer {
            env: vec![Names::default()],
            byte_order,
            warnings: Vec::new(),
            root: Scope::EventPayload,
            levels: Vec::new(),
            outer_roots: Vec::new(),
            pending_member: None,
            validating: false,
            in_progress: Vec::new(),
            depth: 0,
        }
    }

    /// Registers a declaration that names types (typealias, typedef, tagged type), after
    /// checking it: a declaration is validated where it is written, even if unused.
    pub fn register(&mut self, d: &Decl) -> LResult<()> {
        match d {
            Decl::Typealias { ty, dims, alias, line } => {
                self.define_alias(alias, ty, dims, *line)?;
            }
            Decl::Typedef { ty, decls, line } => {
                for dcl in decls {
                    self.define_alias(&dcl.name, ty, &dcl.dims, *line)?;
                }
            }
            Decl::TypeOnly(ty, line) => {
                self.register_type_tags(ty, *line)?;
                self.validate(ty, &[], *line)?;
            }
            Decl::Field { ty, line, .. } => self.register_type_tags(ty, *line)?,
        }
        Ok(())
    }

    fn define_alias(&mut self, name: &str, ty: &TypeSpec, dims: &[Dim], line: u32) -> LResult<()> {
        if self.env.last().is_some_and(|n| n.aliases.contains_key(name)) {
            return Err((line, format!("type `{name}` is already defined in this scope")));
        }
        self.register_type_tags(ty, line)?;
        self.validate(ty, dims, line)?;
        self.top().aliases.insert(name.to_string(), (ty.clone(), dims.to_vec()));
        Ok(())
    }

    /// Lowers a declaration out of context to check it; the result is dropped.
    fn validate(&mut self, ty: &TypeSpec, dims: &[Dim], line: u32) -> LResult<()> {
        let saved_levels = std::mem::take(&mut self.levels);
        let saved_pending = self.pending_member.take();
        let saved_validating = std::mem::replace(&mut self.validating, true);
        let r = self.lower_with_dims(ty, dims, line);
        self.levels = saved_levels;
        self.pending_member = saved_pending;
        self.validating = saved_validating;
        r.map(|_| ())
    }

    fn top(&mut self) -> &mut Names {
        self.env.last_mut().expect("the global level is never popped")
    }

    /// A struct/variant/enum defined with a tag name becomes referable by that tag.
    fn register_type_tags(&mut self, ty: &TypeSpec, line: u32) -> LResult<()> {
        let dup = |n: &str| (line, format!("`{n}` is already defined in this scope"));
        match ty {
            TypeSpec::Struct { name: Some(n), body: Some(b), align }
                if self.top().structs.insert(n.clone(), (b.clone(), *align)).is_some_and(|old| old != (b.clone(), *align)) =>
            {
                return Err(dup(n));
            }
            TypeSpec::Variant { name: Some(n), body: Some(b), .. } if self.top().variants.insert(n.clone(), b.clone()).is_some_and(|old| old != *b) => {
                return Err(dup(n));
            }
            TypeSpec::Enum { name: Some(n), body: Some(b), container }
                if self.top().enums.insert(n.clone(), (container.clone(), b.clone())).is_some_and(|old| old != (container.clone(), b.clone())) =>
            {
                return Err(dup(n));
            }
            _ => {}
        }
        Ok(())
    }

    fn lookup<T>(&self, f: impl Fn(&Names) -> Option<&T>) -> Option<&T> {
        self.env.iter().rev().find_map(f)
    }

    /// Lowers the type of a root scope (`packet.header := ...` and the like).
    pub fn lower_root(&mut self, root: Scope, ty: &TypeSpec, outer_roots: Vec<(Scope, Rc<FieldClass>)>, line: u32) -> LResult<FieldClass> {
        self.root = root;
        self.outer_roots = outer_roots;
        self.levels.clear();
        self.pending_member = None;
        let fc = self.lower(ty, line);
        // Let go of the roots (the caller may want its own back unshared).
        self.outer_roots.clear();
        let fc = fc?;
        if !matches!(fc, FieldClass::Struct(_)) {
            return Err((line, "a root scope must be a structure".into()));
        }
        Ok(fc)
    }

    /// Lowers a type specifier with declarator dimensions applied (outermost first).
    fn lower_with_dims(&mut self, ty: &TypeSpec, dims: &[Dim], line: u32) -> LResult<FieldClass> {
        let Some((first, rest)) = dims.split_first() else { return self.lower(ty, line) };
        let elem = self.lower_with_dims(ty, rest, line)?;
        match first {
            Dim::Len(n) => Ok(FieldClass::Array(Box::new(ArrayClass { elem, len: *n }))),
            Dim::Path(p) => {
                let Some((length, target)) = self.resolve_checked(p, line)? else {
                    let length = FieldPath { scope: self.root, path: p.clone() };
                    return Ok(FieldClass::Sequence(Box::new(SequenceClass { elem, length })));
                };
                match target {
                    FieldClass::Int(i) if !i.signed => {}
                    FieldClass::Enum(e) if !e.int.signed => {}
                    _ => return Err((line, format!("sequence length `{}` is not an unsigned integer field", p.join(".")))),
                }
                Ok(FieldClass::Sequence(Box::new(SequenceClass { elem, length })))
            }
        }
    }

    /// Lowers one type specifier.
    pub fn lower(&mut self, ty: &TypeSpec, line: u32) -> LResult<FieldClass> {
        self.depth += 1;
        if self.depth > MAX_DEPTH {
            self.depth -= 1;
            return Err((line, format!("type nesting deeper than {MAX_DEPTH}")));
        }
        let r = self.lower_inner(ty, line);
        self.depth -= 1;
        r
    }

    fn lower_inner(&mut self, ty: &TypeSpec, line: u32) -> LResult<FieldClass> {
        match ty {
            TypeSpec::Integer(attrs) => Ok(FieldClass::Int(self.integer(attrs, line)?)),
            TypeSpec::Float(attrs) => Ok(FieldClass::Float(self.float(attrs, line)?)),
            TypeSpec::String(attrs) => {
                let mut encoding = Encoding::Utf8;
                for a in attrs {
                    match a.name.as_str() {
                        "encoding" => encoding = encoding_value(&a.value, a.line)?,
                        other => self.warn(a.line, other),
                    }
                }
                Ok(FieldClass::String(StringClass { encoding }))
            }
            TypeSpec::Named(name) => {
                let (t, dims) = self.lookup(|n| n.aliases.get(name)).cloned().ok_or_else(|| (line, format!("unknown type `{name}`")))?;
                self.lower_with_dims(&t, &dims, line)
            }
            TypeSpec::Struct { name, body, align } => {
                // An inline body is lowered where it lies; a body named elsewhere is
                // copied out of the scope that holds it (which lowering may change).
                let (decls, align): (Cow<'_, [Decl]>, _) = match body {
                    Some(b) => {
                        if let Some(n) = name {
                            self.top().structs.insert(n.clone(), (b.clone(), *align));
                        }
                        (Cow::Borrowed(b), *align)
                    }
                    None => {
                        let n = name.as_deref().unwrap_or_default();
                        let (b, a) = self.lookup(|x| x.structs.get(n)).cloned().ok_or_else(|| (line, format!("unknown struct `{n}`")))?;
                        (Cow::Owned(b), align.or(a))
                    }
                };
                let min_align = match align {
                    Some(a) if a == 0 || !a.is_power_of_two() => return Err((line, format!("struct alignment {a} is not a power of two"))),
                    Some(a) => u32::try_from(a).map_err(|_| (line, "struct alignment too large".to_string()))?,
                    None => 1,
                };
                if let Some(n) = name {
                    if self.in_progress.contains(n) {
                        return Err((line, format!("struct `{n}` contains itself")));
                    }
                    self.in_progress.push(n.clone());
                }
                let members = self.members(&decls, MemberKind::Struct);
                if name.is_some() {
                    self.in_progress.pop();
                }
                Ok(FieldClass::Struct(Box::new(StructClass { min_align, members: members? })))
            }
            TypeSpec::Variant { name, tag, body } => {
                let decls: Cow<'_, [Decl]> = match body {
                    Some(b) => {
                        if let Some(n) = name {
                            self.top().variants.insert(n.clone(), b.clone());
                        }
                        Cow::Borrowed(b)
                    }
                    None => {
                        let n = name.as_deref().unwrap_or_default();
                        Cow::Owned(self.lookup(|x| x.variants.get(n)).cloned().ok_or_else(|| (line, format!("unknown variant `{n}`")))?)
                    }
                };
                let Some(tag) = tag else {
                    return Err((line, "variant used as a field without a tag (`variant name <tag>`)".into()));
                };
                let resolved = self.resolve_checked(tag, line)?;
                let options = self.members(&decls, MemberKind::Variant)?;
                let Some((tag_path, target)) = resolved else {
                    let tag = FieldPath { scope: self.root, path: tag.clone() };
                    return Ok(FieldClass::Variant(Box::new(VariantClass { tag, options, selector_ranges: None })));
                };
                let FieldClass::Enum(e) = target else {
                    return Err((line, format!("variant tag `{}` is not an enumeration field", tag.join("."))));
                };
                let selectable = options.iter().any(|(n, _)| e.mappings.iter().any(|m| m.label == *n || n.strip_prefix('_') == Some(&m.label)));
                if !options.is_empty() && !selectable {
                    return Err((line, format!("no option of the variant matches a label of its tag `{}`", tag.join("."))));
                }
                Ok(FieldClass::Variant(Box::new(VariantClass { tag: tag_path, options, selector_ranges: None })))
            }
            TypeSpec::Enum { name, container, body } => {
                let (container, enumerators): (Option<Cow<'_, TypeSpec>>, Cow<'_, [Enumerator]>) = match body {
                    Some(b) => {
                        if let Some(n) = name {
                            self.top().enums.insert(n.clone(), (container.clone(), b.clone()));
                        }
                        (container.as_deref().map(Cow::Borrowed), Cow::Borrowed(b))
                    }
                    None => {
                        let n = name.as_deref().unwrap_or_default();
                        let (c, b) = self.lookup(|x| x.enums.get(n)).cloned().ok_or_else(|| (line, format!("unknown enum `{n}`")))?;
                        (c.map(|c| Cow::Owned(*c)), Cow::Owned(b))
                    }
                };
                let container = container.unwrap_or_else(|| Cow::Owned(TypeSpec::Named("int".into())));
                let int = match self.lower(&container, line)? {
                    FieldClass::Int(i) => i,
                    _ => return Err((line, "enumeration container type is not an integer".into())),
                };
                let mut mappings = Vec::new();
                let mut next: i128 = 0;
                for e in enumerators.iter() {
                    let (lo, hi) = e.range.unwrap_or((next, next));
                    let (lo, hi) = if lo <= hi { (lo, hi) } else { (hi, lo) };
                    let (min, max) = if int.signed { (-(1i128 << (int.size - 1)), (1i128 << (int.size - 1)) - 1) } else { (0, (1i128 << int.size) - 1) };
                    if lo < min || hi > max {
                        return Err((e.line, format!("enumerator `{}` value {lo}...{hi} does not fit its {}-bit container", e.label, int.size)));
                    }
                    next = hi + 1;
                    mappings.push(EnumMapping { label: e.label.clone(), lo, hi });
                }
                Ok(FieldClass::Enum(Box::new(EnumClass { int, mappings })))
            }
        }
    }

    /// Lowers the members of a struct body or the options of a variant body.
    fn members(&mut self, decls: &[Decl], kind: MemberKind) -> LResult<Vec<(String, FieldClass)>> {
        self.env.push(Names::default());
        let prefix = self.current_prefix();
        self.levels.push(Level { prefix, members: Vec::new() });
        let r = self.members_inner(decls, kind);
        let level = self.levels.pop().expect("pushed above");
        self.env.pop();
        r?;
        Ok(level.members)
    }

    fn current_prefix(&self) -> Vec<String> {
        match self.levels.last() {
            None => Vec::new(),
            Some(l) => {
                let mut p = l.prefix.clone();
                if let Some(name) = self.pending_member.as_ref() {
                    p.push(name.clone());
                }
                p
            }
        }
    }

    fn members_inner(&mut self, decls: &[Decl], kind: MemberKind) -> LResult<()> {
        for d in decls {
            match d {
                Decl::Field { ty, decls, line } => {
                    for dcl in decls {
                        let saved = self.pending_member.replace(dcl.name.clone());
                        let fc = self.lower_with_dims(ty, &dcl.dims, *line);
                        self.pending_member = saved;
                        let fc = fc?;
                        let level = self.levels.last_mut().expect("inside a level");
                        if level.members.iter().any(|(n, _)| *n == dcl.name) {
                            let what = if kind == MemberKind::Struct { "member" } else { "option" };
                            return Err((*line, format!("duplicate {what} `{}`", dcl.name)));
                        }
                        level.members.push((dcl.name.clone(), fc));
                    }
                }
                other => self.register(other)?,
            }
        }
        Ok(())
    }

    /// [`Self::resolve`], except that an unresolvable reference is `None` while validating.
    fn resolve_checked(&self, raw: &[String], line: u32) -> LResult<Option<(FieldPath, FieldClass)>> {
        match self.resolve(raw, line) {
            Ok(r) => Ok(Some(r)),
            Err(_) if self.validating => Ok(None),
            Err(e) => Err(e),
        }
    }

    /// Resolves a TSDL field reference into an absolute path and the field it names.
    fn resolve(&self, raw: &[String], line: u32) -> LResult<(FieldPath, FieldClass)> {
        let not_found = || (line, format!("cannot resolve field reference `{}`", raw.join(".")));
        if let Some((scope, rest)) = absolute_prefix(raw) {
            let path: Vec<String> = rest.to_vec();
            if scope == self.root {
                let fc = self.find_in_levels(&path).ok_or_else(not_found)?;
                return Ok((FieldPath { scope, path }, fc));
            }
            let (_, root_fc) = self.outer_roots.iter().find(|(s, _)| *s == scope).ok_or_else(not_found)?;
            let fc = walk(root_fc.as_ref(), &path).ok_or_else(not_found)?;
            return Ok((FieldPath { scope, path }, fc.clone()));
        }
        // Relative: innermost structure outwards, then earlier root scopes.
        for level in self.levels.iter().rev() {
            if let Some((_, m)) = level.members.iter().rev().find(|(n, _)| *n == raw[0]) {
                if let Some(fc) = walk(m, &raw[1..]) {
                    let mut path = level.prefix.clone();
                    path.extend(raw.iter().cloned());
                    return Ok((FieldPath { scope: self.root, path }, fc.clone()));
                }
            }
        }
        for (scope, root_fc) in &self.outer_roots {
            if let Some(fc) = walk(root_fc.as_ref(), raw) {
                return Ok((FieldPath { scope: *scope, path: raw.to_vec() }, fc.clone()));
            }
        }
        Err(not_found())
    }

    /// Looks an absolute path of the current root up among the structures being built.
    fn find_in_levels(&self, path: &[String]) -> Option<FieldClass> {
        let root = self.levels.first()?;
        let (_, m) = root.members.iter().find(|(n, _)| *n == path[0])?;
        if let Some(fc) = walk(m, &path[1..]) {
            return Some(fc.clone());
        }
        // The path may go into a structure still being built.
        for level in &self.levels[1..] {
            if path.len() > level.prefix.len() && path[..level.prefix.len()] == level.prefix[..] {
                let rest = &path[level.prefix.len()..];
                let (_, m) = level.members.iter().find(|(n, _)| *n == rest[0])?;
                return walk(m, &rest[1..]).cloned();
            }
        }
        None
    }

    fn warn(&mut self, line: u32, attr: &str) {
        self.warnings.push(format!("line {line}: unknown attribute `{attr}` ignored"));
    }

    fn integer(&mut self, attrs: &[Attr], line: u32) -> LResult<IntClass> {
        let mut size = None;
        let mut align = None;
        let mut int =
            IntClass { size: 0, align: 0, signed: false, byte_order: self.byte_order, base: 10, encoding: Encoding::None, mapped_clock: None, role: None };
        for a in attrs {
            match a.name.as_str() {
                "size" => {
                    let v = uint_value(&a.value, a.line, "size")?;
                    if v == 0 {
                        return Err((a.line, "integer `size` must be positive".into()));
                    }
                    if v > 64 {
                        return Err((a.line, format!("integer of {v} bits: sizes over 64 bits are not supported")));
                    }
                    size = Some(v as u32);
                }
                "align" => align = Some(align_value(&a.value, a.line)?),
                "signed" => int.signed = bool_value(&a.value, a.line, "signed")?,
                "byte_order" => int.byte_order = byte_order_value(&a.value, a.line, self.byte_order)?,
                "base" => int.base = base_value(&a.value, a.line)?,
                "encoding" => int.encoding = encoding_value(&a.value, a.line)?,
                "map" => match &a.value {
                    Value::Path(p) if p.len() == 3 && p[0] == "clock" && p[2] == "value" => int.mapped_clock = Some(p[1].clone()),
                    _ => return Err((a.line, "`map` must be `clock.NAME.value`".into())),
                },
                other => self.warn(a.line, other),
            }
        }
        int.size = size.ok_or((line, "integer without a `size` attribute".to_string()))?;
        int.align = align.unwrap_or(if int.size.is_multiple_of(8) { 8 } else { 1 });
        Ok(int)
    }

    fn float(&mut self, attrs: &[Attr], line: u32) -> LResult<FloatClass> {
        let mut f = FloatClass { exp_dig: 0, mant_dig: 0, align: 0, byte_order: self.byte_order };
        let mut align = None;
        for a in attrs {
            match a.name.as_str() {
                "exp_dig" => f.exp_dig = uint_value(&a.value, a.line, "exp_dig")? as u32,
                "mant_dig" => f.mant_dig = uint_value(&a.value, a.line, "mant_dig")? as u32,
                "align" => align = Some(align_value(&a.value, a.line)?),
                "byte_order" => f.byte_order = byte_order_value(&a.value, a.line, self.byte_order)?,
                other => self.warn(a.line, other),
            }
        }
        if !matches!((f.exp_dig, f.mant_dig), (8, 24) | (11, 53)) {
            return Err((
                line,
                format!("floating point with exp_dig = {} and mant_dig = {}: only 32 and 64-bit IEEE 754 are supported", f.exp_dig, f.mant_dig),
            ));
        }
        f.align = align.unwrap_or(8);
        Ok(f)
    }
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum MemberKind {
    Struct,
    Variant,
}

/// Walks member names (and variant option names) down from a field class; arrays and
/// sequences are crossed transparently (a path names their element's members).
pub(crate) fn walk<'a>(mut fc: &'a FieldClass, path: &[String]) -> Option<&'a FieldClass> {
    for name in path {
        loop {
            match fc {
                FieldClass::Array(a) => fc = &a.elem,
                FieldClass::Sequence(s) => fc = &s.elem,
                _ => break,
            }
        }
        fc = match fc {
            FieldClass::Struct(s) => s.members.iter().find(|(n, _)| n == name).map(|(_, c)| c)?,
            FieldClass::Variant(v) => v.options.iter().find(|(n, _)| n == name).map(|(_, c)| c)?,
            _ => return None,
        };
    }
    Some(fc)
}

/// Splits `stream.packet.context.x` and the like into a root scope and the rest.
fn absolute_prefix(raw: &[String]) -> Option<(Scope, &[String])> {
    let s: Vec<&str> = raw.iter().map(|x| x.as_str()).collect();
    let table: &[(&[&str], Scope)] = &[
        (&["trace", "packet", "header"], Scope::PacketHeader),
        (&["stream", "packet", "context"], Scope::PacketContext),
        (&["stream", "event", "header"], Scope::EventHeader),
        (&["stream", "event", "context"], Scope::EventCommonContext),
        (&["event", "context"], Scope::EventSpecificContext),
        (&["event", "fields"], Scope::EventPayload),
    ];
    table.iter().find(|(p, _)| s.len() > p.len() && s[..p.len()] == **p).map(|(p, scope)| (*scope, &raw[p.len()..]))
}

pub(crate) fn uint_value(v: &Value, line: u32, what: &str) -> LResult<u64> {
    match v {
        Value::Int(i) if *i >= 0 && *i <= u64::MAX as i128 => Ok(*i as u64),
        _ => Err((line, format!("`{what}` must be an unsigned integer constant"))),
    }
}

pub(crate) fn int_value(v: &Value, line: u32, what: &str) -> LResult<i64> {
    match v {
        Value::Int(i) if *i >= i64::MIN as i128 && *i <= i64::MAX as i128 => Ok(*i as i64),
        _ => Err((line, format!("`{what}` must be an integer constant"))),
    }
}

fn align_value(v: &Value, line: u32) -> LResult<u32> {
    let a = uint_value(v, line, "align")?;
    if a == 0 || !a.is_power_of_two() || a > 1 << 20 {
        return Err((line, format!("`align` = {a}: expecting a power of two")));
    }
    Ok(a as u32)
}

pub(crate) fn bool_value(v: &Value, line: u32, what: &str) -> LResult<bool> {
    match v {
        Value::Int(0) => Ok(false),
        Value::Int(1) => Ok(true),
        Value::Path(p) if p.len() == 1 => match p[0].as_str() {
            "true" | "TRUE" => Ok(true),
            "false" | "FALSE" => Ok(false),
            _ => Err((line, format!("`{what}` must be true or false"))),
        },
        _ => Err((line, format!("`{what}` must be true or false"))),
    }
}

pub(crate) fn byte_order_value(v: &Value, line: u32, native: ByteOrder) -> LResult<ByteOrder> {
    match v {
        Value::Path(p) if p.len() == 1 => match p[0].as_str() {
            "le" | "little" => Ok(ByteOrder::Little),
            "be" | "big" | "network" => Ok(ByteOrder::Big),
            "native" => Ok(native),
            other => Err((line, format!("byte_order `{other}`: expecting `be`, `le`, `network` or `native`"))),
        },
        _ => Err((line, "byte_order: expecting `be`, `le`, `network` or `native`".into())),
    }
}

fn base_value(v: &Value, line: u32) -> LResult<u32> {
    match v {
        Value::Int(b @ (2 | 8 | 10 | 16)) => Ok(*b as u32),
        Value::Path(p) if p.len() == 1 => match p[0].as_str() {
            "decimal" | "dec" | "d" | "i" | "u" => Ok(10),
            "hexadecimal" | "hex" | "x" | "X" | "p" => Ok(16),
            "octal" | "oct" | "o" => Ok(8),
            "binary" | "b" => Ok(2),
            other => Err((line, format!("unknown integer base `{other}`"))),
        },
        _ => Err((line, "integer `base` must be 2, 8, 10 or 16".into())),
    }
}

fn encoding_value(v: &Value, line: u32) -> LResult<Encoding> {
    match v {
        Value::Path(p) if p.len() == 1 => match p[0].as_str() {
            "none" | "NONE" => Ok(Encoding::None),
            "UTF8" | "utf8" | "UTF-8" => Ok(Encoding::Utf8),
            "ASCII" | "ascii" => Ok(Encoding::Ascii),
            other => Err((line, format!("unknown encoding `{other}`"))),
        },
        _ => Err((line, "`encoding` must be none, UTF8 or ASCII".into())),
    }
}
