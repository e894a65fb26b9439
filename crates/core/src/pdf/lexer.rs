//! A lexer for content streams and CMaps: PostScript-like tokens, read without copying
//! where it can, lenient about junk (an unknown byte is skipped, never an error).

/// One token of a content stream.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Token<'a> {
    /// A number (integers and reals alike).
    Number(f64),
    /// A name, without its slash and with `#xx` escapes as written.
    Name(&'a [u8]),
    /// A string's bytes, escapes resolved.
    Str(Vec<u8>),
    /// `[`
    ArrayStart,
    /// `]`
    ArrayEnd,
    /// `<<`
    DictStart,
    /// `>>`
    DictEnd,
    /// An operator or keyword (`Tj`, `BT`, `begincmap`, `true`, …).
    Keyword(&'a [u8]),
}

/// Reads tokens from `data`; `None` at the end.
pub(crate) struct Lexer<'a> {
    data: &'a [u8],
    pos: usize,
}

/// Nested parentheses deeper than this in a literal string are taken as plain bytes.
const MAX_PAREN_DEPTH: usize = 256;

fn is_white(b: u8) -> bool {
    matches!(b, b' ' | b'\t' | b'\r' | b'\n' | b'\x0c' | b'\0')
}

fn is_delim(b: u8) -> bool {
    matches!(b, b'(' | b')' | b'<' | b'>' | b'[' | b']' | b'{' | b'}' | b'/' | b'%')
}

fn hex_value(b: u8) -> Option<u8> {
    match b {
        b'0'..=b'9' => Some(b - b'0'),
        b'a'..=b'f' => Some(b - b'a' + 10),
        b'A'..=b'F' => Some(b - b'A' + 10),
        _ => None,
    }
}

impl<'a> Lexer<'a> {
    /// A lexer at the start of `data`.
    pub(crate) fn new(data: &'a [u8]) -> Lexer<'a> {
        Lexer { data, pos: 0 }
    }

    fn skip_space(&mut self) {
        while let Some(&b) = self.data.get(self.pos) {
            if is_white(b) {
                self.pos += 1;
            } else if b == b'%' {
                while let Some(&c) = self.data.get(self.pos) {
                    if c == b'\n' || c == b'\r' {
                        break;
                    }
                    self.pos += 1;
                }
            } else {
                break;
            }
        }
    }

    fn word(&mut self) -> &'a [u8] {
        let start = self.pos;
        while let Some(&b) = self.data.get(self.pos) {
            if is_white(b) || is_delim(b) {
                break;
            }
            self.pos += 1;
        }
        &self.data[start..self.pos]
    }

    /// The next token, or `None` at the end of the data.
    pub(crate) fn next_token(&mut self) -> Option<Token<'a>> {
        loop {
            self.skip_space();
            let &b = self.data.get(self.pos)?;
            match b {
                b'/' => {
                    self.pos += 1;
                    return Some(Token::Name(self.word()));
                }
                b'(' => {
                    self.pos += 1;
                    return Some(Token::Str(self.literal()));
                }
                b'<' if self.data.get(self.pos + 1) == Some(&b'<') => {
                    self.pos += 2;
                    return Some(Token::DictStart);
                }
                b'<' => {
                    self.pos += 1;
                    return Some(Token::Str(self.hex()));
                }
                b'>' if self.data.get(self.pos + 1) == Some(&b'>') => {
                    self.pos += 2;
                    return Some(Token::DictEnd);
                }
                b'[' => {
                    self.pos += 1;
                    return Some(Token::ArrayStart);
                }
                b']' => {
                    self.pos += 1;
                    return Some(Token::ArrayEnd);
                }
                b')' | b'>' | b'{' | b'}' => {
                    // Stray delimiters (and PostScript procedures in CMaps) carry no text.
                    self.pos += 1;
                }
                _ => {
                    let word = self.word();
                    if word.is_empty() {
                        self.pos += 1;
                        continue;
                    }
                    if let Some(n) = number(word) {
                        return Some(Token::Number(n));
                    }
                    return Some(Token::Keyword(word));
                }
            }
        }
    }

    fn literal(&mut self) -> Vec<u8> {
        let mut out = Vec::new();
        let mut depth = 0usize;
        while let Some(&b) = self.data.get(self.pos) {
            self.pos += 1;
            match b {
                b'(' => {
                    depth += 1;
                    if depth < MAX_PAREN_DEPTH {
                        out.push(b);
                    }
                }
                b')' => {
                    if depth == 0 {
                        return out;
                    }
                    depth -= 1;
                    out.push(b);
                }
                b'\\' => {
                    let Some(&e) = self.data.get(self.pos) else { break };
                    self.pos += 1;
                    match e {
                        b'n' => out.push(b'\n'),
                        b'r' => out.push(b'\r'),
                        b't' => out.push(b'\t'),
                        b'b' => out.push(8),
                        b'f' => out.push(12),
                        b'\r' => {
                            if self.data.get(self.pos) == Some(&b'\n') {
                                self.pos += 1;
                            }
                        }
                        b'\n' => {}
                        b'0'..=b'7' => {
                            let mut v = u32::from(e - b'0');
                            for _ in 0..2 {
                                match self.data.get(self.pos) {
                                    Some(&d @ b'0'..=b'7') => {
                                        v = v * 8 + u32::from(d - b'0');
                                        self.pos += 1;
                                    }
                                    _ => break,
                                }
                            }
                            out.push(v as u8);
                        }
                        other => out.push(other),
                    }
                }
                _ => out.push(b),
            }
        }
        out
    }

    fn hex(&mut self) -> Vec<u8> {
        let (out, used) = decode_hex(&self.data[self.pos..]);
        self.pos += used;
        out
    }

    /// Skips an inline image's data after its `ID` keyword: up to an `EI` that stands
    /// alone between white space (or at the end).
    pub(crate) fn skip_inline_image(&mut self) {
        // One white-space byte follows ID.
        self.pos += 1;
        let data = self.data;
        let mut i = self.pos;
        while i + 1 < data.len() {
            if data[i] == b'E'
                && data[i + 1] == b'I'
                && (i == 0 || is_white(data[i - 1]))
                && data.get(i + 2).is_none_or(|&b| is_white(b))
            {
                self.pos = i + 2;
                return;
            }
            i += 1;
        }
        self.pos = data.len();
    }
}

/// Decodes hex digits up to a `>` (or the end), skipping anything else; an odd last digit
/// counts as if followed by 0. Returns the bytes and how much input was used, the `>` too.
pub(crate) fn decode_hex(data: &[u8]) -> (Vec<u8>, usize) {
    let (body, used) = match memchr::memchr(b'>', data) {
        Some(end) => (&data[..end], end + 1),
        None => (data, data.len()),
    };
    let mut out = Vec::with_capacity(body.len() / 2);
    let mut high: Option<u8> = None;
    for &b in body {
        if let Some(v) = hex_value(b) {
            match high.take() {
                Some(h) => out.push(h << 4 | v),
                None => high = Some(v),
            }
        }
    }
    if let Some(h) = high {
        out.push(h << 4);
    }
    (out, used)
}

/// Parses a PDF number: optional sign, digits, one optional point. Lenient about
/// doubled signs (`--5`) as readers are.
fn number(word: &[u8]) -> Option<f64> {
    let first = word[0];
    if !(first.is_ascii_digit() || matches!(first, b'+' | b'-' | b'.')) {
        return None;
    }
    let mut neg = false;
    let mut i = 0;
    while i < word.len() && matches!(word[i], b'+' | b'-') {
        neg ^= word[i] == b'-';
        i += 1;
    }
    let mut int: f64 = 0.0;
    let mut frac: f64 = 0.0;
    let mut scale = 1.0;
    let mut seen_digit = false;
    let mut seen_point = false;
    for &b in &word[i..] {
        match b {
            b'0'..=b'9' => {
                seen_digit = true;
                if seen_point {
                    scale /= 10.0;
                    frac += f64::from(b - b'0') * scale;
                } else {
                    int = int * 10.0 + f64::from(b - b'0');
                }
            }
            b'.' if !seen_point => seen_point = true,
            // `1.5-2` and the like: readers take the number up to the junk.
            _ => break,
        }
    }
    if !seen_digit {
        return if seen_point || i > 0 { Some(0.0) } else { None };
    }
    let v = int + frac;
    Some(if neg { -v } else { v })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn all(data: &[u8]) -> Vec<Token<'_>> {
        let mut lx = Lexer::new(data);
        std::iter::from_fn(|| lx.next_token()).collect()
    }

    #[test]
    fn tokens_of_a_text_object() {
        let t = all(b"BT /F1 12 Tf 1 0 0 1 72.5 -.5 Tm [(A\\(b\\)) -250 <4142>] TJ ET % note\n");
        assert_eq!(t[0], Token::Keyword(b"BT"));
        assert_eq!(t[1], Token::Name(b"F1"));
        assert_eq!(t[2], Token::Number(12.0));
        assert_eq!(t[8], Token::Number(72.5));
        assert_eq!(t[9], Token::Number(-0.5));
        assert_eq!(t[11], Token::ArrayStart);
        assert_eq!(t[12], Token::Str(b"A(b)".to_vec()));
        assert_eq!(t[13], Token::Number(-250.0));
        assert_eq!(t[14], Token::Str(b"AB".to_vec()));
        assert_eq!(t[16], Token::Keyword(b"TJ"));
        assert_eq!(t[17], Token::Keyword(b"ET"));
        assert_eq!(t.len(), 18);
    }

    #[test]
    fn escapes_and_odd_hex() {
        assert_eq!(all(b"(\\101\\7\\\nx)"), vec![Token::Str(vec![b'A', 7, b'x'])]);
        assert_eq!(all(b"<4 1 4>"), vec![Token::Str(vec![0x41, 0x40])]);
        assert_eq!(all(b"(a(b)c)"), vec![Token::Str(b"a(b)c".to_vec())]);
    }

    #[test]
    fn inline_images_are_skipped() {
        let mut lx = Lexer::new(b"BI /W 2 /H 1 ID \x00EI\xff \nEI\nQ");
        let mut seen = Vec::new();
        while let Some(t) = lx.next_token() {
            if t == Token::Keyword(b"ID") {
                lx.skip_inline_image();
                continue;
            }
            seen.push(t);
        }
        assert_eq!(seen.last(), Some(&Token::Keyword(b"Q")));
    }

    #[test]
    fn unterminated_input_ends() {
        assert_eq!(all(b"(abc").len(), 1);
        assert_eq!(all(b"<41").len(), 1);
        assert!(all(b"}}}))>").is_empty());
    }
}
