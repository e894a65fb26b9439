//! Streaming pagination: one pass over a file that counts every line, hashes every byte
//! and keeps only the requested page.

use std::fmt::Write as _;
use std::io::Read;

use crate::cancel::Cancel;
use crate::error::{Error, Result};
use crate::hash::ContentHasher;
use crate::sniff::TextEncoding;

const CHUNK: usize = 256 * 1024;

/// How page lines are numbered.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum LineStyle {
    /// `cat -n`: the number right-aligned in six columns, a tab, the line.
    #[default]
    CatN,
    /// `N: text`, as Revka shows it.
    Colon,
    /// The number without padding, a tab, the line: Claude Code's Read today.
    Compact,
    /// The line alone, as gemini-cli's read_file shows it.
    Plain,
}

/// What page of a text file to produce. Built with setters; see each for its default.
#[derive(Clone, Debug)]
pub struct PageConfig {
    offset: u64,
    limit: u64,
    max_line_chars: usize,
    max_bytes: usize,
    style: LineStyle,
}

impl Default for PageConfig {
    fn default() -> PageConfig {
        PageConfig { offset: 1, limit: 2000, max_line_chars: 2000, max_bytes: 8 * 1024 * 1024, style: LineStyle::CatN }
    }
}

impl PageConfig {
    /// The 1-based first line of the page; 0 is taken as 1. By default, this is 1.
    pub fn offset(&mut self, offset: u64) -> &mut Self {
        self.offset = offset.max(1);
        self
    }

    /// The most lines in the page; at least 1. By default, this is 2000.
    pub fn limit(&mut self, limit: u64) -> &mut Self {
        self.limit = limit.max(1);
        self
    }

    /// Lines longer than this many characters are cut with a marker. By default, this is 2000.
    pub fn max_line_chars(&mut self, chars: usize) -> &mut Self {
        self.max_line_chars = chars.max(1);
        self
    }

    /// The page stops growing past this many bytes of output and is marked
    /// [`Page::overflow`]. By default, this is 8 MiB.
    pub fn max_bytes(&mut self, bytes: usize) -> &mut Self {
        self.max_bytes = bytes;
        self
    }

    /// The first line of the page (1-based).
    pub fn first_line(&self) -> u64 {
        self.offset
    }

    /// How lines are numbered. By default, this is [`LineStyle::CatN`].
    pub fn style(&mut self, style: LineStyle) -> &mut Self {
        self.style = style;
        self
    }
}

/// One page of a text file, with the facts about the whole file gathered on the way.
#[derive(Clone, Debug, Default)]
pub struct Page {
    /// The numbered lines, each ending in `\n`.
    pub text: String,
    /// The first line in the page (1-based); 0 when the page is empty.
    pub start_line: u64,
    /// The last line in the page; 0 when the page is empty.
    pub end_line: u64,
    /// Lines in the whole file (a last line without `\n` counts).
    pub total_lines: u64,
    /// Lines of the page cut at the character limit.
    pub cut_lines: u32,
    /// Whether invalid UTF-8 was replaced with U+FFFD in the page.
    pub lossy: bool,
    /// Whether the page stopped early at [`PageConfig::max_bytes`].
    pub overflow: bool,
    /// xxh3-128 of the file's raw bytes.
    pub hash: u128,
    /// Bytes in the file.
    pub size: u64,
}

/// Reads `reader` to its end once and returns the configured page.
///
/// Memory is proportional to the page (plus one fixed chunk), not to the file.
pub fn page<R: Read>(reader: R, encoding: TextEncoding, config: &PageConfig, cancel: &Cancel) -> Result<Page> {
    run(reader, encoding, config, cancel, None)
}

/// Where to resume a pass mid-file.
pub(crate) struct Resume {
    /// The number of the line that starts where the reader is.
    pub(crate) line: u64,
    /// Lines in the whole file, known from an earlier pass.
    pub(crate) total_lines: u64,
}

/// The one streaming pass behind [`page`]. With `resume` (UTF-8 only), the reader is
/// positioned at the start of a known line, and the pass stops once the page is complete;
/// the caller then knows the hash and fills it in.
pub(crate) fn run<R: Read>(
    mut reader: R,
    encoding: TextEncoding,
    config: &PageConfig,
    cancel: &Cancel,
    resume: Option<Resume>,
) -> Result<Page> {
    let mut hasher = ContentHasher::new();
    let mut pager = Pager::new(config);
    if let Some(r) = &resume {
        pager.line = r.line;
    }
    // Start small so that small files cost little, and grow to CHUNK for big ones.
    let mut buf = vec![0u8; 16 * 1024];
    let mut size = 0u64;
    let mut utf16 = match encoding {
        TextEncoding::Utf16Le => Some(encoding_rs::UTF_16LE.new_decoder_with_bom_removal()),
        TextEncoding::Utf16Be => Some(encoding_rs::UTF_16BE.new_decoder_with_bom_removal()),
        _ => None,
    };
    let mut decoded = Vec::new();
    // BOM bytes still to skip: the first reads may be shorter than the BOM.
    let mut bom = if encoding == TextEncoding::Utf8Bom && resume.is_none() { 3 } else { 0 };
    let mut eof = false;
    loop {
        cancel.check()?;
        if resume.is_some() && pager.past_page() {
            break;
        }
        let n = match reader.read(&mut buf) {
            Ok(0) => {
                eof = true;
                break;
            }
            Ok(n) => n,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
            Err(e) => return Err(Error::io(e)),
        };
        if n == buf.len() && buf.len() < CHUNK {
            buf.resize(CHUNK, 0);
        }
        let chunk = &buf[..n];
        hasher.update(chunk);
        size += n as u64;
        if let Some(decoder) = utf16.as_mut() {
            pager.page.lossy |= decode_utf16(decoder, chunk, false, &mut decoded);
            pager.feed(&decoded);
        } else if bom > 0 {
            let skip = bom.min(chunk.len());
            bom -= skip;
            pager.feed(&chunk[skip..]);
        } else {
            pager.feed(chunk);
        }
    }
    if let Some(decoder) = utf16.as_mut() {
        pager.page.lossy |= decode_utf16(decoder, &[], true, &mut decoded);
        pager.feed(&decoded);
    }
    let mut page = pager.finish(eof);
    if let Some(r) = resume {
        page.total_lines = r.total_lines;
    }
    page.hash = hasher.finish();
    page.size = size;
    Ok(page)
}

/// Decodes UTF-16 into `out` as UTF-8 (unpaired surrogates become U+FFFD); returns
/// whether anything was replaced.
fn decode_utf16(decoder: &mut encoding_rs::Decoder, src: &[u8], last: bool, out: &mut Vec<u8>) -> bool {
    out.clear();
    let cap = decoder.max_utf8_buffer_length(src.len()).unwrap_or(src.len() * 3 + 16);
    out.resize(cap, 0);
    let (_, _, written, replaced) = decoder.decode_to_utf8(src, out, last);
    out.truncate(written);
    replaced
}

struct Pager<'a> {
    config: &'a PageConfig,
    last_page_line: u64,
    line: u64,
    cur: Vec<u8>,
    /// Bytes of the current line past the byte cap, and the characters they start.
    cur_dropped: u64,
    cur_extra_chars: u64,
    cur_last_byte: u8,
    any_bytes: bool,
    last_byte: u8,
    page: Page,
}

impl<'a> Pager<'a> {
    fn new(config: &'a PageConfig) -> Pager<'a> {
        Pager {
            config,
            last_page_line: config.offset.saturating_add(config.limit - 1),
            line: 1,
            cur: Vec::new(),
            cur_dropped: 0,
            cur_extra_chars: 0,
            cur_last_byte: 0,
            any_bytes: false,
            last_byte: 0,
            page: Page::default(),
        }
    }

    fn in_page(&self) -> bool {
        !self.page.overflow && self.line >= self.config.offset && self.line <= self.last_page_line
    }

    /// Whether every line of the page has been emitted (or the page overflowed).
    fn past_page(&self) -> bool {
        self.page.overflow || self.line > self.last_page_line
    }

    fn feed(&mut self, mut bytes: &[u8]) {
        if bytes.is_empty() {
            return;
        }
        self.any_bytes = true;
        self.last_byte = bytes[bytes.len() - 1];
        while !bytes.is_empty() {
            if !self.in_page() {
                // Outside the page only the count matters: skip to the page start, or count the rest.
                if self.line < self.config.offset && !self.page.overflow {
                    let wanted = self.config.offset - self.line;
                    let mut seen = 0u64;
                    let mut cut = None;
                    for pos in memchr::memchr_iter(b'\n', bytes) {
                        seen += 1;
                        if seen == wanted {
                            cut = Some(pos + 1);
                            break;
                        }
                    }
                    self.line += seen;
                    match cut {
                        Some(at) => bytes = &bytes[at..],
                        None => return,
                    }
                    continue;
                }
                self.line += memchr::memchr_iter(b'\n', bytes).count() as u64;
                return;
            }
            match memchr::memchr(b'\n', bytes) {
                Some(pos) => {
                    self.push(&bytes[..pos]);
                    self.emit();
                    bytes = &bytes[pos + 1..];
                }
                None => {
                    self.push(bytes);
                    return;
                }
            }
        }
    }

    fn push(&mut self, seg: &[u8]) {
        if seg.is_empty() {
            return;
        }
        let cap = self.config.max_line_chars * 4;
        let room = cap.saturating_sub(self.cur.len());
        let (kept, rest) = seg.split_at(room.min(seg.len()));
        self.cur.extend_from_slice(kept);
        self.cur_dropped += rest.len() as u64;
        self.cur_extra_chars += rest.iter().filter(|&&b| b & 0xC0 != 0x80).count() as u64;
        self.cur_last_byte = seg[seg.len() - 1];
    }

    fn emit(&mut self) {
        let n = self.line;
        self.line += 1;
        let (mut extra, mut dropped) = (self.cur_extra_chars, self.cur_dropped);
        if self.cur_last_byte == b'\r' {
            // The line's last byte: past the cap if anything is.
            if dropped > 0 {
                extra -= 1;
                dropped -= 1;
            } else {
                self.cur.pop();
            }
        }
        let text = match std::str::from_utf8(&self.cur) {
            Ok(s) => std::borrow::Cow::Borrowed(s),
            Err(e) if dropped > 0 && e.error_len().is_none() => {
                // The byte cap split a character: keep the valid prefix, and count the
                // character among those cut (its lead byte was kept, so it is not in `extra`).
                extra += 1;
                std::borrow::Cow::Borrowed(std::str::from_utf8(&self.cur[..e.valid_up_to()]).unwrap_or_default())
            }
            Err(_) => {
                self.page.lossy = true;
                String::from_utf8_lossy(&self.cur)
            }
        };
        let max = self.config.max_line_chars;
        let (shown, mut cut_chars) = match text.char_indices().nth(max) {
            Some((at, _)) => (&text[..at], text[at..].chars().count() as u64 + extra),
            None => (&text[..], extra),
        };
        // Bytes past the cap that start no character (stray continuation bytes) are still
        // something cut: at least one U+FFFD a lossy decoding would have shown.
        if dropped > 0 {
            cut_chars = cut_chars.max(1);
        }
        let out = &mut self.page.text;
        let _ = match self.config.style {
            LineStyle::CatN => write!(out, "{n:>6}\t{shown}"),
            LineStyle::Colon => write!(out, "{n}: {shown}"),
            LineStyle::Compact => write!(out, "{n}\t{shown}"),
            LineStyle::Plain => write!(out, "{shown}"),
        };
        if cut_chars > 0 {
            self.page.cut_lines += 1;
            let _ = write!(out, " … [line cut: {} more characters]", group(cut_chars));
        }
        out.push('\n');
        if self.page.start_line == 0 {
            self.page.start_line = n;
        }
        self.page.end_line = n;
        if out.len() > self.config.max_bytes {
            self.page.overflow = true;
        }
        self.cur.clear();
        self.cur_dropped = 0;
        self.cur_extra_chars = 0;
        self.cur_last_byte = 0;
    }

    fn finish(mut self, eof: bool) -> Page {
        let unterminated = eof && self.any_bytes && self.last_byte != b'\n';
        if unterminated && self.in_page() {
            self.emit();
            self.line -= 1;
        }
        self.page.total_lines = if !self.any_bytes {
            0
        } else if unterminated {
            self.line
        } else {
            self.line - 1
        };
        self.page
    }
}

/// Formats a count with thousands separators: `48000` → `48,000`.
pub fn group(n: u64) -> String {
    let digits = n.to_string();
    let mut out = String::with_capacity(digits.len() + digits.len() / 3);
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i) % 3 == 0 {
            out.push(',');
        }
        out.push(c);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn run(input: &[u8], offset: u64, limit: u64) -> Page {
        let mut cfg = PageConfig::default();
        cfg.offset(offset).limit(limit);
        page(input, TextEncoding::Utf8, &cfg, &Cancel::new()).unwrap()
    }

    /// Feeds the input in chunks of every size from 1 to 7 bytes and checks the page
    /// equals the one-shot result.
    fn run_chunked(input: &[u8], cfg: &PageConfig, enc: TextEncoding) -> Page {
        let whole = page(input, enc, cfg, &Cancel::new()).unwrap();
        for size in 1..8 {
            let reader = Chunks { data: input, size };
            let p = page(reader, enc, cfg, &Cancel::new()).unwrap();
            assert_eq!(p.text, whole.text, "chunk size {size}");
            assert_eq!(p.total_lines, whole.total_lines);
        }
        whole
    }

    struct Chunks<'a> {
        data: &'a [u8],
        size: usize,
    }

    impl Read for Chunks<'_> {
        fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
            let n = self.size.min(self.data.len()).min(buf.len());
            buf[..n].copy_from_slice(&self.data[..n]);
            self.data = &self.data[n..];
            Ok(n)
        }
    }

    #[test]
    fn counts_lines_with_and_without_final_newline() {
        assert_eq!(run(b"", 1, 10).total_lines, 0);
        assert_eq!(run(b"a", 1, 10).total_lines, 1);
        assert_eq!(run(b"a\n", 1, 10).total_lines, 1);
        assert_eq!(run(b"a\nb", 1, 10).total_lines, 2);
        assert_eq!(run(b"\n\n", 1, 10).total_lines, 2);
    }

    #[test]
    fn cat_n_format() {
        let p = run(b"one\ntwo\r\nthree", 1, 10);
        assert_eq!(p.text, "     1\tone\n     2\ttwo\n     3\tthree\n");
        assert_eq!((p.start_line, p.end_line, p.total_lines), (1, 3, 3));
    }

    #[test]
    fn page_in_the_middle() {
        let input: String = (1..=100).map(|i| format!("line {i}\n")).collect();
        let mut cfg = PageConfig::default();
        cfg.offset(40).limit(3);
        let p = run_chunked(input.as_bytes(), &cfg, TextEncoding::Utf8);
        assert_eq!(p.text, "    40\tline 40\n    41\tline 41\n    42\tline 42\n");
        assert_eq!(p.total_lines, 100);
    }

    #[test]
    fn offset_past_end_gives_empty_page() {
        let p = run(b"a\nb\n", 5, 10);
        assert_eq!((p.start_line, p.end_line, p.total_lines), (0, 0, 2));
        assert!(p.text.is_empty());
    }

    #[test]
    fn long_line_cut_at_char_boundary() {
        let line = "é".repeat(50_000);
        let mut cfg = PageConfig::default();
        cfg.max_line_chars(2000);
        let p = run_chunked(line.as_bytes(), &cfg, TextEncoding::Utf8);
        assert_eq!(p.cut_lines, 1);
        assert!(p.text.contains("[line cut: 48,000 more characters]"), "{}", &p.text[p.text.len() - 60..]);
        assert_eq!(p.text.matches('é').count(), 2000);
    }

    #[test]
    fn crlf_line_cut_does_not_count_cr() {
        let line = format!("{}\r\n", "x".repeat(2010));
        let p = run(line.as_bytes(), 1, 10);
        assert!(p.text.contains("[line cut: 10 more characters]"));
    }

    /// Found by fuzzing (fuzz/regressions/page/cut-count-at-a-split-char): when the byte
    /// cap fell inside a character, that character was missing from the cut count, and
    /// (when nothing else followed it) the line was marked lossy.
    #[test]
    fn a_character_split_by_the_byte_cap_is_counted_as_cut() {
        let mut cfg = PageConfig::default();
        cfg.max_line_chars(1);
        // The cap is 4 bytes: "aaa" and the first byte of "é" are kept.
        let p = run_chunked("aaaéb".as_bytes(), &cfg, TextEncoding::Utf8);
        assert_eq!(p.text, "     1\ta … [line cut: 4 more characters]\n");
        let p = run_chunked("aaaé\n".as_bytes(), &cfg, TextEncoding::Utf8);
        assert_eq!(p.text, "     1\ta … [line cut: 3 more characters]\n");
        assert!(!p.lossy, "nothing invalid in the line");
    }

    /// Found by fuzzing (fuzz/regressions/page/stray-continuation-past-the-cap): invalid
    /// bytes past the cap that start no character were dropped without a cut marker.
    #[test]
    fn stray_bytes_past_the_cap_are_marked_as_cut() {
        let mut cfg = PageConfig::default();
        cfg.max_line_chars(1);
        let p = run_chunked(b"\xF0\x9F\x8E\x89\x80\x80\n", &cfg, TextEncoding::Utf8);
        assert_eq!(p.text, "     1\t🎉 … [line cut: 1 more characters]\n");
        assert_eq!(p.cut_lines, 1);
    }

    /// Found by fuzzing (fuzz/regressions/page/bom-in-short-reads): a BOM that arrived over
    /// more than one read was skipped only in the first one, and the rest shown as text.
    #[test]
    fn a_bom_split_over_reads_is_skipped() {
        let bom = [&[0xEF, 0xBB, 0xBF][..], b"hi\n"].concat();
        for size in 1..4 {
            let p = page(Chunks { data: &bom, size }, TextEncoding::Utf8Bom, &PageConfig::default(), &Cancel::new());
            assert_eq!(p.unwrap().text, "     1\thi\n", "reads of {size} bytes");
        }
    }

    #[test]
    fn invalid_utf8_is_lossy() {
        let p = run(b"ok\n\xff\xfe bad\n", 1, 10);
        assert!(p.lossy);
        assert!(p.text.contains("\u{FFFD}"));
    }

    #[test]
    fn utf16_and_bom_decoded() {
        let text = "héllo\nwörld\n";
        let mut le = vec![0xFF, 0xFE];
        le.extend(text.encode_utf16().flat_map(|u| u.to_le_bytes()));
        let p = run_chunked(&le, &PageConfig::default(), TextEncoding::Utf16Le);
        assert_eq!(p.text, "     1\théllo\n     2\twörld\n");
        let mut be = vec![0xFE, 0xFF];
        be.extend(text.encode_utf16().flat_map(|u| u.to_be_bytes()));
        assert_eq!(run_chunked(&be, &PageConfig::default(), TextEncoding::Utf16Be).text, p.text);
        let mut odd = le.clone();
        odd.push(b'x');
        let p = run_chunked(&odd, &PageConfig::default(), TextEncoding::Utf16Le);
        assert!(p.lossy && p.text.ends_with("\u{FFFD}\n"), "{:?}", p.text);
        let bom = [&[0xEF, 0xBB, 0xBF][..], text.as_bytes()].concat();
        let p = page(&bom[..], TextEncoding::Utf8Bom, &PageConfig::default(), &Cancel::new()).unwrap();
        assert_eq!(p.text, "     1\théllo\n     2\twörld\n");
    }

    #[test]
    fn colon_style() {
        let mut cfg = PageConfig::default();
        cfg.style(LineStyle::Colon);
        let p = page(&b"a\nb\n"[..], TextEncoding::Utf8, &cfg, &Cancel::new()).unwrap();
        assert_eq!(p.text, "1: a\n2: b\n");
    }

    #[test]
    fn compact_and_plain_styles() {
        let mut cfg = PageConfig::default();
        cfg.style(LineStyle::Compact).offset(9).limit(3).max_line_chars(3);
        let input = "x\n".repeat(8) + "nine\nten\n";
        let p = page(input.as_bytes(), TextEncoding::Utf8, &cfg, &Cancel::new()).unwrap();
        assert_eq!(p.text, "9\tnin … [line cut: 1 more characters]\n10\tten\n");
        cfg.style(LineStyle::Plain);
        let p = page(input.as_bytes(), TextEncoding::Utf8, &cfg, &Cancel::new()).unwrap();
        assert_eq!(p.text, "nin … [line cut: 1 more characters]\nten\n");
    }

    #[test]
    fn overflow_stops_the_page() {
        let input = "abcdefghij\n".repeat(100);
        let mut cfg = PageConfig::default();
        cfg.max_bytes(50);
        let p = page(input.as_bytes(), TextEncoding::Utf8, &cfg, &Cancel::new()).unwrap();
        assert!(p.overflow);
        assert_eq!(p.total_lines, 100);
        assert!(p.end_line < 10);
    }

    #[test]
    fn hash_is_the_content_hash_of_raw_bytes() {
        let p = run(b"abc", 1, 1);
        assert_eq!(p.hash, crate::hash::hash_bytes(b"abc"));
        assert_eq!(p.size, 3);
    }

    #[test]
    fn group_thousands() {
        assert_eq!(group(0), "0");
        assert_eq!(group(999), "999");
        assert_eq!(group(1000), "1,000");
        assert_eq!(group(1234567), "1,234,567");
    }
}
