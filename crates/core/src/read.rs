//! Read: one call that opens a file inside the roots, decides what it is, and returns
//! a page of text, a shaped image, or a short notice, with the facts a write contract needs.

use std::io::{Read, Seek, SeekFrom};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{SystemTime, UNIX_EPOCH};

use crate::cancel::Cancel;
use crate::confine::{Opened, Roots};
use crate::error::{Error, ErrorKind, Result};
use crate::hash::{combine, hash_open_file, scan, HASH_CHUNK};
use crate::image::{shape_image, ImageConfig, ShapedImage};
use crate::index::{Facts, Identity, IndexCache};
use crate::page::{group, page, run, Page, PageConfig, Resume};
use crate::pdf::{PdfPages, PdfRequest, PdfText};
use crate::sniff::{sniff, Kind, TextEncoding, SNIFF_BYTES};
use crate::tokens::{count_tokens, lines_within};

/// How to read. Built with setters; see each for its default.
#[derive(Clone, Debug)]
pub struct ReadConfig {
    page: PageConfig,
    ranged: bool,
    max_unranged_bytes: u64,
    max_image_file_bytes: u64,
    token_limit: Option<usize>,
    image: ImageConfig,
    pdf: PdfRequest,
    max_pdf_bytes: u64,
    pdf_only: bool,
}

impl Default for ReadConfig {
    fn default() -> ReadConfig {
        ReadConfig {
            page: PageConfig::default(),
            ranged: false,
            max_unranged_bytes: 10 * 1024 * 1024,
            max_image_file_bytes: 64 * 1024 * 1024,
            token_limit: Some(25_000),
            image: ImageConfig::default(),
            pdf: PdfRequest { pages: PdfPages::UpTo(20), ..PdfRequest::default() },
            max_pdf_bytes: 50 * 1024 * 1024,
            pdf_only: false,
        }
    }
}

impl ReadConfig {
    /// The page of text to return. By default, lines 1–2000 in `cat -n` style.
    pub fn page(&mut self) -> &mut PageConfig {
        &mut self.page
    }

    /// Whether the caller asked for an explicit range; unranged reads of text files over
    /// [`ReadConfig::max_unranged_bytes`] are refused. By default, this is disabled.
    pub fn ranged(&mut self, yes: bool) -> &mut Self {
        self.ranged = yes;
        self
    }

    /// The largest text file read without a range. By default, this is 10 MiB.
    pub fn max_unranged_bytes(&mut self, bytes: u64) -> &mut Self {
        self.max_unranged_bytes = bytes;
        self
    }

    /// The largest image file decoded. By default, this is 64 MiB.
    pub fn max_image_file_bytes(&mut self, bytes: u64) -> &mut Self {
        self.max_image_file_bytes = bytes;
        self
    }

    /// The token limit checked with the built-in o200k tokenizer, or `None` when the
    /// caller counts tokens itself. By default, this is 25,000.
    pub fn token_limit(&mut self, limit: Option<usize>) -> &mut Self {
        self.token_limit = limit;
        self
    }

    /// Limits for images. By default, 2000 px and 3.75 MiB.
    pub fn image(&mut self) -> &mut ImageConfig {
        &mut self.image
    }

    /// Which pages of a PDF to extract, and how long it may take. By default, every page
    /// of a PDF of at most 20 pages, in at most 30 s.
    pub fn pdf(&mut self) -> &mut PdfRequest {
        &mut self.pdf
    }

    /// The largest PDF read. By default, this is 50 MiB.
    pub fn max_pdf_bytes(&mut self, bytes: u64) -> &mut Self {
        self.max_pdf_bytes = bytes;
        self
    }

    /// Refuse anything but a PDF (with [`ErrorKind::Pdf`]). By default, this is disabled.
    pub fn pdf_only(&mut self, yes: bool) -> &mut Self {
        self.pdf_only = yes;
        self
    }
}

/// What [`read_file`] found.
#[derive(Debug)]
pub enum Content {
    /// A page of text.
    Text {
        /// The page.
        page: Page,
        /// The file's encoding.
        encoding: TextEncoding,
        /// The exact token count of the page, when it had to be counted.
        tokens: Option<usize>,
        /// When the page is over the token limit: how many of its lines would fit.
        fit_lines: Option<usize>,
    },
    /// An image, ready to send.
    Image(ShapedImage),
    /// A binary file that is not shown.
    Binary {
        /// A best guess at its type.
        kind: &'static str,
    },
    /// A PDF document's text.
    Pdf(PdfText),
}

/// A finished read.
#[derive(Debug)]
pub struct ReadOutcome {
    /// The real path that was read.
    pub real_path: PathBuf,
    /// Modification time in milliseconds since the epoch.
    pub mtime_ms: f64,
    /// Size in bytes.
    pub size: u64,
    /// xxh3-128 of the whole file.
    pub hash: u128,
    /// What was found.
    pub content: Content,
}

/// Reads `path`, confined to `roots`.
pub fn read_file(roots: &Roots, path: &Path, config: &ReadConfig, cancel: &Cancel) -> Result<ReadOutcome> {
    read_file_cached(roots, path, config, None, cancel)
}

/// Files at least this large are indexed for later ranged reads.
const INDEX_MIN_BYTES: u64 = 4 * 1024 * 1024;

/// Like [`read_file`], with a cache that lets ranged reads of large, unchanged UTF-8
/// files seek straight to their page (the hash and line count come from the cache).
pub fn read_file_cached(
    roots: &Roots,
    path: &Path,
    config: &ReadConfig,
    cache: Option<&IndexCache>,
    cancel: &Cancel,
) -> Result<ReadOutcome> {
    let (mut file, meta, real_path) = match roots.open_file(path)? {
        Opened::File { file, meta, real } => (file, meta, real),
        Opened::Null => {
            return Ok(ReadOutcome {
                real_path: PathBuf::from("/dev/null"),
                mtime_ms: 0.0,
                size: 0,
                hash: crate::hash::hash_bytes(b""),
                content: Content::Text {
                    page: Page::default(),
                    encoding: TextEncoding::Utf8,
                    tokens: None,
                    fit_lines: None,
                },
            })
        }
    };
    let mtime_ms = meta
        .modified()
        .ok()
        .and_then(|t| t.duration_since(UNIX_EPOCH).ok())
        .map(|d| d.as_secs_f64() * 1000.0)
        .unwrap_or(0.0);
    let size = meta.len();
    let with_path = |e: Error| e.with_path(path);

    let mut head = vec![0u8; SNIFF_BYTES];
    let n = read_up_to(&mut file, &mut head).map_err(with_path)?;
    head.truncate(n);
    let mut kind = sniff(&head);
    // Where a PDF is expected, one with junk before its header, or none, is still read as one.
    let named_pdf = path.extension().is_some_and(|e| e.eq_ignore_ascii_case("pdf"));
    if kind != Kind::Pdf && (config.pdf_only || named_pdf) && crate::pdf::looks_like_pdf(&head) {
        kind = Kind::Pdf;
    }
    if config.pdf_only && kind != Kind::Pdf {
        let what = match kind {
            Kind::Text(_) => "text",
            Kind::Image(_) => "an image",
            _ => "a binary file",
        };
        return Err(with_path(Error::new(ErrorKind::Pdf, format!("not a PDF (it is {what})"))));
    }
    // A text file shorter than the sniff window is already in memory.
    let whole = n < SNIFF_BYTES && n as u64 == size && matches!(kind, Kind::Text(_));
    if !whole {
        file.seek(SeekFrom::Start(0)).map_err(|e| with_path(Error::io(e)))?;
    }

    let outcome = |hash, content| ReadOutcome { real_path: real_path.clone(), mtime_ms, size, hash, content };
    match kind {
        Kind::Text(encoding) => {
            if !config.ranged && size > config.max_unranged_bytes {
                return Err(with_path(Error::new(
                    ErrorKind::TooLarge,
                    format!(
                        "file is {} bytes, over the {} byte limit for a read without a range",
                        group(size),
                        group(config.max_unranged_bytes)
                    ),
                )));
            }
            let page = if whole {
                page(&head[..], encoding, &config.page, cancel)
            } else {
                page_indexed(&mut file, &meta, encoding, config, cache, cancel)
            }
            .map_err(with_path)?;
            let (tokens, fit_lines) = gate(&page, config.token_limit);
            let hash = page.hash;
            Ok(outcome(hash, Content::Text { page, encoding, tokens, fit_lines }))
        }
        Kind::Image(format) => {
            if size > config.max_image_file_bytes {
                return Err(with_path(Error::new(
                    ErrorKind::TooLarge,
                    format!(
                        "image is {} bytes, over the {} byte limit",
                        group(size),
                        group(config.max_image_file_bytes)
                    ),
                )));
            }
            let mut bytes = Vec::with_capacity(size as usize);
            file.read_to_end(&mut bytes).map_err(|e| with_path(Error::io(e)))?;
            cancel.check()?;
            let hash = crate::hash::hash_bytes(&bytes);
            let image = shape_image(bytes, format, &config.image).map_err(with_path)?;
            Ok(outcome(hash, Content::Image(image)))
        }
        Kind::Pdf => {
            if size > config.max_pdf_bytes {
                return Err(with_path(Error::new(
                    ErrorKind::TooLarge,
                    format!(
                        "PDF is {} bytes, over the {} byte limit for PDFs",
                        group(size),
                        group(config.max_pdf_bytes)
                    ),
                )));
            }
            let mut bytes = Vec::with_capacity(size as usize);
            // At most the limit, even if the file grew since it was measured.
            (&mut file).take(config.max_pdf_bytes).read_to_end(&mut bytes).map_err(|e| with_path(Error::io(e)))?;
            cancel.check()?;
            let hash = crate::hash::hash_bytes(&bytes);
            let text = crate::pdf::extract(&bytes, &config.pdf, cancel).map_err(with_path)?;
            Ok(outcome(hash, Content::Pdf(text)))
        }
        Kind::Binary(kind) => {
            let hash = hash_open_file(&file, size, cancel).map_err(with_path)?;
            Ok(outcome(hash, Content::Binary { kind }))
        }
    }
}

/// Pages a file. Large UTF-8 text is first indexed by one parallel pass (or the index
/// is taken from the cache), then the page is read from the nearest line start before it.
fn page_indexed(
    file: &mut std::fs::File,
    meta: &std::fs::Metadata,
    encoding: TextEncoding,
    config: &ReadConfig,
    cache: Option<&IndexCache>,
    cancel: &Cancel,
) -> Result<Page> {
    let utf8 = matches!(encoding, TextEncoding::Utf8 | TextEncoding::Utf8Bom);
    if !utf8 || meta.len() < INDEX_MIN_BYTES {
        return page(file, encoding, &config.page, cancel);
    }
    let id = Identity::of(meta);
    let cached = cache.zip(id).and_then(|(cache, id)| cache.get(&id));
    let facts = match cached {
        Some(facts) => facts,
        None => {
            let made_at = SystemTime::now();
            let facts = Arc::new(index_file(file, meta.len(), encoding, cancel)?);
            if let Some((cache, id)) = cache.zip(id) {
                cache.put(id, made_at, facts.clone());
            }
            facts
        }
    };
    let first = config.page.first_line();
    let k = facts.index.partition_point(|&(line, _)| line <= first).saturating_sub(1);
    let (line, offset) = facts.index[k];
    file.seek(SeekFrom::Start(offset)).map_err(Error::io)?;
    let resume = Resume { line, total_lines: facts.total_lines };
    let mut paged = run(&mut *file, encoding, &config.page, cancel, Some(resume))?;
    // A file changed during the two passes is read again in one sequential pass.
    let after = file.metadata().map_err(Error::io)?;
    if Identity::of(&after) != id || after.len() != meta.len() {
        file.seek(SeekFrom::Start(0)).map_err(Error::io)?;
        return page(file, encoding, &config.page, cancel);
    }
    paged.hash = facts.hash;
    paged.size = meta.len();
    Ok(paged)
}

/// One parallel pass over a UTF-8 file: its hash, its line count, and a line start in
/// every chunk that has one.
fn index_file(file: &std::fs::File, size: u64, encoding: TextEncoding, cancel: &Cancel) -> Result<Facts> {
    let chunks = scan(file, size, true, cancel)?;
    let bom = if encoding == TextEncoding::Utf8Bom { 3 } else { 0 };
    let mut index = vec![(1u64, bom)];
    let mut newlines = 0u64;
    for (k, chunk) in chunks.iter().enumerate() {
        if let Some(after) = chunk.after_first_newline {
            let offset = k as u64 * HASH_CHUNK as u64 + after as u64;
            if offset < size {
                index.push((newlines + 2, offset));
            }
        }
        newlines += chunk.newlines;
    }
    let unterminated = chunks.last().is_some_and(|c| c.last_byte != b'\n');
    Ok(Facts { hash: combine(chunks.iter().map(|c| c.hash)), total_lines: newlines + unterminated as u64, index })
}

/// The two-stage token gate. A token is at least one byte, so a page of no more bytes
/// than the limit fits for certain; only a longer page is counted exactly.
fn gate(page: &Page, limit: Option<usize>) -> (Option<usize>, Option<usize>) {
    let Some(limit) = limit else {
        return (None, None);
    };
    if page.overflow {
        return (None, Some(lines_within(&page.text, limit)));
    }
    if page.text.len() <= limit {
        return (None, None);
    }
    let tokens = count_tokens(&page.text);
    let fit = (tokens > limit).then(|| lines_within(&page.text, limit));
    (Some(tokens), fit)
}

fn read_up_to(file: &mut std::fs::File, buf: &mut [u8]) -> Result<usize> {
    let mut filled = 0;
    while filled < buf.len() {
        match file.read(&mut buf[filled..]) {
            Ok(0) => break,
            Ok(n) => filled += n,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(e) => return Err(Error::io(e)),
        }
    }
    Ok(filled)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testutil::{tmp, wfile};

    #[test]
    fn reads_text_page_with_hash() {
        let dir = tmp();
        let p = wfile(&dir, "a.txt", b"x\ny\n");
        let roots = Roots::new(&[&dir]).unwrap();
        let out = read_file(&roots, &p, &ReadConfig::default(), &Cancel::new()).unwrap();
        assert_eq!(out.hash, crate::hash::hash_bytes(b"x\ny\n"));
        match out.content {
            Content::Text { page, .. } => assert_eq!(page.total_lines, 2),
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn unranged_large_text_refused_ranged_allowed() {
        let dir = tmp();
        let p = wfile(&dir, "big.txt", &b"0123456789\n".repeat(200));
        let roots = Roots::new(&[&dir]).unwrap();
        let mut cfg = ReadConfig::default();
        cfg.max_unranged_bytes(1000);
        assert_eq!(read_file(&roots, &p, &cfg, &Cancel::new()).unwrap_err().kind(), ErrorKind::TooLarge);
        cfg.ranged(true);
        assert!(read_file(&roots, &p, &cfg, &Cancel::new()).is_ok());
    }

    #[test]
    fn token_gate_counts_only_when_needed() {
        let dir = tmp();
        let p = wfile(&dir, "t.txt", "word word word word\n".repeat(1000).as_bytes());
        let roots = Roots::new(&[&dir]).unwrap();
        let mut cfg = ReadConfig::default();
        cfg.token_limit(Some(100_000));
        match read_file(&roots, &p, &cfg, &Cancel::new()).unwrap().content {
            Content::Text { tokens, fit_lines, .. } => assert_eq!((tokens, fit_lines), (None, None)),
            other => panic!("{other:?}"),
        }
        cfg.token_limit(Some(1000));
        match read_file(&roots, &p, &cfg, &Cancel::new()).unwrap().content {
            Content::Text { tokens, fit_lines, .. } => {
                assert!(tokens.unwrap() > 1000);
                let fit = fit_lines.unwrap();
                assert!(fit > 0 && fit < 1000, "{fit}");
            }
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn binary_and_pdf_detected() {
        let dir = tmp();
        let roots = Roots::new(&[&dir]).unwrap();
        let bin = wfile(&dir, "x.bin", b"\x7fELF\x02\x01\x01\0\0\0");
        assert!(matches!(
            read_file(&roots, &bin, &ReadConfig::default(), &Cancel::new()).unwrap().content,
            Content::Binary { .. }
        ));
        let pdf = wfile(&dir, "x.txt", b"%PDF-1.4\n...");
        let err = read_file(&roots, &pdf, &ReadConfig::default(), &Cancel::new()).unwrap_err();
        assert_eq!(err.kind(), ErrorKind::Pdf);
        let mut only = ReadConfig::default();
        only.pdf_only(true);
        let err = read_file(&roots, &bin, &only, &Cancel::new()).unwrap_err();
        assert_eq!(err.kind(), ErrorKind::Pdf);
        assert!(err.to_string().contains("not a PDF"), "{err}");
    }

    /// Ranged reads through the index cache give exactly the pages of a plain pass.
    #[test]
    fn indexed_pages_equal_plain_pages() {
        let dir = tmp();
        let mut text = String::from("\u{feff}");
        for i in 1..=300_000u32 {
            text.push_str(&format!("line {i} {}\n", "x".repeat((i % 17) as usize)));
        }
        text.push_str("last line without newline");
        let p = wfile(&dir, "big.txt", text.as_bytes());
        let roots = Roots::new(&[&dir]).unwrap();
        let cache = IndexCache::new(8, std::time::Duration::ZERO);
        for offset in [1u64, 2, 4096, 4097, 4098, 150_000, 299_999, 300_001, 300_002] {
            let mut cfg = ReadConfig::default();
            cfg.ranged(true).page().offset(offset).limit(3);
            // The reference: one sequential pass, no index.
            let b = page(std::fs::File::open(&p).unwrap(), TextEncoding::Utf8Bom, &cfg.page, &Cancel::new()).unwrap();
            for cache in [None, Some(&cache), Some(&cache)] {
                let read = read_file_cached(&roots, &p, &cfg, cache, &Cancel::new()).unwrap();
                assert_eq!(read.hash, b.hash);
                match &read.content {
                    Content::Text { page: a, .. } => {
                        assert_eq!(a.text, b.text, "offset {offset}");
                        assert_eq!(
                            (a.start_line, a.end_line, a.total_lines),
                            (b.start_line, b.end_line, b.total_lines)
                        );
                    }
                    other => panic!("{other:?}"),
                }
            }
        }
        let id = Identity::of(&std::fs::metadata(&p).unwrap()).unwrap();
        assert_eq!(cache.get(&id).unwrap().total_lines, 300_001);
        assert!(cache.get(&id).unwrap().index.len() > 4);
    }

    /// Lines longer than a hash chunk leave chunks without a line start; pages still match.
    #[test]
    fn indexed_pages_with_lines_longer_than_a_chunk() {
        let dir = tmp();
        let mut text = String::new();
        for i in 0..12 {
            text.push_str(&format!("{i}:{}\n", "y".repeat(if i % 3 == 0 { 1_500_000 } else { 10 })));
        }
        let p = wfile(&dir, "long.txt", text.as_bytes());
        let roots = Roots::new(&[&dir]).unwrap();
        for offset in 1..=13u64 {
            let mut cfg = ReadConfig::default();
            cfg.ranged(true).page().offset(offset).limit(2).max_line_chars(5);
            let b = page(std::fs::File::open(&p).unwrap(), TextEncoding::Utf8, &cfg.page, &Cancel::new()).unwrap();
            let read = read_file(&roots, &p, &cfg, &Cancel::new()).unwrap();
            assert_eq!(read.hash, b.hash);
            match &read.content {
                Content::Text { page: a, .. } => {
                    assert_eq!(
                        (&a.text, a.total_lines, a.cut_lines),
                        (&b.text, b.total_lines, b.cut_lines),
                        "offset {offset}"
                    )
                }
                other => panic!("{other:?}"),
            }
        }
    }

    /// A changed file is never answered from the cache.
    #[test]
    fn index_cache_misses_after_a_change() {
        let dir = tmp();
        let body: String = (0..800_000).map(|i| format!("{i}\n")).collect();
        let p = wfile(&dir, "big.txt", body.as_bytes());
        let roots = Roots::new(&[&dir]).unwrap();
        let cache = IndexCache::new(8, std::time::Duration::ZERO);
        let mut cfg = ReadConfig::default();
        cfg.ranged(true).page().offset(400_001).limit(1);
        let first = read_file_cached(&roots, &p, &cfg, Some(&cache), &Cancel::new()).unwrap();
        let before = Identity::of(&std::fs::metadata(&p).unwrap()).unwrap();
        assert!(cache.get(&before).is_some(), "a settled large file is indexed");
        std::thread::sleep(std::time::Duration::from_millis(30));
        std::fs::write(&p, body.replace("\n400000\n", "\n400001\n")).unwrap();
        let second = read_file_cached(&roots, &p, &cfg, Some(&cache), &Cancel::new()).unwrap();
        assert_ne!(first.hash, second.hash);
        match second.content {
            Content::Text { page, .. } => assert_eq!(page.text, "400001\t400001\n"),
            other => panic!("{other:?}"),
        }
    }

    /// A file changed within the racy window is not cached at all.
    #[test]
    fn recently_changed_files_are_not_cached() {
        let dir = tmp();
        let body: String = (0..800_000).map(|i| format!("{i}\n")).collect();
        let p = wfile(&dir, "big.txt", body.as_bytes());
        let roots = Roots::new(&[&dir]).unwrap();
        let cache = IndexCache::new(8, std::time::Duration::from_secs(3600));
        let mut cfg = ReadConfig::default();
        cfg.ranged(true);
        read_file_cached(&roots, &p, &cfg, Some(&cache), &Cancel::new()).unwrap();
        assert!(cache.get(&Identity::of(&std::fs::metadata(&p).unwrap()).unwrap()).is_none());
    }

    #[test]
    fn cancelled_read_stops() {
        let dir = tmp();
        let p = wfile(&dir, "a.txt", b"x\n");
        let roots = Roots::new(&[&dir]).unwrap();
        let cancel = Cancel::new();
        cancel.cancel();
        assert_eq!(read_file(&roots, &p, &ReadConfig::default(), &cancel).unwrap_err().kind(), ErrorKind::Cancelled);
    }
}
