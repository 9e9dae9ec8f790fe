//! TSDL tokens: identifiers, literals and punctuation, with the line of each token.

/// A TSDL token.
#[derive(Debug, Clone, PartialEq)]
pub enum Tok<'a> {
    /// Identifier or keyword (borrowed from the metadata text).
    Ident(&'a str),
    /// Integer literal (value as an unsigned 64-bit number; sign is a separate token).
    Int(u64),
    /// String literal, escapes resolved.
    Str(String),
    /// Punctuation: `{ } [ ] ( ) ; , : = := . -> < > ... + - *`.
    Punct(&'static str),
}

/// A token and its 1-based line.
#[derive(Debug, Clone, PartialEq)]
pub struct Token<'a> {
    /// The token.
    pub tok: Tok<'a>,
    /// Line where it starts.
    pub line: u32,
}

/// A lexing error: line and message.
pub type LexError = (u32, String);

// (Those of several characters first: see `punct`.)
const PUNCTS: &[&str] = &["...", ":=", "->", "{", "}", "[", "]", "(", ")", ";", ",", ":", "=", ".", "<", ">", "+", "-", "*"];

/// Bytes that continue an identifier: ASCII letters and digits, `_`.
const IDENT_CONT: [bool; 256] = {
    let mut t = [false; 256];
    let mut c = 0;
    while c < 256 {
        t[c] = (c as u8).is_ascii_alphanumeric() || c as u8 == b'_';
        c += 1;
    }
    t
};

/// The punctuator `rest` starts with: the longest that matches (the three of several
/// characters come first in [`PUNCTS`]).
fn punct(rest: &[u8]) -> Option<&'static str> {
    let c = *rest.first()?;
    let (long, short) = PUNCTS.split_at(3);
    if matches!(c, b'.' | b':' | b'-') {
        if let Some(p) = long.iter().find(|p| rest.starts_with(p.as_bytes())) {
            return Some(p);
        }
    }
    short.iter().find(|p| p.as_bytes()[0] == c).copied()
}

/// The tokens of TSDL text one at a time, comments and whitespace skipped: a parser
/// takes them as it goes, so that no vector of every token is built (a kernel trace's
/// metadata is some 80 k tokens).
#[derive(Debug, Clone)]
pub struct Lexer<'a> {
    src: &'a str,
    /// Byte where the next token is looked for.
    i: usize,
    /// Line of byte `i`.
    line: u32,
}

impl<'a> Lexer<'a> {
    /// Tokens of `src`, from its start.
    pub fn new(src: &'a str) -> Lexer<'a> {
        Lexer { src, i: 0, line: 1 }
    }

    /// Lexes tokens onto `out` until it holds `len` of them: false when the text ended
    /// first. After an error, the lexer is not to be asked again.
    pub fn lex_into(&mut self, out: &mut Vec<Token<'a>>, len: usize) -> Result<bool, LexError> {
        let (src, b) = (self.src, self.src.as_bytes());
        let (mut i, mut line) = (self.i, self.line);
        while out.len() < len {
            let Some(&c) = b.get(i) else {
                (self.i, self.line) = (i, line);
                return Ok(false);
            };
            if c == b'\n' {
                line += 1;
                i += 1;
            } else if c == b' ' || c == b'\t' {
                // Indentation comes in runs.
                i += 1 + b[i + 1..].iter().take_while(|&&x| x == b' ' || x == b'\t').count();
            } else if c.is_ascii_whitespace() {
                i += 1;
            } else if c == b'/' && b.get(i + 1) == Some(&b'*') {
                let start = line;
                i += 2;
                loop {
                    if i + 1 >= b.len() {
                        return Err((start, "unterminated comment".into()));
                    }
                    if b[i] == b'*' && b[i + 1] == b'/' {
                        i += 2;
                        break;
                    }
                    if b[i] == b'\n' {
                        line += 1;
                    }
                    i += 1;
                }
            } else if c == b'/' && b.get(i + 1) == Some(&b'/') {
                while i < b.len() && b[i] != b'\n' {
                    i += 1;
                }
            } else if c.is_ascii_alphabetic() || c == b'_' {
                let s = i;
                i += 1 + b[i + 1..].iter().take_while(|&&x| IDENT_CONT[x as usize]).count();
                out.push(Token { tok: Tok::Ident(&src[s..i]), line });
            } else if c.is_ascii_digit() {
                let (v, n) = lex_int(&b[i..]).map_err(|m| (line, m))?;
                i += n;
                out.push(Token { tok: Tok::Int(v), line });
            } else if c == b'"' {
                let (s, n, nl) = lex_string(&b[i..]).map_err(|m| (line, m))?;
                out.push(Token { tok: Tok::Str(s), line });
                line += nl;
                i += n;
            } else if c == b'\'' {
                let (s, n, _) = lex_quoted(&b[i..], b'\'').map_err(|m| (line, m))?;
                let v = s.chars().next().map(|c| c as u64).unwrap_or(0);
                i += n;
                out.push(Token { tok: Tok::Int(v), line });
            } else if let Some(p) = punct(&b[i..]) {
                i += p.len();
                out.push(Token { tok: Tok::Punct(p), line });
            } else {
                return Err((line, format!("invalid character {:?}", c as char)));
            }
        }
        (self.i, self.line) = (i, line);
        Ok(true)
    }
}

/// Lexes an integer literal (decimal, 0x hex, 0 octal, 0b binary, with U/L suffixes).
fn lex_int(b: &[u8]) -> Result<(u64, usize), String> {
    let (radix, mut i) = if b.len() > 1 && b[0] == b'0' && (b[1] == b'x' || b[1] == b'X') {
        (16, 2)
    } else if b.len() > 1 && b[0] == b'0' && (b[1] == b'b' || b[1] == b'B') {
        (2, 2)
    } else if b[0] == b'0' {
        (8, 1)
    } else {
        (10, 0)
    };
    let start = i;
    let mut v: u64 = 0;
    while i < b.len() && b[i].is_ascii_alphanumeric() {
        let c = b[i];
        if matches!(c, b'u' | b'U' | b'l' | b'L') {
            break;
        }
        let d = (c as char).to_digit(radix).ok_or_else(|| format!("invalid digit {:?} in integer literal", c as char))?;
        v = v.checked_mul(radix as u64).and_then(|v| v.checked_add(d as u64)).ok_or("integer literal does not fit in 64 bits")?;
        i += 1;
    }
    if i == start && radix != 8 {
        return Err("incomplete integer literal".into());
    }
    while i < b.len() && matches!(b[i], b'u' | b'U' | b'l' | b'L') {
        i += 1;
    }
    if i < b.len() && (b[i].is_ascii_alphanumeric() || b[i] == b'_') {
        return Err(format!("invalid character {:?} after integer literal", b[i] as char));
    }
    Ok((v, i))
}

fn lex_string(b: &[u8]) -> Result<(String, usize, u32), String> {
    lex_quoted(b, b'"')
}

/// Lexes a quoted literal starting at `b[0] == quote`: (text, bytes used, newlines).
fn lex_quoted(b: &[u8], quote: u8) -> Result<(String, usize, u32), String> {
    let mut out = Vec::new();
    let mut i = 1;
    let mut nl = 0;
    loop {
        let Some(&c) = b.get(i) else { return Err("unterminated string literal".into()) };
        match c {
            c if c == quote => {
                // A literal is a C string: an escaped NUL (`\0`) ends its value, as it
                // does for Babeltrace.
                let end = out.iter().position(|&c| c == 0).unwrap_or(out.len());
                return Ok((String::from_utf8_lossy(&out[..end]).into_owned(), i + 1, nl));
            }
            b'\n' => return Err("newline in string literal (unterminated string?)".into()),
            0 => return Err("NUL character in string literal".into()),
            b'\\' => {
                let e = *b.get(i + 1).ok_or("unterminated string literal")?;
                i += 2;
                match e {
                    b'n' => out.push(b'\n'),
                    b't' => out.push(b'\t'),
                    b'r' => out.push(b'\r'),
                    b'a' => out.push(7),
                    b'b' => out.push(8),
                    b'f' => out.push(12),
                    b'v' => out.push(11),
                    b'\\' | b'\'' | b'"' | b'?' => out.push(e),
                    b'0'..=b'7' => {
                        let mut v = (e - b'0') as u32;
                        let mut n = 1;
                        while n < 3 && i < b.len() && (b'0'..=b'7').contains(&b[i]) {
                            v = v * 8 + (b[i] - b'0') as u32;
                            i += 1;
                            n += 1;
                        }
                        out.push(v as u8);
                    }
                    b'x' => {
                        // As many hex digits as keep the value within a byte (`\x023`
                        // is `#`, `\x0231` is `#1`), as Babeltrace reads them.
                        let s = i;
                        let mut v = 0u32;
                        while let Some(d) = b.get(i).and_then(|&c| (c as char).to_digit(16)) {
                            if v * 16 + d > 0xff {
                                break;
                            }
                            v = v * 16 + d;
                            i += 1;
                        }
                        if i == s {
                            return Err("\\x escape without hex digits".into());
                        }
                        out.push(v as u8);
                    }
                    other => return Err(format!("invalid escape sequence \\{}", other as char)),
                }
                continue;
            }
            c => out.push(c),
        }
        if c == b'\n' {
            nl += 1;
        }
        i += 1;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every token of `src`.
    fn lex(src: &str) -> Result<Vec<Token<'_>>, LexError> {
        let mut out = Vec::new();
        Lexer::new(src).lex_into(&mut out, usize::MAX)?;
        Ok(out)
    }

    fn toks(s: &str) -> Vec<Tok<'_>> {
        lex(s).unwrap().into_iter().map(|t| t.tok).collect()
    }

    #[test]
    fn punctuators_take_the_longest_match() {
        let p = |s: &str| toks(s).into_iter().map(|t| if let Tok::Punct(p) = t { p } else { "?" }).collect::<Vec<_>>();
        assert_eq!(
            p("... .. . := : = -> - > <{}[]()+*;,"),
            ["...", ".", ".", ".", ":=", ":", "=", "->", "-", ">", "<", "{", "}", "[", "]", "(", ")", "+", "*", ";", ","]
        );
        assert_eq!(p(":-:=.->"), [":", "-", ":=", ".", "->"]);
        assert!(lex("a @ b").is_err());
    }

    #[test]
    fn literals_and_punctuation() {
        assert_eq!(
            toks("a := 0x1F; b = 017u; c = \"x\\ty\"; d...e"),
            vec![
                Tok::Ident("a"),
                Tok::Punct(":="),
                Tok::Int(31),
                Tok::Punct(";"),
                Tok::Ident("b"),
                Tok::Punct("="),
                Tok::Int(15),
                Tok::Punct(";"),
                Tok::Ident("c"),
                Tok::Punct("="),
                Tok::Str("x\ty".into()),
                Tok::Punct(";"),
                Tok::Ident("d"),
                Tok::Punct("..."),
                Tok::Ident("e"),
            ]
        );
    }

    /// The escapes of the CTF test suite's `string-literal-escape` trace, with the value
    /// Babeltrace 1 and 2 both print: hex escapes take digits while the value fits a
    /// byte, octal ones at most three digits, and `\0` ends the string.
    #[test]
    fn string_escapes_read_as_babeltrace_reads_them() {
        let src = r#""hex: \x41, \x23, \x023, \x0231, oct: \101, \043, \43, \0431, \0NOT SEEN""#;
        assert_eq!(toks(src), vec![Tok::Str("hex: A, #, #, #1, oct: A, #, #, #1, ".into())]);
        assert!(lex(r#""\xg""#).is_err());
    }

    #[test]
    fn comments_and_lines() {
        let t = lex("/* a\n b */ x // y\n z").unwrap();
        assert_eq!(t[0].line, 2);
        assert_eq!(t[1].line, 3);
    }

    #[test]
    fn errors() {
        assert!(lex("x = 99999999999999999999;").is_err());
        assert!(lex("x = \"abc").is_err());
        assert!(lex("x = 12x;").is_err());
        assert!(lex("x = \"\\o\";").is_err());
        assert_eq!(toks("18446744073709551615"), vec![Tok::Int(u64::MAX)]);
    }
}
