//! A JSON parser that remembers where every value lies in the bytes it came from, so
//! that one value can be replaced and every other byte of the document kept as it was
//! (indentation, key order, escapes, the final newline).
//!
//! Strict RFC 8259: no comments, no trailing commas, no NaN; strings must be valid
//! UTF-8 with valid escapes. Nesting is limited, so a hostile document cannot exhaust
//! the stack.

use std::ops::Range;

/// The deepest nesting accepted (a notebook is about eight levels deep).
const MAX_DEPTH: usize = 256;

/// A parsed value and the bytes it spans.
#[derive(Debug)]
pub(crate) struct Node {
    /// The value's bytes in the document, from its first byte to just after its last.
    pub span: Range<usize>,
    pub value: Value,
}

/// A JSON value. Strings are decoded; numbers are kept as their text.
#[derive(Debug)]
pub(crate) enum Value {
    Null,
    Bool,
    Number,
    String(String),
    Array(Vec<Node>),
    /// Members in document order: (key, the key's span, the value).
    Object(Vec<Member>),
}

/// One member of an object.
#[derive(Debug)]
pub(crate) struct Member {
    pub key: String,
    /// The key's bytes, quotes included.
    pub key_span: Range<usize>,
    pub value: Node,
}

impl Node {
    /// The member `key` of an object.
    pub fn get(&self, key: &str) -> Option<&Node> {
        match &self.value {
            Value::Object(members) => members.iter().find(|m| m.key == key).map(|m| &m.value),
            _ => None,
        }
    }

    /// The members of an object.
    pub fn members(&self) -> Option<&[Member]> {
        match &self.value {
            Value::Object(members) => Some(members),
            _ => None,
        }
    }

    pub fn as_str(&self) -> Option<&str> {
        match &self.value {
            Value::String(s) => Some(s),
            _ => None,
        }
    }

    pub fn as_array(&self) -> Option<&[Node]> {
        match &self.value {
            Value::Array(items) => Some(items),
            _ => None,
        }
    }

    /// A string, or an array of strings joined (how notebooks store multi-line text).
    pub fn joined_text(&self) -> Option<String> {
        match &self.value {
            Value::String(s) => Some(s.clone()),
            Value::Array(items) => {
                let mut out = String::new();
                for item in items {
                    out.push_str(item.as_str()?);
                }
                Some(out)
            }
            _ => None,
        }
    }
}

/// Why a document is not JSON: what was wrong, and the 1-based line and column.
#[derive(Debug, PartialEq, Eq)]
pub(crate) struct SyntaxError {
    pub what: &'static str,
    pub line: usize,
    pub column: usize,
}

impl std::fmt::Display for SyntaxError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{} at line {}, column {}", self.what, self.line, self.column)
    }
}

/// Parses a whole document (surrounding whitespace allowed, nothing else).
pub(crate) fn parse(bytes: &[u8]) -> Result<Node, SyntaxError> {
    let mut p = Parser { bytes, at: 0 };
    p.skip_ws();
    let node = p.value(0)?;
    p.skip_ws();
    if p.at != bytes.len() {
        return Err(p.error("unexpected text after the document"));
    }
    Ok(node)
}

struct Parser<'a> {
    bytes: &'a [u8],
    at: usize,
}

impl Parser<'_> {
    fn error(&self, what: &'static str) -> SyntaxError {
        let upto = &self.bytes[..self.at.min(self.bytes.len())];
        let line = memchr::memchr_iter(b'\n', upto).count() + 1;
        let line_start = memchr::memrchr(b'\n', upto).map_or(0, |i| i + 1);
        let column = String::from_utf8_lossy(&upto[line_start..]).chars().count() + 1;
        SyntaxError { what, line, column }
    }

    fn skip_ws(&mut self) {
        while let Some(b' ' | b'\t' | b'\n' | b'\r') = self.bytes.get(self.at) {
            self.at += 1;
        }
    }

    fn value(&mut self, depth: usize) -> Result<Node, SyntaxError> {
        if depth > MAX_DEPTH {
            return Err(self.error("nesting too deep"));
        }
        let start = self.at;
        let value = match self.bytes.get(self.at) {
            None => return Err(self.error("unexpected end of the document")),
            Some(b'{') => self.object(depth)?,
            Some(b'[') => self.array(depth)?,
            Some(b'"') => Value::String(self.string()?),
            Some(b't') => self.literal(b"true", Value::Bool)?,
            Some(b'f') => self.literal(b"false", Value::Bool)?,
            Some(b'n') => self.literal(b"null", Value::Null)?,
            Some(b'-' | b'0'..=b'9') => self.number()?,
            Some(_) => return Err(self.error("expected a value")),
        };
        Ok(Node { span: start..self.at, value })
    }

    fn literal(&mut self, word: &[u8], value: Value) -> Result<Value, SyntaxError> {
        if self.bytes[self.at..].starts_with(word) {
            self.at += word.len();
            Ok(value)
        } else {
            Err(self.error("expected a value"))
        }
    }

    fn number(&mut self) -> Result<Value, SyntaxError> {
        let digits = |p: &mut Parser<'_>| {
            let from = p.at;
            while p.bytes.get(p.at).is_some_and(u8::is_ascii_digit) {
                p.at += 1;
            }
            p.at > from
        };
        if self.bytes.get(self.at) == Some(&b'-') {
            self.at += 1;
        }
        match self.bytes.get(self.at) {
            Some(b'0') => self.at += 1,
            Some(b'1'..=b'9') => {
                digits(self);
            }
            _ => return Err(self.error("invalid number")),
        }
        if self.bytes.get(self.at) == Some(&b'.') {
            self.at += 1;
            if !digits(self) {
                return Err(self.error("invalid number"));
            }
        }
        if let Some(b'e' | b'E') = self.bytes.get(self.at) {
            self.at += 1;
            if let Some(b'+' | b'-') = self.bytes.get(self.at) {
                self.at += 1;
            }
            if !digits(self) {
                return Err(self.error("invalid number"));
            }
        }
        Ok(Value::Number)
    }

    fn string(&mut self) -> Result<String, SyntaxError> {
        debug_assert_eq!(self.bytes[self.at], b'"');
        self.at += 1;
        let mut out = String::new();
        loop {
            // Copy the run of plain bytes up to the next quote, backslash or control byte.
            let run_start = self.at;
            while let Some(&b) = self.bytes.get(self.at) {
                if b == b'"' || b == b'\\' || b < 0x20 {
                    break;
                }
                self.at += 1;
            }
            if self.at > run_start {
                let run = std::str::from_utf8(&self.bytes[run_start..self.at]).map_err(|e| {
                    self.at = run_start + e.valid_up_to();
                    self.error("invalid UTF-8 in a string")
                })?;
                out.push_str(run);
            }
            match self.bytes.get(self.at) {
                None => return Err(self.error("unterminated string")),
                Some(b'"') => {
                    self.at += 1;
                    return Ok(out);
                }
                Some(b'\\') => {
                    self.at += 1;
                    let c = match self.bytes.get(self.at) {
                        Some(b'"') => '"',
                        Some(b'\\') => '\\',
                        Some(b'/') => '/',
                        Some(b'b') => '\u{8}',
                        Some(b'f') => '\u{c}',
                        Some(b'n') => '\n',
                        Some(b'r') => '\r',
                        Some(b't') => '\t',
                        Some(b'u') => {
                            self.at += 1;
                            let c = self.unicode_escape()?;
                            out.push(c);
                            continue;
                        }
                        _ => return Err(self.error("invalid escape in a string")),
                    };
                    self.at += 1;
                    out.push(c);
                }
                Some(_) => return Err(self.error("control character in a string")),
            }
        }
    }

    /// The character of `\uXXXX` (with `\u` already read), pairing surrogates.
    fn unicode_escape(&mut self) -> Result<char, SyntaxError> {
        let first = self.hex4()?;
        if !(0xD800..0xDC00).contains(&first) {
            return char::from_u32(first).ok_or_else(|| self.error("unpaired surrogate in a string"));
        }
        if self.bytes.get(self.at..self.at + 2) != Some(b"\\u") {
            return Err(self.error("unpaired surrogate in a string"));
        }
        self.at += 2;
        let second = self.hex4()?;
        if !(0xDC00..0xE000).contains(&second) {
            return Err(self.error("unpaired surrogate in a string"));
        }
        let c = 0x10000 + ((first - 0xD800) << 10) + (second - 0xDC00);
        char::from_u32(c).ok_or_else(|| self.error("invalid escape in a string"))
    }

    fn hex4(&mut self) -> Result<u32, SyntaxError> {
        let digits = self.bytes.get(self.at..self.at + 4).ok_or_else(|| self.error("invalid escape in a string"))?;
        let text = std::str::from_utf8(digits).map_err(|_| self.error("invalid escape in a string"))?;
        let n = u32::from_str_radix(text, 16).map_err(|_| self.error("invalid escape in a string"))?;
        if !digits.iter().all(u8::is_ascii_hexdigit) {
            return Err(self.error("invalid escape in a string"));
        }
        self.at += 4;
        Ok(n)
    }

    fn array(&mut self, depth: usize) -> Result<Value, SyntaxError> {
        self.at += 1;
        let mut items = Vec::new();
        self.skip_ws();
        if self.bytes.get(self.at) == Some(&b']') {
            self.at += 1;
            return Ok(Value::Array(items));
        }
        loop {
            self.skip_ws();
            items.push(self.value(depth + 1)?);
            self.skip_ws();
            match self.bytes.get(self.at) {
                Some(b',') => self.at += 1,
                Some(b']') => {
                    self.at += 1;
                    return Ok(Value::Array(items));
                }
                _ => return Err(self.error("expected ',' or ']'")),
            }
        }
    }

    fn object(&mut self, depth: usize) -> Result<Value, SyntaxError> {
        self.at += 1;
        let mut members = Vec::new();
        self.skip_ws();
        if self.bytes.get(self.at) == Some(&b'}') {
            self.at += 1;
            return Ok(Value::Object(members));
        }
        loop {
            self.skip_ws();
            if self.bytes.get(self.at) != Some(&b'"') {
                return Err(self.error("expected a quoted key"));
            }
            let key_start = self.at;
            let key = self.string()?;
            let key_span = key_start..self.at;
            self.skip_ws();
            if self.bytes.get(self.at) != Some(&b':') {
                return Err(self.error("expected ':' after a key"));
            }
            self.at += 1;
            self.skip_ws();
            let value = self.value(depth + 1)?;
            members.push(Member { key, key_span, value });
            self.skip_ws();
            match self.bytes.get(self.at) {
                Some(b',') => self.at += 1,
                Some(b'}') => {
                    self.at += 1;
                    return Ok(Value::Object(members));
                }
                _ => return Err(self.error("expected ',' or '}'")),
            }
        }
    }
}

/// How a document writes JSON: what new values are written like.
#[derive(Clone, Debug)]
pub(crate) struct Style {
    /// The indentation of one level (`" "` for Jupyter's indent=1), or None when the
    /// document is written on one line.
    pub indent: Option<String>,
    /// Whether a key is followed by `": "` (else `":"`).
    pub space_after_colon: bool,
    /// Whether characters outside ASCII are written as `\uXXXX` (Python's ensure_ascii).
    pub ascii_only: bool,
    /// The line break.
    pub newline: &'static str,
}

impl Style {
    /// Writes `s` as a JSON string.
    pub fn string(&self, s: &str, out: &mut String) {
        out.push('"');
        for c in s.chars() {
            match c {
                '"' => out.push_str("\\\""),
                '\\' => out.push_str("\\\\"),
                '\n' => out.push_str("\\n"),
                '\r' => out.push_str("\\r"),
                '\t' => out.push_str("\\t"),
                '\u{8}' => out.push_str("\\b"),
                '\u{c}' => out.push_str("\\f"),
                c if (c as u32) < 0x20 || (self.ascii_only && !c.is_ascii()) => {
                    let mut units = [0u16; 2];
                    for unit in c.encode_utf16(&mut units) {
                        out.push_str(&format!("\\u{unit:04x}"));
                    }
                }
                c => out.push(c),
            }
        }
        out.push('"');
    }

    /// The separator after a key.
    pub fn colon(&self) -> &'static str {
        if self.space_after_colon {
            ": "
        } else {
            ":"
        }
    }

    /// A line break and the indentation of `level`, or nothing on one line.
    pub fn break_at(&self, level: &str) -> String {
        match &self.indent {
            Some(_) => format!("{}{level}", self.newline),
            None => String::new(),
        }
    }

    /// The indentation one level deeper than `level`.
    pub fn deeper(&self, level: &str) -> String {
        format!("{level}{}", self.indent.as_deref().unwrap_or(""))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn spans_cover_each_value_exactly() {
        let doc = br#" { "a" : [1, -2.5e3, "x\n\u00e9\ud83d\ude00"], "b": {"c": null, "d": true} } "#;
        let root = parse(doc).unwrap();
        assert_eq!(&doc[root.span.clone()], &doc[1..doc.len() - 1]);
        let a = root.get("a").unwrap();
        assert_eq!(&doc[a.span.clone()], br#"[1, -2.5e3, "x\n\u00e9\ud83d\ude00"]"#);
        let items = a.as_array().unwrap();
        assert_eq!(&doc[items[1].span.clone()], b"-2.5e3");
        assert_eq!(items[2].as_str(), Some("x\n\u{e9}\u{1F600}"));
        let b = root.get("b").unwrap();
        assert_eq!(&doc[b.get("d").unwrap().span.clone()], b"true");
        let m = &root.members().unwrap()[1];
        assert_eq!(&doc[m.key_span.clone()], br#""b""#);
    }

    #[test]
    fn rejects_what_is_not_strict_json() {
        for bad in [
            &b"{\"a\": 1,}"[..],
            b"[1 2]",
            b"{'a': 1}",
            b"[01]",
            b"[1.]",
            b"\"tab\there\"",
            b"\"\\x\"",
            b"\"\\ud800\"",
            b"[NaN]",
            b"{\"a\": 1} x",
            b"\"\xff\"",
            b"",
        ] {
            assert!(parse(bad).is_err(), "{}", String::from_utf8_lossy(bad));
        }
    }

    #[test]
    fn errors_say_where() {
        let err = parse(b"{\n  \"a\": [1,\n  2,,]\n}").unwrap_err();
        assert_eq!((err.line, err.column), (3, 5));
        assert_eq!(err.what, "expected a value");
    }

    #[test]
    fn deep_nesting_is_refused_not_a_stack_overflow() {
        let doc = "[".repeat(100_000);
        assert_eq!(parse(doc.as_bytes()).unwrap_err().what, "nesting too deep");
    }

    #[test]
    fn strings_are_written_back_in_the_document_style() {
        let mut out = String::new();
        let style = Style { indent: Some(" ".into()), space_after_colon: true, ascii_only: false, newline: "\n" };
        style.string("a\"b\\c\nd\u{1}é😀", &mut out);
        assert_eq!(out, "\"a\\\"b\\\\c\\nd\\u0001é😀\"");
        let ascii = Style { ascii_only: true, ..style };
        out.clear();
        ascii.string("é😀", &mut out);
        assert_eq!(out, "\"\\u00e9\\ud83d\\ude00\"");
        assert_eq!(parse(out.as_bytes()).unwrap().as_str(), Some("é😀"));
    }
}
