//! Invariant checks for fuzzing: each `pub fn` here takes arbitrary bytes, decodes them
//! into an input for one of the core's parsers or matchers, runs it, and panics when a
//! property that must hold for every input does not. The libFuzzer targets in `fuzz/`
//! (cargo-fuzz layout) call these functions one to one; the unit tests at the bottom
//! replay the committed corpus and every regression through them and add a few thousand
//! seeded pseudo-random inputs, so `cargo test` runs a short fuzz pass of its own.
//!
//! Why the checks live in the crate: they compare the real code with naive reference
//! implementations written here (a whole-file line split against the streaming pager,
//! string replaces against the edit ladder's folded offsets), and they need internals
//! that are not public (the glob compiler, the pager's resume entry, the PDF lexer,
//! CMaps and stream filters). Compiled only for tests and for `cfg(fuzzing)`.
//!
//! Targets: [`page`], [`pdf`], [`glob`], [`edit`], [`text`], [`cmap`], [`filters`].
//! `docs/fuzzing.md` says what each checks and how to run them.

use std::borrow::Cow;
use std::io::Read;
use std::path::Path;
use std::time::{Duration, Instant};

use crate::cancel::Cancel;
use crate::edit::{apply_edit, EditFailure, EditSpec, Edited, Rung, SANITIZED};
use crate::error::ErrorKind;
use crate::hash::hash_bytes;
use crate::page::{group, LineStyle, Page, PageConfig, Resume};
use crate::pdf::{PdfPages, PdfRequest};
use crate::sniff::TextEncoding;
use crate::walk::{Filter, WalkConfig};

/// The most bytes of input a target looks at (libFuzzer's `-max_len` is set lower).
const MAX_INPUT: usize = 1 << 16;

/// Reads an input front to back; past its end every byte is 0.
struct Input<'a>(&'a [u8]);

impl<'a> Input<'a> {
    fn byte(&mut self) -> u8 {
        match self.0.split_first() {
            Some((&b, rest)) => {
                self.0 = rest;
                b
            }
            None => 0,
        }
    }

    fn rest(&mut self) -> &'a [u8] {
        let rest = self.0;
        self.0 = &[];
        &rest[..rest.len().min(MAX_INPUT)]
    }
}

/// SplitMix64: a small seeded generator for chunk sizes and the tests' inputs.
#[derive(Clone)]
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// A number in `0..n` (0 when `n` is 0).
    fn below(&mut self, n: usize) -> usize {
        if n == 0 {
            0
        } else {
            (self.next() % n as u64) as usize
        }
    }
}

/// A reader that hands out its data in pieces of pseudo-random sizes (mostly 1–16
/// bytes), so that every chunk boundary of a streaming pass gets exercised.
struct Pieces<'a> {
    data: &'a [u8],
    rng: Rng,
}

impl Read for Pieces<'_> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        let most = if self.rng.below(8) == 0 { buf.len() } else { 16 };
        let n = (1 + self.rng.below(most)).min(self.data.len()).min(buf.len());
        buf[..n].copy_from_slice(&self.data[..n]);
        self.data = &self.data[n..];
        Ok(n)
    }
}

/// Builds a string from bytes, each byte picking one token of `tokens`.
fn tokens(bytes: &[u8], tokens: &[&str]) -> String {
    bytes.iter().map(|&b| tokens[usize::from(b) % tokens.len()]).collect()
}

// ---------------------------------------------------------------------------------------
// page

/// Pagination over arbitrary bytes, against a naive reference that decodes the whole
/// file and splits it into lines.
///
/// Input: six header bytes (encoding and line style; offset; limit; line length limit;
/// byte limit; a seed for read sizes and the resume index), then the file's body (a BOM
/// is put in front for the BOM encodings). Checked: the total line count; every
/// numbered line of the page (its number, its shown text, the cut marker and its count);
/// the page's range, `cut_lines`, `lossy` and `overflow`; the content hash and size of
/// the raw bytes; that reading in pieces of 1–16 bytes gives the same page; that a pass
/// resumed at an indexed line start (as the index cache does) gives the same page; and
/// that consecutive pages, concatenated without their number prefixes, are the decoded
/// lines of the file, each once.
pub fn page(data: &[u8]) {
    let mut input = Input(data);
    let mode = input.byte();
    let (offset, limit, chars, bytes, seed) = (input.byte(), input.byte(), input.byte(), input.byte(), input.byte());
    let body = input.rest();
    let encoding = match mode & 3 {
        0 => TextEncoding::Utf8,
        1 => TextEncoding::Utf8Bom,
        2 => TextEncoding::Utf16Le,
        _ => TextEncoding::Utf16Be,
    };
    let bom: &[u8] = match encoding {
        TextEncoding::Utf8 => b"",
        TextEncoding::Utf8Bom => b"\xEF\xBB\xBF",
        TextEncoding::Utf16Le => b"\xFF\xFE",
        TextEncoding::Utf16Be => b"\xFE\xFF",
    };
    let file = [bom, body].concat();
    let reference = Reference::of(&file, encoding);
    let total = reference.lines.len() as u64;
    let want = Want {
        offset: u64::from(offset) % (total + 3),
        limit: if limit & 0x80 != 0 { 2000 } else { 1 + u64::from(limit % 16) },
        max_chars: if chars & 0x80 != 0 { 2000 } else { 1 + usize::from(chars % 12) },
        max_bytes: if bytes & 0x80 != 0 { usize::from(bytes & 0x7f) * 3 } else { 8 << 20 },
        style: if mode & 4 != 0 { LineStyle::Colon } else { LineStyle::CatN },
    };
    let cfg = want.config();
    let whole = crate::page::page(&file[..], encoding, &cfg, &Cancel::new()).expect("paging bytes in memory");
    check_page(&whole, &want, &reference);
    assert_eq!(whole.hash, hash_bytes(&file), "the page's hash is the content hash of the raw bytes");
    assert_eq!(whole.size, file.len() as u64);

    let pieces = Pieces { data: &file, rng: Rng(u64::from(seed)) };
    let chunked = crate::page::page(pieces, encoding, &cfg, &Cancel::new()).expect("paging bytes in memory");
    same_page(&chunked, &whole, "read in small pieces");
    assert_eq!((chunked.hash, chunked.size), (whole.hash, whole.size), "read in small pieces");

    if matches!(encoding, TextEncoding::Utf8 | TextEncoding::Utf8Bom) {
        // The index cache's path: an index of some line starts (line 1 after the BOM
        // always), the nearest at or before the page, and a pass resumed from there.
        let mut rng = Rng(u64::from(seed) << 8 | u64::from(mode));
        let mut index = vec![(1u64, bom.len())];
        let mut line = 1u64;
        for pos in memchr::memchr_iter(b'\n', &file) {
            line += 1;
            if pos + 1 < file.len() && rng.below(3) == 0 {
                index.push((line, pos + 1));
            }
        }
        let first = cfg.first_line();
        let k = index.partition_point(|&(line, _)| line <= first).saturating_sub(1);
        let (line, at) = index[k];
        let reader = Pieces { data: &file[at..], rng };
        let resume = Resume { line, total_lines: total };
        let resumed =
            crate::page::run(reader, encoding, &cfg, &Cancel::new(), Some(resume)).expect("paging bytes in memory");
        same_page(&resumed, &whole, &format!("resumed at line {line} (byte {at})"));
    }

    // Consecutive pages, uncut: their lines without the number prefix are the file's lines.
    let step = want.limit.max(total / 8 + 1);
    let mut joined = Vec::new();
    let mut offset = 1;
    while offset <= total {
        let mut cfg = PageConfig::default();
        cfg.offset(offset).limit(step).max_line_chars(1 << 20);
        let p = crate::page::page(&file[..], encoding, &cfg, &Cancel::new()).expect("paging bytes in memory");
        assert_eq!((p.start_line, p.end_line), (offset, (offset + step - 1).min(total)), "page at {offset}");
        for (i, line) in p.text.split_terminator('\n').enumerate() {
            let prefix = format!("{:>6}\t", offset + i as u64);
            let line = line.strip_prefix(&prefix).unwrap_or_else(|| panic!("{line:?} has no prefix {prefix:?}"));
            joined.push(line.to_string());
        }
        offset += step;
    }
    let lines: Vec<String> = reference.lines.iter().map(|l| String::from_utf8_lossy(l).into_owned()).collect();
    assert_eq!(joined, lines, "pages joined are the file's lines");
}

/// The page asked for, in the fuzzer's terms.
struct Want {
    offset: u64,
    limit: u64,
    max_chars: usize,
    max_bytes: usize,
    style: LineStyle,
}

impl Want {
    fn config(&self) -> PageConfig {
        let mut cfg = PageConfig::default();
        cfg.offset(self.offset).limit(self.limit).max_line_chars(self.max_chars).max_bytes(self.max_bytes);
        cfg.style(self.style);
        cfg
    }
}

/// A file decoded in one go and split into lines: the reference for the pager.
struct Reference {
    /// Each line's bytes, without its `\n` and one `\r` before it.
    lines: Vec<Vec<u8>>,
    /// UTF-16 only: whether decoding replaced anything.
    replaced: bool,
    utf16: bool,
}

impl Reference {
    fn of(file: &[u8], encoding: TextEncoding) -> Reference {
        let mut replaced = false;
        let body: Cow<[u8]> = match encoding {
            TextEncoding::Utf8 => file.into(),
            TextEncoding::Utf8Bom => file[3..].into(),
            TextEncoding::Utf16Le | TextEncoding::Utf16Be => {
                let body = &file[2..];
                let le = encoding == TextEncoding::Utf16Le;
                let units = body.chunks_exact(2).map(|p| {
                    let pair = [p[0], p[1]];
                    if le {
                        u16::from_le_bytes(pair)
                    } else {
                        u16::from_be_bytes(pair)
                    }
                });
                let mut text = String::new();
                for c in char::decode_utf16(units) {
                    text.push(c.unwrap_or_else(|_| {
                        replaced = true;
                        '\u{FFFD}'
                    }));
                }
                // An odd last byte is one more error, unless a lead surrogate is still
                // pending before it: then the two are one error (the WHATWG decoder's
                // end of stream), and its U+FFFD is already there.
                let last_unit = body.len() / 2 * 2;
                let lead_pending = last_unit >= 2 && {
                    let p = [body[last_unit - 2], body[last_unit - 1]];
                    let unit = if le { u16::from_le_bytes(p) } else { u16::from_be_bytes(p) };
                    (0xD800..0xDC00).contains(&unit)
                };
                if body.len() % 2 == 1 && !lead_pending {
                    text.push('\u{FFFD}');
                    replaced = true;
                }
                text.into_bytes().into()
            }
        };
        let mut lines: Vec<Vec<u8>> =
            body.split(|&b| b == b'\n').map(|l| l.strip_suffix(b"\r").unwrap_or(l).to_vec()).collect();
        if body.is_empty() || body.ends_with(b"\n") {
            lines.pop();
        }
        Reference { lines, replaced, utf16: matches!(encoding, TextEncoding::Utf16Le | TextEncoding::Utf16Be) }
    }
}

/// Checks a page line by line against the reference.
fn check_page(page: &Page, want: &Want, reference: &Reference) {
    let total = reference.lines.len() as u64;
    assert_eq!(page.total_lines, total, "total lines");
    let first = want.offset.max(1);
    let last = first.saturating_add(want.limit - 1).min(total);
    assert!(page.text.is_empty() || page.text.ends_with('\n'), "every page line ends in \\n");
    let (mut emitted, mut cut, mut bytes, mut overflow) = (0u64, 0u32, 0usize, false);
    let mut invalid_shown = false;
    for line in page.text.split_inclusive('\n') {
        assert!(!overflow, "a line after the page overflowed: {line:?}");
        let n = first + emitted;
        assert!(n <= last, "line {n} is past the page ({first}-{last}): {line:?}");
        let raw = &reference.lines[n as usize - 1];
        cut += u32::from(check_line(line, n, raw, want));
        invalid_shown |= std::str::from_utf8(raw).is_err() && raw.len() <= 4 * want.max_chars;
        emitted += 1;
        bytes += line.len();
        overflow = bytes > want.max_bytes;
    }
    if !overflow && first <= total {
        assert_eq!(emitted, last - first + 1, "lines in the page {first}-{last}");
    }
    assert_eq!(page.overflow, overflow, "overflow at {bytes} bytes of {}", want.max_bytes);
    let range = if emitted == 0 { (0, 0) } else { (first, first + emitted - 1) };
    assert_eq!((page.start_line, page.end_line), range, "page range");
    assert_eq!(page.cut_lines, cut, "cut lines");
    if reference.utf16 {
        assert_eq!(page.lossy, reference.replaced, "lossy (UTF-16: anything replaced in the file)");
    } else {
        let page_lines = &reference.lines[(first as usize).min(reference.lines.len() + 1) - 1..][..emitted as usize];
        if page.lossy {
            assert!(page_lines.iter().any(|l| std::str::from_utf8(l).is_err()), "lossy, but every line is UTF-8");
        }
        if invalid_shown {
            assert!(page.lossy, "a line of invalid UTF-8 shown whole, but not lossy");
        }
    }
}

/// Checks one numbered line; returns whether it carries the cut marker.
fn check_line(line: &str, n: u64, raw: &[u8], want: &Want) -> bool {
    let text = String::from_utf8_lossy(raw);
    let chars = text.chars().count();
    let shown: String = text.chars().take(want.max_chars).collect();
    let head = match want.style {
        LineStyle::CatN => format!("{n:>6}\t{shown}"),
        LineStyle::Colon => format!("{n}: {shown}"),
        LineStyle::Compact => format!("{n}\t{shown}"),
        LineStyle::Plain => shown,
    };
    if chars <= want.max_chars {
        assert_eq!(line, format!("{head}\n"), "line {n}");
        return false;
    }
    let more = (chars - want.max_chars) as u64;
    // A line of invalid UTF-8 longer than the pager keeps is counted approximately.
    if std::str::from_utf8(raw).is_ok() || raw.len() <= 4 * want.max_chars {
        assert_eq!(line, format!("{head} … [line cut: {} more characters]\n", group(more)), "line {n}");
    } else {
        let marker = format!("{head} … [line cut: ");
        let count = line
            .strip_prefix(&marker)
            .and_then(|rest| rest.strip_suffix(" more characters]\n"))
            .unwrap_or_else(|| panic!("line {n}: {line:?} is not {marker:?} with a count"));
        let count: u64 = count.replace(',', "").parse().unwrap_or_else(|_| panic!("line {n}: count {count:?}"));
        assert!(count >= 1, "line {n}: a cut of nothing");
    }
    true
}

/// Two pages agree on everything but the hash and size.
fn same_page(a: &Page, b: &Page, how: &str) {
    assert_eq!(a.text, b.text, "{how}: text");
    assert_eq!(
        (a.start_line, a.end_line, a.total_lines, a.cut_lines, a.lossy, a.overflow),
        (b.start_line, b.end_line, b.total_lines, b.cut_lines, b.lossy, b.overflow),
        "{how}: start, end, total, cut lines, lossy, overflow"
    );
}

// ---------------------------------------------------------------------------------------
// pdf

/// The time one PDF may take in the fuzzer (the product's default is 30 s).
const PDF_TIME: Duration = Duration::from_secs(2);

/// [`crate::extract_pdf`] on arbitrary bytes.
///
/// The bytes are the file as they are (so real PDFs seed the corpus); the page selection
/// comes from the length (every page, at most 2, or pages 2 and 1). Checked: a result
/// always comes back, well within the time limit; an error is [`ErrorKind::Pdf`] or
/// [`ErrorKind::Timeout`] with a lowercase message; the pages returned are the ones the
/// selection names, each in `1..=page_count`, or none with the reason set (`too_many`,
/// `beyond`, `locked`); and each page's text is laid out as documented: no control
/// characters but `\n`, single spaces, no blank at a line's start or end, at most one
/// blank line in a row, no ligature characters, 64 MiB at most in all.
pub fn pdf(data: &[u8]) {
    let pages = match data.len() % 3 {
        0 => PdfPages::All,
        1 => PdfPages::UpTo(2),
        _ => PdfPages::Only(vec![2, 1]),
    };
    // Every fifth input also stops at 200 characters: then the pages given are a prefix.
    let max_chars = (data.len() % 5 == 0).then_some(200);
    let request = PdfRequest { pages: pages.clone(), time_limit: PDF_TIME, max_chars };
    let started = Instant::now();
    let result = crate::pdf::extract(data, &request, &Cancel::new());
    let took = started.elapsed();
    assert!(took < PDF_TIME + Duration::from_secs(8), "extraction took {took:?}");
    let out = match result {
        Ok(out) => out,
        Err(e) => {
            assert!(matches!(e.kind(), ErrorKind::Pdf | ErrorKind::Timeout), "error kind {:?}: {e}", e.kind());
            let message = e.to_string();
            assert!(!message.starts_with(|c: char| c.is_ascii_uppercase()), "message not lowercase: {message}");
            return;
        }
    };
    let count = out.page_count;
    let numbers: Vec<u32> = out.pages.iter().map(|p| p.number).collect();
    if out.locked {
        assert!(out.encrypted && numbers.is_empty(), "locked: encrypted and no pages");
    } else {
        let want: Vec<u32> = match &pages {
            PdfPages::All => (1..=count).collect(),
            PdfPages::UpTo(max) => {
                assert_eq!(out.too_many, count > *max, "too many pages: {count} of at most {max}");
                if out.too_many {
                    vec![]
                } else {
                    (1..=count).collect()
                }
            }
            PdfPages::Only(list) => {
                let beyond: Vec<u32> = list.iter().copied().filter(|&n| n == 0 || n > count).collect();
                assert_eq!(out.beyond, beyond);
                if beyond.is_empty() {
                    list.clone()
                } else {
                    vec![]
                }
            }
        };
        if out.stopped {
            assert!(max_chars.is_some(), "stopped without a limit");
            assert!(want.starts_with(&numbers), "stopped: {numbers:?} is not a prefix of {want:?}");
        } else {
            assert_eq!(numbers, want);
        }
    }
    let mut all = 0usize;
    for page in &out.pages {
        let t = &page.text;
        all += t.len();
        let n = page.number;
        assert!(!t.chars().any(|c| c.is_control() && c != '\n'), "page {n}: a control character in {t:?}");
        assert!(!t.chars().any(|c| c.is_whitespace() && c != ' ' && c != '\n'), "page {n}: odd white space in {t:?}");
        assert!(!t.chars().any(|c| ('\u{fb00}'..='\u{fb06}').contains(&c)), "page {n}: a ligature in {t:?}");
        for bad in ["  ", " \n", "\n ", "\n\n\n"] {
            assert!(!t.contains(bad), "page {n}: {bad:?} in {t:?}");
        }
        assert!(!t.starts_with([' ', '\n']) && !t.ends_with([' ', '\n']), "page {n}: untrimmed {t:?}");
    }
    assert!(all <= 64 << 20, "{all} bytes of text");
}

// ---------------------------------------------------------------------------------------
// glob

/// What glob patterns are made of: one token per byte.
const GLOB_TOKENS: &[&str] = &[
    "a", "b", "c", "/", "*", "**", "?", "[", "]", "{", "}", ",", "\\", "!", "-", "^", ".", "é", " ", "x", "a/", "*/",
    "**/", "[!a]", "[^/]", "[a-c]", "{a,b}", "ß", "Σ", "./", "/", "ab", "[]]", "[!]", "\\*", "{,}", "*.rs", "src",
];
/// What path components are made of.
const PATH_TOKENS: &[&str] = &[
    "a", "b", "c", "x", "é", "Σ", ".", "*", "?", "[", "]", "{", "}", ",", "\\", "!", "-", "^", " ", "ab", "rs", "src",
];

/// Glob patterns with ripgrep's `--glob` rules ([`WalkConfig::globs`], compiled by the
/// walker's filter).
///
/// Input: a flags byte, then a pattern and three paths separated by 0xFF bytes, each
/// byte a token. Checked: compiling never panics and fails only as
/// [`ErrorKind::InvalidGlob`] with a lowercase message; a path with every special
/// character escaped matches exactly that path (and, without a `/`, at any depth); `!pat`
/// drops what `pat` keeps; a name-only glob matches a name at any depth alike; a rooted
/// `/pat` matches only at the top; two globs keep the union of what each keeps.
pub fn glob(data: &[u8]) {
    let mut input = Input(data);
    let _flags = input.byte();
    let mut parts = input.rest().split(|&b| b == 0xFF);
    let pat = tokens(parts.next().unwrap_or_default(), GLOB_TOKENS);
    let paths: Vec<String> = parts.take(3).map(path_of).collect();
    let pat = pat.trim();
    let Some(keep) = filter(&[pat]) else { return };
    for p in paths.iter().filter(|p| !p.is_empty()) {
        let name = p.rsplit('/').next().unwrap_or(p);
        let kept = keep.keeps(Path::new(p));
        // Negation, for files and (with drops) folders.
        if !pat.is_empty() && !pat.starts_with('!') {
            let not = filter(&[&format!("!{pat}")]).expect("!pat compiles when pat does");
            assert_eq!(not.keeps(Path::new(p)), !kept, "!{pat:?} keeps {p:?} iff {pat:?} does not");
            assert_eq!(not.drops(Path::new(p)), kept, "!{pat:?} drops {p:?} iff {pat:?} keeps it");
        }
        let plain = !pat.starts_with('!') && !pat.contains('/');
        if plain && !pat.is_empty() {
            // A name-only glob matches the name at any depth.
            assert_eq!(kept, keep.keeps(Path::new(name)), "{pat:?} on {p:?} and on its name {name:?}");
            assert_eq!(kept, keep.keeps(&Path::new("d/e").join(name)), "{pat:?} on {name:?} deeper");
            if !pat.contains("**") {
                let rooted = filter(&[&format!("/{pat}")]).expect("/pat compiles when pat does");
                let top = !p.contains('/') && kept;
                assert_eq!(rooted.keeps(Path::new(p)), top, "/{pat:?} keeps {p:?} only at the top");
            }
        }
    }
    // An escaped literal of a path matches exactly that path.
    for p in paths.iter().filter(|p| !p.is_empty() && p.trim() == p.as_str()) {
        let literal = escape(p);
        let exact = filter(&[&literal]).unwrap_or_else(|| panic!("the escaped literal {literal:?} is invalid"));
        assert!(exact.keeps(Path::new(p)), "{literal:?} keeps {p:?}");
        if !p.contains('/') {
            assert!(exact.keeps(&Path::new("d").join(p)), "{literal:?} keeps d/{p:?}");
        }
        for other in paths.iter().filter(|o| !o.is_empty()) {
            let same = other == p || (!p.contains('/') && other.ends_with(&format!("/{p}")));
            assert_eq!(exact.keeps(Path::new(other)), same, "{literal:?} on {other:?}");
        }
        assert!(!exact.keeps(Path::new(&format!("{p}x"))), "{literal:?} keeps {p:?}x");
        let not = filter(&[&format!("!{literal}")]).expect("!literal compiles");
        assert!(!not.keeps(Path::new(p)), "!{literal:?} keeps {p:?}");
    }
    // Two keep globs keep the union.
    // (An empty glob is ignored, so it takes no part in a union.)
    let keeps_some = !pat.is_empty() && !pat.starts_with('!');
    if let (Some(other), true) = (paths.first().map(|p| p.trim()).filter(|p| !p.is_empty()), keeps_some) {
        if let (false, Some(one), Some(both)) = (other.starts_with('!'), filter(&[other]), filter(&[pat, other])) {
            for p in paths.iter().filter(|p| !p.is_empty()) {
                let p = Path::new(p);
                assert_eq!(both.keeps(p), keep.keeps(p) || one.keeps(p), "[{pat:?}, {other:?}] on {p:?}");
            }
        }
    }
}

/// A path of components separated by `/`, each built from tokens (never empty, `.` or `..`).
fn path_of(bytes: &[u8]) -> String {
    let mut parts = Vec::new();
    for part in bytes.split(|&b| b == 3) {
        let part = tokens(part, PATH_TOKENS);
        if !part.is_empty() && part != "." && part != ".." {
            parts.push(part);
        }
    }
    parts.join("/")
}

/// The path as a glob that matches it literally.
fn escape(path: &str) -> String {
    let mut out = String::new();
    for c in path.chars() {
        if "*?[]{}\\!".contains(c) {
            out.push('\\');
        }
        out.push(c);
    }
    out
}

/// The filter of these globs, or `None` when they do not compile (checked to be an
/// invalid-glob error with a lowercase message).
fn filter(globs: &[&str]) -> Option<Filter> {
    let mut config = WalkConfig::default();
    config.globs(globs);
    match Filter::new(&config) {
        Ok(filter) => Some(filter),
        Err(e) => {
            assert_eq!(e.kind(), ErrorKind::InvalidGlob, "{globs:?}: {e}");
            let message = e.to_string();
            assert!(!message.starts_with(|c: char| c.is_uppercase()), "message not lowercase: {message}");
            assert!(!message.ends_with('.'), "message ends with a period: {message}");
            None
        }
    }
}

// ---------------------------------------------------------------------------------------
// edit

/// What edited texts are made of: line breaks of both kinds, blanks, straight and curly
/// quotes, sanitized tags and their real forms, a BOM, multi-byte letters.
const EDIT_TOKENS: &[&str] = &[
    "a",
    "b",
    "x",
    "é",
    "ß",
    "🎉",
    "\n",
    "\r\n",
    "\r",
    " ",
    "\t",
    "  \n",
    "'",
    "\"",
    "\u{2018}",
    "\u{2019}",
    "\u{201C}",
    "\u{201D}",
    "\u{201A}",
    "<fnr>",
    "<function_results>",
    "</fnr>",
    "</function_results>",
    "<s>",
    "<system>",
    "\n\nH:",
    "\n\nHuman:",
    "\n\nA:",
    "< EOT >",
    "<EOT>",
    "\u{feff}",
    "(",
    "-",
    "\u{2014}",
    "<",
    "fn ",
    "it",
    "’s",
    " \t\n",
    "\r\n\r\n",
    "ab",
    "<n>",
    "<name>",
];

/// The edit ladder, [`apply_edit`], against a reference that folds both sides with plain
/// string replaces.
///
/// Input: a flags byte (replace_all, strip trailing whitespace, how old_string is made),
/// two bytes that pick a piece of the text, then the text, old_string and new_string
/// separated by 0xFF bytes, each byte a token. old_string is the decoded one, or a piece
/// of the text as it is, with curly quotes straightened, with CRLF made LF, with trailing
/// blanks dropped, sanitized, or with tokens added. Checked: never panics; the rung,
/// the number of matches and the failure (AMBIGUOUS, NOT_FOUND, NOT_EMPTY, NO_CHANGE)
/// are the reference's; on success the spans are in order, on char boundaries, and
/// outside them the new text is byte for byte the old; each span folded on its rung is
/// old_string folded; curly quotes appear in the inserted text only where the span had
/// them; on the exact rung the result is exactly the documented replacement (trailing
/// blanks stripped, line breaks in the text's style, the final-newline state kept).
pub fn edit(data: &[u8]) {
    let mut input = Input(data);
    let flags = input.byte();
    let (a, b) = (input.byte(), input.byte());
    let mut parts = input.rest().split(|&b| b == 0xFF);
    let text = tokens(parts.next().unwrap_or_default(), EDIT_TOKENS);
    let decoded_old = tokens(parts.next().unwrap_or_default(), EDIT_TOKENS);
    let new = tokens(parts.next().unwrap_or_default(), EDIT_TOKENS);
    let piece = || {
        let at = |k: u8| {
            let mut i = usize::from(k) * text.len() / 255;
            while !text.is_char_boundary(i) {
                i -= 1;
            }
            i
        };
        let (i, j) = (at(a.min(b)), at(a.max(b)));
        text[i..j].to_string()
    };
    let old = match flags >> 2 & 7 {
        0 | 7 => decoded_old,
        1 => piece(),
        2 => quotes_ref(&piece()),
        3 => piece().replace("\r\n", "\n"),
        4 => trailing_ref(&piece()),
        5 => sanitize_ref(&piece()),
        _ => piece() + &decoded_old,
    };
    let spec =
        EditSpec { old: &old, new: &new, replace_all: flags & 1 != 0, strip_trailing_whitespace: flags & 2 != 0 };
    let result = apply_edit(&text, &spec);
    check_edit(&text, &spec, result);
}

fn check_edit(text: &str, spec: &EditSpec, result: Result<Edited, EditFailure>) {
    let (old, new) = (spec.old, spec.new);
    if old == new {
        assert_eq!(result.unwrap_err(), EditFailure::NoChange, "old == new");
        return;
    }
    if old.is_empty() {
        if !text.is_empty() {
            assert_eq!(result.unwrap_err(), EditFailure::NotEmpty);
            return;
        }
        let mut want = if spec.strip_trailing_whitespace { strip_ref(new, true) } else { new.to_string() };
        want = want.replace("\r\n", "\n");
        match result {
            Ok(e) if !want.is_empty() => {
                assert_eq!(e.text, want, "a new file's text");
                assert_eq!((e.rung, e.count, &e.spans), (Rung::Exact, 1, &vec![(0..0, 0..want.len())]));
            }
            Err(EditFailure::NoChange) if want.is_empty() => {}
            other => panic!("filling an empty text with {new:?}: {other:?}"),
        }
        return;
    }
    let found = ladder_ref(text, old);
    let e = match result {
        Ok(e) => e,
        Err(EditFailure::NotFound { candidates }) => {
            assert!(found.is_none(), "not found, but the reference finds {found:?}");
            assert!(candidates.len() <= 3);
            return;
        }
        Err(EditFailure::Ambiguous { count, rung }) => {
            let found = found.expect("ambiguous, but the reference finds nothing");
            assert!(!spec.replace_all, "ambiguous with replace_all");
            assert_eq!((rung, count), (found.rung, found.count), "ambiguous: rung and count");
            assert!(count > 1);
            return;
        }
        Err(EditFailure::NoChange) => {
            let found = found.expect("no change, but the reference finds nothing");
            assert!(spec.replace_all || found.count == 1, "no change on an ambiguous match");
            if found.rung == Rung::Exact {
                assert_eq!(exact_ref(text, spec), None, "no change, but the replacement changes the text");
            }
            return;
        }
        Err(EditFailure::NotEmpty) => panic!("not empty for a non-empty old_string"),
        Err(EditFailure::LineOutOfRange { .. }) => panic!("an edit is no insertion"),
    };
    let found = found.unwrap_or_else(|| panic!("edited on rung {:?}, but the reference finds nothing", e.rung));
    assert_eq!((e.rung, e.count), (found.rung, found.count), "rung and count");
    assert!(spec.replace_all || e.count == 1, "more than one replacement without replace_all");
    assert!(!e.spans.is_empty() && e.spans.len() <= e.count, "{} spans for {} replacements", e.spans.len(), e.count);
    // The final-newline rule may merge the last replacements, and only it.
    if e.spans.len() < e.count {
        assert!(!text.ends_with('\n'), "spans merged, but the text ends with a line break");
    }
    let (mut copied_old, mut copied_new) = (0, 0);
    for (o, n) in &e.spans {
        assert!(o.start >= copied_old && o.start <= o.end && o.end <= text.len(), "old span {o:?} of {:?}", e.spans);
        assert!(n.start >= copied_new && n.start <= n.end && n.end <= e.text.len(), "new span {n:?}");
        assert!(text.is_char_boundary(o.start) && text.is_char_boundary(o.end), "old span {o:?} splits a char");
        assert!(e.text.is_char_boundary(n.start) && e.text.is_char_boundary(n.end), "new span {n:?} splits a char");
        assert_eq!(text[copied_old..o.start], e.text[copied_new..n.start], "text between spans changed");
        copied_old = o.end;
        copied_new = n.end;
    }
    assert_eq!(text[copied_old..], e.text[copied_new..], "text after the last span changed");

    let new = if found.desanitized { desanitize_ref(new).unwrap_or_else(|| new.to_string()) } else { new.to_string() };
    for (k, (o, n)) in e.spans.iter().enumerate() {
        // The last span may be widened by the final-newline rule.
        if k + 1 == e.spans.len() && (o.end == text.len() || n.end == e.text.len()) {
            continue;
        }
        let span = &text[o.clone()];
        if found.rung == Rung::Exact {
            // A match that starts at the \n of a \r\n takes the \r along.
            assert!(span == found.needle || span.strip_prefix('\r') == Some(&found.needle), "span {o:?} = {span:?}");
        } else {
            assert_eq!(fold_ref(found.rung, span), found.needle, "span {o:?} = {span:?} folded on its rung");
        }
        let inserted = &e.text[n.clone()];
        let curly = |s: &str, range: std::ops::RangeInclusive<char>| s.chars().filter(|c| range.contains(c)).count();
        let straight = |s: &str, q: char| s.matches(q).count();
        for (range, q) in [('\u{201C}'..='\u{201F}', '"'), ('\u{2018}'..='\u{201B}', '\'')] {
            let curled = found.rung_folds_quotes() && curly(span, range.clone()) > 0;
            let want = curly(&new, range.clone()) + if curled { straight(&new, q) } else { 0 };
            assert_eq!(curly(inserted, range), want, "curly {q} quotes in {inserted:?} for {span:?}");
        }
    }
    if found.rung == Rung::Exact {
        assert_eq!(exact_ref(text, spec).as_deref(), Some(e.text.as_str()), "the exact replacement");
    }
}

/// Where the reference ladder found old_string.
#[derive(Debug)]
struct FoundRef {
    rung: Rung,
    count: usize,
    /// old_string folded as the rung compares it.
    needle: String,
    desanitized: bool,
}

impl FoundRef {
    fn rung_folds_quotes(&self) -> bool {
        matches!(self.rung, Rung::Quotes | Rung::Desanitized | Rung::TrailingWhitespace)
    }
}

/// SPEC §3.4's ladder with plain string replaces: the first rung on which the folded
/// old_string occurs in the folded text.
fn ladder_ref(text: &str, old: &str) -> Option<FoundRef> {
    let hit = |rung, hay: &str, needle: &str, desanitized| {
        (!needle.is_empty() && hay.contains(needle)).then(|| FoundRef {
            rung,
            count: hay.matches(needle).count(),
            needle: needle.to_string(),
            desanitized,
        })
    };
    if let Some(f) = hit(Rung::Exact, text, old, false) {
        return Some(f);
    }
    let t2 = text.replace("\r\n", "\n");
    let n2 = old.replace("\r\n", "\n");
    let n2 = n2.strip_prefix('\u{feff}').unwrap_or(&n2).to_string();
    if let Some(f) = hit(Rung::LineEndings, &t2, &n2, false) {
        return Some(f);
    }
    let (t3, n3) = (quotes_ref(&t2), quotes_ref(&n2));
    if let Some(f) = hit(Rung::Quotes, &t3, &n3, false) {
        return Some(f);
    }
    let real = desanitize_ref(&n3);
    if let Some(f) = real.as_deref().and_then(|real| hit(Rung::Desanitized, &t3, real, true)) {
        return Some(f);
    }
    let t5 = trailing_ref(&t3);
    if let Some(f) = hit(Rung::TrailingWhitespace, &t5, &trailing_ref(&n3), false) {
        return Some(f);
    }
    hit(Rung::TrailingWhitespace, &t5, &trailing_ref(&real?), true)
}

/// A piece of text folded as a rung folds it.
fn fold_ref(rung: Rung, s: &str) -> String {
    match rung {
        Rung::Exact => s.to_string(),
        Rung::LineEndings => s.replace("\r\n", "\n"),
        Rung::Quotes | Rung::Desanitized => quotes_ref(&s.replace("\r\n", "\n")),
        Rung::TrailingWhitespace => trailing_ref(&quotes_ref(&s.replace("\r\n", "\n"))),
    }
}

fn quotes_ref(s: &str) -> String {
    s.chars()
        .map(|c| match c {
            '\u{2018}'..='\u{201B}' => '\'',
            '\u{201C}'..='\u{201F}' => '"',
            c => c,
        })
        .collect()
}

fn trailing_ref(s: &str) -> String {
    s.split('\n').map(|line| line.trim_end_matches([' ', '\t'])).collect::<Vec<_>>().join("\n")
}

fn desanitize_ref(s: &str) -> Option<String> {
    let mut out = String::new();
    let mut rest = s;
    let mut any = false;
    while let Some(c) = rest.chars().next() {
        match SANITIZED.iter().find(|(from, _)| rest.starts_with(from)) {
            Some((from, to)) => {
                out.push_str(to);
                rest = &rest[from.len()..];
                any = true;
            }
            None => {
                out.push(c);
                rest = &rest[c.len_utf8()..];
            }
        }
    }
    any.then_some(out)
}

/// The real forms replaced by their sanitized ones (a piece of a file as a model sees it).
fn sanitize_ref(s: &str) -> String {
    SANITIZED.iter().fold(s.to_string(), |s, (from, to)| s.replace(to, from))
}

/// Strips blanks before each line break, and at the end if `last`.
fn strip_ref(s: &str, last: bool) -> String {
    let mut lines: Vec<String> = s.split('\n').map(str::to_string).collect();
    let final_line = lines.pop().expect("split gives one piece at least");
    for line in &mut lines {
        *line = match line.strip_suffix('\r') {
            Some(body) => format!("{}\r", body.trim_end_matches([' ', '\t'])),
            None => line.trim_end_matches([' ', '\t']).to_string(),
        };
    }
    lines.push(if last { final_line.trim_end_matches([' ', '\t']).to_string() } else { final_line });
    lines.join("\n")
}

fn crlf_dominant_ref(text: &str) -> bool {
    let crlf = text.matches("\r\n").count();
    crlf > text.matches('\n').count() - crlf
}

/// The documented result of an edit on the exact rung, or `None` when it changes nothing.
fn exact_ref(text: &str, spec: &EditSpec) -> Option<String> {
    let crlf = spec.new.contains('\n') && crlf_dominant_ref(text);
    let mut out = String::new();
    let mut copied = 0;
    let mut at = 0;
    while let Some(k) = text[at..].find(spec.old) {
        let (mut start, end) = (at + k, at + k + spec.old.len());
        at = end;
        if start > copied && text.as_bytes()[start] == b'\n' && text.as_bytes()[start - 1] == b'\r' {
            start -= 1;
        }
        out.push_str(&text[copied..start]);
        let line_end = matches!(text.as_bytes().get(end), None | Some(b'\n' | b'\r'));
        let mut shaped =
            if spec.strip_trailing_whitespace { strip_ref(spec.new, line_end) } else { spec.new.to_string() };
        shaped = shaped.replace("\r\n", "\n");
        if crlf {
            shaped = shaped.replace('\n', "\r\n");
        }
        out.push_str(&shaped);
        copied = end;
        if !spec.replace_all {
            break;
        }
    }
    out.push_str(&text[copied..]);
    if copied == text.len() {
        if text.ends_with('\n') && !out.is_empty() && !out.ends_with('\n') {
            out.push_str(if crlf_dominant_ref(text) { "\r\n" } else { "\n" });
        } else if !text.ends_with('\n') && out.ends_with('\n') {
            out.truncate(out.len() - if out.ends_with("\r\n") { 2 } else { 1 });
        }
    }
    (out != text).then_some(out)
}

// ---------------------------------------------------------------------------------------
// text

/// [`crate::decode`] and [`crate::encode`]: bytes that decode encode back to themselves,
/// and text encoded decodes back to itself, failing exactly where the bytes look like
/// something else.
///
/// Input: a selector byte (encoding; whether the rest is raw UTF-8 or tokens), then the
/// rest. Checked: `encode(decode(b)) == b` for the whole input whenever it decodes;
/// `decode(encode(t, e)) == (t, e)` (a UTF-8 text that starts with U+FEFF comes back as
/// UTF-8 with a BOM), and a refusal, always [`ErrorKind::Encoding`], only when the encoded
/// bytes have a NUL in the first 8 KiB, start like a PDF or an image, or read as UTF-32.
pub fn text(data: &[u8]) {
    let whole = &data[..data.len().min(MAX_INPUT)];
    match crate::write::decode(whole) {
        Ok((t, e)) => assert_eq!(crate::write::encode(&t, e), whole, "encode(decode(b)) == b ({e:?})"),
        Err(err) => assert_eq!(err.kind(), ErrorKind::Encoding, "{err}"),
    }
    let mut input = Input(data);
    let sel = input.byte();
    let rest = input.rest();
    let t = if sel & 4 != 0 { tokens(rest, EDIT_TOKENS) } else { String::from_utf8_lossy(rest).into_owned() };
    let e = match sel & 3 {
        0 => TextEncoding::Utf8,
        1 => TextEncoding::Utf8Bom,
        2 => TextEncoding::Utf16Le,
        _ => TextEncoding::Utf16Be,
    };
    let bytes = crate::write::encode(&t, e);
    let refused = match e {
        TextEncoding::Utf8 | TextEncoding::Utf8Bom => {
            let head = &bytes[..bytes.len().min(crate::sniff::SNIFF_BYTES)];
            let start = head.iter().position(|b| !b.is_ascii_whitespace()).unwrap_or(head.len());
            head.contains(&0)
                || head[start..].starts_with(b"%PDF-")
                || head.starts_with(b"GIF87a")
                || head.starts_with(b"GIF89a")
                || (head.len() >= 12 && &head[..4] == b"RIFF" && &head[8..12] == b"WEBP")
        }
        TextEncoding::Utf16Le => t.starts_with('\0'),
        TextEncoding::Utf16Be => false,
    };
    match crate::write::decode(&bytes) {
        Ok((t2, e2)) => {
            assert!(!refused, "{e:?} {t:?} decodes, but looks like something else");
            match t.strip_prefix('\u{feff}') {
                Some(rest) if e == TextEncoding::Utf8 => assert_eq!((t2.as_str(), e2), (rest, TextEncoding::Utf8Bom)),
                _ => assert_eq!((t2.as_str(), e2), (t.as_str(), e), "decode(encode(t, e))"),
            }
        }
        Err(err) => {
            assert_eq!(err.kind(), ErrorKind::Encoding, "{err}");
            assert!(refused, "{e:?} {t:?} refused: {err}");
        }
    }
}

// ---------------------------------------------------------------------------------------
// cmap

/// The PDF lexer, hex strings, CMaps and code spaces on arbitrary bytes.
///
/// Checked: the lexer ends, taking at least one byte a token; a hex string decodes to
/// half its digits (rounded up) and uses the input up to its `>`; a parsed CMap stays
/// within its caps (2^20 mappings, or the limit it is given; 64 code space ranges; 32
/// UTF-16 units a destination; sorted CID ranges), and every code and range it holds is
/// found again by `cid_of`; every code
/// space splits any bytes into codes of 1–4 bytes that cover them exactly, and stops
/// when told to.
pub fn cmap(data: &[u8]) {
    use crate::pdf::cmap::{CMap, CodeSpace};
    let data = &data[..data.len().min(MAX_INPUT)];
    let mut lexer = crate::pdf::lexer::Lexer::new(data);
    let mut count = 0;
    while lexer.next_token().is_some() {
        count += 1;
        assert!(count <= data.len(), "more tokens than bytes");
    }
    let (bytes, used) = crate::pdf::lexer::decode_hex(data);
    let end = memchr::memchr(b'>', data);
    assert_eq!(used, end.map_or(data.len(), |e| e + 1), "hex string length");
    let digits = data[..end.unwrap_or(data.len())].iter().filter(|b| b.is_ascii_hexdigit()).count();
    assert_eq!(bytes.len(), digits.div_ceil(2), "bytes of {digits} hex digits");

    let map = CMap::parse_within(data, usize::MAX);
    assert!(map.entries <= 1 << 20, "{} mappings in one CMap", map.entries);
    assert!(map.unicode.len() + map.cid.len() <= map.entries, "more mappings than counted");
    let limit = usize::from(data.first().copied().unwrap_or(0)) * 16;
    let within = CMap::parse_within(data, limit);
    assert!(within.entries <= limit && within.unicode.len() + within.cid.len() <= limit, "over a limit of {limit}");
    assert!(map.space.len() <= 64, "{} code space ranges", map.space.len());
    assert!(map.space.iter().all(|&(len, _, _)| (1..=4).contains(&len)), "{:?}", map.space);
    assert!(map.cid_ranges.len() <= 1 << 16 && map.cid_ranges.is_sorted(), "cid ranges sorted and capped");
    assert!(map.unicode.len() <= 2 << 20, "{} unicode entries", map.unicode.len());
    for text in map.unicode.values() {
        assert!(text.encode_utf16().count() <= 32, "a destination of {} units", text.encode_utf16().count());
    }
    for &(_, lo, hi, _) in &map.unicode_ranges {
        let text = map.text_of(hi).expect("the last code of a range has text");
        assert!(lo <= hi && text.encode_utf16().count() <= 32, "range {lo:#x}-{hi:#x}: {text:?}");
    }
    for (&(len, code), &cid) in &map.cid {
        assert_eq!(map.cid_of(len, code), Some(cid), "cid of {len}-byte code {code:#x}");
    }
    for &(len, lo, hi, _) in &map.cid_ranges {
        assert!(lo <= hi && map.cid_of(len, lo).is_some() && map.cid_of(len, hi).is_some(), "range {lo:#x}-{hi:#x}");
    }
    let spaces = [
        CodeSpace::One,
        CodeSpace::Two,
        CodeSpace::Ranges(map.space.clone()),
        CodeSpace::Legacy(encoding_rs::SHIFT_JIS),
        CodeSpace::Legacy(encoding_rs::GBK),
    ];
    for space in &spaces {
        let (mut covered, mut codes) = (0usize, 0usize);
        space.each(data, |code, len| {
            assert!((1..=4).contains(&len) && u64::from(code) < 1u64 << (8 * u32::from(len)), "code {code:#x}/{len}");
            covered += usize::from(len);
            codes += 1;
            true
        });
        assert_eq!(covered, data.len(), "{space:?} covers the bytes");
        let stop = codes / 3;
        let mut calls = 0;
        space.each(data, |_, _| {
            calls += 1;
            calls <= stop
        });
        assert_eq!(calls, codes.min(stop + 1), "{space:?} stops when told");
    }
}

// ---------------------------------------------------------------------------------------
// filters

/// The stream filters on arbitrary bytes and on bytes encoded by reference encoders.
///
/// Input: a selector byte (compression level, predictor and its parameters, the early
/// change of LZW), then the bytes. Checked: decoding arbitrary bytes never panics and never
/// gives more than the limit (FlateDecode, LZW, RunLength), or more than four bytes per
/// input byte (ASCII85), or one byte less per row than the input (PNG predictors); and
/// zlib, raw deflate, LZW (both early-change settings), RunLength, ASCII85, ASCIIHex and
/// the PNG and TIFF predictors each decode what a reference encoder made back to the
/// original bytes, while FlateDecode refuses it when the limit is one byte short.
pub fn filters(data: &[u8]) {
    use crate::pdf::filters::{ascii85, ascii_hex, inflate, lzw, predict, run_length};
    use lopdf::{Dictionary, Object};
    let mut input = Input(data);
    let sel = input.byte();
    let bytes = input.rest();
    const LIMIT: u64 = 1 << 16;
    if let Ok(out) = inflate(bytes, LIMIT) {
        assert!(out.len() as u64 <= LIMIT, "inflate gave {} bytes", out.len());
    }
    let early = |n: i64| {
        let mut d = Dictionary::new();
        d.set("EarlyChange", Object::Integer(n));
        d
    };
    for param in [None, Some(early(0))] {
        if let Ok(out) = lzw(bytes, param.as_ref(), LIMIT) {
            assert!(out.len() as u64 <= LIMIT, "lzw gave {} bytes", out.len());
        }
    }
    if let Ok(out) = run_length(bytes, LIMIT) {
        assert!(out.len() as u64 <= LIMIT, "run length gave {} bytes", out.len());
    }
    if let Ok(out) = ascii85(bytes, LIMIT) {
        assert!(out.len() <= 4 * bytes.len() && out.len() as u64 <= LIMIT, "ascii85 gave {} bytes", out.len());
    }
    let mut params = Dictionary::new();
    let predictor = [2, 10, 11, 12, 13, 14, 15][usize::from(sel % 7)];
    let (colors, columns) = (1 + i64::from(sel >> 3 & 3), 1 + i64::from(sel >> 5));
    params.set("Predictor", Object::Integer(predictor));
    params.set("Colors", Object::Integer(colors));
    params.set("Columns", Object::Integer(columns));
    let row = (colors * columns) as usize;
    let out = predict(bytes.to_vec(), Some(&params)).expect("predictors do not fail");
    let want = if predictor == 2 { bytes.len() } else { bytes.len() - bytes.len().div_ceil(row + 1) };
    assert_eq!(out.len(), want, "predictor {predictor}, row {row}: bytes out of {}", bytes.len());

    // Round trips through reference encoders.
    let plain = &bytes[..bytes.len().min(4096)];
    let level = flate2::Compression::new(u32::from(sel % 10));
    let zlib = {
        let mut e = flate2::write::ZlibEncoder::new(Vec::new(), level);
        std::io::Write::write_all(&mut e, plain).expect("writing to memory");
        e.finish().expect("writing to memory")
    };
    assert_eq!(inflate(&zlib, plain.len() as u64).ok().as_deref(), Some(plain), "zlib round trip");
    if !plain.is_empty() {
        assert!(inflate(&zlib, plain.len() as u64 - 1).is_err(), "zlib past the limit");
    }
    let deflate = {
        let mut e = flate2::write::DeflateEncoder::new(Vec::new(), level);
        std::io::Write::write_all(&mut e, plain).expect("writing to memory");
        e.finish().expect("writing to memory")
    };
    assert_eq!(inflate(&deflate, LIMIT).ok().as_deref(), Some(plain), "raw deflate round trip");
    let lzw_early =
        weezl::encode::Encoder::with_tiff_size_switch(weezl::BitOrder::Msb, 8).encode(plain).expect("lzw of bytes");
    assert_eq!(lzw(&lzw_early, None, LIMIT).ok().as_deref(), Some(plain), "lzw round trip");
    let lzw_late = weezl::encode::Encoder::new(weezl::BitOrder::Msb, 8).encode(plain).expect("lzw of bytes");
    assert_eq!(lzw(&lzw_late, Some(&early(0)), LIMIT).ok().as_deref(), Some(plain), "lzw round trip, late change");
    assert_eq!(run_length(&run_length_ref(plain), LIMIT).ok().as_deref(), Some(plain), "run length round trip");
    assert_eq!(ascii85(&ascii85_ref(plain), LIMIT).ok().as_deref(), Some(plain), "ascii85 round trip");
    let hex: String = plain.iter().map(|b| format!("{b:02X}")).collect::<String>() + ">";
    assert_eq!(ascii_hex(hex.as_bytes()), plain, "ascii hex round trip");
    let mut params8 = params.clone();
    params8.set("BitsPerComponent", Object::Integer(8));
    let encoded = predict_ref(plain, predictor, (colors as usize, row), sel);
    assert_eq!(predict(encoded, Some(&params8)).ok().as_deref(), Some(plain), "predictor {predictor} round trip");
}

/// RunLength encoding: literal runs of up to 128 bytes, repeats of 2–128.
fn run_length_ref(data: &[u8]) -> Vec<u8> {
    let mut out = Vec::new();
    let mut i = 0;
    while i < data.len() {
        let same = data[i..].iter().take(128).take_while(|&&b| b == data[i]).count();
        if same >= 2 {
            out.push((257 - same) as u8);
            out.push(data[i]);
            i += same;
        } else {
            let n = data[i..].len().min(128);
            out.push((n - 1) as u8);
            out.extend_from_slice(&data[i..i + n]);
            i += n;
        }
    }
    out.push(128);
    out
}

/// ASCII85 with its `<~ ~>` brackets and `z` for four zero bytes.
fn ascii85_ref(data: &[u8]) -> Vec<u8> {
    let mut out = b"<~".to_vec();
    for chunk in data.chunks(4) {
        let mut group = [0u8; 4];
        group[..chunk.len()].copy_from_slice(chunk);
        let mut v = u32::from_be_bytes(group);
        if chunk.len() == 4 && v == 0 {
            out.push(b'z');
            continue;
        }
        let mut digits = [0u8; 5];
        for d in digits.iter_mut().rev() {
            *d = b'!' + (v % 85) as u8;
            v /= 85;
        }
        out.extend_from_slice(&digits[..chunk.len() + 1]);
    }
    out.extend_from_slice(b"~>");
    out
}

/// Encodes rows with a predictor: TIFF 2 (differences), or PNG with each row's filter
/// type picked from `seed` (predictor 15 lets it vary by row).
fn predict_ref(data: &[u8], predictor: i64, (bpp, row): (usize, usize), seed: u8) -> Vec<u8> {
    if predictor == 2 {
        let mut out = data.to_vec();
        for line in out.chunks_mut(row) {
            for i in (bpp..line.len()).rev() {
                line[i] = line[i].wrapping_sub(line[i - bpp]);
            }
        }
        return out;
    }
    let mut out = Vec::new();
    let mut prev = vec![0u8; row];
    for (k, line) in data.chunks(row).enumerate() {
        let kind = (usize::from(seed) + k) % 5;
        out.push(kind as u8);
        for i in 0..line.len() {
            let left = if i >= bpp { line[i - bpp] } else { 0 };
            let (up, up_left) = (prev[i], if i >= bpp { prev[i - bpp] } else { 0 });
            let guess = match kind {
                1 => left,
                2 => up,
                3 => ((u16::from(left) + u16::from(up)) / 2) as u8,
                4 => {
                    let p = i16::from(left) + i16::from(up) - i16::from(up_left);
                    let (pa, pb, pc) =
                        ((p - i16::from(left)).abs(), (p - i16::from(up)).abs(), (p - i16::from(up_left)).abs());
                    if pa <= pb && pa <= pc {
                        left
                    } else if pb <= pc {
                        up
                    } else {
                        up_left
                    }
                }
                _ => 0,
            };
            out.push(line[i].wrapping_sub(guess));
        }
        prev = line.to_vec();
        prev.resize(row, 0);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The fuzz folder at the repository root.
    fn fuzz_dir() -> std::path::PathBuf {
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../../fuzz")
    }

    /// The short fuzz passes run one at a time, on one core, so that they leave the
    /// other tests (some of them timed) the rest of the machine.
    static ONE_AT_A_TIME: std::sync::Mutex<()> = std::sync::Mutex::new(());

    /// Runs every file of `fuzz/corpus/<target>` and `fuzz/regressions/<target>` through
    /// the target; the corpus must not be empty.
    fn replay(target: &str, check: fn(&[u8])) {
        let _one = ONE_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner());
        let mut seen = 0;
        for kind in ["corpus", "regressions"] {
            let dir = fuzz_dir().join(kind).join(target);
            let Ok(entries) = std::fs::read_dir(&dir) else {
                assert_eq!(kind, "regressions", "no folder {}", dir.display());
                continue;
            };
            for entry in entries {
                let path = entry.unwrap().path();
                if path.file_name().is_some_and(|n| n.to_string_lossy().starts_with('.')) {
                    continue;
                }
                let data = std::fs::read(&path).unwrap();
                let run = std::panic::catch_unwind(|| check(&data));
                assert!(run.is_ok(), "{target}: {} fails", path.display());
                seen += 1;
            }
        }
        assert!(seen > 0, "no corpus for {target}");
    }

    /// Runs `n` inputs made by `make` from a seeded generator through the target.
    fn random(n: usize, seed: u64, check: fn(&[u8]), make: impl Fn(&mut Rng) -> Vec<u8>) {
        let _one = ONE_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner());
        let mut rng = Rng(seed);
        for i in 0..n {
            let data = make(&mut rng);
            let run = std::panic::catch_unwind(|| check(&data));
            assert!(run.is_ok(), "input {i} of seed {seed} fails: {data:?}");
        }
    }

    /// Bytes drawn mostly from `alphabet` (pieces of any length), sometimes any byte.
    fn soup(rng: &mut Rng, len: usize, alphabet: &[&[u8]]) -> Vec<u8> {
        let mut out = Vec::with_capacity(len);
        while out.len() < len {
            if rng.below(10) == 0 {
                out.push(rng.next() as u8);
            } else {
                out.extend_from_slice(alphabet[rng.below(alphabet.len())]);
            }
        }
        out
    }

    /// A header of `n` random bytes, then pieces joined by `sep`.
    fn header_and_parts(rng: &mut Rng, n: usize, parts: usize, sep: u8, len: usize) -> Vec<u8> {
        let mut out: Vec<u8> = (0..n).map(|_| rng.next() as u8).collect();
        for k in 0..parts {
            if k > 0 {
                out.push(sep);
            }
            out.extend((0..rng.below(len)).map(|_| rng.next() as u8 & 0xFE));
        }
        out
    }

    const LINE_BYTES: &[&[u8]] = &[
        b"a",
        b"bc",
        b"\n",
        b"\r\n",
        b"\r",
        b" ",
        b"\xC3\xA9",
        b"\xE2\x80\x9C",
        b"\xF0\x9F\x8E\x89",
        b"\xFF",
        b"\x80",
        b"\xE2\x80",
        b"\0",
        b"\n\n",
        b"xxxxxxxxxxxxxxxxxxxx",
    ];

    #[test]
    fn page_corpus_and_regressions() {
        replay("page", page);
    }

    #[test]
    fn page_random() {
        random(2500, 1, page, |rng| {
            let mut data: Vec<u8> = (0..6).map(|_| rng.next() as u8).collect();
            let most = if rng.below(10) == 0 { 3000 } else { 120 };
            let len = rng.below(most);
            data.extend(soup(rng, len, LINE_BYTES));
            data
        });
    }

    #[test]
    fn pdf_corpus_and_regressions() {
        replay("pdf", pdf);
    }

    /// Corpus PDFs with a few bytes changed, inserted or removed.
    #[test]
    fn pdf_random() {
        let dir = fuzz_dir().join("corpus/pdf");
        let seeds: Vec<Vec<u8>> =
            std::fs::read_dir(dir).unwrap().map(|e| std::fs::read(e.unwrap().path()).unwrap()).collect();
        random(600, 2, pdf, |rng| {
            let mut data = seeds[rng.below(seeds.len())].clone();
            for _ in 0..1 + rng.below(4) {
                let at = rng.below(data.len() + 1);
                match rng.below(3) {
                    0 if at < data.len() => data[at] = rng.next() as u8,
                    1 => data.insert(at, b"0 1()<>[]/R\nobj"[rng.below(15)]),
                    _ if at < data.len() => {
                        data.remove(at);
                    }
                    _ => {}
                }
            }
            data
        });
    }

    #[test]
    fn glob_corpus_and_regressions() {
        replay("glob", glob);
    }

    #[test]
    fn glob_random() {
        random(1500, 3, glob, |rng| {
            let mut data = header_and_parts(rng, 1, 4, 0xFF, 12);
            // Path bytes: a few component separators (3) among them.
            for b in data.iter_mut().skip(1) {
                if rng.below(6) == 0 && *b != 0xFF {
                    *b = 3;
                }
            }
            data
        });
    }

    #[test]
    fn edit_corpus_and_regressions() {
        replay("edit", edit);
    }

    #[test]
    fn edit_random() {
        random(4000, 4, edit, |rng| {
            let most = if rng.below(8) == 0 { 200 } else { 24 };
            header_and_parts(rng, 3, 3, 0xFF, most)
        });
    }

    #[test]
    fn text_corpus_and_regressions() {
        replay("text", text);
    }

    #[test]
    fn text_random() {
        random(3000, 5, text, |rng| {
            let mut data = vec![rng.next() as u8];
            let len = rng.below(64);
            data.extend(soup(
                rng,
                len,
                &[b"a", b"\xEF\xBB\xBF", b"\xFF\xFE", b"\xFE\xFF", b"\0", b" ", b"%PDF-", b"GIF89a"],
            ));
            data
        });
    }

    #[test]
    fn cmap_corpus_and_regressions() {
        replay("cmap", cmap);
    }

    #[test]
    fn cmap_random() {
        let words: &[&[u8]] = &[
            b" ",
            b"\n",
            b"<00>",
            b"<0000>",
            b"<FFFF>",
            b"<01> <7F>",
            b"[",
            b"]",
            b"(a)",
            b"/Name",
            b"1",
            b"12.5",
            b"begincodespacerange",
            b"endcodespacerange",
            b"beginbfchar",
            b"endbfchar",
            b"beginbfrange",
            b"endbfrange",
            b"begincidrange",
            b"endcidrange",
            b"begincidchar",
            b"endcidchar",
            b"usecmap",
            b"<<",
            b">>",
            b"%c\n",
            b"<D800>",
            b"<0041>",
            b"\\",
            b"(",
        ];
        random(3000, 6, cmap, |rng| {
            let len = rng.below(300);
            soup(rng, len, words)
        });
    }

    #[test]
    fn filters_corpus_and_regressions() {
        replay("filters", filters);
    }

    #[test]
    fn filters_random() {
        random(1500, 7, filters, |rng| {
            let most = if rng.below(4) == 0 { 2000 } else { 64 };
            let len = rng.below(most);
            let mut data = vec![rng.next() as u8];
            data.extend(soup(rng, len, &[b"\0", b"\xFF", b"a", b"aaaa", b"\x78\x9c", b"~>", b"z", b"<~", b"\x80"]));
            data
        });
    }

    /// The reference helpers themselves, on cases worked out by hand.
    #[test]
    fn references_agree_with_hand_worked_cases() {
        assert_eq!(trailing_ref("a \t\nb  "), "a\nb");
        assert_eq!(strip_ref("a  \r\nb  ", false), "a\r\nb  ");
        assert_eq!(strip_ref("a  \r\nb  ", true), "a\r\nb");
        assert_eq!(
            desanitize_ref("<fnr>x</fnr>\n\nH: y").as_deref(),
            Some("<function_results>x</function_results>\n\nHuman: y")
        );
        assert_eq!(desanitize_ref("plain"), None);
        assert_eq!(sanitize_ref("<name>"), "<n>");
        assert_eq!(ascii85_ref(b"\0\0\0\0a"), b"<~z@/~>");
        assert_eq!(run_length_ref(b"aaab"), vec![254, b'a', 0, b'b', 128]);
        let r = Reference::of(b"a\r\nb\n\nc", TextEncoding::Utf8);
        assert_eq!(r.lines, vec![b"a".to_vec(), b"b".to_vec(), b"".to_vec(), b"c".to_vec()]);
        assert_eq!(Reference::of(b"\xFF\xFEa\0\n\0", TextEncoding::Utf16Le).lines, vec![b"a".to_vec()]);
        // A lone lead surrogate and an odd last byte are one U+FFFD, as encoding_rs decodes them.
        let odd = Reference::of(b"\xFE\xFF\0a\xDB\x80\x6A", TextEncoding::Utf16Be);
        assert_eq!(odd.lines, vec!["a\u{FFFD}".as_bytes().to_vec()]);
        let odd = Reference::of(b"\xFE\xFF\0a\x6A", TextEncoding::Utf16Be);
        assert_eq!(odd.lines, vec!["a\u{FFFD}".as_bytes().to_vec()]);
        let spec = EditSpec { old: "b", new: "c  ", replace_all: false, strip_trailing_whitespace: true };
        assert_eq!(exact_ref("a\r\nb\r\n", &spec).as_deref(), Some("a\r\nc\r\n"));
    }
}
