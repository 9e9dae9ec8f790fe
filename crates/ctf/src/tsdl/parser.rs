//! Recursive-descent parser from TSDL tokens to the syntax tree of [`super::ast`].

use super::ast::*;
use super::lexer::{Lexer, Tok, Token};

/// A parse error: line and message.
pub type ParseError = (u32, String);
type PResult<T> = Result<T, ParseError>;

/// Nesting deeper than this is refused (bounded recursion on hostile input).
const MAX_DEPTH: usize = 64;

const BLOCKS: &[&str] = &["trace", "env", "clock", "stream", "event", "callsite"];

/// Parses a whole TSDL document, taking its tokens from the lexer as it goes. A
/// lexing error anywhere in the text is the error reported, as if the whole text were
/// lexed first.
pub fn parse(text: &str) -> PResult<Vec<Top>> {
    let mut p = Parser { lexer: Lexer::new(text), toks: Vec::with_capacity(BATCH + LOOKAHEAD), i: 0, lexed_all: false, lex_error: None, depth: 0 };
    p.refill();
    let parsed = p.document();
    if parsed.is_err() {
        // A lexing error later in the text comes first: lex the rest, a batch at a
        // time, for one.
        while !p.lexed_all {
            p.i = p.toks.len();
            p.refill();
        }
    }
    p.lex_error.map_or(parsed, Err)
}

/// Tokens lexed at once: the parser reads them from a small buffer, not from a vector
/// of every token of the text (a kernel trace's metadata has some 80 k).
const BATCH: usize = 256;

/// Tokens the parser looks at: the current one and the next.
const LOOKAHEAD: usize = 2;

struct Parser<'a> {
    lexer: Lexer<'a>,
    /// Tokens lexed, a batch at a time: `toks[i]` is the current one, and the next is
    /// there too unless the text ends (or fails) before it.
    toks: Vec<Token<'a>>,
    i: usize,
    /// Whether the lexer has reached the end of the text or an error.
    lexed_all: bool,
    /// A lexing error met ahead: the parser sees the end of the text there, and
    /// [`parse`] reports it whatever the parser makes of that.
    lex_error: Option<ParseError>,
    depth: usize,
}

impl<'a> Parser<'a> {
    /// Drops the tokens passed and lexes a batch more.
    #[cold]
    #[inline(never)]
    fn refill(&mut self) {
        // The last token stays, for errors at the end of the text to name its line.
        let keep = self.i.min(self.toks.len().saturating_sub(1));
        self.toks.drain(..keep);
        self.i -= keep;
        match self.lexer.lex_into(&mut self.toks, self.i + BATCH) {
            Ok(more) => self.lexed_all = !more,
            Err(e) => {
                self.lex_error = Some(e);
                self.lexed_all = true;
            }
        }
    }
    /// Moves past the current token.
    #[inline]
    fn bump(&mut self) {
        self.i += 1;
        if self.i + LOOKAHEAD > self.toks.len() && !self.lexed_all {
            self.refill();
        }
    }
    fn document(&mut self) -> PResult<Vec<Top>> {
        let mut out = Vec::new();
        while !self.eof() {
            if let Some(Tok::Ident(k)) = self.peek() {
                if BLOCKS.contains(k) && self.peek_next() == Some(&Tok::Punct("{")) {
                    let line = self.line();
                    let kind = k.to_string();
                    self.bump();
                    self.bump();
                    let items = self.block_items()?;
                    self.expect("}")?;
                    self.expect(";")?;
                    out.push(Top::Block { kind, items, line });
                    continue;
                }
            }
            out.push(Top::Decl(self.decl()?));
        }
        Ok(out)
    }
    fn eof(&self) -> bool {
        self.i >= self.toks.len()
    }
    fn peek(&self) -> Option<&Tok<'a>> {
        self.toks.get(self.i).map(|t| &t.tok)
    }
    /// The token after the current one.
    fn peek_next(&self) -> Option<&Tok<'a>> {
        self.toks.get(self.i + 1).map(|t| &t.tok)
    }
    fn line(&self) -> u32 {
        self.toks.get(self.i).or(self.toks.last()).map_or(1, |t| t.line)
    }
    fn is(&self, p: &str) -> bool {
        matches!(self.peek(), Some(Tok::Punct(q)) if *q == p)
    }
    fn is_ident(&self, s: &str) -> bool {
        matches!(self.peek(), Some(Tok::Ident(q)) if *q == s)
    }
    fn err<T>(&self, what: &str) -> PResult<T> {
        let found = match self.peek() {
            None => "end of metadata".to_string(),
            Some(Tok::Ident(s)) => format!("`{s}`"),
            Some(Tok::Int(v)) => format!("`{v}`"),
            Some(Tok::Str(s)) => format!("string {s:?}"),
            Some(Tok::Punct(p)) => format!("`{p}`"),
        };
        Err((self.line(), format!("expected {what}, found {found}")))
    }
    fn expect(&mut self, p: &str) -> PResult<()> {
        if self.is(p) {
            self.bump();
            Ok(())
        } else {
            self.err(&format!("`{p}`"))
        }
    }
    fn ident(&mut self) -> PResult<String> {
        match self.peek() {
            Some(Tok::Ident(s)) => {
                let s = s.to_string();
                self.bump();
                Ok(s)
            }
            _ => self.err("an identifier"),
        }
    }
    fn enter(&mut self) -> PResult<()> {
        self.depth += 1;
        if self.depth > MAX_DEPTH {
            return Err((self.line(), format!("nesting deeper than {MAX_DEPTH}")));
        }
        Ok(())
    }

    /// Items of a block body up to (not including) `}`.
    fn block_items(&mut self) -> PResult<Vec<Item>> {
        let mut items = Vec::new();
        while !self.is("}") {
            if self.eof() {
                return self.err("`}`");
            }
            if self.is_ident("typealias") || self.is_ident("typedef") || self.starts_type_keyword() {
                // A declaration, unless it is `name = ...` with a keyword-like name.
                if !matches!(self.peek_next(), Some(Tok::Punct("=")) | Some(Tok::Punct(":=")) | Some(Tok::Punct("."))) {
                    items.push(Item::Decl(self.decl()?));
                    continue;
                }
            }
            items.push(Item::Attr(self.attr()?));
        }
        Ok(items)
    }

    fn starts_type_keyword(&self) -> bool {
        matches!(self.peek(), Some(Tok::Ident(k)) if matches!(*k, "struct" | "variant" | "enum" | "integer" | "floating_point" | "string"))
    }

    /// `a.b.c = value;` or `a.b := type;`
    fn attr(&mut self) -> PResult<Attr> {
        let line = self.line();
        let mut name = self.ident()?;
        while self.is(".") {
            self.bump();
            name.push('.');
            name.push_str(&self.ident()?);
        }
        let value = if self.is(":=") {
            self.bump();
            Value::Type(Box::new(self.type_spec()?))
        } else if self.is("=") {
            self.bump();
            self.value()?
        } else {
            return self.err("`=` or `:=`");
        };
        self.expect(";")?;
        Ok(Attr { name, value, line })
    }

    fn value(&mut self) -> PResult<Value> {
        match self.peek() {
            Some(Tok::Str(s)) => {
                let v = Value::Str(s.clone());
                self.bump();
                Ok(v)
            }
            Some(Tok::Punct("-")) | Some(Tok::Punct("+")) | Some(Tok::Int(_)) => Ok(Value::Int(self.signed_int()?)),
            Some(Tok::Ident(_)) => Ok(Value::Path(self.dotted_path()?)),
            _ => self.err("a value"),
        }
    }

    /// `a.b.c` (or `a->b`): a field reference or dotted identifier.
    fn dotted_path(&mut self) -> PResult<Vec<String>> {
        let mut path = vec![self.ident()?];
        while self.is(".") || self.is("->") {
            self.bump();
            path.push(self.ident()?);
        }
        Ok(path)
    }

    fn signed_int(&mut self) -> PResult<i128> {
        let mut neg = false;
        while self.is("-") || self.is("+") {
            if self.is("-") {
                neg = !neg;
            }
            self.bump();
        }
        match self.peek() {
            Some(&Tok::Int(v)) => {
                self.bump();
                Ok(if neg { -(v as i128) } else { v as i128 })
            }
            _ => self.err("an integer constant"),
        }
    }

    fn unsigned_const(&mut self) -> PResult<u64> {
        match self.peek() {
            Some(&Tok::Int(v)) => {
                self.bump();
                Ok(v)
            }
            _ => self.err("an unsigned integer constant"),
        }
    }

    /// A declaration: typealias, typedef, or type with declarators.
    fn decl(&mut self) -> PResult<Decl> {
        let line = self.line();
        if self.is_ident("typealias") {
            self.bump();
            let ty = self.type_spec()?;
            let dims = self.dims()?;
            self.expect(":=")?;
            let words = self.name_words("a type alias name")?;
            let mut dims = dims;
            dims.extend(self.dims()?);
            self.expect(";")?;
            return Ok(Decl::Typealias { ty, dims, alias: words.join(" "), line });
        }
        if self.is_ident("typedef") {
            self.bump();
            let (ty, decls) = self.type_and_declarators()?;
            self.expect(";")?;
            return Ok(Decl::Typedef { ty, decls, line });
        }
        let (ty, decls) = self.type_and_declarators()?;
        self.expect(";")?;
        if decls.is_empty() {
            Ok(Decl::TypeOnly(ty, line))
        } else {
            Ok(Decl::Field { ty, decls, line })
        }
    }

    /// Identifier words up to the next other token, then any `*` (pointers: passed
    /// over): the words of a type's or an alias's name. Without any, an error that
    /// expected `what`.
    fn name_words(&mut self, what: &str) -> PResult<Vec<&'a str>> {
        let mut words = Vec::new();
        while let Some(Tok::Ident(w)) = self.peek() {
            words.push(*w);
            self.bump();
        }
        while self.is("*") {
            self.bump();
        }
        if words.is_empty() {
            return self.err(what);
        }
        Ok(words)
    }

    /// A type specifier followed by zero or more declarators.
    fn type_and_declarators(&mut self) -> PResult<(TypeSpec, Vec<Declarator>)> {
        if self.starts_type_keyword() {
            let ty = self.type_spec()?;
            let decls = self.declarators()?;
            return Ok((ty, decls));
        }
        // Named type: identifier words; the last word before `;` `,` `[` is the declarator.
        let mut words = self.name_words("a type")?;
        if words.len() == 1 {
            if self.is(";") {
                return Ok((TypeSpec::Named(words.remove(0).to_string()), Vec::new()));
            }
            return self.err("a field name");
        }
        let name = words.pop().unwrap_or_default();
        let mut decls = vec![Declarator { name: name.to_string(), dims: self.dims()? }];
        while self.is(",") {
            self.bump();
            decls.push(self.declarator()?);
        }
        Ok((TypeSpec::Named(words.join(" ")), decls))
    }

    fn declarators(&mut self) -> PResult<Vec<Declarator>> {
        let mut decls = Vec::new();
        if self.is(";") {
            return Ok(decls);
        }
        decls.push(self.declarator()?);
        while self.is(",") {
            self.bump();
            decls.push(self.declarator()?);
        }
        Ok(decls)
    }

    fn declarator(&mut self) -> PResult<Declarator> {
        while self.is("*") {
            self.bump();
        }
        let name = self.ident()?;
        let dims = self.dims()?;
        Ok(Declarator { name, dims })
    }

    fn dims(&mut self) -> PResult<Vec<Dim>> {
        let mut dims = Vec::new();
        while self.is("[") {
            self.bump();
            let d = match self.peek() {
                Some(&Tok::Int(v)) => {
                    self.bump();
                    Dim::Len(v)
                }
                Some(Tok::Ident(_)) => Dim::Path(self.dotted_path()?),
                Some(Tok::Punct("-")) => return Err((self.line(), "array length must be a non-negative constant or a field reference".into())),
                _ => return self.err("an array length"),
            };
            self.expect("]")?;
            dims.push(d);
        }
        Ok(dims)
    }

    /// A type specifier.
    fn type_spec(&mut self) -> PResult<TypeSpec> {
        self.enter()?;
        let r = self.type_spec_inner();
        self.depth -= 1;
        r
    }

    fn type_spec_inner(&mut self) -> PResult<TypeSpec> {
        let kw = match self.peek() {
            Some(Tok::Ident(k)) => *k,
            _ => return self.err("a type"),
        };
        match kw {
            "integer" | "floating_point" => {
                self.bump();
                self.expect("{")?;
                let attrs = self.attrs_body()?;
                Ok(if kw == "integer" { TypeSpec::Integer(attrs) } else { TypeSpec::Float(attrs) })
            }
            "string" => {
                self.bump();
                Ok(TypeSpec::String(self.opt_braced(Self::attrs_body)?.unwrap_or_default()))
            }
            "struct" => {
                self.bump();
                let name = self.opt_name();
                let body = self.opt_braced(Self::decl_body)?;
                let align = if self.is_ident("align") && self.peek_next() == Some(&Tok::Punct("(")) {
                    self.bump();
                    self.bump();
                    let a = self.unsigned_const()?;
                    self.expect(")")?;
                    Some(a)
                } else {
                    None
                };
                if name.is_none() && body.is_none() {
                    return self.err("a struct name or body");
                }
                Ok(TypeSpec::Struct { name, body, align })
            }
            "variant" => {
                self.bump();
                let name = self.opt_name();
                let tag = if self.is("<") {
                    self.bump();
                    let path = self.dotted_path()?;
                    self.expect(">")?;
                    Some(path)
                } else {
                    None
                };
                let body = self.opt_braced(Self::decl_body)?;
                if name.is_none() && body.is_none() {
                    return self.err("a variant name or body");
                }
                Ok(TypeSpec::Variant { name, tag, body })
            }
            "enum" => {
                self.bump();
                let name = self.opt_name();
                let container = if self.is(":") {
                    self.bump();
                    Some(Box::new(self.container_type()?))
                } else {
                    None
                };
                let body = self.opt_braced(Self::enum_body)?;
                if name.is_none() && body.is_none() {
                    return self.err("an enum name or body");
                }
                Ok(TypeSpec::Enum { name, container, body })
            }
            _ => {
                // A named type used as a type specifier (after `:=` or `:`).
                let mut words = Vec::new();
                while let Some(Tok::Ident(w)) = self.peek() {
                    words.push(*w);
                    self.bump();
                }
                Ok(TypeSpec::Named(words.join(" ")))
            }
        }
    }

    fn container_type(&mut self) -> PResult<TypeSpec> {
        if self.starts_type_keyword() {
            return self.type_spec();
        }
        let mut words = Vec::new();
        while let Some(Tok::Ident(w)) = self.peek() {
            words.push(*w);
            self.bump();
        }
        if words.is_empty() {
            return self.err("an enum container type");
        }
        Ok(TypeSpec::Named(words.join(" ")))
    }

    fn opt_name(&mut self) -> Option<String> {
        match self.peek() {
            Some(Tok::Ident(n)) if *n != "align" => {
                let n = n.to_string();
                self.bump();
                Some(n)
            }
            _ => None,
        }
    }

    /// `attr; attr; }` inside integer/floating_point/string.
    fn attrs_body(&mut self) -> PResult<Vec<Attr>> {
        self.items_until_brace(Self::attr)
    }

    /// Declarations up to and including `}`.
    fn decl_body(&mut self) -> PResult<Vec<Decl>> {
        self.items_until_brace(Self::decl)
    }

    /// A body parsed by `body` (which consumes the closing `}`) when the next token is `{`.
    fn opt_braced<T>(&mut self, body: fn(&mut Self) -> PResult<T>) -> PResult<Option<T>> {
        if !self.is("{") {
            return Ok(None);
        }
        self.bump();
        body(self).map(Some)
    }

    /// Items parsed by `item` up to and including the closing `}`.
    fn items_until_brace<T>(&mut self, item: fn(&mut Self) -> PResult<T>) -> PResult<Vec<T>> {
        let mut out = Vec::new();
        while !self.is("}") {
            if self.eof() {
                return self.err("`}`");
            }
            out.push(item(self)?);
        }
        self.bump();
        Ok(out)
    }

    fn enum_body(&mut self) -> PResult<Vec<Enumerator>> {
        let mut out = Vec::new();
        loop {
            if self.is("}") {
                self.bump();
                break;
            }
            let line = self.line();
            let label = match self.peek() {
                Some(Tok::Ident(s)) => {
                    let s = s.to_string();
                    self.bump();
                    s
                }
                Some(Tok::Str(s)) => {
                    let s = s.clone();
                    self.bump();
                    s
                }
                _ => return self.err("an enumerator label"),
            };
            let range = if self.is("=") {
                self.bump();
                let lo = self.signed_int()?;
                let hi = if self.is("...") {
                    self.bump();
                    self.signed_int()?
                } else {
                    lo
                };
                Some((lo, hi))
            } else {
                None
            };
            out.push(Enumerator { label, range, line });
            if self.is(",") {
                self.bump();
            } else if !self.is("}") {
                return self.err("`,` or `}`");
            }
        }
        if out.is_empty() {
            return Err((self.line(), "enumeration without enumerators".into()));
        }
        Ok(out)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn p(s: &str) -> PResult<Vec<Top>> {
        parse(s)
    }

    #[test]
    fn parses_lttng_style_header() {
        let src = r#"
        typealias integer { size = 5; align = 1; signed = false; } := uint5_t;
        struct event_header_compact {
            enum : uint5_t { compact = 0 ... 30, extended = 31 } id;
            variant <id> {
                struct { uint27_clock_monotonic_t timestamp; } compact;
                struct { uint32_t id; uint64_clock_monotonic_t timestamp; } extended;
            } v;
        } align(8);
        stream { id = 0; event.header := struct event_header_compact; };
        event { name = "a b"; id = 3; fields := struct { string s; char x[len]; }; };
        "#;
        let t = p(src).unwrap();
        assert_eq!(t.len(), 4);
        match &t[1] {
            Top::Decl(Decl::TypeOnly(TypeSpec::Struct { name, body, align }, _)) => {
                assert_eq!(name.as_deref(), Some("event_header_compact"));
                assert_eq!(*align, Some(8));
                assert_eq!(body.as_ref().unwrap().len(), 2);
            }
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn multiword_alias_and_errors() {
        let t = p("typealias integer { size = 32; } := unsigned long; struct { unsigned long a, b[2]; } x;");
        assert!(t.is_ok(), "{t:?}");
        assert!(p("struct { uint8_t a[]; } x;").is_err());
        assert!(p("enum e : uint8_t { };").is_err());
        assert!(p("trace { major = 1 ").is_err());
        let deep = "struct { ".repeat(200);
        assert!(p(&deep).is_err());
    }

    /// Tokens come from the lexer in batches: a document of many batches parses whole,
    /// and an error at its end names the line of its last token.
    #[test]
    fn documents_longer_than_a_batch() {
        let n = 3 * BATCH;
        let src: String = (0..n).map(|k| format!("typealias integer {{ size = {}; }} := t{k};\n", k % 64 + 1)).collect();
        let t = p(&src).unwrap();
        assert_eq!(t.len(), n);
        assert!(matches!(&t[n - 1], Top::Decl(Decl::Typealias { alias, line, .. }) if *alias == format!("t{}", n - 1) && *line == n as u32));
        let err = p(&format!("{src}typealias integer {{ size = 8; }} :=")).unwrap_err();
        assert_eq!(err, (n as u32 + 1, "expected a type alias name, found end of metadata".into()));
    }

    /// A lexing error is the error reported, wherever the parser stops: as if the whole
    /// text were lexed first.
    #[test]
    fn a_lexing_error_comes_before_parse_errors() {
        let lex_error = |line: u32| Err((line, "invalid character '@'".to_string()));
        assert_eq!(p("trace { major = ; };\n@"), lex_error(2));
        let far = format!("trace {{ major = ; }};\n{}@", "x = 1;\n".repeat(2 * BATCH));
        assert_eq!(p(&far), lex_error(2 * BATCH as u32 + 2));
        assert_eq!(p("trace { major = 1; };\n@"), lex_error(2));
        assert_eq!(p("trace { major = 1; @ };"), lex_error(1));
    }
}
